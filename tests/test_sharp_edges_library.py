"""Sharp edges of the library found by the careless-user sweep
(benchmarks/sweep_careless_user.py): solvers pickle, `save` to a directory,
policies naming actions the game does not have, a second `solve()`, game
names in the wrong case, checkpoint settings the file predates, the vector
CFR memory refusal; and a property sweep: on random small games and random
policies `openspiel_cfrx.nash_conv` equals OpenSpiel's `exploitability.nash_conv`."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pyspiel
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import exploitability

import games  # noqa: F401  (team games)
import openspiel_cfrx
from openspiel_cfrx.checkpoint_io import CheckpointWriteError
from openspiel_cfrx.tree import get_tree

TABULAR = ["CFRSolver", "CFRPlusSolver", "DCFRSolver", "LCFRSolver", "PCFRPlusSolver", "OFTRLCFRSolver"]
DEEP_TINY = dict(num_traversals=20, advantage_network_train_steps=3, policy_network_train_steps=3,
                 advantage_network_layers=(8,), policy_network_layers=(8,), batch_size_advantage=32,
                 batch_size_strategy=32, memory_capacity=2000, seed=4)  # fmt: skip
MIX_GAME = "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)"
MIX_TINY = dict(num_traversals=8, regret_train_steps=3, policy_train_steps=3, batch_size=32,
                regret_network_layers=(8,), policy_network_layers=(8,), memory_capacity=16, workers={"num_threads": 1},
                seed=3)  # fmt: skip


# ------------------------------------------------------------------ pickling
@pytest.mark.parametrize("name", TABULAR)
def test_tabular_solvers_pickle_and_continue_exactly(kuhn, name):
    solver = getattr(openspiel_cfrx, name)(kuhn)
    solver.run(3)
    copied = pickle.loads(pickle.dumps(solver))
    solver.run(4)
    copied.run(4)
    assert copied.iteration == solver.iteration == 7
    np.testing.assert_array_equal(copied.average_strategy(), solver.average_strategy())


def _deep_outputs(solver, game):
    return np.asarray(solver.strategy_array(get_tree(game)))


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_deep_cfr_solver_pickles_and_the_copy_continues_exactly(kuhn, how):
    """A copy's networks must stay bound to its optimiser's flat buffer
    (FlatAdam): before, the copy trained a buffer its network no longer read."""
    straight = openspiel_cfrx.DeepCFRSolver(kuhn, num_iterations=3, **DEEP_TINY)
    straight.solve()
    solver = openspiel_cfrx.DeepCFRSolver(kuhn, num_iterations=3, **DEEP_TINY)
    solver.run_iteration()
    solver.run_iteration()
    copied = pickle.loads(pickle.dumps(solver)) if how == "pickle" else copy.deepcopy(solver)
    copied.run_iteration()
    np.testing.assert_array_equal(_deep_outputs(copied, kuhn), _deep_outputs(straight, kuhn))


def test_cfr_mix_solver_pickles_and_the_copy_continues_exactly():
    game = pyspiel.load_game(MIX_GAME)
    straight = openspiel_cfrx.CFRMixSolver(game, num_iterations=2, **MIX_TINY)
    straight.solve()
    solver = openspiel_cfrx.CFRMixSolver(game, num_iterations=2, **MIX_TINY)
    solver.run_iteration()
    copied = pickle.loads(pickle.dumps(solver))
    copied.run_iteration()
    np.testing.assert_allclose(_deep_outputs(copied, game), _deep_outputs(straight, game), rtol=0, atol=1e-7)


@pytest.mark.parametrize("game_string", [MIX_GAME, "nest"])
def test_team_games_pickle_as_their_game_string(game_string):
    game = pyspiel.load_game(game_string)
    copied = pickle.loads(pickle.dumps(game))
    assert str(copied) == str(game)
    copied.new_initial_state()  # had no _cfg: pyspiel's pickling skipped __init__


def test_trainer_with_torch_fused_adam_pickles():
    import torch

    from openspiel_cfrx.deep.trainer import Trainer

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(400, 400), torch.nn.ReLU(), torch.nn.Linear(400, 3))
    trainer = Trainer(net, 1e-2, 1.0)
    assert trainer.optimizer._fused is not None  # the FUSED_MIN_PARAMETERS path
    x, y = torch.randn(16, 400), torch.randn(16, 3)

    def step(t):
        t.optimizer.zero_grad()
        ((t.network(x) - y) ** 2).mean().backward()
        t.optimizer.step()

    step(trainer)
    copied = pickle.loads(pickle.dumps(trainer))
    step(trainer)
    step(copied)
    for a, b in zip(trainer.network.parameters(), copied.network.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


# --------------------------------------------------------------- save paths
def test_tabular_save_to_a_directory_is_refused_in_one_line(kuhn, tmp_path):
    solver = openspiel_cfrx.CFRSolver(kuhn)
    with pytest.raises(CheckpointWriteError, match=r"it is a directory; give a file path inside it"):
        solver.save(str(tmp_path))
    with pytest.raises(CheckpointWriteError, match="empty path"):
        solver.save("")
    solver.save(str(tmp_path / "ok.npz"))  # a file path still works


def test_deep_cfr_save_checkpoint_to_a_directory_is_refused(kuhn, tmp_path):
    solver = openspiel_cfrx.DeepCFRSolver(kuhn, num_iterations=1, **DEEP_TINY)
    with pytest.raises(CheckpointWriteError, match="is a directory"):
        solver.save_checkpoint(str(tmp_path))


# ------------------------------------------------------- policies' actions
class _Fixed(policy_lib.Policy):
    def __init__(self, game, probabilities):
        super().__init__(game, list(range(game.num_players())))
        self._probabilities = probabilities

    def action_probabilities(self, state, player_id=None):
        return dict(self._probabilities)


@pytest.mark.parametrize("probabilities, action", [({7: 1.0}, "7"), ({-1: 1.0}, "-1"), ({"a": 1.0}, "'a'"),
                                                   ({True: 1.0}, "True"), ({0: 0.5, 2: 0.5}, "2")])  # fmt: skip
def test_policy_naming_a_nonexistent_action_is_refused_with_the_infoset(kuhn, probabilities, action):
    with pytest.raises(ValueError, match=rf"to action {action} at infoset '0' of player 0, which is not an "
                                         r"action of the game \(actions are 0..1; legal here: \[0, 1\]\)"):  # fmt: skip
        openspiel_cfrx.nash_conv(kuhn, _Fixed(kuhn, probabilities))


# ------------------------------------------------------------ second solve
def test_deep_cfr_solve_runs_num_iterations_more_on_each_call_like_openspiel(kuhn, tmp_path):
    solver = openspiel_cfrx.DeepCFRSolver(kuhn, num_iterations=2, **DEEP_TINY)
    solver.solve()
    assert solver.iteration == 2
    solver.solve()  # did nothing before; OpenSpiel's solve() runs num_iterations again
    assert solver.iteration == 4
    # Resume: the first solve() after load_checkpoint finishes the interrupted run only.
    first = openspiel_cfrx.DeepCFRSolver(kuhn, num_iterations=2, **DEEP_TINY)
    first.run_iteration()
    first.save_checkpoint(str(tmp_path / "c.pt"))
    resumed = openspiel_cfrx.DeepCFRSolver(kuhn, num_iterations=2, **DEEP_TINY)
    resumed.load_checkpoint(str(tmp_path / "c.pt"))
    resumed.solve()
    assert resumed.iteration == 2
    resumed.solve()
    assert resumed.iteration == 4


def test_cfr_mix_solve_runs_num_iterations_more_on_each_call():
    solver = openspiel_cfrx.CFRMixSolver(pyspiel.load_game(MIX_GAME), num_iterations=1, **MIX_TINY)
    solver.solve()
    solver.solve()
    assert solver.iteration == 2


# -------------------------------------------------------------- game names
@pytest.mark.parametrize("string, suggestion", [("KUHN_POKER", "kuhn_poker"), ("Leduc_Poker", "leduc_poker"),
                                                ("LEDUK_POKER", "leduc_poker")])  # fmt: skip
def test_game_names_in_the_wrong_case_get_a_suggestion(string, suggestion):
    with pytest.raises(openspiel_cfrx.GameStringError, match=rf"did you mean {suggestion}"):
        openspiel_cfrx.load_game(string)


# ------------------------------------------------------------- checkpoints
def test_a_checkpoint_of_another_game_or_shape_names_each_difference(tmp_path):
    import openspiel_cfrx
    from openspiel_cfrx.deep.checkpoint import CheckpointError

    def solver(game, **settings):
        return openspiel_cfrx.DeepCFRSolver(pyspiel.load_game(game), (4,), (4,), num_traversals=4,
                                            workers={"num_threads": None}, **settings)  # fmt: skip

    solver("leduc_poker").save_checkpoint(path := str(tmp_path / "leduc.pt"))
    with pytest.raises(CheckpointError, match=r"game: the checkpoint has 'leduc_poker\(\)', this solver 'kuhn"):
        solver("kuhn_poker").load_checkpoint(path)
    with pytest.raises(CheckpointError, match=r"memory\.kind: the checkpoint has 'reservoir', this solver "
                                              r"'sliding_window'"):  # fmt: skip
        solver("leduc_poker", memory={"kind": "sliding_window"}).load_checkpoint(path)


# ---------------------------------------------------------- vector CFR sizes
def test_vector_cfr_refusal_does_not_suggest_the_isomorphism_it_already_uses():
    from openspiel_cfrx.poker import PublicTree
    from openspiel_cfrx.poker.vector_cfr import VectorCFR, VectorCFRTooLargeError

    game = pyspiel.load_game("flop_holdem(num_ranks=4,num_suits=2)")
    with pytest.raises(VectorCFRTooLargeError) as info:
        VectorCFR(PublicTree(game, isomorphism=True), "cfr+", max_memory_bytes=1000, verbose=False)
    assert "isomorphism" not in str(info.value) and "MiB" in str(info.value)
    with pytest.raises(VectorCFRTooLargeError, match=r"isomorphism=True"):
        VectorCFR(PublicTree(game, isomorphism=False), "cfr+", max_memory_bytes=1000, verbose=False)


@pytest.mark.parametrize("count, text", [(0, "0 B"), (512, "512 B"), (2750000, "2.62 MiB"), (46.8 * 2**30, "46.8 GiB"),
                                         (7.03e5 * 2**30, "687 TiB")])  # fmt: skip
def test_format_bytes_picks_a_readable_unit(count, text):
    from openspiel_cfrx.poker.vector_cfr import format_bytes

    assert format_bytes(count) == text


# ------------------------------------------- property: nash_conv = OpenSpiel's
# Small 2-player zero-sum sequential games (simultaneous ones made turn-based),
# each evaluated by OpenSpiel's Python best response in well under a second.
SMALL_GAMES = [
    "kuhn_poker",
    "leduc_poker",
    "leduc_poker(suit_isomorphism=true)",
    "liars_dice(numdice=1,dice_sides=2)",
    "liars_dice(numdice=1,dice_sides=4)",
    "liars_dice(numdice=1,dice_sides=3)",
    "turn_based_simultaneous_game(game=goofspiel(num_cards=3,imp_info=true,points_order=descending))",
    "turn_based_simultaneous_game(game=goofspiel(num_cards=3,imp_info=false,points_order=random))",
    "turn_based_simultaneous_game(game=matrix_rps())",
    "turn_based_simultaneous_game(game=oshi_zumo(coins=3,size=1,horizon=3))",
]


@st.composite
def _random_policy(draw, game_string):
    """A TabularPolicy of `game_string` with random rows: dense, sparse (some
    legal actions at 0), pure, or uniform, drawn per infoset from a seeded stream."""
    game = pyspiel.load_game(game_string)
    policy = policy_lib.TabularPolicy(game)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["dense", "sparse", "pure", "uniform", "mixed"]))
    mask = policy.legal_actions_mask.astype(bool)
    rows = rng.random(mask.shape) ** 3  # skewed towards small probabilities
    if kind in ("sparse", "mixed"):
        keep = rng.random(mask.shape) < 0.5
        rows = np.where(keep, rows, 0.0)
    if kind == "pure":
        rows = np.zeros(mask.shape)
    if kind == "uniform":
        rows = np.ones(mask.shape)
    rows = np.where(mask, rows, 0.0)
    empty = rows.sum(axis=1) == 0  # rows left with no mass: one random legal action
    for i in np.flatnonzero(empty):
        rows[i, rng.choice(np.flatnonzero(mask[i]))] = 1.0
    policy.action_probability_array[:] = rows / rows.sum(axis=1, keepdims=True)
    return game, policy


@st.composite
def _game_and_policy(draw):
    return draw(_random_policy(draw(st.sampled_from(SMALL_GAMES))))


def _check_against_openspiel(game, policy):
    ours = openspiel_cfrx.nash_conv(game, policy)
    theirs = exploitability.nash_conv(game, policy)
    assert abs(ours - theirs) <= 1e-9, (str(game), ours, theirs)
    # The same policy through the generic Policy path (action_probabilities per state).
    as_callable = policy_lib.tabular_policy_from_callable(game, policy.action_probabilities)
    assert abs(openspiel_cfrx.nash_conv(game, as_callable) - theirs) <= 1e-9


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_game_and_policy())
def test_nash_conv_equals_openspiel_on_random_small_games_and_policies(game_and_policy):
    _check_against_openspiel(*game_and_policy)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_game_and_policy())
def test_nash_conv_equals_openspiel_many_random_games_and_policies(game_and_policy):
    _check_against_openspiel(*game_and_policy)
