r"""Lossless vector CFR on a limit hold'em game's public tree, measured exactly.

Runs CFR / CFR+ / LCFR / DCFR on the public tree (`openspiel_cfrx.poker`:
hand vectors, card removal, suit isomorphism), evaluates the average
strategy's exact exploitability at log-spaced iterations with the same engine,
checkpoints (resume by rerunning the same command), and writes `curve.csv`
(one row per evaluation, written as it is made) and log-log plots. This is the
"vanilla tabular Linear CFR without abstraction or sampling" line of Deep CFR's
Figure 3, on full flop hold'em with:

    .venv/bin/cfrx-poker-vector-cfr --game=flop_holdem --variant=cfr+ \
        --iterations=2000 --max_minutes=85 --output_dir=out/fhp_lossless

Exploitability is NashConv / 2 in chips and in mbb/g (big blind 100).
curve.csv has `game` and `solver` columns and curve.config.json beside it
records the run's flags; a resume checks the checkpoint's game, variant and
settings (`VectorCFR.load`) and the curve's flags (--allow_changed accepts
others than the always-safe ones). One run at a time per --output_dir (and
per folder of the --checkpoint file).
"""

from __future__ import annotations

import csv
import math
import os
import sys
import time

from absl import flags

from cfrx_examples._common import (
    check_device,
    check_number,
    check_output_dir,
    check_output_file,
    check_results_folder,
    check_seed,
    check_writable_dir,
    define_common_flags,
    load_game_or_exit,
    lock_run_file,
    lock_run_folders,
    run_config,
    run_program,
    usage_error,
    write_results,
)
from openspiel_cfrx.eval import CurvePoint, log_checkpoints, plot_curves
from openspiel_cfrx.poker import PublicTree, UnsupportedPokerGameError
from openspiel_cfrx.poker.vector_cfr import (
    VARIANTS,
    VectorCFR,
    VectorCFRTooLargeError,
    format_bytes,
    save_strategy,
)

FLAGS = flags.FLAGS
define_common_flags(
    game="flop_holdem(num_ranks=6,num_suits=4)",
    game_help="A two-player limit hold'em game: flop_holdem(...), hulh(...) with a small deck, "
    "or a limit universal_poker game.",
    iterations=100,
    iterations_help="Total iterations (a resumed run continues up to this number); >= 1.",
    seed_help="No effect: vector CFR is deterministic.",
    output_dir="out/poker_vector_cfr",
    outputs="curve.csv, exploitability_vs_iterations.png, exploitability_vs_seconds.png",
    eval_every=0,
    eval_every_help="Evaluate every N iterations (and at the last); 0 = ~8 log-spaced points per decade.",
    torch_device=False,
    device_help="vector CFR runs on the CPU (numpy).",
)
flags.DEFINE_enum("variant", "cfr+", list(VARIANTS), "Regret minimizer / averaging of the CFR family.")
flags.DEFINE_enum("update_mode", "alternating", ["alternating", "simultaneous"], "Player updates.")
flags.DEFINE_float("max_minutes", 0.0, "Stop (evaluate, checkpoint) after this many minutes of solving; 0 = no limit.")
flags.DEFINE_bool("isomorphism", True, "Solve on suit classes of boards (exact; 12.6x fewer flops).")
flags.DEFINE_integer("threads", 2, "Threads over board chunks.")
flags.DEFINE_integer("chunk_boards", 64, "Boards per array block.")
flags.DEFINE_string("checkpoint", "", "Checkpoint file (default <output_dir>/checkpoint.npz); resumed if present.")
flags.DEFINE_float("checkpoint_minutes", 10.0, "Minutes between checkpoints.")
flags.DEFINE_bool("fresh", False, "Ignore (and overwrite) an existing checkpoint and curve.csv, even of another "
                  "configuration.")
flags.DEFINE_string("save_strategy", "", "At the end, write the average strategy to this strategy file (.npz, "
                    "float32; openspiel_cfrx.poker.vector_cfr.save_strategy; cfrx-explore --policy reads it).")

# Flags whose values a checkpoint is written with and must be resumed with (`VectorCFR.load` refuses others):
# never offered to --allow_changed while the checkpoint is there.
CHECKPOINT_FLAGS = ("variant", "update_mode", "isomorphism", "chunk_boards")
FIELDS = ["game", "solver", "iteration", "seconds", "nash_conv", "exploitability", "exploitability_mbb", "evaluation_seconds"]


