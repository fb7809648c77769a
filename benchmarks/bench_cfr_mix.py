"""CFR-MIX benchmark: every variant at equal CPU time (paper Figs. 3-4, scaled down).

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/bench_cfr_mix.py [--parts=a,b,...] [--quick] [--budget_factor=F] [--seeds=0,1,2]

Writes benchmarks/results/cfr_mix.md and, per part, curves.csv, curves.png and
section.md under benchmarks/results/cfr_mix/<part>/ (the markdown file is
assembled from every part's section.md, so a part can be re-run alone, plus
results/cfr_mix/reading.md if present). Parts:

  goofspiel_3c2p2r   tiny team Goofspiel, exact NashConv (team as one player)
  goofspiel_6c4p2r   6 cards / 4 agents / 2 rounds, exact team worst case
                     (dynamic program over the adversary's observations)
  nest_3x3_2         NEST 3x3, 2 pursuers: evader path best response over all
                     320 start configurations
  nest_5x5_4         NEST 5x5, 4 pursuers: evader paths within 2 steps of the
                     shortest escape, 96 sampled starts
  scale_goofspiel_10c6p2r  CFR-MIX only, 10^6 joint bids, particle best response
  scale_nest_15x15_4       CFR-MIX only, shortest-path evader, sampled starts
                           (--seeds: one run per seed)
  nest_15x15_references    hand-written pursuers (chase, intercept) under the
                           scale part's evaluation, for scale
  nest_15x15_controls      why learning stops there: one setting changed at a
                           time, and a supervised fit of CFR-MIX's network to
                           the intercept team

Budgets are process CPU seconds (time.process_time, torch on 1 thread), so
that other jobs on a shared machine do not change what a variant gets;
evaluation is not charged. Each variant runs whole iterations until its
budget is spent (the last one may overshoot) and is evaluated at about 1/3,
2/3 and all of it; the point at 0 s is the uniform strategy, where every
variant starts. Joint-action Deep CFR (`deep_cfr`, external sampling) is run
only where one traversal fits in the budget; otherwise the expected size of a
traversal (Knuth's estimator) times a measured lower bound on the cost per
node is reported instead, with the memory it would need.
"""

from __future__ import annotations

import csv
import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import pyspiel  # noqa: E402
import torch  # noqa: E402
from absl import flags  # noqa: E402

import games  # noqa: E402, F401
from benchmarks.common import markdown_table, parse_flags, usage_error, write_result  # noqa: E402
from games.nest_worst_case import nest_team_worst_case  # noqa: E402
from games.team_goofspiel_worst_case import exact_goofspiel_team_worst_case  # noqa: E402
from openspiel_cfrx import team  # noqa: E402
from openspiel_cfrx.cfr_mix import CFRMixSolver  # noqa: E402
from openspiel_cfrx.deep import DeepCFRSolver  # noqa: E402
from openspiel_cfrx.eval.harness import FunctionContender, RunState, run_budget  # noqa: E402
from openspiel_cfrx.eval.team_best_response import sampled_team_worst_case  # noqa: E402

ALL_VARIANTS = ["cfr_mix", "cfr_mix_no_sharing", "deep_cfr_mix", "independent", "double_neural_joint", "deep_cfr"]
PART_ORDER = ["goofspiel_3c2p2r", "goofspiel_6c4p2r", "nest_3x3_2", "nest_5x5_4", "scale_goofspiel_10c6p2r",
              "scale_nest_15x15_4", "nest_15x15_references", "nest_15x15_controls"]  # fmt: skip


class _OutOfBudget(Exception):
    pass


class _Unfinished(Exception):
    """A step of `run_curves` stopped by its CPU limit, `spent` solver seconds into the run."""

    def __init__(self, spent: float):
        super().__init__(spent)
        self.spent = spent


def call_with_cpu_limit(fn, seconds: float) -> bool:
    """Runs fn(); False if it used more than `seconds` of process CPU time (then interrupted)."""

    def handler(signum, frame):
        raise _OutOfBudget

    previous = signal.signal(signal.SIGPROF, handler)
    signal.setitimer(signal.ITIMER_PROF, max(float(seconds), 0.01))
    try:
        fn()
        return True
    except _OutOfBudget:
        return False
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


# ------------------------------------------------------------------ solvers
def make_solver(game, variant: str, cfg: dict, seed: int = 0):
    hidden = cfg.get("hidden", (64, 64))
    if variant == "deep_cfr":
        return DeepCFRSolver(game, policy_network_layers=hidden, advantage_network_layers=hidden,
                             num_traversals=cfg.get("deep_cfr_traversals", cfg["traversals"]),
                             advantage_network_train_steps=cfg["train_steps"],
                             policy_network_train_steps=cfg["train_steps"], memory_capacity=100_000, seed=seed,
                             workers={"num_threads": 1})  # fmt: skip
    return CFRMixSolver(game, variant=variant, num_traversals=cfg["traversals"], regret_network_layers=hidden,
                        policy_network_layers=hidden, regret_train_steps=cfg["train_steps"],
                        policy_train_steps=cfg["train_steps"], traversal={"joint_cap": cfg.get("joint_cap", 64)},
                        memory_capacity=cfg.get("memory_capacity", 20_000),
                        network={"infoset_encoding": cfg.get("infoset_encoding", "tensor")}, seed=seed)  # fmt: skip


def knuth_traversal_nodes(game, traverser: int, paths: int, seed: int) -> float:
    """Expected nodes of one external-sampling traversal (Knuth's estimator:
    random paths, weights = product of the traverser's branching factors)."""
    rng = random.Random(seed)
    total = 0.0
    for _ in range(paths):
        state = game.new_initial_state()
        weight, estimate = 1.0, 0.0
        while True:
            estimate += weight
            if state.is_terminal():
                break
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0])
                continue
            player = state.current_player()
            if player == team.TEAM_PLAYER:
                count = state.num_legal_joint_actions()
                action = team.sample_uniform_joint_action(state, rng)
            else:
                legal = state.legal_actions()
                count, action = len(legal), rng.choice(legal)
            if player == traverser:
                weight *= count
            state.apply_action(action)
        total += estimate
    return total / paths


