"""Terminal values of one board for every private hand at once, with exact
card removal, in O(H) per board after one sort: no [H x H] matrix.

For hand h = {a, b} and the opponent's reach r over hands (zero where a hand
conflicts with the board):

    showdown(h) = sum over o sharing no card with h of r[o] * sign(rank[h] - rank[o])
    fold(h)     = sum over o sharing no card with h of r[o]

The hands sharing a card with h are those holding a or b; only h itself holds
both, so by inclusion-exclusion the compatible reach of a set of hands is
total - S_a - S_b + r[h] (S_c: its reach over the hands holding c). Per board,
one pass gives F(h), the compatible reach of all hands (the fold value); one
sweep through the hands in strength order, run of equal ranks by run, keeps
the swept reach in total and per card: before a run is added it gives W(h),
the compatible reach strictly weaker (h is not among it), after it W(h) +
T(h) with the tied ones, so showdown(h) = W - (F - (W + T)). The passes are
compiled (numba) and both players' values (each against its own reach row)
share one sweep's index loads; a numpy formulation needed a dozen gathers and
two cumulative sums over [boards x hands] and [boards x cards x 51] arrays
(on 48 river boards, ~1.5 ms per player against ~0.6 ms for one player or both,
an uncommitted microbenchmark; whole walks: `docs/decisions.md`, "unsigned gather indices").
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _fold_sweep(reach0, reach1, two, hand_cards, num_cards, scale0, scale1, out0, out1):  # pragma: no cover - compiled
    """out_k = scale_k x (total - S_a - S_b + r[h]) against reach_k (k = 1 only if
    `two`). Hands are in lexicographic order (`cards.Deck`): the first card's
    block sum runs in a register, so no store waits on the previous one."""
    boards, hands = reach0.shape
    per_card0, per_card1 = np.empty(num_cards), np.empty(num_cards)
    for i in range(boards):
        per_card0[:] = 0.0
        per_card1[:] = 0.0
        block0 = block1 = 0.0
        first = hand_cards[0, 0]
        for h in range(hands):
            c, d = hand_cards[h, 0], hand_cards[h, 1]
            if c != first:
                per_card0[first] += block0
                per_card1[first] += block1
                block0 = block1 = 0.0
                first = c
            r = reach0[i, h]
            block0 += r
            per_card0[d] += r
            if two:
                r = reach1[i, h]
                block1 += r
                per_card1[d] += r
        per_card0[first] += block0
        per_card1[first] += block1
        total0 = 0.5 * per_card0.sum()  # every hand is in two cards' sums
        total1 = 0.5 * per_card1.sum()
        for h in range(hands):
            c, d = hand_cards[h, 0], hand_cards[h, 1]
            out0[i, h] = ((reach0[i, h] - (per_card0[c] + per_card0[d])) + total0) * scale0
            if two:
                out1[i, h] = ((reach1[i, h] - (per_card1[c] + per_card1[d])) + total1) * scale1


@numba.njit(cache=True, nogil=True)
def _showdown_sweep(order, counts, cards, run_end, reach0, reach1, two, num_cards, scale0, scale1, out0,
                    out1):  # fmt: skip  # pragma: no cover - compiled
    """out_k = scale_k x showdown values against reach_k (k = 1 only if `two`: the
    second reach shares the first's index loads, both players' values in one
    sweep), over the first counts[i] hands of order[i]."""
    boards = order.shape[0]
    below0, below1 = np.empty(num_cards), np.empty(num_cards)  # per card, over the hands swept so far
    all0, all1 = np.empty(num_cards), np.empty(num_cards)  # per card, over every hand
    for i in range(boards):
        n = counts[i]
        all0[:] = 0.0
        all1[:] = 0.0
        total0 = total1 = 0.0
        for m in range(n):
            h, c, d = order[i, m], cards[i, m, 0], cards[i, m, 1]
            r = reach0[i, h]
            total0 += r
            all0[c] += r
            all0[d] += r
            if two:
                r = reach1[i, h]
                total1 += r
                all1[c] += r
                all1[d] += r
        below0[:] = 0.0
        below1[:] = 0.0
        swept0 = swept1 = 0.0
        m0 = 0
        while m0 < n:  # runs of equal strength, weakest first
            end = run_end[i, m0]
            for m in range(m0, end):  # W: compatible reach strictly weaker (h is not among it)
                h, c, d = order[i, m], cards[i, m, 0], cards[i, m, 1]
                out0[i, h] = swept0 - below0[c] - below0[d]
                if two:
                    out1[i, h] = swept1 - below1[c] - below1[d]
            for m in range(m0, end):
                h, c, d = order[i, m], cards[i, m, 0], cards[i, m, 1]
                r = reach0[i, h]
                swept0 += r
                below0[c] += r
                below0[d] += r
                if two:
                    r = reach1[i, h]
                    swept1 += r
                    below1[c] += r
                    below1[d] += r
            for m in range(m0, end):  # W - (F - (W + T)): F all compatible, T the tied ones
                h, c, d = order[i, m], cards[i, m, 0], cards[i, m, 1]
                r = reach0[i, h]
                out0[i, h] = (out0[i, h] + (swept0 - below0[c] - below0[d] + r)
                                - (total0 - all0[c] - all0[d] + r)) * scale0  # fmt: skip
                if two:
                    r = reach1[i, h]
                    out1[i, h] = (out1[i, h] + (swept1 - below1[c] - below1[d] + r)
                                    - (total1 - all1[c] - all1[d] + r)) * scale1  # fmt: skip
            m0 = end


def _sorted_runs(ranks: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of ranks [b, H]: the hands of `free` by ascending rank (padded to
    the largest count), their count, and for each sorted position where its run
    of equal ranks ends (exclusive)."""
    rows = ranks.shape[0]
    counts = free.sum(axis=1)
    n = int(counts.max()) if rows else 0
    order = np.argsort(np.where(free, ranks, np.iinfo(np.int64).max), axis=1, kind="stable")[:, :n]
    ordered = np.take_along_axis(np.where(free, ranks, -1), order, axis=1)  # padding: a run of its own
    last = np.ones((rows, n), dtype=bool)
    last[:, :-1] = ordered[:, 1:] != ordered[:, :-1]
    end = np.minimum.accumulate(np.where(last, np.arange(1, n + 1), n)[:, ::-1], axis=1)[:, ::-1]
    index = _index_type(ranks.shape[1] + 1)
    return (np.ascontiguousarray(order, dtype=index), counts.astype(np.int32),
            np.ascontiguousarray(np.minimum(end, counts[:, None]), dtype=index))  # fmt: skip


