"""CFR-MIX's Figures 3-4 on the paper's instances (Li et al. 2021, Section 5): every variant the paper
compares, 3 seeds, resumable; one page per figure with a verdict row per statement of the paper.

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/bench_cfr_mix_paper.py --figure=3 [--plan] [--report_only]
    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/bench_cfr_mix_paper.py --figure=4 [--instances=nest_15x15_4]

Figure 3: team Goofspiel 6C4P6R, 10C6P with 2, 3 and 4 rounds, 13C6P2R. Figure 4: NEST 3x3 with 2 pursuers,
5x5 with 4, 15x15 with 4 and with 8. Variants, as the paper's Section 5 names them: CFR-MIX (`cfr_mix`: double
neural + mixing layer + parameter sharing), Deep CFR + MIX (`deep_cfr_mix`), Double Neural CFR over joint
actions (`double_neural_joint`, every legal joint action probed: no cap), Deep CFR over joint actions
(`deep_cfr`, external sampling), CFR-MIX without parameter sharing (`cfr_mix_no_sharing`, Figure 4(b)) and
independent learners (`independent`, Figure 4(a)); each instance runs the variants its panel compares.

A joint-action variant whose one iteration (or whose evaluation) cannot fit is refused without running, and
the page shows the estimate that refused it (that is the paper's point about joint action spaces): Deep CFR
when its team traversals' expected nodes x a measured cost per node exceed the budget; Double Neural CFR when
one iteration's probes (traversals x joint actions, at least one node each) do, or when its worst case cannot
be computed (a policy over 10^6 joint bids has no per-agent form for the particle best response).

Budgets are process CPU seconds on one torch thread (`--budget_factor` scales them); each run is evaluated at
about 1/3, 2/3 and all of its budget (not charged), and its record is one JSON file under --records
(benchmarks/results/runs/cfr_mix/, committed), so the grid resumes across sessions and the pages regenerate
from a fresh clone (`--report_only`). `--plan` prints the runs still to do and their CPU hours.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import flags  # noqa: E402

from benchmarks.common import (  # noqa: E402
    define_checked,
    distinct_seeds,
    markdown_table,
    mean_and_interval,
    parse_flags,
    positive_seconds,
    usage_error,
    write_result,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDS = os.path.join(ROOT, "benchmarks", "results", "runs", "cfr_mix")
VERSION = 1  # of a record's settings: a record with another stamp is rerun


@dataclasses.dataclass(frozen=True)
class Instance:
    name: str
    figure: int
    panel: str  # the paper's panel label
    game: str
    budget: float  # CPU seconds per run
    variants: tuple[str, ...]
    cfg: dict  # bench_cfr_mix.make_solver settings
    evaluator: str  # "goofspiel" (particle best response) or "nest" (evader path best response)
    eval_kw: dict
    references: tuple[str, ...] = ()  # hand-written teams evaluated beside the runs (not paper baselines)


_GOOF = dict(traversals=10, train_steps=30, joint_cap=32)
_GOOF_EVAL = dict(num_particles=300, num_eval_games=3000, seed=23)
_FIG3_VARIANTS = ("cfr_mix", "deep_cfr_mix", "double_neural_joint", "deep_cfr")
_NEST15 = dict(traversals=4, train_steps=40, joint_cap=8, memory_capacity=2000, infoset_encoding="compact")
_NEST15_EVAL = dict(num_starts=64, num_particles=4, num_eval_games=32, max_slack=0, seed=17)
INSTANCES = {i.name: i for i in (
    Instance("goofspiel_6c4p6r", 3, "3(b)", "team_goofspiel(num_cards=6,num_agents=4,num_turns=6)", 600,
             _FIG3_VARIANTS, dict(traversals=30, train_steps=40, joint_cap=64, deep_cfr_traversals=4), "goofspiel",
             dict(num_particles=200, num_eval_games=2000, seed=23)),
    *(Instance(f"goofspiel_10c6p{r}r", 3, "3(c)", f"team_goofspiel(num_cards=10,num_agents=6,num_turns={r})", 300,
               _FIG3_VARIANTS, _GOOF, "goofspiel", _GOOF_EVAL) for r in (2, 3, 4)),
    Instance("goofspiel_13c6p2r", 3, "3(d)", "team_goofspiel(num_cards=13,num_agents=6,num_turns=2)", 300,
             _FIG3_VARIANTS, _GOOF, "goofspiel", _GOOF_EVAL),
    Instance("nest_3x3_2", 4, "4(a)", "nest(rows=3,cols=3,num_pursuers=2)", 90,
             ("cfr_mix", "deep_cfr_mix", "double_neural_joint", "deep_cfr", "independent"),
             dict(traversals=30, train_steps=40, joint_cap=64, deep_cfr_traversals=4), "nest",
             dict(num_starts=400, num_particles=64, num_eval_games=64, seed=11), ("chase", "intercept")),
    Instance("nest_5x5_4", 4, "4(b)", "nest(rows=5,cols=5,num_pursuers=4)", 100,
             ("cfr_mix", "cfr_mix_no_sharing", "deep_cfr_mix", "double_neural_joint", "deep_cfr"),
             dict(traversals=6, train_steps=40, joint_cap=64, deep_cfr_traversals=1), "nest",
             dict(num_starts=96, num_particles=16, num_eval_games=32, max_slack=2, seed=13), ("chase", "intercept")),
    Instance("nest_15x15_4", 4, "4(c)", "nest(rows=15,cols=15,num_pursuers=4)", 1800,
             ("cfr_mix", "double_neural_joint"), _NEST15, "nest", _NEST15_EVAL, ("chase", "intercept")),
    Instance("nest_15x15_8", 4, "4(d)", "nest(rows=15,cols=15,num_pursuers=8)", 900, ("cfr_mix",), _NEST15, "nest",
             _NEST15_EVAL, ("chase", "intercept")),
)}  # fmt: skip
JOINT = ("double_neural_joint", "deep_cfr")
MIXING = ("cfr_mix", "deep_cfr_mix")
# `bench_cfr_mix.NestHeuristicTeam` modes: they read only the compact features the networks get
REFERENCES = {"chase": "hand-written: chase the evader", "intercept": "hand-written: race to the evader's exit"}


# ------------------------------------------------------------------ statements
@dataclasses.dataclass(frozen=True)
class Statement:
    """One sentence of the paper, checked as "variant beats other" (other = "uniform": improves on the
    uniform start) on each listed instance."""

    figure: int
    text: str
    pairs: tuple[tuple[str, str], ...]
    instances: tuple[str, ...]


STATEMENTS = (
    Statement(3, '"the algorithms with mixing layer outperform the others in 6C4P6R game"',
              tuple((m, o) for m in MIXING for o in JOINT), ("goofspiel_6c4p6r",)),
    Statement(3, '"In 10C6P and 13C6P games ... only CFR-MIX can get satisfactory strategies in a limited time"',
              (("cfr_mix", "uniform"), ("cfr_mix", "deep_cfr_mix"), ("cfr_mix", "double_neural_joint"),
               ("cfr_mix", "deep_cfr")),
              ("goofspiel_10c6p2r", "goofspiel_10c6p3r", "goofspiel_10c6p4r", "goofspiel_13c6p2r")),
    Statement(4, '"As shown in Fig. 4(a-c), the algorithms with the mixing layer outperform other algorithms"',
              tuple((m, o) for m in MIXING for o in (*JOINT, "independent")),
              ("nest_3x3_2", "nest_5x5_4", "nest_15x15_4")),
    Statement(4, '"Individual Double Neural CFR cannot converge to NE in a limited time" (Fig. 4(a))',
              (("cfr_mix", "independent"),), ("nest_3x3_2",)),
    Statement(4, '"CFR-MIX with parameter sharing performs better than that without parameter sharing" (Fig. 4(b))',
              (("cfr_mix", "cfr_mix_no_sharing"),), ("nest_5x5_4",)),
    Statement(4, '"In Fig. 4(c) ... CFR-MIX still exhibits better performance" (than Double Neural CFR)',
              (("cfr_mix", "double_neural_joint"),), ("nest_15x15_4",)),
    Statement(4, '"CFR-MIX get a better strategy than random strategy (initial strategy)" (Fig. 4(d), 1 vs 8)',
              (("cfr_mix", "uniform"),), ("nest_15x15_8",)),
    *(Statement(f, "(ours, not the paper's: which variant to recommend) Deep CFR + MIX, the update without the "
                "fed-back target, beats the paper's CFR-MIX", (("deep_cfr_mix", "cfr_mix"),),
                tuple(i.name for i in INSTANCES.values() if i.figure == f)) for f in (3, 4)),
    Statement(4, "(ours, not the paper's) a learnt team at least as good as the hand-written \"race to the evader's "
              "exit\" team within the run's CPU budget",
              (("cfr_mix", "intercept"), ("deep_cfr_mix", "intercept"), ("double_neural_joint", "intercept")),
              ("nest_3x3_2", "nest_5x5_4", "nest_15x15_4")),
)  # fmt: skip


def comparison(records: dict, instance: str, variant: str, other: str, seeds) -> tuple[str, str]:
    """(what this run shows, verdict) for "variant beats other on instance": the final average strategies'
    team values paired by seed, mean +- 95% t over the seeds both finished (other = "uniform": the change
    from the uniform start). A seedless other (uniform, a hand-written team) is one evaluation standing for
    every seed: its own 95% evaluation interval is added to the t half-width in quadrature, so its sampling
    error cannot decide a verdict. A refused other is beaten (it cannot run); fewer than 2 paired seeds
    decide nothing."""
    mine = {s: r for s in seeds if (r := records.get((instance, variant, s))) is not None}
    if any(cannot_run(r) for r in mine.values()):
        return f"{variant} {cannot_run(next(r for r in mine.values() if cannot_run(r)))}", "no"
    seedless = other == "uniform" or other in REFERENCES
    if seedless:  # one seedless record stands for every seed
        base = records.get((instance, other, None))
        theirs = {s: base for s in seeds} if base else {}
    else:
        theirs = {s: r for s in seeds if (r := records.get((instance, other, s))) is not None}
        if any(cannot_run(r) for r in theirs.values()):
            return f"{other} {cannot_run(next(r for r in theirs.values() if cannot_run(r)))}", "yes"
    paired = [s for s in seeds if s in mine and s in theirs]
    if len(paired) < 2:
        return f"{len(paired)} of {len(seeds)} seeds paired", "not measured yet"
    diffs = [final(mine[s]) - final(theirs[s]) for s in paired]
    mean, half = mean_and_interval(diffs)
    if seedless:
        half = math.hypot(half, float(theirs[paired[0]]["points"][-1].get("ci95", 0.0)))
    verdict = "yes" if mean - half > 0 else "no" if mean + half < 0 else "inconclusive"
    return f"{variant} - {other}: {mean:+.4f} ± {half:.4f} ({len(paired)} seeds)", verdict


# The library's default variant follows the "which variant" rows of both figures: Deep CFR + MIX (the update
# without Algorithm 1 line 8's fed-back target) is `CFRMixSolver`'s default only if it beats the paper's CFR-MIX
# on more paper instances than it loses on; otherwise the paper's method is. Either stays runnable by name.
CANDIDATE, PAPER_METHOD = "deep_cfr_mix", "cfr_mix"


def default_variant(records: dict, seeds) -> tuple[str, dict[str, list[str]]]:
    """(the variant the rule above picks, {verdict: instances}) over every paper instance that runs both."""
    tally: dict[str, list[str]] = {}
    for inst in INSTANCES.values():
        if CANDIDATE in inst.variants and PAPER_METHOD in inst.variants:
            verdict = comparison(records, inst.name, CANDIDATE, PAPER_METHOD, seeds)[1]
            tally.setdefault(verdict, []).append(inst.name)
    wins, losses = len(tally.get("yes", [])), len(tally.get("no", []))
    return (CANDIDATE if wins > losses else PAPER_METHOD), tally


def default_section(records: dict, seeds) -> list[str]:
    import inspect

    from openspiel_cfrx import CFRMixSolver

    choice, tally = default_variant(records, seeds)
    library = inspect.signature(CFRMixSolver).parameters["variant"].default
    counts = "; ".join(f"{verdict}: {len(names)} ({', '.join(names)})" for verdict, names in sorted(tally.items()))
    return ["", "## The library's default variant", "",
            f"Rule: `{CANDIDATE}` is `CFRMixSolver`'s default only if it beats the paper's `{PAPER_METHOD}` on more "
            "of the paper's instances (both figures, the \"which variant\" rows) than it loses on; otherwise the "
            f"paper's method is. `{CANDIDATE}` > `{PAPER_METHOD}`, per instance: {counts}. The rule picks "
            f"**`{choice}`**" + (f" (provisional: {len(tally['not measured yet'])} not measured yet)"
                                  if tally.get("not measured yet") else "")
            + f"; the library's default is `{library}`"
            + (" (they agree)." if choice == library else " (**they disagree**: change the default or the rule)."),
            "Both variants stay runnable by name (`variant=\"cfr_mix\"` is the paper's method)."]  # fmt: skip


def cannot_run(record: dict) -> str:
    """Why a run cannot stand in a comparison ("" when it can): refused by its estimate, or no iteration
    finished within its budget (the last one stopped at 1.5x)."""
    if record.get("refused"):
        return f"refused: {record['refused']}"
    if record.get("iterations") == 0:
        return f"finished no iteration in its budget ({record.get('note') or 'stopped'})"
    return ""


def final(record: dict) -> float:
    return float(record["points"][-1]["value"])


# ------------------------------------------------------------------ runs
def record_path(folder: str, instance: str, variant: str, seed: int | None) -> str:
    tail = variant if seed is None else f"{variant}_s{seed}"  # seedless: "uniform" or a reference team
    return os.path.join(folder, f"{instance}_{tail}.json")


def stamp(instance: Instance, variant: str, budget: float) -> dict:
    return dict(version=VERSION, game=instance.game, variant=variant, budget=budget, cfg=instance.cfg,
                evaluator=instance.evaluator, eval_kw=instance.eval_kw)  # fmt: skip


def load_record(path: str, expected: dict) -> dict | None:
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError) as e:
        usage_error(f"{path} is not a readable run record ({e}): delete it to rerun that run")
    return record if record.get("stamp") == expected else None


def save_record(path: str, record: dict) -> None:
    from openspiel_cfrx.checkpoint_io import atomic_write

    data = (json.dumps(record, indent=1) + "\n").encode("utf-8")
    atomic_write(path, lambda f: f.write(data))


def evaluator(instance: Instance):
    """evaluate(game, policy) -> WorstCaseResult, the instance's team worst case (higher is better)."""
    if instance.evaluator == "goofspiel":
        from games.team_goofspiel_worst_case import particle_goofspiel_team_worst_case

        return lambda game, policy: particle_goofspiel_team_worst_case(game, policy, **instance.eval_kw)
    from games.nest_worst_case import nest_team_worst_case

    return lambda game, policy: nest_team_worst_case(game, policy, **instance.eval_kw)


