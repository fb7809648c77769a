"""Random-playout speed of `hulh` (Python wrapper with per-street information
states) against the raw C++ `universal_poker` game it wraps, interleaved in
one process.

    .venv/bin/python benchmarks/bench_hulh_information_state.py

Writes benchmarks/results/hulh_information_state.md.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time

import pyspiel

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402,F401
from benchmarks.common import markdown_table, write_result  # noqa: E402


def playouts(game, n: int, infostates: str | None, seed: int = 0) -> float:
    """Steps per second of `n` uniformly random playouts (chance included);
    with `infostates` ("string" or "tensor"), each decision also asks the
    acting player's information_state_string (what a tabular method keys on)
    or information_state_tensor (what a network is fed)."""
    rng = random.Random(seed)
    steps = 0
    start = time.perf_counter()
    for _ in range(n):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                if infostates == "string":
                    state.information_state_string(state.current_player())
                elif infostates == "tensor":
                    state.information_state_tensor(state.current_player())
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
            steps += 1
    return steps / (time.perf_counter() - start)


def main():
    hulh = pyspiel.load_game("hulh")
    raw = hulh.universal_poker_game()
    load = os.getloadavg()
    rows = []
    for infostates in (None, "string", "tensor"):
        speeds = {"raw": [], "hulh": []}
        for rep in range(5):
            speeds["raw"].append(playouts(raw, 4000, infostates, rep))
            speeds["hulh"].append(playouts(hulh, 4000, infostates, rep))
        r, h = statistics.median(speeds["raw"]), statistics.median(speeds["hulh"])
        what = f"steps + information_state_{infostates} per decision" if infostates else "steps only"
        rows.append([what, f"{r:,.0f}", f"{h:,.0f}", f"{h / r:.2f}"])
        print(*rows[-1])
    body = (
        f"- load average (1/5/15 min, as `uptime` shows) at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        "(2 cores shared with other jobs); per row, 5 interleaved repetitions of 4,000 random "
        "playouts of the paper's `hulh` per game (20,000 playouts each, chance included), "
        "medians. `universal_poker (C++)` is `hulh.universal_poker_game()`, i.e. what "
        "`pyspiel.load_game(\"hulh\")` returned before the wrapper.\n\n"
        + markdown_table(["what", "universal_poker (C++) steps/s", "hulh steps/s", "hulh / C++"], rows)
        + "\n\n`hulh` wraps the C++ state (dynamics are C++ calls through one Python delegation) and "
        "builds the per-street `[Public: flop|turn|river]` string and tensor block in Python (the "
        "board per street is read off `history()`), so information-state calls cost more than the "
        "C++ ones (which merge the streets)."
    )
    write_result("benchmarks/results/hulh_information_state.md", "hulh: per-street information states, playout speed", body)


if __name__ == "__main__":
    main()
