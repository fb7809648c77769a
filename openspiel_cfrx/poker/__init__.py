"""Poker public-tree engine: exact best response, on-policy value
and NashConv, and vector-form CFR, on the public tree of two-player limit
hold'em games (flop hold'em, HULH with small decks, later-round subgames).

At a public node (betting history x board) each player holds a vector over
the C(deck, 2) private hands; chance deals with exact card removal; all boards
of a round are processed as [boards, hands] arrays in chunks; the first deal
visits one board per suit class (`isomorphism`). A showdown's value for every
hand at once is a sort by hand strength plus prefix sums of the opponent's
reach, corrected for the hands that share a card (inclusion-exclusion over the
two hole cards), instead of an [H x H] matrix.

* `PublicTree(game)`: the tree; `nash_conv / exploitability /
  best_response_values / expected_values(strategy)` of a strategy given as
  `strategy(node, lo, hi) -> [boards, H, actions]`; `locate(state)`.
* `VectorCFR(tree, "cfr+")`: the variants of `openspiel_cfrx.regret.VARIANTS`
  (CFR / CFR+ / LCFR / DCFR / PCFR+ / OFTRL), float32 storage, memory estimate,
  checkpoints; `VectorCFR(tree, "lcfr", abstraction=a)` on a card abstraction's
  infosets (node, bucket), `abstract_cfr.abstract_best_response` inside it.
* `AbstractMCCFR(tree, abstraction)`: external-sampling Linear MCCFR on a
  card abstraction, the Deep CFR paper's solver of its abstraction baselines
  (sampled deals, counter-based seeds, nodes touched, checkpoints).
* `PublicTreePolicy`: any such strategy as an OpenSpiel policy (lookup).
* `poker_nash_conv(game, policy)`: exact NashConv of any OpenSpiel policy in
  flop hold'em (`exploitability`; `openspiel_cfrx.nash_conv` comes here),
  the policy read per public node over all hands (`policy_reading`).
* `abstraction`: card abstractions (buckets of (board, hand) per round):
  `lossless_abstraction(tree)`, `kmeans_abstraction(tree, buckets_per_round)`
  (the Deep CFR paper's k-means comparison abstractions: OCHS and
  hand-strength-distribution features, weighted k-means), `perfect_recall`
  (its refinement by the earlier rounds' buckets), `CardAbstraction`
  (save / load / `abstract_infosets`).
* `PokerRules`: the rules the engine reads (deck, blinds, stacks, rounds,
  limit raise sizes and caps or a no-limit `BetAbstraction`), from a
  universal_poker game (`PokerRules.from_game`) or built by the caller.

A network's strategy on this tree (`NetworkStrategy`) and the neural pieces
that read poker (the Appendix C network, the "poker" traversal backend) are in
`openspiel_cfrx.neural_poker`, the layer above both this engine and `deep`.

Cards follow OpenSpiel's universal_poker numbering: card = rank * num_suits +
suit, rank 0 = deuce (small decks keep the lowest ranks).
"""

from openspiel_cfrx.poker.abstract_mccfr import AbstractMCCFR
from openspiel_cfrx.poker.abstraction import (
    CardAbstraction,
    kmeans_abstraction,
    lossless_abstraction,
    perfect_recall,
)
from openspiel_cfrx.poker.cards import Deck
from openspiel_cfrx.poker.evaluator import rank_five, rank_hands
from openspiel_cfrx.poker.exploitability import (
    PokerNashConvResult,
    poker_best_response_values,
    poker_exploitability,
    poker_nash_conv,
    poker_nash_conv_prefixes,
)
from openspiel_cfrx.poker.isomorphism import (
    canonical_boards,
    hand_permutation,
    relabel,
    suit_permutations,
)
from openspiel_cfrx.poker.public_tree import PublicTree, PublicTreePolicy, Subgame
from openspiel_cfrx.poker.showdown import fold_values, showdown_values
from openspiel_cfrx.poker.spec import BetAbstraction, PokerRules, UnsupportedPokerGameError
from openspiel_cfrx.poker.vector_cfr import VARIANTS, VectorCFR, VectorCFRTooLargeError

__all__ = [
    "AbstractMCCFR",
    "BetAbstraction",
    "CardAbstraction",
    "Deck",
    "PokerNashConvResult",
    "PokerRules",
    "PublicTree",
    "PublicTreePolicy",
    "Subgame",
    "UnsupportedPokerGameError",
    "VARIANTS",
    "VectorCFR",
    "VectorCFRTooLargeError",
    "canonical_boards",
    "fold_values",
    "hand_permutation",
    "kmeans_abstraction",
    "lossless_abstraction",
    "perfect_recall",
    "poker_best_response_values",
    "poker_exploitability",
    "poker_nash_conv",
    "poker_nash_conv_prefixes",
    "rank_five",
    "rank_hands",
    "relabel",
    "showdown_values",
    "suit_permutations",
]
