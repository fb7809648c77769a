"""CFR-MIX benchmark: variants at equal wall-clock (paper Figs. 3-4, scaled down).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_cfr_mix.py [--quick]

Writes benchmarks/results/cfr_mix.md and CSV/PNG under benchmarks/results/cfr_mix/.
Parts: (1) tiny team Goofspiel, exact NashConv (team as one player) for every
variant and joint-action Deep CFR; (2) NEST 3x3 with 2 pursuers, sampled team
worst-case utility; (3) scale: 10-card 6-agent Goofspiel (10^6 joint bids),
CFR-MIX iterations and worst case, next to what joint-action Deep CFR would
need.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pyspiel  # noqa: E402

import games  # noqa: E402, F401
from benchmarks.common import markdown_table, write_result  # noqa: E402
from examples.cfr_mix import run_variants, write_points  # noqa: E402
from openspiel_cfrx.deep.cfr_mix import CFRMixSolver  # noqa: E402
from openspiel_cfrx.eval.team_best_response import sampled_team_worst_case  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
QUICK = "--quick" in sys.argv


def _final(points):
    last = {}
    for p in points:
        last[p.variant] = p
    return last


def part(name, game_string, variants, seconds, exact, traversals, train_steps, eval_every, particles, eval_games):
    game = pyspiel.load_game(game_string)
    points = run_variants(game, variants, seconds, 10_000, traversals, [64, 64], train_steps, 64, eval_every,
                          exact, particles, eval_games, seed=0)  # fmt: skip
    write_points(points, os.path.join(OUT, "cfr_mix", name), game_string)
    rows = [[v, p.iteration, f"{p.seconds:.0f}", p.metric, f"{p.value:.4f}", f"{p.ci95:.3f}"]
            for v, p in _final(points).items()]  # fmt: skip
    return markdown_table(["variant", "iterations", "solver s", "metric", "final value", "ci95"], rows)


def scale_part():
    game_string = "team_goofspiel(num_cards=10,num_agents=6,num_turns=2)"
    game = pyspiel.load_game(game_string)
    solver = CFRMixSolver(game, num_traversals=10, joint_cap=32, regret_train_steps=30, policy_train_steps=30)
    before = sampled_team_worst_case(game, solver, num_particles=20, num_eval_games=300, seed=1)
    start = time.perf_counter()
    iterations = 2 if QUICK else 4
    for _ in range(iterations):
        solver.run_iteration()
    spent = time.perf_counter() - start
    after = sampled_team_worst_case(game, solver, num_particles=20, num_eval_games=300, seed=2)
    joint = game.num_distinct_actions()
    head_params = 64 * joint + joint
    memory_entry = 4 * 255 + 5 * joint
    lines = [
        f"`{game_string}`: {joint:,} joint bids per team information set.",
        "",
        markdown_table(
            ["", "team worst case (held-out, 95% CI)", "in-sample"],
            [
                ["uniform (before)", f"{before.value:.3f} +- {before.ci95:.3f}", f"{before.in_sample_value:.3f}"],
                [f"CFR-MIX after {iterations} iterations ({spent:.0f} s)", f"{after.value:.3f} +- {after.ci95:.3f}",
                 f"{after.in_sample_value:.3f}"],  # fmt: skip
            ],
        ),
        "",
        f"CFR-MIX team regret network: {solver.num_parameters():,} parameters (shared by the 6 agents).",
        f"Joint-action Deep CFR here: output head alone {head_params:,} parameters "
        f"({4 * head_params / 2**20:.0f} MiB per network, x3 networks), one advantage-memory entry "
        f"{memory_entry / 2**20:.1f} MiB (targets + legal mask over 10^6 actions), so the paper's 10^6-entry "
        f"memory would need {memory_entry * 1e6 / 2**40:.1f} TiB; external sampling would expand all "
        f"{joint:,} joint bids at every team node of every traversal.",
    ]
    return "\n".join(lines)


def main():
    sections = []
    tiny_seconds = 15 if QUICK else 40
    sections.append("## Tiny team Goofspiel (3 cards, 2 agents, 2 rounds): exact NashConv, equal wall-clock\n")
    sections.append(part("goofspiel_3c2p2r", "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)",
                         ["cfr_mix", "cfr_mix_no_sharing", "deep_cfr_mix", "independent", "double_neural_joint",
                          "deep_cfr"], tiny_seconds, True, 30, 60, 3, 0, 0))  # fmt: skip
    sections.append("\n## NEST 3x3, 2 pursuers: sampled team worst-case utility (higher is better)\n")
    sections.append(part("nest_3x3_2", "nest(rows=3,cols=3,num_pursuers=2)",
                         ["cfr_mix", "independent", "double_neural_joint"], 10 if QUICK else 30, False, 30, 40,
                         4, 40, 400))  # fmt: skip
    sections.append("\n## Scale: 10 cards, 6 agents\n")
    sections.append(scale_part())
    body = "\n".join(sections) + f"\n\nCommand: `PYTHONPATH=. .venv/bin/python {' '.join(sys.argv)}`; torch threads 1."
    write_result(os.path.join(OUT, "cfr_mix.md"), "CFR-MIX benchmark", body)


if __name__ == "__main__":
    main()
