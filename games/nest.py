"""NEST: network pursuit-evasion, a team of pursuers against one evader.

NEtwork purSuiT game of Zhang et al. 2019 ("Optimal escape interdiction on
transportation networks", IJCAI) as used by Li et al. 2021, "CFR-MIX: Solving
Imperfect Information Extensive-Form Games with Combinatorial Action Space",
Section 5.2: pursuers carry tracking devices and see the evader in real time;
the evader tries to reach an exit within a step limit.

Rules implemented (see docs/team_games.md for defaults and paper instances):
  * Graph: a rows x cols grid with 4-neighbour edges (node = row * cols + col),
    or an explicit edge list (``edges=0-1;1-2``, nodes 0..max id).
  * Start: fixed (``evader_start``, ``pursuer_starts``) or drawn by chance
    nodes, evader first (uniform over non-exit nodes not occupied by a fixed
    pursuer), then each pursuer (uniform over nodes other than the evader's).
    Both sides observe the start.
  * Each step the team (player 0) moves every pursuer to a neighbour or keeps
    it in place (one joint action); then the evader (player 1) moves to a
    neighbour, or stays if ``evader_can_stay``, without seeing the team's move
    (a simultaneous move written sequentially).
  * After both moves: capture if a pursuer is on the evader's node, or (when
    ``capture_on_swap``, the default) a pursuer and the evader crossed the same
    edge in opposite directions; otherwise escape if the evader is on an exit;
    otherwise timeout after ``horizon`` steps.  Capture is checked first, so an
    exit a pursuer reaches at the same time is a capture.
  * Returns: capture or timeout +1 team / -1 evader; escape 0 / 0.
  * Information: the team sees its own positions and every past evader
    position (up to the end of the previous step); the evader sees its own
    path and the pursuers' start positions only.

Individual actions are neighbour *slots* (A = 5 on grids): 0 stay, 1 up, 2 left,
3 right, 4 down (the ones leaving the grid are illegal).  On edge-list graphs
slot 0 is stay and slots 1..deg are the neighbours in ascending node order,
A = 1 + max degree.  The team's action is the mixed-radix joint slot (pursuer 0
least significant), see `openspiel_cfrx.team`.
"""

from __future__ import annotations

import collections
from typing import NamedTuple

import numpy as np
import pyspiel

from games import _team
from openspiel_cfrx import team as team_protocol

_NUM_PLAYERS = 2
_TEAM = team_protocol.TEAM_PLAYER
_EVADER = team_protocol.ADVERSARY_PLAYER
_GRID_SLOT_NAMES = ("stay", "up", "left", "right", "down")

_DEFAULT_PARAMS = {
    "rows": 3,
    "cols": 3,
    "edges": "",
    "num_pursuers": 2,
    "horizon": -1,
    "exits": "",
    "pursuer_starts": "",
    "evader_start": -1,
    "evader_can_stay": True,
    "capture_on_swap": True,
    "max_joint_actions": team_protocol.DEFAULT_MAX_ENUMERATED_JOINT_ACTIONS,
}

_GAME_TYPE = _team.team_game_type(
    "nest", "NEST network pursuit-evasion (pursuer team vs evader)", _DEFAULT_PARAMS
)

# Outcome codes.
_RUNNING, _CAPTURE, _ESCAPE, _TIMEOUT = 0, 1, 2, 3
_OUTCOME_NAMES = ("running", "capture", "escape", "timeout")


def default_grid_exits(rows: int, cols: int) -> tuple[int, ...]:
    """Default exits of a grid: its distinct corner nodes, ascending."""
    return tuple(sorted({0, cols - 1, (rows - 1) * cols, rows * cols - 1}))


def _grid_slots(rows, cols):
    """[N][5] neighbour slot table of a grid; -1 where the move leaves it."""
    slots = []
    for node in range(rows * cols):
        r, c = divmod(node, cols)
        slots.append(
            (
                node,
                node - cols if r > 0 else -1,
                node - 1 if c > 0 else -1,
                node + 1 if c < cols - 1 else -1,
                node + cols if r < rows - 1 else -1,
            )
        )
    return tuple(slots)


def _edge_list_slots(edges_text):
    """Edge list 'u-v;...' -> [N][1 + max degree] slot table."""
    neighbours = collections.defaultdict(set)
    pieces = [p for p in edges_text.replace(",", ";").replace(" ", ";").split(";") if p]
    for piece in pieces:
        try:
            u_text, v_text = piece.split("-")
            u, v = int(u_text), int(v_text)
        except ValueError:
            raise ValueError(
                f"nest: edge {piece!r} is not 'u-v'; write edges as 'u-v;u-v;...' "
                f"with non-negative integer node ids"
            ) from None
        if u < 0 or v < 0 or u == v:
            raise ValueError(f"nest: edge {piece!r} needs two distinct non-negative node ids")
        neighbours[u].add(v)
        neighbours[v].add(u)
    if not neighbours:
        raise ValueError("nest: edges is empty; give 'u-v;...' or leave it out to use the grid")
    num_nodes = max(neighbours) + 1
    width = 1 + max(len(n) for n in neighbours.values())
    slots = []
    for node in range(num_nodes):
        row = [node] + sorted(neighbours[node])
        slots.append(tuple(row + [-1] * (width - len(row))))
    return tuple(slots)


