"""Factored team action protocol (openspiel_cfrx.team) and its use by the team games."""

import itertools
import random
import tracemalloc

import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import cfr, exploitability

import games  # noqa: F401  (registers team_goofspiel, nest)
import openspiel_cfrx
from openspiel_cfrx import team

BIG_GOOFSPIEL = "team_goofspiel(num_cards=10,num_agents=6,num_turns=4)"
BIG_NEST = "nest(rows=15,cols=15,num_pursuers=8)"
# Tiny instances for exact evaluation (docs/team_games.md lists their sizes).
GOOFSPIEL_TINY = (
    "team_goofspiel(num_cards=3,num_agents=2,num_turns=2,returns_type=point_difference)"
)
GOOFSPIEL_TINY_RANDOM = "team_goofspiel(num_cards=3,num_agents=2,num_turns=2,points_order=random)"
# The evader at the centre of a star with three exits, each pursuer next to two.
NEST_STAR = (
    "nest(edges=0-1;0-2;0-3;1-4;2-4;2-5;3-5,num_pursuers=2,horizon={},"
    "exits=1;2;3,pursuer_starts=4;5,evader_start=0)"
)


def test_mixed_radix_round_trip_and_order():
    radices = (3, 1, 4, 2)
    seen = []
    # Enumerate most-significant agent first: must give 0, 1, 2, ... in order.
    for digits_reversed in itertools.product(*[range(r) for r in reversed(radices)]):
        digits = tuple(reversed(digits_reversed))
        joint = team.encode_mixed_radix(digits, radices)
        assert team.decode_mixed_radix(joint, radices) == digits
        seen.append(joint)
    assert seen == list(range(team.joint_action_space_size(radices)))
    # Agent 0 is the least significant digit.
    assert team.encode_mixed_radix((1, 0, 0, 0), radices) == 1
    assert team.encode_mixed_radix((0, 0, 1, 0), radices) == 3
    assert team.encode_mixed_radix((0, 0, 0, 1), radices) == 12


def test_mixed_radix_rejects_bad_input():
    with pytest.raises(ValueError, match="one action per agent"):
        team.encode_mixed_radix((0, 1), (3, 3, 3))
    with pytest.raises(ValueError, match="agent 1's action 3 is outside"):
        team.encode_mixed_radix((0, 3), (3, 3))
    with pytest.raises(ValueError, match="outside"):
        team.decode_mixed_radix(9, (3, 3))
    with pytest.raises(ValueError, match="outside"):
        team.decode_mixed_radix(-1, (3, 3))


def test_enumerate_joint_actions_matches_product_and_cap():
    legal = [[0, 2], [1], [0, 1, 3]]
    radices = (3, 2, 4)
    joint = team.enumerate_joint_actions(legal, radices)
    expected = sorted(
        team.encode_mixed_radix(digits, radices) for digits in itertools.product(*legal)
    )
    assert joint == expected
    with pytest.raises(team.JointActionSpaceTooLargeError, match="above the enumeration cap of 5"):
        team.enumerate_joint_actions(legal, radices, max_joint_actions=5)
    assert issubclass(team.JointActionSpaceTooLargeError, ValueError)


@pytest.mark.parametrize(
    "name", ["team_goofspiel(num_cards=4,num_agents=3)", "nest(rows=3,cols=3,num_pursuers=2)"]
)
def test_games_satisfy_protocol(name):
    game = pyspiel.load_game(name)
    assert team.is_factored_team_game(game)
    assert not team.is_factored_team_game(pyspiel.load_game("kuhn_poker"))
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    assert isinstance(state, team.FactoredTeamState)
    assert state.current_player() == team.TEAM_PLAYER
    radices = game.agent_num_actions()
    assert len(radices) == game.num_team_agents()
    assert team.joint_action_space_size(radices) == game.num_distinct_actions()
    # The legal joint actions are exactly the product of the agents' legal lists.
    per_agent = [state.legal_agent_actions(i) for i in range(game.num_team_agents())]
    product = sorted(game.encode_joint_action(d) for d in itertools.product(*per_agent))
    assert state.legal_actions() == product
    assert state.num_legal_joint_actions() == len(product)
    for joint in product:
        assert game.encode_joint_action(game.decode_joint_action(joint)) == joint
    assert len(state.agent_observation_tensor(0)) == game.agent_observation_size()
    # Clones keep the Python class, hence the protocol.
    assert isinstance(state.clone(), team.FactoredTeamState)