def run_cfg(game, instance: Instance, variant: str) -> dict:
    """The variant's settings: the joint-action Double Neural CFR probes every legal joint action (no cap)."""
    if variant == "double_neural_joint":
        return {**instance.cfg, "joint_cap": max(2, game.num_distinct_actions())}
    return dict(instance.cfg)


def refusal(game, instance: Instance, variant: str, budget: float) -> str | None:
    """Why a joint-action variant cannot run here (an estimate, nothing allocated), or None."""
    from benchmarks.bench_cfr_mix import _fmt_seconds, joint_deep_cfr_needs, seconds_per_node

    if variant == "deep_cfr":
        needs = joint_deep_cfr_needs(game)
        traversals = instance.cfg.get("deep_cfr_traversals", instance.cfg["traversals"])
        if traversals * needs["traversal_seconds"] > budget:
            return (f"one iteration ({traversals} team traversals of ~{needs['traversal_nodes']:.3g} nodes, external "
                    f"sampling) needs >= {_fmt_seconds(traversals * needs['traversal_seconds'])} CPU, budget "
                    f"{budget:.0f} s")  # fmt: skip
    if variant == "double_neural_joint":
        joint = game.num_distinct_actions()
        seconds = instance.cfg["traversals"] * joint * seconds_per_node(game)
        if seconds > budget:
            return (f"one iteration probes {joint:,} joint actions at each of {instance.cfg['traversals']} "
                    f"traversals' team information sets: >= {_fmt_seconds(seconds)} CPU, budget {budget:.0f} s")
    return None


