"""Team worst-case evaluators (openspiel_cfrx.eval.team_best_response) beyond
the tree engine: the exact team Goofspiel dynamic program and the NEST
particle best response over evader paths, checked against the tree engine and
OpenSpiel on instances small enough to extract."""

from __future__ import annotations

import random
import zlib

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import best_response as openspiel_best_response

import games  # noqa: F401  registers team_goofspiel, nest
from games.nest_worst_case import NestSimulator, nest_team_worst_case
from games.team_goofspiel_worst_case import (
    exact_goofspiel_team_worst_case,
    particle_goofspiel_team_worst_case,
)
from openspiel_cfrx import team
from openspiel_cfrx.cfr_mix import CFRMixSolver
from openspiel_cfrx.deep import DeepCFRSolver
from openspiel_cfrx.eval.team_best_response import (
    TeamQueryState,
    WorstCaseResult,
    WorstCaseTooLargeError,
    exact_team_worst_case,
    sampled_team_worst_case,
    team_worst_case,
    tensor_strategies,
)

FAST = dict(num_traversals=10, regret_train_steps=10, policy_train_steps=10, workers={"num_threads": 1}, seed=2)


class HashProductPolicy(policy_lib.Policy):
    """A product team policy that depends on the whole team information set:
    agent i's distribution is a seeded Dirichlet draw keyed on
    (information_state_tensor, i), so tensor-only query states get the same
    answer; `deterministic` puts all mass on one action."""

    def __init__(self, game, deterministic=False, salt=0):
        super().__init__(game, [0, 1])
        self.width = max(max(game.agent_num_actions()), team.adversary_num_actions(game))
        self.deterministic = deterministic
        self.salt = salt

    def _row(self, key: bytes, legal) -> np.ndarray:
        rng = np.random.default_rng(zlib.crc32(f"{self.salt}|".encode() + key))
        row = np.zeros(self.width)
        if self.deterministic:
            row[legal[rng.integers(len(legal))]] = 1.0
        else:
            row[legal] = rng.dirichlet(np.full(len(legal), 0.5))
        return row

    def agent_strategies(self, states):
        out = []
        for state in states:
            key = np.asarray(state.information_state_tensor(0), dtype=np.float32).tobytes()
            legal = [state.legal_agent_actions(i) for i in range(state.num_team_agents())]
            out.append(np.stack([self._row(key + bytes([i]), actions) for i, actions in enumerate(legal)]))
        return out

    def action_probabilities(self, state, player_id=None):
        if state.current_player() == 1:
            legal = state.legal_actions()
            row = self._row(np.asarray(state.information_state_tensor(1), dtype=np.float32).tobytes(), legal)
            return {a: float(row[a]) for a in legal}
        (strategy,) = self.agent_strategies([state])
        return {
            a: float(np.prod([strategy[i, d] for i, d in enumerate(state.decode_joint_action(a))]))
            for a in state.legal_actions()
        }


GOOFSPIELS = [
    "team_goofspiel(num_cards=3,num_agents=2,num_turns=1)",
    "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)",
    "team_goofspiel(num_cards=3,num_agents=2,num_turns=3,points_order=random,returns_type=point_difference)",
    "team_goofspiel(num_cards=4,num_agents=3,num_turns=2,points_order=ascending,returns_type=point_difference)",
]


@pytest.mark.parametrize("game_string", GOOFSPIELS)
def test_goofspiel_dynamic_program_equals_tree_engine(game_string):
    game = pyspiel.load_game(game_string)
    for salt in (0, 1) if "num_turns=3" not in game_string else (0,):
        policy = HashProductPolicy(game, salt=salt)
        exact = exact_team_worst_case(game, policy)
        dp = exact_goofspiel_team_worst_case(game, policy)
        assert dp.method == "exact" and dp.ci95 == 0.0
        assert dp.value == pytest.approx(exact.value, abs=1e-9)
        assert dp.adversary_infosets == exact.adversary_infosets


