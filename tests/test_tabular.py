"""Tabular CFR family: exact agreement with OpenSpiel's solvers, OFTRL-CFR
convergence bounds, the stability schedule by hand on Kuhn, and errors."""

import math

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import cfr, discounted_cfr
from open_spiel.python.algorithms import exploitability as os_exploitability

import openspiel_cfrx
from openspiel_cfrx.tabular import stability_schedule


def _max_policy_difference(ours, theirs):
    return max(
        np.abs(ours.policy_for_key(key) - theirs.action_probability_array[row]).max()
        for key, row in theirs.state_lookup.items()
    )


PAIRS = [
    ("cfr", lambda g: openspiel_cfrx.CFRSolver(g), lambda g: cfr.CFRSolver(g)),
    ("cfr+", lambda g: openspiel_cfrx.CFRPlusSolver(g), lambda g: cfr.CFRPlusSolver(g)),
    ("dcfr", lambda g: openspiel_cfrx.DCFRSolver(g), lambda g: discounted_cfr.DCFRSolver(g)),
    ("lcfr", lambda g: openspiel_cfrx.LCFRSolver(g), lambda g: discounted_cfr.LCFRSolver(g)),
    (
        "cfr-simultaneous",
        lambda g: openspiel_cfrx.CFRSolver(g, alternating_updates=False),
        lambda g: cfr._CFRSolver(  # noqa: SLF001 - OpenSpiel's own switchable base
            g, alternating_updates=False, linear_averaging=False, regret_matching_plus=False
        ),
    ),
]


@pytest.mark.parametrize("game_name", ["kuhn_poker", "leduc_poker"])
@pytest.mark.parametrize("name, ours_factory, theirs_factory", PAIRS, ids=[p[0] for p in PAIRS])
def test_same_policies_as_openspiel_after_10_iterations(
    game_name, name, ours_factory, theirs_factory
):
    game = pyspiel.load_game(game_name)
    ours, theirs = ours_factory(game), theirs_factory(game)
    for _ in range(10):
        ours.evaluate_and_update_policy()
        theirs.evaluate_and_update_policy()
    assert _max_policy_difference(ours.average_policy(), theirs.average_policy()) < 1e-9
    assert _max_policy_difference(ours.current_policy(), theirs.current_policy()) < 1e-9
    # OpenSpiel's tooling accepts our TabularPolicy and agrees with our evaluator.
    expected = os_exploitability.nash_conv(game, theirs.average_policy())
    assert os_exploitability.nash_conv(game, ours.average_policy()) == pytest.approx(
        expected, abs=1e-9
    )
    assert ours.nash_conv() == pytest.approx(expected, abs=1e-9)
    assert openspiel_cfrx.nash_conv(game, ours) == pytest.approx(expected, abs=1e-9)


def _curve(solver, checkpoints):
    values = []
    for it in range(1, max(checkpoints) + 1):
        solver.evaluate_and_update_policy()
        if it in checkpoints:
            values.append(solver.exploitability())
    return values


# Bounds measured on this implementation (deterministic) with a ~10% margin;
# see docs/tabular.md for the full curves.
@pytest.mark.parametrize(
    "game_name, kwargs, iterations, bound",
    [
        ("kuhn_poker", {}, 1000, 0.36),  # theory stepsize: slow but steady
        ("kuhn_poker", {"stepsize_scale": 1000.0}, 1000, 2e-3),  # "tuned"
        # theory on Leduc barely moves (as the paper reports for larger games):
        # it only has to get below the uniform policy's 2.373611.
        ("leduc_poker", {}, 300, 2.37355),
        ("leduc_poker", {"stepsize_scale": 1e5}, 300, 0.6),
        ("leduc_poker", {"stepsize_scale": 1e5, "alternating_updates": True}, 300, 0.6),
    ],
)
def test_oftrl_cfr_decreases_below_bound(game_name, kwargs, iterations, bound):
    game = pyspiel.load_game(game_name)
    solver = openspiel_cfrx.OFTRLCFRSolver(game, **kwargs)
    curve = _curve(solver, (10, 100, iterations))
    assert curve[0] > curve[1] > curve[2], curve
    assert curve[2] < bound, curve


def test_pcfr_plus_and_cfr_plus_converge_fast_on_kuhn():
    game = pyspiel.load_game("kuhn_poker")
    assert _curve(openspiel_cfrx.PCFRPlusSolver(game), (300,))[0] < 1e-5
    assert _curve(openspiel_cfrx.CFRPlusSolver(game), (300,))[0] < 1e-3


