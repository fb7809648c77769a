"""Team worst-case utility: the adversary's best response to a team's product strategy.

The team's worst-case utility (Li et al. 2021, Figures 3-4) is
min over adversary strategies of the team's expected utility, i.e. minus the
adversary's best-response value against the fixed team strategy.

Two methods:

* "exact": the tree engine (`openspiel_cfrx.tree.best_response`) on the
  extracted game, with the team's rows built as products of the agents'
  strategies. Exact, but it extracts the game (and its joint actions), so it
  is for instances of up to ~10^6 histories.
* "sampled": a particle best response that never enumerates joint actions.
  `num_particles` games are sampled from the root; at every adversary
  information set (grouped by `information_state_string(1)`) each adversary
  action is tried on all particles there, and chance and the team continue by
  sampling (the team agent by agent from its own distributions, eq. 1). The
  adversary picks, bottom up, the action with the best particle sum: the
  exact best response to the *sampled* team behaviour, which exists because
  the adversary acts on its own information only (NEST: its own path;
  Goofspiel: its hand and round outcomes). Its in-sample value is biased in
  the adversary's favour (it maximises over the same noise). The strategy it
  finds is therefore re-evaluated on `num_eval_games` fresh games; that
  held-out value is an unbiased estimate of one adversary strategy's value,
  so (up to its confidence interval) minus it is an *upper* bound on the
  team's worst-case utility, and minus the in-sample value an optimistic
  lower estimate. Both are reported with a 95% normal confidence interval.
  The cost is num_particles x (adversary decision paths), so it suits games
  where the adversary has few decisions (short horizons).

For the paper's larger instances, games offer their own method through the
`team_worst_case` protocol (see `team_worst_case`): team Goofspiel's exact
dynamic program over the adversary's observations
(`games/team_goofspiel_worst_case.py`) and NEST's evader path best response
(`games/nest_worst_case.py`). This module keeps the generic parts they share:
the result type, batched team strategies (`team_joint_probabilities`,
`tensor_strategies`, `TeamQueryState`).

The team policy is anything with `agent_strategies(states)` -> [n, A] per
state (e.g. `CFRMixSolver`), `batch_action_probabilities(states)`
(`DeepCFRSolver`), or an OpenSpiel `Policy` (`action_probabilities`).
"""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import pyspiel

from openspiel_cfrx import team as team_lib
from openspiel_cfrx import tree as tree_lib

ADVERSARY = team_lib.ADVERSARY_PLAYER
TEAM = team_lib.TEAM_PLAYER


class WorstCaseTooLargeError(ValueError):
    """A game's own worst-case method exceeds its size limits (the caller may fall back)."""


@dataclasses.dataclass
class WorstCaseResult:
    """Team worst-case utility (team's units; higher is better for the team).

    method: "exact" or "sampled".
    value: exact value, or the held-out estimate (an upper bound in expectation).
    ci95: half-width of the 95% interval of `value` (0 if exact).
    in_sample_value: sampled only: minus the in-sample best-response value.
    num_starts: NEST path method: start configurations evaluated (all of
      them when `adversary_class` says "all starts").
    adversary_class: the adversary strategies searched, where restricted.
    per_start_values: NEST path method: held-out team utility per start
      configuration (in the order drawn from `seed`, so two evaluations with
      the same seed and settings can be compared start by start: a paired
      difference, without the spread over starts).
    """

    method: str
    value: float
    ci95: float = 0.0
    in_sample_value: float | None = None
    num_particles: int = 0
    num_eval_games: int = 0
    adversary_infosets: int = 0
    seconds: float = 0.0
    num_starts: int = 0
    adversary_class: str = ""
    per_start_values: tuple | None = None


