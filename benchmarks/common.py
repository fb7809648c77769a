"""Shared helpers for benchmark programs: machine/version header, timing, result files."""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from importlib import metadata


def machine_header(command: str | None = None) -> str:
    """Markdown lines naming the machine, versions and the exact command."""
    versions = []
    for dist in ("open_spiel", "numpy", "scipy", "torch"):
        try:
            versions.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            pass
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    command = command or "python " + " ".join(sys.argv)
    return "\n".join(
        [
            f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
            f"- machine: {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
            f"- python {platform.python_version()}; " + ", ".join(versions),
            f"- command: `{command}`",
        ]
    )


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
