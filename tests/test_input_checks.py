"""Bad input gets one clear line (issue 60's careless-user sweep): an
exception naming the problem and the fix, never a traceback from the
internals or a silently wrong result. One test (or a few) per class of
problem: poker rules out of range, limit games with small boards, non-game
arguments to the poker engine, policies of another game, neural solver
settings of the wrong type, copies of the engine's solvers, and checkpoint
settings recorded only when not default."""

from __future__ import annotations

import pyspiel
import pytest

import games  # noqa: F401  (registers flop_holdem, hulh)
from games import poker
from openspiel_cfrx.poker import BetAbstraction, PokerRules

# ---------------------------------------------------------------- 1. PokerRules ranges

LIMIT = poker.paper_rules(2)


@pytest.mark.parametrize("change, error, match", [
    ({"num_ranks": 0}, ValueError, r"num_ranks must be in 2\.\.13"),
    ({"num_ranks": 14}, ValueError, r"num_ranks must be in 2\.\.13"),
    ({"num_suits": 5}, ValueError, r"num_suits must be in 1\.\.4"),
    ({"num_suits": 0}, ValueError, r"num_suits must be in 1\.\.4"),
    ({"num_hole_cards": 0}, ValueError, r"num_hole_cards must be in 1\.\.3"),
    ({"num_ranks": 2, "num_suits": 2}, ValueError, r"4 cards cannot deal 7 cards"),
    ({"first_player": (2, 0)}, ValueError, r"first player is 0 or 1"),
    ({"first_player": (0, -1)}, ValueError, r"first player is 0 or 1"),
    ({"blinds": (-50, 100)}, ValueError, r"blinds \(-50, 100\) must be >= 0"),
    ({"raise_sizes": (0, 100)}, ValueError, r"raise_sizes \(0, 100\) must be >= 1"),
    ({"raise_sizes": (-100, 100)}, ValueError, r"raise_sizes .* must be >= 1"),
    ({"max_raises": (-1, 3)}, ValueError, r"max_raises \(-1, 3\) must be >= 0"),
    ({"stacks": (40, 20000)}, ValueError, r"stacks \(40, 20000\) must be >= 1 chip and cover each player's blind"),
    ({"stacks": (0, 0), "blinds": (0, 0)}, ValueError, r"stacks \(0, 0\) must be >= 1"),
    ({"board_cards": (0, -3)}, ValueError, r"each round deals >= 0 cards"),
    ({"board_cards": (0, 8), "num_ranks": 13}, ValueError, r"at most 7 in all"),
    ({"board_cards": (0,) * 5, "first_player": (0,) * 5, "raise_sizes": (1,) * 5, "max_raises": (1,) * 5},
     ValueError, r"1 to 4 rounds"),
    ({"num_ranks": 4.0}, TypeError, r"num_ranks must be an int, got 4\.0"),
    ({"num_suits": True}, TypeError, r"num_suits must be an int"),
    ({"blinds": 100}, TypeError, r"blinds must be a tuple of ints, one per player"),
    ({"raise_sizes": (100, 100.5)}, TypeError, r"raise_sizes entry must be an int, got 100\.5"),
    ({"board_cards": "0 3"}, TypeError, r"board_cards must be a tuple of ints, one per betting round"),
    ({"abstraction": "pot"}, TypeError, r"abstraction must be a BetAbstraction"),
])  # fmt: skip
def test_poker_rules_refuse_every_field_out_of_range(change, error, match):
    with pytest.raises(error, match=match):
        PokerRules(**{**vars(LIMIT), **change})


def test_no_limit_rules_need_a_big_blind_and_valid_bet_fractions():
    no_limit = {**vars(LIMIT), "raise_sizes": (), "max_raises": (), "abstraction": BetAbstraction()}
    with pytest.raises(ValueError, match=r"no-limit rules need a big blind >= 1 chip"):
        PokerRules(**{**no_limit, "blinds": (0, 0)})
    with pytest.raises(TypeError, match=r"BetAbstraction first must be a tuple of pot fractions.*write \(0\.5,\)"):
        BetAbstraction(first=0.5)
    with pytest.raises(TypeError, match=r"bet fractions must be numbers, got 'pot'"):
        BetAbstraction(later=("pot",))
    with pytest.raises(ValueError, match=r"bet fractions must be > 0, got nan"):
        BetAbstraction(first=(float("nan"),))
    with pytest.raises(TypeError, match=r"all_in must be True or False"):
        BetAbstraction(all_in="yes")