def _check_flags(argv) -> str:
    """Every flag checked before the game is loaded; the output folder."""
    if len(argv) > 1:
        usage_error(f"unexpected arguments {argv[1:]}; flags only")
    check_device(FLAGS.device, False, "vector CFR runs on numpy")
    check_output_dir()
    if FLAGS.iterations < 1 or FLAGS.threads < 1 or FLAGS.chunk_boards < 1 or FLAGS.max_minutes < 0:
        usage_error("--iterations, --threads and --chunk_boards must be >= 1 and --max_minutes >= 0")
    check_output_file("checkpoint")
    check_output_file("save_strategy")
    check_number("max_minutes", 0)
    check_number("checkpoint_minutes", 0, strict=True)
    check_number("threads", 1, 4 * (os.cpu_count() or 1))
    check_number("eval_every", 0)
    check_seed()
    return check_writable_dir(FLAGS.output_dir, "output_dir")


def _make_solver(game) -> VectorCFR:
    """The public tree and vector CFR of the flags; too large a game is refused with the flags' advice."""
    try:
        tree = PublicTree(game, isomorphism=FLAGS.isomorphism, chunk_boards=FLAGS.chunk_boards,
                          threads=FLAGS.threads)  # fmt: skip
    except UnsupportedPokerGameError as e:
        usage_error(str(e))
    try:
        solver = VectorCFR(tree, FLAGS.variant, alternating_updates=FLAGS.update_mode == "alternating",
                           verbose=False)  # its estimate is printed below, once the solve is accepted
    except VectorCFRTooLargeError as e:
        needs = str(e).split("; use ")[0]  # the library's advice names its arguments, not the flags
        hint = "use a smaller game (fewer ranks or suits)" if FLAGS.isomorphism else \
            "drop --noisomorphism (12.6x fewer flops) or use a smaller game"
        usage_error(f"{needs}; {hint}")
    print(f"vector {FLAGS.variant}: {solver.num_infosets:,} infosets (node x board x hand), "
          f"~{format_bytes(solver.memory_bytes())} of {solver.dtype.name} arrays", flush=True)  # fmt: skip
    return solver


def _plot(rows: list[dict], out: str) -> None:
    points = [CurvePoint(f"{FLAGS.variant} ({FLAGS.update_mode})", int(r["iteration"]), float(r["seconds"]),
                         float(r["exploitability_mbb"]), 2 * float(r["exploitability_mbb"])) for r in rows]  # fmt: skip
    if points:
        title = f"{FLAGS.game}: exact exploitability (mbb/g) of vector {FLAGS.variant}"
        plot_curves(points, os.path.join(out, "exploitability_vs_iterations.png"), title)
        plot_curves(points, os.path.join(out, "exploitability_vs_seconds.png"), title, x="seconds")


