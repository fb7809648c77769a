"""Lossless flop hold'em: vector CFR+ on the poker public tree (suit
isomorphism, card removal), exact exploitability at log-spaced iterations:
the "tabular CFR without abstraction" line of Deep CFR's Figure 3.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_lossless_fhp.py [--quick]

Full: 52-card flop hold'em, up to 45 minutes of solving (~3.6 GiB of arrays,
refused before allocation where memory is short). Quick: the 5x2 deck
(`flop_holdem(num_ranks=5,num_suits=2)`), 200 iterations. Writes
benchmarks/results[/quick]/lossless_fhp.md and lossless_fhp/*.png.
"""

from __future__ import annotations

import os
import sys

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import example_result  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_bool("quick", False, "Quick tier: 5x2 flop hold'em, 200 iterations, results under results/quick/.")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments {argv[1:]}; flags only (--helpfull)")
    args = (["--game=flop_holdem(num_ranks=5,num_suits=2)", "--iterations=200"] if FLAGS.quick else
            ["--game=flop_holdem", "--iterations=3000", "--max_minutes=45", "--checkpoint_minutes=15"])  # fmt: skip
    example_result(
        "lossless_fhp", "Lossless flop hold'em: vector CFR+ measured exactly", "poker_vector_cfr.py",
        ["--variant=cfr+", *args, "--fresh"],
        "CFR+ (regret matching+, linear averaging, alternating updates) on `openspiel_cfrx.poker.VectorCFR`; "
        "exploitability = NashConv / 2, exact, from the same engine; deterministic (one run).",
        ["exploitability_vs_seconds.png"], FLAGS.quick,
    )  # fmt: skip


if __name__ == "__main__":
    app.run(main)
