r"""CFR-MIX and its baselines on a team-adversary game, at equal wall-clock.

Runs each chosen variant of `openspiel_cfrx.CFRMixSolver` (and optionally
joint-action Deep CFR, `openspiel_cfrx.DeepCFRSolver`) for a wall-clock
budget, evaluating every `eval_every` iterations, and writes `curves.csv`
(variant, iteration, seconds, metric, value, ci95) and `curves.png`.

    .venv/bin/cfrx-cfr-mix \
        --game="team_goofspiel(num_cards=3,num_agents=2,num_turns=2)" \
        --variants=cfr_mix,independent,deep_cfr_joint --seconds=60 --output_dir=out/cfr_mix

Metric: on instances the tree engine extracts (`--exact_max_histories`) the
exact NashConv of the average strategy (team as one player; lower is
better); otherwise the team's worst-case utility (minus the adversary's
best-response value, higher is better), estimated by the particle best
response of `openspiel_cfrx.eval.team_best_response` with a 95% interval.
Solver seconds exclude evaluation.

Resume an interrupted run with the same flags and --checkpoint_dir: each
variant reloads `<checkpoint_dir>/<variant>.pt` and continues (its
iterations and solver seconds count towards --iterations and --seconds).
Checkpoints and curves.config.json record the run's flags and settings; a
resume with other ones is refused naming each (--iterations, --seconds,
--eval_every and the other always-safe flags may change; --allow_changed
accepts others). One run at a time per --output_dir / --checkpoint_dir.
"""

from __future__ import annotations

import csv
import dataclasses
import os
import sys
import time

from absl import flags

from cfrx_examples._common import (
    check_device,
    check_list,
    check_local_workers,
    check_number,
    check_number_list,
    check_output_dir,
    check_results_folder,
    check_resumed_checkpoint,
    check_seed,
    check_writable_dir,
    define_common_flags,
    define_worker_flags,
    load_game_or_exit,
    lock_run_folders,
    run_config,
    run_program,
    usage_error,
    worker_settings,
    write_csv_rows,
    write_results,
)
from openspiel_cfrx.cfr_mix import VARIANTS, CFRMixSolver
from openspiel_cfrx.eval.team_best_response import exact_team_worst_case, sampled_team_worst_case

FLAGS = flags.FLAGS
define_common_flags(
    game="team_goofspiel(num_cards=3,num_agents=2,num_turns=2)",
    game_help="Must be a factored team game, e.g. 'team_goofspiel(num_cards=3,num_agents=2,num_turns=2)' "
    "or nest.",
    iterations=1000,
    iterations_help="Maximum iterations per variant; each variant stops at --iterations or after --seconds of "
    "solver time, whichever comes first; >= 1. With --checkpoint_dir, the total to reach including resumed ones.",
    seed_help="Seeds every variant's solver (network initialisation, traversal sampling) and the sampled best "
    "response used when the exact metric is unavailable.",
    output_dir="out/cfr_mix",
    outputs="curves.csv, curves.png",
    eval_every=5,
    eval_every_help="Evaluate (and save --checkpoint_dir) every N iterations and at the last one; >= 1. "
    "Evaluation time is not charged to --seconds.",
    torch_device=True,
    device_help="Passed to CFRMixSolver / DeepCFRSolver(device=...) of every variant.",
)
define_worker_flags()
flags.DEFINE_list("variants", ["cfr_mix", "cfr_mix_no_sharing", "deep_cfr_mix", "independent"],
                  f"Comma-separated variants, from: {', '.join(VARIANTS)}, or deep_cfr "
                  "(openspiel_cfrx.DeepCFRSolver on joint team actions).")
flags.DEFINE_float("seconds", 30.0, "Wall-clock solver budget per variant, in seconds (evaluation excluded); > 0.")
flags.DEFINE_integer("traversals", 50, "Traversals per player per iteration.")
flags.DEFINE_list("hidden", ["64", "64"], "Comma-separated hidden-layer widths of the agent networks.")
flags.DEFINE_integer("train_steps", 100, "Adam steps per network per iteration.")
flags.DEFINE_integer("joint_cap", 64, "Joint actions valued per sampled team information set.")
flags.DEFINE_integer("exact_max_histories", 200_000,
                     "Use the exact NashConv metric if the game has at most this many histories; otherwise the "
                     "sampled team worst case.")
flags.DEFINE_integer("particles", 100, "Particles of the sampled best response (sampled metric only).")
flags.DEFINE_integer("eval_games", 1000, "Held-out games of the sampled best response (sampled metric only).")
flags.DEFINE_enum("infoset_encoding", "tensor", ["tensor", "compact"],
                  "Network input of the CFRMixSolver variants: the information-state tensor, or the game's compact "
                  "input (NEST only: current positions, path summary, distances to the evader and the exits; "
                  "recommended on large grids, e.g. nest(rows=15,cols=15,num_pursuers=4)).")
