"""Deep CFR benchmark: ours vs OpenSpiel's PyTorch Deep CFR.

Modes (--mode, comma-separated):

* `compare`: Leduc, both solvers in the same process, one after the other
  (ours, then OpenSpiel's), each stepped through the equal-budget harness
  (`openspiel_cfrx.eval.harness.run_budget`, wall clock) for `--seconds` of
  solver time (OpenSpiel's also stops after `--openspiel_iterations`). They
  are not interleaved, so load on the machine that changes during the run can
  hit one more than the other. OpenSpiel runs its example's settings (64-unit
  nets, 375 traversals, 375 advantage steps of batch 256, lr 1e-3, memory 1e5;
  its policy network, 2500 steps of batch 256, is trained at each checkpoint
  as its `print_nash_convs` does). Exact NashConv with our tree engine at the
  first iteration past every `--eval_every_seconds` of solver time and at the
  end (evaluation time excluded from both clocks; policy-network training at
  a checkpoint is reported separately). Writes `deep_cfr_leduc.md`, CSV and
  PNG.
* `throughput`: nodes touched per second during traversal, same game and
  same network size (one hidden layer of 64) for both, traversals only.
* `ablations`: the paper's Figure 4 switches on Leduc at a fixed number of
  iterations: linear vs uniform weighting, retrain vs fine-tune, argmax vs
  uniform fallback, reservoir vs sliding-window memory (small capacity so it
  fills). Writes `deep_cfr_ablations.md`.

    .venv/bin/python benchmarks/bench_deep_cfr.py --mode=compare --seconds=600
"""

from __future__ import annotations

import csv
import os
import sys
import time

import numpy as np
import pyspiel
import torch
from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import markdown_table, write_result  # noqa: E402
from openspiel_cfrx.contenders import (  # noqa: E402
    DEEP_CFR_HARNESS_SCHEDULE,
    DEEP_CFR_HARNESS_SETTINGS,
    openspiel_deep_cfr_iteration,
)
from openspiel_cfrx.deep import (
    DeepCFRSolver,  # noqa: E402
    Schedule,  # noqa: E402
)
from openspiel_cfrx.eval.harness import FunctionContender, RunState, run_budget  # noqa: E402
from openspiel_cfrx.presets import merge_settings  # noqa: E402
from openspiel_cfrx.tree import nash_conv  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_list("mode", ["throughput", "compare"], "throughput, compare, ablations")
flags.DEFINE_string("game", "leduc_poker", "Game.")
flags.DEFINE_float("seconds", 600.0, "Solver-seconds budget per side in `compare`.")
flags.DEFINE_float("eval_every_seconds", 100.0, "Checkpoint spacing (solver seconds) in `compare`.")
flags.DEFINE_integer("openspiel_iterations", 101, "OpenSpiel example's iteration count.")
flags.DEFINE_integer("ablation_iterations", 60, "Iterations per ablation run.")
flags.DEFINE_list("ablations", [], "Subset of ablation names to run (default all).")
flags.DEFINE_integer("seed", 0, "Seed.")
flags.DEFINE_integer("threads", 1, "torch threads (both sides).")
flags.DEFINE_string("output_dir", "benchmarks/results", "Where results go.")

# Our Leduc settings for the 10-minute comparison.
# Many cheap traversals (vectorised over the extracted tree), full-memory
# merged gradient steps (aggregate_duplicates, default) with a larger learning
# rate than the paper's minibatch 1e-3, annealed over each retraining run.
OURS_LEDUC = dict(
    {k: v for k, v in DEEP_CFR_HARNESS_SETTINGS.items() if k != "averaging"},  # the average: a policy network
    policy_network_train_steps=1000,
    batch_size_strategy=2048,
    memory_capacity=int(4e6),
    averaging={"keep_iteration_networks": True},
    training={"schedule": Schedule(**DEEP_CFR_HARNESS_SCHEDULE)},
)

# OpenSpiel's cfrx_examples/deep_cfr_pytorch.py settings.
OPENSPIEL_EXAMPLE = dict(
    policy_network_layers=(64,),
    advantage_network_layers=(64,),
    num_traversals=375,
    reinitialize_advantage_networks=True,
    learning_rate=1e-3,
    batch_size_advantage=256,
    batch_size_strategy=256,
    memory_capacity=100000,
    policy_network_train_steps=2500,
    advantage_network_train_steps=375,
)