def test_stability_schedule_on_kuhn_by_hand():
    """Paper's Figure 1: player 1's process X0 (start) -> {X1, X2, X3}
    (check/raise) -> after check, X4..X6 (fold/call)."""
    game = pyspiel.load_game("kuhn_poker")
    tree = openspiel_cfrx.get_tree(game)
    kappa_star = 0.5
    schedule = stability_schedule(tree, 0, kappa_star)
    lo, _ = tree.infoset_range[0]
    index = {tree.infoset_key[lo + i]: i for i in range(len(schedule.kappa))}
    for card in "012":
        first, second = index[card], index[card + "pb"]
        # gamma: root obs gets k*/(2 sqrt 1); X1..3 get that / sqrt 3;
        # obs rho(X1, check) gets gamma_X1 / (2 sqrt 2); X4 gets that / sqrt 1.
        assert schedule.gamma[first] == pytest.approx(kappa_star / (2 * math.sqrt(3)))
        assert schedule.gamma[second] == pytest.approx(kappa_star / (4 * math.sqrt(6)))
        # B: X4 has no decision below -> 1; rho(X1, check) -> 1; X1 -> sqrt(2).
        assert schedule.norm_bound[second] == pytest.approx(1.0)
        assert schedule.norm_bound[first] == pytest.approx(math.sqrt(2))
        # kappa_j = gamma_j / (2 sqrt(n_j) B_j), n_j = 2.
        assert schedule.kappa[first] == pytest.approx(kappa_star / (8 * math.sqrt(3)))
        assert schedule.kappa[second] == pytest.approx(kappa_star / (16 * math.sqrt(3)))
    assert schedule.root_observation_bound == pytest.approx(math.sqrt(6))
    # Player 2: six infosets directly under the root observation node, no children.
    schedule = stability_schedule(tree, 1, kappa_star)
    np.testing.assert_allclose(schedule.gamma, kappa_star / (2 * math.sqrt(6)))
    np.testing.assert_allclose(schedule.norm_bound, 1.0)
    np.testing.assert_allclose(schedule.kappa, kappa_star / (4 * math.sqrt(12)))


def test_oftrl_stepsizes_follow_schedule_and_scale():
    game = pyspiel.load_game("kuhn_poker")
    solver = openspiel_cfrx.OFTRLCFRSolver(game, horizon=256, stepsize_scale=10.0)
    assert solver.kappa_star == pytest.approx(256**-0.25)
    minimizer = solver._driver.minimizers[0]
    np.testing.assert_allclose(minimizer.stepsizes, 10.0 * solver.schedules[0].kappa)
    assert minimizer.utility_scale == pytest.approx(3 * 2.0)  # max |u| in Kuhn is 2


def test_policies_are_valid_distributions():
    game = pyspiel.load_game("leduc_poker")
    for solver in (
        openspiel_cfrx.PCFRPlusSolver(game),
        openspiel_cfrx.OFTRLCFRSolver(game, stepsize_scale=1e6),
    ):
        solver.run(5)
        for strategy in (solver.current_strategy(), solver.average_strategy()):
            assert np.all(strategy >= 0)
            np.testing.assert_allclose(strategy.sum(axis=1), 1.0)
            assert np.all(strategy[~solver.tree.infoset_legal_mask] == 0)


@pytest.mark.parametrize(
    "factory, error, message",
    [
        (lambda g: openspiel_cfrx.DCFRSolver(g, gamma=-1), ValueError, "gamma must be >= 0"),
        (lambda g: openspiel_cfrx.DCFRSolver(g, alpha=float("nan")), ValueError, "finite"),
        (lambda g: openspiel_cfrx.OFTRLCFRSolver(g, stepsize_scale=0), ValueError, "stepsize_scale"),
        (lambda g: openspiel_cfrx.OFTRLCFRSolver(g, kappa=-0.1), ValueError, "kappa"),
        (lambda g: openspiel_cfrx.OFTRLCFRSolver(g, horizon=0), ValueError, "horizon"),
        (lambda g: openspiel_cfrx.CFRSolver(g, averaging="cubic"), ValueError, "averaging"),
        (lambda g: openspiel_cfrx.CFRSolver(g, alternating_updates="yes"), TypeError, "bool"),
        (lambda g: openspiel_cfrx.OFTRLCFRSolver(g, stepsize_scale="big"), TypeError, "real"),
    ],
)
def test_bad_hyperparameters(factory, error, message):
    with pytest.raises(error, match=message):
        factory(pyspiel.load_game("kuhn_poker"))


def test_run_validates_iterations():
    solver = openspiel_cfrx.CFRSolver(pyspiel.load_game("kuhn_poker"))
    with pytest.raises(ValueError, match="iterations"):
        solver.run(-1)


def test_unsupported_game_rejected_by_solver():
    with pytest.raises(openspiel_cfrx.tree.UnsupportedGameError, match="simultaneous"):
        openspiel_cfrx.CFRSolver(pyspiel.load_game("matrix_rps"))


