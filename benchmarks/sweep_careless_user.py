r"""The careless-user sweep: every example binary and the Python API fed bad
games, bad numbers (NaN, inf, negative, huge), empty and duplicated lists,
stray positional arguments, bad paths (a file for a directory, a directory
for a file, /proc, a full disk), unsupported and too-large games, policies
naming actions the game does not have, Ctrl-C and SIGKILL mid-run with
resume, damaged checkpoints; each case in a fresh process under
`ulimit -v 8000000` and a time limit, classified as

* `ok`: the case should succeed and did (exit 0, its outputs written, and
  what it printed passes the case's check);
* `clear error`: non-zero exit, no traceback, exactly one message line on
  stderr (`error: ...` or `interrupted ...`), saying what the case needs;
* failures: `traceback`, `hang` (time limit), `silent wrong` (a bad input
  accepted, or a misleading message or number), `lost rows` (an
  interrupted or resumed run whose rows differ from the uninterrupted
  run's), `unclear error` (more than one line, or no `error:` line),
  `wrongly refused` (a valid input refused).

    PYTHONPATH=. .venv/bin/python benchmarks/sweep_careless_user.py [--quick]

Writes benchmarks/results/careless_user.md (--output): the generated header,
the totals and a table (case, command, outcome, first stderr line); exits 1
if any case fails. --quick runs the cases of the latest sweep only (no
interrupt/resume cases).
"""

from __future__ import annotations

import csv
import dataclasses
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import markdown_table, write_result  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMORY_KB = 8_000_000
FAILURES = ("traceback", "hang", "silent wrong", "lost rows", "unclear error", "wrongly refused")
_LOG_LINE = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d")  # absl logging lines are not messages

FLAGS = flags.FLAGS
flags.DEFINE_bool("quick", False, "Only the cases of the latest sweep (no interrupt/resume cases; a few minutes).")
flags.DEFINE_string("output", os.path.join(ROOT, "benchmarks/results/careless_user.md"), "Results page to write.")
flags.DEFINE_integer("time_limit", 240, "Seconds before a case counts as hung (a tiny run takes 4-7 s on 2 cores).")

EXAMPLES = ["deep_cfr", "cfr_mix", "oftrl_cfr", "head_to_head", "benchmark", "openspiel_swap", "poker_vector_cfr",
            "oftrl_endgames"]  # fmt: skip
# The tiny settings every example case runs with (its own flags come after them and win).
FAST = {
    "deep_cfr": ["--iterations=2", "--traversals=20", "--advantage_steps=2", "--policy_steps=2", "--layers=8"],
    "cfr_mix": ["--iterations=1", "--traversals=5", "--train_steps=2", "--hidden=8", "--seconds=5"],
    "oftrl_cfr": ["--iterations=5", "--game=kuhn_poker"],
    "head_to_head": ["--deals=10", "--game=kuhn_poker"],
    "benchmark": ["--seconds=1", "--algorithms=cfr+"],
    "openspiel_swap": ["--iterations=2", "--episodes=2"],
    "poker_vector_cfr": ["--iterations=3", "--game=flop_holdem(num_ranks=4,num_suits=2)"],
    "oftrl_endgames": ["--subgames=4", "--iterations=10", "--evaluations=2", "--algorithms=cfr",
                       "--update_modes=simultaneous"],
}  # fmt: skip


@dataclasses.dataclass
class Case:
    area: str
    description: str
    command: list[str]
    shown: str  # the command as the table shows it
    expect: str  # "ok" or "error"
    message: str = ""  # regex the error line (or, for "ok", the output) must match, else `silent wrong`
    check: Callable | None = None  # check(stdout, stderr) -> outcome or None, after the generic classification
    latest: bool = False  # a case of the latest sweep (run by --quick)


def example(name: str, *args: str, fast: bool = True) -> tuple[list[str], str]:
    command = [sys.executable, os.path.join(ROOT, "cfrx_examples", f"{name}.py"), *(FAST[name] if fast else []), *args]
    return command, f"{name}.py " + " ".join(args)


