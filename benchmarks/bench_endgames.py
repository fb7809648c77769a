"""The OFTRL paper's experiment (Farina et al. 2019, Section 6): CFR, DCFR and
OFTRL-CFR (theory and tuned stepsizes) on the four Libratus river/turn
endgames, both update modes, exact saddle-point gap at log-spaced iterations.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_endgames.py [--quick]

Full: the 1,000-iteration grid on subgames 1-4 (about an hour on 2 cores with
--jobs=2). Quick: subgames 3 and 4, 100 iterations. Writes
benchmarks/results[/quick]/endgames.md and endgames/*.png.
"""

from __future__ import annotations

import os
import sys

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import example_result  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_bool("quick", False, "Quick tier: subgames 3-4, 100 iterations, results under results/quick/.")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments {argv[1:]}; flags only (--helpfull)")
    subgames, iterations = ("3,4", 100) if FLAGS.quick else ("1,2,3,4", 1000)
    example_result(
        "endgames", "OFTRL-CFR on the Libratus endgames", "oftrl_endgames.py",
        [f"--subgames={subgames}", f"--iterations={iterations}", "--jobs=2"],
        "Saddle-point gap in mbb/g of the average strategies (the paper's Figure 2-3 y-axis) after the last "
        "iteration; OFTRL tuned = the best of stepsize multiples 10, 100, 1000 by final gap, as in the paper.",
        [f"subgame{s}_{m}.png" for s in (3, 4) for m in ("simultaneous", "alternating")],  # the river endgames
        FLAGS.quick,
    )  # fmt: skip


if __name__ == "__main__":
    app.run(main)
