r"""OFTRL-CFR vs CFR vs DCFR on the Libratus endgames (Farina et al. 2019, Section 6).

For each subgame (1, 2: turn + river; 3, 4: river) and update mode
(simultaneous, alternating), runs on the poker public-tree engine:

* CFR (regret matching), DCFR(1.5, 0, 2), and OFTRL-CFR with the entropy
  regularizer and the stability schedule of eqs. 14-16 ("OFTRL theory");
* "OFTRL tuned": the paper divides the theory's (regularization) stepsize by
  10, 100 and 1000 and keeps the best; here that is the theory's
  `stepsize_scale` times 10, 100, 1000 (our scale multiplies the learning
  rate eta, i.e. divides the regularizer's weight 1/eta), the best by final
  saddle-point gap.

--oftrl_units picks what "theory" means (docs/endgames.md): "bounded" is our
tabular convention (counterfactual values as the engine computes them,
conditional on the root, divided by their bound 3 x max utility: scale 1);
"chips" (default) feeds the stability schedule's eta_j the raw chip-valued
counterfactual losses with the data's unnormalised reach weights, i.e. scale
3 x max utility x (sum of compatible reach pairs) — the convention under
which the paper's Section 6 statements reproduce on subgames 3 and 4
(`benchmarks/results/endgames.md`, its stepsize scan; inferred, not from
the paper's code).

The saddle-point gap is NashConv (the sum of both players' best-response
gains) in mbb/g with the big blind = 100, measured exactly at log-spaced
iterations, conditional on the subgame's root ranges. Writes curves.csv,
one PNG per subgame and mode, summary.md (final gaps, iterations/s) and
runs.csv (every run, each tried multiple of OFTRL tuned included). --jobs=2
runs two runs at a time in separate processes (the walk of a turn subgame is
one board chunk, so threads do not help it).

    .venv/bin/cfrx-oftrl-endgames --subgames=3,4 --iterations=1000 \
        --output_dir=out/oftrl_endgames

The whole grid (the paper's Figures 2-5: --subgames=1,2,3,4 --jobs=2) took
52 minutes on a 2-core machine (benchmarks/results/endgames.md).
"""

from __future__ import annotations

import math
import os
import time

from absl import flags

from cfrx_examples._common import (
    check_list,
    check_number,
    check_number_list,
    check_output_dir,
    check_results_folder,
    check_writable_dir,
    define_allow_changed_flag,
    define_tensorboard_flag,
    lock_run_folders,
    run_config,
    run_program,
    usage_error,
    write_results,
)

FLAGS = flags.FLAGS
flags.DEFINE_list("subgames", ["3", "4"], "Libratus endgames to run (1-4; 1 and 2 are turn + river, slower).")
flags.DEFINE_integer("iterations", 1000, "Iterations per run (>= 10).")
flags.DEFINE_list("update_modes", ["simultaneous", "alternating"], "Update modes.")
flags.DEFINE_list("algorithms", ["cfr", "dcfr", "oftrl_theory", "oftrl_tuned"], "Algorithms.")
flags.DEFINE_list("tuned_scales", ["10", "100", "1000"], "stepsize_scale values tried for 'OFTRL tuned'.")
flags.DEFINE_enum("oftrl_units", "chips", ["chips", "bounded"], "What 'OFTRL theory' scales (module doc).")
flags.DEFINE_integer("evaluations", 25, "Log-spaced exact evaluations per run (>= 2: the first and the last "
                     "iteration at least).")
flags.DEFINE_integer("threads", 2, "Threads over board chunks (with --jobs=1; one per job otherwise).")
flags.DEFINE_integer("jobs", 1, "Runs in parallel, one process each (the grid's runs are independent).")
flags.DEFINE_string("data_dir", "", "Directory of subgame1.txt..subgame4.txt (default: the data packaged with `games`, "
                    "games/data/libratus_endgames).")  # fmt: skip
flags.DEFINE_string("output_dir", "out/oftrl_endgames", "Outputs: curves.csv, runs.csv (each with its "
                    "<name>.config.json), <subgame>_<mode>.png, summary.md; one run at a time, results of another "
                    "configuration are refused.")
define_allow_changed_flag()
define_tensorboard_flag()

