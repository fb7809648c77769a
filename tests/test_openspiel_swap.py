"""Our solvers swapped into OpenSpiel pipelines work with OpenSpiel's own tooling."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import (
    best_response,
    cfr,
    evaluate_bots,
    exploitability,
    policy_aggregator,
)
from open_spiel.python.bots import policy as policy_bot

import openspiel_cfrx


@pytest.fixture(scope="module")
def leduc_pair():
    game = pyspiel.load_game("leduc_poker")
    ours, theirs = openspiel_cfrx.CFRSolver(game), cfr.CFRSolver(game)
    for _ in range(5):
        ours.evaluate_and_update_policy()
        theirs.evaluate_and_update_policy()
    return game, ours, theirs


def test_nash_conv_and_best_response_policy(leduc_pair):
    game, ours, theirs = leduc_pair
    expected = exploitability.nash_conv(game, theirs.average_policy())
    assert exploitability.nash_conv(game, ours.average_policy()) == pytest.approx(expected, abs=1e-9)
    root = game.new_initial_state()
    for player in (0, 1):
        br_ours = best_response.BestResponsePolicy(game, player, ours.average_policy())
        br_theirs = best_response.BestResponsePolicy(game, player, theirs.average_policy())
        assert br_ours.value(root) == pytest.approx(br_theirs.value(root), abs=1e-9)
    # Our exact evaluator gives the same per-player best-response values.
    result = openspiel_cfrx.nash_conv(game, ours.average_policy(), return_only_nash_conv=False)
    assert result.best_response_values[1] == pytest.approx(
        best_response.BestResponsePolicy(game, 1, ours.average_policy()).value(root), abs=1e-9
    )


def test_policy_aggregator_mixes_our_policies():
    game = pyspiel.load_game("kuhn_poker")
    first = openspiel_cfrx.CFRPlusSolver(game)
    first.run(50)
    second = openspiel_cfrx.OFTRLCFRSolver(game, stepsize_scale=100)
    second.run(50)
    pols = [first.average_policy().__copy__(), second.average_policy().__copy__()]
    aggregator = policy_aggregator.PolicyAggregator(game)
    mixed = aggregator.aggregate([0, 1], [pols, pols], [[0.5, 0.5], [0.5, 0.5]])
    conv = exploitability.nash_conv(game, mixed)
    assert openspiel_cfrx.nash_conv(game, mixed) == pytest.approx(conv, abs=1e-9)
    assert np.isfinite(conv) and conv >= 0


def test_evaluate_bots_with_our_policy():
    game = pyspiel.load_game("kuhn_poker")
    solver = openspiel_cfrx.DCFRSolver(game)
    solver.run(300)
    rng = np.random.RandomState(3)
    bots = [policy_bot.PolicyBot(p, rng, solver.average_policy()) for p in range(2)]
    returns = np.mean(
        [evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng) for _ in range(3000)],
        axis=0,
    )
    # Near-equilibrium self-play: player 0 loses about 1/18 per game.
    assert returns.sum() == pytest.approx(0.0, abs=1e-12)
    assert returns[0] == pytest.approx(-1 / 18, abs=0.05)


def test_tabular_policy_from_callable_round_trip():
    game = pyspiel.load_game("kuhn_poker")
    solver = openspiel_cfrx.PCFRPlusSolver(game)
    solver.run(100)
    avg = solver.average_policy()
    rebuilt = policy_lib.tabular_policy_from_callable(game, avg.action_probabilities)
    assert exploitability.nash_conv(game, rebuilt) == pytest.approx(solver.nash_conv(), abs=1e-9)
