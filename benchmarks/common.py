"""Shared helpers for benchmark programs: machine/version header, timing, result files."""

from __future__ import annotations

import os
import statistics
import sys
import time

from openspiel_cfrx.eval.report import machine_header

# The committed 5x2 FHP Deep CFR settings (benchmarks/results/fhp_curve.md), state backend.
FHP_STATE_DEEP_CFR = dict(game="flop_holdem(num_ranks=5,num_suits=2)", traversal_backend="state",
                          num_traversals=1500, advantage_network_layers=(64, 64), policy_network_layers=(64, 64),
                          advantage_network_train_steps=150, batch_size_advantage=2048)  # fmt: skip


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
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)


def write_result(path: str, title: str, body: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"# {title}\n\n{machine_header()}\n\n{body}\n")
    print(f"wrote {path}")


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
    """Prints a report and writes it to `output` when given."""
    print(text)
    if output:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)


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
