"""The careless-user sweep's findings on the example programs (issue 60), one
test per finding; each failed before its fix.

A. results of two programs (or of an unchecked configuration) mixed in one
   folder, output files written into a folder another run holds, user files
   taken for stale temporaries; B. lock files that are not regular files;
C. head-to-head scoring games and policies it should refuse; D. advice that
   cannot be followed.

The programs run on their tiny settings (`TINY` of test_cli_sweep.py) through
the warm forking runner (`example_runner.py`).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from test_cli_sweep import assert_ok, assert_one_line_error, run_example

from openspiel_cfrx.checkpoint_io import atomic_write
from openspiel_cfrx.eval.head_to_head import always_call, play_match

VECTOR = "poker_vector_cfr"


def _hold(folder, pid=None):
    """`folder` held by a live run of this host (this test process by default)."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, ".run.lock"), "w", encoding="utf-8") as f:
        json.dump({"host": socket.gethostname(), "pid": pid or os.getpid(), "since": "2024-01-02 03:04:05 +0000",
                   "command": "oftrl_cfr.py --x"}, f)  # fmt: skip


def _contents(folder):
    return {name: open(os.path.join(folder, name), "rb").read() for name in sorted(os.listdir(folder))
            if os.path.isfile(os.path.join(folder, name))}  # fmt: skip


# ================================================= A. results mixed or unchecked
def test_a_folder_of_another_program_is_refused_naming_both(tmp_path):
    # deep_cfr into poker_vector_cfr's folder exited 0, replacing its curve.csv beside its summary and checkpoint.
    out = tmp_path / "out"
    assert_ok(run_example("deep_cfr", f"--output_dir={out}", cwd=tmp_path), out, "curve.csv")
    config = json.loads((out / "curve.config.json").read_text())
    config["program"] = "cfrx-poker-vector-cfr"  # as its console script records it; same game and flags otherwise
    (out / "curve.config.json").write_text(json.dumps(config))
    before = _contents(out)
    line = assert_one_line_error(run_example("deep_cfr", f"--output_dir={out}", cwd=tmp_path))
    assert "poker_vector_cfr" in line and "deep_cfr" in line and "another --output_dir" in line
    assert _contents(out) == before


def test_results_of_another_program_under_other_names_are_refused_too(tmp_path):
    out = tmp_path / "out"
    assert_ok(run_example("oftrl_cfr", f"--output_dir={out}", cwd=tmp_path), out, "curves.csv")
    before = _contents(out)
    line = assert_one_line_error(run_example("head_to_head", f"--output_dir={out}", cwd=tmp_path))
    assert "oftrl_cfr" in line and "head_to_head" in line
    assert _contents(out) == before


def test_results_whose_config_was_deleted_are_refused(tmp_path):
    # With curve.config.json deleted, the next run of any configuration replaced curve.csv unchecked.
    out = tmp_path / "out"
    assert_ok(run_example("deep_cfr", f"--output_dir={out}", cwd=tmp_path), out, "curve.csv")
    os.remove(out / "curve.config.json")
    before = _contents(out)
    line = assert_one_line_error(run_example("deep_cfr", f"--output_dir={out}", "--seed=5", cwd=tmp_path))
    assert f"{out / 'curve.csv'}" in line and "curve.config.json" in line and "another --output_dir" in line
    assert _contents(out) == before


def test_a_checkpoint_file_in_a_folder_another_run_holds_is_refused(tmp_path):
    # --checkpoint=<held folder>/file only checked <file>.lock and wrote into the other run's folder.
    held = tmp_path / "held"
    _hold(held)
    before = _contents(held)
    run = run_example(VECTOR, f"--checkpoint={held / 'deep_cfr.pt'}", f"--output_dir={tmp_path / 'out'}",
                      cwd=tmp_path)  # fmt: skip
    line = assert_one_line_error(run, "in use by another run")
    assert str(held) in line and f"pid {os.getpid()}" in line and "--checkpoint" in line
    assert _contents(held) == before


