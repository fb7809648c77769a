"""Evaluation: exact exploitability curves, CSV / PNG output."""

from openspiel_cfrx.eval.curves import (
    CurvePoint,
    exact_exploitability,
    log_checkpoints,
    plot_curves,
    run_curve,
    write_csv,
)

__all__ = [
    "CurvePoint",
    "exact_exploitability",
    "log_checkpoints",
    "plot_curves",
    "run_curve",
    "write_csv",
]