def run_one(instance: Instance, variant: str, seed: int, budget: float) -> dict:
    """One variant for `budget` CPU seconds, evaluated at ~1/3, 2/3 and all of it; or its refusal."""
    import pyspiel

    import games  # noqa: F401  (registers the team games)
    from benchmarks.bench_cfr_mix import _result_point, _run_variant, make_solver
    from openspiel_cfrx.eval.team_best_response import WorstCaseTooLargeError

    game = pyspiel.load_game(instance.game)
    record = dict(stamp=stamp(instance, variant, budget), seed=seed)
    reason = refusal(game, instance, variant, budget)
    if reason:
        return dict(record, refused=reason)
    solver = make_solver(game, variant, run_cfg(game, instance, variant), seed)
    worst_case = evaluator(instance)

    def evaluate(solver, iteration):
        start = time.perf_counter()
        point = _result_point(worst_case(game, solver), time.perf_counter() - start)
        point.pop("per_start", None)
        return dict(point, nodes=int(getattr(solver, "nodes_touched", 0)))

    try:
        start = evaluate(solver, 0)
    except WorstCaseTooLargeError as e:  # a joint-action policy whose worst case cannot be computed here
        return dict(record, refused=f"its worst case cannot be computed: {e}")
    points: list = []
    iterations, evaluated, spent, last, note = _run_variant(solver, variant, budget, evaluate, print, points, start)
    if iterations and evaluated != iterations:
        points.append(dict(variant=variant, iteration=iterations, cpu_s=spent, **evaluate(solver, iterations)))
    if not points:
        points.append(dict(variant=variant, iteration=0, cpu_s=spent, **start))
    return dict(record, iterations=iterations, cpu_s=spent, note=note,
                points=[{k: v for k, v in p.items() if k != "variant"} for p in points])  # fmt: skip


