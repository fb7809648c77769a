"""A suit-symmetric network for poker information-state tensors
(network family "suit_symmetric_mlp").

Two infosets that differ only by a relabelling of the suits are strategically
identical (the lossless isomorphism the tabular engine already exploits:
22,100 flops, 1,755 classes). A network fed raw cards does not know this: it
learns each class up to 24 times, and its policy differs between the members
of a class, so an exact evaluation must visit every board (`NetworkStrategy`
on `PublicTree(isomorphism=False)`: ~1.46e9 queries, ~47 CPU minutes, on full
flop hold'em).

`SuitCanonical` relabels the suits of every input row to its class's
canonical representative before the MLP sees it: of the row's images under
all num_suits! suit permutations it keeps the least, comparing the card
blocks (public cards, the per-street blocks, then the private cards) as binary
numbers. Equal classes give bit-identical inputs, so the network's policy is
exactly suit-symmetric, and an exact evaluation may walk one board per class
(`NetworkStrategy(..., suit_symmetric=True)` on an isomorphic `PublicTree`).
Deep CFR itself is unchanged (Algorithms 1-2: same traversals, memories and
losses); only the function class of V and Pi is restricted to symmetric ones,
which contains the game's symmetric equilibria.

Inputs: universal_poker's `information_state_tensor` layout, [player (2)]
[private cards (deck)] [public cards (deck)] [betting ...], optionally one card
block per board street after it (the `hulh` game); cards are
`rank * num_suits + suit`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyspiel
import torch
from torch import nn

from openspiel_cfrx.deep.networks import MLP, register_network


class SuitCanonical(nn.Module):
    """Relabels the suits of each row's card blocks to a canonical member of
    its class (no parameters; the same permutation for every block of a row).

    The least image is found without trying the num_suits! permutations. A
    block's code under a permutation is a sum of 2^(rank * num_suits + slot)
    over its cards, so its binary digits run rank by rank from the highest,
    and within a rank over the slots; each slot's digits are the rank set
    (a num_ranks-bit mask) of the suit placed there. The code is least when,
    at every rank from the top, the cards sit in the lowest slots: when the
    suits fill slots 0, 1, ... in decreasing order of their rank masks. Ties
    (suits with equal masks in this block) are broken by the next block, and
    so on (a permutation that keeps the earlier blocks least only reorders
    tied suits, and the codes of disjoint slot sets add). Suits equal in every
    block are interchangeable: any order gives the same row. So the slots are
    filled by a stable sort of the suits on their masks, block by block,
    decreasing (the masks of up to 52 // num_ranks blocks packed into one
    float64 key, exactly; more blocks take further keys, sorted first).

    Args:
      card_blocks: start offsets of the card blocks, in comparison order.
      num_ranks, num_suits: the deck (cards `rank * num_suits + suit`).
    """

    def __init__(self, card_blocks: Sequence[int], num_ranks: int, num_suits: int):
        super().__init__()
        self.card_blocks = [int(b) for b in card_blocks]
        self.num_ranks, self.num_suits = int(num_ranks), int(num_suits)
        self.num_cards = self.num_ranks * self.num_suits
        if self.num_ranks > 24:
            raise ValueError(f"SuitCanonical packs rank masks into float32 sums: at most 24 ranks, got {num_ranks}")
        per_key = max(1, 52 // self.num_ranks)  # rank masks packed per float64 key, exactly
        self.key_groups = [self.card_blocks[i : i + per_key] for i in range(0, len(self.card_blocks), per_key)]
        cards = np.arange(self.num_cards)
        rank, suit = cards // self.num_suits, cards % self.num_suits
        bits = np.zeros((self.num_cards, self.num_suits), dtype=np.float32)
        bits[cards, suit] = np.ldexp(1.0, rank)  # a block @ bits = each suit's rank mask (exact in float32)
        self.register_buffer("rank_bits", torch.from_numpy(bits), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        N, C, R, S = x.shape[0], self.num_cards, self.num_ranks, self.num_suits
        with torch.no_grad(), torch.autocast(x.device.type, enabled=False):  # float32 sums stay exact
            order = None  # suits in slot order: decreasing keys, the first key group deciding first
            for group in reversed(self.key_groups):  # stable sorts, least significant key first
                key = torch.zeros(N, S, dtype=torch.float64, device=x.device)
                for b in group:
                    key = key * float(2**R) + (x[:, b : b + C].float() @ self.rank_bits)
                if order is not None:
                    key = key.gather(1, order)
                step = torch.sort(key, dim=1, descending=True, stable=True).indices
                order = step if order is None else order.gather(1, step)
            index = order[:, None, :].expand(N, R, S)
            out = x.clone()
            for b in self.card_blocks:
                out[:, b : b + C] = x[:, b : b + C].reshape(N, R, S).gather(2, index).reshape(N, C)
        return out


class SuitSymmetricMLP(nn.Module):
    """`SuitCanonical` then an `MLP` (the solvers' default network)."""

    suit_symmetric = True

    def __init__(self, input_size: int, num_actions: int, hidden_sizes: Sequence[int], card_blocks: Sequence[int],
                 num_ranks: int, num_suits: int, **mlp_options):  # fmt: skip
        super().__init__()
        self.canonical = SuitCanonical(card_blocks, num_ranks, num_suits)
        self.mlp = MLP(input_size, num_actions, hidden_sizes, **mlp_options)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.canonical(x))


