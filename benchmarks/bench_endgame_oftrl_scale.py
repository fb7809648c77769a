r"""OFTRL-CFR's stepsize on the Libratus river endgames (issue 19): the final
saddle-point gap of OFTRL at stepsize_scale 10^k (k = 0, 2, ..., 10; 1 is our
"theory": eqs. 14-16 with losses bounded by 3 x the largest contribution, on
chance-weighted counterfactual values), beside CFR, after the same iterations.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_endgame_oftrl_scale.py \
        --output=benchmarks/results/endgames/oftrl_scale.md
"""

from __future__ import annotations

import os
import sys
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import print_and_write  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("output", "", "Markdown file for the table (printed anyway).")
flags.DEFINE_list("subgames", ["3", "4"], "River endgames.")
flags.DEFINE_integer("iterations", 1000, "Iterations per run.")
flags.DEFINE_list("exponents", ["0", "2", "4", "6", "7", "8", "10"], "stepsize_scale = 10^k.")


def main(argv):
    del argv
    import numpy as np

    from games.libratus_endgames import load_endgame
    from openspiel_cfrx.poker import VectorCFR

    load = os.getloadavg()[0]
    header = ["subgame", "updates", "CFR"] + [f"OFTRL x1e{k}" for k in FLAGS.exponents]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for subgame in (int(s) for s in FLAGS.subgames):
        tree = load_endgame(subgame).tree(threads=2)
        factor = 3 * tree.max_abs_utility / tree.chance[tree.root_round]
        for alternating in (False, True):
            gaps = []
            for variant, scale in [("cfr", 1.0)] + [("oftrl", 10.0 ** int(k)) for k in FLAGS.exponents]:
                options = {"horizon": FLAGS.iterations, "stepsize_scale": scale} if variant == "oftrl" else {}
                solver = VectorCFR(tree, variant, alternating_updates=alternating, dtype=np.float64, verbose=False,
                                   **options)  # fmt: skip
                solver.run(FLAGS.iterations, progress=False)
                gaps.append(solver.evaluate()["nash_conv"] / 100 * 1000)
                print(subgame, alternating, variant, scale, gaps[-1], flush=True)
            mode = "alternating" if alternating else "simultaneous"
            lines.append(f"| {subgame} (3 x 20,000 / root chance = {factor:.2e}) | {mode} | "
                         + " | ".join(f"{g:,.1f}" for g in gaps) + " |")  # fmt: skip
    text = "\n".join([
        "# OFTRL-CFR stepsize on the Libratus river endgames (issue 19)", "",
        f"Saddle-point gap (mbb/g) after {FLAGS.iterations} iterations, exact. Machine: 2-core x86_64; load "
        f"average {load:.2f} at start; {time.strftime('%Y-%m-%d')}. Deterministic (no sampling).", "",
        "Command: `PYTHONPATH=. .venv/bin/python benchmarks/bench_endgame_oftrl_scale.py "
        "--output=benchmarks/results/endgames/oftrl_scale.md`", "", *lines, ""])  # fmt: skip
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
