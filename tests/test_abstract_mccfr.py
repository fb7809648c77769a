"""External-sampling Linear MCCFR on a card abstraction (`poker.AbstractMCCFR`):
convergence in the full game (lossless) and inside a perfect-recall
abstraction, agreement with OpenSpiel's own ES-MCCFR, a seed's run the same
however it is split or resumed, and refusals of bad input."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from test_abstraction_cfr import lossless, strength

import games  # noqa: F401  (registers flop_holdem)
from openspiel_cfrx.poker import AbstractMCCFR, PublicTree, kmeans_abstraction, poker_nash_conv

GAME = "flop_holdem(num_ranks=4,num_suits=2)"


@pytest.fixture(scope="module")
def game():
    return pyspiel.load_game(GAME)


@pytest.fixture(scope="module")
def full_tree(game):
    return PublicTree(game, isomorphism=False)


def test_lossless_external_sampling_converges_in_the_full_game(full_tree):
    """One bucket per (board, hand) is the game itself: the exact NashConv of the
    average strategy falls from uniform's ~298 chips (2,979.6 mbb/g); measured
    146.5 mbb/g at 300,000 iterations (seed 1)."""
    solver = AbstractMCCFR(full_tree, lossless(full_tree), seed=1)
    solver.run(20_000)
    early = solver.nash_conv() * 10
    solver.run(280_000)
    late = solver.nash_conv() * 10
    assert late < 200.0 < 1000.0 < early
    assert solver.abstract_nash_conv() == pytest.approx(solver.nash_conv(), abs=1e-9)  # lossless: the same game


def test_vanilla_external_sampling_matches_openspiels_at_equal_iterations(game, full_tree):
    """`linear=False` is Lanctot et al.'s external sampling, as OpenSpiel's C++
    solver runs it: at equal iterations the two averages are about as exploitable
    (both measured exactly; different random streams, so not equal: 1,600.1 vs
    1,654.2 mbb/g for seed 3, 1,571.2 vs 1,595.1 for seed 4)."""
    iterations = 20_000
    ours = AbstractMCCFR(full_tree, lossless(full_tree), seed=3, linear=False)
    ours.run(iterations)
    theirs = pyspiel.ExternalSamplingMCCFRSolver(game, seed=3)
    for _ in range(iterations):
        theirs.run_iteration()
    reference = poker_nash_conv(game, theirs.average_policy()) * 10
    mine = ours.nash_conv() * 10
    assert 0.8 * reference < mine < 1.2 * reference, (mine, reference)


def test_perfect_recall_abstraction_converges_inside_it_with_isomorphism(game):
    """One preflop bucket and 4 strength quantiles on the flop (suit-invariant,
    perfect recall): the NashConv inside the abstraction (exact here) goes towards 0
    while the full game's stays at the abstraction's level."""
    tree = PublicTree(game)
    abstraction = strength(tree, 4, preflop="one")
    solver = AbstractMCCFR(tree, abstraction, seed=0)
    solver.run(10_000)
    early = solver.abstract_nash_conv()
    solver.run(390_000)
    inside, full = solver.abstract_nash_conv(), solver.nash_conv()
    assert inside < early / 4 and inside < 0.05 * full, (early, inside, full)


def test_a_seed_is_one_run_however_it_is_split_or_resumed(full_tree, tmp_path):
    abstraction = kmeans_abstraction(full_tree, [4, 6], seed=0)
    whole = AbstractMCCFR(full_tree, abstraction, seed=7)
    whole.run(3000)
    split = AbstractMCCFR(full_tree, abstraction, seed=7)
    split.run(1000)
    split.save(tmp_path / "ckpt.npz")
    resumed = AbstractMCCFR(full_tree, abstraction, seed=7)
    resumed.load(tmp_path / "ckpt.npz")
    split.run(2000)
    resumed.run(1500)
    resumed.run(500)
    for other in (split, resumed):
        assert np.array_equal(other.regret, whole.regret) and np.array_equal(other.average, whole.average)
        assert (other.iteration, other.nodes_touched) == (3000, whole.nodes_touched)
    different = AbstractMCCFR(full_tree, abstraction, seed=8)
    different.run(3000)
    assert not np.array_equal(different.regret, whole.regret)
    # a traversal touches 4 hole cards, the flop's 3 cards and at least 2 decisions and a terminal
    assert whole.nodes_touched > 2 * 3000 * (4 + 3 + 3)


def test_checkpoints_of_another_solve_and_damaged_files_are_refused(full_tree, tmp_path):
    abstraction = kmeans_abstraction(full_tree, [4, 6], seed=0)
    solver = AbstractMCCFR(full_tree, abstraction, seed=7)
    solver.run(10)
    path = tmp_path / "ckpt.npz"
    solver.save(path)
    with pytest.raises(ValueError, match="seed=7, this solver has 8"):
        AbstractMCCFR(full_tree, abstraction, seed=8).load(path)
    with pytest.raises(ValueError, match="abstraction="):
        AbstractMCCFR(full_tree, kmeans_abstraction(full_tree, [4, 7], seed=0), seed=7).load(path)
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match="not a readable AbstractMCCFR checkpoint"):
        solver.load(path)


def test_bad_input_is_one_line(game, full_tree):
    tree = PublicTree(game)
    with pytest.raises(ValueError, match="a sampled solve needs each bucket kept"):
        AbstractMCCFR(tree, lossless(tree))  # one bucket per hand is not suit-invariant bucket by bucket
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        AbstractMCCFR(full_tree, lossless(full_tree), seed=-1)
    with pytest.raises(ValueError, match="iterations must be an int >= 0"):
        AbstractMCCFR(full_tree, lossless(full_tree)).run(1.5)
    with pytest.raises(MemoryError, match="AbstractMCCFR needs ~.* GiB .* above max_memory_bytes"):
        AbstractMCCFR(full_tree, lossless(full_tree), max_memory_bytes=1000)
