"""Deep CFR: regret matching, memories, weighting, optimiser, traversal,
checkpoints, OpenSpiel API compatibility, errors, and convergence on Kuhn."""

import gc
import inspect
import os
import random

import numpy as np
import pyspiel
import pytest
import torch
from open_spiel.python import policy as policy_lib
from open_spiel.python.pytorch import deep_cfr as os_deep_cfr

import openspiel_cfrx
from openspiel_cfrx.deep import (
    MLP,
    CheckpointError,
    DeepCFRSolver,
    ReservoirMemory,
    SlidingWindowMemory,
    TraversalRecord,
    external_sampling_traversal,
    masked_softmax,
    regret_matching,
    run_batched,
)
from openspiel_cfrx.deep.networks import FlatAdam, forward_in_chunks, reset_parameters
from openspiel_cfrx.deep.sampler import TraversalSampler, TraversalTooLargeError
from openspiel_cfrx.deep.schedule import Schedule
from openspiel_cfrx.deep.trainer import SQUARED, Trainer, memory_batches
from openspiel_cfrx.deep.traversal import StateCursor
from openspiel_cfrx.tree import UnsupportedGameError, get_tree

torch.set_num_threads(1)


def _tensor(state, player):
    return state.information_state_tensor(player)

SMALL = dict(
    num_iterations=2,
    num_traversals=40,
    advantage_network_train_steps=5,
    policy_network_train_steps=5,
    batch_size_advantage=32,
    batch_size_strategy=32,
    advantage_network_layers=(16, 16),
    policy_network_layers=(16, 16),
    memory_capacity=5000,
)


@pytest.fixture(scope="module")
def kuhn():
    return pyspiel.load_game("kuhn_poker")


# ----------------------------------------------------------- regret matching
def test_regret_matching_proportional_to_positive_legal_advantages():
    advantages = np.array([[2.0, -1.0, 6.0], [1.0, 3.0, 100.0]])
    mask = np.array([[True, True, True], [True, True, False]])
    np.testing.assert_allclose(
        regret_matching(advantages, mask), [[0.25, 0.0, 0.75], [0.25, 0.75, 0.0]]
    )


def test_regret_matching_argmax_fallback_ignores_illegal_actions():
    advantages = np.array([[-3.0, -1.0, 5.0, -2.0]])  # the only positive is illegal
    mask = np.array([[True, True, False, True]])
    np.testing.assert_array_equal(regret_matching(advantages, mask, "argmax"), [[0, 1, 0, 0]])
    np.testing.assert_allclose(regret_matching(advantages, mask, "uniform"), [[1 / 3, 1 / 3, 0, 1 / 3]])
    with pytest.raises(ValueError, match="fallback"):
        regret_matching(advantages, mask, "softmax")


def test_masked_softmax_is_zero_on_illegal_actions():
    logits = torch.tensor([[5.0, 0.0, 0.0], [0.0, 9.0, 0.0]])
    mask = torch.tensor([[False, True, True], [True, False, False]])
    probs = masked_softmax(logits, mask)
    np.testing.assert_allclose(probs.numpy(), [[0, 0.5, 0.5], [1, 0, 0]], atol=1e-7)