LABELS = {"cfr": "CFR", "dcfr": "DCFR", "oftrl_theory": "OFTRL theory", "oftrl_tuned": "OFTRL tuned"}


def log_points(iterations: int, count: int) -> set[int]:
    return {max(1, round(10 ** (k * math.log10(iterations) / (count - 1)))) for k in range(count)} | {iterations}


def run_one(tree, variant: str, alternating: bool, iterations: int, points: set[int], scale: float = 1.0) -> tuple:
    import numpy as np

    from openspiel_cfrx.poker import VectorCFR

    options = {"horizon": iterations, "stepsize_scale": scale} if variant == "oftrl" else {}
    solver = VectorCFR(tree, variant, alternating_updates=alternating, dtype=np.float64, verbose=False, **options)
    start = time.perf_counter()
    rows = solver.run(iterations, evaluate_every=lambda t: t in points, progress=False)
    seconds = solver.seconds if hasattr(solver, "seconds") else time.perf_counter() - start
    return [(r["iteration"], r["nash_conv"] / 100 * 1000) for r in rows], iterations / max(seconds, 1e-9)


_TREES: dict = {}  # per process: subgame -> (tree, OFTRL theory scale)


def _tree(subgame: int, data_dir: str, threads: int, units: str):
    if subgame not in _TREES:
        from games.libratus_endgames import load_endgame

        tree = load_endgame(subgame, data_dir or None).tree(threads=threads)  # "": the packaged data
        theory = 1.0 if units == "bounded" else 3 * tree.max_abs_utility / tree.chance[tree.root_round]
        _TREES[subgame] = tree, theory
    return _TREES[subgame]


def run_task(task: dict) -> dict:
    """One run of the grid (a process pool's unit of work): `task` names the
    subgame, mode, algorithm and the multiple of the theory stepsize."""
    tree, theory = _tree(task["subgame"], task["data_dir"], task["threads"], task["units"])
    variant = "oftrl" if task["algorithm"].startswith("oftrl") else task["algorithm"]
    curve, speed = run_one(tree, variant, task["mode"] == "alternating", task["iterations"], task["points"],
                           theory * task["multiple"])  # fmt: skip
    return {**task, "curve": curve, "speed": speed}


def grid(subgames: list[int], data_dir: str, jobs: int) -> list[dict]:
    """Every run of the grid, longest first (an OFTRL iteration costs ~1.4 CFR iterations: one paired walk)."""
    points = log_points(FLAGS.iterations, FLAGS.evaluations)
    common = {"data_dir": data_dir, "iterations": FLAGS.iterations, "points": points,
              "threads": FLAGS.threads if jobs == 1 else 1, "units": FLAGS.oftrl_units}  # fmt: skip
    tasks = []
    for subgame in subgames:
        for mode in FLAGS.update_modes:
            for algorithm in FLAGS.algorithms:
                multiples = [float(m) for m in FLAGS.tuned_scales] if algorithm == "oftrl_tuned" else [1.0]
                tasks += [{**common, "subgame": subgame, "mode": mode, "algorithm": algorithm, "multiple": m}
                          for m in multiples]  # fmt: skip
    tasks.sort(key=lambda task: (task["subgame"] not in (1, 2), not task["algorithm"].startswith("oftrl")))
    return tasks


