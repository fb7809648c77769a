"""Local regret minimizers for the tabular CFR driver.

Each class is the whole difference between two CFR variants: how the infosets
of one player turn observed counterfactual values into their next strategy.
All work is vectorised over a contiguous range of infosets `[lo, hi)`; arrays
are `[hi - lo, A]` with illegal actions masked by `legal [hi - lo, A]`.

Protocol (duck-typed):
  * `observe(t, cf_values, infoset_values, strategy, tie_tolerance)` after
    iteration t's counterfactual values were computed with `strategy` (the one
    played); `tie_tolerance [n]` bounds the summation noise of each infoset's
    values: an action value within it of the infoset value is an exact tie
    (see `driver.TIE_TOLERANCE`).
  * `next_strategy(t, lo, hi, prediction)` returns the strategy of infosets
    lo:hi for iteration t + 1. Non-predictive minimizers are called once for the
    player's whole range with `prediction=None`; minimizers with
    `predictive = True` are called level by level, bottom-up, with the
    counterfactual *prediction* of those infosets built from the new decisions
    of their subtrees (Farina et al. 2019, eq. 17).

Values are utilities (higher is better); papers written with losses use
loss = -utility.
"""

from __future__ import annotations

import numpy as np

from openspiel_cfrx.rows import row_dot, row_max, row_sum


def _normalise_positive(weights: np.ndarray, legal: np.ndarray | None) -> np.ndarray:
    """Regret matching: positive part normalised, uniform over legal actions if
    no weight is positive. weights, legal: [n, A] (None: every action legal;
    the result has weights' dtype)."""
    positive = np.maximum(weights, 0.0)
    if legal is None:
        legal = np.broadcast_to(True, weights.shape)
    else:
        positive *= legal
    total = row_sum(positive, keepdims=True)
    some = total > 0
    np.divide(positive, total, out=positive, where=some)
    none = ~some[:, 0]
    if none.any():
        rows = legal[none]
        positive[none] = rows / rows.sum(axis=1, keepdims=True)
    return positive


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
        regret = self.cumulative_regret
        instant = cf_values - infoset_values[:, None]
        if tie_tolerance is None:
            dropped = self.illegal
        else:  # exact ties stay exact (zero regret), not +-1e-16 noise
            dropped = np.abs(instant) <= tie_tolerance[:, None]
            if self.illegal is not None:
                dropped |= self.illegal
        if dropped is not None:
            np.copyto(instant, 0.0, where=dropped)
        regret += instant
        if self.alpha is not None:
            pos = t**self.alpha / (t**self.alpha + 1.0)
            neg = t**self.beta / (t**self.beta + 1.0)
            regret *= np.where(regret >= 0, pos, neg)
        if self.plus:
            np.maximum(regret, 0.0, out=regret)

    def next_strategy(self, t, lo, hi, prediction=None):
        return _normalise_positive(self.cumulative_regret[lo:hi], None if self.illegal is None else self.legal[lo:hi])


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

    def next_strategy(self, t, lo, hi, prediction=None):
        if prediction is None:
            return super().next_strategy(t, lo, hi)
        played = self.last_strategy[lo:hi]
        predicted_regret = prediction - row_dot(prediction, played)[:, None]
        return _normalise_positive(
            self.cumulative_regret[lo:hi] + predicted_regret, None if self.illegal is None else self.legal[lo:hi]
        )


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
      stepsizes: [n] eta_j per infoset (see `stability_schedule`).
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

    def next_strategy(self, t, lo, hi, prediction=None):
        score = self.cumulative_utility[lo:hi]
        if prediction is not None:
            score = score + prediction
        logits = score * (self.stepsizes[lo:hi, None] / self.utility_scale)
        if not self.all_legal:
            logits = np.where(self.legal[lo:hi], logits, -np.inf)
        logits -= row_max(logits, keepdims=True)
        weights = np.exp(logits)
        return weights / row_sum(weights, keepdims=True)