def api(code: str) -> tuple[list[str], str]:
    """A Python API call: a refusal (ValueError or one of its subclasses,
    TrainingDivergedError, CheckpointWriteError) prints `error: Type: message`
    and exits 2, as a caller catching it would; a failed `assert` (a wrong
    result) prints `WRONG: ...` and exits 3; anything else is a traceback."""
    body = "\n".join("    " + line for line in code.splitlines())
    program = (
        "import sys, pickle, games, pyspiel, openspiel_cfrx as ox\nfrom open_spiel.python import policy\n"
        "from openspiel_cfrx.deep.validation import TrainingDivergedError\n"
        "from openspiel_cfrx.checkpoint_io import CheckpointWriteError\n"
        f"try:\n{body}\n"
        "except (ValueError, TrainingDivergedError, CheckpointWriteError) as e:\n"
        "    print(f'error: {type(e).__name__}: {e}', file=sys.stderr); sys.exit(2)\n"
        "except AssertionError as e:\n"
        "    print(f'WRONG: {e}', file=sys.stderr); sys.exit(3)\n"
    )  # fmt: skip
    return [sys.executable, "-c", program], " ; ".join(line.strip() for line in code.splitlines())


def _case(area, description, built, expect, message="", check=None, latest=False) -> Case:
    command, shown = built
    return Case(area, description, command, shown, expect, message, check, latest)


def _no_text(*patterns: str) -> Callable:
    """A check: `silent wrong` if the output shows any of `patterns`."""

    def check(stdout: str, stderr: str):
        for pattern in patterns:
            if re.search(pattern, stdout + stderr):
                return "silent wrong"
        return None

    return check


