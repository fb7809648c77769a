"""Tabular iteration speed of this checkout against another one, side by side.

Each measurement runs in a fresh subprocess (so the two versions' modules never
mix), alternating old / new, and the table reports medians and the new/old
ratio of process time per iteration.

    git worktree add /tmp/base <commit>
    .venv/bin/python benchmarks/bench_tabular_compare.py --base=/tmp/base

Writes benchmarks/results/tabular_compare.md.
"""

from __future__ import annotations

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
flags.DEFINE_list(
    "games",
    [
        "leduc_poker",
        "turn_based_simultaneous_game(game=goofspiel(num_cards=4,imp_info=True,"
        "points_order=descending))",
        "liars_dice(numdice=1,dice_sides=4)",
    ],
    "Games to time.",
)
flags.DEFINE_list("solvers", ["CFRSolver", "CFRPlusSolver", "DCFRSolver"], "Solver classes.")
flags.DEFINE_integer("iterations", 300, "Timed iterations per measurement.")
flags.DEFINE_integer("repeats", 5, "Measurements per (version, game, solver).")
flags.DEFINE_string("output", "benchmarks/results/tabular_compare.md", "Result file.")
flags.mark_flag_as_required("base")

_CHILD = r"""
import sys, time, pyspiel
sys.path.insert(0, sys.argv[1])
import openspiel_cfrx
game = pyspiel.load_game(sys.argv[2])
solver = getattr(openspiel_cfrx, sys.argv[3])(game)
solver.run(5)
start = time.process_time()
solver.run(int(sys.argv[4]))
print((time.process_time() - start) / int(sys.argv[4]))
"""


def _measure(root: str, game: str, solver: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, os.path.abspath(root), game, solver, str(FLAGS.iterations)],
        capture_output=True, text=True, cwd="/", check=True,
    )  # fmt: skip
    return float(out.stdout.strip())


def main(argv):
    del argv
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    load = os.getloadavg()[0]
    rows = []
    for game in FLAGS.games:
        for solver in FLAGS.solvers:
            times = {"base": [], "new": []}
            for _ in range(FLAGS.repeats):
                times["base"].append(_measure(FLAGS.base, game, solver))
                times["new"].append(_measure(here, game, solver))
            base, new = statistics.median(times["base"]), statistics.median(times["new"])
            rows.append([game[:60], solver, f"{base * 1e3:.4f}", f"{new * 1e3:.4f}", f"{new / base:.3f}"])
            print(*rows[-1])
    base_commit = subprocess.run(
        ["git", "-C", FLAGS.base, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    body = (
        f"- base = commit {base_commit or '?'} at {FLAGS.base}; new = this checkout\n"
        f"- load average (1 min) at start: {load:.2f}; {FLAGS.repeats} alternating runs of "
        f"{FLAGS.iterations} iterations each, fresh process per run, process time, medians\n"
        f"- finished {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n\n"
        + markdown_table(["game", "solver", "base ms/iter", "new ms/iter", "new / base"], rows)
    )
    write_result(FLAGS.output, "Tabular iteration speed: this checkout vs a base commit", body)


if __name__ == "__main__":
    app.run(main)
