"""CFR-MIX's training step in float32 and under bfloat16 autocast
(`CFRMixSolver(training_precision=...)`, `deep/trainer.py`).

Each case is a `CFRMixSolver` run of a few iterations, timed by the solver
itself: training seconds per Adam step (each iteration fits both players'
regret and average-strategy models: 2 x (regret_train_steps +
policy_train_steps) steps), medians over iterations 2..N. The two precisions
run in fresh interpreters, interleaved round-robin (`--rounds`), one torch
thread; the table gives medians over rounds and the speed-up over float32.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_cfr_mix_precision.py \
        --output=benchmarks/results/cfr_mix_precision.md
"""

from __future__ import annotations

import json
import os
import statistics
import sys

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import cases_round_robin, print_and_write, run_header  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("output", "", "Markdown file for the table (printed anyway).")
flags.DEFINE_integer("rounds", 3, "Interleaved rounds per configuration.")
flags.DEFINE_integer("iterations", 4, "Solver iterations per run (iteration 1 is not timed).")
flags.DEFINE_list("cases", [], "Cases to run (default: all).")
flags.DEFINE_string("one", "", "Internal: run one configuration (JSON) and print its result.")
flags.DEFINE_string("device", "cpu", "torch device the solver trains on (cpu, cuda).")
flags.DEFINE_bool("eager", False, "On CUDA, every Adam step eagerly (no CUDA graph replay; the trainer before it).")

STEPS = dict(regret_train_steps=200, policy_train_steps=200)  # the solver's defaults
CASES = {
    # the solver's defaults (64 x 64 agent networks, batch 256) on the tests' tiny Goofspiel
    "goofspiel_defaults": dict(game="team_goofspiel(num_cards=3,num_agents=2,num_turns=2)", num_traversals=100,
                               **STEPS),
    # wider networks and larger batches on bench_cfr_mix.py's 4-agent Goofspiel
    "goofspiel4_256x256_b2048": dict(game="team_goofspiel(num_cards=6,num_agents=4,num_turns=2)", num_traversals=100,
                                     regret_network_layers=[256, 256], policy_network_layers=[256, 256],
                                     batch_size=2048, **STEPS),
}  # fmt: skip
PRECISION_ORDER = ("float32", "bfloat16")


def one(case: dict) -> dict:
    """Runs one configuration in this (fresh) process."""
    import pyspiel
    import torch

    import games  # noqa: F401  (registers team_goofspiel)
    from openspiel_cfrx.deep.cfr_mix import CFRMixSolver
    from openspiel_cfrx.deep.trainer import Trainer

    Trainer.cuda_graphs = not case["eager"]

    torch.set_num_threads(1)
    settings = dict(CASES[case["case"]])
    game = pyspiel.load_game(settings.pop("game"))
    solver = CFRMixSolver(game, num_iterations=case["iterations"], seed=0, training_precision=case["precision"],
                          device=case["device"], **settings)  # fmt: skip
    solver.solve()
    steps = 2 * (settings["regret_train_steps"] + settings["policy_train_steps"])
    graphed = all(m.trainer.cuda_graphs for m in solver.regret_models + solver.policy_models)  # False after a failure
    return {"step_ms": statistics.median(h["training_seconds"] / steps * 1e3 for h in solver.history[1:]),
            "graphed": case["device"].startswith("cuda") and graphed}


def main(argv):
    del argv
    if FLAGS.one:
        print(json.dumps(one(json.loads(FLAGS.one))))
        return
    load = os.getloadavg()[0]
    names = FLAGS.cases or list(CASES)
    keys = [(n, p) for n in names for p in PRECISION_ORDER]
    cases = [{"case": n, "precision": p, "iterations": FLAGS.iterations, "device": FLAGS.device, "eager": FLAGS.eager}
             for n, p in keys]  # fmt: skip
    runs = cases_round_robin(__file__, cases, FLAGS.rounds)
    results = {key: [x["step_ms"] for x in r] for key, r in zip(keys, runs, strict=True)}
    graphed = {key: all(x["graphed"] for x in r) for key, r in zip(keys, runs, strict=True)}
    rows = []
    for name in names:
        base = statistics.median(results[name, "float32"])
        for precision in PRECISION_ORDER:
            step = statistics.median(results[name, precision])
            rows.append(f"| {name} | {precision} | {'yes' if graphed[name, precision] else 'no'} | {step:.3f} | "
                        f"**{base / step:.2f}x** |")  # fmt: skip
    text = (f"# CFR-MIX's training step: float32 vs bfloat16 autocast\n\n{run_header(load)}. `CFRMixSolver` runs of "
            f"{FLAGS.iterations} iterations (iteration 1 not timed), training on {FLAGS.device}, one torch thread, "
            f"{FLAGS.rounds} interleaved "
            "rounds (each configuration in a fresh process), medians.\n\n"
            "| case | training precision | CUDA graph | ms per Adam step | speed-up |\n|---|---|---|---:|---:|\n"
            + "\n".join(rows) + "\n")  # fmt: skip
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
