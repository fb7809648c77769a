"""Batched external-sampling traversals (Algorithm 2 of Brown et al. 2019).

OpenSpiel's Deep CFR walks one traversal at a time and calls the network once
per visited infoset. Here each traversal is a Python generator that *yields*
its network queries `(player, features, legal_actions)` and receives the
strategy for that infoset; `run_batched` advances many traversals in lock-step
and answers all their pending queries with one call of `answer` (one forward
pass per player), so the network cost per visited infoset is a slice of a big
batched matmul instead of a full PyTorch dispatch.

The traversal is generic over how nodes are walked (a cursor: `StateCursor`
over pyspiel states, `TreeWalker` over an extracted tree, both drawing the
same random numbers in the same order), over how a node's strategy is
produced (`answer`) and over what is recorded (`TraversalRecord`).
"""

from __future__ import annotations

import dataclasses
import operator
import random
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np
import pyspiel

# A query a traversal yields: (acting player, encoded infoset, legal actions).
Query = tuple[int, Sequence[float], list[int]]
# Answers `queries` with one strategy per query: rows of length num_actions.
AnswerFn = Callable[[list[Query]], list[Sequence[float]]]
Encoder = Callable[[pyspiel.State, int], Sequence[float]]


@dataclasses.dataclass
class TraversalRecord:
    """What a batch of traversals produced (plain lists, converted once per batch).

    advantage_*: one entry per traverser infoset visit: encoded infoset,
      sampled instantaneous regrets r~(I, a) over all num_actions (0 at
      illegal actions), legal actions.
    strategy_*: one entry per opponent infoset visit: encoded infoset, the
      opponent's strategy sigma^t(I), legal actions.
    nodes: histories touched (decision, chance and terminal).
    """

    advantage_features: list = dataclasses.field(default_factory=list)
    advantage_regrets: list = dataclasses.field(default_factory=list)
    advantage_legal: list = dataclasses.field(default_factory=list)
    strategy_features: list = dataclasses.field(default_factory=list)
    strategy_probs: list = dataclasses.field(default_factory=list)
    strategy_legal: list = dataclasses.field(default_factory=list)
    nodes: int = 0


def legal_mask(legal_lists: Sequence[Sequence[int]], num_actions: int) -> np.ndarray:
    """[len(legal_lists), num_actions] bool mask from per-row legal action lists."""
    mask = np.zeros((len(legal_lists), num_actions), dtype=bool)
    rows = np.repeat(np.arange(len(legal_lists)), [len(a) for a in legal_lists])
    mask[rows, np.fromiter((a for acts in legal_lists for a in acts), dtype=np.int64, count=rows.shape[0])] = True
    return mask


def _sample_index(probs: Sequence[float], legal: list[int], rng: random.Random) -> int:
    """A legal action drawn from `probs` (indexed by action)."""
    u = rng.random()
    cumulative = 0.0
    for action in legal:
        cumulative += probs[action]
        if u < cumulative:
            return action
    # Rounding left u above the total: the last action with positive probability.
    for action in reversed(legal):
        if probs[action] > 0:
            return action
    return legal[-1]


def sample_chance(outcomes: list[tuple[int, float]], rng: random.Random) -> int:
    u = rng.random()
    cumulative = 0.0
    for action, prob in outcomes:
        cumulative += prob
        if u < cumulative:
            return action
    return outcomes[-1][0]


class StateCursor:
    """Walks pyspiel states (any game): the traversal's view of a node."""

    def __init__(self, game: pyspiel.Game, encode: Encoder):
        self.game, self.encode = game, encode
        self._root = game.new_initial_state()

    def root(self) -> pyspiel.State:
        return self._root.clone()  # (cheaper than new_initial_state on some games)

    # C-level callers (no Python frame per node): state.is_terminal(), state.is_chance_node()
    is_terminal = staticmethod(operator.methodcaller("is_terminal"))
    is_chance = staticmethod(operator.methodcaller("is_chance_node"))

    def value(self, state, player: int) -> float:
        return state.returns()[player]

    def sample_chance(self, state, rng: random.Random):
        state.apply_action(sample_chance(state.chance_outcomes(), rng))
        return state

    def infoset(self, state):
        player = state.current_player()
        return player, self.encode(state, player), state.legal_actions()

    def advance(self, state, action: int):
        state.apply_action(action)  # the traversal owns `state`
        return state

    def child(self, state, action: int):
        return state.child(action)


