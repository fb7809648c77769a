"""Bad input to the benchmark programs (issue 60, the careless-user sweep):
`benchmarks/bench_fhp_curve.py` and `benchmarks/suite.py` answer it with one
line on stderr, `error: <what is wrong and the fix>; see --help`, exit status
2, before computing anything: no traceback, no usage dump, no hang.

Each case runs the program in a fresh interpreter and stops at its argument
checks (about a second; the few that load the game or check Deep CFR settings
import the library, a few seconds). Cases that would compute before the fix
are given a tiny game and budget, so that they fail fast rather than run on.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TINY_GAME = "--game=flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"
# a budget that finishes in a second or two on TINY_GAME, for cases that computed before their check existed
TINY_RUN = ["--algorithms=os_es_mccfr", "--iterations=1", "--mccfr-step=1", "--fractions=1"]


def run(program: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / program), *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)  # fmt: skip


def assert_refused(out: subprocess.CompletedProcess, pattern: str) -> str:
    """One line on stderr, `error: ...` matching `pattern`, exit status 2, nothing computed."""
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2, f"exit {out.returncode}\nstdout: {out.stdout[-2000:]}\nstderr: {out.stderr[-3000:]}"
    assert len(lines) == 1, f"not one line:\n{out.stderr[-3000:]}"
    assert lines[0].startswith("error: ") and lines[0].endswith("; see --help"), lines[0]
    assert re.search(pattern, lines[0]), f"{pattern!r} not in {lines[0]!r}"
    assert "NashConv" not in out.stdout, f"computed before refusing:\n{out.stdout[-2000:]}"
    return lines[0]


# --- benchmarks/suite.py: one line, not the 27-line flag listing ------------------------------------------

@pytest.mark.parametrize(
    "args, pattern",
    [
        (["--only=nope", "--dry_run"], r"unknown --only nope; choose from tabular, .*careless_user"),
        (["--tier=bogus", "--dry_run"], r"--tier: invalid choice: 'bogus' \(choose from 'quick', 'full'\)"),
        (["stray", "--dry_run"], r"unrecognized arguments: stray"),
        (["--no_such_flag", "--dry_run"], r"unrecognized arguments: --no_such_flag"),
    ],
)
def test_suite_bad_arguments_are_one_line(args, pattern):
    assert_refused(run("suite.py", *args), pattern)


def test_suite_refuses_a_name_without_a_quick_tier_before_running_anything():
    """Before: the programs listed before it ran (here only printed: --dry_run)
    and the usage dump came when its turn came."""
    out = run("suite.py", "--only=tabular,full_fhp", "--dry_run")
    assert_refused(out, r"--only full_fhp: no quick tier .* --tier=full")
    assert out.stdout == ""


def test_suite_still_lists_its_commands():
    out = run("suite.py", "--tier=full", "--only=full_fhp,tabular", "--dry-run")
    assert out.returncode == 0, out.stderr
    assert "bench_fhp_curve.py --preset=fhp_full" in out.stdout and "bench_tabular.py" in out.stdout
    assert "2/2 programs ok" in out.stdout
