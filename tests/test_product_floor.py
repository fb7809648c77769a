"""The product-form floor of team games (issue 22): V* and the best product-form worst case."""

import numpy as np
import pyspiel
import pytest

import games  # noqa: F401  (registers team_goofspiel)
from openspiel_cfrx.eval.product_floor import product_form_floor
from openspiel_cfrx.team import TEAM_PLAYER
from openspiel_cfrx.tree import best_response, get_tree

DEFAULT = "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)"


def test_default_example_product_form_reaches_the_game_value():
    """On the cfr_mix example the team wins every game with a product-form
    (here pure) strategy, so the product form costs nothing: V* = V_prod = 1.
    The uniform start, symmetric in the agents, stays in a symmetric saddle far
    below it (0.22): plain ascent from exchangeable agents does not break the
    symmetry."""
    game = pyspiel.load_game(DEFAULT)
    result = product_form_floor(game, restarts=4, steps=150, seed=0)
    assert result.game_value == pytest.approx(1.0, abs=1e-5)
    assert result.product_value == pytest.approx(1.0, abs=1e-9)
    assert result.restart_values[0] < 0.5  # uniform start: the symmetric saddle
    # The returned team rows are product form and their worst case is what was reported.
    tree = get_tree(game)
    lo, hi = tree.infoset_range[TEAM_PLAYER]
    check = best_response(tree, result.strategy)
    assert -check.best_response_values[1 - TEAM_PLAYER] == pytest.approx(result.product_value, abs=1e-9)
    rows = result.strategy[lo:hi]
    assert np.allclose(rows.sum(axis=1), 1.0)


def test_product_floor_refuses_games_without_agents():
    with pytest.raises(TypeError, match="factored team"):
        product_form_floor(pyspiel.load_game("kuhn_poker"))
