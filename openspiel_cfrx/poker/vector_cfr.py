"""Vector-form CFR on the poker public tree: the lossless solver of
Deep CFR's Figure 3 dotted line ("vanilla tabular Linear CFR without
abstraction or sampling" in flop hold'em).

An infoset is (decision node, board, hand). One walk of the public tree
(`PublicTree.walk`) computes every infoset's counterfactual action values for
all hands and boards at once; at each decision node of an updated player the
hook hands them to that node's local regret minimizer — the classes and
settings the tabular solvers use (`openspiel_cfrx.regret.VARIANTS`: RM, RM+,
DCFR discounting, PCFR+, OFTRL with `public_stability_schedule`'s stepsizes),
one per (node, board chunk), over [boards x hands, actions] — accumulates the
average strategy with the player's own reach (as OpenSpiel's
`cumulative_policy`) and writes the next strategy in place. A node's strategy
is read before its subtree is walked and written after, so simultaneous
updates (both players in one walk) see only the iteration's strategies.

Regrets, strategies and averages are stored in float32 (the walk computes in
float64); `memory_bytes` is estimated and printed before anything is
allocated, and a solve that would not fit is refused with the estimate.

With a card abstraction (`abstraction=`, `poker.abstract_cfr`) an infoset is
(decision node, bucket) instead: the same walk, its hook summing each chunk's
regrets and average into the buckets (`abstract_cfr.BucketMap`), the
minimizers updated after the walk; the strategies map back to the full game
(every (board, hand) plays its bucket's), so `tree.nash_conv` of them is the
abstract strategy's exact full-game NashConv.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable

import numba
import numpy as np

from openspiel_cfrx.checkpoint_io import array_digest, atomic_write, read_checked_npz
from openspiel_cfrx.poker import allocator
from openspiel_cfrx.poker.abstract_cfr import BucketMap, abstract_nash_conv
from openspiel_cfrx.poker.public_tree import (
    DEAL,
    DECISION,
    MIX,
    Chunk,
    PublicTree,
    check_public_tree,
)
from openspiel_cfrx.regret import TIE_TOLERANCE, VARIANTS, OptimisticFTRLEntropy, RegretMatching
from openspiel_cfrx.rows import by_width

CHECKPOINT_FORMAT = "openspiel_cfrx/poker_vector_cfr/2"  # 2: arrays over the walk's hands (`PublicTree.hands`)
ABSTRACT_CHECKPOINT_FORMAT = "openspiel_cfrx/poker_vector_cfr_abstract/1"  # arrays per (node, bucket)


def public_stability_schedule(tree: PublicTree, player: int, kappa_star: float) -> dict[int, float]:
    """kappa_j of stable-predictive CFR (Farina et al. 2019, eqs. 14-16, as
    `tabular.stability`) for every decision node of `player` on the public tree.

    An infoset is (node, board, hand); its sequential decision process has the
    same shape for every board and hand, so each quantity is one number per
    node: below an observation node (infoset, action) the player's next
    infosets are its next decision nodes, each counted once per board a later
    deal can show with the player's hand (C(cards - 2 - board, dealt)); below
    the virtual root, once per private hand.
    """
    if not kappa_star > 0:
        raise ValueError(f"kappa_star must be > 0, got {kappa_star}")
    nodes, n = tree.nodes, tree.deck.num_cards

    def next_own(c: int, count: int) -> list[tuple[int, int]]:
        node = nodes[c]
        if node.kind == DECISION:
            if node.player == player:
                return [(c, count)]
            return [pair for child in node.children for pair in next_own(child, count)]
        if node.kind == DEAL:
            boards = math.comb(n - 2 - tree.board_size[node.round], tree.rules.board_cards[node.round + 1])
            return next_own(node.children[0], count * boards)
        return []

    bound: dict[int, float] = {}

    def norm_bound(j: int) -> float:  # (16)
        if j not in bound:
            squares = [sum(m * norm_bound(c) ** 2 for c, m in next_own(child, 1)) for child in nodes[j].children]
            bound[j] = math.sqrt(1.0 + max(squares))
        return bound[j]

    gamma: dict[int, float] = {}
    root = next_own(0, tree.deck.num_hands)
    for c, _ in root:  # (14) from the virtual root decision node with one action
        gamma[c] = kappa_star / 2.0 / math.sqrt(sum(m for _, m in root))
    order = [j for j in range(len(nodes)) if nodes[j].kind == DECISION and nodes[j].player == player]
    for j in order:  # depth-first order: parents before children
        observation = gamma[j] / (2.0 * math.sqrt(len(nodes[j].legal)))
        for child in nodes[j].children:
            below = next_own(child, 1)
            for c, _ in below:
                gamma[c] = observation / math.sqrt(sum(m for _, m in below))
    return {j: gamma[j] / (2.0 * math.sqrt(len(nodes[j].legal)) * norm_bound(j)) for j in order}  # (15)


@by_width
def _values_and_average(width):
    @numba.njit(cache=True, nogil=True)
    def kernel(cf, probs, own_reach, weight, average, values):  # pragma: no cover - compiled
        """values = row_dot(cf, probs) (same summation order); average += weight x own reach x probs."""
        rows, actions = cf.shape[0], width or cf.shape[1]
        for i in range(rows):
            w = weight * own_reach[i]
            v = cf[i, 0] * probs[i, 0]
            average[i, 0] += w * probs[i, 0]
            for a in range(1, actions):
                v += cf[i, a] * probs[i, a]
                average[i, a] += w * probs[i, a]
            values[i] = v

    return kernel


@by_width
def _row_dot(width):
    @numba.njit(cache=True, nogil=True)
    def kernel(x, y, out):  # pragma: no cover - compiled
        """out = row_dot(x, y) (same summation order)."""
        rows, actions = x.shape[0], width or x.shape[1]
        for i in range(rows):
            v = x[i, 0] * y[i, 0]
            for a in range(1, actions):
                v += x[i, a] * y[i, a]
            out[i] = v

    return kernel


@by_width
def _zero_tied_rows(width):
    @numba.njit(cache=True, nogil=True)
    def kernel(values, tolerance, out):  # pragma: no cover - compiled
        """out = values, with rows whose values all lie within tolerance[i] of each other set to 0."""
        rows, actions = values.shape[0], width or values.shape[1]
        for i in range(rows):
            low = high = values[i, 0]
            for a in range(1, actions):
                low, high = min(low, values[i, a]), max(high, values[i, a])
            tied = high - low <= tolerance[i]
            for a in range(actions):
                out[i, a] = 0.0 if tied else values[i, a]

    return kernel


def format_bytes(count: float) -> str:
    """`count` bytes with a unit that keeps 3 significant digits: '512 B', '2.62 MiB', '687 TiB'."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(value) < 1024 or unit == "PiB":
            break
        value /= 1024
    return f"{value:.0f} {unit}" if unit == "B" else f"{value:.3g} {unit}"