def seconds_per_node(game, playouts: int = 30, seed: int = 0) -> float:
    """Lower bound on a traversal's CPU cost per node: one child state and one
    information-state tensor (Deep CFR also runs a network and stores samples)."""
    rng = random.Random(seed)
    states = []
    for _ in range(playouts):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
                continue
            if state.current_player() == team.TEAM_PLAYER:
                action = team.sample_uniform_joint_action(state, rng)
            else:
                action = rng.choice(state.legal_actions())
            states.append((state.clone(), action))
            state.apply_action(action)
    start = time.process_time()
    for state, action in states:
        state.child(action).is_terminal()
        state.information_state_tensor(state.current_player())
    return (time.process_time() - start) / len(states)


def joint_deep_cfr_needs(game, hidden: int = 64) -> dict:
    """Sizes of joint-action Deep CFR on `game`: output head, one memory entry,
    expected nodes of one team traversal and its CPU time (lower bound)."""
    joint = game.num_distinct_actions()
    features = int(np.prod(game.information_state_tensor_shape()))
    nodes = knuth_traversal_nodes(game, team.TEAM_PLAYER, 200, seed=0)
    per_node = seconds_per_node(game)
    return dict(joint=joint, features=features, head_params=hidden * joint + joint,
                entry_bytes=4 * features + 5 * joint + 4, traversal_nodes=nodes, seconds_per_node=per_node,
                traversal_seconds=nodes * per_node)  # fmt: skip


def _fmt_seconds(s: float) -> str:
    for unit, size in (("years", 3.15e7), ("days", 86400), ("h", 3600), ("min", 60)):
        if s >= size:
            return f"{s / size:.3g} {unit}"
    return f"{s:.3g} s"


def _fmt_bytes(b: float) -> str:
    for unit, size in (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{b:.0f} B"


def needs_line(needs: dict) -> str:
    return (f"joint-action Deep CFR: {needs['joint']:,} outputs per network ({needs['head_params']:,} head "
            f"parameters with 64 hidden units, {_fmt_bytes(4 * needs['head_params'])}); one advantage-memory entry "
            f"{_fmt_bytes(needs['entry_bytes'])} (info tensor {needs['features']:,} floats + regrets and mask over "
            f"the joint actions), so 10^6 entries take {_fmt_bytes(1e6 * needs['entry_bytes'])}; one team "
            f"traversal (external sampling) visits ~{needs['traversal_nodes']:.3g} nodes (Knuth estimate, 200 "
            f"paths) at >= {needs['seconds_per_node'] * 1e6:.0f} us each (measured: child + info tensor only), "
            f">= {_fmt_seconds(needs['traversal_seconds'])} of CPU per traversal")  # fmt: skip


# --------------------------------------------------------------- curves
def run_curves(game, variants, budget, cfg, evaluate, log, deep_cfr_needs=None, seed=0):
    """Each variant for `budget` CPU seconds; returns (points, summary rows)."""
    points, rows = [], []
    uniform = evaluate(make_solver(game, "cfr_mix", cfg, seed), 0)
    points.append(dict(variant="uniform (all, 0 s)", iteration=0, cpu_s=0.0, **uniform))
    log(f"uniform: {uniform}")
    for variant in variants:
        # One iteration runs `deep_cfr_traversals` team traversals (external sampling): skip the variant
        # when that alone exceeds the budget. (6C4P2R, 4 traversals of ~1.6M nodes: the batched traversal's
        # frontier of pyspiel states also grew past 20 GB of RAM before this check counted all of them.)
        traversals = cfg.get("deep_cfr_traversals", cfg["traversals"])
        if variant == "deep_cfr" and deep_cfr_needs is not None and traversals * deep_cfr_needs["traversal_seconds"] > budget:
            rows.append([variant, 0, "-", "-", "-", "-",
                         f"not run: one iteration ({traversals} team traversals) needs >= "
                         f"{_fmt_seconds(traversals * deep_cfr_needs['traversal_seconds'])} CPU (budget {budget:.0f} s)"])  # fmt: skip
            log(f"{variant}: skipped ({deep_cfr_needs['traversal_seconds']:.3g} s per traversal)")
            continue
        solver = make_solver(game, variant, cfg, seed)
        iteration, evaluated, spent, last, note = _run_variant(solver, variant, budget, evaluate, log, points, uniform)
        if iteration and evaluated != iteration:
            last = evaluate(solver, iteration)
            points.append(dict(variant=variant, iteration=iteration, cpu_s=spent, **last))
            log(f"{variant:20s} it {iteration:3d} {spent:6.1f}s CPU {last}")
        if not iteration:
            points.append(dict(variant=variant, iteration=0, cpu_s=spent, **uniform))
        current = "-" if last.get("current") is None else f"{last['current']:.4f}"
        rows.append([variant, iteration, f"{spent:.0f}", f"{last['value']:.4f}", _ci(last), current, note])
    return points, rows


def _run_variant(solver, variant, budget, evaluate, log, points, uniform):
    """`solver` for `budget` CPU seconds under the harness (`run_budget`), evaluated at the first iteration past
    1/3, 2/3 and all of it; an iteration still running at 1.5 x budget is stopped. Appends the points; returns
    (iterations, the last one evaluated, CPU seconds, the last evaluation, note)."""
    state = RunState(pending=[budget / 3, 2 * budget / 3, budget])
    done = dict(iterations=0, evaluated=0, last=uniform)

    def step():
        start = time.process_time()
        if not call_with_cpu_limit(solver.run_iteration, 1.5 * budget - state.spent):
            raise _Unfinished(state.spent + time.process_time() - start)
        done["iterations"] += 1

    def measure(m):
        done["last"], done["evaluated"] = evaluate(solver, m.steps), m.steps
        points.append(dict(variant=variant, iteration=m.steps, cpu_s=m.spent, **done["last"]))
        log(f"{variant:20s} it {m.steps:3d} {m.spent:6.1f}s CPU {done['last']}")

    try:
        run_budget(FunctionContender(variant, step, lambda: solver), measure, [], seconds=budget,
                   clock=time.process_time, state=state, log=None)  # fmt: skip
    except _Unfinished as stopped:
        note = f"iteration {done['iterations'] + 1} unfinished at {stopped.spent:.0f} s CPU (stopped)"
        return done["iterations"], done["evaluated"], stopped.spent, done["last"], note
    return done["iterations"], done["evaluated"], state.spent, done["last"], ""


def _ci(point: dict) -> str:
    return "exact" if point["ci95"] == 0 else f"{point['ci95']:.3f}"


def write_curves(points, folder, title, ylabel, log_scale=False):
    os.makedirs(folder, exist_ok=True)
    fields = ["variant", "iteration", "cpu_s", "value", "ci95", "in_sample", "eval_s", "current"]
    with open(os.path.join(folder, "curves.csv"), "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(fields)
        for p in points:
            writer.writerow([p["variant"], p["iteration"], f"{p['cpu_s']:.2f}", f"{p['value']:.6g}",
                             f"{p['ci95']:.4g}", "" if p["in_sample"] is None else f"{p['in_sample']:.6g}",
                             f"{p['eval_s']:.1f}", "" if p.get("current") is None else f"{p['current']:.6g}"])  # fmt: skip
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    start = [p for p in points if p["iteration"] == 0 and p["cpu_s"] == 0]
    for variant in dict.fromkeys(p["variant"] for p in points if p["cpu_s"] > 0 or p["iteration"] > 0):
        mine = start + [p for p in points if p["variant"] == variant and (p["iteration"] > 0 or p["cpu_s"] > 0)]
        ax.errorbar([p["cpu_s"] for p in mine], [p["value"] for p in mine], yerr=[p["ci95"] for p in mine],
                    label=variant, marker="o", markersize=3, capsize=2)  # fmt: skip
    ax.set_xlabel("solver CPU seconds (1 thread)")
    ax.set_ylabel(ylabel)
    if log_scale:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "curves.png"), dpi=120)
    plt.close(fig)