def latest_cases(tmp: str) -> list[Case]:
    """The cases of the latest sweep (5: hangs, 6: tracebacks, 7: silent or misleading)."""
    full = os.path.join(tmp, "full")
    os.makedirs(full, exist_ok=True)
    if os.path.exists("/dev/full"):
        os.symlink("/dev/full", os.path.join(full, "curve.png"))
    deep = "ox.DeepCFRSolver(g, num_iterations=2, num_traversals=20, advantage_network_train_steps=2, " \
           "policy_network_train_steps=2, advantage_network_layers=(8,), policy_network_layers=(8,))"  # fmt: skip
    kuhn = "g = pyspiel.load_game('kuhn_poker')\n"
    cases = [
        # 5: hangs
        _case("benchmark", "--seconds=nan ran forever", example("benchmark", "--seconds=nan", f"--output_dir={tmp}/b"),
              "error", r"--seconds must be a finite number"),
        _case("benchmark", "--seconds=inf", example("benchmark", "--seconds=inf", f"--output_dir={tmp}/b"), "error",
              r"--seconds must be a finite number"),
        _case("deep_cfr", "1000 local Ray workers, tree backend", example(
            "deep_cfr", "--traversal_backend=tree", "--num_workers=1000", f"--output_dir={tmp}/d"), "error",
            r"exceeds this machine's \d+ CPU cores"),
        # 6: tracebacks
        _case("deep_cfr", "--policy_file is a directory", example("deep_cfr", f"--policy_file={tmp}",
                                                                   f"--output_dir={tmp}/d"), "error", "is a directory"),
        _case("poker_vector_cfr", "--checkpoint is a directory", example("poker_vector_cfr", f"--checkpoint={tmp}",
                                                                        f"--output_dir={tmp}/p"), "error",
              "is a directory"),
        _case("benchmark", "--torch_threads=0 with deep_cfr", example(
            "benchmark", "--torch_threads=0", "--algorithms=deep_cfr", f"--output_dir={tmp}/b"), "error",
            "--torch_threads must be >= 1"),
        _case("benchmark", "cfr_mix on kuhn_poker", example("benchmark", "--algorithms=cfr_mix", f"--output_dir={tmp}/b"),
              "error", "needs a factored team game"),
        _case("poker_vector_cfr", "hulh (too large)", example("poker_vector_cfr", "--game=hulh", f"--output_dir={tmp}/p",
                                                              fast=False), "error", r"TiB.*use a smaller game",
              _no_text("isomorphism=True")),
        _case("oftrl_endgames", "--evaluations=1", example("oftrl_endgames", "--evaluations=1", f"--output_dir={tmp}/e"),
              "error", "--evaluations must be >= 2"),
        _case("deep_cfr", "disk full under the PNG (/dev/full)", example("deep_cfr", f"--output_dir={full}"), "error",
              "No space left on device"),
        _case("api", "policy gives an action the game lacks ({7: 1.0})", api(
            kuhn + "class P(policy.Policy):\n  def action_probabilities(self, s, p=None): return {7: 1.0}\n"
            "ox.nash_conv(g, P(g, [0, 1]))"), "error", r"action 7 at infoset '0' of player 0"),
        _case("api", "pickle CFRPlusSolver", api(kuhn + "s = ox.CFRPlusSolver(g); s.run(3)\n"
                                                 "t = pickle.loads(pickle.dumps(s)); t.run(2); assert t.iteration == 5"),
              "ok"),
        _case("api", "pickle DeepCFRSolver and continue", api(
            kuhn + f"s = {deep}; s.solve()\nt = pickle.loads(pickle.dumps(s)); t.run_iteration()\n"
            "assert t.iteration == 3"), "ok"),
        _case("api", "CFRSolver.save(a directory)", api(kuhn + f"ox.CFRSolver(g).save({tmp!r})"), "error",
              "is a directory"),
        # 7: silent or misleading
        _case("deep_cfr", "positional argument (ran kuhn_poker)", example("deep_cfr", "leduc_poker",
                                                                         f"--output_dir={tmp}/d"), "error",
              r"unexpected argument.*did you mean --game=leduc_poker"),
        _case("oftrl_cfr", "--solvers= (empty)", example("oftrl_cfr", "--solvers=", f"--output_dir={tmp}/o"), "error",
              "is empty"),
        _case("benchmark", "--algorithms= (empty)", example("benchmark", "--algorithms=", f"--output_dir={tmp}/b"),
              "error", "is empty"),
        _case("oftrl_endgames", "--subgames= (empty)", example("oftrl_endgames", "--subgames=", f"--output_dir={tmp}/e"),
              "error", "is empty"),
        _case("oftrl_cfr", "--stepsize_scales= (dropped OFTRL)", example("oftrl_cfr", "--stepsize_scales=",
                                                                        f"--output_dir={tmp}/o"), "error", "is empty"),
        _case("head_to_head", "--policies=call (no pair)", example("head_to_head", "--policies=call",
                                                                   f"--output_dir={tmp}/h"), "error", "at least two"),
        _case("oftrl_cfr", "--solvers=cfr,cfr", example("oftrl_cfr", "--solvers=cfr,cfr", f"--output_dir={tmp}/o"),
              "error", "more than once"),
        _case("benchmark", "--algorithms=cfr+,cfr+", example("benchmark", "--algorithms=cfr+,cfr+",
                                                             f"--output_dir={tmp}/b"), "error", "more than once"),
        _case("oftrl_endgames", "--tuned_scales=-10", example("oftrl_endgames", "--tuned_scales=-10",
                                                              "--algorithms=oftrl_tuned", f"--output_dir={tmp}/e"),
              "error", r"--tuned_scales entry must be > 0, got -10"),
        _case("benchmark", "--eval_points=-3", example("benchmark", "--eval_points=-3", f"--output_dir={tmp}/b"), "error",
              r"--eval_points must be >= 1, got -3"),
        _case("api", "second DeepCFRSolver.solve() runs num_iterations more", api(
            kuhn + f"s = {deep}; s.solve(); s.solve()\nassert s.iteration == 4, f'iteration {{s.iteration}}'"), "ok"),
        _case("api", "second CFRMixSolver.solve()", api(
            "g = pyspiel.load_game('team_goofspiel(num_cards=3,num_agents=2,num_turns=2)')\n"
            "s = ox.CFRMixSolver(g, num_iterations=1, num_traversals=5, regret_train_steps=2, policy_train_steps=2)\n"
            "s.solve(); s.solve()\nassert s.iteration == 2, f'iteration {s.iteration}'"), "ok"),
        _case("deep_cfr", "--preset=fhp_5x2 (the --game help's 5x2 FHP)", example(
            "deep_cfr", "--preset=fhp_5x2", "--iterations=1", f"--output_dir={tmp}/d5", fast=False), "starts",
            r"preset fhp_5x2: training without exact evaluation"),
        _case("deep_cfr", "the help's 4x2 flop hold'em, exactly evaluated", example(
            "deep_cfr", "--game=flop_holdem(num_ranks=4,num_suits=2)", "--iterations=1", f"--output_dir={tmp}/d4"),
            "ok", r"NashConv"),
        _case("api", "a group given the old way, as its main field's name", api(
            "ox.DeepCFRSolver(pyspiel.load_game('kuhn_poker'), network='poker')"), "error",
            r"network='poker' is spelled network=NetworkSettings\(family='poker'\)"),
        _case("api", "load_game('KUHN_POKER')", api("ox.load_game('KUHN_POKER')"), "error",
              r"did you mean kuhn_poker"),
        _case("poker_vector_cfr", "sizes and rates in sensible units", example(
            "poker_vector_cfr", "--iterations=30", f"--output_dir={tmp}/pv"), "ok", r"MiB of float32",
            _no_text(r"~0\.00 GiB", r"~0 min", r"(?<!start-up )included\)")),
    ]  # fmt: skip
    for c in cases:
        c.latest = True
    return cases