def _diameter(slots):
    """Longest shortest path (BFS from every node); unreachable pairs ignored."""
    best = 0
    for source in range(len(slots)):
        dist = {source: 0}
        frontier = collections.deque([source])
        while frontier:
            node = frontier.popleft()
            for nxt in slots[node][1:]:
                if nxt >= 0 and nxt not in dist:
                    dist[nxt] = dist[node] + 1
                    frontier.append(nxt)
        best = max(best, max(dist.values()))
    return best


def _bfs_distances(slots, sources, unreachable):
    """[len(sources), N] shortest path lengths (in moves) from each source."""
    n = len(slots)
    out = np.full((len(sources), n), unreachable, dtype=np.int32)
    for row, source in enumerate(sources):
        out[row, source] = 0
        frontier = collections.deque([source])
        while frontier:
            node = frontier.popleft()
            for nxt in slots[node][1:]:
                if nxt >= 0 and out[row, nxt] == unreachable:
                    out[row, nxt] = out[row, node] + 1
                    frontier.append(nxt)
    return out


class _Config(_team.FrozenConfig):
    """Validated parameters and lookup tables of one NEST instance."""

    def __init__(self, params):
        full = _team.full_params("nest", params, _DEFAULT_PARAMS)
        self._read_graph(full)
        self._read_team(full)
        self._read_exits(full)
        self._read_horizon(full)
        self._read_starts(full)
        self.agent_observation_size = self.num_pursuers + self.num_nodes + self.num_slots
        self.compact_layout = CompactLayout(self)

    def _read_graph(self, full):
        """The grid (rows x cols) or the edge list, as a neighbour slot table."""
        edges = str(full["edges"]).strip()
        self.is_grid = not edges
        if self.is_grid:
            self.rows, self.cols = int(full["rows"]), int(full["cols"])
            if self.rows < 1 or self.cols < 1 or self.rows * self.cols < 2:
                raise ValueError(
                    f"nest: grid {self.rows}x{self.cols} needs rows, cols >= 1 and at least 2 nodes"
                )
            self.slots = _grid_slots(self.rows, self.cols)
        else:
            self.rows, self.cols = 0, 0
            self.slots = _edge_list_slots(edges)
        self.num_nodes = len(self.slots)
        self.num_slots = len(self.slots[0])

    def _read_team(self, full):
        """The pursuers, their joint actions, and the movement rules."""
        self.num_pursuers = int(full["num_pursuers"])
        if self.num_pursuers < 1:
            raise ValueError(f"nest: num_pursuers={self.num_pursuers} must be >= 1")
        if self.num_slots**self.num_pursuers >= 2**63:
            raise ValueError(
                f"nest: {self.num_slots}**{self.num_pursuers} joint moves overflow "
                f"OpenSpiel's int64 action ids; use fewer pursuers"
            )
        self.radices = (self.num_slots,) * self.num_pursuers
        self.adversary_num_actions = self.num_slots  # the evader moves by slot, like a pursuer
        self.max_joint_actions = int(full["max_joint_actions"])
        if self.max_joint_actions < 1:
            raise ValueError(f"nest: max_joint_actions={self.max_joint_actions} must be >= 1")
        self.evader_can_stay = bool(full["evader_can_stay"])
        self.capture_on_swap = bool(full["capture_on_swap"])

    def _read_exits(self, full):
        """The exits: as given, or a grid's corners."""
        exits = _team.parse_int_list(str(full["exits"]), "exits")
        if not exits:
            if not self.is_grid:
                raise ValueError(
                    "nest: a graph given by edges has no default exits; pass "
                    "exits=a;b;... (node ids)"
                )
            exits = default_grid_exits(self.rows, self.cols)
        for node in exits:
            self._check_node(node, "exits")
        self.exits = tuple(sorted(set(exits)))
        self.exit_set = frozenset(self.exits)
        if len(self.exits) == self.num_nodes:
            raise ValueError("nest: every node is an exit; leave at least one non-exit node")

    def _read_horizon(self, full):
        horizon = int(full["horizon"])
        if horizon == -1:
            # Default: the graph's diameter, enough for the evader to reach any
            # exit it is connected to from any start (grid: rows + cols - 2).
            horizon = max(1, _diameter(self.slots))
        if horizon < 1:
            raise ValueError(f"nest: horizon={horizon} must be >= 1, or -1 for the diameter")
        self.horizon = horizon

    def _read_starts(self, full):
        """Fixed pursuer and evader starts, and the evader's start choices."""
        starts = _team.parse_int_list(str(full["pursuer_starts"]), "pursuer_starts")
        if starts and len(starts) != self.num_pursuers:
            raise ValueError(
                f"nest: pursuer_starts has {len(starts)} nodes for {self.num_pursuers} "
                f"pursuers; give one node per pursuer or leave it empty for random starts"
            )
        for node in starts:
            self._check_node(node, "pursuer_starts")
        self.pursuer_starts = starts
        self.evader_start = int(full["evader_start"])
        if self.evader_start != -1:
            self._check_node(self.evader_start, "evader_start")
            if self.evader_start in self.exit_set:
                raise ValueError(
                    f"nest: evader_start={self.evader_start} is an exit; the game "
                    f"would end before it starts"
                )
            if self.evader_start in starts:
                raise ValueError(
                    f"nest: evader_start={self.evader_start} is also a pursuer start; "
                    f"start them apart"
                )
        if not self.evader_can_stay:
            for node, row in enumerate(self.slots):
                if all(t < 0 for t in row[1:]):
                    raise ValueError(
                        f"nest: node {node} has no neighbour, so an evader that may "
                        f"not stay could not move there; allow evader_can_stay"
                    )
        self.evader_start_choices = tuple(
            v for v in range(self.num_nodes) if v not in self.exit_set and v not in starts
        )
        if not self.evader_start_choices:
            raise ValueError("nest: no node is free for the evader to start on")

    def _check_node(self, node, name):
        if not 0 <= node < len(self.slots):
            raise ValueError(f"nest: {name} node {node} is outside [0, {len(self.slots)})")


