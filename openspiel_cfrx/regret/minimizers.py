"""Local regret minimizers of the CFR family, shared by the tabular driver
(`tabular.driver.TabularCFR`) and the poker engine (`poker.vector_cfr.VectorCFR`);
`variants.VARIANTS` says which one each CFR variant uses, with which settings.

Each class is the whole difference between two CFR variants: how the infosets
of one player turn observed counterfactual values into their next strategy.
All work is vectorised over a contiguous range of infosets `[lo, hi)`; arrays
are `[hi - lo, A]` with illegal actions masked by `legal [hi - lo, A]`.

Protocol (duck-typed):
  * `observe(t, cf_values, infoset_values, strategy, tie_tolerance)` after
    iteration t's counterfactual values were computed with `strategy` (the one
    played); `tie_tolerance [n]` bounds the summation noise of each infoset's
    values: an action value within it of the infoset value is an exact tie
    (see `variants.TIE_TOLERANCE`).
  * `next_strategy(t, lo, hi, prediction, out=None)` returns the strategy of
    infosets lo:hi for iteration t + 1 (written into `out` if given). Non-predictive minimizers are called once for the
    player's whole range with `prediction=None`; minimizers with
    `predictive = True` are called level by level, bottom-up, with the
    counterfactual *prediction* of those infosets built from the new decisions
    of their subtrees (Farina et al. 2019, eq. 17).

Values are utilities (higher is better); papers written with losses use
loss = -utility.
"""

from __future__ import annotations

import numba
import numpy as np

from openspiel_cfrx.rows import by_width, row_dot

_NO_MASK = np.zeros((0, 0), dtype=bool)
_NO_TOLERANCE = np.zeros(0)
_NO_PREDICTION = np.zeros((0, 0))


@by_width
def _positive_part_normalised(width):
    @numba.njit(cache=True, nogil=True)
    def kernel(weights, legal, out, divide):  # pragma: no cover - compiled
        n, actions = weights.shape[0], width or weights.shape[1]
        masked = legal.shape[0] > 0
        for i in range(n):
            for a in range(actions):
                w = weights[i, a]
                out[i, a] = w if w > 0 and (not masked or legal[i, a]) else 0
            total = out[i, 0]
            for a in range(1, actions):  # sequential, as numpy sums fewer than 8 elements
                total += out[i, a]
            if total > 0 and divide:
                for a in range(actions):
                    out[i, a] = out[i, a] / total
            elif total > 0:  # one division per row (divisions bound this loop)
                scale = 1.0 / total
                for a in range(actions):
                    out[i, a] = out[i, a] * scale
            else:  # no positive weight: uniform over the legal actions
                count = 0
                for a in range(actions):
                    count += 1 if not masked or legal[i, a] else 0
                for a in range(actions):
                    out[i, a] = 1.0 / count if not masked or legal[i, a] else 0.0

    return kernel


@by_width
def _add_regrets(width):
    @numba.njit(cache=True, nogil=True)
    def kernel(regret, cf_values, infoset_values, tolerance, illegal, discount, positive, negative,
               plus):  # fmt: skip  # pragma: no cover - compiled
        n, actions = regret.shape[0], width or regret.shape[1]
        ties, masked = tolerance.shape[0] > 0, illegal.shape[0] > 0
        for i in range(n):
            for a in range(actions):
                instant = cf_values[i, a] - infoset_values[i]
                if (ties and abs(instant) <= tolerance[i]) or (masked and illegal[i, a]):
                    instant = 0.0
                regret[i, a] += instant  # in regret's dtype, as numpy's in-place add
                if discount:
                    r = regret[i, a]
                    regret[i, a] = r * (positive if r >= 0 else negative)
                if plus and regret[i, a] < 0:
                    regret[i, a] = 0.0

    return kernel


@by_width
def _shifted_logits(width):
    @numba.njit(cache=True, nogil=True)
    def kernel(cumulative, observed, prediction, tolerance, stepsizes, utility_scale, legal,
               out):  # fmt: skip  # pragma: no cover - compiled
        """cumulative += observed (if given; legal entries), then out = (cumulative +
        prediction) x stepsize / utility_scale minus its row maximum (-inf if
        illegal); a prediction row whose entries all lie within tolerance[i] of
        each other (if given) counts as zero."""
        n, actions = cumulative.shape[0], width or cumulative.shape[1]
        observing, predicted, masked = observed.shape[0] > 0, prediction.shape[0] > 0, legal.shape[0] > 0
        ties = tolerance.shape[0] > 0
        for i in range(n):
            if observing:
                for a in range(actions):
                    cumulative[i, a] += observed[i, a] if not masked or legal[i, a] else 0.0
            tied = False
            if predicted and ties:
                low = high = prediction[i, 0]
                for a in range(1, actions):
                    low, high = min(low, prediction[i, a]), max(high, prediction[i, a])
                tied = high - low <= tolerance[i]
            eta = stepsizes[i] / utility_scale
            top = -np.inf
            for a in range(actions):
                score = cumulative[i, a] + prediction[i, a] if predicted and not tied else cumulative[i, a] + 0.0
                logit = score * eta if not masked or legal[i, a] else -np.inf
                out[i, a] = logit
                top = max(top, logit)
            for a in range(actions):
                out[i, a] -= top

    return kernel


