"""Checkpoint and resume for the neural solvers (`DeepCFRSolver`, `CFRMixSolver`).

A checkpoint is one `torch.save` file holding only tensors, numbers, strings
and containers, so it loads with `torch.load(weights_only=True)` (no
arbitrary code runs from a checkpoint file). It holds the game string, the
solver's run configuration (`settings`: `settings.to_record()`, the settings
groups of `deep.settings` / `cfr_mix.settings` with their schema version;
the one record: a solver loads a checkpoint whose record has its shapes,
`settings_type.shape_of`) and its `state_dict()`: every part's
own `state_dict()` (trainers: network and Adam moments; memories with their
reservoir counters and duplicate-tracking sums; CFR-MIX models), the
iteration, history, counters and the random streams the solver draws from
(numpy and Python `random`, and the traversal sampler's own after `reseed`;
network initialisation draws from a forked, seeded torch stream), so a run
resumed at any iteration boundary continues bit for bit (on CPU) as an
uninterrupted one would (docs/deep_cfr.md, "Exact resume"). Files are written
atomically (temp file + rename, stale temporaries of killed writers removed,
a full disk reported as such: `openspiel_cfrx.checkpoint_io`) with a SHA-256 digest of the whole payload
(every tensor's bytes, dtype and shape, every number and string, in a
canonical order); a file whose contents no longer match it is refused.

The format tag is `openspiel_cfrx.<SolverClass>/3`, so one solver refuses the
other's checkpoints. A *policy file* (`openspiel_cfrx.<SolverClass>.policy/1`,
`save_policy`) holds the game, the settings record and only what plays the average strategy
(Deep CFR: the policy network, a few hundred KB where a full HULH checkpoint
with its memories is several GB); it is checksummed the same way, rebuilds a
solver that can play and be evaluated (`NeuralSolver.from_checkpoint`), and is
refused where a run would resume from it. Any other file, including those of
earlier development versions (formats /1 and /2, or /3 files holding a `config`
instead of `game` and `settings`), is refused in one line naming the format
found and the one expected: re-create it with this version.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np
import torch

from openspiel_cfrx.checkpoint_io import atomic_write

VERSION = 3
SOLVERS = ("DeepCFRSolver", "CFRMixSolver")


def format_of(solver_name: str, version: int = VERSION) -> str:
    return f"openspiel_cfrx.{solver_name}/{version}"


def policy_format_of(solver_name: str) -> str:
    return f"openspiel_cfrx.{solver_name}.policy/1"


class CheckpointError(ValueError):
    """A checkpoint file is unreadable, corrupt, or does not match the solver."""


def _to_torch(value):
    if isinstance(value, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(value))
    if isinstance(value, dict):
        return {k: _to_torch(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_to_torch(v) for v in value)
    return value


def save(solver, path: str, extra=None) -> None:
    payload = {
        "format": format_of(type(solver).__name__),
        "game": str(solver.game),
        "settings": solver.settings.to_record(),
        "state": _to_torch(solver.state_dict()),
        "extra": extra,
    }
    _write(payload, path)


def save_policy(solver, path: str, state: dict, extra=None) -> None:
    """Writes a policy file: the game, the solver's settings record and `state` (what plays its average strategy)."""
    payload = {"format": policy_format_of(type(solver).__name__), "game": str(solver.game),
               "settings": solver.settings.to_record(), "state": _to_torch(state), "extra": extra}  # fmt: skip
    _write(payload, path)


