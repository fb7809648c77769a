"""Every example binary runs with tiny flags and writes finite numbers."""

import csv
import math
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def torch_cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _run(script, *flags, expect_ok=True):
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "cfrx_examples", script), *flags],
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
        # Slow: test_sharp_edges_examples.py's bad-parameter case runs oftrl_cfr.py on kuhn_poker(foo=1).
        pytest.param("oftrl_cfr.py", ["--game=leduc_poker(foo=1)"], "cannot load game", marks=pytest.mark.slow),
        ("oftrl_cfr.py", ["--game=matrix_rps"], "simultaneous"),
        ("benchmark.py", ["--game=kuhn_poker(players=3)"], "3 players"),
        ("benchmark.py", ["--algorithms=nope"], "--algorithms: unknown entry 'nope'"),
    ],
)
def test_bad_flags_give_one_line_errors(script, flags, message, tmp_path):
    proc = _run(script, *flags, f"--output_dir={tmp_path}", expect_ok=False)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


# The absl example binaries that share the common flags (cfrx_examples/_common.py).
BINARIES = ["oftrl_cfr.py", "deep_cfr.py", "cfr_mix.py", "head_to_head.py", "benchmark.py"]
COMMON_FLAGS = ["game", "iterations", "seed", "output_dir", "eval_every", "device"]


# Fast tier: one binary with a torch --device, one CPU-only; the three others define the flags through the
# same cfrx_examples._common.define_common_flags (their runs in the tests below pass the common flags).
@pytest.mark.parametrize("script", [s if s in ("deep_cfr.py", "head_to_head.py") else pytest.param(s, marks=pytest.mark.slow)
                                    for s in BINARIES])  # fmt: skip
def test_binaries_define_the_common_flags(script):
    """--helpshort lists the binary's own flags: the six common ones must be
    there (not only under cfrx_examples._common), each with a help text."""
    proc = _run(script, "--helpshort", expect_ok=False)
    text = proc.stdout + proc.stderr
    assert f"{script}:" in text, text[-2000:]
    for name in COMMON_FLAGS:
        match = re.search(rf"^  --{name}: (\S.*)$", text, flags=re.MULTILINE)
        assert match, f"{script} does not define --{name}"
        assert len(match.group(1)) > 20, f"{script} --{name} has no real help text"


# Fast tier: benchmark.py. The other binaries call the same check (cfrx_examples._common.check_device), and
# each one's call is exercised by test_cpu_only_binaries_reject_cuda or test_cuda_without_gpu_gives_one_line_error.
@pytest.mark.parametrize("script", [s if s == "benchmark.py" else pytest.param(s, marks=pytest.mark.slow)
                                    for s in BINARIES])  # fmt: skip
def test_bad_device_gives_one_line_error(script, tmp_path):
    proc = _run(script, "--device=tpu", f"--output_dir={tmp_path}", expect_ok=False)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --device=tpu"), proc.stderr[-2000:]
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("script", ["oftrl_cfr.py", "head_to_head.py"])
def test_cpu_only_binaries_reject_cuda(script, tmp_path):
    proc = _run(script, "--device=cuda", f"--output_dir={tmp_path}", expect_ok=False)
    assert proc.returncode != 0
    assert proc.stderr.strip().startswith("error: --device=cuda is not supported")


@pytest.mark.skipif(torch_cuda_available(), reason="needs a machine without CUDA")
@pytest.mark.parametrize("script", ["deep_cfr.py", "cfr_mix.py"])
def test_cuda_without_gpu_gives_one_line_error(script, tmp_path):
    proc = _run(script, "--device=cuda", f"--output_dir={tmp_path}", expect_ok=False)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "torch.cuda.is_available() is False" in lines[0], proc.stderr[-2000:]


# Slow: without CUDA this is the refusal test_bad_device_gives_one_line_error[benchmark.py] checks (fast).
@pytest.mark.slow
def test_benchmark_device_needs_a_neural_algorithm(tmp_path):
    proc = _run("benchmark.py", "--device=cpu:0", f"--output_dir={tmp_path}", expect_ok=False)
    assert proc.stderr.strip().startswith("error: --device=cpu:0 is not a supported torch device")
    if torch_cuda_available():
        proc = _run("benchmark.py", "--device=cuda", "--algorithms=cfr+", f"--output_dir={tmp_path}",
                    expect_ok=False)  # fmt: skip
        assert "only applies to cfr_mix, deep_cfr" in proc.stderr


@pytest.mark.slow  # ~5 s; the fast tier runs the benchmark example itself (test_benchmark_example)
def test_benchmark_iterations_cap_and_eval_every(tmp_path):
    _run(
        "benchmark.py", "--game=kuhn_poker", "--seconds=30", "--eval_points=2", "--iterations=6",
        "--eval_every=2", "--algorithms=cfr+,os_cpp_cfr", f"--output_dir={tmp_path}", "--quiet",
    )  # fmt: skip
    rows = _finite_rows(tmp_path / "benchmark.csv")
    for name in ("cfr+", "os_cpp_cfr"):
        steps = [int(row["iteration"]) for row in rows if row["solver"] == name]
        assert steps[-1] == 6 and {2, 4, 6} <= set(steps), steps
    assert "6 steps, whichever came first" in (tmp_path / "benchmark.md").read_text()


