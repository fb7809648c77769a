"""Tabular CFR family on the array engine: one driver, small local regret minimizers."""

from openspiel_cfrx.tabular.driver import AVERAGING_SCHEMES, TabularCFR, averaging_weight
from openspiel_cfrx.tabular.regret_minimizers import (
    OptimisticFTRLEntropy,
    PredictiveRegretMatchingPlus,
    RegretMatching,
)
from openspiel_cfrx.tabular.solvers import (
    SOLVERS,
    CFRPlusSolver,
    CFRSolver,
    DCFRSolver,
    LCFRSolver,
    OFTRLCFRSolver,
    PCFRPlusSolver,
    TabularSolver,
    make_solver,
)
from openspiel_cfrx.tabular.stability import StabilitySchedule, stability_schedule
from openspiel_cfrx.tabular.team_regrets import (
    IndependentRegretMatching,
    ProductFormRegretMatching,
    TeamCFRSolver,
)

__all__ = [
    "AVERAGING_SCHEMES",
    "CFRPlusSolver",
    "CFRSolver",
    "DCFRSolver",
    "IndependentRegretMatching",
    "LCFRSolver",
    "OFTRLCFRSolver",
    "OptimisticFTRLEntropy",
    "PCFRPlusSolver",
    "PredictiveRegretMatchingPlus",
    "ProductFormRegretMatching",
    "RegretMatching",
    "SOLVERS",
    "StabilitySchedule",
    "TabularCFR",
    "TabularSolver",
    "TeamCFRSolver",
    "averaging_weight",
    "make_solver",
    "stability_schedule",
]