def card_layout(game: pyspiel.Game) -> dict:
    """{card_blocks, num_ranks, num_suits} of a two-player limit
    universal_poker game's information_state_tensor (flop_holdem, hulh):
    blocks in comparison order (public, per-street, private). Refuses other
    games and other tensor layouts, in one line."""
    from openspiel_cfrx.poker.spec import PokerRules, UnsupportedPokerGameError

    try:
        rules = PokerRules.from_game(game)
    except UnsupportedPokerGameError as err:
        raise ValueError(f"network='suit_symmetric_mlp' needs a poker game: {err}") from None
    C = rules.num_ranks * rules.num_suits
    inner = game.universal_poker_game() if callable(getattr(game, "universal_poker_game", None)) else game
    base, size = int(np.prod(inner.information_state_tensor_shape())), int(np.prod(game.information_state_tensor_shape()))
    streets = rules.num_rounds - 1
    if size == base:
        extra = []
    elif size == base + C * streets:
        extra = [base + C * s for s in range(streets)]
    else:
        raise ValueError(f"network='suit_symmetric_mlp': {game}'s information_state_tensor ({size} floats) is "
                         f"neither universal_poker's ({base}) nor that plus one card block per street")  # fmt: skip
    _check_blocks(game, C, extra)
    return {"card_blocks": [2 + C, *extra, 2], "num_ranks": rules.num_ranks, "num_suits": rules.num_suits}


def _check_blocks(game: pyspiel.Game, C: int, streets: list[int], states: int = 16) -> None:
    """On random decision states: the private block holds 2 cards, the public
    block the board, disjoint from them, and each street block a subset of it."""
    rng = np.random.default_rng(0)
    for _ in range(states):
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node():
                x = np.asarray(state.information_state_tensor(state.current_player()))
                private, public = x[2 : 2 + C], x[2 + C : 2 + 2 * C]
                ok = set(np.unique(x[2 : 2 + 2 * C])) <= {0.0, 1.0} and private.sum() == 2
                ok = ok and not (private * public).any()
                ok = ok and all(((x[s : s + C] == 1) <= (public == 1)).all() for s in streets)
                if not ok:
                    raise ValueError(f"network='suit_symmetric_mlp': {game}'s information_state_tensor does not "
                                     "hold [player][private cards][public cards] one-hots")  # fmt: skip
                legal = state.legal_actions()
                state.apply_action(int(legal[rng.integers(len(legal))]))
            else:
                actions, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(actions, p=np.asarray(probs) / sum(probs))))


def solver_inputs(game, encoder, network_options: dict | None):
    """(encoder, options) for the "suit_symmetric_mlp" family: the
    information-state-tensor encoder (the default) and the game's card layout."""
    from openspiel_cfrx.encoders import InformationStateTensorEncoder

    if encoder is not None and not isinstance(encoder, InformationStateTensorEncoder):
        raise ValueError(f"network='suit_symmetric_mlp' reads information_state_tensor inputs; the encoder "
                         f"{getattr(encoder, 'name', type(encoder).__name__)!r} is not supported (leave encoder unset)")  # fmt: skip
    options = dict(network_options or {})
    for key, value in card_layout(game).items():
        options.setdefault(key, value)
    return encoder, options


register_network("suit_symmetric_mlp", SuitSymmetricMLP, inputs=solver_inputs)
