"""Traversals on Ray workers (issue 20): a local 2-worker instance on this machine only."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pyspiel
import pytest

from openspiel_cfrx.deep import DeepCFRSolver
from openspiel_cfrx.deep.distributed import RayUnavailableError, share_sizes, split
from openspiel_cfrx.deep.sampler import smallest_share

ray = pytest.importorskip("ray")

FAST = dict(advantage_network_train_steps=20, policy_network_train_steps=5, batch_size_advantage=64,
            batch_size_strategy=64, advantage_network_layers=(16,), policy_network_layers=(16,))  # fmt: skip
LEDUC_ON_TWO = dict(num_iterations=2, num_traversals=1000, seed=11, workers={"num_workers": 2}, reporting={"log_every": 1}, **FAST)


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance with 2 CPUs for the module (never another address)."""
    started = not ray.is_initialized()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # this machine only
    if started:
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def clean_leduc_run(local_ray):
    """A fault-free 2-worker Leduc run (LEDUC_ON_TWO), for the tests that run it again."""
    solver = DeepCFRSolver(pyspiel.load_game("leduc_poker"), **LEDUC_ON_TWO)
    solver.solve()
    return solver


def _memories(solver):
    return [memory.state_dict() for memory in (*solver.advantage_buffers, solver.strategy_buffer)]


def _assert_same_memories(a, b):
    for left, right in zip(_memories(a), _memories(b), strict=True):
        for key in ("features", "targets", "legal_mask", "iteration"):
            np.testing.assert_array_equal(left[key], right[key])


def test_split_is_even_and_complete():
    assert split(10, 3) == [4, 3, 3] and split(1, 2) == [1, 0] and sum(split(12345, 7)) == 12345


def test_shares_by_factoring():
    """Rounds of N equal shares, each handing out half of what is left, until a
    share would fall below the floor; then the rest as N near-equal shares.
    K = 10,000 on 16 workers with a floor of 100: 16 x 313, 16 x 156, then 16 x 156."""
    assert share_sizes(10_000, 16, 100) == [313] * 16 + [156] * 16 + [156] * 16
    assert share_sizes(10_000, 8, 1000) == [1250] * 8  # K <= 2N x floor: one equal share per worker
    assert share_sizes(1500, 16, 1000) == [94] * 12 + [93] * 4
    assert share_sizes(3, 4, 1) == [1, 1, 1, 0]  # fewer traversals than workers
    for count, n, least in [(12345, 7, 100), (999, 3, 1000), (64, 2, 1), (10_000, 64, 100), (1500, 2, 100)]:
        sizes = share_sizes(count, n, least)
        assert sum(sizes) == count and len(sizes) % n == 0
        rounds = [sizes[i:i + n] for i in range(0, len(sizes), n)]
        assert all(max(r) - min(r) <= 1 for r in rounds)  # equal workers finish a round together
        assert all(s >= least for s in sizes[:-n])  # only the last round may go below the floor


def test_smallest_share_is_about_30_ms_of_work_or_the_batch():
    assert smallest_share("state", 1000) == 100 and smallest_share("tree", 1000) == 500
    assert smallest_share("state", 64) == 64  # never above the traversal batch
    assert smallest_share("vectorized", 4096) == 4096 and smallest_share("poker", 8192) == 8192


def test_two_workers_sample_like_the_in_process_sampler_lemma_1(local_ray):
    """Lemma 1 on Kuhn under uniform sigma^1: the mean sampled regret of
    player 1's King facing a bet is exactly (fold -1.5, call +1.5), the Queen's
    is (-0.5, +0.5); both samplers agree in the number of visits too."""
    kuhn = pyspiel.load_game("kuhn_poker")
    results = {}
    for workers in (1, 2):
        solver = DeepCFRSolver(kuhn, num_traversals=6000, memory_capacity=10**6, seed=5, workers={"num_workers": workers}, **FAST)
        solver.collect(1, 6000)
        memory = solver.advantage_buffers[1].state_dict()
        features, regrets = memory["features"], memory["targets"]
        facing_bet = (features[:, 5] == 0) & (features[:, 6] == 1)
        king, queen = facing_bet & (features[:, 4] == 1), facing_bet & (features[:, 3] == 1)
        results[workers] = (regrets[king].mean(axis=0), regrets[queen].mean(axis=0), queen.sum(), len(regrets))
        np.testing.assert_allclose(results[workers][0], [-1.5, 1.5], atol=1e-6)
        np.testing.assert_allclose(results[workers][1], [-0.5, 0.5], atol=0.12)
    assert results[2][2] == pytest.approx(results[1][2], rel=0.1)  # Queen-facing-bet visits
    assert results[2][3] == pytest.approx(results[1][3], rel=0.05)  # all traverser visits


