"""Checkpoints written before the shared neural core (format /2, one field per
private attribute) load into today's solvers through the migration and
continue exactly as the code that wrote them did.

tests/data/*_format2.pt and format2_expected.json were written by commit
646dec6 (the last pre-core code): it saved after iteration 2 (Deep CFR) / 1
(CFR-MIX), ran one more iteration, and recorded the numbers below.
tests/data/cfr_mix_format3.pt (the current format) was written by commit
82a3a22, before CFR-MIX moved from `openspiel_cfrx.deep` to its own package
`openspiel_cfrx.cfr_mix`: a checkpoint names its solver by class
(`openspiel_cfrx.CFRMixSolver/3`), never by module, so it loads unchanged.
"""

import json
import os

import pyspiel
import pytest
import torch

import games  # noqa: F401  registers team_goofspiel
import openspiel_cfrx
from openspiel_cfrx.cfr_mix import CFRMixSolver
from openspiel_cfrx.deep import CheckpointError, DeepCFRSolver
from openspiel_cfrx.deep import checkpoint as checkpoint_lib

DATA = os.path.join(os.path.dirname(__file__), "data")
EXPECTED = json.load(open(os.path.join(DATA, "format2_expected.json")))
torch.set_num_threads(1)


def _settings(name):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in EXPECTED["settings"][name].items()}


def test_deep_cfr_format2_checkpoint_resumes_exactly():
    game = pyspiel.load_game("kuhn_poker")
    solver = DeepCFRSolver(game, **_settings("deep_cfr"))
    solver.load_checkpoint(os.path.join(DATA, "deep_cfr_format2.pt"))
    assert solver.iteration == 2 and solver.checkpoint_extra == {"note": "written by 646dec6"}
    solver.run_iteration()
    expected = EXPECTED["deep_cfr"]
    assert solver.nodes_touched == expected["nodes_touched"]
    losses = [x for p in (0, 1) for x in solver.solve_result()[1][p]]
    assert losses == pytest.approx(expected["advantage_losses"], rel=1e-6)
    assert openspiel_cfrx.nash_conv(game, solver) == pytest.approx(expected["nash_conv"], abs=1e-6)
    assert solver.nash_conv("sd_cfr") == pytest.approx(expected["sd_cfr"], abs=1e-6)


def test_cfr_mix_format2_checkpoint_resumes_exactly():
    game = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2,num_turns=2)")
    solver = CFRMixSolver(game, **_settings("cfr_mix"))
    solver.load_checkpoint(os.path.join(DATA, "cfr_mix_format2.pt"))
    assert solver.iteration == 1
    solver.run_iteration()
    expected = EXPECTED["cfr_mix"]
    assert (solver.nodes_touched, solver.probes) == (expected["nodes_touched"], expected["probes"])
    assert openspiel_cfrx.nash_conv(game, solver) == pytest.approx(expected["nash_conv"], abs=1e-6)


def test_cfr_mix_format3_checkpoint_from_before_the_package_move_resumes_exactly():
    """tests/data/cfr_mix_format3.pt was written by commit 82a3a22, when CFR-MIX
    lived in `openspiel_cfrx.deep.cfr_mix` (before `openspiel_cfrx.cfr_mix`):
    saved after iteration 1 with the settings of the format /2 file; the
    numbers below are what that code gave after one more iteration."""
    game = pyspiel.load_game("team_goofspiel(num_cards=3,num_agents=2,num_turns=2)")
    path = os.path.join(DATA, "cfr_mix_format3.pt")
    solver = CFRMixSolver(game, **_settings("cfr_mix"))
    solver.load_checkpoint(path)
    assert solver.iteration == 1
    assert solver.checkpoint_extra == {"note": "written before the move to openspiel_cfrx.cfr_mix"}
    assert checkpoint_lib.settings_differences(solver.checkpoint_settings, solver.settings.to_record()) == {}
    assert openspiel_cfrx.nash_conv(game, solver) == pytest.approx(1.293623836319127, abs=1e-6)
    solver.run_iteration()
    assert (solver.nodes_touched, solver.probes) == (880, 224)
    assert openspiel_cfrx.nash_conv(game, solver) == pytest.approx(1.2613864238736743, abs=1e-6)
    rebuilt = CFRMixSolver.from_checkpoint(path)  # the game and shapes from the file alone
    assert rebuilt.iteration == 1
    assert openspiel_cfrx.nash_conv(game, rebuilt) == pytest.approx(1.293623836319127, abs=1e-6)


def test_format2_checkpoint_of_the_other_solver_or_damaged_is_refused(tmp_path):
    game = pyspiel.load_game("kuhn_poker")
    with pytest.raises(CheckpointError, match="written by CFRMixSolver"):
        DeepCFRSolver(game, **_settings("deep_cfr")).load_checkpoint(os.path.join(DATA, "cfr_mix_format2.pt"))
    payload = torch.load(os.path.join(DATA, "deep_cfr_format2.pt"), weights_only=True)
    payload["iteration"] = 7  # changed after writing: the /2 checksum no longer matches
    damaged = str(tmp_path / "damaged.pt")
    torch.save(payload, damaged)
    with pytest.raises(CheckpointError, match="damaged"):
        DeepCFRSolver(game, **_settings("deep_cfr")).load_checkpoint(damaged)