def _adversary_legal_actions(state, seen):
    """Union of the adversary's legal actions over the whole tree below `state`."""
    if state.is_terminal():
        return
    if state.current_player() == team.ADVERSARY_PLAYER:
        seen.update(state.legal_actions())
    actions = (
        [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
    )
    for action in actions:
        _adversary_legal_actions(state.child(action), seen)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("team_goofspiel(num_cards=3,num_agents=2,num_turns=2)", 3),
        ("nest(rows=2,cols=2,num_pursuers=1,horizon=2,exits=3;)", 5),
        (NEST_STAR.format(1), 4),  # 1 + max degree 3 (node 0)
    ],
)
def test_adversary_num_actions_bounds_every_adversary_action(name, expected):
    game = pyspiel.load_game(name)
    assert isinstance(game, team.FactoredTeamGame)  # full protocol, optional method included
    assert game.adversary_num_actions() == expected == team.adversary_num_actions(game)
    seen = set()
    _adversary_legal_actions(game.new_initial_state(), seen)
    assert seen and max(seen) < expected


class _NoAdversaryCount:
    """A third-party team game that does not define the optional `adversary_num_actions`."""

    def __init__(self, radices=(3, 4)):
        self.radices = radices

    def num_team_agents(self):
        return len(self.radices)

    def agent_num_actions(self):
        return self.radices

    def agent_observation_size(self):
        return 1

    def encode_joint_action(self, agent_actions):
        return team.encode_mixed_radix(agent_actions, self.radices)

    def decode_joint_action(self, joint_action):
        return team.decode_mixed_radix(joint_action, self.radices)

    def num_distinct_actions(self):
        return team.joint_action_space_size(self.radices)


class _DeclaredCount(_NoAdversaryCount):
    def __init__(self, count, radices=(3, 4)):
        super().__init__(radices)
        self.count = count

    def adversary_num_actions(self):
        return self.count


def test_adversary_num_actions_is_optional_with_fallback():
    partial = _NoAdversaryCount()
    assert team.is_factored_team_game(partial)
    assert not isinstance(partial, team.FactoredTeamGame)
    assert team.adversary_num_actions(partial) == 4  # largest agent action count
    assert team.adversary_num_actions(_DeclaredCount(7)) == 7
    assert isinstance(_DeclaredCount(7), team.FactoredTeamGame)


@pytest.mark.parametrize(
    "count, message",
    [
        (0, "must be a positive int"),
        (2.5, "must be a positive int"),
        (13, "exceeds num_distinct_actions"),
    ],
)
def test_adversary_num_actions_inconsistent_sizes_raise(count, message):
    with pytest.raises(ValueError, match=message):
        team.adversary_num_actions(_DeclaredCount(count))


def _first_adversary_state(game):
    state = game.new_initial_state()
    while state.current_player() != team.ADVERSARY_PLAYER:
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        else:
            state.apply_action(state.legal_actions()[0])
    return state


def test_cfr_mix_sizes_adversary_head_from_protocol_and_rejects_inconsistent_games():
    from games.team_goofspiel import TeamGoofspielGame

    params = {"num_cards": 3, "num_agents": 2, "num_turns": 2}
    game = pyspiel.load_game("team_goofspiel", params)
    solver = openspiel_cfrx.CFRMixSolver(
        game, regret_network_layers=(4,), policy_network_layers=(4,)
    )
    assert solver.views[team.ADVERSARY_PLAYER].num_actions == (3,)

    class TooFewAdversaryActions(TeamGoofspielGame):
        def adversary_num_actions(self):
            return 2

    bad = TooFewAdversaryActions(params)
    solver = openspiel_cfrx.CFRMixSolver(
        bad, regret_network_layers=(4,), policy_network_layers=(4,)
    )
    with pytest.raises(ValueError, match=r"adversary_num_actions\(\) is 2: inconsistent sizes"):
        solver.agent_action_probabilities(_first_adversary_state(bad))

    class WithoutAdversaryCount(TeamGoofspielGame):
        adversary_num_actions = None  # the optional method not defined

    partial = WithoutAdversaryCount(params)
    solver = openspiel_cfrx.CFRMixSolver(
        partial, regret_network_layers=(4,), policy_network_layers=(4,)
    )
    assert solver.views[team.ADVERSARY_PLAYER].num_actions == (3,)  # fallback: max agent count
    state = _first_adversary_state(partial)
    assert len(solver.agent_action_probabilities(state)[0]) == 3
    # Were the fallback too small, the error says what to add to the game.
    solver.views[team.ADVERSARY_PLAYER].num_actions = (2,)  # the solver's own view object
    with pytest.raises(ValueError, match="give the game an adversary_num_actions"):
        solver.agent_action_probabilities(state)