class _Progress(NamedTuple):
    """Everything that changes during a game; replaced, never mutated.

    OpenSpiel clones a Python state by deep-copying its attributes; one
    immutable record that deep-copies to itself makes `state.child(a)` cost a
    constructor call instead of a recursive copy of every tuple.
    """

    evader_path: tuple  # evader node at the start of each step so far, [steps + 1]
    pursuer_path: tuple  # pursuer nodes at the start of each step, [steps + 1][M]
    placing: tuple  # pursuer starts drawn so far while chance is placing them
    pending: tuple | None  # [M] nodes the team moved to this step, hidden from the evader
    outcome: int  # _RUNNING, _CAPTURE, _ESCAPE or _TIMEOUT

    def __deepcopy__(self, memo):
        return self


class NestGame(_team.TeamGameMixin, pyspiel.Game):
    """NEST; see the module docstring for the rules."""

    def __init__(self, params=None):
        self._cfg = _Config(params or {})
        cfg = self._cfg
        num_chance = (cfg.evader_start == -1) + (0 if cfg.pursuer_starts else cfg.num_pursuers)
        game_info = pyspiel.GameInfo(
            num_distinct_actions=cfg.num_slots**cfg.num_pursuers,
            max_chance_outcomes=cfg.num_nodes if num_chance else 0,
            num_players=_NUM_PLAYERS,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=num_chance + 2 * cfg.horizon,
        )
        # Canonical list strings, so that str(self) loads back (see format_int_list).
        canonical = dict(params or {})
        for name in ("exits", "pursuer_starts"):
            if name in canonical:
                canonical[name] = _team.format_int_list(
                    _team.parse_int_list(str(canonical[name]), name)
                )
        super().__init__(_GAME_TYPE, game_info, canonical)

    def team_worst_case(self, policy, **options):
        """Team worst case by the evader's path best response
        (`games.nest_worst_case.nest_team_worst_case`, default options; the
        `openspiel_cfrx.eval.team_best_response.team_worst_case` protocol)."""
        from games.nest_worst_case import nest_team_worst_case

        return nest_team_worst_case(self, policy, **options)

    def new_initial_state(self):
        return NestState(self)

    def __reduce__(self):
        # Pickles as its game string (pyspiel's own pickling of a Python game
        # skips __init__, leaving no _cfg): solvers holding the game pickle.
        return pyspiel.load_game, (str(self),)

    def make_py_observer(self, iig_obs_type=None, params=None):
        if params:
            raise ValueError(f"nest observers take no parameters; got {params}")
        return NestObserver(
            iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), self._cfg
        )

    def exits(self) -> tuple[int, ...]:
        """Exit nodes, ascending."""
        return self._cfg.exits

    def compact_information_state_size(self) -> int:
        """Length of `NestState.compact_information_state_array` (both players)."""
        return self._cfg.compact_layout.size

    def compact_agent_feature_size(self) -> int:
        """Length of each row of `NestState.compact_agent_features()`."""
        return self._cfg.compact_layout.agent_size

    def horizon(self) -> int:
        """Number of steps T before a timeout."""
        return self._cfg.horizon