@pytest.mark.parametrize(
    "factory",
    [
        lambda g: openspiel_cfrx.DCFRSolver(g),
        lambda g: openspiel_cfrx.PCFRPlusSolver(g),
        lambda g: openspiel_cfrx.OFTRLCFRSolver(g, stepsize_scale=100),
    ],
)
def test_checkpoint_resume_is_exact(factory, tmp_path):
    game = pyspiel.load_game("kuhn_poker")
    straight = factory(game)
    straight.run(40)
    first = factory(game)
    first.run(25)
    path = str(tmp_path / "solver.npz")
    first.save(path)
    resumed = factory(game)
    resumed.load(path)
    assert resumed.iteration == 25
    resumed.run(15)
    np.testing.assert_array_equal(resumed.average_strategy(), straight.average_strategy())
    np.testing.assert_array_equal(resumed.current_strategy(), straight.current_strategy())


def test_checkpoint_errors(tmp_path):
    kuhn = pyspiel.load_game("kuhn_poker")
    solver = openspiel_cfrx.CFRSolver(kuhn)
    solver.run(3)
    path = str(tmp_path / "cfr.npz")
    solver.save(path)
    with pytest.raises(ValueError, match="solver='CFRSolver'"):
        openspiel_cfrx.DCFRSolver(kuhn).load(path)
    with pytest.raises(ValueError, match="alternating_updates"):
        openspiel_cfrx.CFRSolver(kuhn, alternating_updates=False).load(path)
    with pytest.raises(ValueError, match="game="):
        openspiel_cfrx.CFRSolver(pyspiel.load_game("leduc_poker")).load(path)
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(open(path, "rb").read()[:200])
    with pytest.raises(ValueError, match="not a readable"):
        openspiel_cfrx.CFRSolver(kuhn).load(str(corrupt))


@pytest.mark.parametrize("width", [1, 2, 3, 6, 7, 9])
def test_compiled_row_kernels_match_numpy_at_every_width(width):
    """The minimizers' compiled loops (a kernel per action count 2-6, a generic one
    otherwise: `rows.by_width`) against plain numpy: regret matching (with a mask
    and an all-negative row), RM+/DCFR regret updates with exact ties, OFTRL's
    softmax."""
    from openspiel_cfrx.regret import OptimisticFTRLEntropy, RegretMatching

    rng = np.random.default_rng(width)
    n = 50
    legal = rng.random((n, width)) < 0.8
    legal[:, 0] = True
    for plus, alpha in ((False, None), (True, None), (False, 1.5)):
        rm = RegretMatching(legal, plus=plus, alpha=alpha, beta=0.0 if alpha else None)
        cf, probs = rng.standard_normal((n, width)), np.where(legal, 1.0, 0.0)
        probs /= probs.sum(axis=1, keepdims=True)
        values = (cf * probs).sum(axis=1)
        cf[0] = values[0]  # row 0: every action exactly tied with the infoset value
        tolerance = np.full(n, 1e-12)
        rm.observe(2, cf, values, probs, tolerance)
        instant = np.where(legal & (np.abs(cf - values[:, None]) > 1e-12), cf - values[:, None], 0.0)
        expected = instant
        if alpha:
            expected = np.where(instant >= 0, instant * 2**1.5 / (2**1.5 + 1), instant * 0.5)
        if plus:
            expected = np.maximum(expected, 0.0)
        np.testing.assert_allclose(rm.cumulative_regret, expected, rtol=1e-12, atol=1e-15)
        rm.cumulative_regret[1] = -1.0  # no positive regret: uniform over the legal actions
        positive = np.where(legal, np.maximum(rm.cumulative_regret, 0.0), 0.0)
        total = positive.sum(axis=1, keepdims=True)
        uniform = legal / legal.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(rm.next_strategy(3, 0, n), np.where(total > 0, positive / np.where(total > 0, total, 1), uniform),
                                   rtol=1e-12, atol=1e-15)  # fmt: skip
    oftrl = OptimisticFTRLEntropy(legal, np.full(n, 0.7), 3.0)
    oftrl.cumulative_utility[...] = rng.standard_normal((n, width))
    prediction = rng.standard_normal((n, width))
    logits = np.where(legal, (oftrl.cumulative_utility + prediction) * 0.7 / 3.0, -np.inf)
    softmax = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(oftrl.next_strategy(1, 0, n, prediction), softmax / softmax.sum(axis=1, keepdims=True),
                               rtol=1e-12, atol=1e-15)  # fmt: skip


def test_constructor_defaults_are_the_variant_table():
    """The solvers' defaults are written as literals (the API reference shows
    them) and must stay `regret.VARIANTS`' values."""
    import inspect

    from openspiel_cfrx import tabular
    from openspiel_cfrx.regret import VARIANTS

    def default(cls, name):
        return inspect.signature(cls.__init__).parameters[name].default

    assert default(tabular.CFRPlusSolver, "averaging") == VARIANTS["cfr+"].averaging
    assert default(tabular.PCFRPlusSolver, "averaging") == VARIANTS["pcfr+"].averaging
    assert default(tabular.OFTRLCFRSolver, "averaging") == VARIANTS["oftrl"].averaging
    assert tuple(default(tabular.DCFRSolver, n) for n in ("alpha", "beta", "gamma")) == tuple(VARIANTS["dcfr"].discount)
