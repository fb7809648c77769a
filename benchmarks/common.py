"""Shared helpers for benchmark programs: machine/version header, timing, result files."""

from __future__ import annotations

import os
import statistics
import time

from openspiel_cfrx.eval.report import machine_header


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