class VectorCFRTooLargeError(MemoryError):
    """The solve's arrays would not fit in the allowed memory."""


class VectorCFR:
    """CFR, CFR+, LCFR, DCFR, PCFR+ or OFTRL on a `PublicTree`.

    Args:
      tree: the public tree (with `isomorphism=True` the solve runs on suit
        classes of boards: strategies are suit-symmetric by construction).
      variant: "cfr", "cfr+", "lcfr", "dcfr", "pcfr+" or "oftrl" (`regret.VARIANTS`;
        the predictive ones observe and predict in one paired walk: the
        prediction is the subtree's values with its new decisions).
      alternating_updates: player 0's walk, then player 1's (which sees 0's new
        strategy); False: both in one walk.
      dtype: storage of regrets, strategies and averages (float32 default).
      max_memory_bytes: refuse larger solves (default: 60% of available memory).
      verbose: print the memory estimate.
      kappa, horizon, stepsize_scale: OFTRL only, as `tabular.OFTRLCFRSolver`
        (kappa_star default horizon^-1/4; stepsize_scale 1 = theory).
      keep_freed_arrays: set glibc's malloc to reuse the walk's freed arrays
        (`poker.allocator`, process-wide; ~20% of an iteration on the Libratus
        turn subgames).
      abstraction: a card abstraction (`buckets`, `num_buckets`: see
        `poker.abstract_cfr`): infosets are (node, bucket of the round's (board,
        hand)); cfr, cfr+, lcfr and dcfr only. None: lossless.
    """

    def __init__(self, tree: PublicTree, variant: str = "cfr+", alternating_updates: bool = True,
                 dtype=np.float32, max_memory_bytes: int | None = None, verbose: bool = True,
                 kappa: float | None = None, horizon: int = 1000, stepsize_scale: float = 1.0,
                 keep_freed_arrays: bool = True, abstraction=None):  # fmt: skip
        check_public_tree(tree, "VectorCFR")
        if not isinstance(variant, str) or variant not in VARIANTS:
            raise ValueError(f"unknown vector CFR variant {variant!r}; choose from {', '.join(VARIANTS)}")
        if abstraction is not None and VARIANTS[variant].predictive:
            raise ValueError(f"vector {variant} does not run on a card abstraction (its prediction needs the subtree's "
                             "new decisions within the walk; abstract infosets update after it): use cfr, cfr+, lcfr "
                             "or dcfr")  # fmt: skip
        if not isinstance(alternating_updates, bool):
            raise TypeError(f"alternating_updates must be a bool, got {alternating_updates!r}")
        self.tree, self.variant, self.alternating_updates = tree, variant, alternating_updates
        if keep_freed_arrays:
            allocator.keep_freed_arrays()
        self.dtype = np.dtype(dtype)
        self._variant = VARIANTS[variant]
        discount = self._variant.discount  # DCFR's (alpha, beta, gamma), recorded in checkpoints
        self.hyperparameters = {} if discount is None else discount._asdict()
        self._stepsizes: dict[int, tuple[float, float]] = {}
        if variant == "oftrl":
            if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
                raise ValueError(f"horizon must be a positive int (planned iterations), got {horizon!r}")
            if not stepsize_scale > 0:
                raise ValueError(f"stepsize_scale must be > 0, got {stepsize_scale!r}")
            kappa = float(horizon) ** -0.25 if kappa is None else float(kappa)
            self.hyperparameters = {"kappa": kappa, "horizon": int(horizon), "stepsize_scale": float(stepsize_scale)}
            # Counterfactual utilities are bounded by max|u| (as tabular.OFTRLCFRSolver):
            # losses scaled by 1 / (3 max|u|) have infinity-norm <= 1/3.
            for p in (0, 1):
                for n, value in public_stability_schedule(tree, p, kappa).items():
                    self._stepsizes[n] = (stepsize_scale * value, 3.0 * tree.max_abs_utility)
        self._weight = self._variant.weight()
        self.buckets = None if abstraction is None else BucketMap(tree, abstraction, self._variant, self.dtype)
        self.num_infosets = sum(tree.num_boards[node.round] * tree.num_hands if self.buckets is None else
                                self.buckets.num_buckets[node.round] for node in tree.nodes if node.kind == DECISION)  # fmt: skip
        limit = max_memory_bytes
        if limit is None:
            import psutil

            limit = int(0.6 * psutil.virtual_memory().available)
        needed = self.memory_bytes()
        if verbose:
            print(f"vector {variant}: {self.num_infosets:,} infosets "
                  f"({'node x board x hand' if self.buckets is None else 'node x bucket'}), "
                  f"~{format_bytes(needed)} of {self.dtype.name} arrays", file=sys.stderr)  # fmt: skip
        if needed > limit:
            raise VectorCFRTooLargeError(
                f"vector {variant} on this game needs ~{format_bytes(needed)} (regrets, strategies and "
                f"averages for {self.num_infosets:,} infosets) but the limit is {format_bytes(limit)}; "
                + ("use a smaller game, or pass max_memory_bytes= to raise the limit"
                   if getattr(tree, "isomorphism", False) else
                   "use a smaller game, PublicTree(..., isomorphism=True), or pass max_memory_bytes= to raise "
                   "the limit")
            )  # fmt: skip
        self.iteration = 0
        self.strategy: dict[tuple[int, int], np.ndarray] = {}  # (node, board lo) -> [b, H, A]
        self.average: dict[tuple[int, int], np.ndarray] = {}
        self.minimizers: dict[tuple[int, int], RegretMatching] = {}

    def memory_bytes(self) -> int:
        """Estimated bytes of the solve's stored arrays."""
        # strategy, average and the minimizer's state (PCFR+ keeps the last strategy too)
        state_arrays = len(self._variant.minimizer.state_arrays)
        tree = self.tree
        if self.buckets is not None:  # [buckets, A] per node, and a walk's per-chunk partial sums
            return self.buckets.memory_bytes(state_arrays, -(-len(tree.first_boards) // tree.chunk_boards))
        per_entry = self.dtype.itemsize * (2 + state_arrays)
        entries = sum(tree.num_boards[node.round] * tree.num_hands * len(node.legal)
                      for node in tree.nodes if node.kind == DECISION)  # fmt: skip
        return int(entries * per_entry)

    # ----- storage ---------------------------------------------------------

    def _arrays(self, n: int, chunk: Chunk):
        key = (n, chunk.lo)
        if key not in self.strategy:
            shape = (chunk.hi - chunk.lo, self.tree.num_hands, len(self.tree.nodes[n].legal))  # the walk's hands
            legal = np.broadcast_to(True, (shape[0] * shape[1], shape[2]))  # every action legal: no storage
            scale = self._stepsizes.get(n)  # OFTRL's (stepsize, utility scale) of the node
            settings = {} if scale is None else {"stepsizes": np.full(len(legal), scale[0]),
                                                 "utility_scale": scale[1]}  # fmt: skip
            self.minimizers[key] = self._variant.make_minimizer(legal, self.dtype, **settings)
            self.average[key] = np.zeros(shape, dtype=self.dtype)
            self.strategy[key] = np.full(shape, 1.0 / shape[2], dtype=self.dtype)
        return self.strategy[key], self.average[key], self.minimizers[key]

    def current_strategy(self, n: int, lo: int, hi: int) -> np.ndarray:
        """The current strategy (a `public_tree.Strategy`; with an abstraction every
        (board, hand) plays its bucket's)."""
        return self._lookup(self.strategy, n, lo, hi, normalise=False)

    def average_strategy(self, n: int, lo: int, hi: int) -> np.ndarray:
        """The average strategy (a `public_tree.Strategy`): uniform where nothing
        accumulated; with an abstraction every (board, hand) plays its bucket's."""
        return self._lookup(self.average, n, lo, hi, normalise=True)

    def _lookup(self, arrays, n, lo, hi, normalise, compact=False):
        """Blocks lo:hi of node n's stored arrays over the deck's hands (compact: the walk's)."""
        if self.buckets is not None:
            stored = self.buckets.average if arrays is self.average else self.buckets.strategy
            return self.buckets.lookup(stored, n, lo, hi, normalise, compact)
        A = len(self.tree.nodes[n].legal)
        stored = arrays.get((n, lo))
        if stored is not None and len(stored) == hi - lo:  # a walk's chunk: one block
            items = [((n, lo), stored)]
        else:  # any other range: every overlapping block
            items = [(key, values) for key, values in arrays.items() if key[0] == n]
        out = np.full((hi - lo, self.tree.num_hands if compact else self.tree.deck.num_hands, A), 1.0 / A)
        hands = slice(None) if compact else self.tree.hands
        for (node, start), values in items:
            stop = start + len(values)
            if node != n or stop <= lo or start >= hi:
                continue
            a, b = max(lo, start), min(hi, stop)
            block = values[a - start : b - start].astype(np.float64)
            if normalise:
                total = block.sum(axis=2, keepdims=True)
                block = np.where(total > 0, block / np.where(total > 0, total, 1.0), 1.0 / A)
            out[a - lo : b - lo, hands] = block
        return out

    # ----- iterations ------------------------------------------------------

    def iterate(self) -> None:
        """One iteration (both players)."""
        self.iteration += 1
        t = self.iteration
        weight = self._weight(t)
        tree = self.tree
        groups = ((0,), (1,)) if self.alternating_updates else ((0, 1),)
        predictive = self._variant.predictive
        if self.buckets is not None:  # abstract infosets: the walk sums into buckets, then one update
            for players in groups:
                tree.walk(self.buckets.walk_strategy, tuple(MIX if p in players else None for p in (0, 1)),
                          self.buckets.observe, compact=True)  # fmt: skip
                self.buckets.update(t, weight)
            return
        for players in groups:

            def observe(n, chunk, reach, probs, cf, decide=True):
                q = tree.nodes[n].player
                strategy, average, minimizer = self._arrays(n, chunk)
                A = cf.shape[-1]
                values = np.empty(cf.shape[:-1])  # the infosets' values, while the average accumulates
                _values_and_average(A)(cf.reshape(-1, A), probs.reshape(-1, A), reach[q].reshape(-1), float(weight),
                                       average.reshape(-1, A), values.reshape(-1))  # fmt: skip
                # Exact ties (see regret.variants.TIE_TOLERANCE). The card-removal sums subtract
                # from the opponent's total reach on the board, so their rounding noise scales
                # with that total (a hand whose every opponent is blocked gets +-1e-18, not 0).
                total = reach[1 - q].sum(axis=1) * (TIE_TOLERANCE * tree.max_abs_utility * tree.chance[chunk.round])
                tolerance = np.repeat(total, cf.shape[1])
                if decide:
                    minimizer.observe(t, cf.reshape(-1, A), values.reshape(-1), probs.reshape(-1, A), tolerance)
                    minimizer.next_strategy(t, 0, len(tolerance), out=strategy.reshape(-1, A))
                return values, tolerance

            def observe_and_predict(n, chunk, reach, probs, cf):
                # Predictive minimizers (Farina et al. 2021, as tabular.driver), in one
                # walk (`PublicTree.walk(paired=True)`): observe iteration t's values, then
                # decide with the prediction, the counterfactual values with the subtree's
                # new decisions against the same opponent reach. Rows whose predicted
                # action values all tie within the tie tolerance predict exactly zero
                # regret (as exact arithmetic would, instead of card-removal noise).
                observed, predicted = cf
                values, tolerance = observe(n, chunk, reach, probs, observed, decide=False)  # before `probs` changes
                strategy, _, minimizer = self._arrays(n, chunk)
                A = observed.shape[-1]
                size = observed.shape[0] * observed.shape[1]
                into = strategy.reshape(-1, A) if strategy.dtype == np.float64 else None
                if isinstance(minimizer, OptimisticFTRLEntropy):  # one pass: observe, zero ties, decide
                    new = minimizer.observe_and_next_strategy(t, observed.reshape(-1, A), predicted.reshape(-1, A),
                                                              tolerance, out=into)  # fmt: skip
                else:
                    minimizer.observe(t, observed.reshape(-1, A), values.reshape(-1), probs.reshape(-1, A), tolerance)
                    prediction = np.empty(predicted.shape)
                    _zero_tied_rows(A)(predicted.reshape(-1, A), tolerance, prediction.reshape(-1, A))
                    new = minimizer.next_strategy(t, 0, size, prediction.reshape(-1, A), out=into)
                if into is None:
                    strategy[...] = new.reshape(observed.shape)
                predicted_values = np.empty(size)
                _row_dot(A)(predicted.reshape(-1, A), new, predicted_values)
                return values, predicted_values.reshape(observed.shape[:-1])

            modes = tuple(MIX if p in players else None for p in (0, 1))
            if predictive:
                tree.walk(self.current_strategy_view, modes, observe_and_predict, paired=True, compact=True)
            else:
                tree.walk(self.current_strategy_view, modes, lambda *args: observe(*args)[0], compact=True)

    def current_strategy_view(self, n: int, lo: int, hi: int) -> np.ndarray:
        """The stored current strategy of a walk's chunk over the walk's hands
        (`PublicTree.walk(compact=True)`; float64 view of float32 storage)."""
        stored = self.strategy.get((n, lo))
        if stored is None:
            return self.tree.uniform(n, lo, hi, compact=True)
        return stored if stored.dtype == np.float64 else stored.astype(np.float64)

    def run(self, iterations: int, evaluate_every: Callable[[int], bool] | None = None,
            on_evaluation: Callable[[dict], None] | None = None, checkpoint: str | None = None,
            checkpoint_seconds: float = 600.0, progress: bool = True,
            stop: Callable[[], bool] | None = None) -> list[dict]:  # fmt: skip
        """Runs up to `iterations` total iterations; evaluates the average
        strategy's exploitability exactly when `evaluate_every(t)`; checkpoints
        to `checkpoint` every `checkpoint_seconds` and at the end. Returns the
        evaluation rows (iteration, seconds, nash_conv, exploitability in chips
        and mbb/g). `stop()` returning True ends the run early (after the
        iteration's evaluation)."""
        from tqdm import tqdm

        rows, started, last_save = [], time.perf_counter(), time.perf_counter()
        elapsed_before, not_solving = getattr(self, "seconds", 0.0), 0.0  # evaluations, checkpoints
        bar = tqdm(total=iterations, initial=self.iteration, disable=not progress, desc=f"vector {self.variant}")
        while self.iteration < iterations:
            self.iterate()
            self.seconds = elapsed_before + time.perf_counter() - started - not_solving
            bar.update(1)
            if evaluate_every is not None and evaluate_every(self.iteration):
                row = self.evaluate()
                not_solving += row["evaluation_seconds"]
                rows.append(row)
                bar.set_postfix(mbb=f"{row['exploitability_mbb']:.2f}")
                if on_evaluation is not None:
                    on_evaluation(row)
            if checkpoint and time.perf_counter() - last_save > checkpoint_seconds:
                saving = time.perf_counter()
                self.save(checkpoint)
                last_save = time.perf_counter()
                not_solving += last_save - saving
            if stop is not None and stop():
                break
        bar.close()
        if checkpoint:
            self.save(checkpoint)
        return rows

    def evaluate(self) -> dict:
        """The average strategy's exact NashConv / exploitability (in the full game;
        with an abstraction also in the abstract game: `abstract_nash_conv`), and
        the nodes touched so far (`nodes_touched`)."""
        start = time.perf_counter()
        nash_conv = self.tree.nash_conv(self._compact_average, compact=True)
        row = {
            "iteration": self.iteration,
            "seconds": round(getattr(self, "seconds", 0.0), 3),
            "nash_conv": nash_conv,
            "exploitability": nash_conv / 2,
            "exploitability_mbb": self.tree.rules.mbb_per_game(nash_conv / 2),
            "nodes_touched": self.nodes_touched,
        }
        if self.buckets is not None:
            row["abstract_nash_conv"] = self.abstract_nash_conv()
            row["abstract_exploitability_mbb"] = self.tree.rules.mbb_per_game(row["abstract_nash_conv"] / 2)
        row["evaluation_seconds"] = round(time.perf_counter() - start, 3)
        return row

    def _compact_average(self, n: int, lo: int, hi: int) -> np.ndarray:
        return self._lookup(self.average, n, lo, hi, True, compact=True)

    def abstract_nash_conv(self) -> float:
        """The average strategy's NashConv in the abstract game: both players'
        best responses restricted to the abstraction (`abstract_cfr.abstract_best_response`:
        exact for an abstraction of perfect recall, a lower bound otherwise)."""
        if self.buckets is None:
            raise ValueError("abstract_nash_conv needs a solver built with a card abstraction (abstraction=...)")
        return abstract_nash_conv(self.tree, self.buckets, self._compact_average, compact=True)

    @property
    def nodes_touched(self) -> int:
        """Game-tree nodes the solve's walks have touched (`PublicTree.nodes_per_walk`:
        one walk per player per iteration with alternating updates, one otherwise;
        the same count with or without an abstraction)."""
        walks = 2 if self.alternating_updates else 1
        return self.iteration * walks * self.tree.nodes_per_walk()

    # ----- checkpoints -----------------------------------------------------

    def _meta(self) -> dict:
        rules = self.tree.rules
        return {
            "format": CHECKPOINT_FORMAT,
            "variant": self.variant,
            "alternating_updates": self.alternating_updates,
            "rules": repr(rules),
            "isomorphism": self.tree.isomorphism,
            "chunk_boards": self.tree.chunk_boards,
            "dtype": self.dtype.name,
            "hyperparameters": self.hyperparameters,
        } | ({} if self.buckets is None else {"format": ABSTRACT_CHECKPOINT_FORMAT, "abstraction": {
            "sha256": self.buckets.digest, "num_buckets": list(self.buckets.num_buckets)}})  # fmt: skip

    def save(self, path: str) -> None:
        """Everything needed to resume, written atomically (`.npz`, SHA-256 inside)."""
        arrays = {"iteration": np.array(self.iteration), "seconds": np.array(getattr(self, "seconds", 0.0)),
                  "meta": np.array(json.dumps(self._meta()))}  # fmt: skip
        if self.buckets is not None:
            arrays.update(self.buckets.arrays())
        for (n, lo), strategy in self.strategy.items():
            arrays[f"strategy/{n}/{lo}"] = strategy
            arrays[f"average/{n}/{lo}"] = self.average[n, lo]
            minimizer = self.minimizers[n, lo]
            for name in minimizer.state_arrays:
                arrays[f"{name}/{n}/{lo}"] = getattr(minimizer, name)
        arrays["sha256"] = np.array(array_digest(arrays))
        atomic_write(path, lambda f: np.savez(f, **arrays))

    def load(self, path: str) -> None:
        """Resumes from `save`'s file; raises ValueError naming what does not match."""
        arrays, meta = read_checked_npz(path, "vector CFR checkpoint")
        arrays.pop("meta")
        expected = self._meta()
        if meta.get("abstraction") != expected.get("abstraction"):
            written = "without a card abstraction" if meta.get("abstraction") is None else \
                f"with card abstraction {meta['abstraction']}"
            raise ValueError(f"checkpoint {path} was written {written}; this solver has "
                             f"{expected.get('abstraction') or 'none'}: construct it with the same abstraction to resume")
        if meta.get("format") != expected["format"]:
            raise ValueError(f"checkpoint {path} has format {meta.get('format')!r}; this version reads "
                             f"{expected['format']!r} (restart the run, or resume it with the version that wrote it)")  # fmt: skip
        _refuse_other_rules_model(path, "checkpoint", meta, expected)
        for key, value in expected.items():
            if meta.get(key) != value:
                raise ValueError(f"checkpoint {path} was written with {key}={meta.get(key)!r}, this solver "
                                 f"has {value!r}; construct it the same way to resume")  # fmt: skip
        self.iteration = int(arrays.pop("iteration"))
        self.seconds = float(arrays.pop("seconds"))
        if self.buckets is not None:
            self.buckets.load_arrays(arrays)
            return
        chunks = {}
        for key in arrays:
            kind, n, lo = key.split("/")
            chunks[int(n), int(lo)] = None
        for n, lo in chunks:
            strategy = arrays[f"strategy/{n}/{lo}"]
            chunk = Chunk(self.tree.nodes[n].round, lo, lo + len(strategy), np.zeros((0, 0)), np.zeros((0, 0)))
            own, average, minimizer = self._arrays(n, chunk)
            own[...] = strategy
            average[...] = arrays[f"average/{n}/{lo}"]
            for name in minimizer.state_arrays:
                getattr(minimizer, name)[...] = arrays[f"{name}/{n}/{lo}"]


STRATEGY_FORMAT = "openspiel_cfrx/poker_strategy/1"


def save_strategy(path: str, tree: PublicTree, strategy, dtype=np.float32) -> int:
    """Writes any `public_tree.Strategy` on `tree` (e.g. `VectorCFR.average_strategy`)
    to an `.npz` file, one array [boards, H, actions] per decision node, in
    `dtype` (float16 halves the size at ~1e-3 relative precision). Returns the
    file's size in bytes. `load_strategy` reads it back as a Strategy."""
    arrays = {"meta": np.array(json.dumps({"format": STRATEGY_FORMAT, "rules": repr(tree.rules),
                                           "isomorphism": tree.isomorphism}))}  # fmt: skip
    for n, node in enumerate(tree.nodes):
        if node.kind == DECISION:
            total = tree.num_boards[node.round]
            block = np.empty((total, tree.deck.num_hands, len(node.legal)), dtype=dtype)
            for lo in range(0, total, tree.chunk_boards):
                hi = min(total, lo + tree.chunk_boards)
                block[lo:hi] = strategy(n, lo, hi)
            arrays[f"node/{n}"] = block
    arrays["sha256"] = np.array(array_digest(arrays))
    atomic_write(path, lambda f: np.savez(f, **arrays))
    return os.path.getsize(path)


def load_strategy(path: str, tree: PublicTree):
    """The Strategy saved by `save_strategy` for the same game and isomorphism setting."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    stored = str(arrays.pop("sha256", ""))
    if stored != array_digest(arrays):
        raise ValueError(f"strategy file {path} is damaged: its contents do not match its checksum")
    meta = json.loads(str(arrays.pop("meta")))
    expected = {"format": STRATEGY_FORMAT, "rules": repr(tree.rules), "isomorphism": tree.isomorphism}
    _refuse_other_rules_model(path, "strategy file", meta, expected)
    for key, value in expected.items():
        if meta.get(key) != value:
            raise ValueError(f"strategy file {path} has {key}={meta.get(key)!r}, this tree {value!r}")
    blocks = {int(key.split("/")[1]): value for key, value in arrays.items()}
    return lambda n, lo, hi: blocks[n][lo:hi].astype(np.float64)


def _refuse_other_rules_model(path: str, kind: str, meta: dict, expected: dict) -> None:
    """One line for a file whose rules are not a `PokerRules` (e.g. `BettingRules`, `NoLimitRules`: the rules
    models of earlier development versions), which this version does not read."""
    found, wanted = (str(rules).split("(")[0] for rules in (meta.get("rules"), expected["rules"]))
    if found != wanted:
        raise ValueError(f"{kind} {path} has format {meta.get('format')!r} with rules {found!r} (an earlier development "
                         f"version of openspiel_cfrx); this version reads {expected['format']!r} with {wanted!r} rules: "
                         "re-create it with this version (re-run the command that wrote it)")  # fmt: skip