def _team_sampler(policy):
    """Returns sample(states, rng) -> list of pyspiel actions for team states."""
    if hasattr(policy, "agent_strategies"):

        def sample(states, rng):
            strategies = policy.agent_strategies(states)
            actions = []
            for state, strategy in zip(states, strategies, strict=True):
                if strategy.shape[0] == 1:
                    legal = state.legal_actions()
                    probs = np.asarray([strategy[0, a] for a in legal])
                    actions.append(legal[_draw(probs, rng)])
                    continue
                digits = []
                for agent in range(strategy.shape[0]):
                    legal = state.legal_agent_actions(agent)
                    probs = np.asarray([strategy[agent, a] for a in legal])
                    digits.append(legal[_draw(probs, rng)])
                actions.append(state.encode_joint_action(digits))
            return actions

        return sample

    def sample(states, rng):
        actions = []
        for state in states:
            probs = policy.action_probabilities(state)
            keys = list(probs)
            actions.append(keys[_draw(np.asarray([probs[k] for k in keys]), rng)])
        return actions

    return sample


def _draw(probs: np.ndarray, rng: random.Random) -> int:
    total = float(probs.sum())
    u = rng.random() * total
    cumulative = 0.0
    for index, p in enumerate(probs):
        cumulative += p
        if u < cumulative:
            return index
    return int(np.flatnonzero(probs > 0)[-1]) if total > 0 else len(probs) - 1


def _advance(states, sample_team, rng):
    """Plays chance and the team by sampling until every state is terminal or
    at an adversary decision. Mutates and returns `states`."""
    active = list(states)
    while active:
        team_states = []
        still = []
        for state in active:
            if state.is_terminal():
                continue
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                index = _draw(np.asarray([p for _, p in outcomes]), rng)
                state.apply_action(outcomes[index][0])
                still.append(state)
            elif state.current_player() == TEAM:
                team_states.append(state)
            # adversary: stops here
        if team_states:
            for state, action in zip(team_states, sample_team(team_states, rng), strict=True):
                state.apply_action(action)
            still.extend(team_states)
        active = still
    return states


def exact_team_worst_case(game: pyspiel.Game, policy, max_histories: int | None = None) -> WorstCaseResult:
    """Exact worst case through the tree engine (small instances only).

    With `max_histories`, the game is extracted under that cap (ValueError
    above it) instead of through the shared `get_tree` cache."""
    import time

    from openspiel_cfrx.tree import best_response, extract, get_tree, strategy_from_policy

    start = time.perf_counter()
    tree = get_tree(game) if max_histories is None else extract(game, max_histories=max_histories)
    strategy = policy.strategy_array(tree) if hasattr(policy, "strategy_array") else strategy_from_policy(tree, policy)
    result = best_response(tree, strategy)
    value = -float(result.best_response_values[ADVERSARY])
    return WorstCaseResult("exact", value, adversary_infosets=tree.num_infosets_of(ADVERSARY),
                           seconds=time.perf_counter() - start)  # fmt: skip


def sampled_team_worst_case(
    game: pyspiel.Game,
    policy,
    num_particles: int = 200,
    num_eval_games: int = 2000,
    seed: int = 0,
    max_particle_nodes: int = 2_000_000,
) -> WorstCaseResult:
    """Particle best response of the adversary (see module docstring)."""
    import time

    if num_particles < 1 or num_eval_games < 1:
        raise ValueError("num_particles and num_eval_games must be >= 1")
    start = time.perf_counter()
    rng = random.Random(seed)
    sample_team = _team_sampler(policy)
    best_action: dict[str, int] = {}
    budget = [max_particle_nodes]

    def solve(states) -> float:
        """Sum over particles of the adversary's utility under its best response."""
        budget[0] -= len(states)
        if budget[0] < 0:
            raise ValueError(
                f"particle best response exceeded max_particle_nodes={max_particle_nodes}; the adversary "
                "has too many decision paths here: use fewer num_particles or a shorter horizon"
            )
        total = 0.0
        groups: dict[str, list] = {}
        for state in states:
            if state.is_terminal():
                total += state.returns()[ADVERSARY]
            else:
                groups.setdefault(state.information_state_string(ADVERSARY), []).append(state)
        for key, group in groups.items():
            values = {}
            for action in group[0].legal_actions():
                children = _advance([s.child(action) for s in group], sample_team, rng)
                values[action] = solve(children)
            action = max(values, key=values.get)
            best_action[key] = action
            total += values[action]
        return total

    roots = _advance([game.new_initial_state() for _ in range(num_particles)], sample_team, rng)
    in_sample = solve(roots) / num_particles

    # Held-out evaluation of the adversary strategy found (uniform where unseen).
    returns = np.zeros(num_eval_games)
    states = _advance([game.new_initial_state() for _ in range(num_eval_games)], sample_team, rng)
    while True:
        pending = [s for s in states if not s.is_terminal()]
        if not pending:
            break
        for state in pending:
            action = best_action.get(state.information_state_string(ADVERSARY))
            state.apply_action(action if action is not None else rng.choice(state.legal_actions()))
        _advance(pending, sample_team, rng)
    for i, state in enumerate(states):
        returns[i] = state.returns()[ADVERSARY]
    mean = float(returns.mean())
    ci = 1.96 * float(returns.std(ddof=1)) / math.sqrt(num_eval_games) if num_eval_games > 1 else float("inf")
    return WorstCaseResult(
        "sampled",
        value=-mean,
        ci95=ci,
        in_sample_value=-in_sample,
        num_particles=num_particles,
        num_eval_games=num_eval_games,
        adversary_infosets=len(best_action),
        seconds=time.perf_counter() - start,
    )


