"""NEST pursuit-evasion: moves, capture, exits, timeout, observations, pyspiel checks."""

import random

import numpy as np
import pyspiel
import pytest
from open_spiel.python.observation import make_observation

import games  # noqa: F401  (registers team_goofspiel, nest)
from openspiel_cfrx import team

TEAM, EVADER = team.TEAM_PLAYER, team.ADVERSARY_PLAYER
STAY, UP, LEFT, RIGHT, DOWN = range(5)
# 3x3 grid:  0 1 2 / 3 4 5 / 6 7 8, default exits = corners 0 2 6 8.
GRID = "nest(rows=3,cols=3,num_pursuers=2,pursuer_starts={p},evader_start={e}{extra})"


def grid(p, e, extra=""):
    return pyspiel.load_game(GRID.format(p=p, e=e, extra=extra))


def step(state, pursuer_moves, evader_move):
    state.apply_action(state.encode_joint_action(pursuer_moves))
    state.apply_action(evader_move)


def test_defaults_and_grid_moves():
    game = pyspiel.load_game("nest")
    assert game.exits() == (0, 2, 6, 8)
    assert game.horizon() == 4  # grid diameter rows + cols - 2
    assert game.agent_num_actions() == (5, 5)
    state = grid("0;8", 4).new_initial_state()
    assert state.current_player() == TEAM
    assert state.legal_agent_actions(0) == [STAY, RIGHT, DOWN]  # corner 0
    assert state.legal_agent_actions(1) == [STAY, UP, LEFT]  # corner 8
    assert len(state.legal_actions()) == 9
    step(state, [RIGHT, UP], LEFT)
    assert state.pursuer_nodes() == (1, 5) and state.evader_node() == 3
    assert state.outcome() == "running"
    assert state.current_player() == TEAM
    with pytest.raises(ValueError, match="pursuer 0 at node 1 has no move in slot 1"):
        state.apply_action(state.encode_joint_action([UP, STAY]))
    state.apply_action(state.encode_joint_action([STAY, STAY]))
    assert state.legal_actions() == [STAY, UP, RIGHT, DOWN]  # evader on the left edge
    with pytest.raises(ValueError, match="illegal evader action 2"):
        state.apply_action(LEFT)


def test_capture_on_same_node():
    state = grid("0;8", 4).new_initial_state()
    step(state, [RIGHT, STAY], UP)  # both arrive at node 1
    assert state.outcome() == "capture" and state.returns() == [1.0, -1.0]


@pytest.mark.parametrize("capture_on_swap, outcome", [(True, "capture"), (False, "running")])
def test_swap_through_an_edge(capture_on_swap, outcome):
    game = grid("1;8", 4, f",capture_on_swap={str(capture_on_swap).lower()}")
    state = game.new_initial_state()
    step(state, [DOWN, STAY], UP)  # pursuer 1->4 while the evader goes 4->1
    assert state.outcome() == outcome
    if not capture_on_swap:
        assert state.evader_node() == 1 and state.pursuer_nodes() == (4, 8)
        assert state.returns() == [0.0, 0.0]


def test_escape_and_exit_contested_is_capture():
    state = grid("7;5", 4).new_initial_state()
    step(state, [STAY, STAY], UP)
    step(state, [STAY, STAY], LEFT)  # reaches exit 0
    assert state.outcome() == "escape" and state.returns() == [0.0, 0.0]
    state = grid("3;5", 4).new_initial_state()
    step(state, [STAY, STAY], UP)
    step(state, [UP, STAY], LEFT)  # pursuer 3->0 as the evader reaches exit 0
    assert state.outcome() == "capture" and state.returns() == [1.0, -1.0]


def test_timeout():
    state = grid("0;8", 4, ",horizon=2").new_initial_state()
    step(state, [STAY, STAY], STAY)
    assert not state.is_terminal()
    step(state, [STAY, STAY], STAY)
    assert state.outcome() == "timeout" and state.returns() == [1.0, -1.0]
    assert state.is_terminal() and state.legal_actions() == []


