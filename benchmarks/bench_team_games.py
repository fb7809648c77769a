"""Random-playout speed of the team games, next to OpenSpiel's C++ goofspiel.

Also shows that the factored team calls (`openspiel_cfrx.team`) play a
10-card, 6-agent team Goofspiel (10^6 joint bids at the first decision) without
ever building the joint action list, and what building it would cost.

    .venv/bin/python benchmarks/bench_team_games.py \
        --output benchmarks/results/team_games.md

A "step" is one `apply_action` (chance, team or adversary); team moves are
drawn agent by agent with `team.sample_uniform_joint_action` (uniform over the
legal joint actions), other moves with `random.choice(legal_actions())`.
"""

from __future__ import annotations

import os
import random
import sys
import time
import tracemalloc

import pyspiel
from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402,F401  (registers team_goofspiel, nest)
from benchmarks.common import markdown_table, write_result  # noqa: E402
from openspiel_cfrx import team  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_float("seconds_per_row", 2.0, "Wall-clock budget of playouts per table row.")
flags.DEFINE_integer("seed", 0, "Seed of the playout RNG.")
flags.DEFINE_string(
    "output", "benchmarks/results/team_games.md", "Markdown result file (empty: none)."
)

ROWS = [
    # (label, game string, how the team's move is drawn)
    (
        "OpenSpiel goofspiel 6 cards (C++, turn-based)",
        "turn_based_simultaneous_game(game="
        "goofspiel(num_cards=6,imp_info=True,points_order=descending))",
        "legal",
    ),
    (
        "OpenSpiel goofspiel 13 cards (C++, turn-based)",
        "turn_based_simultaneous_game(game="
        "goofspiel(num_cards=13,imp_info=True,points_order=descending))",
        "legal",
    ),
    (
        "team_goofspiel 4C2P (joint legal_actions)",
        "team_goofspiel(num_cards=4,num_agents=2)",
        "legal",
    ),
    ("team_goofspiel 4C2P", "team_goofspiel(num_cards=4,num_agents=2)", "factored"),
    (
        "team_goofspiel 6C4P6R (paper)",
        "team_goofspiel(num_cards=6,num_agents=4,num_turns=6)",
        "factored",
    ),
    (
        "team_goofspiel 10C6P4R (paper)",
        "team_goofspiel(num_cards=10,num_agents=6,num_turns=4)",
        "factored",
    ),
    (
        "team_goofspiel 13C6P2R (paper)",
        "team_goofspiel(num_cards=13,num_agents=6,num_turns=2)",
        "factored",
    ),
    ("nest 3x3, 2 pursuers (paper)", "nest(rows=3,cols=3,num_pursuers=2)", "factored"),
    ("nest 5x5, 4 pursuers (paper)", "nest(rows=5,cols=5,num_pursuers=4)", "factored"),
    ("nest 15x15, 4 pursuers (paper)", "nest(rows=15,cols=15,num_pursuers=4)", "factored"),
    ("nest 15x15, 8 pursuers (paper)", "nest(rows=15,cols=15,num_pursuers=8)", "factored"),
]


def playout_rate(game, team_move, seconds, rng):
    """Random playouts for ~`seconds`; returns (steps/s, playouts/s)."""
    steps = playouts = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                action = rng.choices(outcomes, probs)[0]
            elif team_move == "factored" and state.current_player() == team.TEAM_PLAYER:
                action = team.sample_uniform_joint_action(state, rng)
            else:
                action = rng.choice(state.legal_actions())
            state.apply_action(action)
            steps += 1
        playouts += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, playouts / elapsed


def factored_versus_enumerated(seconds, rng):
    """First team decision of 10C6P4R: factored draw vs building the joint list."""
    game = pyspiel.load_game("team_goofspiel(num_cards=10,num_agents=6,num_turns=4)")
    state = game.new_initial_state()

    def factored_call():
        assert state.num_legal_joint_actions() == 10**6
        state.child(team.sample_uniform_joint_action(state, rng))

    calls = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        factored_call()
        calls += 1
    factored_us = 1e6 * (time.perf_counter() - start) / calls
    # Memory is traced separately: tracemalloc slows allocation down a lot.
    tracemalloc.start()
    for _ in range(100):
        factored_call()
    _, factored_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    try:
        state.legal_actions()
        refused = "no (enumerated!)"
    except team.JointActionSpaceTooLargeError:
        refused = "yes (JointActionSpaceTooLargeError)"
    per_agent = [state.legal_agent_actions(i) for i in range(6)]
    start = time.perf_counter()
    joint = team.enumerate_joint_actions(per_agent, game.agent_num_actions(), 10**7)
    enumerate_ms = 1e3 * (time.perf_counter() - start)
    assert len(joint) == 10**6
    list_bytes = sys.getsizeof(joint) + sum(sys.getsizeof(a) for a in joint)
    return {
        "factored_us": factored_us,
        "factored_peak_kb": factored_peak / 1024,
        "refused": refused,
        "enumerate_ms": enumerate_ms,
        "enumerate_mb": list_bytes / 2**20,
    }


def main(argv):
    del argv
    rng = random.Random(FLAGS.seed)
    rows = []
    for label, name, team_move in ROWS:
        game = pyspiel.load_game(name)
        steps, playouts = playout_rate(game, team_move, FLAGS.seconds_per_row, rng)
        how = "agent by agent (factored)" if team_move == "factored" else "legal_actions()"
        rows.append([label, how, f"{steps:,.0f}", f"{playouts:,.1f}", f"`{name}`"])
        print(" | ".join(rows[-1]), flush=True)
    table = markdown_table(
        ["game", "team move drawn by", "steps/s", "playouts/s", "game string"], rows
    )
    contrast = factored_versus_enumerated(FLAGS.seconds_per_row, rng)
    contrast_text = "\n".join(
        [
            "First team decision of `team_goofspiel(num_cards=10,num_agents=6,num_turns=4)` "
            "(10^6 legal joint bids):",
            "",
            f"- factored: `num_legal_joint_actions()` + `sample_uniform_joint_action` + "
            f"`child`: {contrast['factored_us']:.1f} us per call, peak traced memory over "
            f"100 calls {contrast['factored_peak_kb']:.0f} KiB",
            f"- `legal_actions()` refused: {contrast['refused']}",
            f"- for contrast, `enumerate_joint_actions` with the cap lifted: "
            f"{contrast['enumerate_ms']:.0f} ms and {contrast['enumerate_mb']:.0f} MiB "
            f"for the 10^6-element list",
        ]
    )
    print(contrast_text)
    if FLAGS.output:
        note = (
            f"Load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
            f"shared with other jobs, so steps/s are noisy; compare rows of one run. A step "
            f"is one `apply_action` driven from Python."
        )
        write_result(
            FLAGS.output,
            "Team games: random-playout speed",
            f"{note}\n\n{table}\n\n{contrast_text}",
        )


if __name__ == "__main__":
    app.run(main)