def earlier_cases(tmp: str) -> list[Case]:
    """The cases of the earlier sweep (bad games, numbers, paths, devices, API refusals), over every example."""
    file_path = os.path.join(tmp, "a_file")
    open(file_path, "w").close()
    readonly = os.path.join(tmp, "readonly")
    os.makedirs(readonly, exist_ok=True)
    os.chmod(readonly, 0o500)
    out = []
    game_flag = {"oftrl_endgames": None}  # no --game
    for name in EXAMPLES:
        od = f"--output_dir={tmp}/{name}"
        if game_flag.get(name, "game"):
            out += [
                _case(name, "unknown game", example(name, "--game=no_such_game(x=1)", od), "error", "unknown game"),
                _case(name, "misspelt game", example(name, "--game=leduk_poker", od), "error", "did you mean"),
                _case(name, "unknown parameter", example(name, "--game=kuhn_poker(foo=1)", od), "error", "foo"),
            ]
        out += [
            _case(name, "output_dir is a file", example(name, f"--output_dir={file_path}"), "error", "is a file"),
            _case(name, "output_dir under /proc", example(name, "--output_dir=/proc/x"), "error", "not writable"),
            _case(name, "empty --output_dir", example(name, "--output_dir="), "error", "is empty"),
            _case(name, "runs on its tiny settings", example(name, od), "ok"),
            _case(name, "bad flag type", example(name, "--iterations=abc", od), "error", "invalid literal"),
        ]
        if os.geteuid() != 0:  # root writes anywhere
            out.append(_case(name, "read-only output_dir", example(name, f"--output_dir={readonly}/x"), "error",
                             "not writable"))  # fmt: skip
        if name not in ("openspiel_swap", "oftrl_endgames"):
            out.append(_case(name, "--device=tpu", example(name, "--device=tpu", od), "error", "tpu"))
        if name not in ("head_to_head",):
            out.append(_case(name, "--iterations=-5", example(name, "--iterations=-5", od, fast=False), "error",
                             "iterations"))  # fmt: skip
    s = f"--output_dir={tmp}/s"
    out += [
        _case("openspiel_swap", "--episodes=-1", example("openspiel_swap", "--episodes=-1", s), "error", "episodes"),
        _case("deep_cfr", "--traversals=0", example("deep_cfr", "--traversals=0", s), "error", "traversals"),
        _case("deep_cfr", "--learning_rate=inf", example("deep_cfr", "--learning_rate=inf", s), "error", "finite"),
        _case("deep_cfr", "--learning_rate=-1", example("deep_cfr", "--learning_rate=-1", s), "error", "> 0"),
        _case("deep_cfr", "--layers=a,b", example("deep_cfr", "--layers=a,b", s), "error", "layers"),
        _case("deep_cfr", "--seed=-1", example("deep_cfr", "--seed=-1", s), "error", "--seed must be >= 0"),
        _case("deep_cfr", "full flop_holdem, state backend", example(
            "deep_cfr", "--game=flop_holdem", "--traversal_backend=state", s), "error", "GiB"),
        _case("deep_cfr", "3-player kuhn", example("deep_cfr", "--game=kuhn_poker(players=3)", s), "error", "player"),
        _case("deep_cfr", "general-sum game", example("deep_cfr", "--game=tiny_hanabi", s), "error", "zero-sum"),
        _case("deep_cfr", "simultaneous-move game", example("deep_cfr", "--game=matrix_pd", s), "error", "simultaneous"),
        _case("cfr_mix", "--traversals=0", example("cfr_mix", "--traversals=0", s), "error", "traversals"),
        _case("cfr_mix", "not a team game", example("cfr_mix", "--game=kuhn_poker", s), "error", "team game"),
        _case("cfr_mix", "--seconds=0", example("cfr_mix", "--seconds=0", s), "error", "seconds"),
        _case("cfr_mix", "--variants=cfr_mix,cfr_mix", example("cfr_mix", "--variants=cfr_mix,cfr_mix", s), "error",
              "more than once"),
        _case("oftrl_cfr", "--stepsize_scales=-1", example("oftrl_cfr", "--stepsize_scales=-1", s), "error", "> 0"),
        _case("oftrl_cfr", "--eval_every=-1", example("oftrl_cfr", "--eval_every=-1", s), "error", "eval_every"),
        _case("oftrl_cfr", "too big game", example("oftrl_cfr", "--game=liars_dice(numdice=2,dice_sides=6)", s), "error",
              "GiB"),
        _case("head_to_head", "--deals=0", example("head_to_head", "--deals=0", s, fast=False), "error", "deals"),
        _case("head_to_head", "--policies=call,cfr+:x", example("head_to_head", "--policies=call,cfr+:x", s), "error",
              "whole number"),
        _case("benchmark", "unknown algorithm", example("benchmark", "--algorithms=magic", s), "error", "unknown entry"),
        _case("benchmark", "--seconds=-1", example("benchmark", "--seconds=-1", s), "error", "seconds"),
        _case("poker_vector_cfr", "not limit poker", example("poker_vector_cfr", "--game=kuhn_poker", s), "error",
              "poker"),
        _case("poker_vector_cfr", "--max_minutes=nan", example("poker_vector_cfr", "--max_minutes=nan", s), "error",
              "finite"),
        _case("oftrl_endgames", "--subgames=5", example("oftrl_endgames", "--subgames=5", s), "error", "<= 4"),
    ]  # fmt: skip
    g3 = "g = pyspiel.load_game('kuhn_poker(players=3)')\n"
    kuhn = "g = pyspiel.load_game('kuhn_poker')\n"
    out += [_case("api", d, api(code), expect, message) for d, code, expect, message in [
        ("nash_conv of a 3-player game", g3 + "ox.nash_conv(g, policy.UniformRandomPolicy(g))", "error", "player"),
        ("nash_conv of a general-sum game", "g = pyspiel.load_game('tiny_hanabi')\n"
         "ox.nash_conv(g, policy.UniformRandomPolicy(g))", "error", "zero-sum"),
        ("nash_conv of a simultaneous game", "g = pyspiel.load_game('goofspiel(num_cards=3)')\n"
         "ox.nash_conv(g, policy.UniformRandomPolicy(g))", "error", "simultaneous"),
        ("CFRSolver on phantom_ttt (too big)", "ox.CFRSolver(pyspiel.load_game('phantom_ttt'))", "error", "GiB"),
        ("nash_conv on full flop_holdem", "g = pyspiel.load_game('flop_holdem')\n"
         "ox.nash_conv(g, policy.UniformRandomPolicy(g))", "error", "GiB"),
        ("policy with NaN", kuhn + "p = policy.TabularPolicy(g)\np.action_probability_array[3] = float('nan')\n"
         "ox.nash_conv(g, p)", "error", "not a distribution"),
        ("policy with no entries", kuhn + "class P(policy.Policy):\n  def action_probabilities(self, s, p=None): "
         "return {}\nox.nash_conv(g, P(g, [0, 1]))", "error", "no probability"),
        ("rows summing to 2", kuhn + "p = policy.TabularPolicy(g)\np.action_probability_array *= 2\nox.nash_conv(g, p)",
         "error", "not a distribution"),
        ("DeepCFRSolver(learning_rate=inf)", "ox.DeepCFRSolver(pyspiel.load_game('kuhn_poker'), "
         "learning_rate=float('inf'))", "error", "learning_rate"),
        ("DeepCFRSolver(gradient_clip=-1)", "ox.DeepCFRSolver(pyspiel.load_game('kuhn_poker'), gradient_clip=-1)",
         "error", "gradient_clip"),
        ("DeepCFR training diverges (lr=1e30)", "s = ox.DeepCFRSolver(pyspiel.load_game('kuhn_poker'), "
         "num_iterations=3, num_traversals=20, learning_rate=1e30, gradient_clip=None)\ns.solve()", "error", ""),
        ("DCFRSolver(alpha=nan)", "ox.DCFRSolver(pyspiel.load_game('kuhn_poker'), alpha=float('nan'))", "error",
         "alpha"),
        ("OFTRLCFRSolver(stepsize_scale=0)", "ox.OFTRLCFRSolver(pyspiel.load_game('kuhn_poker'), stepsize_scale=0)",
         "error", "stepsize_scale"),
        ("load_game('no_such_game')", "ox.load_game('no_such_game')", "error", "unknown game"),
        ("nash_conv of a valid policy", "g = pyspiel.load_game('leduc_poker')\n"
         "print(ox.nash_conv(g, policy.TabularPolicy(g)))", "ok", ""),
    ]]  # fmt: skip
    return out