def run_uniform(instance: Instance) -> dict:
    """The uniform strategy every variant starts from (an untrained CFR-MIX), evaluated once."""
    import pyspiel

    import games  # noqa: F401
    from benchmarks.bench_cfr_mix import _result_point, make_solver

    game = pyspiel.load_game(instance.game)
    start = time.perf_counter()
    point = _result_point(evaluator(instance)(game, make_solver(game, "cfr_mix", instance.cfg, 0)),
                          time.perf_counter() - start)  # fmt: skip
    point.pop("per_start", None)
    return dict(stamp=stamp(instance, "uniform", 0), points=[dict(point, iteration=0, cpu_s=0.0, nodes=0)])


def run_reference(instance: Instance, name: str) -> dict:
    """A hand-written team (`REFERENCES`), evaluated once by the instance's worst case."""
    import pyspiel

    import games  # noqa: F401
    from benchmarks.bench_cfr_mix import NestHeuristicTeam, _result_point

    game = pyspiel.load_game(instance.game)
    start = time.perf_counter()
    point = _result_point(evaluator(instance)(game, NestHeuristicTeam(game, name)), time.perf_counter() - start)
    point.pop("per_start", None)
    return dict(stamp=stamp(instance, name, 0), points=[dict(point, iteration=0, cpu_s=0.0, nodes=0)])


