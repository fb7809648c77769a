"""Tabular CFR family benchmark.

1. Exploitability curves for 1000 iterations on each game: CFR, CFR+, DCFR,
   PCFR+, OFTRL theory (stepsize scale 1) and OFTRL tuned (best final value of
   scales 10, 100, 1000, as in the paper), with simultaneous and alternating
   updates. Larger scales (1e4..1e6, outside the paper's range) are reported
   separately.
2. Iterations per second of our CFR vs OpenSpiel's C++ `pyspiel.CFRSolver` and
   Python `cfr.CFRSolver` on Leduc, interleaved in the same run.

    .venv/bin/python benchmarks/bench_tabular.py

Writes benchmarks/results/tabular.md plus CSV/PNG under benchmarks/results/tabular/.

With `--rates` it writes the convergence-rate page instead
(benchmarks/results/tabular_rates.md and tabular/rates.png): the log-log
slope of NashConv against iterations, fitted by least squares over the last
decade [T/10, T] (`--rates_fit_from`) and the first window [10, T/10], for
CFR, CFR+, DCFR, PCFR+, OFTRL theory and OFTRL tuned, both update modes, on
Kuhn, Leduc, a small flop hold'em and Libratus endgame 4; and the OFTRL
paper's rate statements (Farina et al. 2019) checked against the fits by
stated rules (`rate_verdict`, `faster_verdict`).

    .venv/bin/python benchmarks/bench_tabular.py --rates
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import sys
import time

import pyspiel
from absl import app, flags
from open_spiel.python.algorithms import cfr

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import (  # noqa: E402
    SlopeFit,
    faster_verdict,
    fit_loglog_slope,
    horizons_in_window,
    markdown_table,
    rate_verdict,
    split_games,
    write_result,
)
from openspiel_cfrx.eval import log_checkpoints, plot_curves, run_curve, write_csv  # noqa: E402
from openspiel_cfrx.tabular import make_solver  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_list(
    "games",
    [
        "leduc_poker",
        "turn_based_simultaneous_game(game=goofspiel(num_cards=4,imp_info=True,"
        "points_order=descending))",
        "liars_dice(numdice=1,dice_sides=4)",
    ],
    "Games to benchmark.",
)
flags.DEFINE_integer("iterations", 1000, "Iterations per run.")
flags.DEFINE_float("speed_seconds", 20.0, "Seconds per solver in the speed comparison.")
flags.DEFINE_string("output_dir", "benchmarks/results", "Where results go.")
flags.DEFINE_bool("rates", False, "Write the convergence-rate page (tabular_rates.md, tabular/rates.png) "
                  "instead of tabular.md.")
flags.DEFINE_string("rates_games",
                    "kuhn_poker,leduc_poker,flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1),"
                    "libratus_endgame(subgame=4)",
                    "--rates: games, comma-separated (commas inside parentheses belong to the game); "
                    "libratus_endgame(subgame=N) is the OFTRL paper's Libratus endgame N on the poker engine.")
flags.DEFINE_list("rates_iterations", ["100000", "100000", "30000", "10000"],
                  "--rates: iterations T per game (one value: all games).")
flags.DEFINE_float("rates_fit_from", 0.1, "--rates: the fit window is [rates_fit_from * T, T] (0.1: the last "
                   "decade); the first window is [10, rates_fit_from * T].")
flags.DEFINE_integer("rates_per_decade", 8, "--rates: log-spaced checkpoints per decade of iterations.")
flags.DEFINE_integer("rates_horizons", 5, "--rates: OFTRL theory is also run planned for this many horizons "
                     "log-spaced in the fit window (T included), and its final NashConv fitted against the "
                     "horizon; 0 skips it.")
flags.DEFINE_float("rates_floor", 1e-10, "--rates: checkpoints with NashConv <= this times the game's largest "
                   "|utility| (float64 round-off) are left out of the fits.")
flags.DEFINE_list("rates_extra_scales", ["1e4", "1e5", "1e6"], "--rates: an extra line, 'OFTRL large' = the "
                  "best of these stepsize scales (outside the paper's 10, 100, 1000; not in the statements); empty "
                  "skips it.")
flags.DEFINE_enum("rates_endgame_units", "chips", ["chips", "bounded"], "--rates: what OFTRL theory's stepsize "
                  "scale 1 means on a Libratus endgame (cfrx_examples/oftrl_endgames.py --oftrl_units).")

PAPER_SCALES = (10.0, 100.0, 1000.0)
EXTRA_SCALES = (1e4, 1e5, 1e6)
SHORT = {
    "leduc_poker": "leduc",
    "liars_dice": "liars_dice_1x4",
    "turn_based_simultaneous_game": "goofspiel4_tb",
}


def _short(game_string: str) -> str:
    return SHORT.get(game_string.split("(")[0], game_string.split("(")[0])


def _curves_for_game(game, iterations):
    checkpoints = log_checkpoints(iterations)
    points, finals = [], {}
    for mode in ("simultaneous", "alternating"):
        alt = mode == "alternating"
        for name, label in (("cfr", "CFR"), ("cfr+", "CFR+"), ("dcfr", "DCFR(1.5,0,2)"),
                            ("pcfr+", "PCFR+")):  # fmt: skip
            solver = make_solver(name, game, alt)
            curve = run_curve(f"{label} ({mode})", game, solver.evaluate_and_update_policy,
                              solver.average_strategy, iterations, checkpoints, log=None)  # fmt: skip
            points += curve
            finals[(label, mode)] = curve[-1]
        oftrl = {}
        for scale in (1.0, *PAPER_SCALES, *EXTRA_SCALES):
            solver = make_solver("oftrl", game, alt, stepsize_scale=scale, horizon=iterations)
            oftrl[scale] = run_curve(f"OFTRL x{scale:g} ({mode})", game,
                                     solver.evaluate_and_update_policy, solver.average_strategy,
                                     iterations, checkpoints, log=None)  # fmt: skip
            finals[(f"OFTRL x{scale:g}", mode)] = oftrl[scale][-1]
        best = min(PAPER_SCALES, key=lambda s: oftrl[s][-1].exploitability)
        for label, curve in ((f"OFTRL theory ({mode})", oftrl[1.0]),
                             (f"OFTRL tuned x{best:g} ({mode})", oftrl[best])):  # fmt: skip
            for p in curve:
                points.append(type(p)(label, p.iteration, p.seconds, p.exploitability, p.nash_conv))
        finals[("OFTRL tuned", mode)] = oftrl[best][-1]
        finals[("OFTRL tuned scale", mode)] = best
        print(f"  {mode}: done", flush=True)
    return points, finals


def _speed(game_string, seconds):
    game = pyspiel.load_game(game_string)
    solvers = {
        "openspiel_cfrx CFRSolver": make_solver("cfr", game),
        "pyspiel.CFRSolver (C++)": pyspiel.CFRSolver(game),
        "cfr.CFRSolver (OpenSpiel Python)": cfr.CFRSolver(game),
    }
    counts = dict.fromkeys(solvers, 0)
    spent = dict.fromkeys(solvers, 0.0)
    # Interleave in slices so machine-load changes hit all solvers alike.
    while min(spent.values()) < seconds:
        for name, solver in solvers.items():
            slice_end = spent[name] + 1.0
            while spent[name] < slice_end:
                start = time.perf_counter()
                solver.evaluate_and_update_policy()
                spent[name] += time.perf_counter() - start
                counts[name] += 1
    return {name: counts[name] / spent[name] for name in solvers}


# --- --rates: convergence rates (the OFTRL paper's statements) -------------------------------------

RATE_ALGORITHMS = ("CFR", "CFR+", "DCFR(1.5,0,2)", "PCFR+", "OFTRL theory", "OFTRL tuned")
RATE_VARIANTS = {"CFR": "cfr", "CFR+": "cfr+", "DCFR(1.5,0,2)": "dcfr", "PCFR+": "pcfr+"}
MODES = ("simultaneous", "alternating")
FIRST_WINDOW_START = 10
ENDGAME = re.compile(r"libratus_endgame\(subgame=([1-4])\)")


@dataclasses.dataclass
class RatesGame:
    """How to run one game: `run(variant, alternating, iterations, checkpoints, multiple)`
    returns [(iteration, NashConv in `unit`)] at the checkpoints."""

    name: str
    run: object
    unit: str
    max_utility: float  # in `unit`: the scale of the round-off floor
    oftrl_note: str


def rate_algorithms() -> tuple[str, ...]:
    return RATE_ALGORITHMS + (("OFTRL large",) if FLAGS.rates_extra_scales else ())


def _shown(label: str, result: dict, mode: str) -> str:
    """The algorithm's name with its chosen stepsize multiple."""
    if label == "OFTRL tuned":
        return f"OFTRL tuned x{result['tuned'][mode]:g}"
    if label == "OFTRL large":
        return f"OFTRL large x{result['large'][mode]:g}"
    return label


