"""Card abstraction for flop hold'em (`openspiel_cfrx.poker.abstraction`): the
lossless and k-means abstractions, their features against direct enumeration,
suit invariance, k-means' determinism and distortion, save/load and refusals."""

import itertools
import math
import os
import subprocess
import sys

import numpy as np
import pyspiel
import pytest
from poker_reference import best_hand_rank  # noqa: E402  (tests/ is on sys.path)

import games  # noqa: F401  (registers flop_holdem)
from openspiel_cfrx.poker import PublicTree, rank_hands
from openspiel_cfrx.poker import abstraction as A
from openspiel_cfrx.poker.isomorphism import relabel, suit_permutations

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = "flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"
SMALL = "flop_holdem(num_ranks=5,num_suits=2)"


@pytest.fixture(scope="module")
def tiny():
    return PublicTree(pyspiel.load_game(TINY))


@pytest.fixture(scope="module")
def small():
    return PublicTree(pyspiel.load_game(SMALL))


@pytest.fixture(scope="module")
def small_abstraction(small):
    return A.kmeans_abstraction(small, (None, 40), seed=3)


def _equity_by_enumeration(deck, board, hand, opponents):
    """P(win) + P(tie) / 2 of `hand` on `board` against the hands `opponents`
    (deck indices) sharing no card, with the reference evaluator."""
    def card52(c):
        return int(deck.rank(c)) * 4 + int(deck.suit(c))

    used = set(board.tolist()) | set(deck.hand_cards[hand].tolist())
    mine = best_hand_rank([card52(c) for c in list(board) + list(deck.hand_cards[hand])])
    score = count = 0
    for o in opponents:
        if used & set(deck.hand_cards[o].tolist()):
            continue
        theirs = best_hand_rank([card52(c) for c in list(board) + list(deck.hand_cards[o])])
        score += 2 if mine > theirs else 1 if mine == theirs else 0
        count += 1
    return score, count


def test_lossless_is_one_bucket_per_board_and_hand(tiny):
    lossless = A.lossless_abstraction(tiny)
    H = tiny.num_hands
    assert lossless.num_buckets == (H, tiny.num_boards[1] * H)
    for r in range(tiny.num_rounds):
        ids = lossless.buckets[r]
        assert ids.shape == (tiny.num_boards[r], H)
        for b in range(tiny.num_boards[r]):
            meets = tiny.deck.conflicts(tiny.board_cards(r, b))
            assert np.all(ids[b, meets] == -1)
            assert np.array_equal(ids[b, ~meets], b * H + np.flatnonzero(~meets))
    assert lossless.abstract_infosets(tiny) == 4 * H + 12 * tiny.num_boards[1] * H


def test_preflop_classes_are_169_in_a_52_card_deck():
    deck = PublicTree(pyspiel.load_game("flop_holdem")).deck
    classes = A.preflop_classes(deck)
    assert classes.max() + 1 == 169
    sizes = np.bincount(classes)
    assert sorted(set(sizes.tolist())) == [4, 6, 12]  # suited, pairs, offsuit
    assert (sizes == 6).sum() == 13 and (sizes == 4).sum() == 78 and (sizes == 12).sum() == 78


def test_ochs_features_equal_direct_enumeration(small):
    deck = small.deck
    groups = A.opponent_groups(small, 4)
    rng = np.random.default_rng(0)
    for b in rng.choice(small.num_boards[1], 4, replace=False):
        board = small.board_cards(1, b)
        features = A.ochs_features(small, board[None], groups)[0]
        for hand in np.flatnonzero(~deck.conflicts(board))[:6]:
            for g, group in enumerate(groups):
                score, count = _equity_by_enumeration(deck, board, hand, np.flatnonzero(group))
                if count:
                    assert features[hand, g] == pytest.approx(score / (2 * count), abs=1e-12)