def test_valid_rules_are_normalised_and_load_as_universal_poker():
    """Lists and numpy integers are accepted as the tuples of ints they stand for
    (same rules, same hash and repr: checkpoints record the repr), and rules at the
    edges of the ranges load in pyspiel and read back equal."""
    import numpy as np

    same = PokerRules(**{**vars(LIMIT), "blinds": [50, 100], "stacks": np.array([20000, 20000]),
                         "num_ranks": np.int64(13)})  # fmt: skip
    assert same == LIMIT and hash(same) == hash(LIMIT) and repr(same) == repr(LIMIT)
    edges = [
        {"num_ranks": 2, "num_suits": 4, "board_cards": (0, 1), "stacks": (100, 100)},
        {"num_ranks": 13, "num_suits": 1, "board_cards": (0, 3, 1, 1), "first_player": (1, 0, 0, 0),
         "raise_sizes": (1, 1, 2, 2), "max_raises": (0, 0, 0, 0), "blinds": (0, 1), "stacks": (1, 1)},
    ]  # fmt: skip
    for change in edges:
        rules = PokerRules(**{**vars(LIMIT), **change})
        assert PokerRules.from_game(pyspiel.load_game("universal_poker", rules.universal_poker_params())) == rules


# ------------------------------------------------- 2. limit games with small boards


def _small_board_game(board_cards: str, num_ranks: int = 4, num_suits: int = 2) -> pyspiel.Game:
    rounds = len(board_cards.split())
    return pyspiel.load_game("universal_poker", {
        "betting": "limit", "numPlayers": 2, "numRounds": rounds, "blind": "1 2", "stack": "100 100",
        "raiseSize": " ".join(["2"] * rounds), "firstPlayer": " ".join(["1"] + ["2"] * (rounds - 1)),
        "maxRaises": " ".join(["1"] * rounds), "numSuits": num_suits, "numRanks": num_ranks, "numHoleCards": 2,
        "numBoardCards": board_cards})  # fmt: skip


def _random_strategy(tree, seed=0):
    import numpy as np

    from openspiel_cfrx.poker.public_tree import DECISION

    arrays = {}
    for n, node in enumerate(tree.nodes):
        if node.kind == DECISION:
            shape = (tree.num_boards[node.round], tree.deck.num_hands, len(node.legal))
            weights = np.random.default_rng(seed + n).random(shape) + 0.05
            arrays[n] = weights / weights.sum(axis=2, keepdims=True)
    return lambda n, lo, hi: arrays[n][lo:hi]


@pytest.mark.parametrize("board_cards, num_ranks", [("0 1", 4), ("0", 3), ("0 2", 4)])
def test_limit_games_with_fewer_than_three_board_cards_are_solved_exactly(board_cards, num_ranks):
    """Showdowns on 0-2 board cards (2-4 cards in all, ranked as universal_poker
    ranks them): the public tree's NashConv equals the generic game-tree engine's
    (which plays universal_poker's own showdowns), every board and suit classes."""
    import openspiel_cfrx
    from openspiel_cfrx.poker import PublicTree, PublicTreePolicy, VectorCFR

    game = _small_board_game(board_cards, num_ranks)
    every = PublicTree(game, isomorphism=False)
    strategy = _random_strategy(every)
    expected = openspiel_cfrx.nash_conv(game, PublicTreePolicy(game, every, strategy))
    assert every.nash_conv(strategy) == pytest.approx(expected, abs=1e-9)
    classes = PublicTree(game, isomorphism=True)
    expected = openspiel_cfrx.nash_conv(game, PublicTreePolicy(game, classes, classes.uniform))
    assert classes.nash_conv(classes.uniform) == pytest.approx(expected, abs=1e-9)
    solver = VectorCFR(classes, "cfr+", verbose=False)
    for _ in range(20):
        solver.iterate()
    assert solver.evaluate()["nash_conv"] < 0.2 * classes.nash_conv(classes.uniform)


