"""Our algorithms against OpenSpiel's CFR, MCCFR, NFSP and Deep CFR at equal compute.

Runs the equal-budget harness `cfrx_examples/benchmark.py` (each algorithm gets
the same seconds of its own compute; exact evaluation is not charged) on
Kuhn, Leduc, a small flop hold'em and a team game, once per seed, and
reports each algorithm's final exploitability as the mean and 95% t-interval
over seeds (the CFR family is deterministic: its interval is 0), the ratio to
the best OpenSpiel algorithm, and plots of the mean curve with its band.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_vs_openspiel.py [--quick] [--seeds=0,1,2]

Writes benchmarks/results/vs_openspiel.md and vs_openspiel.png (a panel per game)
(with --quick: seconds cut 10x, one seed, under benchmarks/results/quick/).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import ROOT, markdown_table, mean_and_interval, write_result  # noqa: E402

# (label, game string, seconds per algorithm, algorithms): the committed settings.
GAMES = [
    ("kuhn_poker", "kuhn_poker", 30,
     "cfr+,dcfr,pcfr+,deep_cfr,os_cpp_cfr,os_cfr,os_es_mccfr,os_nfsp,os_deep_cfr"),
    ("leduc_poker", "leduc_poker", 60, "cfr+,dcfr,deep_cfr,os_cpp_cfr,os_cfr,os_es_mccfr,os_nfsp,os_deep_cfr"),
    ("flop_holdem_7r1s", "flop_holdem(num_ranks=7,num_suits=1)", 45, "cfr+,dcfr,deep_cfr,os_cpp_cfr,os_es_mccfr,os_nfsp"),
    ("team_goofspiel_3c2a2t", "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)", 30,
     "cfr+,dcfr,cfr_mix,deep_cfr,os_cpp_cfr,os_es_mccfr"),
]  # fmt: skip

# Algorithms whose result does not depend on --seed (the CFR family, ours and OpenSpiel's).
DETERMINISTIC = {"cfr", "cfr+", "dcfr", "lcfr", "pcfr+", "oftrl", "os_cpp_cfr", "os_cfr", "os_cfr_plus", "os_dcfr"}

FLAGS = flags.FLAGS
flags.DEFINE_bool("quick", False, "Quick tier: a tenth of the seconds, one seed, results under results/quick/.")
flags.DEFINE_list("seeds", ["0", "1", "2"], "Seeds (the sampling-based algorithms differ per seed).")
flags.DEFINE_float("budget_scale", 1.0, "Multiplies every game's seconds (--quick: 0.1).")
flags.DEFINE_list("games", [g[0] for g in GAMES], "Games to run, by label.")
flags.DEFINE_string("output_dir", "", "Where vs_openspiel.md goes (default benchmarks/results[/quick]).")
flags.DEFINE_enum("clock", "wall", ["wall", "cpu"], "What each budget counts: wall-clock seconds (on a quiet "
                  "machine), or each run's process CPU seconds (runs that share the cores).")
flags.DEFINE_string("runs_dir", "", "Keep each (game, seed) run here and reuse it when its settings match (a "
                    "resumable grid); empty: a temporary folder, nothing kept.")


def run_harness(game: str, seconds: float, algorithms: str, seed: int, out: str, clock: str = "wall",
                runs_dir: str = "") -> list[dict]:  # fmt: skip
    """One harness run (its benchmark.csv rows); with `runs_dir`, a finished run of the same settings is reused."""
    stamp = {"game": game, "seconds": seconds, "algorithms": algorithms, "seed": seed, "clock": clock}
    if runs_dir:
        key = hashlib.sha256(json.dumps(stamp, sort_keys=True).encode()).hexdigest()[:12]
        out = os.path.join(runs_dir, f"{game.partition('(')[0]}_seed{seed}_{key}")
        done = os.path.join(out, "finished.json")
        if os.path.exists(done):
            print(f"reusing {out} ({stamp})", flush=True)
            return read_rows(os.path.join(out, "benchmark.csv"))
        shutil.rmtree(out, ignore_errors=True)  # an interrupted run restarts: a harness run is not resumable inside
    command = [sys.executable, os.path.join(ROOT, "cfrx_examples", "benchmark.py"), f"--game={game}",
               f"--seconds={seconds:g}", "--eval_points=6", f"--algorithms={algorithms}", f"--seed={seed}",
               f"--output_dir={out}", f"--clock={clock}", "--quiet"]  # fmt: skip
    print("$", " ".join(command[1:]), flush=True)
    subprocess.run(command, check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    if runs_dir:
        with open(os.path.join(out, "finished.json"), "w", encoding="utf-8") as f:
            json.dump(stamp, f)
    return read_rows(os.path.join(out, "benchmark.csv"))


TEXT_COLUMNS = ("solver", "game")  # benchmark.csv's columns that are not numbers


def read_rows(path: str) -> list[dict]:
    """benchmark.csv's rows, numbers as floats (empty cells None)."""
    with open(path, encoding="utf-8") as f:
        return [{k: (v if k in TEXT_COLUMNS else float(v) if v else None) for k, v in r.items()}
                for r in csv.DictReader(f)]  # fmt: skip