class NestState(_team.TeamStateMixin, pyspiel.State):
    """State of NEST: node ids in ints and tuples, cheap to clone."""

    def __init__(self, game):
        super().__init__(game)
        cfg = game._cfg
        self._cfg = cfg
        self._s = _Progress(
            evader_path=() if cfg.evader_start == -1 else (cfg.evader_start,),
            pursuer_path=(cfg.pursuer_starts,) if cfg.pursuer_starts else (),
            placing=(),
            pending=None,
            outcome=_RUNNING,
        )

    # --- pyspiel API -----------------------------------------------------

    def current_player(self):
        if self._s.outcome != _RUNNING:
            return pyspiel.PlayerId.TERMINAL
        if not self._s.evader_path or not self._s.pursuer_path:
            return pyspiel.PlayerId.CHANCE
        return _TEAM if self._s.pending is None else _EVADER

    def is_terminal(self):
        return self._s.outcome != _RUNNING

    def _legal_actions(self, player):
        if player == _TEAM:
            return self._team_legal_joint_actions()
        row = self._cfg.slots[self._s.evader_path[-1]]
        first = 0 if self._cfg.evader_can_stay else 1
        return [k for k in range(first, len(row)) if row[k] >= 0]

    def chance_outcomes(self):
        cfg = self._cfg
        if not self._s.evader_path:
            choices = cfg.evader_start_choices
        else:
            evader = self._s.evader_path[0]
            choices = [v for v in range(cfg.num_nodes) if v != evader]
        prob = 1.0 / len(choices)
        return [(v, prob) for v in choices]

    def _apply_action(self, action):
        player = self.current_player()
        cfg = self._cfg
        if player == pyspiel.PlayerId.CHANCE:
            if not self._s.evader_path:
                if action not in cfg.evader_start_choices:
                    raise ValueError(f"chance outcome {action} is not a valid evader start")
                self._s = self._s._replace(evader_path=(action,))
            else:
                if not 0 <= action < cfg.num_nodes or action == self._s.evader_path[0]:
                    raise ValueError(f"chance outcome {action} is not a valid pursuer start")
                placing = self._s.placing + (action,)
                if len(placing) == cfg.num_pursuers:
                    self._s = self._s._replace(pursuer_path=(placing,), placing=())
                else:
                    self._s = self._s._replace(placing=placing)
        elif player == _TEAM:
            slots = self.decode_joint_action(action)
            current = self._s.pursuer_path[-1]
            moved = []
            for agent, slot in enumerate(slots):
                target = cfg.slots[current[agent]][slot]
                if target < 0:
                    raise ValueError(
                        f"illegal team action {action}: pursuer {agent} at node "
                        f"{current[agent]} has no move in slot {slot}"
                    )
                moved.append(target)
            self._s = self._s._replace(pending=tuple(moved))
        elif player == _EVADER:
            old = self._s.evader_path[-1]
            row = cfg.slots[old]
            if (
                not 0 <= action < len(row)
                or row[action] < 0
                or (action == 0 and not cfg.evader_can_stay)
            ):
                raise ValueError(
                    f"illegal evader action {action} at node {old}; legal: "
                    f"{self._legal_actions(_EVADER)}"
                )
            self._resolve_step(old, row[action])
        else:
            raise ValueError("cannot apply an action to a terminal state")

    def _resolve_step(self, evader_old, evader_new):
        cfg = self._cfg
        progress = self._s
        pursuers_old = progress.pursuer_path[-1]
        pursuers_new = progress.pending
        captured = evader_new in pursuers_new
        if not captured and cfg.capture_on_swap and evader_new != evader_old:
            # Crossing one edge in opposite directions meets on the edge.
            captured = any(
                p_old == evader_new and p_new == evader_old
                for p_old, p_new in zip(pursuers_old, pursuers_new, strict=True)
            )
        evader_path = progress.evader_path + (evader_new,)
        if captured:
            outcome = _CAPTURE
        elif evader_new in cfg.exit_set:
            outcome = _ESCAPE
        elif len(evader_path) - 1 == cfg.horizon:
            outcome = _TIMEOUT
        else:
            outcome = _RUNNING
        self._s = _Progress(
            evader_path=evader_path,
            pursuer_path=progress.pursuer_path + (pursuers_new,),
            placing=(),
            pending=None,
            outcome=outcome,
        )

    def _action_to_string(self, player, action):
        cfg = self._cfg
        names = _GRID_SLOT_NAMES if cfg.is_grid else None

        def slot_name(slot):
            return names[slot] if names else ("stay" if slot == 0 else f"n{slot}")

        if player == pyspiel.PlayerId.CHANCE:
            who = "evader" if not self._s.evader_path else f"pursuer {len(self._s.placing)}"
            return f"Start {who} at {action}"
        if player == _TEAM:
            slots = self.decode_joint_action(action)
            return "Move[" + " ".join(f"p{i}:{slot_name(s)}" for i, s in enumerate(slots)) + "]"
        return f"Evader {slot_name(action)}"

    def returns(self):
        if self._s.outcome in (_CAPTURE, _TIMEOUT):
            return [1.0, -1.0]
        return [0.0, 0.0]

    def __str__(self):
        return (
            f"step {max(len(self._s.evader_path) - 1, 0)}/{self._cfg.horizon} | evader path "
            f"{list(self._s.evader_path)} | pursuers {[list(p) for p in self._s.pursuer_path]}"
            f"{' placing ' + str(list(self._s.placing)) if self._s.placing else ''}"
            f" | pending {self._s.pending} | {_OUTCOME_NAMES[self._s.outcome]}"
        )

    # --- factored team protocol -------------------------------------------

    def legal_agent_actions(self, agent):
        self._check_team_turn(agent)
        row = self._cfg.slots[self._s.pursuer_path[-1][agent]]
        return [k for k in range(len(row)) if row[k] >= 0]

    def agent_observation_tensor(self, agent):
        """Pursuer features [M + N + A]: agent one-hot, own node, legal-slot mask."""
        cfg = self._cfg
        if not 0 <= agent < cfg.num_pursuers:
            raise ValueError(f"agent {agent} does not exist; agents are 0..{cfg.num_pursuers - 1}")
        features = [0.0] * cfg.agent_observation_size
        features[agent] = 1.0
        if self._s.pursuer_path:
            node = self._s.pursuer_path[-1][agent]
            features[cfg.num_pursuers + node] = 1.0
            offset = cfg.num_pursuers + cfg.num_nodes
            for k, target in enumerate(cfg.slots[node]):
                if target >= 0:
                    features[offset + k] = 1.0
        return features

    def information_state_array(self, player):
        """`information_state_tensor(player)` as a float32 numpy array, built
        directly (same values, tested): the pyspiel call copies the
        [2 + (T+1)(M+1)N] tensor through a Python list of floats, which on
        large grids costs milliseconds per call (15x15, 4 pursuers: 32,656)."""
        if player not in (_TEAM, _EVADER):
            raise ValueError(f"player {player} has no information state; players are 0 (team) and 1 (evader)")
        cfg = self._cfg
        n, m, t1 = cfg.num_nodes, cfg.num_pursuers, cfg.horizon + 1
        x = np.zeros(2 + t1 + t1 * n + t1 * m * n, dtype=np.float32)
        x[player] = 1.0
        evader_path = self._s.evader_path
        x[2 + max(len(evader_path) - 1, 0)] = 1.0
        if evader_path:
            x[2 + t1 + np.arange(len(evader_path)) * n + np.asarray(evader_path)] = 1.0
        pursuer_path = self._s.pursuer_path if player == _TEAM else self._s.pursuer_path[:1]
        if pursuer_path:
            nodes = np.asarray(pursuer_path, dtype=np.int64)  # [steps + 1, M]
            x[2 + t1 + t1 * n + np.arange(nodes.size) * n + nodes.reshape(-1)] = 1.0
        return x

    def compact_information_state_array(self, player):
        """Compact, lossy network input for `player`'s information state (see
        `CompactLayout`); float32 [compact_information_state_size()]."""
        if player not in (_TEAM, _EVADER):
            raise ValueError(f"player {player} has no information state; players are 0 (team) and 1 (evader)")
        return self._cfg.compact_layout.state_features(player, self._s.evader_path, self._s.pursuer_path)

    def compact_agent_features(self):
        """[M, compact_agent_feature_size()] float32: each pursuer's own network
        input under `infoset_encoding="compact"` (see `CompactLayout`); at the
        team's decisions only."""
        s = self._s
        if self.current_player() != _TEAM:
            raise ValueError("compact_agent_features is defined at the team's decisions only")
        return self._cfg.compact_layout.state_agent_features(s.pursuer_path[-1], s.evader_path[-1])

    # --- extra accessors (tests, examples) ----------------------------------

    def outcome(self) -> str:
        """'running', 'capture', 'escape' or 'timeout'."""
        return _OUTCOME_NAMES[self._s.outcome]

    def evader_node(self) -> int:
        """Evader's node at the start of the current step (-1 before chance)."""
        return self._s.evader_path[-1] if self._s.evader_path else -1

    def pursuer_nodes(self) -> tuple[int, ...]:
        """Pursuers' nodes at the start of the current step (() before chance)."""
        return self._s.pursuer_path[-1] if self._s.pursuer_path else ()


