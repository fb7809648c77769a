"""CFR-MIX (openspiel_cfrx.cfr_mix): mixing layer, RM+, probe sampling,
variants, product-form policy and exact exploitability on tiny team games."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pyspiel
import pytest
import torch

import games  # noqa: F401  registers team_goofspiel, nest
import openspiel_cfrx
from openspiel_cfrx.cfr_mix import VARIANTS, CFRMixSolver
from openspiel_cfrx.cfr_mix import probe_traversal as pt
from openspiel_cfrx.cfr_mix.agent_network import AgentNetwork, mix
from openspiel_cfrx.cfr_mix.team_policy import regret_matching_plus
from openspiel_cfrx.eval.team_best_response import exact_team_worst_case, sampled_team_worst_case

TINY_GOOFSPIEL = "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)"
# Evader at the centre 0 of a star with exits 1, 2, 3; pursuers start at 4
# (next to 1, 2) and 5 (next to 2, 3); one step.
STAR_NEST = "nest(edges=0-1;0-2;0-3;1-4;2-4;2-5;3-5,num_pursuers=2,horizon=1,exits=1;2;3,pursuer_starts=4;5,evader_start=0)"
FAST = dict(num_traversals=20, regret_train_steps=20, policy_train_steps=20, workers={"num_threads": 1})


@pytest.fixture(scope="module")
def tiny_game():
    return pyspiel.load_game(TINY_GOOFSPIEL)


DEFAULT_RUN = dict(num_iterations=12, num_traversals=30, regret_train_steps=60, policy_train_steps=60, seed=1)


@pytest.fixture(scope="module")
def default_run(tiny_game):
    """CFR-MIX with its defaults on the tiny game (DEFAULT_RUN), solved once
    for the tests that measure it or compare an option with it."""
    solver = CFRMixSolver(tiny_game, **DEFAULT_RUN)
    solver.solve()
    return solver


def test_mixing_layer_is_product_of_nonnegative_agent_regrets():
    torch.manual_seed(0)
    net = AgentNetwork(feature_size=5, agent_feature_size=3, num_agents=3, max_actions=4, hidden_sizes=(8,))
    values = net(torch.randn(6, 5), torch.randn(6, 3, 3))
    assert values.shape == (6, 3, 4)
    assert bool((values >= 0).all())  # R_i >= 0 (RM+ setting, Section 4.2)
    pairs = torch.tensor([[[0, 1, 2], [3, 3, 0], [-1, 2, -1]]] * 6)
    mixed = mix(values, pairs)
    expected = values[:, 0, 0] * values[:, 1, 1] * values[:, 2, 2]
    torch.testing.assert_close(mixed[:, 0], expected)
    torch.testing.assert_close(mixed[:, 1], values[:, 0, 3] * values[:, 1, 3] * values[:, 2, 0])
    torch.testing.assert_close(mixed[:, 2], values[:, 1, 2])  # -1: agent left out


@pytest.mark.parametrize("hidden", [(8,), (8, 8)])
def test_shared_network_fast_path_matches_concatenated_input(hidden):
    """AgentNetwork's shared-MLP path (first layer split, zero columns
    skipped) computes net([features, agent_features_i]), values and gradients."""
    torch.manual_seed(0)
    net = AgentNetwork(feature_size=40, agent_feature_size=3, num_agents=3, max_actions=4, hidden_sizes=hidden)
    features = (torch.rand(6, 40) < 0.1).float() * torch.randn(6, 40)
    features[:, 0] = 0.0  # a column that is zero everywhere
    agent_features = torch.randn(6, 3, 3)
    fast = net(features, agent_features)
    x = torch.cat([features[:, None, :].expand(6, 3, 40), agent_features], dim=2)
    slow = torch.nn.functional.softplus(net.nets[0](x.reshape(18, -1)).reshape(6, 3, -1))
    torch.testing.assert_close(fast, slow)
    (grad_fast,) = torch.autograd.grad(fast.sum(), net.nets[0].layers[0].weight)
    (grad_slow,) = torch.autograd.grad(slow.sum(), net.nets[0].layers[0].weight)
    torch.testing.assert_close(grad_fast, grad_slow)


def test_flat_adam_with_zero_moments_is_bitwise_plain_adam():
    """FlatAdam's fast root of mostly-zero second moments (wide one-hot inputs)
    changes no bit of the update (clip, moments, sqrt(v) / sqrt(1 - b2^t) + eps)."""
    from openspiel_cfrx.deep.networks import FlatAdam

    net = torch.nn.Linear(50, 4)
    opt = FlatAdam(net, lr=1e-3, max_grad_norm=1.0)
    params = opt.params.clone()
    m, v = torch.zeros_like(params), torch.zeros_like(params)
    gen = torch.Generator().manual_seed(0)
    for step in range(1, 6):
        grad = torch.randn(params.shape, generator=gen) * (torch.rand(params.shape, generator=gen) < 0.2)
        grad[:10] = 1e-30 * step  # underflowing squares
        opt.grads.copy_(grad)
        opt.step()
        grad = grad * torch.clamp(1.0 / (torch.linalg.vector_norm(grad) + 1e-6), max=1.0)
        m.mul_(0.9).add_(grad, alpha=0.1)
        v.mul_(0.999).addcmul_(grad, grad, value=1 - 0.999)
        denom = (v.sqrt() / (1 - 0.999**step) ** 0.5).add_(1e-8)
        params.addcdiv_(m, denom, value=-1e-3 / (1 - 0.9**step))
        assert torch.equal(opt.params, params)


def test_regret_matching_plus_per_agent():
    values = np.array([[[2.0, 0.0, 6.0], [0.0, 0.0, 0.0]]])
    legal = np.array([[[True, True, True], [True, False, True]]])
    probs = regret_matching_plus(values, legal)
    np.testing.assert_allclose(probs[0, 0], [0.25, 0.0, 0.75])
    np.testing.assert_allclose(probs[0, 1], [0.5, 0.0, 0.5])  # no positive regret: uniform over legal
    # Theorem 2: RM+ on R_tot = prod R_i equals the product of per-agent RM+.
    r1, r2 = np.array([1.0, 3.0]), np.array([2.0, 2.0, 4.0])
    r_tot = np.outer(r1, r2)
    np.testing.assert_allclose(r_tot / r_tot.sum(), np.outer(r1 / r1.sum(), r2 / r2.sum()))


def test_non_team_game_is_rejected_with_a_clear_error():
    with pytest.raises(TypeError, match="factored team protocol"):
        CFRMixSolver(pyspiel.load_game("kuhn_poker"))
    with pytest.raises(ValueError, match="unknown CFR-MIX variant"):
        CFRMixSolver(pyspiel.load_game(TINY_GOOFSPIEL), variant="qmix")


def test_parameter_sharing_changes_number_of_networks(tiny_game):
    shared = CFRMixSolver(tiny_game, variant="cfr_mix", **FAST)
    separate = CFRMixSolver(tiny_game, variant="cfr_mix_no_sharing", **FAST)
    assert shared.num_team_regret_networks == 1
    assert separate.num_team_regret_networks == tiny_game.num_team_agents() == 2
    assert separate.num_parameters() == 2 * shared.num_parameters()


def test_product_form_policy(tiny_game):
    solver = CFRMixSolver(tiny_game, num_iterations=1, **FAST)
    solver.solve()
    state = tiny_game.new_initial_state()
    assert state.current_player() == 0
    agents = solver.agent_action_probabilities(state)
    assert len(agents) == 2
    joint = solver.action_probabilities(state)
    for action, prob in joint.items():
        a0, a1 = tiny_game.decode_joint_action(action)
        assert prob == pytest.approx(agents[0][a0] * agents[1][a1], abs=1e-12)
    assert sum(joint.values()) == pytest.approx(1.0)
    tree = openspiel_cfrx.get_tree(tiny_game)
    strategy = solver.strategy_array(tree)
    np.testing.assert_allclose(strategy.sum(axis=1), 1.0, atol=1e-9)
    # The tree engine and OpenSpiel's Policy path agree on the product policy.
    from open_spiel.python.algorithms import exploitability

    assert openspiel_cfrx.nash_conv(tiny_game, solver) == pytest.approx(
        exploitability.nash_conv(tiny_game, solver), abs=1e-6
    )


def test_probe_values_on_hand_checked_star():
    game = pyspiel.load_game(STAR_NEST)
    solver = CFRMixSolver(game, **FAST)  # untrained: everyone uniform
    root = game.new_initial_state()
    assert root.current_player() == 0
    # Pursuer 0 to node 1 (slot 1), pursuer 1 to node 3 (slot 2): a uniform
    # evader (stay, 1, 2, 3) is caught at 1 or 3, times out staying (+1 to the
    # team), escapes at 2 (0): expected team value 3/4.
    child = root.child(root.encode_joint_action([1, 2]))
    rng = random.Random(0)
    record = pt.ProbeRecord()
    values = pt.run_batched((pt.probe(child.clone(), 0, solver.views, rng, record) for _ in range(4000)),
                            lambda qls: [solver.answer(q) for q in qls])  # fmt: skip
    assert np.mean(values) == pytest.approx(0.75, abs=0.03)
    assert set(values) <= {0.0, 1.0}
    # A team traversal enumerates the 9 joint actions (below joint_cap) and its
    # regrets are centred on the product strategy: sum_a sigma(a) r(a) = 0.
    record, _ = pt.run_traversals(game, 0, 50, solver.views, solver.answer, rng, "joint", joint_cap=64)
    assert all(len(pairs) == 9 for pairs in record.regret_pairs)
    for regrets in record.regret_values:
        assert np.dot(np.full(9, 1 / 9), regrets) == pytest.approx(0.0, abs=1e-12)
    # Above the cap: joint_cap probes (a*, one on-policy draw, two uniform), of
    # which only the three uniform candidates' regrets are recorded.
    record, _ = pt.run_traversals(game, 0, 5, solver.views, solver.answer, rng, "joint", joint_cap=4)
    assert all(1 <= len(pairs) <= 3 for pairs in record.regret_pairs)
    # Independent targets: one agent per pair, sum over agents of legal actions.
    record, _ = pt.run_traversals(game, 0, 5, solver.views, solver.answer, rng, "independent")
    for pairs in record.regret_pairs:
        assert len(pairs) == 6 and all(sum(d >= 0 for d in p) == 1 for p in pairs)


def test_subsampled_joint_regrets_are_unbiased():
    """Above joint_cap (Algorithm 2 line 11 subsampled), the recorded regret of
    every joint action has the expectation the full enumeration records:
    v(a) - sum_b sigma(b) v(b), here for a non-uniform product strategy."""
    game = pyspiel.load_game(STAR_NEST)
    solver = CFRMixSolver(game, **FAST)
    team = np.array([[0.1, 0.6, 0.3, 0.0], [0.2, 0.2, 0.6, 0.0]])  # [agent, slot]; slots 0-2 legal here

    def answer(queries):
        out = []
        for query in queries:
            if query.player == 0:
                out.append(team[: len(query.legal), :])
            else:
                uniform = np.zeros((1, max(query.legal[0]) + 1))
                uniform[0, query.legal[0]] = 1.0 / len(query.legal[0])
                out.append(uniform)
        return out

    root = game.new_initial_state()
    legal = solver.views[0].legal(root)
    assert math.prod(len(a) for a in legal) == 9

    def exact_value(state):  # the team's expected return, evader uniform
        if state.is_terminal():
            return state.returns()[0]
        moves = state.legal_actions()
        return sum(exact_value(state.child(a)) for a in moves) / len(moves)

    joint = [tuple(d) for d in itertools.product(*legal)]
    values = {d: exact_value(root.child(root.encode_joint_action(list(d)))) for d in joint}
    u_sigma = sum(team[0, d[0]] * team[1, d[1]] * values[d] for d in joint)
    exact = {d: values[d] - u_sigma for d in joint}
    assert max(exact.values()) - min(exact.values()) > 0.4

    traversals = 6000
    record, _ = pt.run_traversals(game, 0, traversals, solver.views, answer, random.Random(1), "joint", joint_cap=4)
    totals, squares = dict.fromkeys(joint, 0.0), dict.fromkeys(joint, 0.0)
    for pairs, regrets in zip(record.regret_pairs, record.regret_values, strict=True):
        for digits, regret in zip(pairs, regrets, strict=True):
            totals[tuple(digits)] += regret
            squares[tuple(digits)] += regret**2
    for d in joint:
        mean = totals[d] / traversals
        error = math.sqrt(squares[d] / traversals - mean**2) / math.sqrt(traversals)
        assert abs(mean - exact[d]) < 4.5 * error + 1e-3, (d, mean, exact[d], error)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_variant_runs_and_gives_a_valid_policy(tiny_game, variant):
    solver = CFRMixSolver(tiny_game, variant=variant, num_iterations=2, **FAST)
    _, regret_losses, policy_losses = solver.solve()
    assert solver.iteration == 2
    assert all(len(v) == 2 for v in regret_losses.values())
    strategy = solver.strategy_array(openspiel_cfrx.get_tree(tiny_game))
    np.testing.assert_allclose(strategy.sum(axis=1), 1.0, atol=1e-9)
    assert math.isfinite(openspiel_cfrx.nash_conv(tiny_game, solver))


def test_cfr_mix_reaches_exploitability_bound_on_tiny_goofspiel(tiny_game, default_run):
    uniform = openspiel_cfrx.nash_conv(tiny_game, CFRMixSolver(tiny_game, **FAST))
    assert uniform == pytest.approx(1.3056, abs=1e-3)
    solver = default_run
    tree = openspiel_cfrx.get_tree(tiny_game)
    average = openspiel_cfrx.nash_conv(tiny_game, solver.strategy_array(tree))
    current = openspiel_cfrx.nash_conv(tiny_game, solver.current_policy_array(tree))
    # Measured (seed 1): average ~0.13, current ~0.04; bound = uniform / 5.
    assert average < 0.26 and current < 0.26


def test_deep_cfr_mix_fine_tunes_by_default_and_learns(tiny_game):
    """Deep CFR + mixing layer: retraining the regret networks from scratch each
    iteration re-draws which (exchangeable) agent takes which role, and the
    product of the average marginals stays near 0.85 (measured, seeds 0-2);
    fine-tuning (the default for the factored team) keeps the roles: 0.12-0.14
    (10 iterations; at 6: 0.84 and 0.14-0.15, seeds 1-2)."""
    settings = dict(variant="deep_cfr_mix", num_iterations=6, num_traversals=30, regret_train_steps=60,
                    policy_train_steps=60, seed=1)  # fmt: skip
    solver = CFRMixSolver(tiny_game, **settings)
    solver.solve()
    assert openspiel_cfrx.nash_conv(tiny_game, solver) < 0.3
    scratch = CFRMixSolver(tiny_game, training={"reinitialize_regret_networks": True}, **settings)
    scratch.solve()
    assert openspiel_cfrx.nash_conv(tiny_game, scratch) > 0.5
    with pytest.raises(ValueError, match="reinitialize_regret_networks must be True, False or None"):
        CFRMixSolver(tiny_game, training={"reinitialize_regret_networks": "yes"})


@pytest.mark.parametrize(
    "option, average_bound",
    [
        # Algorithm 1's simultaneous order (both players traverse against theta^t,
        # then both train); measured, seed 1: average 0.23 / current 0.06,
        # alternating 0.18 / 0.06.
        ({"traversal": {"alternating_updates": False}}, 0.35),
        # Regret networks keep their first target scale (the audit's "Target
        # scale" row, measured in cfr_mix_factors.md).
        pytest.param({"training": {"rescale_regret_targets": False}}, None, marks=pytest.mark.slow),
    ],
)
def test_update_options_change_the_run_and_still_learn(tiny_game, default_run, option, average_bound):
    changed = CFRMixSolver(tiny_game, **option, **DEFAULT_RUN)
    changed.solve()
    default = default_run
    tree = openspiel_cfrx.get_tree(tiny_game)
    average = [openspiel_cfrx.nash_conv(tiny_game, s.strategy_array(tree)) for s in (changed, default)]
    current = [openspiel_cfrx.nash_conv(tiny_game, s.current_policy_array(tree)) for s in (changed, default)]
    assert (average[0], current[0]) != (average[1], current[1])
    assert current[0] < 0.2
    if average_bound is not None:
        assert average[0] < average_bound


@pytest.mark.slow  # bfloat16 is emulated on CPUs without AMX / AVX-512 BF16
def test_bfloat16_training_learns_and_mixes_in_float32(tiny_game, monkeypatch):
    """training={"precision": "bfloat16"}: the agent networks train under bfloat16
    autocast, their parameters stay float32, and the mixing layer's product
    (eq. 4) takes float32 values. Measured (seeds 1, 2): average 0.19 / 0.24,
    current 0.06 / 0.04 (float32: 0.19 / 0.25, 0.07 / 0.05)."""
    import openspiel_cfrx.cfr_mix.team_model as team_model

    mixed = set()

    def mix(values, pairs, mix=team_model.mix):
        mixed.add(values.dtype)
        return mix(values, pairs)

    monkeypatch.setattr(team_model, "mix", mix)
    solver = CFRMixSolver(tiny_game, num_iterations=12, num_traversals=30, regret_train_steps=60,
                          policy_train_steps=60, seed=1, training={"precision": "bfloat16"})  # fmt: skip
    solver.solve()
    assert mixed == {torch.float32}
    nets = [solver.regret_network(p) for p in (0, 1)] + [solver.policy_network(p) for p in (0, 1)]
    assert all(w.dtype == torch.float32 for net in nets for w in net.parameters())
    tree = openspiel_cfrx.get_tree(tiny_game)
    assert openspiel_cfrx.nash_conv(tiny_game, solver.strategy_array(tree)) < 0.26
    assert openspiel_cfrx.nash_conv(tiny_game, solver.current_policy_array(tree)) < 0.15
    with pytest.raises(ValueError, match=r"MixTrainingSettings\.precision"):
        CFRMixSolver(tiny_game, training={"precision": "float16"})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (run on a lent device machine)")
def test_cuda_training_replays_a_captured_step_and_learns(tiny_game):
    """On CUDA the agent networks' fits replay one captured step (the shared
    MLP's column selection, a host read, is skipped under capture) and the
    solver learns as on CPU (the bounds of the bfloat16 test above)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a failed capture warns
        solver = CFRMixSolver(tiny_game, num_iterations=12, num_traversals=30, regret_train_steps=60,
                              policy_train_steps=60, seed=1, device="cuda")  # fmt: skip
        solver.solve()
    assert all(m.trainer.cuda_graphs for m in solver.regret_models + solver.policy_models)
    tree = openspiel_cfrx.get_tree(tiny_game)
    assert openspiel_cfrx.nash_conv(tiny_game, solver.strategy_array(tree)) < 0.26
    assert openspiel_cfrx.nash_conv(tiny_game, solver.current_policy_array(tree)) < 0.15