def test_the_nuts_have_strength_one_against_every_cluster(small):
    deck = small.deck
    groups = A.opponent_groups(small, 8)
    for b in range(0, small.num_boards[1], 7):
        board = small.board_cards(1, b)
        ranks = rank_hands(deck.hand_cards, board, deck.num_suits)
        best = ranks.max()
        features = A.ochs_features(small, board[None], groups)[0]
        nuts = np.flatnonzero(ranks == best)
        if len(nuts) == 1:
            assert np.all(features[nuts[0]] == 1.0)
        worst = np.flatnonzero((ranks >= 0) & (ranks == ranks[ranks >= 0].min()))
        assert np.all(features[worst] <= 0.5)


def test_preflop_equity_equals_enumeration_over_every_flop(tiny):
    deck = tiny.deck
    equity = A.preflop_equity(tiny)
    for hand in (0, 5, 27):
        score = count = 0
        for board in itertools.combinations(range(deck.num_cards), 3):
            board = np.array(board)
            if deck.conflicts(board)[hand]:
                continue
            s, c = _equity_by_enumeration(deck, board, hand, range(deck.num_hands))
            score, count = score + s, count + c
        assert equity[hand] == pytest.approx(score / (2 * count), abs=1e-12)


def test_buckets_are_suit_invariant_and_agree_with_isomorphism(tiny):
    game = pyspiel.load_game(TINY)
    every = PublicTree(game, isomorphism=False)
    full = A.kmeans_abstraction(every, (None, 8), seed=1)
    iso = A.kmeans_abstraction(tiny, (None, 8), seed=1)
    deck = every.deck
    index = {tuple(every.board_cards(1, b).tolist()): b for b in range(every.num_boards[1])}
    for perm in suit_permutations(deck.num_suits):
        hands = deck.hand_indices(*relabel(deck, deck.hand_cards, perm).T)
        assert np.array_equal(full.buckets[0][0, hands], full.buckets[0][0])
        for b in range(every.num_boards[1]):
            mapped = index[tuple(sorted(relabel(deck, every.board_cards(1, b), perm).tolist()))]
            assert np.array_equal(full.buckets[1][mapped, hands], full.buckets[1][b])
    for b in range(tiny.num_boards[1]):  # a class representative's buckets are the same board's in the full tree
        assert np.array_equal(iso.buckets[1][b], full.buckets[1][index[tuple(tiny.board_cards(1, b).tolist())]])
    assert iso.num_buckets == full.num_buckets and iso.description["rounds"][1]["distortion_per_weight"] == \
        pytest.approx(full.description["rounds"][1]["distortion_per_weight"], rel=1e-12)  # fmt: skip


def test_kmeans_is_deterministic_nonempty_and_respects_k(small, small_abstraction):
    again = A.kmeans_abstraction(small, (None, 40), seed=3)
    for a, b in zip(small_abstraction.buckets, again.buckets, strict=True):
        assert np.array_equal(a, b)
    assert small_abstraction.num_buckets == (int(A.preflop_classes(small.deck).max()) + 1, 40)
    for r, k in enumerate(small_abstraction.num_buckets):
        used = small_abstraction.buckets[r]
        assert set(np.unique(used[used >= 0]).tolist()) == set(range(k))
        assert np.all((used == -1) == np.stack([small.deck.conflicts(small.board_cards(r, b))
                                                for b in range(small.num_boards[r])]))  # fmt: skip
    other = A.kmeans_abstraction(small, (None, 40), seed=4)
    assert not np.array_equal(other.buckets[1], small_abstraction.buckets[1])


def test_more_buckets_never_increase_distortion(small):
    distortions = [A.kmeans_abstraction(small, (None, k)).description["rounds"][1]["distortion_per_weight"]
                   for k in (1, 2, 4, 8, 16, 64, 128, 209)]  # fmt: skip  # 209: every distinct feature vector
    assert all(b <= a for a, b in itertools.pairwise(distortions)) and distortions[-1] < 1e-20, distortions
    points = np.random.default_rng(0).random((500, 3))
    costs = [A.weighted_kmeans(points, np.ones(500), k, seed=0).distortion for k in (1, 5, 25, 125, 500)]
    assert all(b <= a for a, b in itertools.pairwise(costs)) and costs[-1] == 0.0


