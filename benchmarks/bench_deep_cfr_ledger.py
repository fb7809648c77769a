"""Deep CFR deviation ledger: what each way `fhp_5x2` departs from the paper costs or gains.

The paper's method (`deep_cfr_preset("paper", game=...)`: Algorithm 1 of
Brown et al. 2019 with Section 5's settings) on 5x2 flop hold'em, with its SGD
budget scaled by ONE factor (`SGD_SCALE`), is BASE. Every other row of
`LEDGER` is BASE with one setting moved to the value `deep_cfr_preset("fhp_5x2")`
uses (not cumulative: each effect is measured against the paper's method),
and the last row is the `fhp_5x2` preset itself.

The scale: one paper iteration costs 2 networks x 4,000 Adam steps x 0.090
CPU s per step of batch 10,000 = 720 s here (`paper_iteration.md`), so a
10-minute budget would not finish one. BASE divides the SGD steps of both
networks by 10 (4,000 -> 400, batch 10,000 kept: the data per step is the
paper's), ~73 s per iteration, about 8 iterations in 600 s. The factor is a
row itself (`sgd_full`): it runs only when the budget holds at least
`MIN_ITERATIONS` of its estimated iterations (a row whose iteration costs no
more than BASE's always runs), and is otherwise shown as
projected from paper_iteration.md (its cost, never a NashConv).

Each (row, seed) is one run of `bench_fhp_curve.py --algorithms=deep_cfr` in
a subprocess (one torch thread, the budget in the process's CPU seconds
(`--clock=cpu`, so `--jobs` runs can share the cores), checkpoints at
`--fractions` of it, exact NashConv by `--evaluator=states` for every row:
the engine evaluator measures suit-symmetric networks only; the states one
any policy, 1.5 s for a tabular one on 5x2), with `--checkpoint`: rerunning the same command skips
finished runs (their CSV reaches the budget) and resumes the others.

The page: per row, NashConv at the budget's last checkpoint (equal
wall-clock) and interpolated at equal nodes touched (log NashConv linear in
log nodes, at the smaller of the row's and BASE's final node counts, per
seed; never extrapolated), each paired by seed against BASE: effect = row -
BASE, mean and 95% t half-width (`common.mean_and_interval`).

    nice -n 10 .venv/bin/python benchmarks/bench_deep_cfr_ledger.py --plan
    nice -n 10 .venv/bin/python benchmarks/bench_deep_cfr_ledger.py            # hours: see --plan
    nice -n 10 .venv/bin/python benchmarks/bench_deep_cfr_ledger.py --quick    # plumbing, 4x2, ~3 min
"""

from __future__ import annotations

import concurrent.futures
import csv
import dataclasses
import json
import math
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import (  # noqa: E402
    OneLineArgumentParser,
    check_writable_dir,
    markdown_table,
    mean_and_interval,
    usage_error,
    write_result,
)
from openspiel_cfrx.presets import DEEP_CFR_PRESETS, bfloat16_is_fast, paper_preset  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CURVE = os.path.join(ROOT, "benchmarks", "bench_fhp_curve.py")
GAME = "flop_holdem(num_ranks=5,num_suits=2)"
QUICK_GAME = "flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"

SGD_SCALE = 10  # BASE trains each network for the paper's steps / SGD_SCALE (batch unchanged)
QUICK_SGD_SCALE = 100  # --quick divides every row's SGD steps by this much more (plumbing only)
STEP_SECONDS = 0.090  # CPU s per SGD step, Appendix C net d=96, batch 10,000 (benchmarks/results/paper_iteration.md)
TRAVERSAL_SECONDS = 0.8  # CPU s of one paper iteration's traversals (paper_iteration.md)
MIN_ITERATIONS = 3  # a row whose estimated iteration costs more than budget / MIN_ITERATIONS is not run
STEP_FIELDS = ("advantage_network_train_steps", "policy_network_train_steps")

