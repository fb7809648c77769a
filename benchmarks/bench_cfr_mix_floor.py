"""The product-form floor of the CFR-MIX benchmark's team games (issue 22).

For each instance small enough to extract: the game value V* (team as one
player, CFR+ to NashConv <= 1e-6) and the best product-form worst case found
by `openspiel_cfrx.eval.product_floor.product_form_floor` (projected
supergradient ascent from a uniform start and random starts; a lower bound
on V_prod), each start's final value, and seconds. A variant's NashConv can
be no lower than V* - V_prod.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_cfr_mix_floor.py --out=benchmarks/results/cfr_mix_floor.md
"""

from __future__ import annotations

import argparse
import os
import sys

import pyspiel

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402,F401  (registers team_goofspiel, nest)
from benchmarks.common import markdown_table, run_header  # noqa: E402
from openspiel_cfrx.eval.product_floor import product_form_floor  # noqa: E402

INSTANCES = ("team_goofspiel(num_cards=3,num_agents=2,num_turns=2);"
             "team_goofspiel(num_cards=6,num_agents=3,num_turns=2)")  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default=INSTANCES, help="';'-separated game strings")
    parser.add_argument("--restarts", type=int, default=8)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    rows = []
    for name in args.games.split(";"):
        result = product_form_floor(pyspiel.load_game(name), restarts=args.restarts, steps=args.steps, seed=args.seed)
        starts = ", ".join(f"{v:.4f}" for v in result.restart_values)
        rows.append([f"`{name}`", f"{result.game_value:.6f} (± {result.game_value_error:.1e})",
                     f"{result.product_value:.6f}", f"{result.price_of_product_form + 0.0:.6f}".replace("-0.000000", "0.000000"), starts,
                     f"{result.seconds:.1f}"])  # fmt: skip
        print(rows[-1], flush=True)
    table = markdown_table(["game", "V* (correlated)", "best product-form worst case", "V* - product",
                            "each start's value (first: uniform)", "seconds"], rows)  # fmt: skip
    text = (f"# The product-form floor of the CFR-MIX team games\n\n{run_header(load)}\n\n"
            f"{args.restarts} starts x {args.steps} ascent steps, seed {args.seed}.\n\n{table}\n")
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
