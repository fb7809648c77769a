"""A suit-symmetric network for poker information-state tensors
(`network="suit_symmetric_mlp"`, issue 21).

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

    Args:
      card_blocks: start offsets of the card blocks, in comparison order.
      num_ranks, num_suits: the deck (cards `rank * num_suits + suit`).
    """

    def __init__(self, card_blocks: Sequence[int], num_ranks: int, num_suits: int):
        from openspiel_cfrx.poker.isomorphism import suit_permutations

        super().__init__()
        self.card_blocks = [int(b) for b in card_blocks]
        self.num_cards = int(num_ranks) * int(num_suits)
        perms = suit_permutations(int(num_suits))  # [P, S]: suit s -> perms[p, s]
        cards = np.arange(self.num_cards)
        rank, suit = cards // num_suits, cards % num_suits
        moved = rank[None, :] * num_suits + perms[:, suit]  # [P, C]: where card c goes under p
        source = np.empty_like(moved)  # [P, C]: the card that lands on c under p
        source[np.arange(len(perms))[:, None], moved] = cards[None, :]
        # A block's code under p: sum of 2^(destination) over its cards; exact in float64 (<= 52 bits).
        self.register_buffer("code", torch.tensor(np.ldexp(1.0, moved.T), dtype=torch.float64), persistent=False)
        self.register_buffer("source", torch.as_tensor(source), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            C = self.num_cards
            best = None  # rows x permutations still tied for the least code so far
            for b in self.card_blocks:
                codes = x[:, b : b + C].to(torch.float64) @ self.code  # [N, P]
                if best is not None:
                    codes = codes.masked_fill(~best, float("inf"))
                best = codes == codes.min(dim=1, keepdim=True).values
            choice = best.to(torch.int8).argmax(dim=1)  # the first permutation attaining the least codes
            index = self.source[choice]  # [N, C]
            out = x.clone()
            for b in self.card_blocks:
                out[:, b : b + C] = torch.gather(x[:, b : b + C], 1, index)
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
    from openspiel_cfrx.poker.spec import BettingRules, UnsupportedPokerGameError

    try:
        rules = BettingRules.from_game(game)
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
    """(encoder, options) for `network="suit_symmetric_mlp"`: the
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