def _openspiel_solver(game, num_iterations, seed):
    from open_spiel.python.pytorch import deep_cfr as os_deep_cfr

    class Counting(os_deep_cfr.DeepCFRSolver):
        """OpenSpiel's solver, counting histories touched by its traversal."""

        nodes = 0

        def _traverse_game_tree(self, state, player):
            self.nodes += 1
            return super()._traverse_game_tree(state, player)

    return Counting(game, num_iterations=num_iterations, seed=seed, **OPENSPIEL_EXAMPLE)


_openspiel_iteration = openspiel_deep_cfr_iteration  # one iteration of OpenSpiel's solve() loop


def _openspiel_nash_conv(game, solver):
    solver._learn_strategy_network()
    # OpenSpiel's Deep CFR reads its softmax row at the legal actions (mass on illegal actions is
    # dropped: rows sum to < 1); evaluated as is, as OpenSpiel's own exploitability would.
    value = nash_conv(game, solver, check=False)
    solver._reinitialize_policy_network()
    return value


# ------------------------------------------------------------------ throughput
def throughput(game, rows):
    """Traversal-only nodes/s with the same network (one hidden layer of 64)."""
    ours = DeepCFRSolver(game, advantage_network_layers=(64,), policy_network_layers=(64,),
                         num_traversals=300, advantage_network_train_steps=50,
                         batch_size_advantage=256, seed=FLAGS.seed)  # fmt: skip
    theirs = _openspiel_solver(game, 10, FLAGS.seed)
    vectorized = DeepCFRSolver(game, advantage_network_layers=(64,), policy_network_layers=(64,),
                               num_traversals=300, advantage_network_train_steps=50, batch_size_advantage=256,
                               seed=FLAGS.seed, traversal={"backend": "vectorized"})  # fmt: skip
    ours.run_iteration()  # trained networks on both sides (not the uniform start)
    vectorized.run_iteration()
    _openspiel_iteration(theirs)
    results = {}
    for _ in range(3):  # interleaved repetitions
        for name in ("ours", "vectorized", "openspiel"):
            start = time.perf_counter()
            if name == "ours":
                nodes = sum(ours.collect(p, 300) for p in (0, 1))
            elif name == "vectorized":
                nodes = sum(vectorized.collect(p, 300) for p in (0, 1))
            else:
                before = theirs.nodes
                for p in (0, 1):
                    for _ in range(300):
                        theirs._traverse_game_tree(theirs._root_node, p)
                nodes = theirs.nodes - before
            results.setdefault(name, []).append(nodes / (time.perf_counter() - start))
    ours_rate, theirs_rate = np.median(results["ours"]), np.median(results["openspiel"])
    vector_rate = np.median(results["vectorized"])
    rows.append(["nodes/s during traversal, 600 traversals, pyspiel states (median of 3, interleaved)",
                 f"{ours_rate:,.0f}", f"{theirs_rate:,.0f}", f"{ours_rate / theirs_rate:.1f}x"])  # fmt: skip
    rows.append(["nodes/s during traversal, 600 traversals, vectorised over the extracted tree",
                 f"{vector_rate:,.0f}", f"{theirs_rate:,.0f}", f"{vector_rate / theirs_rate:.1f}x"])  # fmt: skip
    print(f"throughput: vectorised {vector_rate:,.0f} nodes/s")
    print(f"throughput: ours {ours_rate:,.0f} nodes/s, OpenSpiel {theirs_rate:,.0f} nodes/s")
    return ours_rate, theirs_rate


