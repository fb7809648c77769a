"""Shared helpers for benchmark programs: machine/version header, timing, result files."""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import NoReturn

from absl import flags

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOAD_AT_START = os.getloadavg()[0]

# The committed 5x2 FHP Deep CFR settings (benchmarks/results/fhp_curve.md), state backend.
FHP_STATE_DEEP_CFR = dict(game="flop_holdem(num_ranks=5,num_suits=2)", traversal={"backend": "state"},
                          num_traversals=1500, advantage_network_layers=(64, 64), policy_network_layers=(64, 64),
                          advantage_network_train_steps=150, batch_size_advantage=2048)  # fmt: skip


def usage_error(message: str) -> NoReturn:
    """Stops a benchmark program on bad input with one line on stderr,
    `error: <message>; see --help`, and exit status 2 (a usage error's), before it
    computes anything."""
    print(f"error: {message}; see --help", file=sys.stderr, flush=True)
    sys.exit(2)


class _Checked(flags.ArgumentParser):
    """An absl flag parser from a function of the text (`define_checked`)."""

    def __init__(self, parse: Callable[[str], object], kind: str):
        self._parse_text, self._kind = parse, kind

    def parse(self, argument):
        return self._parse_text(argument) if isinstance(argument, str) else argument

    def flag_type(self) -> str:
        return self._kind


def define_checked(flag_values: flags.FlagValues, name: str, default: str, help: str,
                   parse: Callable[[str], object], kind: str = "string") -> None:  # fmt: skip
    """An absl flag whose text `parse` turns into its value, raising ValueError
    with what is wrong (absl's message: `flag --<name>=<text>: <what>`)."""
    flags.DEFINE(_Checked(parse, kind), name, default, help, flag_values=flag_values)


def parse_flags(flag_values: flags.FlagValues, argv: list[str] | None, description: str) -> SimpleNamespace:
    """A benchmark program's absl flags (defined on its own `flag_values`, so
    that programs imported together keep their own), parsed from `argv` (None:
    sys.argv[1:]) into a namespace (a dashed name such as `--mccfr-step` is
    `args.mccfr_step`). `--help` prints them and exits; a bad flag or a stray
    argument stops the program with one line (`usage_error`)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if any(a in ("--help", "-h", "--helpfull") for a in argv):
        print(f"{description}\n\nflags:\n{flag_values.get_help(include_special_flags=False)}")
        sys.exit(0)
    flag_values.unparse_flags()
    try:
        rest = flag_values([sys.argv[0], *argv])[1:]
    except flags.Error as e:
        usage_error(str(e))
    if rest:
        usage_error(f"unexpected arguments: {' '.join(rest)} (every setting is a --flag)")
    return SimpleNamespace(**{name.replace("-", "_"): value for name, value in flag_values.flag_values_dict().items()})


# Flag parsers for `define_checked`: each turns a flag's text into its value or raises ValueError saying what
# is wrong.


def budget_fractions(text: str) -> list[float]:
    """Checkpoints as fractions of a budget: increasing numbers in (0, 1]."""
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        values = []
    if not values or not all(0 < v <= 1 for v in values) or values != sorted(set(values)):  # NaN fails 0 < v
        raise ValueError(f"must be comma-separated numbers in (0, 1], increasing without repeats "
                         f"(fractions of the budget), e.g. 0.25,0.5,1; got {text!r}")  # fmt: skip
    return values


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"must be a finite number of seconds > 0, got {text!r}")
    return value


def integer_at_least(low: int, meaning: str = ""):
    """The parser of an integer >= `low` (`meaning`: said after the bound in the error)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low:
            raise ValueError(f"must be an integer >= {low}{meaning}, got {text!r}")
        return value

    return parse


def distinct_seeds(text: str) -> list[int]:
    """Comma-separated distinct seeds >= 0 (empty: none)."""
    try:
        seeds = [int(x) for x in text.split(",")] if text else []
    except ValueError:
        seeds = [-1]
    if any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise ValueError(f"must be comma-separated distinct integers >= 0, e.g. 0,1,2; got {text!r}")
    return seeds

def check_writable_dir(path: str, flag: str) -> None:
    """Creates directory `path` (with its parents) and writes and deletes a
    probe file in it, so that a program whose results cannot be written stops
    before computing them (`usage_error` naming `flag`)."""
    if not path:
        usage_error(f"{flag} is empty; give a directory")
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as e:
        reason = e.strerror or type(e).__name__
        if isinstance(e, (FileExistsError, NotADirectoryError)):
            reason = "a file is in the way of the directory"
        usage_error(f"{flag}={path} is not a writable directory ({reason}); choose one you can write to")