# Slow: the fast test below runs the same seed twice on 2 workers too, and asserts identical memories.
@pytest.mark.slow
def test_same_seed_and_workers_reproduce_a_run_exactly(clean_leduc_run):
    leduc = pyspiel.load_game("leduc_poker")
    runs = [clean_leduc_run, DeepCFRSolver(leduc, **LEDUC_ON_TWO)]
    runs[1].solve()
    _assert_same_memories(*runs)
    state = leduc.new_initial_state().child(0).child(3)
    assert runs[0].action_probabilities(state) == runs[1].action_probabilities(state)
    assert runs[0].nodes_touched == runs[1].nodes_touched


def test_a_worker_killed_mid_iteration_is_replaced_and_its_share_rerun(clean_leduc_run, caplog):
    """ray.kill on one actor while it runs its share: the iteration completes,
    the log line says so, and the memories hold exactly a clean run's samples
    (no partial share; same size and contents)."""
    clean = clean_leduc_run
    faulty = DeepCFRSolver(pyspiel.load_game("leduc_poker"), **LEDUC_ON_TWO)
    kills = []

    def kill_worker_1(workers):
        if faulty.iteration == 1 and not kills:  # during iteration 2, player 0's round
            ray.kill(workers[1], no_restart=True)
            kills.append(workers[1])

    faulty.sampler.on_dispatch = kill_worker_1
    with caplog.at_level("WARNING"):
        faulty.solve()
    assert kills and faulty.sampler.restarts == 1
    events = faulty.history[1]["events"]
    assert len(events) == 1 and "worker 1 died" in events[0] and "re-run" in events[0]
    assert "worker 1 died" in caplog.text
    _assert_same_memories(clean, faulty)
    assert [len(m) for m in faulty.advantage_buffers] == [len(m) for m in clean.advantage_buffers]


def test_missing_ray_is_one_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(RayUnavailableError, match=r"pip install 'openspiel_cfrx\[ray\]'"):
        DeepCFRSolver(pyspiel.load_game("kuhn_poker"), workers={"num_workers": 2})


def test_one_worker_never_imports_ray():
    code = ("import sys, pyspiel; from openspiel_cfrx.deep import DeepCFRSolver; "
            "DeepCFRSolver(pyspiel.load_game('kuhn_poker'), num_iterations=1, num_traversals=5, "
            "advantage_network_train_steps=2, policy_network_train_steps=2).solve(); "
            "assert 'ray' not in sys.modules")  # fmt: skip
    subprocess.run([sys.executable, "-c", code], check=True, timeout=600)


BAD_ADDRESSES = [
    (7, r"ray_address must be None"),
    ("127.0.0.1:9", r"cannot reach a Ray cluster at '127.0.0.1:9'.*ray start --head"),
    ("nonsense", r"cannot join the Ray cluster at 'nonsense'"),  # last: the only one that reaches ray.init
]


def test_bad_addresses_are_one_clear_error_each_quickly():
    """In a fresh process (this one may already be connected), one address
    after the other: each gives one line; bounded time."""
    code = ("import pyspiel; from openspiel_cfrx.deep import DeepCFRSolver\n"
            f"for address in {[address for address, _ in BAD_ADDRESSES]!r}:\n"
            "    try:\n"
            "        DeepCFRSolver(pyspiel.load_game('kuhn_poker'), workers={'num_workers': 2, 'ray_address': address})\n"
            "    except Exception as e:\n"
            "        print(type(e).__name__ + ': ' + str(e))\n")  # fmt: skip
    env = dict(os.environ, RAY_ADDRESS="")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)  # ~10 s quiet; generous for a loaded machine
    lines = out.stdout.strip().splitlines()
    assert len(lines) == len(BAD_ADDRESSES), lines  # one line each, and every address refused
    for line, (_, message) in zip(lines, BAD_ADDRESSES, strict=True):
        assert re.search(message, line), line


# Slow (~20 s: three CFR-MIX runs, two of them on fresh workers). The fast tier has the Ray sampler
# under Deep CFR above, and CFR-MIX's probe traversals in-process in test_cfr_mix.py.
@pytest.mark.slow
def test_cfr_mix_probe_traversals_on_workers_reproduce_and_learn(local_ray):
    """CFR-MIX on a Python-registered team game (workers import its module):
    two runs with the same seed and 2 workers give the same strategies, and
    the traversals are counted like the in-process ones."""
    import games  # noqa: F401  registers team_goofspiel
    from openspiel_cfrx import CFRMixSolver

    game = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2,num_turns=2)")
    settings = dict(num_iterations=2, num_traversals=64, regret_train_steps=10, policy_train_steps=10, seed=3)
    runs = [CFRMixSolver(game, workers={"num_workers": 2}, **settings) for _ in range(2)]
    for solver in runs:
        solver.solve()
    local = CFRMixSolver(game, **settings)
    local.solve()
    state = game.new_initial_state()
    assert runs[0].action_probabilities(state) == runs[1].action_probabilities(state)
    assert runs[0].nodes_touched == runs[1].nodes_touched
    assert runs[0].nodes_touched == pytest.approx(local.nodes_touched, rel=0.25)
    assert sum(runs[0].action_probabilities(state).values()) == pytest.approx(1.0)