def test_weighted_kmeans_on_separated_blobs():
    rng = np.random.default_rng(1)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    points = np.concatenate([c + 0.1 * rng.standard_normal((50, 2)) for c in centres])
    result = A.weighted_kmeans(points, np.ones(150), 3, seed=0)
    assert sorted(np.bincount(result.labels).tolist()) == [50, 50, 50]
    weights = np.where(np.arange(150) < 50, 100.0, 1.0)  # weight pulls the mean, labels unchanged
    heavy = A.weighted_kmeans(points, weights, 3, seed=0)
    assert len(set(zip(result.labels.tolist(), heavy.labels.tolist(), strict=True))) == 3


def test_preflop_kmeans_and_lossless_classes(small):
    classes = int(A.preflop_classes(small.deck).max()) + 1
    coarse = A.kmeans_abstraction(small, (5, 10))
    assert coarse.num_buckets == (5, 10)
    assert set(coarse.buckets[0][0].tolist()) == set(range(5))
    with pytest.raises(ValueError, match="distinct feature vectors"):  # classes with equal flop histograms
        A.kmeans_abstraction(small, (classes, 10))
    finest = A.kmeans_abstraction(small, (classes, 10), clamp=True)
    distinct = finest.description["rounds"][0]["distinct_points"]
    assert finest.num_buckets[0] == distinct < classes
    pairs = set(zip(finest.buckets[0][0].tolist(), A.preflop_classes(small.deck).tolist(), strict=True))
    assert len(pairs) == classes  # suit-invariant: no class is split


def test_save_load_round_trip_and_refusals(tmp_path, tiny, small, small_abstraction):
    path = tmp_path / "abstraction.npz"
    small_abstraction.save(path)
    loaded = A.CardAbstraction.load(path, small)
    assert loaded.num_buckets == small_abstraction.num_buckets and loaded.description == small_abstraction.description
    for a, b in zip(loaded.buckets, small_abstraction.buckets, strict=True):
        assert np.array_equal(a, b) and a.dtype == np.int32
    with pytest.raises(A.CardAbstractionMismatchError, match="another tree.*game"):
        A.CardAbstraction.load(path, tiny)
    with pytest.raises(A.CardAbstractionMismatchError, match="isomorphism"):
        A.CardAbstraction.load(path, PublicTree(pyspiel.load_game(SMALL), isomorphism=False))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    (tmp_path / "bad.npz").write_bytes(bytes(data))
    with pytest.raises(ValueError):
        A.CardAbstraction.load(tmp_path / "bad.npz", small)


def test_clear_errors(tiny):
    with pytest.raises(ValueError, match="int >= 1"):
        A.kmeans_abstraction(tiny, (None, 0))
    with pytest.raises(ValueError, match="distinct feature vectors.*clamp=True"):
        A.kmeans_abstraction(tiny, (None, 10_000))
    clamped = A.kmeans_abstraction(tiny, (None, 10_000), clamp=True)
    record = clamped.description["rounds"][1]
    assert clamped.num_buckets[1] == record["k"] == record["distinct_points"] and record["k_asked"] == 10_000
    with pytest.raises(ValueError, match="one entry per round"):
        A.kmeans_abstraction(tiny, (8,))
    with pytest.raises(ValueError, match="has a board"):
        A.kmeans_abstraction(tiny, (None, None))
    with pytest.raises(A.CardAbstractionTooLargeError, match="GiB"):
        A.kmeans_abstraction(tiny, (None, 8), max_memory_bytes=1000)
    with pytest.raises(ValueError, match="subgame"):
        from openspiel_cfrx.poker.public_tree import Subgame

        sub = PublicTree(pyspiel.load_game(TINY), subgame=Subgame((1, 1), (0, 2, 4), np.ones((2, 28))))
        A.lossless_abstraction(sub)


