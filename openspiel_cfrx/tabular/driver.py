"""One tabular CFR driver over the array game tree, with pluggable local regret
minimizers (see `openspiel_cfrx.regret`).

An iteration, for each updated player p (both at once with simultaneous
updates, 0 then 1 with alternating updates):

1. realization plans x of the current strategies (top-down pass);
2. p's sequence payoffs against the opponent's plan (one sparse mat-vec);
3. counterfactual values under the current strategy (bottom-up pass), handed
   to p's regret minimizer with a tolerance under which a regret is an exact
   tie (`regret.variants.TIE_TOLERANCE`);
4. the average-strategy accumulator gains weight(t) * x_p (the reach-weighted
   strategy, as in OpenSpiel's `cumulative_policy`);
5. the next strategy: one vectorised call for non-predictive minimizers, or a
   second bottom-up pass that decides level by level from the counterfactual
   prediction built with the subtree's new decisions (predictive minimizers;
   the prediction of the sequence-form utility is the last one, m^{t+1} = l^t).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyspiel

from openspiel_cfrx.regret.variants import TIE_TOLERANCE, averaging_weight
from openspiel_cfrx.tree import (
    GameTree,
    get_tree,
    propagate_values,
    realization_plan,
    sequence_payoffs_and_reach,
    uniform_strategy,
)


class TabularCFR:
    """CFR-family driver.

    Args:
      game: pyspiel.Game (its tree is extracted once and cached) or a GameTree.
      make_minimizer: `(tree, player) -> minimizer` for the player's infosets
        `tree.infoset_range[player]`.
      alternating_updates: update player 0 then player 1 (the second sees the
        first's new strategy) instead of both at once.
      averaging: "uniform", "linear", "quadratic" or a callable t -> weight.
    """

    def __init__(
        self,
        game: pyspiel.Game | GameTree,
        make_minimizer: Callable[[GameTree, int], object],
        alternating_updates: bool = True,
        averaging: str | Callable[[int], float] = "uniform",
    ):
        self.tree = game if isinstance(game, GameTree) else get_tree(game)
        if not isinstance(alternating_updates, bool):
            raise TypeError(f"alternating_updates must be a bool, got {alternating_updates!r}")
        self.alternating_updates = alternating_updates
        self._weight = averaging_weight(averaging)
        self.minimizers = [make_minimizer(self.tree, p) for p in (0, 1)]
        self.strategy = uniform_strategy(self.tree)  # [N, A] current strategies
        self.average_accumulator = np.zeros_like(self.strategy)  # [N, A]
        self.iteration = 0

    def iterate(self) -> None:
        """Runs one iteration (both players)."""
        self.iteration += 1
        t = self.iteration
        weight = self._weight(t)
        if not np.isfinite(weight) or weight < 0:
            raise ValueError(f"averaging weight at iteration {t} is {weight}; must be finite and >= 0")
        groups = ((0,), (1,)) if self.alternating_updates else ((0, 1),)
        tree, num_actions = self.tree, self.tree.num_actions
        for players in groups:
            x = realization_plan(tree, self.strategy)
            plan = x[: tree.num_infosets * num_actions].reshape(tree.num_infosets, num_actions)
            updates = []
            for p in players:
                lo, hi = tree.infoset_range[p]
                minimizer = self.minimizers[p]
                predictive = getattr(minimizer, "predictive", False)
                payoffs, reach = sequence_payoffs_and_reach(tree, x, p)
                cf = payoffs.copy() if predictive else payoffs
                infoset_values = propagate_values(tree, p, cf, self.strategy)
                cf_values = cf[:-1].reshape(hi - lo, num_actions)
                reach *= TIE_TOLERANCE * tree.max_abs_utility  # -> tie tolerance
                minimizer.observe(t, cf_values, infoset_values, self.strategy[lo:hi], reach)
                self.average_accumulator[lo:hi] += weight * plan[lo:hi]
                if predictive:
                    new = np.empty((hi - lo, num_actions))

                    def decide(a, b, prediction, minimizer=minimizer, new=new, lo=lo):
                        level = minimizer.next_strategy(t, a - lo, b - lo, prediction)
                        new[a - lo : b - lo] = level
                        return level

                    propagate_values(tree, p, payoffs, decide)
                else:
                    new = minimizer.next_strategy(t, 0, hi - lo, None)
                updates.append((lo, hi, new))
            for lo, hi, new in updates:
                self.strategy[lo:hi] = new

    def average_strategy(self) -> np.ndarray:
        """Normalised average strategy [N, A]; uniform where nothing accumulated."""
        acc = self.average_accumulator
        total = acc.sum(axis=1, keepdims=True)
        uniform = uniform_strategy(self.tree)
        return np.where(total > 0, acc / np.where(total > 0, total, 1.0), uniform)
