"""The in-process traversal backends of Deep CFR (Algorithm 2 of Brown et al. 2019).

The protocol they implement (`Sampler`, `Samples`, `StrategyFn`) and the
registry of backends by name are in `openspiel_cfrx.sampling`; this module
registers:

* "state": `TraversalSampler(StateCursor(...))` walks pyspiel states; any game.
* "tree": `TraversalSampler(TreeWalker(...))` walks the extracted tree's
  arrays; the same samples as "state" for the same seed, much faster.
* "vectorized": `VectorSampler`: all traversals of a chunk advance together
  as numpy arrays over the extracted tree (`vector_traversal.py`); the same
  sampling distribution, another random stream.

"poker" (limit poker games too large to extract) is
`openspiel_cfrx.neural_poker.traversal.PokerSampler`. `distributed.RaySampler`
runs any of these on Ray workers (then `strategy` must be picklable: a snapshot).
"""

from __future__ import annotations

import contextlib
import gc
import random
import sys
from collections.abc import Callable

import numpy as np

from openspiel_cfrx.deep.traversal import (
    StateCursor,
    TraversalRecord,
    TreeWalker,
    external_sampling_traversal,
    legal_mask,
    run_batched,
)
from openspiel_cfrx.sampling import (  # noqa: F401  (Sampler, Samples, StrategyFn, make_sampler re-exported)
    Sampler,
    Samples,
    StrategyFn,
    make_sampler,
    register_sampler,
)
from openspiel_cfrx.tree import get_tree


def answer_queries(strategy: StrategyFn, num_actions: int) -> Callable[[list], list]:
    """Answers a round of traversal queries `(player, features, legal)` with
    one `strategy` call (one forward pass) per player."""

    def answer(queries: list) -> list:
        answers = [None] * len(queries)
        by_player: dict[int, list[int]] = {}
        for index, query in enumerate(queries):
            by_player.setdefault(query[0], []).append(index)
        for player, indices in by_player.items():
            mask = legal_mask([queries[i][2] for i in indices], num_actions)
            features = np.asarray([queries[i][1] for i in indices], dtype=np.float32)
            for i, row in zip(indices, strategy(player, features, mask).tolist(), strict=True):
                answers[i] = row
        return answers

    return answer


