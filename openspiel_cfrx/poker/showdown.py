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


class BoardShowdowns:
    """`showdown_values` / `fold_values` for a batch of boards at once.

    The sort orders depend only on the boards, so they are computed once
    (ranks [b, H] from `evaluator.rank_hands`) and every later call is a few
    gathers and one cumulative sum per board: O(H) per board after the
    O(H log H) set-up. Same sums as the one-board functions: over opponent
    hands sharing no card with h (total, minus the blocks of h's two cards,
    plus h itself, which is in both blocks and ties with itself).
    """

    def __init__(self, ranks: np.ndarray, hand_cards: np.ndarray, card_hands: np.ndarray):
        ranks = np.asarray(ranks, dtype=np.int64)
        b, num_hands = ranks.shape
        num_cards, per_card = card_hands.shape
        self.hand_cards, self.card_hands = hand_cards, card_hands
        order, first, after = _runs(ranks)  # over all hands
        # Flat indices: into reach [b * H] (sort order) and the cumulative sums [b * (H + 1)].
        self.order = (order + np.arange(b)[:, None] * num_hands).reshape(-1)
        rows = np.arange(b)[:, None] * (num_hands + 1)
        self.first, self.after = (first + rows).reshape(-1), (after + rows).reshape(-1)
        self.last = np.broadcast_to(rows + num_hands, (b, num_hands)).reshape(-1)
        block_order, block_first, block_after = _runs(ranks[:, card_hands].reshape(b * num_cards, per_card))
        # Per board, the hands of each card's block in rank order (one gather of reach).
        block_hands = card_hands[np.arange(num_cards)[None, :, None], block_order.reshape(b, num_cards, per_card)]
        self.block_hands = (block_hands.reshape(b, -1) + np.arange(b)[:, None] * num_hands).reshape(-1)
        # Where hand h sits in the block of its card j (static), then the run bounds there,
        # as flat indices into the [b * num_cards, per_card + 1] cumulative sums.
        slot = np.empty((num_cards, num_hands), dtype=np.int64)
        slot[np.arange(num_cards)[:, None], card_hands] = np.arange(per_card)[None, :]
        boards = np.arange(b)[:, None]
        block_first = block_first.reshape(b, num_cards, per_card)
        block_after = block_after.reshape(b, num_cards, per_card)
        self.card_first, self.card_after, self.card_total = [], [], []
        for j in (0, 1):
            card = hand_cards[:, j][None, :]  # [1, H]
            rows = (boards * num_cards + card) * (per_card + 1)  # [b, H]
            position = slot[hand_cards[:, j], np.arange(num_hands)][None, :]
            self.card_first.append((rows + block_first[boards, card, position]).reshape(-1))
            self.card_after.append((rows + block_after[boards, card, position]).reshape(-1))
            self.card_total.append((rows + per_card).reshape(-1))

    def showdown(self, reach: np.ndarray) -> np.ndarray:
        """[b, H] sum over compatible opponent hands of reach * sign(rank difference)."""
        b, num_hands = reach.shape
        num_cards, per_card = self.card_hands.shape
        flat_reach = reach.reshape(-1)
        cumulative = _cumulative(flat_reach.take(self.order).reshape(b, num_hands)).reshape(-1)  # [b * (H + 1)]
        result = cumulative.take(self.first)  # below
        result += cumulative.take(self.after)  # minus above = -(total - not above)
        result -= cumulative.take(self.last)
        flat = _cumulative(flat_reach.take(self.block_hands).reshape(b * num_cards, per_card)).reshape(-1)
        for j in (0, 1):  # minus (below - above) within the block of each of h's cards
            result -= flat.take(self.card_first[j])
            result -= flat.take(self.card_after[j])
            result += flat.take(self.card_total[j])
        return result.reshape(b, num_hands)

    def fold(self, reach: np.ndarray) -> np.ndarray:
        """[b, H] compatible opponent reach of every hand."""
        return fold_values_batch(reach, self.hand_cards, self.card_hands)


def fold_values_batch(reach: np.ndarray, hand_cards: np.ndarray, card_hands: np.ndarray) -> np.ndarray:
    """`fold_values` of each row of reach [b, H]."""
    per_card = reach[:, card_hands].sum(axis=2)  # [b, num_cards]
    out = per_card.take(hand_cards[:, 0], axis=1)
    out += per_card.take(hand_cards[:, 1], axis=1)
    np.subtract(reach, out, out=out)
    out += reach.sum(axis=1, keepdims=True)
    return out


def _cumulative(values: np.ndarray) -> np.ndarray:
    out = np.zeros((values.shape[0], values.shape[1] + 1))
    np.cumsum(values, axis=1, out=out[:, 1:])
    return out


def _runs(keys: np.ndarray):
    """Per row: the sort order, and for each element (in original order) the
    sorted position where its run of equal keys starts and ends (exclusive)."""
    rows, n = keys.shape
    order = np.argsort(keys, axis=1, kind="stable")
    ordered = np.take_along_axis(keys, order, axis=1)
    positions = np.broadcast_to(np.arange(n), (rows, n))
    new = np.ones((rows, n), dtype=bool)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    start = np.maximum.accumulate(np.where(new, positions, 0), axis=1)
    last = np.ones((rows, n), dtype=bool)
    last[:, :-1] = new[:, 1:]
    end = np.minimum.accumulate(np.where(last, positions + 1, n)[:, ::-1], axis=1)[:, ::-1]
    first, after = np.empty_like(order), np.empty_like(order)
    np.put_along_axis(first, order, start, axis=1)
    np.put_along_axis(after, order, end, axis=1)
    return order, first, after