# ------------------------------------------------------------------ memories
def _offer(memory, count, batch, rng):
    for lo in range(0, count, batch):
        n = min(batch, count - lo)
        ids = np.arange(lo, lo + n, dtype=np.float32)[:, None]
        memory.add(ids, np.zeros((n, 2), np.float32), np.ones((n, 2), bool), lo // batch + 1, rng)


@pytest.mark.parametrize("batch", [3, 37, 5000])
def test_reservoir_keeps_every_offer_with_equal_probability(batch):
    rng = np.random.default_rng(0)
    capacity, offered, trials = 100, 1000, 50
    counts = np.zeros(10)
    for _ in range(trials):
        memory = ReservoirMemory(capacity, 1, 2)
        _offer(memory, offered, batch, rng)
        assert len(memory) == capacity and memory.add_calls == offered
        kept = memory.features[:, 0].astype(int)
        assert len(np.unique(kept)) == capacity  # no entry is stored twice
        counts += np.bincount(kept // (offered // 10), minlength=10)
    # Each decile of the stream should hold capacity/10 entries on average:
    # chi-square with 9 degrees of freedom, p < 1e-4 above 33.7.
    expected = trials * capacity / 10
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 33.7, counts


def test_sliding_window_keeps_the_most_recent_entries():
    memory = SlidingWindowMemory(100, 1, 2)
    _offer(memory, 1050, 37, np.random.default_rng(0))
    assert sorted(memory.features[:, 0].astype(int)) == list(range(950, 1050))
    big = SlidingWindowMemory(10, 1, 2)
    _offer(big, 25, 25, np.random.default_rng(0))
    assert sorted(big.features[:, 0].astype(int)) == list(range(15, 25))


def test_memory_cost_per_entry_is_documented_size():
    memory = ReservoirMemory(1000, 30, 3)
    assert memory.nbytes == 1000 * ReservoirMemory.entry_bytes(30, 3) == 1000 * 139


def test_float16_memory_holds_exact_features_in_half_the_bytes_and_refuses_rounding():
    rng = np.random.default_rng(0)
    half, full = ReservoirMemory(40, 6, 3, "float16"), ReservoirMemory(40, 6, 3)
    assert half.nbytes == 40 * ReservoirMemory.entry_bytes(6, 3, "float16") == 40 * (2 * 6 + 5 * 3 + 4)
    for lo in range(0, 100, 13):  # card indices, -1, half big blinds, 0/1: all exact in float16
        x = rng.choice([-1.0, 0.0, 0.5, 1.0, 51.0, 1023.5], size=(13, 6)).astype(np.float32)
        y = rng.normal(size=(13, 3)).astype(np.float32)
        for memory in (half, full):
            memory.add(x, y, np.ones((13, 3), bool), 1 + lo, np.random.default_rng(lo))
    np.testing.assert_array_equal(half.features.astype(np.float32), full.features)
    np.testing.assert_array_equal(half.targets, full.targets)
    with pytest.raises(ValueError, match="memory_feature_dtype='float16' cannot hold these features exactly .*0.1"):
        half.add(np.full((2, 6), 0.1, np.float32), np.zeros((2, 3), np.float32), np.ones((2, 3), bool), 9, rng)
    state = half.state_dict()  # checkpoints keep the stored dtype; either dtype loads the other's exact values
    assert state["features"].dtype == np.float16
    back = ReservoirMemory(40, 6, 3)
    back.load_state_dict(state)
    np.testing.assert_array_equal(back.features, full.features)
    with pytest.raises(ValueError, match="unknown memory feature dtype 'int8'"):
        ReservoirMemory(4, 1, 2, "int8")


def test_float16_memories_train_the_same_solver_and_oversized_memories_are_refused(kuhn):
    runs = [DeepCFRSolver(kuhn, num_iterations=4, num_traversals=30, advantage_network_train_steps=10,
                          policy_network_train_steps=20, memory_feature_dtype=dtype, seed=3)
            for dtype in ("float16", "float32")]  # fmt: skip
    for solver in runs:
        solver.solve()
    assert runs[0].advantage_buffers[0].features.dtype == np.float16
    assert runs[0].nash_conv() == runs[1].nash_conv()  # the same numbers reach the networks
    with pytest.raises(ValueError, match=r"would take [0-9.]+ GiB when full .* more than the [0-9.]+ GiB available; "
                                         r"lower memory_capacity .*memory_feature_dtype='float16'"):  # fmt: skip
        DeepCFRSolver(kuhn, memory_capacity=10**11)
    with pytest.raises(ValueError, match="memory_feature_dtype"):
        DeepCFRSolver(kuhn, memory_feature_dtype="int8")


def _duplicated_memory(rng, capacity=300, offers=2000, distinct=20):
    memory = ReservoirMemory(capacity, 4, 3)
    memory.track_duplicates()
    rows = rng.normal(size=(distinct, 4)).astype(np.float32)
    masks = rng.random((distinct, 3)) < 0.7
    masks[:, 0] = True
    for lo in range(0, offers, 97):
        which = rng.integers(0, distinct, size=min(97, offers - lo))
        targets = rng.normal(size=(len(which), 3)).astype(np.float32)
        memory.add(rows[which], targets, masks[which], 1 + lo // 97, rng)
    return memory


def test_merging_duplicate_entries_keeps_the_loss_and_its_gradient():
    rng = np.random.default_rng(0)
    memory = _duplicated_memory(rng)
    size = len(memory)
    weights = memory.iteration[:size] * 0.1  # linear CFR weights (evictions happened: 2000 offers, 300 slots)
    merged = memory.aggregate("linear", 0.1)
    assert len(merged["weight"]) <= 20 and merged["size"] == size
    torch.manual_seed(0)
    net = MLP(4, 3, (8, 8))

    def loss_and_grad(x, y, m, w, constant=0.0):
        net.zero_grad()
        sq = torch.where(torch.as_tensor(m), (net(torch.as_tensor(x)) - torch.as_tensor(y)) ** 2, 0.0)
        loss = (torch.as_tensor(w, dtype=torch.float32) * sq.sum(1)).sum() / size + constant
        loss.backward()
        return loss.item(), torch.cat([p.grad.reshape(-1) for p in net.parameters()]).clone()

    direct = loss_and_grad(memory.features[:size], memory.targets[:size], memory.legal_mask[:size], weights)
    via_merge = loss_and_grad(
        merged["features"], merged["targets"], merged["legal_mask"], merged["weight"], merged["constant"] / size
    )
    assert via_merge[0] == pytest.approx(direct[0], rel=1e-5)
    torch.testing.assert_close(via_merge[1], direct[1], rtol=1e-4, atol=1e-6)
    uniform = memory.aggregate("uniform", 1.0)
    direct = loss_and_grad(memory.features[:size], memory.targets[:size], memory.legal_mask[:size], np.ones(size))
    via_merge = loss_and_grad(
        uniform["features"], uniform["targets"], uniform["legal_mask"], uniform["weight"], uniform["constant"] / size
    )
    assert via_merge[0] == pytest.approx(direct[0], rel=1e-5)
    torch.testing.assert_close(via_merge[1], direct[1], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("kind", ["reservoir", "sliding_window"])
def test_a_filling_memory_holds_every_offer_in_order(kind):
    """While the memory fills, entries land in consecutive slots in offer order
    (written as slices), then the policy takes over (written by index)."""
    from openspiel_cfrx.deep.memories import make_memory

    rng = np.random.default_rng(2)
    memory = make_memory(kind, 50, 1, 2)
    _offer(memory, 40, 7, rng)  # filling: 6 batches to consecutive slots
    np.testing.assert_array_equal(memory.features[:40, 0], np.arange(40))
    np.testing.assert_array_equal(memory.iteration[:40], np.arange(40) // 7 + 1)
    memory.add(np.arange(100, 130, dtype=np.float32)[:, None], np.zeros((30, 2), np.float32), np.ones((30, 2), bool), 9, rng)
    assert len(memory) == 50 and memory.add_calls == 70
    if kind == "sliding_window":  # the last 10 free slots, then the ring's first 20: the batch in order
        np.testing.assert_array_equal(memory.features[40:50, 0], np.arange(100, 110))
        np.testing.assert_array_equal(memory.features[:20, 0], np.arange(110, 130))
    else:  # the free slots took the batch's first 10; later entries may replace any slot
        assert (memory.features[40:50, 0] >= 100).all()


def test_duplicate_tracking_stops_when_infosets_outnumber_the_limit():
    rng = np.random.default_rng(1)
    memory = ReservoirMemory(100, 2, 2)
    memory.track_duplicates(max_unique=10)
    memory.add(rng.normal(size=(5, 2)).astype(np.float32), np.zeros((5, 2), np.float32), np.ones((5, 2), bool), 1, rng)
    assert memory.duplicates_tracked and memory.num_unique == 5
    memory.add(rng.normal(size=(20, 2)).astype(np.float32), np.zeros((20, 2), np.float32), np.ones((20, 2), bool), 2, rng)
    assert not memory.duplicates_tracked
    with pytest.raises(ValueError, match="track_duplicates"):
        memory.aggregate()


def test_merged_training_matches_sampled_training_in_expectation(kuhn):
    """Same seed, merged (exact full-memory gradient) vs sampled minibatches:
    both fit the memory; the merged loss is no worse."""
    settings = {**SMALL, "advantage_network_train_steps": 100, "batch_size_advantage": 256}
    merged = DeepCFRSolver(kuhn, seed=3, **settings)
    sampled = DeepCFRSolver(kuhn, seed=3, aggregate_duplicates=False, **settings)
    merged.run_iteration()
    sampled.run_iteration()
    assert merged.advantage_buffers[0].duplicates_tracked
    assert not sampled.advantage_buffers[0].duplicates_tracked
    for player in (0, 1):
        merged_loss = merged.history[-1]["advantage_loss"][player]
        assert merged_loss <= 1.05 * sampled.history[-1]["advantage_loss"][player]


# ------------------------------------------------------- weighting, networks
def test_linear_weights_are_rescaled_by_two_over_t(kuhn):
    solver = DeepCFRSolver(kuhn, **SMALL)
    for _ in range(7):
        solver.run_iteration()
    assert solver.iteration == 7 and solver.linear_scale() == pytest.approx(2.0 / 8)  # training at T = 8
    assert DeepCFRSolver(kuhn, linear_weighting=False, **SMALL).linear_scale() is None
    memory = ReservoirMemory(capacity=3, feature_size=1, num_actions=1)
    for t in (1, 4, 8):
        memory.add(np.zeros((1, 1), np.float32), np.zeros((1, 1), np.float32), np.ones((1, 1), bool), t,
                   np.random.default_rng(0))  # fmt: skip
    weights = memory_batches(memory, None, np.random.default_rng(0), 2.0 / 8, "cpu")(0)[3]
    np.testing.assert_allclose(weights.numpy(), [0.25, 1.0, 2.0])
    uniform = memory_batches(memory, None, np.random.default_rng(0), None, "cpu")(0)[3]
    np.testing.assert_allclose(uniform.numpy(), [1.0, 1.0, 1.0])


def test_average_weighting_weighs_the_average_apart_from_the_regrets(kuhn, tmp_path):
    """average_weighting="uniform" with linear regrets: the same run (training
    does not read the average's weights), the sd_cfr mixture and the policy
    network's loss weighted 1; checkpoints rebuild both weightings."""
    settings = {**SMALL, "num_iterations": 3, "seed": 2, "average_policy": "sd_cfr"}
    linear = DeepCFRSolver(kuhn, **settings)
    uniform = DeepCFRSolver(kuhn, average_weighting="uniform", **settings)
    for solver in (linear, uniform):
        solver.solve()
    np.testing.assert_array_equal(linear.iteration_networks.weights(), [1, 2, 3])
    np.testing.assert_array_equal(uniform.iteration_networks.weights(), [1, 1, 1])
    for (_, ours), (_, theirs) in zip(linear.iteration_networks.kept, uniform.iteration_networks.kept, strict=True):
        for a, b in zip(ours, theirs, strict=True):
            for key in a:
                torch.testing.assert_close(a[key], b[key], rtol=0, atol=0)
    assert uniform.linear_scale() == linear.linear_scale() == pytest.approx(2.0 / 4)
    assert linear.average_scale() == pytest.approx(2.0 / 4) and uniform.average_scale() is None
    # The uniform mixture by hand: sum_t pi_p^t sigma^t / sum_t pi_p^t at a player-0 infoset after a pass.
    tree = get_tree(kuhn)
    state = kuhn.new_initial_state().child(0).child(1).child(0).child(1)  # J, Q: pass, bet; player 0 to act
    by_hand = np.zeros(2)
    reach_sum = 0.0
    root = [kuhn.new_initial_state().child(0).child(1)]
    for (_, first), (_, second) in zip(uniform.iterate_strategies(root), uniform.iterate_strategies([state]),
                                       strict=True):  # fmt: skip
        by_hand += first[0, 0] * second[0]
        reach_sum += first[0, 0]
    played = uniform.action_probabilities(state)
    np.testing.assert_allclose([played[0], played[1]], by_hand / reach_sum, atol=1e-12)
    assert abs(uniform.nash_conv() - linear.nash_conv()) > 1e-6  # the two averages differ
    assert uniform.strategy_array(tree).shape == linear.strategy_array(tree).shape
    # Checkpoints remember both weightings (linear_weighting=False used to come back linear).
    for kwargs, weights in (({"average_weighting": "uniform"}, [1, 1, 1]), ({"linear_weighting": False}, [1, 1, 1]),
                            ({"linear_weighting": False, "average_weighting": "linear"}, [1, 2, 3])):  # fmt: skip
        solver = DeepCFRSolver(kuhn, **kwargs, **settings)
        solver.solve()
        solver.save_checkpoint(path := str(tmp_path / "weights.pt"))
        rebuilt = DeepCFRSolver.from_checkpoint(path)
        np.testing.assert_array_equal(rebuilt.iteration_networks.weights(), weights)
        assert rebuilt.linear_scale() == solver.linear_scale()
        assert rebuilt.nash_conv() == pytest.approx(solver.nash_conv(), abs=1e-12)
    with pytest.raises(ValueError, match="average_weighting must be one of 'linear', 'uniform', None"):
        DeepCFRSolver(kuhn, average_weighting="quadratic", **SMALL)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (run on a lent device machine)")
def test_device_resident_memory_batches_draw_the_host_batches():
    """On an accelerator the memory lives on the device for a training phase;
    the rows drawn (same host RNG stream) and their weights must not change."""
    memory = ReservoirMemory(capacity=1000, feature_size=6, num_actions=3, feature_dtype="float16")
    rng = np.random.default_rng(0)
    for t in range(1, 6):
        memory.add(rng.integers(0, 9, size=(300, 6)).astype(np.float32), rng.normal(size=(300, 3)).astype(np.float32),
                   rng.random((300, 3)) < 0.7, t, rng)  # fmt: skip
    host = memory_batches(memory, 257, np.random.default_rng(1), 2.0 / 6, "cpu")
    device = memory_batches(memory, 257, np.random.default_rng(1), 2.0 / 6, "cuda")
    for step in range(3):
        for a, b in zip(host(step), device(step), strict=True):
            assert b.device.type == "cuda" and a.dtype == b.dtype
            torch.testing.assert_close(a, b.cpu(), rtol=0, atol=0)


def test_flat_adam_matches_torch_adam_with_gradient_clipping():
    torch.manual_seed(0)
    ours, theirs = MLP(5, 3, (8, 8)), MLP(5, 3, (8, 8))
    theirs.load_state_dict(ours.state_dict())
    flat = FlatAdam(ours, lr=1e-2, max_grad_norm=0.5)
    reference = torch.optim.Adam(theirs.parameters(), lr=1e-2)
    x, y = torch.randn(64, 5), torch.randn(64, 3) * 10  # large targets: clipping is active
    for _ in range(20):
        for net, opt in ((ours, flat), (theirs, reference)):
            opt.zero_grad()
            ((net(x) - y) ** 2).sum().backward()
            if opt is reference:
                torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            opt.step()
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_partial_reinitialization_shrinks_and_perturbs_keeping_adam_moments():
    """`Trainer.reinitialize(seed, fraction)`: theta <- (1 - f) theta + f theta_0
    (theta_0 the seeded fresh initialisation), Adam's moments kept; fraction 1
    is the fresh start with fresh moments."""
    torch.manual_seed(0)
    net = MLP(5, 3, (8, 8))
    trainer = Trainer(net, 1e-2, 1.0)
    x, y = torch.randn(64, 5), torch.randn(64, 3)
    trainer.fit(lambda step: (x, y, torch.ones_like(y, dtype=torch.bool), torch.ones(64)), 5, SQUARED)
    before, moments = [p.detach().clone() for p in net.parameters()], trainer.optimizer.exp_avg.clone()
    fresh = MLP(5, 3, (8, 8))
    reset_parameters(fresh, 11)
    trainer.reinitialize(11, 0.25)
    for p, b, f in zip(net.parameters(), before, fresh.parameters(), strict=True):
        assert not torch.equal(b, f)
        torch.testing.assert_close(p.detach(), 0.75 * b + 0.25 * f.detach(), rtol=0, atol=1e-6)
    assert torch.equal(trainer.optimizer.exp_avg, moments) and trainer.optimizer.steps == 5
    trainer.reinitialize(11)
    for p, f in zip(net.parameters(), fresh.parameters(), strict=True):
        assert torch.equal(p.detach(), f.detach())
    assert trainer.optimizer.steps == 0 and not trainer.optimizer.exp_avg.any()


@pytest.mark.parametrize("value", [1.5, -0.1, float("nan"), "yes"])
def test_reinitialize_fraction_outside_the_unit_interval_is_refused(kuhn, value):
    with pytest.raises(ValueError, match=r"reinitialize_advantage_networks must be True, False or a number in \[0, 1\]"):
        DeepCFRSolver(kuhn, reinitialize_advantage_networks=value)


def test_partially_reinitialized_advantage_networks_keep_learning(kuhn):
    """Between fine-tuning and retraining from scratch (the paper's), shrink
    and perturb still converges on Kuhn poker."""
    solver = DeepCFRSolver(kuhn, seed=42, **dict(KUHN_CONVERGENCE, reinitialize_advantage_networks=0.05))
    solver.solve()
    assert openspiel_cfrx.nash_conv(kuhn, solver) < 0.05


def test_flat_adam_device_scalar_update_matches_the_step():
    """`prepare` + `update` (the CUDA path: learning rate and step count as
    device scalars, capturable in a CUDA graph) is the same Adam step; checked
    here on CPU tensors, where `step` takes the scalar path."""
    torch.manual_seed(0)
    ours, theirs = MLP(5, 3, (8, 8)), MLP(5, 3, (8, 8))
    theirs.load_state_dict(ours.state_dict())
    scalar, device = FlatAdam(theirs, lr=1e-2, max_grad_norm=0.5), FlatAdam(ours, lr=1e-2, max_grad_norm=0.5)
    x, y = torch.randn(64, 5), torch.randn(64, 3) * 10  # large targets: clipping is active
    for k in range(30):
        for net, opt in ((theirs, scalar), (ours, device)):
            opt.lr = 1e-2 / (1 + k)  # a schedule: the rate changes every step
            opt.zero_grad()
            ((net(x) - y) ** 2).sum().backward()
            if opt is scalar:
                opt.step()
            else:
                opt.prepare()
                opt.update()
    assert device.steps == scalar.steps == 30
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (run on a lent device machine)")
@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
@pytest.mark.parametrize("network", ["mlp", "poker"])
def test_cuda_graph_fit_matches_the_eager_fit(precision, network):
    """On CUDA a fit replays one captured step; same batches, same updates as
    the eager loop (to float rounding), for the advantage and the policy loss,
    on an MLP and on the Appendix C network (embeddings: `embed_cards`)."""
    from openspiel_cfrx.deep.poker_network import PokerNetwork
    from openspiel_cfrx.deep.trainer import GRAPH_MIN_STEPS, SQUARED_ON_PROBABILITIES

    rng = np.random.default_rng(0)
    rows = 3000
    cards = np.stack([rng.permutation(52)[:5] for _ in range(rows)]).astype(np.float32)
    cards[:500, 2:] = -1  # preflop rows: no board
    bets = rng.choice([-1.0, 0.0, 1.0, 2.0], size=(rows, 12)).astype(np.float32)
    features = np.concatenate([cards, bets], axis=1)
    memory = ReservoirMemory(capacity=4000, feature_size=features.shape[1], num_actions=3)
    memory.add(features, 10 * rng.normal(size=(rows, 3)).astype(np.float32), rng.random((rows, 3)) < 0.8, 1, rng)
    memory.legal_mask[:, 0] = True
    for loss in (SQUARED, SQUARED_ON_PROBABILITIES):
        trained = []
        for graphs in (False, True):
            torch.manual_seed(0)
            net = MLP(17, 3, (16, 16)) if network == "mlp" else PokerNetwork(17, 3, (2, 3), 12, dim=16)
            trainer = Trainer(net.cuda(), 1e-2, 1.0, precision=precision)
            trainer.cuda_graphs = graphs
            final = trainer.fit_memory(memory, loss, 2 * GRAPH_MIN_STEPS, 256, np.random.default_rng(1), 0.5,
                                       Schedule(learning_rate="cosine"))  # fmt: skip
            assert trainer.cuda_graphs == graphs  # (a failed capture turns it off, with a warning)
            trained.append((final, trainer.optimizer.params.detach().cpu(), trainer.optimizer.steps))
        (eager, eager_params, eager_steps), (graphed, graphed_params, graphed_steps) = trained
        assert eager_steps == graphed_steps == 2 * GRAPH_MIN_STEPS
        torch.testing.assert_close(graphed_params, eager_params, rtol=1e-4, atol=1e-5)
        assert graphed == pytest.approx(eager, rel=1e-4)


def test_mlp_skip_connections_and_normalised_features():
    torch.manual_seed(0)
    net = MLP(4, 2, (8, 8, 6))
    assert net.skips == [False, True, False]  # only where widths match
    features = {}
    net.action_head.register_forward_hook(lambda m, inp, out: features.setdefault("z", inp[0]))
    net(torch.randn(16, 4) * 100)  # large activations: the 1e-5 epsilon is negligible
    z = features["z"]
    torch.testing.assert_close(z.mean(dim=1), torch.zeros(16), atol=1e-5, rtol=0)
    torch.testing.assert_close(z.var(dim=1, unbiased=False), torch.ones(16), atol=1e-3, rtol=0)


# ---------------------------------------------------------------- traversal
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
    solver = DeepCFRSolver(kuhn, seed=1, traversal_backend="vectorized", **{**SMALL, "num_iterations": 3})
    solver.solve()
    probs = solver.batch_action_probabilities([kuhn.new_initial_state().child(0).child(1)])
    assert probs.shape == (1, 2) and probs.sum() == pytest.approx(1.0)
    assert solver.nodes_touched > 0 and len(solver.advantage_buffers[0]) > 0


def test_cosine_schedule_anneals_each_training_run(kuhn):
    solver = DeepCFRSolver(kuhn, seed=1, learning_rate=1e-2, schedule=Schedule(learning_rate="cosine"), **SMALL)
    rates = solver.schedule.learning_rates(1e-2, 100)
    assert rates[0] == pytest.approx(1e-2) and rates[50] == pytest.approx(5e-3)
    assert all(a > b > 0 for a, b in zip(rates[:-1], rates[1:], strict=True))
    assert DeepCFRSolver(kuhn, learning_rate=1e-2).schedule.learning_rates(1e-2, 3) == [1e-2] * 3
    solver.solve()
    last = solver.schedule.learning_rates(1e-2, SMALL["advantage_network_train_steps"])[-1]
    assert solver.advantage_trainers[0].optimizer.lr == pytest.approx(last)  # each retraining ends annealed
    constant = DeepCFRSolver(kuhn, seed=1, learning_rate=1e-2, **SMALL)
    constant.solve()
    x = torch.zeros(1, solver.config["feature_size"])
    assert not torch.allclose(solver.advantage_networks[0](x), constant.advantage_networks[0](x))


def test_advantage_steps_ramp_up_over_the_first_iterations(kuhn):
    ramped = DeepCFRSolver(kuhn, advantage_network_train_steps=250, schedule=Schedule(train_steps_ramp=20))
    assert [ramped.advantage_train_steps(t) for t in (1, 5, 10, 19, 20, 100)] == [13, 63, 125, 238, 250, 250]
    linear = DeepCFRSolver(kuhn, advantage_network_train_steps=300,
                           schedule=Schedule(train_steps_ramp=81, train_steps_initial=100))  # fmt: skip
    assert [linear.advantage_train_steps(t) for t in (1, 41, 81, 200)] == [100, 200, 300, 300]
    paper = DeepCFRSolver(kuhn, advantage_network_train_steps=250)
    assert {paper.advantage_train_steps(t) for t in (1, 20, 100)} == {250}
    assert {paper.traversals(t) for t in (1, 20, 100)} == {1000}
    more = DeepCFRSolver(kuhn, num_traversals=10000, schedule=Schedule(traversals_ramp=41, traversals_initial=2000))
    assert [more.traversals(t) for t in (1, 21, 41, 99)] == [2000, 6000, 10000, 10000]
    solver = DeepCFRSolver(kuhn, seed=1, schedule=Schedule(train_steps_ramp=10),
                           **{**SMALL, "advantage_network_train_steps": 20})  # fmt: skip
    solver.run_iteration()
    assert solver.advantage_trainers[0].optimizer.steps == 2  # ceil(20 * 1 / 10) steps at iteration 1


def test_tree_backend_draws_the_same_samples_as_the_pyspiel_backend():
    game = pyspiel.load_game("leduc_poker")
    kwargs = {**SMALL, "seed": 3}
    by_state = DeepCFRSolver(game, **kwargs)
    by_tree = DeepCFRSolver(game, traversal_backend="tree", **kwargs)
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


# ------------------------------------------------------------------- solver
def test_accepts_every_openspiel_constructor_argument(kuhn):
    names = [n for n in inspect.signature(os_deep_cfr.DeepCFRSolver.__init__).parameters if n not in ("self",)]
    ours = inspect.signature(DeepCFRSolver.__init__).parameters
    assert all(n in ours for n in names), set(names) - set(ours)
    kwargs = dict(
        policy_network_layers=(8,), advantage_network_layers=(8,), num_iterations=2, num_traversals=10,
        learning_rate=1e-3, batch_size_advantage=None, batch_size_strategy=16, memory_capacity=1000,
        policy_network_train_steps=3, advantage_network_train_steps=3,
        reinitialize_advantage_networks=False, device="cpu", seed=3, print_nash_convs=False,
    )  # fmt: skip
    assert set(kwargs) == set(names) - {"game"}
    solver = DeepCFRSolver(kuhn, **kwargs)
    policy_network, advantage_losses, policy_loss = solver.solve()
    assert isinstance(policy_network, torch.nn.Module)
    assert set(advantage_losses) == {0, 1} and all(len(v) == 2 for v in advantage_losses.values())
    assert isinstance(policy_loss, float)
    assert isinstance(solver, policy_lib.Policy)
    assert len(solver.advantage_buffers[0]) > 0 and len(solver.strategy_buffer) > 0
    state = kuhn.new_initial_state().child(0).child(1)
    probs = solver.action_probabilities(state)
    assert set(probs) == set(state.legal_actions()) and sum(probs.values()) == pytest.approx(1.0)
    # OpenSpiel's own tools take it as a policy, and agree with the fast path.
    tabular = policy_lib.tabular_policy_from_callable(kuhn, solver.action_probabilities)
    assert openspiel_cfrx.nash_conv(kuhn, solver) == pytest.approx(
        pyspiel.nash_conv(kuhn, policy_lib.python_policy_to_pyspiel_policy(tabular)), abs=1e-5
    )


def test_batch_probabilities_match_single_state_calls_and_mask_illegal():
    game = pyspiel.load_game("leduc_poker")
    solver = DeepCFRSolver(game, **SMALL)
    solver.run_iteration()
    tree = openspiel_cfrx.get_tree(game)
    strategy = solver.strategy_array(tree)
    assert np.all(strategy[~tree.infoset_legal_mask] == 0)
    np.testing.assert_allclose(strategy.sum(axis=1), 1.0, atol=1e-6)
    states = tree.infoset_states()
    for i in (0, 17, len(states) - 1):
        probs = solver.action_probabilities(states[i])
        for action, p in probs.items():
            assert p == pytest.approx(strategy[i, action], abs=1e-6)


def test_sd_cfr_average_is_the_same_on_the_tree_and_per_state(kuhn):
    solver = DeepCFRSolver(kuhn, average_policy="sd_cfr", **{**SMALL, "num_iterations": 3})
    solver.solve()
    tree = openspiel_cfrx.get_tree(kuhn)
    strategy = solver.strategy_array(tree)
    per_state = solver.batch_action_probabilities(tree.infoset_states())
    np.testing.assert_allclose(per_state, strategy, atol=1e-6)
    assert len(solver.iteration_networks) == 3


@pytest.mark.parametrize(
    "game_string, match",
    [("kuhn_poker(players=3)", "3 players"), ("matrix_rps", "simultaneous")],
)
def test_unsupported_games_are_refused(game_string, match):
    with pytest.raises(UnsupportedGameError, match=match):
        DeepCFRSolver(pyspiel.load_game(game_string))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(num_traversals=0), "num_traversals"),
        (dict(batch_size_advantage=0), "batch_size_advantage"),
        (dict(regret_matching_fallback="zero"), "regret_matching_fallback"),
        (dict(memory="fifo"), "memory"),
        (dict(network="transformer"), "network"),
        (dict(average_policy="last"), "average_policy"),
        (dict(learning_rate=0), "learning_rate"),
        (dict(traversal_backend="gpu"), "traversal_backend"),
        (dict(schedule="cosine"), "schedule"),
        (dict(training_precision="float16"), "training_precision"),
    ],
)
def test_bad_arguments_raise_value_errors(kuhn, kwargs, match):
    with pytest.raises(ValueError, match=match):
        DeepCFRSolver(kuhn, **kwargs)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(learning_rate="step"), "learning_rate"),
        (dict(train_steps_ramp=-1), "train_steps_ramp"),
        (dict(train_steps_initial=50), "train_steps_ramp"),
        (dict(traversals_ramp=5, traversals_initial=0), "traversals_initial"),
    ],
)
def test_bad_schedules_raise_value_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Schedule(**kwargs)


