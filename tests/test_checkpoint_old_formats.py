"""Checkpoints of earlier development versions are refused in one line.

openspiel_cfrx 0.3.0 is the first release: a neural solver reads only format
/3 files holding `game`, `settings` and `state`. Files of formats /1 and /2
(one field per private attribute, before the shared neural core) and /3
files holding a `config` instead of `game` (and, the oldest, no `settings`)
are refused, naming the file, the format found, the one expected and the
fix. The payloads below are built from today's checkpoints, changed the way
those versions laid them out.
"""

import os

import pyspiel
import pytest
import torch

import games  # noqa: F401  registers team_goofspiel
from openspiel_cfrx.cfr_mix import CFRMixSolver
from openspiel_cfrx.deep import CheckpointError, DeepCFRSolver
from openspiel_cfrx.deep import checkpoint as checkpoint_lib

torch.set_num_threads(1)
GOOFSPIEL = "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)"
DEEP = dict(num_traversals=4, policy_network_layers=(4,), advantage_network_layers=(4,),
            advantage_network_train_steps=1, policy_network_train_steps=1)  # fmt: skip
MIX = dict(num_traversals=4, regret_network_layers=(4,), policy_network_layers=(4,), regret_train_steps=1,
           policy_train_steps=1, workers={"num_threads": 1})  # fmt: skip
FIX = r"re-create it with this version (of openspiel_cfrx )?\(re-run the command that wrote it\)"


def _solver(kind):
    if kind == "DeepCFRSolver":
        return DeepCFRSolver(pyspiel.load_game("kuhn_poker"), **DEEP)
    return CFRMixSolver(pyspiel.load_game(GOOFSPIEL), **MIX)


@pytest.fixture(scope="module", params=["DeepCFRSolver", "CFRMixSolver"])
def saved(request, tmp_path_factory):
    solver = _solver(request.param)
    solver.run_iteration()
    path = str(tmp_path_factory.mktemp("ckpt") / "run.pt")
    solver.save_checkpoint(path)
    return request.param, path


def _rewrite(path, tmp_path, change, checksum=True):
    payload = torch.load(path, weights_only=True)
    change(payload)
    payload.pop("sha256", None)
    if checksum:
        payload["sha256"] = checkpoint_lib.payload_digest(payload)
    out = str(tmp_path / "old.pt")
    torch.save(payload, out)
    return out


def _one_line(error):
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("version", [1, 2])
def test_formats_1_and_2_are_refused(saved, tmp_path, version):
    kind, path = saved
    old = _rewrite(path, tmp_path, lambda p: p.update(format=checkpoint_lib.format_of(kind, version)),
                   checksum=version == 2)  # fmt: skip
    expected = f"format 'openspiel_cfrx.{kind}/{version}', expected 'openspiel_cfrx.{kind}/3'"
    refusal = (rf"'{old}' is not a {kind} checkpoint \({expected}\): a file of an earlier development version "
               rf"of openspiel_cfrx, which this version does not read; {FIX}")  # fmt: skip
    with pytest.raises(CheckpointError, match=refusal) as e:
        _solver(kind).load_checkpoint(old)
    _one_line(e)
    with pytest.raises(CheckpointError, match="earlier development version"):
        type(_solver(kind)).from_checkpoint(old)


def test_a_config_instead_of_game_and_settings_is_refused(saved, tmp_path):
    kind, path = saved

    def to_config(payload):  # the game and the shape settings in a second record, as before 0.3.0
        payload["config"] = {"game": payload.pop("game"), "network": "mlp", "memory_capacity": 16}

    old = _rewrite(path, tmp_path, to_config)
    refusal = (rf"checkpoint '{old}' has format 'openspiel_cfrx.{kind}/3' but lacks 'game'; it holds a 'config' "
               rf"entry \(the layout of an earlier development version\); this version reads only files holding "
               rf"'game', 'settings' and 'state': {FIX}")  # fmt: skip
    with pytest.raises(CheckpointError, match=refusal) as e:
        _solver(kind).load_checkpoint(old)
    _one_line(e)

    def no_settings(payload):  # the oldest held no settings record either
        to_config(payload)
        del payload["settings"]

    old = _rewrite(path, tmp_path, no_settings)
    with pytest.raises(CheckpointError, match=rf"lacks 'game' and 'settings'; it holds a 'config' entry .*{FIX}"):
        type(_solver(kind)).from_checkpoint(old)


def test_the_checksum_is_checked_before_the_layout(saved, tmp_path):
    kind, path = saved
    old = _rewrite(path, tmp_path, lambda p: p.update(config={"game": p.pop("game")}), checksum=False)
    with pytest.raises(CheckpointError, match="damaged"):
        _solver(kind).load_checkpoint(old)


def test_the_other_solvers_checkpoint_is_refused_naming_it(saved):
    kind, path = saved
    other = "CFRMixSolver" if kind == "DeepCFRSolver" else "DeepCFRSolver"
    with pytest.raises(CheckpointError, match=f"it was written by {kind}: load it into one"):
        _solver(other).load_checkpoint(path)


def test_todays_checkpoint_loads_with_its_settings(saved):
    kind, path = saved
    solver = _solver(kind)
    solver.load_checkpoint(path)
    assert solver.iteration == 1
    assert checkpoint_lib.settings_differences(solver.checkpoint_settings, solver.settings.to_record()) == {}
    assert os.path.exists(path)
