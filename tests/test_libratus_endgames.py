"""Issue 19 (progress): the Libratus endgame data, the no-limit bet abstraction, the engine on them."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import games
from games.libratus_endgames import DATA, engine_card, hunl_rules, load_endgame, read_endgame
from openspiel_cfrx.poker import BetAbstraction, Deck, VectorCFR
from openspiel_cfrx.poker.nolimit import nolimit_betting_tree


@pytest.mark.parametrize("number", [1, 2, 3, 4])
def test_data_hand_order_maps_to_engine_hands(number):
    """Every hand meeting the board has reach 0 in the data, and only those:
    a wrong card or suit mapping would put weight on impossible hands."""
    endgame = load_endgame(number)
    conflicts = Deck(13, 4).conflicts(endgame.board)
    assert endgame.reach.shape == (2, 1326)
    assert np.all(endgame.reach[:, conflicts] == 0)
    assert np.all((endgame.reach[:, ~conflicts] > 0).sum(axis=1) > 300)
    assert endgame.round == {1: 2, 2: 2, 3: 3, 4: 3}[number]
    assert endgame.pot == {1: 500, 2: 4780, 3: 500, 4: 3750}[number]


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = ["README.md", "SOURCE.md", "subgame1.txt", "subgame2.txt", "subgame3.txt", "subgame4.txt"]


def test_data_ships_inside_the_games_package():
    """The data files (and their source and licence note) are package data of
    `games`, found with importlib.resources, not a path outside the package."""
    package = os.path.dirname(os.path.abspath(games.__file__))
    assert sorted(entry.name for entry in DATA.iterdir() if entry.is_file()) == sorted(FILES)
    assert os.path.commonpath([package, os.path.abspath(str(DATA))]) == package
    assert "Sandholm-Lab/LibratusEndgames" in (DATA / "SOURCE.md").read_text(encoding="utf-8")


def test_loading_opens_only_the_packaged_file():
    """An audit hook records every file `load_endgame` opens: the packaged
    subgame file and nothing under another directory."""
    code = (
        "import os, sys\n"
        "opened = []\n"
        "sys.addaudithook(lambda event, args: opened.append(os.path.abspath(str(args[0])))"
        " if event == 'open' and isinstance(args[0], str) and 'subgame' in args[0] else None)\n"
        "from games.libratus_endgames import load_endgame\n"
        "load_endgame(4)\n"
        "print('\\n'.join(opened))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**os.environ, "PYTHONPATH": ROOT}, check=True)  # fmt: skip
    package = os.path.dirname(os.path.abspath(games.__file__))
    assert done.stdout.split() == [os.path.join(package, "data", "libratus_endgames", "subgame4.txt")]


def test_a_directory_overrides_the_packaged_data(tmp_path):
    shutil.copy(str(DATA / "subgame3.txt"), tmp_path / "subgame3.txt")
    packaged, copied = load_endgame(3), load_endgame(3, str(tmp_path))
    assert copied.board == packaged.board and copied.pot == packaged.pot
    assert np.array_equal(copied.reach, packaged.reach)
    with pytest.raises(ValueError, match="cannot read endgame file"):
        load_endgame(4, str(tmp_path))


def test_no_code_refers_to_data_outside_the_repository():
    """games/ and openspiel_cfrx/ (its examples included) name no path outside the checkout
    (the data used to be read from a directory beside it)."""
    offenders = []
    for top in ("games", "openspiel_cfrx"):
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if name.endswith(".py"):
                    with open(os.path.join(folder, name), encoding="utf-8") as f:
                        text = f.read()
                    offenders += [f"{folder}/{name}: {word}" for word in ("shared/data", '"shared"', "/work/")
                                  if word in text]  # fmt: skip
    assert offenders == []


def test_cards_use_the_engines_suit_order():
    assert engine_card("2c") == 0 and engine_card("2s") == 3 and engine_card("Ah") == 50


def test_paper_abstraction_on_a_river_pot_of_3750():
    """First bet: 0.5x pot, 1x pot, all-in; a raise: 1x pot (after calling) or all-in."""
    nodes = nolimit_betting_tree(hunl_rules(), 3, (1875, 1875))
    root = nodes[0]
    assert root.player == 0 and root.legal == (1, 2, 3, 4)  # check, 1875, 3750, all-in (no fold)
    bets = [nodes[c].contributions[0] for c in root.children[1:]]
    assert bets == [1875 + 1875, 1875 + 3750, 20000]
    facing_pot = nodes[root.children[2]]  # P0 bet the pot: 5625 vs 1875
    assert facing_pot.player == 1 and facing_pot.legal == (0, 1, 2, 3)
    raises = [nodes[c].contributions[1] for c in facing_pot.children[2:]]
    assert raises == [5625 + 2 * 5625, 20000]
    facing_all_in = nodes[facing_pot.children[3]]
    assert facing_all_in.legal == (0, 1)  # fold or call only
    assert len(nodes) == 57


def test_the_rules_first_player_acts_first_in_each_round():
    rules = dataclasses.replace(hunl_rules(), first_player=(0, 0, 1, 0))
    nodes = nolimit_betting_tree(rules, 2, (250, 250))
    assert nodes[0].player == 1  # the turn's first player
    river_first = [nodes[c] for n in nodes if n.kind == "deal" for c in n.children if nodes[c].kind == "decision"]
    assert river_first and all(n.player == 0 for n in river_first)


def test_small_bets_are_raised_to_the_minimum_and_merged():
    rules = hunl_rules(BetAbstraction(first=(0.01, 0.02), later=(1.0,)))
    root = nolimit_betting_tree(rules, 3, (100, 100))[0]
    assert root.legal == (1, 2, 3)  # both tiny fractions became the 100-chip minimum bet, plus all-in


def test_bad_files_are_one_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("-round 5\n-board 2c3c4c5c6c\n-pot 100\n-reach 0.1\n")
    with pytest.raises(ValueError, match="round must be 3 .turn. or 4 .river."):
        read_endgame(str(bad))
    with pytest.raises(ValueError, match="cannot read endgame file"):
        read_endgame(str(tmp_path / "missing.txt"))


def test_dcfr_lowers_the_saddle_point_gap_on_subgame_4():
    tree = load_endgame(4).tree(threads=1)
    uniform = tree.exploitability(tree.uniform)
    solver = VectorCFR(tree, "dcfr", dtype=np.float64, verbose=False)
    solver.run(100)
    gap = solver.evaluate()["exploitability"]
    assert gap < uniform / 50


def test_small_river_endgame_engine_equals_openspiel_nash_conv():
    """`hunl_endgame` (subgame 4, ranges cut to 12 hands each) as a pyspiel
    game: the public-tree engine's NashConv equals OpenSpiel's
    `exploitability.nash_conv` to 1e-9 for the uniform strategy and for a
    DCFR average strategy (read into an OpenSpiel TabularPolicy)."""
    import pyspiel
    from open_spiel.python import policy as policy_lib
    from open_spiel.python.algorithms import exploitability

    import games  # noqa: F401  registers hunl_endgame
    from openspiel_cfrx.poker import PublicTree, Subgame

    game = pyspiel.load_game("hunl_endgame(subgame=4,max_hands=12)")
    tree = PublicTree(betting=(game.rules, game.nodes), subgame=Subgame((), game.endgame.board, game.ranges),
                      threads=1)  # fmt: skip
    uniform = exploitability.nash_conv(game, policy_lib.UniformRandomPolicy(game))
    assert tree.nash_conv(tree.uniform) == pytest.approx(uniform, abs=1e-9)
    solver = VectorCFR(tree, "dcfr", dtype=np.float64, verbose=False)
    solver.run(20)
    average = solver.average_strategy

    def probabilities(state):
        player, node = state.current_player(), state.node
        row = average(node, 0, 1)[0, state.deal[player]]
        return dict(zip(game.nodes[node].legal, row.tolist(), strict=True))

    tabular = policy_lib.tabular_policy_from_callable(game, probabilities)
    expected = exploitability.nash_conv(game, tabular)
    assert tree.nash_conv(average) == pytest.approx(expected, abs=1e-9)
    assert expected < uniform / 5


@pytest.mark.slow  # the wheel check runs the example on subgame 4
def test_oftrl_endgames_example_writes_curves_and_summary(tmp_path):
    import csv

    subprocess.run([sys.executable, os.path.join(ROOT, "cfrx_examples", "oftrl_endgames.py"), "--subgames=4", "--iterations=10", "--evaluations=3",
                    "--update_modes=simultaneous", "--tuned_scales=10", f"--output_dir={tmp_path}"],
                   check=True, timeout=300, capture_output=True)  # fmt: skip
    rows = list(csv.DictReader(open(tmp_path / "curves.csv")))
    assert {r["algorithm"] for r in rows} == {"CFR", "DCFR", "OFTRL theory", "OFTRL tuned (theory x10)"}
    assert all(float(r["saddle_point_gap_mbb"]) > 0 for r in rows)
    assert (tmp_path / "subgame4_simultaneous.png").exists() and "iterations/s" in (tmp_path / "summary.md").read_text()


def test_oftrl_endgames_example_refuses_a_data_dir_without_the_subgame(tmp_path):
    done = subprocess.run([sys.executable, os.path.join(ROOT, "cfrx_examples", "oftrl_endgames.py"), "--subgames=4",
                           f"--data_dir={tmp_path}", f"--output_dir={tmp_path / 'out'}"],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode != 0 and lines == [f"error: --data_dir={tmp_path} has no subgame4.txt"], lines


def test_oftrl_endgames_runs_dir_resumes_and_extends_past_the_edge(tmp_path):
    """--runs_dir stores one JSON file per run; --extend_edges adds the
    multiple past the edge holding the best final gap; a second invocation
    (--plan) finds every run stored and has nothing to do."""
    runs = tmp_path / "runs"
    flags = [os.path.join(ROOT, "cfrx_examples", "oftrl_endgames.py"), "--subgames=4", "--iterations=10",
             "--evaluations=2", "--update_modes=simultaneous", "--algorithms=oftrl_theory,oftrl_tuned",
             "--tuned_scales=10", "--oftrl_units=chips", "--extend_edges", "--max_extensions=1", f"--runs_dir={runs}"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": ROOT}
    first = subprocess.run([sys.executable, *flags, f"--output_dir={tmp_path / 'a'}"], capture_output=True, text=True,
                           timeout=300, env=env)  # fmt: skip
    assert first.returncode == 0, first.stderr
    stored = sorted(p.name for p in runs.glob("*.json"))
    assert len(stored) == 3 and "subgame4_simultaneous_oftrl_chips_x1_T10_e2.json" in stored, stored
    assert any(name.startswith(("subgame4_simultaneous_oftrl_chips_x100_", "subgame4_simultaneous_oftrl_chips_x0.1_"))
               for name in stored)  # fmt: skip
    plan = subprocess.run([sys.executable, *flags, "--plan", f"--output_dir={tmp_path / 'c'}"], capture_output=True,
                          text=True, timeout=300, env=env)  # fmt: skip
    assert plan.returncode == 0 and "nothing to do: all 3 runs are stored" in plan.stdout, plan.stdout + plan.stderr


def _synthetic_run(runs, subgame, mode, algorithm, curve, units="", multiple=1.0):
    import json
    import math

    points = sorted({max(1, round(10 ** (k * 3 / 24))) for k in range(25)} | {1000})  # bench_endgames' 25 at T=1000
    settings = {"subgame": subgame, "update_mode": mode, "algorithm": algorithm, "iterations": 1000,
                "evaluated_at": points, "data_dir": ""}  # fmt: skip
    if algorithm == "oftrl":
        settings.update(units=units, multiple=multiple)
    record = {"settings": settings, "curve": [[t, curve(t)] for t in points], "cpu_seconds": 1.0}
    name = f"{subgame}_{mode}_{algorithm}_{units}_{multiple:g}_{math.floor(curve(1))}.json"
    (runs / name).write_text(json.dumps(record))


def test_endgames_page_verdicts_from_stored_runs(tmp_path):
    """bench_endgames.py --report_only on synthetic stored runs of subgame 4:
    the verdict rows follow the page's rules, and rows whose runs are not
    stored say "not measured yet"."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for mode in ("simultaneous", "alternating"):
        _synthetic_run(runs, 4, mode, "cfr", lambda t: 10_000 / t**0.5)
        _synthetic_run(runs, 4, mode, "dcfr", lambda t: 100 / t)
        _synthetic_run(runs, 4, mode, "oftrl", lambda t: 5_000 / t**0.5, "chips", 1.0)  # below CFR from 1
        _synthetic_run(runs, 4, mode, "oftrl", lambda t: 80_000.0, "bounded", 1.0)  # never moves
        for multiple in (10.0, 100.0, 1000.0):
            _synthetic_run(runs, 4, mode, "oftrl", lambda t, m=multiple: 20_000 * m / t**0.5, "chips", multiple)
    page = tmp_path / "endgames.md"
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench_endgames.py"), "--report_only",
                           f"--runs_dir={runs}", f"--output={page}"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": ROOT})  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    rows = {}
    for line in text[text.index("## The paper's statements on this run"):].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith('"'):
            rows[cells[0]] = cells[2]
    assert "a half-finished grid" in text and "Runs stored: 14 of the base grid" in text

    def holds(start: str, *parts: str) -> list[str]:
        return [h for s, h in rows.items() if s.startswith(start) and all(p in s for p in parts)]

    assert holds('"In the smaller subgames 3 and 4', "subgame 4;", "chips units") == ["yes"]
    assert holds('"In the smaller subgames 3 and 4', "subgame 4;", "bounded units") == ["no"]
    assert holds('"In the smaller subgames 3 and 4', "subgame 3;", "chips units") == ["not measured yet"]
    # the multiply reading's tuned line (x10: 2x CFR) loses to CFR; the divide reading is not stored
    assert holds('"In subgames 3 and 4 even the manually-tuned', "subgame 4 as printed", "chips", "multiply") == ["yes"]
    assert holds('"In subgames 3 and 4 even the manually-tuned', "subgame 4 as printed", "chips", "divide") == \
        ["not measured yet"]  # fmt: skip
    assert holds('"In the alternating setting DCFR', "subgame 4;", "chips", "multiply") == ["yes"]
    assert len(rows) == 88 and sum(h == "not measured yet" for h in rows.values()) > 60
    # the page's count line counts the table's verdicts by their first words ("no" is not "not measured yet")
    first = [h.split(" (")[0] for h in rows.values()]
    counts = {word: first.count(word) for word in ("yes", "partly", "no", "not measured yet")}
    assert (f"{counts['yes']} yes, {counts['partly']} partly, {counts['no']} no, "
            f"{counts['not measured yet']} not measured yet.") in text  # fmt: skip
