r"""Swapping our solvers into a typical OpenSpiel script: one constructor changes.

The script below is the usual OpenSpiel shape (load game, solver loop with
`evaluate_and_update_policy()`, `exploitability.nash_conv(game,
solver.average_policy())`). Run it with `--impl=openspiel` for OpenSpiel's
solver and `--impl=cfrx` for ours; everything else, including OpenSpiel's own
evaluators, best response, policy aggregator and bots, is untouched.

    .venv/bin/cfrx-openspiel-swap --game=leduc_poker --solver=dcfr --iterations=200
"""

from __future__ import annotations

import os
import time

import numpy as np
from absl import flags
from open_spiel.python.algorithms import best_response, cfr, discounted_cfr, exploitability
from open_spiel.python.algorithms import evaluate_bots as evaluate_bots_lib
from open_spiel.python.bots import policy as policy_bot

import openspiel_cfrx
from cfrx_examples._common import (
    check_number,
    check_output_dir,
    check_results_folder,
    check_seed,
    check_writable_dir,
    define_allow_changed_flag,
    load_game_or_exit,
    lock_run_folders,
    run_config,
    run_program,
    write_results,
)

FLAGS = flags.FLAGS
flags.DEFINE_string("game", "kuhn_poker", "OpenSpiel game string.")
flags.DEFINE_enum("solver", "cfr", ["cfr", "cfr_plus", "dcfr"], "Which CFR variant.")
flags.DEFINE_enum("impl", "both", ["openspiel", "cfrx", "both"], "Whose solver to run.")
flags.DEFINE_integer("iterations", 100, "Solver iterations.")
flags.DEFINE_integer("seed", 0, "Seed for the bot matches.")
flags.DEFINE_integer("episodes", 200, "Episodes of evaluate_bots self-play (>= 1).")
flags.DEFINE_string("output_dir", "out/openspiel_swap", "Directory for results.csv (one row per implementation); "
                    "created if missing; one run at a time, results of another configuration are refused.")
define_allow_changed_flag()

# The only lines that differ between OpenSpiel and openspiel_cfrx:
OPENSPIEL = {"cfr": cfr.CFRSolver, "cfr_plus": cfr.CFRPlusSolver, "dcfr": discounted_cfr.DCFRSolver}
CFRX = {
    "cfr": openspiel_cfrx.CFRSolver,
    "cfr_plus": openspiel_cfrx.CFRPlusSolver,
    "dcfr": openspiel_cfrx.DCFRSolver,
}


def typical_openspiel_script(game, solver_cls, iterations, seed, episodes):
    """Unchanged OpenSpiel pipeline; only `solver_cls` varies."""
    start = time.perf_counter()
    solver = solver_cls(game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    seconds = time.perf_counter() - start
    average = solver.average_policy()
    conv = exploitability.nash_conv(game, average)
    br_value = best_response.BestResponsePolicy(game, 1, average).value(game.new_initial_state())
    rng = np.random.RandomState(seed)
    bots = [policy_bot.PolicyBot(p, rng, average) for p in range(2)]
    returns = np.mean(
        [evaluate_bots_lib.evaluate_bots(game.new_initial_state(), bots, rng) for _ in range(episodes)],
        axis=0,
    )
    return seconds, conv, br_value, returns


def main(argv):
    del argv
    check_output_dir()
    check_number("iterations", 1)
    check_number("episodes", 1)
    check_seed()
    check_writable_dir(FLAGS.output_dir, "output_dir")
    game = load_game_or_exit(FLAGS.game)
    impls = ["openspiel", "cfrx"] if FLAGS.impl == "both" else [FLAGS.impl]
    path = os.path.join(FLAGS.output_dir, "results.csv")
    config = run_config(FLAGS.game, game)
    lock_run_folders(output_dir=FLAGS.output_dir)
    check_results_folder(config, path)
    rows = []
    print(f"{'impl':<10} {'solve s':>8} {'NashConv (OpenSpiel)':>21} {'BR value p1':>12} {'self-play returns':>20}")
    for impl in impls:
        solver_cls = (OPENSPIEL if impl == "openspiel" else CFRX)[FLAGS.solver]
        seconds, conv, br_value, returns = typical_openspiel_script(
            game, solver_cls, FLAGS.iterations, FLAGS.seed, FLAGS.episodes
        )
        print(f"{impl:<10} {seconds:>8.2f} {conv:>21.10f} {br_value:>12.6f} "
              f"{np.array2string(returns, precision=3):>20}")  # fmt: skip
        rows.append(dict(impl=impl, solver=FLAGS.solver, iterations=FLAGS.iterations, solve_seconds=f"{seconds:.4f}",
                         nash_conv=f"{conv:.12g}", br_value_p1=f"{br_value:.10g}",
                         returns_p0=f"{returns[0]:.6g}", returns_p1=f"{returns[1]:.6g}"))  # fmt: skip
    write_results(path, rows, config)
    print(f"wrote {path}")


def run():
    """The console script's entry point."""
    run_program(main, __name__)


if __name__ == "__main__":
    run()
