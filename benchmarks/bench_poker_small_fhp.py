"""Small flop hold'em solved exactly: tree extraction, uniform exploitability, CFR+ / DCFR.

The game is flop hold'em with the Deep CFR paper's rules (Brown et al. 2019,
Appendix A) on a reduced deck, `flop_holdem(num_ranks=4,num_suits=2)` by
default (6.2e6 histories as OpenSpiel sees them, 15,792 infosets per player).
The script extracts the tree once with `openspiel_cfrx.get_tree`, computes the
exact NashConv of the uniform policy, then runs tabular solvers from
`openspiel_cfrx.tabular` and records exact NashConv (chips and mbb/g; NashConv
= sum of both players' best-response gains, exploitability = NashConv / 2) at
checkpoints. The process caps its own address space (`--cap_gb`) so it cannot
take a shared machine down.

Usage:
  .venv/bin/python benchmarks/bench_poker_small_fhp.py [--game "flop_holdem(num_ranks=4,num_suits=2)"] \
      [--solvers cfr+,dcfr] [--iterations 1000] [--max_seconds 240] \
      [--out benchmarks/results/poker_small_fhp.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time

import numpy as np
import pyspiel

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402,F401  (registers flop_holdem, hulh)
import openspiel_cfrx  # noqa: E402
from games import poker  # noqa: E402
from openspiel_cfrx.tabular import make_solver  # noqa: E402


def checkpoints(limit: int) -> list[int]:
    points, step = [], 1
    while step <= limit:
        for mantissa in (1, 2, 5):
            if mantissa * step <= limit:
                points.append(mantissa * step)
        step *= 10
    if points[-1] != limit:
        points.append(limit)
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="flop_holdem(num_ranks=4,num_suits=2)")
    parser.add_argument("--solvers", default="cfr+,dcfr")
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--max_seconds", type=float, default=240.0,
                        help="per solver: stop at the first checkpoint past this time")
    parser.add_argument("--cap_gb", type=float, default=6.0)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    cap = int(args.cap_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    game = pyspiel.load_game(args.game)
    start = time.perf_counter()
    tree = openspiel_cfrx.get_tree(game)
    extract_s = time.perf_counter() - start
    size = poker.game_size(poker.limit_holdem_spec(game))
    assert tree.num_histories == size.histories
    start = time.perf_counter()
    from open_spiel.python import policy as policy_lib  # noqa: PLC0415

    uniform = openspiel_cfrx.nash_conv(game, policy_lib.UniformRandomPolicy(game),
                                       return_only_nash_conv=False)
    uniform_s = time.perf_counter() - start
    lines = [
        f"# Small flop hold'em solved exactly: `{args.game}`\n",
        f"* machine: {platform.machine()}, {os.cpu_count()} cores shared with other jobs; "
        f"python {platform.python_version()}, numpy {np.__version__}",
        f"* command: `python benchmarks/bench_poker_small_fhp.py {' '.join(sys.argv[1:])}`",
        f"* tree: {tree.num_histories:,} histories, {tree.num_terminals:,} terminals, "
        f"{tree.num_infosets_of(0):,} + {tree.num_infosets_of(1):,} infosets; extracted in "
        f"{extract_s:.0f} s; arrays {tree.memory_bytes()['total'] / 2**20:.0f} MiB",
        f"* uniform policy: NashConv {uniform.nash_conv:.3f} chips = "
        f"{poker.chips_to_mbb_per_game(uniform.nash_conv):,.1f} mbb/g (best-response gains "
        f"{uniform.player_improvements[0]:.3f} / {uniform.player_improvements[1]:.3f}); "
        f"exploitability {uniform.exploitability:.3f} chips; {uniform_s:.1f} s",
        "* NashConv below is of the average strategy, exact, on the extracted tree; "
        "mbb/g = chips * 10 (big blind 100).\n",
        "| solver | iteration | NashConv (chips) | NashConv (mbb/g) | solver seconds |",
        "|---|---:|---:|---:|---:|",
    ]
    print("\n".join(lines), flush=True)
    for name in args.solvers.split(","):
        solver = make_solver(name, tree)
        solve_s = 0.0
        done = 0
        for point in checkpoints(args.iterations):
            start = time.perf_counter()
            solver.run(point - done)
            solve_s += time.perf_counter() - start
            done = point
            value = solver.nash_conv()
            row = (f"| {name} | {point} | {value:.4f} | "
                   f"{poker.chips_to_mbb_per_game(value):.2f} | {solve_s:.1f} |")
            lines.append(row)
            print(row, flush=True)
            if solve_s > args.max_seconds:
                break
    lines.append(f"\npeak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    print(lines[-1])
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
