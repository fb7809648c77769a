"""The strategy explorer (`openspiel_cfrx.explore`, `cfrx-explore`) on flop
hold'em: the per-node best-response gains sum to the exact NashConv, the
page's numbers are the policy's, bad inputs give one line; and the page
itself in headless Chromium (marker `browser`, skipped when /usr/bin/chromium
or /usr/bin/chromedriver or selenium is missing) for a policy compared with
uniform, the committed DCFR solve (tests/data/README.md) and a Deep CFR
policy file. Kuhn, Leduc and team games: tests/test_explore_games.py."""

from __future__ import annotations

import csv
import os
import sys
import threading

import example_runner  # tests/ is on sys.path
import numpy as np
import pyspiel
import pytest
import torch
from explore_browser import PageFile, console_errors, open_page, wait_node

from openspiel_cfrx.explore import ExploreError, Explorer, load_policy
from openspiel_cfrx.explore.server import make_server
from openspiel_cfrx.poker import PublicTree, VectorCFR, poker_nash_conv
from openspiel_cfrx.poker.public_tree import PublicTreePolicy
from openspiel_cfrx.poker.vector_cfr import load_strategy, save_strategy

GAME = "flop_holdem(num_ranks=4,num_suits=2)"
TINY = "flop_holdem(num_ranks=7,num_suits=1,max_raises=0 1)"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")
HASH = "explore_policies:hash_policy"
SOLVE = os.path.join(TESTS, "data", "fhp_4x2_dcfr_3000.npz")  # 3,000 DCFR iterations (tests/data/README.md)
SOLVE_MBB = 0.02  # its exploitability, 0.016 mbb/g when written: a well-converged solve


@pytest.fixture(scope="module")
def game():
    return pyspiel.load_game(GAME)


@pytest.fixture(scope="module")
def files(game, tmp_path_factory):
    """A VectorCFR strategy (20 CFR+ iterations, suit-isomorphic tree), and a Deep CFR policy file and
    full checkpoint (the same solver)."""
    from deep_cfr_settings import SMALL

    from openspiel_cfrx.deep import DeepCFRSolver

    folder = tmp_path_factory.mktemp("explore")
    tree = PublicTree(game)
    solver = VectorCFR(tree, "cfr+", verbose=False)
    solver.run(20, progress=False)
    strategy = str(folder / "strategy.npz")
    save_strategy(strategy, tree, solver.average_strategy)
    torch.set_num_threads(1)
    deep = DeepCFRSolver(game, seed=1, **{**SMALL, "num_iterations": 1})
    deep.solve()
    policy_file, checkpoint = str(folder / "policy.pt"), str(folder / "checkpoint.pt")
    deep.save_policy(policy_file)
    deep.save_checkpoint(checkpoint)
    return {"strategy": strategy, "deep": policy_file, "checkpoint": checkpoint}


def _spec(name, files):
    return {**files, "solve": SOLVE}.get(name, name)


def _openspiel_policy(game, named):
    """The OpenSpiel policy `named` plays: its own, or a strategy file's through `PublicTreePolicy`."""
    if named.policy is not None:
        return named.policy
    tree = PublicTree(game, isomorphism=named.file_isomorphism)
    return PublicTreePolicy(game, tree, load_strategy(named.strategy_file, tree))


# ----------------------------------------------------------- the library


@pytest.mark.parametrize("name", ["uniform", HASH, "strategy", "deep", "checkpoint", "solve"])
def test_node_gains_sum_to_the_exact_nash_conv(game, files, name):
    named = load_policy(game, _spec(name, files))
    explorer = Explorer(game, [named])
    analysis = explorer.analyses[0]
    exact = poker_nash_conv(game, _openspiel_policy(game, named))  # strategy files: read per infoset by lookup
    if named.policy is None:  # a strategy file saved on the isomorphic tree is shown on it
        assert explorer.tree.isomorphism
    if name == "solve":
        assert explorer.rules.mbb_per_game(exact / 2) < SOLVE_MBB  # exploitability = NashConv / 2
    assert analysis.node_gain.sum() == pytest.approx(exact, abs=1e-9)
    assert analysis.nash_conv == pytest.approx(exact, abs=1e-9)
    for q in (0, 1):  # each player's nodes: its best-response value minus its on-policy value
        mine = [n for n in explorer.decisions if explorer.tree.nodes[n].player == q]
        assert analysis.node_gain[mine].sum() == pytest.approx(analysis.gains_by_player[q], abs=1e-9)
    weights = explorer.board_weights
    for n in explorer.decisions:  # per-board gains add up to the node's (classes by their multiplicity)
        w = weights if explorer.tree.nodes[n].round else np.ones(1)
        assert analysis.board_gain[n] @ w == pytest.approx(analysis.node_gain[n], abs=1e-12)
    assert (analysis.node_gain >= -1e-12).all()


