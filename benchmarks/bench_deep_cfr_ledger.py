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
one evaluator for every network, with the on-policy walk and the current
iterate's NashConv too, 1.5 s for a tabular policy on 5x2), with `--checkpoint`: rerunning the same command skips
finished runs and resumes the others. A finished run's curve and memory
sizes are also kept as one small JSON record under `--records`
(`benchmarks/results/runs/deep_cfr/`, committed): the pages regenerate, and
the grids continue, on a fresh clone, where `out/` holds nothing.

The page: per row, NashConv at the budget's last checkpoint (equal
wall-clock) and interpolated at equal nodes touched (log NashConv linear in
log nodes, at the smaller of the row's and BASE's final node counts, per
seed; never extrapolated), each paired by seed against BASE: effect = row -
BASE, mean and 95% t half-width (`common.mean_and_interval`).

    nice -n 10 .venv/bin/python benchmarks/bench_deep_cfr_ledger.py --plan
    nice -n 10 .venv/bin/python benchmarks/bench_deep_cfr_ledger.py            # hours: see --plan
    nice -n 10 .venv/bin/python benchmarks/bench_deep_cfr_ledger.py --quick    # plumbing, 4x2, ~3 min

`--grid=full_fhp` runs BASE and the `fhp_full` preset on 52-card flop hold'em
at equal CPU seconds (default 2,700, seed 0, one checkpoint at the end) with
one best-response walk per checkpoint (`--evaluator=engine`), and splits the README's gap to the paper's
37 mbb/g into a method factor (fhp_full / BASE at equal CPU) and a compute
factor (BASE here / 37).
"""

from __future__ import annotations

import concurrent.futures
import csv
import dataclasses
import fcntl
import json
import math
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import flags  # noqa: E402

from benchmarks.common import (  # noqa: E402
    check_writable_dir,
    markdown_table,
    mean_and_interval,
    parse_flags,
    usage_error,
    write_result,
)
from openspiel_cfrx.checkpoint_io import atomic_write  # noqa: E402
from openspiel_cfrx.presets import (  # noqa: E402
    DEEP_CFR_PRESETS,
    bfloat16_is_fast,
    merge_settings,
    paper_preset,
    trains_in_bfloat16,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CURVE = os.path.join(ROOT, "benchmarks", "bench_fhp_curve.py")
GAME = "flop_holdem(num_ranks=5,num_suits=2)"
QUICK_GAME = "flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"

SGD_SCALE = 10  # BASE trains each network for the paper's steps / SGD_SCALE (batch unchanged)
QUICK_SGD_SCALE = 100  # --quick divides every row's SGD steps by this much more (plumbing only)
STEP_SECONDS = 0.090  # CPU s per SGD step, Appendix C net d=96, batch 10,000 (benchmarks/results/paper_iteration.md)
# How a step's cost grows with the Appendix C width d: poker_network_step.md measures 0.112 s at d=96 and 0.505 s
# at d=256 (one thread, batch 10,000), i.e. cost ~ d^1.54 between them (log(0.505/0.112) / log(256/96)).
WIDTH_EXPONENT = math.log(0.505 / 0.112) / math.log(256 / 96)
TRAVERSAL_SECONDS = 0.8  # CPU s of one paper iteration's traversals (paper_iteration.md)
MIN_ITERATIONS = 3  # a row whose estimated iteration costs more than budget / MIN_ITERATIONS is not run
STEP_FIELDS = ("advantage_network_train_steps", "policy_network_train_steps")

PAPER = dict(paper_preset(GAME).kwargs)
BASE = merge_settings(PAPER, {k: PAPER[k] // SGD_SCALE for k in STEP_FIELDS})
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
    move BASE to it (`preset`: that preset itself, e.g. fhp_5x2)."""

    name: str
    paper: str
    ours: str
    change: dict
    note: str = ""
    preset: str = ""

    def settings(self) -> dict:
        return dict(DEEP_CFR_PRESETS[self.preset].kwargs) if self.preset else merge_settings(BASE, self.change)


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
        dict(network={"family": "mlp"}, advantage_network_layers=(256, 256), policy_network_layers=(128, 128),
             memory_capacity=NETWORK_MEMORY), MEMORY_NOTE),
    Row("suit_symmetric", "Appendix C network, width 96", "suit-symmetric MLP 256x256 / 128x128 (fhp_full's kind)",
        dict(network={"family": "suit_symmetric_mlp"}, advantage_network_layers=(256, 256), policy_network_layers=(128, 128),
             memory_capacity=NETWORK_MEMORY), MEMORY_NOTE),
    Row("sd_cfr", "average-strategy network trained on M_Pi", "SD-CFR: the exact mixture of the kept iterates",
        dict(averaging={"average_policy": "sd_cfr"})),
    Row("uniform_average", "average weighted linearly (t), as the regrets", "average weighted uniformly (regrets keep t)",
        dict(averaging={"average_weighting": "uniform"})),
    Row("pot_regrets", "raw sampled regrets", "regrets divided by the pot at their node", dict(training={"regret_scale": "pot"})),
    Row("bfloat16", "float32 training", "bfloat16 autocast", dict(training={"precision": "bfloat16"})),
    Row("memory_2m", "reservoir memories of 40M infosets", "2M", dict(memory_capacity=2_000_000)),
    Row("traversals_5000", "10,000 traversals per player and iteration", "5,000", dict(num_traversals=5000)),
    Row("all_fhp_5x2", "all of the above as published", "the fhp_5x2 preset itself", {}, preset="fhp_5x2"),
)  # fmt: skip