def kernel_cards(hand_cards: np.ndarray, num_cards: int) -> np.ndarray:
    """hand_cards [H, 2] in the kernels' index type (no copy when it already is)."""
    return np.ascontiguousarray(hand_cards, dtype=_index_type(num_cards))


def _index_type(size: int):
    """The smallest unsigned type for indices below `size`: the kernels' gathers with
    unsigned indices skip numba's negative-index wraparound (~1.6x on the showdown
    sweep, ~1.35x on the fold sweep: `docs/decisions.md`, "unsigned gather indices")."""
    return next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if size <= np.iinfo(t).max + 1)


class BoardShowdowns:
    """Showdown and fold values for a batch of boards: the sort by strength is
    done once per board (ranks [b, H] from `evaluator.rank_hands`), every call
    is one compiled sweep per board.

    free: [b, H] the hands whose values are wanted and whose reach may be
    positive (default: every hand), e.g. those not meeting each board; the
    others get value 0 and must have zero reach.
    """

    def __init__(self, ranks: np.ndarray, hand_cards: np.ndarray, card_hands: np.ndarray,
                 free: np.ndarray | None = None):  # fmt: skip
        ranks = np.asarray(ranks, dtype=np.int64)
        free = np.ones(ranks.shape, dtype=bool) if free is None else np.asarray(free, dtype=bool)
        if ranks.shape != free.shape:
            raise ValueError(f"BoardShowdowns: free {free.shape} must have the shape of ranks {ranks.shape}")
        self.hand_cards = np.ascontiguousarray(hand_cards, dtype=np.int64)
        self.num_cards = int(card_hands.shape[0])
        self.order, self.counts, self.run_end = _sorted_runs(ranks, free)
        self.cards = self.hand_cards[self.order].astype(_index_type(self.num_cards))
        self.partial = not free.all()

    def showdown(self, reach, scale=1.0):
        """scale x sum over compatible opponent hands of reach * sign(rank difference):
        reach [b, H] -> [b, H]; or a pair of them (or [2, b, H]) and scale [2] -> a
        pair, k against reach[k] (a walk passes both players' reach and gets each
        player's opponent's values in one sweep)."""
        single, reach, scale = _pair(reach, scale)
        out = [(np.zeros if self.partial else np.empty)(r.shape) for r in reach]
        _showdown_sweep(self.order, self.counts, self.cards, self.run_end, reach[0], reach[-1], len(reach) == 2,
                        self.num_cards, scale[0], scale[-1], out[0], out[-1])  # fmt: skip
        return out[0] if single else out


