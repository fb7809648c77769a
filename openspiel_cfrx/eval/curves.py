"""Convergence curves: run a solver, evaluate exactly at checkpoints, write CSV / PNG.

Seconds in a curve count only the solver's own work (evaluation excluded), so
curves of different solvers compare at equal compute.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import os
import time
from collections.abc import Callable, Iterable

import numpy as np

from openspiel_cfrx.tree import get_tree, strategy_from_policy
from openspiel_cfrx.tree.sequence_form import best_response


@dataclasses.dataclass
class CurvePoint:
    solver: str
    iteration: int
    seconds: float
    exploitability: float  # (sum of best-response values - utility sum) / 2
    nash_conv: float


def log_checkpoints(iterations: int, per_decade: int = 8, every: int | None = None) -> list[int]:
    """Roughly log-spaced iteration numbers in [1, iterations] (always includes
    the last); or every `every` iterations when given."""
    if every:
        points = set(range(every, iterations + 1, every))
    else:
        count = max(2, int(per_decade * math.log10(max(iterations, 10))) + 1)
        points = {int(round(v)) for v in np.logspace(0, math.log10(iterations), count)}
    points.add(iterations)
    return sorted(p for p in points if 1 <= p <= iterations)


def exact_exploitability(game, average_policy) -> tuple[float, float]:
    """(exploitability, nash_conv) of any policy our evaluator accepts."""
    tree = get_tree(game)
    result = best_response(tree, strategy_from_policy(tree, average_policy))
    exploit = float((result.best_response_values.sum() - game.utility_sum()) / 2)
    return exploit, result.nash_conv


def run_curve(
    name: str,
    game,
    step: Callable[[], None],
    average_policy: Callable[[], object],
    iterations: int,
    checkpoints: Iterable[int],
    time_budget: float | None = None,
    log: Callable[[str], None] | None = print,
) -> list[CurvePoint]:
    """Calls `step()` `iterations` times, evaluating `average_policy()` exactly
    at each checkpoint. Stops early once `time_budget` solver-seconds are spent
    (evaluating that last point)."""
    checkpoints = set(checkpoints)
    points: list[CurvePoint] = []
    elapsed = 0.0
    for it in range(1, iterations + 1):
        start = time.perf_counter()
        step()
        elapsed += time.perf_counter() - start
        over_budget = time_budget is not None and elapsed >= time_budget
        if it in checkpoints or it == iterations or over_budget:
            exploit, conv = exact_exploitability(game, average_policy())
            points.append(CurvePoint(name, it, elapsed, exploit, conv))
            if log is not None and (it == iterations or over_budget or len(points) % 5 == 0):
                log(f"  {name:<28} it {it:>6}  {elapsed:8.2f}s  exploitability {exploit:.3e}")
        if over_budget:
            break
    return points


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