def test_evader_may_not_stay():
    state = grid("0;8", 4, ",evader_can_stay=false").new_initial_state()
    state.apply_action(state.encode_joint_action([STAY, STAY]))
    assert state.legal_actions() == [UP, LEFT, RIGHT, DOWN]
    with pytest.raises(ValueError, match="illegal evader action 0"):
        state.apply_action(STAY)


def test_observations_of_each_side():
    game = grid("0;8", 4)
    a, b = game.new_initial_state(), game.new_initial_state()
    step(a, [RIGHT, UP], LEFT)
    step(b, [DOWN, LEFT], LEFT)
    # The evader knows its own path and the pursuers' starts only.
    assert a.information_state_string(EVADER) == b.information_state_string(EVADER)
    assert a.information_state_tensor(EVADER) == b.information_state_tensor(EVADER)
    assert a.information_state_string(EVADER) == "P1 evader\nevader: 4 3\npursuers: 0/8"
    # The team tracks the evader and its own moves.
    assert a.information_state_string(TEAM) == "P0 team\nevader: 4 3\npursuers: 0/8 1/5"
    assert a.information_state_string(TEAM) != b.information_state_string(TEAM)
    # Mid-step the team has not yet seen the evader's reply.
    c, d = game.new_initial_state(), game.new_initial_state()
    step(c, [STAY, STAY], UP)
    step(d, [STAY, STAY], DOWN)
    assert c.information_state_string(TEAM) != d.information_state_string(TEAM)
    c.apply_action(c.encode_joint_action([RIGHT, STAY]))
    assert c.information_state_string(TEAM).endswith("pursuers: 0/8 0/8")
    # Tensors: the evader's pursuer rows after the start are blank.
    obs = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    obs.set_from(a, EVADER)
    assert obs.dict["pursuer_path"][1:].sum() == 0
    assert obs.dict["pursuer_path"][0, 0, 0] == 1 and obs.dict["pursuer_path"][0, 1, 8] == 1
    assert obs.dict["evader_path"][1, 3] == 1 and obs.dict["step"][1] == 1
    obs.set_from(a, TEAM)
    assert obs.dict["pursuer_path"][1, 0, 1] == 1 and obs.dict["pursuer_path"][1, 1, 5] == 1
    current = make_observation(game, pyspiel.IIGObservationType(perfect_recall=False))
    current.set_from(a, EVADER)
    np.testing.assert_array_equal(np.nonzero(current.dict["pursuer_nodes"])[1], [0, 8])
    current.set_from(a, TEAM)
    np.testing.assert_array_equal(np.nonzero(current.dict["pursuer_nodes"])[1], [1, 5])
    # Per-agent features: one-hot pursuer, own node, legal-slot mask.
    features = a.agent_observation_tensor(1)
    assert len(features) == game.agent_observation_size() == 2 + 9 + 5
    assert features[:2] == [0.0, 1.0]
    assert features[2 + 5] == 1.0 and sum(features[2:11]) == 1.0
    assert features[11:] == [1.0, 1.0, 1.0, 0.0, 1.0]  # node 5: no right


def test_random_starts_by_chance():
    game = pyspiel.load_game("nest(rows=3,cols=3,num_pursuers=2)")
    state = game.new_initial_state()
    assert state.chance_outcomes() == [(v, 0.2) for v in (1, 3, 4, 5, 7)]  # non-exits
    state.apply_action(4)
    assert [v for v, _ in state.chance_outcomes()] == [0, 1, 2, 3, 5, 6, 7, 8]
    state.apply_action(0)
    state.apply_action(0)  # pursuers may share a node
    assert state.current_player() == TEAM and state.pursuer_nodes() == (0, 0)
    assert state.information_state_string(EVADER) == "P1 evader\nevader: 4\npursuers: 0/0"
    fixed = pyspiel.load_game("nest(rows=3,cols=3,num_pursuers=2,pursuer_starts=1;3)")
    assert [v for v, _ in fixed.new_initial_state().chance_outcomes()] == [4, 5, 7]


