"""Vectorised hand strength: the best five-card hand out of hole cards + board.

Standard order (straight flush > quads > full house > flush > straight >
trips > two pair > pair > high card, kickers after; A-2-3-4-5 is the lowest
straight; in decks without the ace, e.g. 5 ranks, the lowest straight is
2-3-4-5-6), encoded as category * 13^5 + the ranks that break ties (base 13):
larger is stronger, equal is a split pot. The integers equal
`games.poker_exploitability.best_hand_rank` on the 52-card ids (tested).
"""

from __future__ import annotations

import itertools

import numpy as np

HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH = range(9)
_POWERS = 13 ** np.arange(4, -1, -1, dtype=np.int64)  # 13^4 .. 1
_WHEEL = np.array([12, 3, 2, 1, 0])


def rank_five(ranks: np.ndarray, suits: np.ndarray) -> np.ndarray:
    """Strength of five-card hands: ranks, suits [N, 5] (rank 0 = deuce) -> [N] int64."""
    ranks, suits = np.asarray(ranks, dtype=np.int64), np.asarray(suits, dtype=np.int64)
    n = ranks.shape[0]
    flush = (suits == suits[:, :1]).all(axis=1)
    counts = np.zeros((n, 13), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(n), 5), ranks.reshape(-1)), 1)
    # Rank groups ordered by (multiplicity, rank), largest first: the tie-break order.
    key = np.where(counts > 0, counts * 13 + np.arange(13), -1)
    key = -np.sort(-key, axis=1)[:, :5]
    group_rank = np.where(key >= 0, key % 13, 0)
    group_size = np.where(key >= 0, key // 13, 0)
    distinct = (counts > 0).sum(axis=1)
    ordered = -np.sort(-ranks, axis=1)
    wheel = (ordered == _WHEEL).all(axis=1)
    straight = (distinct == 5) & ((ordered[:, 0] - ordered[:, 4] == 4) | wheel)
    high = np.where(wheel, 3, ordered[:, 0])
    c1, c2 = group_size[:, 0], group_size[:, 1]
    category = np.select(
        [straight & flush, c1 == 4, (c1 == 3) & (c2 == 2), flush, straight, c1 == 3, (c1 == 2) & (c2 == 2), c1 == 2],
        [STRAIGHT_FLUSH, QUADS, FULL_HOUSE, FLUSH, STRAIGHT, TRIPS, TWO_PAIR, PAIR],
        HIGH_CARD,
    )
    tie_break = np.where(straight[:, None], np.pad(high[:, None], ((0, 0), (0, 4))), group_rank)
    return category * 13**5 + tie_break @ _POWERS


def rank_hands(hand_cards: np.ndarray, board, num_suits: int) -> np.ndarray:
    """Best five-card strength of every hand with the board ([H, 2] cards,
    board of 3-5 cards, card = rank * num_suits + suit) -> [H] int64. Hands
    sharing a card with the board get -1."""
    hand_cards = np.asarray(hand_cards, dtype=np.int64)
    board = np.asarray(board, dtype=np.int64).reshape(-1)
    if not 3 <= board.size <= 5:
        raise ValueError(f"a board holds 3 to 5 cards, got {board.size}")
    cards = np.concatenate([hand_cards, np.broadcast_to(board, (len(hand_cards), board.size))], axis=1)
    best = np.full(len(hand_cards), -1, dtype=np.int64)
    for combo in itertools.combinations(range(cards.shape[1]), 5):
        chosen = cards[:, combo]
        best = np.maximum(best, rank_five(chosen // num_suits, chosen % num_suits))
    conflict = (hand_cards[:, :, None] == board[None, None, :]).any(axis=(1, 2))
    return np.where(conflict, -1, best)