def main(argv):
    out = _check_flags(argv)
    game = load_game_or_exit(FLAGS.game, check_supported=False)
    checkpoint = FLAGS.checkpoint or os.path.join(out, "checkpoint.npz")
    csv_path = os.path.join(out, "curve.csv")
    config = run_config(FLAGS.game, game)
    lock_run_folders(output_dir=out)
    lock_run_file(checkpoint, "checkpoint")
    if not FLAGS.fresh:
        fixed, fix = None, ""
        if os.path.exists(checkpoint):  # what it was written with is what it resumes with (VectorCFR.load)
            fixed = dict.fromkeys(CHECKPOINT_FLAGS, f"{checkpoint} resumes only with its own")
            fix = (f"rerun with that run's flags, choose another --output_dir, or pass --fresh to start over "
                   f"(replacing {checkpoint} and {csv_path})")  # fmt: skip
        check_results_folder(config, csv_path, fixed=fixed, fix=fix)
    solver = _make_solver(game)
    label = {"game": config["game"], "solver": f"{FLAGS.variant} ({FLAGS.update_mode})"}
    rows = []
    if os.path.exists(checkpoint) and not FLAGS.fresh:
        try:
            solver.load(checkpoint)
        except ValueError as e:  # the library's advice names its constructor, not the flags
            usage_error(f"{str(e).split('; ')[0]}; rerun with the flags that wrote it, pass --fresh to start over "
                        f"(replacing it), or choose another --checkpoint")  # fmt: skip
        if os.path.exists(csv_path):
            with open(csv_path) as f:
                rows = [{**label, **r} for r in csv.DictReader(f) if int(r["iteration"]) <= solver.iteration]
        print(f"resumed {checkpoint} at iteration {solver.iteration}", file=sys.stderr)
    marks = set(log_checkpoints(FLAGS.iterations, every=FLAGS.eval_every or None))
    deadline = time.perf_counter() + FLAGS.max_minutes * 60 if FLAGS.max_minutes else float("inf")
    target = FLAGS.iterations

    def should_evaluate(t):
        return t in marks or t == target or time.perf_counter() > deadline

    def record(row):
        rows.append({**label, **{k: row[k] for k in FIELDS if k not in label}})
        write_results(csv_path, rows, config, FIELDS)
        print(f"iteration {row['iteration']:>6}  {row['seconds']:>9.1f} s  exploitability "
              f"{row['exploitability']:.6g} chips = {row['exploitability_mbb']:.3f} mbb/g", flush=True)  # fmt: skip

    solver.run(target, evaluate_every=should_evaluate, on_evaluation=record, checkpoint=checkpoint,
               checkpoint_seconds=FLAGS.checkpoint_minutes * 60, progress=False,
               stop=lambda: time.perf_counter() > deadline)  # fmt: skip
    if solver.iteration < target:
        print(f"--max_minutes={FLAGS.max_minutes} reached at iteration {solver.iteration}", file=sys.stderr)
    _plot(rows, out)
    if FLAGS.save_strategy:
        size = save_strategy(FLAGS.save_strategy, solver.tree, solver.average_strategy)
        print(f"wrote {FLAGS.save_strategy}: the average strategy at iteration {solver.iteration} "
              f"({format_bytes(size)})")  # fmt: skip
    if len(rows) >= 2:
        summary = summarise(rows, solver)
        with open(os.path.join(out, "summary.md"), "w") as f:
            f.write(summary)
        print(summary)
    print(f"wrote {csv_path}")


def summarise(rows: list[dict], solver: VectorCFR) -> str:
    """Table of the evaluations, iterations/s and a log-log projection to 1 mbb/g."""
    import numpy as np

    t = np.array([float(r["iteration"]) for r in rows])
    mbb = np.array([float(r["exploitability_mbb"]) for r in rows])
    seconds = np.array([float(r["seconds"]) for r in rows])
    lines = ["| iteration | solve seconds | exploitability (mbb/g) |", "|---:|---:|---:|"]
    lines += [f"| {int(a)} | {b:.1f} | {c:.3f} |" for a, b, c in zip(t, seconds, mbb, strict=True)]
    # The rate between the first and the last evaluation: the first iterations carry the start-up
    # (numba compiling the walk), which would otherwise dominate a short run's iterations/s.
    if seconds[-1] > seconds[0] and t[-1] > t[0]:
        per_iteration = (seconds[-1] - seconds[0]) / (t[-1] - t[0])
        span = f"iterations {int(t[0]) + 1}-{int(t[-1])}; the first {int(t[0])} took {seconds[0]:.1f} s, start-up included"
    else:
        per_iteration = seconds[-1] / t[-1]
        span = "start-up included"
    lines += ["", f"{1 / max(per_iteration, 1e-12):.4g} iterations/s ({format_seconds(per_iteration)} per iteration, "
              f"both players, evaluations excluded; {span})."]  # fmt: skip
    late = t >= max(10.0, t[-1] / 4)
    if late.sum() >= 2 and mbb[-1] > 1.0:
        slope, intercept = np.polyfit(np.log(t[late]), np.log(mbb[late]), 1)
        if slope < 0:
            needed = math.exp((0.0 - intercept) / slope)
            lines.append(f"Projection (a fit mbb/g ~ t^{slope:.2f} over iterations >= {int(t[late][0])}, not "
                         f"measured): 1 mbb/g at about iteration {needed:,.0f}, ~{format_seconds(needed * per_iteration)} "
                         "of solving.")  # fmt: skip
    lines.append(f"Stored arrays: ~{format_bytes(solver.memory_bytes())} (regrets, strategies, averages); the "
                 f"average strategy alone is {solver.num_infosets:,} infosets.")  # fmt: skip
    return "\n".join(lines) + "\n"


def format_seconds(seconds: float) -> str:
    """A duration in the unit that reads best: '0.031 s', '42 s', '17 min', '3.2 h', '5.1 days'."""
    if seconds < 1:
        return f"{seconds:.2g} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:,.1f} days"


def run():
    """The console script's entry point."""
    run_program(main, __name__)


if __name__ == "__main__":
    run()
