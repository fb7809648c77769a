"""Torch's intra-op threads: "auto" trains small networks on one thread (a
second one gains nothing and loses 2-3x on a shared machine: docs/decisions.md,
"Torch threads"); an int sets the count, None leaves it alone."""

from __future__ import annotations

import pyspiel
import pytest
import torch

from openspiel_cfrx import CFRMixSolver, DeepCFRSolver
from openspiel_cfrx.deep.threads import auto_num_threads, usable_cpus

TINY = dict(num_iterations=1, num_traversals=2, advantage_network_train_steps=1, policy_network_train_steps=1)


@pytest.fixture(autouse=True)
def _restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def kuhn():
    return pyspiel.load_game("kuhn_poker")


def test_default_trains_small_networks_on_one_thread(kuhn, capsys, monkeypatch):
    from openspiel_cfrx.deep import threads

    monkeypatch.setattr(threads, "_said", set())  # said once per process: earlier tests in this worker may have
    torch.set_num_threads(2)
    DeepCFRSolver(kuhn, **TINY)  # OpenSpiel's default networks: 64 units wide
    assert torch.get_num_threads() == 1
    assert "torch intra-op threads 2 -> 1" in capsys.readouterr().err


def test_wide_networks_use_the_usable_cpus(kuhn):
    torch.set_num_threads(64)
    DeepCFRSolver(kuhn, advantage_network_layers=(512,), policy_network_layers=(16,), **TINY)
    assert torch.get_num_threads() == min(64, usable_cpus())
    assert auto_num_threads([129], current=2) == min(2, usable_cpus()) and auto_num_threads([128, 64], current=8) == 1


@pytest.mark.parametrize("num_threads, expected", [(None, 3), (2, 2)])
def test_an_int_sets_the_count_and_none_leaves_it(kuhn, num_threads, expected):
    torch.set_num_threads(3)
    DeepCFRSolver(kuhn, workers={"num_threads": num_threads}, **TINY)
    assert torch.get_num_threads() == expected


def test_cfr_mix_keeps_one_thread():
    torch.set_num_threads(2)
    CFRMixSolver(pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2,num_turns=2)"), num_iterations=1)
    assert torch.get_num_threads() == 1


@pytest.mark.parametrize("bad", ["two", 0, -1, 1.5])
def test_bad_thread_counts_are_refused_in_one_line(kuhn, bad):
    with pytest.raises(ValueError, match=r"num_threads must be an int >= 1, 'auto' or None"):
        DeepCFRSolver(kuhn, workers={"num_threads": bad}, **TINY)
