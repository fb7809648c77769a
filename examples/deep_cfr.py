r"""Deep CFR (Brown et al. 2019) on any 2-player zero-sum OpenSpiel game.

Trains `openspiel_cfrx.DeepCFRSolver`, evaluates the average strategy exactly
(tree engine) every --eval_every iterations, and writes `curve.csv`
(iteration, traversals, nodes touched, solver seconds, NashConv of the
policy network and of the SD-CFR average) and `curve.png`
(NashConv against iterations, nodes touched and seconds).

    .venv/bin/python examples/deep_cfr.py --game=leduc_poker --iterations=100 \
        --traversals=1000 --advantage_steps=200 --output_dir=out/deep_cfr

Resume an interrupted run with the same flags and --checkpoint_dir: the
solver reloads `<checkpoint_dir>/deep_cfr.pt` and continues.
"""

from __future__ import annotations

import csv
import os
import sys
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from examples._common import load_game_or_exit  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("game", "leduc_poker", "OpenSpiel game string (2-player zero-sum, sequential).")
flags.DEFINE_integer("iterations", 100, "Deep CFR iterations.")
flags.DEFINE_integer("traversals", 1000, "External-sampling traversals per player per iteration (K).")
flags.DEFINE_integer("advantage_steps", 200, "SGD steps per advantage-network training.")
flags.DEFINE_integer("policy_steps", 2000, "SGD steps for the average-strategy network.")
flags.DEFINE_integer("batch", 2048, "Mini-batch size (both networks).")
flags.DEFINE_integer("memory", 2_000_000, "Capacity of each memory (entries).")
flags.DEFINE_list("layers", ["64", "64", "64"], "Hidden widths of the networks.")
flags.DEFINE_string("network", "mlp", "Registered network name (mlp, plain_mlp, ...).")
flags.DEFINE_float("learning_rate", 1e-3, "Adam learning rate.")
flags.DEFINE_string("device", "cpu", "torch device (cpu or cuda).")
flags.DEFINE_integer("threads", 1, "torch CPU threads.")
flags.DEFINE_integer("eval_every", 10, "Evaluate exact NashConv every N iterations (0 = only at the end).")
flags.DEFINE_bool("sd_cfr", True, "Also evaluate the SD-CFR average (keeps every iteration's networks).")
flags.DEFINE_string("checkpoint_dir", "", "Save a checkpoint here after each evaluation; resume from it.")
flags.DEFINE_string("output_dir", "out/deep_cfr", "Directory for curve.csv and curve.png.")
flags.DEFINE_integer("seed", 0, "Random seed.")
flags.DEFINE_bool("progress", False, "Show a progress bar instead of per-iteration log lines.")


def main(argv):
    del argv
    game = load_game_or_exit(FLAGS.game)
    import torch

    from openspiel_cfrx.deep import CheckpointError, DeepCFRSolver
    from openspiel_cfrx.tree import get_tree, nash_conv

    try:
        layers = tuple(int(w) for w in FLAGS.layers)
    except ValueError:
        raise app.UsageError(f"--layers must be integers, got {FLAGS.layers}") from None
    if FLAGS.device.startswith("cuda") and not torch.cuda.is_available():
        raise app.UsageError("--device=cuda but no CUDA device is available")
    try:
        solver = DeepCFRSolver(
            game,
            policy_network_layers=layers,
            advantage_network_layers=layers,
            num_iterations=FLAGS.iterations,
            num_traversals=FLAGS.traversals,
            learning_rate=FLAGS.learning_rate,
            batch_size_advantage=FLAGS.batch,
            batch_size_strategy=FLAGS.batch,
            memory_capacity=FLAGS.memory,
            policy_network_train_steps=FLAGS.policy_steps,
            advantage_network_train_steps=FLAGS.advantage_steps,
            device=FLAGS.device,
            seed=FLAGS.seed,
            network=FLAGS.network,
            num_threads=FLAGS.threads,
            keep_iteration_networks=FLAGS.sd_cfr,
            log_every=0 if FLAGS.progress else 1,
            verbose=False,  # absl already shows the logging lines
        )
    except ValueError as e:
        sys.exit(f"error: {e}")
    checkpoint = os.path.join(FLAGS.checkpoint_dir, "deep_cfr.pt") if FLAGS.checkpoint_dir else ""
    if checkpoint and os.path.exists(checkpoint):
        try:
            solver.load_checkpoint(checkpoint)
        except CheckpointError as e:
            sys.exit(f"error: {e}")
        print(f"resumed from {checkpoint} at iteration {solver.iteration}")
    get_tree(game)  # extract once up front (evaluations reuse it)
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    csv_path = os.path.join(FLAGS.output_dir, "curve.csv")
    rows = []
    if solver.iteration and os.path.exists(csv_path):
        with open(csv_path, encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if int(r["iteration"]) <= solver.iteration]
    bar = None
    if FLAGS.progress:
        from tqdm import tqdm

        bar = tqdm(total=FLAGS.iterations, initial=solver.iteration, desc="Deep CFR", unit="it")
    while solver.iteration < FLAGS.iterations:
        stats = solver.run_iteration()
        if bar is not None:
            bar.update(1)
            bar.set_postfix(nodes=stats["nodes"], loss=f"{stats['advantage_loss'][1]:.3g}")
        t = solver.iteration
        if (FLAGS.eval_every and t % FLAGS.eval_every == 0) or t == FLAGS.iterations:
            start = time.perf_counter()
            value = nash_conv(game, solver)
            sd_cfr = solver.nash_conv("sd_cfr") if FLAGS.sd_cfr else float("nan")
            rows.append(dict(iteration=t, traversals=2 * FLAGS.traversals * t, nodes=solver.nodes_touched,
                             seconds=f"{solver.traversal_seconds + solver.training_seconds:.3f}",
                             nash_conv=f"{value:.6g}", sd_cfr_nash_conv=f"{sd_cfr:.6g}"))  # fmt: skip
            print(f"iteration {t}: NashConv {value:.4f} (policy network), {sd_cfr:.4f} (SD-CFR); "
                  f"evaluation {time.perf_counter() - start:.1f}s", flush=True)  # fmt: skip
            if checkpoint:
                solver.save_checkpoint(checkpoint)
    if bar is not None:
        bar.close()
    if not rows:
        print("nothing to do: already at --iterations")
        return
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    _plot(rows, os.path.join(FLAGS.output_dir, "curve.png"))
    print(f"wrote {csv_path} and curve.png")


def _plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, x, label in zip(axes, ("iteration", "nodes", "seconds"),
                            ("iterations", "nodes touched", "solver seconds"), strict=True):  # fmt: skip
        xs = [float(r[x]) for r in rows]
        ax.plot(xs, [float(r["nash_conv"]) for r in rows], "-o", ms=3, label="policy network")
        if FLAGS.sd_cfr:
            ax.plot(xs, [float(r["sd_cfr_nash_conv"]) for r in rows], "--", label="SD-CFR average")
        ax.set_xlabel(label)
        ax.set_ylabel("NashConv")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Deep CFR on {FLAGS.game}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    app.run(main)