def test_limit_games_with_a_round_that_deals_no_board_card_are_refused_in_one_line():
    from openspiel_cfrx.poker import PublicTree, UnsupportedPokerGameError

    with pytest.raises(UnsupportedPokerGameError, match=r"every round after the first to deal board cards, got "
                                                        r"numBoardCards 0 0 1"):  # fmt: skip
        PublicTree(_small_board_game("0 0 1", 3, 3))


def test_hands_of_fewer_than_five_cards_rank_as_universal_poker_ranks_them():
    """Quads > trips > two pair > pair > high card, then the groups' ranks (no
    straight or flush under five cards); ties are equal."""
    import numpy as np

    from openspiel_cfrx.poker import rank_hands
    from openspiel_cfrx.poker.evaluator import rank_cards

    def card(rank, suit):
        return rank * 4 + suit

    ordered = [  # weakest first
        [card(0, 0), card(1, 1), card(2, 2), card(4, 3)],  # 6-4-3-2 (no straight under five cards)
        [card(0, 0), card(1, 0), card(2, 0), card(12, 0)],  # A-4-3-2 suited (no flush either)
        [card(0, 0), card(0, 1), card(1, 0), card(2, 1)],  # 2-2-3-4
        [card(0, 0), card(0, 1), card(1, 0), card(3, 1)],  # 2-2-5-3
        [card(5, 0), card(5, 1), card(1, 0), card(2, 1)],  # 7-7-3-4
        [card(0, 0), card(0, 1), card(1, 0), card(1, 1)],  # 2-2-3-3
        [card(3, 0), card(3, 1), card(12, 0), card(12, 1)],  # A-A-5-5
        [card(0, 0), card(0, 1), card(0, 2), card(12, 0)],  # 2-2-2-A
        [card(1, 0), card(1, 1), card(1, 2), card(0, 0)],  # 3-3-3-2
        [card(0, 0), card(0, 1), card(0, 2), card(0, 3)],  # 2-2-2-2
    ]
    strength = rank_cards(np.array(ordered), 4)
    assert (np.diff(strength) > 0).all()
    assert rank_cards(np.array([[card(5, 0), card(3, 1)]]), 4) == rank_cards(np.array([[card(5, 2), card(3, 3)]]), 4)
    hands = np.array([[card(0, 0), card(0, 1)], [card(12, 0), card(11, 0)], [card(5, 0), card(5, 2)]])
    assert rank_hands(hands, [], 4)[0] > rank_hands(hands, [], 4)[1]  # preflop: a pair beats A-K
    on_board = rank_hands(hands, [card(5, 0)], 4)
    assert on_board[2] == -1 and on_board[0] > 0  # a hand holding a board card has none
    trips = rank_hands(hands, [card(0, 2)], 4)
    assert trips[0] > trips[2] > trips[1]  # 2-2-2 > 7-7-2 > A-K-2


# ------------------------------------------- 3. non-game arguments to the poker engine

FHP_SMALL = "flop_holdem(num_ranks=4,num_suits=2)"


@pytest.mark.parametrize("argument", ["flop_holdem", 3, "state"])
def test_the_poker_engine_refuses_what_is_not_a_game_naming_the_type(argument):
    from openspiel_cfrx.poker import PokerRules, PublicTree
    from openspiel_cfrx.poker.lbr import LocalBestResponse

    game = pyspiel.load_game(FHP_SMALL)
    if argument == "state":
        argument = game.new_initial_state()
    expected = rf"expects a pyspiel\.Game .*got {type(argument).__name__}$"
    with pytest.raises(TypeError, match=r"PublicTree " + expected):
        PublicTree(argument)
    with pytest.raises(TypeError, match=r"PokerRules\.from_game " + expected):
        PokerRules.from_game(argument)
    with pytest.raises(TypeError, match=r"LocalBestResponse " + expected):
        LocalBestResponse(argument, None)


