r"""Head-to-head poker matches with duplicate deals (same cards in both seats).

Policies are named on the command line:
  call, raise, uniform            always-call, always-raise (else call), uniform random
  cfr+:N                          our CFR+ trained N iterations (small games only: exact tree)
  nfsp:N                          OpenSpiel's PyTorch NFSP trained N episodes
  deep_cfr:PATH                   a Deep CFR checkpoint saved by examples/deep_cfr.py

    .venv/bin/python examples/head_to_head.py --game=hulh --policies=call,raise,uniform,nfsp:2000 \
        --deals=2000 --output_dir=out/h2h

Every pair plays `--deals` deals twice (seats swapped, same cards); the table
reports the row policy's winnings against the column policy in mbb/g with a
95% confidence interval, and is written as CSV and markdown.
"""

from __future__ import annotations

import csv
import itertools
import os
import sys
import time

from absl import app, flags
from open_spiel.python import policy as policy_lib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from examples._common import load_game_or_exit, usage_error  # noqa: E402
from openspiel_cfrx.eval.head_to_head import always_call, always_raise, play_match  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("game", "flop_holdem(num_ranks=5,num_suits=2)", "Game string (poker or any 2-player game).")
flags.DEFINE_list("policies", ["call", "raise", "uniform"], "Policies to play round-robin (see docstring).")
flags.DEFINE_integer("deals", 1000, "Duplicate deals per pair (2 hands each).")
flags.DEFINE_integer("seed", 0, "Seed for deals and action sampling.")
flags.DEFINE_string("output_dir", "out/head_to_head", "Directory for head_to_head.csv / .md.")


def build_policy(spec: str, game, seed: int):
    name, _, arg = spec.partition(":")
    if name == "call":
        return always_call(game)
    if name == "raise":
        return always_raise(game)
    if name == "uniform":
        return policy_lib.UniformRandomPolicy(game)
    if name == "cfr+":
        import openspiel_cfrx

        solver = openspiel_cfrx.CFRPlusSolver(game)
        solver.run(int(arg or 100))
        return solver.average_policy()
    if name == "nfsp":
        from openspiel_cfrx.eval.contenders import make_contender

        contender = make_contender("os_nfsp", game, seed=seed, episodes_per_step=int(arg or 1000))
        contender.step()
        return contender.policy()
    if name == "deep_cfr":
        try:
            from openspiel_cfrx import DeepCFRSolver
        except ImportError:
            usage_error("deep_cfr policies need openspiel_cfrx.DeepCFRSolver")
        if not arg:
            usage_error("deep_cfr needs a checkpoint path: deep_cfr:PATH")
        return DeepCFRSolver.load_policy(game, arg)
    usage_error(f"unknown policy {spec!r}; use call, raise, uniform, cfr+:N, nfsp:N, deep_cfr:PATH")


def main(argv):
    del argv
    game = load_game_or_exit(FLAGS.game, check_supported=False)
    if FLAGS.deals < 2:
        usage_error("--deals must be >= 2")
    policies = {spec: build_policy(spec, game, FLAGS.seed) for spec in FLAGS.policies}
    rows = []
    for a, b in itertools.combinations(FLAGS.policies, 2):
        start = time.perf_counter()
        result = play_match(game, policies[a], policies[b], FLAGS.deals, seed=FLAGS.seed)
        rows.append((a, b, result))
        print(f"{a:>14} vs {b:<14} {result}   ({time.perf_counter() - start:.1f}s)", flush=True)
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    unit = "mbb/g" if rows and rows[0][2].mean_mbb is not None else "chips"
    with open(os.path.join(FLAGS.output_dir, "head_to_head.csv"), "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["policy_a", "policy_b", "deals", f"mean_{unit}", f"ci95_{unit}"])
        for a, b, r in rows:
            mean, ci = (r.mean_mbb, r.ci95_mbb) if unit == "mbb/g" else (r.mean_chips, r.ci95_chips)
            writer.writerow([a, b, r.deals, f"{mean:.6g}", f"{ci:.6g}"])
    lines = [f"| A | B | A's result ({unit}, 95% CI) |", "|---|---|---|"]
    for a, b, r in rows:
        mean, ci = (r.mean_mbb, r.ci95_mbb) if unit == "mbb/g" else (r.mean_chips, r.ci95_chips)
        lines.append(f"| {a} | {b} | {mean:+.1f} ± {ci:.1f} |")
    with open(os.path.join(FLAGS.output_dir, "head_to_head.md"), "w", encoding="utf-8") as f:
        f.write(f"# {game}: {FLAGS.deals} duplicate deals per pair\n\n" + "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    app.run(main)
