"""The CFR variants, one table for both engines: the tabular solvers
(`tabular.solvers`) and the poker public tree's `poker.vector_cfr.VectorCFR`
read each variant's regret minimizer, its settings, its average-strategy
weights and its exact-tie tolerance from here.

    name    minimizer                     settings          average weight
    cfr     RegretMatching                                  uniform (1)
    cfr+    RegretMatching                RM+ clipping      linear (t)
    lcfr    RegretMatching                discount 1, 1     t^gamma, gamma 1
    dcfr    RegretMatching                discount 1.5, 0   t^gamma, gamma 2
    pcfr+   PredictiveRegretMatchingPlus  (predictive)      quadratic (t^2)
    oftrl   OptimisticFTRLEntropy         (predictive)      uniform (1)

OFTRL's stepsizes and utility scale depend on the game; each engine computes
them (`tabular.stability_schedule`, `poker.vector_cfr.public_stability_schedule`)
and passes them to `Variant.make_minimizer`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from openspiel_cfrx.regret.minimizers import (
    OptimisticFTRLEntropy,
    PredictiveRegretMatchingPlus,
    RegretMatching,
)

AVERAGING_SCHEMES = ("uniform", "linear", "quadratic")

# Exact ties. The sequence-form pass sums an action's terminal contributions in
# another order than its sibling's, so actions whose values tie exactly get
# instantaneous regrets of +-1e-16 instead of 0, and regret matching would turn
# that noise into a pure strategy. Each iteration the driver therefore hands the
# minimizer a per-infoset tolerance, TIE_TOLERANCE * max|u| * (counterfactual
# reach of the infoset: sum over its histories of chance x opponent reach), a
# bound on the summed terms' size; regrets within it are exactly 0, as in exact
# arithmetic. Measured on oshi_zumo, goofspiel, Leduc and Liar's dice: noise
# <= 3e-16 of that bound, the smallest real regret >= 2e-5 of it. The poker
# engine scales it by the opponent's total reach on the board instead.
TIE_TOLERANCE = 1e-12


def _uniform_weight(t: int) -> float:
    return 1.0


def _linear_weight(t: int) -> float:
    return float(t)


def _quadratic_weight(t: int) -> float:
    return float(t) ** 2


# Module-level functions (not lambdas), so that solvers holding them pickle.
_SCHEME_WEIGHTS = {"uniform": _uniform_weight, "linear": _linear_weight, "quadratic": _quadratic_weight}


def averaging_weight(averaging: str | Callable[[int], float]) -> Callable[[int], float]:
    """Iteration weight function for the average strategy."""
    if callable(averaging):
        return averaging
    if isinstance(averaging, str) and averaging in _SCHEME_WEIGHTS:
        return _SCHEME_WEIGHTS[averaging]
    raise ValueError(
        f"averaging must be one of {AVERAGING_SCHEMES} or a callable t -> weight, got {averaging!r}"
    )


@dataclasses.dataclass(frozen=True)
class PowerWeight:
    """DCFR's average-strategy weight t^gamma (a picklable callable)."""

    gamma: float

    def __call__(self, t: int) -> float:
        return float(t) ** self.gamma


def power_weight(gamma: float) -> Callable[[int], float]:
    """DCFR's average-strategy weight t^gamma."""
    return PowerWeight(gamma)


class Discount(NamedTuple):
    """DCFR's discounting (Brown & Sandholm 2019, as OpenSpiel's `discounted_cfr`)."""

    alpha: float  # after each iteration, positive cumulative regrets x t^alpha / (t^alpha + 1)
    beta: float  # negative ones x t^beta / (t^beta + 1)
    gamma: float  # the average strategy weighs iteration t by t^gamma


@dataclasses.dataclass(frozen=True)
class Variant:
    """One CFR variant.

    minimizer: the local regret minimizer class (`regret.minimizers`), called
      as `minimizer(legal, dtype=..., **settings)`.
    averaging: the average strategy's iteration weight, one of
      `AVERAGING_SCHEMES`; None: t^gamma of `discount`.
    plus: RM+ (cumulative regrets clipped at 0; `RegretMatching`'s switch,
      PCFR+'s minimizer clips by construction).
    discount: DCFR's (alpha, beta, gamma), or None.
    """

    minimizer: type
    averaging: str | None = None
    plus: bool = False
    discount: Discount | None = None

    @property
    def predictive(self) -> bool:
        """The minimizer decides from a prediction of the next values (PCFR+,
        OFTRL): the engines run a second, predicting pass."""
        return self.minimizer.predictive

    def make_minimizer(self, legal: np.ndarray, dtype=np.float64, *, plus: bool | None = None,
                       discount: Discount | None = None, **settings):  # fmt: skip
        """The variant's regret minimizer over `legal` [n, A]. `plus` and
        `discount` replace the table's (the tabular solvers' constructor
        arguments); `settings` are the minimizer's own (OFTRL: stepsizes,
        utility_scale)."""
        if self.plus if plus is None else plus:  # only RegretMatching takes the switch
            settings["plus"] = True
        discount = self.discount if discount is None else discount
        if discount is not None:
            settings.update(alpha=discount.alpha, beta=discount.beta)
        return self.minimizer(legal, dtype=dtype, **settings)

    def weight(self, discount: Discount | None = None) -> Callable[[int], float]:
        """The average strategy's weight of iteration t (t^gamma of `discount`
        if given, else the table's)."""
        discount = self.discount if discount is None else discount
        if discount is None:
            return averaging_weight(self.averaging)
        return power_weight(discount.gamma)


VARIANTS: dict[str, Variant] = {
    "cfr": Variant(RegretMatching, "uniform"),
    "cfr+": Variant(RegretMatching, "linear", plus=True),
    "lcfr": Variant(RegretMatching, discount=Discount(1.0, 1.0, 1.0)),
    "dcfr": Variant(RegretMatching, discount=Discount(1.5, 0.0, 2.0)),
    "pcfr+": Variant(PredictiveRegretMatchingPlus, "quadratic"),
    "oftrl": Variant(OptimisticFTRLEntropy, "uniform"),
}