def test_goofspiel_dynamic_program_equals_openspiel_best_response():
    game = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2,num_turns=2,points_order=random)")
    policy = HashProductPolicy(game, salt=5)
    openspiel_value = openspiel_best_response.BestResponsePolicy(game, 1, policy).value(game.new_initial_state())
    assert exact_goofspiel_team_worst_case(game, policy).value == pytest.approx(-openspiel_value, abs=1e-9)


@pytest.mark.parametrize("variant", ["cfr_mix", "double_neural_joint"])
def test_goofspiel_dynamic_program_on_solvers(variant):
    game = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=3,num_turns=2)")
    solver = CFRMixSolver(game, variant=variant, **FAST)
    solver.run_iteration()
    solver.run_iteration()
    exact = exact_team_worst_case(game, solver)
    # float32 networks evaluated in different batches: agreement to ~1e-8, not 1e-12.
    assert exact_goofspiel_team_worst_case(game, solver).value == pytest.approx(exact.value, abs=1e-6)


def test_goofspiel_dynamic_program_on_joint_action_deep_cfr():
    game = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2,num_turns=2)")
    solver = DeepCFRSolver(game, policy_network_layers=(16,), advantage_network_layers=(16,), num_traversals=20,
                           advantage_network_train_steps=20, policy_network_train_steps=20, workers={"num_threads": 1}, seed=1)
    solver.run_iteration()
    exact = exact_team_worst_case(game, solver)
    assert exact_goofspiel_team_worst_case(game, solver).value == pytest.approx(exact.value, abs=1e-6)


def test_goofspiel_dynamic_program_limits_and_auto_dispatch():
    game = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2,num_turns=3)")
    with pytest.raises(ValueError, match="max_terminal_pairs"):
        exact_goofspiel_team_worst_case(game, HashProductPolicy(game), max_terminal_pairs=100)
    with pytest.raises(ValueError, match="team_goofspiel"):
        exact_goofspiel_team_worst_case(pyspiel.load_game("nest"), HashProductPolicy(game))
    # auto: the tree is refused (cap 10 histories), the dynamic program answers exactly.
    policy = HashProductPolicy(game, salt=3)
    auto = team_worst_case(game, policy, max_exact_histories=10)
    assert auto.method == "exact"
    assert auto.value == pytest.approx(exact_team_worst_case(game, policy).value, abs=1e-9)


@pytest.mark.parametrize("game_string", GOOFSPIELS + ["team_goofspiel(num_cards=4,num_agents=2)"])
@pytest.mark.parametrize("uniform", [False, True])
def test_goofspiel_particle_best_response_agrees_with_the_exact_one(game_string, uniform):
    """Where the exact program runs, the particle method's held-out value (the
    value of the adversary strategy it finds: an upper bound on the team's
    worst case in expectation) equals the exact worst case within its 95%
    interval (1,000 particles, 4,000 held-out games; fixed seed). The
    in-sample value is a lower estimate only in expectation (it has its own
    sampling noise), so it is not asserted here."""
    game = pyspiel.load_game(game_string)
    policy = policy_lib.UniformRandomPolicy(game) if uniform else HashProductPolicy(game, salt=1)
    exact = exact_goofspiel_team_worst_case(game, policy).value
    result = particle_goofspiel_team_worst_case(game, policy, num_particles=1000, num_eval_games=4000, seed=0)
    assert result.method == "sampled" and result.ci95 > 0
    assert abs(result.value - exact) <= result.ci95, (result.value, result.ci95, exact)


def test_goofspiel_particle_best_response_scales_to_every_round_and_is_dispatched():
    """6 cards, 4 agents, 6 rounds (the paper's 6C4P6R): the exact program
    refuses, the game's own method answers with the particle bracket."""
    game = pyspiel.load_game("team_goofspiel(num_cards=6,num_agents=4)")
    policy = HashProductPolicy(game, salt=2)
    with pytest.raises(ValueError, match="max_round_histories"):  # refused before building 24M histories
        exact_goofspiel_team_worst_case(game, policy)
    result = game.team_worst_case(policy, num_particles=10, num_eval_games=200, seed=0)
    assert result.method == "sampled" and "particle" in result.adversary_class
    assert result.in_sample_value < result.value  # the in-sample search favours the adversary
    small = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2,num_turns=2)")
    assert small.team_worst_case(HashProductPolicy(small)).method == "exact"
    with pytest.raises(ValueError, match="max_histories"):
        particle_goofspiel_team_worst_case(game, policy, num_particles=10**6)
    with pytest.raises(ValueError, match="unknown option"):
        game.team_worst_case(policy, num_particle=10)


