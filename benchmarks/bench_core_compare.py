"""The neural solvers of this checkout against another one (issue 16: the shared
neural core must keep behaviour and numbers), side by side.

Each measurement runs in a fresh subprocess (the two versions' modules never
mix), alternating old / new, one torch thread. For every workload the table
shows the result (NashConv, exact; equal seeds) of each version, which must be
equal, and the median process time, with the new/old ratio.

Workloads:
* deep_cfr_leduc_vectorized: the Leduc benchmark's settings
  (`examples/contenders.py`: vectorised traversals, ramps, cosine lr, SD-CFR
  average), 12 iterations; NashConv of the SD-CFR average.
* deep_cfr_leduc_state: pyspiel-state traversals (1,000 per player), 50-step
  training, 3 iterations; nodes/s of the traversals and NashConv of the policy network.
* cfr_mix_tiny_goofspiel / deep_cfr_mix_tiny_goofspiel: `examples/cfr_mix.py`'s
  default game and network, 6 iterations; exact NashConv.
* poker_exploitability_fhp_5x2: one Deep CFR iteration on 5x2 flop hold'em,
  then `games.poker_exploitability.poker_nash_conv` of its policy network
  (the poker evaluator on a batched neural policy).

    git worktree add /tmp/base <commit>
    .venv/bin/python benchmarks/bench_core_compare.py --base=/tmp/base
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import markdown_table, write_result  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("base", None, "Path of the checkout to compare against (e.g. a git worktree).")
flags.DEFINE_integer("repeats", 3, "Measurements per (version, workload).")
flags.DEFINE_list("workloads", [], "Subset of workloads (default all).")
flags.DEFINE_string("output", "benchmarks/results/core_compare.md", "Result file.")
flags.mark_flag_as_required("base")

_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import pyspiel, torch
torch.set_num_threads(1)
import games  # noqa: F401
import openspiel_cfrx
from openspiel_cfrx.deep import DeepCFRSolver

def schedule(**kw):  # the ramps / lr schedule: a Schedule object now, constructor arguments before
    try:
        from openspiel_cfrx.deep import Schedule
        return dict(schedule=Schedule(**kw))
    except ImportError:
        names = dict(train_steps_ramp="advantage_steps_ramp", train_steps_initial="advantage_steps_initial",
                     learning_rate="learning_rate_schedule")
        return {names.get(k, k): v for k, v in kw.items()}

workload = sys.argv[2]
start = time.process_time()
if workload == "deep_cfr_leduc_vectorized":
    game = pyspiel.load_game("leduc_poker")
    s = DeepCFRSolver(game, advantage_network_layers=(64, 64, 64), policy_network_layers=(64, 64, 64),
                      num_traversals=10000, traversal_backend="vectorized", learning_rate=1e-2,
                      advantage_network_train_steps=250, batch_size_advantage=2048, average_policy="sd_cfr",
                      num_iterations=12, seed=0,
                      **schedule(traversals_ramp=40, traversals_initial=3000, train_steps_ramp=40,
                                 train_steps_initial=100, learning_rate="cosine"))
    s.solve()
    seconds = time.process_time() - start
    value, extra = s.nash_conv(), s.nodes_touched / s.traversal_seconds
elif workload == "deep_cfr_leduc_state":
    game = pyspiel.load_game("leduc_poker")
    s = DeepCFRSolver(game, num_traversals=1000, advantage_network_train_steps=50, policy_network_train_steps=200,
                      num_iterations=3, seed=0)
    s.solve()
    seconds = time.process_time() - start
    value, extra = openspiel_cfrx.nash_conv(game, s), s.nodes_touched / s.traversal_seconds
elif workload in ("cfr_mix_tiny_goofspiel", "deep_cfr_mix_tiny_goofspiel"):
    from openspiel_cfrx.deep.cfr_mix import CFRMixSolver
    game = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2,num_turns=2)")
    s = CFRMixSolver(game, variant=workload.replace("_tiny_goofspiel", ""), num_iterations=6, seed=0)
    s.solve()
    seconds = time.process_time() - start
    value, extra = openspiel_cfrx.nash_conv(game, s), s.nodes_touched / s.traversal_seconds
elif workload == "poker_exploitability_fhp_5x2":
    from games.poker_exploitability import poker_nash_conv
    game = pyspiel.load_game("flop_holdem(num_ranks=5,num_suits=2)")
    s = DeepCFRSolver(game, num_traversals=200, advantage_network_train_steps=20, policy_network_train_steps=100,
                      num_iterations=1, seed=0)
    s.solve()
    start = time.process_time()
    value = poker_nash_conv(game, s)
    seconds, extra = time.process_time() - start, 0.0
print(json.dumps([seconds, float(value), float(extra)]))
"""

WORKLOADS = ("deep_cfr_leduc_vectorized", "deep_cfr_leduc_state", "cfr_mix_tiny_goofspiel",
             "deep_cfr_mix_tiny_goofspiel", "poker_exploitability_fhp_5x2")  # fmt: skip


def _measure(root: str, workload: str) -> tuple[float, float, float]:
    out = subprocess.run([sys.executable, "-c", _CHILD, os.path.abspath(root), workload],
                         capture_output=True, text=True, cwd="/", check=False)  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{workload} failed in {root}:\n{out.stderr[-3000:]}")
    return tuple(json.loads(out.stdout.strip().splitlines()[-1]))


def main(argv):
    del argv
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    load_before = os.getloadavg()[0]
    rows = []
    for workload in FLAGS.workloads or WORKLOADS:
        runs = {"base": [], "new": []}
        for _ in range(FLAGS.repeats):
            runs["base"].append(_measure(FLAGS.base, workload))
            runs["new"].append(_measure(here, workload))
        base_t, new_t = (statistics.median(r[0] for r in runs[v]) for v in ("base", "new"))
        values = {v: sorted({f"{r[1]:.12g}" for r in runs[v]}) for v in ("base", "new")}
        rates = {v: statistics.median(r[2] for r in runs[v]) for v in ("base", "new")}
        same = "yes" if values["base"] == values["new"] else "NO"
        rate = f"{rates['base']:,.0f} / {rates['new']:,.0f}" if rates["base"] else "-"
        rows.append([workload, " ".join(values["base"]), " ".join(values["new"]), same, rate,
                     f"{base_t:.2f}", f"{new_t:.2f}", f"{new_t / base_t:.3f}"])  # fmt: skip
        print(*rows[-1], flush=True)
    base_commit = subprocess.run(["git", "-C", FLAGS.base, "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True).stdout.strip()  # fmt: skip
    new_commit = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()  # fmt: skip
    table = markdown_table(
        ["workload", "NashConv old", "NashConv new", "equal", "traversal nodes/s old / new", "s old", "s new",
         "new/old"],
        rows,
    )
    text = (
        f"Old: {base_commit} (worktree {FLAGS.base}); new: {new_commit} (+ uncommitted changes if any).\n"
        f"Command: `.venv/bin/python benchmarks/bench_core_compare.py --base={FLAGS.base}"
        f" --repeats={FLAGS.repeats}`. Fresh process per measurement, old/new alternating, one torch thread, "
        f"median process time (s) of {FLAGS.repeats} runs; nodes/s is traversal throughput (median). "
        f"Load average (1 min) {load_before:.2f} before, {os.getloadavg()[0]:.2f} after. "
        f"{time.strftime('%Y-%m-%d %H:%M')}.\n\n{table}\n"
    )
    write_result(FLAGS.output, "Neural solvers before / after the shared core (issue 16)", text)
    print(text)


if __name__ == "__main__":
    app.run(main)
