"""The repository as a product: no work-log words, no paths outside the
checkout, every benchmark file reachable from the suite or the README, and
the README's "Reproducing the papers" numbers equal to the results files
they cite."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = (".py", ".md", ".txt", ".toml", ".cfg", ".yml", ".yaml", ".sh", ".in", "Makefile", ".csv", "run")


def tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout (the hygiene checks read `git ls-files`)")
    return [p for p in out.splitlines() if p.endswith(TEXT) and os.path.isfile(os.path.join(ROOT, p))]


def read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
        return f.read()


def test_no_work_log_words_in_tracked_files():
    pattern = re.compile(r"session ?[0-9]", re.IGNORECASE)
    hits = [f"{p}:{n}" for p in tracked_files() for n, line in enumerate(read(p).splitlines(), 1)
            if pattern.search(line)]  # fmt: skip
    assert not hits, f"work-log references (say what the fact is and where its evidence lives): {hits[:20]}"


def test_no_paths_outside_the_repository():
    pattern = re.compile(r"(/work/shared|\.\./shared|/work/main)")
    hits = [f"{p}:{n}" for p in tracked_files() if p != "tests/test_project_hygiene.py"
            for n, line in enumerate(read(p).splitlines(), 1) if pattern.search(line)]  # fmt: skip
    assert not hits, f"paths outside the checkout: {hits[:20]}"


def test_every_benchmark_file_is_reachable():
    suite = read("benchmarks/suite.py") + read("Makefile") + read("README.md")
    programs = [p for p in tracked_files() if p.startswith("benchmarks/") and p.endswith((".py", ".sh"))]
    support = {"benchmarks/__init__.py", "benchmarks/common.py", "benchmarks/suite.py"}
    unreachable = [p for p in programs if p not in support and os.path.basename(p) not in suite]
    assert not unreachable, f"benchmark programs neither in benchmarks/suite.py, the Makefile nor the README: {unreachable}"


def test_benchmarks_stay_a_suite():
    """At most 68 tracked files under benchmarks/ (programs, their results
    pages and the plots those pages show; 64 since the Deep CFR deviation
    ledger, bench_deep_cfr_ledger.py, adds a program and its page; 65 since
    its Figures 3-4 grid adds a page; 67 since bench_tabular.py --rates adds
    the convergence-rate page, tabular_rates.md, and its plot,
    tabular/rates.png; 68 since the harness's full-budget page,
    vs_openspiel.md, and its one figure replace the quick tier's page; 69
    since the full flop hold'em grid, deep_cfr_full_fhp.md; 74 since the
    CFR-MIX paper's Figures 3-4 grid: bench_cfr_mix_paper.py, its two pages
    and their two figures);
    the quick
    tier's pages regenerate with `make bench` and stay untracked, except the
    one the README cites. Not counted: benchmarks/results/runs/, the long
    grids' records of finished runs (data, one small JSON file per run, kept
    so that a fresh clone regenerates their pages and continues the grids)."""
    out = subprocess.run(["git", "ls-files", "benchmarks"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    out = [p for p in out if not p.startswith("benchmarks/results/runs/")]
    assert len(out) <= 74, f"{len(out)} tracked files under benchmarks/ (at most 74): keep one program per claim"


def reproduction_rows() -> list[tuple[str, str, list[str]]]:
    """(claim, our cell, the results files it cites) of each row of the README's
    "Reproducing the papers" table (ours: the 4th column) and "Against
    OpenSpiel's own tools" table (ours: the 2nd column)."""
    text = read("README.md")
    rows = []
    for heading, claim, ours, width in (("## Reproducing the papers", 1, 3, 5), ("## Against OpenSpiel", 0, 1, 3)):
        start = text.index(heading)
        end = text.find("\n## ", start + 1)
        for line in text[start:end if end > 0 else None].splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < width or set(cells[0]) <= {"-", ":"} or cells[0] in ("paper", "claim"):
                continue
            files = re.findall(r"\(?(benchmarks/results/[\w/.-]+\.md)", line)
            rows.append((cells[claim], cells[ours], files))
    return rows


def numbers(cell: str) -> list[str]:
    """The numbers of a cell as written (1,712 / 119.8 / 3.3x / ±75 -> 75)."""
    return [n.rstrip(",") for n in re.findall(r"(?<![A-Za-z\d.])\d[\d,]*(?:\.\d+)?", cell)]


def test_readme_reproduction_table_numbers_equal_the_results_files():
    rows = reproduction_rows()
    assert len(rows) >= 8, "the README's 'Reproducing the papers' table is missing or short"
    problems = []
    for claim, ours, paths in rows:
        if not numbers(ours):
            continue  # "not attempted" and similar
        if not paths:
            problems.append(f"{claim!r}: numbers {numbers(ours)} without a cited benchmarks/results/*.md")
            continue
        absent = [path for path in paths if not os.path.exists(os.path.join(ROOT, path))]
        if absent:
            problems.append(f"{claim!r}: cites {absent}, which do not exist")
            continue
        pages = [read(path) for path in paths]
        missing = [n for n in numbers(ours) if not any(n in page for page in pages)]
        if missing:
            problems.append(f"{claim!r}: {missing} in none of {paths}")
    assert not problems, "\n".join(problems)


def test_no_function_above_80_lines_in_the_library_or_games():
    """Long functions are split into named steps that read like the algorithm or rule they implement."""
    import ast

    long = []
    paths = [os.path.relpath(os.path.join(folder, name), ROOT) for package in ("openspiel_cfrx", "games")
             for folder, _, names in os.walk(os.path.join(ROOT, package)) for name in names]  # fmt: skip
    for path in paths:
        if path.endswith(".py"):
            tree = ast.parse(read(path))
            long += [f"{path}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
                     for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and node.end_lineno - node.lineno + 1 > 80]  # fmt: skip
    assert not long, "split into named steps:\n" + "\n".join(long)