def test_legal_agent_actions_only_on_team_turn():
    game = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2)")
    state = game.new_initial_state()
    with pytest.raises(ValueError, match="agent 2 does not exist"):
        state.legal_agent_actions(2)
    state.apply_action(state.legal_actions()[0])
    with pytest.raises(ValueError, match="team's turn only"):
        state.legal_agent_actions(0)


@pytest.mark.parametrize("name", [BIG_GOOFSPIEL, BIG_NEST])
def test_huge_joint_space_refuses_enumeration_but_factored_calls_play(name, monkeypatch):
    game = pyspiel.load_game(name)
    assert game.num_distinct_actions() >= 390_625
    state = game.new_initial_state()
    while state.is_chance_node():
        # Middle node: every NEST pursuer starts with all 5 moves (5^8 joint).
        outcomes = state.chance_outcomes()
        state.apply_action(outcomes[len(outcomes) // 2][0])
    with pytest.raises(ValueError, match="use the factored calls"):
        state.legal_actions()

    # From here on any enumeration is a failure, and the peak memory of a whole
    # factored playout stays far below one 10^6-element list (~40 MB).
    def refuse(*args, **kwargs):
        raise AssertionError("joint action space was enumerated")

    monkeypatch.setattr(team, "enumerate_joint_actions", refuse)
    rng = random.Random(7)
    tracemalloc.start()
    steps = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice(state.chance_outcomes())[0])
        elif state.current_player() == team.TEAM_PLAYER:
            assert state.num_legal_joint_actions() >= 1
            state.apply_action(team.sample_uniform_joint_action(state, rng))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
        steps += 1
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert steps >= 2
    assert peak < 2_000_000
    assert state.returns()[0] == -state.returns()[1]


def test_big_goofspiel_first_turn_sizes():
    game = pyspiel.load_game(BIG_GOOFSPIEL)
    state = game.new_initial_state()
    assert game.num_distinct_actions() == 10**6
    assert state.num_legal_joint_actions() == 10**6
    assert state.legal_agent_actions(5) == list(range(10))
    joint = game.encode_joint_action([9, 0, 1, 2, 3, 4])
    assert game.decode_joint_action(joint) == (9, 0, 1, 2, 3, 4)
    assert state.action_to_string(0, joint) == "Bids[a0:10 a1:1 a2:2 a3:3 a4:4 a5:5]"


def _check_perfect_recall(state, own_history, seen):
    """Every infoset's histories share the owner's earlier (infoset, action) path."""
    if state.is_terminal():
        return
    if state.is_chance_node():
        for action, _ in state.chance_outcomes():
            _check_perfect_recall(state.child(action), own_history, seen)
        return
    player = state.current_player()
    infoset = state.information_state_string(player)
    path = own_history[player]
    assert seen.setdefault((player, infoset), path) == path, infoset
    for action in state.legal_actions():
        extended = list(own_history)
        extended[player] = path + ((infoset, action),)
        _check_perfect_recall(state.child(action), tuple(extended), seen)


@pytest.mark.parametrize(
    "name",
    [
        GOOFSPIEL_TINY_RANDOM,
        NEST_STAR.format(2),
        "nest(rows=2,cols=2,num_pursuers=1,horizon=2,exits=3;)",
    ],
)
def test_information_states_have_perfect_recall(name):
    game = pyspiel.load_game(name)
    seen = {}
    _check_perfect_recall(game.new_initial_state(), ((), ()), seen)
    assert len(seen) > 2


@pytest.mark.parametrize(
    "name", [GOOFSPIEL_TINY, GOOFSPIEL_TINY_RANDOM, NEST_STAR.format(1), NEST_STAR.format(2)]
)
def test_tree_engine_matches_openspiel_on_uniform_policy(name):
    game = pyspiel.load_game(name)
    uniform = policy_lib.UniformRandomPolicy(game)
    expected = exploitability.nash_conv(game, uniform)
    assert expected > 0.1
    assert openspiel_cfrx.nash_conv(game, uniform) == pytest.approx(expected, abs=1e-9)
    tree = openspiel_cfrx.get_tree(game)
    assert tree.num_histories > tree.num_infosets > 0


@pytest.mark.parametrize("name", [GOOFSPIEL_TINY, NEST_STAR.format(1)])
def test_openspiel_python_cfr_reduces_exploitability(name):
    game = pyspiel.load_game(name)
    solver = cfr.CFRSolver(game)
    nash_convs = {}
    for iteration in range(1, 101):
        solver.evaluate_and_update_policy()
        if iteration in (1, 10, 100):
            nash_convs[iteration] = exploitability.nash_conv(game, solver.average_policy())
    assert nash_convs[1] > nash_convs[10] > nash_convs[100]
    assert nash_convs[100] < 0.05 * nash_convs[1]
