"""External-sampling traversals (Deep CFR Algorithm 2) vectorised over an
extracted game tree.

For games small enough to extract (`openspiel_cfrx.get_tree`), the current
strategy sigma^t of every infoset is one forward pass of each player's
advantage network over the tree's infoset encodings (followed by regret
matching, eq. 4). With that table, K traversals need no network calls and no
Python recursion: they advance together, one depth at a time, as flat arrays
of (traversal, history) "visits":

* chance history: one child sampled by its probability;
* opponent history: one action sampled from sigma^t(I); the visit records
  (I, sigma^t(I)) for the strategy memory (Algorithm 2, opponent branch);
* traverser history: every child is visited;
* terminal: the traverser's utility.

Values then flow bottom-up depth by depth: a sampled node takes its child's
value; a traverser node takes v(I) = sum_a sigma^t(I, a) v(I, a) and records
the sampled regrets r~(I, a) = v(I, a) - v(I) for the advantage memory. These
are exactly the samples of the recursive traversal (`traversal.py`): the same
distribution, visit for visit; only the order in which random numbers are
drawn differs, so the streams are not bit-identical to the recursive
backends for equal seeds.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from openspiel_cfrx.tree import CHANCE, TERMINAL


@dataclasses.dataclass
class VectorSamples:
    """Samples of one batch of traversals (infosets as tree infoset ids)."""

    advantage_infosets: np.ndarray  # [n] int64
    advantage_regrets: np.ndarray  # [n, A] float32 (0 at illegal actions)
    strategy_infosets: np.ndarray  # [m] int64
    strategy_probs: np.ndarray  # [m, A] float32
    nodes: int  # histories touched (decision, chance and terminal)


class VectorTree:
    """Arrays of an extracted `GameTree` arranged for vectorised traversals."""

    def __init__(self, tree):
        self.tree = tree
        self.num_actions = int(tree.num_actions)
        self.player = tree.history_player.astype(np.int64)
        self.infoset = tree.history_infoset.astype(np.int64)
        self.action = tree.history_action.astype(np.int64)
        self.child_lo = tree.child_offsets[:-1].astype(np.int64)
        self.num_children = np.diff(tree.child_offsets).astype(np.int64)
        self.max_children = int(self.num_children.max(initial=1))
        utility = np.zeros((2, tree.num_histories))
        utility[:, tree.terminal_history] = tree.terminal_utility.T
        self.utility = utility
        self.chance_prob = tree.history_chance_prob.astype(np.float64)

    def _children(self, histories: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[n, C] child ids (padded with 0) and their validity mask."""
        offsets = np.arange(self.max_children)
        valid = offsets[None, :] < self.num_children[histories][:, None]
        children = np.where(valid, self.child_lo[histories][:, None] + offsets[None, :], 0)
        return children, valid

    def _sample_child(self, histories: np.ndarray, weights: np.ndarray, valid: np.ndarray, children, rng):
        """One child per row with probability proportional to `weights` [n, C]."""
        weights = np.where(valid, weights, 0.0)
        cumulative = np.cumsum(weights, axis=1)
        draws = rng.random(len(histories)) * cumulative[:, -1]
        index = (cumulative <= draws[:, None]).sum(axis=1)
        index = np.minimum(index, self.num_children[histories] - 1)  # guards rounding at the top
        return children[np.arange(len(histories)), index]

    def traverse(self, traverser: int, count: int, strategy: np.ndarray, rng: np.random.Generator) -> VectorSamples:
        """Runs `count` external-sampling traversals for `traverser`: down the
        tree level by level (sampling at chance and opponent nodes, every child
        at the traverser's), then values and regrets back up (Algorithm 2).

        Args:
          strategy: [num_infosets, A] sigma^t for every infoset of the tree
            (zero at illegal actions, rows summing to 1).
        """
        levels = []  # per depth: (histories, parent visit index in previous level)
        histories = np.zeros(int(count), dtype=np.int64)
        parents = np.full(int(count), -1, dtype=np.int64)
        strat_inf = []
        while histories.size:
            levels.append((histories, parents))
            histories, parents = self._expand(histories, traverser, strategy, rng, strat_inf)
        adv_inf, adv_reg = self._values_up(levels, traverser, strategy)
        A = self.num_actions
        strat = np.concatenate(strat_inf) if strat_inf else np.zeros(0, dtype=np.int64)
        return VectorSamples(
            advantage_infosets=np.concatenate(adv_inf) if adv_inf else np.zeros(0, dtype=np.int64),
            advantage_regrets=(np.concatenate(adv_reg) if adv_reg else np.zeros((0, A))).astype(np.float32),
            strategy_infosets=strat,
            strategy_probs=strategy[strat].astype(np.float32),
            nodes=int(sum(len(h) for h, _ in levels)),
        )

    def _expand(self, histories, traverser, strategy, rng, strat_inf):
        """The next level's (histories, parent rows); records opponent infosets."""
        player = self.player[histories]
        next_h, next_parent = [], []
        # chance: sample a child by its probability
        rows = np.flatnonzero(player == CHANCE)
        if rows.size:
            h = histories[rows]
            children, valid = self._children(h)
            next_h.append(self._sample_child(h, self.chance_prob[children], valid, children, rng))
            next_parent.append(rows)
        # opponent: sample an action from sigma^t(I), record sigma^t(I)
        rows = np.flatnonzero((player != traverser) & (player >= 0))
        if rows.size:
            h = histories[rows]
            infosets = self.infoset[h]
            strat_inf.append(infosets)
            children, valid = self._children(h)
            weights = strategy[infosets[:, None], self.action[children]]
            next_h.append(self._sample_child(h, weights, valid, children, rng))
            next_parent.append(rows)
        # traverser: every child
        rows = np.flatnonzero(player == traverser)
        if rows.size:
            h = histories[rows]
            children, valid = self._children(h)
            next_h.append(children[valid])
            next_parent.append(np.repeat(rows, self.num_children[h]))
        if not next_h:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(next_h), np.concatenate(next_parent)

    def _values_up(self, levels, traverser, strategy):
        """Bottom-up values; at traverser nodes v(I) = sum_a sigma(I, a) v(I, a)
        and r~(I, a) = v(I, a) - v(I). Returns (infosets, regrets) per level."""
        adv_inf, adv_reg = [], []
        values_below = None
        for depth in range(len(levels) - 1, -1, -1):
            histories, _ = levels[depth]
            player = self.player[histories]
            values = np.where(player == TERMINAL, self.utility[traverser][histories], 0.0)
            if values_below is not None:
                child_h, child_parent = levels[depth + 1]
                is_traverser_parent = self.player[histories[child_parent]] == traverser
                passed = ~is_traverser_parent  # sampled nodes (chance, opponent) pass their child's value up
                values[child_parent[passed]] = values_below[passed]
                t_children = np.flatnonzero(is_traverser_parent)
                if t_children.size:
                    parent_rows = child_parent[t_children]
                    child_actions = self.action[child_h[t_children]]
                    child_values = values_below[t_children]
                    weighted = strategy[self.infoset[histories[parent_rows]], child_actions] * child_values
                    expected = np.bincount(parent_rows, weights=weighted, minlength=len(histories))
                    values[player == traverser] = expected[player == traverser]
                    t_rows = np.flatnonzero(player == traverser)
                    position = np.full(len(histories), -1, dtype=np.int64)
                    position[t_rows] = np.arange(t_rows.size)
                    regrets = np.zeros((t_rows.size, self.num_actions))
                    regrets[position[parent_rows], child_actions] = child_values - expected[parent_rows]
                    adv_inf.append(self.infoset[histories[t_rows]])
                    adv_reg.append(regrets)
            values_below = values
        return adv_inf, adv_reg
