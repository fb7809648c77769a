"""Showdowns against an independent evaluator (eval7), and the rules replay.

eval7 is a test-only dependency (pinned in the test extra); it ranks the best
five-card hand out of 5-7 cards exactly as the Deep CFR rules ask.
"""

import random

import eval7
import pyspiel
import pytest

import games  # noqa: F401  (registers the games)
from games import poker
from games.poker import CALL, FOLD, RAISE
from games.poker_encoding import replay_history

VARIANTS = [
    ("flop_holdem", 1500),
    ("hulh", 1500),
    ("flop_holdem(num_ranks=5,num_suits=2)", 300),
    ("hulh(num_ranks=6,num_suits=2)", 300),
    ("hulh(num_ranks=13,num_suits=1)", 200),  # every showdown is a flush fight
]


def to_eval7(card: int) -> eval7.Card:
    return eval7.Card(poker.card_to_string(card))


def play_to_showdown(game, rng):
    """Random deal; random calls/raises (never folds) until the hand ends."""
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice(state.legal_actions()))
        else:
            actions = [a for a in state.legal_actions() if a != FOLD]
            # Mostly call so most hands are cheap, sometimes raise so pots vary.
            state.apply_action(RAISE if RAISE in actions and rng.random() < 0.3 else CALL)
    return state


@pytest.mark.parametrize("name, num_deals", VARIANTS)
def test_showdown_winner_matches_eval7(name, num_deals):
    game = pyspiel.load_game(name)
    rules = poker.limit_holdem_rules(game)
    rng = random.Random(1234)
    outcomes = {-1: 0, 0: 0, 1: 0}
    for _ in range(num_deals):
        state = play_to_showdown(game, rng)
        replay = replay_history(rules, state.history())
        assert replay.terminal and replay.folded == -1
        board = [c for street in replay.board_cards for c in street]
        assert len(board) == rules.num_board_cards
        scores = [
            eval7.evaluate([to_eval7(c) for c in replay.hole_cards[p] + board]) for p in (0, 1)
        ]
        winner_sign = (scores[0] > scores[1]) - (scores[0] < scores[1])
        outcomes[winner_sign] += 1
        # Both players put in the same amount; the winner takes the other's half.
        assert replay.spent[0] == replay.spent[1]
        assert state.returns() == [winner_sign * replay.spent[1], -winner_sign * replay.spent[0]]
    # The sample really exercises wins, losses and (except in 1-suit decks) splits.
    assert outcomes[1] > 0 and outcomes[-1] > 0
    if rules.num_suits > 1:
        assert outcomes[0] > 0


def test_replay_agrees_with_universal_poker_on_random_playouts():
    rng = random.Random(7)
    for name in ("flop_holdem", "hulh", "flop_holdem(num_ranks=4,num_suits=2)"):
        game = pyspiel.load_game(name)
        rules = poker.limit_holdem_rules(game)
        for _ in range(300):
            state = game.new_initial_state()
            while True:
                replay = replay_history(rules, state.history())
                assert replay.terminal == state.is_terminal()
                if state.is_terminal():
                    break
                if state.is_chance_node():
                    assert replay.current_player == -1
                else:
                    assert replay.current_player == state.current_player()
                    assert replay.raises < rules.max_raises[replay.round] or (
                        RAISE not in state.legal_actions()
                    )
                    assert (RAISE in state.legal_actions()) == (
                        replay.raises < rules.max_raises[replay.round]
                    )
                    facing_bet = replay.spent[replay.current_player] < max(replay.spent)
                    assert (FOLD in state.legal_actions()) == facing_bet
                    assert state.to_struct().player_contributions == replay.spent
                state.apply_action(rng.choice(state.legal_actions()))
            if replay.folded >= 0:
                folder = replay.folded
                assert state.returns()[folder] == -replay.spent[folder]
                assert state.returns()[1 - folder] == replay.spent[folder]
            assert state.to_struct().pot_size == replay.pot


def test_replay_rejects_bad_histories():
    rules = poker.paper_rules(2)
    deal = [0, 1, 2, 3]
    with pytest.raises(ValueError, match="unknown betting action"):
        replay_history(rules, deal + [5])
    with pytest.raises(ValueError, match="after the hand ended"):
        replay_history(rules, deal + [FOLD, CALL])
    assert replay_history(rules, deal + [CALL, CALL]).current_player == -1  # flop to deal
