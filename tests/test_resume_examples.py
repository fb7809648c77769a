"""Runs never lose work (issue 17): interrupted example runs resume to exactly
the uninterrupted run's curve rows; bad output paths fail before any compute;
games too large to extract are refused with the alternatives."""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEEP_CFR = [
    "--game=kuhn_poker", "--iterations=12", "--eval_every=2", "--traversals=500", "--advantage_steps=30",
    "--policy_steps=10", "--layers=16", "--traversal_backend=state", "--seed=3",
]  # fmt: skip
# Columns that depend on wall-clock time only.
TIMING = {"seconds"}


def _cmd(script, *flags):
    return [sys.executable, os.path.join(ROOT, "cfrx_examples", script), *flags]


def _rows(path):
    with open(path, encoding="utf-8") as f:
        return [{k: v for k, v in row.items() if k not in TIMING} for row in csv.DictReader(f)]


def _same(rows, expected):
    """Same rows, every column as written but the timings: a resumed run
    continues bit for bit (tests/test_exact_resume.py)."""
    assert [r["iteration"] for r in rows] == [r["iteration"] for r in expected]
    for row, ref in zip(rows, expected, strict=True):
        assert row == ref
    return True


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("uninterrupted")
    subprocess.run(_cmd("deep_cfr.py", *DEEP_CFR, f"--output_dir={out}"), check=True, capture_output=True,
                   cwd=ROOT, timeout=300)  # fmt: skip
    return _rows(out / "curve.csv")


def _interrupt_when(proc, csv_path, rows, sig):
    deadline = time.time() + 240
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        if os.path.exists(csv_path):
            with open(csv_path, encoding="utf-8") as f:
                if sum(1 for _ in f) > rows:
                    proc.send_signal(sig)
                    return True
        time.sleep(0.02)
    raise AssertionError("run never produced the rows")