# The paper's Figures 3 and 4 (Section 6), each curve a row against the same BASE (rows shared with the ledger
# are one run: same name, same folder, same settings). Figure 4 right needs memories that fill inside the
# budget: the paper cut its traversals to 10,000 per iteration so the window filled "after about 50 iterations"
# (footnote 6); BASE adds ~40,000-60,000 entries per advantage memory and ~155,000 strategy entries per
# iteration on 5x2, so 150,000 / 450,000 fill after ~3 of its ~8 iterations (the page shows the sizes).
SMALL_MEMORY = dict(memory_capacity=150_000, memory={"strategy_capacity": 450_000})
FIG3_SGD = f"Figure 3 middle: advantage SGD steps per iteration (BASE {4000 // SGD_SCALE}, the paper 4,000)"
FIG3_WIDTH = "Figure 3 right: hidden dimension of the model (BASE 96, the paper-sized FHP network)"


def _width(d: int) -> dict:
    return dict(advantage_network_layers=(d,), policy_network_layers=(d,))


FIGURES = (
    LEDGER[0],
    Row("traversals_3000", "Figure 3 left: 10,000 traversals per player and iteration", "3,000", dict(num_traversals=3000)),
    next(r for r in LEDGER if r.name == "traversals_5000"),
    Row("sgd_100", FIG3_SGD, "100", dict(advantage_network_train_steps=100)),
    Row("sgd_200", FIG3_SGD, "200", dict(advantage_network_train_steps=200)),
    Row("width_24", FIG3_WIDTH, "24 (both networks)", _width(24)),
    Row("width_48", FIG3_WIDTH, "48 (both networks)", _width(48)),
    Row("width_192", FIG3_WIDTH, "192 (both networks)", _width(192)),
    Row("linear_off", "Figure 4 left: linear weighting (Section 5.3)", "off: regrets and average weighted uniformly",
        dict(averaging={"linear_weighting": False})),
    next(r for r in LEDGER if r.name == "fine_tune"),
    Row("uniform_fallback", "Figure 4 left: the highest-regret action when no regret is positive (Section 3)",
        "uniform (standard regret matching)", dict(traversal={"regret_matching_fallback": "uniform"})),
    Row("reservoir_small", "Figure 4 right: reservoir memories", "reservoir, 150,000 per advantage memory, 450,000 "
        "strategy (full after ~3 iterations)", dict(SMALL_MEMORY)),
    Row("window_small", "Figure 4 right: reservoir memories", "sliding window, the same capacities",
        merge_settings(SMALL_MEMORY, {"memory": {"kind": "sliding_window"}})),
)  # fmt: skip
# Issue 61 part 4 on 52-card flop hold'em: the paper's method (BASE: the paper_fhp preset's settings, the same
# SGD scale) against the fhp_full preset behind the README's 232.5 mbb/g, at equal CPU seconds, exact NashConv
# from one best-response walk (`--evaluator=engine`: every board for the Appendix C network, one per suit class
# for fhp_full's suit-symmetric one). The runs' folders and records carry the prefix `full_fhp_`.
FULL_FHP = (
    LEDGER[0],
    Row("fhp_full", "Algorithm 1 (BASE)", "the fhp_full preset itself (one process, one torch thread)", {},
        preset="fhp_full"),
)  # fmt: skip
GRIDS = {"ledger": LEDGER, "figures": FIGURES, "full_fhp": FULL_FHP}
GAMES = {"ledger": GAME, "figures": GAME, "full_fhp": "flop_holdem"}
OUTPUTS = {"ledger": "benchmarks/results/deep_cfr_ledger.md", "figures": "benchmarks/results/deep_cfr_figures.md",
           "full_fhp": "benchmarks/results/deep_cfr_full_fhp.md"}  # fmt: skip
FULL_FHP_SECONDS = 2700.0  # the full_fhp grid's default budget per run: one run per row inside one session
PAPER_FHP_MBB = 37.0  # Brown et al. 2019, Section 6 / Figure 2: Deep CFR on flop hold'em, exploitability in mbb/g
ROWS = {row.name: row for row in LEDGER + FIGURES + FULL_FHP}


def step_seconds(settings: dict) -> float:
    """Estimated CPU s of one advantage SGD step of the Appendix C network at the row's width and batch."""
    width = settings["advantage_network_layers"][0]
    return STEP_SECONDS * settings["batch_size_advantage"] / 10_000 * (width / 96) ** WIDTH_EXPONENT


def iteration_seconds(settings: dict) -> float | None:
    """Estimated CPU s of one iteration (both advantage networks + traversals)
    for the Appendix C network, from paper_iteration.md's step cost scaled by
    batch; None for other networks (not measured there)."""
    if settings["network"]["family"] != "poker":
        return None
    return 2 * settings["advantage_network_train_steps"] * step_seconds(settings) + TRAVERSAL_SECONDS * settings["num_traversals"] / 10_000


def skip_reason(row: Row, seconds: float, quick: bool = False) -> str | None:
    """Why `row` is not run (None: it runs)."""
    settings = run_settings(row, quick)
    if row.name == "bfloat16" and not bfloat16_is_fast():
        return ("not run: this CPU has no bfloat16 matrix instructions (AMX / AVX-512 BF16; presets.bfloat16_is_fast), "
                "so bfloat16 autocast would only be slower than float32 here")  # fmt: skip
    cost, base = iteration_seconds(settings), iteration_seconds(run_settings(ROWS["base"], quick))
    if cost is not None and cost > base and cost * MIN_ITERATIONS > seconds:  # BASE always runs
        return (f"projected from paper_iteration.md, not run: one iteration costs ~{cost:,.0f} CPU s "
                f"(2 x {settings['advantage_network_train_steps']:,} steps x "
                f"{step_seconds(settings):.3f} s), so a {seconds:g} s "
                f"budget holds {seconds / cost:.2f} of them (BASE: ~{base:,.0f} s each, {seconds / base:.1f}); runs when --seconds >= "
                f"{cost * MIN_ITERATIONS:,.0f}")  # fmt: skip
    return None


