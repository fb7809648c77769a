"""Drop-in fidelity (issue 15): OpenSpiel's TabularPolicy layout, exact ties.

Exact ties: on games where action values tie exactly, CFR's regrets are 0 in
exact arithmetic. Floating-point summation turns them into +-1e-16, and regret
matching turns that noise into a pure strategy. The reference here is CFR
computed in exact rational arithmetic (`fractions.Fraction`), written after
OpenSpiel's `cfr._CFRSolver` recursion (alternating updates, per-history
regrets weighted by the counterfactual reach). Our solvers must equal it to
1e-9. (OpenSpiel's own Python and C++ solvers carry the noise themselves on
these games and differ from the exact values from iteration 3 on; see
docs/tabular.md, "Exact ties".)
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib

import openspiel_cfrx

OSHI_ZUMO = "turn_based_simultaneous_game(game=oshi_zumo(coins=4,horizon=3,size=2))"
GOOFSPIEL = (
    "turn_based_simultaneous_game(game=goofspiel(num_cards=3,imp_info=True,"
    "points_order=ascending))"
)

LAYOUT_GAMES = [
    "kuhn_poker",
    "leduc_poker",
    "liars_dice(numdice=1,dice_sides=3)",
    # 11 distinct actions: history strings sort "10" before "2".
    "liars_dice(numdice=1,dice_sides=5)",
    OSHI_ZUMO,
    GOOFSPIEL,
]


@functools.cache
def _one_iteration_and_openspiels_layout(game_string):
    """CFR+ after one iteration and OpenSpiel's TabularPolicy of the game,
    built once for both policies."""
    game = pyspiel.load_game(game_string)
    solver = openspiel_cfrx.CFRPlusSolver(game)
    solver.evaluate_and_update_policy()
    return solver, policy_lib.TabularPolicy(game)


@pytest.mark.parametrize("game_string", LAYOUT_GAMES)
@pytest.mark.parametrize("which", ["average_policy", "current_policy"])
def test_tabular_policy_layout_is_openspiels(game_string, which):
    solver, reference = _one_iteration_and_openspiels_layout(game_string)
    ours = getattr(solver, which)()
    assert list(ours.state_lookup.items()) == list(reference.state_lookup.items())
    assert np.array_equal(ours.legal_actions_mask, reference.legal_actions_mask)
    assert ours.states_per_player == reference.states_per_player
    assert [s.history_str() for s in ours.states] == [s.history_str() for s in reference.states]
    assert np.array_equal(ours.state_in, reference.state_in)
    # Row i holds the probabilities of the infoset reference row i describes.
    for key, row in reference.state_lookup.items():
        np.testing.assert_array_equal(
            ours.action_probability_array[row], ours.policy_for_key(key)
        )


def test_tabular_policy_rows_can_be_mixed_with_openspiels():
    """Averaging action_probability_arrays row-wise (as sequence_form_utils'
    tests do) must mix the same infosets."""
    game = pyspiel.load_game("leduc_poker")
    solver = openspiel_cfrx.CFRSolver(game)
    for _ in range(5):
        solver.evaluate_and_update_policy()
    ours = solver.average_policy()
    mixed = policy_lib.TabularPolicy(game)
    mixed.action_probability_array = 0.5 * (ours.action_probability_array + mixed.action_probability_array)
    uniform = policy_lib.TabularPolicy(game)
    for state in ours.states:
        p = state.current_player()
        expected = {
            a: 0.5 * ours.action_probabilities(state)[a] + 0.5 * uniform.action_probabilities(state)[a]
            for a in state.legal_actions(p)
        }
        got = mixed.action_probabilities(state)
        for a, prob in expected.items():
            assert got[a] == pytest.approx(prob, abs=1e-12)


class ExactCFR:
    """CFR / CFR+ / LCFR in rational arithmetic, after OpenSpiel's recursion."""

    def __init__(self, game, plus=False, linear=False):
        self.game, self.plus, self.linear = game, plus, linear
        self.regret: dict = {}
        self.cumulative: dict = {}
        self.t = 0
        self._collect(game.new_initial_state())

    def _collect(self, state):
        if state.is_terminal():
            return
        if not state.is_chance_node():
            p = state.current_player()
            key = (p, state.information_state_string(p))
            if key not in self.regret:
                self.regret[key] = {a: Fraction(0) for a in state.legal_actions()}
                self.cumulative[key] = {a: Fraction(0) for a in state.legal_actions()}
        actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        for a in actions:
            self._collect(state.child(a))

    def _policy(self, key):
        positive = {a: max(r, Fraction(0)) for a, r in self.regret[key].items()}
        total = sum(positive.values())
        n = len(positive)
        return {a: (v / total if total > 0 else Fraction(1, n)) for a, v in positive.items()}

    def _walk(self, state, reach, player, policies):
        if state.is_terminal():
            return [Fraction(u) for u in state.returns()]
        value = [Fraction(0), Fraction(0)]
        if state.is_chance_node():
            for a, prob in state.chance_outcomes():
                prob = Fraction(prob).limit_denominator(10**6)
                child = self._walk(state.child(a), reach[:2] + [reach[2] * prob], player, policies)
                value = [value[i] + prob * child[i] for i in (0, 1)]
            return value
        p = state.current_player()
        key = (p, state.information_state_string(p))
        policy = policies[key]
        children = {}
        for a in state.legal_actions():
            new_reach = list(reach)
            new_reach[p] *= policy[a]
            children[a] = self._walk(state.child(a), new_reach, player, policies)
            value = [value[i] + policy[a] * children[a][i] for i in (0, 1)]
        if p == player:
            weight = self.t if self.linear else 1
            for a in policy:
                self.regret[key][a] += reach[1 - p] * reach[2] * (children[a][p] - value[p])
                self.cumulative[key][a] += weight * reach[p] * policy[a]
        return value

    def iterate(self):
        self.t += 1
        for player in (0, 1):
            policies = {key: self._policy(key) for key in self.regret}
            self._walk(self.game.new_initial_state(), [Fraction(1)] * 3, player, policies)
            for key, regrets in self.regret.items():
                if key[0] != player:
                    continue
                for a, r in regrets.items():
                    if self.plus:
                        regrets[a] = max(r, Fraction(0))
                    elif self.linear:  # LCFR: both signs discounted by t / (t + 1)
                        regrets[a] = r * Fraction(self.t, self.t + 1)

    def average(self, key):
        acc = self.cumulative[key]
        total = sum(acc.values())
        n = len(acc)
        return {a: (v / total if total > 0 else Fraction(1, n)) for a, v in acc.items()}