def test_the_solvers_on_a_public_tree_refuse_a_game_and_name_the_tree():
    from openspiel_cfrx.poker import AbstractMCCFR, PublicTree, PublicTreePolicy, Subgame, VectorCFR

    game = pyspiel.load_game(FHP_SMALL)
    build = r"expects an openspiel_cfrx\.poker\.PublicTree \(build one with PublicTree\(game\)\), got Game"
    with pytest.raises(TypeError, match=r"VectorCFR " + build):
        VectorCFR(game, verbose=False)
    with pytest.raises(TypeError, match=r"AbstractMCCFR " + build):
        AbstractMCCFR(game, None)
    with pytest.raises(TypeError, match=r"PublicTreePolicy " + build):
        PublicTreePolicy(game, game, None)
    tree = PublicTree(game, isomorphism=False)
    with pytest.raises(TypeError, match=r"strategy must be a callable strategy\(node, lo, hi\)"):
        PublicTreePolicy(game, tree, "uniform")
    with pytest.raises(ValueError, match=r"unknown vector CFR variant \['cfr\+'\]"):
        VectorCFR(tree, ["cfr+"], verbose=False)
    with pytest.raises(TypeError, match=r"subgame must be an openspiel_cfrx\.poker\.Subgame"):
        PublicTree(game, subgame=((), (4, 5, 6), None))
    with pytest.raises(TypeError, match=r"betting must be a \(PokerRules, public nodes\) pair"):
        PublicTree(betting=tree.nodes, subgame=Subgame((), (4, 5, 6), None))


# ----------------------------------------------------- 4. policies of another game


def _kuhn_and_leduc():
    return pyspiel.load_game("kuhn_poker"), pyspiel.load_game("leduc_poker")


def test_nash_conv_refuses_a_policy_of_another_game_in_one_line():
    from open_spiel.python import policy as policy_lib

    import openspiel_cfrx

    kuhn, leduc = _kuhn_and_leduc()
    mismatch = r"is a {} of game kuhn_poker\(\), not of leduc_poker\(\): evaluate it in its own game"
    for policy in (policy_lib.TabularPolicy(kuhn), policy_lib.UniformRandomPolicy(kuhn)):
        with pytest.raises(ValueError, match=mismatch.format(type(policy).__name__)):
            openspiel_cfrx.nash_conv(leduc, policy)
        with pytest.raises(ValueError, match=mismatch.format(type(policy).__name__)):
            openspiel_cfrx.exploitability(leduc, policy)
    solver = openspiel_cfrx.CFRSolver(kuhn)
    with pytest.raises(ValueError, match=mismatch.format("CFRSolver")):
        openspiel_cfrx.nash_conv(leduc, solver)
    with pytest.raises(ValueError, match=mismatch.format("TabularPolicy")):
        openspiel_cfrx.nash_conv(leduc, solver.average_policy())
    # A C++ policy says nothing of its game: the first infoset it cannot answer is named.
    cpp = pyspiel.CFRSolver(kuhn)
    cpp.evaluate_and_update_policy()
    with pytest.raises(ValueError, match=r"policy cannot answer infoset .* of leduc_poker\(\) \(SpielError: No policy "
                                         r"found.*is it a policy of another game"):  # fmt: skip
        openspiel_cfrx.nash_conv(leduc, cpp.average_policy())
    # The same game loaded from another string is the same game.
    same = pyspiel.load_game("kuhn_poker(players=2)")
    assert openspiel_cfrx.nash_conv(same, policy_lib.UniformRandomPolicy(kuhn)) == pytest.approx(
        openspiel_cfrx.nash_conv(kuhn, policy_lib.UniformRandomPolicy(kuhn)))  # fmt: skip


