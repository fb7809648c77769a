r"""The machine's own ceiling for traversal workers (issue 20): N plain
processes (no Ray) each run the in-process 5x2 FHP sampler at the same time,
started together at a barrier; per-process traversal nodes/s against one
process alone.

A Ray run with N workers cannot beat N x (a process's rate when N run at
once); this separates what the machine gives N busy processes (shared
physical cores, clock, caches, memory bandwidth) from what the distribution
layer costs (bench_distributed.py). Each process: the committed FHP Deep CFR
settings (benchmarks.common.FHP_STATE_DEEP_CFR), one warm-up iteration (network
trained once), one torch thread, then `--rounds` x (K traversals for each
player), samples inserted into its memories as in a real iteration.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_worker_contention.py \
        --processes=1,2 --output=benchmarks/results/worker_contention.md
"""

from __future__ import annotations

import multiprocessing
import os
import platform
import sys
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import print_and_write  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_list("processes", ["1", "2"], "Numbers of simultaneous processes to measure.")
flags.DEFINE_integer("num_traversals", 625, "Traversals per player and round in each process (625: 10,000 / 16).")
flags.DEFINE_integer("rounds", 3, "Timed rounds per process.")
flags.DEFINE_integer("traversal_batch_size", 0, "Traversals per lock-step batch (0: the solver's default).")
flags.DEFINE_string("output", "", "Markdown file for the table (printed anyway).")


def _one(index: int, barrier, results, num_traversals: int, rounds: int, batch: int) -> None:
    import pyspiel
    import torch

    import games  # noqa: F401  registers flop_holdem
    from benchmarks.common import FHP_STATE_DEEP_CFR
    from openspiel_cfrx.deep import DeepCFRSolver

    torch.set_num_threads(1)
    settings = dict(FHP_STATE_DEEP_CFR, num_traversals=num_traversals, **({"traversal_batch_size": batch} if batch else {}))
    game = pyspiel.load_game(settings.pop("game"))
    solver = DeepCFRSolver(game, num_iterations=2, seed=index, memory_capacity=2_000_000, **settings)
    solver.run_iteration()  # warm-up: networks trained once, kernels compiled
    barrier.wait()
    start, nodes = time.perf_counter(), 0
    for _ in range(rounds):
        for player in (0, 1):
            nodes += solver.collect(player, num_traversals)
    results.put((index, nodes, time.perf_counter() - start))


def measure(n: int) -> list[tuple[int, int, float]]:
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_one, args=(i, barrier, results, FLAGS.num_traversals, FLAGS.rounds,
                                                 FLAGS.traversal_batch_size))
             for i in range(n)]
    for p in procs:
        p.start()
    out = [results.get() for _ in procs]
    for p in procs:
        p.join()
    return sorted(out)


def main(argv):
    del argv
    import numpy as np
    import torch

    load = os.getloadavg()[0]
    rows = {}
    for n in [int(p) for p in FLAGS.processes]:
        rows[n] = measure(n)
        print(n, rows[n], flush=True)
    alone = rows[min(rows)]
    alone_rate = sum(nodes for _, nodes, _ in alone) / sum(s for _, _, s in alone)
    lines = [
        "# N simultaneous traversal processes, no Ray (issue 20)",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} logical CPUs; Python {platform.python_version()}, "
        f"numpy {np.__version__}, torch {torch.__version__}; load average {load:.2f} at start. "
        f"{FLAGS.num_traversals:,} traversals per player x {FLAGS.rounds} rounds per process, one torch thread, "
        "seeds 0..N-1.",
        "",
        f"Command: `PYTHONPATH=. .venv/bin/python {' '.join(sys.argv)}`",
        "",
        "| processes | mean nodes/s per process | slowest process nodes/s | per-process rate vs alone | "
        "aggregate nodes/s | aggregate vs one alone |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n, out in rows.items():
        rates = [nodes / seconds for _, nodes, seconds in out]
        lines.append(f"| {n} | {np.mean(rates):,.0f} | {min(rates):,.0f} | {np.mean(rates) / alone_rate:.2f} | "
                     f"{sum(rates):,.0f} | {sum(rates) / alone_rate:.2f}x |")  # fmt: skip
    print_and_write("\n".join(lines) + "\n", FLAGS.output)


if __name__ == "__main__":
    app.run(main)
