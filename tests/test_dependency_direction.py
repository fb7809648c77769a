"""Dependency direction (docs/architecture.md): `import games` loads no torch,
and no library module of `openspiel_cfrx` imports `games` (at module level or
inside a function): game knowledge arrives through pyspiel or a registered
protocol. `cfrx_examples`, the programs shipped beside the library, sits
above both: it imports `openspiel_cfrx` and `games`; neither imports it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STILL_IMPORTING_GAMES: set[str] = set()


def test_import_games_loads_no_torch():
    code = "import sys, games, pyspiel; pyspiel.load_game('hulh'); assert 'torch' not in sys.modules, 'torch loaded'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=600)


def _imports_games(path: str) -> bool:
    tree = ast.parse(open(path, encoding="utf-8").read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "games" for a in node.names
        ):
            return True
        if (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] == "games"
        ):
            return True
    return False


def test_no_new_openspiel_cfrx_module_imports_games():
    offenders = set()
    examples = os.path.join(ROOT, "cfrx_examples")
    for folder, _, files in os.walk(os.path.join(ROOT, "openspiel_cfrx")):
        if folder == examples or folder.startswith(examples + os.sep):
            continue  # the application layer (module docstring)
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                if _imports_games(path):
                    offenders.add(os.path.relpath(path, ROOT))
    assert offenders <= STILL_IMPORTING_GAMES, (
        f"openspiel_cfrx -> games imports: {offenders - STILL_IMPORTING_GAMES}"
    )


# The layers of `openspiel_cfrx` (docs/architecture.md, "Dependency direction"): a module may import
# modules of its own package and of lower layers only. Lazy imports (inside functions) count.
LAYERS = {
    "registry": 0, "rows": 0, "checkpoint_io": 0, "game_loading": 0, "encoders": 0, "team": 0, "presets": 0,
    "sampling": 1, "regret": 1, "tree": 1,
    "tabular": 2, "poker": 2,
    "deep": 3, "eval": 3,
    "neural_poker": 4, "cfr_mix": 4,
    "": 5,  # openspiel_cfrx/__init__.py: the front door
    "explore": 5,  # the strategy explorer (a page on top of poker and deep), beside the front door
    "contenders": 5,  # the equal-budget harness's contenders by name (builds every solver), beside the front door
}  # fmt: skip


def _module_graph() -> dict[str, set[str]]:
    """module -> the `openspiel_cfrx` modules it imports (any depth of the file)."""
    package_root = os.path.join(ROOT, "openspiel_cfrx")
    paths = {}
    for folder, _, files in os.walk(package_root):
        for name in files:
            if name.endswith(".py"):
                rel = os.path.relpath(os.path.join(folder, name), ROOT)[:-3].replace(os.sep, ".")
                paths[rel[: -len(".__init__")] if rel.endswith(".__init__") else rel] = (
                    os.path.join(folder, name)
                )

    def known(name: str) -> str | None:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for module, path in paths.items():
        is_package = path.endswith("__init__.py")
        targets = set()
        for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = module.split(".")[: len(module.split(".")) - node.level + is_package]
                    base = ".".join(parts + ([base] if base else []))
                names = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names
                ]
            targets |= {t for t in map(known, names) if t and t != module}
        graph[module] = targets
    return graph


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_openspiel_cfrx_has_no_import_cycle():
    graph = _module_graph()
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles between files of openspiel_cfrx: {cycles}"


def test_openspiel_cfrx_imports_follow_the_layers():
    graph = _module_graph()
    unknown = {_package(m) for m in graph} - set(LAYERS)
    assert not unknown, f"add the new package(s) {unknown} to LAYERS and docs/architecture.md"
    against = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if _package(target) != _package(module)
        and LAYERS[_package(target)] >= LAYERS[_package(module)]
    )
    assert not against, "imports against the documented direction:\n" + "\n".join(against)


def test_deep_loads_nothing_of_cfr_mix():
    """`cfr_mix` (layer 4) builds on `deep` (layer 3), never the reverse, also at run time:
    Deep CFR, imported and run, loads no module of `openspiel_cfrx.cfr_mix`."""
    code = ("import sys, pyspiel; from openspiel_cfrx.deep import DeepCFRSolver; "
            "DeepCFRSolver(pyspiel.load_game('kuhn_poker'), num_iterations=1, num_traversals=2, "
            "advantage_network_train_steps=1, policy_network_train_steps=1).solve(); "
            "loaded = [m for m in sys.modules if m.startswith('openspiel_cfrx.cfr_mix')]; assert not loaded, loaded")  # fmt: skip
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=600)


def _package_edges_block() -> str:
    graph, edges = _module_graph(), {}
    for module, targets in graph.items():
        for target in targets:
            if _package(target) != _package(module):
                edges.setdefault(_package(module) or "openspiel_cfrx", set()).add(_package(target))
    by_layer = sorted(edges, key=lambda p: (-LAYERS.get("" if p == "openspiel_cfrx" else p, 0), p))
    return "\n".join(f"{p:<13} -> {', '.join(sorted(edges[p]))}" for p in by_layer)


def test_architecture_page_draws_the_import_graph():
    """docs/architecture.md's layer table and package import list are the code's."""
    page = open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8").read()
    block = _package_edges_block()
    assert block in page, f"docs/architecture.md's import list is stale; the code's is:\n{block}"
    for package, layer in LAYERS.items():
        assert f"| {layer} | " in page and f"`{package or 'openspiel_cfrx'}`" in page, package
    rows = [line for line in page.splitlines() if line.startswith("| ") and line[2:3].isdigit()]
    documented = {
        name.strip("` "): int(row.split("|")[1])
        for row in rows
        for name in row.split("|")[2].split(",")
    }
    assert documented == {(p or "openspiel_cfrx"): layer for p, layer in LAYERS.items()}


def test_no_library_or_games_module_imports_the_examples():
    """`cfrx_examples` is the top: nothing in `openspiel_cfrx` or `games` imports it."""
    offenders = []
    for package in ("openspiel_cfrx", "games"):
        for folder, _, files in os.walk(os.path.join(ROOT, package)):
            for name in files:
                if name.endswith(".py"):
                    tree = ast.parse(open(os.path.join(folder, name), encoding="utf-8").read())
                    tops = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
                    tops |= {(n.module or "").split(".")[0] for n in ast.walk(tree)
                             if isinstance(n, ast.ImportFrom) and n.level == 0}  # fmt: skip
                    if tops & {"cfrx_examples", "examples"}:
                        offenders.append(os.path.relpath(os.path.join(folder, name), ROOT))
    assert offenders == []
    code = ("import sys, openspiel_cfrx, games; loaded = [m for m in sys.modules if m.startswith('cfrx_examples')]; "
            "assert not loaded, loaded")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=600)
