"""One-line errors for bad game strings, in the library and in every example
(issue 15, item 5)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import openspiel_cfrx
from openspiel_cfrx import GameStringError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = ["deep_cfr", "cfr_mix", "oftrl_cfr", "head_to_head", "benchmark", "openspiel_swap"]


@pytest.mark.parametrize(
    "game_string, pattern",
    [
        ("no_such_game(x=1)", r"unknown game 'no_such_game'"),
        ("leduk_poker", r"unknown game 'leduk_poker'.*did you mean leduc_poker"),
        ("turn_based_simultaneous_game(game=gofspiel(num_cards=4))", r"unknown game 'gofspiel'.*goofspiel"),
        ("kuhn_poker(foo=1)", r"Unknown parameter 'foo'.*players"),
        ("kuhn_poker(players=x)", r"Wrong type for parameter players"),
    ],
)
def test_load_game_errors_are_one_line(game_string, pattern, capfd):
    with pytest.raises(GameStringError, match=pattern) as info:
        openspiel_cfrx.load_game(game_string)
    assert "\n" not in str(info.value)
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # OpenSpiel's list of games is not printed


def test_load_game_loads_and_our_games_report_bad_parameters():
    import games  # noqa: F401

    assert openspiel_cfrx.load_game("kuhn_poker").num_players() == 2
    with pytest.raises(GameStringError, match=r"team_goofspiel\(bogus=2\).*Unknown parameter 'bogus'.*num_cards"):
        openspiel_cfrx.load_game("team_goofspiel(bogus=2)")
    with pytest.raises(GameStringError, match=r"num_ranks=99: must be an integer in \[2, 13\]"):
        openspiel_cfrx.load_game("flop_holdem(num_ranks=99)")


def _run_example(name: str, game: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", f"{name}.py"), f"--game={game}"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("example", EXAMPLES)
def test_examples_print_one_line_for_an_unknown_game(example):
    result = _run_example(example, "no_such_game(x=1)")
    assert result.returncode != 0
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, lines[:5]
    assert "unknown game 'no_such_game'" in lines[0] and "did you mean" in lines[0]


@pytest.mark.parametrize("example, game", [("oftrl_cfr", "kuhn_poker(foo=1)"),
                                           ("cfr_mix", "team_goofspiel(bogus=2)")])  # fmt: skip
def test_examples_print_one_line_for_a_bad_parameter(example, game):
    result = _run_example(example, game)
    assert result.returncode != 0
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, lines[:5]
    assert "Unknown parameter" in lines[0]


@pytest.mark.parametrize(
    "example, flag, message",
    [
        ("cfr_mix", "--traversals=0", "num_traversals must be an int >= 1"),
        ("oftrl_cfr", "--stepsize_scales=-1", "stepsize_scale must be > 0"),
        ("deep_cfr", "--learning_rate=inf", "learning_rate must be a finite number > 0"),
        ("openspiel_swap", "--iterations=-5", "--iterations must be >= 1"),
        ("openspiel_swap", "--episodes=-1", "--episodes must be >= 1"),
    ],
)
def test_library_refusals_become_one_line_errors(example, flag, message, tmp_path):
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", f"{example}.py"), flag, f"--output_dir={tmp_path}"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert proc.returncode != 0 and len(lines) == 1 and message in lines[0], lines[-5:]
