"""Card abstraction for limit hold'em: buckets of (board, hand) per betting round,
built by k-means on hand-strength features computed exactly with the engine.

The Deep CFR paper (Brown et al. 2019, Section 6 and Figure 2) compares Deep CFR
on flop hold'em (FHP) with domain-specific abstractions of 40,000 and 3.6 million
clusters: "the more than 10^9 different decisions in the game were clustered into
40,000 abstract decisions ... using K-means clustering on domain-specific
features" (Johanson et al. 2013; Ganzfried & Sandholm 2014). A `CardAbstraction`
is such a clustering, aligned with one `PublicTree`'s board indexing: per round r
an int32 array [tree.num_boards[r], tree.num_hands] of bucket ids (-1 where the
hand meets the board). A solver on the abstraction keeps one infoset per
(decision node, bucket), so the paper's "clusters" are
`abstract_infosets(tree)` = sum over decision nodes of the node's round's buckets.

Features (Johanson, Burch, Valenzano & Bowling 2013, "Evaluating state-space
abstractions in extensive-form games", AAMAS):

* no board yet (the preflop): lossless by default, hands equal up to suit
  relabelling share a bucket (pair / suited / offsuit by ranks; 169 classes of a
  52-card deck, any deck here); a smaller k clusters the hand-strength
  distributions below.
* the last round (no cards to come: FHP's flop, HULH's river): opponent cluster
  hand strength (OCHS, Johanson et al.'s recommended river feature).
  The preflop classes are clustered into `opponent_clusters` (default 8)
  groups, here by preflop equity (`opponent_groups`; how the opponent's hands
  are grouped is our choice, a 1-D k-means); feature c of
  (board, hand) is the hand's probability of winning plus half of tying
  against a uniformly random opponent hand of group c sharing no card with the
  board or the hand (where no hand of group c is compatible: the equity
  against every compatible hand).
* rounds with cards to come (HULH's flop and turn; the preflop when k-means is
  asked there): the hand-strength distribution (Johanson et al.'s
  "distribution-aware"): the histogram, over every completion of the board to
  the last round, of the hand's final equity against a uniform opponent, in
  `histogram_bins` equal bins. Johanson et al. cluster it under the earth
  mover's distance; in one dimension EMD is the L1 distance between the
  cumulative histograms, and k-means here runs on the cumulative histograms
  (the last entry, always 1, dropped) under squared Euclidean distance, the
  metric whose cluster centres are means. Ganzfried & Sandholm's (2014)
  potential-aware EMD (histograms over the next round's clusters) is not
  implemented: it matters for rounds with cards to come, which FHP's flop is not.

Every feature is a ratio of exact integers (win and tie counts from
`showdown.BoardShowdowns` sweeps with 0/1 reach; completion counts), so (board,
hand) pairs related by a suit relabelling get bit-identical features and hence
the same bucket: the buckets are suit-invariant, as `isomorphism=True` needs
(its flop boards are suit-class representatives).

Clustering (`weighted_kmeans`): Lloyd's algorithm with weighted points on the
distinct feature vectors of a round (weight: how many (board, hand) of the whole
game share the vector; a representative flop counts its class's multiplicity,
so the clustering matches the full game's boards), nearest centres by
`scipy.spatial.cKDTree`, seeded by k-means++ (Arthur & Vassilvitskii 2007)
drawn in doubling batches (1, 1, 2, 4, ... centres, each batch by D^2
sampling against the centres so far, as k-means|| of Bahmani et al. 2012
without its reclustering step), so k in the tens of thousands seeds in ~log2(k)
nearest-centre passes. Deterministic given the seed; every bucket is non-empty.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import time
import zipfile
from collections.abc import Callable, Sequence

import numpy as np
from scipy.spatial import cKDTree

from openspiel_cfrx.checkpoint_io import array_digest, atomic_write
from openspiel_cfrx.poker.cards import Deck
from openspiel_cfrx.poker.evaluator import rank_hands
from openspiel_cfrx.poker.isomorphism import canonical_boards, hand_permutation, suit_permutations
from openspiel_cfrx.poker.public_tree import DECISION, PublicTree
from openspiel_cfrx.poker.showdown import BoardShowdowns, fold_values_batch

FORMAT = "openspiel_cfrx.card_abstraction/1"
FINAL_BOARDS_PER_BATCH = 256  # final boards ranked and swept at once (memory ~ this x hands x 60 bytes)
MAX_EVALUATIONS = 2e9  # (final board, hand) strength evaluations a build may need before it is refused


class CardAbstractionMismatchError(ValueError):
    """A saved card abstraction does not belong to the given tree."""


class CardAbstractionTooLargeError(MemoryError, ValueError):
    """Building the abstraction would need more memory or time than allowed."""


# ----- sizes in the paper's terms -------------------------------------------


def _decision_rounds(tree: PublicTree) -> list[int]:
    return [node.round for node in tree.nodes if node.kind == DECISION]


def game_infosets(tree: PublicTree) -> int:
    """The game's infosets without any abstraction: sum over decision nodes of
    (boards of the node's round, every deal order, no isomorphism) x (hands not
    meeting the board). Full FHP: 8 x 1,326 + 56 x 22,100 x 1,176 = 1.46e9, the
    paper's "over 10^9" (Section 5)."""
    n = tree.deck.num_cards
    per_round, boards, dealt = [], 1, 0
    for r in range(tree.num_rounds):
        boards *= math.comb(n - dealt, tree.rules.board_cards[r])
        dealt += tree.rules.board_cards[r]
        per_round.append(boards * math.comb(n - dealt, 2))
    return sum(per_round[r] for r in _decision_rounds(tree))