def test_rescale_regret_targets_must_be_a_bool(tiny_game):
    with pytest.raises(ValueError, match="rescale_regret_targets"):
        CFRMixSolver(tiny_game, training={"rescale_regret_targets": "yes"})


def test_sampled_worst_case_brackets_exact_value(tiny_game):
    solver = CFRMixSolver(tiny_game, **FAST)  # uniform team: exact BR value known
    exact = exact_team_worst_case(tiny_game, solver)
    assert exact.value == pytest.approx(-0.30556, abs=1e-4)
    sampled = sampled_team_worst_case(tiny_game, solver, num_particles=300, num_eval_games=2000, seed=3)
    # Held-out value: unbiased for one adversary strategy, so >= exact - CI.
    assert sampled.value >= exact.value - sampled.ci95 - 0.02
    assert abs(sampled.value - exact.value) < 0.1
    assert sampled.adversary_infosets == tree_adversary_infosets(tiny_game)


def tree_adversary_infosets(game) -> int:
    return openspiel_cfrx.get_tree(game).num_infosets_of(1)


# --------------------------------------------------------------- checkpoints
TINY_NETS = dict(num_traversals=8, regret_train_steps=5, policy_train_steps=5, batch_size=32,
                 regret_network_layers=(8,), policy_network_layers=(8,), memory_capacity=16,
                 workers={"num_threads": 1}, seed=3)  # fmt: skip


