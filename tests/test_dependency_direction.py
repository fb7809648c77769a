"""Dependency direction (docs/architecture.md): `import games` loads no torch,
and no `openspiel_cfrx` module imports `games` (at module level or inside a
function): game knowledge arrives through pyspiel or a registered protocol."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STILL_IMPORTING_GAMES: set[str] = set()


def test_import_games_loads_no_torch():
    code = "import sys, games, pyspiel; pyspiel.load_game('hulh'); assert 'torch' not in sys.modules, 'torch loaded'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


def _imports_games(path: str) -> bool:
    tree = ast.parse(open(path, encoding="utf-8").read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "games" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "games":
            return True
    return False


def test_no_new_openspiel_cfrx_module_imports_games():
    offenders = set()
    for folder, _, files in os.walk(os.path.join(ROOT, "openspiel_cfrx")):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                if _imports_games(path):
                    offenders.add(os.path.relpath(path, ROOT))
    assert offenders <= STILL_IMPORTING_GAMES, f"openspiel_cfrx -> games imports: {offenders - STILL_IMPORTING_GAMES}"


def _imported_modules(path: str) -> set[str]:
    tree = ast.parse(open(path, encoding="utf-8").read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            if node.module == "openspiel_cfrx":  # from openspiel_cfrx import tabular
                names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_tabular_poker_and_regret_import_no_sibling():
    """The CFR variants live in `openspiel_cfrx.regret`, which the tabular solvers and
    the poker engine's vector CFR both read: neither of them imports the other, and
    `regret` imports neither."""
    forbidden = {"tabular": ("poker",), "poker": ("tabular",), "regret": ("tabular", "poker")}
    offenders = []
    for package, others in forbidden.items():
        folder = os.path.join(ROOT, "openspiel_cfrx", package)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                offenders += [f"{package}/{name} imports {module}" for module in sorted(_imported_modules(path))
                              for other in others if module == f"openspiel_cfrx.{other}"
                              or module.startswith(f"openspiel_cfrx.{other}.")]  # fmt: skip
    assert not offenders, offenders