# --------------------------------------------------------------------- compare
def compare(game, out_dir):
    """Ours, then OpenSpiel's, each for --seconds of solver time through the harness (`run_budget`), evaluated
    at the first iteration past every --eval_every_seconds and at the end."""
    torch.manual_seed(FLAGS.seed)
    start = time.perf_counter()
    ours = DeepCFRSolver(game, num_iterations=10**6, seed=FLAGS.seed, **OURS_LEDUC)
    setup = time.perf_counter() - start  # tree extraction and encoding: charged to our clock
    theirs = _openspiel_solver(game, FLAGS.openspiel_iterations, FLAGS.seed)
    nodes = {"ours": 0, "openspiel": 0}
    records = []

    def step_ours():
        nodes["ours"] += ours.run_iteration()["nodes"]

    def step_theirs():
        before = theirs.nodes
        _openspiel_iteration(theirs)
        nodes["openspiel"] += theirs.nodes - before

    def evaluate(m):
        name = m.contender.name
        start = time.perf_counter()
        if name == "ours":
            value = nash_conv(game, ours)  # trains the policy network (timed here, not charged)
            policy_seconds = time.perf_counter() - start
            sd_cfr = float(ours.nash_conv("sd_cfr"))
        else:
            value = _openspiel_nash_conv(game, theirs)
            policy_seconds = time.perf_counter() - start
            sd_cfr = float("nan")
        records.append(dict(solver=name, iteration=m.steps, seconds=m.spent, nodes=nodes[name], nash_conv=value,
                            sd_cfr_nash_conv=sd_cfr, policy_training_seconds=policy_seconds))  # fmt: skip
        print(f"  {name:<9} it {m.steps:>4} {m.spent:7.1f}s nodes {nodes[name]:>10,} "
              f"NashConv {value:.4f}" + (f" (SD-CFR {sd_cfr:.4f})" if name == "ours" else ""), flush=True)

    every = FLAGS.eval_every_seconds  # <= 0: every iteration
    checkpoints = [float(t) for t in np.arange(every, FLAGS.seconds, every)] if every > 0 else []
    for contender, spent, max_steps in ((FunctionContender("ours", step_ours, lambda: ours), setup, 0),
                                        (FunctionContender("openspiel", step_theirs, lambda: theirs), 0.0,
                                         FLAGS.openspiel_iterations)):  # fmt: skip
        run_budget(contender, evaluate, [], seconds=FLAGS.seconds, max_steps=max_steps, eval_every=int(every <= 0),
                   state=RunState(spent=spent, pending=list(checkpoints)), log=None)  # fmt: skip

    csv_path = os.path.join(out_dir, "deep_cfr_leduc", "leduc_compare.csv")
    os.makedirs(os.path.dirname(csv_path), exist_ok=True)
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    _plot(records, os.path.join(out_dir, "deep_cfr_leduc", "leduc_compare.png"))
    return records


def _interp(records, name, t):
    """NashConv of `name` at solver time t (step function: last checkpoint <= t)."""
    points = [r for r in records if r["solver"] == name and r["seconds"] <= t]
    return points[-1]["nash_conv"] if points else float("nan")


