"""Deep CFR's traversals: the memory limit of a batch, the garbage collector,
recorded regrets (Lemma 1) on the state, tree and vectorised backends, and
the training schedules."""

import gc
import random

import numpy as np
import pyspiel
import pytest
import torch

from openspiel_cfrx.deep import (
    DeepCFRSolver,
    TraversalRecord,
    external_sampling_traversal,
    run_batched,
)
from openspiel_cfrx.deep.sampler import TraversalSampler, TraversalTooLargeError
from openspiel_cfrx.deep.schedule import Schedule
from openspiel_cfrx.deep.traversal import StateCursor
from openspiel_cfrx.tree import get_tree

torch.set_num_threads(1)


from deep_cfr_settings import SMALL  # noqa: E402  (tests/ is on sys.path)


def _tensor(state, player):
    return state.information_state_tensor(player)


def test_a_traversal_batch_over_the_memory_limit_stops_with_an_estimate():
    """8 Leduc traversals record ~60 samples of ~1 kB (Python lists): with a
    20 kB limit the batch stops with the estimate and the fix; with the default
    limit (half the available memory) the same batch completes."""
    leduc = pyspiel.load_game("leduc_poker")

    def uniform(player, features, legal):
        return legal / legal.sum(axis=1, keepdims=True)

    small = TraversalSampler(StateCursor(leduc, _tensor), 3, batch_size=8, rng=random.Random(0),
                             max_record_bytes=20_000)  # fmt: skip
    with pytest.raises(TraversalTooLargeError, match=r"batch of 8 .* samples .*GiB.*batch_size"):
        next(small.collect(uniform, traverser=0, iteration=1, count=8))
    assert gc.isenabled()  # the stopped batch gave the garbage collector back
    fine = TraversalSampler(StateCursor(leduc, _tensor), 3, batch_size=8, rng=random.Random(0))
    samples = next(fine.collect(uniform, traverser=0, iteration=1, count=8))
    assert len(samples.advantage_features) > 20


def test_traversal_batches_pause_the_garbage_collector_and_leave_no_cycles():
    """The cyclic collector is off while a batch runs (its samples are Python
    objects until it ends), back on after it, left off if the caller had it
    off; a batch leaves no cyclic garbage behind."""
    leduc = pyspiel.load_game("leduc_poker")
    seen = []

    def uniform(player, features, legal):
        seen.append(gc.isenabled())
        return legal / legal.sum(axis=1, keepdims=True)

    sampler = TraversalSampler(StateCursor(leduc, _tensor), 3, batch_size=50, rng=random.Random(0))
    gc.collect()
    chunks = list(sampler.collect(uniform, traverser=0, iteration=1, count=200))
    assert len(chunks) == 4 and seen and not any(seen) and gc.isenabled()
    assert gc.collect() == 0
    gc.disable()
    try:
        list(sampler.collect(uniform, traverser=1, iteration=1, count=50))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_traversal_records_regrets_against_the_strategy_value(kuhn):
    record = TraversalRecord()
    calls = []

    def answer(queries):  # fixed, non-uniform strategy: 0.7 on action 0
        calls.append(len(queries))
        return [[0.7, 0.3] for _ in queries]

    rng = random.Random(0)
    values = run_batched(
        (external_sampling_traversal(StateCursor(kuhn, _tensor), kuhn.new_initial_state(), 0, 2, rng, record)
         for _ in range(50)),
        answer,
    )  # fmt: skip
    assert len(values) == 50 and max(calls) == 50  # all 50 first queries in one batch
    assert record.advantage_features and record.strategy_features
    for regrets in record.advantage_regrets:
        # r(a) = v(a) - sum sigma(a') v(a')  =>  sum_a sigma(a) r(a) = 0
        assert 0.7 * regrets[0] + 0.3 * regrets[1] == pytest.approx(0.0, abs=1e-12)
    for features in record.advantage_features:
        assert features[0] == 1.0  # player-0 bit of Kuhn's tensor: traverser's infosets
    for features, probs in zip(record.strategy_features, record.strategy_probs, strict=True):
        assert features[1] == 1.0 and probs == [0.7, 0.3]
    # Per traversal: chance deals 2 cards (3 nodes), traverser explores both
    # actions at each of its nodes; nodes counts every history touched.
    assert record.nodes >= 50 * 5


