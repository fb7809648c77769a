"""Checkpoint and resume for the deep solvers (`DeepCFRSolver`, `CFRMixSolver`).

A checkpoint is one `torch.save` file holding only tensors, numbers, strings
and containers, so it loads with `torch.load(weights_only=True)` (no
arbitrary code runs from a checkpoint file). It contains the networks,
optimiser states, memories, iteration counter, loss history, kept networks
(SD-CFR mode, Deep CFR) and the RNG states the solver draws from (numpy and
Python `random`; neither solver uses torch's global RNG: network
initialisation draws from a forked, seeded one), so a resumed run continues
exactly as an uninterrupted one would. Files are written atomically (temp
file + rename, stale temporaries of killed writers removed, a full disk
reported as such: `openspiel_cfrx.checkpoint_io`). Each solver type has its
own `format` tag, so one solver refuses the other's checkpoints.

Format /2 stores a SHA-256 digest of the whole payload (every tensor's bytes,
dtype and shape, every number and string, in a canonical order); a file whose
contents no longer match it (e.g. bytes overwritten in place) is refused with
`CheckpointError`. Format /1 files (no digest) still load.
"""

from __future__ import annotations

import hashlib
import os
import random

import numpy as np
import torch

from openspiel_cfrx.checkpoint_io import atomic_write

FORMAT = "openspiel_cfrx.DeepCFRSolver/2"
CFR_MIX_FORMAT = "openspiel_cfrx.CFRMixSolver/2"
_LEGACY = {FORMAT: "openspiel_cfrx.DeepCFRSolver/1", CFR_MIX_FORMAT: "openspiel_cfrx.CFRMixSolver/1"}
_SOLVER_OF_FORMAT = {FORMAT: "DeepCFRSolver", CFR_MIX_FORMAT: "CFRMixSolver"}
_SOLVER_OF_FORMAT.update({old: _SOLVER_OF_FORMAT[new] for new, old in _LEGACY.items()})


class CheckpointError(ValueError):
    """A checkpoint file is unreadable, corrupt, or does not match the solver."""


def _to_torch(value):
    if isinstance(value, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(value))
    if isinstance(value, dict):
        return {k: _to_torch(v) for k, v in value.items()}
    return value


def _to_numpy(value):
    if isinstance(value, torch.Tensor):
        return value.numpy()
    if isinstance(value, dict):
        return {k: _to_numpy(v) for k, v in value.items()}
    return value


def save(solver, path: str, extra=None) -> None:
    payload = {
        "format": FORMAT,
        "config": dict(solver.config),
        "iteration": solver._iteration,
        "trained": list(solver._trained),
        "policy_trained_at": solver._policy_trained_at,
        "policy_loss": solver._policy_loss,
        "advantage_losses": {str(p): list(v) for p, v in solver._advantage_losses.items()},
        "advantage_networks": [n.state_dict() for n in solver._advantage_networks],
        "advantage_optimizers": [o.state_dict() for o in solver._advantage_optimizers],
        "policy_network": solver._policy_network.state_dict(),
        "policy_optimizer": solver._policy_optimizer.state_dict(),
        "advantage_memories": [_to_torch(m.state_dict()) for m in solver._advantage_memories],
        "strategy_memory": _to_torch(solver._strategy_memory.state_dict()),
        "kept_networks": [[t, sds] for t, sds in solver._kept_networks],
        "np_rng": solver._np_rng.bit_generator.state,
        "py_rng": solver._py_rng.getstate(),
        "counters": {
            "nodes_touched": solver.nodes_touched,
            "traversal_seconds": solver.traversal_seconds,
            "training_seconds": solver.training_seconds,
        },
    }
    payload["extra"] = extra
    _write(payload, path)


def _digest_into(h, value) -> None:
    """Feeds a canonical serialisation of `value` into the hash `h`."""
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
    """SHA-256 of a checkpoint payload, the `sha256` entry excluded."""
    h = hashlib.sha256()
    _digest_into(h, {k: v for k, v in payload.items() if k != "sha256"})
    return h.hexdigest()


def _write(payload: dict, path: str) -> None:
    payload["sha256"] = payload_digest(payload)
    atomic_write(path, lambda f: torch.save(payload, f))


def _read(path: str, expected_format: str) -> dict:
    """The payload of `path`, checked to carry `expected_format`."""
    solver_name = _SOLVER_OF_FORMAT[expected_format]
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
    if found == _LEGACY.get(expected_format):
        return payload  # format /1: written before checksums; loads unverified
    if found == expected_format and payload.get("sha256") != payload_digest(payload):
        raise CheckpointError(
            f"checkpoint {path!r} is damaged: its contents do not match the checksum written "
            "with them (bytes changed after writing); use an earlier checkpoint"
        )
    if found != expected_format:
        hint = ""
        if found in _SOLVER_OF_FORMAT:
            hint = f"; it was written by {_SOLVER_OF_FORMAT[found]}: load it into one"
        raise CheckpointError(
            f"{path!r} is not a {solver_name} checkpoint (format {found!r}, expected "
            f"{expected_format!r}){hint}"
        )
    return payload


def _check_config(path: str, saved, current: dict) -> None:
    """Raises CheckpointError naming every setting that differs."""
    if not isinstance(saved, dict):
        raise CheckpointError(f"checkpoint {path!r} is damaged: its config is {type(saved).__name__}")
    mismatched = {key: (saved.get(key), value) for key, value in current.items() if saved.get(key) != value}
    if mismatched:
        details = "; ".join(f"{k}: checkpoint {a!r} vs solver {b!r}" for k, (a, b) in mismatched.items())
        raise CheckpointError(
            f"checkpoint {path!r} does not match this solver ({details}); construct the "
            "solver with the checkpoint's game and settings"
        )


