"""Deep CFR's regret matching and memories: reservoir and sliding-window
sampling, float16 features, merged duplicate entries."""


import numpy as np
import pytest
import torch

from openspiel_cfrx.deep import (
    MLP,
    DeepCFRSolver,
    ReservoirMemory,
    SlidingWindowMemory,
    masked_softmax,
    regret_matching,
)

torch.set_num_threads(1)


from deep_cfr_settings import SMALL  # noqa: E402  (tests/ is on sys.path)


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
    with pytest.raises(ValueError, match=r"MemorySettings\(feature_dtype='float16'\) cannot hold these features exactly .*0.1"):
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
                          policy_network_train_steps=20, memory={"feature_dtype": dtype}, seed=3)
            for dtype in ("float16", "float32")]  # fmt: skip
    for solver in runs:
        solver.solve()
    assert runs[0].advantage_buffers[0].features.dtype == np.float16
    assert runs[0].nash_conv() == runs[1].nash_conv()  # the same numbers reach the networks
    with pytest.raises(ValueError, match=r"would take [0-9.]+ GiB when full .* more than the [0-9.]+ GiB available; "
                                         r"lower memory_capacity .*MemorySettings\(feature_dtype='float16'\)"):  # fmt: skip
        DeepCFRSolver(kuhn, memory_capacity=10**11)
    with pytest.raises(ValueError, match=r"MemorySettings\.feature_dtype"):
        DeepCFRSolver(kuhn, memory={"feature_dtype": "int8"})


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
    sampled = DeepCFRSolver(kuhn, seed=3, memory={"aggregate_duplicates": False}, **settings)
    merged.run_iteration()
    sampled.run_iteration()
    assert merged.advantage_buffers[0].duplicates_tracked
    assert not sampled.advantage_buffers[0].duplicates_tracked
    for player in (0, 1):
        merged_loss = merged.history[-1]["advantage_loss"][player]
        assert merged_loss <= 1.05 * sampled.history[-1]["advantage_loss"][player]