def test_sizes_in_the_papers_terms():
    tree = PublicTree(pyspiel.load_game("flop_holdem"))
    assert A.game_infosets(tree) == 8 * 1326 + 56 * 22100 * 1176 > 10**9
    assert A.buckets_for_abstract_infosets(tree, 40_000) == (None, 690)
    assert A.buckets_for_abstract_infosets(tree, 3_600_000) == (None, 64_261)
    assert A.buckets_for_abstract_infosets(tree, 40_000, preflop_buckets=20) == (20, (40_000 - 160) // 56)
    with pytest.raises(ValueError, match="fewer than one bucket"):
        A.buckets_for_abstract_infosets(tree, 1000)
    assert math.comb(52, 3) == 22100


def test_abstract_infosets_counts_decision_nodes(small, small_abstraction):
    decisions = [n.round for n in small.nodes if n.kind == "decision"]
    expected = sum(small_abstraction.num_buckets[r] for r in decisions)
    assert small_abstraction.abstract_infosets(small) == expected == 8 * small_abstraction.num_buckets[0] + 56 * 40


def test_rounds_with_cards_to_come_use_strength_histograms():
    """A three-round game (a turn after the flop): the preflop's and the flop's
    features are hand-strength distributions over the cards to come, the turn's OCHS."""
    game = pyspiel.load_game("universal_poker(betting=limit,numPlayers=2,numRounds=3,blind=50 100,"
                             "raiseSize=100 100 200,firstPlayer=1 2 2,maxRaises=1 1 1,numSuits=2,numRanks=5,"
                             "numHoleCards=2,numBoardCards=0 3 1,stack=20000 20000)")  # fmt: skip
    tree = PublicTree(game)
    abstraction = A.kmeans_abstraction(tree, (5, 6, 6))  # preflop k-means: histograms over flop + turn
    assert abstraction.num_buckets == (5, 6, 6)
    assert [b.shape for b in abstraction.buckets] == [(1, 45), (tree.num_boards[1], 45), (tree.num_boards[2], 45)]
    assert "distribution" in abstraction.description["rounds"][0]["features"]
    assert "distribution" in abstraction.description["rounds"][1]["features"]
    assert "OCHS" in abstraction.description["rounds"][2]["features"]
    counts = A.strength_histograms(tree, tree.board_cards(1, 0)[None], 4)[0]
    free = ~tree.deck.conflicts(tree.board_cards(1, 0))
    assert np.all(counts[free].sum(axis=1) == 10 - 3 - 2) and np.all(counts[~free] == 0)


def test_example_builds_and_saves(tmp_path):
    out = tmp_path / "tiny.npz"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "cfrx_examples", "card_abstraction.py"), f"--game={TINY}",
                           "--buckets=,5", f"--output={out}"], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "abstract infosets" in proc.stdout and out.exists()
    assert A.CardAbstraction.load(out, PublicTree(pyspiel.load_game(TINY))).num_buckets == (16, 5)


def test_opponent_groups_partition_the_hands_weakest_first(small):
    groups = A.opponent_groups(small, 4)
    equity = A.preflop_equity(small)
    assert groups.shape == (4, small.deck.num_hands) and np.all(groups.sum(axis=0) == 1)
    means = [equity[g].mean() for g in groups]
    assert means == sorted(means)
    classes = A.preflop_classes(small.deck)
    for c in np.unique(classes):  # a class is never split
        assert len({int(np.argmax(groups[:, h])) for h in np.flatnonzero(classes == c)}) == 1


def test_kmeans_converges_to_a_lloyd_fixed_point():
    """With Hamerly's bounds skipping most distance queries, a run to convergence
    still ends where every point's centre is its nearest (checked by brute force)."""
    rng = np.random.default_rng(2)
    points = rng.random((3000, 4)) ** 3  # skewed, as hand-strength features are
    weights = rng.integers(1, 25, 3000).astype(float)
    result = A.weighted_kmeans(points, weights, 60, seed=5, max_iterations=1000, tolerance=0.0)
    distance = ((points[:, None, :] - result.centres[None]) ** 2).sum(axis=2)
    own = distance[np.arange(3000), result.labels]
    assert np.all(own <= distance.min(axis=1) + 1e-12)
    assert np.bincount(result.labels, minlength=60).min() >= 1
    assert result.distortion == pytest.approx(float(weights @ own), rel=1e-9)


