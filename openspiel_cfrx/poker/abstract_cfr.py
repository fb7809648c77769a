"""Card-abstracted solves on the poker public tree: the infoset map of
`VectorCFR(tree, variant, abstraction=...)` and the best response restricted
to a card abstraction.

A card abstraction (duck-typed: `buckets`, `num_buckets`) gives, per round r,
an int array [tree.num_boards[r], tree.num_hands]: the bucket of each (board,
hand) in [0, num_buckets[r]) (-1, or anything, where the hand meets the board:
such pairs have zero reach and are skipped). With the tree's suit isomorphism
the first deal's boards are class representatives, and the abstraction must be
suit-invariant: relabelling the suits of a (board, hand) keeps its bucket.

Infosets. An infoset of player q is (decision node, bucket of (board, hand)
in that node's round): the betting history is remembered, the cards only
through the round's bucket. When a later round's bucket does not determine
the earlier ones the abstraction has imperfect recall (Waugh et al. 2009, "A
practical use of imperfect recall"); CFR then runs unchanged on the abstract
infosets, their counterfactual regrets summed over the histories an abstract
infoset merges (Lanctot, Gibson, Burch, Zinkevich & Bowling 2012, "No-regret
learning in extensive-form games with imperfect recall", whose regret bounds
hold for (skew) well-formed abstractions only; with perfect recall the
abstract game is an ordinary game and CFR converges in it).

Weighting. The walk's hook sees, at a decision node of q on boards lo:hi, the
counterfactual action values v(I, a) of every full-game infoset I = (node,
board, hand) the walk visits: chips x chance, summed over the opponent's
hands, against the opponent's reach. The abstract infoset's regret is the sum
of its members' (Lanctot et al. 2012): r(J, a) = sum over I in J of
(v(I, a) - v(I)). Without isomorphism every board is visited and that is the
sum. With isomorphism a visited board c is the representative of its suit
class of m_c boards (`canonical_boards`' multiplicity; `Chunk.weights` is m_c /
num_suits!, the factor the first deal sums values with): relabelled onto c,
each board b' of the class maps the H hands one-to-one onto c's hands, so
every visited (c, h) stands for exactly m_c full-game infosets, which for a
suit-symmetric strategy (what an abstract solve with a suit-invariant
abstraction plays) have the same values and, the abstraction being
suit-invariant, the same bucket. So the full game's sum is r(J, a) = sum over visited (c, h) in J of
m_c (v(c, h, a) - v(c, h)), where a later round's board inherits m_c from the
first-deal board it extends and the rounds before the first deal have m = 1.
The average strategy is accumulated the same way: sum over members of m_c x
own reach x the bucket's strategy (as the lossless solver's `cumulative_policy`
per infoset). Regret matching is invariant to one positive factor per
infoset, so the lossless solver needs no weights; here the members of one
bucket come from classes of different sizes, and the weights matter.

Timing. Every chunk of boards of a node reads the node's bucket strategies
during a walk, so an iteration's regrets and average are summed per (node,
chunk) during the walk and applied to the minimizers after it (chunks run on
threads; the partial sums are added in board order, so results do not depend
on the thread schedule).
"""

from __future__ import annotations

import numba
import numpy as np

from openspiel_cfrx.checkpoint_io import array_digest
from openspiel_cfrx.poker.isomorphism import relabel, suit_permutations
from openspiel_cfrx.poker.public_tree import DECISION, MAX, Chunk, PublicTree
from openspiel_cfrx.regret import TIE_TOLERANCE
from openspiel_cfrx.rows import by_width


@by_width
def _bucket_sums(width):
    @numba.njit(cache=True, nogil=True)
    def kernel(cf, probs, own_reach, tolerance, buckets, free, multiplicity, hands, values, regret,
               mass):  # fmt: skip  # pragma: no cover - compiled
        """values = row_dot(cf, probs) (the lossless solver's summation order); for
        each free row i in bucket k = buckets[i] with its board's multiplicity m:
        regret[k] += m (cf[i] - values[i]) (exact ties, within tolerance[i // hands]:
        0) and mass[k] += m x own_reach[i] x probs[i]."""
        rows, actions = cf.shape[0], width or cf.shape[1]
        for i in range(rows):
            v = cf[i, 0] * probs[i, 0]
            for a in range(1, actions):
                v += cf[i, a] * probs[i, a]
            values[i] = v
            k = buckets[i]
            if k < 0 or not free[i]:
                continue
            board = i // hands
            m, tie = multiplicity[board], tolerance[board]
            w = m * own_reach[i]
            for a in range(actions):
                instant = cf[i, a] - v
                if abs(instant) <= tie:
                    instant = 0.0
                regret[k, a] += m * instant
                mass[k, a] += w * probs[i, a]

    return kernel