@by_width
def _normalise_rows(width):
    @numba.njit(cache=True, nogil=True)
    def kernel(weights):  # pragma: no cover - compiled
        n, actions = weights.shape[0], width or weights.shape[1]
        for i in range(n):
            total = weights[i, 0]
            for a in range(1, actions):  # sequential, as numpy sums fewer than 8 elements
                total += weights[i, a]
            scale = 1.0 / total  # one division per row (divisions bounded this loop)
            for a in range(actions):
                weights[i, a] = weights[i, a] * scale

    return kernel


def _normalise_positive(weights: np.ndarray, legal: np.ndarray | None, out: np.ndarray | None = None,
                        divide: bool = False) -> np.ndarray:  # fmt: skip
    """Regret matching: positive part normalised, uniform over legal actions if
    no weight is positive. weights, legal: [n, A] (None: every action legal;
    the result has weights' dtype, or is written into `out`). One compiled pass;
    divide: divide each entry by the row total instead of multiplying by its
    reciprocal (1 ulp apart; PCFR+'s predictions sit on exact ties where that
    ulp flips the next strategy between the vector and tabular engines)."""
    weights = np.ascontiguousarray(weights)
    if out is None:
        out = np.empty(weights.shape, dtype=weights.dtype)
    legal = _NO_MASK if legal is None else np.ascontiguousarray(legal)
    _positive_part_normalised(weights.shape[1])(weights, legal, out, divide)
    return out


class RegretMatching:
    """Regret matching on cumulative counterfactual regrets (CFR, Zinkevich 2007),
    optionally RM+ (CFR+, Tammelin 2015) and DCFR discounting (Brown &
    Sandholm 2019).

    Discounting follows OpenSpiel's `discounted_cfr`: after adding iteration
    t's regrets, positive cumulative regrets are multiplied by t^a / (t^a + 1)
    and negative ones by t^b / (t^b + 1).
    """

    predictive = False
    state_arrays = ("cumulative_regret",)  # what a checkpoint must keep

    def __init__(
        self,
        legal: np.ndarray,
        plus: bool = False,
        alpha: float | None = None,
        beta: float | None = None,
        dtype=np.float64,
    ):
        self.legal = legal
        # Every action legal (the poker engine's nodes): no mask work or storage.
        self.illegal = None if legal.all() else ~legal
        self.plus = plus
        self.alpha, self.beta = alpha, beta
        self.cumulative_regret = np.zeros(legal.shape, dtype=dtype)  # [n, A] (float32: poker engine)

    def observe(self, t, cf_values, infoset_values, strategy, tie_tolerance=None):
        """R += (cf - v), exact ties (within tie_tolerance) and illegal actions adding
        0; then DCFR's discount (t^a / (t^a + 1) on R >= 0, t^b / (t^b + 1) below) or
        RM+'s clipping. One compiled pass."""
        discount = self.alpha is not None
        positive = t**self.alpha / (t**self.alpha + 1.0) if discount else 1.0
        negative = t**self.beta / (t**self.beta + 1.0) if discount else 1.0
        _add_regrets(self.cumulative_regret.shape[1])(self.cumulative_regret, np.ascontiguousarray(cf_values, dtype=np.float64),
                     np.ascontiguousarray(infoset_values, dtype=np.float64),
                     _NO_TOLERANCE if tie_tolerance is None else np.ascontiguousarray(tie_tolerance, dtype=np.float64),
                     _NO_MASK if self.illegal is None else self.illegal, discount, positive, negative, self.plus)  # fmt: skip

    def next_strategy(self, t, lo, hi, prediction=None, out=None):
        """Regret matching on R[lo:hi] (into `out` if given)."""
        return _normalise_positive(self.cumulative_regret[lo:hi], None if self.illegal is None else self.legal[lo:hi],
                                   out)  # fmt: skip


