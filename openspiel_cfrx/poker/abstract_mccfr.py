"""External-sampling Linear MCCFR on a card abstraction: the solver the Deep
CFR paper ran its abstraction baselines with (Brown, Lerer, Gross & Sandholm
2019, Section 6: "abstractions ... solved with external-sampling Linear
MCCFR"), on the same infosets as `VectorCFR(tree, variant, abstraction=...)`.

Infosets are those of `abstract_cfr` (decision node, bucket of the player's
(board, hand) in the node's round). One iteration t is two traversals, one per
traverser p (Lanctot, Waugh, Zinkevich & Bowling 2009, "Monte Carlo sampling
for regret minimization in extensive games", Algorithm 1 / Section 3.2,
external sampling): each samples a deal of hole cards and every board card,
then walks the betting tree:

* at p's decision node in bucket k: every action a is explored, the sampled
  values v(a) and v = sum_a sigma(a) v(a) give r(k, a) += w_t (v(a) - v);
* at the opponent's node: sigma(k) is added to the average strategy,
  s(k, a) += w_t sigma(a) (the opponent's reach is sampled, so it is not a
  factor), and one action is sampled from sigma;
* chance is the sampled deal; terminals pay chips (OpenSpiel's utilities).

sigma is regret matching on r (uniform where no regret is positive). Linear
MCCFR weighs iteration t's regrets and average by w_t = t (Brown & Sandholm
2019, "Solving imperfect-information games via discounted regret
minimization", Linear CFR; `linear=False`: w_t = 1, vanilla MCCFR).

Sampling is counter-based (a SplitMix64 hash of the seed, the traversal's
number and a node or card slot), so a run is the same for a seed however it
is split into `run` calls or resumed from a checkpoint. A sampled deal is
relabelled to the tree's class representative (with suit isomorphism) to
find the buckets; deals are drawn from the full game, so no multiplicity
weights are needed (unlike the full-width solve).

Nodes touched are counted as Deep CFR's traversals count them (and
`PublicTree.nodes_per_walk`): 4 for the hole cards, one per card a chance
node deals and one per decision and terminal history a traversal visits.
"""

from __future__ import annotations

import json
import math
import numbers
import time

import numba
import numpy as np

from openspiel_cfrx.checkpoint_io import array_digest, atomic_write, read_checked_npz
from openspiel_cfrx.poker.abstract_cfr import (
    abstract_nash_conv,
    abstraction_digest,
    bucket_rows,
    check_abstraction,
)
from openspiel_cfrx.poker.evaluator import rank_hands
from openspiel_cfrx.poker.isomorphism import suit_permutations
from openspiel_cfrx.poker.public_tree import (
    DEAL,
    DECISION,
    FOLDED,
    SHOWDOWN,
    PublicTree,
    check_public_tree,
)

CHECKPOINT_FORMAT = "openspiel_cfrx/abstract_mccfr/1"
_KIND = {DECISION: 0, DEAL: 1, FOLDED: 2, SHOWDOWN: 3}
_MASK = (1 << 64) - 1


