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

import csv
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


def fhp(*args: str, tmp_path: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return run("bench_fhp_curve.py", TINY_GAME, f"--out_dir={tmp_path / 'out'}", *args, timeout=timeout)


# --- benchmarks/suite.py: one line, not the 27-line flag listing ------------------------------------------

@pytest.mark.parametrize(
    "args, pattern",
    [
        (["--only=nope", "--dry_run"], r"unknown --only nope; choose from tabular, .*careless_user"),
        (["--tier=bogus", "--dry_run"], r"flag --tier=bogus: value should be one of <quick\|full>"),
        (["stray", "--dry_run"], r"unexpected arguments: stray"),
        (["--no_such_flag", "--dry_run"], r"Unknown command line flag 'no_such_flag'"),
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


# --- bench_fhp_curve.py: the flag parser's own errors ----------------------------------------------------

@pytest.mark.parametrize(
    "args, pattern",
    [
        (["--no_such_flag"], r"Unknown command line flag 'no_such_flag'"),
        (["--seconds=abc"], r"flag --seconds=abc: must be a finite number of seconds > 0, got 'abc'"),
        (["--evaluator=nope"], r"flag --evaluator=nope: value should be one of <states\|engine>"),
        (["stray"], r"unexpected arguments: stray"),
    ],
)
def test_fhp_curve_parse_errors_are_one_line(args, pattern, tmp_path):
    assert_refused(fhp(*args, tmp_path=tmp_path), pattern)


def test_fhp_curve_help_still_works():
    out = run("bench_fhp_curve.py", "--help")
    assert out.returncode == 0 and "--fractions" in out.stdout and "--iterations" in out.stdout


# --- --fractions ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fractions", ["a,b", "0.5,x", "", "0.5,,1", "0,1", "-0.5,1", "0.5,1.5", "nan,1", "inf",
                                       "1,0.5", "0.5,0.5,1"])  # fmt: skip
def test_fhp_curve_bad_fractions(fractions, tmp_path):
    line = assert_refused(fhp(f"--fractions={fractions}", *TINY_RUN[:3], tmp_path=tmp_path),
                          r"flag --fractions=\S*: must be comma-separated numbers in \(0, 1\], increasing")
    assert repr(fractions) in line  # names the value given


# --- --algorithms --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "algorithms, pattern",
    [
        ("bogus", r"unknown algorithm 'bogus'; choose from deep_cfr, os_es_mccfr, os_es_mccfr_py, os_nfsp, "
                  r"lossless_<variant>, abstraction_<N>, abstraction_pr_<N> or policy:<module>:<function>"),
        ("os_es_mccfr,DEEP_CFR", r"unknown algorithm 'DEEP_CFR'"),
        ("lossless_nope", r"lossless_nope: unknown vector CFR variant 'nope'; choose lossless_<variant> from cfr, "),
        ("abstraction_many", r"abstraction_many: a card abstraction line is abstraction_<N> or abstraction_pr_<N>"),
        ("abstraction_0", r"abstraction_0: a card abstraction line is abstraction_<N>"),
        ("policy:nomodule", r"policy:nomodule: a user's policy is policy:<module>:<function>"),
        ("policy:no_such_module_x:f", r"cannot import no_such_module_x.f"),
        ("os_es_mccfr,os_es_mccfr", r"--algorithms lists os_es_mccfr more than once"),
    ],
)
def test_fhp_curve_bad_algorithms(algorithms, pattern, tmp_path):
    assert_refused(fhp(f"--algorithms={algorithms}", "--iterations=1", "--mccfr-step=1", tmp_path=tmp_path), pattern)


