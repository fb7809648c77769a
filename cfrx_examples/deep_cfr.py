r"""Deep CFR (Brown et al. 2019) on any 2-player zero-sum OpenSpiel game.

Trains `openspiel_cfrx.DeepCFRSolver`, evaluates the average strategy exactly
(tree engine) every --eval_every iterations, and writes `curve.csv`
(iteration, traversals, nodes touched, solver seconds, NashConv of the
policy network and of the SD-CFR average) and `curve.png`
(NashConv against iterations, nodes touched and seconds).

The defaults are the settings of `make demo` (Kuhn poker, 40 iterations of
2000 vectorised traversals, about a minute on 2 quiet CPU cores); Leduc with
the settings of the committed 10-minute benchmark (NashConv ~0.13):

    .venv/bin/cfrx-deep-cfr --game=leduc_poker --iterations=120 \
        --traversals=10000 --advantage_steps=250 --policy_steps=1000 --layers=64,64,64 \
        --learning_rate_schedule=cosine --memory=4000000 --eval_every=20 \
        --output_dir=out/deep_cfr

Resume an interrupted run with the same flags and --checkpoint_dir: the
solver reloads `<checkpoint_dir>/deep_cfr.pt` and continues. The checkpoint
records the run's flags and solver settings; a resume with other ones is
refused naming each (--iterations, --eval_every and the other always-safe
flags may change; --allow_changed=NAME,... accepts others). One run at a time
per --output_dir / --checkpoint_dir (a lock file; a second run refuses).
"""

from __future__ import annotations

import csv
import os
import sys
import time

from absl import flags

from cfrx_examples._common import (
    check_device,
    check_local_workers,
    check_number,
    check_number_list,
    check_output_dir,
    check_output_file,
    check_results_folder,
    check_resumed_checkpoint,
    check_seed,
    check_writable_dir,
    define_common_flags,
    define_worker_flags,
    load_game_or_exit,
    lock_run_folders,
    resumed_rows,
    run_config,
    run_program,
    tensorboard,
    usage_error,
    worker_settings,
    write_results,
)
from openspiel_cfrx.deep import Schedule

FLAGS = flags.FLAGS
define_common_flags(
    game="kuhn_poker",
    game_help="Must be 2-player zero-sum with sequential moves; exact evaluation extracts the whole tree, "
    "so keep it small, e.g. kuhn_poker, leduc_poker, 'flop_holdem(num_ranks=4,num_suits=2)' (about a minute "
    "to extract). Larger poker (5x2 flop hold'em: --preset=fhp_5x2) trains with --noevaluate.",
    iterations=40,
    iterations_help="Deep CFR iterations (each: --traversals traversals per player, then advantage-network "
    "training); >= 1. With --checkpoint_dir, the total to reach including resumed ones.",
    seed_help="Seeds all solver randomness: network initialisation, traversal sampling, minibatches.",
    output_dir="out/deep_cfr",
    outputs="curve.csv, curve.png",
    eval_every=10,
    eval_every_help="Evaluate the exact NashConv (and save --checkpoint_dir) every N iterations and at the last "
    "one; 0 = only at the last. Each evaluation trains the average-strategy network (--policy_steps).",
    torch_device=True,
    device_help="Passed to DeepCFRSolver(device=...).",
)
define_worker_flags()
flags.DEFINE_integer("traversals", 2000, "External-sampling traversals per player per iteration (K in the paper).")
flags.DEFINE_integer("advantage_steps", 100, "SGD (Adam) steps per advantage-network training, i.e. per player "
                     "per iteration.")
flags.DEFINE_integer("policy_steps", 500, "SGD (Adam) steps for the average-strategy network, run before each "
                     "evaluation.")
flags.DEFINE_integer("batch", 2048, "Mini-batch size in samples (both networks).")
flags.DEFINE_integer("memory", 2_000_000, "Capacity of each reservoir memory, in samples (entries).")
flags.DEFINE_list("layers", ["32", "32"], "Comma-separated hidden-layer widths of all networks.")
flags.DEFINE_string("network", "mlp", "Registered network name (mlp, plain_mlp, ...).")
flags.DEFINE_float("learning_rate", 1e-2, "Adam learning rate. 1e-2 suits the default merged full-memory steps on "
                   "small games (docs/deep_cfr.md); use the paper's 1e-3 with sampled minibatches.")
