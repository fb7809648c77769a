"""Deep CFR's network training: linear and average weighting, the flat Adam
optimiser, partial reinitialisation, mixed precision, CUDA graphs, the MLP,
regret scaling and chunked queries."""


import numpy as np
import pyspiel
import pytest
import torch

from openspiel_cfrx.deep import (
    MLP,
    DeepCFRSolver,
    ReservoirMemory,
)
from openspiel_cfrx.deep.networks import FlatAdam, forward_in_chunks, reset_parameters
from openspiel_cfrx.deep.schedule import Schedule
from openspiel_cfrx.deep.trainer import SQUARED, Trainer, memory_batches
from openspiel_cfrx.tree import get_tree

torch.set_num_threads(1)


from deep_cfr_settings import SMALL  # noqa: E402  (tests/ is on sys.path)


def test_linear_weights_are_rescaled_by_two_over_t(kuhn):
    solver = DeepCFRSolver(kuhn, **SMALL)
    for _ in range(7):
        solver.run_iteration()
    assert solver.iteration == 7 and solver.linear_scale() == pytest.approx(2.0 / 8)  # training at T = 8
    assert DeepCFRSolver(kuhn, averaging={"linear_weighting": False}, **SMALL).linear_scale() is None
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
    settings = {**SMALL, "num_iterations": 3, "seed": 2}
    linear = DeepCFRSolver(kuhn, averaging={"average_policy": "sd_cfr"}, **settings)
    uniform = DeepCFRSolver(kuhn, averaging={"average_policy": "sd_cfr", "average_weighting": "uniform"}, **settings)
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
        solver = DeepCFRSolver(kuhn, averaging={"average_policy": "sd_cfr", **kwargs}, **settings)
        solver.solve()
        solver.save_checkpoint(path := str(tmp_path / "weights.pt"))
        rebuilt = DeepCFRSolver.from_checkpoint(path)
        np.testing.assert_array_equal(rebuilt.iteration_networks.weights(), weights)
        assert rebuilt.linear_scale() == solver.linear_scale()
        assert rebuilt.nash_conv() == pytest.approx(solver.nash_conv(), abs=1e-12)
    with pytest.raises(ValueError, match="average_weighting must be one of 'linear', 'uniform', None"):
        DeepCFRSolver(kuhn, averaging={"average_weighting": "quadratic"}, **SMALL)


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
    from openspiel_cfrx.deep.trainer import GRAPH_MIN_STEPS, SQUARED_ON_PROBABILITIES
    from openspiel_cfrx.neural_poker.poker_network import PokerNetwork

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
                    policy_network_train_steps=2, seed=3, traversal={"backend": "tree"})  # fmt: skip
    raw = DeepCFRSolver(game, **settings)
    raw.run_iteration()
    scaled = DeepCFRSolver(game, training={"regret_scale": "auto"}, **settings)
    assert scaled.regret_scale == 2.0  # kuhn: utilities in [-2, 2]
    scaled.run_iteration()
    n = len(raw.advantage_buffers[0])
    assert n > 0 and len(scaled.advantage_buffers[0]) == n
    np.testing.assert_allclose(scaled.advantage_buffers[0].targets[:n] * 2.0, raw.advantage_buffers[0].targets[:n])
    assert scaled.settings.training.regret_scale == "auto" and raw.regret_scale == 1.0
    with pytest.raises(ValueError, match="regret_scale must be a finite number > 0, 'auto' or 'pot'"):
        DeepCFRSolver(game, training={"regret_scale": 0.0})
    with pytest.raises(ValueError, match=r"TrainingSettings\(regret_scale='pot'\) needs a traversal backend whose samples carry the pot.*backend='tree'"):
        DeepCFRSolver(game, training={"regret_scale": "pot"}, traversal={"backend": "tree"})


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


def test_bfloat16_on_a_cpu_without_bfloat16_instructions_warns_once(kuhn, monkeypatch):
    """Emulated bfloat16 is ~10x slower than float32 (an AMD EPYC VM: 4 iterations of 5x2 flop hold'em
    in 353 s against 54 with float32 in 300 s); the solver says so once instead of running slowly."""
    from openspiel_cfrx.deep import trainer

    monkeypatch.setattr(trainer, "bfloat16_is_fast", lambda: False)
    monkeypatch.setattr(trainer, "_BFLOAT16_WARNED", [])
    with pytest.warns(RuntimeWarning, match="emulated"):
        DeepCFRSolver(kuhn, training={"precision": "bfloat16"}, **SMALL)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DeepCFRSolver(kuhn, training={"precision": "bfloat16"}, **SMALL)  # once per process
