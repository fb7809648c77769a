r"""Deep CFR traversals on Ray workers (issue 20): throughput, per-iteration
wall clock and the learner's overhead, 1 (in-process) vs N workers.

Each case is a fresh process (its own local Ray instance with N > 1). After
one warm-up iteration (actor start-up, tree extraction, first training), it
times `--iterations` Deep CFR iterations and reports, per iteration:

* traversal nodes/s = nodes touched / traversal-phase wall time;
* traversal and whole-iteration seconds (the training phase is not
  distributed and is the same in every case);
* overhead = traversal-phase wall time minus, per traversal round, the slowest
  worker's own traversal time: broadcasting sigma^t, scheduling, moving the
  samples back and inserting them into the memories in worker order.

The projection to more workers is arithmetic on the measured parts (say so
when quoting it): traversal time(N) = T_1 * w / N + overhead(N), with the
per-worker compute w = (slowest worker time at 2 workers * 2) / T_1
(each worker's speed relative to the in-process sampler, so imbalance and
per-process slowdown carry over) and overhead(N) = overhead(2) + 2 rounds x
(N - 2) x d, where d is the measured round-trip of an empty call per worker
(the broadcast is one put whatever N; the samples moved and inserted do not
grow with N). It assumes N real cores with nothing else running.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_distributed.py \
        --output=benchmarks/results/distributed.md
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import case_in_fresh_process, print_and_write  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("output", "", "Markdown file for the table (printed anyway).")
flags.DEFINE_string("one", "", "Internal: run one case (JSON) and print its result.")
flags.DEFINE_list("workers", ["1", "2"], "Worker counts to measure.")
flags.DEFINE_integer("iterations", 3, "Measured iterations per case (after one warm-up).")
flags.DEFINE_list("projection", ["16", "64"], "Worker counts to project to.")

# The committed 5x2 FHP Deep CFR settings (benchmarks/results/fhp_curve.md) and Leduc at the example's defaults.
WORKLOADS = {
    "leduc (tree)": dict(game="leduc_poker", traversal_backend="tree", num_traversals=2000,
                         advantage_network_layers=(32, 32), policy_network_layers=(32, 32),
                         advantage_network_train_steps=100, batch_size_advantage=2048),
    "5x2 FHP (state)": dict(game="flop_holdem(num_ranks=5,num_suits=2)", traversal_backend="state",
                            num_traversals=1500, advantage_network_layers=(64, 64),
                            policy_network_layers=(64, 64), advantage_network_train_steps=150,
                            batch_size_advantage=2048),
}  # fmt: skip


def run_case(case: dict) -> dict:
    import pyspiel

    import games  # noqa: F401  registers flop_holdem
    from openspiel_cfrx.deep import DeepCFRSolver

    settings = dict(WORKLOADS[case["workload"]])
    game = pyspiel.load_game(settings.pop("game"))
    solver = DeepCFRSolver(game, num_iterations=1 + case["iterations"], seed=0, num_workers=case["workers"],
                           memory_capacity=2_000_000, **settings)  # fmt: skip
    solver.run_iteration()  # warm-up
    timings = dict(getattr(solver.sampler, "timings", {}))
    start = time.perf_counter()
    rows = [solver.run_iteration() for _ in range(case["iterations"])]
    wall = time.perf_counter() - start
    after = getattr(solver.sampler, "timings", {})
    n = len(rows)
    traversal = sum(r["traversal_seconds"] for r in rows) / n
    result = {"nodes_per_iteration": sum(r["nodes"] for r in rows) / n, "traversal_s": traversal,
              "training_s": sum(r["training_seconds"] for r in rows) / n, "iteration_s": wall / n}  # fmt: skip
    if after:
        import ray

        trips = []
        for _ in range(20):
            start = time.perf_counter()
            ray.get([w.pid.remote() for w in solver.sampler.workers])
            trips.append(time.perf_counter() - start)
        result["dispatch_per_worker_s"] = sorted(trips)[len(trips) // 2] / len(solver.sampler.workers)
        result["slowest_worker_s"] = (after["slowest_worker"] - timings["slowest_worker"]) / n
        result["broadcast_s"] = (after["broadcast"] - timings["broadcast"]) / n
        result["overhead_s"] = traversal - result["slowest_worker_s"]
    return result


def in_fresh_process(case: dict) -> dict:
    return case_in_fresh_process(__file__, case)


def main(argv):
    del argv
    if FLAGS.one:
        print(json.dumps(run_case(json.loads(FLAGS.one))))
        return
    import numpy as np
    import ray
    import torch

    load = os.getloadavg()[0]
    workers = [int(w) for w in FLAGS.workers]
    results = {}
    for workload in WORKLOADS:
        for n in workers:
            results[workload, n] = in_fresh_process({"workload": workload, "workers": n,
                                                     "iterations": FLAGS.iterations})  # fmt: skip
            print(workload, n, results[workload, n], flush=True)
    lines = [
        "# Deep CFR traversals on Ray workers (issue 20)",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores; Python {platform.python_version()}, "
        f"numpy {np.__version__}, torch {torch.__version__}, ray {ray.__version__}; load average {load:.2f} at "
        "start. Each row is a fresh process (its own local Ray instance when N > 1); one warm-up iteration, then "
        f"the mean of {FLAGS.iterations} iterations. Seed 0.",
        "",
        "Command: `PYTHONPATH=. .venv/bin/python benchmarks/bench_distributed.py "
        "--output=benchmarks/results/distributed.md`",
        "",
        "| workload | workers | nodes/iteration | traversal s | nodes/s | speed-up | training s | iteration s | "
        "slowest worker s | overhead s (share of iteration) | of which broadcast s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (workload, n), r in results.items():
        base = results[workload, workers[0]]
        rate, base_rate = r["nodes_per_iteration"] / r["traversal_s"], base["nodes_per_iteration"] / base["traversal_s"]
        overhead = (f"{r['overhead_s']:.3f} ({100 * r['overhead_s'] / r['iteration_s']:.1f}%)"
                    if "overhead_s" in r else "-")  # fmt: skip
        slowest = f"{r['slowest_worker_s']:.3f}" if "slowest_worker_s" in r else "-"
        broadcast = f"{r['broadcast_s']:.3f}" if "broadcast_s" in r else "-"
        lines.append(f"| {workload} | {n} | {r['nodes_per_iteration']:,.0f} | {r['traversal_s']:.3f} | {rate:,.0f} | "
                     f"{rate / base_rate:.2f}x | {r['training_s']:.3f} | {r['iteration_s']:.3f} | {slowest} | "
                     f"{overhead} | {broadcast} |")  # fmt: skip
    lines += ["", "**Projection** (arithmetic on the measured parts, not a measurement; see the module docstring):", ""]
    lines += ["| workload | workers | projected traversal s | projected traversal speed-up |", "|---|---:|---:|---:|"]
    two = max(n for n in workers if n > 1) if any(n > 1 for n in workers) else None
    for workload in WORKLOADS:
        if two is None:
            break
        t1, r = results[workload, 1]["traversal_s"], results[workload, two]
        per_worker = r["slowest_worker_s"] * two / t1  # a worker's time per in-process second of traversal
        for n in [int(p) for p in FLAGS.projection]:
            projected = t1 * per_worker / n + r["overhead_s"] + 2 * (n - two) * r["dispatch_per_worker_s"]
            lines.append(f"| {workload} | {n} | {projected:.3f} | {t1 / projected:.1f}x |")
    text = "\n".join(lines) + "\n"
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