SOLVERS = {
    "cfr": (lambda g: openspiel_cfrx.CFRSolver(g), dict()),
    "cfr+": (lambda g: openspiel_cfrx.CFRPlusSolver(g), dict(plus=True, linear=True)),
    "lcfr": (lambda g: openspiel_cfrx.LCFRSolver(g), dict(linear=True)),
}


@pytest.mark.parametrize("game_string", [OSHI_ZUMO, GOOFSPIEL])
@pytest.mark.parametrize("name", ["cfr+", pytest.param("cfr", marks=pytest.mark.slow),
                                  pytest.param("lcfr", marks=pytest.mark.slow)])  # fmt: skip
def test_exact_ties_match_exact_arithmetic(game_string, name):
    game = pyspiel.load_game(game_string)
    make, options = SOLVERS[name]
    solver, exact = make(game), ExactCFR(game, **options)
    for _ in range(4):
        solver.evaluate_and_update_policy()
        exact.iterate()
        average, current = solver.average_policy(), solver.current_policy()
        for key in exact.regret:
            expected_current = exact._policy(key)
            expected_average = exact.average(key)
            for a in expected_current:
                assert current.policy_for_key(key[1])[a] == pytest.approx(
                    float(expected_current[a]), abs=1e-9
                ), (solver.iteration, key, "current")
                assert average.policy_for_key(key[1])[a] == pytest.approx(
                    float(expected_average[a]), abs=1e-9
                ), (solver.iteration, key, "average")


# -- bounded memory --------------------------------------------------------------


def test_too_large_game_is_refused_at_once():
    import time

    from open_spiel.python import policy as policy_lib

    from openspiel_cfrx.tree import TreeTooLargeError

    game = pyspiel.load_game("phantom_ttt")
    start = time.perf_counter()
    with pytest.raises(TreeTooLargeError, match=r"about .* histories.*max_memory_bytes"):
        openspiel_cfrx.nash_conv(game, policy_lib.UniformRandomPolicy(game))
    assert time.perf_counter() - start < 60  # an attempt to extract the tree would take hours
    with pytest.raises(TreeTooLargeError, match="max_memory_bytes"):
        openspiel_cfrx.get_tree(pyspiel.load_game("liars_dice(numdice=2,dice_sides=6)"))