flags.DEFINE_string("checkpoint_dir", "", "If set, save <dir>/<variant>.pt after each evaluation and resume each "
                    "variant from its file when present (same flags needed); empty = no checkpoints.")


# The flag behind each solver setting ("group.field" of CFRMixSolver's / DeepCFRSolver's
# `settings.to_record()`; examples._common adds the common flags'), so a refused resume names the flag.
SETTING_FLAGS = {
    "core.num_traversals": "traversals", "core.regret_network_layers": "hidden", "core.policy_network_layers": "hidden",
    "core.regret_train_steps": "train_steps", "core.policy_train_steps": "train_steps",
    "traversal.joint_cap": "joint_cap", "network.infoset_encoding": "infoset_encoding",
    "openspiel.num_traversals": "traversals", "openspiel.policy_network_layers": "hidden",
    "openspiel.advantage_network_layers": "hidden", "openspiel.advantage_network_train_steps": "train_steps",
    "openspiel.policy_network_train_steps": "train_steps",
}  # fmt: skip


@dataclasses.dataclass
class Point:
    variant: str
    iteration: int
    seconds: float
    metric: str
    value: float
    ci95: float
    current: float = float("nan")  # exact NashConv of the current iterate (CFRMixSolver, exact metric only)


def make_solver(game, variant: str, traversals: int, hidden, train_steps: int, joint_cap: int, seed: int,
                device: str = "cpu", infoset_encoding: str = "tensor", workers: dict | None = None):
    """(step(), policy) for a variant name (CFRMixSolver variants or "deep_cfr");
    `workers`: num_workers / ray_address of the solver."""
    workers = {"num_threads": 1, **(workers or {})}  # one torch thread, as CFRMixSolver's default
    check_variant(variant, infoset_encoding)
    if variant == "deep_cfr":
        from openspiel_cfrx.deep import DeepCFRSolver

        solver = DeepCFRSolver(game, policy_network_layers=hidden, advantage_network_layers=hidden,
                               num_traversals=traversals, advantage_network_train_steps=train_steps,
                               policy_network_train_steps=train_steps, seed=seed, device=device,
                               workers=workers)  # fmt: skip
        return solver.run_iteration, solver
    solver = CFRMixSolver(game, variant=variant, num_traversals=traversals, regret_network_layers=hidden,
                          policy_network_layers=hidden, regret_train_steps=train_steps,
                          policy_train_steps=train_steps, traversal={"joint_cap": joint_cap}, seed=seed,
                          device=device, network={"infoset_encoding": infoset_encoding}, workers=workers)  # fmt: skip
    return solver.run_iteration, solver


def check_variant(variant: str, infoset_encoding: str) -> None:
    """One-line error for an unknown variant or one that cannot take `infoset_encoding`."""
    if variant == "deep_cfr":
        if infoset_encoding != "tensor":
            usage_error("--infoset_encoding=compact applies to the CFRMixSolver variants only; drop deep_cfr "
                        "from --variants or use --infoset_encoding=tensor")
    elif variant not in VARIANTS:
        usage_error(f"unknown variant {variant!r}; choose from {', '.join(VARIANTS)}, deep_cfr")


def evaluate(game, policy, exact: bool, particles: int, eval_games: int, seed: int) -> tuple[str, float, float, float]:
    """(metric, value, ci95, current): the played (average) strategy's value and,
    with the exact metric, the current iterate's NashConv (NaN otherwise): a
    product of averaged marginals is not the average of the product iterates."""
    if exact:
        from openspiel_cfrx import get_tree, nash_conv

        current = float("nan")
        if hasattr(policy, "current_policy_array"):
            current = float(nash_conv(game, policy.current_policy_array(get_tree(game))))
        return "nash_conv", float(nash_conv(game, policy)), 0.0, current
    result = sampled_team_worst_case(game, policy, num_particles=particles, num_eval_games=eval_games, seed=seed)
    return "team_worst_case", result.value, result.ci95, float("nan")


def exact_available(game, max_histories: int) -> bool:
    try:
        exact_team_worst_case(game, _Uniform(game), max_histories=max_histories)
    except ValueError:
        return False
    return True


class _Uniform:
    def __init__(self, game):
        self.game = game

    def strategy_array(self, tree):
        mask = tree.infoset_legal_mask.astype(float)
        return mask / mask.sum(axis=1, keepdims=True)


