"""Tree engine: structure, exact best response / exploitability vs OpenSpiel, errors."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import exploitability as os_exploitability

import openspiel_cfrx
from openspiel_cfrx import tree as tree_lib

GAMES = [
    "kuhn_poker",
    "leduc_poker",
    "liars_dice(numdice=1,dice_sides=4)",
    "turn_based_simultaneous_game(game=goofspiel(num_cards=4,imp_info=True,"
    "points_order=descending))",
    "python_kuhn_poker",
]


def random_tabular_policy(game, seed):
    tabular = policy_lib.TabularPolicy(game)
    rng = np.random.default_rng(seed)
    probs = rng.random(tabular.action_probability_array.shape) * tabular.legal_actions_mask
    tabular.action_probability_array[:] = probs / probs.sum(axis=1, keepdims=True)
    return tabular


@pytest.fixture(scope="module", params=GAMES)
def game(request):
    return pyspiel.load_game(request.param)


@pytest.mark.parametrize("kind", ["uniform", "random"])
def test_nash_conv_matches_openspiel(game, kind):
    pol = policy_lib.TabularPolicy(game) if kind == "uniform" else random_tabular_policy(game, 7)
    expected = os_exploitability.nash_conv(game, pol, return_only_nash_conv=False)
    ours = openspiel_cfrx.nash_conv(game, pol, return_only_nash_conv=False)
    assert ours.nash_conv == pytest.approx(expected.nash_conv, abs=1e-9)
    np.testing.assert_allclose(ours.player_improvements, expected.player_improvements, atol=1e-9)
    assert openspiel_cfrx.nash_conv(game, pol) == pytest.approx(expected.nash_conv, abs=1e-9)
    assert openspiel_cfrx.exploitability(game, pol) == pytest.approx(
        os_exploitability.exploitability(game, pol), abs=1e-9
    )
    assert ours.exploitability == pytest.approx(ours.nash_conv / 2, abs=1e-9)


def test_best_response_values_match_openspiel(game):
    pol = random_tabular_policy(game, 3)
    ours = openspiel_cfrx.nash_conv(game, pol, return_only_nash_conv=False)
    for player in (0, 1):
        info = os_exploitability.best_response(game, pol, player)
        assert ours.best_response_values[player] == pytest.approx(
            info["best_response_value"], abs=1e-9
        )
        assert ours.on_policy_values[player] == pytest.approx(
            info["on_policy_values"][player], abs=1e-9
        )


def test_best_response_strategy_achieves_best_response_value(game):
    tree = openspiel_cfrx.get_tree(game)
    strategy = tree_lib.strategy_from_policy(tree, random_tabular_policy(game, 11))
    result = tree_lib.best_response(tree, strategy)
    for player in (0, 1):
        lo, hi = tree.infoset_range[player]
        mixed = strategy.copy()
        mixed[lo:hi] = result.best_response_strategy[lo:hi]
        value = tree_lib.best_response(tree, mixed).on_policy_values[player]
        assert value == pytest.approx(result.best_response_values[player], abs=1e-9)


def test_generic_and_batched_policies_agree_with_tabular(game):
    tabular = random_tabular_policy(game, 5)
    tree = openspiel_cfrx.get_tree(game)
    expected = tree_lib.strategy_from_policy(tree, tabular)

    class DictPolicy(policy_lib.Policy):
        def __init__(self):
            super().__init__(game, [0, 1])

        def action_probabilities(self, state, player_id=None):
            return tabular.action_probabilities(state, player_id)

    class BatchedPolicy:
        calls = 0

        def batch_action_probabilities(self, states):
            BatchedPolicy.calls += 1
            return np.stack([tabular.policy_for_key(s.information_state_string()) for s in states])

    np.testing.assert_allclose(tree_lib.strategy_from_policy(tree, DictPolicy()), expected)
    batched = tree_lib.strategy_from_policy(tree, BatchedPolicy(), batch_size=100)
    np.testing.assert_allclose(batched, expected)
    assert BatchedPolicy.calls == -(-tree.num_infosets // 100)
    assert openspiel_cfrx.nash_conv(game, DictPolicy()) == pytest.approx(
        os_exploitability.nash_conv(game, tabular), abs=1e-9
    )


def test_uniform_random_policy_object(game):
    uniform = policy_lib.UniformRandomPolicy(game)
    assert openspiel_cfrx.nash_conv(game, uniform) == pytest.approx(
        os_exploitability.nash_conv(game, policy_lib.TabularPolicy(game)), abs=1e-9
    )


def test_array_tabular_round_trip(game):
    tree = openspiel_cfrx.get_tree(game)
    strategy = tree_lib.strategy_from_policy(tree, random_tabular_policy(game, 9))
    # Into OpenSpiel's own TabularPolicy (full enumeration) and into ours.
    for target in (policy_lib.TabularPolicy(game), None):
        tabular = tree_lib.tabular_policy_from_strategy(tree, strategy, target)
        np.testing.assert_allclose(tree_lib.strategy_from_policy(tree, tabular), strategy)
        assert os_exploitability.nash_conv(game, tabular) == pytest.approx(
            openspiel_cfrx.nash_conv(game, strategy), abs=1e-9
        )
    # Every state the TabularPolicy knows maps to a tree infoset with equal probabilities.
    tabular = tree_lib.tabular_policy_from_strategy(tree, strategy, policy_lib.TabularPolicy(game))
    for state in tabular.states:
        row = tabular.action_probability_array[tabular.state_index(state)]
        np.testing.assert_allclose(row, strategy[tree.infoset_id(state)])


def test_tree_structure(game):
    tree = openspiel_cfrx.get_tree(game)
    assert tree is openspiel_cfrx.get_tree(game)  # cached
    h = tree.num_histories
    # Breadth-first: parents come first, depth blocks are contiguous.
    assert tree.history_parent[0] == -1
    assert np.all(tree.history_parent[1:] < np.arange(1, h))
    for d in range(1, tree.max_depth + 1):
        lo, hi = tree.depth_offsets[d], tree.depth_offsets[d + 1]
        parents = tree.history_parent[lo:hi]
        assert np.all(
            (parents >= tree.depth_offsets[d - 1]) & (parents < tree.depth_offsets[d])
        )
    # Child ranges point back at their parent.
    counts = np.diff(tree.child_offsets)
    assert np.array_equal(np.repeat(np.arange(h), counts), tree.history_parent[1:])
    # Chance probabilities sum to one under every chance node.
    chance = np.flatnonzero(tree.history_player == tree_lib.CHANCE)
    for c in chance[:200]:
        kids = slice(tree.child_offsets[c], tree.child_offsets[c + 1])
        assert tree.history_chance_prob[kids].sum() == pytest.approx(1.0)
    # Terminal records agree with a replay of the terminal's actions in pyspiel.
    for idx in range(0, tree.num_terminals, max(1, tree.num_terminals // 50)):
        z = int(tree.terminal_history[idx])
        assert tree.history_player[z] == tree_lib.TERMINAL
        state = tree.state(z)
        assert state.is_terminal()
        assert tuple(tree.terminal_utility[idx]) == pytest.approx(tuple(state.returns()))
        reach, h = 1.0, z
        while h > 0:
            reach *= tree.history_chance_prob[h]
            h = tree.history_parent[h]
        assert tree.terminal_chance_reach[idx] == pytest.approx(reach)
    # Infoset rows: legal masks and players match representative states.
    for i, state in enumerate(tree.infoset_states()):
        assert state.current_player() == tree.infoset_player[i]
        assert state.information_state_string() == tree.infoset_key[i]
        assert np.flatnonzero(tree.infoset_legal_mask[i]).tolist() == state.legal_actions()
    # Per-player infoset ranges are contiguous and sorted by own depth.
    (lo0, hi0), (lo1, hi1) = tree.infoset_range
    assert lo0 == 0 and hi0 == lo1 and hi1 == tree.num_infosets
    assert tree.memory_bytes()["total"] < 200 * tree.num_histories


def test_kuhn_sizes():
    tree = openspiel_cfrx.get_tree(pyspiel.load_game("kuhn_poker"))
    assert (tree.num_histories, tree.num_terminals) == (58, 30)
    assert (tree.num_infosets_of(0), tree.num_infosets_of(1)) == (6, 6)
    # Nash equilibrium value of Kuhn poker for player 0 is -1/18.
    alpha = 0.2
    game = pyspiel.load_game("kuhn_poker")
    tabular = policy_lib.TabularPolicy(game)
    eq = {
        "0": [1 - alpha, alpha], "1": [1, 0], "2": [1 - 3 * alpha, 3 * alpha],
        "0pb": [1, 0], "1pb": [2 / 3 - alpha, 1 / 3 + alpha], "2pb": [0, 1],
        "0p": [2 / 3, 1 / 3], "1p": [1, 0], "2p": [0, 1],
        "0b": [1, 0], "1b": [2 / 3, 1 / 3], "2b": [0, 1],
    }  # fmt: skip
    for key, probs in eq.items():
        tabular.policy_for_key(key)[:] = probs
    result = openspiel_cfrx.nash_conv(game, tabular, return_only_nash_conv=False)
    assert result.nash_conv == pytest.approx(0.0, abs=1e-12)
    assert result.on_policy_values[0] == pytest.approx(-1 / 18, abs=1e-12)


def test_strategy_array_shape_error():
    game = pyspiel.load_game("kuhn_poker")
    with pytest.raises(ValueError, match="expected"):
        openspiel_cfrx.nash_conv(game, np.ones((3, 2)))
    with pytest.raises(TypeError, match="cannot evaluate"):
        openspiel_cfrx.nash_conv(game, object())


def test_partial_tabular_policy_error():
    game = pyspiel.load_game("kuhn_poker")
    with pytest.raises(ValueError, match="no entry for infoset"):
        openspiel_cfrx.nash_conv(game, policy_lib.TabularPolicy(game, players=[0]))


@pytest.mark.parametrize(
    "game_string, message",
    [
        ("matrix_rps", "simultaneous"),
        ("kuhn_poker(players=3)", "3 players"),
        ("turn_based_simultaneous_game(game=matrix_pd())", "general-sum"),
        ("leduc_poker(players=3)", "3 players"),
    ],
)
def test_unsupported_games_raise_clear_errors(game_string, message):
    with pytest.raises(tree_lib.UnsupportedGameError, match=message):
        openspiel_cfrx.get_tree(pyspiel.load_game(game_string))


def test_not_a_game_raises_type_error():
    with pytest.raises(TypeError, match="pyspiel.Game"):
        tree_lib.extract("kuhn_poker")


def test_max_histories_guard():
    with pytest.raises(ValueError, match="max_histories"):
        tree_lib.extract(pyspiel.load_game("leduc_poker"), max_histories=100)


def test_cpp_policy_from_pyspiel_cfr_solver():
    game = pyspiel.load_game("leduc_poker")
    solver = pyspiel.CFRSolver(game)
    for _ in range(3):
        solver.evaluate_and_update_policy()
    cpp_policy = solver.average_policy()
    assert openspiel_cfrx.nash_conv(game, cpp_policy) == pytest.approx(
        pyspiel.nash_conv(game, cpp_policy), abs=1e-9
    )
