"""The whole curve of saved Deep CFR runs on flop hold'em, densely (issue 21:
"still falling at 900 s, both players' best-response gains").

`bench_fhp_curve.py --checkpoint=C` saves the solver at its evaluated
checkpoints. With `average_policy="sd_cfr"` the average strategy after k
iterations is the mixture of the first k kept iterates (Steinberger 2019;
iteration t weighted by t and the player's own reach), so one pass over the
kept networks (`games.poker_exploitability.poker_nash_conv_prefixes`) gives
the exact NashConv and both best-response gains after every k the run
passed, without rerunning it. Each k sits on the run's own clock: the sum of
its first k iterations' seconds (the solver's history; evaluations excluded,
as in `bench_fhp_curve.py`). The run's own checkpoints are among the k and
must agree with its CSV rows (checked, 1e-9 chips).

`--weight_power=P` re-weights iteration t by t^P instead of the run's own
weights (`average_weighting`: t, or 1 for "uniform"); a diagnosis of the
averaging: 0 uniform, 1 linear, 2 quadratic. Training never reads the
average's weights, so this is the curve of the same run with that weighting.

Per run, over the stretch from `--from_fraction` of the run's seconds to its
end: each player's gain and the NashConv at the first and last k, and the
least-squares slope against seconds (per 100 s, with a 95% t-interval that
treats the points as independent: they are not, each average contains the
last, so the interval is too narrow; the sign is what "still falling" asks).

    PYTHONPATH=. python benchmarks/fhp_tail.py --every=8 --out=DIR C0 C1 C2 [--also=97,165]

Writes DIR/<checkpoint name>.csv per run, DIR/tail.md (tables) and
DIR/tail.png (both gains and the NashConv against seconds, one line per run).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402,F401  (registers flop_holdem)
from benchmarks.common import markdown_table, print_and_write, run_header  # noqa: E402
from games.poker_exploitability import poker_nash_conv_prefixes  # noqa: E402

FIELDS = ("iterations", "seconds", "nash_conv_mbb", "br_gain_p0", "br_gain_p1", "run_checkpoint")


def prefixes_of(iterations: int, every: int, checkpoints: list[int], also=()) -> list[int]:
    """Every `every`-th iteration count, the run's own checkpoints, `also` (up
    to the run's length) and the last."""
    extra = {k for k in also if 1 <= k <= iterations}
    return sorted(set(range(every, iterations + 1, every)) | set(checkpoints) | extra | {iterations})


class Reweighted:
    """The solver's kept iterates with iteration t weighted t^power instead of
    the run's weights: 0 is the uniform average, 1 linear CFR's, 2 quadratic
    (as DCFR's gamma = 2). A diagnosis of the averaging; the run's checkpoints
    are compared only with its own weights."""

    average_policy = "sd_cfr"

    def __init__(self, solver, power: float):
        self.solver, self.power = solver, power
        self.iterations = [t for t, _ in solver.iteration_networks.kept]

    def iterate_strategies(self, states):
        iterates = self.solver.iterate_strategies(states)
        for t, (_, strategy) in zip(self.iterations, iterates, strict=True):
            yield float(t) ** self.power, strategy


def run_curve(path: str, every: int, also=(), power: float | None = None) -> list[dict]:
    """The dense curve of one saved run (rows of FIELDS)."""
    from openspiel_cfrx.deep import DeepCFRSolver

    solver = DeepCFRSolver.from_checkpoint(path)
    if solver.average_policy != "sd_cfr":
        raise SystemExit(f"{path}: average_policy is {solver.average_policy!r}; the dense curve needs the kept "
                         "iterates of average_policy='sd_cfr'")  # fmt: skip
    bench_rows = (solver.checkpoint_extra or {}).get("rows", [])
    checkpoints = {int(r["steps"]): r for r in bench_rows}
    clock = np.cumsum([float(s["seconds"]) for s in solver.history])
    ks = prefixes_of(len(clock), every, list(checkpoints), also)
    print(f"{path}: {len(clock)} iterations, {clock[-1]:.0f} s; {len(ks)} prefixes", flush=True)
    rows = []
    policy = solver if power is None else Reweighted(solver, power)
    for k, result in zip(ks, poker_nash_conv_prefixes(solver.game, policy, ks), strict=True):
        own = checkpoints.get(k)
        if own is not None and power is None and abs(own["nash_conv_chips"] - result.nash_conv) > 1e-9:
            raise AssertionError(f"{path}: prefix {k} gives {result.nash_conv!r} chips, the run's checkpoint "
                                 f"{own['nash_conv_chips']!r}")  # fmt: skip
        rows.append({"iterations": k, "seconds": float(clock[k - 1]), "nash_conv_mbb": result.nash_conv_mbb,
                     "br_gain_p0": float(result.player_improvements[0]),
                     "br_gain_p1": float(result.player_improvements[1]),
                     "run_checkpoint": int(own is not None)})  # fmt: skip
    return rows


