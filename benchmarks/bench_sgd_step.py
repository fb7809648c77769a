"""Deep CFR's training step: glibc's allocator settings and bfloat16 mixed
precision (issue 21: the 5x2 FHP curve is SGD-bound, 89% of an iteration).

Each case is a `DeepCFRSolver` run of a few iterations (no average-network
training), timed by the solver itself: training seconds per SGD step (two
advantage networks per iteration, so `training_seconds / (2 x steps)`) and
traversal nodes per second, medians over iterations 2..N, plus minor page
faults per SGD step. Four configurations per case:

* glibc's allocator as it is, or `poker.allocator.keep_freed_arrays()` (the
  public-tree walks' setting: freed large arrays reused, not page-faulted
  again; process-wide and irreversible, so every configuration runs in a
  fresh interpreter);
* `training_precision` "float32" / "bfloat16" (`trainer.py`: torch.autocast
  around the training forward pass).

Configurations are interleaved round-robin (`--rounds`), one torch thread,
and the table gives the median over rounds and the ratio to the default
(glibc's own settings, float32).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_sgd_step.py \
        --output=benchmarks/results/sgd_step.md
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import sys

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import cases_round_robin, print_and_write, run_header  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("output", "", "Markdown file for the table (printed anyway).")
flags.DEFINE_integer("rounds", 3, "Interleaved rounds per configuration.")
flags.DEFINE_integer("iterations", 6, "Solver iterations per run (iteration 1 is not timed).")
flags.DEFINE_list("cases", [], "Cases to run (default: all).")
flags.DEFINE_string("one", "", "Internal: run one configuration (JSON) and print its result.")

# The committed settings of the 5x2 curve (fhp_curve.md) and of the full-FHP runs (full_fhp.md), without the
# average network; the Appendix C network with the full-FHP traversal benchmark's settings.
CASES = {
    "5x2_mlp": dict(  # 5x2 FHP, MLP 128x128
        game="flop_holdem(num_ranks=5,num_suits=2)", traversal_backend="poker", num_traversals=5000,
        advantage_network_layers=[128, 128], advantage_network_train_steps=150,
        reinitialize_advantage_networks=False, regret_scale="auto"),
    "5x2_mlp256": dict(  # the same with an advantage MLP 256x256 (fhp_plateau.md, session 20)
        game="flop_holdem(num_ranks=5,num_suits=2)", traversal_backend="poker", num_traversals=5000,
        advantage_network_layers=[256, 256], advantage_network_train_steps=150,
        reinitialize_advantage_networks=False, regret_scale="auto"),
    "fhp_suit_mlp": dict(  # full FHP, suit-symmetric MLP 128x128
        game="flop_holdem", network="suit_symmetric_mlp", traversal_backend="poker", num_traversals=5000,
        advantage_network_layers=[128, 128], advantage_network_train_steps=150,
        reinitialize_advantage_networks=False, regret_scale="auto"),
    "fhp_appendix_c": dict(  # full FHP, the Appendix C network (d = 64)
        game="flop_holdem", network="poker", traversal_backend="poker", num_traversals=5000,
        advantage_network_train_steps=150, reinitialize_advantage_networks=False, regret_scale="auto"),
}  # fmt: skip
CONFIGS = [(False, "float32"), (True, "float32"), (False, "bfloat16"), (True, "bfloat16")]


def one(case: dict) -> dict:
    """Runs one configuration in this (fresh) process."""
    import pyspiel
    import torch

    import games  # noqa: F401  (registers flop_holdem)
    from openspiel_cfrx.deep import DeepCFRSolver
    from openspiel_cfrx.poker import allocator

    torch.set_num_threads(1)
    if case["keep"]:
        allocator.keep_freed_arrays()
    settings = dict(CASES[case["case"]])
    game = pyspiel.load_game(settings.pop("game"))
    steps = settings["advantage_network_train_steps"]
    faults = []

    def count(solver):
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt)

    solver = DeepCFRSolver(game, num_iterations=case["iterations"], policy_network_train_steps=0, seed=0,
                           training_precision=case["precision"],
                           callback=count, **settings)  # fmt: skip
    solver.solve()
    timed = solver.history[1:]
    return {"step_ms": statistics.median(h["training_seconds"] / (2 * steps) * 1e3 for h in timed),
            "nodes_per_second": statistics.median(h["nodes"] / h["traversal_seconds"] for h in timed),
            "faults_per_step": (faults[-1] - faults[0]) / (2 * steps * (len(faults) - 1))}  # fmt: skip


def main(argv):
    del argv
    if FLAGS.one:
        print(json.dumps(one(json.loads(FLAGS.one))))
        return
    load = os.getloadavg()[0]
    names = FLAGS.cases or list(CASES)
    keys = [(n, c) for n in names for c in CONFIGS]
    cases = [{"case": n, "keep": keep, "precision": precision, "iterations": FLAGS.iterations}
             for n, (keep, precision) in keys]  # fmt: skip
    results = dict(zip(keys, cases_round_robin(__file__, cases, FLAGS.rounds), strict=True))
    rows = []
    for name in names:
        base = None
        for keep, precision in CONFIGS:
            runs = results[name, (keep, precision)]
            step = statistics.median(x["step_ms"] for x in runs)
            nodes = statistics.median(x["nodes_per_second"] for x in runs)
            faults = statistics.median(x["faults_per_step"] for x in runs)
            base = base or (step, nodes)
            rows.append(f"| {name} | {keep} | {precision} | {step:.2f} | **{base[0] / step:.2f}x** | {faults:,.0f} | "
                        f"{nodes:,.0f} | {nodes / base[1]:.2f}x |")  # fmt: skip
    text = (f"# Deep CFR's SGD step: allocator settings and bfloat16 (issue 21)\n\n{run_header(load)}. "
            f"`DeepCFRSolver` runs of {FLAGS.iterations} iterations (iteration 1 not timed), one torch thread, "
            f"batch 2,048, {FLAGS.rounds} interleaved rounds (each configuration in a fresh process), medians.\n\n"
            "| case | keep_freed_arrays | training precision | ms per SGD step | speed-up | page faults per step | "
            "traversal nodes/s | ratio |\n|---|---|---|---:|---:|---:|---:|---:|\n" + "\n".join(rows) + "\n")  # fmt: skip
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
