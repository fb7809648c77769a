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
uninterrupted one would (docs/deep_cfr.md, "Exact resume"; state keys added
since format /3 was introduced are optional on load). Files are written
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
refused where a run would resume from it. Formats /2 (checksummed) and /1 (no checksum), written
before the shared neural core with one field per private attribute, are
migrated to the /3 layout on load (`_migrate`); any other format is refused
with a message naming it. Files written before 0.3.0 hold a `config` (the
shape settings and the game, a second record) instead of `game`, and the
oldest no `settings`: `_game_and_record` reads them, the one place that does.
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
    written_by = {format_of(name, v): (name, v) for name in SOLVERS for v in range(1, VERSION + 1)}.get(found)
    if found == expected or (written_by == (solver_name, 2)):
        if payload.get("sha256") != payload_digest(payload):
            raise CheckpointError(
                f"checkpoint {path!r} is damaged: its contents do not match the checksum written "
                "with them (bytes changed after writing); use an earlier checkpoint"
            )
    elif written_by != (solver_name, 1):  # format /1: written before checksums; loads unverified
        hint = f"; it was written by {written_by[0]}: load it into one" if written_by else ""
        raise CheckpointError(
            f"{path!r} is not a {solver_name} checkpoint (format {found!r}, expected {expected!r}){hint}"
        )
    if written_by is not None and written_by[1] < VERSION:
        try:
            payload = _migrate(payload, solver_name)
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise CheckpointError(
                f"checkpoint {path!r} has the old format {found!r} but cannot be migrated to /{VERSION} "
                f"({type(e).__name__}: {e}); it is damaged, start a new run"
            ) from None
    return payload


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


def _migrate(payload: dict, solver_name: str) -> dict:
    """A format /1 or /2 payload (one field per private attribute of the solver
    before the shared neural core) in the /3 layout (`NeuralSolver.state_dict()`)."""
    counters = dict(payload["counters"])
    state = {"iteration": payload["iteration"], "np_rng": payload["np_rng"], "py_rng": payload["py_rng"],
             "history": list(payload.get("history", [])), "counters": counters}  # fmt: skip
    config = dict(payload["config"])
    if solver_name == "DeepCFRSolver":
        trainers = [{"network": n, "optimizer": o}
                    for n, o in zip(payload["advantage_networks"], payload["advantage_optimizers"], strict=True)]  # fmt: skip
        kept = payload["kept_networks"]
        state["parts"] = {
            "advantage_0": trainers[0], "advantage_1": trainers[1],
            "policy": {"network": payload["policy_network"], "optimizer": payload["policy_optimizer"]},
            "advantage_memory_0": payload["advantage_memories"][0],
            "advantage_memory_1": payload["advantage_memories"][1], "strategy_memory": payload["strategy_memory"],
            "iteration_networks": {"iterations": [t for t, _ in kept], "networks": [sds for _, sds in kept]},
        }  # fmt: skip
        losses = payload["advantage_losses"]
        state["solver"] = {"trained": payload["trained"], "policy_trained_at": payload["policy_trained_at"],
                           "policy_loss": payload["policy_loss"],
                           "advantage_losses": [list(losses[str(p)]) for p in (0, 1)]}  # fmt: skip
    else:
        def model(old):
            return {"trainer": {"network": old["net"], "optimizer": old["optimizer"]},
                    **{k: old[k] for k in ("memory", "scale", "trained", "losses", "seed")}}  # fmt: skip

        state["parts"] = {f"{kind}_model_{p}": model(m) for kind in ("regret", "policy")
                          for p, m in enumerate(payload[f"{kind}_models"])}  # fmt: skip
        state["solver"] = {"probes": counters.pop("probes")}
        config.setdefault("infoset_encoding", "tensor")  # written before the option existed
    return {**payload, "format": format_of(solver_name), "config": config, "state": state}


def _game_and_record(path: str, payload: dict, solver_name: str) -> tuple[str, dict]:
    """(game string, settings record) of a payload: today's `game` and
    `settings`; in files written before 0.3.0 the game of their `config`, and
    where they hold no record (written before records existed) one built from
    that `config`'s shape settings (`shape_of` reads only those)."""
    if "game" in payload:
        return payload["game"], payload["settings"]
    config = payload.get("config")
    if not isinstance(config, dict):
        raise CheckpointError(f"checkpoint {path!r} is damaged: its config is {type(config).__name__}")
    try:
        return config["game"], payload.get("settings") or _record_of_config(config, solver_name)
    except (KeyError, TypeError) as e:
        raise CheckpointError(f"checkpoint {path!r} has an incomplete config ({e!r})") from None


def _record_of_config(config: dict, solver_name: str) -> dict:
    """The shape fields of a settings record, from a file's `config` (the second record before 0.3.0)."""
    layers = {key: config[key] for key in config if key.endswith("_network_layers")}
    if solver_name == "DeepCFRSolver":
        averaging = {key: config[key] for key in ("average_policy", "linear_weighting", "average_weighting")
                     if key in config}  # fmt: skip
        return {"openspiel": {**layers, "memory_capacity": config["memory_capacity"]},
                "memory": {"kind": config["memory"], "strategy_capacity": config["strategy_memory_capacity"]},
                "network": {"family": config["network"]}, "averaging": averaging,
                "training": {"regret_scale": config.get("regret_scale", 1.0)}}  # fmt: skip
    return {"core": {**layers, "variant": config["variant"], "memory_capacity": config["memory_capacity"]},
            "network": {"family": config["network"], "infoset_encoding": config.get("infoset_encoding", "tensor"),
                        "share_parameters": config["share_parameters"]},
            "traversal": {"joint_cap": config["joint_cap"]}}  # fmt: skip


def _check_shapes(path: str, payload: dict, solver) -> None:
    """Raises CheckpointError naming every shape setting (`settings_type.shape_of`) that differs, and the game."""
    game, record = _game_and_record(path, payload, type(solver).__name__)
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
    game, record = _game_and_record(path, payload, solver_name)
    return game, record, payload["format"] == policy_format_of(solver_name)


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
    solver.checkpoint_settings = payload.get("settings")  # None: written before settings were recorded


def settings_differences(saved: dict | None, current: dict) -> dict[str, tuple] | None:
    """The settings that differ between a checkpoint's run configuration
    (`solver.checkpoint_settings` after `load`, a `settings.to_record()`) and
    `current` (the resuming solver's `settings.to_record()`), as
    {"group.field": (checkpoint value, current value)} ("openspiel.num_traversals",
    "averaging.keep_iteration_networks", "schema", ...). None when the
    checkpoint has no record (written before checkpoints recorded their
    settings): its settings cannot be checked, only its shapes, which `load`
    always checks. `load` itself does not compare settings: a
    solver may continue a checkpoint with other training settings (more
    iterations, `from_checkpoint`'s shape-only rebuild); callers that must
    refuse changed settings (the example programs) compare with this."""
    if saved is None:
        return None

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
