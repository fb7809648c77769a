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
52 minutes on a 2-core machine (the 1,000-iteration grid before Section 6's
controlled grid, below).

Section 6's controlled grid (`benchmarks/bench_endgames.py`): --oftrl_units
takes both conventions (chips,bounded), --tuned_scales both readings of the
paper's "dividing the stepsize by 10, 100, and 1000" (0.001,0.01,0.1 divide;
10,100,1000 multiply), --extend_edges adds stepsizes x10 past the edge while
the best stepsize by final gap (theory x1 included) of a subgame and mode is
the smallest or largest tried (both units on one axis: `bounded` x M is
`chips` x M / (3 max|u| P), the same run), and --runs_dir makes it resumable:
one JSON file per run (<subgame>_<mode>_<algorithm>[_<units>_x<multiple>]
_T<iterations>_e<evaluations>.json, its settings, curve, iterations/s and
CPU seconds), read instead of rerun when its settings are this run's. --plan
prints the runs still to do with their cost, from a short timed run of CFR
and OFTRL on each subgame, and runs nothing else.
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
flags.DEFINE_list("tuned_scales", ["10", "100", "1000"], "Multiples of the theory stepsize tried for 'OFTRL tuned' "
                  "(< 1: the paper's 'dividing' read literally).")
flags.DEFINE_list("oftrl_units", ["chips"], "What 'OFTRL theory' scales (module doc): chips, bounded, or both "
                  "(chips,bounded: each OFTRL run once per units, labelled with them).")
flags.DEFINE_string("runs_dir", "", "Resumable runs: one JSON file per run in this directory; a run whose file "
                    "records the same settings is read instead of rerun ('' = keep nothing).")
flags.DEFINE_bool("extend_edges", False, "While the best OFTRL stepsize by final gap (theory x1 and --tuned_scales, "
                  "both units on one axis) of a subgame and mode is the smallest or largest tried, also run the next "
                  "one past that edge (/10 or x10), at most --max_extensions per subgame and mode.")
flags.DEFINE_integer("max_extensions", 12, "With --extend_edges: most stepsizes added per subgame and mode.")
flags.DEFINE_bool("plan", False, "Print the runs still to do (those in --runs_dir skipped; with --extend_edges the "
                  "extensions the stored runs already call for) and their cost, timed by a short run of CFR and "
                  "OFTRL per subgame, then stop.")
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


_TREES: dict = {}  # per process: subgame -> tree
_WARM: set = set()  # per process: (subgame, variant) run once


def _tree(subgame: int, data_dir: str, threads: int):
    if subgame not in _TREES:
        from games.libratus_endgames import load_endgame

        _TREES[subgame] = load_endgame(subgame, data_dir or None).tree(threads=threads)  # "": the packaged data
    return _TREES[subgame]


def theory_scale(tree, units: str) -> float:
    """The `stepsize_scale` of "OFTRL theory" (module doc): 1 in `bounded`
    units, 3 x max utility x the sum of compatible reach pairs in `chips`."""
    return 1.0 if units == "bounded" else 3 * tree.max_abs_utility / tree.chance[tree.root_round]


def variant_of(task: dict) -> str:
    return "oftrl" if task["algorithm"].startswith("oftrl") else task["algorithm"]


def run_task(task: dict) -> dict:
    """One run of the grid (a process pool's unit of work): `task` names the
    subgame, mode, algorithm, and for OFTRL the units and the multiple of the
    theory stepsize. Returns its curve, iterations/s, wall and CPU seconds."""
    tree = _tree(task["subgame"], task["data_dir"], task["threads"])
    variant = variant_of(task)
    scale = theory_scale(tree, task["units"]) * task["multiple"] if variant == "oftrl" else 1.0
    if (task["subgame"], variant) not in _WARM:  # compiles the kernels, so that iterations/s is the walk's
        run_one(tree, variant, False, 2, set(), scale)
        _WARM.add((task["subgame"], variant))
    wall, cpu = time.perf_counter(), time.process_time()
    curve, speed = run_one(tree, variant, task["mode"] == "alternating", task["iterations"], task["points"], scale)
    return {"curve": curve, "speed": speed, "seconds": time.perf_counter() - wall, "cpu_seconds": time.process_time() - cpu}


