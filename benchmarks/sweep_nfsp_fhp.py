"""NFSP hyperparameter sweep on 5x2 flop hold'em, evaluated exactly.

The Deep CFR paper (Brown et al. 2019, Figure 2 and its footnote 4) reports
NFSP's best result in flop hold'em "across a sweep of hyperparameters", with
the same model as Deep CFR's. This program runs such a sweep on
`flop_holdem(num_ranks=5,num_suits=2)` with OpenSpiel's PyTorch NFSP
(`openspiel_cfrx.contenders` `os_nfsp`, every setting passed to `nfsp.NFSP`):

1. `sweep`: every configuration of `GRID` (OpenSpiel's Leduc defaults, the
   base `hs` = Heinrich & Silver 2016's Limit Texas Hold'em settings scaled
   to this game, and one change of `hs` per row) for `--episodes` self-play
   episodes on seed 0. An episode budget, not seconds: the machine is shared,
   and equal episodes keep configurations comparable under load; training
   seconds and CPU seconds are recorded beside them.
2. `combined`: `hs` with every single change that beat `hs` at the final point
   (where two set the same argument, the better one's value).
3. `seeds`: the `--top` best configurations at the final point (and the Leduc
   defaults, `--baseline_seeds`) on seeds 1 .. `--seeds`-1.

At `--points` log-spaced episode counts the average networks are evaluated
exactly: NashConv (sum of both best-response gains) on the poker public tree
without isomorphism (`bench_full_fhp_nfsp.evaluate`, every board), mbb/g =
chips x 1000 / big blind. Each evaluated point is appended to
`<out_dir>/nfsp_sweep.csv` as soon as it is measured; rerunning the same
command skips finished runs (a run killed midway is rerun from its start, its
partial rows replaced; `--report_only` writes the page from the rows there). The page (`--output`) has the generated header, every
configuration's settings and curve, the seed statistics (mean and 95%
t-interval) and the chosen settings; its `## Reading` is kept on rerun.

    nice -n 10 .venv/bin/python benchmarks/sweep_nfsp_fhp.py --episodes=40000 \\
        --out_dir=out/nfsp_sweep --output=benchmarks/results/nfsp_sweep.md
    # quick (two configurations, a tiny budget, a minute):
    .venv/bin/python benchmarks/sweep_nfsp_fhp.py --quick --out_dir=/tmp/nfsp_sweep --output=/tmp/nfsp_sweep.md
"""

from __future__ import annotations

import csv
import json
import os
import sys
import time

import numpy as np
import pyspiel
import torch
from absl import flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402,F401  (registers flop_holdem)
from benchmarks.common import (  # noqa: E402
    markdown_table,
    mean_and_interval,
    parse_flags,
    usage_error,
    write_result,
)
from openspiel_cfrx.contenders import NFSP_PRESETS, make_contender, nfsp_settings  # noqa: E402
from openspiel_cfrx.eval.harness import FunctionContender, RunState, run_budget  # noqa: E402

# Heinrich & Silver 2016's Limit Texas Hold'em settings, scaled to 5x2 flop hold'em and this sweep's
# budget: anticipatory parameter 0.1, SGD with RL rate 0.1 and SL rate 0.005, epsilon 0.08 decaying
# to 0 (linearly, over ~the sweep's best-response steps), a 200k circular replay memory and a 2M
# reservoir (5x2 FHP has 70,740 infosets per player; the reservoir never fills in the sweep, the
# replay only in its 20k row). The network is Deep CFR's `fhp_5x2` policy network (128x128; also
# both networks of `fhp_full`), for both NFSP networks. Rewards are in big blinds (reward_scale=100:
# Q-learning's squared error on chip rewards of up to 700 diverges at the RL rate 0.1).
HS_BASE = dict(
    hidden=(128, 128), anticipatory_param=0.1, rl_learning_rate=0.1, sl_learning_rate=0.005,
    epsilon_start=0.08, epsilon_end=0.0, epsilon_decay_schedule_str="linear", epsilon_decay_duration=10_000,
    replay_buffer_capacity=200_000, reservoir_buffer_capacity=2_000_000, batch_size=128, learn_every=64,
    update_target_network_every=1000, weight_update_coeff=0.995, min_buffer_size_to_learn=1000,
    reward_scale=100.0,
)  # fmt: skip

