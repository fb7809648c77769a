"""The examples fed careless input (benchmarks/sweep_careless_user.py keeps the
sweep and its table): every case ends with exit 0 and its outputs, or with
one `error:` line on stderr and a non-zero exit; never a traceback, a hang, a
silently ignored value or lost rows.

The first part replays the sweep's findings one by one (each failed before
its fix); the second is a property sweep with hypothesis: random flag values
and combinations (wrong types, out of range, empty and duplicated lists,
NaN/inf, huge numbers, bad paths, stray positional arguments) for every
example binary, a handful per binary here and many more under
`@pytest.mark.slow`. Every example runs in its own process on tiny settings,
in a scratch working directory (forked from a warm process that has the heavy
modules imported: `example_runner.py`).
"""

from __future__ import annotations

import csv
import dataclasses
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import pytest
from example_runner import run_script
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A tiny run takes 4-7 s on 2 quiet cores; each case may take 20x that before it counts as hung.
TIMEOUT = 150
# absl's logging lines ("I1123 10:00:00.123 ...") are not messages of the program.
_LOG_LINE = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d")

BINARIES = ["benchmark", "deep_cfr", "cfr_mix", "oftrl_cfr", "head_to_head", "oftrl_endgames", "openspiel_swap",
            "poker_vector_cfr"]  # fmt: skip
# Flags that keep each binary's run to a few seconds.
TINY = {
    "benchmark": ["--game=kuhn_poker", "--seconds=0.5", "--algorithms=cfr+", "--eval_points=2", "--iterations=3"],
    "deep_cfr": ["--iterations=1", "--traversals=10", "--advantage_steps=2", "--policy_steps=2", "--layers=8",
                 "--batch=64", "--memory=1000"],
    "cfr_mix": ["--iterations=1", "--traversals=4", "--train_steps=2", "--hidden=8", "--seconds=3",
                "--variants=cfr_mix", "--eval_every=1", "--particles=5", "--eval_games=20"],
    "oftrl_cfr": ["--game=kuhn_poker", "--iterations=4", "--solvers=cfr,oftrl", "--stepsize_scales=1"],
    "head_to_head": ["--game=kuhn_poker", "--deals=4", "--policies=call,raise"],
    "oftrl_endgames": ["--subgames=4", "--iterations=10", "--evaluations=2", "--algorithms=cfr",
                       "--update_modes=simultaneous"],
    "openspiel_swap": ["--iterations=2", "--episodes=2", "--impl=cfrx"],
    "poker_vector_cfr": ["--game=flop_holdem(num_ranks=4,num_suits=2)", "--iterations=3"],
}  # fmt: skip


@dataclasses.dataclass
class Run:
    command: list[str]
    returncode: int
    stdout: str
    stderr: str
    hung: bool

    @property
    def messages(self) -> list[str]:
        """stderr's lines, absl logging lines and blank lines left out."""
        return [line for line in self.stderr.splitlines() if line.strip() and not _LOG_LINE.match(line)]

    def describe(self) -> str:
        return (f"$ {' '.join(self.command[1:])}\nexit {self.returncode}{' (HUNG)' if self.hung else ''}\n"
                f"--- stdout (end)\n{self.stdout[-1500:]}\n--- stderr (end)\n{self.stderr[-3000:]}")  # fmt: skip