def test_edge_list_graph():
    game = pyspiel.load_game(
        "nest(edges=0-1;1-2;1-3,num_pursuers=1,exits=2;3,pursuer_starts=0;,evader_start=1)"
    )
    assert game.agent_num_actions() == (4,)  # stay + up to 3 neighbours
    assert game.horizon() == 2  # diameter
    state = game.new_initial_state()
    assert state.legal_agent_actions(0) == [0, 1]  # node 0: stay, go to 1
    assert state.action_to_string(TEAM, 1) == "Move[p0:n1]"
    state.apply_action(0)
    assert state.legal_actions() == [0, 1, 2, 3]  # node 1: stay, 0, 2, 3
    state.apply_action(3)
    assert state.outcome() == "escape"


def test_game_string_round_trips_with_one_element_lists():
    game = pyspiel.load_game(
        "nest", {"edges": "0-1;1-2", "exits": "2", "pursuer_starts": "0", "num_pursuers": 1}
    )
    assert "exits=2;" in str(game) and "pursuer_starts=0;" in str(game)
    again = pyspiel.load_game(str(game))
    assert str(again) == str(game) and again.exits() == (2,)


@pytest.mark.parametrize(
    "params, message",
    [
        ("exits=0;9", "exits node 9 is outside"),
        ("evader_start=0", "is an exit"),
        # One-element lists need a trailing ';' or pyspiel parses an int.
        ("pursuer_starts=1;", "pursuer_starts has 1 nodes for 2 pursuers"),
        ("pursuer_starts=1;4,evader_start=4", "also a pursuer start"),
        ("edges=0-1;1", "is not 'u-v'"),
        ("edges=0-1;1-2", "no default exits"),
        ("horizon=0", "horizon=0 must be >= 1"),
        ("exits=a;b", "not a list of integers"),
        ("rows=1,cols=1", "at least 2 nodes"),
        ("num_pursuers=0", "num_pursuers=0"),
    ],
)
def test_parameter_validation(params, message):
    with pytest.raises(ValueError, match=message):
        pyspiel.load_game(f"nest({params})")


@pytest.mark.parametrize(
    "name, playouts",
    [
        ("nest(rows=3,cols=3,num_pursuers=2)", 20),  # paper instances (default exits/horizon)
        ("nest(rows=5,cols=5,num_pursuers=4)", 10),
        ("nest(rows=15,cols=15,num_pursuers=4)", 3),
        ("nest(rows=15,cols=15,num_pursuers=8)", 2),  # 5^8 joint moves: factored only
    ],
)
def test_random_playouts_legality_and_tensor_shapes(name, playouts):
    game = pyspiel.load_game(name)
    info_size = game.information_state_tensor_size()
    obs_size = game.observation_tensor_size()
    rng = random.Random(1)
    for _ in range(playouts):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
                continue
            assert len(state.information_state_tensor(TEAM)) == info_size
            assert len(state.observation_tensor(EVADER)) == obs_size
            for player in (TEAM, EVADER):  # the fast numpy copy CFR-MIX uses
                np.testing.assert_array_equal(state.information_state_array(player),
                                              np.asarray(state.information_state_tensor(player), np.float32))
            if state.current_player() == TEAM:
                before = state.pursuer_nodes()
                state.apply_action(team.sample_uniform_joint_action(state, rng))
                # Every pursuer moved along an edge or stayed.
                for node, new_node in zip(before, state._s.pending, strict=True):
                    assert new_node in game._cfg.slots[node]
            else:
                before = state.evader_node()
                state.apply_action(rng.choice(state.legal_actions()))
                assert state._s.evader_path[-1] in game._cfg.slots[before]
        assert state.returns() in ([1.0, -1.0], [0.0, 0.0])
        assert len(state.history()) <= game.max_game_length()
        for player in (TEAM, EVADER):
            np.testing.assert_array_equal(state.information_state_array(player),
                                          np.asarray(state.information_state_tensor(player), np.float32))