@pytest.mark.parametrize(
    "args, pattern",
    [
        (["--algorithms="], r"--algorithms is empty and there is no --rows_from: nothing to run"),
        (["--algorithms=os_nfsp", "--nfsp_preset=nope"], r"--nfsp_preset='nope' is not a preset; choose from"),
        (["--algorithms=abstraction_100", "--abstraction_variant=nope"], r"--abstraction_variant='nope' is not a"),
        (["--algorithms=abstraction_100", "--abstraction_variant=pcfr+"], r"predictive variant does not run on a"),
        (["--algorithms=os_es_mccfr,os_es_mccfr_py", "--match-nodes"],
         r"--match-nodes needs deep_cfr listed before os_es_mccfr_py"),
        (["--algorithms=os_es_mccfr", "--evaluator=engine"], r"--evaluator=engine evaluates .* not os_es_mccfr"),
        (["--algorithms=deep_cfr", "--seeds=0,1", "--checkpoint=x"], r"--checkpoint holds one deep_cfr run"),
        (["--preset=nope"], r"--preset: unknown Deep CFR preset 'nope'"),
    ],
)
def test_fhp_curve_lines_and_the_options_they_read(args, pattern, tmp_path):
    """Checked up front, not when the line's turn comes after the lines before it have run."""
    assert_refused(fhp(*args, "--iterations=1", "--mccfr-step=1", "--nfsp-step=1", tmp_path=tmp_path), pattern)


# --- --deep_cfr ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "deep_cfr, pattern",
    [
        ("{", r"--deep_cfr is not valid JSON \(Expecting property name"),
        ("[1, 2]", r"--deep_cfr must be a JSON object of Deep CFR settings, .* got list"),
        ('"num_traversals"', r"--deep_cfr must be a JSON object .* got str"),
        ('{"num_traversal": 10}', r"unexpected keyword argument 'num_traversal'; did you mean 'num_traversals'\?"),
        ('{"num_traversals": 0}', r"--deep_cfr: num_traversals must be an int >= 1, got 0"),
        ('{"traversal_backend": "poker"}', r"traversal_backend is spelled traversal=TraversalSettings\(backend=\.\.\.\) "
                                           r"since 0\.3\.0"),
        ('{"traversal": {"backnd": "poker"}}', r"--deep_cfr: TraversalSettings has no field 'backnd'; did you mean "
                                               r"'backend'\?"),
        ('{"seed": 3}', r"--deep_cfr sets 'seed', which this program sets itself"),
    ],
)
def test_fhp_curve_bad_deep_cfr_settings(deep_cfr, pattern, tmp_path):
    """The library's own settings checks (DeepCFRSettings), before the game is loaded."""
    out = fhp("--algorithms=deep_cfr", f"--deep_cfr={deep_cfr}", "--iterations=1", "--fractions=1", tmp_path=tmp_path)
    assert_refused(out, pattern)


# --- --game --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "game, pattern",
    [
        ("kuhn_poker", r"--game=kuhn_poker is not a poker game this benchmark runs .* needs a flop_holdem/hulh"),
        ("no_such_game", r"--game=no_such_game: unknown game 'no_such_game'; .* needs a flop_holdem/hulh poker game"),
        ("flop_holdem(bogus=1)", r"does not load \(Unknown parameter 'bogus'. Available parameters are: max_raises"),
        ("kuhn_poker(players=x)", r"does not load \(Wrong type for parameter players"),  # OpenSpiel's C++ message
        ("flop_holdem(num_ranks=99)", r"does not load \(num_ranks=99: must be an integer in \[2, 13\]"),
        ("hulh", r"--evaluator=states .* measures flop_holdem games \(2 betting rounds\), this one has 4"),
        ("flop_holdem", r"infosets per player, too many for --evaluator=states .* use --evaluator=engine"),
    ],
)
def test_fhp_curve_game_must_be_flop_holdem_or_hulh_poker(game, pattern, tmp_path):
    out = run("bench_fhp_curve.py", f"--game={game}", f"--out_dir={tmp_path}", *TINY_RUN)
    assert_refused(out, pattern)