# ------------------------------------------------------------------ page
def load_all(args, instances) -> dict:
    records = {}
    for inst in instances:
        budget = inst.budget * args.budget_factor
        for name in ("uniform", *inst.references):
            found = load_record(record_path(args.records, inst.name, name, None), stamp(inst, name, 0))
            if found:
                records[(inst.name, name, None)] = found
        for variant in inst.variants:
            for seed in args.seeds:
                found = load_record(record_path(args.records, inst.name, variant, seed), stamp(inst, variant, budget))
                if found:
                    records[(inst.name, variant, seed)] = found
    return records


def instance_table(inst: Instance, records: dict, seeds) -> str:
    rows = []
    uniform = records.get((inst.name, "uniform", None))
    u = final(uniform) if uniform else None
    rows.append(["uniform (the start)", "1 / 1" if uniform else "0 / 1", "0", "0",
                 f"{u:.4f} (± {uniform['points'][-1]['ci95']:.3f} evaluation)" if uniform else "not measured yet",
                 "", ""])  # fmt: skip
    for name in inst.references:
        ref = records.get((inst.name, name, None))
        value = f"{final(ref):.4f} (± {ref['points'][-1]['ci95']:.3f} evaluation)" if ref else "not measured yet"
        change = f"{final(ref) - u:+.4f}" if ref and u is not None else ""
        rows.append([f"{REFERENCES[name]} (`{name}`, reference)", "1 / 1" if ref else "0 / 1", "–", "–", value,
                     change, ""])  # fmt: skip
    for variant in inst.variants:
        mine = [records[(inst.name, variant, s)] for s in seeds if (inst.name, variant, s) in records]
        refused = [cannot_run(r) for r in mine if cannot_run(r)]
        if refused:
            rows.append([variant, f"{len(mine)} / {len(seeds)}", "–", "–", refused[0], "", ""])
            continue
        done = f"{len(mine)} / {len(seeds)}"
        if not mine:
            rows.append([variant, done, "", "", "not measured yet", "", ""])
            continue
        values = [final(r) for r in mine]
        mean, half = mean_and_interval(values)
        change = ""
        if u is not None:
            c_mean, c_half = mean_and_interval([v - u for v in values])
            change = f"{c_mean:+.4f}" + (f" ± {c_half:.4f}" if len(values) > 1 else "")
        notes = "; ".join(sorted({r["note"] for r in mine if r.get("note")}))
        rows.append([variant, done, f"{sum(r['iterations'] for r in mine) / len(mine):.0f}",
                     f"{sum(r['points'][-1]['nodes'] for r in mine) / len(mine):.3g}",
                     f"{mean:.4f}" + (f" ± {half:.4f}" if len(values) > 1 else " (1 seed: no interval)"),
                     change, ", ".join(f"{v:.4f}" for v in values) + (f" ({notes})" if notes else "")])  # fmt: skip
    return markdown_table(["variant", "runs done", "iterations (mean)", "nodes touched (mean)",
                           "final team value: mean ± 95%", "change from uniform", "per seed"], rows)  # fmt: skip