def test_serialization_round_trip():
    game = pyspiel.load_game("nest(rows=3,cols=3,num_pursuers=2)")
    state = game.new_initial_state()
    for action in [4, 0, 8, state.encode_joint_action([RIGHT, UP]), LEFT]:
        state.apply_action(action)
    game2, state2 = pyspiel.deserialize_game_and_state(
        pyspiel.serialize_game_and_state(game, state)
    )
    assert str(state2) == str(state) and state2.history() == state.history()
    assert state2.information_state_string(TEAM) == state.information_state_string(TEAM)
    assert state2.legal_agent_actions(0) == state.legal_agent_actions(0)


def _compact_reference(game, state, player):
    """CompactLayout features written out piece by piece from the history."""
    cfg = game._cfg
    n, m, t = cfg.num_nodes, cfg.num_pursuers, cfg.horizon
    evader, pursuers = list(state._s.evader_path), [list(p) for p in state._s.pursuer_path]
    step = len(evader) - 1
    pieces = {name: np.zeros(size, np.float32) for name, size in [
        ("player", 2), ("step", t + 1), ("time", 2), ("evader", n), ("previous", n), ("start", n),
        ("visited", n), ("pursuers", m * n), ("pursuer_starts", m * n)]}  # fmt: skip
    pieces["player"][player] = 1
    pieces["step"][step] = 1
    pieces["time"][:] = [step / t, (t - step) / t]
    pieces["evader"][evader[-1]] = 1
    if step >= 1:
        pieces["previous"][evader[-2]] = 1
    pieces["start"][evader[0]] = 1
    for node in evader:
        pieces["visited"][node] = 1
    for agent in range(m):
        pieces["pursuer_starts"][agent * n + pursuers[0][agent]] = 1
        if player == TEAM:
            pieces["pursuers"][agent * n + pursuers[-1][agent]] = 1
    out = list(pieces.values())
    if cfg.is_grid:
        def xy(node):
            return [(node // cfg.cols) / max(cfg.rows - 1, 1), (node % cfg.cols) / max(cfg.cols - 1, 1)]
        e = xy(evader[-1])
        own = [xy(p) if player == TEAM else [0.0, 0.0] for p in pursuers[-1]]
        offset = [[a - b for a, b in zip(p, e, strict=True)] if player == TEAM else [0.0, 0.0] for p in own]
        out.append(np.asarray(e + sum(own, []) + sum(offset, []), np.float32))
    out.append(np.asarray(_escape_reference(cfg, evader[-1]), np.float32))
    return np.concatenate(out)


def _distances_from(cfg, source):
    """Plain BFS over the slot table: {node: moves from source}."""
    dist, frontier = {source: 0}, [source]
    while frontier:
        nxt = []
        for node in frontier:
            for target in cfg.slots[node][1:]:
                if target >= 0 and target not in dist:
                    dist[target] = dist[node] + 1
                    nxt.append(target)
        frontier = nxt
    return dist


def _diameter_of(cfg):
    return max(max(_distances_from(cfg, v).values()) for v in range(cfg.num_nodes))


def _escape_reference(cfg, node):
    """[1 + A]: d(node, nearest exit) / D, per slot the change of it (0 if illegal)."""
    scale = max(1, _diameter_of(cfg))

    def to_exit(v):
        return min(_distances_from(cfg, v).get(x, cfg.num_nodes) for x in cfg.exits)

    return [to_exit(node) / scale] + [to_exit(t) - to_exit(node) if t >= 0 else 0 for t in cfg.slots[node]]


def _agent_reference(cfg, pursuers, evader):
    """[M, F_a] compact agent features written out from distances."""
    m, n, a = cfg.num_pursuers, cfg.num_nodes, cfg.num_slots
    scale = max(1, _diameter_of(cfg))
    d = {v: _distances_from(cfg, v) for v in range(n)}

    def dist(u, v):
        return d[u].get(v, n)

    exits = sorted(cfg.exits, key=lambda x: (dist(evader, x), x))[:4]
    rows = []
    for agent, me in enumerate(pursuers):
        row = [0.0] * (m + n + a)
        row[agent] = 1.0
        row[m + me] = 1.0
        slots = cfg.slots[me]
        for k, t in enumerate(slots):
            row[m + n + k] = float(t >= 0)
        row += [dist(me, evader) / scale] + [dist(t, evader) - dist(me, evader) if t >= 0 else 0 for t in slots]
        for x in exits:
            row += [(dist(me, x) - dist(evader, x)) / scale]
            row += [dist(t, x) - dist(me, x) if t >= 0 else 0 for t in slots]
        rows.append(row)
    return np.asarray(rows, np.float32)


@pytest.mark.parametrize("name", ["nest(rows=3,cols=4,num_pursuers=2)", "nest(rows=5,cols=5,num_pursuers=3)",
                                  "nest(edges=0-1;1-2;2-3;1-3;3-4,num_pursuers=2,exits=0;4,horizon=3)"])
def test_compact_information_state_matches_a_reference_from_the_history(name):
    game = pyspiel.load_game(name)
    size = game.compact_information_state_size()
    rng = random.Random(3)
    for _ in range(30):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                assert state.compact_information_state_array(TEAM).shape == (size,)
                state.apply_action(rng.choice(state.chance_outcomes())[0])
                continue
            for player in (TEAM, EVADER):
                x = state.compact_information_state_array(player)
                assert x.shape == (size,) and x.dtype == np.float32
                np.testing.assert_allclose(x, _compact_reference(game, state, player), rtol=0, atol=1e-6)
            if state.current_player() == TEAM:
                xa = state.compact_agent_features()
                assert xa.shape == (game._cfg.num_pursuers, game.compact_agent_feature_size())
                reference = _agent_reference(game._cfg, state._s.pursuer_path[-1], state._s.evader_path[-1])
                np.testing.assert_allclose(xa, reference, rtol=0, atol=1e-6)
                # The agent observation is its prefix.
                np.testing.assert_array_equal(xa[1, : game.agent_observation_size()],
                                              state.agent_observation_tensor(1))  # fmt: skip
                state.apply_action(team.sample_uniform_joint_action(state, rng))
            else:
                state.apply_action(rng.choice(state.legal_actions()))
    # The evader's compact input does not depend on the team's moves.
    a, b = game.new_initial_state(), None
    while a.is_chance_node():
        a.apply_action(a.chance_outcomes()[0][0])
    b = a.clone()
    a.apply_action(a.legal_actions()[0])
    b.apply_action(b.legal_actions()[-1])
    np.testing.assert_array_equal(a.compact_information_state_array(EVADER), b.compact_information_state_array(EVADER))
    assert size < game.information_state_tensor_size() or "edges" in name
    with pytest.raises(ValueError, match="team's decisions only"):
        b.compact_agent_features()


def test_compact_agent_features_without_the_pair_table_are_the_same():
    """Large graphs skip the [N, N, W] table and compute per call: same values."""
    from games.nest import CompactLayout

    game = pyspiel.load_game("nest(rows=4,cols=5,num_pursuers=3)")
    tabled = game._cfg.compact_layout
    direct = CompactLayout(game._cfg)
    direct.MAX_TABLE_FLOATS = 0
    rng = np.random.default_rng(0)
    pursuers, evader = rng.integers(0, 20, (50, 3)), rng.integers(0, 20, 50)
    assert direct.relative_table is None and tabled.relative_table is not None
    expected = tabled.agent_features(pursuers, evader)
    np.testing.assert_array_equal(direct.agent_features(pursuers, evader), expected)
    for i in range(50):
        np.testing.assert_array_equal(direct.state_agent_features(tuple(pursuers[i]), int(evader[i])), expected[i])
        np.testing.assert_array_equal(tabled.state_agent_features(tuple(pursuers[i]), int(evader[i])), expected[i])
