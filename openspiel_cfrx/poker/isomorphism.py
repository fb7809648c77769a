"""Suit isomorphism of boards: two boards that differ by a relabelling of the
suits are strategically identical (every hand maps to the hand with its suits
relabelled the same way), so public-tree computations run once per class of
boards and weigh it by its multiplicity (52-card flops: 22,100 boards, 1,755
classes).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from openspiel_cfrx.poker.cards import Deck

MAX_BYTES = 2 * 2**30


def suit_permutations(num_suits: int) -> np.ndarray:
    """[num_suits!, num_suits]: row p maps suit s to p[s]."""
    return np.array(list(itertools.permutations(range(num_suits))), dtype=np.int64)


def relabel(deck: Deck, cards: np.ndarray, permutation: np.ndarray) -> np.ndarray:
    """Cards with suit s replaced by permutation[s]."""
    cards = np.asarray(cards, dtype=np.int64)
    return deck.rank(cards) * deck.num_suits + np.asarray(permutation)[deck.suit(cards)]


def hand_permutation(deck: Deck, permutation: np.ndarray) -> np.ndarray:
    """[H]: the index of each hand after relabelling its suits."""
    cards = relabel(deck, deck.hand_cards, permutation)
    return deck.hand_indices(cards[:, 0], cards[:, 1])


def canonical_boards(deck: Deck, board_size: int):
    """Classes of `board_size`-card boards under suit relabelling.

    Returns (boards [C, k] one representative per class (sorted cards),
    multiplicities [C] (sum = C(deck, k)), board_class [B] and board_permutation
    [B, num_suits] for every board of `itertools.combinations` order: board b
    relabelled by `board_permutation[b]` is `boards[board_class[b]]`).
    """
    perms = suit_permutations(deck.num_suits)
    count = math.comb(deck.num_cards, board_size)
    needed = len(perms) * count * board_size * 8 * 3  # relabelled boards, sorted copy, codes
    if needed > MAX_BYTES:
        raise MemoryError(
            f"canonical_boards of {count:,} {board_size}-card boards needs ~{needed / 2**30:.1f} GiB "
            f"(> {MAX_BYTES / 2**30:.0f} GiB); canonicalise per flop class instead"
        )
    every = np.array(list(itertools.combinations(range(deck.num_cards), board_size)), dtype=np.int64)
    mapped = np.sort(_per_permutation(deck, every, perms), axis=2)  # [P, B, k]: each board relabelled
    codes = (mapped * deck.num_cards ** np.arange(board_size - 1, -1, -1)).sum(axis=2)  # [P, B]
    best = codes.argmin(axis=0)
    canonical_code = codes[best, np.arange(len(every))]
    _, first, board_class, multiplicity = np.unique(canonical_code, return_index=True, return_inverse=True,
                                                    return_counts=True)  # fmt: skip
    boards = mapped[best[first], first]
    return boards, multiplicity, board_class, perms[best]


def _per_permutation(deck: Deck, boards: np.ndarray, perms: np.ndarray) -> np.ndarray:
    ranks, suits = deck.rank(boards), deck.suit(boards)
    return ranks[None] * deck.num_suits + perms[:, suits]  # [P, B, k]
