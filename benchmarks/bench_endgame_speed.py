"""Seconds per iteration of vector CFR on the Libratus endgames, this checkout
against another checkout of the project (issue 19's speed target), side by side.

    git worktree add /tmp/base <commit>
    PYTHONPATH=. .venv/bin/python benchmarks/bench_endgame_speed.py --baseline_root=/tmp/base \
        --subgames=1,2,3,4 --out=benchmarks/results/endgame_speed.md

Each measurement is a fresh process (`--one`: one subgame, variant, update
mode and checkout) that builds the subgame's tree, runs one warm-up iteration
(compilation, board tables), then times `--iterations` iterations and one
exact evaluation in CPU seconds (`time.process_time`, float64 storage as
`examples/oftrl_endgames.py`). The checkouts alternate within every row,
so drifts of the machine hit both. Also projects the 1,000-iteration grid of
`examples/oftrl_endgames.py` (CFR, DCFR, OFTRL theory and 3 tuned multiples,
both modes, 25 evaluations per run) from the measured costs: CPU hours, and
wall hours with --jobs=2 on 2 cores (CPU / 2: the runs are independent).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

ITERATIONS = {1: 4, 2: 8, 3: 40, 4: 40}
RUNS = {"cfr": 1, "dcfr": 1, "oftrl": 4}  # runs per mode in the grid: OFTRL theory + 3 tuned multiples


def one(root: str, subgame: int, variant: str, alternating: bool, iterations: int, data_dir: str) -> dict:
    sys.path.insert(0, root)
    import numpy as np

    from games.libratus_endgames import load_endgame
    from openspiel_cfrx.poker import VectorCFR

    tree = load_endgame(subgame, data_dir).tree(threads=1)
    options = {"horizon": 1000} if variant == "oftrl" else {}
    solver = VectorCFR(tree, variant, alternating_updates=alternating, dtype=np.float64, verbose=False, **options)
    solver.iterate()
    start = time.process_time()
    for _ in range(iterations):
        solver.iterate()
    per_iteration = (time.process_time() - start) / iterations
    start = time.process_time()
    gap = solver.evaluate()["exploitability_mbb"]
    return {"iteration": per_iteration, "evaluation": time.process_time() - start, "gap": gap}


def measure(root: str, subgame: int, variant: str, alternating: bool, data_dir: str) -> dict:
    command = [sys.executable, __file__, "--one", json.dumps([root, subgame, variant, alternating,
                                                              ITERATIONS[subgame], data_dir])]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=root,
                          env={**os.environ, "PYTHONPATH": root})  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline_root", default="", help="another checkout (e.g. a git worktree); required")
    parser.add_argument("--subgames", default="1,2,3,4")
    parser.add_argument("--variants", default="cfr,dcfr,oftrl")
    parser.add_argument("--data_dir", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data",
                                                          "libratus_endgames"))  # fmt: skip
    parser.add_argument("--out", default="")
    parser.add_argument("--one", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(*json.loads(args.one))))
        return
    if not args.baseline_root:
        parser.error("--baseline_root is required: a checkout to compare with, e.g. `git worktree add /tmp/base <commit>`")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots = {"this": here, "baseline": os.path.abspath(args.baseline_root)}
    data_dir = os.path.abspath(args.data_dir)
    commits = {name: subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True).stdout.strip() for name, root in roots.items()}  # fmt: skip
    load = os.getloadavg()[0]
    lines = ["| subgame | variant | updates | baseline s/it | this s/it | speed-up | evaluation s (baseline / this) "
             "| gap after the run, mbb/g (baseline / this) |", "|---|---|---|---:|---:|---:|---|---|"]
    grid = {"baseline": 0.0, "this": 0.0}
    for subgame in [int(s) for s in args.subgames.split(",")]:
        for variant in args.variants.split(","):
            for alternating in (False, True):
                row = {name: measure(root, subgame, variant, alternating, data_dir) for name, root in roots.items()}
                base, this = row["baseline"], row["this"]
                for name in grid:
                    grid[name] += RUNS[variant] * (1000 * row[name]["iteration"] + 25 * row[name]["evaluation"])
                mode = "alternating" if alternating else "simultaneous"
                lines.append(f"| {subgame} | {variant} | {mode} | {base['iteration']:.4f} | {this['iteration']:.4f} | "
                             f"{base['iteration'] / this['iteration']:.2f}x | {base['evaluation']:.3f} / "
                             f"{this['evaluation']:.3f} | {base['gap']:.6f} / {this['gap']:.6f} |")  # fmt: skip
                print(lines[-1], flush=True)
    summary = [f"Projected 1,000-iteration grid (subgames {args.subgames}, CFR + DCFR + 4 OFTRL runs per mode, both "
               f"modes, 25 evaluations per run), from the measured costs: baseline {grid['baseline'] / 3600:.2f} CPU "
               f"hours ({grid['baseline'] / 7200:.2f} h wall with --jobs=2), this checkout {grid['this'] / 3600:.2f} "
               f"CPU hours ({grid['this'] / 7200:.2f} h wall with --jobs=2); target: <= 1 h wall."]  # fmt: skip
    print(summary[0])
    header = [
        "# Vector CFR on the Libratus endgames: seconds per iteration, this checkout vs a baseline (issue 19)",
        "",
        f"Command: `PYTHONPATH=. {os.path.relpath(sys.executable, here)} benchmarks/bench_endgame_speed.py "
        f"--baseline_root=<worktree of {commits['baseline']}> --subgames={args.subgames}`",
        "",
        f"Checkouts: this = {commits['this']}, baseline = {commits['baseline']}. Machine: {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; load average {load:.2f} at start, nothing "
        "else heavy running. CPU seconds per iteration (float64 storage), one fresh process per cell, the two "
        f"checkouts alternating; iterations timed per subgame: {ITERATIONS}.",
        "",
    ]
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(header + lines + ["", *summary, ""]))


if __name__ == "__main__":
    main()