# SIGKILL in the slow tier: the state a hard kill leaves (a row written, its checkpoint not) is made
# exactly by test_killed_between_row_and_checkpoint_and_extended_run.
@pytest.mark.parametrize("sig", [signal.SIGINT, pytest.param(signal.SIGKILL, marks=pytest.mark.slow)])
def test_interrupted_deep_cfr_run_resumes_to_the_uninterrupted_rows(tmp_path, uninterrupted, sig):
    out, ckpt = tmp_path / "out", tmp_path / "ckpt"
    flags = [*DEEP_CFR, f"--output_dir={out}", f"--checkpoint_dir={ckpt}"]
    proc = subprocess.Popen(_cmd("deep_cfr.py", *flags), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    interrupted = _interrupt_when(proc, out / "curve.csv", 2, sig)
    assert interrupted, "the run finished before it could be interrupted"
    _, err = proc.communicate(timeout=600)
    if interrupted and sig == signal.SIGINT:
        assert "Traceback" not in err and "interrupted at iteration" in err
    if interrupted:
        # Nothing evaluated so far is lost: every row of the CSV is a row of the full run.
        partial = _rows(out / "curve.csv")
        assert _same(partial, uninterrupted[: len(partial)])
    subprocess.run(_cmd("deep_cfr.py", *flags), check=True, capture_output=True, cwd=ROOT, timeout=300)
    assert _same(_rows(out / "curve.csv"), uninterrupted)


@pytest.mark.slow  # a killed run, its resume and an extended run (~20 s); the SIGINT cases stay in the default tier
def test_killed_between_row_and_checkpoint_and_extended_run(tmp_path, uninterrupted):
    """A run killed after writing a row but before its checkpoint, then
    extended past its first --iterations, still ends with exactly the
    uninterrupted rows (no duplicates, no gaps)."""
    out, ckpt = tmp_path / "out", tmp_path / "ckpt"
    base = [f for f in DEEP_CFR if not f.startswith("--iterations")]
    run = lambda n: subprocess.run(_cmd("deep_cfr.py", *base, f"--iterations={n}", f"--output_dir={out}",  # noqa: E731
                                        f"--checkpoint_dir={ckpt}"), check=True, capture_output=True,
                                   cwd=ROOT, timeout=300)  # fmt: skip
    run(6)
    shutil.copy(ckpt / "deep_cfr.pt", tmp_path / "at6.pt")
    run(8)  # CSV and checkpoint now at 8 ...
    shutil.copy(tmp_path / "at6.pt", ckpt / "deep_cfr.pt")  # ... as if killed before the checkpoint at 8
    assert [r["iteration"] for r in _rows(out / "curve.csv")] == ["2", "4", "6", "8"]
    run(12)
    assert _same(_rows(out / "curve.csv"), uninterrupted)
    # The curve is also inside the checkpoint: a lost CSV comes back on resume.
    os.remove(out / "curve.csv")
    run(12)
    assert _same(_rows(out / "curve.csv"), uninterrupted)


@pytest.mark.parametrize("bad", ["file", "/proc/x"])
def test_unwritable_output_dir_fails_at_once(tmp_path, bad):
    path = str(tmp_path / "a_file") if bad == "file" else bad
    if bad == "file":
        open(path, "w").close()
    # A million iterations: a check made after any training would run into the timeout.
    proc = subprocess.run(_cmd("deep_cfr.py", *DEEP_CFR, "--iterations=1000000", f"--output_dir={path}"),
                          capture_output=True, text=True, cwd=ROOT, timeout=600)  # fmt: skip
    assert proc.returncode != 0
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and "--output_dir" in lines[0], lines
    assert "iteration" not in proc.stdout  # nothing trained


def test_too_large_game_is_refused_with_the_alternatives(tmp_path):
    proc = subprocess.run(_cmd("deep_cfr.py", "--game=flop_holdem", "--traversal_backend=state", f"--output_dir={tmp_path}"),
                          capture_output=True, text=True, cwd=ROOT, timeout=300)  # fmt: skip
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert proc.returncode != 0 and len(lines) == 1, lines
    assert "histories" in lines[0] and "--noevaluate" in lines[0]


CFR_MIX = ["--variants=cfr_mix", "--iterations=10", "--eval_every=2", "--seconds=1000", "--traversals=30",
           "--train_steps=20", "--hidden=16", "--seed=1"]  # fmt: skip


def _mix_rows(path):
    with open(path, encoding="utf-8") as f:
        return [(r["variant"], r["iteration"], r["metric"], float(r["value"])) for r in csv.DictReader(f)]


@pytest.fixture(scope="module")
def mix_uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("mix")
    subprocess.run(_cmd("cfr_mix.py", *CFR_MIX, f"--output_dir={out}"), check=True, capture_output=True,
                   cwd=ROOT, timeout=300)  # fmt: skip
    return _mix_rows(out / "curves.csv")


# SIGKILL in the slow tier, as for deep_cfr.py above (the rows a resume keeps: cfrx_examples._common.resumed_rows).
@pytest.mark.parametrize("sig", [signal.SIGINT, pytest.param(signal.SIGKILL, marks=pytest.mark.slow)])
def test_interrupted_cfr_mix_run_resumes_to_the_uninterrupted_rows(tmp_path, mix_uninterrupted, sig):
    out, ckpt = tmp_path / "out", tmp_path / "ckpt"
    flags = [*CFR_MIX, f"--output_dir={out}", f"--checkpoint_dir={ckpt}"]
    proc = subprocess.Popen(_cmd("cfr_mix.py", *flags), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert _interrupt_when(proc, out / "curves.csv", 3, sig), "the run finished before it could be interrupted"
    _, err = proc.communicate(timeout=600)
    if sig == signal.SIGINT:
        assert "Traceback" not in err and "interrupted" in err
    subprocess.run(_cmd("cfr_mix.py", *flags), check=True, capture_output=True, cwd=ROOT, timeout=300)
    assert _mix_rows(out / "curves.csv") == mix_uninterrupted  # values as written, bit for bit
