"""The CFR family's local regret minimizers and its table of variants, shared by
the tabular solvers (`openspiel_cfrx.tabular`) and the poker engine's vector CFR
(`openspiel_cfrx.poker.vector_cfr`); it imports neither."""

from openspiel_cfrx.regret.minimizers import (
    OptimisticFTRLEntropy,
    PredictiveRegretMatchingPlus,
    RegretMatching,
)
from openspiel_cfrx.regret.variants import (
    AVERAGING_SCHEMES,
    TIE_TOLERANCE,
    VARIANTS,
    Discount,
    Variant,
    averaging_weight,
    power_weight,
)

__all__ = [
    "AVERAGING_SCHEMES",
    "Discount",
    "OptimisticFTRLEntropy",
    "PredictiveRegretMatchingPlus",
    "RegretMatching",
    "TIE_TOLERANCE",
    "VARIANTS",
    "Variant",
    "averaging_weight",
    "power_weight",
]
