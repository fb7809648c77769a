r"""Deep CFR traversals on Ray workers: throughput, per-iteration
wall clock and the learner's overhead, 1 (in-process) vs N workers.

Each case is a fresh process (its own local Ray instance with N > 1). After
one warm-up iteration (actor start-up, tree extraction, first training), it
times `--iterations` Deep CFR iterations and reports, per iteration:

* traversal nodes/s = nodes touched / traversal-phase wall time;
* traversal and whole-iteration seconds (the training phase is not
  distributed and is the same in every case);
* overhead = traversal-phase wall time minus, per traversal round, the slowest
  worker's own traversal time: broadcasting sigma^t, scheduling, moving the
  samples back and inserting them into the memories in worker order;
* the workers' mean wall and CPU seconds per iteration (their own thread's;
  wall - CPU is time the OS gave their core to another process), their
  involuntary context switches ("preempted") and the shares K was cut into.

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

from benchmarks.common import FHP_STATE_DEEP_CFR, case_in_fresh_process, print_and_write  # noqa: E402
from openspiel_cfrx.neural_poker.poker_network import PAPER_FHP_DIM  # noqa: E402
from openspiel_cfrx.presets import merge_settings  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("output", "", "Markdown file for the table (printed anyway).")
flags.DEFINE_string("one", "", "Internal: run one case (JSON) and print its result.")
flags.DEFINE_list("workers", ["1", "2"], "Worker counts to measure.")
flags.DEFINE_integer("iterations", 3, "Measured iterations per case (after one warm-up).")
flags.DEFINE_list("projection", ["16", "64"], "Worker counts to project to.")
flags.DEFINE_list("workloads", ["leduc", "fhp"], "Workloads to run (leduc, fhp).")
flags.DEFINE_integer("num_traversals", 0, "Traversals per iteration and player (0: each workload's own K).")
flags.DEFINE_integer("train_steps", 0, "Advantage-network SGD steps per iteration (0: each workload's own).")
flags.DEFINE_integer("traversal_batch_size", 0, "Traversals per lock-step batch (0: the solver's default).")
flags.DEFINE_list("in_process_threads", ["0"], "torch threads of the 1-worker (in-process) rows, one row each "
                  "(0: torch's default, one per core; workers always use 1). The speed-up is against the fastest.")
flags.DEFINE_integer("min_share", 0, "Ray sampler's smallest share (0: the solver's, sampler.smallest_share; "
                     "at least K / 2N: one equal share per worker).")
flags.DEFINE_string("device", "cpu", "Where the learner trains the networks (cpu, cuda).")
flags.DEFINE_string("training_precision", "float32", "The learner's training precision (float32, bfloat16).")
flags.DEFINE_integer("queued", 0, "Shares a Ray worker holds ahead (0: the sampler's default).")
flags.DEFINE_float("baseline_rate", 0.0, "In-process nodes/s measured earlier on this machine, for the speed-up "
                   "column when --workers has no 1 (one workload only).")

# The committed 5x2 FHP Deep CFR settings (benchmarks/results/fhp_curve.md) and Leduc at the example's defaults.
WORKLOADS = {
    "leduc (tree)": dict(game="leduc_poker", traversal={"backend": "tree"}, num_traversals=2000,
                         advantage_network_layers=(32, 32), policy_network_layers=(32, 32),
                         advantage_network_train_steps=100, batch_size_advantage=2048),
    "5x2 FHP (state)": FHP_STATE_DEEP_CFR,
    # Full FHP at the paper's settings (Section 5.2 and Appendix C: the card/bet network at the paper's size,
    # K = 10,000, advantage networks retrained with 4,000 SGD steps of batch 10,000, 40M-entry memories).
    "full FHP (paper)": dict(game="flop_holdem", network={"family": "poker"}, traversal={"backend": "poker"},
                             num_traversals=10_000,
                             advantage_network_layers=(PAPER_FHP_DIM,), policy_network_layers=(PAPER_FHP_DIM,),
                             advantage_network_train_steps=4_000, batch_size_advantage=10_000,
                             memory_capacity=40_000_000),
    # Full FHP at the settings of the committed 60-minute run (benchmarks/results/full_fhp.md).
    "full FHP (full_fhp.md)": dict(game="flop_holdem", network={"family": "suit_symmetric_mlp"},
                                   traversal={"backend": "poker"}, num_traversals=5_000,
                                   training={"regret_scale": "auto"}, advantage_network_layers=(128, 128),
                                   advantage_network_train_steps=150, reinitialize_advantage_networks=False,
                                   policy_network_layers=(128, 128)),
}  # fmt: skip
ALIASES = {"leduc": "leduc (tree)", "fhp": "5x2 FHP (state)", "full_fhp_paper": "full FHP (paper)",
           "full_fhp": "full FHP (full_fhp.md)"}  # fmt: skip


def run_case(case: dict) -> dict:
    import pyspiel
    import torch

    import games  # noqa: F401  registers flop_holdem
    from openspiel_cfrx.deep import DeepCFRSolver

    settings = merge_settings(WORKLOADS[case["workload"]], {"workers": {"num_workers": case["workers"]},
                              "training": {"precision": case.get("training_precision", "float32")}})
    if case.get("num_traversals"):
        settings["num_traversals"] = case["num_traversals"]
    if case.get("train_steps"):
        settings["advantage_network_train_steps"] = case["train_steps"]
    if case.get("traversal_batch_size"):
        settings = merge_settings(settings, {"traversal": {"batch_size": case["traversal_batch_size"]}})
    if case.get("threads"):
        torch.set_num_threads(case["threads"])
    game = pyspiel.load_game(settings.pop("game"))
    settings.setdefault("memory_capacity", 2_000_000)
    solver = DeepCFRSolver(game, num_iterations=1 + case["iterations"], seed=0, device=case.get("device", "cpu"),
                           **settings)  # fmt: skip
    if case.get("min_share") and case["workers"] > 1:
        solver.sampler.min_share = case["min_share"]
    if case.get("queued") and case["workers"] > 1:
        solver.sampler.queued = case["queued"]
    solver.run_iteration()  # warm-up
    timings = dict(getattr(solver.sampler, "timings", {}))
    start = time.perf_counter()
    rows = [solver.run_iteration() for _ in range(case["iterations"])]
    wall = time.perf_counter() - start
    after = getattr(solver.sampler, "timings", {})
    n = len(rows)
    traversal = sum(r["traversal_seconds"] for r in rows) / n
    result = {"nodes_per_iteration": sum(r["nodes"] for r in rows) / n, "traversal_s": traversal,
              "training_s": sum(r["training_seconds"] for r in rows) / n, "iteration_s": wall / n,
              "torch_threads": torch.get_num_threads()}  # fmt: skip
    if after:
        import ray

        trips = []
        for _ in range(20):
            start = time.perf_counter()
            ray.get([w.pid.remote() for w in solver.sampler.workers])
            trips.append(time.perf_counter() - start)
        result["dispatch_per_worker_s"] = sorted(trips)[len(trips) // 2] / len(solver.sampler.workers)
        result["slowest_worker_s"] = (after["slowest_worker"] - timings["slowest_worker"]) / n
        result["mean_worker_s"] = (after["mean_worker"] - timings["mean_worker"]) / n
        result["mean_worker_cpu_s"] = (after["mean_worker_cpu"] - timings["mean_worker_cpu"]) / n
        result["preempted"] = (after["preempted"] - timings["preempted"]) / n
        result["shares"] = (after["shares"] - timings["shares"]) / n
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
    workloads = [ALIASES.get(w, w) for w in FLAGS.workloads]
    for workload in workloads:
        if workload not in WORKLOADS:
            raise app.UsageError(f"unknown workload {workload!r}; choose from {', '.join(ALIASES)}")
    common = {"iterations": FLAGS.iterations, "num_traversals": FLAGS.num_traversals, "device": FLAGS.device,
              "training_precision": FLAGS.training_precision, "train_steps": FLAGS.train_steps,
              "traversal_batch_size": FLAGS.traversal_batch_size, "queued": FLAGS.queued,
              "min_share": FLAGS.min_share}  # fmt: skip
    results = {}  # (workload, workers, learner's torch threads for 1 worker else 1) -> result
    for workload in workloads:
        for n in workers:
            for threads in [int(t) for t in FLAGS.in_process_threads] if n == 1 else [1]:
                case = {"workload": workload, "workers": n, "threads": threads if n == 1 else 0, **common}
                results[workload, n, threads] = r = in_fresh_process(case)
                print(workload, n, threads, r, flush=True)
    base = {}  # workload -> the fastest in-process row
    for (workload, n, _), r in results.items():
        rate = r["nodes_per_iteration"] / r["traversal_s"]
        if n == 1 and rate > base.get(workload, (0, None))[0]:
            base[workload] = (rate, r)
    traversals = f"{FLAGS.num_traversals:,} traversals per player" if FLAGS.num_traversals else "each workload's K"
    if FLAGS.train_steps:
        traversals += f", {FLAGS.train_steps:,} advantage SGD steps per player and iteration"
    lines = [
        "# Deep CFR traversals on Ray workers",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores"
        f"{', ' + torch.cuda.get_device_name() if torch.cuda.is_available() else ''}; Python {platform.python_version()}, "
        f"numpy {np.__version__}, torch {torch.__version__}, ray {ray.__version__}; load average {load:.2f} at "
        "start. Each row is a fresh process (its own local Ray instance when N > 1); one warm-up iteration, then "
        f"the mean of {FLAGS.iterations} iterations. Seed 0; {traversals}; the learner trains on {FLAGS.device} "
        f"({FLAGS.training_precision}). "
        "Speed-up: nodes/s over the fastest in-process (1-worker) row's"
        + (f" (or --baseline_rate={FLAGS.baseline_rate:,.0f} nodes/s, measured earlier on this machine)."
           if FLAGS.baseline_rate else "."),
        "",
        f"Command: `PYTHONPATH=. .venv/bin/python {' '.join(sys.argv)}`",
        "",
        "| workload | workers | torch threads (learner) | nodes/iteration | traversal s | nodes/s | speed-up | "
        "training s | iteration s | slowest worker s | mean worker s | mean worker CPU s | preempted | shares | "
        "overhead s (share of iteration) | of which broadcast s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (workload, n, _), r in results.items():
        rate, base_rate = r["nodes_per_iteration"] / r["traversal_s"], base.get(workload, (FLAGS.baseline_rate,))[0]
        overhead = (f"{r['overhead_s']:.3f} ({100 * r['overhead_s'] / r['iteration_s']:.1f}%)"
                    if "overhead_s" in r else "-")  # fmt: skip
        slowest = (f"{r['slowest_worker_s']:.3f} | {r['mean_worker_s']:.3f} | {r['mean_worker_cpu_s']:.3f} | "
                   f"{r['preempted']:,.0f} | {r['shares']:.0f}" if "slowest_worker_s" in r else "- | - | - | - | -")  # fmt: skip
        broadcast = f"{r['broadcast_s']:.3f}" if "broadcast_s" in r else "-"
        lines.append(f"| {workload} | {n} | {r['torch_threads']} | {r['nodes_per_iteration']:,.0f} | {r['traversal_s']:.3f} | {rate:,.0f} | "
                     f"{f'{rate / base_rate:.2f}x' if base_rate else '-'} | {r['training_s']:.3f} | {r['iteration_s']:.3f} | {slowest} | "
                     f"{overhead} | {broadcast} |")  # fmt: skip
    lines += ["", "**Projection** (arithmetic on the measured parts, not a measurement; see the module docstring):", ""]
    lines += ["| workload | workers | projected traversal s | projected traversal speed-up |", "|---|---:|---:|---:|"]
    two = max(n for n in workers if n > 1) if any(n > 1 for n in workers) else None
    for workload in workloads:
        if two is None or workload not in base:
            break
        t1, r = base[workload][1]["traversal_s"], results[workload, two, 1]
        per_worker = r["slowest_worker_s"] * two / t1  # a worker's time per in-process second of traversal
        for n in [int(p) for p in FLAGS.projection]:
            projected = t1 * per_worker / n + r["overhead_s"] + 2 * (n - two) * r["dispatch_per_worker_s"]
            lines.append(f"| {workload} | {n} | {projected:.3f} | {t1 / projected:.1f}x |")
    text = "\n".join(lines) + "\n"
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