def run_settings(row: Row, quick: bool = False) -> dict:
    """The DeepCFRSolver keyword arguments a run of `row` gets: the row's
    settings; the fhp_5x2 row falls back to float32 where presets do
    (`deep_cfr_preset`); --quick divides the SGD steps by QUICK_SGD_SCALE."""
    settings = row.settings()
    if row.preset and trains_in_bfloat16(settings) and not bfloat16_is_fast():
        settings = merge_settings(settings, {"training": {"precision": "float32"}})
    if quick:
        for k in STEP_FIELDS:
            settings[k] = max(1, settings[k] // QUICK_SGD_SCALE)
    return settings


def run_name(args, row: str) -> str:
    """A run's folder and record name: the row, prefixed `full_fhp_` on 52-card flop hold'em."""
    return ("full_fhp_" if args.game == "flop_holdem" else "") + row


def run_dir(out_dir: str, row: str, seed: int) -> str:
    return os.path.join(out_dir, f"{row}_seed{seed}")


def csv_path(out_dir: str, row: str, seed: int) -> str:
    """Where bench_fhp_curve.py writes the run's CSV (its page for a game other than flop_holdem: fhp_curve)."""
    return os.path.join(run_dir(out_dir, row, seed), "fhp_curve", "fhp_curve.csv")


def record_path(args, row: str, seed: int) -> str:
    return os.path.join(args.records, f"{row}_seed{seed}.json")


def run_stamp(args, row: Row) -> dict:
    """What makes a run the same run: its game, budget, checkpoints and settings."""
    return json.loads(json.dumps({"game": args.game, "seconds": args.seconds,
                                  "fractions": args.fractions, "settings": run_settings(row, args.quick),
                                  "clock": "cpu"}))  # fmt: skip


def _committed_record(args, row: Row, seed: int) -> dict | None:
    """The run's record under --records when it holds this run's stamp, else None."""
    path = record_path(args, run_name(args, row.name), seed)
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        usage_error(f"run record {path} is unreadable ({e}); delete it to rerun the run")
    return record if record.get("stamp") == run_stamp(args, row) else None


def run_record(args, row: Row, seed: int) -> dict | None:
    """A finished run as {"stamp", "curve", "memories"}: its committed record, else its folder under
    --out_dir once its curve reaches the budget (then kept as a record); None while unfinished."""
    record = _committed_record(args, row, seed)
    if record is not None:
        return record
    name = run_name(args, row.name)
    curve = read_curve(csv_path(args.out_dir, name, seed))
    if not finished(curve, args.seconds):
        return None
    record = {"stamp": run_stamp(args, row), "curve": curve, "memories": memory_sizes(args.out_dir, name, seed)}
    os.makedirs(args.records, exist_ok=True)
    data = (json.dumps(record, indent=1) + "\n").encode("utf-8")
    atomic_write(record_path(args, name, seed), lambda f: f.write(data))
    return record


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


def at_nodes(curve: list[dict], nodes: float, key: str = "nodes_touched") -> float | None:
    """NashConv at `nodes` touched (or at that value of `key`, e.g. "steps":
    iterations), log NashConv interpolated linearly in log nodes between
    checkpoints; None outside the curve (never extrapolated)."""
    points = [(math.log(r[key]), math.log(r["nash_conv_mbb"])) for r in curve if r[key] > 0]
    x = math.log(nodes)
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        if x0 <= x <= x1:
            return math.exp(y0 if x1 == x0 else y0 + (x - x0) / (x1 - x0) * (y1 - y0))
    return next((math.exp(y) for px, y in points if math.isclose(x, px)), None)


def at_equal(base: dict[int, list[dict]], row: dict[int, list[dict]], seeds, key: str) -> tuple[list, list]:
    """Per seed, row - BASE and BASE's value at the smaller of the two final
    values of `key` (nodes touched, or "steps": iterations), interpolated by
    `at_nodes`; seeds where either curve does not reach that point are left out."""
    effects, levels = [], []
    for s in seeds:
        x = min(row[s][-1][key], base[s][-1][key])
        mine, theirs = at_nodes(row[s], x, key), at_nodes(base[s], x, key)
        if mine is not None and theirs is not None:
            effects.append(mine - theirs)
            levels.append(theirs)
    return effects, levels


def paired(base: dict[int, list[dict]], row: dict[int, list[dict]]) -> dict:
    """Effects of a row against BASE, paired by seed over the seeds both
    finished: equal time (last checkpoints) and equal nodes (at the smaller
    final node count of the two, per seed)."""
    seeds = sorted(set(base) & set(row))
    time_effects = [row[s][-1]["nash_conv_mbb"] - base[s][-1]["nash_conv_mbb"] for s in seeds]
    base_levels = [base[s][-1]["nash_conv_mbb"] for s in seeds]
    node_effects, node_base = at_equal(base, row, seeds, "nodes_touched")
    out = {"seeds": seeds, "level": mean_and_interval([row[s][-1]["nash_conv_mbb"] for s in row]) if row else None,
           "time": None, "nodes": None, "node_seeds": len(node_effects)}  # fmt: skip
    if seeds:
        mean, half = mean_and_interval(time_effects)
        out["time"] = (mean, half, 100.0 * mean / (sum(base_levels) / len(base_levels)))
    if node_effects:
        mean, half = mean_and_interval(node_effects)
        out["nodes"] = (mean, half, 100.0 * mean / (sum(node_base) / len(node_base)))
    return out


NO_COMMON = "not measurable: the curves share no iteration count (checkpoints earlier in --fractions would)"
PLATEAU = 10.0  # a curve has plateaued when its last doubling of iterations moves NashConv by less than this %
SAME_RATE = 0.25  # "the same rate": the paired log-log slopes differ by less than this (interval inside +-SAME_RATE)


@dataclasses.dataclass(frozen=True)
class Statement:
    """One sentence of the paper's Section 6 / Figures 3-4 captions, tested on
    `row` against `reference` (paired by seed):
    - "higher": row - reference at equal iterations (the smaller final count
      of the two): yes when the 95% interval is above 0, no when below;
    - "higher_50": "higher", and the relative effect's interval holds +50%
      ("about 50% higher");
    - "same_level": the two final levels agree (interval holds 0, |mean| <
      PLATEAU% of the reference); only measurable once the reference has
      plateaued (its last doubling of iterations moves it < PLATEAU%);
    - "same_rate": the log-log slopes of NashConv against iterations, from the
      later of the two first checkpoints to the earlier of the last ones,
      differ by less than SAME_RATE (the whole interval inside)."""

    text: str
    row: str
    kind: str
    reference: str = "base"


STATEMENTS = (
    Statement("fewer traversals per iteration converge more slowly (3,000 vs 10,000)", "traversals_3000", "higher"),
    Statement("fewer traversals per iteration converge more slowly (5,000 vs 10,000)", "traversals_5000", "higher"),
    Statement("fewer traversals reach the same final exploitability (3,000 vs 10,000)", "traversals_3000",
              "same_level"),
    Statement("fewer SGD steps do not change the rate of convergence (100 vs 400)", "sgd_100", "same_rate"),
    Statement("fewer SGD steps do not change the rate of convergence (200 vs 400)", "sgd_200", "same_rate"),
    Statement("fewer SGD steps raise the exploitability reached (100 vs 400)", "sgd_100", "higher"),
    Statement("fewer SGD steps raise the exploitability reached (200 vs 400)", "sgd_200", "higher"),
    Statement("a larger model lowers the final exploitability (24 vs 96)", "width_24", "higher"),
    Statement("a larger model lowers the final exploitability (48 vs 96)", "width_48", "higher"),
    Statement("... up to a certain model size (192 vs 96)", "width_192", "same_level"),
    Statement("without linear weighting Deep CFR converges more slowly", "linear_off", "higher"),
    Statement("without linear weighting it reaches a similar exploitability", "linear_off", "same_level"),
    Statement("fine-tuning one network instead of retraining: about 50% higher", "fine_tune", "higher_50"),
    Statement("a uniform strategy when no regret is positive: about 50% higher", "uniform_fallback", "higher_50"),
    Statement("a sliding-window memory stops converging once full; reservoir sampling keeps converging",
              "window_small", "higher", reference="reservoir_small"),
)  # fmt: skip


def per_doubling(curve: list[dict]) -> float | None:
    """% change of NashConv per doubling of iterations between a curve's last two checkpoints."""
    if len(curve) < 2 or curve[-1]["steps"] <= curve[-2]["steps"]:
        return None
    doublings = math.log2(curve[-1]["steps"] / curve[-2]["steps"])
    return 100.0 * ((curve[-1]["nash_conv_mbb"] / curve[-2]["nash_conv_mbb"]) ** (1.0 / doublings) - 1.0)


def slope(curve: list[dict], start: float, end: float) -> float | None:
    """Log-log slope of NashConv against iterations from `start` to `end` (interpolated)."""
    a, b = at_nodes(curve, start, "steps"), at_nodes(curve, end, "steps")
    return None if a is None or b is None or end <= start else math.log(b / a) / math.log(end / start)


def _interval_text(values: list[float], unit: str = "") -> str:
    """Mean ± 95% half-width (one value: the value alone; the caller says there is no interval)."""
    mean, half = mean_and_interval(values)
    return f"{mean:+,.1f}{unit}" + (f" ± {half:,.1f}{unit}" if len(values) > 1 else "")


def _seeds_text(n: int) -> str:
    return f"{n} seeds" if n > 1 else f"{n} seed: no interval"


def _by_interval(values: list[float], low_ok: float = 0.0) -> str | None:
    """"yes" (interval above low_ok), "no" (below 0), None (holds 0); one seed: None."""
    mean, half = mean_and_interval(values)
    if len(values) < 2:
        return None
    return "yes" if mean - half > low_ok else "no" if mean + half < 0 else None


def statement_verdict(st: Statement, curves: dict, skipped: dict) -> tuple[str, str]:
    """(this run, holds here) for one statement: its numbers and the verdict its kind's rule gives."""
    if st.row in skipped:
        return f"`{st.row}` {skipped[st.row]}", "not measured: the row does not fit the budget"
    row, ref = curves.get(st.row, {}), curves.get(st.reference, {})
    seeds = sorted(set(row) & set(ref))
    if not seeds:
        return f"`{st.row}` / `{st.reference}`: no seed has both runs finished", "pending (runs not finished)"
    few = f"inconclusive ({len(seeds)} seed: no interval)" if len(seeds) < 2 else "inconclusive (the interval holds 0)"
    pair = f"`{st.row}` - `{st.reference}`"
    if st.kind in ("higher", "higher_50"):
        effects, levels = at_equal(ref, row, seeds, "steps")
        iterations = [min(row[s][-1]["steps"], ref[s][-1]["steps"]) for s in seeds]
        if not effects:
            return f"{pair}: no iteration count both curves reach", NO_COMMON
        relative = [100.0 * e / lv for e, lv in zip(effects, levels, strict=True)]
        text = (f"{pair} at equal iterations ({', '.join(map(str, iterations))} per seed): "
                f"{_interval_text(effects)} mbb/g ({_interval_text(relative, '%')}), {_seeds_text(len(effects))}")
        direction = _by_interval(effects)
        if direction is None:
            return text, few
        if direction == "no":
            return text, "no (the opposite: lower)"
        if st.kind == "higher_50":
            mean, half = mean_and_interval(relative)
            return text, "yes" if mean - half <= 50.0 <= mean + half else f"partly (higher, by {mean:.0f}%, not ~50%)"
        return text, "yes"
    if st.kind == "same_level":
        drops = [per_doubling(ref[s]) for s in seeds]
        effects, levels = at_equal(ref, row, seeds, "steps")
        if not effects:
            return f"{pair}: no iteration count both curves reach", NO_COMMON
        text = (f"{pair} at equal iterations {_interval_text(effects)} mbb/g ({_seeds_text(len(effects))}); "
                f"`{st.reference}`'s last doubling of "
                f"iterations: {', '.join(f'{d:+.1f}%' for d in drops if d is not None)} per seed")
        if any(d is None or abs(d) >= PLATEAU for d in drops):
            return text, (f"not measurable at this budget: `{st.reference}` still moves >= {PLATEAU:g}% per doubling "
                          f"of iterations (the paper's curves ran 450 iterations)")  # fmt: skip
        mean, half = mean_and_interval(effects)
        if len(effects) < 2:
            return text, few
        base_level = sum(levels) / len(levels)
        if abs(mean - 0) + half < PLATEAU / 100 * base_level:
            return text, "yes"
        return text, "no" if abs(mean) > half else "inconclusive (the interval is wider than the tolerance)"
    if st.kind == "same_rate":
        diffs = []
        for s in seeds:
            start = max(row[s][0]["steps"], ref[s][0]["steps"])
            end = min(row[s][-1]["steps"], ref[s][-1]["steps"])
            a, b = slope(row[s], start, end), slope(ref[s], start, end)
            if a is not None and b is not None:
                diffs.append(a - b)
        if not diffs:
            return f"{pair}: no iteration range both curves cover", NO_COMMON
        mean, half = mean_and_interval(diffs)
        text = (f"log-log slope of NashConv vs iterations, {pair}: {_interval_text(diffs)} "
                f"({_seeds_text(len(diffs))}; tolerance ±{SAME_RATE:g})")
        if len(diffs) < 2:
            return text, few
        if abs(mean) + half < SAME_RATE:
            return text, "yes"
        return text, "no" if abs(mean) - half > SAME_RATE else "inconclusive (the interval is wider than the tolerance)"
    raise ValueError(f"unknown statement kind {st.kind!r}")


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
        return "– (no point both curves reach)" if paired_seeds else "–"
    mean, half, relative = effect
    if n < 2:
        return f"{mean:+,.1f} ({relative:+.0f}%; {n} seed: no interval)"
    return f"{mean:+,.1f} ± {half:,.1f} ({relative:+.0f}%)"


def row_table(args, rows: list[Row], curves: dict, planned: dict, failures: dict) -> tuple[list, int, int]:
    """The rows' table (equal time, equal nodes and, for the figures, equal
    iterations against BASE) and the finished / planned run counts."""
    base = curves.get("base", {})
    table, done_total, planned_total = [], 0, 0
    figures = args.grid == "figures"
    for row in rows:
        mine = curves.get(row.name, {})
        done, plan = len(mine), planned[row.name]
        done_total, planned_total = done_total + done, planned_total + plan
        reason = skip_reason(row, args.seconds, args.quick)
        if reason:
            table.append([f"`{row.name}`", row.paper, row.ours, reason] + ["–"] * (4 if figures else 2) + ["0 / 0"])
            continue
        level = "–"
        if mine:
            mean, half = mean_and_interval([c[-1]["nash_conv_mbb"] for c in mine.values()])
            level = f"{mean:,.1f}" + (f" ± {half:,.1f}" if len(mine) > 1 else f" (seed {next(iter(mine))} only: no interval)")
        iterations = ", ".join(str(c[-1]["steps"]) for c in mine.values()) or "–"
        if row.name == "base":
            effects = ["(the reference)"] * (3 if figures else 2)
        else:
            effect = paired(base, mine)
            effects = [_effect_cell(effect["time"], len(effect["seeds"])),
                       _effect_cell(effect["nodes"], effect["node_seeds"], len(effect["seeds"]))]
            if figures:
                seeds = effect["seeds"]
                steps, levels = at_equal(base, mine, seeds, "steps")
                cell = None
                if steps:
                    mean, half = mean_and_interval(steps)
                    cell = (mean, half, 100.0 * mean / (sum(levels) / len(levels)))
                effects.insert(0, _effect_cell(cell, len(steps), len(seeds)))
        state = f"{done} / {plan}" + (f" ({len(failures[row.name])} failed)" if failures.get(row.name) else "")
        table.append([f"`{row.name}`", row.paper, row.ours, level] + ([iterations] if figures else []) + effects + [state])
    return table, done_total, planned_total


def _setup_text(args) -> str:
    """What BASE is, the budget, the seeds and how effects are computed (both pages)."""
    return (
        f"Game `{args.game}`. BASE is the paper's method (`deep_cfr_preset(\"paper\")`: "
        f"Algorithm 1, Appendix C network width 96, retrain from scratch, reservoir 40M, linear weighting, average "
        f"network, raw regrets, float32, 10,000 traversals) with **its SGD budget scaled by 1/{SGD_SCALE}: "
        f"{4000 // SGD_SCALE:,} Adam steps of batch 10,000 per network per iteration instead of 4,000** (one paper "
        f"iteration costs ~{iteration_seconds(PAPER):,.0f} CPU s here, `paper_iteration.md`; the scale is the ledger's "
        f"`sgd_full` row)" + (f"; --quick divides every row's SGD steps by {QUICK_SGD_SCALE} more" if args.quick else "")
        + f". Budget {args.seconds:g} solver CPU s per run (process CPU seconds, one torch thread, checkpoints at "
        f"{args.fractions} of it), seeds {', '.join(map(str, args.seeds))}; exact NashConv (mbb/g) by "
        f"`bench_fhp_curve.py --evaluator={args.evaluator}`. Effects are row - BASE paired by seed (negative: the row "
        f"lowers exploitability), mean ± 95% t half-width over the paired seeds, relative to BASE's mean; equal "
        f"nodes (or iterations): both curves at the smaller final count of the two (log-log interpolation, never "
        f"extrapolated)."
    )


def _grid_text(done_total: int, planned_total: int) -> str:
    return (f"**{done_total} of {planned_total} planned runs are finished**"
            + (" (a half-finished grid: the rows show only their finished seeds, nothing is extrapolated; rerun the "
               "same command to continue)" if done_total < planned_total else "") + ".")  # fmt: skip


def _appendix(args, rows: list[Row], curves: dict, failures: dict) -> str:
    """Memory sizes, BASE's settings, each row's change and the failed runs."""
    changes = "\n".join(f"- `{r.name}`: " + (f"the {r.preset} preset, " + f"`{json.dumps(run_settings(r, args.quick))}`"
                                             if r.preset else f"`{json.dumps(r.change)}`" if r.change else "BASE")
                        for r in rows)  # fmt: skip
    memories = "\n".join(f"- `{name}`: " + "; ".join(f"seed {seed}: {args.memories.get((name, seed)) or '?'}"
                                                     for seed in runs) for name, runs in curves.items() if runs)
    return (
        "".join(f"\n\n`{r.name}`: {r.note}" for r in rows if r.note)
        + f"\n\nMemories at each finished run's last checkpoint (advantage memories of the two players, strategy "
        f"memory; their capacity is 40M each unless the row's change says otherwise):\n\n{memories}"
        + f"\n\nBASE: `{json.dumps(run_settings(ROWS['base'], args.quick))}`\n\nChanges:\n\n{changes}\n"
        + ("".join(f"\nFailed: `{name}` seed {s} (exit status {rc}; its log: `{run_dir(args.out_dir, run_name(args, name), s)}/log.txt`)"
                   for name, seeds in failures.items() for s, rc in seeds.items()))  # fmt: skip
    )


def ledger_page(args, rows: list[Row], curves: dict, planned: dict, failures: dict) -> str:
    """The ledger's results page body (the table and the grid's state)."""
    table, done_total, planned_total = row_table(args, rows, curves, planned, failures)
    return (
        _setup_text(args) + " Each other row is BASE with one setting moved to `fhp_5x2`'s value (not cumulative); "
        "the last row is the preset itself.\n\n" + _grid_text(done_total, planned_total) + "\n\n"
        + markdown_table(["deviation", "paper", "fhp_5x2", "NashConv at equal time (mbb/g)", "effect at equal time",
                          "effect at equal nodes", "runs done / planned"], table)  # fmt: skip
        + _appendix(args, rows, curves, failures)
    )


def figures_page(args, rows: list[Row], curves: dict, planned: dict, failures: dict) -> str:
    """The Figures 3-4 page body: the rows' table, then one verdict per paper statement."""
    table, done_total, planned_total = row_table(args, rows, curves, planned, failures)
    names = {r.name for r in rows}
    skipped = {r.name: skip_reason(r, args.seconds, args.quick) for r in rows if skip_reason(r, args.seconds, args.quick)}
    verdicts = [[st.text, *statement_verdict(st, curves, skipped)] for st in STATEMENTS
                if st.row in names and st.reference in names]  # fmt: skip
    rules = " ".join(line.strip() for line in Statement.__doc__.split("\n")[2:])
    return (
        _setup_text(args) + " Each other row is one curve of the paper's Figure 3 or 4 (Section 6), BASE with one "
        "setting changed; `window_small` is compared with `reservoir_small` (the same small capacities).\n\n"
        + _grid_text(done_total, planned_total) + "\n\n"
        + markdown_table(["row", "paper", "this row", "NashConv at equal time (mbb/g)", "iterations done (per seed)",
                          "effect at equal iterations", "effect at equal time", "effect at equal nodes",
                          "runs done / planned"], table)  # fmt: skip
        + "\n\n## The paper's statements on this run\n\n"
        + f"Rules, per statement kind: {rules} (PLATEAU = {PLATEAU:g}%, SAME_RATE = {SAME_RATE:g}.) Each verdict holds "
        f"for this budget ({args.seconds:g} CPU s, SGD / {SGD_SCALE}, `{args.game}`), not for "
        f"the paper's 450 iterations on 52 cards.\n\n"
        + markdown_table(["statement (Brown et al. 2019, Section 6, Figures 3-4)", "this run", "holds here"], verdicts)
        + _appendix(args, rows, curves, failures)
    )


def full_fhp_page(args, rows: list[Row], curves: dict, planned: dict, failures: dict) -> str:
    """Part 4's page: the paper's method against fhp_full on 52-card flop hold'em at equal CPU seconds, and the
    README gap (fhp_full vs the paper's 37 mbb/g) split into a method factor and a compute factor."""
    table, done_total, planned_total = row_table(args, rows, curves, planned, failures)
    paper, ours = curves.get("base", {}), curves.get("fhp_full", {})
    seeds = sorted(set(paper) & set(ours))
    if seeds:
        p = sum(paper[s][-1]["nash_conv_mbb"] for s in seeds) / len(seeds)
        q = sum(ours[s][-1]["nash_conv_mbb"] for s in seeds) / len(seeds)
        split = (
            f"At {args.seconds:,.0f} CPU s ({_seeds_text(len(seeds))}): the fhp_full preset {q:,.1f} mbb/g, the "
            f"paper's method (BASE) {p:,.1f}. Written as fhp_full / the paper's published {PAPER_FHP_MBB:g} = "
            f"(fhp_full / BASE at equal CPU: **method**) x (BASE here / {PAPER_FHP_MBB:g}: **compute**, the paper's "
            f"method at this budget against the paper's own run): {q / PAPER_FHP_MBB:.2f}x = {q / p:.2f}x (method) "
            f"x {p / PAPER_FHP_MBB:.2f}x (compute). A method factor below 1 means our preset is the better method "
            "at this budget; the compute factor is what the paper's method still owes to the paper's compute "
            "(its projected run: `docs/deep_cfr.md`)."
        )
    else:
        split = "The method / compute split needs both rows finished for one seed: not measured yet."
    return (
        _setup_text(args) + " The other row is the fhp_full preset itself (the README's full flop hold'em row).\n\n"
        + _grid_text(done_total, planned_total) + "\n\n"
        + markdown_table(["row", "paper", "this row", "NashConv at equal time (mbb/g)", "effect at equal time",
                          "effect at equal nodes", "runs done / planned"], table)  # fmt: skip
        + "\n\n## Method and compute\n\n" + split
        + _appendix(args, rows, curves, failures)
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
                  settings["batch_size_strategy"] / 10_000 if settings.get("averaging", {}).get("average_policy", "network")
                  == "network" and settings["network"]["family"] == "poker" else 0.0)  # fmt: skip
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


def page_tables(page: str) -> str:
    """The markdown tables of a results page (rows starting with "|"), blank-line separated, in order."""
    tables, current = [], []
    for line in page.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append("\n".join(current))
            current = []
    return "\n\n".join(tables)


def docs_block(grid: str) -> tuple[str, str]:
    """The markers around a page's tables copied into the docs."""
    name = os.path.basename(OUTPUTS[grid])
    return (f"<!-- begin: the tables of benchmarks/results/{name}, copied by "
            f"`bench_deep_cfr_ledger.py --grid={grid} --no_run --docs=...` -->",
            f"<!-- end: the tables of benchmarks/results/{name} -->")  # fmt: skip


def copy_tables_to_docs(page_path: str, docs_path: str, grid: str) -> None:
    """Replaces the marked block of `docs_path` with the tables of the page at `page_path`."""
    with open(page_path, encoding="utf-8") as f:
        tables = page_tables(f.read())
    with open(docs_path, encoding="utf-8") as f:
        text = f.read()
    begin, end = docs_block(grid)
    if begin not in text or end not in text:
        usage_error(f"--docs {docs_path}: no block between '{begin}' and '{end}' to fill")
    head, rest = text.split(begin, 1)
    with open(docs_path, "w", encoding="utf-8") as f:
        f.write(f"{head}{begin}\n\n{tables}\n\n{end}{rest.split(end, 1)[1]}")


def run_one(args, row: Row, seed: int) -> int:
    """One (row, seed): bench_fhp_curve.py in a subprocess, resumed from its checkpoint; its exit status."""
    folder = run_dir(args.out_dir, run_name(args, row.name), seed)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "running.lock"), "w", encoding="utf-8") as lock:
        try:  # the two grids share runs: one process per run folder at a time
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"  {row.name} seed {seed}: running in another process (its lock: {lock.name}); skipped here",
                  flush=True)  # fmt: skip
            return 0
        return _run_locked(args, row, seed, folder)


