"""Convergence curves: CSV / PNG of the points the harness measures.

The points and the loops that measure them (`run_curve`, `run_timed`,
`run_budget`) are `openspiel_cfrx.eval.harness`'s, imported here too. Seconds
in a curve count only the solver's own work (evaluation excluded), so curves of
different solvers compare at equal compute.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os

from openspiel_cfrx.eval.harness import (  # noqa: F401  (this module's names before the harness held them)
    CurvePoint,
    exact_exploitability,
    log_checkpoints,
    run_curve,
)


def write_csv(points: list[CurvePoint], path: str) -> None:
    """One row per point with every field of the point dataclass, written
    atomically (an interrupted program never leaves half a file)."""
    from openspiel_cfrx.checkpoint_io import atomic_write

    fields = [f.name for f in dataclasses.fields(points[0])] if points else [
        f.name for f in dataclasses.fields(CurvePoint)
    ]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(fields)
    for p in points:
        row = []
        for name in fields:
            value = getattr(p, name)
            if isinstance(value, float):
                value = f"{value:.10g}"
            row.append("" if value is None else value)
        writer.writerow(row)
    data = buffer.getvalue().encode("utf-8")
    atomic_write(path, lambda f: f.write(data))


def plot_curves(points: list[CurvePoint], path: str, title: str, x: str = "iteration") -> None:
    """Log-log plot of exploitability against `x` ("iteration" or "seconds")."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    names = list(dict.fromkeys(p.solver for p in points))
    # One colour per algorithm, line style per update mode, markers for baselines.
    families = list(dict.fromkeys(n.split(" (")[0] for n in names))
    colours = plt.get_cmap("tab20" if len(families) > 10 else "tab10")
    for name in names:
        series = [p for p in points if p.solver == name]
        xs = [getattr(p, x) for p in series]
        ys = [max(p.exploitability, 1e-12) for p in series]
        style = "--" if "simultaneous" in name else "-"
        marker = "o" if name.startswith("OpenSpiel") else None
        colour = colours(families.index(name.split(" (")[0]) % colours.N)
        ax.loglog(xs, ys, style, color=colour, marker=marker, markersize=3, label=name,
                  linewidth=1.4)  # fmt: skip
    ax.set_xlabel({"iteration": "iterations", "seconds": "solver seconds"}.get(x, x.replace("_", " ")))
    ax.set_ylabel("exploitability (NashConv / 2)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
