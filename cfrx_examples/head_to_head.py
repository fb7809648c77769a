r"""Head-to-head poker matches with duplicate deals (same cards in both seats).

Policies are named on the command line:
  call, raise, uniform            always-call, always-raise (else call), uniform random
  cfr+:N                          our CFR+ trained N iterations (default --iterations; small games only)
  nfsp:N                          OpenSpiel's PyTorch NFSP trained N episodes (default 1000)
  deep_cfr:PATH                   a Deep CFR checkpoint saved by cfrx_examples/deep_cfr.py, or a policy
                                  file (--policy_file there; DeepCFRSolver.save_policy)

    .venv/bin/cfrx-head-to-head --game=hulh --policies=call,raise,uniform,nfsp:2000 \
        --deals=2000 --output_dir=out/h2h

Every pair plays `--deals` deals twice (seats swapped, same cards); the table
reports the row policy's winnings against the column policy in mbb/g with a
95% confidence interval, and is written as CSV and markdown.
"""

from __future__ import annotations

import itertools
import os
import time

from absl import flags
from open_spiel.python import policy as policy_lib

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
    run_config,
    run_program,
    usage_error,
    write_results,
)
from openspiel_cfrx.eval.head_to_head import always_call, always_raise, check_match_game, play_match

FLAGS = flags.FLAGS
define_common_flags(
    game="flop_holdem(num_ranks=5,num_suits=2)",
    game_help="Any 2-player zero-sum game that starts with a uniform chance deal, e.g. hulh, kuhn_poker, "
    "'flop_holdem(num_ranks=5,num_suits=2)'; results in mbb/g when the game has a big blind, else in chips.",
    iterations=100,
    iterations_help="CFR+ training iterations for a `cfr+` policy given without `:N` (`cfr+:N` overrides); "
    ">= 1. NFSP counts episodes instead (`nfsp:N`, default 1000).",
    seed_help="Seeds the deals, the action sampling of the policies, and NFSP training.",
    output_dir="out/head_to_head",
    outputs="head_to_head.csv, head_to_head.md",
    eval_every=0,
    eval_every_help="Must be 0 here: each pair's match is scored once, over all --deals; there is no training "
    "curve to evaluate (cfr+/nfsp policies are trained up front). Kept so all examples share the same flags.",
    torch_device=False,
    device_help="policies are played state by state on the CPU (NFSP and Deep CFR checkpoints included).",
)
flags.DEFINE_list("policies", ["call", "raise", "uniform"],
                  "Comma-separated policies to play round-robin: call, raise, uniform, cfr+[:N], nfsp[:N], "
                  "deep_cfr:PATH (see the module docstring).")
flags.DEFINE_integer("deals", 1000, "Duplicate deals per pair (each dealt twice, seats swapped); >= 2.")


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
        solver.run(int(arg or FLAGS.iterations))
        return solver.average_policy()
    if name == "nfsp":
        from openspiel_cfrx.contenders import make_contender

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
        from openspiel_cfrx.deep import CheckpointError

        try:
            return DeepCFRSolver.from_checkpoint(arg, game)
        except CheckpointError as e:
            usage_error(str(e))
    usage_error(f"unknown policy {spec!r}; use call, raise, uniform, cfr+:N, nfsp:N, deep_cfr:PATH")


def _check_spec(spec: str) -> None:
    """One-line refusal of a malformed --policies entry (before any training)."""
    name, colon, arg = spec.partition(":")
    if name not in _POLICY_NAMES:
        usage_error(f"unknown policy {spec!r} in --policies; use call, raise, uniform, cfr+[:N], nfsp[:N], "
                    "deep_cfr:PATH")  # fmt: skip
    if name in ("call", "raise", "uniform") and colon:
        usage_error(f"--policies entry {spec!r}: {name} takes no ':' argument")
    if name in ("cfr+", "nfsp") and colon:
        if not arg.isdigit() or int(arg) < 1:
            usage_error(f"--policies entry {spec!r}: {name}:N needs a whole number N >= 1, got {arg!r}")
    if name == "deep_cfr" and not arg:
        usage_error("deep_cfr needs a checkpoint path: deep_cfr:PATH")


_POLICY_NAMES = ("call", "raise", "uniform", "cfr+", "nfsp", "deep_cfr")


def main(argv):
    del argv
    check_output_dir()
    specs = check_list("policies")
    if len(specs) < 2:
        usage_error(f"--policies={','.join(specs)} names one policy; a round-robin needs at least two, "
                    "e.g. --policies=call,raise")  # fmt: skip
    for spec in specs:
        _check_spec(spec)
    check_number("iterations", 1)
    check_number("deals", 2)
    check_seed()
    check_writable_dir(FLAGS.output_dir, "output_dir")
    check_device(FLAGS.device, torch_device=False, cpu_only_reason="head-to-head matches are played on the CPU")
    if FLAGS.eval_every != 0:
        usage_error("--eval_every must be 0 for head_to_head.py (matches are scored once, after all --deals)")
    if FLAGS.iterations < 1:
        usage_error("--iterations must be >= 1")
    game = load_game_or_exit(FLAGS.game, check_supported=False)
    try:
        check_match_game(game)  # before any policy is trained
    except ValueError as e:
        usage_error(str(e))
    if FLAGS.deals < 2:
        usage_error("--deals must be >= 2")
    csv_path = os.path.join(FLAGS.output_dir, "head_to_head.csv")
    config = run_config(FLAGS.game, game)
    lock_run_folders(output_dir=FLAGS.output_dir)
    check_results_folder(config, csv_path)
    policies = {spec: build_policy(spec, game, FLAGS.seed) for spec in FLAGS.policies}
    rows = []
    for a, b in itertools.combinations(FLAGS.policies, 2):
        start = time.perf_counter()
        result = play_match(game, policies[a], policies[b], FLAGS.deals, seed=FLAGS.seed)
        rows.append((a, b, result))
        print(f"{a:>14} vs {b:<14} {result}   ({time.perf_counter() - start:.1f}s)", flush=True)
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    unit = "mbb/g" if rows and rows[0][2].mean_mbb is not None else "chips"
    table = []
    for a, b, r in rows:
        mean, ci = (r.mean_mbb, r.ci95_mbb) if unit == "mbb/g" else (r.mean_chips, r.ci95_chips)
        table.append({"policy_a": a, "policy_b": b, "deals": r.deals, f"mean_{unit}": f"{mean:.6g}",
                      f"ci95_{unit}": f"{ci:.6g}"})  # fmt: skip
    write_results(csv_path, table, config, ["policy_a", "policy_b", "deals", f"mean_{unit}", f"ci95_{unit}"])
    lines = [f"| A | B | A's result ({unit}, 95% CI) |", "|---|---|---|"]
    for a, b, r in rows:
        mean, ci = (r.mean_mbb, r.ci95_mbb) if unit == "mbb/g" else (r.mean_chips, r.ci95_chips)
        lines.append(f"| {a} | {b} | {mean:+.1f} ± {ci:.1f} |")
    with open(os.path.join(FLAGS.output_dir, "head_to_head.md"), "w", encoding="utf-8") as f:
        f.write(f"# {game}: {FLAGS.deals} duplicate deals per pair\n\n" + "\n".join(lines) + "\n")
    print("\n".join(lines))


def run():
    """The console script's entry point."""
    run_program(main, __name__)


if __name__ == "__main__":
    run()
