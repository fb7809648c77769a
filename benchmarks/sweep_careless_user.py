"""The careless-user sweep (issue 17): every example and the Python API fed
bad games, bad numbers, bad paths, interrupts, damaged checkpoints, invalid
policies and too-large games (under `ulimit -v 8000000`), each in its own
process, classified as

* `clear error`: non-zero exit, no traceback, a short message (<= 3 lines);
* `ok`: the case should succeed and did (exit 0);
* `TRACEBACK`, `SILENT` (an impossible input accepted), `HUNG` (time limit),
  `LOST ROWS` (resume did not give the uninterrupted rows): failures.

    .venv/bin/python benchmarks/sweep_careless_user.py

Writes benchmarks/results/careless_user_sweep.md; exits 1 if any case fails.
"""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import markdown_table, write_result  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable
TIME_LIMIT = 120
MEMORY_KB = 8_000_000
EXAMPLES = ["deep_cfr", "cfr_mix", "oftrl_cfr", "head_to_head", "benchmark", "openspiel_swap"]
FAST = {
    "deep_cfr": ["--iterations=2", "--traversals=20", "--advantage_steps=2", "--policy_steps=2", "--layers=8"],
    "cfr_mix": ["--iterations=1", "--traversals=5", "--train_steps=2", "--hidden=8", "--seconds=5"],
    "oftrl_cfr": ["--iterations=5"],
    "head_to_head": ["--deals=10"],
    "benchmark": ["--seconds=1", "--algorithms=cfr+"],
    "openspiel_swap": ["--iterations=2", "--episodes=2"],
}


def example(name, *flags, fast=True):
    return [PY, os.path.join(ROOT, "examples", f"{name}.py"), *(FAST[name] if fast else []), *flags]


def api(code):
    """A Python API call: the library must raise (ValueError or one of its
    subclasses, or TrainingDivergedError) with a message; the wrapper prints
    `Type: message` and exits 2, as a caller catching it would. Any other
    exception is a traceback; no exception for a bad input is SILENT."""
    body = "\n".join("    " + line for line in code.splitlines())
    return [PY, "-c", (
        "import sys, games, pyspiel, openspiel_cfrx as ox\nfrom open_spiel.python import policy\n"
        "from openspiel_cfrx.deep.validation import TrainingDivergedError\n"
        f"try:\n{body}\n"
        "except (ValueError, TrainingDivergedError) as e:\n"
        "    print(f'{type(e).__name__}: {e}'); sys.exit(2)\n"
    )]  # fmt: skip


