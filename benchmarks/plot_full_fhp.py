r"""Full flop hold'em: the Deep CFR curve of a `bench_fhp_curve.py
--game=flop_holdem --evaluator=engine` run beside the lossless tabular CFR+
curve (`benchmarks/results/poker_lossless_fhp/curve.csv`) and the paper's
Figure 2 Deep CFR value, NashConv in mbb/g (the CFR+ file's exploitability is
NashConv / 2) against solver seconds on this machine.

    .venv/bin/python benchmarks/plot_full_fhp.py --deep_cfr=benchmarks/results/full_fhp/fhp_curve.csv \
        --output=benchmarks/results/full_fhp/full_fhp_vs_lossless.png
"""

from __future__ import annotations

import argparse
import csv
import os

PAPER_DEEP_CFR_MBB = 37.0  # Brown et al. 2019, Figure 2 / Section 5.2 (NashConv kind, docs/poker_games.md)
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deep_cfr", required=True, help="fhp_curve.csv of the full-FHP Deep CFR run")
    parser.add_argument("--lossless", default=os.path.join(HERE, "results", "poker_lossless_fhp", "curve.csv"))
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(args.deep_cfr, encoding="utf-8") as f:
        deep = [r for r in csv.DictReader(f) if r["algorithm"] == "deep_cfr"]
    with open(args.lossless, encoding="utf-8") as f:
        cfr = list(csv.DictReader(f))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot([float(r["seconds"]) for r in deep], [float(r["nash_conv_mbb"]) for r in deep], "o-",
            label="Deep CFR, suit-symmetric MLP (this run)")  # fmt: skip
    ax.plot([float(r["seconds"]) for r in cfr], [2 * float(r["exploitability_mbb"]) for r in cfr], "s-",
            label="lossless CFR+ on the public tree (poker_lossless_fhp)")  # fmt: skip
    ax.axhline(PAPER_DEEP_CFR_MBB, color="gray", ls="--", lw=1, label="paper's Deep CFR (37 mbb/g)")
    ax.set_yscale("log")
    ax.set_xlabel("solver seconds on the project's 2-core machine (evaluation excluded)")
    ax.set_ylabel("NashConv (mbb/g, exact)")
    ax.set_title("Full flop hold'em (52 cards)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
