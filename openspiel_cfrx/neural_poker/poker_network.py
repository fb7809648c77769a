"""The Deep CFR card/bet network for poker (Brown et al. 2019, Section 5.1,
Figure 1 and Appendix C), registered as the network family "poker".

    solver = DeepCFRSolver(pyspiel.load_game("flop_holdem"), network=NetworkSettings(family="poker"),
                           advantage_network_layers=(96,), policy_network_layers=(96,))

Architecture (Appendix C `DeepCFRModel`, dim = d):

* **cards** (Section 5.1: "the sum of three embeddings: a rank embedding
  (1-13), a suit embedding (1-4), and a card embedding (1-52)"): one
  `CardEmbedding` per card group (hole, flop[, turn, river]); a card index x
  gives card(x) + rank(x // 4) + suit(x % 4), a missing card (x = -1) gives
  zero ("zero out 'no card' embeddings"); the embeddings are summed inside a
  group (permutation invariant) and the groups concatenated: [B, G d];
* **card branch**, 3 layers: card1 (G d -> d), card2, card3 (d -> d), each
  ReLU(A x), no skip (as in the appendix code, although card2/card3 have equal
  widths: `card_skips=True` adds them, the Section 5.1 wording);
* **bet branch**, 2 layers, on [bet_size, bet_occurred] (2 nb inputs;
  `bets.clamp(0, 1e6)` and `bets.ge(0)`): bet1 (2 nb -> d) ReLU, bet2 with the
  skip ReLU(A y + y);
* **trunk**, 3 layers on concat(x, y): comb1 (2 d -> d) ReLU, comb2 and comb3
  with skips (Section 5.1: x_{i+1} = ReLU(A x_i [+ x_i]) where widths match);
* `normalize(z)` = (z - mean) / std per sample on the last features (Section
  5.1 "Normalization ... applied to the last-layer features"), then the
  action head (d -> num_actions). Depth: 3 + 3 + head = the paper's 7 layers.

Input: the flat float32 vector of `games.poker_encoding.PokerEncoder
.network_tensor` (the memories store flat encodings): card indices as floats,
then one float per betting position (-1 = no action). The network reads its
structure (groups, cards per group, bet positions, ranks, suits) from that
encoder's `network_layout`; `DeepCFRSolver(network=NetworkSettings(family="poker"))` passes it.

Parameter count. With G card groups, nb bet positions, A actions and all
`nn.Linear` biases (the appendix code), the network has
    (G + 7) d^2 + (69 G + 2 nb + 8 + A) d + A
parameters (`appendix_c_parameter_count`); FHP (G = 2, nb = 12 = 6 positions
x 2 rounds, A = 3 fold/call/raise): 9 d^2 + 173 d + 3. The paper's FHP network
"has a depth of 7 layers and 98,948 parameters" (Sections 5 and 5.1) but the
appendix code defaults to dim=256 (634,115 parameters). No integer d gives
98,948: d = 96 gives 99,555 (+607, +0.61%), d = 95 gives 97,663. No reading
we searched reproduces it exactly either (`benchmarks/bench_poker_deep_cfr.py
--parameter-search`, docs/deep_cfr.md "Appendix C network": embeddings per
group or one shared table, embedding vocabulary 13+4+52 / 52 / 13+4, 12, 24 or
48 bet inputs, 2 to 5 actions, biases everywhere / not in the head / nowhere,
affine LayerNorm or none, 2 or 4 card groups, d < 400). The nearest ones
contradict the paper's text: 98,943 (-5) drops the card embedding and shares
one table across groups (d = 102); 98,976 (+28) has no biases but an affine
normalisation (d = 96). We keep the appendix code and use d = 96 as the
paper-sized FHP network (`PAPER_FHP_DIM`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from openspiel_cfrx.deep.networks import (
    NORMALIZE_EPS,
    forward_in_chunks,
    normalize_features,
    register_network,
)
from openspiel_cfrx.deep.regret_matching import regret_matching

APPENDIX_C_DIM = 256  # `DeepCFRModel(..., dim=256)` in Appendix C
PAPER_FHP_PARAMETERS = 98_948  # Sections 5 and 5.1
PAPER_FHP_DIM = 96  # closest to 98,948 under the appendix code (99,555)
_MAX_BET = 1e6  # `bets.clamp(0, 1e6)` in Appendix C


def appendix_c_parameter_count(
    dim: int,
    num_card_groups: int = 2,
    num_bet_features: int = 12,
    num_actions: int = 3,
    num_ranks: int = 13,
    num_suits: int = 4,
) -> int:
    """Closed-form parameter count of the Appendix C network (= `PokerNetwork`).

    Embeddings G (ranks + suits + ranks * suits) d; card1 G d^2 + d; card2,
    card3, bet2, comb2, comb3 d^2 + d each; bet1 2 nb d + d; comb1 2 d^2 + d;
    head A d + A. Defaults: FHP (2 groups, 12 bet positions, 3 actions).
    """
    d, g, nb, a = int(dim), int(num_card_groups), int(num_bet_features), int(num_actions)
    vocab = num_ranks + num_suits + num_ranks * num_suits
    return g * vocab * d + (g + 7) * d * d + (2 * nb + 8 + a) * d + a


class CardEmbedding(nn.Module):
    """Appendix C `CardEmbedding`: rank, suit and card embeddings of one group.

    `forward(cards)` [B, n] int64 (-1 = no card) -> [B, dim], the sum over the
    group of card(x) + rank(x // num_suits) + suit(x % num_suits), zero for -1.
    (`PokerNetwork` gathers all groups at once with the same tables.)
    """

    def __init__(self, dim: int, num_ranks: int = 13, num_suits: int = 4):
        super().__init__()
        self.num_suits = int(num_suits)
        self.rank = nn.Embedding(num_ranks, dim)
        self.suit = nn.Embedding(num_suits, dim)
        self.card = nn.Embedding(num_ranks * num_suits, dim)

    def forward(self, cards: torch.Tensor) -> torch.Tensor:
        valid = cards.ge(0).unsqueeze(-1).to(self.card.weight.dtype)  # -1 means 'no card'
        x = cards.clamp(min=0)
        embs = self.card(x) + self.rank(x // self.num_suits) + self.suit(x % self.num_suits)
        return (embs * valid).sum(1)  # sum across the cards of the group


class PokerNetwork(nn.Module):
    """Appendix C `DeepCFRModel` over the flat `PokerEncoder.network_tensor` input.

    Args:
      input_size: width of the flat input; must equal
        sum(card_group_sizes) + num_bet_features.
      num_actions: outputs (3 for flop_holdem / hulh: fold, call, raise).
      card_group_sizes: cards per group, e.g. (2, 3) FHP, (2, 3, 1, 1) HULH.
      num_bet_features: betting positions (one input float each).
      dim: width d of every embedding and hidden layer.
      num_ranks, num_suits: card index space (13 x 4, Section 5.1).
      card_skips: skip connections on card2 / card3 (absent in the appendix
        code; Section 5.1's rule would add them).
      normalize: normalise the last features (Appendix C `normalize(z)`).
    """

    def __init__(
        self,
        input_size: int,
        num_actions: int,
        card_group_sizes: Sequence[int],
        num_bet_features: int,
        dim: int = APPENDIX_C_DIM,
        num_ranks: int = 13,
        num_suits: int = 4,
        card_skips: bool = False,
        normalize: bool = True,
    ):
        super().__init__()
        self.card_group_sizes = tuple(int(n) for n in card_group_sizes)
        self.num_bet_features = int(num_bet_features)
        self.num_card_slots = sum(self.card_group_sizes)
        self._check_layout(int(input_size))
        dim = int(dim)
        if dim < 1:
            raise ValueError(f"dim must be positive, got {dim}")
        self.dim = dim
        self.num_suits = int(num_suits)
        self.num_cards = int(num_ranks) * self.num_suits
        self.card_skips = bool(card_skips)
        self.normalize = bool(normalize)
        groups = len(self.card_group_sizes)
        self.card_embeddings = nn.ModuleList(CardEmbedding(dim, num_ranks, num_suits) for _ in range(groups))
        self.card1 = nn.Linear(dim * groups, dim)
        self.card2 = nn.Linear(dim, dim)
        self.card3 = nn.Linear(dim, dim)
        self.bet1 = nn.Linear(self.num_bet_features * 2, dim)
        self.bet2 = nn.Linear(dim, dim)
        self.comb1 = nn.Linear(2 * dim, dim)
        self.comb2 = nn.Linear(dim, dim)
        self.comb3 = nn.Linear(dim, dim)
        self.action_head = nn.Linear(dim, num_actions)
        self._build_gather(groups, int(num_ranks))

    def _check_layout(self, input_size: int) -> None:
        if not self.card_group_sizes or min(self.card_group_sizes) < 1 or self.num_bet_features < 1:
            raise ValueError(
                f"card_group_sizes={self.card_group_sizes} and num_bet_features="
                f"{self.num_bet_features} must be positive"
            )
        if input_size != self.num_card_slots + self.num_bet_features:
            raise ValueError(
                f"input_size={input_size} does not match the poker layout: "
                f"{self.num_card_slots} card slots {self.card_group_sizes} + "
                f"{self.num_bet_features} bet positions = "
                f"{self.num_card_slots + self.num_bet_features}; use the encoder's "
                "network_tensor (games.poker_encoding.PokerNetworkEncoder)"
            )

    def _build_gather(self, groups: int, num_ranks: int) -> None:
        """One table for all groups: the stacked rows [card (R*S), rank (R), suit
        (S)] of every group, then a zero row for "no card". Slot s of group g
        reads rows base_g + x, base_g + R*S + x // S, base_g + R*S + R + x % S."""
        group_of_slot = torch.repeat_interleave(torch.arange(groups), torch.tensor(self.card_group_sizes))
        self._rows_per_group = self.num_cards + num_ranks + self.num_suits
        self._zero_row = groups * self._rows_per_group
        base = group_of_slot * self._rows_per_group
        self.register_buffer(
            "_row_offset",
            torch.stack([base, base + self.num_cards, base + self.num_cards + num_ranks], dim=1),
            persistent=False,
        )  # [slots, 3]
        bounds = [0, *itertools.accumulate(self.card_group_sizes)]
        self._group_slots = list(zip(bounds[:-1], bounds[1:], strict=True))  # each group's card slots

    def split(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Flat input [B, input_size] -> (card indices int64 [B, slots], bets [B, nb])."""
        cards = x[:, : self.num_card_slots].round().to(torch.int64)
        return cards, x[:, self.num_card_slots :]

    def embed_cards(self, cards: torch.Tensor, by_counts: bool | None = None) -> torch.Tensor:
        """[B, slots] card indices (-1 = none) -> [B, G * dim]: per group the sum
        of card(x) + rank(x // 4) + suit(x % 4) over its dealt cards (Appendix C
        `CardEmbedding`), concatenated; one table for all groups and one
        embedding bag per group (the same function as `CardEmbedding.forward`
        group by group), or with `by_counts` (default: on CUDA) row counts times
        the table (`_embed_by_counts`)."""
        weights = [w for emb in self.card_embeddings for w in (emb.card.weight, emb.rank.weight, emb.suit.weight)]
        zero = torch.zeros(1, self.dim, dtype=weights[0].dtype, device=weights[0].device)
        table = torch.cat([*weights, zero])
        x = cards.clamp(min=0)
        rows = torch.stack([x, x // self.num_suits, x % self.num_suits], dim=2) + self._row_offset
        rows = torch.where(cards.unsqueeze(2) >= 0, rows, self._zero_row)  # -1 means 'no card'
        if cards.is_cuda if by_counts is None else by_counts:
            return self._embed_by_counts(rows, table)
        # Per group, the sum of its rows as one embedding bag: no [B, slots * 3, dim]
        # intermediate (that gather and its contraction were ~35% of a training step).
        groups = [F.embedding_bag(rows[:, lo:hi].reshape(cards.shape[0], -1), table, mode="sum")
                  for lo, hi in self._group_slots]  # fmt: skip
        return torch.cat(groups, dim=1)

    def _embed_by_counts(self, rows: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
        """`embed_cards`' group sums as (how often each table row is used) x table,
        one group's block at a time: the CUDA path, because embedding_bag's CUDA
        backward reads a count back to the host, which a CUDA graph cannot
        capture (trainer.py; pytorch/pytorch#82886). Same sums (each row of a
        slot lies in its group's block; the 'no card' row is zero)."""
        flat = rows.reshape(rows.shape[0], -1)
        counts = torch.zeros(flat.shape[0], table.shape[0], dtype=table.dtype, device=table.device)
        counts.scatter_add_(1, flat, torch.ones_like(flat, dtype=table.dtype))
        size = self._rows_per_group
        blocks = range(0, self._zero_row, size)
        return torch.cat([counts[:, lo : lo + size] @ table[lo : lo + size] for lo in blocks], dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cards, bets = self.split(x)
        return self.trunk(self.comb1(torch.cat([self.card_branch(cards), self.bet_branch(bets)], dim=1)))

    def card_branch(self, cards: torch.Tensor) -> torch.Tensor:
        """1. Card slots [B, slots] (card indices, -1 = none; int64 or the flat
        input's floats) -> [B, d]: embeddings, card1-3."""
        if cards.is_floating_point():
            cards = cards.round().to(torch.int64)
        h = F.relu(self.card1(self.embed_cards(cards)))
        h = F.relu(self.card2(h) + h) if self.card_skips else F.relu(self.card2(h))
        return F.relu(self.card3(h) + h) if self.card_skips else F.relu(self.card3(h))

    def bet_branch(self, bets: torch.Tensor) -> torch.Tensor:
        """2. Bet features [B, nb] -> [B, d]: bet1, bet2."""
        bet_feats = torch.cat([bets.clamp(0, _MAX_BET), bets.ge(0).to(bets.dtype)], dim=1)
        y = F.relu(self.bet1(bet_feats))
        return F.relu(self.bet2(y) + y)

    # 3. comb1(concat(h, y)) = W[:, :d] h + (W[:, d:] y + b): the forward pass
    # in parts, so that a caller whose rows repeat the same cards or the same
    # betting (the poker traversal backend: one deal's cards at every node of a
    # round, one node's betting for every deal) computes each part once per
    # distinct value and `trunk` once per row (`FactoredStrategy`); training
    # keeps the one comb1 matmul on the concatenation (a few % faster a step).

    def card_part(self, cards: torch.Tensor) -> torch.Tensor:
        """Card slots [K, slots] -> [K, d]: the card branch times comb1's card half."""
        if torch.is_inference_mode_enabled():
            return self._card_part_inference(cards)
        return F.linear(self.card_branch(cards), self.comb1.weight[:, : self.dim])

    def _card_part_inference(self, cards: torch.Tensor) -> torch.Tensor:
        """`card_part` without autograd (sigma^t queries), the same function with
        the embeddings folded into card1: card1(concat_g e_g) = sum_g W1_g e_g + b1
        and e_g sums the group's rows of T_g (card + rank + suit embedding of each
        card), so card1's pre-activation is one embedding bag over all slots of
        the projected table W1_g T_g (G x cards rows of d); skips as one matmul
        with A + I, ReLUs in place (the same outputs as `card_part`, checked in
        tests/test_poker_network.py)."""
        if cards.is_floating_point():
            cards = cards.round().to(torch.int64)
        d, S = self.dim, self.num_suits
        x = torch.arange(self.num_cards, device=cards.device)
        projected = [F.linear(emb.card.weight + emb.rank.weight[x // S] + emb.suit.weight[x % S],
                              self.card1.weight[:, g * d : (g + 1) * d])
                     for g, emb in enumerate(self.card_embeddings)]  # fmt: skip
        table = torch.cat([*projected, projected[0].new_zeros(1, d)])  # [G * cards + 1, d], then "no card"
        group_of_slot = self._row_offset[:, 0] // self._rows_per_group
        rows = torch.where(cards >= 0, cards + group_of_slot * self.num_cards, len(table) - 1)
        h = F.embedding_bag(rows, table, mode="sum").add_(self.card1.bias).relu_()
        eye = torch.eye(d, dtype=h.dtype, device=h.device) if self.card_skips else 0.0
        h = F.linear(h, self.card2.weight + eye, self.card2.bias).relu_()
        h = F.linear(h, self.card3.weight + eye, self.card3.bias).relu_()
        return F.linear(h, self.comb1.weight[:, :d])

    def bet_part(self, bets: torch.Tensor) -> torch.Tensor:
        """Bet features [M, nb] -> [M, d]: the bet branch times comb1's bet half, plus comb1's bias."""
        return F.linear(self.bet_branch(bets), self.comb1.weight[:, self.dim :], self.comb1.bias)

    def trunk(self, pre: torch.Tensor) -> torch.Tensor:
        """comb1's pre-activation [B, d] (card part + bet part) -> outputs [B, A]:
        comb1-3 with skips, normalisation, the action head."""
        if torch.is_inference_mode_enabled():
            return self._trunk_inference(pre)
        z = F.relu(pre)
        z = F.relu(self.comb2(z) + z)
        z = F.relu(self.comb3(z) + z)
        if self.normalize:
            z = normalize_features(z)  # (z - mean) / std
        return self.action_head(z)

    def _trunk_inference(self, pre: torch.Tensor) -> torch.Tensor:
        """`trunk` without autograd (sigma^t queries), the same function in fewer
        passes over [B, d]:
        each skip relu(A z + b + z) is one matmul with A + I, ReLUs in place, and
        the normalisation is folded into the head: with c = z - mean(z) and s
        the standard deviation, head(c / s) = (H c) / s + bias, s from ||c||
        (centred first: ||z||^2 / d - mean^2 loses all precision when the spread
        is small against the mean)."""
        eye = torch.eye(self.dim, dtype=pre.dtype, device=pre.device)
        z = F.relu(pre)
        z = F.linear(z, self.comb2.weight + eye, self.comb2.bias).relu_()
        z = F.linear(z, self.comb3.weight + eye, self.comb3.bias).relu_()
        if not self.normalize:
            return self.action_head(z)
        c = z.sub_(z.mean(dim=1, keepdim=True))
        inverse_std = torch.linalg.vector_norm(c, dim=1, keepdim=True).square_().div_(self.dim)
        inverse_std = inverse_std.add_(NORMALIZE_EPS).rsqrt_()
        return F.linear(c, self.action_head.weight).mul_(inverse_std).add_(self.action_head.bias)


def poker_network(
    input_size: int,
    num_actions: int,
    hidden_sizes: Sequence[int] = (),
    *,
    card_group_sizes: Sequence[int] | None = None,
    num_bet_features: int | None = None,
    dim: int | None = None,
    **options,
) -> PokerNetwork:
    """Factory of the "poker" family: `dim` from `NetworkSettings.options`, else the
    single width of `hidden_sizes` (e.g. `advantage_network_layers=(96,)`;
    the depth is fixed by Appendix C). The layout options come from
    `PokerEncoder.network_layout.as_options()`."""
    if card_group_sizes is None or num_bet_features is None:
        raise ValueError(
            "network 'poker' needs the PokerEncoder layout (card_group_sizes, num_bet_features): "
            "use DeepCFRSolver(game, network=NetworkSettings(family='poker')) on a flop_holdem/hulh game, or "
            "games.poker_encoding.poker_network_options(game)"
        )
    if dim is None:
        widths = sorted({int(h) for h in hidden_sizes})
        if len(widths) != 1:
            raise ValueError(
                f"network 'poker' has one width d for every layer (Appendix C); got hidden sizes "
                f"{list(hidden_sizes)}: pass e.g. (96,) or network=NetworkSettings(options={{'dim': 96}})"
            )
        dim = widths[0]
    return PokerNetwork(input_size, num_actions, card_group_sizes, num_bet_features, dim=dim, **options)


def solver_inputs(game, encoder, network_options: dict | None):
    """(encoder, network options) for `DeepCFRSolver(game, network=NetworkSettings(family="poker"))`:
    a `PokerNetworkEncoder` unless `encoder` is given, and the encoder's
    layout added to the options the caller did not set."""
    if encoder is None:
        from openspiel_cfrx.encoders import input_encoder

        try:
            encoder = input_encoder("poker", game)  # registered by `import games`
        except ValueError as err:
            raise ValueError(
                f"network='poker' (the Deep CFR card/bet network, Appendix C) needs a game "
                f"loaded as flop_holdem(...) or hulh(...) after `import games`, or an explicit "
                f"NetworkSettings(encoder=...) with a network_layout; {err}"
            ) from None
    options = dict(network_options or {})
    layout = getattr(encoder, "network_layout", None)
    if layout is not None:
        for key, value in layout.as_options().items():
            options.setdefault(key, value)
    return encoder, options


register_network("poker", poker_network, inputs=solver_inputs)


class FactoredStrategy:
    """sigma^t(I) (eq. 4) on a `PokerNetwork` for rows that repeat the same
    cards or the same betting (the poker traversal backend: one deal's cards
    at every node of a round, one node's betting for every deal): `cards(slots)`
    and `bets(features)` compute the network's card and bet parts once per
    distinct value, then `__call__` runs the per-row trunk on row i's parts
    `card_rows[i]`, `bet_rows[i]` and regret-matches. The same function as
    regret matching on the whole network's outputs (equal up to float
    rounding); only the work is shared."""

    def __init__(self, network: PokerNetwork, fallback: str, device):
        self.network, self.fallback, self.device = network, fallback, device

    def cards(self, slots: np.ndarray) -> torch.Tensor:
        """Card parts of the card-slot inputs [K, slots]."""
        with torch.inference_mode():
            return self.network.card_part(torch.as_tensor(slots, device=self.device))

    def bets(self, features: np.ndarray) -> torch.Tensor:
        """Bet parts of the bet inputs [M, nb]."""
        with torch.inference_mode():
            return self.network.bet_part(torch.as_tensor(features, device=self.device))

    def __call__(self, cards: torch.Tensor, card_rows: np.ndarray, bets: torch.Tensor, bet_rows: np.ndarray,
                 mask: np.ndarray) -> np.ndarray:  # fmt: skip
        def trunk(card_rows, bet_rows):
            return self.network.trunk(cards.index_select(0, card_rows).add_(bets.index_select(0, bet_rows)))

        with torch.inference_mode():
            card_rows, bet_rows = (torch.as_tensor(rows, device=self.device) for rows in (card_rows, bet_rows))
            advantages = forward_in_chunks(trunk, card_rows, bet_rows, device=self.device)
        return regret_matching(advantages.cpu().numpy(), np.asarray(mask), self.fallback)


def factored_strategy(strategy, player: int) -> FactoredStrategy | None:
    """`player`'s sigma^t by parts when `strategy` is regret matching on a
    trained `PokerNetwork` (Deep CFR's `current_strategy`: `trained_network`);
    else None (the caller queries `strategy` on whole inputs)."""
    trained_network = getattr(strategy, "trained_network", None)
    network = trained_network(player) if trained_network is not None else None
    if not isinstance(network, PokerNetwork):
        return None
    return FactoredStrategy(network, strategy.fallback, strategy.device)