def cases(tmp):
    """(area, description, command, expect) with expect 'error' or 'ok'."""
    out = []
    file_path = os.path.join(tmp, "a_file")
    open(file_path, "w").close()
    readonly = os.path.join(tmp, "readonly")
    os.makedirs(readonly)
    os.chmod(readonly, 0o500)
    for name in EXAMPLES:
        od = [f"--output_dir={tmp}/{name}"]
        out += [
            (name, "unknown game", example(name, "--game=no_such_game(x=1)", *od), "error"),
            (name, "misspelt game", example(name, "--game=leduk_poker", *od), "error"),
            (name, "unknown parameter", example(name, "--game=kuhn_poker(foo=1)", *od), "error"),
            (name, "output_dir is a file", example(name, f"--output_dir={file_path}"), "error"),
            (name, "output_dir under /proc", example(name, "--output_dir=/proc/x"), "error"),
        ]
        if os.geteuid() != 0:  # root writes anywhere
            out.append((name, "read-only output_dir", example(name, f"--output_dir={readonly}/x"), "error"))
        if name != "openspiel_swap":
            out.append((name, "unknown flag value --device=tpu", example(name, "--device=tpu", *od), "error"))
        if name != "head_to_head":
            out.append((name, "--iterations=-5", example(name, "--iterations=-5", *od, fast=False), "error"))
    out += [
        ("openspiel_swap", "--episodes=-1", example("openspiel_swap", "--episodes=-1", f"--output_dir={tmp}/s"), "error"),
        ("openspiel_swap", "runs", example("openspiel_swap", f"--output_dir={tmp}/s2"), "ok"),
        ("deep_cfr", "--traversals=0", example("deep_cfr", "--traversals=0", f"--output_dir={tmp}/d"), "error"),
        ("deep_cfr", "--learning_rate=inf", example("deep_cfr", "--learning_rate=inf", f"--output_dir={tmp}/d"), "error"),
        ("deep_cfr", "--learning_rate=-1", example("deep_cfr", "--learning_rate=-1", f"--output_dir={tmp}/d"), "error"),
        ("deep_cfr", "--layers=a,b", example("deep_cfr", "--layers=a,b", f"--output_dir={tmp}/d"), "error"),
        ("deep_cfr", "full flop_holdem, state backend", example("deep_cfr", "--game=flop_holdem",
                                                                "--traversal_backend=state", f"--output_dir={tmp}/d"), "error"),
        ("deep_cfr", "3-player kuhn", example("deep_cfr", "--game=kuhn_poker(players=3)", f"--output_dir={tmp}/d"), "error"),
        ("deep_cfr", "general-sum game", example("deep_cfr", "--game=tiny_hanabi", f"--output_dir={tmp}/d"), "error"),
        ("deep_cfr", "simultaneous-move game", example("deep_cfr", "--game=matrix_pd", f"--output_dir={tmp}/d"), "error"),
        ("cfr_mix", "--traversals=0", example("cfr_mix", "--traversals=0", f"--output_dir={tmp}/m"), "error"),
        ("cfr_mix", "not a team game", example("cfr_mix", "--game=kuhn_poker", f"--output_dir={tmp}/m"), "error"),
        ("cfr_mix", "--seconds=0", example("cfr_mix", "--seconds=0", f"--output_dir={tmp}/m"), "error"),
        ("oftrl_cfr", "--stepsize_scales=-1", example("oftrl_cfr", "--stepsize_scales=-1", f"--output_dir={tmp}/o"), "error"),
        ("oftrl_cfr", "--eval_every=-1", example("oftrl_cfr", "--eval_every=-1", f"--output_dir={tmp}/o"), "error"),
        ("oftrl_cfr", "too big game", example("oftrl_cfr", "--game=liars_dice(numdice=2,dice_sides=6)", f"--output_dir={tmp}/o"), "error"),
        ("head_to_head", "--deals=0", example("head_to_head", "--deals=0", f"--output_dir={tmp}/h", fast=False), "error"),
        ("benchmark", "unknown algorithm", example("benchmark", "--algorithms=magic", f"--output_dir={tmp}/b"), "error"),
        ("benchmark", "--seconds=-1", example("benchmark", "--seconds=-1", f"--output_dir={tmp}/b"), "error"),
        # Python API
        ("api", "nash_conv of a 3-player game", api("g = pyspiel.load_game('kuhn_poker(players=3)')\n"
                                                     "ox.nash_conv(g, policy.UniformRandomPolicy(g))"), "error"),
        ("api", "nash_conv of a general-sum game", api("g = pyspiel.load_game('tiny_hanabi')\n"
                                                        "ox.nash_conv(g, policy.UniformRandomPolicy(g))"), "error"),
        ("api", "nash_conv of a simultaneous game", api("g = pyspiel.load_game('goofspiel(num_cards=3)')\n"
                                                         "ox.nash_conv(g, policy.UniformRandomPolicy(g))"), "error"),
        ("api", "CFRSolver on phantom_ttt (too big)", api("ox.CFRSolver(pyspiel.load_game('phantom_ttt'))"), "error"),
        ("api", "nash_conv on full flop_holdem", api("g = pyspiel.load_game('flop_holdem')\n"
                                                      "ox.nash_conv(g, policy.UniformRandomPolicy(g))"), "error"),
        ("api", "liars_dice 2x6", api("g = pyspiel.load_game('liars_dice(numdice=2,dice_sides=6)')\n"
                                       "ox.nash_conv(g, policy.UniformRandomPolicy(g))"), "error"),
        ("api", "nest 5x5/4 exact", api("g = pyspiel.load_game('nest(rows=5,cols=5,num_pursuers=4)')\n"
                                         "ox.nash_conv(g, policy.UniformRandomPolicy(g))"), "error"),
        ("api", "policy with NaN", api("g = pyspiel.load_game('kuhn_poker')\np = policy.TabularPolicy(g)\n"
                                        "p.action_probability_array[3] = float('nan')\nox.nash_conv(g, p)"), "error"),
        ("api", "policy with no entries", api("g = pyspiel.load_game('kuhn_poker')\n"
                                               "class P(policy.Policy):\n  def action_probabilities(self, s, p=None): return {}\n"
                                               "ox.nash_conv(g, P(g, [0, 1]))"), "error"),
        ("api", "rows summing to 2", api("g = pyspiel.load_game('kuhn_poker')\np = policy.TabularPolicy(g)\n"
                                          "p.action_probability_array *= 2\nox.nash_conv(g, p)"), "error"),
        ("api", "negative probabilities", api("g = pyspiel.load_game('kuhn_poker')\np = policy.TabularPolicy(g)\n"
                                               "p.action_probability_array[0] = [2.0, -1.0]\nox.nash_conv(g, p)"), "error"),
        ("api", "DeepCFRSolver(learning_rate=inf)", api("ox.DeepCFRSolver(pyspiel.load_game('kuhn_poker'), learning_rate=float('inf'))"), "error"),
        ("api", "DeepCFRSolver(gradient_clip=-1)", api("ox.DeepCFRSolver(pyspiel.load_game('kuhn_poker'), gradient_clip=-1)"), "error"),
        ("api", "CFRMixSolver(gradient_clip=-1)", api("ox.CFRMixSolver(pyspiel.load_game('team_goofspiel(num_cards=3,num_agents=2,num_turns=2)'), gradient_clip=-1)"), "error"),
        ("api", "DeepCFR training diverges (lr=1e30)", api("s = ox.DeepCFRSolver(pyspiel.load_game('kuhn_poker'), num_iterations=3, "
                                                           "num_traversals=20, learning_rate=1e30, gradient_clip=None)\ns.solve()"), "error"),
        ("api", "DCFRSolver(alpha=nan)", api("ox.DCFRSolver(pyspiel.load_game('kuhn_poker'), alpha=float('nan'))"), "error"),
        ("api", "OFTRLCFRSolver(stepsize_scale=0)", api("ox.OFTRLCFRSolver(pyspiel.load_game('kuhn_poker'), stepsize_scale=0)"), "error"),
        ("api", "load_game('no_such_game')", api("ox.load_game('no_such_game')"), "error"),
        ("api", "nash_conv of a valid policy", api("g = pyspiel.load_game('leduc_poker')\n"
                                                    "print(ox.nash_conv(g, policy.TabularPolicy(g)))"), "ok"),
    ]
    return out


