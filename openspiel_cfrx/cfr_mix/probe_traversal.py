"""Probe-sampling traversals for CFR-MIX (Li et al. 2021, Appendix B, Algorithms 2-3).

A traversal for player p walks one sampled trajectory. At p's information
sets one action a* is drawn uniformly and traversed further; every other
candidate action is valued by a single *probe*: a rollout to the end of the
game in which every player (and chance) samples from its current strategy
(Algorithm 3, Gibson et al. 2012). At the other player's information sets the
current strategy is recorded for the average-strategy network and one action
is sampled (Algorithm 2, lines 22-26).

Sides. Each player is seen through an `AgentView`: a side of n "agents" that
act together, its pyspiel action being the encoding of one individual action
per agent. The team in CFR-MIX is n agents with the game's factored protocol
(`openspiel_cfrx.team`); the adversary, and the team in the joint-action
baselines, is a single agent whose actions are the pyspiel actions. A
strategy for a side is one distribution per agent; the side's joint strategy
is their product (eq. 1), so sampling is agent by agent and no joint action
space is ever enumerated outside the documented cap.

Candidate sets at the traverser's information sets (`regret_targets`):

* "joint" (CFR-MIX, Section 4.3: regrets of joint actions): every legal joint
  action when there are at most `joint_cap` of them; otherwise a* plus
  `joint_cap - 1` joint actions, half drawn from the current product strategy
  and half uniformly. The expected value u_sigma is then estimated by the
  mean of the on-policy draws (unbiased) instead of the exact sum, and the
  regrets recorded are those of the m uniformly drawn candidates (a* and the
  uniform draws) times the importance weight |A| / m: for every joint action
  a, E[recorded regret of a] = v(a) - u_sigma, the regret the enumeration
  records (tested against exact values). The on-policy draws only estimate
  u_sigma: recording them too would add sigma(a) times more samples to the
  actions already played (a bias towards the current strategy).
* "independent" (the independent-agents baseline): agent i's regret for
  a_i is u(a_i, a_-i) - u_sigma_i with a_-i drawn once from the other agents'
  current strategies: each agent learns from its own marginal, without any
  mixing.

Like `openspiel_cfrx.deep.traversal`, traversals are generators; here they
yield *lists* of queries (a traverser node runs its probes and its traversed
child in lock-step) and `run_batched` from that module answers them in
batches: the lock-step mechanism, chance sampling and the node count are
shared. Why this is not a policy of `deep.traversal.external_sampling_traversal`:
the two differ exactly where a policy would plug in, at the traverser's node
(external sampling walks every action and records a regret vector over the
player's actions; a probe traversal walks one action, rolls out the others
and records regrets of [m, n] joint-action candidates of a side of n agents,
with importance weights), and at every query (a side's [n, max_actions]
per-agent strategies and agent features, not one [A] row). So the records
differ too: `ProbeRecord` holds (query, joint candidates, value) triples that
`team_model` packs for the mixing layer, `deep.traversal.TraversalRecord` the
per-action rows the Deep CFR memories take; a common record would give each
walker fields it never fills.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pyspiel

from openspiel_cfrx.deep.traversal import run_batched, sample_chance

REGRET_TARGETS = ("joint", "independent")


@dataclasses.dataclass
class AgentView:
    """How one player's decisions decompose into agents.

    Attributes:
      player: the pyspiel player.
      num_agents: n (1 for the adversary or a joint-action team).
      num_actions: [n] individual actions per agent (network head widths).
      agent_feature_size: F_a, length of each agent's own features (0 if none).
      factored: True when the state offers the factored team protocol.
      encoder: `encoder(state, player)` -> [F] float32 network input for the
        information state; None: `information_state_tensor(player)`.
      agent_encoder: `agent_encoder(state)` -> [n, F_a] float32 agents' own
        inputs; None: `agent_observation_tensor(i)` for each agent i.
    """

    player: int
    num_agents: int
    num_actions: tuple[int, ...]
    agent_feature_size: int
    factored: bool
    encoder: Callable[[pyspiel.State, int], np.ndarray] | None = None
    agent_encoder: Callable[[pyspiel.State], np.ndarray] | None = None

    @property
    def max_actions(self) -> int:
        return max(self.num_actions)

    def legal(self, state: pyspiel.State) -> list[list[int]]:
        """[n] ascending lists of each agent's legal individual actions."""
        if self.factored:
            return [state.legal_agent_actions(i) for i in range(self.num_agents)]
        return [state.legal_actions()]

    def agent_features(self, state: pyspiel.State) -> np.ndarray:
        """[n, F_a] float32 agent features (F_a may be 0)."""
        if not self.factored or self.agent_feature_size == 0:
            return np.zeros((self.num_agents, 0), dtype=np.float32)
        if self.agent_encoder is not None:
            return self.agent_encoder(state)
        return np.asarray(
            [state.agent_observation_tensor(i) for i in range(self.num_agents)], dtype=np.float32
        )

    def encode(self, state: pyspiel.State, digits: Sequence[int]) -> int:
        return state.encode_joint_action(list(digits)) if self.factored else int(digits[0])


