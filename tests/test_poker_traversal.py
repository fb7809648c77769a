"""The "poker" traversal backend (openspiel_cfrx.neural_poker.traversal): the same
sampling distribution as Deep CFR's Algorithm 2 over pyspiel states."""

from __future__ import annotations

import random

import numpy as np
import pyspiel
import pytest

import games  # noqa: F401  registers flop_holdem
from openspiel_cfrx.deep import DeepCFRSolver
from openspiel_cfrx.encoders import InformationStateTensorEncoder
from openspiel_cfrx.neural_poker.poker_network import factored_strategy
from openspiel_cfrx.neural_poker.traversal import PokerSampler
from openspiel_cfrx.poker.public_tree import MIX
from openspiel_cfrx.sampling import make_sampler

SMALL_FHP = "flop_holdem(num_ranks=4,num_suits=2)"
SMALL_HULH = "hulh(num_ranks=3,num_suits=3,max_raises=1 1 1 1)"  # four rounds, per-street card blocks


@pytest.fixture(scope="module")
def game():
    return pyspiel.load_game(SMALL_FHP)


def _fixed_strategy(size: int, num_actions: int):
    """A fixed non-uniform strategy of the network input (as a network would be)."""
    weights = np.random.default_rng(5).normal(size=(size, num_actions))

    def strategy(player, features, mask):
        logits = np.tanh(np.asarray(features, dtype=np.float64) @ weights) * 2 + player
        e = np.where(mask, np.exp(logits), 0.0)
        return e / e.sum(axis=1, keepdims=True)

    return strategy


@pytest.mark.parametrize("name", [SMALL_FHP, SMALL_HULH])
def test_features_are_pyspiel_information_state_tensors(name):
    game = pyspiel.load_game(name)
    sampler = PokerSampler(game, 64, np.random.default_rng(0))
    tree, rng = sampler.tree, np.random.default_rng(1)
    decisions = [n for n, node in enumerate(tree.nodes) if node.kind == "decision"]
    nodes = rng.choice(decisions, size=40)
    cards = np.stack([rng.permutation(tree.deck.num_cards)[: 4 + tree.board_size[-1]] for _ in nodes])
    ours = sampler.features(nodes, cards)
    for row, (n, deal) in enumerate(zip(nodes, cards, strict=True)):
        state = sampler.inputs.state_at(int(n), deal)
        expected = np.asarray(state.information_state_tensor(state.current_player()), dtype=np.float32)
        assert np.array_equal(ours[row], expected)


@pytest.mark.parametrize("traverser", [0, 1])
def test_expected_sampled_regrets_are_the_exact_counterfactual_regrets(game, traverser):
    """Lemma 1 of Deep CFR for external sampling: E[sum of r~(I, a) over one
    traversal] = the counterfactual regret of I (chance x opponent reach),
    computed exactly by the public-tree engine for the same strategy."""
    sampler = PokerSampler(game, 8192, np.random.default_rng(traverser))
    tree, num_actions = sampler.tree, sampler.num_actions
    strategy = _fixed_strategy(sampler.inputs.size, num_actions)
    H = tree.deck.num_hands

    def on_tree(n, lo, hi):  # the same strategy on the public tree
        node, out = tree.nodes[n], None
        out = np.full((hi - lo, H, len(node.legal)), 1.0 / len(node.legal))
        mask = np.zeros((1, num_actions), dtype=bool)
        mask[0, list(node.legal)] = True
        for b in range(lo, hi):
            board = tree.board_cards(node.round, b)
            hands = np.flatnonzero(~tree.deck.conflicts(board))
            features = sampler.inputs.tensors(n, hands, np.repeat(board[None], len(hands), axis=0))
            out[b - lo, hands] = strategy(node.player, features, np.repeat(mask, len(hands), 0))[:, list(node.legal)]
        return out

    exact = {}

    def hook(n, chunk, reach, probs, cf):
        node = tree.nodes[n]
        if node.player == traverser:
            value = (cf * probs).sum(axis=-1)
            for b in range(chunk.hi - chunk.lo):
                hands = np.flatnonzero(chunk.free[b])
                features = sampler.inputs.tensors(n, hands, np.repeat(chunk.boards[b][None], len(hands), axis=0))
                for row, h in enumerate(hands):
                    regret = np.zeros(num_actions)
                    regret[list(node.legal)] = cf[b, h] - value[b, h]
                    exact[features[row].tobytes()] = regret

    tree.walk(on_tree, (MIX, MIX), hook)
    count = 60_000
    total, square, visits = {}, {}, {}
    for samples in sampler.collect(strategy, traverser, 1, count):
        for features, regret in zip(samples.advantage_features, samples.advantage_regrets.astype(np.float64),
                                    strict=True):  # fmt: skip
            key = features.tobytes()
            total[key] = total.get(key, 0.0) + regret
            square[key] = square.get(key, 0.0) + regret**2
            visits[key] = visits.get(key, 0) + 1
    assert set(total) <= set(exact)
    z = []
    for key, value in exact.items():
        if visits.get(key, 0) >= 50:
            mean = total[key] / count
            error = np.sqrt(np.maximum(square[key] / count - mean**2, 0.0) / count)
            z.extend(np.abs(mean - value)[error > 1e-9] / error[error > 1e-9])  # (no spread: identical samples)
    z = np.array(z)
    assert len(z) > 500
    assert z.max() < 5.5 and 0.7 < z.mean() < 0.9  # |N(0, 1)|: mean 0.80