def test_extraction_stops_at_the_memory_limit_even_when_underestimated():
    from openspiel_cfrx.tree import TreeTooLargeError, estimate_num_histories, extract

    # Random playouts underestimate this tree (~7e4 for 2.9e5 histories).
    game = pyspiel.load_game("liars_dice(numdice=1,dice_sides=6)")
    estimate = estimate_num_histories(game)
    limit = int(estimate * 500 * 1.5)
    with pytest.raises(TreeTooLargeError, match="found while extracting"):
        extract(game, max_memory_bytes=limit)
    assert extract(game, max_memory_bytes=10**9).num_histories == 294883


def test_memory_limit_can_be_raised():
    game = pyspiel.load_game("kuhn_poker")
    from openspiel_cfrx.tree import TreeTooLargeError, extract

    with pytest.raises(TreeTooLargeError):
        extract(game, max_memory_bytes=1000)
    assert extract(game, max_memory_bytes=10**8).num_histories == 58


# -- invalid policies ------------------------------------------------------------


class _DictPolicy(policy_lib.Policy):
    def __init__(self, game, fn):
        super().__init__(game, [0, 1])
        self._fn = fn

    def action_probabilities(self, state, player_id=None):
        return self._fn(state)


def _uniform(state):
    legal = state.legal_actions()
    return {a: 1.0 / len(legal) for a in legal}


@pytest.mark.parametrize(
    "name, make, message",
    [
        ("nan", lambda s: {a: float("nan") for a in s.legal_actions()}, "non-finite"),
        ("empty", lambda s: {}, "no probability"),
        ("sums_to_two", lambda s: {a: 2.0 / len(s.legal_actions()) for a in s.legal_actions()}, "summing to 2"),
        ("negative", lambda s: {a: (2.0 if i == 0 else -1.0) for i, a in enumerate(s.legal_actions())}, "negative"),
    ],
)
def test_invalid_policies_are_refused_naming_the_infoset(name, make, message):
    game = pyspiel.load_game("kuhn_poker")
    bad_key = "1p"  # player 1 holding the Queen, facing a pass

    def fn(state):
        if state.information_state_string() == bad_key:
            return make(state)
        return _uniform(state)

    policy = _DictPolicy(game, fn)
    with pytest.raises(ValueError, match=rf"infoset '{bad_key}' of player 1.*{message}.*check=False"):
        openspiel_cfrx.nash_conv(game, policy)
    with pytest.raises(ValueError, match=bad_key):
        openspiel_cfrx.exploitability(game, policy)
    # Opting out evaluates it as is (as OpenSpiel does).
    value = openspiel_cfrx.nash_conv(game, policy, check=False)
    assert isinstance(value, float)


def test_valid_policies_pass_the_check():
    game = pyspiel.load_game("leduc_poker")
    solver = openspiel_cfrx.CFRSolver(game)
    solver.evaluate_and_update_policy()
    from open_spiel.python.algorithms import exploitability

    assert openspiel_cfrx.nash_conv(game, solver.average_policy()) == pytest.approx(
        exploitability.nash_conv(game, solver.average_policy()), abs=1e-9
    )


def test_make_solver_keeps_each_solvers_default_update_mode():
    from openspiel_cfrx.tabular import make_solver

    game = pyspiel.load_game("kuhn_poker")
    assert make_solver("oftrl", game).alternating_updates is False
    assert make_solver("cfr", game).alternating_updates is True
    assert make_solver("oftrl", game, alternating_updates=True).alternating_updates is True


def test_harness_deep_cfr_contender_uses_the_dedicated_benchmark_settings():
    from cfrx_examples.contenders import DEEP_CFR_HARNESS_SETTINGS, make_contender

    assert DEEP_CFR_HARNESS_SETTINGS["traversal"]["backend"] == "vectorized"
    assert DEEP_CFR_HARNESS_SETTINGS["averaging"]["average_policy"] == "sd_cfr"  # no policy-net training per point
    game = pyspiel.load_game("kuhn_poker")
    contender = make_contender("deep_cfr", game, seed=0, num_traversals=50, traversals_initial=20,
                               advantage_network_train_steps=5, train_steps_initial=2)  # fmt: skip
    contender.step()
    strategy = contender.policy()
    assert openspiel_cfrx.nash_conv(game, strategy) < 1.0
