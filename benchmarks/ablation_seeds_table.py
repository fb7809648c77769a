"""Figure 4's ablations over seeds (issue 21): per variant, Deep CFR's NashConv
at each checkpoint (mean ± 95% t-interval over seeds) and its difference from
the baseline, paired by seed, from `bench_fhp_curve.py --iterations=...` CSVs.

    PYTHONPATH=. .venv/bin/python benchmarks/ablation_seeds_table.py \\
        baseline=benchmarks/results/fhp_ablations/abl_baseline.csv,.../abl_baseline_seed1.csv,... \\
        fine_tune=...,...,... > /tmp/table.md

Each argument is `name=csv,csv,...` (one CSV per seed, seeds in the same order
for every variant); the first argument is the baseline.
"""

from __future__ import annotations

import csv
import sys

import numpy as np

from benchmarks.fhp_seeds_table import band


def read(path: str) -> dict[int, tuple[float, float]]:
    """{iterations: (average-network NashConv, current-iterate NashConv)} in mbb/g."""
    with open(path, encoding="utf-8") as f:
        return {int(r["steps"]): (float(r["nash_conv_mbb"]), float(r.get("current_nash_conv_mbb") or "nan"))
                for r in csv.DictReader(f) if r["algorithm"] == "deep_cfr"}  # fmt: skip


def main(args: list[str]) -> None:
    variants = []
    for arg in args:
        name, _, paths = arg.partition("=")
        if not paths:
            raise SystemExit(f"expected name=csv,csv,...; got {arg!r}")
        variants.append((name, [read(p) for p in paths.split(",")]))
    base_name, base = variants[0]
    seeds = {len(runs) for _, runs in variants}
    if len(seeds) != 1:
        raise SystemExit(f"every variant needs the same number of seeds; got {sorted(seeds)}")
    checkpoints = sorted(set.intersection(*(set(run) for _, runs in variants for run in runs)))
    last = checkpoints[-1]
    print(f"| variant | seeds | NashConv (mbb/g, mean ± 95%) at {' / '.join(map(str, checkpoints))} iterations "
          f"| minus {base_name} at {last}, paired by seed (mean ± 95%) | current iterate at {last} |")  # fmt: skip
    print("|---|---|---|---|---|")
    for name, runs in variants:
        at = " / ".join(band([run[c][0] for run in runs]) for c in checkpoints)
        diff = "" if name == base_name else band(np.subtract([r[last][0] for r in runs], [r[last][0] for r in base]))
        print(f"| {name} | {len(runs)} | {at} | {diff} | {band([run[last][1] for run in runs])} |")


if __name__ == "__main__":
    main(sys.argv[1:])