def statement_rows(figure: int, records: dict, seeds) -> list[list[str]]:
    rows = []
    for st in STATEMENTS:
        if st.figure != figure:
            continue
        for name in st.instances:
            inst = INSTANCES[name]
            for variant, other in st.pairs:
                if variant not in inst.variants or other not in ("uniform", *inst.references, *inst.variants):
                    continue
                shows, verdict = comparison(records, name, variant, other, seeds)
                rows.append([f"{st.text} ({name}: {variant} > {other})", shows, verdict])
    return rows


def plot(figure: int, instances, records, seeds, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, len(instances), figsize=(4.2 * len(instances), 3.6), squeeze=False)
    for ax, inst in zip(axes[0], instances, strict=True):
        uniform = records.get((inst.name, "uniform", None))
        for variant in inst.variants:
            runs = [records[(inst.name, variant, s)] for s in seeds if (inst.name, variant, s) in records]
            runs = [r for r in runs if not cannot_run(r)]
            if not runs:
                continue
            n = min(len(r["points"]) for r in runs)
            x = [0.0] + [float(np.mean([r["points"][i]["cpu_s"] for r in runs])) for i in range(n)]
            y = np.array([[final(uniform) if uniform else np.nan] + [r["points"][i]["value"] for i in range(n)]
                          for r in runs])  # fmt: skip
            ax.plot(x, y.mean(axis=0), marker="o", markersize=3, label=f"{variant} ({len(runs)} seed{'s' if len(runs) > 1 else ''})")
            if len(runs) > 1:
                ax.fill_between(x, y.min(axis=0), y.max(axis=0), alpha=0.2)
        ax.set_title(f"{inst.panel} {inst.name}", fontsize=9)
        ax.set_xlabel("solver CPU seconds (1 thread)")
        ax.set_ylabel("team worst-case value")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "not measured yet", ha="center", va="center", transform=ax.transAxes)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def page(args, figure: int, instances, records: dict) -> str:
    planned = sum(len(i.variants) * len(args.seeds) + 1 + len(i.references) for i in instances)
    done = sum(1 for key in records if INSTANCES[key[0]].figure == figure)
    spent = sum(r.get("cpu_s", 0.0) for key, r in records.items() if INSTANCES[key[0]].figure == figure)
    lines = [
        f"The paper's Figure {figure} instances, every variant its panel compares, seeds "
        f"{', '.join(map(str, args.seeds))}; budgets in process CPU seconds on one torch thread (x{args.budget_factor:g}"
        " of the defaults below); each run evaluated at ~1/3, 2/3 and all of its budget by the team's worst case "
        "(higher is better; the evaluation is not charged). Team Goofspiel: the particle best response of the "
        "adversary, held-out value (an upper bound on the worst case in expectation). NEST: the evader's best "
        "shortest path (or near-shortest, 5x5) per sampled start, held-out (an upper bound). Verdicts: paired by "
        "seed, \"yes\" when the 95% t-interval of the difference lies above 0, \"no\" below, else inconclusive; against a "
        "one-evaluation record (the uniform start, a hand-written team) that record's own 95% evaluation interval "
        "is added to the half-width in quadrature; a refused competitor cannot run and counts as beaten.",
        "",
        f"**{done} of {planned} runs stored** ({spent / 3600:.2f} CPU hours of training)"
        + ("." if done == planned else ": **a half-finished grid**; runs not stored say **not measured yet**, never "
           "extrapolated. Resume with the same command."),
        "",
        f"![Figure {figure}](cfr_mix_paper/figure{figure}.png)",
    ]
    for inst in instances:
        lines += ["", f"## {inst.panel}: `{inst.game}`", "",
                  f"{inst.budget * args.budget_factor:.0f} CPU s per run; settings `{json.dumps(inst.cfg)}` (the "
                  "joint-action Double Neural CFR probes every joint action); evaluation "
                  f"`{json.dumps(inst.eval_kw)}`.", "", instance_table(inst, records, args.seeds)]  # fmt: skip
    lines += ["", "## The paper's statements on this run", "",
              markdown_table(["statement (instance: comparison)", "this run", "holds here"],
                             statement_rows(figure, records, args.seeds))]  # fmt: skip
    lines += default_section(records, args.seeds)
    return "\n".join(lines)