# --- --out_dir -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["file", "file/below"])
def test_fhp_curve_unwritable_out_dir_is_found_before_computing(where, tmp_path):
    """Before: the lines ran, then writing the CSV raised. A file in the way
    stands for any unwritable place (the tests may run as root, which chmod
    does not stop)."""
    (tmp_path / "file").write_text("")
    out = run("bench_fhp_curve.py", TINY_GAME, *TINY_RUN, f"--out_dir={tmp_path / where}")
    assert_refused(out, rf"--out_dir={re.escape(str(tmp_path / where))}\S* is not a writable directory")


def test_fhp_curve_out_dir_is_created(tmp_path):
    """The probe leaves the directory it made, and nothing else."""
    out = run("bench_fhp_curve.py", TINY_GAME, "--algorithms=bogus", f"--out_dir={tmp_path / 'new'}")
    assert out.returncode == 2 and not (tmp_path / "new").exists()  # refused first: nothing made
    out = run("bench_fhp_curve.py", TINY_GAME, "--algorithms=os_es_mccfr", "--game=kuhn_poker",
              f"--out_dir={tmp_path / 'new'}")  # fmt: skip
    assert out.returncode == 2 and [p.name for p in (tmp_path / "new").iterdir()] == ["fhp_curve"]
    assert not any((tmp_path / "new" / "fhp_curve").iterdir())


# --- --checkpoint --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("content", [b"", b"not a checkpoint\n"])
def test_fhp_curve_refuses_an_empty_or_corrupt_deep_cfr_checkpoint(content, tmp_path):
    checkpoint = tmp_path / "deep.pt"
    checkpoint.write_bytes(content)
    out = fhp("--algorithms=deep_cfr", "--iterations=1", f"--checkpoint={checkpoint}", tmp_path=tmp_path)
    line = assert_refused(out, rf"empty or corrupt checkpoint at {re.escape(str(checkpoint))}")
    assert "delete it" in line and "choose another --checkpoint" in line


def test_fhp_curve_refuses_an_empty_abstraction_checkpoint_of_any_seed(tmp_path):
    (tmp_path / "ck.abstraction_100.seed1.npz").write_bytes(b"")
    out = fhp("--algorithms=abstraction_100", "--abstraction_variant=es_lmccfr", "--es-step=10", "--iterations=10",
              "--seeds=0,1", f"--checkpoint={tmp_path / 'ck'}", tmp_path=tmp_path)  # fmt: skip
    assert_refused(out, r"empty or corrupt checkpoint at .*ck.abstraction_100.seed1.npz: empty \(0 bytes\)")


def test_fhp_curve_checkpoint_folder_must_be_writable(tmp_path):
    (tmp_path / "file").write_text("")
    out = fhp("--algorithms=deep_cfr", "--iterations=1", f"--checkpoint={tmp_path / 'file' / 'ck.pt'}",
              tmp_path=tmp_path)  # fmt: skip
    assert_refused(out, r"--checkpoint's folder=.*file is not a writable directory")


# --- --seconds and the other numbers -------------------------------------------------------------------------

@pytest.mark.parametrize("seconds", ["nan", "inf", "-inf", "-1", "0"])
def test_fhp_curve_seconds_must_be_finite_and_positive(seconds, tmp_path):
    """Before: nan and inf ran forever (no checkpoint is ever reached), -1 and 0 ran one step."""
    out = fhp(f"--seconds={seconds}", "--algorithms=os_es_mccfr", "--mccfr-step=1", "--fractions=1",
              tmp_path=tmp_path, timeout=30)  # fmt: skip
    assert_refused(out, rf"flag --seconds=\S*: must be a finite number of seconds > 0, got '{re.escape(seconds)}'")


