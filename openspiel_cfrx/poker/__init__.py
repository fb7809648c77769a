"""Poker public-tree engine (issue 18), first pieces: cards and private hands
(`cards`), a vectorised hand evaluator (`evaluator`), terminal values with
exact card removal in O(H log H) per board (`showdown`) and suit isomorphism
of boards (`isomorphism`), and the betting rules read from the game through
pyspiel (`spec.BettingRules.from_game`); `public_tree.PublicTree`: the betting
tree read from the game and exact best response / NashConv of strategies given
per (public node, board, hand), for one board deal (flop hold'em).

At a public node (betting history x board) each player holds a vector over the
C(deck, 2) private hands; chance deals with card removal. A showdown's value
for every hand at once is a sort by hand strength plus prefix sums of the
opponent's reach, corrected for the hands that share a card (inclusion-
exclusion over the two hole cards), instead of an [H x H] matrix. Vector CFR,
policy / network front doors and the speed work are not here yet
(docs/poker_engine.md says what is missing).

Cards follow OpenSpiel's universal_poker numbering: card = rank * num_suits +
suit, rank 0 = deuce (small decks keep the lowest ranks).
"""

from openspiel_cfrx.poker.cards import Deck
from openspiel_cfrx.poker.evaluator import rank_five, rank_hands
from openspiel_cfrx.poker.isomorphism import (
    canonical_boards,
    hand_permutation,
    relabel,
    suit_permutations,
)
from openspiel_cfrx.poker.public_tree import PublicTree
from openspiel_cfrx.poker.showdown import fold_values, showdown_values
from openspiel_cfrx.poker.spec import BettingRules, UnsupportedPokerGameError

__all__ = [
    "BettingRules",
    "Deck",
    "PublicTree",
    "UnsupportedPokerGameError",
    "canonical_boards",
    "fold_values",
    "hand_permutation",
    "rank_five",
    "rank_hands",
    "relabel",
    "showdown_values",
    "suit_permutations",
]