def rates_game(game_string: str) -> RatesGame:
    """A pyspiel game through make_solver / run_curve, or a Libratus endgame
    (libratus_endgame(subgame=N)) on the poker public-tree engine (VectorCFR),
    as cfrx_examples/oftrl_endgames.py runs them."""
    match = ENDGAME.fullmatch(game_string)
    if match:
        import numpy as np

        from games.libratus_endgames import load_endgame
        from openspiel_cfrx.poker import VectorCFR

        tree = load_endgame(int(match.group(1))).tree(threads=1)
        chips = 3 * tree.max_abs_utility / tree.chance[tree.root_round]
        theory = chips if FLAGS.rates_endgame_units == "chips" else 1.0
        mbb = 1000.0 / max(tree.rules.blinds)  # NashConv in chips -> mbb/g (the endgames page's saddle-point gap)

        def run(variant, alternating, iterations, checkpoints, multiple=1.0):
            options = {"horizon": iterations, "stepsize_scale": theory * multiple} if variant == "oftrl" else {}
            solver = VectorCFR(tree, variant, alternating_updates=alternating, dtype=np.float64, verbose=False,
                               **options)  # fmt: skip
            wanted = set(checkpoints) | {iterations}
            rows = solver.run(iterations, evaluate_every=lambda t: t in wanted, progress=False)
            return [(r["iteration"], r["nash_conv"] * mbb) for r in rows]

        note = (f"OFTRL theory = stepsize scale {theory:.4g} (`--rates_endgame_units={FLAGS.rates_endgame_units}`"
                + (": 3 x max |utility| / the root's chance weight, the convention under which "
                   "benchmarks/results/endgames.md reproduces the paper's Section 6; scale 1 is far too "
                   "conservative in this game's units)" if FLAGS.rates_endgame_units == "chips" else ")"))
        return RatesGame(game_string, run, "mbb/g", tree.max_abs_utility * mbb, note)

    import games  # noqa: F401  (registers flop_holdem)

    game = pyspiel.load_game(game_string)

    def run(variant, alternating, iterations, checkpoints, multiple=1.0):
        options = {"stepsize_scale": multiple, "horizon": iterations} if variant == "oftrl" else {}
        solver = make_solver(variant, game, alternating, **options)
        curve = run_curve(variant, game, solver.evaluate_and_update_policy, solver.average_strategy, iterations,
                          checkpoints, log=None)  # fmt: skip
        return [(p.iteration, p.nash_conv) for p in curve]

    max_utility = max(abs(game.max_utility()), abs(game.min_utility()))
    return RatesGame(game_string, run, "utility units", max_utility, "OFTRL theory = stepsize scale 1")


