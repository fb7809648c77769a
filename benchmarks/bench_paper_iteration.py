r"""What one iteration of the published Deep CFR method costs here, and the
paper's run projected from it (Brown et al. 2019; presets `paper_fhp` and
`paper_hulh`, `openspiel_cfrx.presets`).

An iteration of Algorithm 1 is K = 10,000 external-sampling traversals per
player (Section 6) and, per player, an advantage network trained from scratch
for 4,000 Adam steps of batch 10,000 (Section 5.2; HULH 32,000 x 20,000). The
average-strategy network is trained once, after the last iteration, with the
same budget. Training the full budget here would take hours per iteration, so
each preset runs its first iteration twice from the same seed, with
`--steps` and 3 x `--steps` SGD steps per network (everything else the
preset's). Player 2's traversals follow player 1's freshly trained network,
so the two runs touch slightly different numbers of nodes; process CPU
seconds = a x nodes + b x SGD steps solved over the two runs gives the cost
of a node (a) and of a step (b). One full iteration is then the traversals + 2 x (the preset's
steps) x the step's cost; the paper's run is `--iterations` of them
(Figure 4's curves reach t = 450) + one average-network training.

Process CPU seconds on one torch thread (`--threads`), so a loaded machine
changes the numbers less than it would wall-clock seconds.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_paper_iteration.py \
        --output=benchmarks/results/paper_iteration.md
"""

from __future__ import annotations

import os
import sys
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import markdown_table, print_and_write  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_list("presets", ["paper_fhp", "paper_hulh"], "Presets of openspiel_cfrx.presets to time.")
flags.DEFINE_integer("steps", 4, "SGD steps per network in the shorter of the two timed iterations (>= 1).")
flags.DEFINE_integer("iterations", 450, "Iterations of the projected paper run (Figure 4: t = 450).")
flags.DEFINE_integer("threads", 1, "torch threads.")
flags.DEFINE_integer("seed", 0, "Seed of both timed iterations.")
flags.DEFINE_string("output", "", "Markdown file for the results (printed anyway).")


def _first_iteration_cpu_seconds(game, kwargs: dict, steps: int) -> tuple[float, int]:
    """Process CPU seconds of the preset's first iteration with `steps` SGD
    steps per advantage network, and the nodes it touched."""
    from openspiel_cfrx import DeepCFRSolver

    solver = DeepCFRSolver(game, **{**kwargs, "advantage_network_train_steps": steps, "num_iterations": 1},
                           seed=FLAGS.seed, workers={"num_threads": FLAGS.threads})  # fmt: skip
    start = time.process_time()
    stats = solver.run_iteration()
    return time.process_time() - start, int(stats["nodes"])


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:,.1f} h" if seconds < 48 * 3600 else f"{seconds / 86400:,.1f} days"


def _row(name: str) -> list:
    import pyspiel

    import games  # noqa: F401  registers flop_holdem, hulh
    from openspiel_cfrx.presets import deep_cfr_preset

    preset = deep_cfr_preset(name)
    kwargs = dict(preset.kwargs)
    game = pyspiel.load_game(preset.game)
    import numpy as np

    few, few_nodes = _first_iteration_cpu_seconds(game, kwargs, FLAGS.steps)
    many, many_nodes = _first_iteration_cpu_seconds(game, kwargs, 3 * FLAGS.steps)
    # CPU seconds = a x nodes + b x SGD steps (2 networks x steps), over the two runs
    per_node, step = np.linalg.solve([[few_nodes, 2 * FLAGS.steps], [many_nodes, 6 * FLAGS.steps]], [few, many])
    traversal = per_node * (few_nodes + many_nodes) / 2
    train_steps = kwargs["advantage_network_train_steps"]
    iteration = traversal + 2 * train_steps * step
    run = FLAGS.iterations * iteration + kwargs["policy_network_train_steps"] * step
    print(f"{name}: traversals {traversal:.1f} s, step {step:.3f} s, iteration {iteration:,.0f} s", flush=True)
    return [name, preset.game, f"{kwargs['num_traversals']:,}", f"{(few_nodes + many_nodes) // 2:,}", f"{traversal:.1f}",
            f"{train_steps:,} x {kwargs['batch_size_advantage']:,}", f"{step:.3f}", f"{iteration:,.0f}",
            _hours(iteration), _hours(run)]  # fmt: skip


def main(argv):
    del argv
    if FLAGS.steps < 1 or FLAGS.iterations < 1 or FLAGS.threads < 1:
        sys.exit("error: --steps, --iterations and --threads must be >= 1")
    import torch

    torch.set_num_threads(FLAGS.threads)
    rows = [_row(name) for name in FLAGS.presets]
    table = markdown_table(
        ["preset", "game", "traversals per player", "nodes touched", "traversal CPU s",
         "SGD per network", "CPU s per SGD step", "CPU s per iteration", "one iteration",
         f"paper run ({FLAGS.iterations} iterations + average network)"], rows)  # fmt: skip
    text = (f"# One iteration of the published Deep CFR method\n\n"
            f"First iteration of each preset, timed twice from seed {FLAGS.seed} with {FLAGS.steps} and "
            f"{3 * FLAGS.steps} SGD steps per advantage network (everything else the preset's); process CPU "
            f"seconds, {FLAGS.threads} torch thread(s). A full iteration = the traversals + 2 networks x the "
            f"preset's SGD steps x the step's cost; the paper's run = {FLAGS.iterations} iterations + the "
            "average network's training (the same SGD budget).\n\n" + table + "\n")  # fmt: skip
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
