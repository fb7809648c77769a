"""Vector CFR on a card abstraction (`VectorCFR(..., abstraction=...)`,
`poker.abstract_cfr`): a lossless abstraction reproduces the lossless solver,
the abstract best response, the mapped-back strategy measured in the full
game, checkpoints, and refusals of bad input. The abstractions are built
here (one bucket per (board, hand); hand-strength quantiles; random)."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import exploitability

import games  # noqa: F401  (registers flop_holdem)
from openspiel_cfrx.poker import PublicTree, PublicTreePolicy, poker_nash_conv, rank_hands
from openspiel_cfrx.poker.abstract_cfr import abstract_best_response
from openspiel_cfrx.poker.public_tree import DEAL, DECISION, MIX
from openspiel_cfrx.poker.vector_cfr import VectorCFR

TINY = "flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"


@dataclasses.dataclass
class Abstraction:
    buckets: tuple
    num_buckets: tuple


def _free(tree, rnd):
    """[boards, H]: hands not meeting each board of round `rnd`."""
    boards = [tree.board_cards(rnd, b) for b in range(tree.num_boards[rnd])]
    return np.stack([~tree.deck.conflicts(board)[tree.hands] for board in boards]), boards


def lossless(tree):
    """One bucket per (board, hand) of every round (-1 where the hand meets the board)."""
    buckets, counts = [], []
    for r in range(tree.num_rounds):
        free, _ = _free(tree, r)
        ids = np.where(free, np.arange(free.size).reshape(free.shape), -1).astype(np.int32)
        buckets.append(ids)
        counts.append(free.size)
    return Abstraction(tuple(buckets), tuple(counts))


def strength(tree, k, preflop="classes"):
    """Preflop: one bucket per (ranks, suited) class ("classes") or a single
    bucket ("one"); later rounds: k quantiles of the hand's exact strength on the
    board (suit-invariant). With preflop="one" the abstraction has perfect
    recall (a flop bucket determines the only preflop bucket)."""
    deck = tree.deck
    cards = deck.hand_cards[tree.hands]
    ranks = np.sort(deck.rank(cards), axis=1)
    key = ranks[:, 0] * deck.num_ranks + ranks[:, 1] + deck.num_ranks**2 * (deck.suit(cards[:, 0]) == deck.suit(cards[:, 1]))
    pre = np.unique(key, return_inverse=True)[1] if preflop == "classes" else np.zeros(len(cards), dtype=int)
    buckets, counts = [pre[None].astype(np.int32)], [int(pre.max()) + 1]
    for r in range(1, tree.num_rounds):
        free, boards = _free(tree, r)
        ids = np.full(free.shape, -1, dtype=np.int32)
        for b, board in enumerate(boards):
            value = rank_hands(cards, board, deck.num_suits)[free[b]]
            weaker = np.searchsorted(np.sort(value), value)  # hands strictly weaker: ties share a bucket
            ids[b, free[b]] = weaker * k // len(value)
        buckets.append(ids)
        counts.append(k)
    return Abstraction(tuple(buckets), tuple(counts))


def random_buckets(tree, k, seed=0):
    """k random buckets per round (not suit-invariant: trees without isomorphism)."""
    rng = np.random.default_rng(seed)
    buckets = []
    for r in range(tree.num_rounds):
        free, _ = _free(tree, r)
        buckets.append(np.where(free, rng.integers(0, k, free.shape), -1).astype(np.int32))
    return Abstraction(tuple(buckets), (k,) * tree.num_rounds)


@pytest.fixture(scope="module")
def tiny():
    return pyspiel.load_game(TINY)


@pytest.mark.parametrize("variant", ["cfr", "cfr+", "lcfr", "dcfr"])
@pytest.mark.parametrize("isomorphism", [False, True])
def test_a_lossless_abstraction_reproduces_the_lossless_solver(tiny, variant, isomorphism):
    """One bucket per (board, hand): the average strategy equals lossless
    VectorCFR's to 1e-9 after 12 iterations (float64 storage; alternating and
    simultaneous updates)."""
    tree = PublicTree(tiny, isomorphism=isomorphism, chunk_boards=4)
    for alternating in (True, False):
        plain = VectorCFR(tree, variant, alternating_updates=alternating, dtype=np.float64, verbose=False)
        bucketed = VectorCFR(tree, variant, alternating_updates=alternating, dtype=np.float64, verbose=False,
                             abstraction=lossless(tree))  # fmt: skip
        for _ in range(12):
            plain.iterate()
            bucketed.iterate()
        for n, node in enumerate(tree.nodes):
            if node.kind == DECISION:
                boards = tree.num_boards[node.round]
                np.testing.assert_allclose(bucketed.average_strategy(n, 0, boards), plain.average_strategy(n, 0, boards),
                                           rtol=0, atol=1e-9)  # fmt: skip
                free = _free(tree, node.round)[0]  # a hand meeting the board: no infoset of the full game
                np.testing.assert_allclose(bucketed.current_strategy(n, 0, boards)[free],
                                           plain.current_strategy(n, 0, boards)[free], rtol=0, atol=1e-9)  # fmt: skip
        assert tree.nash_conv(bucketed.average_strategy) == pytest.approx(tree.nash_conv(plain.average_strategy), abs=1e-9)


def test_isomorphism_weighs_each_member_by_its_class_size():
    """A suit-invariant abstraction whose buckets merge boards of classes of
    different sizes (3 suits: 1 to 6 boards per class) solves to the same
    strategy on one board per class (members weighted by class size) as on
    every board, to 1e-9; so do the abstract best responses."""
    game = pyspiel.load_game("flop_holdem(num_ranks=4,num_suits=3,max_raises=1 1)")
    iso, every = PublicTree(game), PublicTree(game, isomorphism=False)
    assert len(set(np.round(iso.first_weights * 6).tolist())) >= 3
    solvers = [VectorCFR(tree, "lcfr", dtype=np.float64, verbose=False, abstraction=strength(tree, 3))
               for tree in (iso, every)]  # fmt: skip
    for _ in range(10):
        for solver in solvers:
            solver.iterate()
    full_index = {tuple(board): i for i, board in enumerate(every.first_boards.tolist())}
    on_every = [full_index[tuple(board)] for board in iso.first_boards.tolist()]
    for n, node in enumerate(iso.nodes):
        if node.kind == DECISION:
            mine = solvers[0].average_strategy(n, 0, iso.num_boards[node.round])
            theirs = solvers[1].average_strategy(n, 0, every.num_boards[node.round])
            np.testing.assert_allclose(mine, theirs if node.round == 0 else theirs[on_every], rtol=0, atol=1e-9)
    assert solvers[0].abstract_nash_conv() == pytest.approx(solvers[1].abstract_nash_conv(), abs=1e-9)


@pytest.mark.parametrize("isomorphism", [False, True])
def test_the_lossless_abstract_best_response_is_the_best_response(tiny, isomorphism):
    tree = PublicTree(tiny, isomorphism=isomorphism)
    solver = VectorCFR(tree, "cfr+", verbose=False)
    for _ in range(5):
        solver.iterate()
    values, _ = abstract_best_response(tree, lossless(tree), solver.average_strategy)
    np.testing.assert_allclose(values, tree.best_response_values(solver.average_strategy), rtol=0, atol=1e-12)


def test_the_abstract_best_response_beats_every_bucket_constant_strategy(tiny):
    """The bucket best response is a strategy constant on buckets: its value lies
    between any other such strategy's (random pure ones here) and the full
    game's best response; with perfect recall (preflop="one") it is the best."""
    tree = PublicTree(tiny, isomorphism=False)
    rng = np.random.default_rng(3)
    strategy = _random_strategy(tree, rng)
    for preflop in ("one", "classes"):
        abstraction = strength(tree, 3, preflop)
        values, choices = abstract_best_response(tree, abstraction, strategy)
        full = tree.best_response_values(strategy)
        assert np.all(values <= full + 1e-12)
        chosen = _pure(tree, abstraction, choices)
        np.testing.assert_allclose(_values_against(tree, chosen, strategy), values, rtol=0, atol=1e-12)
        if preflop == "one":
            for _ in range(20):
                other = {n: rng.integers(0, len(tree.nodes[n].legal), len(c)) for n, c in choices.items()}
                assert np.all(_values_against(tree, _pure(tree, abstraction, other), strategy) <= values + 1e-12)