def test_an_isomorphic_strategy_file_compared_with_an_asymmetric_policy_keeps_its_nash_conv(game, files):
    alone = Explorer(game, [load_policy(game, files["strategy"])])
    both = Explorer(game, [load_policy(game, files["strategy"]), load_policy(game, HASH)])
    assert alone.tree.isomorphism and not both.tree.isomorphism
    assert both.analyses[0].nash_conv == pytest.approx(alone.analyses[0].nash_conv, abs=1e-9)
    assert both.analyses[0].node_gain.sum() == pytest.approx(alone.analyses[0].node_gain.sum(), abs=1e-9)


def _state(game, tree, n, hole, board):
    """A real state at decision node n where the acting player holds `hole`, and
    the (state, action) pairs of the way there."""
    node, cards = tree.nodes[n], tree.deck.num_cards
    other = [c for c in range(cards) if c not in set(hole) | set(board)][:2]
    state = game.new_initial_state()
    for c in (list(hole) + other if node.player == 0 else other + list(hole)):
        state.apply_action(c)
    board, path = iter(board), []
    for action in node.actions:
        while state.is_chance_node():
            state.apply_action(next(board))
        path.append((state.clone(), action))
        state.apply_action(action)
    while state.is_chance_node():
        state.apply_action(next(board))
    return state, path


def _expected(game, tree, policy, n, hand, board):
    """(action probabilities over the node's legal actions, own reach) read from `policy` on real states."""
    hole = [int(c) for c in tree.deck.hand_cards[hand]]
    state, path = _state(game, tree, n, hole, [int(c) for c in board])
    q = tree.nodes[n].player
    assert state.current_player() == q and state.legal_actions() == list(tree.nodes[n].legal)
    probs = policy.action_probabilities(state)
    reach = np.prod([policy.action_probabilities(s)[a] for s, a in path if s.current_player() == q])
    return [probs[a] for a in tree.nodes[n].legal], reach


def test_board_views_are_the_policys_action_probabilities_and_own_reach(game):
    named = load_policy(game, HASH)
    explorer = Explorer(game, [named])
    tree, rng = explorer.tree, np.random.default_rng(0)
    for _ in range(6):
        n = int(rng.choice(explorer.decisions))
        board = None if tree.nodes[n].round == 0 else int(rng.integers(len(tree.first_boards)))
        view = explorer.board_view(board)[0][n]
        free = explorer.free_hands(board)
        k = int(rng.integers(len(free)))
        cards = () if board is None else tree.first_boards[board]
        probs, reach = _expected(game, tree, named.policy, n, free[k], cards)
        np.testing.assert_allclose(view[0][k], probs, atol=1e-12)
        assert view[1][k] == pytest.approx(reach, abs=1e-12)


@pytest.mark.parametrize("spec, message", [
    ("", "empty policy name"),
    ("nosuch", "neither uniform, an existing file"),
    ("explore_policies:missing", "has no function missing"),
    ("no_such_module_xyz:f", "cannot import no_such_module_xyz"),
    ("explore_policies:not_a_policy", "returned a int, not an OpenSpiel policy"),
    (__file__, "neither a Deep CFR or CFR-MIX checkpoint, a VectorCFR strategy file nor a tabular"),
    (TESTS, "not a regular file"),
])  # fmt: skip
def test_bad_policies_are_one_line_errors(game, spec, message):
    with pytest.raises(ExploreError, match=message) as info:
        load_policy(game, spec)
    assert "\n" not in str(info.value)


def test_other_games_and_a_mismatched_strategy_file_are_one_line_errors(game, files):
    with pytest.raises(ExploreError, match="kuhn_poker.* is not a flop hold'em game"):
        Explorer(pyspiel.load_game("kuhn_poker"), [])
    tiny = pyspiel.load_game(TINY)
    with pytest.raises(ExploreError, match="strategy file .* has rules="):
        Explorer(tiny, [load_policy(tiny, files["strategy"])])
    with pytest.raises(ExploreError, match="one policy or compares two"):
        Explorer(game, [load_policy(game, "uniform")] * 3)


