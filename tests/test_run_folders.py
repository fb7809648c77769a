"""One run per folder, and no silent mixing of configurations (cfrx_examples/_common.py).

A run holds a lock file in its --output_dir / --checkpoint_dir; a second run
into a held folder refuses with one line naming the holder, and the lock of a
run that died is taken over. Results CSVs carry a `game` column and a sidecar
`<name>.config.json`; a resume (or a run into a folder holding another
configuration's results) refuses naming each changed setting unless it is
always safe or allowed with --allow_changed. Two oftrl_cfr.py runs into one
folder: the second refuses (a lock while the first runs; the first's curves of
another game afterwards), so a folder's curves.csv is always one run's.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEEP_CFR = ["--game=kuhn_poker", "--eval_every=1", "--advantage_steps=5", "--policy_steps=5", "--batch=32",
            "--layers=8", "--traversal_backend=state", "--seed=3"]  # fmt: skip
OFTRL = ["--iterations=5", "--solvers=cfr", "--stepsize_scales=1", "--quiet"]


def _run(script, *flags, ok=True):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "cfrx_examples", script), *flags], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)  # fmt: skip
    if ok:
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc


def _error_line(proc):
    """The refusal: exit status != 0 and one line on stderr (no traceback)."""
    assert proc.returncode != 0, proc.stdout[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr[-3000:]
    return lines[0]


def _rows(path):
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _lock(folder, pid, since="2024-01-02 03:04:05 +0000"):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, ".run.lock"), "w", encoding="utf-8") as f:
        json.dump({"host": socket.gethostname(), "pid": pid, "since": since, "command": "deep_cfr.py --x"}, f)


# ------------------------------------------------------------------ locks
@pytest.mark.parametrize("flag", ["output_dir", pytest.param("checkpoint_dir", marks=pytest.mark.slow)])
def test_a_second_run_into_a_held_folder_refuses_naming_the_holder(tmp_path, flag):
    held, other = tmp_path / "held", tmp_path / "other"
    _lock(held, os.getpid())  # held by a live process on this host: this test
    folders = {"output_dir": other, "checkpoint_dir": other / "ckpt", flag: held}
    proc = _run("deep_cfr.py", *DEEP_CFR, "--iterations=1", *(f"--{k}={v}" for k, v in folders.items()), ok=False)
    line = _error_line(proc)
    assert f"--{flag}={held} is in use by another run" in line
    assert f"pid {os.getpid()} on {socket.gethostname()} since 2024-01-02 03:04:05" in line
    assert f"choose another --{flag}, or wait for that run to end" in line
    assert "iteration" not in proc.stdout and not (other / "curve.csv").exists()  # refused before any work
    assert (held / ".run.lock").exists()  # the holder's lock is left alone


def test_a_stale_lock_is_taken_over_and_released_at_exit(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid of this host that no longer runs
    out = tmp_path / "out"
    _lock(out, dead.pid)
    proc = _run("deep_cfr.py", *DEEP_CFR, "--iterations=1", f"--output_dir={out}")
    notes = [line for line in proc.stderr.splitlines() if "took over the lock" in line]
    assert len(notes) == 1 and f"pid {dead.pid} on {socket.gethostname()}" in notes[0], proc.stderr[-2000:]
    assert not (out / ".run.lock").exists()
    assert [r["iteration"] for r in _rows(out / "curve.csv")] == ["1"]


def test_concurrent_oftrl_runs_the_second_refuses_and_sigterm_releases_the_lock(tmp_path):
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, os.path.join(ROOT, "cfrx_examples", "oftrl_cfr.py"), "--game=leduc_poker",
                              "--iterations=100000", "--solvers=cfr", "--quiet", f"--output_dir={out}"],
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.time() + 120
        while not (out / ".run.lock").exists():
            assert first.poll() is None and time.time() < deadline, "the first run took no lock"
            time.sleep(0.05)
        line = _error_line(_run("oftrl_cfr.py", "--game=kuhn_poker", *OFTRL, f"--output_dir={out}", ok=False))
        assert f"--output_dir={out} is in use by another run: pid {first.pid} on {socket.gethostname()}" in line
        assert "(oftrl_cfr.py)" in line
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=60) == -signal.SIGTERM  # still dies of the signal ...
        assert not (out / ".run.lock").exists()  # ... after removing its lock
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert not (out / "curves.csv").exists() or {r["game"] for r in _rows(out / "curves.csv")} == {"leduc_poker"}


# -------------------------------------------------- results of one configuration
@pytest.mark.slow  # ~20 s: two example runs one after the other
def test_sequential_oftrl_runs_of_another_game_refuse_and_keep_the_first_curves(tmp_path):
    out = tmp_path / "out"
    _run("oftrl_cfr.py", "--game=kuhn_poker", *OFTRL, f"--output_dir={out}")
    first = _rows(out / "curves.csv")
    assert {r["game"] for r in first} == {"kuhn_poker"} and {r["solver"] for r in first} == {"CFR (alternating)"}
    config = json.loads((out / "curves.config.json").read_text())
    assert config["game"] == "kuhn_poker" and config["flags"]["solvers"] == ["cfr"]
    line = _error_line(_run("oftrl_cfr.py", "--game=leduc_poker", *OFTRL, f"--output_dir={out}", ok=False))
    assert "--game: 'kuhn_poker' there vs 'leduc_poker' now" in line and "choose another --output_dir" in line
    assert _rows(out / "curves.csv") == first
    # The same configuration (more iterations are always safe) replaces its own curves.
    _run("oftrl_cfr.py", "--game=kuhn_poker", *OFTRL, "--iterations=8", f"--output_dir={out}")
    assert _rows(out / "curves.csv")[-1]["iteration"] == "8"


@pytest.mark.parametrize("script, flags, name", [
    ("openspiel_swap.py", ["--game=kuhn_poker", "--iterations=5", "--episodes=2"], "results.csv"),
    pytest.param("benchmark.py", ["--game=kuhn_poker", "--seconds=0.2", "--eval_points=2", "--algorithms=cfr+",
                                  "--quiet"], "benchmark.csv", marks=pytest.mark.slow),
    pytest.param("head_to_head.py", ["--game=kuhn_poker", "--policies=call,uniform", "--deals=4"], "head_to_head.csv",
                 marks=pytest.mark.slow),
])  # fmt: skip
def test_csvs_have_the_game_column_and_a_config_sidecar(tmp_path, script, flags, name):
    _run(script, *flags, f"--output_dir={tmp_path}")
    rows = _rows(tmp_path / name)
    assert rows and all(r["game"] == "kuhn_poker" for r in rows)
    config = json.loads((tmp_path / name.replace(".csv", ".config.json")).read_text())
    assert config["program"] == script and config["game_loaded"] == "kuhn_poker()"
    assert config["flags"]["output_dir"] == str(tmp_path)


# ------------------------------------------------------------------ resume checks
@pytest.mark.slow  # ~15 s: three example runs
def test_resume_with_changed_traversals_refuses_and_allow_changed_permits_it(tmp_path):
    folders = [f"--output_dir={tmp_path / 'out'}", f"--checkpoint_dir={tmp_path / 'ckpt'}"]
    _run("deep_cfr.py", *DEEP_CFR, "--iterations=2", "--traversals=20", *folders)
    assert [r["game"] for r in _rows(tmp_path / "out" / "curve.csv")] == ["kuhn_poker", "kuhn_poker"]
    # More iterations and another evaluation cadence are always safe; the traversals are not.
    line = _error_line(_run("deep_cfr.py", *DEEP_CFR, "--iterations=4", "--eval_every=2", "--traversals=40",
                            *folders, ok=False))  # fmt: skip
    assert f"checkpoint {tmp_path / 'ckpt' / 'deep_cfr.pt'} comes from a run with other settings" in line
    assert "--traversals: 20 there vs 40 now" in line and "--allow_changed=traversals" in line
    assert "eval_every" not in line and "iterations" not in line
    proc = _run("deep_cfr.py", *DEEP_CFR, "--iterations=4", "--traversals=40", "--allow_changed=traversals",
                *folders)  # fmt: skip
    assert "resumed from" in proc.stdout
    # The traversals column counts the traversals run: 2 x 20 per iteration, then 2 x 40.
    assert [r["traversals"] for r in _rows(tmp_path / "out" / "curve.csv")] == ["40", "80", "160", "240"]


def test_resume_turning_sd_cfr_on_refuses_even_when_allowed(tmp_path):
    folders = [f"--output_dir={tmp_path / 'out'}", f"--checkpoint_dir={tmp_path / 'ckpt'}", "--traversals=20"]
    _run("deep_cfr.py", *DEEP_CFR, "--iterations=1", "--nosd_cfr", *folders)
    for extra in ([], ["--allow_changed=sd_cfr"]):
        line = _error_line(_run("deep_cfr.py", *DEEP_CFR, "--iterations=2", "--sd_cfr", *folders, *extra, ok=False))
        assert "--sd_cfr: False there vs True now" in line and "not kept for the SD-CFR average" in line
    assert [r["iteration"] for r in _rows(tmp_path / "out" / "curve.csv")] == ["1"]


@pytest.mark.slow  # two example runs; the --sd_cfr case checks the same refusal
def test_resume_with_another_seed_refuses_in_a_fresh_output_dir(tmp_path):
    """The checkpoint itself records the run's flags: a resume writing to a new
    --output_dir (no results to compare with) is still checked."""
    ckpt = f"--checkpoint_dir={tmp_path / 'ckpt'}"
    _run("deep_cfr.py", *DEEP_CFR, "--iterations=1", "--traversals=20", f"--output_dir={tmp_path / 'a'}", ckpt)
    line = _error_line(_run("deep_cfr.py", *DEEP_CFR, "--iterations=2", "--traversals=20", "--seed=4",
                            f"--output_dir={tmp_path / 'b'}", ckpt, ok=False))  # fmt: skip
    assert "--seed: 3 there vs 4 now" in line


@pytest.mark.slow  # two example runs
def test_checkpoint_of_an_earlier_development_version_is_refused_in_one_line(tmp_path):
    import torch

    from openspiel_cfrx.deep import checkpoint as checkpoint_lib

    folders = [f"--output_dir={tmp_path / 'out'}", f"--checkpoint_dir={tmp_path / 'ckpt'}", "--traversals=20"]
    _run("deep_cfr.py", *DEEP_CFR, "--iterations=1", *folders)
    path = tmp_path / "ckpt" / "deep_cfr.pt"
    payload = torch.load(path, weights_only=True)
    record, capacity = payload["settings"], payload["settings"]["openspiel"]["memory_capacity"]
    # the layout of an earlier development version: only the shapes (`config`), no settings record
    payload["config"] = {"game": payload.pop("game"), "network": record["network"]["family"],
                         "memory": record["memory"]["kind"], "memory_capacity": capacity,
                         "strategy_memory_capacity": record["memory"]["strategy_capacity"] or capacity,
                         "average_policy": record["averaging"]["average_policy"],
                         **{k: record["openspiel"][k] for k in ("policy_network_layers", "advantage_network_layers")}}
    payload["settings"] = None
    payload["extra"] = {"rows": payload["extra"]["rows"]}
    payload["sha256"] = checkpoint_lib.payload_digest(payload)
    torch.save(payload, path)
    line = _error_line(_run("deep_cfr.py", *DEEP_CFR, "--iterations=2", *folders, ok=False))
    assert str(path) in line and "lacks 'game' and 'settings'; it holds a 'config' entry" in line, line
    assert "re-create it with this version of openspiel_cfrx" in line and f"delete {path}" in line, line


# ------------------------------------------------------------------ library
def test_settings_differences_names_each_changed_setting():
    import pyspiel

    from openspiel_cfrx.deep import DeepCFRSolver
    from openspiel_cfrx.deep.checkpoint import settings_differences

    game = pyspiel.load_game("kuhn_poker")
    a = DeepCFRSolver(game, num_traversals=20, policy_network_layers=(8,), advantage_network_layers=(8,))
    b = DeepCFRSolver(game, num_traversals=40, policy_network_layers=(8,), advantage_network_layers=(8,),
                      averaging={"average_policy": "sd_cfr"})  # fmt: skip
    record = a.settings.to_record()
    assert settings_differences(record, record) == {}
    assert settings_differences(record, b.settings.to_record()) == {
        "openspiel.num_traversals": (20, 40), "averaging.average_policy": ("network", "sd_cfr")}


def test_load_keeps_the_checkpoint_settings_and_refuses_files_without_them(tmp_path):
    import pyspiel
    import torch

    from openspiel_cfrx.deep import DeepCFRSolver
    from openspiel_cfrx.deep import checkpoint as checkpoint_lib

    game = pyspiel.load_game("kuhn_poker")
    kwargs = dict(num_traversals=4, policy_network_layers=(4,), advantage_network_layers=(4,),
                  advantage_network_train_steps=1, policy_network_train_steps=1)  # fmt: skip
    solver = DeepCFRSolver(game, **kwargs)
    solver.run_iteration()
    path = str(tmp_path / "a.pt")
    solver.save_checkpoint(path)
    other = DeepCFRSolver(game, **{**kwargs, "num_traversals": 8})
    other.load_checkpoint(path)  # the library resumes with other training settings; callers compare
    assert other.checkpoint_settings == solver.settings.to_record()
    assert checkpoint_lib.settings_differences(other.checkpoint_settings, other.settings.to_record()) == {
        "openspiel.num_traversals": (4, 8)}
    payload = torch.load(path, weights_only=True)  # the layout of an earlier development version
    payload["config"] = {"game": payload.pop("game"), "policy_network_layers": [4], "advantage_network_layers": [4],
                         "network": "mlp", "memory": "reservoir", "memory_capacity": 10**6,
                         "strategy_memory_capacity": 10**6, "average_policy": "network"}  # fmt: skip
    del payload["settings"]
    payload["sha256"] = checkpoint_lib.payload_digest(payload)
    torch.save(payload, path)
    with pytest.raises(checkpoint_lib.CheckpointError, match="lacks 'game' and 'settings'; it holds a 'config' entry"):
        other.load_checkpoint(path)
