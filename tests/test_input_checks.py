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