def _all_outputs(solver, game) -> list[np.ndarray]:
    """Raw outputs of every network (regret and average strategy, both players)
    on every information set of the tiny game."""
    states = openspiel_cfrx.get_tree(game).infoset_states()
    out = []
    for models in (solver.regret_models, solver.policy_models):
        for player, model in enumerate(models):
            queries = [pt.make_query(solver.views[player], s) for s in states if s.current_player() == player]
            features = np.stack([q.features for q in queries]).astype(np.float32)
            agent_features = np.stack([q.agent_features for q in queries]).astype(np.float32)
            with torch.inference_mode():
                out.append(model.net(torch.from_numpy(features), torch.from_numpy(agent_features)).numpy())
            out.append(model.values(features, agent_features))
    return out


@pytest.mark.parametrize("variant", ["cfr_mix", "deep_cfr_mix"])
def test_checkpoint_resume_is_exact(tiny_game, tmp_path, variant):
    path = str(tmp_path / "cfr_mix.pt")
    first = CFRMixSolver(tiny_game, variant=variant, num_iterations=3, **TINY_NETS)
    first.run_iteration()
    first.run_iteration()
    first.save_checkpoint(path)
    resumed = CFRMixSolver(tiny_game, variant=variant, num_iterations=3, **{**TINY_NETS, "seed": 99})
    resumed.load_checkpoint(path)
    assert resumed.iteration == 2 and len(resumed.history) == 2
    resumed.solve()  # the one remaining iteration
    straight = CFRMixSolver(tiny_game, variant=variant, num_iterations=3, **TINY_NETS)
    straight.solve()
    assert resumed.iteration == straight.iteration == 3
    assert resumed.nodes_touched == straight.nodes_touched and resumed.probes == straight.probes
    for a, b in zip(_all_outputs(resumed, tiny_game), _all_outputs(straight, tiny_game), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    for a, b in zip(resumed.regret_models + resumed.policy_models,
                    straight.regret_models + straight.policy_models, strict=True):  # fmt: skip
        assert a.memory.add_calls == b.memory.add_calls and a.losses == b.losses and a.scale == b.scale
        np.testing.assert_array_equal(a.memory.features, b.memory.features)
        assert a.trainer.optimizer.steps == b.trainer.optimizer.steps
    assert resumed.py_rng.random() == straight.py_rng.random()
    assert resumed.np_rng.random() == straight.np_rng.random()


def test_corrupt_and_mismatched_checkpoints_give_clear_errors(tiny_game, tmp_path):
    from openspiel_cfrx.deep import CheckpointError, DeepCFRSolver

    solver = CFRMixSolver(tiny_game, **TINY_NETS)
    solver.run_iteration()
    path = str(tmp_path / "ok.pt")
    solver.save_checkpoint(path)
    with open(path, "rb") as f:
        data = f.read()
    (tmp_path / "truncated.pt").write_bytes(data[: len(data) // 2])
    (tmp_path / "garbage.pt").write_bytes(bytes(range(256)) * 8)
    fresh = CFRMixSolver(tiny_game, **TINY_NETS)
    for bad in ("truncated.pt", "garbage.pt"):
        with pytest.raises(CheckpointError, match="corrupt"):
            fresh.load_checkpoint(str(tmp_path / bad))
    with pytest.raises(CheckpointError, match="does not exist"):
        fresh.load_checkpoint(str(tmp_path / "missing.pt"))
    assert issubclass(CheckpointError, ValueError)
    # Another game, network shape or variant: the message names the setting.
    other_game = CFRMixSolver(pyspiel.load_game(STAR_NEST), **TINY_NETS)
    with pytest.raises(CheckpointError, match=r"game: the checkpoint has 'team_goofspiel.*construct the solver"):
        other_game.load_checkpoint(path)
    wider = CFRMixSolver(tiny_game, **{**TINY_NETS, "regret_network_layers": (16,)})
    with pytest.raises(CheckpointError, match="regret_network_layers"):
        wider.load_checkpoint(path)
    with pytest.raises(CheckpointError, match="variant"):
        CFRMixSolver(tiny_game, variant="deep_cfr_mix", **TINY_NETS).load_checkpoint(path)
    # The two deep solvers refuse each other's files and say whose they are.
    deep = DeepCFRSolver(pyspiel.load_game("kuhn_poker"), (8,), (8,), memory_capacity=16)
    deep_path = str(tmp_path / "deep.pt")
    deep.save_checkpoint(deep_path)
    with pytest.raises(CheckpointError, match="not a CFRMixSolver checkpoint.*written by DeepCFRSolver"):
        fresh.load_checkpoint(deep_path)
    with pytest.raises(CheckpointError, match="not a DeepCFRSolver checkpoint.*written by CFRMixSolver"):
        deep.load_checkpoint(path)
    # Right format and settings, damaged contents.
    payload = torch.load(path, weights_only=True)
    del payload["state"]["parts"]["regret_model_0"]["trainer"]["optimizer"]
    torch.save(payload, str(tmp_path / "damaged.pt"))
    with pytest.raises(CheckpointError, match="damaged"):
        fresh.load_checkpoint(str(tmp_path / "damaged.pt"))
    # A good checkpoint still loads after the failed attempts.
    fresh.load_checkpoint(path)
    assert fresh.iteration == 1


def test_compact_infoset_encoding_on_nest(tmp_path):
    """network={"infoset_encoding": "compact"}: the networks see the game's compact input in
    traversals, the policy API and the NEST evaluator; checkpoints record it."""
    from games.nest_worst_case import nest_team_worst_case
    from openspiel_cfrx.deep import CheckpointError

    game = pyspiel.load_game("nest(rows=3,cols=3,num_pursuers=2)")
    solver = CFRMixSolver(game, num_iterations=2, network={"infoset_encoding": "compact"}, **TINY_NETS)
    size = game.compact_information_state_size()
    assert solver.settings.network.infoset_encoding == "compact" and solver.feature_size == size
    # Team agents take the game's compact agent features (agent observation + relative distances).
    assert game.compact_agent_feature_size() > game.agent_observation_size()
    assert solver.regret_network(0).nets[0].layers[0].in_features == size + game.compact_agent_feature_size()
    assert solver.regret_network(1).nets[0].layers[0].in_features == size
    solver.solve()
    assert solver.iteration == 2
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    query = pt.make_query(solver.views[0], state)
    np.testing.assert_array_equal(query.features, state.compact_information_state_array(0))
    np.testing.assert_array_equal(query.agent_features, state.compact_agent_features())
    for probs in solver.agent_action_probabilities(state):
        assert math.isclose(sum(probs.values()), 1.0)
    result = nest_team_worst_case(game, solver, num_starts=4, num_particles=4, num_eval_games=4, seed=0)
    assert -1.0 <= result.value <= 1.0
    path = str(tmp_path / "compact.pt")
    solver.save_checkpoint(path)
    resumed = CFRMixSolver(game, num_iterations=2, network={"infoset_encoding": "compact"}, **TINY_NETS)
    resumed.load_checkpoint(path)
    assert resumed.iteration == 2
    with pytest.raises(CheckpointError, match="infoset_encoding: the checkpoint has 'compact', this solver 'tensor'"):
        CFRMixSolver(game, **TINY_NETS).load_checkpoint(path)
    # An unknown format version is refused, naming it.
    tensor = CFRMixSolver(game, **TINY_NETS)
    tensor.run_iteration()
    tensor.save_checkpoint(path)
    payload = torch.load(path, weights_only=True)
    payload["format"] = "openspiel_cfrx.CFRMixSolver/9"
    torch.save(payload, path)
    with pytest.raises(CheckpointError, match="format 'openspiel_cfrx.CFRMixSolver/9'"):
        CFRMixSolver(game, **TINY_NETS).load_checkpoint(path)
    with pytest.raises(ValueError, match="compact_information_state_size"):
        CFRMixSolver(pyspiel.load_game(TINY_GOOFSPIEL), network={"infoset_encoding": "compact"})
    with pytest.raises(ValueError, match="infoset_encoding must be one of"):
        CFRMixSolver(game, network={"infoset_encoding": "dense"})


def test_solver_rebuilt_from_checkpoint_plays_the_same_policy_and_schedule_ramps(tiny_game, tmp_path):
    from openspiel_cfrx.deep import Schedule

    solver = CFRMixSolver(tiny_game, variant="cfr_mix_no_sharing", num_iterations=2, **TINY_NETS)
    solver.solve()
    path = str(tmp_path / "mix.pt")
    solver.save_checkpoint(path)
    rebuilt = CFRMixSolver.from_checkpoint(path)  # game and shapes from the file
    assert rebuilt.variant == "cfr_mix_no_sharing" and rebuilt.iteration == 2
    tree = openspiel_cfrx.get_tree(tiny_game)
    np.testing.assert_array_equal(rebuilt.strategy_array(tree), solver.strategy_array(tree))
    # A traversal ramp runs fewer traversals (so touches fewer nodes) at iteration 1.
    ramped = CFRMixSolver(tiny_game, num_iterations=1, training={"schedule": Schedule(traversals_ramp=8)}, **TINY_NETS)
    constant = CFRMixSolver(tiny_game, num_iterations=1, **TINY_NETS)
    assert ramped.run_iteration()["nodes"] < constant.run_iteration()["nodes"]