def _python_rng(state) -> random.Random:
    rng = random.Random()
    version, internal, gauss = state
    rng.setstate((version, tuple(internal), gauss))
    return rng


def read_config(path: str) -> dict:
    """The settings a Deep CFR checkpoint was written with (`solver.config`)."""
    config = _read(path, FORMAT).get("config")
    if not isinstance(config, dict):
        raise CheckpointError(f"checkpoint {path!r} is damaged: its config is {type(config).__name__}")
    return dict(config)


def load(solver, path: str) -> None:
    payload = _read(path, FORMAT)
    solver.checkpoint_extra = payload.get("extra")
    _check_config(path, payload.get("config"), solver.config)
    try:
        for net, state in zip(solver._advantage_networks, payload["advantage_networks"], strict=True):
            net.load_state_dict(state)
        solver._advantage_optimizers = [solver._new_optimizer(n) for n in solver._advantage_networks]
        for opt, state in zip(solver._advantage_optimizers, payload["advantage_optimizers"], strict=True):
            opt.load_state_dict(state)
        solver._policy_network.load_state_dict(payload["policy_network"])
        solver._policy_optimizer = solver._new_optimizer(solver._policy_network)
        solver._policy_optimizer.load_state_dict(payload["policy_optimizer"])
        for memory, state in zip(solver._advantage_memories, payload["advantage_memories"], strict=True):
            memory.load_state_dict(_to_numpy(state))
        solver._strategy_memory.load_state_dict(_to_numpy(payload["strategy_memory"]))
        solver._kept_networks = [(int(t), list(sds)) for t, sds in payload["kept_networks"]]
        solver._np_rng.bit_generator.state = payload["np_rng"]
        solver._py_rng = _python_rng(payload["py_rng"])
    except (KeyError, RuntimeError, ValueError, TypeError) as e:
        raise CheckpointError(f"checkpoint {path!r} is damaged or incompatible: {e}") from None
    solver._iteration = int(payload["iteration"])
    solver._trained = [bool(x) for x in payload["trained"]]
    solver._policy_trained_at = int(payload["policy_trained_at"])
    solver._policy_loss = payload["policy_loss"]
    solver._advantage_losses = {int(p): list(v) for p, v in payload["advantage_losses"].items()}
    counters = payload["counters"]
    solver.nodes_touched = int(counters["nodes_touched"])
    solver.traversal_seconds = float(counters["traversal_seconds"])
    solver.training_seconds = float(counters["training_seconds"])
    solver._eval_cache = {}


# ------------------------------------------------------------------ CFR-MIX
def save_cfr_mix(solver, path: str, extra=None) -> None:
    """Writes a `CFRMixSolver`: per player and network kind (regret, average
    strategy) the agent network, optimiser moments, memory (filled part),
    target scale, losses and seed; the iteration, history, counters and both
    RNG states."""

    def model_state(model) -> dict:
        state = model.state_dict()
        state["memory"] = _to_torch(state["memory"])
        return state

    payload = {
        "format": CFR_MIX_FORMAT,
        "config": dict(solver.config),
        "iteration": solver._iteration,
        "regret_models": [model_state(m) for m in solver._regret_models],
        "policy_models": [model_state(m) for m in solver._policy_models],
        "np_rng": solver._np_rng.bit_generator.state,
        "py_rng": solver._py_rng.getstate(),
        "history": list(solver.history),
        "counters": {
            "nodes_touched": solver.nodes_touched,
            "probes": solver.probes,
            "traversal_seconds": solver.traversal_seconds,
            "training_seconds": solver.training_seconds,
        },
    }
    payload["extra"] = extra
    _write(payload, path)


def load_cfr_mix(solver, path: str) -> None:
    """Restores a checkpoint written by `save_cfr_mix` into a `CFRMixSolver`
    built with the same game and shape settings (`solver.config`)."""
    payload = _read(path, CFR_MIX_FORMAT)
    solver.checkpoint_extra = payload.get("extra")
    saved = payload.get("config")
    if isinstance(saved, dict) and "infoset_encoding" not in saved:
        saved = {**saved, "infoset_encoding": "tensor"}  # written before the option existed
    _check_config(path, saved, solver.config)
    try:
        models = solver._regret_models + solver._policy_models
        states = list(payload["regret_models"]) + list(payload["policy_models"])
        for model, state in zip(models, states, strict=True):
            model.load_state_dict({**state, "memory": _to_numpy(state["memory"])})
        solver._np_rng.bit_generator.state = payload["np_rng"]
        solver._py_rng = _python_rng(payload["py_rng"])
        iteration = int(payload["iteration"])
        history = [dict(stats) for stats in payload["history"]]
        counters = payload["counters"]
        nodes_touched = int(counters["nodes_touched"])
        probes = int(counters["probes"])
        traversal_seconds = float(counters["traversal_seconds"])
        training_seconds = float(counters["training_seconds"])
    except (KeyError, RuntimeError, ValueError, TypeError) as e:
        raise CheckpointError(
            f"checkpoint {path!r} is damaged or incompatible ({type(e).__name__}: {e}); "
            "write a new one, or construct the solver with the checkpoint's settings"
        ) from None
    solver._iteration = iteration
    solver.history = history
    solver.nodes_touched = nodes_touched
    solver.probes = probes
    solver.traversal_seconds = traversal_seconds
    solver.training_seconds = training_seconds