def team_worst_case(
    game: pyspiel.Game, policy, method: str = "auto", max_exact_histories: int = 200_000, **sampled_options
) -> WorstCaseResult:
    """Team worst-case utility by `method` "exact", "sampled" or "auto".

    "auto": exact (tree engine) when the game extracts within
    `max_exact_histories` histories; else the game's own method when it offers
    one (the protocol below); else sampled.

    Protocol: a game may offer `game.team_worst_case(policy) -> WorstCaseResult`,
    an exact or specialised computation that uses the game's own rules (team
    Goofspiel: a dynamic program over the adversary's observations,
    `games.team_goofspiel_worst_case`; NEST: the evader's path best response,
    `games.nest_worst_case`), raising `WorstCaseTooLargeError` beyond its
    size limits. Game-specific code lives with the game, never here."""
    if method not in ("auto", "exact", "sampled"):
        raise ValueError(f"method must be 'auto', 'exact' or 'sampled', got {method!r}")
    if method == "exact":
        return exact_team_worst_case(game, policy)
    if method == "auto":
        try:
            return exact_team_worst_case(game, policy, max_histories=max_exact_histories)
        except tree_lib.TreeTooLargeError:
            pass
        except ValueError as e:
            if "max_histories" not in str(e):
                raise
        own = getattr(game, "team_worst_case", None)
        if callable(own):
            try:
                return own(policy)
            except WorstCaseTooLargeError:
                pass
    return sampled_team_worst_case(game, policy, **sampled_options)


# --------------------------------------------------------------------------
# Team strategies in batches (product or joint form).


def mixed_radix(digits: np.ndarray, radices) -> np.ndarray:
    """[..., n] individual actions -> joint action ids (agent 0 least significant)."""
    ids = np.zeros(digits.shape[:-1], dtype=np.int64)
    scale = 1
    for agent, radix in enumerate(radices):
        ids += digits[..., agent].astype(np.int64) * scale
        scale *= int(radix)
    return ids


def team_joint_probabilities(policy, states, digits: np.ndarray, radices) -> np.ndarray:
    """Probabilities of given team joint actions at many team states: [B, J].

    Args:
      policy: anything with `agent_strategies(states)` -> [n, A] per state
        (`CFRMixSolver`: a product of per-agent strategies, eq. 1, or with
        n = 1 a joint-action head), `batch_action_probabilities(states)` ->
        [B, num_distinct_actions] (`DeepCFRSolver`), or an OpenSpiel `Policy`.
      states: B pyspiel states at the team's turn (anything `policy` accepts).
      digits: [B, J, n] individual actions of the J joint actions asked for.
      radices: the game's `agent_num_actions()`.
    """
    digits = np.asarray(digits)
    batch, count, n = digits.shape
    out = np.zeros((batch, count))
    if not batch:
        return out
    if hasattr(policy, "agent_strategies"):
        strategies = np.asarray(policy.agent_strategies(states), dtype=np.float64)  # [B, n or 1, A]
        rows = np.arange(batch)[:, None]
        if strategies.shape[1] == 1 and n > 1:  # one head over joint actions
            return strategies[:, 0][rows, mixed_radix(digits, radices)]
        for agent in range(n):
            factor = strategies[:, agent][rows, digits[:, :, agent]]
            out = factor if agent == 0 else out * factor
        return out
    ids = mixed_radix(digits, radices)
    if hasattr(policy, "batch_action_probabilities"):
        probs = np.asarray(policy.batch_action_probabilities(states), dtype=np.float64)
        return np.take_along_axis(probs, ids, axis=1)
    for b, state in enumerate(states):
        row = policy.action_probabilities(state)
        out[b] = [row.get(int(a), 0.0) for a in ids[b]]
    return out