# name -> (what it is, settings over NFSP_LEDUC_DEFAULTS)
GRID: dict[str, tuple[str, dict]] = {
    "leduc_defaults": ("OpenSpiel's Leduc example (today's `os_nfsp`: 128 units, chip rewards)", {}),
    "hs": ("Heinrich & Silver's LHE settings, scaled (HS_BASE)", HS_BASE),
    "hs_chips": ("hs, rewards in chips (reward_scale 1)", {**HS_BASE, "reward_scale": 1.0}),
    "hs_eta0.5": ("hs, anticipatory parameter 0.5", {**HS_BASE, "anticipatory_param": 0.5}),
    "hs_rl0.01": ("hs, RL learning rate 0.01", {**HS_BASE, "rl_learning_rate": 0.01}),
    "hs_sl0.02": ("hs, SL learning rate 0.02", {**HS_BASE, "sl_learning_rate": 0.02}),
    "hs_replay20k": ("hs, replay memory 20k", {**HS_BASE, "replay_buffer_capacity": 20_000}),
    "hs_reservoir20k": ("hs, reservoir 20k", {**HS_BASE, "reservoir_buffer_capacity": 20_000}),
    "hs_eps_flat": ("hs, epsilon 0.08 throughout", {**HS_BASE, "epsilon_end": 0.08}),
    "hs_target300": ("hs, target network every 300 RL steps", {**HS_BASE, "update_target_network_every": 300}),
    "hs_256": ("hs, 256x256 networks (Deep CFR's `fhp_5x2` advantage network)", {**HS_BASE, "hidden": (256, 256)}),
    "hs_adam": ("hs, Adam for both networks at rate 0.001", {**HS_BASE, "optimizer_str": "adam",
                                                              "rl_learning_rate": 0.001, "sl_learning_rate": 0.001}),
}  # fmt: skip
QUICK_CONFIGS = ("leduc_defaults", "hs")
GAME_5X2 = "flop_holdem(num_ranks=5,num_suits=2)"
FIELDS = ["stage", "config", "seed", "budget", "episodes", "train_seconds", "cpu_seconds", "nash_conv_mbb",
          "br_gain_p0", "br_gain_p1", "eval_seconds", "nodes_touched", "load", "settings", "failed"]  # fmt: skip


