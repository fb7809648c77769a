"""Evaluation: the equal-budget harness, exact exploitability curves, CSV / PNG output."""

from openspiel_cfrx.eval.curves import plot_curves, write_csv
from openspiel_cfrx.eval.harness import (
    Contender,
    CurvePoint,
    FunctionContender,
    Measurement,
    RunState,
    TimedPoint,
    exact_exploitability,
    log_checkpoints,
    log_times,
    run_budget,
    run_curve,
    run_timed,
)

__all__ = [
    "Contender",
    "CurvePoint",
    "FunctionContender",
    "Measurement",
    "RunState",
    "TimedPoint",
    "exact_exploitability",
    "log_checkpoints",
    "log_times",
    "plot_curves",
    "run_budget",
    "run_curve",
    "run_timed",
    "write_csv",
]