def test_evaluating_mid_run_does_not_change_training(kuhn):
    tree = openspiel_cfrx.get_tree(kuhn)
    watched, unwatched = DeepCFRSolver(kuhn, **SMALL), DeepCFRSolver(kuhn, **SMALL)
    for _ in range(3):
        watched.run_iteration()
        unwatched.run_iteration()
        watched.strategy_array(tree)  # trains the policy network from its own RNG stream
    for a, b in zip(watched.advantage_networks, unwatched.advantage_networks, strict=True):
        for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
            torch.testing.assert_close(pa, pb, rtol=0, atol=0)
    np.testing.assert_array_equal(watched.strategy_array(tree), unwatched.strategy_array(tree))


# --------------------------------------------------------------- checkpoints
def test_checkpoint_resume_continues_exactly(kuhn, tmp_path):
    path = str(tmp_path / "deep_cfr.pt")
    straight = DeepCFRSolver(kuhn, **{**SMALL, "num_iterations": 3})
    straight.run_iteration()
    straight.run_iteration()
    straight.save_checkpoint(path)
    straight.run_iteration()
    resumed = DeepCFRSolver(kuhn, **{**SMALL, "num_iterations": 3})
    resumed.load_checkpoint(path)
    assert resumed.iteration == 2
    resumed.run_iteration()
    for a, b in zip([*straight.advantage_buffers, straight.strategy_buffer],
                    [*resumed.advantage_buffers, resumed.strategy_buffer], strict=True):  # fmt: skip
        assert a.add_calls == b.add_calls
        np.testing.assert_array_equal(a.targets[: len(a)], b.targets[: len(b)])
    for a, b in zip(straight.advantage_networks, resumed.advantage_networks, strict=True):
        for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
            torch.testing.assert_close(pa, pb, rtol=0, atol=0)
    tree = openspiel_cfrx.get_tree(kuhn)
    np.testing.assert_array_equal(straight.strategy_array(tree), resumed.strategy_array(tree))