def rates_for_game(spec: RatesGame, iterations: int) -> dict:
    """Every curve of one game (both modes), the tuned multiples and OFTRL
    theory's final NashConv at each planned horizon."""
    checkpoints = log_checkpoints(iterations, per_decade=FLAGS.rates_per_decade)
    curves, tuned, large, horizon_finals = {}, {}, {}, {}
    for mode in MODES:
        alternating = mode == "alternating"
        for label, variant in RATE_VARIANTS.items():
            curves[(label, mode)] = spec.run(variant, alternating, iterations, checkpoints)
            print(f"  {mode:12s} {label:14s} NashConv {curves[(label, mode)][-1][1]:.4e}", flush=True)
        oftrl = {}
        for multiple in (1.0, *PAPER_SCALES):
            oftrl[multiple] = spec.run("oftrl", alternating, iterations, checkpoints, multiple)
            print(f"  {mode:12s} OFTRL x{multiple:<7g} NashConv {oftrl[multiple][-1][1]:.4e}", flush=True)
        best = min(PAPER_SCALES, key=lambda m: oftrl[m][-1][1])
        curves[("OFTRL theory", mode)], curves[("OFTRL tuned", mode)] = oftrl[1.0], oftrl[best]
        tuned[mode] = best
        extra = {}
        for multiple in (float(m) for m in FLAGS.rates_extra_scales):
            extra[multiple] = spec.run("oftrl", alternating, iterations, checkpoints, multiple)
            print(f"  {mode:12s} OFTRL x{multiple:<7g} NashConv {extra[multiple][-1][1]:.4e}", flush=True)
        if extra:
            large[mode] = min(extra, key=lambda m: extra[m][-1][1])
            curves[("OFTRL large", mode)] = extra[large[mode]]
        finals = {}
        for horizon in horizons_in_window(iterations, FLAGS.rates_fit_from, FLAGS.rates_horizons):
            finals[horizon] = (oftrl[1.0][-1][1] if horizon == iterations
                               else spec.run("oftrl", alternating, horizon, [horizon])[-1][1])  # fmt: skip
        horizon_finals[mode] = finals
    return {"curves": curves, "tuned": tuned, "large": large, "horizons": horizon_finals, "checkpoints": len(checkpoints)}


