r"""OFTRL-CFR and the tabular CFR family on any 2-player zero-sum OpenSpiel game.

Runs each chosen solver (and, optionally, OpenSpiel's own CFR solvers) for a
number of iterations, evaluates the average strategy exactly at log-spaced
checkpoints, and writes `curves.csv` (solver, iteration, seconds,
exploitability, nash_conv) and log-log plots against iterations and seconds.

    .venv/bin/cfrx-oftrl-cfr --game=leduc_poker --iterations=1000 \
        --solvers=cfr,cfr+,dcfr,pcfr+,oftrl --stepsize_scales=1,1000 \
        --update_mode=both --openspiel_baselines=cpp_cfr --output_dir=out/oftrl

Exploitability is (sum of best-response values - utility sum) / 2, i.e.
OpenSpiel's `exploitability` (= NashConv / 2), in the game's utility units.

curves.csv has a `game` column and curves.config.json beside it records the
run's flags. One run at a time per --output_dir; a run into a folder holding
the curves of another game or solver set refuses (rerun with the same flags
to replace them, or choose another --output_dir).
"""

from __future__ import annotations

import os

from absl import flags

from cfrx_examples._common import (
    check_device,
    check_list,
    check_number,
    check_number_list,
    check_output_dir,
    check_output_file,
    check_results_folder,
    check_seed,
    check_writable_dir,
    define_common_flags,
    load_game_or_exit,
    lock_run_folders,
    point_rows,
    run_config,
    run_program,
    usage_error,
    write_results,
)
from openspiel_cfrx.eval import CurvePoint, log_checkpoints, plot_curves, run_curve
from openspiel_cfrx.tabular import SOLVERS, make_solver, save_tabular_policy

FLAGS = flags.FLAGS
define_common_flags(
    game="leduc_poker",
    game_help="Must be 2-player zero-sum with sequential moves, e.g. kuhn_poker, leduc_poker, "
    "'goofspiel(num_cards=4,imp_info=true,points_order=descending)'.",
    iterations=1000,
    iterations_help="Iterations per solver (each run of --solvers x --update_mode x OFTRL "
    "--stepsize_scales, and each --openspiel_baselines entry up to --baseline_seconds); >= 1.",
    seed_help="No effect here: every solver this binary runs (ours and the OpenSpiel "
    "--openspiel_baselines) is deterministic, so results are the same for every seed; "
    "accepted so all examples share the same flags.",
    output_dir="out/oftrl_cfr",
    outputs="curves.csv, exploitability_vs_iterations.png, exploitability_vs_seconds.png",
    eval_every=0,
    eval_every_help="Evaluate the exact exploitability of the average strategy every N "
    "iterations (and at the last one); 0 = ~8 log-spaced checkpoints per decade of iterations.",
    torch_device=False,
    device_help="the tabular solvers run on the CPU (numpy).",
)
flags.DEFINE_list("solvers", ["cfr", "cfr+", "dcfr", "pcfr+", "oftrl"],
                  f"Comma-separated tabular solvers to run, from: {', '.join(SOLVERS)}.")
flags.DEFINE_enum("update_mode", "alternating", ["alternating", "simultaneous", "both"],
                  "Alternating or simultaneous updates of the two players (both = run each solver twice).")
flags.DEFINE_list("stepsize_scales", ["1", "1000"],
                  "Comma-separated OFTRL stepsize multipliers, one OFTRL run each: "
                  "1 = theory (eqs. 14-16), >1 = 'tuned'.")
flags.DEFINE_float("kappa", None, "OFTRL kappa_star; unset = horizon^(-1/4) with horizon = --iterations.")
flags.DEFINE_list("openspiel_baselines", [],
                  "Comma-separated OpenSpiel solvers to add (empty = none): python_cfr, cpp_cfr, "
                  "python_cfr_plus, python_dcfr.")
flags.DEFINE_float("baseline_seconds", 120.0,
                   "Wall-clock budget per OpenSpiel baseline, in seconds (they stop at this or "
                   "--iterations, whichever comes first; they are slow).")
flags.DEFINE_bool("quiet", False, "Only print the final table (no per-checkpoint lines).")
flags.DEFINE_string("save_policy", "", "Write the run's average policy to this tabular policy file (.npz, "
                    "openspiel_cfrx.tabular.save_tabular_policy; cfrx-explore --policy reads it). Needs exactly "
                    "one run: one solver, one --update_mode and, for oftrl, one --stepsize_scales.")  # fmt: skip


_BASELINES = ("python_cfr", "python_cfr_plus", "python_dcfr", "cpp_cfr")


def _openspiel_baseline(name, game):
    """(step, average_policy) for one of OpenSpiel's own solvers."""
    import pyspiel
    from open_spiel.python.algorithms import cfr, discounted_cfr

    factories = {
        "python_cfr": lambda: cfr.CFRSolver(game),
        "python_cfr_plus": lambda: cfr.CFRPlusSolver(game),
        "python_dcfr": lambda: discounted_cfr.DCFRSolver(game),
        "cpp_cfr": lambda: pyspiel.CFRSolver(game),
    }
    assert tuple(factories) == _BASELINES
    if name not in factories:
        usage_error(
            f"unknown --openspiel_baselines entry {name!r}; choose from {', '.join(factories)}"
        )
    solver = factories[name]()
    return solver.evaluate_and_update_policy, solver.average_policy