def test_sampled_regrets_estimate_the_advantage_lemma_1(kuhn):
    """Lemma 1: the mean sampled regret at an infoset is the advantage of each
    action under uniform play, v(I,a) - v(I) given reaching I (exact via tree)."""
    record = TraversalRecord()
    rng = random.Random(1)
    run_batched(
        (external_sampling_traversal(StateCursor(kuhn, _tensor), kuhn.new_initial_state(), 1, 2, rng, record)
         for _ in range(4000)),
        lambda queries: [[0.5, 0.5] for _ in queries],
    )  # fmt: skip
    # Player 1 holding the King facing a bet (infoset "2pb"): calling wins 2
    # always, folding loses 1, so regrets are (call: +1.5, fold: -1.5).
    king_facing_bet = [
        r for f, r in zip(record.advantage_features, record.advantage_regrets, strict=True)
        if f[2 + 2] == 1.0 and f[5:7] == [0.0, 1.0]
    ]  # fmt: skip
    assert king_facing_bet
    np.testing.assert_allclose(np.mean(king_facing_bet, axis=0), [-1.5, 1.5], atol=1e-9)
    # Queen facing a bet: calling wins 2 against the Jack and loses 2 against
    # the King, so the sampled regrets vary; their mean is (fold -0.5, call 0.5).
    queen_facing_bet = [
        r for f, r in zip(record.advantage_features, record.advantage_regrets, strict=True)
        if f[1 + 2] == 1.0 and f[5:7] == [0.0, 1.0]
    ]  # fmt: skip
    assert len(queen_facing_bet) > 400
    np.testing.assert_allclose(np.mean(queen_facing_bet, axis=0), [-0.5, 0.5], atol=0.15)


def test_vectorized_traversals_estimate_the_advantage_lemma_1(kuhn):
    """The vectorised backend samples like Algorithm 2: same exact regrets at
    the King facing a bet, same mean at the Queen facing a bet, and the
    opponent's strategy recorded at every opponent visit."""
    from openspiel_cfrx.deep.vector_traversal import VectorTree

    tree = get_tree(kuhn)
    uniform = tree.infoset_legal_mask / tree.infoset_legal_mask.sum(axis=1, keepdims=True)
    samples = VectorTree(tree).traverse(1, 8000, uniform, np.random.default_rng(1))
    infoset = {(int(p), k): i for i, (p, k) in enumerate(zip(tree.infoset_player, tree.infoset_key, strict=True))}
    king = samples.advantage_regrets[samples.advantage_infosets == infoset[1, "2b"]]
    np.testing.assert_allclose(king.mean(axis=0), [-1.5, 1.5], atol=1e-9)
    queen = samples.advantage_regrets[samples.advantage_infosets == infoset[1, "1b"]]
    assert len(queen) > 800
    np.testing.assert_allclose(queen.mean(axis=0), [-0.5, 0.5], atol=0.1)
    # Player 0 acts once per traversal at the root infosets (one per card).
    root_visits = np.isin(samples.strategy_infosets, [infoset[0, c] for c in "012"]).sum()
    assert root_visits == 8000
    np.testing.assert_allclose(samples.strategy_probs, 0.5)
    # Nodes per traversal: chance (2) + P0 + P1 (both actions) + their subtrees.
    record = TraversalRecord()
    rng = random.Random(2)
    run_batched(
        (external_sampling_traversal(StateCursor(kuhn, _tensor), kuhn.new_initial_state(), 1, 2, rng, record)
         for _ in range(8000)),
        lambda queries: [[0.5, 0.5] for _ in queries],
    )  # fmt: skip
    assert samples.nodes / 8000 == pytest.approx(record.nodes / 8000, rel=0.02)
    assert len(samples.advantage_infosets) == pytest.approx(len(record.advantage_features), rel=0.03)