flags.DEFINE_enum("learning_rate_schedule", "constant", ["constant", "cosine"],
                  "Adam learning rate within each (re)training run: 'constant' (paper) or 'cosine' (annealed "
                  "from --learning_rate to ~0 over the run's steps; settles full-batch fits, docs/deep_cfr.md).")
flags.DEFINE_enum("traversal_backend", "vectorized", ["vectorized", "tree", "state", "poker"],
                  "How traversals run: 'vectorized' (numpy over the extracted game tree, fastest; the example "
                  "extracts the tree for exact evaluation anyway), 'tree' (same code as 'state' on the "
                  "extracted tree), 'state' (pyspiel states; any game), 'poker' (limit poker such as "
                  "flop_holdem: deals as arrays over the betting tree, ~20x 'state').")
flags.DEFINE_integer("threads", 1, "torch CPU threads (torch.set_num_threads).")
flags.DEFINE_string("regret_scale", "1", "Sampled regrets are stored divided by this (> 0), 'auto' (the game's "
                    "largest |utility|) or 'pot' (each by the pot at its node; --traversal_backend=poker); regret "
                    "matching is invariant to it (DeepCFRSolver(training=TrainingSettings(regret_scale=...))).")
flags.DEFINE_enum("average_weighting", None, ["linear", "uniform"], "The average strategy's weights w_t: t or 1 "
                  "(default: as the regrets', t; DeepCFRSolver(averaging=AveragingSettings(average_weighting=...))).")
flags.DEFINE_string("preset", "", "Named settings (openspiel_cfrx.presets): kuhn_demo, fhp_5x2, fhp_full (behind "
                    "committed results), paper_fhp, paper_hulh (the published method, Brown et al. 2019, on its "
                    "games) and paper (the published method on --game): the solver's settings and, unless --game "
                    "is given, its game; the network/training flags above cannot be combined with it. The flop "
                    "hold'em and HULH presets' games are too large for exact evaluation: they train with "
                    "--noevaluate unless --evaluate is given.")
flags.DEFINE_bool("sd_cfr", True, "Also evaluate the SD-CFR average (keeps every iteration's networks in memory).")
flags.DEFINE_string("checkpoint_dir", "", "If set, save <dir>/deep_cfr.pt after each evaluation and resume from "
                    "it when present (same flags needed); empty = no checkpoints.")
flags.DEFINE_string("policy_file", "", "If set, write the average-policy network here at the end "
                    "(DeepCFRSolver.save_policy: no memories, so small; cfrx_examples/head_to_head.py plays it as "
                    "deep_cfr:PATH).")
flags.DEFINE_bool("progress", False, "Show a progress bar instead of per-iteration log lines.")
flags.DEFINE_bool("evaluate", True, "Exact NashConv at every evaluation point (extracts the game tree once). "
                  "--noevaluate trains without it (for games too large to extract, e.g. full flop_holdem "
                  "with --traversal_backend=state); checkpoints are still saved every --eval_every iterations.")


def _regret_scale(text: str):
    if text in ("auto", "pot"):
        return text
    try:
        return float(text)
    except ValueError:
        usage_error(f"--regret_scale must be a number > 0, 'auto' or 'pot', got {text!r}")


# Flags that set what a --preset sets.
_PRESET_FLAGS = ("traversals", "advantage_steps", "policy_steps", "batch", "memory", "layers", "network",
                 "learning_rate", "learning_rate_schedule", "traversal_backend", "regret_scale", "average_weighting")


