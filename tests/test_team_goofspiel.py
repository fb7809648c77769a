"""Team Goofspiel: rules on hand-built histories, pyspiel checks."""

import pickle
import random

import numpy as np
import pyspiel
import pytest
from open_spiel.python.observation import make_observation

import games  # noqa: F401  (registers team_goofspiel, nest)
from openspiel_cfrx import team

TEAM, ADV = team.TEAM_PLAYER, team.ADVERSARY_PLAYER


def play(game, moves):
    """Applies [(team bids as cards per agent) or adversary card (int)] in order."""
    state = game.new_initial_state()
    for move in moves:
        if isinstance(move, tuple):
            assert state.current_player() == TEAM
            state.apply_action(game.encode_joint_action([card - 1 for card in move]))
        else:
            assert state.current_player() == ADV
            state.apply_action(move - 1)
    return state


def test_hand_built_game_wins_ties_and_returns():
    game = pyspiel.load_game("team_goofspiel(num_cards=4,num_agents=2)")
    assert game.num_distinct_actions() == 16
    state = play(game, [(4, 1), 3])  # point 4: a0's 4 beats the adversary's 3
    assert state._s.winners == (0,) and state._s.points == (4, 0, 0)
    state = play(game, [(4, 1), 3, (1, 4), 4])  # point 3: a1 and adversary tie on 4
    assert state._s.winners == (0, 3) and state._s.points == (4, 0, 0)
    state = play(game, [(4, 1), 3, (1, 4), 4, (2, 3), 2])  # point 2: a1's 3 wins
    assert state._s.points == (4, 2, 0)
    # Last round is forced: a0 holds 3, a1 holds 2, adversary holds 1.
    assert state.legal_agent_actions(0) == [2] and state.legal_agent_actions(1) == [1]
    assert state.legal_actions() == [game.encode_joint_action([2, 1])]
    state = play(game, [(4, 1), 3, (1, 4), 4, (2, 3), 2, (3, 2), 1])
    assert state.is_terminal()
    assert state._s.points == (5, 2, 0)
    assert state.returns() == [1.0, -1.0]
    diff_game = pyspiel.load_game(
        "team_goofspiel(num_cards=4,num_agents=2,returns_type=point_difference)"
    )
    diff_state = play(diff_game, [(4, 1), 3, (1, 4), 4, (2, 3), 2, (3, 2), 1])
    assert diff_state.returns() == [5.0, -5.0]  # best agent (a0: 5) minus adversary (0)


def test_team_mate_tie_discards_and_adversary_win():
    game = pyspiel.load_game(
        "team_goofspiel(num_cards=3,num_agents=2,returns_type=point_difference)"
    )
    # point 3: adversary's 3 beats (1, 1); point 2: three-way tie on 2;
    # point 1: team mates tie on 3 above the adversary's 1 -> discarded.
    state = play(game, [(1, 1), 3, (2, 2), 2, (3, 3), 1])
    assert state._s.winners == (2, 3, 3)
    assert state._s.points == (0, 0, 3)
    assert state.returns() == [-3.0, 3.0]
    loss = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2)")
    assert play(loss, [(1, 1), 3, (2, 2), 2, (3, 3), 1]).returns() == [-1.0, 1.0]


def test_draw_ascending_order():
    game = pyspiel.load_game(
        "team_goofspiel(num_cards=4,num_agents=2,num_turns=3,points_order=ascending)"
    )
    state = play(game, [(4, 1), 1, (3, 2), 2])  # a0 wins points 1 and 2
    assert state._s.point_cards == (1, 2, 3)
    state = play(game, [(4, 1), 1, (3, 2), 2, (1, 3), 4])  # adversary wins point 3
    assert state.is_terminal()
    assert state._s.points == (3, 0, 3)
    assert state.returns() == [0.0, 0.0]


def test_illegal_actions_raise():
    game = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2)")
    state = play(game, [(3, 1), 1])
    with pytest.raises(ValueError, match="agent 0 bids card 3, which is not in its hand"):
        state.apply_action(game.encode_joint_action([2, 0]))
    state.apply_action(game.encode_joint_action([0, 1]))
    with pytest.raises(ValueError, match="card 1 is not in its hand"):
        state.apply_action(0)