def _program(tmp_path, *args):
    script = os.path.join(ROOT, "cfrx_examples", "explore.py")
    return example_runner.run([sys.executable, script, *args], cwd=TESTS, timeout=300)


def test_the_program_writes_a_page_and_refuses_bad_input_in_one_line(tmp_path, files):
    out = tmp_path / "page.html"
    run = _program(tmp_path, f"--game={GAME}", f"--policy={files['deep']}", f"--compare={files['strategy']}",
                   f"--output={out}")  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert "wrote" in run.stdout and "every board embedded" in run.stdout
    text = out.read_text(encoding="utf-8")
    assert "<script" in text and "http://" not in text and "https://" not in text  # nothing from the network
    page = f"--output={tmp_path / 'x.html'}"
    for args, message in [(["--game=tiny_hanabi", page], "reads flop hold'em variants"),
                          (["--policy=nosuch", page], "neither uniform"),
                          ([f"--output={tmp_path}"], "is a directory"),
                          (["--port=70000", page], "--port must be in 0..65535")]:  # fmt: skip
        run = _program(tmp_path, *args)
        lines = [line for line in run.stderr.splitlines() if line.strip()]
        assert run.returncode != 0 and len(lines) == 1 and message in lines[0], run.stderr


# ----------------------------------------------------------- the browser


@pytest.fixture(scope="module", params=["compare", "solve", "checkpoint"])
def page(request, game, files):
    """(explorer, path, OpenSpiel policies) of an embedded page: the hash policy (A)
    compared with uniform (B), the committed DCFR solve, or the Deep CFR checkpoint."""
    specs = {"compare": [HASH, "uniform"], "solve": [SOLVE], "checkpoint": [files["checkpoint"]]}[request.param]
    explorer = Explorer(game, [load_policy(game, spec) for spec in specs], game_name=GAME)
    written = PageFile(explorer)
    yield explorer, written.path, [_openspiel_policy(game, named) for named in explorer.policies]
    written.remove()


@pytest.mark.browser
def test_the_page_renders_without_console_errors_and_its_gains_sum_to_the_nash_conv(browser, page, game):
    explorer, path, policies = page
    open_page(browser, f"file://{path}")
    wait_node(browser, 0)
    assert console_errors(browser) == []
    assert browser.find_elements("css selector", "table.grid")  # the preflop grids (of A, B and B - A)
    for i, policy in enumerate(policies):
        shown = [float(e.get_attribute("data-gain"))
                 for e in browser.find_elements("css selector", f'#tree span.gain[data-policy="{i}"]')]  # fmt: skip
        assert len(shown) == len(explorer.decisions)
        exact = poker_nash_conv(game, policy)
        assert sum(shown) == pytest.approx(exact, rel=1e-10, abs=1e-12)
        assert float(browser.find_element("id", f"gainsum-{i}").text) == pytest.approx(exact, rel=1e-10, abs=1e-12)


@pytest.mark.browser
def test_clicking_a_path_of_actions_shows_that_node(browser, page):
    explorer, path, _ = page
    tree = explorer.tree
    open_page(browser, f"file://{path}")
    n = 0
    for name, action in (("call", 1), ("check", 1), ("bet", 2), ("raise", 2)):
        browser.find_element("css selector", f'button.act[data-action="{name}"]').click()
        n = tree.nodes[n].children[tree.nodes[n].legal.index(action)]
        if tree.nodes[n].kind == "deal":
            n = tree.nodes[n].children[0]
        wait_node(browser, n)
    assert tree.nodes[n].actions == (1, 1, 2, 2) and tree.nodes[n].round == 1
    assert browser.execute_script("return location.hash") == f"#n={n}&b=0"
    assert "current" in browser.find_element("id", f"tn-{n}").get_attribute("class")
    crumbs = [a.text for a in browser.find_elements("css selector", "#path a")]
    assert crumbs == ["start", "call", "check · flop", "bet", "raise"]
    assert console_errors(browser) == []