def _plot(records, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, label, colour in (("ours", "openspiel_cfrx Deep CFR (policy net)", "C0"),
                                ("openspiel", "OpenSpiel Deep CFR (example settings)", "C3")):  # fmt: skip
        series = [r for r in records if r["solver"] == name]
        for ax, x in zip(axes, ("seconds", "nodes"), strict=True):
            ax.plot([r[x] for r in series], [r["nash_conv"] for r in series], "-o", ms=3, color=colour, label=label)
            if name == "ours":
                ax.plot([r[x] for r in series], [r["sd_cfr_nash_conv"] for r in series], "--", color=colour,
                        alpha=0.6, label="openspiel_cfrx Deep CFR (SD-CFR average)")  # fmt: skip
    for ax, x in zip(axes, ("solver seconds (evaluation excluded)", "nodes touched"), strict=True):
        ax.set_xlabel(x)
        ax.set_ylabel("NashConv")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    axes[1].set_xscale("log")
    axes[0].legend(fontsize=7)
    fig.suptitle("Leduc poker: Deep CFR, same process, one after the other", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ------------------------------------------------------------------- ablations
ABLATION_BASE = dict(
    advantage_network_layers=(64, 64),
    policy_network_layers=(64, 64),
    num_traversals=1000,
    traversal={"backend": "vectorized"},
    learning_rate=1e-2,
    advantage_network_train_steps=100,
    batch_size_advantage=1024,
    policy_network_train_steps=1000,
    batch_size_strategy=1024,
    memory_capacity=20_000,  # ~6k samples per player per iteration: full after ~4 iterations
    averaging={"keep_iteration_networks": True},
)
ABLATIONS = {
    "baseline (paper: linear, retrain, argmax, reservoir)": {},
    "uniform weighting": dict(averaging={"linear_weighting": False}),
    "fine-tune instead of retrain": dict(reinitialize_advantage_networks=False),
    "uniform fallback (standard RM)": dict(traversal={"regret_matching_fallback": "uniform"}),
    "sliding-window memory": dict(memory={"kind": "sliding_window"}),
    "sampled minibatches (no merging; ours, not the paper's)": dict(memory={"aggregate_duplicates": False}),
}


def ablations(game, out_dir):
    rows = []
    chosen = [n for n in ABLATIONS if not FLAGS.ablations or any(a in n for a in FLAGS.ablations)]
    for name in chosen:
        solver = DeepCFRSolver(game, num_iterations=FLAGS.ablation_iterations, seed=FLAGS.seed,
                               **merge_settings(ABLATION_BASE, ABLATIONS[name]))  # fmt: skip
        start = time.perf_counter()
        solver.solve()
        seconds = time.perf_counter() - start
        value = nash_conv(game, solver)
        sd_cfr = solver.nash_conv("sd_cfr")
        full = solver.advantage_buffers[0].add_calls / solver.advantage_buffers[0].capacity
        rows.append([name, f"{value:.4f}", f"{sd_cfr:.4f}", f"{full:.1f}x", f"{seconds:.0f}"])
        print(f"  {name:<52} NashConv {value:.4f}  SD-CFR {sd_cfr:.4f}  {seconds:.0f}s", flush=True)
    return rows


def main(argv):
    del argv
    torch.set_num_threads(FLAGS.threads)
    game = pyspiel.load_game(FLAGS.game)
    out_dir = FLAGS.output_dir
    if "throughput" in FLAGS.mode or "compare" in FLAGS.mode:
        rows = []
        throughput(game, rows)
        body = [markdown_table(["measure", "openspiel_cfrx", "OpenSpiel", "ratio"], rows)]
        if "compare" in FLAGS.mode:
            records = compare(game, out_dir)
            body.append(_compare_tables(records))
        write_result(os.path.join(out_dir, "deep_cfr_leduc.md"), f"Deep CFR on {FLAGS.game}: ours vs OpenSpiel",
                     "\n\n".join(body))  # fmt: skip
    if "ablations" in FLAGS.mode:
        rows = ablations(game, out_dir)
        body = (
            f"Leduc, {FLAGS.ablation_iterations} iterations, seed {FLAGS.seed}, settings "
            f"`{ABLATION_BASE}`; one switch changed per row (paper Figure 4). NashConv of the "
            "average-strategy network and of the exact SD-CFR mixture of the iteration strategies; "
            "'memory fill' = samples offered / capacity of player 0's advantage memory.\n\n"
            + markdown_table(["variant", "NashConv (policy net)", "NashConv (SD-CFR)", "memory fill", "seconds"], rows)
        )
        write_result(os.path.join(out_dir, "deep_cfr_ablations.md"), "Deep CFR ablations (Figure 4)", body)


def _compare_tables(records):
    ours = [r for r in records if r["solver"] == "ours"]
    theirs = [r for r in records if r["solver"] == "openspiel"]
    table = markdown_table(
        ["solver", "iteration", "solver seconds", "nodes touched", "NashConv", "SD-CFR NashConv",
         "policy-net training s (excluded)"],
        [[r["solver"], r["iteration"], f"{r['seconds']:.0f}", f"{r['nodes']:,}", f"{r['nash_conv']:.4f}",
          "-" if r["solver"] == "openspiel" else f"{r['sd_cfr_nash_conv']:.4f}",
          f"{r['policy_training_seconds']:.1f}"] for r in records],
    )  # fmt: skip
    ratios = []
    for r in theirs:
        mine = _interp(records, "ours", r["seconds"])
        ratios.append([f"{r['seconds']:.0f}", f"{r['nash_conv']:.4f}", f"{mine:.4f}", f"{r['nash_conv'] / mine:.1f}x"])
    ratio_table = markdown_table(
        ["OpenSpiel checkpoint (s)", "OpenSpiel NashConv", "ours at <= same seconds", "ratio"], ratios
    )
    final = ours[-1]
    return (
        f"Ours: `{OURS_LEDUC}`. OpenSpiel: its example's settings `{OPENSPIEL_EXAMPLE}`.\n\n"
        f"Final: ours NashConv {final['nash_conv']:.4f} (policy network; SD-CFR average "
        f"{final['sd_cfr_nash_conv']:.4f}) after {final['seconds']:.0f} solver seconds + "
        f"{final['policy_training_seconds']:.0f} s final policy-network training; OpenSpiel "
        f"{theirs[-1]['nash_conv']:.4f} after {theirs[-1]['seconds']:.0f} s.\n\n"
        f"## Equal wall-clock comparison\n\n{ratio_table}\n\n## All checkpoints\n\n{table}"
    )


if __name__ == "__main__":
    app.run(main)