def classify(proc, expect, seconds):
    text = proc.stdout + proc.stderr
    if seconds >= TIME_LIMIT:
        return "HUNG"
    if "Traceback (most recent call last)" in text:
        return "TRACEBACK"
    if expect == "error":
        if proc.returncode == 0:
            return "SILENT"
        lines = [line for line in text.splitlines() if line.strip() and not line.startswith(("I1", "W1"))]
        return "clear error" if 1 <= len(lines) <= 3 else f"LONG ({len(lines)} lines)"
    return "ok" if proc.returncode == 0 else "FAILED"


def run(command):
    start = time.perf_counter()
    wrapped = ["bash", "-c", f"ulimit -v {MEMORY_KB}; exec \"$@\"", "sweep", *command]
    try:
        proc = subprocess.run(wrapped, capture_output=True, text=True, cwd=ROOT, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired as e:
        proc = subprocess.CompletedProcess(command, -9, e.stdout or "", e.stderr or "")
    return proc, time.perf_counter() - start


def _first_message(proc):
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    return (lines[-1] if lines else "")[:110].replace("|", "/")


def interrupt_cases(tmp):
    """Interrupt-and-resume: SIGINT / SIGKILL mid-run, then resume; the CSV
    must equal the uninterrupted run's rows."""
    results = []
    specs = {
        "deep_cfr": (["--game=kuhn_poker", "--iterations=12", "--eval_every=2", "--traversals=3000",
                      "--advantage_steps=60", "--policy_steps=20", "--layers=16", "--traversal_backend=state"],
                     "curve.csv", ("iteration", "nash_conv")),
        "cfr_mix": (["--variants=cfr_mix", "--iterations=10", "--eval_every=2", "--seconds=1000",
                     "--traversals=60", "--train_steps=40", "--hidden=16", "--seed=1"],
                    "curves.csv", ("iteration", "value")),
    }  # fmt: skip
    for name, (flags, csv_name, columns) in specs.items():
        reference = os.path.join(tmp, f"{name}_ref")
        subprocess.run([PY, os.path.join(ROOT, "examples", f"{name}.py"), *flags, f"--output_dir={reference}"],
                       capture_output=True, cwd=ROOT, timeout=600, check=True)  # fmt: skip
        expected = _columns(os.path.join(reference, csv_name), columns)
        for sig in (signal.SIGINT, signal.SIGKILL):
            out, ckpt = os.path.join(tmp, f"{name}_{sig}"), os.path.join(tmp, f"{name}_{sig}_ckpt")
            cmd = [PY, os.path.join(ROOT, "examples", f"{name}.py"), *flags, f"--output_dir={out}",
                   f"--checkpoint_dir={ckpt}"]  # fmt: skip
            proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            path = os.path.join(out, csv_name)
            while proc.poll() is None:
                if os.path.exists(path) and sum(1 for _ in open(path)) > 2:
                    proc.send_signal(sig)
                    break
                time.sleep(0.02)
            _, err = proc.communicate(timeout=120)
            subprocess.run(cmd, capture_output=True, cwd=ROOT, timeout=600)
            got = _columns(path, columns)
            same = [r[0] for r in got] == [r[0] for r in expected] and all(
                abs(a[1] - b[1]) <= 1e-4 * max(1.0, abs(b[1])) for a, b in zip(got, expected, strict=False)
            )
            verdict = "ok" if same and "Traceback" not in err else ("TRACEBACK" if "Traceback" in err else "LOST ROWS")
            results.append((name, f"{signal.Signals(sig).name} mid-run, then resume", verdict,
                            f"rows {[r[0] for r in got]}"))  # fmt: skip
        shutil.rmtree(ckpt, ignore_errors=True)
    # A damaged checkpoint is refused in one line.
    for name, (flags, _, _) in specs.items():
        ckpt = os.path.join(tmp, f"{name}_damaged")
        os.makedirs(ckpt, exist_ok=True)
        src = os.path.join(tmp, f"{name}_{signal.SIGINT}_ckpt")
        files = [f for f in os.listdir(src) if f.endswith(".pt")] if os.path.isdir(src) else []
        for f in files:
            data = bytearray(open(os.path.join(src, f), "rb").read())
            mid = len(data) // 2
            data[mid : mid + 4096] = os.urandom(min(4096, len(data) - mid))
            open(os.path.join(ckpt, f), "wb").write(data)
        cmd = [PY, os.path.join(ROOT, "examples", f"{name}.py"), *flags, f"--output_dir={tmp}/{name}_d",
               f"--checkpoint_dir={ckpt}"]  # fmt: skip
        proc, seconds = run(cmd)
        results.append((name, "checkpoint overwritten mid-file", classify(proc, "error", seconds), _first_message(proc)))
        open(os.path.join(ckpt, files[0] if files else "deep_cfr.pt"), "wb").close()
        proc, seconds = run(cmd)
        results.append((name, "empty checkpoint file", classify(proc, "error", seconds), _first_message(proc)))
    return results


def _columns(path, columns):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r.get("iteration") not in (None, "0")]
    return [(r[columns[0]], float(r[columns[1]])) for r in rows]