def _random_strategy(tree, rng):
    arrays = {n: rng.random((tree.num_boards[node.round], tree.deck.num_hands, len(node.legal))) + 0.05
              for n, node in enumerate(tree.nodes) if node.kind == DECISION}  # fmt: skip
    arrays = {n: a / a.sum(axis=2, keepdims=True) for n, a in arrays.items()}
    return lambda n, lo, hi: arrays[n][lo:hi]


def _pure(tree, abstraction, choices):
    """The strategy playing choices[node][bucket] (hands meeting the board: action 0)."""
    def strategy(n, lo, hi):
        ids = abstraction.buckets[tree.nodes[n].round][lo:hi]
        return np.eye(len(tree.nodes[n].legal))[np.where(ids >= 0, choices[n][np.maximum(ids, 0)], 0)]

    return strategy


def _values_against(tree, mine, theirs):
    """[2]: player p's value playing `mine` against the other's `theirs`."""
    out = []
    for p in (0, 1):
        both = lambda n, lo, hi, p=p: (mine if tree.nodes[n].player == p else theirs)(n, lo, hi)  # noqa: E731
        out.append(tree.walk(both, tuple(MIX if q == p else None for q in (0, 1))).sum(axis=1)[p])
    return np.array(out)


@pytest.mark.parametrize("variant, bound", [("lcfr", 0.15), ("cfr+", 0.02)])
def test_a_coarse_perfect_recall_abstraction_converges_in_the_abstract_game(tiny, variant, bound):
    """Preflop one bucket, flop 4 strength quantiles (perfect recall, 20 abstract
    infosets): the abstract game's NashConv of the average falls to near 0
    (measured, chips: LCFR 11.2 at 10 iterations, 0.092 at 400; CFR+ 6.05,
    0.0119) while the full game's stays at ~48.4."""
    tree = PublicTree(tiny)
    solver = VectorCFR(tree, variant, verbose=False, abstraction=strength(tree, 4, preflop="one"))
    first, last = solver.run(400, evaluate_every=lambda t: t in (10, 400), progress=False)
    assert last["abstract_nash_conv"] < min(bound, first["abstract_nash_conv"] / 50)
    assert last["nash_conv"] > 40.0
    assert solver.num_infosets == sum(1 if node.round == 0 else 4 for node in tree.nodes if node.kind == DECISION)


