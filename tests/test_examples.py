"""Every example binary runs with tiny flags and writes finite numbers."""

import csv
import math
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(script, *flags, expect_ok=True):
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", script), *flags],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    if expect_ok:
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc


def _finite_rows(path, column="exploitability", nonnegative=True):
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows
    for row in rows:
        assert math.isfinite(float(row[column]))
        assert not nonnegative or float(row[column]) >= -1e-12
    return rows


def test_oftrl_cfr_example(tmp_path):
    _run(
        "oftrl_cfr.py", "--game=kuhn_poker", "--iterations=20", "--update_mode=both",
        "--solvers=cfr,oftrl", "--stepsize_scales=1,100", "--openspiel_baselines=cpp_cfr",
        f"--output_dir={tmp_path}", "--quiet",
    )  # fmt: skip
    rows = _finite_rows(tmp_path / "curves.csv")
    solvers = {row["solver"] for row in rows}
    assert "OFTRL x100 (simultaneous)" in solvers and "OpenSpiel cpp_cfr" in solvers
    for name in ("exploitability_vs_iterations.png", "exploitability_vs_seconds.png"):
        assert (tmp_path / name).stat().st_size > 1000


def test_benchmark_example(tmp_path):
    _run(
        "benchmark.py", "--game=kuhn_poker", "--seconds=0.5", "--eval_points=3",
        "--algorithms=cfr+,os_cpp_cfr,os_es_mccfr", f"--output_dir={tmp_path}", "--quiet",
    )  # fmt: skip
    rows = _finite_rows(tmp_path / "benchmark.csv")
    assert {row["solver"] for row in rows} == {"cfr+", "os_cpp_cfr", "os_es_mccfr"}
    assert (tmp_path / "exploitability_vs_seconds.png").stat().st_size > 1000
    assert "| cfr+ |" in (tmp_path / "benchmark.md").read_text()


@pytest.mark.parametrize(
    "script, flags, message",
    [
        ("oftrl_cfr.py", ["--game=leduc_poker(foo=1)"], "cannot load game"),
        ("oftrl_cfr.py", ["--game=matrix_rps"], "simultaneous"),
        ("benchmark.py", ["--game=kuhn_poker(players=3)"], "3 players"),
        ("benchmark.py", ["--algorithms=nope"], "unknown algorithm"),
    ],
)
def test_bad_flags_give_one_line_errors(script, flags, message, tmp_path):
    proc = _run(script, *flags, f"--output_dir={tmp_path}", expect_ok=False)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_openspiel_swap_example():
    proc = _run("openspiel_swap.py", "--game=kuhn_poker", "--iterations=20", "--episodes=10")
    lines = [line.split() for line in proc.stdout.splitlines() if line.startswith(("openspiel", "cfrx"))]
    assert [line[0] for line in lines] == ["openspiel", "cfrx"]
    # Same NashConv through OpenSpiel's evaluator for both implementations.
    assert lines[0][2] == lines[1][2]


def test_head_to_head_example(tmp_path):
    _run(
        "head_to_head.py", "--game=flop_holdem(num_ranks=7,num_suits=1,max_raises=0 1)",
        "--policies=call,uniform,cfr+:5", "--deals=20", f"--output_dir={tmp_path}",
    )  # fmt: skip
    rows = _finite_rows(tmp_path / "head_to_head.csv", column="mean_mbb/g", nonnegative=False)
    assert len(rows) == 3
    assert "| call | uniform |" in (tmp_path / "head_to_head.md").read_text()


def test_deep_cfr_example(tmp_path):
    _run(
        "deep_cfr.py", "--game=kuhn_poker", "--iterations=2", "--traversals=20",
        "--advantage_steps=5", "--policy_steps=5", "--batch=32", "--eval_every=1",
        f"--output_dir={tmp_path}",
    )  # fmt: skip
    csvs = list(tmp_path.glob("*.csv"))
    assert csvs
    with open(csvs[0], encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(
        math.isfinite(float(v)) for row in rows for k, v in row.items() if "nash_conv" in k and v
    )
    assert list(tmp_path.glob("*.png"))


def test_cfr_mix_example(tmp_path):
    _run(
        "cfr_mix.py", "--variants=cfr_mix,independent", "--iterations=2", "--seconds=30",
        "--traversals=5", "--train_steps=2", "--eval_every=1", "--hidden=8",
        f"--output_dir={tmp_path}",
    )  # fmt: skip
    assert list(tmp_path.glob("*.csv")) and list(tmp_path.glob("*.png"))
