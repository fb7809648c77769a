"""Tabular CFR family on the array engine: one driver, the small local regret
minimizers of `openspiel_cfrx.regret` (re-exported here)."""

from openspiel_cfrx.regret import (
    AVERAGING_SCHEMES,
    OptimisticFTRLEntropy,
    PredictiveRegretMatchingPlus,
    RegretMatching,
    averaging_weight,
)
from openspiel_cfrx.tabular.driver import TabularCFR
from openspiel_cfrx.tabular.policy_file import load_tabular_policy, save_tabular_policy
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
    "load_tabular_policy",
    "make_solver",
    "save_tabular_policy",
    "stability_schedule",
]