def main():
    tmp = tempfile.mkdtemp(prefix="sweep-")
    results = []
    for area, description, command, expect in cases(tmp):
        proc, seconds = run(command)
        verdict = classify(proc, expect, seconds)
        results.append((area, description, verdict, _first_message(proc)))
        print(f"{verdict:12s} {area:15s} {description:40s} {seconds:5.1f}s  {_first_message(proc)[:80]}", flush=True)
    for row in interrupt_cases(tmp):
        results.append(row)
        print(f"{row[2]:12s} {row[0]:15s} {row[1]:40s} {row[3][:80]}", flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    failures = [r for r in results if r[2] not in ("ok", "clear error")]
    counts = {}
    for r in results:
        key = r[2] if r[2] in ("ok", "clear error") else r[2].split(" ")[0]
        counts[key] = counts.get(key, 0) + 1
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    body = (
        f"- {len(results)} cases, each in a fresh process under `ulimit -v {MEMORY_KB}` and a {TIME_LIMIT} s limit; "
        f"load average at start {os.getloadavg()[0]:.2f}\n- outcome: {summary}; failures (traceback, silent, "
        f"hung, lost rows): **{len(failures)}**\n\n"
        + markdown_table(["area", "case", "outcome", "last line printed"], [list(r) for r in results])
    )
    write_result(os.path.join(ROOT, "benchmarks/results/careless_user_sweep.md"), "Careless-user sweep", body)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
