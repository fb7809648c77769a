"""Tables over seeds: Deep CFR vs ES-MCCFR on 5x2 FHP, from `bench_fhp_curve.py`
CSVs (issue 21).

Equal nodes (Deep CFR vs OpenSpiel's Python, node-counting ES-MCCFR, from
`--match-nodes` runs):

    PYTHONPATH=. .venv/bin/python benchmarks/fhp_seeds_table.py \\
        benchmarks/results/fhp_curve/2026-11-25/fhp_curve.csv benchmarks/results/fhp_seeds/seed1.csv \\
        benchmarks/results/fhp_seeds/seed2.csv > /tmp/table.md

Equal seconds (Deep CFR vs OpenSpiel's C++ ES-MCCFR, from timing runs):

    PYTHONPATH=. .venv/bin/python benchmarks/fhp_seeds_table.py --against=os_es_mccfr seed0.csv seed1.csv ...

`--plot=PNG` also draws both curves as the mean over seeds with its 95%
t-band, against the mean seconds (equal seconds) or nodes touched (equal nodes).

Each CSV is one seed (in the order given: seeds 0, 1, 2, ...); Deep CFR's k-th
checkpoint is paired with the other algorithm's k-th (taken at Deep CFR's node
count, or at the same seconds). At equal seconds the C++ ES-MCCFR may stop
earlier (a run to 300 s beside Deep CFR's 900 s: its checkpoints are Deep CFR's
first ones); later rows show Deep CFR alone. Rows are keyed
by checkpoint index, so runs whose iteration counts differ by seed (wall-clock
budgets) line up by checkpoint.
"""

from __future__ import annotations

import argparse
import csv

import numpy as np
from scipy import stats


