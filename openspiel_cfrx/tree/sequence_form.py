"""Sequence-form computations on a `GameTree`: realization plans, expected
payoffs, counterfactual values and exact best responses.

Notation (shapes): N infosets, A actions, S = N * A + 2 sequences.
A behavioural strategy profile is one array `strategy [N, A]` holding both
players' rows. Its realization plan `x [S]` gives, for each sequence (I, a) of
player p, the product of p's own probabilities along the sequence (empty
sequences have x = 1).

For player p, `gradient = payoff @ x` gives at each of p's sequences s the
chance- and opponent-weighted utility of the terminals whose last p-sequence is
s. Propagating bottom-up over p's infosets,

    value(I) = sum_a strategy[I, a] * gradient[I, a]     (expectation), or
    value(I) = max_a gradient[I, a]                      (best response),
    gradient[parent_sequence(I)] += value(I),

turns `gradient[I, a]` into the counterfactual value of taking a at I
(Zinkevich et al. 2007), i.e. the sum over h in I of pi_{-p}(h) * v_p(h a), and
`gradient[empty_p]` into p's expected (resp. best-response) value. This is the
sequence-form view of CFR used by Farina et al. (2019); each pass is a few
vectorised numpy operations per level of the infoset tree.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from openspiel_cfrx.tree.game_tree import GameTree


def realization_plan(tree: GameTree, strategy: np.ndarray) -> np.ndarray:
    """Realization plans of both players in one vector.

    Args:
      strategy: [N, A] behavioural strategy (rows of both players).

    Returns:
      x: [S] with x[I * A + a] = x[parent_sequence(I)] * strategy[I, a] and
        x[empty_p] = 1.
    """
    num_flat = tree.num_infosets * tree.num_actions
    x = np.empty(tree.num_sequences, dtype=np.float64)
    x[num_flat:] = 1.0
    plan = x[:num_flat].reshape(tree.num_infosets, tree.num_actions)
    for level, parent_seq in zip(tree.infoset_levels, tree.level_parent_sequence, strict=True):
        plan[level] = x[parent_seq, None] * strategy[level]
    return x


def propagate_values(
    tree: GameTree,
    gradient: np.ndarray,
    strategy: np.ndarray | None,
    players: tuple[int, ...] = (0, 1),
) -> np.ndarray:
    """Bottom-up pass turning sequence payoffs into counterfactual values, in place.

    Args:
      gradient: [S] sequence payoffs (`tree.payoff @ x`); overwritten with
        counterfactual values of every sequence, and with the root value at
        `tree.empty_sequence[p]`.
      strategy: [N, A] to take expectations with, or None for best response (max
        over legal actions).
      players: only infosets of these players are propagated.

    Returns:
      infoset_values: [N] counterfactual value of each infoset (under `strategy`
        or under the best response); 0 for infosets of skipped players.
    """
    num_infosets, num_actions = tree.num_infosets, tree.num_actions
    cf_values = gradient[: num_infosets * num_actions].reshape(num_infosets, num_actions)
    infoset_values = np.zeros(num_infosets, dtype=np.float64)
    both = len(players) == 2
    for d in range(len(tree.infoset_levels) - 1, -1, -1):
        level = tree.infoset_levels[d]
        parent_seq = tree.level_parent_sequence[d]
        if not both:
            keep = tree.infoset_player[level] == players[0]
            level, parent_seq = level[keep], parent_seq[keep]
        level_values = cf_values[level]
        if strategy is None:
            legal = tree.level_legal_mask[d] if both else tree.infoset_legal_mask[level]
            values = np.where(legal, level_values, -np.inf).max(axis=1)
        else:
            values = np.einsum("ij,ij->i", level_values, strategy[level])
        infoset_values[level] = values
        np.add.at(gradient, parent_seq, values)
    return infoset_values


@dataclasses.dataclass
class BestResponseResult:
    """Exact best-response information for a strategy profile.

    All values are for the player named by the index, in the game's utility
    units (chips for poker).
    """

    best_response_values: np.ndarray  # [2] value of p's best response vs the other's strategy
    on_policy_values: np.ndarray  # [2] value of the profile itself
    best_response_strategy: np.ndarray  # [N, A] pure strategy, rows of both players

    @property
    def player_improvements(self) -> np.ndarray:
        return self.best_response_values - self.on_policy_values

    @property
    def nash_conv(self) -> float:
        """OpenSpiel's NashConv: sum over players of best-response gains."""
        return float(np.sum(self.player_improvements))


def best_response(tree: GameTree, strategy: np.ndarray) -> BestResponseResult:
    """Exact best responses of both players against `strategy [N, A]`."""
    x = realization_plan(tree, strategy)
    gradient = tree.payoff @ x
    on_policy = np.bincount(tree.sequence_owner, weights=x * gradient, minlength=2)
    propagate_values(tree, gradient, None)
    best_values = gradient[tree.empty_sequence].copy()
    cf_values = gradient[: tree.num_infosets * tree.num_actions].reshape(
        tree.num_infosets, tree.num_actions
    )
    best_actions = np.where(tree.infoset_legal_mask, cf_values, -np.inf).argmax(axis=1)
    br_strategy = np.zeros((tree.num_infosets, tree.num_actions))
    br_strategy[np.arange(tree.num_infosets), best_actions] = 1.0
    return BestResponseResult(
        best_response_values=best_values,
        on_policy_values=on_policy,
        best_response_strategy=br_strategy,
    )