def _run_locked(args, row: Row, seed: int, folder: str) -> int:
    settings = run_settings(row, args.quick)
    stamp = run_stamp(args, row)
    stamp_path = os.path.join(folder, "ledger_run.json")
    if os.path.exists(stamp_path):
        with open(stamp_path, encoding="utf-8") as f:
            earlier = json.load(f)
        if earlier != stamp:
            usage_error(f"{folder} holds a run with other settings or budget ({stamp_path}); a run resumes only "
                        "with the same ones: choose another --out_dir or delete that folder")  # fmt: skip
    else:
        with open(stamp_path, "w", encoding="utf-8") as f:
            json.dump(stamp, f)
    command = [sys.executable, CURVE, "--algorithms=deep_cfr", f"--evaluator={args.evaluator}", "--clock=cpu",
               f"--game={stamp['game']}", "--page=fhp_curve",
               f"--deep_cfr={json.dumps(settings)}", f"--seconds={args.seconds!r}", f"--fractions={args.fractions}",
               f"--seed={seed}", f"--checkpoint={os.path.join(folder, 'ckpt')}", f"--out_dir={folder}"]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.monotonic()
    with open(os.path.join(folder, "log.txt"), "a", encoding="utf-8") as log:
        rc = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env, check=False).returncode
    run_record(args, row, seed)  # keeps the record of a finished run
    curve = read_curve(csv_path(args.out_dir, run_name(args, row.name), seed))
    last = f"NashConv {curve[-1]['nash_conv_mbb']:,.1f} mbb/g at {curve[-1]['seconds']:,.0f} s" if curve else "no curve"
    print(f"  {row.name} seed {seed}: exit {rc}, {time.monotonic() - start:,.0f} s wall, {last}", flush=True)
    return rc