# ----------------------------------------------------------------- running
def run(command: list[str], time_limit: float, cwd: str) -> tuple[int, str, str, float, bool]:
    start = time.perf_counter()
    wrapped = ["bash", "-c", f"ulimit -v {MEMORY_KB}; exec \"$@\"", "sweep", *command]
    env = {**os.environ, "PYTHONPATH": ROOT, "PYTHONUNBUFFERED": "1"}
    try:
        proc = subprocess.run(wrapped, capture_output=True, text=True, cwd=cwd, env=env, timeout=time_limit)
        return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start, False
    except subprocess.TimeoutExpired as e:
        text = [(x.decode(errors="replace") if isinstance(x, bytes) else x) or "" for x in (e.stdout, e.stderr)]
        return -9, text[0], text[1], time.perf_counter() - start, True


def messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip() and not _LOG_LINE.match(line)]


def classify(case: Case, code: int, stdout: str, stderr: str, hung: bool) -> str:
    said = messages(stderr)
    if case.expect == "starts":  # a long run: it must get going (its first line) within the time limit
        if "Traceback" in stdout + stderr:
            return "traceback"
        return "ok" if re.search(case.message, stdout) else ("wrongly refused" if code else "silent wrong")
    if hung:
        return "hang"
    if "Traceback" in stdout + stderr:
        return "traceback"
    if code == 3 and any(line.startswith("WRONG:") for line in said):
        return "silent wrong"
    if case.expect == "error":
        if code == 0:
            return "silent wrong"
        if len(said) != 1 or not said[0].startswith(("error:", "interrupted")):
            return "unclear error"
        if case.message and not re.search(case.message, said[0]):
            return "silent wrong"  # refused, but the message misses what the case needs said
    else:
        if code != 0:
            return "wrongly refused"
        if case.message and not re.search(case.message, stdout + stderr):
            return "silent wrong"
    verdict = case.check(stdout, stderr) if case.check else None
    return verdict or ("ok" if case.expect != "error" else "clear error")


