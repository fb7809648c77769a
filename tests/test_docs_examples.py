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