def main(argv):
    del argv
    check_output_dir()
    solvers = check_list("solvers", list(SOLVERS))
    check_number_list("stepsize_scales", float, 0, strict=True, allow_empty="oftrl" not in solvers)
    check_list("openspiel_baselines", list(_BASELINES), allow_empty=True)
    check_number("iterations", 1)
    check_number("eval_every", 0)
    check_number("baseline_seconds", 0, strict=True)
    check_number("kappa", 0, strict=True, allow_none=True)
    check_seed()
    check_writable_dir(FLAGS.output_dir, "output_dir")
    check_output_file("save_policy")
    check_device(FLAGS.device, torch_device=False, cpu_only_reason="the tabular solvers run on the CPU")
    if FLAGS.eval_every < 0:
        usage_error("--eval_every must be >= 0")
    game = load_game_or_exit(FLAGS.game)
    modes = ["alternating", "simultaneous"] if FLAGS.update_mode == "both" else [FLAGS.update_mode]
    try:
        scales = [float(s) for s in FLAGS.stepsize_scales]
    except ValueError:
        usage_error(f"--stepsize_scales must be numbers, got {FLAGS.stepsize_scales}")
    for name in FLAGS.solvers:
        if name not in SOLVERS:
            usage_error(f"unknown solver {name!r} in --solvers; choose from {', '.join(SOLVERS)}")
    if FLAGS.iterations < 1:
        usage_error("--iterations must be >= 1")
    checkpoints = log_checkpoints(FLAGS.iterations, every=FLAGS.eval_every or None)
    log = None if FLAGS.quiet else print
    csv_path = os.path.join(FLAGS.output_dir, "curves.csv")
    config = run_config(FLAGS.game, game)
    lock_run_folders(output_dir=FLAGS.output_dir)
    check_results_folder(config, csv_path)

    runs = []  # (label, solver)
    for mode in modes:
        alternating = mode == "alternating"
        for name in FLAGS.solvers:
            if name == "oftrl":
                for scale in scales:
                    label = f"OFTRL x{scale:g} ({mode})" if scale != 1 else f"OFTRL theory ({mode})"
                    solver = make_solver(
                        "oftrl", game, alternating, stepsize_scale=scale,
                        horizon=FLAGS.iterations, kappa=FLAGS.kappa,
                    )  # fmt: skip
                    runs.append((label, solver))
            else:
                runs.append((f"{name.upper()} ({mode})", make_solver(name, game, alternating)))
    if FLAGS.save_policy and len(runs) != 1:
        usage_error(f"--save_policy saves one policy, but the flags make {len(runs)} runs; give one solver, one "
                    "--update_mode and, for oftrl, one --stepsize_scales")  # fmt: skip

    points = []
    fields = ["game", *CurvePoint.__dataclass_fields__]
    print(f"game {game}: {FLAGS.iterations} iterations, checkpoints {len(checkpoints)}")
    for label, solver in runs:
        points += run_curve(
            label, game, solver.evaluate_and_update_policy, solver.average_strategy,
            FLAGS.iterations, checkpoints, log=log,
        )  # fmt: skip
        write_results(csv_path, point_rows(points), config, fields)  # after every run: an interrupted program keeps the finished curves
    for name in FLAGS.openspiel_baselines:
        step, average = _openspiel_baseline(name, game)
        points += run_curve(
            f"OpenSpiel {name}", game, step, average, FLAGS.iterations, checkpoints,
            time_budget=FLAGS.baseline_seconds, log=log,
        )  # fmt: skip

    os.makedirs(FLAGS.output_dir, exist_ok=True)
    write_results(csv_path, point_rows(points), config, fields)
    if FLAGS.save_policy:
        label, solver = runs[0]
        size = save_tabular_policy(FLAGS.save_policy, game, solver.average_policy())
        print(f"wrote {FLAGS.save_policy}: the average policy of {label} ({size / 2**10:,.0f} KB)")
    title = f"{game}"
    plot_curves(points, os.path.join(FLAGS.output_dir, "exploitability_vs_iterations.png"), title)
    plot_curves(points, os.path.join(FLAGS.output_dir, "exploitability_vs_seconds.png"), title,
                x="seconds")  # fmt: skip

    print(f"\n{'solver':<30} {'iterations':>10} {'seconds':>9} {'it/s':>8} {'exploitability':>15}")
    for label in dict.fromkeys(p.solver for p in points):
        last = [p for p in points if p.solver == label][-1]
        rate = last.iteration / last.seconds if last.seconds > 0 else float("inf")
        print(f"{label:<30} {last.iteration:>10} {last.seconds:>9.2f} {rate:>8.0f} "
              f"{last.exploitability:>15.3e}")  # fmt: skip
    print(f"\nwrote {csv_path} and PNG plots in {FLAGS.output_dir}")


def run():
    """The console script's entry point."""
    run_program(main, __name__)


if __name__ == "__main__":
    run()