def main(argv):
    del argv
    check_output_dir()
    check_number("iterations", 10)
    check_number("jobs", 1, 4 * (os.cpu_count() or 1))
    check_number("threads", 1, 4 * (os.cpu_count() or 1))
    check_number("evaluations", 2, 10_000)
    algorithms = check_list("algorithms", list(LABELS))
    check_list("update_modes", ["simultaneous", "alternating"])
    check_number_list("tuned_scales", float, 0, strict=True, allow_empty="oftrl_tuned" not in algorithms)
    subgames = check_number_list("subgames", int, 1, 4)
    check_writable_dir(FLAGS.output_dir, "output_dir")
    missing = [f"subgame{s}.txt" for s in subgames if FLAGS.data_dir and not os.path.isfile(os.path.join(FLAGS.data_dir, f"subgame{s}.txt"))]
    if missing:
        usage_error(f"--data_dir={FLAGS.data_dir} has no {', '.join(missing)}")
    config = run_config("libratus_endgames")
    lock_run_folders(output_dir=FLAGS.output_dir)
    check_results_folder(config, *(os.path.join(FLAGS.output_dir, name) for name in ("curves.csv", "runs.csv")))
    tasks = grid(subgames, FLAGS.data_dir, FLAGS.jobs)
    results, rows = [], []
    started = time.perf_counter()

    def finished(result: dict) -> None:
        results.append(result)
        label = LABELS[result["algorithm"]] + (f" (theory x{result['multiple']:g})" if result["algorithm"] == "oftrl_tuned" else "")
        rows.extend({"game": _game(result["subgame"]), "subgame": result["subgame"], "update_mode": result["mode"], "algorithm": label, "iteration": t,
                     "saddle_point_gap_mbb": gap, "iterations_per_second": round(result["speed"], 3)}
                    for t, gap in result["curve"])  # fmt: skip
        write_results(os.path.join(FLAGS.output_dir, "runs.csv"), rows, config)
        print(f"[{(time.perf_counter() - started) / 60:6.1f} min] subgame {result['subgame']} {result['mode']:12s} "
              f"{label:26s} gap {result['curve'][-1][1]:10.3f} mbb/g  {result['speed']:6.2f} it/s", flush=True)  # fmt: skip

    if FLAGS.jobs == 1:
        for task in tasks:
            finished(run_task(task))
    else:
        import concurrent.futures
        import multiprocessing

        context = multiprocessing.get_context("spawn")  # the trees' thread pools must not be forked
        with concurrent.futures.ProcessPoolExecutor(FLAGS.jobs, mp_context=context) as pool:
            for future in concurrent.futures.as_completed([pool.submit(run_task, task) for task in tasks]):
                finished(future.result())
    report(results, subgames, config)


def _game(subgame: int) -> str:
    """The `game` column: the Libratus endgame (games.libratus_endgames.load_endgame)."""
    return f"libratus_endgame(subgame={subgame})"


def report(results: list[dict], subgames: list[int], config: dict) -> None:
    """curves.csv (the figures' curves: OFTRL tuned = the best multiple by final
    gap), one PNG per subgame and mode, summary.md."""
    rows, summary = [], []
    for subgame in subgames:
        for mode in FLAGS.update_modes:
            curves = {}
            for algorithm in FLAGS.algorithms:
                runs = [r for r in results if (r["subgame"], r["mode"], r["algorithm"]) == (subgame, mode, algorithm)]
                best = min(runs, key=lambda r: r["curve"][-1][1])
                label = LABELS[algorithm] + (f" (theory x{best['multiple']:g})" if algorithm == "oftrl_tuned" else "")
                curves[label] = best["curve"]
                rows += [{"game": _game(subgame), "subgame": subgame, "update_mode": mode, "algorithm": label, "iteration": t,
                          "saddle_point_gap_mbb": gap} for t, gap in best["curve"]]  # fmt: skip
                summary.append((subgame, mode, label, best["curve"][-1][1], best["speed"]))
            _plot(curves, f"Subgame {subgame}, {mode}", os.path.join(FLAGS.output_dir, f"subgame{subgame}_{mode}.png"))
    write_results(os.path.join(FLAGS.output_dir, "curves.csv"), rows, config)
    lines = ["| subgame | updates | algorithm | gap at last iteration (mbb/g) | iterations/s |", "|---|---|---|---:|---:|"]
    lines += [f"| {s} | {m} | {a} | {g:.3f} | {v:.2f} |" for s, m, a, g, v in summary]
    with open(os.path.join(FLAGS.output_dir, "summary.md"), "w") as f:
        f.write(f"{FLAGS.iterations} iterations per run; --oftrl_units={FLAGS.oftrl_units}; --jobs={FLAGS.jobs} "
                "(iterations/s per run, with the other jobs running beside it).\n\n" + "\n".join(lines) + "\n")  # fmt: skip
    print("\n".join(lines))


def _plot(curves: dict, title: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4))
    for label, curve in curves.items():
        ax.loglog([t for t, _ in curve], [g for _, g in curve], label=label)
    ax.set_xlabel("iterations")
    ax.set_ylabel("saddle point gap (mbb/g)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def run():
    """The console script's entry point."""
    run_program(main, __name__)


if __name__ == "__main__":
    run()