def run_variants(game, variants, seconds, iterations, traversals, hidden, train_steps, joint_cap, eval_every,
                 exact, particles, eval_games, seed, log=print, device="cpu", checkpoint_dir="", output_dir="",
                 previous=(), infoset_encoding="tensor", workers: dict | None = None,
                 config: dict | None = None) -> list[Point]:  # fmt: skip
    """Runs each variant; with `checkpoint_dir`, resumes a variant from
    `<checkpoint_dir>/<variant>.pt` when present (keeping its `previous`
    points up to the resumed iteration, e.g. read from curves.csv) and, at
    every evaluation, writes curves.csv to `output_dir` (if given) and then
    the checkpoint, so the CSV always covers the checkpointed iterations.
    `config`: the run configuration (`examples._common.run_config`), recorded
    in curves.config.json and each checkpoint; a checkpoint of another
    configuration is refused."""
    points = []
    for index, variant in enumerate(variants):
        step, policy = make_solver(game, variant, traversals, hidden, train_steps, joint_cap, seed, device,
                                   infoset_encoding, workers)  # fmt: skip
        if config is not None:
            config["settings"] = {**(config.get("settings") or {}), variant: policy.settings.to_record()}
        checkpoint = os.path.join(checkpoint_dir, f"{variant}.pt") if checkpoint_dir else ""
        if checkpoint and os.path.exists(checkpoint):
            from openspiel_cfrx.deep import CheckpointError

            try:
                policy.load_checkpoint(checkpoint)
            except CheckpointError as e:
                message = " ".join(str(e).split())  # one line (torch's load_state_dict errors span several)
                sys.exit(f"error: {message}; delete {checkpoint} or choose another --checkpoint_dir")
            if config is not None:
                check_resumed_checkpoint(checkpoint, (policy.checkpoint_extra or {}).get("run"),
                                         getattr(policy, "checkpoint_settings", None), config,
                                         policy.settings.to_record(), SETTING_FLAGS)  # fmt: skip
            done = policy.iteration
            saved = (policy.checkpoint_extra or {}).get("points")
            if saved is not None:  # the rows written with the checkpoint: exactly the run's rows so far
                points.extend(Point(**row) for row in saved)
            else:  # checkpoint written before rows were stored in it
                points.extend(p for p in previous if p.variant == variant and p.iteration <= done)
            spent = policy.traversal_seconds + policy.training_seconds
            if log:
                log(f"resumed from {checkpoint} at iteration {done}")
        else:
            done, spent = 0, 0.0
            metric, value, ci, current = evaluate(game, policy, exact, particles, eval_games, seed)
            points.append(Point(variant, 0, 0.0, metric, value, ci, current))
        pending = set(variants[index + 1:])
        for it in range(done + 1, iterations + 1):
            if spent >= seconds:
                break
            start = time.perf_counter()
            step()
            spent += time.perf_counter() - start
            if it % eval_every == 0 or it == iterations or spent >= seconds:
                metric, value, ci, current = evaluate(game, policy, exact, particles, eval_games, seed + it)
                points.append(Point(variant, it, spent, metric, value, ci, current))
                if log:
                    error = f"(exact; current iterate {current:.4f})" if exact else f"+- {ci:.4f} (95% CI)"
                    log(f"{variant:20s} it {it:4d} {spent:7.1f}s {metric} {value:.4f} {error}")
                if checkpoint:
                    if output_dir:  # keep the previous points of variants still to resume
                        write_csv(points + [p for p in previous if p.variant in pending], output_dir, config)
                    mine = [dataclasses.asdict(p) for p in points if p.variant == variant]
                    run = {key: value for key, value in (config or {}).items() if key != "settings"} or None
                    policy.save_checkpoint(checkpoint, extra={"points": mine, "run": run})
    return points


def write_csv(points: list[Point], output_dir: str, config: dict | None = None) -> None:
    """curves.csv, written atomically (an interrupted run never leaves half a file);
    with `config` (`examples._common.run_config`), a `game` column and curves.config.json."""
    # nash_conv / exploitability (= NashConv / 2, the team as one player against the adversary) are filled
    # where the exact metric was used, as every example's CSV carries them.
    rows = [dict(variant=p.variant, iteration=p.iteration, seconds=f"{p.seconds:.3f}", metric=p.metric,
                 value=f"{p.value:.6g}", ci95=f"{p.ci95:.4g}", current=f"{p.current:.6g}",
                 nash_conv=f"{p.value:.6g}" if p.metric == "nash_conv" else "",
                 exploitability=f"{p.value / 2:.6g}" if p.metric == "nash_conv" else "") for p in points]  # fmt: skip
    fields = [f.name for f in dataclasses.fields(Point)] + ["nash_conv", "exploitability"]
    if config is None:
        write_csv_rows(os.path.join(output_dir, "curves.csv"), rows, fields)
    else:
        write_results(os.path.join(output_dir, "curves.csv"), rows, config, fields)