def test_information_sets_hide_the_other_sides_bids():
    game = pyspiel.load_game("team_goofspiel(num_cards=4,num_agents=2)")
    # Adversary to move: it has not seen the team's bids.
    a, b = play(game, [(4, 1)]), play(game, [(1, 2)])
    assert a.information_state_string(ADV) == b.information_state_string(ADV)
    assert a.information_state_tensor(ADV) == b.information_state_tensor(ADV)
    # After the round: same winner (adversary) -> adversary still cannot tell.
    a, b = play(game, [(1, 2), 4]), play(game, [(2, 1), 4])
    assert a.information_state_string(ADV) == b.information_state_string(ADV)
    assert a.information_state_string(TEAM) != b.information_state_string(TEAM)
    assert "winners: adv" in a.information_state_string(TEAM)
    # The team cannot tell the adversary's losing bids apart.
    a, b = play(game, [(4, 1), 2]), play(game, [(4, 1), 3])
    assert a.information_state_string(TEAM) == b.information_state_string(TEAM)
    assert a.information_state_tensor(TEAM) == b.information_state_tensor(TEAM)
    assert a.information_state_string(ADV) != b.information_state_string(ADV)
    # Tensor pieces: the team sees all its agents' hands and bids, not the
    # adversary's, and vice versa.
    obs = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    obs.set_from(a, TEAM)
    np.testing.assert_array_equal(obs.dict["team_bids"][0], [[0, 0, 0, 1], [1, 0, 0, 0]])
    np.testing.assert_array_equal(obs.dict["team_hands"][0], [1, 1, 1, 0])
    assert obs.dict["adversary_bids"].sum() == 0 and obs.dict["adversary_hand"].sum() == 0
    np.testing.assert_array_equal(obs.dict["win_sequence"][0], [1, 0, 0, 0])
    np.testing.assert_array_equal(obs.dict["points"], [4, 0, 0])
    obs.set_from(a, ADV)
    assert obs.dict["team_bids"].sum() == 0 and obs.dict["team_hands"].sum() == 0
    np.testing.assert_array_equal(obs.dict["adversary_bids"][0], [0, 1, 0, 0])
    # Per-agent features: one-hot agent, own hand, own bids by round.
    features = a.agent_observation_tensor(1)
    assert len(features) == game.agent_observation_size() == 2 + 4 + 4 * 4
    assert features[:2] == [0.0, 1.0]
    assert features[2:6] == [0.0, 1.0, 1.0, 1.0]  # agent 1 bid its 1
    assert features[6:10] == [1.0, 0.0, 0.0, 0.0]


def test_random_points_order_is_a_chance_node():
    game = pyspiel.load_game(
        "team_goofspiel(num_cards=4,num_agents=2,num_turns=2,points_order=random)"
    )
    state = game.new_initial_state()
    assert state.is_chance_node()
    assert state.chance_outcomes() == [(0, 0.25), (1, 0.25), (2, 0.25), (3, 0.25)]
    state.apply_action(1)  # point card 2
    assert state.current_player() == TEAM
    state.apply_action(game.encode_joint_action([3, 3]))
    state.apply_action(0)
    assert state.is_chance_node()
    assert [o for o, _ in state.chance_outcomes()] == [0, 2, 3]
    assert "point cards: 2" in state.information_state_string(ADV)


@pytest.mark.parametrize(
    "params, message",
    [
        ("num_turns=5", "num_turns=5 must be in"),
        ("points_order=shuffled", "points_order='shuffled'"),
        ("returns_type=margin", "returns_type='margin'"),
        ("num_agents=0", "num_agents=0 must be >= 1"),
        ("num_cards=13,num_agents=20", "overflows"),
    ],
)
def test_parameter_validation(params, message):
    with pytest.raises(ValueError, match=message):
        pyspiel.load_game(f"team_goofspiel({params})")


@pytest.mark.parametrize(
    "name",
    [
        "team_goofspiel(num_cards=4,num_agents=2,points_order=random)",
        "team_goofspiel(num_cards=6,num_agents=4,num_turns=6)",  # paper 6C4P6R
        "team_goofspiel(num_cards=13,num_agents=6,num_turns=2,returns_type=point_difference)",
    ],
)
def test_random_playouts_legality_and_tensor_shapes(name):
    game = pyspiel.load_game(name)
    info_size = game.information_state_tensor_size()
    obs_size = game.observation_tensor_size()
    rng = random.Random(0)
    for _ in range(20):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
                continue
            player = state.current_player()
            for p in (TEAM, ADV):
                assert len(state.information_state_tensor(p)) == info_size
                assert len(state.observation_tensor(p)) == obs_size
            # Every hand holds the cards not yet bid: K minus rounds played.
            cards_left = game._cfg.num_cards - len(state._s.winners)
            if player == TEAM:
                hands = [state.legal_agent_actions(i) for i in range(game.num_team_agents())]
                assert all(len(hand) == cards_left for hand in hands)
                action = team.sample_uniform_joint_action(state, rng)
                if state.num_legal_joint_actions() <= 10_000:
                    legal = state.legal_actions()
                    assert len(legal) == state.num_legal_joint_actions() and action in legal
            else:
                assert len(state.legal_actions()) == cards_left
                action = rng.choice(state.legal_actions())
            state.apply_action(action)
        returns = state.returns()
        assert returns[0] == -returns[1]
        assert game.min_utility() <= returns[0] <= game.max_utility()
        assert len(state.history()) <= game.max_game_length()


def test_serialization_round_trip():
    game = pyspiel.load_game("team_goofspiel(num_cards=4,num_agents=2,points_order=random)")
    state = game.new_initial_state()
    for action in [2, game.encode_joint_action([3, 0]), 1, 0]:
        state.apply_action(action)
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(game2) == str(game)
    assert state2.history() == state.history()
    assert str(state2) == str(state)
    assert state2.information_state_string(TEAM) == state.information_state_string(TEAM)
    assert state2.legal_agent_actions(0) == state.legal_agent_actions(0)
    state3 = pickle.loads(pickle.dumps(state))
    assert str(state3) == str(state)
