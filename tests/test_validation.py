"""Hyperparameters validated the same way in both neural solvers; NaN training
losses stop a run (issue 17, item 4)."""

from __future__ import annotations

import math

import pyspiel
import pytest

import games  # noqa: F401  (team_goofspiel)
from openspiel_cfrx import CFRMixSolver, DeepCFRSolver
from openspiel_cfrx.deep.validation import TrainingDivergedError

TINY_GOOFSPIEL = "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)"
FAST_MIX = dict(num_traversals=10, regret_train_steps=5, policy_train_steps=5, workers={"num_threads": 1})

BAD_SETTINGS = [
    ("learning_rate", math.inf, "learning_rate must be a finite number > 0"),
    ("learning_rate", math.nan, "learning_rate must be a finite number > 0"),
    ("learning_rate", 0.0, "learning_rate must be a finite number > 0"),
    ("training", {"gradient_clip": -1.0}, "gradient_clip must be a finite number > 0 or None"),
    ("training", {"gradient_clip": math.inf}, "gradient_clip must be a finite number > 0 or None"),
    ("num_traversals", 0, "num_traversals must be an int >= 1"),
    ("num_iterations", 2.5, "num_iterations must be an int >= 1"),
]


@pytest.mark.parametrize("name, value, message", BAD_SETTINGS)
def test_cfr_mix_rejects_impossible_settings(name, value, message):
    game = pyspiel.load_game(TINY_GOOFSPIEL)
    with pytest.raises(ValueError, match=message):
        CFRMixSolver(game, **{**FAST_MIX, name: value})


@pytest.mark.parametrize("name, value, message", BAD_SETTINGS)
def test_deep_cfr_rejects_impossible_settings(name, value, message):
    with pytest.raises(ValueError, match=message):
        DeepCFRSolver(pyspiel.load_game("kuhn_poker"), **{name: value})


def test_cfr_mix_stops_on_a_nan_loss():
    game = pyspiel.load_game(TINY_GOOFSPIEL)
    solver = CFRMixSolver(game, num_iterations=3, learning_rate=1e30, training={"gradient_clip": None}, **FAST_MIX)
    with pytest.raises(TrainingDivergedError, match=r"at iteration \d+: training diverged"):
        solver.solve()


def test_deep_cfr_stops_on_a_nan_loss():
    solver = DeepCFRSolver(pyspiel.load_game("kuhn_poker"), num_iterations=3, num_traversals=20,
                           advantage_network_train_steps=5, policy_network_train_steps=5,
                           learning_rate=1e30, training={"gradient_clip": None}, seed=1)  # fmt: skip
    with pytest.raises(TrainingDivergedError, match=r"network training loss is (nan|inf) at iteration \d+"):
        solver.solve()