def external_sampling_traversal(
    cursor,
    node,
    traverser: int,
    num_actions: int,
    rng: random.Random,
    record: TraversalRecord,
) -> Iterator[Query]:
    """One external-sampling traversal (Algorithm 2) for `traverser` from
    `node` (owned: it may be mutated), over `cursor` (`StateCursor` for
    pyspiel states, `TreeWalker` for an extracted tree). A generator: yields
    queries, receives strategies, and returns the traverser's sampled value.

    Chance and opponent nodes sample one action and continue in the same frame
    (no recursion; Algorithm 2 lines 11-15, the opponent's strategy is recorded
    for the strategy memory, line 13); traverser nodes recurse into every legal
    action and record r~(I, a) = v(a) - sum_a' sigma(I, a') v(a') (lines 5-10).
    """
    is_terminal, value, is_chance = cursor.is_terminal, cursor.value, cursor.is_chance
    while True:
        record.nodes += 1
        if is_terminal(node):
            return value(node, traverser)
        if is_chance(node):
            node = cursor.sample_chance(node, rng)
            continue
        player, features, legal = cursor.infoset(node)
        strategy = yield (player, features, legal)
        if player != traverser:
            record.strategy_features.append(features)
            record.strategy_probs.append(strategy)
            record.strategy_legal.append(legal)
            node = cursor.advance(node, _sample_index(strategy, legal, rng))
            continue
        values = []
        for action in legal:
            child = cursor.child(node, action)
            if is_terminal(child):  # no generator for a leaf
                record.nodes += 1
                values.append(value(child, traverser))
            else:
                values.append((yield from external_sampling_traversal(
                    cursor, child, traverser, num_actions, rng, record)))  # fmt: skip
        expected = 0.0
        for action, value in zip(legal, values, strict=True):
            expected += strategy[action] * value
        regrets = [0.0] * num_actions
        for action, value in zip(legal, values, strict=True):
            regrets[action] = value - expected
        record.advantage_features.append(features)
        record.advantage_regrets.append(regrets)
        record.advantage_legal.append(legal)
        return expected


def run_batched(traversals: Iterable[Iterator[Query]], answer: AnswerFn,
                check: Callable[[], None] | None = None) -> list:  # fmt: skip
    """Runs generator traversals concurrently; each round answers every pending
    query with one `answer` call (and then calls `check()`, which may raise to
    stop the batch). Returns each traversal's return value."""
    results = []
    pending = []  # (result slot, generator, its query)
    for generator in traversals:
        results.append(None)
        try:
            pending.append((len(results) - 1, generator, next(generator)))
        except StopIteration as stop:
            results[-1] = stop.value
    while pending:
        strategies = answer([query for _, _, query in pending])
        still = []
        for (slot, generator, _), strategy in zip(pending, strategies, strict=True):
            try:
                still.append((slot, generator, generator.send(strategy)))
            except StopIteration as stop:
                results[slot] = stop.value
        pending = still
        if check is not None:
            check()
    return results


class TreeWalker:
    """The traversal's cursor over an extracted `GameTree` (history indices),
    for traversals that never touch pyspiel: children, chance probabilities, utilities, and each
    infoset's encoding and legal actions, computed once.

    For games small enough to extract (Kuhn, Leduc, small FHP variants) this
    replaces `state.child`, `information_state_tensor` and friends by list
    lookups. It draws the same random numbers in the same order as the
    pyspiel traversal, so with equal seeds both produce identical samples.
    """

    def __init__(self, tree, encode: Encoder):
        from openspiel_cfrx.tree import CHANCE, TERMINAL

        player = tree.history_player
        self.child_lo = tree.child_offsets[:-1].tolist()
        self.child_hi = tree.child_offsets[1:].tolist()
        self.action = tree.history_action.tolist()
        self.chance_prob = tree.history_chance_prob.tolist()
        utility = np.zeros((2, tree.num_histories))
        utility[:, tree.terminal_history] = tree.terminal_utility.T
        self.utility = [utility[0].tolist(), utility[1].tolist()]
        features = [list(encode(s, int(p))) for s, p in zip(tree.infoset_states(), tree.infoset_player, strict=True)]
        legal = [np.flatnonzero(row).tolist() for row in tree.infoset_legal_mask]
        infoset = [(int(p), f, a) for p, f, a in zip(tree.infoset_player, features, legal, strict=True)]
        self._infosets = [infoset[i] if i >= 0 else None for i in tree.history_infoset.tolist()]
        # The per-node questions as C-level list lookups (no Python frame per node).
        self.is_terminal = (player == TERMINAL).tolist().__getitem__
        self.is_chance = (player == CHANCE).tolist().__getitem__
        self.infoset = self._infosets.__getitem__  # (player, features, legal actions)

    def root(self) -> int:
        return 0

    def value(self, history: int, player: int) -> float:
        return self.utility[player][history]

    def sample_chance(self, history: int, rng: random.Random) -> int:
        lo, hi = self.child_lo[history], self.child_hi[history]
        u = rng.random()
        cumulative = 0.0
        for child in range(lo, hi):
            cumulative += self.chance_prob[child]
            if u < cumulative:
                return child
        return hi - 1

    def advance(self, history: int, action: int) -> int:
        for child in range(self.child_lo[history], self.child_hi[history]):
            if self.action[child] == action:
                return child
        raise ValueError(f"action {action} is not a child of history {history}")

    child = advance  # (history indices are not mutated)