# The flag behind each DeepCFRSolver setting ("group.field" of `settings.to_record()`; examples._common
# adds the common flags'), so a refused resume names the flag to fix.
SETTING_FLAGS = {
    "openspiel.policy_network_layers": "layers", "openspiel.advantage_network_layers": "layers",
    "openspiel.num_traversals": "traversals", "openspiel.learning_rate": "learning_rate",
    "openspiel.batch_size_advantage": "batch", "openspiel.batch_size_strategy": "batch",
    "openspiel.memory_capacity": "memory", "openspiel.policy_network_train_steps": "policy_steps",
    "openspiel.advantage_network_train_steps": "advantage_steps", "training.schedule": "learning_rate_schedule",
    "network.family": "network", "traversal.backend": "traversal_backend", "training.regret_scale": "regret_scale",
    "averaging.average_weighting": "average_weighting", "averaging.keep_iteration_networks": "sd_cfr",
    "workers.num_threads": "threads",
}  # fmt: skip


def _solver_settings() -> dict:
    """DeepCFRSolver's training settings: the --preset's, or the flags'."""
    if FLAGS.preset:
        from openspiel_cfrx.presets import deep_cfr_preset

        clash = [f"--{name}" for name in _PRESET_FLAGS if FLAGS[name].present]
        if clash:
            usage_error(f"--preset={FLAGS.preset} sets {', '.join(clash)}; drop them or the preset")
        try:
            settings = dict(deep_cfr_preset(FLAGS.preset, FLAGS.device, game=FLAGS.game).kwargs)
        except ValueError as e:
            usage_error(str(e))
        return dict(settings, num_iterations=FLAGS.iterations)
    try:
        layers = tuple(int(w) for w in FLAGS.layers)
    except ValueError:
        usage_error(f"--layers must be integers, got {FLAGS.layers}")
    return dict(
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
        training={"schedule": Schedule(learning_rate=FLAGS.learning_rate_schedule),
                  "regret_scale": _regret_scale(FLAGS.regret_scale)},
        network={"family": FLAGS.network},
        traversal={"backend": FLAGS.traversal_backend},
        averaging={"average_weighting": FLAGS.average_weighting},
    )


def _check_flags():
    """Every flag checked before anything is loaded; a --preset names its game."""
    check_output_dir()
    check_seed()
    check_number("iterations", 1)
    check_number("eval_every", 0)
    check_number("threads", 1, 4 * (os.cpu_count() or 1))
    check_number("learning_rate", 0, strict=True)
    check_number_list("layers", int, 1, unique=False)
    check_local_workers()
    check_output_file("policy_file")
    if FLAGS.preset and FLAGS["game"].present:
        from openspiel_cfrx.presets import DEEP_CFR_PRESETS

        def family(game: str) -> str:
            return game.split("(", 1)[0].strip()

        preset = DEEP_CFR_PRESETS.get(FLAGS.preset)
        if preset is not None and family(FLAGS.game) != family(preset.game):  # tuned (backend, scales) on its game
            others = ", ".join(f"{name} ({p.game})" for name, p in DEEP_CFR_PRESETS.items() if name != FLAGS.preset)
            usage_error(f"preset {FLAGS.preset} is for {preset.game}, not {FLAGS.game}; drop --game or pick another "
                        f"preset: {others}")  # fmt: skip
    if FLAGS.preset == "paper" and not FLAGS["game"].present:
        usage_error("--preset=paper is the published method on the game you name: add --game (or use "
                    "--preset=paper_fhp / paper_hulh for the paper's own games)")
    if FLAGS.preset and not FLAGS["game"].present:
        from openspiel_cfrx.presets import DEEP_CFR_PRESETS

        if FLAGS.preset in DEEP_CFR_PRESETS:
            FLAGS.game = DEEP_CFR_PRESETS[FLAGS.preset].game
            if FLAGS.preset.startswith(("fhp_", "paper_")) and not FLAGS["evaluate"].present:
                FLAGS.evaluate = False  # its game's tree is too large to extract (--preset's help)
                print(f"preset {FLAGS.preset}: training without exact evaluation (--noevaluate; its game's tree is "
                      "too large to extract); checkpoints are still saved every --eval_every iterations")
    check_device(FLAGS.device, torch_device=True)
    if FLAGS.iterations < 1 or FLAGS.eval_every < 0:
        usage_error("--iterations must be >= 1 and --eval_every >= 0")
    check_writable_dir(FLAGS.output_dir, "output_dir")
    check_writable_dir(FLAGS.checkpoint_dir, "checkpoint_dir")