def plot(panels: list[tuple[str, list[list[dict]], float]], path: str) -> None:
    """One figure, a panel per game ((label, runs, seconds) each): mean curves over seeds with 95% bands."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(2, len(panels))
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(7 * columns, 4.5 * rows), squeeze=False)
    for ax, (label, runs, seconds) in zip(axes.flat, panels, strict=False):
        _panel(ax, plt, label, runs, seconds)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _panel(ax, plt, label: str, runs: list[list[dict]], seconds: float) -> None:
    names = list(dict.fromkeys(r["solver"] for r in runs[0]))
    for i, name in enumerate(names):
        series = [[r for r in run if r["solver"] == name] for run in runs]
        n = min(len(s) for s in series)
        xs = np.mean([[r["seconds"] for r in s[:n]] for s in series], axis=0)
        ys = np.array([[max(r["exploitability"], 1e-12) for r in s[:n]] for s in series])
        colour = plt.get_cmap("tab10")(i % 10)
        style = "o-" if name.startswith("os_") else "-"
        ax.loglog(xs, ys.mean(axis=0), style, color=colour, markersize=3, label=name)
        if len(runs) > 1:
            half = np.array([mean_and_interval(list(col))[1] for col in ys.T])
            ax.fill_between(xs, np.maximum(ys.mean(axis=0) - half, 1e-12), ys.mean(axis=0) + half, color=colour,
                            alpha=0.2)  # fmt: skip
    ax.set_xlabel("seconds of the algorithm's own compute")
    ax.set_ylabel("exploitability (NashConv / 2)")
    ax.set_title(f"{label}, {seconds:g} s each; mean over {len(runs)} seed(s), 95% band", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)


OURS_TABULAR = ("cfr+", "dcfr", "pcfr+")  # our CFR family in the harness
# (statement, ours, OpenSpiel's): each checked on every game where both ran
STATEMENTS = [
    ("our best CFR-family algorithm ends below every OpenSpiel algorithm", OURS_TABULAR, None),
    ("our Deep CFR ends below OpenSpiel's Deep CFR", ("deep_cfr",), "os_deep_cfr"),
    ("our Deep CFR ends below OpenSpiel's NFSP", ("deep_cfr",), "os_nfsp"),
    ("our Deep CFR ends below OpenSpiel's external-sampling MCCFR", ("deep_cfr",), "os_es_mccfr"),
]
STATEMENT_RULE = ("A statement holds on a game (\"yes\") when the 95% intervals over seeds are apart in its "
                  "direction, fails (\"no\") when they are apart the other way, and is undecided when they "
                  "overlap; the CFR family is deterministic (interval 0). \"our best\" is the lowest final "
                  "exploitability among " + ", ".join(OURS_TABULAR) + "; \"every OpenSpiel algorithm\" is "
                  "compared with each one's interval.")


def below(ours: list[float], theirs: list[float]) -> str:
    """Whether `ours`' 95% interval lies below `theirs`': "yes", "no" (above) or "undecided" (overlap)."""
    (m, h), (n, k) = mean_and_interval(ours), mean_and_interval(theirs)
    return "yes" if m + h < n - k else "no" if m - h > n + k else "undecided"


def statement_rows(finals_by_game: dict[str, dict[str, list[float]]]) -> list[list[str]]:
    """One row per statement: the verdict on each game where its algorithms ran, and the overall word."""
    rows = []
    for statement, ours, theirs in STATEMENTS:
        verdicts = []
        for label, finals in finals_by_game.items():
            mine = [finals[a] for a in ours if a in finals]
            others = [n for n in finals if n.startswith("os_")] if theirs is None else [theirs] * (theirs in finals)
            if not mine or not others:
                continue
            best = min(mine, key=lambda values: mean_and_interval(values)[0])
            words = {below(best, finals[o]) for o in others}
            verdicts.append((label, "no" if "no" in words else "undecided" if "undecided" in words else "yes"))
        counts = {w: sum(v == w for _, v in verdicts) for w in ("yes", "no", "undecided")}
        overall = ("yes" if counts["yes"] == len(verdicts) else "no" if counts["no"] == len(verdicts)
                   else "partly" if counts["yes"] else "no" if counts["no"] else "undecided")
        shown = "; ".join(f"{label}: {v}" for label, v in verdicts) or "not measured"
        summary = f"{counts['yes']} of {len(verdicts)} games yes, {counts['no']} no, {counts['undecided']} undecided"
        rows.append([statement, shown, f"{overall if verdicts else 'not measured'} ({summary})"])
    return rows


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments {argv[1:]}; flags only (--helpfull)")
    seeds = [0] if FLAGS.quick else [int(s) for s in FLAGS.seeds]
    out_dir = FLAGS.output_dir or os.path.join(ROOT, "benchmarks", "results", *(["quick"] if FLAGS.quick else []))
    unknown = set(FLAGS.games) - {g[0] for g in GAMES}
    if unknown:
        raise app.UsageError(f"unknown --games {sorted(unknown)}; choose from {[g[0] for g in GAMES]}")
    sections, finals_by_game, panels = [], {}, []
    for label, game, seconds, algorithms in (g for g in GAMES if g[0] in FLAGS.games):
        seconds = seconds * (0.1 if FLAGS.quick else FLAGS.budget_scale)
        sampled = ",".join(a for a in algorithms.split(",") if a not in DETERMINISTIC)
        with tempfile.TemporaryDirectory() as tmp:
            where = {"clock": FLAGS.clock, "runs_dir": FLAGS.runs_dir}
            runs = [run_harness(game, seconds, algorithms, seeds[0], os.path.join(tmp, str(seeds[0])), **where)]
            for s in seeds[1:]:  # the deterministic algorithms' rows do not depend on the seed: run them once
                rows = run_harness(game, seconds, sampled, s, os.path.join(tmp, str(s)), **where) if sampled else []
                runs.append([r for r in runs[0] if r["solver"] in DETERMINISTIC] + rows)
        panels.append((label, runs, seconds))
        finals = {}
        for run in runs:
            for name in dict.fromkeys(r["solver"] for r in run):
                finals.setdefault(name, []).append([r for r in run if r["solver"] == name][-1])
        finals_by_game[label] = {name: [r["exploitability"] for r in rs] for name, rs in finals.items()}
        best_os = min((np.mean([r["exploitability"] for r in rs]), n) for n, rs in finals.items() if n.startswith("os_"))
        rows = []
        for name, rs in finals.items():
            mean, half = mean_and_interval([r["exploitability"] for r in rs])
            rows.append([name, f"{np.mean([r['iteration'] for r in rs]):,.0f}",
                         f"{np.mean([r['seconds'] for r in rs]):.1f}", f"{mean:.4g} ± {half:.2g}",
                         f"{mean / best_os[0]:.3g}"])  # fmt: skip
        sections.append(f"## {label}: `{game}`, {seconds:g} s per algorithm\n\n" + markdown_table(
            ["algorithm", "steps (mean)", "seconds (mean)", "exploitability: mean ± 95% CI",
             f"ratio to the best OpenSpiel ({best_os[1]})"], rows) + "\n")
    unit = "process CPU seconds" if FLAGS.clock == "cpu" else "wall-clock seconds"
    intro = (f"Equal-budget harness (`cfrx_examples/benchmark.py --clock={FLAGS.clock}`), seeds {seeds}; budgets in "
             f"{unit}; exploitability = NashConv / 2 of "
             "each algorithm's average policy after its budget of its own compute (exact evaluation not "
             "charged). The CFR family is deterministic and runs once (interval 0); the sampling algorithms run once "
             "per seed. A neural algorithm's last iteration may overrun the budget: see its seconds. "
             "Steps: iterations (CFR family, deep_cfr, cfr_mix, os_deep_cfr), 100 iterations (os_es_mccfr), "
             "100 episodes (os_nfsp).")  # fmt: skip
    plot(panels, os.path.join(out_dir, "vs_openspiel.png"))
    sections.append("![every game: mean curves over the seeds, 95% bands](vs_openspiel.png)\n")
    statements = ("## Statements on this run\n\n" + STATEMENT_RULE + "\n\n"
                  + markdown_table(["statement", "this run", "holds here"], statement_rows(finals_by_game)) + "\n")
    write_result(os.path.join(out_dir, "vs_openspiel.md"), "Equal compute against OpenSpiel's algorithms",
                 intro + "\n\n" + "\n".join(sections) + "\n" + statements)


if __name__ == "__main__":
    app.run(main)