def test_solver_rebuilt_from_checkpoint_plays_the_same_policy(kuhn, tmp_path):
    solver = DeepCFRSolver(kuhn, seed=5, **{**SMALL, "advantage_network_layers": (8,)})
    solver.solve()
    path = str(tmp_path / "solver.pt")
    solver.save_checkpoint(path)
    rebuilt = DeepCFRSolver.from_checkpoint(path)
    assert rebuilt.iteration == solver.iteration
    states = [kuhn.new_initial_state().child(0).child(1), kuhn.new_initial_state().child(2).child(0).child(1)]
    np.testing.assert_allclose(rebuilt.batch_action_probabilities(states), solver.batch_action_probabilities(states))
    with pytest.raises(CheckpointError, match="does not exist"):
        DeepCFRSolver.from_checkpoint(str(tmp_path / "missing.pt"))


def test_policy_file_plays_the_same_average_strategy_and_cannot_train(kuhn, tmp_path):
    solver = DeepCFRSolver(kuhn, seed=5, **{**SMALL, "memory_capacity": 200_000})
    solver.solve()
    policy_path, checkpoint_path = str(tmp_path / "policy.pt"), str(tmp_path / "solver.pt")
    solver.save_policy(policy_path)
    solver.save_checkpoint(checkpoint_path)
    assert os.path.getsize(policy_path) < os.path.getsize(checkpoint_path) / 5  # no memories
    rebuilt = DeepCFRSolver.from_checkpoint(policy_path)
    assert rebuilt.policy_only and rebuilt.iteration == solver.iteration
    assert rebuilt.nodes_touched == solver.nodes_touched
    tree = get_tree(kuhn)
    np.testing.assert_array_equal(rebuilt.strategy_array(tree), solver.strategy_array(tree))
    assert openspiel_cfrx.nash_conv(kuhn, rebuilt) == openspiel_cfrx.nash_conv(kuhn, solver)
    with pytest.raises(RuntimeError, match="policy file"):
        rebuilt.run_iteration()
    with pytest.raises(CheckpointError, match="policy file"):
        DeepCFRSolver(kuhn, seed=5, **{**SMALL, "memory_capacity": 200_000}).load_checkpoint(policy_path)
    with open(policy_path, "r+b") as f:  # one byte of the network changed after writing
        f.seek(os.path.getsize(policy_path) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 1]))
    with pytest.raises(CheckpointError, match="damaged|corrupt"):
        DeepCFRSolver.from_checkpoint(policy_path)
    sd_cfr = DeepCFRSolver(kuhn, average_policy="sd_cfr", **SMALL)
    with pytest.raises(ValueError, match="average_policy='network'"):
        sd_cfr.save_policy(str(tmp_path / "sd.pt"))


