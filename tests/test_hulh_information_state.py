"""`hulh` keeps the streets apart (issue 15, item 8).

universal_poker's information state shows the board as one sorted set, so in
HULH flop + turn orderings of the same four cards were one infoset.
"""

from __future__ import annotations

import copy
import pickle
import random

import pyspiel
import pytest

import games  # noqa: F401
import openspiel_cfrx
from games import poker
from games.poker_encoding import replay_history
from openspiel_cfrx.tree import clear_tree_cache
from openspiel_cfrx.tree.game_tree import UnsupportedGameError


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


def test_board_by_street_matches_the_rules_replay():
    """The per-street board read off the history agrees with the rules replay
    at every node of random playouts (raises, folds and caps included)."""
    game = pyspiel.load_game("hulh(num_ranks=5,num_suits=2)")
    rules = poker.limit_holdem_rules(game)
    rng = random.Random(1)
    for _ in range(300):
        state = game.new_initial_state()
        while not state.is_terminal():
            replay = replay_history(rules, state.history())
            expected = [[poker.card_from_action(a, 2) for a in street] for street in state.board_by_street()]
            assert replay.board_cards[1 : 1 + len(expected)] == expected
            assert all(not cards for cards in replay.board_cards[1 + len(expected) :])
            outcomes = state.chance_outcomes() if state.is_chance_node() else None
            state.apply_action(rng.choice(outcomes)[0] if outcomes else rng.choice(state.legal_actions()))


HOLE = (0, 1, 2, 3)  # 2c 2d 2h 3c in a 9-card deck: 5 cards left for the board
ONE_DEAL = {"num_ranks": 3, "num_suits": 3, "max_raises": "1 1 1 1"}


class _OneDeal(poker.HulhGame):
    """`hulh` below one fixed hole-card deal (~40k histories, so the tree
    engine extracts it in well under a second)."""

    def new_initial_state(self):
        state = super().new_initial_state()
        for a in HOLE:
            state.apply_action(a)
        return state

    def __str__(self):  # its own key in get_tree's cache
        return "one_deal_" + super().__str__()


class _RawOneDeal(_OneDeal):
    """The same subtree in raw universal_poker (merged board)."""

    def new_initial_state(self):
        return super().new_initial_state()._state

    def __str__(self):
        return "raw_" + super().__str__()


def _perfect_recall_infosets(rules, state, keys):
    """Adds each decision's perfect-recall infoset (player, own hole cards,
    board per street as sets, betting per round; from the rules replay) to
    `keys`: what a per-street information state must tell apart."""
    if state.is_terminal():
        return
    if state.is_chance_node():
        actions = [a for a, _ in state.chance_outcomes()]
    else:
        player = state.current_player()
        replay = replay_history(rules, state.history())
        keys.add((
            player,
            frozenset(replay.hole_cards[player]),
            tuple(frozenset(cards) for cards in replay.board_cards),
            tuple(tuple(a for _, a, _ in moves) for moves in replay.actions),
        ))
        actions = state.legal_actions()
    for a in actions:
        _perfect_recall_infosets(rules, state.child(a), keys)


def test_tree_engine_keeps_the_streets_apart():
    """On one hole-card deal the tree engine's infosets are exactly the
    perfect-recall ones (1,502 per player: 10 flops x 2 turns of the 5 cards
    left); raw universal_poker, whose merged board makes flop + turn orders of
    the same cards one infoset, is refused as imperfect recall."""
    game = _OneDeal(ONE_DEAL)
    tree = openspiel_cfrx.get_tree(game)
    keys = set()
    _perfect_recall_infosets(poker.limit_holdem_rules(game), _RawOneDeal(ONE_DEAL).new_initial_state(), keys)
    expected = tuple(sum(1 for key in keys if key[0] == p) for p in (0, 1))
    assert (tree.num_infosets_of(0), tree.num_infosets_of(1)) == expected == (1502, 1502)
    with pytest.raises(UnsupportedGameError, match="perfect recall"):
        openspiel_cfrx.get_tree(_RawOneDeal(ONE_DEAL))


@pytest.mark.slow
def test_tree_engine_counts_every_hulh_infoset():
    """The smallest whole hulh (9 cards, no raises: 2.8M histories, ~30 s):
    the tree engine's infosets are `game_size`'s perfect-recall count."""
    game = pyspiel.load_game("hulh(num_ranks=3,num_suits=3,max_raises=0 0 0 0)")
    size = poker.game_size(poker.limit_holdem_rules(game))
    tree = openspiel_cfrx.get_tree(game)
    assert tree.num_histories == size.histories
    assert (tree.num_infosets_of(0), tree.num_infosets_of(1)) == size.infosets
    clear_tree_cache()  # ~0.7 GB


def test_cpp_algorithms_see_the_per_street_infosets():
    """`hulh` states are `pyspiel.State`s: OpenSpiel's C++ CFR runs on them
    (through pybind11's trampolines) and keys its policy on the same
    per-street information states as the tree engine (raw universal_poker's
    merged board would give fewer keys)."""
    game = _OneDeal({"num_ranks": 3, "num_suits": 3, "max_raises": "0 0 0 0"})
    assert isinstance(game.new_initial_state(), pyspiel.State)
    solver = pyspiel.CFRSolver(game)
    solver.evaluate_and_update_policy()
    table = solver.tabular_average_policy().policy_table()
    tree = openspiel_cfrx.get_tree(game)
    assert set(table) == set(tree.infoset_key)
    assert sum("|" in key for key in table) > 0 and not any("2147483" in key for key in table)
    small = pyspiel.load_game("hulh(num_ranks=5,num_suits=2)")
    mccfr = pyspiel.ExternalSamplingMCCFRSolver(small, seed=0)
    mccfr.run_iteration()
    state = _play(small, [0, 1, 2, 3], [4, 5, 6], 7)
    assert sum(mccfr.average_policy().action_probabilities(state).values()) == pytest.approx(1.0)


def test_copy_pickle_and_serialization_round_trip(small_hulh):
    state = _play(small_hulh, [0, 1, 2, 3], [4, 5, 6], 7)
    info = state.information_state_string(1)
    for other in (copy.copy(state), copy.deepcopy(state), pickle.loads(pickle.dumps(state)),
                  small_hulh.deserialize_state(state.serialize()),
                  pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(small_hulh, state))[1]):
        assert type(other) is poker.HulhState
        assert other.history() == state.history() and other.information_state_string(1) == info
    game = pickle.loads(pickle.dumps(small_hulh))
    assert str(game) == str(small_hulh) and game.new_initial_state().child(0).history() == [0]
    assert type(state.resample_from_infostate(1, pyspiel.UniformProbabilitySampler(0.0, 1.0))) is poker.HulhState