@contextlib.contextmanager
def gc_paused():
    """Python's cyclic garbage collector off for the block (restored after).

    A batch of traversals keeps its samples as Python objects until it ends,
    so they survive into the oldest generation and set off repeated full
    collections that scan the whole heap. Paused, the state backend runs
    1.11-1.14x faster with batches of 1,000 traversals (5x2 and full FHP) and
    CFR-MIX's probe traversals (`cfr_mix.team_model.ProbeSampler`) 1.25x
    (`docs/decisions.md`, "Pause the cyclic garbage collector"); 1.3-2.0x with
    batches of 4,096 (full FHP, HULH). A batch leaves no cyclic garbage (`gc.collect()`
    after one finds nothing), and the collector runs as usual once it is back
    on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class TraversalTooLargeError(MemoryError):
    """A batch of traversals recorded more samples than the memory allowed."""


def _approximate_bytes(obj) -> int:
    """Bytes held by a recorded list / tuple of numbers or a numpy array (elements sampled)."""
    if isinstance(obj, np.ndarray):
        return sys.getsizeof(obj) + (0 if obj.base is None else obj.nbytes)
    size = sys.getsizeof(obj)
    if isinstance(obj, (list, tuple)) and obj:
        head = obj[:8]
        size += sum(sys.getsizeof(x) for x in head) * len(obj) // len(head)
    return size


class TraversalSampler(Sampler):
    """External sampling as batched generators over a cursor (`StateCursor`
    or `TreeWalker`), `batch_size` traversals advancing together.

    The batch's samples are Python objects until it ends; a traversal visits
    every traverser action, so one traversal of a large game can record
    millions of them. The batch is stopped with `TraversalTooLargeError` (an
    estimate and the fix) once its samples would take more than
    `max_record_bytes` (default: half the memory available when collection
    starts), instead of swapping the machine.
    """

    def __init__(self, cursor, num_actions: int, batch_size: int, rng: random.Random,
                 max_record_bytes: int | None = None):  # fmt: skip
        self.cursor, self.num_actions, self.batch_size, self.rng = cursor, num_actions, batch_size, rng
        self.max_record_bytes = max_record_bytes

    def collect(self, strategy, traverser, iteration, count):
        answer = answer_queries(strategy, self.num_actions)
        limit = self.max_record_bytes
        if limit is None:
            import psutil

            limit = psutil.virtual_memory().available // 2
        for lo in range(0, count, self.batch_size):
            record, size = TraversalRecord(), min(self.batch_size, count - lo)
            with gc_paused():
                run_batched((external_sampling_traversal(self.cursor, self.cursor.root(), traverser, self.num_actions,
                                                         self.rng, record) for _ in range(size)),
                            answer, lambda record=record, size=size: self._check(record, size, limit))  # fmt: skip
                samples = samples_from_record(record, self.num_actions)
                del record  # its lists go before the collector is back on, not scanned by it first
            yield samples

    def _check(self, record: TraversalRecord, traversals: int, limit: int) -> None:
        regrets, strategies = len(record.advantage_features), len(record.strategy_features)
        if not regrets and not strategies:
            return
        first = ((record.advantage_features, record.advantage_regrets, record.advantage_legal) if regrets else
                 (record.strategy_features, record.strategy_probs, record.strategy_legal))  # fmt: skip
        per_sample = sum(_approximate_bytes(entries[0]) + 8 for entries in first)  # + the lists' pointers
        used = (regrets + strategies) * per_sample
        if used > limit:
            raise TraversalTooLargeError(
                f"a batch of {traversals} external-sampling traversals has recorded {regrets + strategies:,} samples "
                f"({record.nodes:,} histories touched, ~{used / 2**30:.2f} GiB at ~{per_sample:,} bytes each) and is "
                f"not finished; the limit is {limit / 2**30:.2f} GiB (half the available memory by default). Each "
                "traversal explores every traverser action, so its size grows with the game tree: use a smaller "
                "game, fewer traversals per batch (batch_size), or a backend that stores arrays ('vectorized' for "
                "extractable games, 'poker' for limit poker)"
            )


class VectorSampler(Sampler):
    """Vectorised external sampling over an extracted tree: sigma^t at every
    infoset from one `strategy` call per player, then `batch_size`
    traversals at a time as arrays."""

    def __init__(self, tree, encoder, batch_size: int, rng: np.random.Generator):
        from openspiel_cfrx.deep.vector_traversal import VectorTree

        self.vector, self.batch_size, self.rng = VectorTree(tree), batch_size, rng
        self.features = np.asarray(
            [encoder(s, int(p)) for s, p in zip(tree.infoset_states(), tree.infoset_player, strict=True)],
            dtype=np.float32,
        ).reshape(tree.num_infosets, -1)
        self.mask = tree.infoset_legal_mask.astype(bool)

    def collect(self, strategy, traverser, iteration, count):
        tree = self.vector.tree
        table = np.zeros((tree.num_infosets, tree.num_actions))
        for p in (0, 1):
            lo, hi = tree.infoset_range[p]
            table[lo:hi] = strategy(p, self.features[lo:hi], self.mask[lo:hi])
        for lo in range(0, count, self.batch_size):
            s = self.vector.traverse(traverser, min(self.batch_size, count - lo), table, self.rng)
            adv, strat = s.advantage_infosets, s.strategy_infosets
            yield Samples(self.features[adv], s.advantage_regrets, self.mask[adv],
                          self.features[strat], s.strategy_probs, self.mask[strat], s.nodes)  # fmt: skip


def smallest_share(backend: str, batch_size: int) -> int:
    """The fewest traversals worth sending a Ray worker as one share.

    A share has a fixed cost (a Ray call, its result through the object
    store, the learner's bookkeeping: a few ms) and the Python backends run
    it as one lock-step batch whose per-traversal cost is flat from about 100
    traversals up (5x2 FHP, state backend, one thread: 50 -> 95k nodes/s,
    100 -> 112k, 400 -> 121k). So about 30 ms of work at least: 100
    traversals of the state backend on 5x2 FHP, 500 of the tree backend on
    Leduc (~60 us each; at 125, 2 workers on 2 cores lost a tenth of their
    throughput to per-share costs). The array backends need their whole
    batch to amortise each step."""
    floor = {"state": 100, "tree": 500}.get(backend)
    return int(batch_size) if floor is None else min(int(batch_size), floor)


def samples_from_record(record: TraversalRecord, num_actions: int) -> Samples:
    """The arrays of a batch's recorded Python lists."""

    def arrays(features, values, legal):
        width = len(features[0]) if features else 0
        return (np.asarray(features, dtype=np.float32).reshape(len(features), width),
                np.asarray(values, dtype=np.float32).reshape(len(values), num_actions),
                legal_mask(legal, num_actions))  # fmt: skip

    return Samples(*arrays(record.advantage_features, record.advantage_regrets, record.advantage_legal),
                   *arrays(record.strategy_features, record.strategy_probs, record.strategy_legal),
                   record.nodes)  # fmt: skip


def _state_sampler(game, encoder, num_actions, batch_size, py_rng, np_rng) -> Sampler:
    return TraversalSampler(StateCursor(game, encoder), num_actions, batch_size, py_rng)


def _tree_sampler(game, encoder, num_actions, batch_size, py_rng, np_rng) -> Sampler:
    return TraversalSampler(TreeWalker(get_tree(game), encoder), num_actions, batch_size, py_rng)


def _vector_sampler(game, encoder, num_actions, batch_size, py_rng, np_rng) -> Sampler:
    return VectorSampler(get_tree(game), encoder, batch_size, np_rng)


register_sampler("state", _state_sampler)
register_sampler("tree", _tree_sampler)
register_sampler("vectorized", _vector_sampler)