def stretch(rows: list[dict], from_fraction: float) -> dict:
    """First/last values and least-squares slopes (per 100 s) over the stretch."""
    end = rows[-1]["seconds"]
    part = [r for r in rows if r["seconds"] >= from_fraction * end]
    x = np.array([r["seconds"] for r in part]) / 100.0
    out = {"first": part[0], "last": part[-1], "points": len(part)}
    for key in ("br_gain_p0", "br_gain_p1", "nash_conv_mbb"):
        fit = stats.linregress(x, [r[key] for r in part])
        half = stats.t.ppf(0.975, len(part) - 2) * fit.stderr
        out[key] = (fit.slope, half)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoints", nargs="+", help="bench_fhp_curve.py --checkpoint files (sd_cfr runs)")
    parser.add_argument("--every", type=int, default=8, help="evaluate after every this many iterations")
    parser.add_argument("--also", default="", help="more iteration counts to evaluate, comma-separated (e.g. "
                        "another run's checkpoints); those past a run's end are skipped")
    parser.add_argument("--weight_power", type=float, default=None,
                        help="weight iteration t by t^P in the average instead of the run's own weights "
                             "(0 uniform, 1 linear, 2 quadratic)")
    parser.add_argument("--from_fraction", type=float, default=0.6,
                        help="the stretch whose slopes are reported: from this fraction of each run's seconds")
    parser.add_argument("--out", required=True, help="output directory")
    args = parser.parse_args(argv)
    try:
        also = [int(k) for k in args.also.split(",") if k.strip()]
    except ValueError:
        raise SystemExit(f"--also takes comma-separated iteration counts, got {args.also!r}") from None
    if args.every < 1 or not 0.0 <= args.from_fraction < 1.0:
        raise SystemExit("--every must be >= 1 and --from_fraction in [0, 1)")
    for path in args.checkpoints:
        if not os.path.exists(path):
            raise SystemExit(f"no checkpoint at {path!r} (bench_fhp_curve.py --checkpoint=PATH writes one)")
    header = run_header(os.getloadavg()[0])
    os.makedirs(args.out, exist_ok=True)
    curves = {}
    for path in args.checkpoints:
        name = os.path.splitext(os.path.basename(path))[0]
        curves[name] = run_curve(path, args.every, also, args.weight_power)
        with open(os.path.join(args.out, f"{name}.csv"), "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(curves[name])
    table = []
    for name, rows in curves.items():
        s = stretch(rows, args.from_fraction)
        a, b = s["first"], s["last"]
        table.append([name, f"{a['iterations']} -> {b['iterations']} ({a['seconds']:.0f} -> {b['seconds']:.0f} s)",
                      s["points"], f"{a['nash_conv_mbb']:.1f} -> {b['nash_conv_mbb']:.1f}",
                      f"{a['br_gain_p0']:.2f} -> {b['br_gain_p0']:.2f}",
                      f"{a['br_gain_p1']:.2f} -> {b['br_gain_p1']:.2f}",
                      *(f"{s[k][0]:+.3f} ± {s[k][1]:.3f}" for k in ("br_gain_p0", "br_gain_p1", "nash_conv_mbb")),
                      "yes" if s["br_gain_p0"][0] < 0 and s["br_gain_p1"][0] < 0 else "NO"])  # fmt: skip
    weights = "" if args.weight_power is None else f"Iteration t weighted t^{args.weight_power:g} (not the run's own). "
    text = (f"# Dense curves of saved Deep CFR runs\n\n{header}\n\n{weights}Prefixes every {args.every} iterations "
            f"(and each run's own checkpoints, which agree to 1e-9 chips); stretch from {args.from_fraction:g} "
            "of each run's seconds. Slopes per 100 s, least squares, 95% t-interval as if independent.\n\n"
            + markdown_table(["run", "stretch: iterations (seconds)", "points", "NashConv mbb/g",
                              "BR gain P0 (chips)", "BR gain P1 (chips)", "slope P0", "slope P1",
                              "slope NashConv (mbb/g)", "both slopes < 0?"], table) + "\n")  # fmt: skip
    print_and_write(text, os.path.join(args.out, "tail.md"))
    plot(curves, args.from_fraction, os.path.join(args.out, "tail.png"))


def plot(curves: dict, from_fraction: float, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for ax, key, label in zip(axes, ("br_gain_p0", "br_gain_p1", "nash_conv_mbb"),
                              ("player 0's best-response gain (chips)", "player 1's best-response gain (chips)",
                               "NashConv (mbb/g)"), strict=True):  # fmt: skip
        for name, rows in curves.items():
            x = [r["seconds"] for r in rows]
            line = ax.plot(x, [r[key] for r in rows], lw=1.2, label=name)[0]
            marks = [r for r in rows if r["run_checkpoint"]]
            ax.plot([r["seconds"] for r in marks], [r[key] for r in marks], "o", color=line.get_color(), ms=4)
            ax.axvline(from_fraction * x[-1], color=line.get_color(), lw=0.5, ls=":")
        ax.set_xlabel("seconds (the run's clock, evaluations excluded)")
        ax.set_title(label, fontsize=10)
        ax.set_yscale("log")
        ax.grid(alpha=0.3, which="both")
    axes[0].legend(fontsize=8)
    fig.suptitle("Deep CFR's exact average after every k iterations (dots: the run's own checkpoints)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