def showdown_values(ranks: np.ndarray, reach: np.ndarray, hand_cards: np.ndarray,
                    card_hands: np.ndarray) -> np.ndarray:  # fmt: skip
    """[H] sum over compatible opponent hands of reach * sign(rank difference).

    Args:
      ranks: [H] hand strengths (`evaluator.rank_hands`; any value where reach is 0).
      reach: [H] the opponent's reach (0 on hands that conflict with the board).
      hand_cards: [H, 2]; card_hands: [num_cards, num_cards - 1] (`cards.Deck`).
    """
    board = BoardShowdowns(np.asarray(ranks)[None], hand_cards, card_hands)
    return board.showdown(np.asarray(reach, dtype=np.float64)[None])[0]


def fold_values(reach: np.ndarray, hand_cards: np.ndarray, card_hands: np.ndarray) -> np.ndarray:
    """[H] opponent reach compatible with each hand (the fold payoff's weight)."""
    return fold_values_batch(np.asarray(reach, dtype=np.float64)[None], hand_cards, card_hands)[0]


def fold_values_batch(reach, hand_cards: np.ndarray, card_hands: np.ndarray | None, scale=1.0,
                      num_cards: int | None = None):  # fmt: skip
    """scale x `fold_values` of each row of reach [b, H]; or of a pair of them (or
    [2, b, H]) with scale [2], a pair (num_cards: card_hands' rows)."""
    single, reach, scale = _pair(reach, scale)
    out = [np.empty(r.shape) for r in reach]
    cards = int(num_cards if num_cards is not None else card_hands.shape[0])
    _fold_sweep(reach[0], reach[-1], len(reach) == 2, kernel_cards(hand_cards, cards), cards, scale[0], scale[-1],
                out[0], out[-1])  # fmt: skip
    return out[0] if single else out


def _pair(reach, scale) -> tuple[bool, list[np.ndarray], list[float]]:
    """(one [b, H] array given?, the reach arrays (1 or 2, contiguous float64), a scale per array)."""
    single = isinstance(reach, np.ndarray) and reach.ndim == 2
    arrays = [np.ascontiguousarray(r, dtype=np.float64) for r in ([reach] if single else reach)]
    if not 1 <= len(arrays) <= 2:
        raise ValueError(f"showdown/fold values take one or two reach arrays, got {len(arrays)}")
    # (called at every terminal node of a walk: plain Python, not numpy broadcasting)
    several = isinstance(scale, (list, tuple)) or (isinstance(scale, np.ndarray) and scale.ndim > 0)
    scales = [float(x) for x in scale] if several else [float(scale)] * len(arrays)
    if len(scales) != len(arrays):
        raise ValueError(f"showdown/fold values: {len(scales)} scales for {len(arrays)} reach arrays")
    return single, arrays, scales