PAPER = dict(paper_preset(GAME).kwargs)
BASE = dict(PAPER, **{k: PAPER[k] // SGD_SCALE for k in STEP_FIELDS})
FHP_5X2 = dict(DEEP_CFR_PRESETS["fhp_5x2"].kwargs)


# The MLP rows read the information-state tensor (102-106 floats): 40M entries per memory would take ~48 GiB
# when full, which DeepCFRSolver refuses on this 23 GiB machine (memories.check_memory_budget), so they keep
# 10M (~12 GiB). A reservoir that never fills keeps every entry, so the capacity changes nothing while the run's
# memories stay under it: the page shows each run's final memory sizes to check that.
NETWORK_MEMORY = 10_000_000
MEMORY_NOTE = ("memory_capacity 10M instead of 40M: 40M entries of the MLP's ~100-float input would take ~48 GiB, "
               "which the solver refuses here; identical while the memories stay under 10M (see the memory sizes)")


@dataclasses.dataclass(frozen=True)
class Row:
    """One deviation: the paper's choice, fhp_5x2's, and the settings that
    move BASE to it (`whole_preset`: the fhp_5x2 preset itself)."""

    name: str
    paper: str
    ours: str
    change: dict
    note: str = ""
    whole_preset: bool = False

    def settings(self) -> dict:
        return dict(FHP_5X2) if self.whole_preset else dict(BASE, **self.change)


LEDGER = (
    Row("base", "Algorithm 1, Sections 5.1-5.3 and 6", f"the same, SGD steps / {SGD_SCALE} (4,000 -> 400 per network)", {}),
    Row("sgd_full", "4,000 SGD steps per network per iteration", f"BASE: {4000 // SGD_SCALE} (the scale factor 1/{SGD_SCALE})",
        dict(advantage_network_train_steps=4000, policy_network_train_steps=4000)),
    Row("fine_tune", "advantage networks retrained from scratch", "fine-tuned, no reinitialisation (fhp_full's; the step between)",
        dict(reinitialize_advantage_networks=False)),
    Row("shrink_perturb", "advantage networks retrained from scratch",
        "shrink-and-perturb: moved 5% toward a fresh initialisation, then fine-tuned",
        dict(reinitialize_advantage_networks=0.05)),
    Row("sgd_150x2048", f"advantage SGD 4,000 x 10,000 (BASE {4000 // SGD_SCALE} x 10,000)",
        "150 steps x batch 2,048 (the average network keeps BASE's: fhp_5x2 trains none)",
        dict(advantage_network_train_steps=150, batch_size_advantage=2048)),
    Row("mlp", "Appendix C network, width 96", "MLP on the information-state tensor, 256x256 (average 128x128)",
        dict(network="mlp", advantage_network_layers=(256, 256), policy_network_layers=(128, 128),
             memory_capacity=NETWORK_MEMORY), MEMORY_NOTE),
    Row("suit_symmetric", "Appendix C network, width 96", "suit-symmetric MLP 256x256 / 128x128 (fhp_full's kind)",
        dict(network="suit_symmetric_mlp", advantage_network_layers=(256, 256), policy_network_layers=(128, 128),
             memory_capacity=NETWORK_MEMORY), MEMORY_NOTE),
    Row("sd_cfr", "average-strategy network trained on M_Pi", "SD-CFR: the exact mixture of the kept iterates",
        dict(average_policy="sd_cfr")),
    Row("uniform_average", "average weighted linearly (t), as the regrets", "average weighted uniformly (regrets keep t)",
        dict(average_weighting="uniform")),
    Row("pot_regrets", "raw sampled regrets", "regrets divided by the pot at their node", dict(regret_scale="pot")),
    Row("bfloat16", "float32 training", "bfloat16 autocast", dict(training_precision="bfloat16")),
    Row("memory_2m", "reservoir memories of 40M infosets", "2M", dict(memory_capacity=2_000_000)),
    Row("traversals_5000", "10,000 traversals per player and iteration", "5,000", dict(num_traversals=5000)),
    Row("all_fhp_5x2", "all of the above as published", "the fhp_5x2 preset itself", {}, whole_preset=True),
)  # fmt: skip
ROWS = {row.name: row for row in LEDGER}


def iteration_seconds(settings: dict) -> float | None:
    """Estimated CPU s of one iteration (both advantage networks + traversals)
    for the Appendix C network, from paper_iteration.md's step cost scaled by
    batch; None for other networks (not measured there)."""
    if settings.get("network") != "poker":
        return None
    per_step = STEP_SECONDS * settings["batch_size_advantage"] / 10_000
    return 2 * settings["advantage_network_train_steps"] * per_step + TRAVERSAL_SECONDS * settings["num_traversals"] / 10_000


def skip_reason(row: Row, seconds: float, quick: bool = False) -> str | None:
    """Why `row` is not run (None: it runs)."""
    settings = run_settings(row, quick)
    if row.name == "bfloat16" and not bfloat16_is_fast():
        return ("not run: this CPU has no bfloat16 matrix instructions (AMX / AVX-512 BF16; presets.bfloat16_is_fast), "
                "so bfloat16 autocast would only be slower than float32 here")  # fmt: skip
    cost, base = iteration_seconds(settings), iteration_seconds(run_settings(ROWS["base"], quick))
    if cost is not None and cost > base and cost * MIN_ITERATIONS > seconds:  # BASE always runs
        return (f"projected from paper_iteration.md, not run: one iteration costs ~{cost:,.0f} CPU s "
                f"(2 x {settings['advantage_network_train_steps']:,} steps x {STEP_SECONDS} s), so a {seconds:g} s "
                f"budget holds {seconds / cost:.2f} of them (BASE: ~{base:,.0f} s each, {seconds / base:.1f}); runs when --seconds >= "
                f"{cost * MIN_ITERATIONS:,.0f}")  # fmt: skip
    return None


def run_settings(row: Row, quick: bool = False) -> dict:
    """The DeepCFRSolver keyword arguments a run of `row` gets: the row's
    settings; the fhp_5x2 row falls back to float32 where presets do
    (`deep_cfr_preset`); --quick divides the SGD steps by QUICK_SGD_SCALE."""
    settings = row.settings()
    if row.whole_preset and settings.get("training_precision") == "bfloat16" and not bfloat16_is_fast():
        settings["training_precision"] = "float32"
    if quick:
        for k in STEP_FIELDS:
            settings[k] = max(1, settings[k] // QUICK_SGD_SCALE)
    return settings


def run_dir(out_dir: str, row: str, seed: int) -> str:
    return os.path.join(out_dir, f"{row}_seed{seed}")


def csv_path(out_dir: str, row: str, seed: int) -> str:
    """Where bench_fhp_curve.py writes the run's CSV (its page for a game other than flop_holdem: fhp_curve)."""
    return os.path.join(run_dir(out_dir, row, seed), "fhp_curve", "fhp_curve.csv")


def read_curve(path: str) -> list[dict]:
    """A run's checkpoints (seconds, solver seconds, nodes touched, NashConv mbb/g), by steps; [] if absent."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r.get("algorithm") == "deep_cfr"]
    return sorted(({"steps": int(r["steps"]), "seconds": float(r["seconds"]), "solver_seconds": float(r["solver_seconds"]),
                    "nodes_touched": float(r["nodes_touched"]), "nash_conv_mbb": float(r["nash_conv_mbb"])} for r in rows),
                  key=lambda r: r["steps"])  # fmt: skip


def finished(curve: list[dict], seconds: float) -> bool:
    """Whether a run's curve reaches the budget (its last checkpoint is past `seconds` of solver time)."""
    return bool(curve) and curve[-1]["solver_seconds"] >= seconds


def at_nodes(curve: list[dict], nodes: float) -> float | None:
    """NashConv at `nodes` touched, log NashConv interpolated linearly in log
    nodes between checkpoints; None outside the curve (never extrapolated)."""
    points = [(math.log(r["nodes_touched"]), math.log(r["nash_conv_mbb"])) for r in curve if r["nodes_touched"] > 0]
    x = math.log(nodes)
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        if x0 <= x <= x1:
            return math.exp(y0 if x1 == x0 else y0 + (x - x0) / (x1 - x0) * (y1 - y0))
    return next((math.exp(y) for px, y in points if math.isclose(x, px)), None)


def paired(base: dict[int, list[dict]], row: dict[int, list[dict]]) -> dict:
    """Effects of a row against BASE, paired by seed over the seeds both
    finished: equal time (last checkpoints) and equal nodes (at the smaller
    final node count of the two, per seed)."""
    seeds = sorted(set(base) & set(row))
    time_effects = [row[s][-1]["nash_conv_mbb"] - base[s][-1]["nash_conv_mbb"] for s in seeds]
    base_levels = [base[s][-1]["nash_conv_mbb"] for s in seeds]
    node_effects, node_base = [], []
    for s in seeds:
        nodes = min(row[s][-1]["nodes_touched"], base[s][-1]["nodes_touched"])
        mine, theirs = at_nodes(row[s], nodes), at_nodes(base[s], nodes)
        if mine is not None and theirs is not None:
            node_effects.append(mine - theirs)
            node_base.append(theirs)
    out = {"seeds": seeds, "level": mean_and_interval([row[s][-1]["nash_conv_mbb"] for s in row]) if row else None,
           "time": None, "nodes": None, "node_seeds": len(node_effects)}  # fmt: skip
    if seeds:
        mean, half = mean_and_interval(time_effects)
        out["time"] = (mean, half, 100.0 * mean / (sum(base_levels) / len(base_levels)))
    if node_effects:
        mean, half = mean_and_interval(node_effects)
        out["nodes"] = (mean, half, 100.0 * mean / (sum(node_base) / len(node_base)))
    return out


def memory_sizes(out_dir: str, row: str, seed: int) -> str | None:
    """A run's memory sizes at its last checkpoint, as its bench_fhp_curve.py page states them."""
    try:
        with open(os.path.join(run_dir(out_dir, row, seed), "fhp_curve.md"), encoding="utf-8") as f:
            found = re.findall(r"memories (adv [\d,]*\d/[\d,]*\d, strategy [\d,]*\d)", f.read())
    except OSError:
        return None
    return found[-1] if found else None


def _effect_cell(effect, n: int, paired_seeds: int = 0) -> str:
    if effect is None:
        return "– (no node count both curves reach)" if paired_seeds else "–"
    mean, half, relative = effect
    if n < 2:
        return f"{mean:+,.1f} ({relative:+.0f}%; {n} seed: no interval)"
    return f"{mean:+,.1f} ± {half:,.1f} ({relative:+.0f}%)"


def ledger_page(args, rows: list[Row], curves: dict, planned: dict, failures: dict) -> str:
    """The results page's body (the table and the grid's state)."""
    base = curves.get("base", {})
    table, done_total, planned_total = [], 0, 0
    for row in rows:
        mine = curves.get(row.name, {})
        done, plan = len(mine), planned[row.name]
        done_total, planned_total = done_total + done, planned_total + plan
        reason = skip_reason(row, args.seconds, args.quick)
        if reason:
            table.append([f"`{row.name}`", row.paper, row.ours, reason, "–", "–", "0 / 0"])
            continue
        level = "–"
        if mine:
            mean, half = mean_and_interval([c[-1]["nash_conv_mbb"] for c in mine.values()])
            level = f"{mean:,.1f}" + (f" ± {half:,.1f}" if len(mine) > 1 else f" (seed {next(iter(mine))} only: no interval)")
        if row.name == "base":
            effect_time = effect_nodes = "(the reference)"
        else:
            effect = paired(base, mine)
            effect_time = _effect_cell(effect["time"], len(effect["seeds"]))
            effect_nodes = _effect_cell(effect["nodes"], effect["node_seeds"], len(effect["seeds"]))
        state = f"{done} / {plan}" + (f" ({len(failures[row.name])} failed)" if failures.get(row.name) else "")
        table.append([f"`{row.name}`", row.paper, row.ours, level, effect_time, effect_nodes, state])
    game = QUICK_GAME if args.quick else GAME
    grid = (f"**{done_total} of {planned_total} planned runs are finished**"
            + (" (a half-finished grid: the rows show only their finished seeds, nothing is extrapolated; rerun the "
               "same command to continue)" if done_total < planned_total else "") + ".")  # fmt: skip
    changes = "\n".join(f"- `{r.name}`: " + ("the fhp_5x2 preset, " + f"`{json.dumps(run_settings(r, args.quick))}`"
                                             if r.whole_preset else f"`{json.dumps(r.change)}`" if r.change else "BASE")
                        for r in rows)  # fmt: skip
    memories = "\n".join(f"- `{name}`: " + "; ".join(f"seed {seed}: {memory_sizes(args.out_dir, name, seed) or '?'}"
                                                     for seed in runs) for name, runs in curves.items() if runs)
    return (
        f"Game `{game}`. BASE is the paper's method (`deep_cfr_preset(\"paper\")`: Algorithm 1, Appendix C network "
        f"width 96, retrain from scratch, reservoir 40M, linear weighting, average network, raw regrets, float32, "
        f"10,000 traversals) with **its SGD budget scaled by 1/{SGD_SCALE}: {4000 // SGD_SCALE:,} Adam steps of batch "
        f"10,000 per network per iteration instead of 4,000** (one paper iteration costs ~{iteration_seconds(PAPER):,.0f} "
        f"CPU s here, `paper_iteration.md`; the scale is the `sgd_full` row)"
        + (f"; --quick divides every row's SGD steps by {QUICK_SGD_SCALE} more" if args.quick else "")
        + f". Each other row is BASE with one setting moved to `fhp_5x2`'s value (not cumulative); the last row is "
        f"the preset itself. Budget {args.seconds:g} solver CPU s per run (process CPU seconds, one torch thread, checkpoints at "
        f"{args.fractions} of it), seeds {', '.join(map(str, args.seeds))}; exact NashConv (mbb/g) by "
        f"`bench_fhp_curve.py --evaluator=states`. Effects are row - BASE paired by seed (negative: the deviation "
        f"lowers exploitability), mean ± 95% t half-width over the paired seeds, relative to BASE's mean; equal "
        f"nodes: both curves at the smaller final node count (log-log interpolation, never extrapolated).\n\n"
        f"{grid}\n\n"
        + markdown_table(["deviation", "paper", "fhp_5x2", "NashConv at equal time (mbb/g)", "effect at equal time",
                          "effect at equal nodes", "runs done / planned"], table)  # fmt: skip
        + "".join(f"\n\n`{r.name}`: {r.note}" for r in rows if r.note)
        + f"\n\nMemories at each finished run's last checkpoint (advantage memories of the two players, strategy "
        f"memory; their capacity is 40M each, 10M in the MLP rows, 2M in `memory_2m` and `all_fhp_5x2`):\n\n{memories}"
        + f"\n\nBASE: `{json.dumps(run_settings(ROWS['base'], args.quick))}`\n\nChanges:\n\n{changes}\n"
        + ("".join(f"\nFailed: `{name}` seed {s} (exit status {rc}; its log: `{run_dir(args.out_dir, name, s)}/log.txt`)"
                   for name, seeds in failures.items() for s, rc in seeds.items()))  # fmt: skip
    )


def plan_text(args, rows: list[Row]) -> str:
    """The grid, its runs and CPU hours (nothing is run)."""
    lines, runs, extra = [], 0, 0.0
    for row in rows:
        reason = skip_reason(row, args.seconds, args.quick)
        if reason:
            lines.append(f"  {row.name:<16} skipped: {reason}")
            continue
        settings = run_settings(row, args.quick)
        cost = iteration_seconds(settings) or 0.0
        policy = (len(args.fractions.split(",")) * settings["policy_network_train_steps"] * STEP_SECONDS *
                  settings["batch_size_strategy"] / 10_000 if settings["average_policy"] == "network" and
                  settings["network"] == "poker" else 0.0)  # fmt: skip
        runs += len(args.seeds)
        extra += len(args.seeds) * (cost + policy + 20.0)
        lines.append(f"  {row.name:<16} {len(args.seeds)} seeds x {args.seconds:g} s")
    budget = runs * args.seconds / 3600.0
    return (f"grid: {len(rows)} rows x {len(args.seeds)} seeds ({', '.join(map(str, args.seeds))}) x {args.seconds:g} s\n"
            + "\n".join(lines)
            + f"\n{runs} runs, total {budget:,.2f} CPU hours of budget (solver CPU seconds, one torch thread each, "
            f"{args.jobs} run(s) at a time); with the last iteration's overshoot, the average network's training at each checkpoint "
            f"(Appendix C rows) and ~20 s of start-up and evaluation per run, about {budget + extra / 3600.0:,.2f} "
            f"CPU hours")  # fmt: skip


def run_one(args, row: Row, seed: int) -> int:
    """One (row, seed): bench_fhp_curve.py in a subprocess, resumed from its checkpoint; its exit status."""
    folder = run_dir(args.out_dir, row.name, seed)
    os.makedirs(folder, exist_ok=True)
    settings = run_settings(row, args.quick)
    stamp = {"game": QUICK_GAME if args.quick else GAME, "seconds": args.seconds, "fractions": args.fractions,
             "settings": settings, "clock": "cpu"}  # fmt: skip
    stamp_path = os.path.join(folder, "ledger_run.json")
    if os.path.exists(stamp_path):
        with open(stamp_path, encoding="utf-8") as f:
            earlier = json.load(f)
        if earlier != json.loads(json.dumps(stamp)):
            usage_error(f"{folder} holds a run with other settings or budget ({stamp_path}); a run resumes only "
                        "with the same ones: choose another --out_dir or delete that folder")  # fmt: skip
    else:
        with open(stamp_path, "w", encoding="utf-8") as f:
            json.dump(stamp, f)
    command = [sys.executable, CURVE, "--algorithms=deep_cfr", "--evaluator=states", "--clock=cpu",
               f"--game={stamp['game']}",
               f"--deep_cfr={json.dumps(settings)}", f"--seconds={args.seconds!r}", f"--fractions={args.fractions}",
               f"--seed={seed}", f"--checkpoint={os.path.join(folder, 'ckpt')}", f"--out_dir={folder}"]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.monotonic()
    with open(os.path.join(folder, "log.txt"), "a", encoding="utf-8") as log:
        rc = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env, check=False).returncode
    curve = read_curve(csv_path(args.out_dir, row.name, seed))
    last = f"NashConv {curve[-1]['nash_conv_mbb']:,.1f} mbb/g at {curve[-1]['seconds']:,.0f} s" if curve else "no curve"
    print(f"  {row.name} seed {seed}: exit {rc}, {time.monotonic() - start:,.0f} s wall, {last}", flush=True)
    return rc


def parse_args(argv=None):
    parser = OneLineArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="solver CPU seconds per run")
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (each one torch thread; CPU-second budgets)")
    parser.add_argument("--rows", default="", help=f"comma-separated rows (default all; base always): {', '.join(ROWS)}")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    parser.add_argument("--fractions", default="0.05,0.1,0.25,0.5,1",
                        help="checkpoints as fractions of --seconds, ending at 1 (the early ones give the rows that "
                             "iterate faster than BASE a point at BASE's final node count)")  # fmt: skip
    parser.add_argument("--out_dir", default="out/deep_cfr_ledger", help="the runs' folders")
    parser.add_argument("--output", default="benchmarks/results/deep_cfr_ledger.md", help="the results page")
    parser.add_argument("--quick", action="store_true",
                        help=f"plumbing check: {QUICK_GAME}, 5 s per run, seed 0, SGD steps / {QUICK_SGD_SCALE} more, "
                             "out/deep_cfr_ledger_quick")  # fmt: skip
    parser.add_argument("--plan", action="store_true", help="print the grid and its CPU hours; run nothing")
    parser.add_argument("--no_run", action="store_true", help="write the page from the runs on disk; run nothing")
    args = parser.parse_args(argv)
    given = set(argv if argv is not None else sys.argv[1:])
    if args.quick:
        if not any(a.startswith("--seconds") for a in given):
            args.seconds = 5.0
        if not any(a.startswith("--seeds") for a in given):
            args.seeds = "0"
        if not any(a.startswith("--fractions") for a in given):
            args.fractions = "0.5,1"
        if not any(a.startswith("--out_dir") for a in given):
            args.out_dir = "out/deep_cfr_ledger_quick"
    if args.jobs < 1:
        usage_error(f"--jobs must be >= 1, got {args.jobs}")
    if not (math.isfinite(args.seconds) and args.seconds > 0):
        usage_error(f"--seconds must be a finite number > 0, got {args.seconds}")
    try:
        args.seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        usage_error(f"--seeds must be comma-separated integers, e.g. 0,1,2; got {args.seeds!r}")
    if not args.seeds or min(args.seeds) < 0 or len(set(args.seeds)) != len(args.seeds):
        usage_error(f"--seeds must be distinct integers >= 0, got {args.seeds}")
    try:
        fractions = [float(x) for x in args.fractions.split(",")]
    except ValueError:
        fractions = []
    if not fractions or fractions != sorted(set(fractions)) or not all(0 < x <= 1 for x in fractions) or fractions[-1] != 1:
        usage_error(f"--fractions must be increasing numbers in (0, 1] ending at 1, got {args.fractions!r}")
    names = [n.strip() for n in args.rows.split(",") if n.strip()] or list(ROWS)
    unknown = [n for n in names if n not in ROWS]
    if unknown:
        usage_error(f"--rows: unknown row {unknown[0]!r}; choose from {', '.join(ROWS)}")
    args.row_list = [row for row in LEDGER if row.name in names or row.name == "base"]
    return args


def main(argv=None):
    args = parse_args(argv)
    rows = args.row_list
    print(plan_text(args, rows), flush=True)
    if args.plan:
        return 0
    check_writable_dir(args.out_dir, "--out_dir")
    planned = {row.name: 0 if skip_reason(row, args.seconds, args.quick) else len(args.seeds) for row in rows}
    failures: dict[str, dict[int, int]] = {}
    if not args.no_run:
        todo = []
        for seed in args.seeds:  # seed-major: a stopped grid has whole seeds of the ledger, not whole rows
            for row in rows:
                if not planned[row.name]:
                    continue
                if finished(read_curve(csv_path(args.out_dir, row.name, seed)), args.seconds):
                    print(f"  {row.name} seed {seed}: finished earlier", flush=True)
                    continue
                todo.append((row, seed))
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            done = pool.map(lambda job: (job, run_one(args, *job)), todo)
            for (row, seed), rc in done:
                if rc != 0:
                    failures.setdefault(row.name, {})[seed] = rc
    curves = {}
    for row in rows:
        for seed in args.seeds:
            curve = read_curve(csv_path(args.out_dir, row.name, seed))
            if planned[row.name] and finished(curve, args.seconds):
                curves.setdefault(row.name, {})[seed] = curve
    command = "python benchmarks/bench_deep_cfr_ledger.py " + " ".join(sys.argv[1:] if argv is None else argv)
    body = ledger_page(args, rows, curves, planned, failures)
    write_result(args.output, "Deep CFR deviation ledger: the paper's method vs fhp_5x2, one setting at a time",
                 body, header_command=command)  # fmt: skip
    print(body.split("\n\n")[1], flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