def test_goofspiel_particle_best_response_samples_a_product_policy_agent_by_agent():
    """10 cards, 6 agents, 4 rounds (the paper's 10C6P4R): a product policy is
    sampled agent by agent (9^6 = 531,441 joint bids per information set at
    the second round are never tabulated); a policy without per-agent
    strategies needs that table and is refused in one line with its size."""
    game = pyspiel.load_game("team_goofspiel(num_cards=10,num_agents=6,num_turns=4)")
    result = particle_goofspiel_team_worst_case(game, HashProductPolicy(game, salt=3), num_particles=20,
                                                num_eval_games=100, seed=0)  # fmt: skip
    assert result.method == "sampled" and 0.0 <= result.value <= 1.0 + result.ci95

    class JointOnly(policy_lib.Policy):  # an OpenSpiel policy over joint actions, never asked: refused first
        def action_probabilities(self, state, player_id=None):
            raise AssertionError("the joint table should have been refused before any query")

    with pytest.raises(WorstCaseTooLargeError, match="joint-bid table .* exceeds"):
        particle_goofspiel_team_worst_case(game, JointOnly(game, [0, 1]), num_particles=200, num_eval_games=100,
                                           seed=0)  # fmt: skip


# ----------------------------------------------------------------------- NEST
STAR = "nest(edges=0-1;0-2;0-3;1-4;2-4;2-5;3-5,num_pursuers=2,horizon=2,exits=1;2;3,pursuer_starts=4;5,evader_start=0)"
SMALL_GRID = "nest(rows=2,cols=3,num_pursuers=1,horizon=2)"  # random starts: 2 evader x 5 pursuer starts