class PredictiveRegretMatchingPlus(RegretMatching):
    """Predictive RM+ (PCFR+, Farina, Kroer & Sandholm 2021).

    Cumulative regrets as RM+; the next strategy is proportional to
    [R^t + (m_hat - <m_hat, x^t>)]^+ where m_hat is the counterfactual
    prediction (prediction of the sequence-form utility = last utility,
    propagated with the subtree's new decisions) and x^t the strategy just
    played.
    """

    predictive = True
    state_arrays = ("cumulative_regret", "last_strategy")

    def __init__(self, legal: np.ndarray, dtype=np.float64):
        super().__init__(legal, plus=True, dtype=dtype)
        self.last_strategy = (legal / legal.sum(axis=1, keepdims=True)).astype(dtype)

    def observe(self, t, cf_values, infoset_values, strategy, tie_tolerance=None):
        super().observe(t, cf_values, infoset_values, strategy, tie_tolerance)
        self.last_strategy = strategy.astype(self.cumulative_regret.dtype)

    def next_strategy(self, t, lo, hi, prediction=None, out=None):
        if prediction is None:
            return super().next_strategy(t, lo, hi, out=out)
        played = self.last_strategy[lo:hi]
        predicted_regret = prediction - row_dot(prediction, played)[:, None]
        return _normalise_positive(self.cumulative_regret[lo:hi] + predicted_regret,
                                   None if self.illegal is None else self.legal[lo:hi], out, divide=True)  # fmt: skip


class OptimisticFTRLEntropy:
    """OFTRL with the negative-entropy regularizer at every decision point
    (Syrgkanis et al. 2015; used locally by Farina et al. 2019, Section 3.2):

        x_j^{t+1} ∝ exp(-eta_j (L_j^t + m_j^{t+1}))                     (8)

    with L_j^t the cumulative counterfactual loss and m_j^{t+1} the
    counterfactual loss prediction (17). Losses are utilities scaled by
    -1 / utility_scale so that their infinity-norm (dual of the l1 norm in
    which entropy is 1-strongly convex) is at most 1/3, the setting in which
    Section 5.1 sets eta_j = kappa_j.

    Args:
      legal: [n, A] legal mask of the player's infosets.
      stepsizes: [n] eta_j per infoset (`tabular.stability_schedule`; on the poker
        public tree `poker.vector_cfr.public_stability_schedule`).
      utility_scale: positive scale; counterfactual utilities / utility_scale
        lie in [-1/3, 1/3].
    """

    predictive = True
    state_arrays = ("cumulative_utility",)

    def __init__(self, legal: np.ndarray, stepsizes: np.ndarray, utility_scale: float, dtype=np.float64):
        self.legal = legal
        self.all_legal = bool(legal.all())
        self.stepsizes = stepsizes
        self.utility_scale = utility_scale
        self.cumulative_utility = np.zeros(legal.shape, dtype=dtype)  # -L, unscaled: [n, A]

    def observe(self, t, cf_values, infoset_values, strategy, tie_tolerance=None):
        self.cumulative_utility += cf_values if self.all_legal else np.where(self.legal, cf_values, 0.0)

    def next_strategy(self, t, lo, hi, prediction=None, out=None):
        """(8): softmax over legal actions of eta_j (-L + m) / utility_scale (into
        `out` if given: float64)."""
        return self._decide(lo, hi, _NO_PREDICTION, prediction, _NO_TOLERANCE, out)

    def observe_and_next_strategy(self, t, cf_values, prediction, prediction_tolerance, out=None):
        """`observe(t, cf_values)` then `next_strategy(t, 0, n, prediction)` in one
        compiled pass over every infoset, with prediction rows whose entries all
        lie within prediction_tolerance [n] of each other read as zero (exact
        ties: the poker engine's card-removal noise)."""
        observed = np.ascontiguousarray(cf_values, dtype=np.float64)
        tolerance = np.ascontiguousarray(prediction_tolerance, dtype=np.float64)
        return self._decide(0, len(observed), observed, prediction, tolerance, out)

    def _decide(self, lo, hi, observed, prediction, tolerance, out):
        if out is None:
            out = np.empty(self.cumulative_utility[lo:hi].shape)
        _shifted_logits(out.shape[1])(self.cumulative_utility[lo:hi], observed,
                        _NO_PREDICTION if prediction is None else np.ascontiguousarray(prediction, dtype=np.float64),
                        tolerance, self.stepsizes[lo:hi], float(self.utility_scale),
                        _NO_MASK if self.all_legal else np.ascontiguousarray(self.legal[lo:hi]), out)  # fmt: skip
        np.exp(out, out=out)  # numpy's exp is SIMD; a compiled loop calls libm per element (2.6x slower here)
        _normalise_rows(out.shape[1])(out)
        return out
