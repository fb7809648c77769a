"""Fixed-capacity sample memories for Deep CFR (Section 4, Figure 4 right).

A memory holds (encoded infoset, target vector, legal mask, iteration) entries
in preallocated numpy arrays:

    features   [capacity, feature_size]  float32   4 * feature_size bytes
    targets    [capacity, num_actions]   float32   4 * num_actions bytes
    legal_mask [capacity, num_actions]   bool      1 * num_actions bytes
    iteration  [capacity]                int32     4 bytes

so an entry costs `4 * feature_size + 5 * num_actions + 4` bytes (`entry_bytes`):
Leduc with `information_state_tensor` (30 floats, 3 actions) is 139 bytes, so
the paper's 40M entries per memory would take 5.6 GB; 10^6 entries 139 MB.

`ReservoirMemory` keeps a uniform sample of everything ever offered
(Vitter 1985, algorithm R): the paper's choice, needed for the linear-CFR
weighting to stay unbiased once the memory is full. `SlidingWindowMemory`
keeps the most recent entries (the Figure 4 ablation, which stops converging
once full).

Duplicate tracking (`track_duplicates`): in small games the same infoset is
stored many times. The training loss is a weighted sum of squares over the
memory, so entries with equal features (hence equal legal masks) merge
exactly: for an infoset I with entries k, weights w_k and targets y_k,

    sum_k w_k ||f(x_I) - y_k||^2 = W_I ||f(x_I) - ybar_I||^2 + sum_k w_k ||y_k - ybar_I||^2,

with W_I = sum_k w_k and ybar_I the w-weighted mean target; the last term does
not depend on the network. `aggregate(weights)` returns the merged rows, so
a trainer can take the exact gradient of the whole memory's loss in one small
batch. Tracking stops by itself (`duplicates_tracked` becomes False) once
more than `max_unique` distinct infosets have been seen, where merging would
no longer pay.
"""

from __future__ import annotations

import numpy as np


