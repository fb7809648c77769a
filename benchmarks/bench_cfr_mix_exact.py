"""CFR-MIX with exact regrets and a perfect regressor, against joint and
independent team regrets (issue 22's controlled experiment).

`openspiel_cfrx.tabular.team_regrets.TeamCFRSolver` runs CFR+ on a team game
with the team's regrets kept jointly, in product form (the least-squares
product fit of Algorithm 1 line 8's target, i.e. CFR-MIX as its networks,
memories and probes become perfect), the same fit of the exact linearly
weighted cumulative regret with no feedback (Deep CFR + mixing layer with a
perfect regressor) or per agent (the paper's individual baseline). Nothing is sampled or learnt, so the difference between the three
curves is the product-form decomposition itself; the difference between the
exact product curve and the neural CFR-MIX benchmark (`bench_cfr_mix.py`) at
the same iteration count is sampling and function approximation.

For each instance and mode: exact NashConv (team as one player) of the
current iterate, of the average joint strategy (correlated) and of the
product of the agents' average marginals (how CFR-MIX plays its average),
at log-spaced iterations; the product fit's relative residual; seconds.
`--noise` adds runs whose agents start from initial_noise * U(0, 1) regrets
(a symmetry breaker), one per seed.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_cfr_mix_exact.py --out=benchmarks/results
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

import numpy as np
import pyspiel

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402,F401  (registers team_goofspiel)
from benchmarks.common import markdown_table, run_header  # noqa: E402
from openspiel_cfrx.tabular.team_regrets import TEAM_REGRETS, TeamCFRSolver  # noqa: E402

INSTANCES = ("team_goofspiel(num_cards=3,num_agents=2,num_turns=2);"
             "team_goofspiel(num_cards=4,num_agents=3,num_turns=2);"
             "team_goofspiel(num_cards=6,num_agents=3,num_turns=2)")  # fmt: skip
TABLE_AT = (10, 30, 100, 300, 1000, 3000)


def checkpoints(last: int) -> list[int]:
    marks = sorted({int(round(x)) for x in np.logspace(0, np.log10(last), 25)} | {t for t in TABLE_AT if t <= last})
    return [t for t in marks if t >= 1]


def run(game, mode: str, noise: float, seed: int, last: int, log) -> list[dict]:
    solver = TeamCFRSolver(game, mode, initial_noise=noise, seed=seed)
    points, start = [], time.perf_counter()
    for t in checkpoints(last):
        solver.run(t - solver.iteration)
        point = dict(mode=mode, noise=noise, seed=seed, iteration=t, seconds=time.perf_counter() - start,
                     current=solver.nash_conv_of(solver.current_strategy()), average=solver.nash_conv(),
                     product_average=solver.nash_conv_of(solver.product_average_strategy()),
                     fit_error=solver.product_fit_error)  # fmt: skip
        points.append(point)
    log(f"{mode:12s} noise {noise:g} seed {seed}: {points[-1]['seconds']:.1f} s, final current "
        f"{points[-1]['current']:.4g}, average {points[-1]['average']:.4g}, product average {points[-1]['product_average']:.4g}")  # fmt: skip
    return points


def plot(points, game_names, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(game_names), figsize=(6.5 * len(game_names), 4.5), squeeze=False)
    colours = {"joint": "tab:green", "product": "tab:red", "product_no_feedback": "tab:orange", "independent": "tab:blue"}
    for ax, name in zip(axes[0], game_names, strict=True):
        for mode in TEAM_REGRETS:
            mine = [p for p in points if p["game"] == name and p["mode"] == mode and p["noise"] == 0]
            its = [p["iteration"] for p in mine]
            floor = 1e-6  # NashConv 0 (exactly solved) drawn at the plot's floor
            ax.plot(its, [max(p["current"], floor) for p in mine], ":", color=colours[mode], label=f"{mode}: current")
            deployed = "average" if mode == "joint" else "product_average"
            ax.plot(its, [max(p[deployed], floor) for p in mine], "-", color=colours[mode],
                    label=f"{mode}: {'average (joint)' if mode == 'joint' else 'product of average marginals'}")  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("iterations")
        ax.set_ylabel("exact NashConv (floor 1e-6 = solved)")
        ax.set_title(name, fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default=INSTANCES, help="';'-separated game strings")
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=1e-3, help="initial_noise of the extra runs (0: none)")
    parser.add_argument("--seeds", default="0,1,2", help="seeds of the initial-noise runs")
    parser.add_argument("--out", default="", help="results folder (writes cfr_mix_exact.md and cfr_mix_exact/)")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    names = args.games.split(";")
    seeds = [int(s) for s in args.seeds.split(",") if s]
    points = []
    for name in names:
        game = pyspiel.load_game(name)
        runs = [(mode, 0.0, 0) for mode in TEAM_REGRETS]
        if args.noise > 0:
            runs += [(mode, args.noise, seed) for mode in ("product", "independent") for seed in seeds]
        for mode, noise, seed in runs:
            points += [dict(p, game=name) for p in run(game, mode, noise, seed, args.iterations, print)]
    lines = [f"# CFR-MIX with exact regrets: joint vs product-form vs independent team regrets\n\n{run_header(load)}\n",
             "CFR+ (alternating updates, linear averaging) with the team's regrets kept jointly (`joint`), as the "
             "least-squares product fit of Algorithm 1 line 8's target (`product`: CFR-MIX with a perfect "
             "regressor), the same fit of the exact linearly weighted cumulative regret with no feedback of the fit "
             "into the next target (`product_no_feedback`: Deep CFR + mixing layer with a perfect regressor) or per "
             "agent (`independent`). Exact NashConv, team as one player; `current` = the "
             "iterate, `avg` = the average joint (correlated) strategy, `prod avg` = the product of the agents' "
             "average marginals (what CFR-MIX deploys). Symmetric start (all regrets 0) unless a noise is given.\n"]  # fmt: skip
    for name in names:
        lines.append(f"## `{name}`\n")
        rows = []
        for mode, noise, seed in dict.fromkeys((p["mode"], p["noise"], p["seed"]) for p in points if p["game"] == name):
            mine = {p["iteration"]: p for p in points if p["game"] == name and (p["mode"], p["noise"], p["seed"]) == (mode, noise, seed)}  # fmt: skip
            cells = []
            for t in TABLE_AT:
                if t in mine:
                    p = mine[t]
                    cells.append(f"{p['current']:.3g} / {p['average']:.3g} / {p['product_average']:.3g}")
            label = mode if noise == 0 else f"{mode}, noise {noise:g}, seed {seed}"
            last = mine[max(mine)]
            rows.append([label, *cells, f"{last['seconds']:.1f}"])
        headers = ["team regrets", *[f"t={t}: current / avg / prod avg" for t in TABLE_AT if t <= args.iterations], "seconds"]
        lines += [markdown_table(headers, rows), ""]
        fits = [p for p in points if p["game"] == name and p["mode"] == "product" and p["noise"] == 0]
        if fits:
            lines.append("`product` fit's relative residual (sum (T - prod R_i)^2 / sum T^2 over team infosets), "
                         "symmetric start: " + ", ".join(f"t={p['iteration']}: {p['fit_error']:.3g}" for p in fits
                                                         if p["iteration"] in TABLE_AT) + ".\n")  # fmt: skip
    text = "\n".join(lines)
    print(text)
    if args.out:
        folder = os.path.join(args.out, "cfr_mix_exact")
        os.makedirs(folder, exist_ok=True)
        fields = ["game", "mode", "noise", "seed", "iteration", "seconds", "current", "average", "product_average", "fit_error"]
        with open(os.path.join(folder, "curves.csv"), "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fields)
            writer.writeheader()
            writer.writerows(points)
        plot(points, names, os.path.join(folder, "curves.png"))
        with open(os.path.join(args.out, "cfr_mix_exact.md"), "w", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