def _fmt_fit(fit: SlopeFit | None) -> str:
    if fit is None:
        return "n/a (< 3 points)"
    return f"{fit.slope:.3f} ± {fit.half_width:.3f} (n={fit.points})"


def _fmt_interval(fit: SlopeFit | None) -> str:
    if fit is None:
        return "no fit (< 3 points above the floor)"
    return f"slope {fit.slope:.3f}, 95% [{fit.low:.3f}, {fit.high:.3f}]"


def rates_fits(result: dict, iterations: int, floor: float) -> dict:
    """(label, mode) -> (last-window fit, first-window fit); ("horizons", mode) -> fit."""
    split = FLAGS.rates_fit_from * iterations
    fits = {}
    for key, curve in result["curves"].items():
        ts, vs = [t for t, _ in curve], [v for _, v in curve]
        fits[key] = (fit_loglog_slope(ts, vs, split, iterations, floor),
                     fit_loglog_slope(ts, vs, FIRST_WINDOW_START, split, floor))  # fmt: skip
    for mode, finals in result["horizons"].items():
        fits[("horizons", mode)] = fit_loglog_slope(list(finals), list(finals.values()), split, iterations, floor)
    return fits


def statement_rows(game: str, mode: str, fits: dict, tuned: float) -> list[list[str]]:
    """The page's statement rows for one game and update mode."""
    at = f"({game}, {mode})"
    last = {label: fits[(label, mode)][0] for label in RATE_ALGORITHMS}
    rows = [
        [f"OFTRL-CFR converges at least as fast as T^-3/4 {at}: OFTRL theory",
         _fmt_interval(last["OFTRL theory"]), rate_verdict(last["OFTRL theory"], -0.75)],
        [f"OFTRL-CFR converges at least as fast as T^-3/4 {at}: OFTRL tuned (x{tuned:g})",
         _fmt_interval(last["OFTRL tuned"]), rate_verdict(last["OFTRL tuned"], -0.75)],
    ]
    horizon_fit = fits.get(("horizons", mode))
    if FLAGS.rates_horizons:
        rows.append([f"OFTRL-CFR converges at least as fast as T^-3/4 {at}: OFTRL theory planned for T, "
                     "final NashConv against T", _fmt_interval(horizon_fit), rate_verdict(horizon_fit, -0.75)])
    for label in ("CFR+", "DCFR(1.5,0,2)"):
        rows.append([f"CFR+ / DCFR converge faster than T^-1/2 {at}: {label}", _fmt_interval(last[label]),
                     rate_verdict(last[label], -0.5)])
    rows.append([f"OFTRL-CFR converges faster than CFR {at}",
                 f"OFTRL theory {_fmt_interval(last['OFTRL theory'])}; CFR {_fmt_interval(last['CFR'])}",
                 faster_verdict(last["OFTRL theory"], last["CFR"])])  # fmt: skip
    return rows