@numba.njit(cache=True)
def _mix(x):  # pragma: no cover - compiled
    """SplitMix64's finaliser (Steele, Lea & Flood 2014) on a uint64."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True)
def _uniform(seed, traversal, slot):  # pragma: no cover - compiled
    """A uniform in [0, 1) for (seed, traversal number, slot): 53 bits of a double hash."""
    x = _mix(seed ^ _mix(np.uint64(traversal) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(slot)))
    return (x >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True)
def _lex_rank(sorted_items, n, comb):  # pragma: no cover - compiled
    """Index of the ascending k-subset `sorted_items` of range(n) in itertools.combinations order."""
    k = len(sorted_items)
    rank, previous = 0, -1
    for i in range(k):
        for j in range(previous + 1, sorted_items[i]):
            rank += comb[n - 1 - j, k - 1 - i]
        previous = sorted_items[i]
    return rank


@numba.njit(cache=True)
def _sort_small(a):  # pragma: no cover - compiled
    for i in range(1, len(a)):
        x, j = a[i], i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


@numba.njit(cache=True)
def _deal(seed, traversal, deck, board_size, first, fan_out, comb, hand_index, board_class, board_perm, perms,
          num_suits, buckets, final_ranks, bucket, ranks):  # fmt: skip  # pragma: no cover - compiled
    """Samples traversal `traversal`'s deal (hole cards, then every board card)
    and writes each player's bucket per round (bucket [2, R]) and final hand
    strength (ranks [2]), relabelled onto the tree's board indexing."""
    n = len(deck)
    total = board_size[len(board_size) - 1]
    cards = deck.copy()
    for j in range(4 + total):  # partial Fisher-Yates: cards[:4 + total] uniform without replacement
        pick = j + int(_uniform(seed, traversal, 1 + j) * (n - j))
        cards[j], cards[pick] = cards[pick], cards[j]
    perm = index = 0
    if first >= 0:
        flop = cards[4 : 4 + board_size[first]].copy()
        _sort_small(flop)
        index = _lex_rank(flop, n, comb)
        perm = board_perm[index]
        index = board_class[index]
    for c in range(4 + total):  # relabel every card with the first deal's suit permutation
        card = cards[c]
        cards[c] = (card // num_suits) * num_suits + perms[perm, card % num_suits]
    hands = (hand_index[cards[0], cards[1]], hand_index[cards[2], cards[3]])
    board = np.empty(total, dtype=np.int64)
    dealt = 0
    for r in range(len(board_size)):
        if first < 0 or r < first:
            b = 0
        elif r == first:
            dealt = board_size[r]
            board[:dealt] = cards[4 : 4 + dealt]
            _sort_small(board[:dealt])
            b = index
        else:
            extra = cards[4 + dealt : 4 + board_size[r]].copy()
            _sort_small(extra)
            for i in range(len(extra)):  # position among the cards not on the board yet
                below = 0
                for j in range(dealt):
                    if board[j] < extra[i]:
                        below += 1
                extra[i] -= below
            index = index * fan_out[r] + _lex_rank(extra, n - dealt, comb)
            board[dealt : board_size[r]] = cards[4 + dealt : 4 + board_size[r]]
            dealt = board_size[r]
            _sort_small(board[:dealt])
            b = index
        for p in range(2):
            bucket[p, r] = buckets[r][b, hands[p]]
    last = index if first >= 0 else 0
    for p in range(2):
        ranks[p] = final_ranks[last, hands[p]]


@numba.njit(cache=True)
def _terminal(n, p, kind, player, contributions, ranks):  # pragma: no cover - compiled
    """Chips for p at a fold (player[n] folded) or a showdown (equal contributions)."""
    if kind[n] == 2:
        return -contributions[n, p] if player[n] == p else contributions[n, 1 - p]
    if ranks[p] == ranks[1 - p]:
        return 0.0
    return contributions[n, 1 - p] if ranks[p] > ranks[1 - p] else -contributions[n, p]


@numba.njit(cache=True)
def _traverse(p, seed, traversal, weight, kind, player, rnd, children, num_children, contributions, base, board_cards,
              bucket, ranks, regret, average, counter, frames, rows, sigma, values):  # fmt: skip  # pragma: no cover - compiled
    """One traversal for p (module doc) with an explicit stack (numba does not
    cache recursive functions safely): frames[d] = (node, next action or -1 on
    arrival); p's decisions keep their row, strategy and action values until
    every action has returned. Returns p's sampled root value (chips)."""
    sp = 0
    frames[0, 0], frames[0, 1] = 0, -1
    while True:
        n = frames[sp, 0]
        k = kind[n]
        if k == 1:  # chance: the deal is sampled already
            counter[0] += board_cards[rnd[n] + 1]
            frames[sp, 0] = children[n, 0]
            continue
        counter[0] += 1
        if k == 0:
            q, A = player[n], num_children[n]
            row = base[n] + bucket[q, rnd[n]] * A
            positive = 0.0
            for a in range(A):
                sigma[sp, a] = max(regret[row + a], 0.0)
                positive += sigma[sp, a]
            for a in range(A):
                sigma[sp, a] = sigma[sp, a] / positive if positive > 0.0 else 1.0 / A
            if q != p:  # the opponent: average += w sigma, one sampled action (the frame becomes its child)
                u, chosen = _uniform(seed, traversal, 1000 + n), A - 1
                for a in range(A):
                    average[row + a] += weight * sigma[sp, a]
                for a in range(A - 1):
                    u -= sigma[sp, a]
                    if u < 0.0:
                        chosen = a
                        break
                frames[sp, 0] = children[n, chosen]
                continue
            rows[sp], frames[sp, 1] = row, 0  # the traverser: explore every action
            sp += 1
            frames[sp, 0], frames[sp, 1] = children[n, 0], -1
            continue
        value = _terminal(n, p, kind, player, contributions, ranks)
        while True:  # return `value` to the frames above
            sp -= 1
            if sp < 0:
                return value
            a, n = frames[sp, 1], frames[sp, 0]
            values[sp, a] = value
            if a + 1 < num_children[n]:
                frames[sp, 1] = a + 1
                sp += 1
                frames[sp, 0], frames[sp, 1] = children[n, a + 1], -1
                break
            A, row = num_children[n], rows[sp]
            value = 0.0
            for b in range(A):
                value += sigma[sp, b] * values[sp, b]
            for b in range(A):
                regret[row + b] += weight * (values[sp, b] - value)


@numba.njit(cache=True, nogil=True)
def _iterations(start, stop, linear, seed, deck, board_size, first, fan_out, comb, hand_index, board_class, board_perm,
                perms, num_suits, buckets, final_ranks, kind, player, rnd, children, num_children, contributions, base,
                board_cards, regret, average, counter):  # fmt: skip  # pragma: no cover - compiled
    """Iterations start+1 .. stop: per iteration one traversal per player (traversals 2(t-1) + p)."""
    bucket = np.empty((2, len(board_size)), dtype=np.int64)
    ranks = np.empty(2, dtype=np.int64)
    depth, width = len(kind), children.shape[1]  # a path is at most every node
    frames, rows = np.empty((depth, 2), dtype=np.int64), np.empty(depth, dtype=np.int64)
    sigma, values = np.empty((depth, width)), np.empty((depth, width))
    for t in range(start + 1, stop + 1):
        weight = float(t) if linear else 1.0
        for p in range(2):
            traversal = 2 * (t - 1) + p
            _deal(seed, traversal, deck, board_size, first, fan_out, comb, hand_index, board_class, board_perm,
                  perms, num_suits, buckets, final_ranks, bucket, ranks)  # fmt: skip
            counter[0] += 4  # the hole cards
            _traverse(p, seed, traversal, weight, kind, player, rnd, children, num_children, contributions, base,
                      board_cards, bucket, ranks, regret, average, counter, frames, rows, sigma, values)  # fmt: skip


class AbstractMCCFR:
    """External-sampling (Linear) MCCFR on a card abstraction of a limit
    hold'em public tree (module doc).

    Args:
      tree: the game's `PublicTree` (the whole game, not a subgame); the
        abstraction is aligned with its board indexing.
      abstraction: a card abstraction (`buckets`, `num_buckets`; e.g.
        `kmeans_abstraction(tree, ...)`), suit-invariant with isomorphism.
      seed: the sampling seed (an int >= 0).
      linear: weigh iteration t by t (Linear MCCFR, the paper's); False: by 1.
      max_memory_bytes: refuse (before allocating) when the tables would need
        more: regrets and average (float64 per abstract infoset action) and the
        last round's hand strengths per (board, hand).
    """

    def __init__(self, tree: PublicTree, abstraction, seed: int = 0, linear: bool = True,
                 max_memory_bytes: int = 8 * 2**30):  # fmt: skip
        check_public_tree(tree, "AbstractMCCFR")
        if isinstance(seed, bool) or not isinstance(seed, numbers.Real) or int(seed) != seed or seed < 0:
            raise ValueError(f"seed must be an int >= 0, got {seed!r}")
        if tree.subgame is not None:
            raise ValueError("AbstractMCCFR samples whole deals; this PublicTree is a subgame")
        self.tree, self.seed, self.linear = tree, int(seed), bool(linear)
        self.buckets, self.num_buckets = check_abstraction(tree, abstraction, strict=True)
        self.digest = abstraction_digest(self.buckets, self.num_buckets)
        self._flatten()
        last = tree.num_rounds - 1
        table_bytes = 16 * self.size + 8 * tree.num_boards[last] * tree.num_hands
        if table_bytes > max_memory_bytes:
            raise MemoryError(f"AbstractMCCFR needs ~{table_bytes / 2**30:.1f} GiB (regrets and average over "
                              f"{self.size:,} abstract infoset actions, hand strengths on {tree.num_boards[last]:,} "
                              f"last-round boards), above max_memory_bytes={max_memory_bytes / 2**30:.1f} GiB: use "
                              "fewer buckets, or a game with fewer last-round boards")  # fmt: skip
        self.regret = np.zeros(self.size)
        self.average = np.zeros(self.size)
        self._final_ranks = self._hand_strengths()
        self._sampling_tables()
        self.iteration, self.nodes_touched, self.seconds = 0, 0, 0.0

    def __getstate__(self) -> dict:
        """Pickle / deepcopy without the compiled kernel's typed list of bucket tables
        (rebuilt from `buckets` on the copy; the tree drops its lock itself)."""
        state = dict(self.__dict__)
        state.pop("_bucket_tables", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bucket_tables = numba.typed.List(self.buckets)

    def _flatten(self) -> None:
        """The betting tree as arrays, and each decision node's block of [num_buckets, A] rows."""
        nodes = self.tree.nodes
        width = max(len(node.children) for node in nodes)
        self._kind = np.array([_KIND[node.kind] for node in nodes], dtype=np.int64)
        self._player = np.array([node.player for node in nodes], dtype=np.int64)
        self._round = np.array([node.round for node in nodes], dtype=np.int64)
        self._children = np.zeros((len(nodes), max(width, 1)), dtype=np.int64)
        self._num_children = np.array([len(node.children) for node in nodes], dtype=np.int64)
        for n, node in enumerate(nodes):
            self._children[n, : len(node.children)] = node.children
        self._contributions = np.array([node.contributions for node in nodes], dtype=np.float64)
        self._base = np.zeros(len(nodes), dtype=np.int64)
        offset = 0
        for n, node in enumerate(nodes):
            if node.kind == DECISION:
                self._base[n] = offset
                offset += self.num_buckets[node.round] * len(node.legal)
        self.size = offset
        self._board_cards = np.array(list(self.tree.rules.board_cards) + [0], dtype=np.int64)

    def _hand_strengths(self) -> np.ndarray:
        """[last round's boards, hands]: each hand's best five-card strength on the final board."""
        tree = self.tree
        last = tree.num_rounds - 1
        if tree.board_size[last] < 3:
            raise ValueError("AbstractMCCFR needs a game whose last round shows at least 3 board cards")
        ranks = np.empty((tree.num_boards[last], tree.num_hands), dtype=np.int64)
        for b in range(tree.num_boards[last]):
            ranks[b] = rank_hands(tree.hand_cards, tree.board_cards(last, b), tree.deck.num_suits)
        return ranks

    def _sampling_tables(self) -> None:
        tree, deck = self.tree, self.tree.deck
        n = deck.num_cards
        self._deck = np.arange(n, dtype=np.int64)
        self._comb = np.array([[math.comb(i, j) for j in range(8)] for i in range(n + 1)], dtype=np.int64)
        self._hand_index = deck.index_table
        self._perms = suit_permutations(deck.num_suits)
        self._first = -1 if tree.first_deal_round is None else int(tree.first_deal_round)
        count = math.comb(n, tree.board_size[self._first]) if self._first >= 0 else 1
        if tree.isomorphism and self._first >= 0:
            ids = {tuple(p): i for i, p in enumerate(self._perms.tolist())}
            self._board_class = np.asarray(tree._board_class, dtype=np.int64)
            self._board_perm = np.array([ids[tuple(p)] for p in tree._board_perm.tolist()], dtype=np.int64)
        else:
            self._board_class = np.arange(count, dtype=np.int64)
            self._board_perm = np.zeros(count, dtype=np.int64)
        self._board_size = np.array(tree.board_size, dtype=np.int64)
        self._fan_out = np.array(tree.fan_out, dtype=np.int64)
        self._bucket_tables = numba.typed.List(self.buckets)  # int32, as checked (no copy)

    def run(self, iterations: int) -> None:
        """`iterations` more iterations (two traversals each)."""
        if isinstance(iterations, bool) or int(iterations) != iterations or iterations < 0:
            raise ValueError(f"iterations must be an int >= 0, got {iterations!r}")
        start = time.perf_counter()
        counter = np.zeros(1, dtype=np.int64)
        _iterations(self.iteration, self.iteration + int(iterations), self.linear, np.uint64(self.seed), self._deck,
                    self._board_size, self._first, self._fan_out, self._comb, self._hand_index, self._board_class,
                    self._board_perm, self._perms, self.tree.deck.num_suits, self._bucket_tables,
                    self._final_ranks, self._kind, self._player, self._round, self._children, self._num_children,
                    self._contributions, self._base, self._board_cards, self.regret, self.average, counter)  # fmt: skip
        self.iteration += int(iterations)
        self.nodes_touched += int(counter[0])
        self.seconds += time.perf_counter() - start

    def _table(self, values: np.ndarray, positive: bool) -> dict[int, np.ndarray]:
        """Per decision node [num_buckets + 1, A]: rows of `values` (positive part for regrets); last row zero."""
        out = {}
        for n, node in enumerate(self.tree.nodes):
            if node.kind == DECISION:
                K, A = self.num_buckets[node.round], len(node.legal)
                block = values[self._base[n] : self._base[n] + K * A].reshape(K, A)
                out[n] = np.vstack([np.maximum(block, 0.0) if positive else block, np.zeros((1, A))])
        return out

    def average_strategy(self, n: int, lo: int, hi: int) -> np.ndarray:
        """The average strategy mapped back to the full game (a `public_tree.Strategy`;
        uniform where nothing accumulated)."""
        if getattr(self, "_average_cache", (None,))[0] != self.iteration:
            self._average_cache = (self.iteration, self._table(self.average, positive=False))
        return bucket_rows(self.tree, self.buckets, self._average_cache[1], n, lo, hi, normalise=True)

    def current_strategy(self, n: int, lo: int, hi: int) -> np.ndarray:
        """Regret matching on the current regrets, mapped back to the full game."""
        if getattr(self, "_current_cache", (None,))[0] != self.iteration:
            self._current_cache = (self.iteration, self._table(self.regret, positive=True))
        return bucket_rows(self.tree, self.buckets, self._current_cache[1], n, lo, hi, normalise=True)

    def nash_conv(self) -> float:
        """Exact NashConv of the average strategy in the full game (chips)."""
        return self.tree.nash_conv(self.average_strategy)

    def abstract_nash_conv(self) -> float:
        """NashConv of the average strategy against best responses restricted to the
        abstraction (`abstract_cfr.abstract_best_response`: exact with perfect
        recall, a lower bound otherwise)."""
        return abstract_nash_conv(self.tree, self, self.average_strategy)  # self has `buckets`, `num_buckets`

    # ----- checkpoints ------------------------------------------------------

    def _meta(self) -> dict:
        return {"format": CHECKPOINT_FORMAT, "rules": repr(self.tree.rules), "isomorphism": self.tree.isomorphism,
                "seed": self.seed, "linear": self.linear, "abstraction": self.digest}  # fmt: skip

    def save(self, path: str) -> None:
        """Everything needed to resume, written atomically (`.npz`, SHA-256 inside)."""
        arrays = {"regret": self.regret, "average": self.average, "meta": np.array(json.dumps(self._meta())),
                  "counts": np.array([self.iteration, self.nodes_touched]), "seconds": np.array(self.seconds)}
        arrays["sha256"] = np.array(array_digest(arrays))
        atomic_write(path, lambda f: np.savez(f, **arrays))

    def load(self, path: str) -> None:
        """Resumes from `save`'s file; ValueError with one line naming what does not match."""
        arrays, meta = read_checked_npz(path, "AbstractMCCFR checkpoint")
        for key, value in self._meta().items():
            if meta.get(key) != value:
                raise ValueError(f"checkpoint {path} was written with {key}={meta.get(key)!r}, this solver has "
                                 f"{value!r}; construct it the same way to resume")  # fmt: skip
        self.regret[...], self.average[...] = arrays["regret"], arrays["average"]
        self.iteration, self.nodes_touched = (int(x) for x in arrays["counts"])
        self.seconds = float(arrays["seconds"])