@pytest.mark.parametrize("name, traversals", [(SMALL_FHP, 6000), pytest.param(SMALL_HULH, 3000, marks=pytest.mark.slow)])
def test_same_statistics_as_the_state_backend(name, traversals):
    """Per-traversal means of nodes touched, advantage and strategy rows and the
    regret sums of each action agree with the pyspiel-state backend within
    sampling noise (4.5 combined standard errors, from chunks of 100; HULH's
    state backend is the slow side: 30 chunks there, 60 on flop hold'em)."""
    game = pyspiel.load_game(name)
    strategy = _fixed_strategy(int(np.prod(game.information_state_tensor_shape())), game.num_distinct_actions())
    encoder = InformationStateTensorEncoder(game)
    means, errors = {}, {}
    for backend in ("state", "poker"):
        sampler = make_sampler(backend, game, encoder, game.num_distinct_actions(), 100, random.Random(0),
                               np.random.default_rng(0))  # fmt: skip
        sampler.batch_size = 100  # chunks of 100 traversals on both sides (the poker backend's default minimum is 4,096)
        chunks = np.array([[s.nodes, len(s.advantage_regrets), len(s.strategy_probs),
                            *s.advantage_regrets.sum(axis=0)] for s in sampler.collect(strategy, 0, 1, traversals)]) / 100  # fmt: skip
        means[backend] = chunks.mean(axis=0)
        errors[backend] = chunks.std(axis=0) / np.sqrt(len(chunks))
    tolerance = 4.5 * np.hypot(errors["state"], errors["poker"])
    assert np.all(np.abs(means["poker"] - means["state"]) < tolerance), (means, tolerance)
    assert means["state"][0] > 20  # nodes per traversal: a real statistic, not zeros
    assert errors["poker"][0] < 0.05 * means["poker"][0]  # 30 or 60 chunks, not a few large ones


def test_deep_cfr_runs_on_the_poker_backend_and_refuses_other_games(game):
    solver = DeepCFRSolver(game, num_iterations=2, num_traversals=64, advantage_network_train_steps=4,
                           policy_network_train_steps=4, traversal={"backend": "poker"}, seed=0)  # fmt: skip
    solver.solve()
    assert solver.nodes_touched > 64 * 10
    with pytest.raises(Exception, match="universal_poker|poker"):
        DeepCFRSolver(pyspiel.load_game("kuhn_poker"), traversal={"backend": "poker"})


def test_pot_regret_scale_divides_each_sample_by_its_pot(game, tmp_path):
    """regret_scale="pot": the same samples (same seed) as raw regrets, each row
    divided by the chips in the pot at its node, one of the betting tree's pots
    (at least the blinds); checkpoints remember it."""
    settings = dict(num_iterations=1, num_traversals=64, advantage_network_train_steps=2,
                    policy_network_train_steps=2, traversal={"backend": "poker"}, seed=4)  # fmt: skip
    raw, pot = DeepCFRSolver(game, **settings), DeepCFRSolver(game, training={"regret_scale": "pot"}, **settings)
    raw.run_iteration()
    pot.run_iteration()
    n = len(raw.advantage_buffers[0])
    assert n > 100 and len(pot.advantage_buffers[0]) == n
    r, s = raw.advantage_buffers[0].targets[:n], pot.advantage_buffers[0].targets[:n]
    rows = (np.abs(r) > 1e-3).any(axis=1)  # rows whose regrets are not all 0
    r, s = r[rows], s[rows]
    moved = np.abs(r) > 1e-3
    ratio = np.where(moved, r / np.where(moved, s, 1.0), np.nan)
    divisor = np.nanmax(ratio, axis=1)
    assert len(divisor) > 50
    np.testing.assert_allclose(np.nanmin(ratio, axis=1), divisor, rtol=1e-5)  # one divisor per row
    tree = PokerSampler(game, 1, np.random.default_rng(0)).tree
    pots = {sum(node.contributions) for node in tree.nodes}
    assert set(np.round(divisor).astype(int)) <= pots
    assert len(set(np.round(divisor).astype(int))) > 3  # not one constant
    assert divisor.min() >= sum(tree.nodes[0].contributions)  # the blinds
    path = str(tmp_path / "pot.ckpt")
    pot.save_checkpoint(path)
    assert DeepCFRSolver.from_checkpoint(path, game).regret_scale == "pot"