def test_distinct_rows_equal_numpy_unique():
    rows = np.random.default_rng(3).integers(0, 3, (2000, 4)).astype(float) / 2
    distinct, inverse = A.distinct_rows(rows)
    expected = np.unique(rows, axis=0)
    assert np.array_equal(distinct, expected) and np.array_equal(distinct[inverse], rows)


@pytest.mark.slow
def test_full_flop_holdem_at_the_papers_40k_size(tmp_path):
    """52-card FHP, 40,000 abstract infosets (~30 s): sizes, every bucket used,
    OCHS of a few (board, hand) by enumeration, save/load."""
    tree = PublicTree(pyspiel.load_game("flop_holdem"))
    abstraction = A.kmeans_abstraction(tree, A.buckets_for_abstract_infosets(tree, 40_000))
    assert abstraction.num_buckets == (169, 690) and abstraction.abstract_infosets(tree) == 39_992
    used = abstraction.buckets[1]
    assert set(np.unique(used[used >= 0]).tolist()) == set(range(690))
    assert (used >= 0).sum() == 1755 * 1176
    groups = A.opponent_groups(tree, 8)
    for b in (0, 700, 1754):
        board = tree.board_cards(1, b)
        features = A.ochs_features(tree, board[None], groups)[0]
        for hand in np.flatnonzero(~tree.deck.conflicts(board))[[0, 500]]:
            for g, group in enumerate(groups):
                score, count = _equity_by_enumeration(tree.deck, board, hand, np.flatnonzero(group))
                assert features[hand, g] == pytest.approx(score / (2 * count), abs=1e-12)
    abstraction.save(tmp_path / "fhp_40k.npz")
    assert A.CardAbstraction.load(tmp_path / "fhp_40k.npz", tree).num_buckets == (169, 690)


def test_perfect_recall_refinement():
    """`perfect_recall`: each later bucket determines the earlier ones (one
    preflop bucket per flop bucket, on every board of every round), no coarser
    than the original (same buckets within a refined one), the counts are the
    pairs that occur, suit-invariant buckets stay so; sizes in the paper's terms."""
    game = pyspiel.load_game("universal_poker(betting=limit,numPlayers=2,numRounds=3,blind=50 100,"
                             "raiseSize=100 100 200,firstPlayer=1 2 2,maxRaises=1 1 1,numSuits=2,numRanks=5,"
                             "numHoleCards=2,numBoardCards=0 3 1,stack=20000 20000)")  # fmt: skip
    tree = PublicTree(game)
    coarse = A.kmeans_abstraction(tree, (3, 2, 2))
    refined = A.perfect_recall(tree, coarse)
    for r in (1, 2):
        before = np.arange(tree.num_boards[r]) // tree.fan_out[r] if r == 2 else np.zeros(tree.num_boards[r], int)
        mine, earlier, original = refined.buckets[r], refined.buckets[r - 1][before], coarse.buckets[r]
        valid = mine >= 0
        assert np.array_equal(valid, original >= 0)
        for ids in (earlier[valid], original[valid]):  # a refined bucket has one earlier and one original bucket
            assert len(np.unique(np.stack([mine[valid], ids]), axis=1)[0]) == len(np.unique(mine[valid]))
        assert refined.num_buckets[r] == len(np.unique(mine[valid])) <= refined.num_buckets[r - 1] * coarse.num_buckets[r]
    assert refined.description["recall"] == "perfect" and refined.num_buckets[2] > coarse.num_buckets[2]
    from openspiel_cfrx.poker.abstract_cfr import check_abstraction

    check_abstraction(tree, refined, strict=True)  # still suit-invariant, bucket by bucket
    full = PublicTree(pyspiel.load_game("flop_holdem"))
    assert A.buckets_for_abstract_infosets(full, 40_000, recall="perfect") == (None, 690 // 169)
    assert A.buckets_for_abstract_infosets(full, 3_600_000, recall="perfect") == (None, 64_261 // 169)
    with pytest.raises(ValueError, match="recall must be 'imperfect' or 'perfect'"):
        A.buckets_for_abstract_infosets(full, 40_000, recall="full")