def preflop_classes(deck: Deck) -> np.ndarray:
    """[H] class id of each hand: hands equal up to suit relabelling share a class
    (a pair, or two ranks suited or offsuit: 169 classes of a 52-card deck)."""
    mapped = np.stack([hand_permutation(deck, p) for p in suit_permutations(deck.num_suits)])
    _, ids = np.unique(mapped.min(axis=0), return_inverse=True)
    return ids.astype(np.int32)


def buckets_for_abstract_infosets(tree: PublicTree, abstract_infosets: int, preflop_buckets: int | None = None,
                                  recall: str = "imperfect") -> tuple[int | None, ...]:  # fmt: skip
    """The buckets per round that give about `abstract_infosets` (the paper's
    "clusters", Figure 2: 40,000 and 3.6 million on FHP): rounds without a board
    get `preflop_buckets` (None: the lossless classes), every later round the
    same k = (abstract_infosets - preflop part) // (their decision nodes).
    Full FHP (8 preflop and 56 flop decision nodes): 40,000 -> k_flop = 690,
    3.6M -> k_flop = 64,261. recall="perfect": the k to cluster each round
    into before `perfect_recall` refines it by the earlier rounds' buckets (k
    divided by the product of the earlier counts, at least 1: 40,000 -> 690 //
    169 = 4 flop clusters per preflop class, at most 676 refined flop buckets)."""
    if recall not in ("imperfect", "perfect"):
        raise ValueError(f"recall must be 'imperfect' or 'perfect', got {recall!r}")
    rounds = _decision_rounds(tree)
    early = [r for r in range(tree.num_rounds) if tree.board_size[r] == 0]
    pre = len(np.unique(preflop_classes(tree.deck))) if preflop_buckets is None else int(preflop_buckets)
    later_nodes = sum(1 for r in rounds if r not in early)
    budget = int(abstract_infosets) - pre * sum(1 for r in rounds if r in early)
    if later_nodes == 0 or budget < later_nodes:
        raise ValueError(f"{abstract_infosets:,} abstract infosets leave {budget:,} for the {later_nodes} decision "
                         f"nodes with a board: fewer than one bucket each; ask for more")  # fmt: skip
    ks = [preflop_buckets if r in early else budget // later_nodes for r in range(tree.num_rounds)]
    if recall == "perfect":
        product = pre
        for r in range(tree.num_rounds):
            if r not in early:
                ks[r] = max(1, ks[r] // product)
                product *= ks[r]
    return tuple(ks)


# ----- the abstraction ------------------------------------------------------


def tree_fingerprint(tree: PublicTree) -> dict:
    """What a card abstraction must agree on with the tree it is used with: the
    game (as a universal_poker game string), isomorphism and the board indexing."""
    params = tree.rules.universal_poker_params()
    game = "universal_poker(" + ",".join(f"{k}={v}" for k, v in params.items()) + ")"
    h = hashlib.sha256(np.ascontiguousarray(tree.first_boards, dtype=np.int64).tobytes())
    h.update(np.asarray(tree.fan_out, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(tree.hands, dtype=np.int64).tobytes())
    return {"game": game, "isomorphism": bool(tree.isomorphism), "num_boards": [int(b) for b in tree.num_boards],
            "num_hands": int(tree.num_hands), "boards_sha256": h.hexdigest()}  # fmt: skip


def _check_tree(tree: PublicTree) -> None:
    if not isinstance(tree, PublicTree):
        raise TypeError(f"a card abstraction is built on a PublicTree, got {type(tree).__name__}")
    if tree.subgame is not None:
        raise ValueError("a card abstraction covers a whole game's tree; this PublicTree is a subgame")


@dataclasses.dataclass
class CardAbstraction:
    """Buckets of (board, hand) per betting round, aligned with one PublicTree's board indexing.

    buckets: per round r, int32 [tree.num_boards[r], tree.num_hands]: bucket id in
      [0, num_buckets[r]), -1 where the hand meets the board.
    num_buckets: per round.
    description: how it was built (method, features, k per round, seed, the
      tree's fingerprint: game string, isomorphism, board indexing; counts).
    """

    buckets: tuple[np.ndarray, ...]
    num_buckets: tuple[int, ...]
    description: dict

    def __post_init__(self):
        self.buckets = tuple(np.asarray(b, dtype=np.int32) for b in self.buckets)
        self.num_buckets = tuple(int(k) for k in self.num_buckets)
        if len(self.buckets) != len(self.num_buckets):
            raise ValueError(f"{len(self.buckets)} bucket arrays for {len(self.num_buckets)} rounds' counts")
        for r, (b, k) in enumerate(zip(self.buckets, self.num_buckets, strict=True)):
            if b.ndim != 2 or (b.size and (b.min() < -1 or b.max() >= k)):
                raise ValueError(f"round {r}: buckets must be a [boards, hands] array of ids in [-1, {k})")

    def abstract_infosets(self, tree: PublicTree) -> int:
        """Sum over the tree's decision nodes of num_buckets[node.round]: the
        paper's "clusters" (Figure 2)."""
        self.check_tree(tree)
        return sum(self.num_buckets[r] for r in _decision_rounds(tree))

    def check_tree(self, tree: PublicTree) -> None:
        """CardAbstractionMismatchError (one line) unless built for `tree`'s game,
        isomorphism and board indexing."""
        _check_tree(tree)
        mine, theirs = self.description.get("tree", {}), tree_fingerprint(tree)
        for key in ("game", "isomorphism", "num_boards", "num_hands", "boards_sha256"):
            if mine.get(key) != theirs[key]:
                raise CardAbstractionMismatchError(
                    f"this card abstraction was built for another tree ({key}: {mine.get(key)!r}, the tree's: "
                    f"{theirs[key]!r}); build one for this game and isomorphism setting")  # fmt: skip

    def save(self, path) -> None:
        """Writes a compressed .npz (the buckets, the description as JSON, a SHA-256) atomically."""
        arrays = {f"buckets_{r}": b for r, b in enumerate(self.buckets)}
        arrays["num_buckets"] = np.asarray(self.num_buckets, dtype=np.int64)
        arrays["description"] = np.frombuffer(json.dumps(self.description, sort_keys=True).encode(), dtype=np.uint8)
        arrays["format"] = np.frombuffer(FORMAT.encode(), dtype=np.uint8)
        digest = np.frombuffer(array_digest(arrays).encode(), dtype=np.uint8)
        atomic_write(path, lambda f: np.savez_compressed(f, sha256=digest, **arrays))

    @classmethod
    def load(cls, path, tree: PublicTree) -> CardAbstraction:
        """The abstraction saved at `path`, checked against `tree` (one-line errors)."""
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {name: data[name] for name in data.files}
            stored = arrays.pop("sha256", None)
            if bytes(arrays.get("format", b"")).decode(errors="replace") != FORMAT or stored is None:
                raise ValueError(f"not a card abstraction ({FORMAT})")
            if bytes(stored).decode() != array_digest(arrays):
                raise ValueError("SHA-256 mismatch: the file is corrupt")
            counts = tuple(int(k) for k in arrays["num_buckets"])
            abstraction = cls(tuple(arrays[f"buckets_{r}"] for r in range(len(counts))), counts,
                              json.loads(bytes(arrays["description"]).decode()))  # fmt: skip
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
            raise ValueError(f"cannot read card abstraction {path}: {' '.join(str(e).split())}") from None
        abstraction.check_tree(tree)
        return abstraction

    def summary(self, tree: PublicTree) -> str:
        """Buckets per round, abstract infosets and the game's infosets, in one line."""
        return (f"buckets per round {list(self.num_buckets)}: {self.abstract_infosets(tree):,} abstract infosets "
                f"(sum over decision nodes of the round's buckets) for the game's {game_infosets(tree):,} infosets")  # fmt: skip


def _memory_limit(max_memory_bytes: int | None) -> int:
    if max_memory_bytes is not None:
        return int(max_memory_bytes)
    import psutil

    return int(0.6 * psutil.virtual_memory().available)


def _check_memory(needed: float, limit: int, what: str) -> None:
    if needed > limit:
        raise CardAbstractionTooLargeError(
            f"{what} needs ~{needed / 2**30:.2f} GiB, over the {limit / 2**30:.2f} GiB allowed "
            "(max_memory_bytes; default 60% of available memory); use a smaller deck or isomorphism=True")  # fmt: skip


def lossless_abstraction(tree: PublicTree, max_memory_bytes: int | None = None) -> CardAbstraction:
    """One bucket per (board, hand) of the tree: id board * H + hand, -1 where the
    hand meets the board (the tree's own infosets; with isomorphism, per board class)."""
    _check_tree(tree)
    H = tree.num_hands
    _check_memory(4.0 * sum(tree.num_boards) * H, _memory_limit(max_memory_bytes), "the lossless abstraction")
    if max(tree.num_boards) * H >= 2**31:
        raise CardAbstractionTooLargeError(f"{max(tree.num_boards) * H:,} (board, hand) pairs overflow int32 ids")
    buckets = []
    for r in range(tree.num_rounds):
        ids = np.arange(tree.num_boards[r] * H, dtype=np.int32).reshape(tree.num_boards[r], H)
        for lo, hi, boards in _round_board_batches(tree, r):
            ids[lo:hi][tree.deck.contains[tree.hands][:, boards].any(axis=2).T] = -1
        buckets.append(ids)
    counts = tuple(tree.num_boards[r] * H for r in range(tree.num_rounds))
    return CardAbstraction(tuple(buckets), counts, {"method": "lossless", "tree": tree_fingerprint(tree)})


def _round_board_batches(tree: PublicTree, rnd: int, batch: int = 64):
    """(lo, hi, boards [hi - lo, k]) over the tree's boards of round `rnd`, in order."""
    if tree.board_size[rnd] == 0:
        yield 0, 1, np.zeros((1, 0), dtype=np.int64)
        return
    first = tree.first_deal_round
    per_first = math.prod(tree.fan_out[first + 1 : rnd + 1])
    for lo in range(0, len(tree.first_boards), batch):
        boards = tree.first_boards[lo : lo + batch]
        for r in range(first + 1, rnd + 1):
            boards = _extend(tree.deck.num_cards, boards, tree.rules.board_cards[r])
        yield lo * per_first, lo * per_first + len(boards), boards


def _extend(num_cards: int, boards: np.ndarray, count: int) -> np.ndarray:
    """Each board followed by every combination of `count` remaining cards, in the
    engine's order (`PublicTree.board_cards`)."""
    out = []
    for board in boards:
        rest = np.setdiff1d(np.arange(num_cards), board)
        for extra in itertools.combinations(rest.tolist(), count):
            out.append(np.concatenate([board, extra]))
    return np.array(out, dtype=np.int64).reshape(-1, boards.shape[1] + count)


# ----- exact features -------------------------------------------------------


def showdown_counts(deck: Deck, boards: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact showdown counts on final boards: for each group g of opponent hands
    ([G, H] bool), board b and hand h, (2 wins + ties, compatible opponent hands)
    over the hands of g sharing no card with b or h, as [G, b, H] float64
    integers (zero where h meets b). Equity = first / (2 second)."""
    boards = np.asarray(boards, dtype=np.int64).reshape(len(boards), -1)
    ranks = np.stack([rank_hands(deck.hand_cards, board, deck.num_suits) for board in boards])
    free = ranks >= 0
    table = BoardShowdowns(ranks, deck.hand_cards, deck.card_hands, free)
    wins, total = np.zeros((len(groups),) + free.shape), np.zeros((len(groups),) + free.shape)
    for g, group in enumerate(groups):
        reach = (free & group[None]).astype(np.float64)
        compatible = fold_values_batch(reach, deck.hand_cards, deck.card_hands) * free
        # showdown = wins - losses, compatible = wins + ties + losses: their sum is 2 wins + ties
        wins[g] = table.showdown(reach) * free + compatible
        total[g] = compatible
    return wins, total


def _completion_batches(deck: Deck, boards: np.ndarray, count: int):
    """(board index [m], final boards [m, k + count]) over every completion of each
    board by `count` more cards, in batches of about FINAL_BOARDS_PER_BATCH."""
    if count == 0:
        for lo in range(0, len(boards), FINAL_BOARDS_PER_BATCH):
            yield np.arange(lo, min(lo + FINAL_BOARDS_PER_BATCH, len(boards))), boards[lo : lo + FINAL_BOARDS_PER_BATCH]
        return
    per = math.comb(deck.num_cards - boards.shape[1], count)
    step = max(1, FINAL_BOARDS_PER_BATCH // per)
    for lo in range(0, len(boards), step):
        chunk = boards[lo : lo + step]
        yield np.repeat(np.arange(lo, lo + len(chunk)), per), _extend(deck.num_cards, chunk, count)


def strength_histograms(tree: PublicTree, boards: np.ndarray, bins: int) -> np.ndarray:
    """[b, H, bins] integer counts: for each board and hand, the completions of the
    board to the last round that miss the hand, by the hand's final equity against
    a uniform opponent (bin floor(equity x bins), equity 1 in the last bin):
    Johanson et al.'s (2013) hand-strength distribution, before normalising."""
    deck, everyone = tree.deck, np.ones((1, tree.deck.num_hands), dtype=bool)
    to_come = tree.board_size[-1] - boards.shape[1]
    counts = np.zeros((len(boards), deck.num_hands, bins), dtype=np.int64)
    for index, final in _completion_batches(deck, boards, to_come):
        wins, total = showdown_counts(deck, final, everyone)
        ok = total[0] > 0
        equity = np.where(ok, wins[0], 0.0) / np.where(ok, 2 * total[0], 1.0)
        which = np.minimum((equity * bins).astype(np.int64), bins - 1)
        rows, hands = np.nonzero(ok)
        np.add.at(counts, (index[rows], hands, which[rows, hands]), 1)
    return counts


def cumulative_histogram(counts: np.ndarray) -> np.ndarray:
    """Normalised cumulative histograms [..., bins - 1] (the last entry, 1, dropped):
    k-means on these under squared Euclidean distance stands in for EMD (in one
    dimension EMD is the L1 distance between cumulative histograms). All zero
    where there are no counts."""
    total = counts.sum(axis=-1, keepdims=True)
    return np.cumsum(counts, axis=-1)[..., :-1] / np.maximum(total, 1)


def _preflop_sums(tree: PublicTree, bins: int | None) -> np.ndarray:
    """Per hand, summed over every final board of the whole deal: [H, 2] (2 wins +
    ties, compatible opponents) against a uniform opponent, or with `bins` the
    [H, bins] strength histogram. Exact integers: each first-deal board counts
    with its class multiplicity, then the sum is symmetrised over suit
    permutations (`PublicTree` module doc; num_suits! x the sum over all boards)."""
    deck, first = tree.deck, tree.first_deal_round
    finals = tree.num_boards[-1] * deck.num_hands
    if finals > MAX_EVALUATIONS:
        raise CardAbstractionTooLargeError(
            f"preflop features rank {finals:.2g} (final board, hand) pairs, over {MAX_EVALUATIONS:.0e}; "
            "use a smaller deck")  # fmt: skip
    multiplicity = np.rint(tree.first_weights * len(tree.hand_perms)).astype(np.int64)
    everyone = np.ones((1, deck.num_hands), dtype=bool)
    total = np.zeros((deck.num_hands, bins or 2), dtype=np.int64)
    for lo in range(0, len(tree.first_boards), 64):
        boards, weight = tree.first_boards[lo : lo + 64], multiplicity[lo : lo + 64]
        if bins:
            total += np.einsum("bhk,b->hk", strength_histograms(tree, boards, bins), weight)
            continue
        for index, final in _completion_batches(deck, boards, tree.board_size[-1] - tree.board_size[first]):
            wins, compatible = showdown_counts(deck, final, everyone)
            total[:, 0] += np.rint(wins[0].T @ weight[index]).astype(np.int64)
            total[:, 1] += np.rint(compatible[0].T @ weight[index]).astype(np.int64)
    return total[tree.hand_perms].sum(axis=0)


def preflop_equity(tree: PublicTree) -> np.ndarray:
    """[H] each hand's equity (P(win) + P(tie) / 2) against a uniform opponent hand,
    over every deal of the board (exact)."""
    sums = _preflop_sums(tree, None)
    return sums[:, 0] / (2.0 * sums[:, 1])


def opponent_groups(tree: PublicTree, num_groups: int = 8, seed: int = 0) -> np.ndarray:
    """[G, H] bool: the opponent clusters of OCHS (Johanson et al. 2013): the
    preflop classes clustered by preflop equity (1-D weighted k-means, weights
    their hands; G = min(num_groups, classes)), ordered from the weakest group up."""
    classes = preflop_classes(tree.deck)
    equity = preflop_equity(tree)
    count = int(classes.max()) + 1
    first = np.unique(classes, return_index=True)[1]
    points, weights = equity[first][:, None], np.bincount(classes, minlength=count).astype(np.float64)
    result = weighted_kmeans(points, weights, min(int(num_groups), count), seed=seed)
    rank = np.argsort(np.argsort(result.centres[:, 0], kind="stable"), kind="stable")  # weakest group first
    return rank[result.labels][classes][None, :] == np.arange(len(rank))[:, None]


def ochs_features(tree: PublicTree, boards: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """[b, H, G] opponent cluster hand strength on final boards: the hand's equity
    against the compatible hands of each group (where a group has none: against
    every compatible hand; 0.5 if there is none at all)."""
    wins, total = showdown_counts(tree.deck, boards, np.concatenate([groups, np.ones_like(groups[:1])]))
    ratio = np.where(total > 0, wins, 1.0) / np.where(total > 0, 2 * total, 2.0)
    features = np.where(total[:-1] > 0, ratio[:-1], ratio[-1:])
    return np.moveaxis(features, 0, -1)


# ----- weighted k-means -----------------------------------------------------


@dataclasses.dataclass
class KMeansResult:
    labels: np.ndarray  # [n] cluster of each point, in [0, k); every cluster non-empty
    centres: np.ndarray  # [k, d] the weighted mean of each cluster's points
    distortion: float  # sum over points of weight x squared distance to its centre
    iterations: int  # Lloyd iterations run
    seconds: float


def _nearest(centres: np.ndarray, points: np.ndarray, workers: int) -> tuple[np.ndarray, np.ndarray]:
    """(squared distance to the nearest centre, its index) of every point."""
    distance, index = cKDTree(centres).query(points, workers=workers)
    return distance * distance, index


def _seed_centres(points: np.ndarray, weights: np.ndarray, k: int, rng: np.random.Generator,
                  workers: int) -> np.ndarray:  # fmt: skip
    """k-means++ seeding (Arthur & Vassilvitskii 2007) in doubling batches: the
    first centre by weight, then batches of as many centres as there are already
    (1, 2, 4, ...), each batch drawn without replacement with probability
    proportional to weight x squared distance to the centres so far
    (Efraimidis-Spirakis keys), as k-means|| (Bahmani et al. 2012) without its
    reclustering step: ~log2(k) nearest-centre passes instead of k. Points must
    be distinct and at least k."""
    chosen = [int(rng.choice(len(points), p=weights / weights.sum()))]
    d2 = ((points - points[chosen[0]]) ** 2).sum(axis=1)
    while len(chosen) < k:
        m = min(len(chosen), k - len(chosen))
        score = weights * d2
        keys = np.full(len(points), -np.inf)
        positive = score > 0
        keys[positive] = np.log(rng.random(int(positive.sum()))) / score[positive]
        new = np.sort(np.argpartition(-keys, m - 1)[:m])
        chosen.extend(new.tolist())
        d2 = np.minimum(d2, _nearest(points[new], points, workers)[0])
    return points[np.array(chosen)].copy()


def _means(points: np.ndarray, weights: np.ndarray, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(weighted mean of each cluster [k, d] (nan where empty), cluster weights [k])."""
    mass = np.bincount(labels, weights=weights, minlength=k)
    sums = np.stack([np.bincount(labels, weights=weights * points[:, j], minlength=k)
                     for j in range(points.shape[1])], axis=1)  # fmt: skip
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / mass[:, None], mass


def _fill_empty(points: np.ndarray, weights: np.ndarray, labels: np.ndarray, d2: np.ndarray, k: int) -> np.ndarray:
    """Labels with every cluster non-empty: each empty cluster takes the point of
    largest weight x squared distance among clusters of two or more points."""
    labels = labels.copy()
    sizes = np.bincount(labels, minlength=k)
    cost = weights * d2
    for empty in np.flatnonzero(sizes == 0):
        candidates = np.flatnonzero(sizes[labels] >= 2)
        point = candidates[np.argmax(cost[candidates])]
        sizes[labels[point]] -= 1
        labels[point], sizes[empty], cost[point] = empty, 1, -1.0
    return labels


def _two_nearest(centres: np.ndarray, points: np.ndarray, workers: int):
    """(nearest centre, distance to it, distance to the second nearest (inf if k = 1))."""
    if len(centres) == 1:
        distance = np.sqrt(((points - centres[0]) ** 2).sum(axis=1))
        return np.zeros(len(points), dtype=np.int64), distance, np.full(len(points), np.inf)
    distance, index = cKDTree(centres).query(points, k=2, workers=workers)
    return index[:, 0], distance[:, 0], distance[:, 1]


def _reassign(points: np.ndarray, centres: np.ndarray, before: np.ndarray, labels: np.ndarray, lower: np.ndarray,
              reseeded: np.ndarray, workers: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:  # fmt: skip
    """Nearest centres after the centres moved from `before`, with Hamerly's (2010)
    bounds: a point's lower bound on the distance to every centre but its own drops
    by the largest move of the others (re-seeded centres: their exact distance);
    only points whose exact distance to their own centre exceeds it are queried
    again. Returns (labels, distance to own centre, lower bound, points queried)."""
    shift = np.sqrt(((centres - before) ** 2).sum(axis=1))
    shift[reseeded] = 0.0
    top = int(np.argmax(shift))
    second = np.max(np.delete(shift, top)) if len(shift) > 1 else 0.0
    lower = lower - np.where(labels == top, second, shift[top])
    if reseeded.any():
        lower = np.minimum(lower, cKDTree(centres[reseeded]).query(points, workers=workers)[0])
    upper = np.sqrt(((points - centres[labels]) ** 2).sum(axis=1))
    stale = np.flatnonzero(upper >= lower * (1 - 1e-9))
    if len(stale):
        labels, upper, lower = labels.copy(), upper.copy(), lower.copy()
        labels[stale], upper[stale], lower[stale] = _two_nearest(centres, points[stale], workers)
    return labels, upper, lower, len(stale)


def weighted_kmeans(points: np.ndarray, weights: np.ndarray, k: int, seed: int = 0, max_iterations: int = 100,
                    tolerance: float = 1e-4, progress: Callable[[str], None] | None = None,
                    workers: int = -1) -> KMeansResult:  # fmt: skip
    """Lloyd's k-means on weighted points (minimises sum w ||x - c||^2): seeded by
    `_seed_centres`, nearest centres by a k-d tree, re-queried only where
    Hamerly's bounds do not rule a change out (`_reassign`), empty clusters
    re-seeded at the points of largest weighted squared distance; stops after
    `max_iterations` or when an iteration lowers the distortion by less than
    `tolerance` (relative). Points must be distinct (deduplicate and add their
    weights first) and at least k. Deterministic given the seed; every cluster
    non-empty."""
    start = time.perf_counter()
    points = np.ascontiguousarray(points, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    if isinstance(k, bool) or int(k) != k or not 1 <= k <= len(points):
        raise ValueError(f"k-means needs 1 <= k <= {len(points):,} distinct points, got k={k!r}")
    k, rng = int(k), np.random.default_rng(seed)
    centres = _seed_centres(points, weights, k, rng, workers)
    labels, upper, lower = _two_nearest(centres, points, workers)
    previous, iterations, queried = np.inf, 0, len(points)
    for iterations in range(1, max_iterations + 1):
        distortion = float(weights @ upper**2)
        if progress is not None:
            progress(f"k-means k={k:,} on {len(points):,} points: iteration {iterations}, distortion "
                     f"{distortion / weights.sum():.6g} per unit weight, {queried:,} points queried, "
                     f"{time.perf_counter() - start:.1f} s")  # fmt: skip
        if previous - distortion <= tolerance * distortion:
            break
        previous = distortion
        moved, mass = _means(points, weights, labels, k)
        empty = mass == 0
        if empty.any():
            far = np.argsort(-(weights * upper**2), kind="stable")[: int(empty.sum())]
            moved[empty] = points[far]
        labels, upper, lower, queried = _reassign(points, moved, centres, labels, lower, empty, workers)
        centres = moved
    labels = _fill_empty(points, weights, labels, upper**2, k)
    centres, _ = _means(points, weights, labels, k)
    distortion = float(weights @ ((points - centres[labels]) ** 2).sum(axis=1))
    return KMeansResult(labels, centres, distortion, iterations, time.perf_counter() - start)


# ----- building ------------------------------------------------------------


@dataclasses.dataclass
class _FeatureBoards:
    """The boards whose features are computed for a round, and how the tree's
    boards map onto them (a non-isomorphic tree's first deal: via the suit classes)."""

    boards: np.ndarray  # [B, k]
    multiplicity: np.ndarray  # [B] boards of the whole game each stands for
    board_class: np.ndarray | None = None  # [tree boards] -> feature board
    hand_map: np.ndarray | None = None  # [tree boards, H]: the hand on the feature board


def _feature_boards(tree: PublicTree, rnd: int) -> _FeatureBoards:
    deck, first = tree.deck, tree.first_deal_round
    if rnd == first and not tree.isomorphism:
        boards, multiplicity, board_class, board_perm = canonical_boards(deck, tree.board_size[rnd])
        perms, index = np.unique(board_perm, axis=0, return_inverse=True)
        hand_maps = np.stack([hand_permutation(deck, p) for p in perms])
        return _FeatureBoards(boards, multiplicity, board_class, hand_maps[index.reshape(-1)])
    per_first = math.prod(tree.fan_out[first + 1 : rnd + 1])
    multiplicity = np.repeat(np.rint(tree.first_weights * len(tree.hand_perms)).astype(np.int64), per_first)
    boards = np.concatenate([b for _, _, b in _round_board_batches(tree, rnd)])
    return _FeatureBoards(boards, multiplicity)


def _round_features(tree: PublicTree, boards: np.ndarray, groups: np.ndarray, bins: int) -> np.ndarray:
    """[b, H, d]: OCHS on the last round, cumulative strength histograms before it."""
    if tree.board_size[-1] == boards.shape[1]:
        return ochs_features(tree, boards, groups)
    return cumulative_histogram(strength_histograms(tree, boards, bins))


def distinct_rows(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct rows of `features` [n, d], inverse [n]: row i is distinct[inverse[i]]),
    by one lexicographic sort (`np.lexsort`: ~10x faster than `np.unique(axis=0)`
    on full FHP's 2.06M flop points)."""
    order = np.lexsort(features.T[::-1]) if features.shape[1] else np.zeros(len(features), dtype=np.int64)
    ordered = features[order]
    starts = np.ones(len(features), dtype=bool)
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    inverse = np.empty(len(features), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], inverse


def _cluster(features: np.ndarray, weights: np.ndarray, k: int, seed: int, clamp: bool, what: str,
             descending: bool, settings: dict, progress) -> tuple[np.ndarray, int, dict]:  # fmt: skip
    """Labels of each row of `features` (k-means on the distinct rows, weighted),
    buckets numbered from the weakest centre up, the k used and a record."""
    distinct, inverse = distinct_rows(features)
    mass = np.bincount(inverse, weights=weights).astype(np.float64)
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"{what}: buckets must be an int >= 1, got {k!r}")
    used = int(k)
    if used > len(distinct):
        if not clamp:
            raise ValueError(f"{what}: {used:,} buckets asked but its points have only {len(distinct):,} distinct "
                             f"feature vectors; ask for at most that many or pass clamp=True")  # fmt: skip
        used = len(distinct)
    result = weighted_kmeans(distinct, mass, used, seed=seed, progress=progress, **settings)
    strength = result.centres.mean(axis=1) * (-1 if descending else 1)
    order = np.argsort(np.argsort(strength, kind="stable"), kind="stable")  # cluster -> rank by strength
    record = {"k_asked": int(k), "k": used, "distinct_points": int(len(distinct)),
              "points": int(len(features)), "weight": float(mass.sum()), "iterations": result.iterations,
              "distortion_per_weight": result.distortion / float(mass.sum()),
              "kmeans_seconds": round(result.seconds, 3)}  # fmt: skip
    return order[result.labels][inverse].astype(np.int32), used, record


def _preflop_buckets(tree: PublicTree, k: int | None, seed: int, bins: int, clamp: bool, settings: dict,
                     progress) -> tuple[np.ndarray, int, dict]:  # fmt: skip
    classes = preflop_classes(tree.deck)
    if k is None:
        return classes[None], int(classes.max()) + 1, {"features": "lossless: hands equal up to suit relabelling"}
    if tree.first_deal_round is None:
        raise ValueError("preflop k-means needs board cards to come (this game deals none)")
    features = cumulative_histogram(_preflop_sums(tree, bins))
    labels, used, record = _cluster(features, np.ones(len(features)), k, seed, clamp, "round 0", True, settings,
                                    progress)  # fmt: skip
    record["features"] = f"hand-strength distribution over every board, {bins} bins (cumulative)"
    return labels[None], used, record


def _board_round_buckets(tree: PublicTree, rnd: int, k: int, groups: np.ndarray, seed: int, bins: int,
                         clamp: bool, settings: dict, progress) -> tuple[np.ndarray, int, dict]:  # fmt: skip
    """Buckets [tree.num_boards[rnd], H] of a round with a board: features of
    every (feature board, hand) not meeting the board, weighted by the boards of
    the whole game the feature board stands for, clustered; mapped back to the
    tree's boards (a non-isomorphic first deal: through the suit classes)."""
    start, deck = time.perf_counter(), tree.deck
    fb = _feature_boards(tree, rnd)
    free = ~deck.contains[:, fb.boards].any(axis=2).T  # [B, H]
    last = tree.board_size[-1] == tree.board_size[rnd]
    features = np.empty((int(free.sum()), len(groups) if last else bins - 1))
    at = 0
    for lo in range(0, len(fb.boards), 64):
        chunk = _round_features(tree, fb.boards[lo : lo + 64], groups, bins)
        rows = chunk[free[lo : lo + 64]]
        features[at : at + len(rows)], at = rows, at + len(rows)
        if progress is not None and (lo // 64) % 8 == 7:
            progress(f"round {rnd}: features of {lo + 64:,} / {len(fb.boards):,} boards, "
                     f"{time.perf_counter() - start:.1f} s")  # fmt: skip
    feature_seconds = time.perf_counter() - start
    weights = np.broadcast_to(fb.multiplicity[:, None], free.shape)[free].astype(np.float64)
    labels, used, record = _cluster(features, weights, k, seed, clamp, f"round {rnd}", not last, settings,
                                    progress)  # fmt: skip
    buckets = np.full(free.shape, -1, dtype=np.int32)
    buckets[free] = labels
    if fb.board_class is not None:
        buckets = np.take_along_axis(buckets[fb.board_class], fb.hand_map, axis=1)
    record["features"] = (f"OCHS against {len(groups)} opponent clusters" if last else
                          f"hand-strength distribution over the completions, {bins} bins (cumulative)")  # fmt: skip
    record["feature_boards"], record["feature_seconds"] = int(len(fb.boards)), round(feature_seconds, 3)
    return buckets, used, record


def estimate_bytes(tree: PublicTree, opponent_clusters: int = 8, histogram_bins: int = 10) -> int:
    """Peak bytes of `kmeans_abstraction`: the bucket arrays of every round, plus for
    the largest round its points' features (~4 copies: features, distinct rows and
    the sort's index arrays, centres' k-d tree) and labels."""
    out = 4 * sum(tree.num_boards) * tree.num_hands
    biggest = 0
    for r in range(tree.num_rounds):
        if tree.board_size[r]:
            last = tree.board_size[r] == tree.board_size[-1]
            dims = opponent_clusters if last else histogram_bins - 1
            biggest = max(biggest, tree.num_boards[r] * tree.num_hands * (4 * 8 * dims + 40))  # an upper bound
    return int(out + biggest)


def kmeans_abstraction(tree: PublicTree, buckets_per_round: Sequence[int | None], seed: int = 0,
                       opponent_clusters: int = 8, histogram_bins: int = 10, clamp: bool = False,
                       max_iterations: int = 100, tolerance: float = 1e-4, workers: int = -1,
                       max_memory_bytes: int | None = None,
                       progress: Callable[[str], None] | None = None) -> CardAbstraction:  # fmt: skip
    """The k-means card abstraction of the Deep CFR paper's comparison (Section 6,
    Figure 2), features and clustering as in the module doc.

    Args:
      tree: a whole game's `PublicTree` (isomorphism on or off: the buckets agree).
      buckets_per_round: k per round; None for a round without a board means
        lossless (hands equal up to suit relabelling). `buckets_for_abstract_infosets`
        turns the paper's sizes into these.
      seed: k-means seeding (and the opponent clusters'); the result is
        deterministic given it.
      opponent_clusters: OCHS's opponent groups (the last round's features).
      histogram_bins: bins of the hand-strength distributions (rounds with cards to come).
      clamp: a k above a round's number of distinct feature vectors is lowered to
        it (recorded in the description); without it such a k is refused.
      max_iterations, tolerance, workers: Lloyd's iterations, its relative
        stopping tolerance, and the k-d tree's query threads (-1: every CPU).
      max_memory_bytes: refuse (`CardAbstractionTooLargeError`, with the
        estimate) above this (default 60% of available memory).
      progress: called with a line of progress now and then (e.g. `print`).
    """
    _check_tree(tree)
    buckets_per_round = tuple(buckets_per_round)
    if len(buckets_per_round) != tree.num_rounds:
        raise ValueError(f"buckets_per_round needs one entry per round ({tree.num_rounds}), got {buckets_per_round}")
    for name, value, low in (("opponent_clusters", opponent_clusters, 1), ("histogram_bins", histogram_bins, 2)):
        if isinstance(value, bool) or int(value) != value or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    _check_memory(estimate_bytes(tree, opponent_clusters, histogram_bins), _memory_limit(max_memory_bytes),
                  "this card abstraction (bucket arrays and the largest round's features)")  # fmt: skip
    settings = {"max_iterations": int(max_iterations), "tolerance": float(tolerance), "workers": int(workers)}
    start = time.perf_counter()
    groups = None
    buckets, counts, rounds = [], [], []
    for r, k in enumerate(buckets_per_round):
        if k is None and tree.board_size[r]:
            raise ValueError(f"round {r} has a board: give its number of buckets (None is lossless only without one)")
        if tree.board_size[r] == 0:
            b, used, record = _preflop_buckets(tree, k, seed, histogram_bins, clamp, settings, progress)
        else:
            if groups is None:
                groups = opponent_groups(tree, opponent_clusters, seed)
            b, used, record = _board_round_buckets(tree, r, k, groups, seed, histogram_bins, clamp, settings,
                                                   progress)  # fmt: skip
        buckets.append(b)
        counts.append(used)
        rounds.append(record)
        if progress is not None:
            progress(f"round {r}: {used:,} buckets ({record['features']}), {time.perf_counter() - start:.1f} s")
    description = {"method": "kmeans", "seed": int(seed), "buckets_per_round": [None if k is None else int(k) for k in
                   buckets_per_round], "opponent_clusters": int(opponent_clusters),
                   "histogram_bins": int(histogram_bins), "clamp": bool(clamp), **settings,
                   "rounds": rounds, "seconds": round(time.perf_counter() - start, 3), "tree": tree_fingerprint(tree),
                   "opponent_groups": None if groups is None else [int(g.sum()) for g in groups]}  # fmt: skip
    abstraction = CardAbstraction(tuple(buckets), tuple(counts), description)
    description["abstract_infosets"] = abstraction.abstract_infosets(tree)
    description["game_infosets"] = game_infosets(tree)
    return abstraction


def perfect_recall(tree: PublicTree, abstraction: CardAbstraction) -> CardAbstraction:
    """The coarsest refinement of `abstraction` with perfect recall: round r's
    bucket of (board, hand) becomes the pair (its round r - 1 bucket on the
    board's prefix, its round r bucket), numbered over the pairs that occur, so
    a bucket determines every earlier one (Waugh et al. 2009). The abstract game
    is then an ordinary game: CFR converges in it and
    `abstract_cfr.abstract_best_response` is exact there. Suit-invariant
    buckets stay suit-invariant. Round r's count grows to at most the product
    of the counts up to r (e.g. 169 preflop classes x k flop clusters)."""
    abstraction.check_tree(tree)
    buckets, counts = [abstraction.buckets[0]], [abstraction.num_buckets[0]]
    for r in range(1, tree.num_rounds):
        current = abstraction.buckets[r]
        # the board of round r - 1 that each board of round r extends: one board before the first deal
        before = np.zeros(tree.num_boards[r], dtype=np.int64)
        if tree.first_deal_round is not None and r > tree.first_deal_round:
            before = np.arange(tree.num_boards[r]) // tree.fan_out[r]
        previous = buckets[-1][before]
        valid = (current >= 0) & (previous >= 0)
        pairs = previous[valid].astype(np.int64) * abstraction.num_buckets[r] + current[valid]
        _, ids = np.unique(pairs, return_inverse=True)
        refined = np.full(current.shape, -1, dtype=np.int32)
        refined[valid] = ids.reshape(-1)
        buckets.append(refined)
        counts.append(int(ids.max()) + 1 if ids.size else 1)
    description = dict(abstraction.description, recall="perfect",
                       imperfect_recall_buckets_per_round=list(abstraction.num_buckets))  # fmt: skip
    refined = CardAbstraction(tuple(buckets), tuple(counts), description)
    description["abstract_infosets"] = refined.abstract_infosets(tree)
    return refined