def _digest_into(h, value) -> None:
    """Feeds a canonical serialisation of `value` into the hash `h` (a numpy
    array as the tensor a checkpoint stores it as)."""
    if isinstance(value, np.ndarray):
        value = _to_torch(value)
    if isinstance(value, torch.Tensor):
        tensor = value.detach().cpu().contiguous()
        h.update(f"T{tensor.dtype}{tuple(tensor.shape)}".encode())
        h.update(tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    elif isinstance(value, dict):
        h.update(f"D{len(value)}".encode())
        for key in sorted(value, key=repr):
            h.update(repr(key).encode())
            _digest_into(h, value[key])
    elif isinstance(value, (list, tuple)):
        h.update(f"L{len(value)}".encode())
        for item in value:
            _digest_into(h, item)
    else:
        h.update(f"S{value!r}".encode())


def payload_digest(payload: dict) -> str:
    """SHA-256 of a checkpoint payload, the `sha256` entry excluded; of any
    container of tensors, numpy arrays, numbers and strings too (e.g.
    `{"state": solver.state_dict()}`: equal digests, equal states)."""
    h = hashlib.sha256()
    _digest_into(h, {k: v for k, v in payload.items() if k != "sha256"})
    return h.hexdigest()


def _write(payload: dict, path: str) -> None:
    payload["sha256"] = payload_digest(payload)
    atomic_write(path, lambda f: torch.save(payload, f))


def _read(path: str, solver_name: str, policy: bool | None = False) -> dict:
    """The payload of `path`, checked to be a current-format checkpoint of
    `solver_name` (policy False), a policy file (True) or either (None)."""
    expected = format_of(solver_name)
    if not os.path.exists(path):
        raise CheckpointError(f"checkpoint {path!r} does not exist")
    if os.path.isfile(path) and os.path.getsize(path) == 0:
        raise CheckpointError(
            f"checkpoint {path!r} is empty (0 bytes): the run that wrote it was cut off; "
            "delete it and start over, or use an earlier checkpoint"
        )
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for damaged files
        first_line = (str(e).splitlines() or [""])[0][:200]
        raise CheckpointError(
            f"cannot read checkpoint {path!r} ({type(e).__name__}: {first_line}); "
            f"the file is corrupt, truncated, or not a {solver_name} checkpoint"
        ) from None
    found = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
    if found == policy_format_of(solver_name) or policy:
        return _read_policy(path, solver_name, payload, found, policy)
    if found != expected:
        raise CheckpointError(f"{path!r} is not a {solver_name} checkpoint (format {found!r}, expected {expected!r})"
                              f"{_other_writer(found)}")  # fmt: skip
    if payload.get("sha256") != payload_digest(payload):
        raise CheckpointError(
            f"checkpoint {path!r} is damaged: its contents do not match the checksum written "
            "with them (bytes changed after writing); use an earlier checkpoint"
        )
    _check_layout(path, payload, found)
    return payload


def _other_writer(found) -> str:
    """The fix for a file of another format: the other solver's, or an earlier development version's."""
    current = {format_of(name): name for name in SOLVERS}
    if found in current:
        return f"; it was written by {current[found]}: load it into one"
    if found in {format_of(name, v) for name in SOLVERS for v in range(1, VERSION)}:
        return (": a file of an earlier development version of openspiel_cfrx, which this version does not read; "
                "re-create it with this version (re-run the command that wrote it)")  # fmt: skip
    return ""


def _check_layout(path: str, payload: dict, found: str, kind: str = "checkpoint") -> None:
    """Refuses a checksummed payload of the current format without `game`, `settings` and `state` (one line)."""
    missing = [key for key in ("game", "settings", "state") if payload.get(key) is None]
    if missing:
        held = "; it holds a 'config' entry (the layout of an earlier development version)" if "config" in payload else ""
        lacks = " and ".join(map(repr, missing))
        raise CheckpointError(f"{kind} {path!r} has format {found!r} but lacks {lacks}{held}; "
                              "this version reads only files holding 'game', 'settings' and 'state': re-create it "
                              "with this version of openspiel_cfrx (re-run the command that wrote it)")  # fmt: skip


def _read_policy(path: str, solver_name: str, payload, found, policy: bool | None) -> dict:
    if found != policy_format_of(solver_name):
        raise CheckpointError(f"{path!r} is not a {solver_name} policy file (format {found!r}, expected "
                              f"{policy_format_of(solver_name)!r}: written by save_policy)")  # fmt: skip
    if policy is False:
        raise CheckpointError(
            f"{path!r} is a policy file (save_policy): it holds only what plays the average strategy, "
            f"not the memories and optimiser state a run resumes from; load it with "
            f"{solver_name}.from_checkpoint(path) to play or evaluate it"
        )
    if payload.get("sha256") != payload_digest(payload):
        raise CheckpointError(f"policy file {path!r} is damaged: its contents do not match the checksum "
                              "written with them (bytes changed after writing)")  # fmt: skip
    _check_layout(path, payload, found, "policy file")
    return payload


def load_policy(solver, path: str) -> None:
    """Restores a policy file into `solver` (same class, game and shapes) through `solver.load_policy_state`."""
    payload = _read(path, type(solver).__name__, policy=True)
    _check_shapes(path, payload, solver)
    try:
        solver.load_policy_state(payload["state"])
    except (KeyError, RuntimeError, ValueError, TypeError) as e:
        raise CheckpointError(f"policy file {path!r} is damaged or incompatible ({type(e).__name__}: {e})") from None
    solver.checkpoint_extra = payload.get("extra")


def _check_shapes(path: str, payload: dict, solver) -> None:
    """Raises CheckpointError naming every shape setting (`settings_type.shape_of`) that differs, and the game."""
    game, record = payload["game"], payload["settings"]
    shape_of = type(solver).settings_type.shape_of
    try:
        saved = {"game": game, **shape_of(record)}
    except (KeyError, TypeError, AttributeError) as e:
        raise CheckpointError(f"checkpoint {path!r} is damaged: its settings record lacks {e!r}") from None
    current = {"game": str(solver.game), **shape_of(solver.settings.to_record())}
    mismatched = {key: (saved[key], value) for key, value in current.items() if saved[key] != value}
    if mismatched:
        details = "; ".join(f"{k}: the checkpoint has {a!r}, this solver {b!r}" for k, (a, b) in mismatched.items())
        raise CheckpointError(f"checkpoint {path!r} does not match this solver ({details}); construct the "
                              "solver with the checkpoint's game and settings")  # fmt: skip


def read_header(path: str, solver_name: str = "DeepCFRSolver") -> tuple[str, dict, bool]:
    """(game string, settings record, is_policy_file) of a checkpoint or policy file."""
    payload = _read(path, solver_name, policy=None)
    return payload["game"], payload["settings"], payload["format"] == policy_format_of(solver_name)


def load(solver, path: str) -> None:
    """Restores `path` into `solver` (same class, game and shapes)."""
    payload = _read(path, type(solver).__name__)
    _check_shapes(path, payload, solver)
    try:
        solver.load_state_dict(payload["state"])
    except (KeyError, RuntimeError, ValueError, TypeError, IndexError) as e:
        raise CheckpointError(
            f"checkpoint {path!r} is damaged or incompatible ({type(e).__name__}: {e}); "
            "write a new one, or construct the solver with the checkpoint's settings"
        ) from None
    solver.checkpoint_extra = payload.get("extra")
    solver.checkpoint_settings = payload["settings"]


def settings_differences(saved: dict, current: dict) -> dict[str, tuple]:
    """The settings that differ between a checkpoint's run configuration
    (`solver.checkpoint_settings` after `load`, a `settings.to_record()`) and
    `current` (the resuming solver's `settings.to_record()`), as
    {"group.field": (checkpoint value, current value)} ("openspiel.num_traversals",
    "averaging.keep_iteration_networks", "schema", ...). `load` checks only
    the shapes; it does not compare settings: a
    solver may continue a checkpoint with other training settings (more
    iterations, `from_checkpoint`'s shape-only rebuild); callers that must
    refuse changed settings (the example programs) compare with this."""

    def flat(record, prefix=""):
        items = {}
        for key, value in (record or {}).items():
            name = f"{prefix}{key}"
            if isinstance(value, dict) and value and name.count(".") == 0 and key != "schema":
                items.update(flat(value, f"{name}."))
            else:
                items[name] = value
        return items

    old, new = flat(saved), flat(current)
    missing = object()
    return {name: (old.get(name), new.get(name)) for name in sorted(set(old) | set(new))
            if old.get(name, missing) != new.get(name, missing)}  # fmt: skip
