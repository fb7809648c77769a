"""The strategy explorer on Kuhn and Leduc poker (a card list per public card,
best-response gains summing to OpenSpiel's exact NashConv) and on team games
(each agent's action probabilities at every infoset), the tabular policy files
it reads (`openspiel_cfrx.tabular.policy_file`, `cfrx-oftrl-cfr
--save_policy`), and their pages in headless Chromium (marker `browser`).
Flop hold'em: tests/test_explore.py."""

from __future__ import annotations

import json
import os
import sys

import example_runner  # tests/ is on sys.path
import numpy as np
import pyspiel
import pytest
import torch
from explore_browser import PageFile, console_errors, open_page, wait_node, wait_text
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import cfr, exploitability

from openspiel_cfrx.checkpoint_io import array_digest
from openspiel_cfrx.explore import (
    CardExplorer,
    ExploreError,
    TeamExplorer,
    load_policy,
    make_explorer,
)
from openspiel_cfrx.explore.policies import NamedPolicy
from openspiel_cfrx.tabular import CFRPlusSolver, load_tabular_policy, save_tabular_policy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")
HASH = "explore_policies:hash_policy"
SOLVE = os.path.join(TESTS, "data", "fhp_4x2_dcfr_3000.npz")  # a VectorCFR strategy file (flop hold'em)
CARD_GAMES = ["kuhn_poker", "leduc_poker"]
TINY_GOOFSPIEL = "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)"
# Evader at the centre 0 of a star with exits 1, 2, 3; pursuers start at 4 and 5; one step (tests/test_cfr_mix.py).
STAR_NEST = "nest(edges=0-1;0-2;0-3;1-4;2-4;2-5;3-5,num_pursuers=2,horizon=1,exits=1;2;3,pursuer_starts=4;5,evader_start=0)"
EXACT = 1e-9  # gains against OpenSpiel's NashConv (float64 sums over a few hundred infosets)


