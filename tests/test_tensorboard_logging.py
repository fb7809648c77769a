"""--tensorboard_dir of the example programs: what the CSV holds (and Deep
CFR's per-iteration statistics) reaches TensorBoard's event files, the
settings as hparams; without the package, one line says how to install it."""

from __future__ import annotations

import csv
import os
import subprocess
import sys

import pytest

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY_FHP = "flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"
PROGRAMS = {  # program: (its tiny run, the CSV it writes)
    "deep_cfr": (["--game=kuhn_poker", "--iterations=4", "--eval_every=2", "--traversals=40",
                  "--advantage_steps=5", "--policy_steps=5"], "curve.csv"),
    "oftrl_cfr": (["--game=kuhn_poker", "--iterations=4", "--solvers=cfr,oftrl", "--stepsize_scales=1"], "curves.csv"),
    "poker_vector_cfr": ([f"--game={TINY_FHP}", "--iterations=3"], None),
    "cfr_mix": (["--iterations=1", "--traversals=4", "--train_steps=2", "--hidden=8", "--seconds=3",
                 "--variants=cfr_mix", "--eval_every=1", "--particles=5", "--eval_games=20"], "curves.csv"),
    "benchmark": (["--game=kuhn_poker", "--seconds=0.5", "--algorithms=cfr+", "--eval_points=2", "--iterations=3"],
                  None),
}  # fmt: skip


def _run(program, args, tmp_path, extra=()):
    command = [sys.executable, "-m", f"cfrx_examples.{program}", *args, f"--output_dir={tmp_path}/out",
               f"--tensorboard_dir={tmp_path}/tb", *extra]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)


def _scalars(log_dir):
    events = EventAccumulator(log_dir, size_guidance={"scalars": 0})
    events.Reload()
    return {tag: {e.step: e.value for e in events.Scalars(tag)} for tag in events.Tags()["scalars"]}


def _csv(folder, name):
    path = os.path.join(folder, name) if name else next(os.path.join(folder, f) for f in sorted(os.listdir(folder))
                                                        if f.endswith(".csv"))  # fmt: skip
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(f))


# One writer (the CSV rows' numeric cells) serves every program; the fast tier checks it through the two neural
# programs, which also log training statistics, and the slow tier through every program.
FAST_PROGRAMS = ("cfr_mix", "deep_cfr")


@pytest.mark.parametrize("program", [p if p in FAST_PROGRAMS else pytest.param(p, marks=pytest.mark.slow)
                                     for p in sorted(PROGRAMS)])  # fmt: skip
def test_every_numeric_csv_cell_is_a_scalar_at_its_iteration(program, tmp_path):
    args, csv_name = PROGRAMS[program]
    run = _run(program, args, tmp_path)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    scalars = _scalars(str(tmp_path / "tb"))
    rows = _csv(str(tmp_path / "out"), csv_name)
    assert rows
    for row in rows:
        label = next((row[k] for k in ("solver", "variant", "algorithm") if row.get(k)), program)
        step = int(float(next(row[k] for k in ("iteration", "steps", "episodes") if row.get(k))))
        for name in ("nash_conv", "exploitability"):
            if row.get(name) not in (None, "", "nan"):
                assert scalars[f"{label}/{name}"][step] == pytest.approx(float(row[name]), rel=1e-6), (label, name)
    assert os.listdir(tmp_path / "tb" / "hparams")  # the settings as hparams


def test_deep_cfr_logs_losses_nodes_speed_and_memory_fill_every_iteration(tmp_path):
    args, _ = PROGRAMS["deep_cfr"]
    run = _run("deep_cfr", args, tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    scalars = _scalars(str(tmp_path / "tb"))
    for name in ("advantage_loss_p0", "advantage_loss_p1", "nodes_touched", "iterations_per_second",
                 "memory_fill_p0", "memory_fill_p1", "strategy_memory_fill"):  # fmt: skip
        assert sorted(scalars[f"deep_cfr/{name}"]) == [1, 2, 3, 4], name
    nodes = scalars["deep_cfr/nodes_touched"]
    assert nodes[1] < nodes[2] < nodes[3] < nodes[4]
    assert all(0 < v <= 1 for v in scalars["deep_cfr/memory_fill_p0"].values())


def test_without_the_package_one_line_says_how_to_install_it(tmp_path):
    code = ("import runpy, sys; sys.modules['tensorboard'] = None; "
            f"sys.argv = ['deep_cfr', '--game=kuhn_poker', '--iterations=1', '--output_dir={tmp_path}/out', "
            f"'--tensorboard_dir={tmp_path}/tb']; runpy.run_module('cfrx_examples.deep_cfr', run_name='__main__')")  # fmt: skip
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode != 0
    lines = [x for x in run.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "pip install 'openspiel_cfrx[tensorboard]'" in lines[0], run.stderr
    assert not os.path.exists(tmp_path / "out")  # refused before any work
