"""Sharp edges of the examples (issue 15): one-line errors for bad game
strings, in the library and in every example (item 5); exact values labelled
as exact, citations matching the papers, current Deep CFR numbers in
docs/benchmarks.md (item 7)."""

from __future__ import annotations

import os
import subprocess
import sys

import example_runner
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
        ("kuhn_poker(players=)", r"Wrong type for parameter players.*with an empty value$"),
        # OpenSpiel's failed checks ("leduc_poker.cc:790 num_players_ <= ...") made readable:
        ("leduc_poker(players=99)", r"players must be in \[2, 10\] for leduc_poker"),
        ("turn_based_simultaneous_game(game=kuhn_poker(players=1))", r"players must be in \[2, 10\] for kuhn_poker"),
        ("tiny_hanabi(num_chance=0)", r"OpenSpiel check failed: .*tiny_hanabi's parameters \(defaults\): num_actions=3"),
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
    with pytest.raises(GameStringError, match=r"nest\(rows=0\).*rows, cols >= 1"):
        openspiel_cfrx.load_game("nest(rows=0)")
    with pytest.raises(GameStringError, match=r"Unknown parameter 'bogus'.*num_pursuers"):
        openspiel_cfrx.load_game("nest(bogus=1)")


def test_load_game_ignores_spaces_around_the_string():
    # OpenSpiel calls ' kuhn_poker ' an unknown game and prints its list of games.
    assert str(openspiel_cfrx.load_game(" kuhn_poker ")) == "kuhn_poker()"


def _run_example(name: str, game: str) -> subprocess.CompletedProcess:
    return example_runner.run([sys.executable, os.path.join(ROOT, "cfrx_examples", f"{name}.py"), f"--game={game}"],
                              cwd=ROOT)  # fmt: skip


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
        # Refused at the flag (cfrx_examples/_common.py), naming the flag rather than the library's argument.
        ("cfr_mix", "--traversals=0", "--traversals must be >= 1, got 0"),
        ("oftrl_cfr", "--stepsize_scales=-1", "--stepsize_scales entry must be > 0, got -1.0"),
        ("deep_cfr", "--learning_rate=inf", "--learning_rate must be a finite number, got inf"),
        ("deep_cfr", "--learning_rate=1e400", "--learning_rate must be a finite number, got inf"),
        ("deep_cfr", "--traversals=0", "num_traversals must be an int >= 1"),  # the library's refusal
        ("openspiel_swap", "--iterations=-5", "--iterations must be >= 1"),
        ("openspiel_swap", "--episodes=-1", "--episodes must be >= 1"),
    ],
)
def test_library_refusals_become_one_line_errors(example, flag, message, tmp_path):
    proc = example_runner.run(
        [sys.executable, os.path.join(ROOT, "cfrx_examples", f"{example}.py"), flag, f"--output_dir={tmp_path}"], cwd=ROOT
    )  # fmt: skip
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert proc.returncode != 0 and len(lines) == 1 and message in lines[0], lines[-5:]


# ------------------------------------------------------------------- item 7
def test_cfr_mix_example_labels_exact_values_as_exact(tmp_path):
    # Exact NashConv has no confidence interval: "(exact; current iterate ...)", not "+- 0.0000".
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "cfrx_examples", "cfr_mix.py"), "--variants=independent",
         "--iterations=1", "--traversals=2", "--train_steps=1", "--hidden=4", "--eval_every=1",
         f"--output_dir={tmp_path}"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line for line in (proc.stdout + proc.stderr).splitlines() if "nash_conv" in line]
    assert len(rows) == 1 and "(exact; current iterate " in rows[0] and "+-" not in rows[0], rows


# Title words and the authors as each paper's title page names them, in its
# order (copied from the papers' title pages, so the check needs no file
# outside the repository).
CITATIONS = [
    ("Deep Counterfactual Regret Minimization", ["Noam Brown", "Adam Lerer", "Sam Gross", "Tuomas Sandholm"]),
    ("CFR-MIX", ["Shuxin Li", "Youzhi Zhang", "Xinrun Wang", "Wanqi Xue", "Bo An"]),
    ("Stable-Predictive Optimistic", ["Gabriele Farina", "Christian Kroer", "Noam Brown", "Tuomas Sandholm"]),
]


@pytest.mark.parametrize("title, authors", CITATIONS)
def test_readme_cites_each_paper_with_its_authors(title, authors):
    """The README's reference list cites each paper once, with the title
    page's authors in its order as initial + surname ("N. Brown, A. Lerer")."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        cited = [line for line in f if line.startswith("* ") and title in line]
    initials = ", ".join(f"{name[0]}. {name.split()[-1]}" for name in authors)
    assert len(cited) == 1 and cited[0].startswith(f"* {initials}."), (initials, cited)


def test_docs_name_the_cfr_mix_authors():
    with open(os.path.join(ROOT, "docs", "cfr_mix.md"), encoding="utf-8") as f:
        assert "Li, Zhang, Wang, Xue, An" in f.read(500)


def test_benchmarks_doc_quotes_the_current_deep_cfr_results():
    with open(os.path.join(ROOT, "docs", "benchmarks.md"), encoding="utf-8") as f:
        doc = f.read()
    with open(os.path.join(ROOT, "benchmarks", "results", "deep_cfr_leduc.md"), encoding="utf-8") as f:
        results = f.read()
    assert "17.8×" not in doc and "1.2–2.0×" not in doc and "0.094 vs 0.734" not in doc  # superseded numbers
    # The numbers the doc quotes are those of the committed result.
    for quoted, recorded in [("14.4×", "14.4x"), ("125.6×", "125.6x"), ("6.2–9.3×", "6.2x-9.3x"),
                             ("0.0818 vs 0.6329", "ours NashConv 0.0818"), ("0.0818 vs 0.6329", "OpenSpiel 0.6329")]:  # fmt: skip
        assert quoted in doc and recorded in results, (quoted, recorded)