FLAGS = flags.FlagValues()  # this program's own (tests import several programs into one process)
flags.DEFINE_float("seconds", 600.0, "solver CPU seconds per run", flag_values=FLAGS)
flags.DEFINE_integer("jobs", 1, "runs at a time (each one torch thread; CPU-second budgets)", flag_values=FLAGS)
flags.DEFINE_enum("grid", "ledger", sorted(GRIDS), "ledger: BASE vs fhp_5x2's settings, one at a time "
                  "(deep_cfr_ledger.md); figures: the paper's Figures 3-4 against BASE, a verdict per statement "
                  "(deep_cfr_figures.md); the grids share BASE and their common rows' runs; full_fhp: BASE against "
                  f"the fhp_full preset on 52-card flop hold'em, {FULL_FHP_SECONDS:g} s and seed 0 unless given, "
                  "engine evaluator (deep_cfr_full_fhp.md)", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("rows", "", "comma-separated rows of the grid (default all; base always)", flag_values=FLAGS)
flags.DEFINE_string("seeds", "0,1,2", "comma-separated seeds", flag_values=FLAGS)
flags.DEFINE_string("fractions", "0.05,0.1,0.25,0.5,1", "checkpoints as fractions of --seconds, ending at 1 (the early "
                    "ones give the rows that iterate faster than BASE a point at BASE's final node count)",
                    flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("out_dir", "out/deep_cfr_ledger", "the runs' folders", flag_values=FLAGS)
flags.DEFINE_string("records", os.path.join(ROOT, "benchmarks", "results", "runs", "deep_cfr"),
                    "finished runs' records, one JSON each (committed; quick: --out_dir/records)", flag_values=FLAGS)
flags.DEFINE_string("output", "", "the results page (default: the grid's page in benchmarks/results)", flag_values=FLAGS)
flags.DEFINE_bool("quick", False, f"plumbing check: {QUICK_GAME}, 5 s per run, seed 0, SGD steps / {QUICK_SGD_SCALE} "
                  "more, out/deep_cfr_ledger_quick", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("docs", "", "also copy the page's tables into this docs file's marked block (docs/deep_cfr.md)",
                    flag_values=FLAGS)  # fmt: skip
flags.DEFINE_bool("plan", False, "print the grid and its CPU hours; run nothing", flag_values=FLAGS)
flags.DEFINE_bool("no_run", False, "write the page from the finished runs (records and --out_dir); run nothing", flag_values=FLAGS)


def parse_args(argv=None):
    args = parse_flags(FLAGS, argv, __doc__.split("\n\n")[0])
    given = set(argv if argv is not None else sys.argv[1:])
    args.game = QUICK_GAME if args.quick else GAMES[args.grid]
    args.evaluator = "engine" if args.game == "flop_holdem" else "states"  # every board of 52 cards: one walk
    if args.grid == "full_fhp" and not args.quick:
        if not any(a.startswith("--seconds") for a in given):
            args.seconds = FULL_FHP_SECONDS
        if not any(a.startswith("--seeds") for a in given):
            args.seeds = "0"
        if not any(a.startswith("--fractions") for a in given):  # one walk of every board: ~40 CPU min
            args.fractions = "1"
    if args.quick:
        if not any(a.startswith("--seconds") for a in given):
            args.seconds = 5.0
        if not any(a.startswith("--seeds") for a in given):
            args.seeds = "0"
        if not any(a.startswith("--fractions") for a in given):
            args.fractions = "0.5,1"
        if not any(a.startswith("--out_dir") for a in given):
            args.out_dir = "out/deep_cfr_ledger_quick"
        if not any(a.startswith("--records") for a in given):
            args.records = os.path.join(args.out_dir, "records")
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
    args.memories = {}  # (row, seed) -> memory sizes of the finished runs, filled by main()
    grid = GRIDS[args.grid]
    args.output = args.output or OUTPUTS[args.grid]
    names = [n.strip() for n in args.rows.split(",") if n.strip()] or [row.name for row in grid]
    unknown = [n for n in names if n not in {row.name for row in grid}]
    if unknown:
        usage_error(f"--rows: unknown row {unknown[0]!r} of --grid={args.grid}; choose from "
                    f"{', '.join(row.name for row in grid)}")  # fmt: skip
    needed = names + [st.reference for st in STATEMENTS if st.row in names] if args.grid == "figures" else names
    args.row_list = [row for row in grid if row.name in needed or row.name == "base"]
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
                if run_record(args, row, seed) is not None:
                    print(f"  {row.name} seed {seed}: finished earlier", flush=True)
                    continue
                todo.append((row, seed))
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            done = pool.map(lambda job: (job, run_one(args, *job)), todo)
            for (row, seed), rc in done:
                if rc != 0:
                    failures.setdefault(row.name, {})[seed] = rc
    curves, args.memories = {}, {}
    for row in rows:
        for seed in args.seeds:
            record = run_record(args, row, seed) if planned[row.name] else None
            if record is not None:
                curves.setdefault(row.name, {})[seed] = record["curve"]
                args.memories[row.name, seed] = record["memories"]
    command = "python benchmarks/bench_deep_cfr_ledger.py " + " ".join(sys.argv[1:] if argv is None else argv)
    page, title = {"ledger": (ledger_page, "Deep CFR deviation ledger: the paper's method vs fhp_5x2, one setting "
                                           "at a time"),
                   "figures": (figures_page, "Deep CFR's Figures 3-4 with the paper's method on 5x2 flop hold'em"),
                   "full_fhp": (full_fhp_page, "Deep CFR on 52-card flop hold'em: the paper's method against "
                                               "fhp_full at equal CPU time")}[args.grid]
    body = page(args, rows, curves, planned, failures)
    write_result(args.output, title, body, header_command=command)
    if args.docs:
        copy_tables_to_docs(args.output, args.docs, args.grid)
    print(body.split("\n\n")[1], flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
