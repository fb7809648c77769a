"""`hulh` keeps the streets apart (issue 15, item 8).

universal_poker's information state shows the board as one sorted set, so in
HULH flop + turn orderings of the same four cards were one infoset.
"""

from __future__ import annotations

import copy
import random

import pyspiel
import pytest

import games  # noqa: F401
from games import poker


def _play(game, hole, flop, turn, river=None):
    state = game.new_initial_state()
    for a in hole:
        state.apply_action(a)
    state.apply_action(poker.CALL)  # small blind calls
    state.apply_action(poker.CALL)  # big blind checks
    for a in flop:
        state.apply_action(a)
    state.apply_action(poker.CALL)
    state.apply_action(poker.CALL)
    state.apply_action(turn)
    if river is not None:
        state.apply_action(poker.CALL)
        state.apply_action(poker.CALL)
        state.apply_action(river)
    return state


@pytest.fixture(scope="module")
def small_hulh():
    return pyspiel.load_game("hulh(num_ranks=5,num_suits=2)")


def test_board_streets_are_kept_apart(small_hulh):
    a = _play(small_hulh, [0, 1, 2, 3], [4, 5, 6], 7)
    b = _play(small_hulh, [0, 1, 2, 3], [4, 5, 7], 6)  # same four cards, other street order
    for player in (0, 1):
        assert a.information_state_string(player) != b.information_state_string(player)
        assert a.information_state_tensor(player) != b.information_state_tensor(player)
    # The flop is a set: dealing its cards in another order is the same infoset.
    c = _play(small_hulh, [0, 1, 2, 3], [6, 4, 5], 7)
    assert a.information_state_string(0) == c.information_state_string(0)
    assert a.information_state_tensor(0) == c.information_state_tensor(0)
    assert "[Public: " in a.information_state_string(0) and "|" in a.information_state_string(0)
    assert len(a.information_state_tensor(0)) == small_hulh.information_state_tensor_shape()[0]


def test_money_is_the_real_stack_and_the_game_names_itself(small_hulh):
    state = _play(small_hulh, [0, 1, 2, 3], [4, 5, 6], 7)
    assert "[Money: 19900 19900]" in state.information_state_string(0)
    assert "2147483547" not in state.information_state_string(0) + state.observation_string(0) + str(state)
    assert small_hulh.get_type().short_name == "hulh"
    assert str(small_hulh).startswith("hulh(")
    assert small_hulh.universal_poker_game().get_type().short_name == "universal_poker"


def test_dynamics_are_universal_pokers(small_hulh):
    """Same legal actions, chance outcomes and returns as the raw C++ game
    along random playouts; clone / child / deepcopy stay wrapped."""
    raw = small_hulh.universal_poker_game()
    rng = random.Random(0)
    for _ in range(200):
        ours, theirs = small_hulh.new_initial_state(), raw.new_initial_state()
        while not ours.is_terminal():
            assert ours.current_player() == theirs.current_player()
            if ours.is_chance_node():
                assert ours.chance_outcomes() == theirs.chance_outcomes()
                action = rng.choice(ours.chance_outcomes())[0]
            else:
                assert ours.legal_actions() == theirs.legal_actions()
                action = rng.choice(ours.legal_actions())
            ours.apply_action(action)
            theirs.apply_action(action)
        assert theirs.is_terminal() and ours.returns() == theirs.returns()
    state = small_hulh.new_initial_state().child(0)
    assert type(state.clone()) is type(state) is type(copy.deepcopy(state))
    assert state.get_game() is small_hulh