def test_nash_conv_refuses_a_neural_solver_of_another_game():
    import openspiel_cfrx

    kuhn, leduc = _kuhn_and_leduc()
    solver = openspiel_cfrx.DeepCFRSolver(kuhn, (8,), (8,), num_iterations=1, num_traversals=1, workers={"num_threads": None})
    with pytest.raises(ValueError, match=r"is a DeepCFRSolver of game kuhn_poker\(\), not of leduc_poker\(\)"):
        openspiel_cfrx.nash_conv(leduc, solver)


def test_play_match_refuses_policies_of_another_game_and_non_policies():
    from open_spiel.python import policy as policy_lib

    import openspiel_cfrx
    from openspiel_cfrx.eval.head_to_head import always_call, play_match

    kuhn, leduc = _kuhn_and_leduc()
    home = policy_lib.TabularPolicy(leduc)
    with pytest.raises(ValueError, match=r"policy_a is a TabularPolicy of game kuhn_poker\(\), not of leduc_poker"):
        play_match(leduc, policy_lib.TabularPolicy(kuhn), home, 4)
    with pytest.raises(ValueError, match=r"policy_b is a UniformRandomPolicy of game kuhn_poker\(\)"):
        play_match(leduc, home, policy_lib.UniformRandomPolicy(kuhn), 4)
    with pytest.raises(TypeError, match=r"policy_a is a CFRSolver, not a policy with action_probabilities\(state\): "
                                        r"pass a policy \(a solver's average_policy\(\)"):  # fmt: skip
        play_match(leduc, openspiel_cfrx.CFRSolver(leduc), home, 4)
    with pytest.raises(TypeError, match=r"play_match expects a pyspiel\.Game, got str"):
        play_match("leduc_poker", home, home, 4)

    class Raiser:  # says nothing of its game; always answers action 5
        def action_probabilities(self, state, player_id=None):
            return {5: 1.0}

    with pytest.raises(ValueError, match=r"Raiser gives probability to action 5, not legal at infoset .*legal: "
                                         r"\[0, 1\]\): is it a policy of another game"):  # fmt: skip
        play_match(kuhn, Raiser(), always_call(kuhn), 4)
    cpp = pyspiel.CFRSolver(kuhn)
    cpp.evaluate_and_update_policy()
    with pytest.raises(ValueError, match=r"cannot answer infoset .*\(SpielError: No policy found.*another game"):
        play_match(leduc, cpp.average_policy(), home, 4)


# --------------------------------------------------- 5. neural solver settings' types

TINY_GOOFSPIEL = "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)"


@pytest.mark.parametrize("settings, match", [
    ({"policy_network_layers": 8}, r"policy_network_layers must be a non-empty tuple of hidden-layer widths, each an "
                                   r"int >= 1, e\.g\. \(64, 64\), got 8; write \(8,\) for one layer of 8"),
    ({"advantage_network_layers": (8.5,)}, r"advantage_network_layers must be a non-empty tuple .* got \(8\.5,\)$"),
    ({"advantage_network_layers": (8, True)}, r"advantage_network_layers must be .* got \(8, True\)$"),
    ({"advantage_network_layers": ()}, r"advantage_network_layers must be a non-empty tuple"),
    ({"policy_network_layers": "64"}, r"policy_network_layers must be .* got '64'$"),
    ({"learning_rate": [1e-3]}, r"learning_rate must be a finite number > 0, got \[0\.001\]; write 0\.001 \(one value, "
                                r"not a list\)"),
    ({"num_traversals": [10]}, r"num_traversals must be an int >= 1, got \[10\]; write 10"),
    ({"print_nash_convs": [True]}, r"print_nash_convs must be True or False, got \[True\]"),
    ({"reporting": {"progress": "yes"}}, r"ReportingSettings\.progress must be True or False, got 'yes'"),
    ({"reporting": {"verbose": 1}}, r"ReportingSettings\.verbose must be True or False, got 1"),
    ({"reporting": {"log_every": [5]}}, r"ReportingSettings\.log_every must be an int >= 0, got \[5\]; write 5"),
    ({"reporting": {"callback_every": 0.5}}, r"ReportingSettings\.callback_every must be an int >= 1, got 0\.5"),
    ({"reporting": {"callback": "print"}}, r"ReportingSettings\.callback must be a function callback\(solver\) or "
                                           r"None, got 'print'"),
    ({"traversal": {"backend": ["tree"]}}, r"TraversalSettings\.backend must be one of 'state', 'tree', .* got "
                                           r"\['tree'\]"),
    ({"memory": ["reservoir"]}, r"memory must be an openspiel_cfrx\.deep\.MemorySettings, a dict of its fields or "
                                r"None, got list$"),
    ({"training": {"regret_scale": [1.0]}}, r"TrainingSettings\.regret_scale must be a finite number > 0, 'auto' or "
                                            r"'pot', got \[1\.0\]; write 1\.0"),
    ({"workers": {"num_threads": ["auto"]}}, r"WorkerSettings\.num_threads must be .* got \['auto'\]; write 'auto'"),
])  # fmt: skip
def test_deep_cfr_settings_of_the_wrong_type_are_refused_in_one_line(settings, match):
    """Layer sizes are a tuple of positive ints (OpenSpiel's DeepCFRSolver takes
    tuples: an int alone is refused with the fix), scalars are not lists, flags are bools."""
    import openspiel_cfrx

    kuhn = pyspiel.load_game("kuhn_poker")
    with pytest.raises(ValueError, match=match):
        openspiel_cfrx.DeepCFRSolver(kuhn, **{"num_iterations": 1, "workers": {"num_threads": None}, **settings})


