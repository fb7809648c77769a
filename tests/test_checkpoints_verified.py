"""Checkpoints verify their contents (issue 17, item 2).

A checkpoint whose bytes change after writing (same size, overwritten in the
middle) is refused; an empty file gives one clear error; tabular checkpoints
refuse other hyperparameters; killed writers' temporary files are cleaned up;
a full disk is reported as such.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import numpy as np
import pyspiel
import pytest
import torch

import openspiel_cfrx
from openspiel_cfrx.checkpoint_io import CheckpointWriteError, atomic_write
from openspiel_cfrx.deep import checkpoint as checkpoint_lib
from openspiel_cfrx.deep.checkpoint import CheckpointError

SMALL = dict(num_iterations=1, num_traversals=20, advantage_network_train_steps=3,
             policy_network_train_steps=3, memory_capacity=2000)  # fmt: skip
TINY_GOOFSPIEL = "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)"


def _overwrite_middle(path: str, offset_fraction: float, size: int = 4096, seed: int = 0) -> None:
    data = bytearray(open(path, "rb").read())
    start = int(len(data) * offset_fraction)
    size = min(size, len(data) - start)
    data[start : start + size] = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes()
    with open(path, "wb") as f:
        f.write(data)


@pytest.fixture(scope="module")
def deep_cfr_checkpoint(tmp_path_factory):
    import games  # noqa: F401  (team_goofspiel)

    path = str(tmp_path_factory.mktemp("ckpt") / "deep_cfr.pt")
    solver = openspiel_cfrx.DeepCFRSolver(pyspiel.load_game("kuhn_poker"), seed=0, **SMALL)
    solver.solve()
    solver.save_checkpoint(path)
    return path


@pytest.mark.parametrize("fraction", [0.3, 0.5, 0.7])
def test_deep_cfr_checkpoint_overwritten_in_the_middle_is_refused(deep_cfr_checkpoint, tmp_path, fraction):
    path = str(tmp_path / "damaged.pt")
    with open(deep_cfr_checkpoint, "rb") as src, open(path, "wb") as dst:
        dst.write(src.read())
    size = os.path.getsize(path)
    _overwrite_middle(path, fraction)
    assert os.path.getsize(path) == size
    solver = openspiel_cfrx.DeepCFRSolver(pyspiel.load_game("kuhn_poker"), seed=0, **SMALL)
    with pytest.raises(CheckpointError, match="damaged|corrupt"):
        solver.load_checkpoint(path)


def test_intact_checkpoint_still_loads_and_an_unchecksummed_format_is_refused(deep_cfr_checkpoint, tmp_path):
    solver = openspiel_cfrx.DeepCFRSolver(pyspiel.load_game("kuhn_poker"), seed=0, **SMALL)
    solver.load_checkpoint(deep_cfr_checkpoint)
    # Format /1 (an earlier development version's, without a checksum) is refused in one line
    # (tests/test_checkpoint_old_formats.py): no file loads unverified.
    payload = torch.load(deep_cfr_checkpoint, weights_only=True)
    payload["format"] = "openspiel_cfrx.DeepCFRSolver/1"
    del payload["sha256"]
    old = str(tmp_path / "old.pt")
    torch.save(payload, old)
    with pytest.raises(CheckpointError, match=r"format 'openspiel_cfrx.DeepCFRSolver/1', expected "
                       r"'openspiel_cfrx.DeepCFRSolver/3'\): a file of an earlier development version"):  # fmt: skip
        openspiel_cfrx.DeepCFRSolver(pyspiel.load_game("kuhn_poker"), seed=0, **SMALL).load_checkpoint(old)


def test_cfr_mix_checkpoint_overwritten_in_the_middle_is_refused(tmp_path):
    import games  # noqa: F401

    game = pyspiel.load_game(TINY_GOOFSPIEL)
    fast = dict(num_traversals=10, regret_train_steps=5, policy_train_steps=5, workers={"num_threads": 1})
    solver = openspiel_cfrx.CFRMixSolver(game, num_iterations=1, **fast)
    solver.solve()
    path = str(tmp_path / "mix.pt")
    solver.save_checkpoint(path)
    _overwrite_middle(path, 0.5)
    with pytest.raises(CheckpointError, match="damaged|corrupt"):
        openspiel_cfrx.CFRMixSolver(game, num_iterations=1, **fast).load_checkpoint(path)


@pytest.mark.parametrize("kind", ["deep_cfr", "tabular"])
def test_empty_checkpoint_gives_one_clear_error(tmp_path, kind):
    path = str(tmp_path / "empty")
    open(path, "wb").close()
    game = pyspiel.load_game("kuhn_poker")
    if kind == "deep_cfr":
        with pytest.raises(CheckpointError, match="empty"):
            openspiel_cfrx.DeepCFRSolver(game, **SMALL).load_checkpoint(path)
    else:
        with pytest.raises(ValueError, match="empty"):
            openspiel_cfrx.DCFRSolver(game).load(path)


def test_tabular_checkpoint_damage_and_hyperparameters(tmp_path):
    game = pyspiel.load_game("leduc_poker")
    solver = openspiel_cfrx.DCFRSolver(game, alpha=1.5)
    solver.run(3)
    path = str(tmp_path / "dcfr.npz")
    solver.save(path)
    with pytest.raises(ValueError, match=r"alpha=1\.5 \(this solver: 2\.0\)"):
        openspiel_cfrx.DCFRSolver(game, alpha=2.0).load(path)
    oftrl = openspiel_cfrx.OFTRLCFRSolver(game, stepsize_scale=10)
    oftrl.save(str(tmp_path / "oftrl.npz"))
    with pytest.raises(ValueError, match="stepsize_scale=10.0"):
        openspiel_cfrx.OFTRLCFRSolver(game, stepsize_scale=100).load(str(tmp_path / "oftrl.npz"))
    resumed = openspiel_cfrx.DCFRSolver(game, alpha=1.5)
    resumed.load(path)
    assert resumed.iteration == 3
    # Format /1 (no hyperparameters, no checksum) and /2 (DCFR's averaging under another label) are refused.
    with np.load(path) as stored:
        arrays = {key: stored[key] for key in stored.files if key != "sha256"}
    meta = json.loads(str(arrays["meta"]))
    for version in (1, 2):
        arrays["meta"] = np.array(json.dumps({**meta, "format": f"openspiel_cfrx.tabular/{version}"}))
        old = str(tmp_path / f"old{version}.npz")
        np.savez(old, **arrays)
        with pytest.raises(ValueError, match=rf"checkpoint {old} has format 'openspiel_cfrx.tabular/{version}', "
                           r"expected 'openspiel_cfrx.tabular/3': this version of openspiel_cfrx reads no other; "
                           r"re-create it with this version \(re-run the command that wrote it\)"):  # fmt: skip
            openspiel_cfrx.DCFRSolver(game, alpha=1.5).load(old)
    _overwrite_middle(path, 0.5, size=64)
    with pytest.raises(ValueError, match="damaged|not a readable"):
        openspiel_cfrx.DCFRSolver(game, alpha=1.5).load(path)


def test_stale_temporaries_of_killed_writers_are_removed(tmp_path):
    path = str(tmp_path / "run.npz")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    stale = f"{path}.tmp{dead}"
    open(stale, "wb").write(b"x" * 1000)
    openspiel_cfrx.CFRSolver(pyspiel.load_game("kuhn_poker")).save(path)
    assert not os.path.exists(stale)
    assert os.path.exists(path)


def test_disk_full_is_reported_as_such(tmp_path):
    path = str(tmp_path / "run.pt")

    def write(f):
        f.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(CheckpointWriteError, match="disk holding .* is full"):
        atomic_write(path, write)
    assert os.listdir(tmp_path) == []  # no partial temporary left behind

    def torch_short_write(f):
        raise RuntimeError("[enforce fail at inline_container.cc:664] . unexpected pos 320 vs 214")

    with pytest.raises(CheckpointWriteError, match="full"):
        atomic_write(path, torch_short_write)


def test_checkpoint_digest_covers_numbers_too(deep_cfr_checkpoint):
    payload = torch.load(deep_cfr_checkpoint, weights_only=True)
    assert payload["sha256"] == checkpoint_lib.payload_digest(payload)
    payload["state"]["iteration"] += 1
    assert payload["sha256"] != checkpoint_lib.payload_digest(payload)


def test_ctrl_c_during_a_checkpoint_write_keeps_the_file_and_then_interrupts(tmp_path):
    """SIGINT landing inside the write is held until the file is complete."""
    import signal

    path = str(tmp_path / "ckpt.pt")

    def write(f):
        f.write(b"first half ")
        os.kill(os.getpid(), signal.SIGINT)
        f.write(b"second half")

    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, write)
    with open(path, "rb") as f:
        assert f.read() == b"first half second half"
    assert [name for name in os.listdir(tmp_path)] == ["ckpt.pt"]
