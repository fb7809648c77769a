"""openspiel_cfrx.poker.evaluator against independent evaluators on every hand:
eval7 (test dependency, pinned in constraints.txt) on the 52-card deck and on
small decks, and poker_reference.best_hand_rank (tests/) (integer for
integer) on small decks; the lookup table against `rank_five`.

Small-deck cards map to 52-card ids with `games.poker.card_from_action` (a deck
of n ranks keeps the n lowest, as universal_poker does: no ace, so no wheel).
"""

import itertools

import eval7
import numpy as np
import pytest
from poker_reference import best_hand_rank  # noqa: E402  (tests/ is on sys.path)

from games import poker
from openspiel_cfrx.poker import Deck, rank_five, rank_hands
from openspiel_cfrx.poker.evaluator import _POWERS, _strength_table


def _same_order(ours, theirs):
    """Equal strength <=> equal value, and the same order, over all hands."""
    _, ours_dense = np.unique(ours, return_inverse=True)
    _, theirs_dense = np.unique(theirs, return_inverse=True)
    np.testing.assert_array_equal(ours_dense.reshape(-1), theirs_dense.reshape(-1))


@pytest.mark.parametrize("num_ranks, num_suits, board_size, num_boards", [
    (13, 4, 3, 6), (13, 4, 4, 3), (13, 4, 5, 3), (5, 2, 3, 10), (6, 3, 5, 5), (13, 1, 5, 5), (7, 4, 4, 5),
])  # fmt: skip
def test_every_hand_orders_like_eval7(num_ranks, num_suits, board_size, num_boards):
    deck, rng = Deck(num_ranks, num_suits), np.random.default_rng(num_ranks * 7 + num_suits + board_size)
    to_eval7 = [eval7.Card(poker.card_to_string(poker.card_from_action(c, num_suits))) for c in range(deck.num_cards)]
    for _ in range(num_boards):
        board = rng.choice(deck.num_cards, size=board_size, replace=False)
        free = ~deck.conflicts(board)
        ours = rank_hands(deck.hand_cards, board, num_suits)[free]
        theirs = [eval7.evaluate([to_eval7[c] for c in (*hand, *board)]) for hand in deck.hand_cards[free]]
        _same_order(ours, theirs)


@pytest.mark.parametrize("num_ranks, num_suits, board_size", [(4, 2, 3), (5, 3, 4), (6, 4, 3), (6, 2, 5), (3, 4, 5)])
def test_every_hand_equals_best_hand_rank_on_small_decks(num_ranks, num_suits, board_size):
    deck, rng = Deck(num_ranks, num_suits), np.random.default_rng(num_ranks + 10 * board_size)
    to52 = np.array([poker.card_from_action(c, num_suits) for c in range(deck.num_cards)])
    for _ in range(4):
        board = rng.choice(deck.num_cards, size=board_size, replace=False)
        ranks = rank_hands(deck.hand_cards, board, num_suits)
        free = ~deck.conflicts(board)
        expected = [best_hand_rank(to52[[*hand, *board]]) for hand in deck.hand_cards[free]]
        np.testing.assert_array_equal(ranks[free], expected)
        assert (ranks[~free] == -1).all()


def test_table_equals_rank_five_on_every_five_rank_multiset():
    table = _strength_table()
    ranks = np.array([c[::-1] for c in itertools.combinations_with_replacement(range(13), 5) if c[0] != c[4]])
    assert len(ranks) == 6175
    codes = ranks @ _POWERS
    np.testing.assert_array_equal(table[2 * codes], rank_five(ranks, np.eye(1, 5, dtype=np.int64).repeat(len(ranks), 0)))
    distinct = (np.diff(ranks, axis=1) != 0).all(axis=1)  # only these can be suited
    np.testing.assert_array_equal(table[2 * codes + 1][distinct], rank_five(ranks, np.zeros_like(ranks))[distinct])
    assert (table >= -1).all() and (table[2 * codes] >= 0).all()


def test_hand_card_order_does_not_matter():
    deck = Deck(13, 4)
    board = [3, 20, 41, 50]
    np.testing.assert_array_equal(rank_hands(deck.hand_cards[:, ::-1], board, 4), rank_hands(deck.hand_cards, board, 4))