@pytest.mark.parametrize(
    "args, pattern",
    [
        (["--iterations=-5"], r"flag --iterations=\S*: must be an integer >= 0 \(0: use --seconds\), got '-5'"),
        (["--iterations=2", "--mccfr-step=0"], r"flag --mccfr-step=\S*: must be an integer >= 1, got '0'"),
        (["--iterations=2", "--es-step=-1"], r"flag --es-step=\S*: must be an integer >= 1"),
        (["--iterations=2", "--nfsp-step=0"], r"flag --nfsp-step=\S*: must be an integer >= 1"),
        (["--iterations=2", "--vector-step=0"], r"flag --vector-step=\S*: must be an integer >= 1"),
        (["--iterations=2", "--mccfr-py-step=0"], r"flag --mccfr-py-step=\S*: must be an integer >= 1"),
        (["--iterations=2", "--threads=0"], r"flag --threads=\S*: must be an integer >= 1"),
        (["--iterations=2", "--seed=-1"], r"flag --seed=\S*: must be an integer >= 0"),
        (["--iterations=2", "--seeds=1,x"], r"flag --seeds=\S*: must be comma-separated distinct integers >= 0"),
        (["--iterations=2", "--seeds=1,1"], r"flag --seeds=\S*: must be comma-separated distinct integers >= 0"),
    ],
)
def test_fhp_curve_counts_must_be_in_range(args, pattern, tmp_path):
    """A step of 0 never reaches a checkpoint (a hang, before); a negative
    --iterations silently switched to --seconds."""
    assert_refused(fhp("--algorithms=os_es_mccfr", "--fractions=1", *args, tmp_path=tmp_path, timeout=30), pattern)


# --- --iterations counts exactly -----------------------------------------------------------------------------

def test_fhp_curve_iterations_land_exactly_on_the_checkpoints(tmp_path):
    """--iterations=30 --fractions=0.5,1 evaluates every line at 15 and 30 of
    its own iterations (os_nfsp: episodes), whatever its step size. Before,
    a line ran whole steps: os_es_mccfr (2000 per step) one checkpoint at 2000,
    es_lmccfr abstraction lines (20000) one at 20000, os_nfsp (500) one at 500."""
    from benchmarks.bench_fhp_curve import main

    main([TINY_GAME, "--algorithms=os_es_mccfr,os_nfsp,abstraction_100,lossless_lcfr", "--abstraction_variant=es_lmccfr",
          "--vector-step=4", "--iterations=30", "--fractions=0.5,1", f"--out_dir={tmp_path}"])  # fmt: skip
    with open(tmp_path / "fhp_curve" / "fhp_curve.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    steps = {}
    for r in rows:
        steps.setdefault(r["algorithm"], []).append(int(r["steps"]))
    assert steps == {"os_es_mccfr": [15, 30], "os_nfsp": [15, 30], "abstraction_100": [15, 30],
                     "lossless_lcfr": [15, 30]}  # fmt: skip
    assert "checkpoints at 0.5,1 of it (exactly)" in (tmp_path / "fhp_curve.md").read_text()


def test_fhp_curve_cpu_clock_counts_process_seconds_and_refuses_another_clocks_checkpoint(tmp_path):
    """--clock=cpu budgets the process's CPU seconds (runs can share the cores);
    a checkpoint written under one clock is refused under the other."""
    game = "flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"
    base = [sys.executable, os.path.join(ROOT, "benchmarks", "bench_fhp_curve.py"), f"--game={game}",
            "--algorithms=deep_cfr", "--seconds=2", "--fractions=1", f"--checkpoint={tmp_path / 'ckpt'}",
            f"--out_dir={tmp_path / 'out'}", "--deep_cfr={\"num_traversals\": 20, \"advantage_network_train_steps\": 2, "
            "\"policy_network_train_steps\": 2, \"advantage_network_layers\": [8], \"policy_network_layers\": [8]}"]  # fmt: skip
    first = subprocess.run([*base, "--clock=cpu"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert first.returncode == 0, first.stderr[-2000:]
    again = subprocess.run([*base, "--clock=wall", "--seconds=4"], capture_output=True, text=True, timeout=600,
                           cwd=ROOT)  # fmt: skip
    assert again.returncode != 0 and "counted cpu seconds, not --clock=wall" in again.stderr