def cfr_policy(game, iterations: int = 5) -> policy_lib.TabularPolicy:
    """A non-uniform policy: the average policy of a few iterations of OpenSpiel's CFR."""
    solver = cfr.CFRSolver(game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    return solver.average_policy()


@pytest.fixture(scope="module", params=CARD_GAMES)
def cards(request):
    """(game, CardExplorer comparing CFR's average policy (A) with uniform (B))."""
    game = pyspiel.load_game(request.param)
    policies = [NamedPolicy("cfr", cfr_policy(game)), load_policy(game, "uniform")]
    return game, CardExplorer(game, policies, game_name=request.param)


# ----------------------------------------------------------- Kuhn and Leduc


def test_card_gains_sum_to_openspiel_nash_conv(cards):
    game, explorer = cards
    for named, analysis in zip(explorer.policies, explorer.analyses, strict=True):
        exact = exploitability.nash_conv(game, named.policy)
        assert analysis.node_gain.sum() == pytest.approx(exact, abs=EXACT)
        assert analysis.nash_conv == pytest.approx(exact, abs=EXACT)
        for q in (0, 1):  # each player's nodes: its best-response value minus its on-policy value
            mine = [n for n in explorer.decisions if explorer.tree.nodes[n].player == q]
            assert analysis.node_gain[mine].sum() == pytest.approx(analysis.gains_by_player[q], abs=EXACT)
        for n in explorer.decisions:
            assert analysis.board_gain[n].sum() == pytest.approx(analysis.node_gain[n], abs=1e-12)
        assert (analysis.node_gain >= -1e-12).all()
    assert explorer.analyses[0].nash_conv < explorer.analyses[1].nash_conv  # CFR is closer to equilibrium


def card_state(game, explorer, n: int, card: int, board: int | None):
    """A real state at public node n where the acting player holds `card` (and the public
    card is `board`), and the (state, action) pairs of the way there."""
    node, public = explorer.tree.nodes[n], [] if board is None else [int(explorer.tree.boards[board][0])]
    other = next(int(c) for c in explorer.tree.cards if c != card and c not in public)
    state = game.new_initial_state()
    for c in ([card, other] if node.player == 0 else [other, card]):
        state.apply_action(c)
    path = []
    for action in node.actions:
        if state.is_chance_node():
            state.apply_action(public[0])
        path.append((state.clone(), action))
        state.apply_action(action)
    if state.is_chance_node():
        state.apply_action(public[0])
    return state, path


def expected(game, explorer, policy, n: int, card: int, board: int | None):
    """(probabilities of node n's legal actions, own reach) read from `policy` on real states."""
    state, path = card_state(game, explorer, n, card, board)
    node = explorer.tree.nodes[n]
    assert state.current_player() == node.player and state.legal_actions() == list(node.legal)
    probs = policy.action_probabilities(state)
    reach = np.prod([policy.action_probabilities(s)[a] for s, a in path if s.current_player() == node.player])
    return [probs[a] for a in node.legal], reach


def test_card_views_are_the_policys_action_probabilities_on_real_states(cards):
    game, explorer = cards
    boards = [None] + list(range(explorer.num_boards))
    checked = 0
    for board in boards:
        view = explorer.board_view(board)[0]
        free = explorer.free_hands(board)
        for n, (probs, reach, _) in view.items():
            for k, hand in enumerate(free):
                want_probs, want_reach = expected(game, explorer, explorer.policies[0].policy, n,
                                                  int(explorer.tree.cards[hand]), board)  # fmt: skip
                np.testing.assert_allclose(probs[k], want_probs, atol=1e-12)
                assert reach[k] == pytest.approx(want_reach, abs=1e-12)
                checked += 1
    decisions = explorer.decisions
    assert checked == (len(decisions) * 3 if game.get_type().short_name == "kuhn_poker" else
                       sum(6 if explorer.tree.nodes[n].round == 0 else 6 * 5 for n in decisions))  # fmt: skip


def test_leducs_public_tree_has_one_node_per_betting_sequence_and_six_public_cards():
    game = pyspiel.load_game("leduc_poker")
    explorer = CardExplorer(game, [load_policy(game, "uniform")])
    tree = explorer.tree
    assert tree.cards.tolist() == list(range(6)) and tree.boards.ravel().tolist() == list(range(6))
    assert len(explorer.decisions) == 6 + 5 * 6 and sum(node.kind == "deal" for node in tree.nodes) == 5  # 936 infosets
    assert tree.nodes[0].names == ["call", "raise"]
    assert tree.nodes[tree.nodes[0].children[1]].names == ["fold", "call", "raise"]  # after a raise
    assert {node.text for node in tree.nodes if node.kind == "fold"} >= {"player 1 folds · player 0 wins 1"}
    assert explorer.page_fields()["card_names"] == ["Jc", "Jd", "Qc", "Qd", "Kc", "Kd"]


@pytest.mark.parametrize("game_string, message", [
    ("tiny_hanabi", "tiny_hanabi.* is none of these"),
    ("kuhn_poker(players=3)", "is none of these"),
    ("hulh", "HULH is not supported"),
])  # fmt: skip
def test_games_no_explorer_shows_are_one_line_errors(game_string, message):
    game = pyspiel.load_game(game_string)
    with pytest.raises(ExploreError, match=message) as info:
        make_explorer(game, [NamedPolicy("uniform", policy_lib.UniformRandomPolicy(game))])
    assert "\n" not in str(info.value)


# ----------------------------------------------------------- team games


@pytest.fixture(scope="module")
def mix_checkpoint(tmp_path_factory):
    """(game, path, solver) of a CFR-MIX checkpoint after 2 tiny iterations on team Goofspiel."""
    from openspiel_cfrx.cfr_mix import CFRMixSolver

    torch.set_num_threads(1)
    game = pyspiel.load_game(TINY_GOOFSPIEL)
    solver = CFRMixSolver(game, num_iterations=2, num_traversals=8, regret_train_steps=5, policy_train_steps=5,
                          batch_size=32, regret_network_layers=(8,), policy_network_layers=(8,), memory_capacity=16,
                          workers={"num_threads": 1}, seed=3)  # fmt: skip
    solver.solve()
    path = str(tmp_path_factory.mktemp("mix") / "mix.pt")
    solver.save_checkpoint(path)
    return game, path, solver


def marginals(game, state, joint: dict[int, float]) -> list[dict[int, float]]:
    """Each agent's probabilities of its individual actions, summed over the joint actions."""
    out = [{} for _ in range(game.num_team_agents())]
    for action, p in joint.items():
        for agent, digit in enumerate(game.decode_joint_action(action)):
            out[agent][digit] = out[agent].get(digit, 0.0) + p
    return out


def table_of(explorer, k: int, i: int) -> list[dict[int, float]]:
    """Policy k's per-agent {action: probability} at infoset i, as the explorer gives them."""
    info = explorer.infosets[i]
    return [dict(zip(actions, map(float, probs), strict=True))
            for actions, probs in zip(info["actions"], explorer.agent_probabilities(k, i), strict=True)]  # fmt: skip


def want_tables(game, state, policy) -> list[dict[int, float]]:
    joint = policy.action_probabilities(state)
    return marginals(game, state, joint) if state.current_player() == 0 else [joint]


def assert_tables(shown: list[dict], want: list[dict], tolerance: float) -> None:
    assert [sorted(t) for t in shown] == [sorted(t) for t in want]
    for a, b in zip(shown, want, strict=True):
        np.testing.assert_allclose([a[x] for x in sorted(a)], [b[x] for x in sorted(b)], atol=tolerance)


@pytest.mark.parametrize("game_string", [TINY_GOOFSPIEL, STAR_NEST])
def test_team_tables_are_the_agents_marginals_of_the_policy(game_string):
    game = pyspiel.load_game(game_string)
    explorer = TeamExplorer(game, [load_policy(game, HASH), load_policy(game, "uniform")])
    tree = explorer.tree
    assert {info["player"] for info in explorer.infosets} == {0, 1}
    for i in range(tree.num_infosets):
        state = tree.state(int(tree.infoset_history[i]))
        for k, named in enumerate(explorer.policies):
            assert_tables(table_of(explorer, k, i), want_tables(game, state, named.policy), 1e-12)


def test_a_cfr_mix_checkpoints_tables_are_its_agent_strategies(mix_checkpoint):
    game, path, solver = mix_checkpoint
    explorer = TeamExplorer(game, [load_policy(game, path)])
    tree = explorer.tree
    for i in range(tree.num_infosets):
        state = tree.state(int(tree.infoset_history[i]))
        assert_tables(table_of(explorer, 0, i), solver.agent_action_probabilities(state), 1e-6)  # float32 networks


def test_team_refusals_are_one_line(mix_checkpoint):
    game, path, _ = mix_checkpoint
    kuhn = pyspiel.load_game("kuhn_poker")
    for make, message in [
        (lambda: load_policy(kuhn, path), "written by CFRMixSolver"),
        (lambda: TeamExplorer(game, [load_policy(game, "uniform")], max_infosets=5), "30 infosets, more than"),
        (lambda: TeamExplorer(kuhn, [load_policy(kuhn, "uniform")]), "is not a factored team game"),
    ]:  # fmt: skip
        with pytest.raises(ExploreError, match=message) as info:
            make()
        assert "\n" not in str(info.value)


# ----------------------------------------------------------- tabular policy files


@pytest.fixture(scope="module")
def leduc_file(tmp_path_factory):
    """(game, path, policy) of a tabular policy file holding 5 CFR iterations' average on Leduc."""
    game = pyspiel.load_game("leduc_poker")
    policy = cfr_policy(game)
    path = str(tmp_path_factory.mktemp("tabular") / "leduc_cfr.npz")
    save_tabular_policy(path, game, policy)
    return game, path, policy


def test_a_tabular_policy_file_holds_tabular_policys_rows(leduc_file):
    game, path, policy = leduc_file
    loaded = load_tabular_policy(path, game)
    fresh = policy_lib.TabularPolicy(game)
    assert loaded.state_lookup == fresh.state_lookup  # OpenSpiel's row order
    np.testing.assert_array_equal(loaded.action_probability_array, policy.action_probability_array)
    named = load_policy(game, path)
    assert isinstance(named.policy, policy_lib.TabularPolicy) and named.name == "leduc_cfr.npz"
    explorer = make_explorer(game, [named])
    assert explorer.analyses[0].reading == "tabular"
    assert explorer.analyses[0].node_gain.sum() == pytest.approx(exploitability.nash_conv(game, policy), abs=EXACT)


def _rewritten(path: str, out: str, change) -> str:
    """A copy of the policy file with `change(arrays, meta)` applied and its checksum recomputed."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files if key != "sha256"}
    meta = json.loads(str(arrays["meta"]))
    change(arrays, meta)
    arrays["meta"] = np.array(json.dumps(meta))
    arrays["sha256"] = np.array(array_digest(arrays))
    np.savez(out, **arrays)
    return out


def test_a_tabular_policy_file_of_another_game_shape_or_order_is_refused_in_one_line(leduc_file, tmp_path):
    game, path, _ = leduc_file
    kuhn = pyspiel.load_game("kuhn_poker")
    with np.load(path, allow_pickle=False) as data:  # one probability changed, the checksum kept
        arrays = {key: data[key].copy() for key in data.files}
    arrays["action_probability_array"][0, 1] += 1e-9
    damaged = tmp_path / "damaged.npz"
    np.savez(damaged, **arrays)
    smaller = _rewritten(path, str(tmp_path / "shape.npz"), lambda a, m: a.update(
        action_probability_array=a["action_probability_array"][:-1]))
    shuffled = _rewritten(path, str(tmp_path / "order.npz"), lambda a, m: m.update(states_sha256="0" * 64))
    solver = CFRPlusSolver(kuhn)
    solver.save(str(tmp_path / "checkpoint.npz"))
    for make, message in [
        (lambda: load_tabular_policy(path, kuhn), "holds a policy of leduc_poker\\(\\), not of kuhn_poker\\(\\)"),
        (lambda: load_tabular_policy(str(damaged), game), "damaged"),
        (lambda: load_tabular_policy(smaller, game), "shape \\(935, 3\\), but TabularPolicy"),
        (lambda: load_tabular_policy(shuffled, game), "orders its rows otherwise"),
        (lambda: load_tabular_policy(SOLVE, game), "not a tabular"),
    ]:  # fmt: skip
        with pytest.raises(ValueError, match=message) as info:
            make()
        assert "\n" not in str(info.value)
    for spec, message in [(path, "not of kuhn_poker"), (str(tmp_path / "checkpoint.npz"), "tabular solver checkpoint"),
                          (SOLVE, "only flop hold'em games read")]:  # fmt: skip
        with pytest.raises(ExploreError, match=message):
            load_policy(kuhn, spec)


def _program(name: str, cwd, *args):
    script = os.path.join(ROOT, "cfrx_examples", f"{name}.py")
    return example_runner.run([sys.executable, script, *args], cwd=cwd, timeout=300)


def test_the_tabular_example_saves_a_policy_the_explorer_shows(tmp_path, mix_checkpoint):
    policy_file = tmp_path / "kuhn_cfr_plus.npz"
    run = _program("oftrl_cfr", tmp_path, "--game=kuhn_poker", "--iterations=20", "--solvers=cfr+", "--quiet",
                   f"--output_dir={tmp_path / 'out'}", f"--save_policy={policy_file}")  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    kuhn = pyspiel.load_game("kuhn_poker")
    nash_conv = exploitability.nash_conv(kuhn, load_tabular_policy(str(policy_file), kuhn))
    assert nash_conv < 0.05  # 20 CFR+ iterations on Kuhn
    page = tmp_path / "kuhn.html"
    run = _program("explore", TESTS, "--game=kuhn_poker", f"--policy={policy_file}", "--compare=uniform",
                   f"--output={page}")  # fmt: skip
    assert run.returncode == 0 and f"NashConv {nash_conv:.6g} chips" in run.stdout, run.stderr[-2000:]
    run = _program("explore", TESTS, f"--game={TINY_GOOFSPIEL}", f"--policy={mix_checkpoint[1]}",
                   f"--output={tmp_path / 'team.html'}")  # fmt: skip
    assert run.returncode == 0 and "30 infosets" in run.stdout, run.stderr[-2000:]
    run = _program("oftrl_cfr", tmp_path, "--game=kuhn_poker", "--iterations=2", f"--output_dir={tmp_path / 'o2'}",
                   f"--save_policy={tmp_path / 'x.npz'}")  # fmt: skip
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.returncode != 0 and len(lines) == 1 and "--save_policy saves one policy" in lines[0], run.stderr


# ----------------------------------------------------------- the browser


@pytest.fixture(scope="module")
def card_page(cards):
    game, explorer = cards
    written = PageFile(explorer)
    yield game, explorer, written.path
    written.remove()


@pytest.mark.browser
def test_a_card_page_renders_and_its_gains_sum_to_the_nash_conv(browser, card_page):
    game, explorer, path = card_page
    open_page(browser, f"file://{path}")
    wait_node(browser, 0)
    assert console_errors(browser) == []
    assert browser.find_elements("css selector", "table.grid.list")
    for i, named in enumerate(explorer.policies):
        shown = [float(e.get_attribute("data-gain"))
                 for e in browser.find_elements("css selector", f'#tree span.gain[data-policy="{i}"]')]  # fmt: skip
        assert len(shown) == len(explorer.decisions)
        exact = exploitability.nash_conv(game, named.policy)
        assert sum(shown) == pytest.approx(exact, rel=1e-10)
        assert float(browser.find_element("id", f"gainsum-{i}").text) == pytest.approx(exact, rel=1e-10)


@pytest.mark.browser
def test_clicking_a_path_and_a_card_shows_the_policys_numbers(browser, card_page):
    game, explorer, path = card_page
    tree = explorer.tree
    leduc = game.get_type().short_name == "leduc_poker"
    clicks, crumbs = (["call", "call", "raise"], ["start", "call", "call · public card", "raise"]) if leduc else \
        (["pass", "bet"], ["start", "pass", "bet"])  # fmt: skip
    board = 4 if leduc else 0
    open_page(browser, f"file://{path}#n=0&b={board}")
    n = 0
    for name in clicks:
        browser.find_element("css selector", f'button.act[data-action="{name}"]').click()
        n = tree.nodes[n].children[tree.nodes[n].names.index(name)]
        n = tree.nodes[n].children[0] if tree.nodes[n].kind == "deal" else n
        wait_node(browser, n)
    assert browser.execute_script("return location.hash") == f"#n={n}&b={board}"
    assert [a.text for a in browser.find_elements("css selector", "#path a")] == crumbs
    cells = browser.find_elements("css selector", 'table.grid[data-policy="0"] td[data-cell]')
    public = board if leduc else None
    assert len(cells) == len(explorer.free_hands(public))
    for cell in cells:
        cell.click()
        (row,) = browser.find_elements("css selector", "#detail-table tr.combo")
        card = int(tree.cards[int(row.get_attribute("data-hand"))])
        probs, reach = expected(game, explorer, explorer.policies[0].policy, n, card, public)
        np.testing.assert_allclose([float(td.text) for td in row.find_elements("css selector", "td.prob")], probs,
                                   atol=1e-6)  # the page's 6 decimals  # fmt: skip
        assert float(row.find_element("css selector", "td.reach").text) == pytest.approx(reach, rel=1e-5, abs=1e-6)
    assert console_errors(browser) == []


@pytest.mark.browser
def test_a_team_page_shows_each_agents_probabilities(browser, mix_checkpoint):
    game, path, solver = mix_checkpoint
    explorer = TeamExplorer(game, [load_policy(game, path), load_policy(game, HASH)])
    written = PageFile(explorer)
    try:
        tree = explorer.tree
        team = next(i for i, info in enumerate(explorer.infosets) if info["player"] == 0 and tree.infoset_depth[i] == 1)
        adversary = next(i for i, info in enumerate(explorer.infosets) if info["player"] == 1)
        open_page(browser, f"file://{written.path}#i={team}")
        for i in (team, adversary):
            if i != team:
                browser.find_element("id", f"in-{i}").click()
            wait_text(browser, "infoset", f"Infoset {i} ")
            state = tree.state(int(tree.infoset_history[i]))
            wants = [want_tables(game, state, named.policy) for named in explorer.policies]
            if i == team:
                assert_tables(wants[0], solver.agent_action_probabilities(state), 1e-6)
            tables = browser.find_elements("css selector", "table.agent")
            assert len(tables) == len(wants[0])
            for agent, table in enumerate(tables):
                for k, want in enumerate(wants):
                    cells = table.find_elements("css selector", f'td.prob[data-policy="{k}"]')
                    shown = {int(td.get_attribute("data-action")): float(td.text) for td in cells}
                    assert_tables([shown], [want[agent]], 1e-6)  # the page's 6 decimals
        assert console_errors(browser) == []
    finally:
        written.remove()
