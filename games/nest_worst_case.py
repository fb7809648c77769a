"""NEST's team worst case: the evader's path best response against a team
policy, on a vectorised simulator of the game's own rules; offered to
`openspiel_cfrx.eval.team_best_response.team_worst_case` through the game's
`team_worst_case(policy)` method, or called directly (its options matter).

In NEST the evader observes only its own path (and the public start) and a
capture ends the game, so its pure strategies are open-loop paths; per start
configuration, a vectorised particle search over all path prefixes picks the
path with the most escapes against sampled team plays, and fresh plays
re-evaluate it (held-out value with a 95% interval, an upper bound on the
worst case in expectation). Exact over all start configurations when there
are few (3x3 grid: 320), else over sampled ones; `max_slack` restricts the
evader to near-shortest paths where the path tree is too large (5x5 / 8
steps: ~12k prefixes per start).
"""

from __future__ import annotations

import math

import numpy as np
import pyspiel

from openspiel_cfrx.eval.team_best_response import (
    TEAM,
    TeamQueryState,
    WorstCaseResult,
    WorstCaseTooLargeError,
    tensor_strategies,
)


class NestSimulator:
    """Vectorised NEST dynamics and team tensors for many particles (same
    layout as games/nest.py's perfect-recall team observer; tested)."""

    def __init__(self, game):
        cfg = getattr(game, "_cfg", None)
        if game.get_type().short_name != "nest" or cfg is None:
            raise ValueError(f"nest_team_worst_case needs the nest game, got {game.get_type().short_name}")
        self.cfg = cfg
        self.slots = np.asarray(cfg.slots, dtype=np.int64)  # [N, A]
        self.n, self.a = self.slots.shape
        self.m = int(cfg.num_pursuers)
        self.horizon = int(cfg.horizon)
        self.exit = np.zeros(self.n, dtype=bool)
        self.exit[list(cfg.exits)] = True
        self.radices = tuple(int(r) for r in game.agent_num_actions())
        # Shortest distance (in evader moves) to an exit.
        dist = np.full(self.n, np.iinfo(np.int64).max // 4, dtype=np.int64)
        dist[self.exit] = 0
        for _ in range(self.n):
            nxt = np.where(self.slots >= 0, dist[np.maximum(self.slots, 0)] + 1, dist[:, None]).min(axis=1)
            nxt = np.minimum(nxt, dist)
            if np.array_equal(nxt, dist):
                break
            dist = nxt
        self.dist = dist
        t1, n, m = self.horizon + 1, self.n, self.m
        self.off_step = 2
        self.off_evader = 2 + t1
        self.off_pursuer = 2 + t1 + t1 * n
        self.feature_size = 2 + t1 + t1 * n + t1 * m * n
        self.agent_feature_size = m + n + self.a
        self.compact = None  # the game config's CompactLayout, read on first use

    def _compact_layout(self):
        if self.compact is None:
            # The game's own compact-input layout (the NEST config builds one per game).
            self.compact = self.cfg.compact_layout
        return self.compact

    def start_configurations(self):
        """(evader starts, pursuer start choices per pursuer or None when fixed)."""
        cfg = self.cfg
        evaders = (int(cfg.evader_start),) if cfg.evader_start != -1 else tuple(cfg.evader_start_choices)
        return evaders, (tuple(cfg.pursuer_starts) if cfg.pursuer_starts else None)

    def evader_moves(self, node: int, budget_left: int) -> list[tuple[int, int]]:
        """(slot, target) the evader may take that keep an exit reachable within budget_left - 1 steps."""
        first = 0 if self.cfg.evader_can_stay else 1
        return [(k, int(t)) for k, t in enumerate(self.slots[node]) if k >= first and t >= 0
                and self.dist[t] <= budget_left - 1]  # fmt: skip

    def default_move(self, node: int) -> int:
        """A legal evader slot towards the nearest exit (used past a plan's end)."""
        first = 0 if self.cfg.evader_can_stay else 1
        legal = [(int(self.dist[t]), k) for k, t in enumerate(self.slots[node]) if k >= first and t >= 0]
        return min(legal)[1]

    def team_queries(self, evader_paths: np.ndarray, pursuer_paths: np.ndarray, step: int, compact: bool = False):
        """Team decisions at `step` for rows with evader_paths [R, step+1] and
        pursuer_paths [R, step+1, M]: (features [R, F], agent features [R, M, F_a],
        legal mask [R, M, A]); features and agent features are the
        information-state tensor and agent observations, or with `compact` the
        game's compact network inputs (`CompactLayout`)."""
        rows = evader_paths.shape[0]
        n, m = self.n, self.m
        r = np.arange(rows)
        if compact:
            x = self._compact_layout().features(TEAM, evader_paths[:, : step + 1], pursuer_paths[:, : step + 1])
        else:
            x = np.zeros((rows, self.feature_size), dtype=np.float32)
            x[:, 0] = 1.0
            x[:, self.off_step + step] = 1.0
            for i in range(step + 1):
                x[r, self.off_evader + i * n + evader_paths[:, i]] = 1.0
                for agent in range(m):
                    x[r, self.off_pursuer + (i * m + agent) * n + pursuer_paths[:, i, agent]] = 1.0
        now = pursuer_paths[:, step]  # [R, M]
        if compact:
            xa = self._compact_layout().agent_features(now, evader_paths[:, step])
            return x, xa, self.slots[now] >= 0
        xa = np.zeros((rows, m, self.agent_feature_size), dtype=np.float32)
        xa[:, np.arange(m), np.arange(m)] = 1.0
        rr = np.repeat(r, m)
        aa = np.tile(np.arange(m), rows)
        xa[rr, aa, m + now.reshape(-1)] = 1.0
        legal_mask = self.slots[now] >= 0  # [R, M, A]
        xa[:, :, m + n :] = legal_mask
        return x, xa, legal_mask

    def sample_team(self, policy, evader_paths, pursuer_paths, step, rng, chunk=None) -> np.ndarray:
        """Samples the team's move for every row: new pursuer nodes [R, M]."""
        rows = evader_paths.shape[0]
        compact = getattr(policy, "infoset_encoding", "tensor") == "compact"
        width = self._compact_layout().size if compact else self.feature_size
        chunk = chunk or max(64, min(4096, 16_000_000 // (4 * width)))
        out = np.empty((rows, self.m), dtype=np.int64)
        for lo in range(0, rows, chunk):
            hi = min(rows, lo + chunk)
            x, xa, legal_mask = self.team_queries(evader_paths[lo:hi], pursuer_paths[lo:hi], step, compact)
            strategies = tensor_strategies(policy, x, xa, legal_mask, self.radices)
            if strategies is None:
                states = [TeamQueryState(x[i], xa[i], self._legal_lists(legal_mask[i]), self.radices)
                          for i in range(hi - lo)]  # fmt: skip
                strategies = self._strategies(policy, states, hi - lo)
            slots = self._sample(strategies, rng)
            moves = self.slots[pursuer_paths[lo:hi, step]]  # [rows, M, A]
            out[lo:hi] = np.take_along_axis(moves, slots[:, :, None], axis=2)[:, :, 0]
        if (out < 0).any():
            raise RuntimeError("team policy put probability on an illegal pursuer move")
        return out

    def _legal_lists(self, legal_mask: np.ndarray) -> list[list[int]]:
        return [np.flatnonzero(legal_mask[agent]).tolist() for agent in range(self.m)]

    def _strategies(self, policy, states, rows) -> np.ndarray:
        """[rows, M, A] per-agent strategies, or [rows, 1, J] joint ones."""
        if hasattr(policy, "agent_strategies"):
            return np.asarray(policy.agent_strategies(states), dtype=np.float64)
        if hasattr(policy, "batch_action_probabilities"):
            return np.asarray(policy.batch_action_probabilities(states), dtype=np.float64)[:, None, :]
        joint = np.zeros((rows, 1, int(np.prod(self.radices))))
        for i, state in enumerate(states):
            for action, prob in policy.action_probabilities(state).items():
                joint[i, 0, action] = prob
        return joint

    def _sample(self, strategies: np.ndarray, rng) -> np.ndarray:
        """[rows, M] individual actions sampled from per-agent or joint strategies."""
        rows = strategies.shape[0]
        if strategies.shape[1] == self.m:
            cum = np.cumsum(strategies, axis=2)
            u = rng.random((rows, self.m, 1)) * cum[:, :, -1:]
            return np.minimum((cum <= u).sum(axis=2), self.a - 1)
        joint = strategies[:, 0]
        cum = np.cumsum(joint, axis=1)
        u = rng.random((rows, 1)) * cum[:, -1:]
        ids = np.minimum((cum <= u).sum(axis=1), joint.shape[1] - 1)
        digits = np.empty((rows, self.m), dtype=np.int64)
        for agent, radix in enumerate(self.radices):
            digits[:, agent] = ids % radix
            ids = ids // radix
        return digits

    def resolve(self, pursuers_old, pursuers_new, evader_old, evader_new):
        """(captured, escaped) booleans for rows (evader_* broadcast against [R])."""
        captured = (pursuers_new == evader_new[:, None]).any(axis=1)
        if self.cfg.capture_on_swap:
            swap = ((pursuers_old == evader_new[:, None]) & (pursuers_new == evader_old[:, None])).any(axis=1)
            captured |= swap & (evader_new != evader_old)
        return captured, ~captured & self.exit[evader_new]


def nest_team_worst_case(
    game: pyspiel.Game,
    policy,
    num_starts: int = 64,
    num_particles: int = 16,
    num_eval_games: int = 16,
    max_slack: int | None = None,
    seed: int = 0,
    max_rows: int = 5_000_000,
) -> WorstCaseResult:
    """Team worst case in NEST by a particle best response over evader paths.

    The evader observes only its own path (and the public start), and a
    capture ends the game, so each of its pure strategies is an open-loop
    path and its best response is, start by start, the path that maximises
    the escape probability against the team's strategy. For each start
    configuration (all of them when there are at most `num_starts`, weighted
    exactly; else `num_starts` drawn from the chance distribution)
    `num_particles` team plays are simulated along every candidate path prefix
    at once (vectorised; the team is sampled agent by agent from its product
    strategy, in batches, and the same team sample is shared by all evader
    moves of a step), the path with the most escapes is chosen, and then
    replayed on `num_eval_games` fresh team plays. Returned: `value` = team
    utility against the chosen paths (held-out; in expectation an *upper*
    bound on the worst case, as any evader strategy gives one), its 95%
    interval (particle noise, plus the spread over sampled starts), and
    `in_sample_value` (minus the in-sample best-response value, optimistic
    for the evader). Candidate paths: every path that can still reach an exit
    before the horizon (`max_slack=None`: the unrestricted best response), or
    only paths of at most (distance to the nearest exit + `max_slack`) steps
    (a restricted evader, so a weaker upper bound, for large grids).
    """
    import time

    start_time = time.perf_counter()
    if num_starts < 1 or num_particles < 1 or num_eval_games < 1:
        raise ValueError("num_starts, num_particles and num_eval_games must be >= 1")
    sim = NestSimulator(game)
    rng = np.random.default_rng(seed)
    starts, weights, exact_starts = _choose_starts(sim, num_starts, rng)
    num = len(starts)
    horizon = sim.horizon
    budget = np.array([horizon if max_slack is None else min(horizon, int(sim.dist[e]) + int(max_slack))
                       for e, _ in starts])  # fmt: skip
    levels = _search_paths(sim, policy, starts, budget, num_particles, rng, max_rows)
    plans, in_sample_escape = _best_plans(levels, num, horizon, num_particles)
    # Held-out: each start's plan against fresh team plays.
    team_value = _held_out_team_values(sim, policy, starts, plans, num_eval_games, rng)
    per_start = team_value.mean(axis=1)
    value = float(weights @ per_start)
    ci = _confidence_interval(team_value, per_start, weights, exact_starts)
    adversary_class = "all evader paths" if max_slack is None else f"evader paths of <= distance+{max_slack} steps"
    adversary_class += ", all starts" if exact_starts else f", {num} sampled starts"
    return WorstCaseResult(
        "sampled_paths",
        value=value,
        ci95=ci,
        in_sample_value=float(weights @ (1.0 - in_sample_escape)),
        num_particles=num_particles,
        num_eval_games=num_eval_games,
        adversary_infosets=int(sum(level[4] for level in levels)),
        seconds=time.perf_counter() - start_time,
        num_starts=num,
        adversary_class=adversary_class,
        per_start_values=tuple(float(v) for v in per_start),
    )


def _choose_starts(sim: NestSimulator, num_starts: int, rng) -> tuple[list, np.ndarray, bool]:
    """(starts as (evader node, pursuer nodes tuple), their weights, whether
    they are all the start configurations): all of them, weighted uniformly,
    when there are at most `num_starts`; else `num_starts` drawn from the
    chance distribution."""
    evaders, fixed_pursuers = sim.start_configurations()
    m = sim.m
    pursuer_choices = 1 if fixed_pursuers is not None else (sim.n - 1) ** m
    total = len(evaders) * pursuer_choices
    starts = []  # (evader node, pursuer nodes tuple)
    if total <= num_starts:
        weights = np.full(total, 1.0 / total)
        for e in evaders:
            if fixed_pursuers is not None:
                starts.append((e, fixed_pursuers))
                continue
            others = [v for v in range(sim.n) if v != e]
            for index in range(pursuer_choices):
                nodes, rest = [], index
                for _ in range(m):
                    nodes.append(others[rest % (sim.n - 1)])
                    rest //= sim.n - 1
                starts.append((e, tuple(nodes)))
        return starts, weights, True
    weights = np.full(num_starts, 1.0 / num_starts)
    for _ in range(num_starts):
        e = int(evaders[rng.integers(len(evaders))])
        if fixed_pursuers is not None:
            starts.append((e, fixed_pursuers))
        else:
            others = [v for v in range(sim.n) if v != e]
            picks = rng.integers(0, sim.n - 1, size=m)
            starts.append((e, tuple(int(others[i]) for i in picks)))
    return starts, weights, False


def _search_paths(sim, policy, starts, budget, num_particles, rng, max_rows) -> list[tuple]:
    """Search tree over evader path prefixes, level by level: node k = (start,
    evader path so far), rows = its surviving particles. Each step samples the
    team once per row and scores every evader move of every node against it.

    Returns:
      per depth: edges (node, slot, escapes, child or -1) and the number of nodes.
    """
    num, horizon = len(starts), sim.horizon
    first_slot = 0 if sim.cfg.evader_can_stay else 1
    slot_ok = np.arange(sim.a) >= first_slot
    node_start = np.arange(num)
    node_path = np.array([[e] for e, _ in starts], dtype=np.int64)  # [K, t+1]
    row_node = np.repeat(np.arange(num), num_particles)
    pursuer_starts = np.array([p for _, p in starts], dtype=np.int64)
    row_pursuers = np.repeat(pursuer_starts, num_particles, axis=0)[:, None, :]
    levels = []  # per depth: edges (node, slot, escapes, child) and the number of nodes
    rows_done = 0
    for step in range(horizon):
        count = len(node_start)
        rows_done += len(row_node)
        if rows_done > max_rows:
            raise WorstCaseTooLargeError(
                f"nest path best response exceeded max_rows={max_rows}; lower num_particles or "
                "num_starts, or restrict the evader with max_slack"
            )
        e_old = node_path[:, -1]
        targets = sim.slots[e_old]  # [K, A]
        reach = sim.dist[np.maximum(targets, 0)] <= (budget[node_start] - step - 1)[:, None]
        # Evader moves that can still escape in time.
        allowed = (targets >= 0) & reach & slot_ok[None, :]
        new = sim.sample_team(policy, node_path[row_node], row_pursuers, step, rng)
        row_allowed = allowed[row_node]
        captured, escaped = _resolve_all_moves(
            sim, row_pursuers[:, step], new, e_old[row_node], targets[row_node], row_allowed
        )
        escapes = np.bincount(
            (row_node[:, None] * sim.a + np.arange(sim.a)).ravel(),
            weights=escaped.ravel(),
            minlength=count * sim.a,
        )
        going = row_allowed & ~captured & ~escaped & (step + 1 < horizon)
        going_rows, going_slots = np.nonzero(going)
        pairs, inverse = np.unique(row_node[going_rows] * sim.a + going_slots, return_inverse=True)
        child_of_pair = np.full(count * sim.a, -1, dtype=np.int64)
        child_of_pair[pairs] = np.arange(len(pairs))
        edge_node, edge_slot = np.nonzero(allowed)
        edge_pair = edge_node * sim.a + edge_slot
        levels.append((edge_node, edge_slot, escapes[edge_pair], child_of_pair[edge_pair], count))
        if not len(pairs):
            break
        order = np.argsort(inverse, kind="stable")
        rows = going_rows[order]
        row_node = inverse[order]
        row_pursuers = np.concatenate([row_pursuers[rows], new[rows][:, None, :]], axis=1)
        parent, slot = pairs // sim.a, pairs % sim.a
        node_start = node_start[parent]
        node_path = np.concatenate([node_path[parent], targets[parent, slot][:, None]], axis=1)
    return levels


def _resolve_all_moves(
    sim, old, new, row_old, row_targets, row_allowed
) -> tuple[np.ndarray, np.ndarray]:
    """(captured, escaped) [R, A] for every evader slot of every row: the
    evader moves from `row_old` [R] to `row_targets` [R, A] while the team
    moves from `old` to `new` pursuer nodes [R, M]; only moves in
    `row_allowed` [R, A] escape."""
    captured = (new[:, :, None] == row_targets[:, None, :]).any(axis=1)
    if sim.cfg.capture_on_swap:
        swap = (
            (old[:, :, None] == row_targets[:, None, :])
            & (new[:, :, None] == row_old[:, None, None])
        ).any(1)
        captured |= swap & (row_targets != row_old[:, None])
    escaped = ~captured & sim.exit[np.maximum(row_targets, 0)] & row_allowed
    return captured, escaped


def _best_plans(levels, num, horizon, num_particles) -> tuple[np.ndarray, np.ndarray]:
    """(plans [num, horizon]: the evader slot per step of each start's best
    path, -1 past the plan's end; in-sample escape probability per start)."""
    # Bottom-up: escapes along the best path from each node (0 if none can escape).
    child_value = np.zeros(0)
    best_edges = []
    for edge_node, edge_slot, edge_escapes, edge_child, count in reversed(levels):
        if len(child_value):
            below = child_value[np.maximum(edge_child, 0)]
        else:
            below = np.zeros(len(edge_child))
        total_value = edge_escapes + np.where(edge_child >= 0, below, 0.0)
        value = np.zeros(count)
        np.maximum.at(value, edge_node, total_value)
        best = np.full(count, len(edge_node), dtype=np.int64)
        ties = np.flatnonzero(total_value >= value[edge_node])
        np.minimum.at(best, edge_node[ties], ties)
        best_edges.append((best, edge_slot, edge_child))
        child_value = value
    best_edges.reverse()
    in_sample_escape = child_value / num_particles
    # Top-down: follow each start's best edges.
    plans = np.full((num, horizon), -1, dtype=np.int64)  # evader slot per step, -1 past the plan
    node = np.arange(num)
    for step, (best, edge_slot, edge_child) in enumerate(best_edges):
        live = np.flatnonzero(node >= 0)
        if not len(live):
            break
        edge = best[node[live]]
        ok = edge < len(edge_slot)
        plans[live[ok], step] = edge_slot[edge[ok]]
        node[:] = -1
        node[live[ok]] = edge_child[edge[ok]]
    return plans, in_sample_escape


def _held_out_team_values(sim, policy, starts, plans, num_eval_games, rng) -> np.ndarray:
    """[num starts, num_eval_games] team utility (1 unless the evader escapes)
    of each start's plan against fresh team plays; past its plan's end the
    evader heads for the nearest exit."""
    num, horizon = len(starts), sim.horizon
    default_slot = np.array([sim.default_move(v) for v in range(sim.n)], dtype=np.int64)
    games_ = num * num_eval_games
    start_of = np.repeat(np.arange(num), num_eval_games)
    evader_paths = np.array([starts[s][0] for s in start_of], dtype=np.int64)[:, None]
    pursuer_paths = np.array([starts[s][1] for s in start_of], dtype=np.int64)[:, None, :]
    alive = np.arange(games_)
    escaped_games = np.zeros(games_, dtype=bool)
    for step in range(horizon):
        if not len(alive):
            break
        new = sim.sample_team(policy, evader_paths, pursuer_paths, step, rng)
        e_old = evader_paths[:, step]
        slot = plans[start_of[alive], step]
        slot = np.where(slot >= 0, slot, default_slot[e_old])
        e_new = sim.slots[e_old, slot]
        captured, escaped = sim.resolve(pursuer_paths[:, step], new, e_old, e_new)
        escaped_games[alive[escaped]] = True
        keep = ~captured & ~escaped
        alive = alive[keep]
        evader_paths = np.concatenate([evader_paths, e_new[:, None]], axis=1)[keep]
        pursuer_paths = np.concatenate([pursuer_paths, new[:, None, :]], axis=1)[keep]
    return 1.0 - escaped_games.reshape(num, num_eval_games).astype(np.float64)


def _confidence_interval(team_value, per_start, weights, exact_starts) -> float:
    """95% half-width of the weighted value: particle noise per start when the
    starts are exact, else the spread over the sampled starts."""
    num, num_eval_games = team_value.shape
    if exact_starts:
        var = team_value.var(axis=1, ddof=1) if num_eval_games > 1 else np.full(num, np.inf)
        return 1.96 * math.sqrt(float(np.sum(weights**2 * var / num_eval_games)))
    return 1.96 * float(per_start.std(ddof=1)) / math.sqrt(num) if num > 1 else float("inf")
