r"""Full flop hold'em: the Deep CFR curve of a `bench_fhp_curve.py
--game=flop_holdem --evaluator=engine` run beside the lossless tabular CFR+
curve (`benchmarks/results/poker_lossless_fhp/curve.csv`), OpenSpiel's NFSP
(`bench_full_fhp_nfsp.py`'s `nfsp.csv`, optional) and the paper's Figure 2
Deep CFR value, NashConv in mbb/g (the CFR+ file's exploitability is
NashConv / 2) against solver seconds on this machine; with
`--output_nodes`, Deep CFR and NFSP against nodes touched too (Figure 2's
x-axis; CFR+ walks the whole tree, not samples).

    .venv/bin/python benchmarks/plot_full_fhp.py --deep_cfr=benchmarks/results/full_fhp/fhp_curve.csv \
        [--deep_cfr="older settings=benchmarks/results/full_fhp/<run>/fhp_curve.csv"] \
        --nfsp=benchmarks/results/full_fhp/nfsp/nfsp.csv \
        --output=benchmarks/results/full_fhp/full_fhp_vs_lossless.png \
        --output_nodes=benchmarks/results/full_fhp/full_fhp_nodes.png
"""

from __future__ import annotations

import argparse
import csv
import os

PAPER_DEEP_CFR_MBB = 37.0  # Brown et al. 2019, Figure 2 / Section 5.2 (NashConv kind, docs/poker_games.md)
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deep_cfr", required=True, action="append",
                        help="fhp_curve.csv of a full-FHP Deep CFR run, optionally 'LABEL=PATH' (repeat the flag "
                             "for several runs)")  # fmt: skip
    parser.add_argument("--lossless", default=os.path.join(HERE, "results", "poker_lossless_fhp", "curve.csv"))
    parser.add_argument("--nfsp", default="", help="nfsp.csv of bench_full_fhp_nfsp.py")
    parser.add_argument("--output", required=True)
    parser.add_argument("--output_nodes", default="", help="also plot Deep CFR and NFSP vs nodes touched here")
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    deep = []  # (label, rows) per run
    for spec in args.deep_cfr:
        label, path = spec.split("=", 1) if "=" in spec else ("suit-symmetric MLP (this run)", spec)
        with open(path, encoding="utf-8") as f:
            deep.append((label, [r for r in csv.DictReader(f) if r["algorithm"] == "deep_cfr"]))
    with open(args.lossless, encoding="utf-8") as f:
        cfr = list(csv.DictReader(f))
    nfsp = []
    if args.nfsp:
        with open(args.nfsp, encoding="utf-8") as f:
            nfsp = sorted(csv.DictReader(f), key=lambda r: float(r["seconds"]))
    for x, path in (("seconds", args.output), ("nodes_touched", args.output_nodes)):
        if not path:
            continue
        fig, ax = plt.subplots(figsize=(8, 5.5))
        curves = [(rows, "o-" if i == 0 else "D--", f"Deep CFR, {label}") for i, (label, rows) in enumerate(deep)]
        curves.append((nfsp, "^-", "NFSP (OpenSpiel, contenders.py settings)"))
        if x == "seconds":
            curves.append(([{"seconds": r["seconds"], "nash_conv_mbb": 2 * float(r["exploitability_mbb"])} for r in cfr],
                           "s-", "lossless CFR+ on the public tree (poker_lossless_fhp)"))  # fmt: skip
        for rows, style, label in curves:
            if rows:
                ax.plot([float(r[x]) for r in rows], [float(r["nash_conv_mbb"]) for r in rows], style, label=label)
        ax.axhline(PAPER_DEEP_CFR_MBB, color="gray", ls="--", lw=1, label="paper's Deep CFR (37 mbb/g)")
        ax.set_yscale("log")
        if x == "seconds":
            ax.set_xlabel("solver seconds on the project's 2-core machine (evaluation excluded)")
        else:
            ax.set_xscale("log")
            ax.set_xlabel("nodes touched (every history a traversal or episode visits)")
        ax.set_ylabel("NashConv (mbb/g, exact)")
        ax.set_title("Full flop hold'em (52 cards)", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)  # below: clear of the curves
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