def test_the_mapped_back_strategy_is_measured_as_the_state_based_evaluator_measures_it(tiny):
    """PublicTree.nash_conv of an abstract solve's average strategy (suit
    isomorphism: one board per class) equals the state-based evaluator's on the
    policy export (every board, the strategy read state by state through
    `PublicTree.locate`)."""
    tree = PublicTree(tiny)
    solver = VectorCFR(tree, "cfr+", verbose=False, abstraction=strength(tree, 2))
    for _ in range(10):
        solver.iterate()
    exported = PublicTreePolicy(tiny, tree, solver.average_strategy)
    assert tree.nash_conv(solver.average_strategy) == pytest.approx(poker_nash_conv(tiny, exported), abs=1e-9)


@pytest.mark.slow
def test_the_mapped_back_strategy_is_measured_as_openspiel_measures_it():
    """The same against OpenSpiel's exploitability.nash_conv of a TabularPolicy
    (on max_raises 0 1, whose OpenSpiel tree walks in ~20 s)."""
    game = pyspiel.load_game("flop_holdem(num_ranks=4,num_suits=2,max_raises=0 1)")
    tree = PublicTree(game)
    solver = VectorCFR(tree, "lcfr", verbose=False, abstraction=strength(tree, 3))
    for _ in range(10):
        solver.iterate()
    exported = PublicTreePolicy(game, tree, solver.average_strategy)
    table = policy_lib.tabular_policy_from_callable(game, exported.action_probabilities)
    assert tree.nash_conv(solver.average_strategy) == pytest.approx(exploitability.nash_conv(game, table), abs=1e-9)


def test_random_buckets_run_and_checkpoints_resume_exactly(tiny, tmp_path):
    tree = PublicTree(tiny, isomorphism=False, chunk_boards=5)
    abstraction = random_buckets(tree, 3)
    straight = VectorCFR(tree, "dcfr", verbose=False, abstraction=abstraction)
    straight.run(8, progress=False)
    path = str(tmp_path / "abstract.npz")
    first = VectorCFR(tree, "dcfr", verbose=False, abstraction=abstraction)
    first.run(3, checkpoint=path, progress=False)
    resumed = VectorCFR(tree, "dcfr", verbose=False, abstraction=abstraction)
    resumed.load(path)
    resumed.run(8, progress=False)
    for n in straight.buckets.strategy:
        np.testing.assert_array_equal(resumed.buckets.average[n], straight.buckets.average[n])
        np.testing.assert_array_equal(resumed.buckets.minimizers[n].cumulative_regret,
                                      straight.buckets.minimizers[n].cumulative_regret)  # fmt: skip
    assert resumed.evaluate()["nash_conv"] == straight.evaluate()["nash_conv"]
    assert resumed.nodes_touched == straight.nodes_touched == 8 * 2 * tree.nodes_per_walk()
    with pytest.raises(ValueError, match="written with card abstraction .*this solver has"):
        VectorCFR(tree, "dcfr", verbose=False, abstraction=random_buckets(tree, 3, seed=1)).load(path)
    with pytest.raises(ValueError, match="this solver has none"):
        VectorCFR(tree, "dcfr", verbose=False).load(path)
    lossless_path = str(tmp_path / "lossless.npz")
    VectorCFR(tree, "dcfr", verbose=False).save(lossless_path)
    with pytest.raises(ValueError, match="written without a card abstraction"):
        VectorCFR(tree, "dcfr", verbose=False, abstraction=abstraction).load(lossless_path)