def plot_rates(results: dict, path: str) -> None:
    """One panel per game and update mode: NashConv against iterations
    (log-log), the fit window's start dotted, T^-1/2 and T^-3/4 guides."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(results)
    fig, axes = plt.subplots(len(names), 2, figsize=(11, 3.3 * len(names)), squeeze=False)
    colours = plt.get_cmap("tab10")
    for row, name in enumerate(names):
        result, iterations = results[name]["result"], results[name]["iterations"]
        split = FLAGS.rates_fit_from * iterations
        for col, mode in enumerate(MODES):
            ax = axes[row][col]
            for k, label in enumerate(rate_algorithms()):
                curve = result["curves"][(label, mode)]
                ax.loglog([t for t, _ in curve], [max(v, 1e-300) for _, v in curve], color=colours(k),
                          label=_shown(label, result, mode), linewidth=1.3,
                          linestyle="--" if label == "OFTRL large" else "-")  # fmt: skip
            anchor = dict(result["curves"][("CFR", mode)])
            start = min(anchor, key=lambda t: abs(math.log(t / split)))
            for rate, style in ((-0.5, (0, (4, 2))), (-0.75, (0, (1, 1)))):
                xs = [start, iterations]
                ax.loglog(xs, [anchor[start] * (x / start) ** rate for x in xs], color="grey", linestyle=style,
                          linewidth=1, label=f"T^{rate:g}")  # fmt: skip
            ax.axvline(split, color="black", linestyle=":", linewidth=0.8)
            ax.set_title(f"{name}, {mode}", fontsize=9)
            ax.set_xlabel("iterations", fontsize=8)
            ax.set_ylabel(f"NashConv ({results[name]['unit']})", fontsize=8)
            ax.grid(True, which="both", alpha=0.25)
            ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _check_rates_flags() -> tuple[list[str], list[int]]:
    from benchmarks.common import check_writable_dir, usage_error

    names = split_games(FLAGS.rates_games)
    if not names:
        usage_error("--rates_games is empty; give at least one game")
    try:
        values = [int(v) for v in FLAGS.rates_iterations]
    except ValueError:
        usage_error(f"--rates_iterations={','.join(FLAGS.rates_iterations)}: give integers")
    if len(values) == 1:
        values = values * len(names)
    if len(values) != len(names):
        usage_error(f"--rates_iterations has {len(values)} values for {len(names)} games; give one or one per game")
    if min(values) < 10:
        usage_error("--rates_iterations must be >= 10")
    if not 0.0 < FLAGS.rates_fit_from < 1.0:
        usage_error(f"--rates_fit_from={FLAGS.rates_fit_from:g} must be in (0, 1)")
    if FLAGS.rates_per_decade < 1 or FLAGS.rates_horizons < 0 or not FLAGS.rates_floor >= 0:
        usage_error("--rates_per_decade must be >= 1, --rates_horizons >= 0 and --rates_floor >= 0")
    check_writable_dir(FLAGS.output_dir, "--output_dir")
    return names, values


def rates_main() -> None:
    names, all_iterations = _check_rates_flags()
    results, sections, statements, costs = {}, [], [], []
    started = time.process_time()
    for name, iterations in zip(names, all_iterations, strict=True):
        cpu = time.process_time()
        print(f"{name}: T = {iterations}", flush=True)
        spec = rates_game(name)
        result = rates_for_game(spec, iterations)
        seconds = time.process_time() - cpu
        floor = FLAGS.rates_floor * spec.max_utility
        fits = rates_fits(result, iterations, floor)
        results[name] = {"result": result, "iterations": iterations, "unit": spec.unit}
        split = FLAGS.rates_fit_from * iterations
        rows = []
        for label in rate_algorithms():
            for mode in MODES:
                last, first = fits[(label, mode)]
                rows.append([_shown(label, result, mode), mode, f"{iterations:,}", _fmt_fit(last), _fmt_fit(first),
                             f"{result['curves'][(label, mode)][-1][1]:.4g}"])  # fmt: skip
        table = markdown_table(
            ["algorithm", "updates", "T", f"slope [{split:,.0f}, T] ± 95%", f"slope [{FIRST_WINDOW_START}, "
             f"{split:,.0f}] ± 95%", f"final NashConv ({spec.unit})"], rows)  # fmt: skip
        horizon_rows = []
        for mode in MODES:
            finals = result["horizons"].get(mode, {})
            if finals:
                horizon_rows.append([mode, ", ".join(f"{h:,}: {v:.4g}" for h, v in finals.items()),
                                     _fmt_fit(fits[("horizons", mode)])])  # fmt: skip
        horizon_text = ""
        if horizon_rows:
            horizon_text = ("\n\nOFTRL theory planned for each horizon T' (its stepsize kappa* = T'^-1/4 set for T'),"
                            " final NashConv after T' iterations, and the slope of those finals against T':\n\n"
                            + markdown_table(["updates", "T': final NashConv", "slope against T' ± 95%"],
                                             horizon_rows))  # fmt: skip
        sections.append(f"## `{name}`\n\nT = {iterations:,}, {result['checkpoints']} checkpoints "
                        f"({FLAGS.rates_per_decade} per decade), {seconds:.0f} CPU seconds; {spec.oftrl_note}; "
                        "OFTRL tuned = the best of x10, x100, x1000 by final NashConv"
                        + (f", OFTRL large = the best of x{', x'.join(FLAGS.rates_extra_scales)}"
                           if FLAGS.rates_extra_scales else "")
                        + f" (the multiple is in the algorithm's name).\n\n{table}{horizon_text}")  # fmt: skip
        for mode in MODES:
            statements += statement_rows(name, mode, fits, result["tuned"][mode])
        costs.append([name, f"{iterations:,}", f"{seconds:.0f}"])
        print(table, flush=True)
    total = time.process_time() - started
    costs.append(["all", "", f"{total:.0f} ({total / 60:.1f} min)"])
    statement_table = markdown_table(["statement", "this run", "holds here"], statements)
    counts = {v: sum(r[2] == v for r in statements) for v in ("yes", "no", "inconclusive")}
    plot_path = os.path.join(FLAGS.output_dir, "tabular", "rates.png")
    plot_rates(results, plot_path)
    split_text = f"[{FLAGS.rates_fit_from:g} T, T]"
    large_text = ("" if not FLAGS.rates_extra_scales else
                  f" OFTRL large (dashed in the plot) = theory x the best of {', '.join(FLAGS.rates_extra_scales)}, "
                  "outside the paper's range and in no statement: it shows where OFTRL's stepsize is not what "
                  "holds it back.")  # fmt: skip
    body = f"""The convergence rates the OFTRL-CFR paper talks about (Farina, Kroer, Brown & Sandholm 2019,
"Stable-Predictive Optimistic Counterfactual Regret Minimization"): its abstract and Section 5 prove that
OFTRL-CFR's average strategy is an O(T^-3/4)-Nash equilibrium after T iterations (Corollary 1 and the sentence
after it: two (Theta(T^-1/4), O(1), O(1))-stable-predictive regret minimizers), against the O(T^-1/2) worst case
of CFR and its variants; Section 6 notes that "both CFR+ and the improved DCFR are known to significantly
outperform their theoretical convergence rate in practice".