def test_deep_cfr_layers_as_lists_and_numpy_ints_still_work():
    import numpy as np

    import openspiel_cfrx

    kuhn = pyspiel.load_game("kuhn_poker")
    solver = openspiel_cfrx.DeepCFRSolver(kuhn, [8, np.int64(8)], (4,), num_iterations=1, workers={"num_threads": None})
    record = solver.settings.to_record()["openspiel"]
    assert record["policy_network_layers"] == [8, 8] and record["advantage_network_layers"] == [4]


@pytest.mark.parametrize("settings, match", [
    ({"regret_network_layers": 16}, r"regret_network_layers must be a non-empty tuple .* write \(16,\)"),
    ({"policy_network_layers": (16.5, 16)}, r"policy_network_layers must be a non-empty tuple .* got \(16\.5, 16\)$"),
    ({"learning_rate": [1e-3]}, r"learning_rate must be a finite number > 0, got \[0\.001\]; write 0\.001"),
    ({"variant": ["cfr_mix"]}, r"unknown CFR-MIX variant \['cfr_mix'\]"),
    ({"network": {"infoset_encoding": ["tensor"]}}, r"AgentNetworkSettings\.infoset_encoding must be one of 'tensor', "
                                                    r"'compact', got \['tensor'\]"),
    ({"reporting": {"progress": 1}}, r"ReportingSettings\.progress must be True or False, got 1"),
])  # fmt: skip
def test_cfr_mix_settings_of_the_wrong_type_are_refused_in_one_line(settings, match):
    import openspiel_cfrx

    game = pyspiel.load_game(TINY_GOOFSPIEL)
    with pytest.raises(ValueError, match=match):
        openspiel_cfrx.CFRMixSolver(game, **{"num_iterations": 1, "workers": {"num_threads": 1}, **settings})


# ------------------------------------------ 6. copies of the poker engine's solvers