@dataclasses.dataclass
class Query:
    """A strategy request: the answer is [n, max_actions] per-agent probabilities."""

    player: int
    features: np.ndarray  # [F] float32 network input: information_state_tensor(player) or the view's encoder
    agent_features: np.ndarray  # [n, F_a]
    legal: list[list[int]]  # [n] legal individual actions


@dataclasses.dataclass
class ProbeRecord:
    """Samples from a batch of traversals (plain lists, packed once per batch).

    regret_*: one entry per traverser information-set visit; `regret_pairs` is
      [m, n] individual actions (-1: agent not part of this target, as in the
      independent targets) and `regret_values` the [m] sampled regrets.
    strategy_*: one entry per non-traverser visit with the [n, max_actions]
      per-agent current strategy.
    """

    regret_queries: list = dataclasses.field(default_factory=list)
    regret_pairs: list = dataclasses.field(default_factory=list)
    regret_values: list = dataclasses.field(default_factory=list)
    strategy_queries: list = dataclasses.field(default_factory=list)
    strategy_probs: list = dataclasses.field(default_factory=list)
    nodes: int = 0
    probes: int = 0


def _sample_agents(strategy: np.ndarray, legal: list[list[int]], rng: random.Random) -> list[int]:
    """One individual action per agent from its own distribution (eq. 1)."""
    digits = []
    for probs, actions in zip(strategy, legal, strict=True):
        u = rng.random()
        cumulative = 0.0
        chosen = actions[-1]
        for action in actions:
            cumulative += probs[action]
            if u < cumulative:
                chosen = action
                break
        digits.append(chosen)
    return digits


def product_probability(strategy: np.ndarray, digits: Sequence[int]) -> float:
    """sigma_T(I, a) = prod_i sigma_i(I, a_i) (eq. 1)."""
    prob = 1.0
    for agent, action in enumerate(digits):
        prob *= float(strategy[agent, action])
    return prob


def parallel(generators: list[Iterator]) -> Iterator[list]:
    """Runs query-list generators in lock-step as one generator.

    Each round yields the concatenation of the pending generators' query lists
    and hands every generator its slice of the answers. Returns the list of
    the generators' return values.
    """
    results: list = [None] * len(generators)
    pending = []
    for index, generator in enumerate(generators):
        try:
            pending.append((index, generator, next(generator)))
        except StopIteration as stop:
            results[index] = stop.value
    while pending:
        answers = yield [query for _, _, queries in pending for query in queries]
        still, position = [], 0
        for index, generator, queries in pending:
            part = answers[position : position + len(queries)]
            position += len(queries)
            try:
                still.append((index, generator, generator.send(part)))
            except StopIteration as stop:
                results[index] = stop.value
        pending = still
    return results


def information_state_features(state: pyspiel.State, player: int) -> np.ndarray:
    """[F] float32 `information_state_tensor(player)`; through the state's
    `information_state_array(player)` when it has one (same values as a numpy
    array, skipping pyspiel's copy through a Python list: games/nest.py)."""
    fast = getattr(state, "information_state_array", None)
    if fast is not None:
        return fast(player)
    return np.asarray(state.information_state_tensor(player), dtype=np.float32)


