r"""Benchmark our algorithms against OpenSpiel's built-ins at equal wall-clock.

Every algorithm gets the same budget of its own compute (`--seconds`; producing
a usable policy counts, exact evaluation does not) and is evaluated with the
same exact evaluator (`openspiel_cfrx.nash_conv`) at log-spaced times. Writes
`<output_dir>/benchmark.csv`, `benchmark.md` (final table) and
`exploitability_vs_seconds.png` (+ `exploitability_vs_nodes.png` where nodes
touched are defined).

    .venv/bin/python examples/benchmark.py --game=leduc_poker --seconds=60 \
        --algorithms=cfr+,dcfr,os_cpp_cfr,os_cfr,os_es_mccfr,os_nfsp

Algorithms: ours cfr, cfr+, dcfr, lcfr, pcfr+, oftrl (and deep_cfr, cfr_mix
when installed); OpenSpiel os_cpp_cfr, os_cfr, os_cfr_plus, os_dcfr,
os_es_mccfr, os_nfsp, os_deep_cfr.
"""

from __future__ import annotations

import os
import sys

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from examples._common import load_game_or_exit, usage_error  # noqa: E402
from openspiel_cfrx.eval import plot_curves, write_csv  # noqa: E402
from openspiel_cfrx.eval.contenders import (  # noqa: E402
    CONTENDERS,
    log_times,
    make_contender,
    run_timed,
)
from openspiel_cfrx.eval.report import machine_header  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("game", "kuhn_poker", "OpenSpiel game string (2-player zero-sum, sequential).")
flags.DEFINE_list("algorithms", ["cfr+", "dcfr", "os_cpp_cfr", "os_cfr", "os_es_mccfr"],
                  "Algorithms to compare (see module docstring).")
flags.DEFINE_float("seconds", 20.0, "Compute budget per algorithm, in seconds.")
flags.DEFINE_integer("eval_points", 10, "Log-spaced evaluation times per algorithm.")
flags.DEFINE_integer("seed", 0, "Seed for sampling-based algorithms.")
flags.DEFINE_string("output_dir", "out/benchmark", "Directory for CSV, markdown and PNG.")
flags.DEFINE_bool("quiet", False, "Only print the final table.")
flags.DEFINE_integer("torch_threads", 1, "torch.set_num_threads for neural algorithms (same for all).")


def main(argv):
    del argv
    game = load_game_or_exit(FLAGS.game)
    for name in FLAGS.algorithms:
        if name not in CONTENDERS:
            usage_error(f"unknown algorithm {name!r}; choose from {', '.join(CONTENDERS)}")
    if FLAGS.seconds <= 0:
        usage_error("--seconds must be > 0")
    times = log_times(FLAGS.seconds, FLAGS.eval_points)
    import torch

    torch.set_num_threads(FLAGS.torch_threads)
    points = []
    for name in FLAGS.algorithms:
        print(f"{name}: {FLAGS.seconds:g}s on {game}", flush=True)
        contender = make_contender(name, game, seed=FLAGS.seed)
        points += run_timed(contender, game, FLAGS.seconds, times,
                            log=None if FLAGS.quiet else print)  # fmt: skip

    os.makedirs(FLAGS.output_dir, exist_ok=True)
    write_csv(points, os.path.join(FLAGS.output_dir, "benchmark.csv"))
    plot_curves(points, os.path.join(FLAGS.output_dir, "exploitability_vs_seconds.png"),
                f"{game}: equal wall-clock", x="seconds")  # fmt: skip
    with_nodes = [p for p in points if p.nodes_touched]
    if with_nodes:
        plot_curves(with_nodes, os.path.join(FLAGS.output_dir, "exploitability_vs_nodes.png"),
                    f"{game}", x="nodes_touched")  # fmt: skip
    lines = ["| algorithm | steps | seconds | exploitability | nash_conv |", "|---|---|---|---|---|"]
    for name in FLAGS.algorithms:
        last = [p for p in points if p.solver == name][-1]
        lines.append(f"| {name} | {last.iteration} | {last.seconds:.1f} | "
                     f"{last.exploitability:.4e} | {last.nash_conv:.4e} |")  # fmt: skip
    table = "\n".join(lines)
    with open(os.path.join(FLAGS.output_dir, "benchmark.md"), "w", encoding="utf-8") as f:
        f.write(f"# {game}, {FLAGS.seconds:g} s per algorithm\n\n{machine_header()}\n\n"
                f"Exploitability = NashConv / 2 of each algorithm's average policy after "
                f"{FLAGS.seconds:g} s of its own compute (exact evaluation excluded); curves in "
                f"benchmark.csv and the PNG plots.\n\n{table}\n")
    print("\n" + table + f"\n\nwrote {FLAGS.output_dir}/benchmark.csv, benchmark.md and PNG plots")


if __name__ == "__main__":
    app.run(main)
