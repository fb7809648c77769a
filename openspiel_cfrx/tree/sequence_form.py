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
from collections.abc import Callable

import numpy as np
import scipy.sparse

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
    parent_sequence = tree.infoset_parent_sequence
    for offsets in tree.level_offsets:
        for lo, hi in zip(offsets[:-1], offsets[1:], strict=True):
            np.multiply(x[parent_sequence[lo:hi], None], strategy[lo:hi], out=plan[lo:hi])
    return x


def sequence_payoffs(tree: GameTree, x: np.ndarray, player: int) -> np.ndarray:
    """Player's payoff per own sequence against the opponent's realization plan.

    Returns:
      [local_size[player]] vector in the player's local sequence space (see
      `GameTree`): entry (I - lo) * A + a sums chance_reach * u_player *
      x_opponent over terminals whose last player-sequence is (I, a); the last
      entry covers terminals reached with the player's empty sequence.
    """
    return tree.payoff[player] @ x


def sequence_payoffs_and_reach(
    tree: GameTree, x: np.ndarray, player: int
) -> tuple[np.ndarray, np.ndarray]:
    """`sequence_payoffs(tree, x, player)` and the counterfactual reach of each of
    the player's infosets (`tree.reach_matrix(player) @ x`) from one sparse
    product with the two matrices stacked (cached on the tree)."""
    cache = tree.__dict__.setdefault("_payoff_and_reach", {})
    stacked = cache.get(player)
    if stacked is None:
        stacked = cache[player] = scipy.sparse.vstack(
            [tree.payoff[player], tree.reach_matrix(player)], format="csr"
        )
    both = stacked @ x
    size = tree.local_size[player]
    return both[:size], both[size:]


def propagate_values(
    tree: GameTree,
    player: int,
    payoffs: np.ndarray,
    strategy: np.ndarray | Callable[[int, int, np.ndarray], np.ndarray] | None,
) -> np.ndarray:
    """Bottom-up pass over the player's infoset tree, in place.

    Args:
      payoffs: [local_size[player]] from `sequence_payoffs`; overwritten so
        that entry (I - lo) * A + a is the counterfactual value of (I, a)
        (sum over h in I of pi_{-p}(h) * v_p(h a)) and the last entry is the
        player's expected value (under `strategy`) or best-response value.
      strategy: [N, A] to take expectations with; None to take the max over
        legal actions (best response); or a callable
        `(lo, hi, cf_values [hi - lo, A]) -> strategy [hi - lo, A]` that decides
        the strategy of infosets lo:hi from their counterfactual values, which
        already include the subtree below them (used by predictive CFR
        variants, whose decisions are built bottom-up: eq. 17 of Farina et al.
        2019).

    Returns:
      infoset_values: [hi - lo] counterfactual value of each of the player's
        infosets (expected under `strategy`, or best-response).
    """
    lo, hi = tree.infoset_range[player]
    offsets = tree.level_offsets[player]
    num_actions = tree.num_actions
    cf_values = payoffs[:-1].reshape(hi - lo, num_actions)
    infoset_values = np.empty(hi - lo, dtype=np.float64)
    local_parent = tree.local_parent[player]
    for d in range(len(offsets) - 2, -1, -1):
        a, b = offsets[d] - lo, offsets[d + 1] - lo
        if strategy is None:
            values = np.where(
                tree.infoset_legal_mask[offsets[d] : offsets[d + 1]], cf_values[a:b], -np.inf
            ).max(axis=1)
        elif callable(strategy):
            level_strategy = strategy(offsets[d], offsets[d + 1], cf_values[a:b])
            values = np.vecdot(cf_values[a:b], level_strategy)
        else:
            values = np.vecdot(cf_values[a:b], strategy[offsets[d] : offsets[d + 1]])
        infoset_values[a:b] = values
        if d == 0:
            payoffs[-1] += values.sum()
        else:
            pa, pb = offsets[d - 1] - lo, offsets[d] - lo
            block = payoffs[pa * num_actions : pb * num_actions]
            block += np.bincount(local_parent[a:b], weights=values, minlength=block.shape[0])
    return infoset_values


def own_plan(tree: GameTree, x: np.ndarray, player: int) -> np.ndarray:
    """The player's part of `x` in its local sequence space: [local_size[player]]."""
    lo, hi = tree.infoset_range[player]
    a = tree.num_actions
    out = np.empty(tree.local_size[player], dtype=np.float64)
    out[:-1] = x[lo * a : hi * a]
    out[-1] = 1.0
    return out


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
    best_values = np.empty(2)
    on_policy = np.empty(2)
    br_strategy = np.zeros((tree.num_infosets, tree.num_actions))
    for p in (0, 1):
        payoffs = sequence_payoffs(tree, x, p)
        on_policy[p] = own_plan(tree, x, p) @ payoffs
        propagate_values(tree, p, payoffs, None)
        best_values[p] = payoffs[-1]
        lo, hi = tree.infoset_range[p]
        cf_values = payoffs[:-1].reshape(hi - lo, tree.num_actions)
        legal = tree.infoset_legal_mask[lo:hi]
        best_actions = np.where(legal, cf_values, -np.inf).argmax(axis=1)
        br_strategy[lo + np.arange(hi - lo), best_actions] = 1.0
    return BestResponseResult(
        best_response_values=best_values,
        on_policy_values=on_policy,
        best_response_strategy=br_strategy,
    )