# --------------------------------------------------------------------------
# Team Goofspiel: exact best response of the adversary by a dynamic program
# over its observation sequence.


def joint_legal_mask(legal_mask: np.ndarray, radices) -> np.ndarray:
    """[B, n, A] per-agent legal masks -> [B, prod radices] joint mask (agent 0 least significant)."""
    joint = np.ones((legal_mask.shape[0], 1), dtype=bool)
    for agent in range(len(radices) - 1, -1, -1):
        joint = (joint[:, :, None] & legal_mask[:, None, agent, : radices[agent]]).reshape(legal_mask.shape[0], -1)
    return joint


def tensor_strategies(policy, features, agent_features, legal_mask, radices):
    """The team's average strategies straight from tensors, without building a
    query per state: [B, n, A] per agent for a factored `CFRMixSolver`,
    [B, 1, J] for a joint-head one or a `DeepCFRSolver` (policy network); None
    for any other policy (the caller then goes through `agent_strategies` /
    `batch_action_probabilities` on query states). Computes exactly what those
    methods compute (tested)."""
    views = getattr(policy, "views", None)
    if callable(getattr(policy, "strategies_from_tensors", None)) and views:  # CFRMixSolver
        if getattr(views[TEAM], "factored", False):
            return policy.strategies_from_tensors(TEAM, features, agent_features, legal_mask)
        joint = joint_legal_mask(legal_mask, radices)[:, None, :]
        empty = np.zeros((features.shape[0], 1, 0), dtype=np.float32)
        return policy.strategies_from_tensors(TEAM, features, empty, joint)
    if callable(getattr(policy, "probabilities_from_tensors", None)) and getattr(
        policy, "average_policy", None) == "network":  # DeepCFRSolver  # fmt: skip
        mask = joint_legal_mask(legal_mask, radices)
        return np.asarray(policy.probabilities_from_tensors(features, mask), dtype=np.float64)[:, None, :]
    return None


class TeamQueryState:
    """A team decision given by its tensors, for `agent_strategies` /
    `batch_action_probabilities` (duck-types the pyspiel calls they make)."""

    __slots__ = ("_features", "_agent_features", "_legal", "_radices")

    def __init__(self, features, agent_features, legal, radices):
        self._features = features
        self._agent_features = agent_features
        self._legal = legal
        self._radices = radices

    def current_player(self):
        return TEAM

    def is_chance_node(self):
        return False

    def is_terminal(self):
        return False

    def information_state_tensor(self, player=TEAM):
        return self._features

    def compact_information_state_array(self, player=TEAM):
        return self._features  # the caller built compact features (policy.infoset_encoding == "compact")

    def agent_observation_tensor(self, agent):
        return self._agent_features[agent]

    def compact_agent_features(self):
        return self._agent_features  # built with the compact layout by the caller

    def legal_agent_actions(self, agent):
        return self._legal[agent]

    def num_team_agents(self):
        return len(self._legal)

    def legal_actions(self, player=None):
        ids = np.zeros(1, dtype=np.int64)
        scale = 1
        for actions, radix in zip(self._legal, self._radices, strict=True):
            ids = (ids[None, :] + scale * np.asarray(actions, dtype=np.int64)[:, None]).reshape(-1)
            scale *= int(radix)
        return sorted(int(a) for a in ids)
