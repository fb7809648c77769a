"""Equal-nodes table over seeds: Deep CFR vs OpenSpiel's (Python, node-counting)
ES-MCCFR on 5x2 FHP, from `bench_fhp_curve.py --match-nodes` CSVs (issue 21).

    PYTHONPATH=. .venv/bin/python benchmarks/fhp_seeds_table.py \\
        benchmarks/results/fhp_curve/2026-11-25/fhp_curve.csv benchmarks/results/fhp_seeds/seed1.csv \\
        benchmarks/results/fhp_seeds/seed2.csv > /tmp/table.md

Each CSV is one seed (in the order given: seeds 0, 1, 2, ...); Deep CFR's k-th
checkpoint is paired with ES-MCCFR's k-th, taken at Deep CFR's node count.
"""

from __future__ import annotations

import csv
import sys

import numpy as np
from scipy import stats


def band(values) -> str:
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return f"{v.mean():,.1f}"
    return f"{v.mean():,.1f} ± {stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v)):,.1f}"


def main(paths: list[str]) -> None:
    rows: dict[int, list] = {}
    for seed, path in enumerate(paths):
        with open(path, encoding="utf-8") as f:
            data = list(csv.DictReader(f))
        deep = [r for r in data if r["algorithm"] == "deep_cfr"]
        es = [r for r in data if r["algorithm"] == "os_es_mccfr_py"]
        for d, e in zip(deep, es, strict=True):
            rows.setdefault(int(d["steps"]), []).append(
                (seed, float(d["nash_conv_mbb"]), float(e["nash_conv_mbb"]), int(d["nodes_touched"]),
                 int(e["nodes_touched"]), float(d["br_gain_p0"]), float(d["br_gain_p1"])))  # fmt: skip
    print("| Deep CFR iterations | seed | nodes touched (Deep CFR / ES) | Deep CFR mbb/g | ES-MCCFR mbb/g | "
          "Deep CFR below? | Deep CFR BR gains P0 / P1 (chips) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for it in sorted(rows):
        for seed, d, e, nd, ne, g0, g1 in rows[it]:
            print(f"| {it} | {seed} | {nd:,} / {ne:,} | {d:,.1f} | {e:,.1f} | {'yes' if d < e else 'NO'} | "
                  f"{g0:.2f} / {g1:.2f} |")  # fmt: skip
    print()
    print("| Deep CFR iterations | seeds | Deep CFR mbb/g (mean ± 95%) | ES-MCCFR mbb/g (mean ± 95%) | "
          "Deep CFR - ES, paired by seed (mean ± 95%) |")  # fmt: skip
    print("|---|---|---|---|---|")
    for it in sorted(rows):
        d = [r[1] for r in rows[it]]
        e = [r[2] for r in rows[it]]
        print(f"| {it} | {len(d)} | {band(d)} | {band(e)} | {band(np.subtract(d, e))} |")


if __name__ == "__main__":
    main(sys.argv[1:])
