"""Vectorised hand strength: the best five-card hand out of hole cards + board.

Standard order (straight flush > quads > full house > flush > straight >
trips > two pair > pair > high card, kickers after; A-2-3-4-5 is the lowest
straight; in decks without the ace, e.g. 5 ranks, the lowest straight is
2-3-4-5-6), encoded as category * 13^5 + the ranks that break ties (base 13):
larger is stronger, equal is a split pot. The integers equal
the per-hand reference `tests/poker_reference.best_hand_rank` on the 52-card ids (tested).

Hands are ranked as in the Deep CFR paper's FHP / HULH rules (Brown et al.
2019, Appendix A: the best five-card hand out of the two private cards and the
board; ties split the pot). `rank_hands` looks the strength up in a table over
the 6,175 five-rank multisets (built once, lazily, by `rank_five` itself, so the
two cannot disagree): the hand + board cards are sorted by rank once, so every
five-card subset is already in order and its table code is a dot
product; all C(n, 5) subsets of every hand are looked up in one gather.
Fewer than five cards in all (limit games whose board shows 0-2 cards) are
ranked on all of them, as universal_poker ranks them (`rank_cards`).
"""

from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=1)
def _strength_table() -> np.ndarray:
    """[13^5 * 2] int64: `rank_five` of the ranks r0 >= .. >= r4 (code
    sum r_i 13^(4-i)), times 2, + 1 when suited; -1 for codes that are not a
    five-card hand (e.g. five of a kind)."""
    ranks = np.array([combo[::-1] for combo in itertools.combinations_with_replacement(range(13), 5)
                      if combo[0] != combo[4]], dtype=np.int64)  # fmt: skip
    codes = ranks @ _POWERS
    table = np.full(2 * 13**5, -1, dtype=np.int64)
    offsuit = np.zeros_like(ranks)
    offsuit[:, 0] = 1
    table[2 * codes] = rank_five(ranks, offsuit)
    table[2 * codes + 1] = rank_five(ranks, np.zeros_like(ranks))
    return table


@functools.cache
def _subsets(num_cards: int) -> np.ndarray:
    return np.array(list(itertools.combinations(range(num_cards), 5)), dtype=np.int64)  # [C(n, 5), 5]


def rank_hands(hand_cards: np.ndarray, board, num_suits: int) -> np.ndarray:
    """Best strength of every hand with the board ([H, 2] cards, board of 0-7
    cards, card = rank * num_suits + suit) -> [H] int64: the best five cards,
    or with fewer than five cards in all, all of them (`rank_cards`). Hands
    sharing a card with the board get -1."""
    hand_cards = np.asarray(hand_cards, dtype=np.int64)
    board = np.asarray(board, dtype=np.int64).reshape(-1)
    if board.size > 7:
        raise ValueError(f"a board holds 0 to 7 cards, got {board.size}")
    cards = np.empty((len(hand_cards), 2 + board.size), dtype=np.int16)
    cards[:, :2], cards[:, 2:] = hand_cards, board
    best = rank_cards(cards, num_suits)
    on_board = np.zeros(max(int(hand_cards.max(initial=0)), int(board.max(initial=0))) + 1, dtype=bool)
    on_board[board] = True
    return np.where(on_board[hand_cards].any(axis=1), -1, best)


def rank_cards(cards: np.ndarray, num_suits: int) -> np.ndarray:
    """Best five-card strength of each row of distinct cards ([N, m],
    card = rank * num_suits + suit) -> [N] int64 (e.g. one row per deal of a
    sampled traversal: hole cards + board). Rows of fewer than five cards
    (limit games whose board shows 0-2 cards) are ranked on all their cards as
    universal_poker (ACPC's `rankCardset`) ranks them: quads, trips, two pair,
    pair or high card (no straight or flush needs fewer than five), tie-broken
    by the groups' ranks, larger groups first, in the same encoding."""
    cards = np.asarray(cards)
    if cards.shape[1] < 5:
        return _rank_few(cards, num_suits)
    # Ascending rank (ties by card id): every five-card subset is sorted, its
    # highest card last, so its table code is the dot product with 13^0 .. 13^4.
    cards = np.sort(np.asarray(cards, dtype=np.int16), axis=1)
    ranks, suits = cards // num_suits, cards % num_suits
    subsets = _subsets(cards.shape[1])
    codes = ranks[:, subsets].astype(np.int64) @ _POWERS[::-1]  # [N, S]
    suited = suits[:, subsets]
    suited = (suited == suited[:, :, :1]).all(axis=2)
    return _strength_table()[2 * codes + suited].max(axis=1)


def _rank_few(cards: np.ndarray, num_suits: int) -> np.ndarray:
    """`rank_cards` of rows of 1-4 cards: category by rank multiplicities, then
    the groups' ranks ordered by (multiplicity, rank), as `rank_five` orders them."""
    ranks = np.asarray(cards, dtype=np.int64) // num_suits
    n, m = ranks.shape
    counts = np.zeros((n, 13), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(n), m), ranks.reshape(-1)), 1)
    key = np.where(counts > 0, counts * 13 + np.arange(13), -1)
    key = -np.sort(-key, axis=1)[:, :5]
    group_rank = np.where(key >= 0, key % 13, 0)
    c1, c2 = np.where(key[:, 0] >= 0, key[:, 0] // 13, 0), np.where(key[:, 1] >= 0, key[:, 1] // 13, 0)
    category = np.select([c1 == 4, c1 == 3, (c1 == 2) & (c2 == 2), c1 == 2], [QUADS, TRIPS, TWO_PAIR, PAIR], HIGH_CARD)
    return category * 13**5 + group_rank @ _POWERS