def make_query(view: AgentView, state: pyspiel.State) -> Query:
    encoder = view.encoder or information_state_features
    return Query(
        view.player,
        encoder(state, view.player),
        view.agent_features(state),
        view.legal(state),
    )


def _next_decision(
    state: pyspiel.State, views: Sequence[AgentView], rng: random.Random, record: ProbeRecord
) -> Iterator[list]:
    """Walks `state` through sampled chance nodes (Algorithm 2, lines 3-4) to
    the next decision, counting each history; returns None at a terminal,
    else (view, query, strategy) with the acting side's current strategy."""
    while True:
        record.nodes += 1
        if state.is_terminal():
            return None
        if state.is_chance_node():
            state.apply_action(sample_chance(state.chance_outcomes(), rng))
            continue
        view = views[state.current_player()]
        query = make_query(view, state)
        (strategy,) = yield [query]
        return view, query, strategy


def probe(
    state: pyspiel.State, traverser: int, views: Sequence[AgentView], rng: random.Random, record: ProbeRecord
) -> Iterator[list]:
    """Algorithm 3: one on-policy rollout from `state` (owned); returns the
    traverser's utility at the terminal it reaches."""
    record.probes += 1
    while (decision := (yield from _next_decision(state, views, rng, record))) is not None:
        view, query, strategy = decision
        state.apply_action(view.encode(state, _sample_agents(strategy, query.legal, rng)))
    return state.returns()[traverser]


