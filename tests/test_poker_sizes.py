"""Game-size counts of flop_holdem / hulh, against the tree engine and the literature."""

import pyspiel
import pytest
from open_spiel.python import policy as policy_lib

import games  # noqa: F401  (registers the games)
import openspiel_cfrx
from games import poker

SMALL = "flop_holdem(num_ranks=7,num_suits=1,max_raises=1 1)"


def test_counts_match_the_extracted_tree():
    game = pyspiel.load_game(SMALL)
    tree = openspiel_cfrx.get_tree(game)
    size = poker.game_size(poker.limit_holdem_rules(game))
    assert tree.num_histories == size.histories
    assert tree.num_terminals == size.terminals
    assert (tree.num_infosets_of(0), tree.num_infosets_of(1)) == size.infosets


def test_uniform_nash_conv_matches_openspiel_cpp():
    # Smaller still: OpenSpiel's C++ best response is slow on the 1.7e5-node game.
    game = pyspiel.load_game("flop_holdem(num_ranks=7,num_suits=1,max_raises=0 1)")
    ours = openspiel_cfrx.nash_conv(game, policy_lib.UniformRandomPolicy(game))
    theirs = pyspiel.nash_conv(game, pyspiel.UniformRandomPolicy(game))
    assert ours == pytest.approx(theirs, abs=1e-6)


def test_paper_scale_counts():
    fhp = poker.game_size(poker.paper_rules(2), card_by_card=False)
    hulh = poker.game_size(poker.paper_rules(4), card_by_card=False)
    # Section 5: FHP has over 1e12 nodes and 1e9 infosets, HULH over 1e17 and 1e14.
    assert fhp.histories > 10**12 and sum(fhp.infosets) > 10**9
    assert hulh.histories > 10**17 and sum(hulh.infosets) > 10**14
    # With the standard ACPC caps (3 4 4 4) the counter gives the published
    # 3.19e14 infosets of heads-up limit hold'em (Bowling et al., 2015).
    standard = poker.game_size(poker.paper_rules(4, max_raises=(3, 4, 4, 4)))
    assert sum(standard.infosets) == 319_365_922_522_608
    # The small variants: ~3e5 and ~4e6 histories with one chance node per deal.
    four = poker.game_size(poker.paper_rules(2, 4, 2), card_by_card=False)
    five = poker.game_size(poker.paper_rules(2, 5, 2), card_by_card=False)
    assert 2e5 < four.histories < 4e5 and 3e6 < five.histories < 5e6
    # Infosets do not depend on how deals are split into chance nodes.
    assert poker.game_size(poker.paper_rules(2, 4, 2)).infosets == four.infosets == (15792,) * 2
