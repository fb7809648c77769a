"""Code blocks of the docs that promise to run (marked `<!-- example: NAME -->`)
run, and do what the text says."""

import os
import re

import numpy as np
import pytest
import torch

import openspiel_cfrx
from openspiel_cfrx.deep import ReservoirMemory, Trainer, WeightedSquaredLoss
from openspiel_cfrx.deep.networks import make_network

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")


def _example(doc: str, name: str) -> str:
    text = open(os.path.join(DOCS, doc)).read()
    match = re.search(rf"<!-- example: {name} -->\n```python\n(.*?)```", text, re.S)
    assert match, f"{doc} has no example {name!r}"
    return match.group(1)


def test_huber_deep_cfr_variant_in_the_docs_trains(capsys):
    """docs/deep_cfr.md: a fourth variant in one small class; it converges on
    Kuhn (uniform play: NashConv 0.917) and its loss is never merged."""
    torch.set_num_threads(1)
    scope = {}
    exec(compile(_example("deep_cfr.md", "huber"), "docs/deep_cfr.md:huber", "exec"), scope)
    solver, game = scope["solver"], scope["game"]
    assert isinstance(solver, openspiel_cfrx.DeepCFRSolver) and solver.iteration == 10
    assert not type(solver).advantage_loss.merges_duplicates
    assert openspiel_cfrx.nash_conv(game, solver) < 0.45
    assert "NashConv" in capsys.readouterr().out


class _Recording:
    """A loss that records its batches' row counts."""

    def __init__(self, merges: bool):
        self.merges_duplicates, self.rows = merges, []
        self.inner = WeightedSquaredLoss()

    def __call__(self, outputs, targets, mask, weights):
        self.rows.append(outputs.shape[0])
        return self.inner(outputs, targets, mask, weights)


@pytest.mark.parametrize("merges", [True, False])
def test_trainer_merges_duplicates_only_for_losses_that_declare_it(merges):
    memory = ReservoirMemory(capacity=1000, feature_size=2, num_actions=2)
    memory.track_duplicates()
    rng = np.random.default_rng(0)
    features = np.eye(2, dtype=np.float32)[rng.integers(0, 2, 500)]  # 2 distinct infosets, 500 entries
    memory.add(features, rng.normal(size=(500, 2)).astype(np.float32), np.ones((500, 2), bool), 1, rng)
    trainer = Trainer(make_network("mlp", 2, 2, (8,)), learning_rate=1e-3, gradient_clip=1.0)
    loss = _Recording(merges)
    trainer.fit_memory(memory, loss, steps=5, batch_size=64, rng=rng, linear_scale=None)
    assert loss.rows == ([2] * 5 if merges else [64] * 5)


def test_openspiel_swap_in_getting_started_prints_the_same_nash_conv_twice(capsys):
    """docs/getting-started.md: our DCFR in an OpenSpiel script; OpenSpiel's
    evaluator and ours print the same NashConv."""
    code = _example("getting-started.md", "swap")
    exec(compile(code, "docs/getting-started.md:swap", "exec"), {})
    theirs, ours = (float(line) for line in capsys.readouterr().out.split())
    assert ours == pytest.approx(theirs, abs=1e-9) and ours < 1e-2


def test_docs_hold_no_work_log_references():
    """The docs state facts and where their evidence lives, not which work
    session or issue produced them."""
    pattern = re.compile(r"session ?[0-9]|\bissue ?#?[0-9]", re.I)
    hits = []
    for folder, _, files in os.walk(DOCS):
        for name in files:
            if name.endswith(".md"):
                path = os.path.join(folder, name)
                for number, line in enumerate(open(path, encoding="utf-8"), 1):
                    if pattern.search(line):
                        hits.append(f"{os.path.relpath(path, DOCS)}:{number}: {line.strip()[:100]}")
    assert not hits, "\n".join(hits)


def test_docs_site_builds_strictly(tmp_path):
    """`mkdocs build --strict` (broken links, missing anchors, pages left out
    of the nav, docstrings mkdocstrings cannot render) passes; skipped where
    the docs tools are not installed."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    import subprocess
    import sys

    root = os.path.dirname(DOCS)
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=root, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