def test_vectorized_backend_solver_learns_kuhn(kuhn):
    solver = DeepCFRSolver(kuhn, seed=1, traversal={"backend": "vectorized"}, **{**SMALL, "num_iterations": 3})
    solver.solve()
    probs = solver.batch_action_probabilities([kuhn.new_initial_state().child(0).child(1)])
    assert probs.shape == (1, 2) and probs.sum() == pytest.approx(1.0)
    assert solver.nodes_touched > 0 and len(solver.advantage_buffers[0]) > 0


def test_cosine_schedule_anneals_each_training_run(kuhn):
    solver = DeepCFRSolver(kuhn, seed=1, learning_rate=1e-2, training={"schedule": Schedule(learning_rate="cosine")}, **SMALL)
    rates = solver.schedule.learning_rates(1e-2, 100)
    assert rates[0] == pytest.approx(1e-2) and rates[50] == pytest.approx(5e-3)
    assert all(a > b > 0 for a, b in zip(rates[:-1], rates[1:], strict=True))
    assert DeepCFRSolver(kuhn, learning_rate=1e-2).schedule.learning_rates(1e-2, 3) == [1e-2] * 3
    solver.solve()
    last = solver.schedule.learning_rates(1e-2, SMALL["advantage_network_train_steps"])[-1]
    assert solver.advantage_trainers[0].optimizer.lr == pytest.approx(last)  # each retraining ends annealed
    constant = DeepCFRSolver(kuhn, seed=1, learning_rate=1e-2, **SMALL)
    constant.solve()
    x = torch.zeros(1, solver.feature_size)
    assert not torch.allclose(solver.advantage_networks[0](x), constant.advantage_networks[0](x))


def test_advantage_steps_ramp_up_over_the_first_iterations(kuhn):
    ramped = DeepCFRSolver(kuhn, advantage_network_train_steps=250, training={"schedule": Schedule(train_steps_ramp=20)})
    assert [ramped.advantage_train_steps(t) for t in (1, 5, 10, 19, 20, 100)] == [13, 63, 125, 238, 250, 250]
    linear = DeepCFRSolver(kuhn, advantage_network_train_steps=300,
                           training={"schedule": Schedule(train_steps_ramp=81, train_steps_initial=100)})  # fmt: skip
    assert [linear.advantage_train_steps(t) for t in (1, 41, 81, 200)] == [100, 200, 300, 300]
    paper = DeepCFRSolver(kuhn, advantage_network_train_steps=250)
    assert {paper.advantage_train_steps(t) for t in (1, 20, 100)} == {250}
    assert {paper.traversals(t) for t in (1, 20, 100)} == {1000}
    more = DeepCFRSolver(kuhn, num_traversals=10000, training={"schedule": Schedule(traversals_ramp=41, traversals_initial=2000)})
    assert [more.traversals(t) for t in (1, 21, 41, 99)] == [2000, 6000, 10000, 10000]
    solver = DeepCFRSolver(kuhn, seed=1, training={"schedule": Schedule(train_steps_ramp=10)},
                           **{**SMALL, "advantage_network_train_steps": 20})  # fmt: skip
    solver.run_iteration()
    assert solver.advantage_trainers[0].optimizer.steps == 2  # ceil(20 * 1 / 10) steps at iteration 1


def test_tree_backend_draws_the_same_samples_as_the_pyspiel_backend():
    game = pyspiel.load_game("leduc_poker")
    kwargs = {**SMALL, "seed": 3}
    by_state = DeepCFRSolver(game, **kwargs)
    by_tree = DeepCFRSolver(game, traversal={"backend": "tree"}, **kwargs)
    for solver in (by_state, by_tree):
        solver.run_iteration()
        solver.run_iteration()  # second iteration uses trained networks
    assert by_state.nodes_touched == by_tree.nodes_touched
    pairs = zip([*by_state.advantage_buffers, by_state.strategy_buffer],
                [*by_tree.advantage_buffers, by_tree.strategy_buffer], strict=True)  # fmt: skip
    for a, b in pairs:
        assert a.add_calls == b.add_calls > 0
        np.testing.assert_array_equal(a.features[: len(a)], b.features[: len(b)])
        np.testing.assert_allclose(a.targets[: len(a)], b.targets[: len(b)], atol=1e-6)