@pytest.mark.browser
@pytest.mark.parametrize("round_", [0, 1])
def test_a_cells_numbers_are_the_policys_action_probabilities_on_real_states(browser, page, game, round_):
    explorer, path, policies = page
    tree = explorer.tree
    n = next(m for m in explorer.decisions if tree.nodes[m].round == round_ and len(tree.nodes[m].actions) >= 2)
    board = 7 if round_ else 0
    open_page(browser, f"file://{path}#n={n}&b={board}")
    wait_node(browser, n)
    cell = browser.find_elements("css selector", 'table.grid[data-policy="0"] td[data-cell]:not(.empty)')[1]
    cell.click()
    rows = browser.find_elements("css selector", "#detail-table tr.combo")
    assert rows and len(rows) == int(cell.find_element("css selector", ".num").text)
    cards = tree.first_boards[board] if round_ else ()
    for row in rows:
        hand = int(row.get_attribute("data-hand"))
        probs, reach = _expected(game, tree, policies[0], n, hand, cards)
        shown = [float(td.text) for td in row.find_elements("css selector", "td.prob")]
        np.testing.assert_allclose(shown, probs, atol=1e-6)  # the page's 6 decimals
        assert float(row.find_element("css selector", "td.reach").text) == pytest.approx(reach, rel=1e-5, abs=1e-6)
    assert console_errors(browser) == []


@pytest.mark.browser
def test_a_large_games_boards_come_from_the_server(browser, game):
    explorer = Explorer(game, [load_policy(game, HASH)], max_embed_bytes=0, game_name=GAME)
    assert not explorer.embedded
    server = make_server(explorer, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        tree = explorer.tree
        n = next(m for m in explorer.decisions if tree.nodes[m].round == 1)
        open_page(browser, f"http://127.0.0.1:{server.server_address[1]}/#n={n}&b=11")
        wait_node(browser, n)
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(browser, 30).until(lambda d: d.find_elements("css selector", "table.grid td[data-cell]"))
        browser.find_elements("css selector", "table.grid td[data-cell]:not(.empty)")[0].click()
        row = browser.find_element("css selector", "#detail-table tr.combo")
        hand = int(row.get_attribute("data-hand"))
        probs, _ = _expected(game, tree, explorer.policies[0].policy, n, hand, tree.first_boards[11])
        np.testing.assert_allclose([float(td.text) for td in row.find_elements("css selector", "td.prob")], probs,
                                   atol=1e-6)  # fmt: skip
        assert console_errors(browser) == []
    finally:
        server.shutdown()
        server.server_close()


def test_an_idle_connection_does_not_hold_up_the_next_request(game):
    """A browser opens connections ahead of need (Chromium's preconnect) and may leave one idle; the next
    request is answered at once (a one-connection-at-a-time server waited for the idle one: ~90 s)."""
    import socket
    import urllib.request

    explorer = Explorer(game, [load_policy(game, HASH)], max_embed_bytes=0, game_name=GAME)
    server = make_server(explorer, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    idle = socket.create_connection(("127.0.0.1", server.server_address[1]))  # connected, sends nothing
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_address[1]}/board/0.json", timeout=10) as reply:
            assert reply.status == 200 and reply.read(1) == b"{"
    finally:
        idle.close()
        server.shutdown()
        server.server_close()


def test_the_vector_cfr_example_saves_a_strategy_the_explorer_reads(tmp_path):
    strategy = tmp_path / "tiny.npz"
    run = example_runner.run([sys.executable, os.path.join(ROOT, "cfrx_examples", "poker_vector_cfr.py"), f"--game={TINY}",
                              "--iterations=3", f"--output_dir={tmp_path / 'out'}", f"--save_strategy={strategy}"],
                             cwd=TESTS, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    with open(tmp_path / "out" / "curve.csv", newline="") as f:
        last = list(csv.DictReader(f))[-1]
    game = pyspiel.load_game(TINY)
    explorer = Explorer(game, [load_policy(game, str(strategy))])
    assert int(last["iteration"]) == 3
    assert explorer.analyses[0].nash_conv == pytest.approx(float(last["nash_conv"]), rel=1e-5)  # float32 in the file


def test_a_deep_cfr_checkpoint_and_its_policy_file_are_the_same_policy(game, files):
    """The explorer reads a full Deep CFR checkpoint as the policy its policy file holds."""
    from_checkpoint, from_file = (load_policy(game, files[k]).policy for k in ("checkpoint", "deep"))
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    assert from_checkpoint.action_probabilities(state) == pytest.approx(from_file.action_probabilities(state), abs=1e-12)
    assert poker_nash_conv(game, from_checkpoint) == pytest.approx(poker_nash_conv(game, from_file), abs=1e-9)