@pytest.mark.parametrize("copy_of", ["deepcopy", "pickle"])
def test_public_tree_vector_cfr_and_mccfr_copy_and_continue_identically(copy_of):
    """A deep copy or a pickle round trip (the tree's deal-cache lock and worker
    threads dropped and recreated) continues exactly as the original does."""
    import copy
    import pickle

    import numpy as np

    from openspiel_cfrx.poker import AbstractMCCFR, PublicTree, VectorCFR, lossless_abstraction

    def clone(obj):
        return copy.deepcopy(obj) if copy_of == "deepcopy" else pickle.loads(pickle.dumps(obj))

    tree = PublicTree(_small_board_game("0 1 1"), isomorphism=False, chunk_boards=2, threads=2)  # several chunks
    uniform = tree.nash_conv(tree.uniform)
    assert tree._pool is not None and tree._dealt  # the worker threads and the later deals' cache (with its lock)
    assert clone(tree).nash_conv(tree.uniform) == uniform

    solver = VectorCFR(tree, "cfr+", verbose=False)
    solver.iterate()
    twin = clone(solver)
    for s in (solver, twin):
        s.iterate()
        s.iterate()
    assert twin.iteration == solver.iteration == 3 and twin.tree is not tree
    for key, average in solver.average.items():
        np.testing.assert_array_equal(twin.average[key], average)
    assert twin.evaluate()["nash_conv"] == solver.evaluate()["nash_conv"]

    tree = PublicTree(pyspiel.load_game("flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"), isomorphism=False)
    mccfr = AbstractMCCFR(tree, lossless_abstraction(tree), seed=5)
    mccfr.run(50)
    twin = clone(mccfr)
    mccfr.run(50)
    twin.run(50)
    np.testing.assert_array_equal(twin.regret, mccfr.regret)
    np.testing.assert_array_equal(twin.average, mccfr.average)
    assert twin.nodes_touched == mccfr.nodes_touched


# --------------------------------------- 7. checkpoint settings recorded when default


def _tiny_deep_cfr(**settings):
    import openspiel_cfrx

    return openspiel_cfrx.DeepCFRSolver(pyspiel.load_game("kuhn_poker"), (4,), (4,), num_traversals=4,
                                        advantage_network_train_steps=1, policy_network_train_steps=1,
                                        workers={"num_threads": None}, **settings)  # fmt: skip


def test_a_checkpoint_written_with_a_default_setting_names_its_value_when_loaded_with_another(tmp_path):
    from openspiel_cfrx.deep.checkpoint import CheckpointError

    default = _tiny_deep_cfr()
    default.run_iteration()
    default.save_checkpoint(path := str(tmp_path / "default.pt"))
    record = default.settings.to_record()
    assert record["averaging"]["linear_weighting"] is True and record["averaging"]["average_weighting"] is None
    with pytest.raises(CheckpointError, match=r"linear_weighting: the checkpoint has True, this solver False") as info:
        _tiny_deep_cfr(averaging={"linear_weighting": False}).load_checkpoint(path)
    assert "predates" not in str(info.value)
    with pytest.raises(CheckpointError, match=r"regret_scale: the checkpoint has 1\.0, this solver 2\.0") as info:
        _tiny_deep_cfr(training={"regret_scale": 2.0}).load_checkpoint(path)
    assert "predates" not in str(info.value)
    # The other way round used to load silently (the default solver's config lacked the key).
    uniform = _tiny_deep_cfr(averaging={"linear_weighting": False}, training={"regret_scale": 2.0})
    uniform.run_iteration()
    uniform.save_checkpoint(path := str(tmp_path / "uniform.pt"))
    with pytest.raises(CheckpointError, match=r"linear_weighting: the checkpoint has False, this solver True") as info:
        _tiny_deep_cfr().load_checkpoint(path)
    assert "regret_scale: the checkpoint has 2.0, this solver 1.0" in str(info.value)
    resumed = _tiny_deep_cfr(averaging={"linear_weighting": False}, training={"regret_scale": 2.0})
    resumed.load_checkpoint(path)
    assert resumed.iteration == 1


def test_nash_conv_names_a_float_action_key_as_such():
    """A policy keyed by 0.0 instead of 0 is told that actions are int ids (it
    used to read 'not an action of the game')."""
    from open_spiel.python import policy as os_policy

    import openspiel_cfrx

    game = pyspiel.load_game("kuhn_poker")

    class FloatKeys(os_policy.Policy):
        def __init__(self):
            super().__init__(game, [0, 1])

        def action_probabilities(self, state, player_id=None):
            return {float(a): 1 / len(state.legal_actions()) for a in state.legal_actions()}

    with pytest.raises(ValueError, match=r"policy keys action 0\.0 as a float .*actions are int ids"):
        openspiel_cfrx.nash_conv(game, FloatKeys())
