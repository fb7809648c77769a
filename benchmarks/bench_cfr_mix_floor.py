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
import time

import numpy as np
import pyspiel

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402,F401  (registers team_goofspiel, nest)
from benchmarks.common import markdown_table, run_header  # noqa: E402
from games.team_goofspiel_worst_case import exact_goofspiel_team_worst_case  # noqa: E402
from openspiel_cfrx.eval.product_floor import product_form_floor  # noqa: E402

INSTANCES = ("team_goofspiel(num_cards=3,num_agents=2,num_turns=2);"
             "team_goofspiel(num_cards=6,num_agents=3,num_turns=2)")  # fmt: skip


class RelayTeam:
    """A pure product-form team strategy for team Goofspiel (win/loss returns,
    descending point cards): in round r (0-based) agent r bids its highest
    card and every other agent its lowest. The adversary can tie at most one
    of the two top bids (it holds one top card), so some agent wins a point
    card with the adversary on 0 points: worst case +1, the largest utility.
    A certificate that V* = V_prod = 1 where the game is too large to extract."""

    def __init__(self, game):
        self.num_agents, self.width = game.num_team_agents(), max(game.agent_num_actions())

    def agent_strategies(self, states):
        out = []
        for state in states:
            legal = [state.legal_agent_actions(i) for i in range(self.num_agents)]
            round_index = self.width - len(legal[0])
            strategy = np.zeros((self.num_agents, self.width))
            for agent, actions in enumerate(legal):
                strategy[agent, max(actions) if agent == round_index else min(actions)] = 1.0
            out.append(strategy)
        return out


def certificate(name: str):
    """(worst case of `RelayTeam`, seconds) on a large team Goofspiel, exactly."""
    start = time.perf_counter()
    game = pyspiel.load_game(name)
    result = exact_goofspiel_team_worst_case(game, RelayTeam(game))
    return result.value, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default=INSTANCES, help="';'-separated game strings")
    parser.add_argument("--restarts", type=int, default=8)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--certify", default="team_goofspiel(num_cards=6,num_agents=4,num_turns=2)",
                        help="';'-separated team Goofspiel games too large to extract, certified by RelayTeam")
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
    certified = []
    for name in filter(None, args.certify.split(";")):
        value, seconds = certificate(name)
        certified.append([f"`{name}`", f"{value:.6f}", f"{seconds:.1f}"])
        print(certified[-1], flush=True)
    text = (f"# The product-form floor of the CFR-MIX team games\n\n{run_header(load)}\n\n"
            f"{args.restarts} starts x {args.steps} ascent steps, seed {args.seed}.\n\n{table}\n")
    if certified:
        text += ("\nToo large to extract: the pure product-form team strategy `RelayTeam` (round r: agent r bids "
                 "its highest card, the others their lowest) evaluated by the exact team worst case "
                 "(`games.team_goofspiel_worst_case`). A worst case of 1 (the largest utility) certifies "
                 "V* = V_prod = 1, i.e. a product-form floor of 0.\n\n"
                 + markdown_table(["game", "worst case of RelayTeam", "seconds"], certified) + "\n")
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
