"""A deck of num_ranks x num_suits cards and its C(deck, 2) private hands."""

from __future__ import annotations

import itertools

import numpy as np


class Deck:
    """Cards `rank * num_suits + suit` (rank 0 = deuce, as universal_poker) and
    the two-card private hands.

    Attributes:
      num_cards: num_ranks * num_suits.
      hand_cards: [H, 2] int64, the cards of hand h (ascending), H = C(num_cards, 2).
      card_hands: [num_cards, num_cards - 1] int64, the hands holding each card.
      contains: [H, num_cards] bool.
    """

    def __init__(self, num_ranks: int, num_suits: int):
        if not 2 <= num_ranks <= 13 or not 1 <= num_suits <= 4:
            raise ValueError(f"a deck has 2..13 ranks and 1..4 suits, got {num_ranks} x {num_suits}")
        self.num_ranks, self.num_suits = int(num_ranks), int(num_suits)
        self.num_cards = self.num_ranks * self.num_suits
        self.hand_cards = np.array(list(itertools.combinations(range(self.num_cards), 2)), dtype=np.int64)
        self.num_hands = len(self.hand_cards)
        self.contains = np.zeros((self.num_hands, self.num_cards), dtype=bool)
        self.contains[np.arange(self.num_hands)[:, None], self.hand_cards] = True
        self.card_hands = np.stack([np.flatnonzero(self.contains[:, c]) for c in range(self.num_cards)])
        self._index = np.full((self.num_cards, self.num_cards), -1, dtype=np.int64)
        self._index[self.hand_cards[:, 0], self.hand_cards[:, 1]] = np.arange(self.num_hands)
        self._index[self.hand_cards[:, 1], self.hand_cards[:, 0]] = np.arange(self.num_hands)

    @property
    def index_table(self) -> np.ndarray:
        """[num_cards, num_cards] int64: the hand index of each pair of cards (-1 on the diagonal)."""
        return self._index

    def rank(self, cards):
        return np.asarray(cards) // self.num_suits

    def suit(self, cards):
        return np.asarray(cards) % self.num_suits

    def hand_index(self, card1: int, card2: int) -> int:
        """Index of the hand {card1, card2} (either order)."""
        if card1 == card2:
            raise ValueError(f"a hand holds two different cards, got {card1} twice")
        return int(self._index[card1, card2])

    def hand_indices(self, cards1, cards2) -> np.ndarray:
        """Vectorised `hand_index` (-1 where the two cards are equal)."""
        return self._index[np.asarray(cards1), np.asarray(cards2)]

    def conflicts(self, board) -> np.ndarray:
        """[H] bool: hands sharing a card with `board`."""
        board = np.asarray(board, dtype=np.int64).reshape(-1)
        return self.contains[:, board].any(axis=1) if board.size else np.zeros(self.num_hands, dtype=bool)