def _joint_candidates(strategy, legal, rng, joint_cap):
    """(candidate digit tuples, exact weights or None, on-policy mask, joint
    space size); a* first."""
    size = math.prod(len(actions) for actions in legal)
    if size <= joint_cap:
        candidates = [tuple(d) for d in itertools.product(*legal)]
        first = tuple(rng.choice(actions) for actions in legal)
        candidates.remove(first)
        candidates.insert(0, first)
        weights = [product_probability(strategy, d) for d in candidates]
        return candidates, weights, None, size
    # Large joint space: a* (uniform, Algorithm 2 line 10), on-policy draws for
    # an unbiased u_sigma, uniform draws for the regrets. Duplicates are kept:
    # each is a separate probe (the on-policy mean needs them; a uniform
    # duplicate is one more sample of that action's regret).
    first = tuple(rng.choice(actions) for actions in legal)
    num_on_policy = max(1, (joint_cap - 1) // 2)
    candidates = [first]
    on_policy = [False]
    for _ in range(num_on_policy):
        candidates.append(tuple(_sample_agents(strategy, legal, rng)))
        on_policy.append(True)
    for _ in range(joint_cap - 1 - num_on_policy):
        candidates.append(tuple(rng.choice(actions) for actions in legal))
        on_policy.append(False)
    return candidates, None, on_policy, size


def probe_traversal(
    state: pyspiel.State,
    traverser: int,
    views: Sequence[AgentView],
    rng: random.Random,
    record: ProbeRecord,
    regret_targets: str = "joint",
    joint_cap: int = 64,
) -> Iterator[list]:
    """Algorithm 2 with probes; returns the traverser's sampled value of `state`."""
    while True:
        decision = yield from _next_decision(state, views, rng, record)
        if decision is None:
            return state.returns()[traverser]
        view, query, strategy = decision
        if view.player == traverser:
            break
        record.strategy_queries.append(query)  # lines 22-26: sigma^t for the average network, one action sampled
        record.strategy_probs.append(strategy)
        state.apply_action(view.encode(state, _sample_agents(strategy, query.legal, rng)))
    args = (state, query, strategy, view, traverser, views, rng, record, regret_targets, joint_cap)
    independent = regret_targets == "independent" and view.num_agents > 1
    children, finish = _independent_regrets(*args) if independent else _joint_regrets(*args)
    values = yield from parallel(children)  # the traversed child and the probes, in lock-step
    return finish(values)


def _independent_regrets(state, query, strategy, view, traverser, views, rng, record, regret_targets, joint_cap):
    """Independent targets: agent i's regret for a_i against a_-i drawn once
    from the other agents' strategies; traverses one uniformly drawn joint
    action. Returns (child generators, finish(values) -> the node's value)."""
    legal = query.legal
    traversed = tuple(rng.choice(actions) for actions in legal)
    candidates = []
    for agent, actions in enumerate(legal):
        others = _sample_agents(strategy, legal, rng)
        for action in actions:
            digits = list(others)
            digits[agent] = action
            candidates.append((agent, action, tuple(digits)))
    children = [probe_traversal(state.child(view.encode(state, traversed)), traverser, views, rng, record,
                                regret_targets, joint_cap)]  # fmt: skip
    children += [probe(state.child(view.encode(state, d)), traverser, views, rng, record) for _, _, d in candidates]

    def finish(values):
        pairs, regrets, agent_values = [], [], []
        for agent in range(view.num_agents):
            mine = [(a, v) for (i, a, _), v in zip(candidates, values[1:], strict=True) if i == agent]
            expected = sum(strategy[agent, a] * v for a, v in mine)
            agent_values.append(expected)
            for a, v in mine:
                digits = [-1] * view.num_agents
                digits[agent] = a
                pairs.append(digits)
                regrets.append(v - expected)
        record.regret_queries.append(query)
        record.regret_pairs.append(pairs)
        record.regret_values.append(regrets)
        return float(np.mean(agent_values))

    return children, finish


def _joint_regrets(state, query, strategy, view, traverser, views, rng, record, regret_targets, joint_cap):
    """Joint targets (Algorithm 2 lines 11-19): a* is traversed, every other
    candidate joint action valued by one probe (Algorithm 3). Returns (child
    generators, finish(values) -> the node's value)."""
    candidates, weights, on_policy, size = _joint_candidates(strategy, query.legal, rng, joint_cap)
    children = [probe_traversal(state.child(view.encode(state, candidates[0])), traverser, views, rng, record,
                                regret_targets, joint_cap)]  # fmt: skip
    children += [probe(state.child(view.encode(state, d)), traverser, views, rng, record) for d in candidates[1:]]

    def finish(values):
        if weights is not None:  # every joint action once (lines 11-13)
            expected = float(np.dot(weights, values))
            regrets = {d: v - expected for d, v in zip(candidates, values, strict=True)}
        else:  # u_sigma from the on-policy draws; importance-weighted uniform candidates
            expected = float(np.mean([v for v, on in zip(values, on_policy, strict=True) if on]))
            uniform = [(d, v) for d, v, on in zip(candidates, values, on_policy, strict=True) if not on]
            weight, regrets = size / len(uniform), {}
            for d, v in uniform:
                regrets[d] = regrets.get(d, 0.0) + weight * (v - expected)
        record.regret_queries.append(query)
        record.regret_pairs.append([list(d) for d in regrets])
        record.regret_values.append(list(regrets.values()))
        return expected

    return children, finish


def run_traversals(
    game: pyspiel.Game,
    traverser: int,
    count: int,
    views: Sequence[AgentView],
    answer: Callable[[list[Query]], list[np.ndarray]],
    rng: random.Random,
    regret_targets: str = "joint",
    joint_cap: int = 64,
) -> tuple[ProbeRecord, list[float]]:
    """`count` probe-sampling traversals from the root, run concurrently; every
    round of queries (all traversals, all their probes) is one `answer` call."""
    if regret_targets not in REGRET_TARGETS:
        raise ValueError(f"regret_targets must be one of {REGRET_TARGETS}, got {regret_targets!r}")
    record = ProbeRecord()
    root = game.new_initial_state()

    def flat_answer(query_lists):
        sizes = [len(q) for q in query_lists]
        flat = answer([q for queries in query_lists for q in queries])
        out, position = [], 0
        for size in sizes:
            out.append(flat[position : position + size])
            position += size
        return out

    values = run_batched(
        (probe_traversal(root.clone(), traverser, views, rng, record, regret_targets, joint_cap) for _ in range(count)),
        flat_answer,
    )
    return record, values
