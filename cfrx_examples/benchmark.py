r"""Benchmark our algorithms against OpenSpiel's built-ins at equal wall-clock.

Every algorithm gets the same budget of its own compute (`--seconds`; producing
a usable policy counts, exact evaluation does not) and is evaluated with the
same exact evaluator (`openspiel_cfrx.nash_conv`) at log-spaced times. Writes
`<output_dir>/benchmark.csv`, `benchmark.md` (final table) and
`exploitability_vs_seconds.png` (+ `exploitability_vs_nodes.png` where nodes
touched are defined). `--iterations=N` additionally caps each algorithm at N
steps (a step is one iteration for CFR-style algorithms; see --helpfull).

    .venv/bin/cfrx-benchmark --game=leduc_poker --seconds=60 \
        --algorithms=cfr+,dcfr,os_cpp_cfr,os_cfr,os_es_mccfr,os_nfsp

Algorithms: ours cfr, cfr+, dcfr, lcfr, pcfr+, oftrl (and deep_cfr, cfr_mix
when installed); OpenSpiel os_cpp_cfr, os_cfr, os_cfr_plus, os_dcfr,
os_es_mccfr, os_nfsp, os_deep_cfr.
"""

from __future__ import annotations

import os
import sys
import time

from absl import flags

from cfrx_examples._common import (
    check_device,
    check_list,
    check_number,
    check_output_dir,
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
from openspiel_cfrx.contenders import CONTENDERS, make_contender
from openspiel_cfrx.eval import log_times, plot_curves, run_timed
from openspiel_cfrx.eval.report import machine_header

FLAGS = flags.FLAGS
define_common_flags(
    game="kuhn_poker",
    game_help="Must be 2-player zero-sum with sequential moves, e.g. kuhn_poker, leduc_poker; exact "
    "evaluation extracts the whole tree, so keep it small.",
    iterations=0,
    iterations_help="Optional cap on steps per algorithm; 0 = no cap, each algorithm runs for --seconds. With "
    "N > 0 an algorithm stops after N steps or --seconds, whichever comes first. A step is one iteration of "
    "the CFR family, deep_cfr, cfr_mix and os_deep_cfr, 100 iterations of os_es_mccfr, 100 episodes of os_nfsp.",
    seed_help="Seeds the sampling-based algorithms (os_es_mccfr, os_nfsp, deep_cfr, cfr_mix, os_deep_cfr); "
    "the CFR family is deterministic.",
    output_dir="out/benchmark",
    outputs="benchmark.csv, benchmark.md, exploitability_vs_seconds.png and, for algorithms that count "
    "nodes touched, exploitability_vs_nodes.png",
    eval_every=0,
    eval_every_help="Also evaluate every N steps; 0 = only at the --eval_points log-spaced times and at the "
    "end. Producing each evaluated policy (e.g. training a Deep CFR average network) counts towards --seconds.",
    torch_device=True,
    device_help="Passed to our neural algorithms (deep_cfr, cfr_mix); all others always run on the CPU, and a "
    "device other than cpu without either of them selected is an error.",
)
flags.DEFINE_list("algorithms", ["cfr+", "dcfr", "os_cpp_cfr", "os_cfr", "os_es_mccfr"],
                  "Comma-separated algorithms to compare (see the module docstring).")
flags.DEFINE_float("seconds", 20.0, "Compute budget per algorithm, in wall-clock seconds of its own compute "
                   "(exact evaluation excluded); > 0.")
flags.DEFINE_integer("eval_points", 10, "Log-spaced evaluation times per algorithm, from 0.5 s (or "
                     "--seconds/10 if smaller) to the end of --seconds.")
flags.DEFINE_bool("quiet", False, "Only print the final table (no per-evaluation lines).")
flags.DEFINE_enum("clock", "wall", ["wall", "cpu"], "What --seconds counts: wall-clock seconds, or the process's CPU "
                  "seconds (all its threads; for runs that share the cores with other jobs).")
flags.DEFINE_integer("torch_threads", 1, "torch.set_num_threads for neural algorithms (same for all).")

_MAX_EVAL_POINTS = 10_000  # evaluations per algorithm (each one is an exact best response)

# Contenders built with a torch `device=` (our DeepCFRSolver and CFRMixSolver).
_ON_DEVICE = {"deep_cfr", "cfr_mix"}


def main(argv):
    del argv
    check_output_dir()
    algorithms = check_list("algorithms", list(CONTENDERS))
    check_number("seconds", 0, strict=True)
    check_number("iterations", 0)
    check_number("eval_every", 0)
    check_number("eval_points", 1, _MAX_EVAL_POINTS)
    check_number("torch_threads", 1, 4 * (os.cpu_count() or 1))
    check_seed()
    check_writable_dir(FLAGS.output_dir, "output_dir")
    check_device(FLAGS.device, torch_device=True)
    if FLAGS.device != "cpu" and not _ON_DEVICE.intersection(algorithms):
        usage_error(f"--device={FLAGS.device} only applies to {', '.join(sorted(_ON_DEVICE))}; "
                    "none is in --algorithms, use --device=cpu")  # fmt: skip
    game = load_game_or_exit(FLAGS.game)
    if "cfr_mix" in algorithms:
        from openspiel_cfrx.team import is_factored_team_game

        if not is_factored_team_game(game):
            usage_error(f"--algorithms=cfr_mix needs a factored team game (e.g. "
                        f"'team_goofspiel(num_cards=3,num_agents=2,num_turns=2)'); {FLAGS.game} is not one")  # fmt: skip
    times = log_times(FLAGS.seconds, FLAGS.eval_points)
    import torch

    torch.set_num_threads(FLAGS.torch_threads)
    cap = f" (or {FLAGS.iterations} steps, whichever came first)" if FLAGS.iterations else ""
    csv_path = os.path.join(FLAGS.output_dir, "benchmark.csv")
    config = run_config(FLAGS.game, game)
    lock_run_folders(output_dir=FLAGS.output_dir)
    check_results_folder(config, csv_path)
    points = []
    for name in algorithms:
        print(f"{name}: {FLAGS.seconds:g}s{cap} on {game}", flush=True)
        kwargs = {"device": FLAGS.device} if name in _ON_DEVICE else {}
        contender = make_contender(name, game, seed=FLAGS.seed, **kwargs)
        try:
            run_timed(contender, game, FLAGS.seconds, times, log=None if FLAGS.quiet else print,
                      max_steps=FLAGS.iterations, eval_every=FLAGS.eval_every, into=points,
                      clock=time.process_time if FLAGS.clock == "cpu" else time.perf_counter)  # fmt: skip
        except KeyboardInterrupt:  # keep every point measured so far, the current algorithm's included
            write_results(csv_path, point_rows(points), config)
            sys.exit(f"interrupted (Ctrl-C) during {name}: {csv_path} holds the {len(points)} points measured")
        # After every algorithm: an interrupted run keeps the finished algorithms' curves.
        write_results(csv_path, point_rows(points), config)

    plot_curves(points, os.path.join(FLAGS.output_dir, "exploitability_vs_seconds.png"),
                f"{game}: equal {'CPU time' if FLAGS.clock == 'cpu' else 'wall-clock'}", x="seconds")  # fmt: skip
    with_nodes = [p for p in points if p.nodes_touched]
    if with_nodes:
        plot_curves(with_nodes, os.path.join(FLAGS.output_dir, "exploitability_vs_nodes.png"),
                    f"{game}", x="nodes_touched")  # fmt: skip
    lines = ["| algorithm | steps | seconds | exploitability | nash_conv |", "|---|---|---|---|---|"]
    for name in algorithms:
        last = [p for p in points if p.solver == name][-1]
        lines.append(f"| {name} | {last.iteration} | {last.seconds:.1f} | "
                     f"{last.exploitability:.4e} | {last.nash_conv:.4e} |")  # fmt: skip
    table = "\n".join(lines)
    with open(os.path.join(FLAGS.output_dir, "benchmark.md"), "w", encoding="utf-8") as f:
        f.write(f"# {game}, {FLAGS.seconds:g} s{cap} per algorithm\n\n{machine_header()}\n\n"
                f"Exploitability = NashConv / 2 of each algorithm's average policy after "
                f"{FLAGS.seconds:g} s of its own compute{cap} (exact evaluation excluded); curves in "
                f"benchmark.csv and the PNG plots.\n\n{table}\n")
    print("\n" + table + f"\n\nwrote {FLAGS.output_dir}/benchmark.csv, benchmark.md and PNG plots")


def run():
    """The console script's entry point."""
    run_program(main, __name__)


if __name__ == "__main__":
    run()