def first_line(stdout: str, stderr: str, tmp: str) -> str:
    """stderr's first message line; where stderr has none, stdout's first line, marked as such."""
    lines = messages(stderr) or [f"(stdout) {line}" for line in stdout.splitlines() if line.strip()]
    text = lines[0] if lines else ""
    return _tidy(text, tmp)[:160]


def _tidy(text: str, tmp: str) -> str:
    text = text.replace(tmp, "$TMP").replace(ROOT + "/", "").replace(sys.executable, "python")
    return text.replace("|", "/")


def interrupt_cases(tmp: str, time_limit: float) -> list[tuple]:
    """SIGINT / SIGKILL mid-run, then the same command again: the CSV must
    equal the uninterrupted run's rows; a damaged or empty checkpoint is
    refused in one line; benchmark.py keeps the points it printed before a
    Ctrl-C (the latest sweep: they were dropped)."""
    results = []
    specs = {
        "deep_cfr": (["--game=kuhn_poker", "--iterations=12", "--eval_every=2", "--traversals=3000",
                      "--advantage_steps=60", "--policy_steps=20", "--layers=16", "--traversal_backend=state"],
                     "curve.csv", ("iteration", "nash_conv")),
        "cfr_mix": (["--variants=cfr_mix", "--iterations=10", "--eval_every=2", "--seconds=1000",
                     "--traversals=60", "--train_steps=40", "--hidden=16", "--seed=1"],
                    "curves.csv", ("iteration", "value")),
    }  # fmt: skip
    env = {**os.environ, "PYTHONPATH": ROOT, "PYTHONUNBUFFERED": "1"}
    for name, (args, csv_name, columns) in specs.items():
        script = os.path.join(ROOT, "cfrx_examples", f"{name}.py")
        reference = os.path.join(tmp, f"{name}_ref")
        subprocess.run([sys.executable, script, *args, f"--output_dir={reference}"], capture_output=True, cwd=tmp,
                       env=env, timeout=900, check=True)  # fmt: skip
        expected = _columns(os.path.join(reference, csv_name), columns)
        for sig in (signal.SIGINT, signal.SIGKILL):
            out, ckpt = os.path.join(tmp, f"{name}_{sig}"), os.path.join(tmp, f"{name}_{sig}_ckpt")
            cmd = [sys.executable, script, *args, f"--output_dir={out}", f"--checkpoint_dir={ckpt}"]
            proc = subprocess.Popen(cmd, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            path = os.path.join(out, csv_name)
            while proc.poll() is None:
                if os.path.exists(path) and sum(1 for _ in open(path)) > 2:
                    proc.send_signal(sig)
                    break
                time.sleep(0.02)
            _, err = proc.communicate(timeout=time_limit)
            again = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, env=env, timeout=900)
            got = _columns(path, columns)
            same = [r[0] for r in got] == [r[0] for r in expected] and all(
                abs(a[1] - b[1]) <= 1e-4 * max(1.0, abs(b[1])) for a, b in zip(got, expected, strict=False))
            text = err + again.stderr
            verdict = "traceback" if "Traceback" in text else ("ok" if same else "lost rows")
            shown = f"{name}.py {' '.join(args)} --checkpoint_dir=$TMP/ckpt; {signal.Signals(sig).name}; rerun"
            results.append((name, f"{signal.Signals(sig).name} mid-run, then resume", shown, verdict,
                            f"rows {[int(r[0]) for r in got]} (uninterrupted: {[int(r[0]) for r in expected]})"))
        for sig in (signal.SIGINT, signal.SIGKILL):
            shutil.rmtree(os.path.join(tmp, f"{name}_{sig}_ckpt"), ignore_errors=True)
    results += _damaged_checkpoints(tmp, specs, time_limit)
    results.append(_benchmark_ctrl_c(tmp, env, time_limit))
    return results