class CompactLayout:
    """A compact, lossy network input for NEST information states (CFR-MIX's
    `infoset_encoding="compact"`); the game's `information_state_tensor` is
    unchanged.

    The perfect-recall tensor one-hots every (step, node) pair separately
    ([2 + (T+1)(M+1)N], 32,656 floats on 15x15 with 4 pursuers), so a network
    learns nothing shared between time steps. This layout keeps the current
    situation plus a summary of the past, the same pieces for both players
    (a player's unseen pieces stay 0):

      player [2]; step [T+1] one-hot; time [2]: step / T, (T - step) / T;
      evader_node [N]: the evader's node now; evader_previous [N]: one step
        before (0 at step 0); evader_start [N]; evader_visited [N]: every
        node of its path so far;
      pursuer_nodes [M, N]: each pursuer's node now (team only);
      pursuer_starts [M, N]: start nodes (both players);
      grids only, coordinates scaled to [0, 1] (row / (rows - 1), col / (cols - 1)):
        evader_xy [2]; pursuer_xy [M, 2] (team only); pursuer_offset [M, 2]:
        pursuer minus evader (team only);
      evader_escape [1 + A]: the evader's shortest distance to an exit / D,
        and for each of its slots the change of that distance the move would
        make (-1, 0, +1; 0 for an illegal slot). D = the graph's diameter.

    It is lossy (the team's own past moves and the order of the evader's
    path before its last two nodes are dropped), which is fine for a
    function approximator but means distinct information sets can share an
    input (15x15, 4 pursuers: 2,757 floats).

    Each pursuer's own input (`agent_features`, replacing
    `agent_observation_tensor` under the compact encoding) is the agent
    observation [M + N + A] (agent one-hot, own node, legal-slot mask)
    followed by relative features, all from graph shortest-path distances d:
      chase [1 + A]: d(me, evader) / D, and per slot the change of d(me,
        evader) the move makes;
      race [K, 1 + A], for the K = min(#exits, 4) exits nearest the evader
        (ascending d(evader, exit), ties by exit id): (d(me, exit) -
        d(evader, exit)) / D (<= 0: I get there first), and per slot the
        change of d(me, exit).
    A network can read "move towards the evader" or "guard the exit it is
    heading for" off these directly, instead of learning shortest paths
    from one-hot node ids (15x15, 4 pursuers: 234 + 30 = 264 floats).
    """

    MAX_RACE_EXITS = 4

    def __init__(self, cfg):
        n, m, t1 = cfg.num_nodes, cfg.num_pursuers, cfg.horizon + 1
        self.n, self.m, self.horizon = n, m, cfg.horizon
        self.is_grid = cfg.is_grid
        self.rows, self.cols = cfg.rows, cfg.cols
        offset = 2
        self.off_step = offset
        offset += t1
        self.off_time = offset
        offset += 2
        self.off_evader, self.off_previous, self.off_start, self.off_visited = (offset + k * n for k in range(4))
        offset += 4 * n
        self.off_pursuers = offset
        offset += m * n
        self.off_pursuer_starts = offset
        offset += m * n
        self.off_xy = offset
        if self.is_grid:
            offset += 2 + 4 * m
        a = cfg.num_slots
        self.a = a
        self.off_escape = offset
        offset += 1 + a
        self.size = offset
        self.slots = np.asarray(cfg.slots, dtype=np.int64)  # [N, A]
        self.exits = np.asarray(cfg.exits, dtype=np.int64)
        self.num_race = min(len(self.exits), self.MAX_RACE_EXITS)
        self.agent_size = m + n + a + (1 + a) * (1 + self.num_race)
        self._cfg_slots = cfg.slots
        self._distances = None  # [N, N], built on first use (N BFS runs)
        self._relative_table = None
        self.legal_table = (self.slots >= 0).astype(np.float32)  # [N, A]
        # The evader's escape features depend on its node only: one table.
        exit_dist = _bfs_distances(cfg.slots, list(cfg.exits), n).min(axis=0).astype(np.int64)  # [N]
        self.scale = float(max(1, _diameter(cfg.slots)))
        legal = self.slots >= 0
        delta = np.where(legal, exit_dist[np.maximum(self.slots, 0)] - exit_dist[:, None], 0)
        self.escape_table = np.concatenate([exit_dist[:, None] / self.scale, delta], axis=1).astype(np.float32)
        self._escape_rows = [row.tolist() for row in self.escape_table]

    @property
    def distances(self) -> np.ndarray:
        """[N, N] int64 shortest path lengths (unreachable: N)."""
        if self._distances is None:
            self._distances = _bfs_distances(self._cfg_slots, range(self.n), self.n).astype(np.int64)
        return self._distances

    # Relative features of every (pursuer node, evader node) pair are tabulated
    # (one [N, N, W] float32 array, built on first use) while it stays below
    # this many floats; larger graphs compute them per call.
    MAX_TABLE_FLOATS = 32_000_000

    def _relative(self, me: np.ndarray, evader: np.ndarray) -> np.ndarray:
        """[R, (1 + A)(1 + K)] chase and race features of pursuers on nodes me
        [R] against evaders on nodes evader [R]."""
        a, dist, scale = self.a, self.distances, self.scale
        out = np.zeros((me.shape[0], (1 + a) * (1 + self.num_race)), dtype=np.float32)
        targets = self.slots[me]  # [R, A]
        legal = targets >= 0
        targets = np.maximum(targets, 0)
        now = dist[me, evader]  # [R]
        out[:, 0] = now / scale
        out[:, 1 : 1 + a] = np.where(legal, dist[targets, evader[:, None]] - now[:, None], 0)
        if self.num_race:
            order = np.argsort(dist[evader][:, self.exits], axis=1, kind="stable")[:, : self.num_race]
            for k in range(self.num_race):
                goal = self.exits[order[:, k]]  # [R]
                b = (1 + a) * (1 + k)
                mine = dist[me, goal]  # [R]
                out[:, b] = (mine - dist[evader, goal]) / scale
                out[:, b + 1 : b + 1 + a] = np.where(legal, dist[targets, goal[:, None]] - mine[:, None], 0)
        return out

    @property
    def relative_table(self):
        """[N, N, W] `_relative` of every (pursuer, evader) pair, or None when too large."""
        if self._relative_table is None:
            width = (1 + self.a) * (1 + self.num_race)
            if self.n * self.n * width > self.MAX_TABLE_FLOATS:
                return None
            me, evader = np.divmod(np.arange(self.n * self.n), self.n)
            self._relative_table = self._relative(me, evader).reshape(self.n, self.n, width)
        return self._relative_table

    def agent_features(self, pursuers: np.ndarray, evader: np.ndarray) -> np.ndarray:
        """[R, M, agent_size] float32 per-pursuer inputs (see the class
        docstring) from pursuer nodes [R, M] and evader nodes [R]."""
        pursuers = np.asarray(pursuers, dtype=np.int64)
        evader = np.asarray(evader, dtype=np.int64)
        rows, m, n, a = pursuers.shape[0], self.m, self.n, self.a
        x = np.zeros((rows, m, self.agent_size), dtype=np.float32)
        x[:, np.arange(m), np.arange(m)] = 1.0
        rr, aa = np.repeat(np.arange(rows), m), np.tile(np.arange(m), rows)
        x[rr, aa, m + pursuers.reshape(-1)] = 1.0
        x[:, :, m + n : m + n + a] = self.slots[pursuers] >= 0
        table = self.relative_table
        if table is not None:
            x[:, :, m + n + a :] = table[pursuers, evader[:, None]]
        else:
            relative = self._relative(pursuers.reshape(-1), np.repeat(evader, m))
            x[:, :, m + n + a :] = relative.reshape(rows, m, -1)
        return x

    def state_agent_features(self, pursuers: tuple, evader: int) -> np.ndarray:
        """`agent_features` of one state ([M, agent_size]), with fewer numpy calls."""
        m, n, a = self.m, self.n, self.a
        x = np.zeros((m, self.agent_size), dtype=np.float32)
        table = self.relative_table
        if table is None:
            return self.agent_features(np.asarray([pursuers]), np.asarray([evader]))[0]
        me = list(pursuers)
        agents = range(m)
        x[agents, agents] = 1.0
        x[agents, [m + v for v in me]] = 1.0
        x[:, m + n : m + n + a] = self.legal_table[me]
        x[:, m + n + a :] = table[me, evader]
        return x

    def _xy(self, nodes):
        r, c = np.divmod(nodes, self.cols)
        return (r / max(self.rows - 1, 1)).astype(np.float32), (c / max(self.cols - 1, 1)).astype(np.float32)

    def state_features(self, player: int, evader_path: tuple, pursuer_path: tuple) -> np.ndarray:
        """`features` of one state from its path tuples, in plain Python
        (numpy's per-call overhead dominates for one row; tested equal).
        Before chance has placed everybody: player and step 0 only."""
        x = np.zeros(self.size, dtype=np.float32)
        x[player] = 1.0
        if not evader_path or not pursuer_path:
            x[self.off_step] = 1.0
            x[self.off_time + 1] = 1.0
            return x
        n, horizon = self.n, self.horizon
        step = len(evader_path) - 1
        x[self.off_step + step] = 1.0
        x[self.off_time] = step / horizon
        x[self.off_time + 1] = (horizon - step) / horizon
        now = evader_path[-1]
        x[self.off_evader + now] = 1.0
        if step > 0:
            x[self.off_previous + evader_path[-2]] = 1.0
        x[self.off_start + evader_path[0]] = 1.0
        for node in evader_path:
            x[self.off_visited + node] = 1.0
        for agent, node in enumerate(pursuer_path[0]):
            x[self.off_pursuer_starts + agent * n + node] = 1.0
        team = player == _TEAM
        if team:
            for agent, node in enumerate(pursuer_path[-1]):
                x[self.off_pursuers + agent * n + node] = 1.0
        if self.is_grid:
            rs, cs = max(self.rows - 1, 1), max(self.cols - 1, 1)
            er, ec = divmod(now, self.cols)
            er, ec = np.float32(er / rs), np.float32(ec / cs)
            x[self.off_xy] = er
            x[self.off_xy + 1] = ec
            if team:
                base = self.off_xy + 2
                offset = base + 2 * self.m
                for agent, node in enumerate(pursuer_path[-1]):
                    pr, pc = divmod(node, self.cols)
                    pr, pc = np.float32(pr / rs), np.float32(pc / cs)
                    x[base + 2 * agent] = pr
                    x[base + 2 * agent + 1] = pc
                    x[offset + 2 * agent] = pr - er
                    x[offset + 2 * agent + 1] = pc - ec
        x[self.off_escape : self.off_escape + 1 + self.a] = self._escape_rows[now]
        return x

    def features(self, player: int, evader_paths: np.ndarray, pursuer_paths: np.ndarray) -> np.ndarray:
        """[R, size] float32 for rows at the same step s, from evader_paths
        [R, s+1] and pursuer_paths [R, s+1, M] (int node ids; the evader sees
        only pursuer_paths[:, 0])."""
        rows, length = evader_paths.shape
        step = length - 1
        n, m = self.n, self.m
        x = np.zeros((rows, self.size), dtype=np.float32)
        r = np.arange(rows)
        x[:, player] = 1.0
        x[:, self.off_step + step] = 1.0
        x[:, self.off_time] = step / self.horizon
        x[:, self.off_time + 1] = (self.horizon - step) / self.horizon
        now = evader_paths[:, -1]
        x[r, self.off_evader + now] = 1.0
        if step > 0:
            x[r, self.off_previous + evader_paths[:, -2]] = 1.0
        x[r, self.off_start + evader_paths[:, 0]] = 1.0
        x[np.repeat(r, length), self.off_visited + evader_paths.reshape(-1)] = 1.0
        rr, agents = np.repeat(r, m), np.tile(np.arange(m), rows)
        x[rr, self.off_pursuer_starts + agents * n + pursuer_paths[:, 0].reshape(-1)] = 1.0
        team = player == _TEAM
        if team:
            x[rr, self.off_pursuers + agents * n + pursuer_paths[:, -1].reshape(-1)] = 1.0
        if self.is_grid:
            er, ec = self._xy(now)
            x[:, self.off_xy] = er
            x[:, self.off_xy + 1] = ec
            if team:
                pr, pc = self._xy(pursuer_paths[:, -1])  # [R, M]
                base = self.off_xy + 2
                x[:, base : base + 2 * m : 2] = pr
                x[:, base + 1 : base + 2 * m : 2] = pc
                base += 2 * m
                x[:, base : base + 2 * m : 2] = pr - er[:, None]
                x[:, base + 1 : base + 2 * m : 2] = pc - ec[:, None]
        x[:, self.off_escape : self.off_escape + 1 + self.a] = self.escape_table[now]
        return x