def plan_text(args, todo) -> str:
    hours = sum(budget for *_, budget in todo) / 3600
    rows = [[inst.name, variant, "-" if seed is None else seed, f"{budget:.0f}"] for inst, variant, seed, budget in todo]
    return (markdown_table(["instance", "variant", "seed", "budget (CPU s)"], rows)
            + f"\n{len(todo)} runs to do: <= {hours:.2f} CPU hours of training (refused joint-action runs cost "
            "nothing; each run adds 3-4 evaluations, seconds to ~30 s each)")  # fmt: skip


# ------------------------------------------------------------------ main
FLAGS = flags.FlagValues()
flags.DEFINE_enum("figure", "3", ["3", "4"], "The paper's figure: 3 (team Goofspiel) or 4 (NEST).", flag_values=FLAGS)
flags.DEFINE_list("instances", [], "Instances to run now (default: the figure's); the page covers all of them.",
                  flag_values=FLAGS)  # fmt: skip
flags.DEFINE_list("variants", [], "Variants to run now (default: each instance's).", flag_values=FLAGS)
define_checked(FLAGS, "seeds", "0,1,2", "Seeds (comma-separated, distinct).", distinct_seeds)
define_checked(FLAGS, "budget_factor", "1", "Multiplies every budget.", positive_seconds)
flags.DEFINE_string("records", RECORDS, "One JSON record per finished run (resumable, committed).", flag_values=FLAGS)
flags.DEFINE_string("output", "", "The page (default benchmarks/results/cfr_mix_figure<N>.md).", flag_values=FLAGS)
flags.DEFINE_bool("plan", False, "Print the runs still to do and their CPU cost; run nothing.", flag_values=FLAGS)
flags.DEFINE_bool("report_only", False, "Write the page from the stored records; run nothing.", flag_values=FLAGS)