def _damaged_checkpoints(tmp: str, specs: dict, time_limit: float) -> list[tuple]:
    results = []
    for name in specs:
        script = os.path.join(ROOT, "cfrx_examples", f"{name}.py")
        ckpt = os.path.join(tmp, f"{name}_damaged")
        os.makedirs(ckpt, exist_ok=True)
        good = os.path.join(tmp, f"{name}_good")
        subprocess.run([sys.executable, script, *FAST[name], f"--output_dir={good}", f"--checkpoint_dir={good}"],
                       capture_output=True, cwd=tmp, env={**os.environ, "PYTHONPATH": ROOT}, timeout=900)  # fmt: skip
        files = [f for f in os.listdir(good) if f.endswith(".pt")]
        for f in files:
            data = bytearray(open(os.path.join(good, f), "rb").read())
            mid = len(data) // 2
            data[mid : mid + 4096] = os.urandom(min(4096, len(data) - mid))
            open(os.path.join(ckpt, f), "wb").write(data)
        cmd = [sys.executable, script, *FAST[name], f"--output_dir={tmp}/{name}_d", f"--checkpoint_dir={ckpt}"]
        shown = f"{name}.py --checkpoint_dir=$TMP/damaged"
        for label in ("checkpoint overwritten mid-file", "empty checkpoint file"):
            case = Case(name, label, cmd, shown, "error", "checkpoint")
            code, stdout, stderr, _, hung = run(cmd, time_limit, tmp)
            results.append((name, label, shown, classify(case, code, stdout, stderr, hung),
                            first_line(stdout, stderr, tmp)))  # fmt: skip
            for f in files or [f"{name}.pt"]:  # every checkpoint (cfr_mix.py keeps one per variant)
                open(os.path.join(ckpt, f), "wb").close()
    return results