def test_memory_is_per_bucket(tiny):
    tree = PublicTree(tiny)
    abstract = VectorCFR(tree, "cfr+", verbose=False, abstraction=strength(tree, 2))
    plain = VectorCFR(tree, "cfr+", verbose=False)
    assert abstract.memory_bytes() < plain.memory_bytes() / 5
    stored = sum(a.nbytes for a in abstract.buckets.arrays().values())
    assert stored <= abstract.memory_bytes() <= stored + 2 * 8 * 3 * 20 * len(tree.first_chunks()) * len(tree.nodes)


def test_nodes_per_walk_counts_every_history_once():
    """Without isomorphism a walk's count is the game's histories counted as
    Deep CFR does (hole cards and board cards one node per card dealt), with
    unordered deals: checked by enumerating the 4x2 game's betting x deals."""
    game = pyspiel.load_game(TINY)
    tree = PublicTree(game, isomorphism=False)
    deck = tree.deck
    pairs = [(a, b) for a, b in itertools.permutations(range(deck.num_hands), 2)
             if not set(deck.hand_cards[a]) & set(deck.hand_cards[b])]  # fmt: skip
    on_flops = sum(1 for b in range(tree.num_boards[1]) for x, y in pairs
                   if not set(tree.board_cards(1, b).tolist()) & (set(deck.hand_cards[x]) | set(deck.hand_cards[y])))  # fmt: skip
    count = 4 * len(pairs)  # the hole cards
    for node in tree.nodes:
        cards = 3 if node.kind == DEAL else 1
        count += cards * (len(pairs) if node.round == 0 else on_flops)
    assert tree.nodes_per_walk() == count
    iso = PublicTree(game)
    assert iso.nodes_per_walk() < count == iso.nodes_per_walk(represented=True)


def test_bad_abstractions_are_refused_in_one_line(tiny):
    tree = PublicTree(tiny)
    good = strength(tree, 2)

    def refused(abstraction, match, variant="cfr+", on=tree):
        with pytest.raises(ValueError, match=match) as caught:
            VectorCFR(on, variant, verbose=False, abstraction=abstraction).iterate()
        assert "\n" not in str(caught.value)

    refused(good, "pcfr\\+ does not run on a card abstraction", variant="pcfr+")
    refused(good, "oftrl does not run on a card abstraction", variant="oftrl")
    refused(Abstraction(good.buckets[:1], good.num_buckets[:1]), "1 bucket arrays and 1 bucket counts; this game has 2")
    refused(Abstraction((good.buckets[0], good.buckets[1][:, :-1]), good.num_buckets), r"buckets\[1\] must be an integer array of shape")
    refused(Abstraction((good.buckets[0], good.buckets[1].astype(float)), good.num_buckets), "integer array")
    refused(Abstraction(good.buckets, (good.num_buckets[0], 1)), r"buckets\[1\] holds ids in \[-1, 1\]; they must lie in \[-1, 1\)")
    refused(Abstraction(good.buckets, (good.num_buckets[0], 0)), r"num_buckets\[1\] must be an int >= 1")
    refused(object(), "needs `buckets` and `num_buckets`")
    holes = good.buckets[1].copy()
    holes[tuple(np.argwhere(holes >= 0)[0])] = -1
    refused(Abstraction((good.buckets[0], holes), good.num_buckets), "gives no bucket \\(-1\\) to hand")
    suited = good.buckets[0].copy()
    moved = np.flatnonzero(tree.hand_perms[1] != np.arange(tree.num_hands))[0]
    suited[0, moved] = suited[0, 0]  # a suited hand joins the pairs' bucket, its suit relabelling does not
    refused(Abstraction((suited, good.buckets[1]), good.num_buckets), "not suit-invariant in round 0")
    every = PublicTree(tiny, isomorphism=False)
    VectorCFR(every, "cfr", verbose=False, abstraction=random_buckets(every, 2)).iterate()  # no isomorphism: any buckets
    three = PublicTree(pyspiel.load_game("flop_holdem(num_ranks=4,num_suits=3,max_raises=1 1)"))
    flops = strength(three, 2).buckets[1].copy()
    c = next(c for c, board in enumerate(three.first_boards) if len(set(three.deck.suit(board).tolist())) == 1)
    flops[c, flops[c] >= 0] = np.arange((flops[c] >= 0).sum()) % 2  # a monotone flop (the other two suits swap)
    refused(Abstraction((strength(three, 2).buckets[0], flops), (strength(three, 2).num_buckets[0], 2)),
            "not suit-invariant on first-deal board", on=three)  # fmt: skip