def main(argv=None) -> int:
    args = parse_flags(FLAGS, argv, __doc__)
    figure = int(args.figure)
    instances = [i for i in INSTANCES.values() if i.figure == figure]
    unknown = [n for n in args.instances if n not in INSTANCES or INSTANCES[n].figure != figure]
    if unknown:
        usage_error(f"--instances: {unknown} not in Figure {figure}'s "
                    f"{[i.name for i in instances]}")  # fmt: skip
    now = [i for i in instances if not args.instances or i.name in args.instances]
    records = load_all(args, INSTANCES.values())  # both figures: the default-variant rule reads them all
    todo = [(i, name, None, 0.0) for i in now for name in ("uniform", *i.references)
            if (i.name, name, None) not in records]  # fmt: skip
    todo += [(i, v, s, i.budget * args.budget_factor) for i in now for v in i.variants for s in args.seeds
             if (not args.variants or v in args.variants) and (i.name, v, s) not in records]  # fmt: skip
    if args.plan:
        print(plan_text(args, todo))
        return 0
    if not args.report_only:
        import torch

        torch.set_num_threads(1)
        for inst, variant, seed, budget in todo:
            print(f"[{time.strftime('%H:%M')}] {inst.name} {variant} seed {seed} ({budget:.0f} s)", flush=True)
            record = (run_one(inst, variant, seed, budget) if seed is not None else run_uniform(inst)
                      if variant == "uniform" else run_reference(inst, variant))  # fmt: skip
            save_record(record_path(args.records, inst.name, variant, seed), record)
            records[(inst.name, variant, seed)] = record
    output = args.output or os.path.join(ROOT, "benchmarks", "results", f"cfr_mix_figure{figure}.md")
    plot(figure, instances, records, args.seeds,
         os.path.join(os.path.dirname(output), "cfr_mix_paper", f"figure{figure}.png"))  # fmt: skip
    write_result(output, f"CFR-MIX's Figure {figure} on the paper's instances (Li et al. 2021, Section 5)",
                 page(args, figure, instances, records))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
