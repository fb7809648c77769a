r"""Re-evaluates committed small-FHP results with the poker public-tree engine
(issue 18): OpenSpiel's C++ ES-MCCFR is deterministic for a seed, so its
policies at the iteration counts reported in `benchmarks/results/fhp_curve.md`
can be rebuilt exactly and measured again through `poker_nash_conv`, which now
runs on `openspiel_cfrx.poker.PublicTree`.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_poker_reevaluate.py \
        --output=benchmarks/results/poker_reevaluate.md
"""

from __future__ import annotations

import os
import platform
import sys
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import print_and_write  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("output", "", "Markdown file for the table (printed anyway).")

GAME = "flop_holdem(num_ranks=5,num_suits=2)"
# (iterations, NashConv in chips) of os_es_mccfr, seed 0, in benchmarks/results/fhp_curve.md
COMMITTED = [(46_000, 193.846), (106_000, 131.833), (204_000, 82.164)]


def main(argv):
    del argv
    import pyspiel

    import games  # noqa: F401
    from games.poker_exploitability import poker_nash_conv

    game = pyspiel.load_game(GAME)
    solver = pyspiel.ExternalSamplingMCCFRSolver(game, seed=0)
    done, rows = 0, []
    for iterations, committed in COMMITTED:
        while done < iterations:
            solver.run_iteration()
            done += 1
        start = time.perf_counter()
        value = poker_nash_conv(game, solver.average_policy())
        rows.append((iterations, committed, value, time.perf_counter() - start))
    lines = ["# Committed small-FHP numbers re-evaluated with the poker engine (issue 18)", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
             f"load average {os.getloadavg()[0]:.2f} at the end.",
             "Command: `PYTHONPATH=. .venv/bin/python benchmarks/bench_poker_reevaluate.py "
             "--output=benchmarks/results/poker_reevaluate.md`", "",
             f"OpenSpiel's C++ ES-MCCFR on `{GAME}`, seed 0 (deterministic), rebuilt at the iteration counts "
             "of `benchmarks/results/fhp_curve.md` and evaluated by `poker_nash_conv` (now the public-tree "
             "engine's front door).", "",
             "| ES-MCCFR iterations | committed NashConv (chips, fhp_curve.md) | engine NashConv (chips) | "
             "difference | evaluation s |", "|---:|---:|---:|---:|---:|"]  # fmt: skip
    for iterations, committed, value, seconds in rows:
        lines.append(f"| {iterations:,} | {committed:.3f} | {value:.6f} | {value - committed:+.1e} | {seconds:.1f} |")
    text = "\n".join(lines) + "\n"
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