def run_example(name: str, *args: str, cwd: str, tiny: bool = True, timeout: float = TIMEOUT) -> Run:
    """`cfrx_examples/<name>.py` with `args` (after the TINY flags), in `cwd`."""
    command = [sys.executable, os.path.join(ROOT, "cfrx_examples", f"{name}.py"), *(TINY[name] if tiny else []), *args]
    env = {**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    returncode, stdout, stderr, hung = run_script(command[1], command[2:], cwd=cwd, env=env, timeout=timeout)
    return Run(command, returncode, stdout, stderr, hung)


def assert_one_line_error(run: Run, pattern: str = "") -> str:
    """Non-zero exit, no traceback, exactly one message on stderr: `error: ...` matching `pattern`."""
    assert not run.hung, run.describe()
    assert "Traceback" not in run.stdout + run.stderr, run.describe()
    assert run.returncode != 0, run.describe()
    assert len(run.messages) == 1 and run.messages[0].startswith("error: "), run.describe()
    assert re.search(pattern, run.messages[0]), run.describe()
    return run.messages[0]


def assert_ok(run: Run, output_dir: str, *files: str) -> None:
    assert not run.hung and run.returncode == 0, run.describe()
    assert "Traceback" not in run.stdout + run.stderr, run.describe()
    for name in files:
        assert os.path.exists(os.path.join(output_dir, name)), (name, run.describe())


# ================================================ the sweep's findings, one by one
# ---- 5: hangs
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_benchmark_refuses_a_non_finite_budget(tmp_path, value):
    # --seconds=nan ran forever printing "nans".
    assert_one_line_error(run_example("benchmark", f"--seconds={value}", f"--output_dir={tmp_path}/o",
                                      cwd=tmp_path), rf"--seconds must be a finite number, got {value}")  # fmt: skip


def test_deep_cfr_refuses_more_local_ray_workers_than_cores(tmp_path):
    # --traversal_backend=tree --num_workers=1000 was accepted and never made progress.
    run = run_example("deep_cfr", "--traversal_backend=tree", "--num_workers=1000", f"--output_dir={tmp_path}/o",
                      cwd=tmp_path)  # fmt: skip
    assert_one_line_error(run, rf"--num_workers=1000 exceeds this machine's {os.cpu_count()} CPU cores")


# ---- 6: tracebacks
@pytest.mark.parametrize("name, flag, output", [("deep_cfr", "policy_file", "curve.csv"),
                                                ("poker_vector_cfr", "checkpoint", "curve.csv")])  # fmt: skip
def test_a_file_flag_given_a_directory_is_refused_before_any_work(tmp_path, name, flag, output):
    # deep_cfr.py failed after training; poker_vector_cfr.py printed two lines (found by the property sweep).
    run = run_example(name, f"--{flag}={tmp_path}", f"--output_dir={tmp_path}/o", cwd=tmp_path)
    assert_one_line_error(run, rf"--{flag}=.* is a directory; give a file path")
    assert not os.path.exists(tmp_path / "o" / output)  # refused before any work


@pytest.mark.parametrize("flags, message", [
    (["--torch_threads=0", "--algorithms=deep_cfr"], r"--torch_threads must be >= 1, got 0"),
    (["--algorithms=cfr_mix"], r"--algorithms=cfr_mix needs a factored team game.*kuhn_poker is not one"),
])  # fmt: skip
def test_benchmark_refusals(tmp_path, flags, message):
    assert_one_line_error(run_example("benchmark", *flags, f"--output_dir={tmp_path}/o", cwd=tmp_path), message)


def test_poker_vector_cfr_on_hulh_is_one_line_without_the_isomorphism_it_already_uses(tmp_path):
    run = run_example("poker_vector_cfr", "--game=hulh", f"--output_dir={tmp_path}/o", cwd=tmp_path, tiny=False)
    # which estimate refuses first depends on the memory free at the time (a loaded machine: the per-thread one)
    message = assert_one_line_error(run, r"needs ~[0-9.]+ (TiB .* use a smaller game|GiB per thread .* use a smaller deck)")
    assert "isomorphism" not in message


def test_oftrl_endgames_needs_two_evaluations(tmp_path):
    # --evaluations=1 divided by zero in log_points.
    run = run_example("oftrl_endgames", "--evaluations=1", f"--output_dir={tmp_path}/o", cwd=tmp_path)
    assert_one_line_error(run, r"--evaluations must be >= 2, got 1")


@pytest.mark.parametrize("name, plot", [("deep_cfr", "curve.png"), ("benchmark", "exploitability_vs_seconds.png")])
def test_a_full_disk_under_the_plot_is_one_line(tmp_path, name, plot):
    """The PNG written into /dev/full (ENOSPC on write): PIL's OSError was a traceback."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    out = tmp_path / "o"
    out.mkdir()
    os.symlink("/dev/full", out / plot)
    run = run_example(name, f"--output_dir={out}", cwd=tmp_path)
    assert_one_line_error(run, r"cannot write .*No space left on device; free some space")


# ---- 7: silent or misleading
@pytest.mark.parametrize("name", BINARIES)
def test_positional_arguments_are_refused(tmp_path, name):
    # `deep_cfr.py leduc_poker` ran kuhn_poker.
    run = run_example(name, "leduc_poker", f"--output_dir={tmp_path}/o", cwd=tmp_path)
    assert_one_line_error(run, r"unexpected argument\(s\) 'leduc_poker': flags only")


def test_a_bad_flag_value_is_one_line(tmp_path):
    run = run_example("oftrl_cfr", "--iterations=abc", f"--output_dir={tmp_path}/o", cwd=tmp_path)
    assert_one_line_error(run, r"^error: flag --iterations=abc: invalid literal .*--helpshort lists the flags")


@pytest.mark.parametrize("name, flag, message", [
    ("oftrl_cfr", "--solvers=", r"--solvers is empty"),
    ("benchmark", "--algorithms=", r"--algorithms is empty"),
    ("oftrl_endgames", "--algorithms=", r"--algorithms is empty"),
    ("oftrl_endgames", "--subgames=", r"--subgames is empty"),
    ("oftrl_cfr", "--stepsize_scales=", r"--stepsize_scales is empty"),  # silently dropped OFTRL
    ("head_to_head", "--policies=call", r"names one policy; a round-robin needs at least two"),
    ("cfr_mix", "--variants=", r"--variants is empty"),
    ("deep_cfr", "--output_dir=", r"--output_dir is empty"),
])  # fmt: skip
def test_empty_lists_are_refused(tmp_path, name, flag, message):
    assert_one_line_error(run_example(name, f"--output_dir={tmp_path}/o", flag, cwd=tmp_path), message)


@pytest.mark.parametrize("name, flag", [("oftrl_cfr", "--solvers=cfr,cfr"), ("benchmark", "--algorithms=cfr+,cfr+"),
                                        ("cfr_mix", "--variants=cfr_mix,cfr_mix"), ("oftrl_endgames", "--subgames=4,4"),
                                        ("oftrl_cfr", "--stepsize_scales=1,1.0")])  # fmt: skip
def test_duplicates_are_refused(tmp_path, name, flag):
    assert_one_line_error(run_example(name, flag, f"--output_dir={tmp_path}/o", cwd=tmp_path), r"more than once|twice")


def test_negative_tuned_scales_name_the_flag(tmp_path):
    # --tuned_scales=-10 reported a gap of -356798809.07.
    run = run_example("oftrl_endgames", "--tuned_scales=-10", "--algorithms=oftrl_tuned", f"--output_dir={tmp_path}/o",
                      cwd=tmp_path)  # fmt: skip
    assert_one_line_error(run, r"--tuned_scales entry must be > 0, got -10")


def test_negative_eval_points_name_the_flag(tmp_path):
    run = run_example("benchmark", "--eval_points=-3", f"--output_dir={tmp_path}/o", cwd=tmp_path)
    assert_one_line_error(run, r"--eval_points must be >= 1, got -3")


def test_game_names_in_the_wrong_case_get_a_suggestion(tmp_path):
    run = run_example("oftrl_cfr", "--game=KUHN_POKER", f"--output_dir={tmp_path}/o", cwd=tmp_path)
    assert_one_line_error(run, r"unknown game 'KUHN_POKER'.*did you mean kuhn_poker")


def test_ctrl_c_in_benchmark_keeps_the_current_algorithms_points(tmp_path):
    """SIGINT mid-algorithm: the points it printed are in benchmark.csv (they were dropped)."""
    out = tmp_path / "o"
    command = [sys.executable, os.path.join(ROOT, "cfrx_examples", "benchmark.py"), "--game=leduc_poker",
               "--algorithms=cfr", "--seconds=300", "--eval_points=60", f"--output_dir={out}"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": ROOT, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    printed = []
    deadline = time.monotonic() + TIMEOUT
    for line in proc.stdout:
        if line.startswith("  cfr "):
            printed.append(line)
        if len(printed) == 3 or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=TIMEOUT)
    assert len(printed) == 3
    assert proc.returncode != 0 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith("interrupted (Ctrl-C) during cfr")
    with open(out / "benchmark.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 3 and {r["solver"] for r in rows} == {"cfr"}


def test_deep_cfr_game_help_recommends_games_it_evaluates(tmp_path):
    """The help recommended 5x2 flop hold'em, which deep_cfr.py refused (46.8 GiB tree); now it
    recommends 4x2 and names --preset=fhp_5x2, which trains without exact evaluation by default."""
    command = [sys.executable, os.path.join(ROOT, "cfrx_examples", "deep_cfr.py")]
    env = {**os.environ, "PYTHONPATH": ROOT, "PYTHONUNBUFFERED": "1"}
    helped = subprocess.run([*command, "--helpfull"], capture_output=True, text=True, cwd=tmp_path, env=env,
                            timeout=TIMEOUT)  # fmt: skip
    text = " ".join(helped.stdout.split())
    assert "flop_holdem(num_ranks=4,num_suits=2)" in text and "'flop_holdem(num_ranks=5,num_suits=2)'" not in text
    assert "Larger poker (5x2 flop hold'em: --preset=fhp_5x2) trains with --noevaluate" in text
    proc = subprocess.Popen([*command, "--preset=fhp_5x2", "--iterations=1", f"--output_dir={tmp_path}/o"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        first = ""
        for line in proc.stdout:
            if line.startswith("preset fhp_5x2: training without exact evaluation"):
                first = line
                break
        assert first, proc.stderr.read() if proc.poll() is not None else "no preset line"
    finally:
        proc.kill()  # the preset's first iteration takes minutes: its start is what is checked
        proc.communicate(timeout=TIMEOUT)


@pytest.mark.slow
def test_deep_cfr_evaluates_the_game_its_help_recommends(tmp_path):
    run = run_example("deep_cfr", "--game=flop_holdem(num_ranks=4,num_suits=2)", f"--output_dir={tmp_path}/o",
                      cwd=tmp_path, timeout=1800)  # fmt: skip
    assert_ok(run, str(tmp_path / "o"), "curve.csv", "curve.png")


def test_poker_vector_cfr_reports_readable_units_and_the_rate_after_start_up(tmp_path):
    out = tmp_path / "o"
    run = run_example("poker_vector_cfr", "--iterations=30", f"--output_dir={out}", cwd=tmp_path)
    assert_ok(run, str(out), "curve.csv", "summary.md")
    assert "0.00 GiB" not in run.stdout + run.stderr and "~0 min" not in run.stdout
    assert re.search(r"~[0-9.]+ (KiB|MiB) of float32 arrays", run.stdout), run.describe()
    with open(out / "curve.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    t = [int(r["iteration"]) for r in rows]
    seconds = [float(r["seconds"]) for r in rows]
    rate = float(re.search(r"([0-9.e+]+) iterations/s", run.stdout).group(1))
    # Measured between the first and last evaluations: the first iteration (numba compiling) is left out.
    assert rate == pytest.approx((t[-1] - t[0]) / (seconds[-1] - seconds[0]), rel=2e-3)
    assert f"the first {t[0]} took {seconds[0]:.1f} s, start-up included" in run.stdout


# ============================================================= property sweep
INT_BAD = ["-1", "0", "abc", "", "1.5", "nan", "1e3", " "]
INT_HUGE = ["99999999999999999999", str(2**63)]
FLOAT_BAD = ["nan", "inf", "-inf", "-1", "0", "abc", "", "NaN"]
FLOAT_HUGE = ["1e308", "1e-300"]
GAMES = ["", " ", "KUHN_POKER", "no_such_game", "kuhn_poker(players=3)", "kuhn_poker(", "kuhn_poker(foo=1)",
         "matrix_rps", "leduc_poker", "goofspiel(num_cards=3)", "tiny_hanabi", "kuhn_poker()"]  # fmt: skip
DEVICES = ["cuda", "tpu", "cuda:7", "", "CPU", "cpu"]
SEEDS = ["-1", "abc", "1.5", str(2**31), *INT_HUGE, "7"]


def _list(valid: str, *more: str) -> list[str]:
    """Bad list values built around one valid entry, and `more` valid or bad ones."""
    return ["", ",", f"{valid},{valid}", f"{valid},", f",{valid}", "bogus", f"{valid},bogus", f" {valid} ",
            f"{valid.upper()}", *more]  # fmt: skip


# Per binary: flag -> values to try (bad ones, huge ones where a value does not set the run's length, and
# valid alternatives that stay small); "<file>", "<dir>" and "<missing>" become paths in the scratch dir.
PATHS = ["", "<file>", "/proc/x", "<dir>/a/b", "<missing>"]
FLAG_VALUES = {
    "benchmark": {
        "game": GAMES, "seconds": [*FLOAT_BAD, "0.3"], "iterations": ["-1", "abc", "1", "0"],
        "eval_every": [*INT_BAD, *INT_HUGE, "1"], "eval_points": [*INT_BAD, *INT_HUGE, "1", "3"],
        "algorithms": _list("cfr+", "cfr,dcfr", "os_cfr", "cfr_mix", "os_es_mccfr", "pcfr+,oftrl"),
        "torch_threads": [*INT_BAD, *INT_HUGE, "2"], "seed": SEEDS, "device": DEVICES, "quiet": None,
        "output_dir": PATHS,
    },
    "deep_cfr": {
        "game": GAMES, "iterations": ["-1", "0", "abc", "2"], "eval_every": [*INT_BAD, *INT_HUGE, "1"],
        "traversals": ["-1", "0", "abc", "5"], "advantage_steps": ["-1", "0", "abc", "1"],
        "policy_steps": ["-1", "0", "abc", "1"], "batch": [*INT_BAD, *INT_HUGE, "1"],
        "memory": [*INT_BAD, *INT_HUGE, "10"], "layers": ["", ",", "8,0", "a", "-1", "8,8", "1.5", *INT_HUGE],
        "network": ["bogus", "", "plain_mlp"], "learning_rate": [*FLOAT_BAD, *FLOAT_HUGE],
        "learning_rate_schedule": ["bogus", "cosine"], "traversal_backend": ["bogus", "tree", "state", "poker"],
        "threads": [*INT_BAD, *INT_HUGE, "2"], "regret_scale": ["0", "-1", "nan", "inf", "abc", "", "auto", "pot"],
        "average_weighting": ["bogus", "uniform"], "preset": ["bogus", "kuhn_demo", "FHP_5X2"], "sd_cfr": None,
        "checkpoint_dir": PATHS, "policy_file": [*PATHS, "<dir>/"], "progress": None,
        "num_workers": ["0", "-1", "1000", "abc", "1"], "ray_address": ["auto", "x:1"], "seed": SEEDS,
        "device": DEVICES, "output_dir": PATHS,
    },
    "cfr_mix": {
        "game": ["", "kuhn_poker", "TEAM_GOOFSPIEL", "team_goofspiel(num_cards=99)", "team_goofspiel(bogus=1)",
                 "no_such_game"],
        "variants": _list("cfr_mix", "independent", "deep_cfr", "deep_cfr_joint,double_neural_joint"),
        "seconds": [*FLOAT_BAD, "1"], "iterations": ["-1", "0", "abc", "2"], "traversals": ["-1", "0", "abc"],
        "hidden": ["", "0", "a", "8,8", ","], "train_steps": ["-1", "0", "abc"],
        "joint_cap": [*INT_BAD, *INT_HUGE, "1"], "exact_max_histories": [*INT_BAD, *INT_HUGE, "10"],
        "particles": ["-1", "0", "abc", "2"], "eval_games": ["-1", "0", "abc", "3"],
        "infoset_encoding": ["bogus", "compact"], "eval_every": [*INT_BAD, *INT_HUGE],
        "checkpoint_dir": PATHS, "num_workers": ["0", "-1", "1000"], "seed": SEEDS, "device": DEVICES,
        "output_dir": PATHS,
    },
    "oftrl_cfr": {
        "game": GAMES, "iterations": ["-1", "0", "abc", "6"], "eval_every": [*INT_BAD, *INT_HUGE, "1"],
        "solvers": _list("cfr", "oftrl", "dcfr,pcfr+", "lcfr,cfr+"),
        "update_mode": ["bogus", "both", "simultaneous"],
        "stepsize_scales": ["", "-10", "0", "nan", "inf", "1,1", "abc", *FLOAT_HUGE, "1,1000", ","],
        "kappa": [*FLOAT_BAD, *FLOAT_HUGE, "0.5"], "openspiel_baselines": ["", "bogus", "cpp_cfr,cpp_cfr",
                                                                          "python_cfr", "cpp_cfr"],
        "baseline_seconds": [*FLOAT_BAD, "1e308"], "quiet": None, "seed": SEEDS, "device": DEVICES,
        "output_dir": PATHS, "save_policy": [*PATHS, "<dir>/"],
    },
    "head_to_head": {
        "game": [*GAMES, "leduc_poker"], "deals": ["-1", "0", "1", "abc", "3"], "iterations": ["-1", "0", "abc", "2"],
        "policies": ["", "call", "call,call", "call,bogus", "call,cfr+:x", "call,cfr+:0", "call,cfr+:3",
                     "call,deep_cfr", "call,deep_cfr:<missing>", "call,deep_cfr:<file>", "call,uniform",
                     "call,raise,uniform", "call,nfsp:abc", "raise:1,call", ",call", "CALL,raise"],
        "eval_every": ["1", "-1"], "seed": SEEDS, "device": DEVICES, "output_dir": PATHS,
    },
    "oftrl_endgames": {
        "subgames": ["", "0", "5", "4,4", "x", "3", ",4", "-1"], "iterations": ["-1", "9", "abc", "12"],
        "evaluations": ["1", "0", "-1", "abc", *INT_HUGE, "3"],
        "algorithms": _list("cfr", "oftrl_theory", "oftrl_tuned", "dcfr"),
        "update_modes": _list("simultaneous", "alternating"),
        "tuned_scales": ["", "-10", "0", "nan", "1,1", "abc", "1e308", "10"], "oftrl_units": ["bogus", "bounded", "chips,bounded", "chips,chips"],
        "threads": [*INT_BAD, *INT_HUGE], "jobs": [*INT_BAD, *INT_HUGE], "data_dir": ["<missing>", "<file>", "<dir>"],
        "output_dir": PATHS, "runs_dir": ["<missing>", "<file>", "<dir>"], "extend_edges": None,
        "max_extensions": [*INT_BAD, "101", "1"],
    },
    "openspiel_swap": {
        "game": GAMES, "solver": ["bogus", "dcfr", "cfr_plus"], "impl": ["bogus", "both"],
        "iterations": ["-1", "0", "abc", "3"], "episodes": ["-1", "0", "abc", "3"], "seed": SEEDS,
        "output_dir": PATHS,
    },
    "poker_vector_cfr": {
        "game": ["", "kuhn_poker", "hulh", "FLOP_HOLDEM", "flop_holdem(num_ranks=99)", "leduc_poker",
                 "flop_holdem(num_ranks=3,num_suits=2)"],
        "variant": ["bogus", "dcfr", "oftrl", "pcfr+"], "update_mode": ["bogus", "simultaneous"],
        "max_minutes": [*FLOAT_BAD, "1e308"], "isomorphism": None, "threads": [*INT_BAD, *INT_HUGE],
        "chunk_boards": [*INT_BAD, *INT_HUGE, "1"], "checkpoint": ["<dir>", "/proc/x/c.npz", "<file>", "<missing>"],
        "checkpoint_minutes": [*FLOAT_BAD, "1e-300"], "fresh": None, "eval_every": [*INT_BAD, *INT_HUGE, "1"],
        "iterations": ["-1", "0", "abc", "2"], "seed": SEEDS, "device": DEVICES, "output_dir": PATHS,
        "save_strategy": [*PATHS, "<dir>/"],
    },
}  # fmt: skip
OUTPUTS = {"benchmark": "benchmark.csv", "deep_cfr": "curve.csv", "cfr_mix": "curves.csv", "oftrl_cfr": "curves.csv",
           "head_to_head": "head_to_head.csv", "oftrl_endgames": "summary.md", "openspiel_swap": "results.csv",
           "poker_vector_cfr": "curve.csv"}  # fmt: skip


@st.composite
def flag_sets(draw, name: str):
    """1-4 flags of `name` set to drawn values (a bool flag: --flag or --noflag), and maybe a stray argument."""
    values = FLAG_VALUES[name]
    chosen = draw(st.lists(st.sampled_from(sorted(values)), min_size=1, max_size=4, unique=True))
    args = []
    for flag in chosen:
        if values[flag] is None:
            args.append(draw(st.sampled_from([f"--{flag}", f"--no{flag}"])))
        else:
            args.append(f"--{flag}={draw(st.sampled_from(values[flag]))}")
    if draw(st.integers(0, 9)) == 0:
        args.insert(draw(st.integers(0, len(args))), draw(st.sampled_from(["leduc_poker", "-", "--", "x=1"])))
    return args


def _materialise(args: list[str], scratch: str) -> list[str]:
    """Replaces the path placeholders by paths in `scratch` (a file, a directory, a missing path)."""
    file_path = os.path.join(scratch, "a_file")
    with open(file_path, "w", encoding="utf-8") as f:
        f.write("not a checkpoint\n")
    os.makedirs(os.path.join(scratch, "a_dir"), exist_ok=True)
    places = {"<file>": file_path, "<dir>": os.path.join(scratch, "a_dir"), "<missing>": os.path.join(scratch, "nope")}
    out = []
    for arg in args:
        for key, path in places.items():
            arg = arg.replace(key, path)
        out.append(arg)
    return out


def check_careless_run(name: str, args: list[str]) -> None:
    """Runs `name` on its TINY flags with `args` last (so they win) and
    checks: exit 0 with its main output written, or one `error:` line and a
    non-zero exit; never a traceback or a hang."""
    scratch = tempfile.mkdtemp(prefix=f"sweep-{name}-")
    output_dir = os.path.join(scratch, "out")
    args = _materialise([f"--output_dir={output_dir}", *args], scratch)
    run = run_example(name, *args, cwd=scratch)
    assert not run.hung, "HUNG\n" + run.describe()
    assert "Traceback" not in run.stdout + run.stderr, "TRACEBACK\n" + run.describe()
    if run.returncode == 0:
        used = [a.split("=", 1)[1] for a in args if a.startswith("--output_dir=")][-1]
        assert os.path.exists(os.path.join(used, OUTPUTS[name])), "exit 0 WITHOUT OUTPUTS\n" + run.describe()
    else:
        assert len(run.messages) == 1, "NOT ONE LINE\n" + run.describe()
        assert run.messages[0].startswith(("error: ", "interrupted")), "NOT AN ERROR LINE\n" + run.describe()


@pytest.mark.parametrize("name", BINARIES)
@settings(max_examples=1, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip
@given(data=st.data())
def test_careless_flags_end_in_outputs_or_one_error_line(name, data):
    check_careless_run(name, data.draw(flag_sets(name), label="flags"))


@pytest.mark.slow
@pytest.mark.parametrize("name", BINARIES)
@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip
@given(data=st.data())
def test_careless_flags_many_random_combinations(name, data):
    check_careless_run(name, data.draw(flag_sets(name), label="flags"))