def _half_width(values) -> float:
    """Half-width of the 95% t-interval of the mean (0 for one value)."""
    v = np.asarray(values, dtype=float)
    return float(stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0


def band(values, digits: int = 1, unit: str = "") -> str:
    """Mean and 95% t-interval half-width over seeds."""
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return f"{v.mean():,.{digits}f}{unit}"
    return f"{v.mean():,.{digits}f}{unit} ± {_half_width(v):,.{digits}f}"


def read_pairs(paths: list[str], against: str) -> dict[int, list[tuple[int, dict, dict]]]:
    """{checkpoint index: [(seed, Deep CFR row, other row), ...]}."""
    rows: dict[int, list] = {}
    for seed, path in enumerate(paths):
        with open(path, encoding="utf-8") as f:
            data = list(csv.DictReader(f))
        deep = [r for r in data if r["algorithm"] == "deep_cfr"]
        other = [r for r in data if r["algorithm"] == against]
        shorter_ok = against == "os_es_mccfr" and 0 < len(other) <= len(deep)  # ES-MCCFR run to an earlier budget
        if not deep or (len(deep) != len(other) and not shorter_ok):
            raise SystemExit(f"{path}: {len(deep)} deep_cfr and {len(other)} {against} checkpoints; "
                             f"need the same non-zero number (pass the CSV of a run with both)")  # fmt: skip
        for k, d in enumerate(deep):
            rows.setdefault(k, []).append((seed, d, other[k] if k < len(other) else None))
    return rows


def _mbb(row: dict) -> float:
    return float(row["nash_conv_mbb"])


def _over_seeds(rows: dict):
    """(checkpoint index, Deep CFR's NashConvs, the other's) over seeds (the
    other's empty past its last checkpoint)."""
    for k in sorted(rows):
        yield k, [_mbb(r[1]) for r in rows[k]], [_mbb(r[2]) for r in rows[k] if r[2] is not None]


def equal_nodes(rows: dict) -> None:
    print("| checkpoint (Deep CFR iterations) | seed | nodes touched (Deep CFR / ES) | Deep CFR mbb/g | "
          "ES-MCCFR mbb/g | Deep CFR below? | Deep CFR BR gains P0 / P1 (chips) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for k in sorted(rows):
        for seed, d, e in rows[k]:
            print(f"| {k + 1} ({d['steps']}) | {seed} | {int(d['nodes_touched']):,} / {int(e['nodes_touched']):,} | "
                  f"{_mbb(d):,.1f} | {_mbb(e):,.1f} | {'yes' if _mbb(d) < _mbb(e) else 'NO'} | "
                  f"{float(d['br_gain_p0']):.2f} / {float(d['br_gain_p1']):.2f} |")  # fmt: skip
    print()
    print("| checkpoint | seeds | Deep CFR mbb/g (mean ± 95%) | ES-MCCFR mbb/g (mean ± 95%) | "
          "Deep CFR - ES, paired by seed (mean ± 95%) |")  # fmt: skip
    print("|---|---|---|---|---|")
    for k, d, e in _over_seeds(rows):
        print(f"| {k + 1} | {len(d)} | {band(d)} | {band(e)} | {band(np.subtract(d, e))} |")


def equal_seconds(rows: dict) -> None:
    """Ratio to ES-MCCFR at the same seconds, and whether Deep CFR and both of
    its best-response gains fell since the previous checkpoint, seed by seed."""
    print("| checkpoint | seed | seconds (Deep CFR / ES) | Deep CFR iterations | Deep CFR mbb/g | ES-MCCFR mbb/g | "
          "ratio | Deep CFR BR gains P0 / P1 (chips) | all three fell? |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    previous: dict[int, dict] = {}
    for k in sorted(rows):
        for seed, d, e in rows[k]:
            fell = ""
            if seed in previous:
                p = previous[seed]
                fell = "yes" if all(float(d[c]) < float(p[c]) for c in ("nash_conv_mbb", "br_gain_p0", "br_gain_p1")) else "NO"  # fmt: skip
            previous[seed] = d
            es = ("–", "–", "–") if e is None else (f"{float(e['seconds']):.0f}", f"{_mbb(e):,.1f}",
                                                     f"{_mbb(d) / _mbb(e):.2f}x")  # fmt: skip
            print(f"| {k + 1} | {seed} | {float(d['seconds']):.0f} / {es[0]} | {d['steps']} | "
                  f"{_mbb(d):,.1f} | {es[1]} | {es[2]} | "
                  f"{float(d['br_gain_p0']):.2f} / {float(d['br_gain_p1']):.2f} | {fell} |")  # fmt: skip
    print()
    print("| checkpoint | seeds | seconds (mean) | Deep CFR mbb/g (mean ± 95%) | ES-MCCFR mbb/g (mean ± 95%) | "
          "ratio Deep CFR / ES (mean ± 95%) |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for k, d, e in _over_seeds(rows):
        s = np.mean([float(r[1]["seconds"]) for r in rows[k]])
        ratio = band(np.divide(d, e), 2, "x") if len(e) == len(d) else "–"
        print(f"| {k + 1} | {len(d)} | {s:.0f} | {band(d)} | {band(e) if e else '–'} | {ratio} |")


def plot(rows: dict, against: str, path: str) -> None:
    """Mean NashConv over seeds with its 95% t-band, per algorithm, against the
    mean seconds (equal seconds) or Deep CFR's mean nodes touched (equal nodes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_nodes = against != "os_es_mccfr"
    column = "nodes_touched" if by_nodes else "seconds"
    checkpoints = sorted(rows)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for which, name in ((1, "deep_cfr"), (2, against)):
        shown = [k for k in checkpoints if all(r[which] is not None for r in rows[k])]
        x = [np.mean([float(r[1 if by_nodes else which][column]) for r in rows[k]]) for k in shown]
        y = [[_mbb(r[which]) for r in rows[k]] for k in shown]
        mean = np.array([np.mean(v) for v in y])
        half = np.array([_half_width(v) for v in y])
        ax.plot(x, mean, "o-", label=f"{name} (mean of {len(y[0])} seeds)")
        ax.fill_between(x, np.maximum(mean - half, 1e-3), mean + half, alpha=0.25)
    ax.set_yscale("log")
    if by_nodes:
        ax.set_xscale("log")
        ax.set_xlabel("nodes touched (Deep CFR's checkpoints; ES-MCCFR run to the same counts)")
    else:
        ax.set_xlabel("solver seconds (evaluation excluded; 1 CPU thread)")
    ax.set_ylabel("NashConv (mbb/g, exact), 95% t-band over seeds")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csvs", nargs="+", help="one bench_fhp_curve.py CSV per seed, seed 0 first")
    parser.add_argument("--against", default="os_es_mccfr_py",
                        help="os_es_mccfr_py (equal nodes, the default) or os_es_mccfr (equal seconds)")  # fmt: skip
    parser.add_argument("--plot", default="", help="also draw the mean curves with 95%% bands to this PNG")
    args = parser.parse_args(argv)
    rows = read_pairs(args.csvs, args.against)
    (equal_seconds if args.against == "os_es_mccfr" else equal_nodes)(rows)
    if args.plot:
        plot(rows, args.against, args.plot)


if __name__ == "__main__":
    main()