How it is measured: each algorithm runs T iterations with both update modes, and the exact NashConv (the sum of
both players' best-response gains; exploitability is half of it, the slopes are the same) of its average strategy
is evaluated at log-spaced checkpoints. The rate is the slope of log10 NashConv against log10 iterations, fitted by
ordinary least squares over the fit window {split_text} (`--rates_fit_from={FLAGS.rates_fit_from:g}`: the last
decade) and over the first window [{FIRST_WINDOW_START}, {FLAGS.rates_fit_from:g} T], so a change of rate shows;
"± 95%" is the half-width of the slope's 95% interval (Student t times the OLS standard error, n = the checkpoints
in the window). **The checkpoints' errors are autocorrelated** (one run's curve, not independent samples;
CFR+-family curves also oscillate), so the intervals are indicative, narrower than an honest one. Checkpoints
with NashConv <= {FLAGS.rates_floor:g} x the game's largest |utility| (float64 round-off) are left out. All runs
are deterministic (no sampling). Algorithms: CFR (regret matching, uniform average), CFR+, DCFR(1.5, 0, 2), PCFR+,
OFTRL-CFR with the entropy regularizer and the stability schedule of eqs. 14-16, kappa* = T^-1/4 for the planned
T ("OFTRL theory"), and OFTRL tuned = theory x the best of 10, 100, 1000 by final NashConv, as
`bench_tabular.py` and the paper choose it.{large_text} Pyspiel games run on the tabular engine (`make_solver`, `run_curve`);
the Libratus endgame runs on the poker public-tree engine (`VectorCFR`, float64, as
`cfrx_examples/oftrl_endgames.py`) with its NashConv in mbb/g (the endgames page's saddle-point gap).

What the slope is and is not: OFTRL's stepsize is fixed by the planned horizon T, so the slope along one run is not
the theorem's quantity (the theorem bounds the gap at the planned T as T grows). The rows "OFTRL theory planned
for T, final NashConv against T" fit that directly: one run per horizon, {FLAGS.rates_horizons} horizons log-spaced
in the fit window. The theorems are upper bounds (O(.) with unknown constants): a slope steeper than the bound
agrees with it, and a shallower slope over a finite window is a measured rate, not a disproof.

CPU seconds of this run (one process, one thread, under `nice -n 15` beside other jobs):

{markdown_table(["game", "T", "CPU seconds"], costs)}

![NashConv against iterations, both update modes; the dotted line is the fit window's start; grey: T^-1/2 (dashed) and T^-3/4 (dotted) guides through CFR's curve](tabular/rates.png)

{chr(10).join(chr(10) + s for s in sections).strip()}

## The paper's statements on this run

Rules (computed by `rate_verdict` and `faster_verdict` in `benchmarks/bench_tabular.py` from the fit window
{split_text}):

- "converges at least as fast as T^-3/4": **yes** when the upper end of the slope's 95% interval is <= -0.75,
  **no** when its lower end is > -0.75, else **inconclusive**;
- "CFR+ / DCFR converge faster than T^-1/2" (the paper: CFR's rate is no better than T^-1/2 in the worst case,
  CFR+ and DCFR beat it in practice): the same rule against -0.5;
- "OFTRL-CFR converges faster than CFR": **yes** when OFTRL theory's slope interval lies entirely below CFR's,
  **no** when entirely above, else **inconclusive**;
- a fit with fewer than 3 checkpoints above the floor is **inconclusive**.

{counts['yes']} yes, {counts['no']} no, {counts['inconclusive']} inconclusive.

{statement_table}
"""
    write_result(os.path.join(FLAGS.output_dir, "tabular_rates.md"),
                 "Convergence rates of the tabular CFR family (the OFTRL paper's statements)", body)  # fmt: skip
    print(f"wrote {plot_path}; {total:.0f} CPU seconds in all")


def main(argv):
    del argv
    if FLAGS.rates:
        rates_main()
        return
    out_dir = os.path.join(FLAGS.output_dir, "tabular")
    os.makedirs(out_dir, exist_ok=True)
    sections = []
    for game_string in FLAGS.games:
        game = pyspiel.load_game(game_string)
        short = _short(game_string)
        print(f"{short}: {game}", flush=True)
        points, finals = _curves_for_game(game, FLAGS.iterations)
        write_csv(points, os.path.join(out_dir, f"{short}.csv"))
        shown = [p for p in points if not p.solver.startswith("OFTRL x")]
        plot_curves(shown, os.path.join(out_dir, f"{short}.png"), f"{game}")
        rows = []
        for label in ("CFR", "CFR+", "DCFR(1.5,0,2)", "PCFR+", "OFTRL x1", "OFTRL tuned",
                      *(f"OFTRL x{s:g}" for s in EXTRA_SCALES)):  # fmt: skip
            row = [label.replace("OFTRL x1", "OFTRL theory") if label == "OFTRL x1" else label]
            for mode in ("simultaneous", "alternating"):
                p = finals[(label, mode)]
                note = ""
                if label == "OFTRL tuned":
                    note = f" (x{finals[('OFTRL tuned scale', mode)]:g})"
                row.append(f"{p.exploitability:.3e}{note}")
            rows.append(row)
        table = markdown_table(
            ["solver", f"simultaneous @ {FLAGS.iterations}", f"alternating @ {FLAGS.iterations}"],
            rows,
        )
        sections.append(
            f"## `{game}`\n\nExploitability (NashConv/2) of the average strategy after "
            f"{FLAGS.iterations} iterations. Curves: `tabular/{short}.csv`, plot "
            f"`tabular/{short}.png` (OFTRL x1e4..1e6 are outside the paper's tuning range "
            "{10, 100, 1000} and only in the CSV/table).\n\n" + table
        )
        print(table, flush=True)

    speeds = _speed("leduc_poker", FLAGS.speed_seconds)
    cpp = speeds["pyspiel.CFRSolver (C++)"]
    rows = [[name, f"{rate:.1f}", f"{rate / cpp:.2f}x"] for name, rate in speeds.items()]
    speed_table = markdown_table(["solver (Leduc, alternating CFR)", "iterations/s", "vs C++"], rows)
    print(speed_table)
    sections.append(
        "## CFR iterations per second on Leduc\n\nInterleaved 1-second slices, "
        f"{FLAGS.speed_seconds:g} s per solver, same process.\n\n" + speed_table
    )
    write_result(os.path.join(FLAGS.output_dir, "tabular.md"), "Tabular CFR family benchmark",
                 "\n\n".join(sections))  # fmt: skip


if __name__ == "__main__":
    app.run(main)