def test_a_policy_file_in_a_folder_another_run_holds_is_refused(tmp_path):
    held = tmp_path / "held"
    _hold(held)
    before = _contents(held)
    run = run_example("deep_cfr", f"--policy_file={held / 'deep_cfr.pt'}", f"--output_dir={tmp_path / 'out'}",
                      cwd=tmp_path)  # fmt: skip
    line = assert_one_line_error(run, "in use by another run")
    assert str(held) in line and "--policy_file" in line
    assert _contents(held) == before and not (tmp_path / "out" / "curve.csv").exists()


@pytest.mark.parametrize("name", ["run.pt.tmp_mine", "run.pt.tmpnotes", "run.pt.tmp12x", "run.pt.tmp"])
def test_files_that_only_look_like_temporaries_survive_a_save(tmp_path, name):
    # A user file deep_cfr.pt.tmp_<anything> was deleted by the next save.
    mine = tmp_path / name
    mine.write_bytes(b"the user's")
    atomic_write(str(tmp_path / "run.pt"), lambda f: f.write(b"new"))
    assert mine.read_bytes() == b"the user's" and (tmp_path / "run.pt").read_bytes() == b"new"


def test_a_symlink_named_like_a_stale_temporary_is_left_alone(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip
    target = tmp_path / "target"
    target.write_bytes(b"keep")
    os.symlink(target, tmp_path / f"run.pt.tmp{dead}")
    atomic_write(str(tmp_path / "run.pt"), lambda f: f.write(b"new"))
    assert os.path.islink(tmp_path / f"run.pt.tmp{dead}") and target.read_bytes() == b"keep"


# ================================================================ B. lock files
def _make_fifo(path):
    os.mkfifo(path)


def _make_dir(path):
    os.mkdir(path)


def _make_dangling_link(path):
    os.symlink(os.path.join(os.path.dirname(path), "nowhere"), path)


@pytest.mark.parametrize("make, kind", [(_make_fifo, "FIFO"), (_make_dir, "directory"),
                                        (_make_dangling_link, "symbolic link")])  # fmt: skip
def test_a_lock_that_is_not_a_regular_file_is_refused_in_one_line(tmp_path, make, kind):
    # A FIFO .run.lock hung the program, a directory raised IsADirectoryError, a dangling symlink
    # said "try again" forever.
    out = tmp_path / "out"
    out.mkdir()
    make(str(out / ".run.lock"))
    run = run_example("oftrl_cfr", f"--output_dir={out}", cwd=tmp_path, timeout=60)
    line = assert_one_line_error(run, kind)
    assert str(out / ".run.lock") in line and "rename or remove it" in line
    assert os.path.lexists(out / ".run.lock") and not (out / "curves.csv").exists()


# ============================================================== C. head-to-head
@pytest.mark.parametrize("game, kind", [("tiny_hanabi", "identical"), ("goofspiel(num_cards=3)", "simultaneous")])
def test_head_to_head_refuses_games_that_are_not_zero_sum_sequential(game, kind):
    # tiny_hanabi (general-sum) and goofspiel (simultaneous) were scored as zero-sum sequential matches.
    game = pyspiel.load_game(game)
    uniform = policy_lib.UniformRandomPolicy(game)
    with pytest.raises(ValueError, match=rf"head-to-head needs a 2-player zero-sum \(or constant-sum\) sequential "
                       rf"game.*{kind}"):  # fmt: skip
        play_match(game, uniform, uniform, 4)


def test_the_head_to_head_program_refuses_a_general_sum_game_before_training(tmp_path):
    run = run_example("head_to_head", "--game=tiny_hanabi", "--policies=cfr+:100000,uniform",
                      f"--output_dir={tmp_path / 'o'}", cwd=tmp_path)  # fmt: skip
    assert_one_line_error(run, r"head-to-head needs a 2-player zero-sum \(or constant-sum\) sequential game")


class _Dict(policy_lib.Policy):
    """A policy answering `probs(legal actions)` at every state."""

    def __init__(self, game, probs):
        super().__init__(game, [0, 1])
        self.probs = probs

    def action_probabilities(self, state, player_id=None):
        return self.probs(state.legal_actions())


@pytest.mark.parametrize("probs, problem", [
    (lambda legal: {a: (1.5 if i == 0 else -0.5 / (len(legal) - 1)) for i, a in enumerate(legal)}, "negative"),
    (lambda legal: {a: 2.0 for a in legal}, "summing to"),
])  # fmt: skip
def test_head_to_head_refuses_a_policy_that_nash_conv_refuses(probs, problem):
    # Negative or unnormalised probabilities were clipped or renormalised and the match scored.
    import openspiel_cfrx

    game = pyspiel.load_game("kuhn_poker")
    bad = _Dict(game, probs)
    with pytest.raises(ValueError, match="policy is not a distribution") as nash:
        openspiel_cfrx.nash_conv(game, bad)
    with pytest.raises(ValueError, match=f"policy is not a distribution at infoset .*{problem}") as match:
        play_match(game, bad, always_call(game), 4)
    assert nash.value.args[0].split(" at infoset")[0] == match.value.args[0].split(" at infoset")[0]
    assert np.isfinite(play_match(game, bad, always_call(game), 4, check=False).mean_chips)  # as before, on request


# ============================================================ D. advice to follow
def test_vector_cfr_does_not_offer_to_allow_what_its_checkpoint_refuses(tmp_path):
    # --chunk_boards (and --isomorphism) were offered in --allow_changed, then refused by the resume.
    out = tmp_path / "out"
    assert_ok(run_example(VECTOR, f"--output_dir={out}", cwd=tmp_path), out, "curve.csv", "checkpoint.npz")
    before = _contents(out)
    line = assert_one_line_error(run_example(VECTOR, f"--output_dir={out}", "--chunk_boards=32", "--noisomorphism",
                                             cwd=tmp_path))  # fmt: skip
    assert "--chunk_boards: 64 there vs 32 now" in line and "--isomorphism: True there vs False now" in line
    assert "--allow_changed" not in line and "--fresh" in line
    line = assert_one_line_error(run_example(VECTOR, f"--output_dir={out}", "--chunk_boards=32",
                                             "--allow_changed=chunk_boards", cwd=tmp_path))  # fmt: skip
    assert "--chunk_boards: 64 there vs 32 now" in line and "--allow_changed" not in line
    assert _contents(out) == before
    # With the curve gone, the checkpoint's own refusal names the flags to use, not the library's constructor.
    os.remove(out / "curve.csv")
    os.remove(out / "curve.config.json")
    line = assert_one_line_error(run_example(VECTOR, f"--output_dir={out}", "--chunk_boards=32", cwd=tmp_path))
    assert "chunk_boards=64" in line and "construct" not in line and "--fresh" in line


def test_a_preset_with_another_game_names_the_presets_game(tmp_path):
    # --preset=fhp_5x2 --game=kuhn_poker answered about nash_conv and the poker engine.
    run = run_example("deep_cfr", "--preset=fhp_5x2", "--game=kuhn_poker", f"--output_dir={tmp_path / 'o'}",
                      cwd=tmp_path, tiny=False)  # fmt: skip
    assert_one_line_error(run, r"preset fhp_5x2 is for flop_holdem\(num_ranks=5,num_suits=2\), not kuhn_poker; "
                               r"drop --game or pick another preset")  # fmt: skip


def test_a_float_action_key_is_named_as_such():
    # {0.0: p} was reported as "not an action of the game".
    game = pyspiel.load_game("kuhn_poker")
    floats = _Dict(game, lambda legal: {float(a): 1.0 / len(legal) for a in legal})
    with pytest.raises(ValueError, match=r"action 0\.0 .*must be an int action id"):
        play_match(game, floats, always_call(game), 4)