def read_csv(output_dir: str) -> list[Point]:
    """The points of an earlier run's curves.csv in `output_dir` ([] if none)."""
    path = os.path.join(output_dir, "curves.csv")
    if not os.path.exists(path):
        return []
    try:
        with open(path, encoding="utf-8") as f:
            return [Point(r["variant"], int(r["iteration"]), float(r["seconds"]), r["metric"], float(r["value"]),
                          float(r["ci95"]), float(r.get("current") or "nan")) for r in csv.DictReader(f)]  # fmt: skip
    except (KeyError, TypeError, ValueError) as e:
        sys.exit(f"error: cannot read {path} to resume its curves ({type(e).__name__}: {e}); delete it or "
                 "choose another --output_dir")  # fmt: skip


def write_points(points: list[Point], output_dir: str, title: str, config: dict | None = None) -> None:
    write_csv(points, output_dir, config)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for variant in dict.fromkeys(p.variant for p in points):
        mine = [p for p in points if p.variant == variant]
        ax.errorbar([p.seconds for p in mine], [p.value for p in mine], yerr=[p.ci95 for p in mine],
                    label=variant, marker="o", markersize=3, capsize=2)  # fmt: skip
    metric = points[0].metric if points else ""
    ax.set_xlabel("solver seconds")
    ax.set_ylabel("NashConv (team as one player)" if metric == "nash_conv" else "team worst-case utility")
    if metric == "nash_conv":
        ax.set_yscale("log")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "curves.png"), dpi=120)
    plt.close(fig)


def main(argv):
    del argv
    check_output_dir()
    check_list("variants", [*VARIANTS, "deep_cfr"])
    check_number("seconds", 0, strict=True)
    check_number("iterations", 1)
    check_number("eval_every", 1)
    for name in ("traversals", "train_steps", "joint_cap", "particles", "eval_games"):
        check_number(name, 1)
    check_number("exact_max_histories", 0)
    check_number_list("hidden", int, 1, unique=False)
    check_seed()
    check_local_workers()
    check_writable_dir(FLAGS.output_dir, "output_dir")
    check_writable_dir(FLAGS.checkpoint_dir, "checkpoint_dir")
    check_device(FLAGS.device, torch_device=True)
    game = load_game_or_exit(FLAGS.game)
    from openspiel_cfrx import team

    if not team.is_factored_team_game(game):
        sys.exit(f"error: {FLAGS.game} is not a team game (needs the factored team protocol)")
    if FLAGS.iterations < 1 or FLAGS.eval_every < 1 or FLAGS.seconds <= 0:
        usage_error("--iterations and --eval_every must be >= 1 and --seconds > 0")
    try:
        hidden = [int(h) for h in FLAGS.hidden]
    except ValueError:
        usage_error(f"--hidden must be integers, got {FLAGS.hidden}")
    if FLAGS.infoset_encoding == "compact" and not callable(getattr(game, "compact_information_state_size", None)):
        usage_error(f"--infoset_encoding=compact needs a game with a compact network input (nest); "
                    f"{game.get_type().short_name} has none: use --infoset_encoding=tensor")
    exact = exact_available(game, FLAGS.exact_max_histories)
    for variant in FLAGS.variants:
        check_variant(variant, FLAGS.infoset_encoding)
    config = run_config(FLAGS.game, game)
    lock_run_folders(output_dir=FLAGS.output_dir, checkpoint_dir=FLAGS.checkpoint_dir)
    check_results_folder(config, os.path.join(FLAGS.output_dir, "curves.csv"))
    previous = read_csv(FLAGS.output_dir) if FLAGS.checkpoint_dir else []
    points = run_variants(game, FLAGS.variants, FLAGS.seconds, FLAGS.iterations, FLAGS.traversals, hidden,
                          FLAGS.train_steps, FLAGS.joint_cap, FLAGS.eval_every, exact, FLAGS.particles,
                          FLAGS.eval_games, FLAGS.seed, device=FLAGS.device, checkpoint_dir=FLAGS.checkpoint_dir,
                          output_dir=FLAGS.output_dir, previous=previous,
                          infoset_encoding=FLAGS.infoset_encoding, workers=worker_settings(),
                          config=config)  # fmt: skip
    if not points:
        print("nothing to do: every variant already at --iterations or --seconds")
        return
    write_points(points, FLAGS.output_dir, FLAGS.game, config)
    print(f"wrote {os.path.join(FLAGS.output_dir, 'curves.csv')} and curves.png")


def run():
    """The console script's entry point."""
    run_program(main, __name__)


if __name__ == "__main__":
    run()
