"""Duplicate-deal head-to-head evaluation."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import expected_game_score

import games  # noqa: F401  (registers flop_holdem / hulh)
import openspiel_cfrx
from openspiel_cfrx.eval.head_to_head import always_call, always_raise, big_blind, play_match


def test_identical_cards_cancel_for_symmetric_non_folding_policies():
    game = pyspiel.load_game("hulh")
    assert big_blind(game) == 100
    # Both play to showdown with the same cards in both seats: exactly zero.
    result = play_match(game, always_raise(game), always_call(game), 50, seed=3)
    assert result.mean_chips == 0.0 and result.ci95_chips == 0.0
    assert result.seat_means_chips[0] == -result.seat_means_chips[1]


def test_estimate_matches_exact_value_on_kuhn():
    game = pyspiel.load_game("kuhn_poker")
    solver = openspiel_cfrx.CFRPlusSolver(game)
    solver.run(200)
    a, b = solver.average_policy(), policy_lib.UniformRandomPolicy(game)
    root = game.new_initial_state()
    exact = 0.5 * (
        expected_game_score.policy_value(root, [a, b])[0]
        - expected_game_score.policy_value(root, [b, a])[0]
    )
    result = play_match(game, a, b, 4000, seed=0)
    assert result.mean_mbb is None  # not a blind-based game
    assert abs(result.mean_chips - exact) < 2 * result.ci95_chips
    assert result.mean_chips > 0  # equilibrium-ish play beats uniform


def test_calling_station_beats_uniform_in_flop_holdem():
    game = pyspiel.load_game("flop_holdem(num_ranks=5,num_suits=2)")
    result = play_match(game, always_call(game), policy_lib.UniformRandomPolicy(game), 400, seed=1)
    # Uniform folds a third of its decisions facing bets: a clear loss.
    assert result.mean_mbb - result.ci95_mbb > 0
    assert result.mean_mbb == pytest.approx(1000 * result.mean_chips / 100)


def test_errors():
    game = pyspiel.load_game("kuhn_poker")
    with pytest.raises(ValueError, match="num_deals"):
        play_match(game, always_call(game), always_call(game), 1)
    with pytest.raises(ValueError, match="2-player"):
        g3 = pyspiel.load_game("kuhn_poker(players=3)")
        play_match(g3, always_call(g3), always_call(g3), 10)
    assert np.isfinite(play_match(game, always_call(game), always_raise(game), 10).mean_chips)