# ------------------------------------------------------------ the run store (--runs_dir)
def run_settings(task: dict) -> dict:
    """What decides a run's result (not threads or jobs: the engine's sums do not depend on them)."""
    settings = {"subgame": task["subgame"], "update_mode": task["mode"], "algorithm": variant_of(task),
                "iterations": task["iterations"], "evaluated_at": sorted(task["points"]), "data_dir": task["data_dir"]}  # fmt: skip
    if settings["algorithm"] == "oftrl":
        settings.update(units=task["units"], multiple=task["multiple"])
    return settings


def run_file(task: dict) -> str:
    """The run's file name in --runs_dir (also the key that runs each distinct run once)."""
    oftrl = f"_{task['units']}_x{task['multiple']:g}" if variant_of(task) == "oftrl" else ""
    return (f"subgame{task['subgame']}_{task['mode']}_{variant_of(task)}{oftrl}_T{task['iterations']}"
            f"_e{task['evaluations']}.json")  # fmt: skip


def stored_run(runs_dir: str, task: dict) -> dict | None:
    """The stored outcome of `task` when --runs_dir holds its file with the same settings, else None."""
    import json

    try:
        with open(os.path.join(runs_dir, run_file(task)), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("settings") != run_settings(task):
        return None
    return {"curve": [tuple(point) for point in data["curve"]], "speed": data["iterations_per_second"],
            "seconds": data["seconds"], "cpu_seconds": data["cpu_seconds"], "stored": True}  # fmt: skip


def store_run(runs_dir: str, task: dict, outcome: dict) -> None:
    import json

    from openspiel_cfrx.checkpoint_io import atomic_write

    record = {"program": "oftrl_endgames.py", "settings": run_settings(task), "curve": [list(p) for p in outcome["curve"]],
              "iterations_per_second": outcome["speed"], "seconds": round(outcome["seconds"], 3),
              "cpu_seconds": round(outcome["cpu_seconds"], 3),
              "finished": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}  # fmt: skip
    data = (json.dumps(record, indent=1) + "\n").encode("utf-8")
    atomic_write(os.path.join(runs_dir, run_file(task)), lambda f: f.write(data))


def grid(subgames: list[int], data_dir: str, jobs: int, units: list[str], scales: list[float]) -> list[dict]:
    """Every run of the grid. With one job, in order of use: subgames as
    given, CFR and DCFR, then OFTRL per units (as given), theory, then the
    multiples as given; with several, the big subgames (1, 2) first, and in
    each CFR and DCFR before OFTRL: every verdict compares with them, and a
    grid that spans sessions stops with its baselines stored."""
    points = log_points(FLAGS.iterations, FLAGS.evaluations)
    common = {"data_dir": data_dir, "iterations": FLAGS.iterations, "evaluations": FLAGS.evaluations, "points": points,
              "threads": FLAGS.threads if jobs == 1 else 1}  # fmt: skip
    tasks = []
    for subgame in subgames:
        for mode in FLAGS.update_modes:
            for algorithm in FLAGS.algorithms:
                if not algorithm.startswith("oftrl"):
                    tasks.append({**common, "subgame": subgame, "mode": mode, "algorithm": algorithm, "units": "",
                                  "multiple": 1.0})  # fmt: skip
                    continue
                for unit in units:
                    multiples = scales if algorithm == "oftrl_tuned" else [1.0]
                    tasks += [{**common, "subgame": subgame, "mode": mode, "algorithm": algorithm, "units": unit,
                               "multiple": m} for m in multiples]  # fmt: skip
    if jobs == 1:
        order = {name: i for i, name in enumerate(FLAGS.algorithms)}
        tasks.sort(key=lambda t: (subgames.index(t["subgame"]), bool(t["units"]), units.index(t["units"]) if t["units"] else 0,
                                  order[t["algorithm"]], scales.index(t["multiple"]) if t["algorithm"] == "oftrl_tuned" else 0))  # fmt: skip
    else:
        tasks.sort(key=lambda task: (task["subgame"] not in (1, 2), task["subgame"], task["algorithm"].startswith("oftrl")))
    return tasks


def _next_multiple(multiple: float, factor: float) -> float:
    return float(f"{multiple * factor:.12g}")


def extensions(tasks: list[dict], outcomes: dict) -> list[dict]:
    """--extend_edges. Both units are one stepsize axis: a run's stepsize is
    `theory_scale(tree, units) x multiple` (`bounded` x M is `chips` x M / (3
    max|u| P), the same run), so the scan's edges are those of that axis, per
    subgame and mode. Once every OFTRL run of a subgame and mode has finished,
    when the best stepsize by final gap is the largest (smallest) tried: a run
    at ten times (a tenth of) it, in the units that hold it, while fewer than
    --max_extensions were added there."""
    groups: dict = {}
    for task in tasks:
        if variant_of(task) == "oftrl":
            groups.setdefault((task["subgame"], task["mode"]), {})[run_file(task)] = task
    new = []
    for group in groups.values():
        if len(group) < 2 or any(name not in outcomes for name in group):
            continue
        if sum(bool(t.get("extension")) for t in group.values()) >= FLAGS.max_extensions:
            continue
        first = next(iter(group.values()))
        tree = _tree(first["subgame"], first["data_dir"], 1)
        stepsize = {name: theory_scale(tree, t["units"]) * t["multiple"] for name, t in group.items()}
        final = {name: outcomes[name]["curve"][-1][1] for name in group}
        best = min(sorted(group, key=stepsize.get), key=final.get)
        if min(stepsize.values()) < stepsize[best] < max(stepsize.values()):
            continue
        edge = group[best]
        factor = 10.0 if stepsize[best] == max(stepsize.values()) else 0.1
        new.append({**edge, "algorithm": "oftrl_tuned", "multiple": _next_multiple(edge["multiple"], factor),
                    "extension": True})  # fmt: skip
    return new


def plan(todo: list[dict], stored: int, extend: bool) -> None:
    """--plan: the runs still to do and their cost, timed by a short run of
    CFR and OFTRL (simultaneous updates) and one exact evaluation per subgame
    at this machine's current load."""
    import numpy as np

    from openspiel_cfrx.poker import VectorCFR

    timing = {}
    for subgame in sorted({t["subgame"] for t in todo}):
        tree = _tree(subgame, todo[0]["data_dir"], todo[0]["threads"])
        short = 3 if subgame in (1, 2) else 50
        timing[subgame] = {}
        for variant in ("cfr", "oftrl"):
            options = {"horizon": FLAGS.iterations, "stepsize_scale": theory_scale(tree, "chips")} if variant == "oftrl" else {}
            solver = VectorCFR(tree, variant, dtype=np.float64, verbose=False, **options)
            solver.run(1, progress=False)  # compiles and warms up
            seconds, cpu = solver.seconds, time.process_time()
            solver.run(1 + short, progress=False)
            per_iteration, cpu_per_iteration = (solver.seconds - seconds) / short, (time.process_time() - cpu) / short
            cpu = time.process_time()
            evaluation = solver.evaluate()["evaluation_seconds"]
            timing[subgame][variant] = (per_iteration, cpu_per_iteration, evaluation, time.process_time() - cpu)
        cfr, oftrl = timing[subgame]["cfr"], timing[subgame]["oftrl"]
        print(f"subgame {subgame}: CFR {1 / cfr[0]:.2f} it/s, OFTRL {1 / oftrl[0]:.2f} it/s, one exact evaluation "
              f"{cfr[2]:.3f} s ({short} timed iterations each, load {os.getloadavg()[0]:.2f})", flush=True)  # fmt: skip
    total_wall = total_cpu = 0.0
    lines = ["| subgame | updates | algorithm | units | multiple | est. wall s | est. CPU s |", "|---|---|---|---|---:|---:|---:|"]
    for task in todo:
        per_iteration, cpu_per_iteration, evaluation, evaluation_cpu = timing[task["subgame"]]["oftrl" if variant_of(task) == "oftrl" else "cfr"]
        evaluations = len(task["points"])
        wall = task["iterations"] * per_iteration + evaluations * evaluation
        cpu = task["iterations"] * cpu_per_iteration + evaluations * evaluation_cpu
        total_wall, total_cpu = total_wall + wall, total_cpu + cpu
        oftrl = variant_of(task) == "oftrl"
        lines.append(f"| {task['subgame']} | {task['mode']} | {variant_of(task)} | {task['units'] or '-'} | "
                     f"{task['multiple']:g}{' (extension)' if task.get('extension') else ''} | {wall:.0f} | {cpu:.0f} |"
                     if oftrl else f"| {task['subgame']} | {task['mode']} | {variant_of(task)} | - | - | {wall:.0f} | {cpu:.0f} |")  # fmt: skip
    print("\n".join(lines))
    print(f"{len(todo)} runs to do ({stored} stored, skipped): ~{total_wall / 3600:.2f} h of one process at this "
          f"load, ~{total_cpu / 3600:.2f} CPU hours" + (
              "; --extend_edges may add more once these finish (at most --max_extensions per subgame, mode and "
              "units)" if extend else ""))  # fmt: skip


def main(argv):
    del argv
    check_output_dir()
    check_number("iterations", 10)
    check_number("jobs", 1, 4 * (os.cpu_count() or 1))
    check_number("threads", 1, 4 * (os.cpu_count() or 1))
    check_number("evaluations", 2, 10_000)
    check_number("max_extensions", 0, 100)
    algorithms = check_list("algorithms", list(LABELS))
    check_list("update_modes", ["simultaneous", "alternating"])
    units = check_list("oftrl_units", ["chips", "bounded"])
    scales = check_number_list("tuned_scales", float, 0, strict=True, allow_empty="oftrl_tuned" not in algorithms)
    subgames = check_number_list("subgames", int, 1, 4)
    check_writable_dir(FLAGS.output_dir, "output_dir")
    if FLAGS.runs_dir:
        check_writable_dir(FLAGS.runs_dir, "runs_dir")
    missing = [f"subgame{s}.txt" for s in subgames if FLAGS.data_dir and not os.path.isfile(os.path.join(FLAGS.data_dir, f"subgame{s}.txt"))]
    if missing:
        usage_error(f"--data_dir={FLAGS.data_dir} has no {', '.join(missing)}")
    config = run_config("libratus_endgames")
    if not FLAGS.plan:
        lock_run_folders(output_dir=FLAGS.output_dir)
        check_results_folder(config, *(os.path.join(FLAGS.output_dir, name) for name in ("curves.csv", "runs.csv")))
    tasks = grid(subgames, FLAGS.data_dir, FLAGS.jobs, units, scales)
    outcomes: dict = {}  # run file name -> curve, speed, seconds, cpu_seconds
    rows, todo_all = [], []
    started = time.perf_counter()

    def label(task: dict) -> str:
        text = LABELS[task["algorithm"]] + (f" [{task['units']}]" if task["units"] and len(units) > 1 else "")
        return text + (f" (theory x{task['multiple']:g})" if task["algorithm"] == "oftrl_tuned" else "")

    def finished(task: dict, outcome: dict) -> None:
        outcomes[run_file(task)] = outcome
        if FLAGS.runs_dir and not outcome.get("stored"):
            store_run(FLAGS.runs_dir, task, outcome)
        rows.extend({"game": _game(task["subgame"]), "subgame": task["subgame"], "update_mode": task["mode"], "algorithm": label(task),
                     "iteration": t, "saddle_point_gap_mbb": gap, "iterations_per_second": round(outcome["speed"], 3)}
                    for t, gap in outcome["curve"])  # fmt: skip
        write_results(os.path.join(FLAGS.output_dir, "runs.csv"), rows, config)
        print(f"[{(time.perf_counter() - started) / 60:6.1f} min] subgame {task['subgame']} {task['mode']:12s} "
              f"{label(task):34s} gap {outcome['curve'][-1][1]:10.3f} mbb/g  {outcome['speed']:6.2f} it/s"
              + ("  (stored)" if outcome.get("stored") else ""), flush=True)  # fmt: skip

    def pending(batch: list[dict]) -> list[dict]:
        """The distinct runs of `batch` not done yet (stored ones read from --runs_dir and reported)."""
        todo = []
        for task in {run_file(t): t for t in batch}.values():
            if run_file(task) in outcomes:
                continue
            outcome = stored_run(FLAGS.runs_dir, task) if FLAGS.runs_dir else None
            if outcome is not None:
                outcomes[run_file(task)] = outcome
                if not FLAGS.plan:
                    finished(task, outcome)
            else:
                todo.append(task)
        return todo

    def extend() -> list[dict]:
        """--extend_edges: the next multiple of every group whose runs have all finished with its best at an edge
        (repeated through extensions already stored), the ones still to run."""
        while FLAGS.extend_edges:
            known = {run_file(t) for t in tasks}
            new = [t for t in extensions(tasks, outcomes) if run_file(t) not in known]
            if not new:
                break
            tasks.extend(new)
            if todo := pending(new):
                return todo
        return []

    queue = pending(tasks)
    if FLAGS.plan:  # an extension is known now only where its group is stored
        todo_all.extend(queue + extend())
    else:
        # One pool for the whole grid: an extension starts as soon as its group has finished (it is on the grid's
        # critical path, so it goes to the front of the queue), not after every other run.
        import concurrent.futures
        import multiprocessing

        context = multiprocessing.get_context("spawn")  # the trees' thread pools must not be forked
        pool = concurrent.futures.ProcessPoolExecutor(FLAGS.jobs, mp_context=context) if FLAGS.jobs > 1 else None
        running: dict = {}
        queue = extend() + queue
        while queue or running:
            if pool is None:
                task = queue.pop(0)
                finished(task, run_task(task))
            else:
                while queue and len(running) < FLAGS.jobs:
                    task = queue.pop(0)
                    running[pool.submit(run_task, task)] = task
                done, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in done:
                    finished(running.pop(future), future.result())
            queue = extend() + queue
        if pool is not None:
            pool.shutdown()
    if FLAGS.plan:
        stored = len({run_file(t) for t in tasks}) - len(todo_all)
        if todo_all:
            plan(todo_all, stored, FLAGS.extend_edges)
        else:
            print(f"nothing to do: all {stored} runs are stored in {FLAGS.runs_dir}")
        return
    report([{**task, **outcomes[run_file(task)]} for task in tasks], subgames, units, config, label)


def _game(subgame: int) -> str:
    """The `game` column: the Libratus endgame (games.libratus_endgames.load_endgame)."""
    return f"libratus_endgame(subgame={subgame})"


def report(results: list[dict], subgames: list[int], units: list[str], config: dict, label) -> None:
    """curves.csv (the figures' curves: OFTRL tuned = the best multiple by final
    gap, extensions included), one PNG per subgame and mode, summary.md."""
    rows, summary = [], []
    for subgame in subgames:
        for mode in FLAGS.update_modes:
            curves = {}
            for algorithm in FLAGS.algorithms:
                for unit in (units if algorithm.startswith("oftrl") else [""]):
                    runs = [r for r in results if (r["subgame"], r["mode"], r["algorithm"], r["units"]) == (subgame, mode, algorithm, unit)]
                    best = min(runs, key=lambda r: r["curve"][-1][1])
                    curves[label(best)] = best["curve"]
                    rows += [{"game": _game(subgame), "subgame": subgame, "update_mode": mode, "algorithm": label(best), "iteration": t,
                              "saddle_point_gap_mbb": gap} for t, gap in best["curve"]]  # fmt: skip
                    summary.append((subgame, mode, label(best), best["curve"][-1][1], best["speed"]))
            _plot(curves, f"Subgame {subgame}, {mode}", os.path.join(FLAGS.output_dir, f"subgame{subgame}_{mode}.png"))
    write_results(os.path.join(FLAGS.output_dir, "curves.csv"), rows, config)
    lines = ["| subgame | updates | algorithm | gap at last iteration (mbb/g) | iterations/s |", "|---|---|---|---:|---:|"]
    lines += [f"| {s} | {m} | {a} | {g:.3f} | {v:.2f} |" for s, m, a, g, v in summary]
    stored = sum(bool(r.get("stored")) for r in results)
    with open(os.path.join(FLAGS.output_dir, "summary.md"), "w") as f:
        f.write(f"{FLAGS.iterations} iterations per run; --oftrl_units={','.join(units)}; --jobs={FLAGS.jobs} "
                "(iterations/s per run, with the other jobs running beside it)"
                + (f"; {stored} of {len(results)} runs read from --runs_dir={FLAGS.runs_dir}" if FLAGS.runs_dir else "")
                + ".\n\n" + "\n".join(lines) + "\n")  # fmt: skip
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
