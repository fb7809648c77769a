"""Deep CFR checkpoints and policy files: exact resumption, rebuilt solvers,
policy-only files, and clear errors for damaged or mismatched files."""

import os
import struct
import zipfile

import numpy as np
import pyspiel
import pytest
import torch

import openspiel_cfrx
from openspiel_cfrx.deep import (
    CheckpointError,
    DeepCFRSolver,
)
from openspiel_cfrx.tree import get_tree

torch.set_num_threads(1)


from deep_cfr_settings import SMALL  # noqa: E402  (tests/ is on sys.path)


def test_checkpoint_resume_continues_exactly(kuhn, tmp_path):
    path = str(tmp_path / "deep_cfr.pt")
    straight = DeepCFRSolver(kuhn, **{**SMALL, "num_iterations": 3})
    straight.run_iteration()
    straight.run_iteration()
    straight.save_checkpoint(path)
    straight.run_iteration()
    resumed = DeepCFRSolver(kuhn, **{**SMALL, "num_iterations": 3})
    resumed.load_checkpoint(path)
    assert resumed.iteration == 2
    resumed.run_iteration()
    for a, b in zip([*straight.advantage_buffers, straight.strategy_buffer],
                    [*resumed.advantage_buffers, resumed.strategy_buffer], strict=True):  # fmt: skip
        assert a.add_calls == b.add_calls
        np.testing.assert_array_equal(a.targets[: len(a)], b.targets[: len(b)])
    for a, b in zip(straight.advantage_networks, resumed.advantage_networks, strict=True):
        for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
            torch.testing.assert_close(pa, pb, rtol=0, atol=0)
    tree = openspiel_cfrx.get_tree(kuhn)
    np.testing.assert_array_equal(straight.strategy_array(tree), resumed.strategy_array(tree))


def test_solver_rebuilt_from_checkpoint_plays_the_same_policy(kuhn, tmp_path):
    solver = DeepCFRSolver(kuhn, seed=5, **{**SMALL, "advantage_network_layers": (8,)})
    solver.solve()
    path = str(tmp_path / "solver.pt")
    solver.save_checkpoint(path)
    rebuilt = DeepCFRSolver.from_checkpoint(path)
    assert rebuilt.iteration == solver.iteration
    states = [kuhn.new_initial_state().child(0).child(1), kuhn.new_initial_state().child(2).child(0).child(1)]
    np.testing.assert_allclose(rebuilt.batch_action_probabilities(states), solver.batch_action_probabilities(states))
    with pytest.raises(CheckpointError, match="does not exist"):
        DeepCFRSolver.from_checkpoint(str(tmp_path / "missing.pt"))


def flip_a_byte_of_the_largest_tensor(path: str) -> None:
    """Flips one bit in the middle of the largest record of a `torch.save` zip file (a tensor's bytes)."""
    with zipfile.ZipFile(path) as archive:
        record = max(archive.infolist(), key=lambda info: info.file_size)
    with open(path, "r+b") as f:
        f.seek(record.header_offset)
        header = f.read(30)  # the zip local file header: name and extra-field lengths at bytes 26-29
        name_length, extra_length = struct.unpack("<HH", header[26:30])
        f.seek(record.header_offset + 30 + name_length + extra_length + record.file_size // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 1]))


def test_policy_file_plays_the_same_average_strategy_and_cannot_train(kuhn, tmp_path):
    solver = DeepCFRSolver(kuhn, seed=5, **{**SMALL, "memory_capacity": 200_000})
    solver.solve()
    policy_path, checkpoint_path = str(tmp_path / "policy.pt"), str(tmp_path / "solver.pt")
    solver.save_policy(policy_path)
    solver.save_checkpoint(checkpoint_path)
    assert os.path.getsize(policy_path) < os.path.getsize(checkpoint_path) / 5  # no memories
    rebuilt = DeepCFRSolver.from_checkpoint(policy_path)
    assert rebuilt.policy_only and rebuilt.iteration == solver.iteration
    assert rebuilt.nodes_touched == solver.nodes_touched
    tree = get_tree(kuhn)
    np.testing.assert_array_equal(rebuilt.strategy_array(tree), solver.strategy_array(tree))
    assert openspiel_cfrx.nash_conv(kuhn, rebuilt) == openspiel_cfrx.nash_conv(kuhn, solver)
    with pytest.raises(RuntimeError, match="policy file"):
        rebuilt.run_iteration()
    with pytest.raises(CheckpointError, match="policy file"):
        DeepCFRSolver(kuhn, seed=5, **{**SMALL, "memory_capacity": 200_000}).load_checkpoint(policy_path)
    flip_a_byte_of_the_largest_tensor(policy_path)  # one byte of the network changed after writing
    with pytest.raises(CheckpointError, match="damaged|corrupt"):
        DeepCFRSolver.from_checkpoint(policy_path)
    sd_cfr = DeepCFRSolver(kuhn, averaging={"average_policy": "sd_cfr"}, **SMALL)
    with pytest.raises(ValueError, match="average_policy='network'"):
        sd_cfr.save_policy(str(tmp_path / "sd.pt"))


def test_corrupt_and_mismatched_checkpoints_give_clear_errors(kuhn, tmp_path):
    solver = DeepCFRSolver(kuhn, **SMALL)
    solver.run_iteration()
    path = str(tmp_path / "ok.pt")
    solver.save_checkpoint(path)
    with open(path, "rb") as f:
        data = f.read()
    truncated = str(tmp_path / "truncated.pt")
    with open(truncated, "wb") as f:
        f.write(data[: len(data) // 2])
    garbage = str(tmp_path / "garbage.pt")
    with open(garbage, "wb") as f:
        f.write(os.urandom(2048))
    fresh = DeepCFRSolver(kuhn, **SMALL)
    for bad in (truncated, garbage):
        with pytest.raises(CheckpointError, match="corrupt"):
            fresh.load_checkpoint(bad)
    with pytest.raises(CheckpointError, match="does not exist"):
        fresh.load_checkpoint(str(tmp_path / "missing.pt"))
    other_game = DeepCFRSolver(pyspiel.load_game("leduc_poker"), **SMALL)
    with pytest.raises(CheckpointError, match="game"):
        other_game.load_checkpoint(path)
    wider = DeepCFRSolver(kuhn, **{**SMALL, "advantage_network_layers": (32, 32)})
    with pytest.raises(CheckpointError, match="advantage_network_layers"):
        wider.load_checkpoint(path)
    torch.save({"format": "something else"}, str(tmp_path / "other.pt"))
    with pytest.raises(CheckpointError, match="not a DeepCFRSolver checkpoint"):
        fresh.load_checkpoint(str(tmp_path / "other.pt"))