def time_call(fn, repeat: int, warmup: int = 1) -> float:
    """Median wall-clock seconds of `fn()` over `repeat` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def markdown_table(headers: list[str], rows: list[list]) -> str:
    """`openspiel_cfrx.eval.report.markdown_table` (imported on first use: the argument checks stay light)."""
    from openspiel_cfrx.eval.report import markdown_table as table

    return table(headers, rows)


def generated_header(command: str | None = None) -> str:
    """The generated lines every results file starts with: date, CPU model and
    cores, load average (1 min) when the program started and now, package
    versions, the git commit of the checkout (with `+ uncommitted changes`
    when the tree is dirty) and the exact command."""
    import subprocess
    from importlib import metadata

    # imported here, not at the top, so that a program's argument checks stay light
    from openspiel_cfrx.eval.report import machine_header

    versions = []
    for dist in ("openspiel_cfrx", "open_spiel", "numpy", "scipy", "numba", "torch", "ray"):
        try:
            versions.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            pass

    def git(*args: str) -> str:
        try:
            out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
            return out.stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""

    commit = git("rev-parse", "--short=12", "HEAD") or "unknown (not a git checkout)"
    if commit[0] != "u" and git("status", "--porcelain", "--untracked-files=no"):
        commit += " + uncommitted changes"
    header = machine_header(command or "python " + " ".join(sys.argv))
    lines = header.splitlines()
    lines.insert(2, f"- load average (1 min): {LOAD_AT_START:.2f} at start, {os.getloadavg()[0]:.2f} at end")
    lines[3] = f"- python {sys.version.split()[0]}; " + ", ".join(versions)
    lines.insert(4, f"- commit: {commit}")
    return "\n".join(["<!-- generated by the program named in `command`; only a Reading section is written by hand -->",
                      *lines])  # fmt: skip


def write_result(path: str, title: str, body: str, header_command: str | None = None) -> None:
    """Writes a results file: title, generated header, body; a `## Reading`
    section of the file it replaces (the only hand-written part) is kept."""
    if not path:
        return
    reading = _reading_of(path)
    header = generated_header(header_command)  # before the page is opened: truncating it would mark the tree dirty
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"# {title}\n\n{header}\n\n{body.rstrip()}\n{reading}")
    print(f"wrote {path}")


def _reading_of(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return ""
    at = text.find("\n## Reading")
    return "" if at < 0 else text[at:].rstrip() + "\n"


def case_in_fresh_process(script: str, case: dict) -> dict:
    """Runs `script --one=<case as JSON>` in a new interpreter (peak memory and
    process-wide state per case) and returns the JSON object it prints last."""
    import json
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join([root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    out = subprocess.run([sys.executable, script, f"--one={json.dumps(case)}"], capture_output=True, text=True,
                         check=False, env={**os.environ, "PYTHONPATH": path})  # fmt: skip
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode or not lines:
        raise RuntimeError(f"case {case} failed:\n{out.stderr[-3000:]}")
    return json.loads(lines[-1])


def cases_round_robin(script: str, cases: list[dict], rounds: int) -> list[list[dict]]:
    """Each case once per round, in order, every run in a fresh interpreter
    (`case_in_fresh_process`), so that the machine's drifts reach all cases
    alike; returns each case's results over the rounds (progress printed)."""
    results = [[] for _ in cases]
    for r in range(rounds):
        for case, runs in zip(cases, results, strict=True):
            runs.append(case_in_fresh_process(script, case))
            print(f"round {r + 1}: {case}: {runs[-1]}", flush=True)
    return results


def print_and_write(text: str, output: str) -> None:
    """Prints a report whose first line is `# title` and writes it to `output`
    (when given) through `write_result`, i.e. with the generated header."""
    print(text)
    title, _, body = text.partition("\n")
    write_result(output, title.lstrip("# ").strip(), body.strip())


def run_header(load: float) -> str:
    """The exact command, machine, load at start, library versions and date,
    as every committed result states them."""
    import platform

    import numpy as np
    import torch

    gpu = f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ""
    return (f"`PYTHONPATH=. .venv/bin/python {' '.join(sys.argv)}`; {platform.machine()}, {os.cpu_count()} cores{gpu}, "
            f"load average {load:.2f} at start; torch {torch.__version__}, numpy {np.__version__}; "
            f"{time.strftime('%Y-%m-%d')}")  # fmt: skip