@by_width
def _bucket_action_sums(width):
    @numba.njit(cache=True, nogil=True)
    def kernel(values, buckets, free, multiplicity, hands, out):  # pragma: no cover - compiled
        """out[k] += m x values[i] over the free rows i of bucket k (m: their board's multiplicity)."""
        rows, actions = values.shape[0], width or values.shape[1]
        for i in range(rows):
            k = buckets[i]
            if k < 0 or not free[i]:
                continue
            m = multiplicity[i // hands]
            for a in range(actions):
                out[k, a] += m * values[i, a]

    return kernel


def _partition_is_invariant(ids: np.ndarray, relabelled: np.ndarray) -> bool:
    """Whether the partition `ids` (one bucket per item) maps onto itself under a
    relabelling: bucket(x) = bucket(y) iff bucket(s x) = bucket(s y), with
    `relabelled` = the buckets of s x."""
    pairs = np.unique(np.stack([ids, relabelled]), axis=1)
    return pairs.shape[1] == len(np.unique(ids)) == len(np.unique(relabelled))


def check_abstraction(tree: PublicTree, abstraction, strict: bool = False) -> tuple[tuple[np.ndarray, ...], tuple[int, ...]]:
    """(buckets, num_buckets) of a card abstraction checked against `tree`:
    one array per round of shape [num_boards[r], num_hands] with ids in [-1,
    num_buckets[r]) (int32 contiguous), and, with isomorphism, suit-invariant
    preflop and on the first deal's boards (`_check_suit_invariance`; strict:
    every relabelling keeps each bucket, not only the partition). A free
    (board, hand) without a bucket (-1) is found by the walk (`BucketMap.chunk_buckets`).
    Raises ValueError with one line naming the problem."""
    buckets, counts = getattr(abstraction, "buckets", None), getattr(abstraction, "num_buckets", None)
    if buckets is None or counts is None:
        raise ValueError(f"a card abstraction needs `buckets` and `num_buckets` attributes; got {type(abstraction).__name__}")
    if len(buckets) != tree.num_rounds or len(counts) != tree.num_rounds:
        raise ValueError(f"the card abstraction has {len(buckets)} bucket arrays and {len(counts)} bucket counts; "
                         f"this game has {tree.num_rounds} rounds")  # fmt: skip
    checked, sizes = [], []
    for r, (ids, count) in enumerate(zip(buckets, counts, strict=True)):
        ids = np.asarray(ids)
        if isinstance(count, bool) or int(count) != count or count < 1:
            raise ValueError(f"num_buckets[{r}] must be an int >= 1, got {count!r}")
        shape = (tree.num_boards[r], tree.num_hands)
        if ids.shape != shape or not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"buckets[{r}] must be an integer array of shape {shape} (boards of round {r} x the "
                             f"tree's hands); got {ids.dtype} {ids.shape}")  # fmt: skip
        if ids.size and (ids.min() < -1 or ids.max() >= count):
            raise ValueError(f"buckets[{r}] holds ids in [{ids.min()}, {ids.max()}]; they must lie in [-1, {int(count)})")
        checked.append(np.ascontiguousarray(ids, dtype=np.int32))
        sizes.append(int(count))
    if tree.isomorphism and len(tree.hand_perms) > 1:
        _check_suit_invariance(tree, checked, strict)
    return tuple(checked), tuple(sizes)


