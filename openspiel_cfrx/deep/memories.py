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
