r"""What pausing Python's cyclic garbage collector during a traversal batch
buys (`openspiel_cfrx.deep.sampler.gc_paused`, session 17).

The Python traversal backends keep a batch's samples as Python objects until
the batch ends; they survive into the oldest generation and set off repeated
full collections. Each workload times its sampler's `collect` for both
players with the pause as shipped and with it replaced by a no-op (the
collector on, as before), alternating, `--repeats` times each; the table
gives the medians and their ratio. One process, one torch thread.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_gc_pause.py \
        --output=benchmarks/results/gc_pause.md
"""

from __future__ import annotations

import contextlib
import gc
import os
import statistics
import sys
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import FHP_STATE_DEEP_CFR, print_and_write, run_header  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("output", "", "Markdown file for the table (printed anyway).")
flags.DEFINE_integer("repeats", 3, "Timed repeats per setting (alternating).")


@contextlib.contextmanager
def _collector_on():
    yield


def _deep_cfr(game_string: str, traversals: int, **settings):
    import pyspiel

    from openspiel_cfrx.deep import DeepCFRSolver

    settings = {**FHP_STATE_DEEP_CFR, **settings, "num_traversals": traversals}
    settings.pop("game")
    solver = DeepCFRSolver(pyspiel.load_game(game_string), num_iterations=2, seed=0, memory_capacity=2_000_000,
                           **settings)  # fmt: skip
    solver.run_iteration()
    return lambda: [x.nodes for p in (0, 1) for x in solver.sampler.collect(solver.current_strategy, p, 2, traversals)]


def _cfr_mix(game_string: str, traversals: int):
    import pyspiel

    from openspiel_cfrx import CFRMixSolver

    solver = CFRMixSolver(pyspiel.load_game(game_string), seed=0)
    solver.run_iteration()
    return lambda: [r.nodes for p in (0, 1) for r in solver.sampler.collect(solver.answer, p, 2, traversals)]


WORKLOADS = [
    ("Deep CFR, 5x2 FHP, state backend, K = 1,500 (batch 1,000)", lambda: _deep_cfr(FHP_STATE_DEEP_CFR["game"], 1500)),
    ("Deep CFR, 5x2 FHP, state backend, K = 10,000 (batch 1,000)", lambda: _deep_cfr(FHP_STATE_DEEP_CFR["game"], 10_000)),
    ("Deep CFR, full FHP, state backend, K = 2,000 (batch 1,000)", lambda: _deep_cfr("flop_holdem", 2000)),
    ("CFR-MIX, team_goofspiel(4 cards, 2 agents, 3 turns), K = 200",
     lambda: _cfr_mix("team_goofspiel(num_cards=4,num_agents=2,num_turns=3)", 200)),
]  # fmt: skip


def main(argv):
    del argv
    import torch

    import games  # noqa: F401  registers flop_holdem, team_goofspiel
    from openspiel_cfrx.deep import sampler, team_model

    torch.set_num_threads(1)
    load = os.getloadavg()[0]
    lines = ["| workload | collector paused (s, median) | collector on (s, median) | speed-up |", "|---|---:|---:|---:|"]
    shipped = sampler.gc_paused
    for name, build in WORKLOADS:
        run = build()
        times = {"paused": [], "on": []}
        for _ in range(FLAGS.repeats):
            for setting, pause in (("paused", shipped), ("on", _collector_on)):
                sampler.gc_paused = team_model.gc_paused = pause
                gc.collect()
                start = time.perf_counter()
                run()
                times[setting].append(time.perf_counter() - start)
        sampler.gc_paused = team_model.gc_paused = shipped
        paused, on = statistics.median(times["paused"]), statistics.median(times["on"])
        lines.append(f"| {name} | {paused:.3f} | {on:.3f} | {on / paused:.2f}x |")
        print(lines[-1], flush=True)
    text = (f"# Traversal batches with the garbage collector paused\n\n{run_header(load)}; CPython "
            f"{sys.version.split()[0]}; {FLAGS.repeats} alternating repeats per setting.\n\n" + "\n".join(lines) + "\n")
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