def _check_suit_invariance(tree: PublicTree, buckets: list[np.ndarray], strict: bool = False) -> None:
    """With isomorphism a representative board stands for its class, so the
    abstraction must not tell suit-relabelled situations apart: preflop (every
    hand relabelling) and on each first-deal board under the relabellings that
    fix the board (its stabiliser). Later rounds' boards are not checked.
    strict: a relabelling must keep every bucket (a sampled solve updates one
    member at a time, so only equal buckets keep its strategy suit-symmetric),
    not only map the partition onto itself (enough for the full-width solve)."""
    first = tree.first_deal_round
    invariant = (lambda ids, mapped: np.array_equal(ids, mapped)) if strict else _partition_is_invariant
    fix = (" (a sampled solve needs each bucket kept, e.g. k-means on suit-invariant features, not one bucket "
           "per hand)") if strict else ""
    for r in range(tree.num_rounds if first is None else first):
        for perm in tree.hand_perms[1:]:
            if not invariant(buckets[r][0], buckets[r][0][perm]):
                raise ValueError(f"the card abstraction is not suit-invariant in round {r}: a suit relabelling of "
                                 "the hands splits, merges or moves its buckets; with isomorphism=True the solve "
                                 f"needs a suit-invariant abstraction{fix} (or build PublicTree(game, "
                                 "isomorphism=False))")  # fmt: skip
    if first is None:
        return
    deck, perms = tree.deck, suit_permutations(tree.deck.num_suits)
    for c, board in enumerate(tree.first_boards):
        free = ~tree.deck.contains[tree.hands][:, board].any(axis=1)
        for perm, hand_perm in zip(perms[1:], tree.hand_perms[1:], strict=True):
            if not np.array_equal(np.sort(relabel(deck, board, perm)), board):
                continue
            ids = buckets[first][c]
            if not invariant(ids[free], ids[hand_perm][free]):
                raise ValueError(f"the card abstraction is not suit-invariant on first-deal board {c} "
                                 f"({board.tolist()}): a suit relabelling that keeps the board splits, merges or "
                                 f"moves its buckets; with isomorphism=True the solve needs a suit-invariant "
                                 f"abstraction{fix} (or build PublicTree(game, isomorphism=False))")  # fmt: skip


def abstraction_digest(buckets: tuple[np.ndarray, ...], num_buckets: tuple[int, ...]) -> str:
    """SHA-256 of the bucket arrays and counts (checkpoints refuse another abstraction)."""
    return array_digest({**{f"round{r}": ids for r, ids in enumerate(buckets)},
                         "num_buckets": np.array(num_buckets, dtype=np.int64)})  # fmt: skip