def test_corrupt_and_mismatched_checkpoints_give_clear_errors(kuhn, tmp_path):
    solver = DeepCFRSolver(kuhn, **SMALL)
    solver.run_iteration()
    path = str(tmp_path / "ok.pt")
    solver.save_checkpoint(path)
    with open(path, "rb") as f:
        data = f.read()
    truncated = str(tmp_path / "truncated.pt")
    with open(truncated, "wb") as f:
        f.write(data[: len(data) // 2])
    garbage = str(tmp_path / "garbage.pt")
    with open(garbage, "wb") as f:
        f.write(os.urandom(2048))
    fresh = DeepCFRSolver(kuhn, **SMALL)
    for bad in (truncated, garbage):
        with pytest.raises(CheckpointError, match="corrupt"):
            fresh.load_checkpoint(bad)
    with pytest.raises(CheckpointError, match="does not exist"):
        fresh.load_checkpoint(str(tmp_path / "missing.pt"))
    other_game = DeepCFRSolver(pyspiel.load_game("leduc_poker"), **SMALL)
    with pytest.raises(CheckpointError, match="game"):
        other_game.load_checkpoint(path)
    wider = DeepCFRSolver(kuhn, **{**SMALL, "advantage_network_layers": (32, 32)})
    with pytest.raises(CheckpointError, match="advantage_network_layers"):
        wider.load_checkpoint(path)
    torch.save({"format": "something else"}, str(tmp_path / "other.pt"))
    with pytest.raises(CheckpointError, match="not a DeepCFRSolver checkpoint"):
        fresh.load_checkpoint(str(tmp_path / "other.pt"))


# --------------------------------------------------------------- convergence
KUHN_CONVERGENCE = dict(
    num_iterations=40,
    num_traversals=2000,
    traversal_backend="vectorized",  # Algorithm 2's samples, vectorised over the extracted tree
    learning_rate=1e-2,  # full-memory merged gradient steps (aggregate_duplicates) take a larger rate
    advantage_network_train_steps=100,
    policy_network_train_steps=500,
    batch_size_advantage=2048,
    batch_size_strategy=2048,
    advantage_network_layers=(32, 32),
    policy_network_layers=(32, 32),
)


def test_kuhn_nash_conv_below_0_05(kuhn):
    solver = DeepCFRSolver(kuhn, seed=42, **KUHN_CONVERGENCE)
    solver.solve()
    assert openspiel_cfrx.nash_conv(kuhn, solver) < 0.05


def test_kuhn_nash_conv_below_0_05_with_bfloat16_training(kuhn):
    """Mixed-precision SGD (bfloat16 matmuls, float32 parameters and loss) still converges."""
    solver = DeepCFRSolver(kuhn, seed=42, training_precision="bfloat16", **KUHN_CONVERGENCE)
    solver.solve()
    assert all(p.dtype == torch.float32 for net in solver.advantage_networks for p in net.parameters())
    assert openspiel_cfrx.nash_conv(kuhn, solver) < 0.05


def test_bfloat16_training_runs_matmuls_in_bfloat16_and_keeps_float32_state():
    torch.manual_seed(0)
    x = torch.randn(512, 6)
    y, mask, w = x[:, :3] * 2 - x[:, 3:], torch.ones(512, 3, dtype=torch.bool), torch.ones(512)
    seen = []
    net = MLP(6, 3, (32, 32))
    net.action_head.register_forward_hook(lambda module, args, out: seen.append(out.dtype))
    trainer = Trainer(net, 1e-2, 1.0, precision="bfloat16")
    first = trainer.fit(lambda step: (x, y, mask, w), 1, SQUARED)
    last = trainer.fit(lambda step: (x, y, mask, w), 300, SQUARED)
    assert seen[0] == torch.bfloat16 and last < 0.1 * first
    assert all(p.dtype == torch.float32 for p in net.parameters())
    with torch.inference_mode():
        assert net(x).dtype == torch.float32  # queries outside training stay float32
    with pytest.raises(ValueError, match="bfloat16"):
        Trainer(net, 1e-2, 1.0, precision="half")


def test_solve_returns_a_probability_network_like_openspiel(kuhn):
    """OpenSpiel's solve() returns a policy network whose outputs are
    probabilities; ours too, and with the legal mask it is exactly the policy."""
    solver = DeepCFRSolver(kuhn, seed=2, **SMALL)
    policy_network, _, _ = solver.solve()
    states = [kuhn.new_initial_state().child(0).child(1), kuhn.new_initial_state().child(2).child(1).child(1)]
    x = torch.tensor(np.array([s.information_state_tensor() for s in states]), dtype=torch.float32)
    with torch.no_grad():
        probs = policy_network(x).numpy()
    assert (probs >= 0).all() and np.allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    mask = torch.zeros(len(states), kuhn.num_distinct_actions(), dtype=torch.bool)
    for i, s in enumerate(states):
        mask[i, s.legal_actions()] = True
    with torch.no_grad():
        masked = policy_network(x, mask).numpy()
    for i, s in enumerate(states):
        expected = solver.action_probabilities(s)
        for a in s.legal_actions():
            assert masked[i, a] == pytest.approx(expected[a], abs=1e-6)


def test_solve_network_rows_are_distributions_read_as_openspiel_reads_them():
    """How OpenSpiel users call solve()'s network: `net(information_state_tensor
    rows)`, no mask. OpenSpiel's rows are softmax distributions over all
    actions and its `action_probabilities(state)` is the row read at the legal
    actions. Ours: the rows are distributions too; `action_probabilities` is the
    row renormalised over the legal actions (untrained illegal actions get no
    mass), so it is the row itself wherever every action is legal, and exactly
    `net(x, legal_mask)` everywhere. On Leduc, where actions are often illegal."""
    game = pyspiel.load_game("leduc_poker")
    states = openspiel_cfrx.get_tree(game).infoset_states()
    x = torch.tensor(np.array([s.information_state_tensor() for s in states]), dtype=torch.float32)
    num_actions = game.num_distinct_actions()
    all_legal = [i for i, s in enumerate(states) if len(s.legal_actions()) == num_actions]
    some_illegal = [i for i, s in enumerate(states) if len(s.legal_actions()) < num_actions]
    assert all_legal and some_illegal

    # OpenSpiel's semantics, on OpenSpiel's own solver. (Batch sizes given: with
    # None it trains on its whole np.empty buffer, unfilled rows included, and
    # every output is NaN.)
    theirs = os_deep_cfr.DeepCFRSolver(
        game, policy_network_layers=(8,), advantage_network_layers=(8,), num_iterations=1, num_traversals=2,
        memory_capacity=1000, batch_size_advantage=8, batch_size_strategy=8,
    )  # fmt: skip
    their_network, _, _ = theirs.solve()
    with torch.no_grad():
        their_rows = their_network(x).numpy()
    assert (their_rows >= 0).all() and np.allclose(their_rows.sum(axis=1), 1.0, atol=1e-5)
    for i in (all_legal[0], some_illegal[0]):
        expected = theirs.action_probabilities(states[i])
        assert [expected[a] for a in states[i].legal_actions()] == pytest.approx(
            their_rows[i, states[i].legal_actions()], abs=1e-6
        )

    # Ours.
    solver = DeepCFRSolver(game, seed=5, **SMALL)
    network, _, _ = solver.solve()
    with torch.no_grad():
        rows = network(x).numpy().astype(np.float64)
        mask = torch.zeros(len(states), num_actions, dtype=torch.bool)
        for i, s in enumerate(states):
            mask[i, s.legal_actions()] = True
        masked = network(x, mask).numpy()
        single = network(x[some_illegal[0]]).numpy()  # unbatched input, as OpenSpiel's MLP accepts
    assert (rows >= 0).all() and np.allclose(rows.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(single, rows[some_illegal[0]], atol=1e-6)
    played = solver.batch_action_probabilities(states)
    np.testing.assert_allclose(masked, played, atol=1e-6)
    for i, s in enumerate(states):
        legal = s.legal_actions()
        expected = solver.action_probabilities(s)
        expected = np.array([expected[a] for a in legal])
        np.testing.assert_allclose(rows[i, legal] / rows[i, legal].sum(), expected, atol=1e-5)
        if i in all_legal:
            np.testing.assert_allclose(rows[i, legal], expected, atol=1e-5)


def test_flat_adam_on_a_wide_network_uses_torch_fused_adam_and_checkpoints():
    """From FUSED_MIN_PARAMETERS on, FlatAdam steps the flat buffer with torch's
    fused Adam: same update as torch.optim.Adam + clip_grad_norm_ (float32
    rounding), and its moments survive state_dict / load_state_dict."""
    torch.manual_seed(0)
    net, ref = MLP(3000, 4, (64, 64)), MLP(3000, 4, (64, 64))
    ref.load_state_dict(net.state_dict())
    assert sum(p.numel() for p in net.parameters()) >= FlatAdam.FUSED_MIN_PARAMETERS
    ours, theirs = FlatAdam(net, lr=1e-2, max_grad_norm=0.5), torch.optim.Adam(ref.parameters(), lr=1e-2)
    for _ in range(5):
        x, y = torch.randn(32, 3000), torch.randn(32, 4)
        for module, opt in ((net, ours), (ref, theirs)):
            opt.zero_grad()
            ((module(x) - y) ** 2).mean().backward()
            if opt is theirs:
                torch.nn.utils.clip_grad_norm_(ref.parameters(), 0.5)
            opt.step()
    for a, b in zip(net.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=2e-6)
    restored = FlatAdam(MLP(3000, 4, (64, 64)), lr=1e-2, max_grad_norm=0.5)
    restored.load_state_dict(ours.state_dict())
    assert restored.steps == 5
    torch.testing.assert_close(restored.state_dict()["exp_avg_sq"], ours.state_dict()["exp_avg_sq"], rtol=0, atol=0)


def test_regret_scale_divides_stored_regrets_and_keeps_the_strategy():
    """regret_scale: the memories hold r~ / s (same samples: same seed), regret
    matching is invariant, checkpoints remember s; bad values are refused."""
    game = pyspiel.load_game("kuhn_poker")
    settings = dict(num_iterations=1, num_traversals=40, advantage_network_train_steps=2,
                    policy_network_train_steps=2, seed=3, traversal_backend="tree")  # fmt: skip
    raw = DeepCFRSolver(game, **settings)
    raw.run_iteration()
    scaled = DeepCFRSolver(game, regret_scale="auto", **settings)
    assert scaled.regret_scale == 2.0  # kuhn: utilities in [-2, 2]
    scaled.run_iteration()
    n = len(raw.advantage_buffers[0])
    assert n > 0 and len(scaled.advantage_buffers[0]) == n
    np.testing.assert_allclose(scaled.advantage_buffers[0].targets[:n] * 2.0, raw.advantage_buffers[0].targets[:n])
    assert scaled.config["regret_scale"] == 2.0 and "regret_scale" not in raw.config
    with pytest.raises(ValueError, match="regret_scale must be a finite number > 0, 'auto' or 'pot'"):
        DeepCFRSolver(game, regret_scale=0.0)
    with pytest.raises(ValueError, match="regret_scale='pot' needs traversal_backend='poker'"):
        DeepCFRSolver(game, regret_scale="pot", traversal_backend="tree")


def test_current_policy_is_regret_matching_on_the_advantage_networks():
    """`current_policy()`: sigma^t as an OpenSpiel policy (uniform before training;
    afterwards regret matching on the advantage network's outputs, eq. 4)."""
    game = pyspiel.load_game("kuhn_poker")
    solver = DeepCFRSolver(game, num_iterations=2, num_traversals=40, advantage_network_layers=(8,),
                           policy_network_layers=(8,), advantage_network_train_steps=5,
                           policy_network_train_steps=5, batch_size_advantage=16, batch_size_strategy=16, seed=3)  # fmt: skip
    state = game.new_initial_state()
    state.apply_action(0)
    state.apply_action(1)
    assert solver.current_policy().action_probabilities(state) == {0: 0.5, 1: 0.5}
    solver.run_iteration()
    solver.run_iteration()
    policy = solver.current_policy()
    features = np.asarray([state.information_state_tensor(0)], dtype=np.float32)
    expected = solver.current_strategy(0, features, np.array([[True, True]]))[0]
    got = policy.action_probabilities(state)
    assert got[0] == pytest.approx(expected[0], abs=1e-7) and got[1] == pytest.approx(expected[1], abs=1e-7)
    assert policy.batch_action_probabilities([state, state]).shape == (2, game.num_distinct_actions())


def test_forward_in_chunks_equals_one_pass():
    """sigma^t queries run the network over chunks of rows (faster on CPU); the rows are the same."""
    torch.manual_seed(0)
    net, x = MLP(7, 3, (16, 16)), torch.randn(5000, 7)
    with torch.inference_mode():
        whole, chunked = net(x), forward_in_chunks(net, x, chunk=1536)  # an uneven last chunk
        pairs = forward_in_chunks(lambda a, b: a * b[:, None], x, torch.arange(5000.0), chunk=999)
    assert chunked.shape == whole.shape == (5000, 3)
    np.testing.assert_allclose(chunked.numpy(), whole.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(pairs.numpy(), (x * torch.arange(5000.0)[:, None]).numpy())
