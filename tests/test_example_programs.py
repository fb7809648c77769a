"""The example programs are part of the package: every program module is a
console script (`cfrx-<name>`) declared by setup.py and listed by
`python -m cfrx_examples`, and runs as a module from outside the
checkout's root (the wheel check, `.ci/wheel_check.sh`, does the same from an
installed wheel)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

from cfrx_examples import PROGRAMS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDER = os.path.join(ROOT, "cfrx_examples")


def _program_modules() -> set[str]:
    """Modules of cfrx_examples that define the console-script entry `run()`."""
    found = set()
    for name in os.listdir(FOLDER):
        if name.endswith(".py") and not name.startswith("_"):
            tree = ast.parse(open(os.path.join(FOLDER, name), encoding="utf-8").read())
            if any(isinstance(n, ast.FunctionDef) and n.name == "run" for n in tree.body):
                found.add(name[:-3])
    return found


def _setup_examples() -> tuple[str, ...]:
    tree = ast.parse(open(os.path.join(ROOT, "setup.py"), encoding="utf-8").read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "EXAMPLES":
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py has no EXAMPLES")


def test_every_program_is_a_declared_console_script_and_listed():
    assert _program_modules() == set(_setup_examples()) == set(PROGRAMS)


def test_program_list_and_module_run_from_another_directory(tmp_path):
    listing = subprocess.run([sys.executable, "-m", "cfrx_examples"], cwd=tmp_path, capture_output=True,
                             text=True, timeout=120, check=True).stdout  # fmt: skip
    assert all(f"cfrx-{m.replace('_', '-')}" in listing for m in PROGRAMS)
    run = subprocess.run([sys.executable, "-m", "cfrx_examples.openspiel_swap", "--game=kuhn_poker",
                          "--solver=cfr_plus", "--iterations=20", "--episodes=20", f"--output_dir={tmp_path}"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