def _benchmark_ctrl_c(tmp: str, env: dict, time_limit: float) -> tuple:
    out = os.path.join(tmp, "bench_int")
    cmd = [sys.executable, os.path.join(ROOT, "cfrx_examples", "benchmark.py"), "--game=leduc_poker", "--algorithms=cfr",
           "--seconds=300", "--eval_points=60", f"--output_dir={out}"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    printed = 0
    for line in proc.stdout:
        printed += line.startswith("  cfr ")
        if printed == 3:
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=time_limit)
    rows = _columns(os.path.join(out, "benchmark.csv"), ("iteration", "exploitability"))
    verdict = "traceback" if "Traceback" in err else ("ok" if len(rows) >= printed else "lost rows")
    said = messages(err)
    return ("benchmark", "Ctrl-C mid-algorithm keeps its printed points",
            "benchmark.py --game=leduc_poker --algorithms=cfr --seconds=300; SIGINT after 3 points", verdict,
            f"{said[-1] if said else ''} ({len(rows)} rows for {printed} printed)".replace(tmp, "$TMP"))


def _columns(path: str, columns: tuple[str, str]) -> list[tuple[str, float]]:
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r.get("iteration") not in (None, "0")]
    return [(r[columns[0]], float(r[columns[1]])) for r in rows]


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments {argv[1:]}")
    tmp = tempfile.mkdtemp(prefix="sweep-")
    cases = latest_cases(tmp) + ([] if FLAGS.quick else earlier_cases(tmp))
    results = []
    for case in cases:
        limit = 60 if case.expect == "starts" else FLAGS.time_limit
        code, stdout, stderr, seconds, hung = run(case.command, limit, tmp)
        verdict = classify(case, code, stdout, stderr, hung)
        row = (case.area, case.description + (" (latest sweep)" if case.latest else ""), f"`{_tidy(case.shown, tmp)}`",
               verdict, first_line(stdout, stderr, tmp))  # fmt: skip
        results.append(row)
        print(f"{verdict:15s} {seconds:6.1f}s {case.area:16s} {case.description[:50]:50s} {row[4][:70]}", flush=True)
    if not FLAGS.quick:
        for area, description, shown, verdict, said in interrupt_cases(tmp, FLAGS.time_limit):
            results.append((area, description, f"`{shown}`", verdict, said))
            print(f"{verdict:15s} {'':7s} {area:16s} {description[:50]:50s} {said[:70]}", flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    counts = {key: sum(r[3] == key for r in results) for key in ("ok", "clear error", *FAILURES)}
    failures = sum(counts[k] for k in FAILURES)
    totals = ", ".join(f"{k}: {v}" for k, v in counts.items())
    fast = "; ".join(f"{name}.py {' '.join(args)}" for name, args in FAST.items())
    body = (
        f"- {len(results)} cases, each in a fresh process under `ulimit -v {MEMORY_KB}` and a {FLAGS.time_limit} s "
        f"limit{' (quick tier: the latest sweep only)' if FLAGS.quick else ''}\n"
        f"- **totals**: {totals}; failures: **{failures}**\n"
        f"- outcomes: `ok` (succeeded, outputs written, its check passed), `clear error` (non-zero exit, one `error:` "
        "line on stderr, no traceback, naming what the case needs), failures: `traceback`, `hang`, `silent wrong` (bad "
        "input accepted, or a misleading message or number), `lost rows`, `unclear error`, `wrongly refused`\n"
        f"- each example case runs after its tiny settings (the case's flags win): {fast}\n\n"
        + markdown_table(["area", "case", "command", "outcome", "first stderr line"], [list(r) for r in results])
    )  # fmt: skip
    write_result(FLAGS.output, "Careless-user sweep", body)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    app.run(main)