FLAGS = flags.FlagValues()  # this program's own (tests import several programs into one process)
flags.DEFINE_string("game", GAME_5X2, "the game", flag_values=FLAGS)
flags.DEFINE_integer("episodes", 40_000, "self-play episodes per run", flag_values=FLAGS)
flags.DEFINE_integer("points", 5, "log-spaced evaluation points (the last = --episodes)", flag_values=FLAGS)
flags.DEFINE_integer("episodes_per_step", 500, "episodes between evaluation checks", flag_values=FLAGS)
flags.DEFINE_string("configs", "", f"comma-separated subset of {', '.join(GRID)} (default all)", flag_values=FLAGS)
flags.DEFINE_integer("top", 2, "configurations rerun on more seeds", flag_values=FLAGS)
flags.DEFINE_integer("seeds", 3, "seeds of the top configurations (0 .. seeds-1)", flag_values=FLAGS)
flags.DEFINE_bool("baseline_seeds", True, "also run leduc_defaults on every seed (--nobaseline_seeds, or "
                  "--no-baseline_seeds: not)", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_bool("combine", True, "add the `combined` configuration (every change that beat hs; --nocombine or "
                  "--no-combine: not)", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_bool("quick", False, f"{' and '.join(QUICK_CONFIGS)} only, 2,000 episodes, 3 points, 2 seeds, no combined",
                  flag_values=FLAGS)  # fmt: skip
flags.DEFINE_bool("report_only", False, "run nothing: write the page from the runs already in --out_dir",
                  flag_values=FLAGS)  # fmt: skip
flags.DEFINE_integer("threads", 1, "torch threads", flag_values=FLAGS)
flags.DEFINE_string("out_dir", None, "nfsp_sweep.csv (resumable)", flag_values=FLAGS)
flags.mark_flag_as_required("out_dir", flag_values=FLAGS)
flags.DEFINE_string("output", "", "write this results page (markdown)", flag_values=FLAGS)
_NEGATIONS = {"--no-baseline_seeds": "--nobaseline_seeds", "--no-combine": "--nocombine"}  # the argparse spelling


def parse_args(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_flags(FLAGS, [_NEGATIONS.get(a, a) for a in argv], __doc__.split("\n\n")[0])
    if args.quick:
        args.configs, args.episodes, args.points, args.seeds, args.top, args.combine = (
            ",".join(QUICK_CONFIGS), 2000, 3, 2, 1, False)  # fmt: skip
        args.episodes_per_step = min(args.episodes_per_step, 250)
    args.configs = [c for c in args.configs.split(",") if c] or list(GRID)
    unknown = [c for c in args.configs if c not in GRID]
    if unknown:
        usage_error(f"unknown --configs {', '.join(unknown)}; choose from {', '.join(GRID)}")
    for key in ("episodes", "points", "episodes_per_step", "seeds", "threads"):
        if getattr(args, key) < 1:
            usage_error(f"--{key} must be >= 1, got {getattr(args, key)}")
    if args.episodes % args.episodes_per_step:
        usage_error(f"--episodes ({args.episodes}) must be a multiple of --episodes_per_step ({args.episodes_per_step})")
    return args


def eval_points(episodes: int, points: int, per_step: int) -> list[int]:
    """`points` log-spaced episode counts ending at `episodes`, the first at
    episodes / 2^(points-1), rounded to whole steps of `per_step`."""
    raw = np.geomspace(episodes / 2 ** (points - 1), episodes, points)
    return sorted({max(per_step, int(round(x / per_step)) * per_step) for x in raw[:-1]} | {episodes})


def read_rows(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write_rows(path: str, rows: list[dict], append: bool) -> None:
    new = not append or not os.path.exists(path)
    with open(path, "w" if not append else "a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerows(rows)


class _Diverged(Exception):
    """An NFSP step failed (its cause: OpenSpiel's error)."""


def evaluate_contender(game, contender) -> dict:
    """Exact NashConv of the contender's average networks (`bench_full_fhp_nfsp.evaluate`, every board)."""
    from benchmarks.bench_full_fhp_nfsp import evaluate

    nets = [agent._avg_network for agent in contender._agents]  # noqa: SLF001
    return evaluate(game, nets)


def run_one(game, stage: str, config: str, settings: dict, seed: int, args, table: str) -> list[dict]:
    """Trains one configuration on one seed to --episodes, appending a row to
    `table` at each evaluation point (its partial rows from a killed run are
    dropped first)."""
    kept = [r for r in read_rows(table) if not _same_run(r, config, seed, args.episodes)]
    write_rows(table, kept, append=False)
    points = eval_points(args.episodes, args.points, args.episodes_per_step)
    contender = make_contender("os_nfsp", game, seed=seed, episodes_per_step=args.episodes_per_step, **settings)
    per_step, rows = args.episodes_per_step, []
    marks = [p // per_step for p in points]  # a step of the harness is `per_step` episodes
    state, tally = RunState(pending=list(marks)), dict(steps=0, cpu=0.0)  # wall seconds in `state`, CPU in `tally`

    def step():
        c0 = time.process_time()
        try:
            contender.step()
        except (TypeError, AttributeError, ValueError, RuntimeError) as e:
            raise _Diverged from e
        tally["steps"], tally["cpu"] = tally["steps"] + 1, tally["cpu"] + time.process_time() - c0

    def measure(m):
        episodes, wall = m.steps * per_step, m.spent
        result = evaluate_contender(game, contender)
        row = {"stage": stage, "config": config, "seed": seed, "budget": args.episodes, "episodes": episodes,
               "train_seconds": round(wall, 2), "cpu_seconds": round(tally["cpu"], 2), **result,
               "nodes_touched": contender.nodes_touched, "load": round(os.getloadavg()[0], 2),
               "settings": json.dumps(settings, sort_keys=True)}  # fmt: skip
        write_rows(table, [row], append=True)
        rows.append(row)
        print(f"  {episodes:>8,} episodes {wall:7.1f} s (CPU {tally['cpu']:7.1f} s): NashConv "
              f"{result['nash_conv_mbb']:8.1f} mbb/g", flush=True)  # fmt: skip

    print(f"{config} seed {seed}: {args.episodes:,} episodes", flush=True)
    try:
        run_budget(FunctionContender(config, step, lambda: contender), measure, marks, by="steps",
                   max_steps=args.episodes // per_step, state=state, log=None)  # fmt: skip
    except _Diverged as diverged:
        # OpenSpiel's DQN returns early on a NaN loss, leaving its episode state behind: the next
        # episode then fails inside nfsp/dqn. The run is recorded as failed, not retried.
        e, episodes = diverged.__cause__, tally["steps"] * per_step
        row = {"stage": stage, "config": config, "seed": seed, "budget": args.episodes, "episodes": episodes,
               "train_seconds": round(state.spent, 2), "cpu_seconds": round(tally["cpu"], 2), "settings": json.dumps(settings, sort_keys=True),
               "failed": f"{type(e).__name__} in episodes {episodes:,}-{episodes + per_step:,} "
                         f"(Q-learning diverged: RL loss {[a._rl_agent.loss for a in contender._agents]})"}  # noqa: SLF001
        write_rows(table, [row], append=True)
        print(f"  failed: {row['failed']}", flush=True)
        return rows + [row]
    return rows


def _same_run(row: dict, config: str, seed: int, budget: int) -> bool:
    return row["config"] == config and int(row["seed"]) == seed and int(row["budget"]) == budget


def finals(rows: list[dict], budget: int) -> dict[tuple[str, int], float]:
    """(config, seed) -> NashConv (mbb/g) at the end of each finished run of
    `budget` episodes (inf for a run that failed)."""
    return {(r["config"], int(r["seed"])): float(r["nash_conv_mbb"]) if not r.get("failed") else float("inf")
            for r in rows if int(r["budget"]) == budget and (int(r["episodes"]) == budget or r.get("failed"))}  # fmt: skip


def changes_from_hs(settings: dict) -> dict:
    """The arguments of (complete) `settings` that differ from HS_BASE's."""
    base = nfsp_settings(**HS_BASE)
    return {k: v for k, v in settings.items() if base[k] != v}


def combined_settings(final: dict[tuple[str, int], float], configs: dict[str, dict]) -> dict | None:
    """HS_BASE with every single change (a `hs_*` row) that ended below `hs` on
    seed 0; where two set one argument differently, the better row's value.
    None when no change beat `hs` (or `hs` did not run). `configs`: complete
    settings (`nfsp_settings`)."""
    if ("hs", 0) not in final:
        return None
    winners = sorted((final[(name, 0)], name) for name in configs
                     if name.startswith("hs_") and (name, 0) in final and final[(name, 0)] < final[("hs", 0)])
    if not winners:
        return None
    merged = nfsp_settings(**HS_BASE)
    for _, name in reversed(winners):  # worst first: the better rows' values win
        merged.update(changes_from_hs(configs[name]))
    return merged


def plan_runs(args, configs: dict[str, dict], table: str, game) -> None:
    """The three stages (module doc); finished runs are skipped."""

    def ensure(stage, name, seed):
        if (name, seed) not in finals(read_rows(table), args.episodes):
            run_one(game, stage, name, configs[name], seed, args, table)

    for name in args.configs:
        ensure("sweep", name, 0)
    if args.combine:
        merged = combined_settings(finals(read_rows(table), args.episodes), configs)
        if merged is not None:
            configs["combined"] = merged
            ensure("combined", "combined", 0)
    final = finals(read_rows(table), args.episodes)
    ranked = sorted((final[(n, 0)], n) for n in configs
                    if (n, 0) in final and n != "leduc_defaults" and final[(n, 0)] < float("inf"))  # fmt: skip
    top = [n for _, n in ranked[: args.top]]
    extra = top + (["leduc_defaults"] if args.baseline_seeds and "leduc_defaults" in args.configs else [])
    for seed in range(1, args.seeds):
        for name in extra:
            ensure("seeds", name, seed)


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    os.makedirs(args.out_dir, exist_ok=True)
    game = pyspiel.load_game(args.game)
    configs = {name: nfsp_settings(**settings) for name, (_, settings) in GRID.items()}
    table = os.path.join(args.out_dir, "nfsp_sweep.csv")
    start = time.perf_counter()
    if not args.report_only:
        plan_runs(args, configs, table, game)
    rows = [r for r in read_rows(table) if int(r["budget"]) == args.episodes]
    print(f"sweep finished in {time.perf_counter() - start:.0f} s ({len(rows)} rows of {args.episodes:,}-episode runs)")
    write_result(args.output, f"NFSP hyperparameter sweep on {args.game}", page(args, rows))


def _settings_of(rows: list[dict], name: str) -> dict:
    return json.loads(next(r["settings"] for r in rows if r["config"] == name))


def _describe(name: str, settings: dict) -> str:
    if name in GRID:
        return GRID[name][0]
    changes = changes_from_hs(nfsp_settings(**settings))
    return "hs with " + ", ".join(f"{k}={v}" for k, v in sorted(changes.items()))


def page(args, rows: list[dict]) -> str:
    """The results page's body (module doc)."""
    points = eval_points(args.episodes, args.points, args.episodes_per_step)
    by_run: dict[tuple[str, int], dict[int, dict]] = {}
    failed = {(r["config"], int(r["seed"])): r for r in rows if r.get("failed")}
    for r in rows:
        if not r.get("failed"):
            by_run.setdefault((r["config"], int(r["seed"])), {})[int(r["episodes"])] = r
    names = list(dict.fromkeys(r["config"] for r in rows))
    intro = (f"OpenSpiel's PyTorch NFSP (`cfrx_examples.contenders` `os_nfsp`, settings passed to `nfsp.NFSP`) on "
             f"`{args.game}`, {args.episodes:,} self-play episodes per run, one torch thread. Exact NashConv of "
             "the average networks (sum of both best-response gains, every board, no isomorphism; mbb/g) at "
             f"{', '.join(f'{p:,}' for p in points)} episodes. Seconds: training only (wall clock and the "
             "process's CPU time; evaluation excluded)."
             + (" Uniform random play: 2,977.6 mbb/g." if args.game == GAME_5X2 else ""))
    base = "\n\n`hs` (HS_BASE in `benchmarks/sweep_nfsp_fhp.py`; every other row changes what its name says):\n\n"
    base += markdown_table(["argument", "value"], [[f"`{k}`", f"`{v}`"] for k, v in HS_BASE.items()])
    head = ["config", "what", *[f"{p:,}" for p in points], "train s", "CPU s"]
    sweep = []
    for name in names:
        run, fail = by_run.get((name, 0), {}), failed.get((name, 0))
        last = fail or run.get(points[-1]) or (run[max(run)] if run else None)
        gone = "failed" if fail else "–"
        sweep.append([f"`{name}`", _describe(name, _settings_of(rows, name)),
                      *[f"{float(run[p]['nash_conv_mbb']):,.1f}" if p in run else gone for p in points],
                      f"{float(last['train_seconds']):.0f}" if last else "–",
                      f"{float(last['cpu_seconds']):.0f}" if last else "–"])  # fmt: skip
    body = intro + base + "\n\n## Sweep (seed 0; NashConv in mbb/g at each episode count)\n\n"
    body += markdown_table(head, sweep) + "\n\n"
    body += "".join(f"Failed: `{n}` seed {s}: {r['failed']}.\n" for (n, s), r in failed.items()) + "\n" * bool(failed)
    body += seeds_section(args, by_run, names, points, rows)
    return body


def seeds_section(args, by_run, names, points, rows) -> str:
    """Mean and 95% t-interval over the seeds of every configuration run on
    more than one seed, and the chosen settings (the lowest mean at the end)."""
    multi = [n for n in names if sum(1 for (c, _) in by_run if c == n) > 1]
    if not multi:
        return "## Seeds\n\nNo configuration was run on more than one seed.\n"
    table, means = [], {}
    for name in multi:
        runs = [by_run[(n, s)] for (n, s) in sorted(by_run) if n == name]
        cells = []
        for p in points:
            values = [float(run[p]["nash_conv_mbb"]) for run in runs if p in run]
            mean, half = mean_and_interval(values) if values else (float("nan"), 0.0)
            cells.append(f"{mean:,.1f} ± {half:,.1f} ({len(values)})" if values else "–")
            if p == points[-1] and len(values) == len(runs):
                means[name] = mean
        seeds = ", ".join(str(s) for (n, s) in sorted(by_run) if n == name)
        cpu = np.mean([float(run[max(run)]["cpu_seconds"]) for run in runs])
        table.append([f"`{name}`", seeds, *cells, f"{cpu:.0f}"])
    text = ("## Seeds (mean ± 95% t-interval over seeds, mbb/g; the number of runs in brackets)\n\n"
            + markdown_table(["config", "seeds", *[f"{p:,}" for p in points], "CPU s (mean)"], table))
    candidates = {n: m for n, m in means.items() if n != "leduc_defaults"}
    if not candidates:
        return text + "\n"
    chosen = min(candidates, key=candidates.get)
    settings = nfsp_settings(**_settings_of(rows, chosen))
    preset = NFSP_PRESETS.get("fhp_tuned")
    same = preset is not None and nfsp_settings(**preset) == settings
    text += (f"\n\n## Chosen settings\n\n`{chosen}`: the lowest mean NashConv at {points[-1]:,} episodes "
             f"({candidates[chosen]:,.1f} mbb/g). Its `nfsp.NFSP` settings (`hidden` = `hidden_layers_sizes`; "
             "rewards divided by `reward_scale`):\n\n```python\n" + _as_kwargs(settings) + "\n```\n\n"
             + ("They are the preset `fhp_tuned` (`cfrx_examples.contenders.NFSP_PRESETS`)" if same else
                "They differ from the preset `fhp_tuned` in `cfrx_examples.contenders.NFSP_PRESETS`" if preset is not None
                else "`cfrx_examples.contenders.NFSP_PRESETS` has no `fhp_tuned` yet")
             + "; full flop hold'em with them: `benchmarks/bench_full_fhp_nfsp.py --nfsp_preset=fhp_tuned`.\n")
    return text



def _as_kwargs(settings: dict) -> str:
    """`dict(key=value, ...)`, one argument a line (a preset's source form)."""
    return "dict(\n" + "".join(f"    {k}={tuple(v) if isinstance(v, list) else v!r},\n" for k, v in settings.items()) + ")"


if __name__ == "__main__":
    main()