def _make_solver(game):
    """The solver of the flags; the game's tree extracted once up front where it is used."""
    from openspiel_cfrx.deep import DeepCFRSolver
    from openspiel_cfrx.presets import merge_settings
    from openspiel_cfrx.tree import TreeTooLargeError, get_tree

    settings = _solver_settings()
    if FLAGS.evaluate or settings.get("traversal", {}).get("backend", "vectorized") not in ("state", "poker"):
        try:
            get_tree(game)  # extracted once up front (evaluations and tree backends reuse it)
        except TreeTooLargeError as e:
            usage_error(
                f"{e}. Train without exact evaluation: --noevaluate --traversal_backend=state (or =poker for "
                "limit poker; openspiel_cfrx.nash_conv evaluates flop hold'em policies on the poker engine)"
            )
    try:
        run = {"workers": {"num_threads": FLAGS.threads, **worker_settings()},
               "averaging": {"keep_iteration_networks": FLAGS.sd_cfr}}
        return DeepCFRSolver(
            game,
            **merge_settings(settings, run),
            device=FLAGS.device,
            seed=FLAGS.seed,
            reporting={"log_every": 0 if FLAGS.progress else 1},  # not verbose: absl already shows the log lines
        )
    except ValueError as e:
        sys.exit(f"error: {e}")


def _resume(solver, checkpoint: str, config) -> bool:
    """Loads `checkpoint` if it exists, refusing one written with other settings; True if resumed."""
    from openspiel_cfrx.deep import CheckpointError

    if not (checkpoint and os.path.exists(checkpoint)):
        return False
    try:
        solver.load_checkpoint(checkpoint)
    except CheckpointError as e:
        sys.exit(f"error: {' '.join(str(e).split())}; delete {checkpoint} or choose another --checkpoint_dir")
    saved_run = (solver.checkpoint_extra or {}).get("run")
    saved_settings = getattr(solver, "checkpoint_settings", None)
    kept = (saved_settings or {}).get("averaging", {}).get("keep_iteration_networks")
    never = {}
    if kept is False and FLAGS.sd_cfr:  # the SD-CFR average would silently miss those iterations
        never["sd_cfr"] = "the checkpointed iterations' networks were not kept for the SD-CFR average"
    check_resumed_checkpoint(checkpoint, saved_run, saved_settings, config, solver.settings.to_record(),
                             SETTING_FLAGS, never)  # fmt: skip
    return True



def _iteration_scalars(solver, stats: dict, seconds: float) -> dict:
    """What --tensorboard_dir logs after every iteration: losses, nodes, speed, memory fill."""
    capacity = solver.settings.openspiel["memory_capacity"]
    strategy_capacity = solver.settings.memory.strategy_capacity or capacity
    losses = stats.get("advantage_loss") or [None, None]
    return {"advantage_loss_p0": losses[0], "advantage_loss_p1": losses[1], "nodes_touched": solver.nodes_touched,
            "iterations_per_second": 1.0 / seconds if seconds > 0 else None,
            "memory_fill_p0": len(solver.advantage_buffers[0]) / capacity,
            "memory_fill_p1": len(solver.advantage_buffers[1]) / capacity,
            "strategy_memory_fill": len(solver.strategy_buffer) / strategy_capacity}  # fmt: skip