class NestObserver:
    """Observer for both sides (PyObserver interface, see kuhn_poker.py).

    Perfect recall (information state), tensor pieces in order:
      player [2]; step [T+1] one-hot of the current step;
      evader_path [T+1, N]: evader node at the start of each step so far (the
        team tracks it in real time; the evader knows its own path);
      pursuer_path [T+1, M, N]: row 0 (starts) for both sides, later rows for
        the team only.
    Without perfect recall (observation): player [2]; step [T+1];
      evader_node [N]; pursuer_nodes [M, N] (team: current nodes; evader: the
      start nodes, all it ever sees of them).
    """

    def __init__(self, iig_obs_type, cfg):
        self._cfg = cfg
        n, m, t = cfg.num_nodes, cfg.num_pursuers, cfg.horizon
        self._perfect_recall = iig_obs_type.perfect_recall
        if self._perfect_recall:
            pieces = [
                ("player", (2,)),
                ("step", (t + 1,)),
                ("evader_path", (t + 1, n)),
                ("pursuer_path", (t + 1, m, n)),
            ]
        else:
            pieces = [
                ("player", (2,)),
                ("step", (t + 1,)),
                ("evader_node", (n,)),
                ("pursuer_nodes", (m, n)),
            ]
        self.tensor, self.dict = _team.allocate_pieces(pieces)

    def _visible_pursuer_path(self, state, player):
        path = state._s.pursuer_path
        return path if player == _TEAM else path[:1]

    def set_from(self, state, player):
        self.tensor.fill(0)
        d = self.dict
        d["player"][player] = 1
        step = max(len(state._s.evader_path) - 1, 0)
        d["step"][step] = 1
        pursuer_path = self._visible_pursuer_path(state, player)
        if self._perfect_recall:
            for i, node in enumerate(state._s.evader_path):
                d["evader_path"][i, node] = 1
            for i, nodes in enumerate(pursuer_path):
                for agent, node in enumerate(nodes):
                    d["pursuer_path"][i, agent, node] = 1
        else:
            if state._s.evader_path:
                d["evader_node"][state._s.evader_path[-1]] = 1
            if pursuer_path:
                for agent, node in enumerate(pursuer_path[-1]):
                    d["pursuer_nodes"][agent, node] = 1

    def string_from(self, state, player):
        pursuer_path = self._visible_pursuer_path(state, player)
        side = "team" if player == _TEAM else "evader"
        if self._perfect_recall:
            evader = " ".join(map(str, state._s.evader_path))
            pursuers = " ".join("/".join(map(str, p)) for p in pursuer_path)
            return f"P{player} {side}\nevader: {evader}\npursuers: {pursuers}"
        step = max(len(state._s.evader_path) - 1, 0)
        evader = state._s.evader_path[-1] if state._s.evader_path else "-"
        pursuers = "/".join(map(str, pursuer_path[-1])) if pursuer_path else "-"
        return f"P{player} {side} step {step}\nevader: {evader}\npursuers: {pursuers}"


pyspiel.register_game(_GAME_TYPE, NestGame)