def _playout_states(game, count, seed):
    """Team decision states of random playouts."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
            elif state.current_player() == team.TEAM_PLAYER:
                out.append(state.clone())
                state.apply_action(team.sample_uniform_joint_action(state, rng))
            else:
                state.apply_action(rng.choice(state.legal_actions()))
    return out


@pytest.mark.parametrize("game_string", ["nest(rows=3,cols=3,num_pursuers=2)", "nest(rows=5,cols=5,num_pursuers=4)",
                                         STAR, "nest(rows=2,cols=4,num_pursuers=3,capture_on_swap=false)"])
def test_nest_simulator_tensors_match_the_game(game_string):
    game = pyspiel.load_game(game_string)
    sim = NestSimulator(game)
    for state in _playout_states(game, 20, seed=1):
        step = len(state._s.evader_path) - 1
        x, xa, legal = sim.team_queries(np.array([state._s.evader_path]), np.array([state._s.pursuer_path]), step)
        np.testing.assert_array_equal(x[0], np.asarray(state.information_state_tensor(0), dtype=np.float32))
        for agent in range(sim.m):
            np.testing.assert_array_equal(xa[0, agent], state.agent_observation_tensor(agent))
            assert np.flatnonzero(legal[0, agent]).tolist() == state.legal_agent_actions(agent)
        fake = TeamQueryState(x[0], xa[0], sim._legal_lists(legal[0]), sim.radices)
        assert fake.legal_actions() == state.legal_actions()
        compact, compact_agents, _ = sim.team_queries(np.array([state._s.evader_path]),
                                                      np.array([state._s.pursuer_path]), step, compact=True)
        np.testing.assert_array_equal(compact[0], state.compact_information_state_array(0))
        np.testing.assert_array_equal(compact_agents[0], state.compact_agent_features())


def test_nest_simulator_outcomes_match_the_game():
    game = pyspiel.load_game("nest(rows=3,cols=3,num_pursuers=2)")
    sim = NestSimulator(game)
    rng = random.Random(0)
    for _ in range(200):
        state = game.new_initial_state()
        while state.is_chance_node():
            state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
        while not state.is_terminal():
            old_p, old_e = np.array([state.pursuer_nodes()]), np.array([state.evader_node()])
            state.apply_action(team.sample_uniform_joint_action(state, rng))
            state.apply_action(rng.choice(state.legal_actions()))
            new_p, new_e = np.array([state._s.pursuer_path[-1]]), np.array([state._s.evader_path[-1]])
            captured, escaped = sim.resolve(old_p, new_p, old_e, new_e)
            assert bool(captured[0]) == (state.outcome() == "capture")
            assert bool(escaped[0]) == (state.outcome() == "escape")


@pytest.mark.parametrize("variant", ["cfr_mix", "cfr_mix_no_sharing", "double_neural_joint", "deep_cfr",
                                     "cfr_mix_compact", "double_neural_joint_compact"])
def test_tensor_fast_path_equals_policy_api(variant):
    game = pyspiel.load_game("nest(rows=3,cols=3,num_pursuers=2)")
    compact = variant.endswith("_compact")
    if variant == "deep_cfr":
        solver = DeepCFRSolver(game, policy_network_layers=(16,), advantage_network_layers=(16,), num_traversals=4,
                               advantage_network_train_steps=5, policy_network_train_steps=5, workers={"num_threads": 1}, seed=1)
    else:
        solver = CFRMixSolver(game, variant=variant.removesuffix("_compact"),
                              network={"infoset_encoding": "compact" if compact else "tensor"}, **FAST)
    solver.run_iteration()
    sim = NestSimulator(game)
    states = _playout_states(game, 10, seed=2)
    rows = [sim.team_queries(np.array([s._s.evader_path]), np.array([s._s.pursuer_path]),
                             len(s._s.evader_path) - 1, compact) for s in states]  # fmt: skip
    x = np.concatenate([r[0] for r in rows])
    xa = np.concatenate([r[1] for r in rows])
    legal = np.concatenate([r[2] for r in rows])
    fast = tensor_strategies(solver, x, xa, legal, sim.radices)
    if variant == "deep_cfr":
        reference = np.asarray(solver.batch_action_probabilities(states))[:, None, :]
    else:
        reference = np.asarray(solver.agent_strategies(states))
    np.testing.assert_allclose(fast, reference, rtol=0, atol=1e-6)
    # Query states (tensors only) give the same answer through the policy API.
    fake = [TeamQueryState(x[i], xa[i], sim._legal_lists(legal[i]), sim.radices) for i in range(len(states))]
    np.testing.assert_allclose(sim._strategies(solver, fake, len(fake)), reference, rtol=0, atol=1e-6)
    assert tensor_strategies(HashProductPolicy(game), x, xa, legal, sim.radices) is None


@pytest.mark.parametrize("game_string", [STAR, SMALL_GRID])
def test_nest_path_best_response_is_exact_for_a_deterministic_team(game_string):
    """With a deterministic team every particle is the same play, so the search
    over evader paths is the exact best response (all starts enumerated)."""
    game = pyspiel.load_game(game_string)
    policy = HashProductPolicy(game, deterministic=True, salt=4)
    exact = exact_team_worst_case(game, policy).value
    result = nest_team_worst_case(game, policy, num_starts=1000, num_particles=2, num_eval_games=2, seed=0)
    assert "all starts" in result.adversary_class
    assert result.in_sample_value == pytest.approx(exact, abs=1e-9)
    assert result.value == pytest.approx(exact, abs=1e-9)


@pytest.mark.parametrize("game_string", [STAR, SMALL_GRID])
def test_nest_path_best_response_brackets_exact_value(game_string):
    game = pyspiel.load_game(game_string)
    policy = HashProductPolicy(game, salt=6)
    exact = exact_team_worst_case(game, policy).value
    result = nest_team_worst_case(game, policy, num_starts=1000, num_particles=1000, num_eval_games=1000, seed=1)
    # Held-out: unbiased for one evader strategy, so >= exact up to its interval.
    assert result.value >= exact - result.ci95
    assert abs(result.value - exact) < 0.04
    # In-sample maximises over the sample's noise: optimistic for the evader.
    assert result.in_sample_value <= exact + 0.03


def test_nest_path_best_response_on_solvers_and_restricted_evader():
    game = pyspiel.load_game("nest(rows=3,cols=3,num_pursuers=2)")
    for variant in ("cfr_mix", "double_neural_joint"):
        solver = CFRMixSolver(game, variant=variant, **FAST)
        solver.run_iteration()
        result = nest_team_worst_case(game, solver, num_starts=20, num_particles=8, num_eval_games=8, seed=3)
        assert result.num_starts == 20 and "sampled starts" in result.adversary_class
        assert 0.0 <= result.in_sample_value <= 1.0 and 0.0 <= result.value <= 1.0 and result.ci95 > 0
        assert len(result.per_start_values) == 20 and np.mean(result.per_start_values) == pytest.approx(result.value)
    restricted = nest_team_worst_case(game, solver, num_starts=20, num_particles=8, num_eval_games=8, max_slack=0,
                                      seed=3)  # fmt: skip
    assert "distance+0" in restricted.adversary_class
    with pytest.raises(ValueError, match="max_rows") as refused:
        nest_team_worst_case(game, solver, num_starts=20, num_particles=8, max_rows=10)
    # Over its limits it says so through the protocol's error, so team_worst_case("auto") falls back.
    from openspiel_cfrx.eval.team_best_response import WorstCaseTooLargeError

    assert isinstance(refused.value, WorstCaseTooLargeError)
    with pytest.raises(ValueError, match="nest"):
        nest_team_worst_case(pyspiel.load_game("team_goofspiel"), solver)


def test_auto_uses_the_games_own_method_through_the_protocol(monkeypatch):
    """`team_worst_case(method="auto")` asks the game (`game.team_worst_case`)
    when the tree is too large, falls back to sampling when the game's method
    is over its limits, and needs no game code in the library."""
    from openspiel_cfrx.eval.team_best_response import WorstCaseTooLargeError

    game = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2,num_turns=2)")
    policy = HashProductPolicy(game, salt=3)
    own = game.team_worst_case(policy)
    assert own.value == exact_goofspiel_team_worst_case(game, policy).value
    assert team_worst_case(game, policy, max_exact_histories=10).value == pytest.approx(own.value, abs=1e-12)
    calls = []

    def answers(self, policy):
        calls.append("answered")
        return WorstCaseResult(value=0.25, method="own", ci95=0.0)

    def too_large(self, policy):
        calls.append("too large")
        raise WorstCaseTooLargeError("over the game's limits")

    monkeypatch.setattr(type(game), "team_worst_case", answers)
    assert team_worst_case(game, policy, max_exact_histories=10).value == 0.25 and calls == ["answered"]
    monkeypatch.setattr(type(game), "team_worst_case", too_large)
    options = dict(num_particles=20, num_eval_games=20, seed=0)
    result = team_worst_case(game, policy, max_exact_histories=10, **options)
    assert calls == ["answered", "too large"]
    assert result.value == sampled_team_worst_case(game, policy, **options).value


def test_auto_prefers_the_tree_and_needs_no_protocol(monkeypatch):
    """A small game is solved exactly by the tree engine even when it offers
    `team_worst_case`; a game without the method gets the tree when it fits
    and the sampled estimate when it does not."""
    game = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2,num_turns=2)")
    policy = HashProductPolicy(game, salt=5)
    calls = []

    def counted(self, policy):
        calls.append("asked")
        return WorstCaseResult(value=0.25, method="own", ci95=0.0)

    monkeypatch.setattr(type(game), "team_worst_case", counted)
    small = team_worst_case(game, policy)
    assert calls == [] and small.method == "exact"
    assert small.value == exact_team_worst_case(game, policy).value
    monkeypatch.delattr(type(game), "team_worst_case")
    assert not hasattr(game, "team_worst_case")
    assert team_worst_case(game, policy).value == exact_team_worst_case(game, policy).value
    options = dict(num_particles=20, num_eval_games=20, seed=1)
    fallback = team_worst_case(game, policy, max_exact_histories=10, **options)
    assert fallback.method == "sampled"
    assert fallback.value == sampled_team_worst_case(game, policy, **options).value