# ----------------------------------------------------------------- parts
def _result_point(result, seconds) -> dict:
    point = dict(value=float(result.value), ci95=float(result.ci95),
                 in_sample=None if result.in_sample_value is None else float(result.in_sample_value),
                 eval_s=seconds)  # fmt: skip
    if getattr(result, "current", None) is not None:
        point["current"] = float(result.current)
    if getattr(result, "per_start_values", None) is not None:
        point["per_start"] = np.asarray(result.per_start_values, dtype=np.float64)
    return point


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def curves_part(args, name, title, game_string, cfg, evaluator, metric_text, ylabel, log_scale=False):
    game = pyspiel.load_game(game_string)
    budget = cfg["budget"] * args.budget_factor / (10 if args.quick else 1)
    needs = joint_deep_cfr_needs(game) if "deep_cfr" in cfg["variants"] else None

    def evaluate(solver, iteration):
        result, seconds = _timed(lambda: evaluator(game, solver, iteration))
        return _result_point(result, seconds)

    seeds = [int(x) for x in getattr(args, "seeds", None) or [0]]
    points, rows, finals, currents = [], [], {}, {}
    for seed in seeds:
        seed_points, seed_rows = run_curves(game, cfg["variants"], budget, cfg, evaluate, print, needs, seed)
        for point in seed_points[1:] if points else seed_points:
            if len(seeds) > 1 and point["cpu_s"] > 0:
                point = dict(point, variant=f"{point['variant']} s{seed}")
            points.append(point)
        for row in seed_rows:
            rows.append([row[0], seed, *row[1:]])
            if row[3] != "-":
                finals.setdefault(row[0], []).append(float(row[3]))
            if row[5] != "-":
                currents.setdefault(row[0], []).append(float(row[5]))
    folder = os.path.join(args.out, "cfr_mix", name)
    write_curves(points, folder, f"{game_string}: {metric_text}", ylabel, log_scale)
    uniform = points[0]
    settings = (f"{cfg['traversals']} traversals/player/iteration, {cfg['train_steps']} Adam steps per network, "
                f"hidden {list(cfg.get('hidden', (64, 64)))}, joint_cap {cfg.get('joint_cap', 64)}")  # fmt: skip
    lines = [
        f"## {title}\n",
        f"`{game_string}`; metric: {metric_text}. Budget {budget:.0f} s CPU per variant; {settings}; "
        f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}. "
        f"Uniform strategy: {uniform['value']:.4f} ({_ci(uniform)}). Curves: `results/cfr_mix/{name}/`.",
        "",
        markdown_table(["variant", "seed", "iterations", "CPU s", "final value", "ci95", "current iterate", "note"],
                       rows),
    ]
    if len(seeds) > 1:
        from scipy import stats

        def band(values):
            if len(values) < 2:
                return f"{np.mean(values):.4f}"
            half = stats.t.ppf(0.975, len(values) - 1) * np.std(values, ddof=1) / np.sqrt(len(values))
            return f"{np.mean(values):.4f} ± {half:.4f}"

        table = [[variant, band(v), ", ".join(f"{x:.4f}" for x in v),
                  band(currents[variant]) if variant in currents else "-"] for variant, v in finals.items()]  # fmt: skip
        lines += ["", f"Over the {len(seeds)} seeds (final values, mean ± 95% t-interval of the mean; the average "
                  "strategy is what the paper evaluates, the current iterate is RM+ on the regret networks):", "",
                  markdown_table(["variant", "average: mean ± 95%", "per seed", "current iterate: mean ± 95%"],
                                 table)]  # fmt: skip
    if needs is not None:
        lines += ["", needs_line(needs) + "."]
    lines += ["", f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: `{_command()}`."]
    write_section(folder, lines)


class CurrentIterate:
    """A CFR-MIX solver's current strategy (RM+ on its regret networks) as a
    policy the team worst-case evaluators accept."""

    def __init__(self, solver):
        self.solver = solver

    def agent_strategies(self, states):
        return self.solver.agent_strategies(states, average=False)


def part_goofspiel_3c2p2r(args):
    from openspiel_cfrx import get_tree, nash_conv

    class _Exact:
        value = 0.0

    def evaluator(game, solver, iteration):
        result = _Exact()
        result.value, result.ci95, result.in_sample_value = float(nash_conv(game, solver)), 0.0, None
        if hasattr(solver, "current_policy_array"):
            result.current = float(nash_conv(game, solver.current_policy_array(get_tree(game))))
        return result

    cfg = dict(budget=40, variants=ALL_VARIANTS, traversals=30, train_steps=60, joint_cap=64)
    curves_part(args, "goofspiel_3c2p2r", "Tiny team Goofspiel (3 cards, 2 agents, 2 rounds): exact NashConv",
                "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)", cfg, evaluator,
                "exact NashConv, team as one player (lower is better)", "NashConv", log_scale=True)  # fmt: skip


def part_goofspiel_6c4p2r(args):
    def evaluator(game, solver, iteration):
        result = exact_goofspiel_team_worst_case(game, solver)
        if isinstance(solver, CFRMixSolver):
            result.current = exact_goofspiel_team_worst_case(game, CurrentIterate(solver)).value
        return result

    cfg = dict(budget=90, variants=ALL_VARIANTS, traversals=30, train_steps=40, joint_cap=64, deep_cfr_traversals=4)
    curves_part(args, "goofspiel_6c4p2r", "Team Goofspiel 6 cards, 4 agents, 2 rounds: exact team worst case",
                "team_goofspiel(num_cards=6,num_agents=4,num_turns=2)", cfg, evaluator,
                "exact team worst-case utility (win/loss, higher is better; exact DP over the adversary's "
                "observations)", "team worst-case utility")  # fmt: skip


def part_nest_3x3_2(args):
    def evaluator(game, solver, iteration):
        return nest_team_worst_case(game, solver, num_starts=400, num_particles=64, num_eval_games=64, seed=11)

    cfg = dict(budget=90, variants=ALL_VARIANTS, traversals=30, train_steps=40, joint_cap=64, deep_cfr_traversals=4)
    curves_part(args, "nest_3x3_2", "NEST 3x3, 2 pursuers: team worst case vs the evader's path best response",
                "nest(rows=3,cols=3,num_pursuers=2)", cfg, evaluator,
                "team worst-case utility = 1 - P(escape) against the evader's best path per start (all 320 "
                "starts weighted exactly; path chosen on 64 particles, value on 64 fresh plays per start, "
                "held-out, 95% CI)", "team worst-case utility")  # fmt: skip


def part_nest_5x5_4(args):
    def evaluator(game, solver, iteration):
        return nest_team_worst_case(game, solver, num_starts=96, num_particles=16, num_eval_games=32, max_slack=2,
                                    seed=13)  # fmt: skip

    cfg = dict(budget=100, variants=ALL_VARIANTS, traversals=6, train_steps=40, joint_cap=64, deep_cfr_traversals=1)
    curves_part(args, "nest_5x5_4", "NEST 5x5, 4 pursuers: team utility vs the evader's near-shortest-path best "
                "response", "nest(rows=5,cols=5,num_pursuers=4)", cfg, evaluator,
                "team utility = 1 - P(escape) against the evader's best path among those of at most shortest "
                "escape + 2 steps, per start (the same 96 sampled starts for every point; path chosen on 16 "
                "particles, value on 32 fresh plays per start, held-out, 95% CI over starts): an upper bound on the "
                "worst case", "team utility vs restricted evader BR")  # fmt: skip


def _paired_change(first: dict, last: dict) -> str:
    a, b = first.get("per_start"), last.get("per_start")
    if a is None or b is None or len(a) != len(b) or len(a) < 2:
        return ""
    d = b - a
    return f"{float(d.mean()):+.4f} +- {1.96 * float(d.std(ddof=1)) / np.sqrt(len(d)):.3f}"


def scale_part(args, name, title, game_string, cfg, evaluator, metric_text, extra_lines, fractions=(0.5, 1.0)):
    game = pyspiel.load_game(game_string)
    budget = cfg["budget"] * args.budget_factor / (10 if args.quick else 1)
    variant = cfg.get("variant", "cfr_mix")
    seeds = list(getattr(args, "seeds", None) or [0])
    points = []

    def evaluate(solver, label, iteration, spent):
        result, seconds = _timed(lambda: evaluator(game, solver, iteration))
        points.append(dict(variant=label, iteration=iteration, cpu_s=spent, **_result_point(result, seconds)))
        print(f"{name} {label} it {iteration} {spent:.0f}s "
              f"{({k: v for k, v in points[-1].items() if k != 'per_start'})}", flush=True)  # fmt: skip

    last_points = []
    for seed in seeds:
        solver = make_solver(game, variant, cfg, seed)
        label = variant if len(seeds) == 1 else f"{variant} seed {seed}"
        if not points:
            evaluate(solver, "uniform (all, 0 s)", 0, 0.0)  # untrained: the uniform strategy
        # evaluated at the first iteration past each fraction of the budget and at its end
        run_budget(FunctionContender(label, solver.run_iteration, lambda solver=solver: solver),
                   lambda m, solver=solver, label=label: evaluate(solver, label, m.steps, m.spent),
                   [f * budget for f in fractions], seconds=budget, clock=time.process_time, log=None)  # fmt: skip
        last_points.append(points[-1])
    folder = os.path.join(args.out, "cfr_mix", name)
    write_curves(points, folder, f"{game_string}: {metric_text[:60]}", "team utility (see section)")
    needs = joint_deep_cfr_needs(game)
    first = points[0]
    rows = [[p["variant"], p["iteration"], f"{p['cpu_s']:.0f}", f"{p['value']:.4f} +- {p['ci95']:.3f}",
             "" if p["in_sample"] is None else f"{p['in_sample']:.4f}", _paired_change(first, p) if p is not first
             else "", f"{p['eval_s']:.0f}"] for p in points]  # fmt: skip
    summary = []
    for seed, last in zip(seeds, last_points, strict=True):
        diff, half = last["value"] - first["value"], float(np.hypot(first["ci95"], last["ci95"]))
        summary.append(f"seed {seed}: {diff:+.4f} +- {half:.3f} (95%, independent evaluations)"
                       + (f", paired {_paired_change(first, last)}" if _paired_change(first, last) else ""))  # fmt: skip
    pooled = ""
    if len(seeds) > 1 and all(p.get("per_start") is not None for p in [first, *last_points]):
        d = np.mean([p["per_start"] for p in last_points], axis=0) - first["per_start"]  # [starts]
        pooled = (f" Pooled over the {len(seeds)} seeds (per start, the seeds' mean end value minus uniform; CI over "
                  f"the {len(d)} starts): {float(d.mean()):+.4f} +- {1.96 * float(d.std(ddof=1)) / np.sqrt(len(d)):.3f}"
                  " (95%).")  # fmt: skip
    lines = [
        f"## {title}\n",
        f"`{game_string}`: {game.num_distinct_actions():,} joint team actions. {variant} only, {budget:.0f} s CPU "
        f"per seed (seeds {', '.join(map(str, seeds))}); "
        f"{cfg['traversals']} traversals/player/iteration, {cfg['train_steps']} Adam steps, joint_cap "
        f"{cfg.get('joint_cap', 64)}, memory {cfg.get('memory_capacity', 20000)}; team regret network "
        f"{solver.num_parameters():,} parameters shared by the {game.num_team_agents()} agents. Metric: {metric_text}.",
        "",
        markdown_table(["policy", "iterations", "CPU s", "value (held-out, 95% CI)", "in-sample",
                        "paired change vs uniform (95%)", "eval s"], rows),  # fmt: skip
        "",
        "Change from uniform at the end of the budget: " + "; ".join(summary) + ". Paired: per-start differences "
        "of the held-out values over the same sampled starts (removes the spread between starts)." + pooled,
        "",
        needs_line(needs) + ".",
        *extra_lines,
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: `{_command()}`.",
    ]
    write_section(folder, lines)


def part_scale_goofspiel(args):
    def evaluator(game, solver, iteration):
        return sampled_team_worst_case(game, solver, num_particles=300, num_eval_games=3000, seed=100 + iteration)

    cfg = dict(budget=150, traversals=10, train_steps=30, joint_cap=32)
    scale_part(args, "scale_goofspiel_10c6p2r", "Scale: team Goofspiel 10 cards, 6 agents, 2 rounds",
               "team_goofspiel(num_cards=10,num_agents=6,num_turns=2)", cfg, evaluator,
               "team worst-case utility against the particle best response of the adversary (300 particles; "
               "held-out on 3,000 fresh games, 95% CI; an upper bound in expectation)", [])  # fmt: skip


def part_scale_nest(args):
    # ~30 s per trained evaluation (it was ~470 s before the fast first layer):
    # 64 starts x 32 plays halve the CI of 16 x 16.
    starts, plays = 64, 32

    def evaluator(game, solver, iteration):
        return nest_team_worst_case(game, solver, num_starts=starts, num_particles=4, num_eval_games=plays,
                                    max_slack=0, seed=17)  # fmt: skip

    cfg = dict(budget=300, traversals=4, train_steps=40, joint_cap=8, memory_capacity=2000,
               infoset_encoding="compact")
    game_string = "nest(rows=15,cols=15,num_pursuers=4)"
    size = pyspiel.load_game(game_string).compact_information_state_size()
    note = (f"Network input: `infoset_encoding=\"compact\"`, NEST's compact, lossy encoding ({size:,} floats: current "
            "positions, the evader's last two nodes, start and visited set, time, grid coordinates, the evader's "
            "distance to the exits; docs/team_games.md) instead of the 32,656-float information-state tensor, which "
            "one-hots every (step, node) pair so that nothing learnt at one step carries over to another; each "
            "pursuer also reads its own compact features (own node, legal slots, its distance to the evader and its "
            "race to the evader's nearest exits, with the change each move makes). Earlier runs, seed 0, without "
            "the relative features: tensor input (1 traversal, 20 Adam steps, 32 iterations in 305 s) paired "
            "+0.037 +- 0.056; compact input (84 iterations) +0.009 +- 0.019; compact, these settings (27 "
            "iterations) +0.000 +- 0.021; neither significant.")
    scale_part(args, "scale_nest_15x15_4", "Scale: NEST 15x15, 4 pursuers", game_string, cfg, evaluator,
               f"team utility = 1 - P(escape) against the evader's best shortest path per start ({starts} sampled "
               f"starts, the same for both points; path chosen on 4 particles, value on {plays} fresh plays per start, "
               "95% CI over starts): an upper bound on the worst case", ["", note], fractions=(1 / 3, 2 / 3, 1.0))  # fmt: skip


class NestHeuristicTeam:
    """Hand-written NEST pursuers, reference points for the scale part (not
    learnt, not a baseline of the paper). They read only the compact agent
    features CFR-MIX's networks get (games.nest.CompactLayout), so they show
    what those inputs can express:

      "chase": every pursuer takes a legal slot that shortens its distance to
        the evader (uniformly among them).
      "intercept": a pursuer that reaches the exit nearest the evader no later
        than the evader does (race margin <= 0) heads for that exit, unless it
        is next to the evader; the others chase.
    """

    infoset_encoding = "compact"

    def __init__(self, game, mode: str):
        if mode not in ("chase", "intercept"):
            raise ValueError(f"mode must be 'chase' or 'intercept', got {mode!r}")
        layout = game._cfg.compact_layout
        self.mode = mode
        self.m, self.a = layout.m, layout.a
        self.chase = layout.m + layout.n + layout.a  # [d(me, evader) / D, per-slot change]
        self.race = self.chase + 1 + layout.a  # nearest exit: [margin / D, per-slot change]
        self.scale = layout.scale

    def agent_strategies(self, states):
        out = []
        for state in states:
            x = np.asarray(state.compact_agent_features())
            strategy = np.zeros((self.m, self.a))
            for agent in range(self.m):
                legal = state.legal_agent_actions(agent)
                block = self.chase
                near = x[agent, self.chase] * self.scale <= 1.5
                if self.mode == "intercept" and x[agent, self.race] <= 0 and not near:
                    block = self.race
                change = x[agent, block + 1 + np.asarray(legal)]
                best = [a for a, c in zip(legal, change, strict=True) if c == change.min()]
                strategy[agent, best] = 1.0 / len(best)
            out.append(strategy)
        return out


def part_nest_15x15_references(args):
    """Reference points for the scale NEST part: uniform and the two heuristics."""
    game_string = "nest(rows=15,cols=15,num_pursuers=4)"
    game = pyspiel.load_game(game_string)
    rows = []
    for name, policy in (("chase", NestHeuristicTeam(game, "chase")),
                         ("intercept", NestHeuristicTeam(game, "intercept"))):  # fmt: skip
        result, seconds = _timed(lambda policy=policy: nest_team_worst_case(
            game, policy, num_starts=64, num_particles=4, num_eval_games=32, max_slack=0, seed=17))
        print(f"reference {name}: {result.value:.4f} +- {result.ci95:.3f} ({seconds:.0f} s)", flush=True)
        rows.append([name, f"{result.value:.4f} +- {result.ci95:.3f}", f"{result.in_sample_value:.4f}",
                     f"{seconds:.0f}"])  # fmt: skip
    folder = os.path.join(args.out, "cfr_mix", "nest_15x15_references")
    lines = [
        "## Reference points: NEST 15x15, 4 pursuers, hand-written pursuers\n",
        f"`{game_string}`, the scale part's evaluation (same 64 sampled starts and seeds). Not learnt and not a "
        "paper baseline: `NestHeuristicTeam` in the benchmark reads only the compact agent features CFR-MIX's "
        "networks get. *chase*: every pursuer shortens its distance to the evader; *intercept*: a pursuer that "
        "reaches the evader's nearest exit no later than the evader heads there (unless next to the evader), the "
        "others chase. They bracket what a learnt team can reach against a shortest-path evader.",
        "",
        markdown_table(["team", "value (held-out, 95% CI)", "in-sample", "eval s"], rows),
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: `{_command()}`.",
    ]
    write_section(folder, lines)


# NEST 15x15/4 controls: one setting changed at a time from the scale part's (seed = the first of --seeds)
NEST_CONTROLS = {
    "scale part's settings": {},
    "16 traversals per iteration (x4)": dict(traversals=16),
    "200 Adam steps per fit (x5)": dict(train_steps=200),
    "memory 20,000 (x10)": dict(memory_capacity=20_000),
    "Deep CFR + MIX backbone (no fed-back target)": dict(variant="deep_cfr_mix"),
    "64 joint actions per infoset (x8)": dict(joint_cap=64),
}
IMITATION_STEPS, IMITATION_BATCH = 3000, 512


class _CurrentIterate:
    """A CFR-MIX solver's current strategy (RM+ on its regret networks) where the evaluator reads the average."""

    def __init__(self, solver):
        self.solver, self.views, self.infoset_encoding = solver, solver.views, solver.infoset_encoding

    def strategies_from_tensors(self, player, features, agent_features, legal_mask):
        return self.solver.strategies_from_tensors(player, features, agent_features, legal_mask, average=False)

    def agent_strategies(self, states):
        return self.solver.agent_strategies(states, average=False)


class _Recorder:
    """A team policy that records every decision the evaluator asks it for (inputs, legal mask, answer)."""

    infoset_encoding = "compact"

    def __init__(self, policy):
        self.policy, self.rows = policy, []

    def agent_strategies(self, states):
        answers = self.policy.agent_strategies(states)
        for state, answer in zip(states, answers, strict=True):
            mask = np.zeros(np.shape(answer), dtype=bool)
            for agent, legal in enumerate(state._legal):
                mask[agent, legal] = True
            self.rows.append((state._features, state._agent_features, mask, answer))
        return answers


class _FittedTeam:
    """An agent network read as CFR-MIX reads its average network: RM+ on its non-negative outputs."""

    infoset_encoding = "compact"

    def __init__(self, net, views):
        self.net, self.views = net, views

    @torch.inference_mode()
    def strategies_from_tensors(self, player, features, agent_features, legal_mask):
        from openspiel_cfrx.cfr_mix.team_policy import regret_matching_plus

        out = self.net(torch.as_tensor(np.asarray(features, np.float32)),
                       torch.as_tensor(np.asarray(agent_features, np.float32)))  # fmt: skip
        return regret_matching_plus(out.numpy().astype(np.float64), legal_mask)


def imitate(game, teacher, views, evaluate, hidden, seed: int = 0):
    """Supervised control: fit CFR-MIX's team network (same inputs, sizes, sharing) to `teacher`'s strategies on
    the decisions the evaluator visits on other starts (seed 5), then evaluate the fit like CFR-MIX."""
    from openspiel_cfrx.cfr_mix.agent_network import AgentNetwork

    recorder = _Recorder(teacher)
    nest_team_worst_case(game, recorder, num_starts=64, num_particles=4, num_eval_games=32, max_slack=0, seed=5)
    x, xa, mask, y = (torch.as_tensor(np.stack(column).astype(np.float32)) for column in zip(*recorder.rows, strict=True))
    mask = mask.bool()
    torch.manual_seed(seed)
    net = AgentNetwork(x.shape[1], xa.shape[2], xa.shape[1], y.shape[2], hidden, True, "mlp")
    optimizer, rng = torch.optim.Adam(net.parameters(), lr=1e-3), torch.Generator().manual_seed(seed)
    start = time.process_time()
    for _ in range(IMITATION_STEPS):
        idx = torch.randint(0, x.shape[0], (IMITATION_BATCH,), generator=rng)
        loss = ((net(x[idx], xa[idx]) - y[idx]) ** 2)[mask[idx]].mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return evaluate(_FittedTeam(net, views)), len(recorder.rows), time.process_time() - start


def part_nest_15x15_controls(args):
    """Why CFR-MIX stops near uniform on NEST 15x15/4: one change at a time, and a supervised fit of its network."""
    game_string = "nest(rows=15,cols=15,num_pursuers=4)"
    game = pyspiel.load_game(game_string)
    base = dict(budget=300, traversals=4, train_steps=40, joint_cap=8, memory_capacity=2000, infoset_encoding="compact")
    budget, seed = base["budget"] * args.budget_factor / (10 if args.quick else 1), args.seeds[0]

    def evaluate(policy):
        r = nest_team_worst_case(game, policy, num_starts=64, num_particles=4, num_eval_games=32, max_slack=0, seed=17)
        return f"{r.value:.4f} +- {r.ci95:.3f}"

    untrained = make_solver(game, "cfr_mix", base, seed)  # the uniform strategy, where every row starts
    rows = [["uniform (the start)", "0", "0", evaluate(untrained), ""]]
    fitted, decisions, seconds = imitate(game, NestHeuristicTeam(game, "intercept"), untrained.views, evaluate,
                                         (64, 64), seed)  # fmt: skip
    print("nest_15x15_controls: supervised fit", fitted, flush=True)
    for label, change in NEST_CONTROLS.items():
        cfg = {**base, **change}
        solver = make_solver(game, cfg.get("variant", "cfr_mix"), cfg, seed)
        (iteration, spent), = run_budget(FunctionContender(label, solver.run_iteration, lambda solver=solver: solver),
                                         lambda m: (m.steps, m.spent), [], seconds=budget, clock=time.process_time,
                                         log=None)  # fmt: skip
        rows.append([label, f"{iteration}", f"{spent:.0f}", evaluate(solver), evaluate(_CurrentIterate(solver))])
        print("nest_15x15_controls", rows[-1], flush=True)
    rows.append([f"supervised fit of the same network to the intercept team ({decisions:,} recorded decisions, "
                 f"{IMITATION_STEPS:,} Adam steps of {IMITATION_BATCH})", "", f"{seconds:.0f}", fitted, ""])  # fmt: skip
    rows.append(["intercept team itself (the target)", "", "", evaluate(NestHeuristicTeam(game, "intercept")), ""])
    folder = os.path.join(args.out, "cfr_mix", "nest_15x15_controls")
    lines = [
        "## Why learning stops on NEST 15x15, 4 pursuers: controls\n",
        f"`{game_string}`, seed {seed}, {budget:.0f} s CPU per row; each row changes one setting of the scale part "
        "(4 traversals/player/iteration, 40 Adam steps, joint_cap 8, memory 2,000, compact inputs, 64x64 shared "
        "network). Team utility against the evader's best shortest path per start (the scale part's evaluation: the "
        "same 64 sampled starts, 95% CI over starts). The deployed average network and the current iterate (RM+ on "
        "the regret network) are both evaluated. The last rows fit the same network, on the same inputs, by "
        "supervised regression to the hand-written intercept team's strategies at the decisions the evaluator visits "
        "on another sample of starts: it tells whether the network can represent a team that good.",
        "",
        markdown_table(["team", "iterations", "CPU s", "average (held-out, 95% CI)", "current iterate (held-out, 95% CI)"],
                       rows),  # fmt: skip
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: `{_command()}`.",
    ]
    write_section(folder, lines)


PARTS = {
    "goofspiel_3c2p2r": part_goofspiel_3c2p2r,
    "goofspiel_6c4p2r": part_goofspiel_6c4p2r,
    "nest_3x3_2": part_nest_3x3_2,
    "nest_5x5_4": part_nest_5x5_4,
    "scale_goofspiel_10c6p2r": part_scale_goofspiel,
    "scale_nest_15x15_4": part_scale_nest,
    "nest_15x15_references": part_nest_15x15_references,
    "nest_15x15_controls": part_nest_15x15_controls,
}


STATEMENTS = "## The paper's statements on this run"
MIXING, OTHERS = ("cfr_mix", "deep_cfr_mix"), ("double_neural_joint", "deep_cfr", "independent")


def _interval(cell: str) -> tuple[float, float] | None:
    """(mean, half-width) of a "m ± h" / "m +- h" cell (half-width 0 without one); None if not a number."""
    parts = cell.replace("**", "").replace("+-", "±").split("±")
    try:
        return float(parts[0]), (float(parts[1]) if len(parts) > 1 else 0.0)
    except ValueError:
        return None


def _page_sections(text: str) -> list[tuple[str, list[dict]]]:
    """(heading, table rows as {column: cell}) of each "## " section of a recorded page (its first table)."""
    out = []
    for block in text.split("\n## ")[1:]:
        heading, _, body = block.partition("\n")
        lines = [x for x in body.splitlines() if x.startswith("|")]
        if len(lines) < 3:
            out.append((heading, []))
            continue
        header = [c.strip() for c in lines[0].strip("|").split("|")]
        rows = [dict(zip(header, (c.strip() for c in x.strip("|").split("|")), strict=False)) for x in lines[2:]]
        out.append((heading, rows))
    return out


def _better(a: tuple[float, float], b: tuple[float, float], higher: bool) -> str:
    """"yes" if interval a lies wholly on the better side of b, "no" if b's lies wholly on a's, else "inconclusive"."""
    sign = 1.0 if higher else -1.0  # lower is better: compare the negated means
    if sign * a[0] - a[1] > sign * b[0] + b[1]:
        return "yes"
    if sign * b[0] - b[1] > sign * a[0] + a[1]:
        return "no"
    return "inconclusive"


def _variant_values(rows: list[dict]) -> dict[str, tuple[float, float]]:
    """variant -> (mean, 95% half-width) of a variants table (averages, or final values with their ci95)."""
    values = {}
    for row in rows:
        name = row.get("variant", "").strip("` ")
        if "average: mean ± 95%" in row:
            found = _interval(row["average: mean ± 95%"])
        elif "final value" in row:
            mean, half = _interval(row["final value"]), _interval(row.get("ci95", ""))
            found = None if mean is None or half is None else (mean[0], half[0])
        else:
            found = None
        if name and found is not None:
            values[name] = found
    return values


def statement_rows(text: str) -> list[list[str]]:
    """[statement: instance, ours, holds here] for each of the paper's Section 6 statements the page's runs test."""
    rows = []
    for heading, table in _page_sections(text):
        values = _variant_values(table)
        if not values:
            continue
        higher = "lower is better" not in heading
        instance = heading.split(":")[0]
        mixing = {k: v for k, v in values.items() if k in MIXING}
        others = {k: v for k, v in values.items() if k in OTHERS}
        if mixing and others:
            pick = max if higher else min
            best_mix = pick(mixing, key=lambda k: mixing[k][0])
            best_other = pick(others, key=lambda k: others[k][0])
            rows.append(["the algorithms with the mixing layer outperform the others (Figures 3, 4(a-c))", instance,
                         f"best mixing `{best_mix}` {values[best_mix][0]:.4f} ± {values[best_mix][1]:.4f} vs best "
                         f"other `{best_other}` {values[best_other][0]:.4f} ± {values[best_other][1]:.4f}",
                         _better(values[best_mix], values[best_other], higher)])  # fmt: skip
        if "cfr_mix" in values and "cfr_mix_no_sharing" in values:
            a, b = values["cfr_mix"], values["cfr_mix_no_sharing"]
            rows.append(["CFR-MIX with parameter sharing performs better than without (Figure 4(b))", instance,
                         f"{a[0]:.4f} ± {a[1]:.4f} vs {b[0]:.4f} ± {b[1]:.4f}", _better(a, b, higher)])  # fmt: skip
        if "cfr_mix" in values and "independent" in values:
            a, b = values["cfr_mix"], values["independent"]
            rows.append(["independent learners fall behind CFR-MIX (Figure 4(a): they do not converge in the time)",
                         instance, f"{a[0]:.4f} ± {a[1]:.4f} vs independent {b[0]:.4f} ± {b[1]:.4f}",
                         _better(a, b, higher)])  # fmt: skip
        joint = next((row for row in table if row.get("variant", "").strip("` ") == "deep_cfr"), None)
        cost = " ".join(joint.values()) if joint else ""
        if "not run" in cost:
            rows.append(["joint-action Deep CFR is too costly where the joint action space is large (Figure 4(c))",
                         instance, cost.split("not run: ", 1)[1].strip(" |"), "yes"])  # fmt: skip
    rows += _scale_rows(text)
    return [[f"{statement}: {instance}", ours, holds] for statement, instance, ours, holds in rows]


def _scale_rows(text: str) -> list[list[str]]:
    """"CFR-MIX gets a better strategy than random" on the scale parts: the change from uniform and its interval."""
    rows = []
    for heading, table in _page_sections(text):
        if not heading.startswith("Scale"):
            continue
        instance = heading.split(": ", 1)[1]
        pooled = next((r for r in table if r.get("policy", "").startswith("pooled")), None)
        if pooled is not None:
            change = _interval(pooled["paired change vs uniform (95%)"])
        else:
            body = text[text.index(heading):]
            line = next((x for x in body.splitlines() if x.startswith("Change from uniform:")), "")
            change = _interval(line.split(":", 1)[1].split("(")[0]) if line else None
        if change is None:
            continue
        verdict = "yes" if change[0] - change[1] > 0 else "no" if change[0] + change[1] < 0 else "inconclusive"
        rows.append(["CFR-MIX gets a better strategy than random (the uniform start) in the large games "
                     "(Figure 4(d), 10C6P)", instance, f"change from uniform {change[0]:+.4f} ± {change[1]:.4f}",
                     verdict])  # fmt: skip
    return rows


def statements_from_page(path: str) -> str:
    """Recomputes the statements section of a recorded page from its own tables and writes it back before its
    "## Reading" (`--statements_from`)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.find(STATEMENTS)
    if start >= 0:
        end = text.index("\n## ", start + 1) + 1
        text = text[:start] + text[end:]
    section = (f"{STATEMENTS}\n\n"
               "One row per (statement of the paper's Section 6, instance this page measured), computed from the "
               "page's tables by `bench_cfr_mix.py --statements_from=PAGE`: two variants' 95% intervals (mean ± "
               "half-width over seeds; a one-seed part's evaluation interval) decide \"yes\" when the paper's "
               "side lies wholly on the better side, \"no\" when the other side does, else \"inconclusive\"; a "
               "change from uniform decides when its interval excludes 0; a joint-action run refused for its "
               "estimated cost is \"yes\" for the cost statement. The instances are this page's (2-round "
               "Goofspiel, NEST 3x3 and 5x5), not yet the paper's (6-round Goofspiel, 13C6P, NEST 15x15 with 8 "
               "pursuers).\n\n"
               + markdown_table(["statement: instance", "ours", "holds here"], statement_rows(text)) + "\n\n")  # fmt: skip
    at = text.index("## Reading")
    text = text[:at] + section + text[at:]
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return section


def write_section(folder: str, lines: list[str]) -> None:
    """A part's section.md (what `assemble` puts in the page), in its own folder."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "section.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def _command() -> str:
    return "PYTHONPATH=. .venv/bin/python " + " ".join(sys.argv)


def assemble(out: str) -> None:
    """cfr_mix.md from every part's section.md. When the page exists and some part has no section.md here (a
    fresh checkout keeps only the page), the page is left as it is and the assembly goes beside it, so that a
    one-part run never drops the other parts' results; the new section is then moved into the page by hand."""
    sections, missing = [], []
    for name in PART_ORDER:
        path = os.path.join(out, "cfr_mix", name, "section.md")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                sections.append(f.read().rstrip())
        else:
            missing.append(name)
    page = os.path.join(out, "cfr_mix.md")
    if missing and os.path.exists(page):
        print(f"{page} left as it is: no section.md here for {', '.join(missing)}; this run's sections are in "
              f"{os.path.join(out, 'cfr_mix')}/<part>/section.md, the partial page in cfr_mix/partial.md", flush=True)
        page = os.path.join(out, "cfr_mix", "partial.md")
    reading = os.path.join(out, "cfr_mix", "reading.md")
    if os.path.exists(reading):
        with open(reading, encoding="utf-8") as f:
            sections.append(f.read().rstrip())
    intro = ("All variants of `openspiel_cfrx.CFRMixSolver` and joint-action Deep CFR (`DeepCFRSolver`, "
             "`deep_cfr`) at equal *CPU* time per variant (process time, torch 1 thread; the machine is shared, "
             "so wall-clock would charge other jobs' load), one seed unless a section names several. Each section names its instance, metric, "
             "settings and the command of its run (sections can be re-run alone with `--parts`).")  # fmt: skip
    write_result(page, "CFR-MIX benchmark", intro + "\n\n" + "\n\n".join(sections))


FLAGS = flags.FlagValues()  # this program's own (tests import several programs into one process)
flags.DEFINE_string("parts", ",".join(p for p in PART_ORDER if p != "goofspiel_3c2p2r"),
                    f"comma-separated parts, from: {', '.join(PART_ORDER)}", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_bool("quick", False, "budgets / 10 (smoke test)", flag_values=FLAGS)
flags.DEFINE_float("budget_factor", 1.0, "multiply every part's CPU budget (e.g. 4 for longer curves)",
                   flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("seeds", "0", "comma-separated solver seeds of the scale parts (one run per seed, same evaluation)",
                    flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("out", os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"), "results folder",
                    flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("statements_from", "", "train nothing: recompute the statements section of this recorded page "
                    "from its tables and write it back", flag_values=FLAGS)  # fmt: skip


def main(argv=None):
    args = parse_flags(FLAGS, argv, __doc__)
    if args.statements_from:
        print(statements_from_page(args.statements_from))
        return
    if not args.budget_factor > 0:
        usage_error(f"--budget_factor must be > 0, got {args.budget_factor}")
    try:
        args.seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
    except ValueError:
        usage_error(f"--seeds must be comma-separated integers, got {args.seeds!r}")
    if not args.seeds:
        usage_error("--seeds is empty; give e.g. --seeds=0,1,2")
    torch.set_num_threads(1)
    for name in args.parts.split(","):
        if name not in PARTS:
            usage_error(f"unknown part {name!r}; choose from {', '.join(PART_ORDER)}")
    for name in args.parts.split(","):
        start = time.process_time()
        PARTS[name](args)
        print(f"part {name}: {time.process_time() - start:.0f} s CPU", flush=True)
    assemble(args.out)


if __name__ == "__main__":
    main()
