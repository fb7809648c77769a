"""Run metadata for result files: machine, versions, exact command; markdown tables."""

from __future__ import annotations

import os
import platform
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


def markdown_table(headers: list[str], rows: list[list]) -> str:
    """A markdown table: a header row, then one row per list of cells (each `str()`-ed)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)