@pytest.mark.parametrize("name", [SMALL_FHP, SMALL_HULH])
def test_appendix_c_inputs_are_the_encoders(name):
    """With the Appendix C network's encoder (card indices, then bet features)
    the backend's inputs equal `PokerNetworkEncoder(state, player)`."""
    from games.poker_encoding import PokerNetworkEncoder

    game = pyspiel.load_game(name)
    encoder = PokerNetworkEncoder(game)
    sampler = make_sampler("poker", game, encoder, game.num_distinct_actions(), 64, random.Random(0),
                           np.random.default_rng(0))  # fmt: skip
    tree, rng = sampler.tree, np.random.default_rng(1)
    decisions = [n for n, node in enumerate(tree.nodes) if node.kind == "decision"]
    nodes = rng.choice(decisions, size=60)
    cards = np.stack([rng.permutation(tree.deck.num_cards)[: 4 + tree.board_size[-1]] for _ in nodes])
    ours = sampler.features(nodes, cards)
    assert ours.shape[1] == encoder.feature_size
    for row, (n, deal) in enumerate(zip(nodes, cards, strict=True)):
        state = sampler.inputs.state_at(int(n), deal)
        assert np.array_equal(ours[row], np.asarray(encoder(state, state.current_player()), dtype=np.float32))
    assert (ours[:, :2] >= 0).all() and (ours[:, 2 : encoder.network_layout.num_card_slots] == -1).any()


def test_appendix_c_network_runs_on_the_poker_backend_with_the_state_backends_statistics(game):
    """Deep CFR with network="poker" on the poker backend, and its samples'
    statistics (as `test_same_statistics_as_the_state_backend`) against the
    state backend with the same encoder."""
    from games.poker_encoding import PokerNetworkEncoder

    solver = DeepCFRSolver(game, network={"family": "poker"}, advantage_network_layers=(16,), policy_network_layers=(16,),
                           num_iterations=2, num_traversals=64, advantage_network_train_steps=4,
                           policy_network_train_steps=4, traversal={"backend": "poker"}, seed=0)  # fmt: skip
    solver.solve()
    assert solver.nodes_touched > 64 * 10
    encoder = PokerNetworkEncoder(game)
    strategy = _fixed_strategy(encoder.feature_size, game.num_distinct_actions())
    means, errors = {}, {}
    for backend in ("state", "poker"):
        sampler = make_sampler(backend, game, encoder, game.num_distinct_actions(), 100, random.Random(0),
                               np.random.default_rng(0))  # fmt: skip
        sampler.batch_size = 100  # chunks of 100 traversals on both sides
        chunks = np.array([[s.nodes, len(s.advantage_regrets), *s.advantage_regrets.sum(axis=0),
                            *s.strategy_probs.sum(axis=0)] for s in sampler.collect(strategy, 1, 1, 6000)]) / 100  # fmt: skip
        means[backend], errors[backend] = chunks.mean(axis=0), chunks.std(axis=0) / np.sqrt(len(chunks))
    assert np.all(np.abs(means["poker"] - means["state"]) < 4.5 * np.hypot(errors["state"], errors["poker"]))
    assert means["state"][0] > 20 and errors["poker"][0] < 0.05 * means["poker"][0]  # real, tight statistics


def test_poker_backend_refuses_an_encoder_without_a_card_layout(game):
    class Custom:
        name, feature_size = "custom", 3

        def __call__(self, state, player):
            return [0.0, 1.0, 2.0]

    with pytest.raises(ValueError, match=r"TraversalSettings\(backend='state'\)"):
        make_sampler("poker", game, Custom(), 3, 64, random.Random(0), np.random.default_rng(0))


@pytest.mark.parametrize("name", [SMALL_FHP, SMALL_HULH])
def test_appendix_c_network_by_parts_gives_the_same_samples(name):
    """With the Appendix C network the backend asks sigma^t by parts (each
    deal's card part once per round, each node's bet part once, the trunk per
    visit); the samples equal those of whole-input forward passes."""
    game = pyspiel.load_game(name)
    solver = DeepCFRSolver(game, network={"family": "poker"}, advantage_network_layers=(16,), policy_network_layers=(16,),
                           num_iterations=2, num_traversals=64, advantage_network_train_steps=8,
                           policy_network_train_steps=4, traversal={"backend": "poker"}, seed=0)  # fmt: skip
    solver.solve()
    by_parts = solver.current_strategy
    assert all(factored_strategy(by_parts, player) is not None for player in (0, 1))

    def whole(player, features, mask):  # not regret matching on a network: one forward pass on the whole inputs
        return by_parts(player, features, mask)

    samples = {}
    for label, strategy in (("parts", by_parts), ("whole", whole)):
        solver.sampler.reseed(3)
        samples[label] = list(solver.sampler.collect(strategy, 1, 2, 300))
    for a, b in zip(samples["parts"], samples["whole"], strict=True):
        assert a.nodes == b.nodes and len(a.advantage_features) > 100
        np.testing.assert_array_equal(a.advantage_features, b.advantage_features)
        np.testing.assert_array_equal(a.strategy_features, b.strategy_features)
        np.testing.assert_allclose(a.advantage_regrets, b.advantage_regrets, rtol=1e-5, atol=2e-3)  # chips, float32 rounding
        np.testing.assert_allclose(a.strategy_probs, b.strategy_probs, atol=1e-5)
    assert np.ptp(np.concatenate([s.strategy_probs for s in samples["parts"]])) > 0.1  # a trained, non-uniform sigma