class _ArrayMemory:
    kind = "base"

    def __init__(self, capacity: int, feature_size: int, num_actions: int):
        capacity = int(capacity)
        if capacity < 1:
            raise ValueError(f"memory capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.features = np.zeros((capacity, int(feature_size)), dtype=np.float32)
        self.targets = np.zeros((capacity, int(num_actions)), dtype=np.float32)
        self.legal_mask = np.zeros((capacity, int(num_actions)), dtype=bool)
        self.iteration = np.zeros(capacity, dtype=np.int32)
        self.add_calls = 0  # entries ever offered
        self._key_id: np.ndarray | None = None  # distinct-infoset id per slot
        self._key_index: dict[bytes, int] = {}
        self._max_unique = 0

    @staticmethod
    def entry_bytes(feature_size: int, num_actions: int) -> int:
        return 4 * feature_size + 5 * num_actions + 4

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.features, self.targets, self.legal_mask, self.iteration))

    def __len__(self) -> int:
        return min(self.add_calls, self.capacity)

    def _slots(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(which of the `count` new entries to write, where) — subclass policy."""
        raise NotImplementedError

    def add(
        self,
        features: np.ndarray,
        targets: np.ndarray,
        legal_mask: np.ndarray,
        iteration: int | np.ndarray,
        rng: np.random.Generator,
    ) -> None:
        """Offers a batch of entries, in order, as if added one by one.

        Args:
          features: [n, feature_size]; targets: [n, num_actions];
          legal_mask: [n, num_actions] bool; iteration: scalar or [n].
        """
        count = int(features.shape[0])
        if count == 0:
            return
        keep, slots = self._slots(count, rng)
        self.features[slots] = features[keep]
        self.targets[slots] = targets[keep]
        self.legal_mask[slots] = legal_mask[keep]
        self.iteration[slots] = np.broadcast_to(np.asarray(iteration, dtype=np.int32), (count,))[keep]
        self.add_calls += count
        if self._key_id is not None and keep.size:
            ids = self._ids_of(features[keep], legal_mask[keep])
            if ids is not None:
                self._grow_key_ids(int(slots.max()) + 1)
                self._key_id[slots] = ids

    # ------------------------------------------------------------ duplicates
    def track_duplicates(self, max_unique: int = 65536) -> None:
        """Starts tracking which slots hold the same infoset (see module doc)."""
        self._max_unique = int(max_unique)
        self._key_index = {}
        self._key_id = np.full(min(self.capacity, 1024), -1, dtype=np.int32)
        size = len(self)
        if size:
            self._grow_key_ids(size)
            ids = self._ids_of(self.features[:size], self.legal_mask[:size])
            if ids is not None:
                self._key_id[:size] = ids

    def _grow_key_ids(self, needed: int) -> None:
        # Grown on demand (int32, doubling): a 40M-entry memory of a large game
        # never pays for ids it stops tracking early.
        if needed > len(self._key_id):
            grown = np.full(min(self.capacity, max(needed, 2 * len(self._key_id))), -1, dtype=np.int32)
            grown[: len(self._key_id)] = self._key_id
            self._key_id = grown

    @property
    def duplicates_tracked(self) -> bool:
        return self._key_id is not None

    @property
    def num_unique(self) -> int:
        """Distinct infosets ever tracked (an upper bound on those held)."""
        return len(self._key_index)

    def _ids_of(self, features: np.ndarray, legal_mask: np.ndarray) -> np.ndarray | None:
        rows = np.ascontiguousarray(
            np.concatenate([np.ascontiguousarray(features, np.float32).view(np.uint8),
                            np.ascontiguousarray(legal_mask, bool).view(np.uint8)], axis=1)
        )  # fmt: skip
        keys = rows.view(np.dtype((np.void, rows.shape[1]))).ravel()
        distinct, inverse = np.unique(keys, return_inverse=True)
        index = self._key_index
        ids = np.fromiter((index.setdefault(k.tobytes(), len(index)) for k in distinct), np.int64, len(distinct))
        if len(index) > self._max_unique:  # too many infosets: merging would not pay
            self._key_id, self._key_index = None, {}
            return None
        return ids[inverse.ravel()]

    def aggregate(self, weights: np.ndarray) -> dict:
        """Merges the held entries by infoset (module doc).

        Args:
          weights: [len(self)] per-entry loss weights.

        Returns: dict with `features` [U, F], `targets` [U, A] (weighted means),
        `legal_mask` [U, A], `weight` [U] (summed weights W_I), `constant` (the
        network-independent term sum_k w_k ||y_k - ybar||^2 over legal actions)
        and `size` (entries held), for the U infosets with positive weight.
        """
        if self._key_id is None:
            raise ValueError("duplicate tracking is off; call track_duplicates() first")
        size = len(self)
        ids = self._key_id[:size]
        weights = np.asarray(weights, dtype=np.float64)
        order = np.unique(ids)
        compact = np.searchsorted(order, ids)
        total = np.bincount(compact, weights=weights, minlength=len(order))
        keep = total > 0
        first = np.zeros(len(order), dtype=np.int64)
        first[compact[::-1]] = np.arange(size)[::-1]  # a representative slot per infoset
        targets = self.targets[:size].astype(np.float64)
        sums = np.stack(
            [np.bincount(compact, weights=weights * targets[:, a], minlength=len(order))
             for a in range(targets.shape[1])], axis=1)  # fmt: skip
        means = sums / np.where(total > 0, total, 1.0)[:, None]
        mask = self.legal_mask[first]
        residual = np.where(self.legal_mask[:size], targets - means[compact], 0.0)
        constant = float(np.dot(weights, (residual**2).sum(axis=1)))
        return {
            "features": self.features[first[keep]],
            "targets": means[keep].astype(np.float32),
            "legal_mask": mask[keep],
            "weight": total[keep],
            "constant": constant,
            "size": size,
        }

    def sample_indices(self, batch_size: int | None, rng: np.random.Generator) -> np.ndarray:
        """Uniform indices (with replacement) into the filled part; all of it when
        `batch_size` is None (OpenSpiel's full-memory batches)."""
        size = len(self)
        if size == 0:
            raise ValueError("cannot sample from an empty memory")
        if batch_size is None:
            return np.arange(size)
        return rng.integers(0, size, size=int(batch_size))

    def state_dict(self) -> dict:
        size = len(self)
        return {
            "kind": self.kind,
            "capacity": self.capacity,
            "add_calls": self.add_calls,
            "features": self.features[:size].copy(),
            "targets": self.targets[:size].copy(),
            "legal_mask": self.legal_mask[:size].copy(),
            "iteration": self.iteration[:size].copy(),
            **self._extra_state(),
        }

    def _extra_state(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        if state.get("kind") != self.kind or int(state.get("capacity", -1)) != self.capacity:
            raise ValueError(
                f"memory in checkpoint is {state.get('kind')!r} with capacity "
                f"{state.get('capacity')}, but this solver has {self.kind!r} with capacity "
                f"{self.capacity}; construct the solver with the checkpoint's settings"
            )
        size = int(state["features"].shape[0])
        if state["features"].shape[1:] != self.features.shape[1:] or state[
            "targets"
        ].shape[1:] != self.targets.shape[1:]:
            raise ValueError(
                f"memory entries in checkpoint have feature/action widths "
                f"{state['features'].shape[1:]}/{state['targets'].shape[1:]}, expected "
                f"{self.features.shape[1:]}/{self.targets.shape[1:]} (different game or encoder?)"
            )
        self.features[:size] = state["features"]
        self.targets[:size] = state["targets"]
        self.legal_mask[:size] = state["legal_mask"]
        self.iteration[:size] = state["iteration"]
        self.add_calls = int(state["add_calls"])
        self._load_extra_state(state)
        if self._key_id is not None:
            self.track_duplicates(self._max_unique)

    def _load_extra_state(self, state: dict) -> None:
        pass


class ReservoirMemory(_ArrayMemory):
    """Reservoir sampling: after n offers each is held with probability
    min(1, capacity / n), independently of when it arrived."""

    kind = "reservoir"

    def _slots(self, count, rng):
        # Entry number k (0-based over all offers) goes to slot k while the
        # memory is filling; afterwards to a uniform j in [0, k], kept only if
        # j < capacity. Within one batch a later entry overwrites an earlier one
        # drawn to the same slot (numpy fancy assignment writes in order), which
        # is exactly the sequential algorithm.
        numbers = self.add_calls + np.arange(count, dtype=np.int64)
        slots = numbers.copy()
        full = numbers >= self.capacity
        if full.any():
            slots[full] = (rng.random(int(full.sum())) * (numbers[full] + 1)).astype(np.int64)
        keep = slots < self.capacity
        return np.flatnonzero(keep), slots[keep]


class SlidingWindowMemory(_ArrayMemory):
    """Ring buffer: keeps the `capacity` most recent entries (Figure 4 ablation)."""

    kind = "sliding_window"

    def _slots(self, count, rng):
        del rng
        numbers = self.add_calls + np.arange(count, dtype=np.int64)
        if count > self.capacity:  # only the last `capacity` of the batch survive
            keep = np.arange(count - self.capacity, count)
        else:
            keep = np.arange(count)
        return keep, numbers[keep] % self.capacity


MEMORIES = {"reservoir": ReservoirMemory, "sliding_window": SlidingWindowMemory}


def make_memory(kind: str, capacity: int, feature_size: int, num_actions: int) -> _ArrayMemory:
    if kind not in MEMORIES:
        raise ValueError(f"unknown memory {kind!r}; choose from {', '.join(MEMORIES)}")
    return MEMORIES[kind](capacity, feature_size, num_actions)