def main(argv):
    del argv
    _check_flags()
    game = load_game_or_exit(FLAGS.game)
    from openspiel_cfrx.tree import nash_conv

    solver = _make_solver(game)
    checkpoint = os.path.join(FLAGS.checkpoint_dir, "deep_cfr.pt") if FLAGS.checkpoint_dir else ""
    csv_path = os.path.join(FLAGS.output_dir, "curve.csv")
    config = run_config(FLAGS.game, game, solver.settings.to_record())
    lock_run_folders(output_dir=FLAGS.output_dir, checkpoint_dir=FLAGS.checkpoint_dir)
    resumed = _resume(solver, checkpoint, config)
    check_results_folder(config, csv_path, setting_flags=SETTING_FLAGS)
    if resumed:
        print(f"resumed from {checkpoint} at iteration {solver.iteration}")
    csv_rows = []
    if resumed and os.path.exists(csv_path):
        with open(csv_path, encoding="utf-8") as f:
            csv_rows = list(csv.DictReader(f))
    rows = resumed_rows(csv_rows, (solver.checkpoint_extra or {}).get("rows") if resumed else None, resumed,
                        keep=lambda r: int(r["iteration"]) <= solver.iteration)  # fmt: skip
    if rows:
        write_results(csv_path, rows, config)
    try:
        _train(game, solver, rows, csv_path, checkpoint, nash_conv, config)
    except KeyboardInterrupt:
        where = f"; rerun the same command to resume from {checkpoint}" if checkpoint else ""
        sys.exit(f"interrupted at iteration {solver.iteration}: {csv_path} holds the {len(rows)} evaluated "
                 f"rows so far{where}")  # fmt: skip
    if FLAGS.policy_file:
        solver.save_policy(FLAGS.policy_file)
        print(f"wrote the policy file {FLAGS.policy_file}")
    if not rows:
        kept = " and ".join(f"--{name}" for name in ("checkpoint_dir", "policy_file") if FLAGS[name].value)
        print("nothing to do: already at --iterations" if resumed else "no evaluation rows (--noevaluate); the "
              + (f"trained solver is in {kept}" if kept else "trained solver is not kept: pass --policy_file or "
                 "--checkpoint_dir to keep it"))  # fmt: skip
        return
    _plot(rows, os.path.join(FLAGS.output_dir, "curve.png"))
    print(f"wrote {csv_path} and curve.png")


def _train(game, solver, rows, csv_path, checkpoint, nash_conv, config):
    """Runs the remaining iterations; at every evaluation point appends the
    row to `rows` and `csv_path` (written atomically) and then saves the
    checkpoint with the rows inside, so an interrupted run loses at most the
    iterations since the last evaluation, never a row."""
    bar = None
    if FLAGS.progress:
        from tqdm import tqdm

        bar = tqdm(total=FLAGS.iterations, initial=solver.iteration, desc="Deep CFR", unit="it")
    board = tensorboard()
    while solver.iteration < FLAGS.iterations:
        started = time.perf_counter()
        stats = solver.run_iteration()
        if board is not None:
            board.scalars("deep_cfr", solver.iteration, _iteration_scalars(solver, stats, time.perf_counter() - started))
        if bar is not None:
            bar.update(1)
            bar.set_postfix(nodes=stats["nodes"], loss=f"{stats['advantage_loss'][1]:.3g}")
        t = solver.iteration
        if (FLAGS.eval_every and t % FLAGS.eval_every == 0) or t == FLAGS.iterations:
            if FLAGS.evaluate:
                start = time.perf_counter()
                value = nash_conv(game, solver)
                sd_cfr = solver.nash_conv("sd_cfr") if FLAGS.sd_cfr else float("nan")
                traversals = sum(stats.get("traversals", 0) for stats in solver.history)  # as run, resumes included
                rows.append(dict(game=config["game"], iteration=t, traversals=traversals, nodes=solver.nodes_touched,
                                 seconds=f"{solver.traversal_seconds + solver.training_seconds:.3f}",
                                 nash_conv=f"{value:.6g}", exploitability=f"{value / game.num_players():.6g}",
                                 sd_cfr_nash_conv=f"{sd_cfr:.6g}"))  # fmt: skip
                write_results(csv_path, rows, config)
                print(f"iteration {t}: NashConv {value:.4f} (policy network), {sd_cfr:.4f} (SD-CFR); "
                      f"evaluation {time.perf_counter() - start:.1f}s", flush=True)  # fmt: skip
            if checkpoint:
                run = {key: value for key, value in config.items() if key != "settings"}  # the file has them
                solver.save_checkpoint(checkpoint, extra={"rows": rows, "run": run})
    if bar is not None:
        bar.close()


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


def run():
    """The console script's entry point."""
    run_program(main, __name__)


if __name__ == "__main__":
    run()
