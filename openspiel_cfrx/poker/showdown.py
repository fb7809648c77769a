"""Terminal values of one board for every private hand at once, with exact
card removal, in O(H log H): no [H x H] matrix.

For hand h = {a, b} and the opponent's reach r over hands (zero where a hand
conflicts with the board):

    showdown(h) = sum over o sharing no card with h of r[o] * sign(rank[h] - rank[o])
    fold(h)     = sum over o sharing no card with h of r[o]

The hands sharing a card with h are those holding a or b; only h itself holds
both, so by inclusion-exclusion sum_{o meets h} = S_a + S_b - r[h]. Sorting all
hands by strength gives sum_{rank[o] < rank[h]} r[o] by prefix sums; per card c
the same sums over the hands holding c come from one sort of (card, rank)
keys. Ties (and h itself) add nothing to a showdown.
"""

from __future__ import annotations

import numpy as np


def fold_values(reach: np.ndarray, hand_cards: np.ndarray, card_hands: np.ndarray) -> np.ndarray:
    """[H] opponent reach compatible with each hand (the fold payoff's weight)."""
    reach = np.asarray(reach, dtype=np.float64)
    per_card = reach[card_hands].sum(axis=1)  # [num_cards]: S_c
    return reach.sum() - per_card[hand_cards[:, 0]] - per_card[hand_cards[:, 1]] + reach


def _below_and_above(keys: np.ndarray, weights: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each query q: sum of weights with key < q, and with key > q."""
    order = np.argsort(keys, kind="stable")
    sorted_keys, cumulative = keys[order], np.concatenate([[0.0], np.cumsum(weights[order])])
    below = cumulative[np.searchsorted(sorted_keys, queries, side="left")]
    not_above = cumulative[np.searchsorted(sorted_keys, queries, side="right")]
    return below, cumulative[-1] - not_above


def showdown_values(ranks: np.ndarray, reach: np.ndarray, hand_cards: np.ndarray,
                    card_hands: np.ndarray) -> np.ndarray:  # fmt: skip
    """[H] sum over compatible opponent hands of reach * sign(rank difference).

    Args:
      ranks: [H] hand strengths (`evaluator.rank_hands`; any value where reach is 0).
      reach: [H] the opponent's reach (0 on hands that conflict with the board).
      hand_cards: [H, 2]; card_hands: [num_cards, num_cards - 1] (`cards.Deck`).
    """
    ranks = np.asarray(ranks, dtype=np.int64)
    reach = np.asarray(reach, dtype=np.float64)
    below, above = _below_and_above(ranks, reach, ranks)
    # Per card c, over the hands holding c: keys (c, rank) in one sorted array.
    span = int(ranks.max()) - int(ranks.min()) + 2
    shifted = ranks - int(ranks.min())
    num_cards = card_hands.shape[0]
    keys = (np.arange(num_cards)[:, None] * span + shifted[card_hands]).reshape(-1)
    weights = reach[card_hands].reshape(-1)
    lower, higher = _card_block_sums(reach, card_hands)
    for column in (0, 1):
        card = hand_cards[:, column]
        card_below, card_above = _below_and_above(keys, weights, card * span + shifted)
        # The sorted keys put every hand of a lower card "below" and of a higher
        # card "above": remove those to keep the hands holding this card only.
        below -= card_below - lower[card]
        above -= card_above - higher[card]
    return below - above


def _card_block_sums(reach, card_hands):
    """(sum of reach over the blocks of cards < c, over the blocks of cards > c), per card c."""
    per_card = reach[card_hands].sum(axis=1)
    before = np.concatenate([[0.0], np.cumsum(per_card)[:-1]])
    return before, per_card.sum() - before - per_card