def mean_and_interval(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% Student-t interval (0 for one value)."""
    import numpy as np
    from scipy import stats

    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return float(values.mean()), 0.0
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return float(values.mean()), float(half)


def example_result(name: str, title: str, script: str, args: list[str], intro: str, images: list[str],
                   quick: bool) -> None:
    """Runs `cfrx_examples/<script>` with `args` into a scratch folder and writes
    benchmarks/results[/quick]/<name>.md: the generated header, `intro`, the
    example's own summary.md, and `images` (files the example wrote) copied
    next to it under <name>/."""
    import shutil
    import subprocess
    import tempfile

    out_dir = os.path.join(ROOT, "benchmarks", "results", *(["quick"] if quick else []))
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, os.path.join(ROOT, "cfrx_examples", script), *args, f"--output_dir={tmp}"]
        print("$", " ".join(command[1:]), flush=True)
        subprocess.run(command, check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
        with open(os.path.join(tmp, "summary.md"), encoding="utf-8") as f:
            summary = f.read().strip()
        os.makedirs(os.path.join(out_dir, name), exist_ok=True)
        for image in images:
            shutil.copy(os.path.join(tmp, image), os.path.join(out_dir, name, image))
    pictures = "\n".join(f"![{image}]({name}/{image})" for image in images)
    shown = " ".join(a for a in args)
    write_result(os.path.join(out_dir, f"{name}.md"), title,
                 f"{intro}\n\nRuns `cfrx_examples/{script} {shown}`.\n\n{summary}\n\n{pictures}\n")


# --- convergence rates (bench_tabular.py --rates; here so that tests import them without its absl flags) ---


@dataclasses.dataclass(frozen=True)
class SlopeFit:
    """Least-squares fit of log10(NashConv) = a + slope * log10(iteration) over
    `points` checkpoints in [lo, hi]; `half_width`: half the 95% interval of
    the slope (Student t with points - 2 degrees of freedom times the OLS
    standard error, which assumes independent errors)."""

    slope: float
    half_width: float
    points: int
    lo: int
    hi: int

    @property
    def low(self) -> float:
        return self.slope - self.half_width

    @property
    def high(self) -> float:
        return self.slope + self.half_width


def fit_loglog_slope(iterations, values, lo: float, hi: float, floor: float = 0.0) -> SlopeFit | None:
    """OLS slope of log10(values) against log10(iterations) over the points
    with lo <= iteration <= hi and value > floor (finite); None with fewer
    than 3 such points (no interval)."""
    import numpy as np
    from scipy import stats

    t, v = np.asarray(iterations, dtype=float), np.asarray(values, dtype=float)
    keep = (t >= lo) & (t <= hi) & np.isfinite(v) & (v > floor)
    n = int(keep.sum())
    if n < 3:
        return None
    x, y = np.log10(t[keep]), np.log10(v[keep])
    xc, yc = x - x.mean(), y - y.mean()
    sxx = float(xc @ xc)
    if sxx <= 0.0:
        return None
    slope = float(xc @ yc) / sxx
    residual = yc - slope * xc
    standard_error = math.sqrt(max(float(residual @ residual), 0.0) / (n - 2) / sxx)
    half = float(stats.t.ppf(0.975, n - 2)) * standard_error
    return SlopeFit(slope, half, n, int(t[keep].min()), int(t[keep].max()))


def rate_verdict(fit: SlopeFit | None, rate: float) -> str:
    """Does the curve fall at least as fast as iterations**rate? "yes" when
    the upper end of the slope's 95% interval is <= rate, "no" when its lower
    end is > rate, else "inconclusive" (also without a fit)."""
    if fit is None:
        return "inconclusive"
    if fit.high <= rate:
        return "yes"
    if fit.low > rate:
        return "no"
    return "inconclusive"


def faster_verdict(fit: SlopeFit | None, other: SlopeFit | None) -> str:
    """Does `fit`'s curve fall faster than `other`'s? "yes" when its slope's
    95% interval lies entirely below the other's (upper end < the other's
    lower end), "no" when entirely above, else "inconclusive" (also without
    a fit)."""
    if fit is None or other is None:
        return "inconclusive"
    if fit.high < other.low:
        return "yes"
    if fit.low > other.high:
        return "no"
    return "inconclusive"


def split_games(text: str) -> list[str]:
    """'a,b(x=1,y=2),c' -> ['a', 'b(x=1,y=2)', 'c'] (commas inside parentheses stay)."""
    games, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            games.append(text[start:i].strip())
            start = i + 1
    games.append(text[start:].strip())
    return [g for g in games if g]


def horizons_in_window(iterations: int, fit_from: float, count: int) -> list[int]:
    """`count` horizons log-spaced from fit_from * iterations to iterations (both included)."""
    if count <= 0:
        return []
    if count == 1:
        return [iterations]
    lo = math.log10(max(1.0, fit_from * iterations))
    hi = math.log10(iterations)
    return sorted({int(round(10 ** (lo + (hi - lo) * k / (count - 1)))) for k in range(count)} | {iterations})