class BoardMultiplicity:
    """m_c per visited board: the full-game boards a visited board stands for
    (its suit class's size with isomorphism from the first deal on, else 1)."""

    def __init__(self, tree: PublicTree):
        self.tree = tree
        first = tree.first_deal_round
        self.span = [int(np.prod(tree.fan_out[first + 1 : r + 1])) if first is not None and r >= first else 0
                     for r in range(tree.num_rounds)]  # fmt: skip
        self.class_size = np.asarray(tree.first_weights, dtype=np.float64) * len(tree.hand_perms)

    def __call__(self, rnd: int, lo: int, hi: int) -> np.ndarray:
        tree = self.tree
        if not tree.isomorphism or tree.first_deal_round is None or rnd < tree.first_deal_round:
            return np.ones(hi - lo)
        return self.class_size[np.arange(lo, hi) // self.span[rnd]]


def bucket_rows(tree: PublicTree, buckets: tuple[np.ndarray, ...], arrays: dict, n: int, lo: int, hi: int,
                normalise: bool, compact: bool = False) -> np.ndarray:
    """Boards lo:hi of node n mapped back to the full game: every (board, hand)
    gets its bucket's row of arrays[n] ([num_buckets + 1, A]; normalised:
    uniform where nothing accumulated); over the deck's hands (compact: the walk's)."""
    table = arrays[n].astype(np.float64)
    A = table.shape[1]
    if normalise:
        total = table.sum(axis=1, keepdims=True)
        table = np.where(total > 0, table / np.where(total > 0, total, 1.0), 1.0 / A)
    rows = table[buckets[tree.nodes[n].round][lo:hi]]
    if compact or tree.num_hands == tree.deck.num_hands:
        return rows
    out = np.full((hi - lo, tree.deck.num_hands, A), 1.0 / A)
    out[:, tree.hands] = rows
    return out


class BucketMap:
    """The infoset map of an abstract solve (module doc): per decision node the
    current strategy and average [num_buckets + 1, A] (row -1, the last, is the
    uniform row that hands meeting the board read) and the variant's regret
    minimizer over [num_buckets, A]; during a walk, each (node, chunk)'s summed
    regrets and average mass; after it, `update` applies them."""

    def __init__(self, tree: PublicTree, abstraction, variant, dtype):
        self.tree, self.dtype = tree, np.dtype(dtype)
        self.buckets, self.num_buckets = check_abstraction(tree, abstraction)
        self.digest = abstraction_digest(self.buckets, self.num_buckets)
        self.multiplicity = BoardMultiplicity(tree)
        self.strategy: dict[int, np.ndarray] = {}
        self.average: dict[int, np.ndarray] = {}
        self.minimizers: dict = {}
        for n, node in enumerate(tree.nodes):
            if node.kind == DECISION:
                K, A = self.num_buckets[node.round], len(node.legal)
                self.strategy[n] = np.full((K + 1, A), 1.0 / A, dtype=self.dtype)
                self.average[n] = np.zeros((K + 1, A), dtype=self.dtype)
                self.minimizers[n] = variant.make_minimizer(np.broadcast_to(True, (K, A)), self.dtype)
        self._partials: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._seen: set[tuple[int, int]] = set()

    def chunk_buckets(self, chunk: Chunk) -> np.ndarray:
        """The buckets of `chunk`'s (board, hand) pairs [b, H]; the first time a
        chunk is seen, checks that every pair not meeting its board has one."""
        ids = self.buckets[chunk.round][chunk.lo : chunk.hi]
        if (chunk.round, chunk.lo) not in self._seen:
            missing = np.argwhere((ids < 0) & chunk.free)
            if len(missing):
                b, h = missing[0]
                raise ValueError(f"the card abstraction gives no bucket (-1) to hand {int(self.tree.hands[h])} on "
                                 f"board {chunk.lo + int(b)} of round {chunk.round}, which does not meet it")  # fmt: skip
            self._seen.add((chunk.round, chunk.lo))
        return ids

    def walk_strategy(self, n: int, lo: int, hi: int) -> np.ndarray:
        """The current strategy of boards lo:hi of node n over the walk's hands, gathered from the buckets."""
        ids = self.buckets[self.tree.nodes[n].round][lo:hi]
        return self.strategy[n].astype(np.float64, copy=False)[ids]

    def observe(self, n: int, chunk: Chunk, reach, probs: np.ndarray, cf: np.ndarray) -> np.ndarray:
        """The walk's hook: node n's values on the chunk [b, H]; the chunk's
        regrets and average mass summed into its buckets, kept until `update`."""
        tree, node = self.tree, self.tree.nodes[n]
        q, A = node.player, cf.shape[-1]
        ids = self.chunk_buckets(chunk)
        multiplicity = self.multiplicity(chunk.round, chunk.lo, chunk.hi)
        # Exact ties: as the lossless solver (VectorCFR.iterate's tolerance per board).
        tolerance = reach[1 - q].sum(axis=1) * (TIE_TOLERANCE * tree.max_abs_utility * tree.chance[chunk.round])
        values = np.empty(cf.shape[:-1])
        K = self.num_buckets[node.round]
        regret, mass = np.zeros((K, A)), np.zeros((K, A))
        _bucket_sums(A)(cf.reshape(-1, A), np.ascontiguousarray(probs).reshape(-1, A),
                        np.ascontiguousarray(reach[q]).reshape(-1), tolerance, ids.reshape(-1),
                        chunk.free.reshape(-1), multiplicity, cf.shape[1], values.reshape(-1), regret, mass)  # fmt: skip
        self._partials[n, chunk.lo] = (regret, mass)
        return values

    def update(self, t: int, weight: float) -> None:
        """After a walk: each walked node's summed regrets to its minimizer, its
        mass x weight to the average, and its next strategy (regret matching)."""
        by_node: dict[int, list] = {}
        for (n, _lo), sums in sorted(self._partials.items()):
            by_node.setdefault(n, []).append(sums)
        self._partials = {}
        for n, parts in by_node.items():
            regret, mass = parts[0][0].copy(), parts[0][1].copy()
            for r, m in parts[1:]:
                regret += r
                mass += m
            K = len(regret)
            minimizer = self.minimizers[n]
            minimizer.observe(t, regret, np.zeros(K), None)
            self.average[n][:K] += weight * mass
            minimizer.next_strategy(t, 0, K, out=self.strategy[n][:K])

    def lookup(self, arrays: dict, n: int, lo: int, hi: int, normalise: bool, compact: bool) -> np.ndarray:
        """Boards lo:hi of node n mapped back to the full game (`bucket_rows`)."""
        return bucket_rows(self.tree, self.buckets, arrays, n, lo, hi, normalise, compact)

    def memory_bytes(self, state_arrays: int, num_chunks: int) -> int:
        """Stored arrays (strategy, average, minimizer state) plus a walk's partial sums (float64, per chunk)."""
        entries = partial = 0
        for node in self.tree.nodes:
            if node.kind == DECISION:
                entries += (self.num_buckets[node.round] + 1) * len(node.legal)
                partial += 2 * self.num_buckets[node.round] * len(node.legal)
        return int(entries * self.dtype.itemsize * (2 + state_arrays) + partial * 8 * num_chunks)

    def arrays(self) -> dict[str, np.ndarray]:
        """The solve's state for a checkpoint."""
        out = {}
        for n in self.strategy:
            out[f"strategy/{n}"], out[f"average/{n}"] = self.strategy[n], self.average[n]
            for name in self.minimizers[n].state_arrays:
                out[f"{name}/{n}"] = getattr(self.minimizers[n], name)
        return out

    def load_arrays(self, arrays: dict[str, np.ndarray]) -> None:
        for n in self.strategy:
            self.strategy[n][...] = arrays[f"strategy/{n}"]
            self.average[n][...] = arrays[f"average/{n}"]
            for name in self.minimizers[n].state_arrays:
                getattr(self.minimizers[n], name)[...] = arrays[f"{name}/{n}"]


def _heights(tree: PublicTree) -> dict[int, int]:
    """Per decision node: the most decisions of its player on a path from it
    down (itself included): the order in which the bucket best response fixes them."""
    heights: dict[int, int] = {}

    def below(n: int, player: int) -> int:
        node = tree.nodes[n]
        deepest = max((below(c, player) for c in node.children), default=0)
        mine = node.kind == DECISION and node.player == player
        if mine:
            heights[n] = deepest + 1
        return deepest + mine

    for p in (0, 1):
        below(0, p)
    return heights


def abstract_best_response(tree: PublicTree, abstraction, strategy, compact: bool = False) -> tuple[np.ndarray, dict]:
    """Each player's best response to the other's `strategy` among strategies
    that are constant on the abstraction's infosets (node, bucket): ([2] values
    in chips per game, {node: [num_buckets + 1] chosen action index}).

    Computed bottom-up by bucket (a walk per level: walk k fixes the nodes with
    k decisions of their player from them down, given the choices below): at a
    node of player q the action values of q's members (board, hand) of each
    bucket, counterfactual (against the opponent's reach and chance), are summed
    with their multiplicities (module doc) and the bucket plays the maximising
    action; a final walk gives the values of those choices (exact, in the full
    game) against `strategy`.

    What it is: with an abstraction of perfect recall (a bucket determines the
    player's earlier buckets) the members of a bucket share the player's own
    reach under any abstract strategy, so maximising the counterfactual sum is
    maximising the abstract infoset's value, and this is the exact best response
    in the abstract game (backward induction; its NashConv is the abstract
    game's). With imperfect recall the members of a bucket may differ in the
    player's own reach (earlier buckets differ), which the counterfactual sum
    ignores (it weighs each member by 1 instead of by the own reach the choices
    above would give): the result is a valid abstract strategy and its value is
    exact, but it is only a lower bound on the abstract game's best response
    value (finding that is NP-hard in general: Koller & Megiddo 1992), so the
    abstract NashConv it gives is a lower bound too.
    """
    buckets, num_buckets = check_abstraction(tree, abstraction)
    tree.check_suit_symmetric(strategy, compact)
    multiplicity = BoardMultiplicity(tree)
    heights = _heights(tree)
    choices: dict[int, np.ndarray] = {}
    partials: dict[tuple[int, int], np.ndarray] = {}
    deciding = {"height": 0}  # the walk's level: nodes of this height sum their buckets' action values

    def hook(n, chunk, reach, probs, action_values):
        ids = buckets[chunk.round][chunk.lo : chunk.hi]
        if n in choices:
            chosen = choices[n][ids]
            return np.take_along_axis(action_values, chosen[..., None], axis=-1)[..., 0]
        if heights[n] == deciding["height"]:
            A = action_values.shape[-1]
            sums = np.zeros((num_buckets[chunk.round], A))
            _bucket_action_sums(A)(np.ascontiguousarray(action_values).reshape(-1, A), ids.reshape(-1),
                                   chunk.free.reshape(-1), multiplicity(chunk.round, chunk.lo, chunk.hi),
                                   action_values.shape[1], sums)  # fmt: skip
            partials[n, chunk.lo] = sums
        return None  # not decided yet: any values (its parents are decided in later walks)

    for height in range(1, max(heights.values(), default=0) + 1):
        deciding["height"] = height
        tree.walk(strategy, (MAX, MAX), hook, compact=compact)
        totals: dict[int, np.ndarray] = {}
        for (n, _), sums in sorted(partials.items()):
            totals[n] = sums if n not in totals else totals[n] + sums
        partials.clear()
        for n, total in totals.items():
            choices[n] = np.append(np.argmax(total, axis=1), 0)  # row -1: hands meeting the board
    deciding["height"] = 0
    values = tree.walk(strategy, (MAX, MAX), hook, compact=compact).sum(axis=1)
    return values, choices


def abstract_nash_conv(tree: PublicTree, abstraction, strategy, compact: bool = False) -> float:
    """Sum of both players' `abstract_best_response` values: the NashConv in the
    abstract game (exact with perfect recall, a lower bound otherwise)."""
    return float(abstract_best_response(tree, abstraction, strategy, compact)[0].sum())
