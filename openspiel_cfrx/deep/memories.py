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
`feature_dtype="float16"` stores the features in half the bytes when every
value is a float16 exactly (0/1 infoset tensors, the poker encoders' card
indices and bet sizes in halves of a big blind): the memory then holds the
same numbers, read back as float32, and refuses a batch it would round.
`check_memory_budget` refuses memories that could not fill up in the memory
available (numpy allocates their pages as entries arrive, so without it a too
large capacity fails only hours later).

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
not depend on the network. The memory keeps these sums up to date as entries
arrive and are evicted, so `aggregate()` returns the merged rows at a cost
independent of the memory's size, and
a trainer can take the exact gradient of the whole memory's loss in one small
batch. Tracking stops by itself (`duplicates_tracked` becomes False) once
more than `max_unique` distinct infosets have been seen, where merging would
no longer pay. `state_dict()` keeps the tracking as it stands (the sums as
accumulated, the infosets' numbering, or that tracking stopped), so a memory
restored from a checkpoint merges exactly as the one that wrote it would have.
"""

from __future__ import annotations

import abc

import numpy as np

from openspiel_cfrx.deep import settings

FEATURE_DTYPES = ("float32", "float16")


def _feature_dtype(name: str) -> np.dtype:
    if name not in FEATURE_DTYPES:
        raise ValueError(f"unknown memory feature dtype {name!r}; choose from {', '.join(FEATURE_DTYPES)}")
    return np.dtype(name)


def check_memory_budget(capacities, feature_size: int, num_actions: int, feature_dtype: str = "float32",
                        available: int | None = None) -> int:  # fmt: skip
    """Bytes the memories of `capacities` take when full; raises ValueError
    (one line, with the estimate) when that is more than the memory available
    now (`available`, default psutil's)."""
    need = sum(int(c) for c in capacities) * _ArrayMemory.entry_bytes(feature_size, num_actions, feature_dtype)
    if available is None:
        import psutil

        available = psutil.virtual_memory().available
    if need > available:
        half = "" if feature_dtype == "float16" else ", or MemorySettings(feature_dtype='float16') (half the feature bytes)"
        raise ValueError(
            f"memories of {', '.join(f'{int(c):,}' for c in capacities)} entries would take "
            f"{need / 2**30:.1f} GiB when full ({_ArrayMemory.entry_bytes(feature_size, num_actions, feature_dtype)} "
            f"bytes per entry: {feature_size} {feature_dtype} features, {num_actions} actions), more than the "
            f"{available / 2**30:.1f} GiB available; lower memory_capacity / MemorySettings(strategy_capacity=...){half}"
        )
    return need


class _ArrayMemory(abc.ABC):
    kind = "base"
    # the running per-infoset sums of duplicate tracking (`track_duplicates`)
    _SUMS = ("_m_features", "_m_mask", "_m_count", "_m_t", "_m_y", "_m_ty", "_m_yy", "_m_tyy")

    def __init__(self, capacity: int, feature_size: int, num_actions: int, feature_dtype: str = "float32"):
        capacity = int(capacity)
        if capacity < 1:
            raise ValueError(f"memory capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.features = np.zeros((capacity, int(feature_size)), dtype=_feature_dtype(feature_dtype))
        self.targets = np.zeros((capacity, int(num_actions)), dtype=np.float32)
        self.legal_mask = np.zeros((capacity, int(num_actions)), dtype=bool)
        self.iteration = np.zeros(capacity, dtype=np.int32)
        self.add_calls = 0  # entries ever offered
        self._key_id: np.ndarray | None = None  # distinct-infoset id per slot
        self._key_index: dict[bytes, int] = {}
        self._max_unique = 0
        self._tracking_stopped = False  # tracking was on and stopped itself (too many infosets)
        self._m_count = None  # running per-infoset sums while tracking

    @staticmethod
    def entry_bytes(feature_size: int, num_actions: int, feature_dtype: str = "float32") -> int:
        return _feature_dtype(feature_dtype).itemsize * feature_size + 5 * num_actions + 4

    @property
    def feature_dtype(self) -> str:
        return self.features.dtype.name

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.features, self.targets, self.legal_mask, self.iteration))

    def __len__(self) -> int:
        return min(self.add_calls, self.capacity)

    @abc.abstractmethod
    def _slots(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(which of the `count` new entries to write, where) — subclass policy."""

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
        if self.features.dtype != np.float32:
            features = self._exactly(features)
        keep, slots = self._slots(count, rng)
        tracking = self._key_id is not None and keep.size > 0
        if tracking:  # remove what the written slots held before
            written = np.unique(slots)
            evicted = written[written < len(self)]
            if evicted.size:
                self._accumulate(evicted, self._key_id[evicted].astype(np.int64), -1.0)
        iterations = np.broadcast_to(np.asarray(iteration, dtype=np.int32), (count,))
        lo = int(slots[0]) if slots.size else 0
        if keep.size == count and int(slots[-1]) - lo == count - 1 and bool(np.all(slots[1:] > slots[:-1])):
            # every entry to consecutive slots (a filling memory): slice writes, no gather copies
            keep, slots = slice(None), slice(lo, lo + count)
        self.features[slots] = features[keep]
        self.targets[slots] = targets[keep]
        self.legal_mask[slots] = legal_mask[keep]
        self.iteration[slots] = iterations[keep]
        self.add_calls += count
        if tracking:
            self._track_slots(written)

    def _exactly(self, features: np.ndarray) -> np.ndarray:
        """`features` in the memory's dtype; refuses a batch the dtype would round."""
        features = np.asarray(features)
        stored = features.astype(self.features.dtype)
        lost = stored.astype(np.float32) != features
        if lost.any():
            value = features[lost].flat[0]
            raise ValueError(
                f"MemorySettings(feature_dtype={self.feature_dtype!r}) cannot hold these features exactly (e.g. {value!r}); "
                "use 'float32' for this encoder"
            )
        return stored

    # ------------------------------------------------------------ duplicates
    def track_duplicates(self, max_unique: int = 65536) -> None:
        """Starts tracking which slots hold the same infoset, with running
        per-infoset sums (see module doc)."""
        self._max_unique = int(max_unique)
        self._tracking_stopped = False
        self._key_index = {}
        self._key_id = np.full(min(self.capacity, 1024), -1, dtype=np.int32)
        a = self.targets.shape[1]
        self._m_features = np.zeros((0, self.features.shape[1]), np.float32)
        self._m_mask = np.zeros((0, a), bool)
        self._m_count, self._m_t = np.zeros(0), np.zeros(0)
        self._m_y, self._m_ty = np.zeros((0, a)), np.zeros((0, a))
        self._m_yy, self._m_tyy = np.zeros(0), np.zeros(0)
        size = len(self)
        if size:
            self._track_slots(np.arange(size))

    @property
    def duplicates_tracked(self) -> bool:
        return self._key_id is not None

    @property
    def num_unique(self) -> int:
        """Distinct infosets ever tracked (an upper bound on those held)."""
        return len(self._key_index)

    def _stop_tracking(self) -> None:
        self._key_id, self._key_index, self._tracking_stopped = None, {}, True
        for name in self._SUMS:
            setattr(self, name, None)

    def _grow_key_ids(self, needed: int) -> None:
        # Grown on demand (int32, doubling): a 40M-entry memory of a large game
        # never pays for ids it stops tracking early.
        if needed > len(self._key_id):
            grown = np.full(min(self.capacity, max(needed, 2 * len(self._key_id))), -1, dtype=np.int32)
            grown[: len(self._key_id)] = self._key_id
            self._key_id = grown

    def _accumulate(self, slots: np.ndarray, ids: np.ndarray, sign: float) -> None:
        """Adds (sign=+1) or removes (-1) the entries at `slots` to the sums of `ids`."""
        n = len(self._m_count)
        y = self.targets[slots].astype(np.float64)
        t = self.iteration[slots].astype(np.float64)
        yy = np.where(self.legal_mask[slots], y * y, 0.0).sum(axis=1)
        self._m_count += sign * np.bincount(ids, minlength=n)
        self._m_t += sign * np.bincount(ids, weights=t, minlength=n)
        self._m_yy += sign * np.bincount(ids, weights=yy, minlength=n)
        self._m_tyy += sign * np.bincount(ids, weights=t * yy, minlength=n)
        for a in range(y.shape[1]):
            self._m_y[:, a] += sign * np.bincount(ids, weights=y[:, a], minlength=n)
            self._m_ty[:, a] += sign * np.bincount(ids, weights=t * y[:, a], minlength=n)

    def _track_slots(self, final: np.ndarray) -> None:
        """Ids and sums for the (distinct) slots `final`, just written."""
        ids = self._ids_of(self.features[final], self.legal_mask[final])
        if ids is None:
            return
        self._grow_key_ids(int(final.max()) + 1)
        self._key_id[final] = ids
        self._accumulate(final, ids, +1.0)

    def _ids_of(self, features: np.ndarray, legal_mask: np.ndarray) -> np.ndarray | None:
        rows = np.ascontiguousarray(
            np.concatenate([np.ascontiguousarray(features, np.float32).view(np.uint8),
                            np.ascontiguousarray(legal_mask, bool).view(np.uint8)], axis=1)
        )  # fmt: skip
        keys = rows.view(np.dtype((np.void, rows.shape[1]))).ravel()
        distinct, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        index = self._key_index
        before = len(index)
        ids = np.fromiter((index.setdefault(k.tobytes(), len(index)) for k in distinct), np.int64, len(distinct))
        if len(index) > self._max_unique:  # too many infosets: merging would not pay
            self._stop_tracking()
            return None
        added = len(index) - before
        if added:
            new = ids >= before
            order = np.argsort(ids[new])
            a = self.targets.shape[1]
            self._m_features = np.concatenate([self._m_features, features[first[new]][order]])
            self._m_mask = np.concatenate([self._m_mask, legal_mask[first[new]][order]])
            self._m_count, self._m_t = np.pad(self._m_count, (0, added)), np.pad(self._m_t, (0, added))
            self._m_yy, self._m_tyy = np.pad(self._m_yy, (0, added)), np.pad(self._m_tyy, (0, added))
            self._m_y = np.concatenate([self._m_y, np.zeros((added, a))])
            self._m_ty = np.concatenate([self._m_ty, np.zeros((added, a))])
        return ids[inverse.ravel()]

    def aggregate(self, weighting: str = "linear", scale: float = 1.0) -> dict:
        """The held entries merged by infoset (module doc), from running sums
        (cost independent of the number of entries).

        Args:
          weighting: "linear" (entry weight = scale * its iteration, linear
            CFR) or "uniform" (weight = scale).

        Returns: dict with `features` [U, F], `targets` [U, A] (weighted means),
        `legal_mask` [U, A], `weight` [U] (summed weights W_I), `constant` (the
        network-independent term sum_k w_k ||y_k - ybar||^2 over legal actions)
        and `size` (entries held), for the U infosets with positive weight.
        """
        if self._key_id is None:
            raise ValueError("duplicate tracking is off; call track_duplicates() first")
        if weighting == "linear":
            total, weighted_y, weighted_yy = self._m_t, self._m_ty, self._m_tyy
        elif weighting == "uniform":
            total, weighted_y, weighted_yy = self._m_count, self._m_y, self._m_yy
        else:
            raise ValueError(f"weighting must be 'linear' or 'uniform', got {weighting!r}")
        keep = (self._m_count > 0.5) & (total > 0)
        total = total[keep] * scale
        means = weighted_y[keep] * scale / total[:, None]
        mask = self._m_mask[keep]
        constant = float(weighted_yy[keep].sum() * scale - (total * np.where(mask, means**2, 0.0).sum(axis=1)).sum())
        return {
            "features": self._m_features[keep],
            "targets": means.astype(np.float32),
            "legal_mask": mask,
            "weight": total,
            "constant": max(constant, 0.0),
            "size": len(self),
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
            "features": self.features[:size].copy(),  # in the memory's dtype (either dtype loads it, exactly)
            "targets": self.targets[:size].copy(),
            "legal_mask": self.legal_mask[:size].copy(),
            "iteration": self.iteration[:size].copy(),
            "duplicates": self._duplicates_state(size),
        }

    def _duplicates_state(self, size: int) -> dict:
        """The duplicate tracking as it stands: "off", "stopped", or "on" with
        each slot's infoset id and the running per-infoset sums (float64,
        accumulated in arrival order: rebuilding them from the held entries
        would round differently and number the infosets in another order,
        so a resumed run would not fit the same merged batch bit for bit)."""
        if self._key_id is None:
            return {"tracking": "stopped" if self._tracking_stopped else "off"}
        state = {name.lstrip("_"): getattr(self, name).copy() for name in self._SUMS}
        return {"tracking": "on", "key_id": self._key_id[:size].copy(), **state}

    def _load_duplicates_state(self, state: dict) -> None:
        """Restores `_duplicates_state` into a memory that tracks duplicates
        (one that does not, built with aggregate_duplicates off, ignores it;
        one that does, given the state of one that did not, rebuilds the sums
        from the held entries: the same merged rows up to rounding)."""
        if self._key_id is None:
            return
        tracking = state["tracking"]
        if tracking == "stopped":
            self._stop_tracking()
            return
        if tracking != "on":
            self.track_duplicates(self._max_unique)
            return
        for name in self._SUMS:
            setattr(self, name, np.array(state[name.lstrip("_")]))
        key_id = np.asarray(state["key_id"], dtype=np.int32)
        self._key_id = np.full(min(self.capacity, max(1024, len(key_id))), -1, dtype=np.int32)
        self._key_id[: len(key_id)] = key_id
        keys = np.concatenate([np.ascontiguousarray(self._m_features, np.float32).view(np.uint8),
                               np.ascontiguousarray(self._m_mask, bool).view(np.uint8)], axis=1)  # fmt: skip
        self._key_index = {row.tobytes(): i for i, row in enumerate(keys)}  # as `_ids_of` numbers them
        self._tracking_stopped = False

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
        features = np.asarray(state["features"])
        self.features[:size] = features if features.dtype == self.features.dtype else self._exactly(features)
        self.targets[:size] = state["targets"]
        self.legal_mask[:size] = state["legal_mask"]
        self.iteration[:size] = state["iteration"]
        self.add_calls = int(state["add_calls"])
        self._load_duplicates_state(state["duplicates"])


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
settings.MEMORY_KINDS.register_all(MEMORIES)
settings.FEATURE_DTYPES.register_all({name: np.dtype(name) for name in FEATURE_DTYPES})


def make_memory(kind: str, capacity: int, feature_size: int, num_actions: int,
                feature_dtype: str = "float32") -> _ArrayMemory:  # fmt: skip
    if kind not in MEMORIES:
        raise ValueError(f"unknown memory {kind!r}; choose from {', '.join(MEMORIES)}")
    return MEMORIES[kind](capacity, feature_size, num_actions, feature_dtype)