def test_head_to_head_eval_every_must_be_zero(tmp_path):
    proc = _run("head_to_head.py", "--eval_every=5", f"--output_dir={tmp_path}", expect_ok=False)
    assert proc.returncode != 0
    assert proc.stderr.strip().startswith("error: --eval_every must be 0")


def test_openspiel_swap_example(tmp_path):
    proc = _run("openspiel_swap.py", "--game=kuhn_poker", "--iterations=20", "--episodes=10", f"--output_dir={tmp_path}")
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
        "--advantage_steps=5", "--policy_steps=5", "--batch=32", "--eval_every=1", "--learning_rate_schedule=cosine",
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
    proc = _run(
        "cfr_mix.py", "--variants=cfr_mix,independent", "--iterations=2", "--seconds=30",
        "--traversals=5", "--train_steps=2", "--eval_every=1", "--hidden=8",
        f"--output_dir={tmp_path}",
    )  # fmt: skip
    assert list(tmp_path.glob("*.csv")) and list(tmp_path.glob("*.png"))
    log = proc.stdout + proc.stderr
    # Exact values (the tiny default game) are labelled as such, not "+- 0.0000",
    # with the current iterate's NashConv beside the played average.
    assert "nash_conv" in log and "(exact; current iterate" in log and "+- 0.0000" not in log
    with open(tmp_path / "curves.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(math.isfinite(float(r["current"])) for r in rows)


def test_cfr_mix_example_compact_encoding_on_nest(tmp_path):
    _run(
        "cfr_mix.py", "--game=nest(rows=3,cols=3,num_pursuers=2)", "--variants=cfr_mix", "--iterations=1",
        "--traversals=2", "--train_steps=2", "--hidden=8", "--infoset_encoding=compact", "--particles=5",
        "--exact_max_histories=1",
        "--eval_games=20", f"--output_dir={tmp_path}",
    )  # fmt: skip
    with open(tmp_path / "curves.csv", encoding="utf-8") as f:
        assert [row["iteration"] for row in csv.DictReader(f)] == ["0", "1"]
    proc = _run("cfr_mix.py", "--infoset_encoding=compact", "--iterations=1", f"--output_dir={tmp_path}",
                expect_ok=False)  # fmt: skip
    assert proc.returncode != 0 and "--infoset_encoding=tensor" in proc.stderr
    proc = _run("cfr_mix.py", "--game=nest(rows=3,cols=3,num_pursuers=2)", "--variants=deep_cfr",
                "--infoset_encoding=compact", "--iterations=1", f"--output_dir={tmp_path}", expect_ok=False)
    assert proc.returncode != 0 and "CFRMixSolver variants only" in proc.stderr


@pytest.mark.slow  # tests/test_exact_resume.py covers CFR-MIX resume through the library
def test_cfr_mix_example_resumes_from_checkpoint(tmp_path):
    flags = [
        "--variants=cfr_mix,independent", "--seconds=30", "--traversals=5", "--train_steps=2",
        "--eval_every=1", "--hidden=8", f"--output_dir={tmp_path / 'out'}",
        f"--checkpoint_dir={tmp_path / 'ckpt'}",
    ]  # fmt: skip
    _run("cfr_mix.py", *flags, "--iterations=2")
    # One file per variant, no temporary files left behind (atomic save).
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == ["cfr_mix.pt", "independent.pt"]
    proc = _run("cfr_mix.py", *flags, "--iterations=3")
    rows = _finite_rows(tmp_path / "out" / "curves.csv", column="value")
    for variant in ("cfr_mix", "independent"):
        assert f"resumed from {tmp_path / 'ckpt' / variant}.pt at iteration 2" in proc.stdout, proc.stdout
        mine = [row for row in rows if row["variant"] == variant]
        # The first run's points are kept, iteration 0 is not re-evaluated, solver seconds carry over.
        assert [int(row["iteration"]) for row in mine] == [0, 1, 2, 3]
        assert float(mine[3]["seconds"]) >= float(mine[2]["seconds"]) > 0


def test_cfr_mix_example_corrupt_checkpoint_gives_one_line_error(tmp_path):
    path = tmp_path / "ckpt" / "cfr_mix.pt"
    path.parent.mkdir()
    path.write_bytes(b"not a checkpoint")
    proc = _run(
        "cfr_mix.py", "--variants=cfr_mix", "--iterations=1", "--traversals=5", "--train_steps=2",
        "--hidden=8", f"--output_dir={tmp_path / 'out'}", f"--checkpoint_dir={path.parent}", expect_ok=False,
    )  # fmt: skip
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), proc.stderr[-2000:]
    assert str(path) in lines[0] and "choose another --checkpoint_dir" in lines[0]
    assert "Traceback" not in proc.stderr
