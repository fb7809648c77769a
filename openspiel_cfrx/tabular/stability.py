"""Stability schedule of stable-predictive CFR (Farina, Kroer, Brown & Sandholm,
ICML 2019, Section 5.1, eqs. 14-16), computed on a player's infoset tree.

The player's sequential decision process alternates decision nodes j (our
infosets, n_j = number of legal actions) and observation nodes k = rho(j, a)
(our sequences (j, a); their children C_k are the infosets whose parent
sequence is (j, a), n_k = |C_k|). As in the paper's Figure 1 (Kuhn poker, X0
with the single action "start"), the process is rooted at a virtual decision
node r with one action whose observation node is our empty sequence, so the
first real decision points sit below an observation node.

    gamma_r = kappa_star
    gamma_v = gamma_u / (2 sqrt(n_u))  if u is a decision node      (14)
    gamma_v = gamma_u / sqrt(n_u)      if u is an observation node  (14)
    kappa_j = gamma_j / (2 sqrt(n_j) B_j)                           (15)
    B_k = sqrt(sum_{j in C_k} B_j^2),  B_j = sqrt(1 + max_{k in C_j} B_k^2)   (16)

With losses of dual norm at most 1/3, OFTRL's stepsize is eta_j = kappa_j.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from openspiel_cfrx.tree.game_tree import GameTree


@dataclasses.dataclass
class StabilitySchedule:
    """Per-infoset quantities of eqs. 14-16 for one player; arrays are [hi - lo]
    over the player's infoset range (tree order)."""

    kappa_star: float
    gamma: np.ndarray  # gamma_j of each decision node
    norm_bound: np.ndarray  # B_j
    kappa: np.ndarray  # kappa_j (= eta_j for losses scaled to 1/3)
    root_observation_gamma: float  # gamma of the empty-sequence observation node
    root_observation_bound: float  # B of the empty-sequence observation node


def stability_schedule(tree: GameTree, player: int, kappa_star: float) -> StabilitySchedule:
    if not kappa_star > 0:
        raise ValueError(f"kappa_star must be > 0, got {kappa_star}")
    lo, hi = tree.infoset_range[player]
    offsets = tree.level_offsets[player]
    num_actions = tree.num_actions
    legal = tree.infoset_legal_mask[lo:hi]
    n_actions = legal.sum(axis=1).astype(np.float64)  # n_j
    parent = tree.infoset_parent_sequence[lo:hi]
    root_seq = tree.empty_sequence[player]
    # Local index of each infoset's parent observation node: (I - lo) * A + a,
    # or the extra last slot for the empty sequence.
    num_obs = (hi - lo) * num_actions + 1
    parent_obs = np.where(parent == root_seq, num_obs - 1, parent - lo * num_actions)
    children_count = np.bincount(parent_obs, minlength=num_obs).astype(np.float64)  # n_k

    # Bottom-up bounds (16).
    bound = np.zeros(hi - lo)  # B_j
    obs_bound_sq = np.zeros(num_obs)  # B_k^2
    for d in range(len(offsets) - 2, -1, -1):
        a, b = offsets[d] - lo, offsets[d + 1] - lo
        child_sq = obs_bound_sq[: (hi - lo) * num_actions].reshape(hi - lo, num_actions)[a:b]
        bound[a:b] = np.sqrt(1.0 + np.where(legal[a:b], child_sq, 0.0).max(axis=1))
        np.add.at(obs_bound_sq, parent_obs[a:b], bound[a:b] ** 2)

    # Top-down gammas (14), from the virtual root decision node with one action.
    root_obs_gamma = kappa_star / (2.0 * np.sqrt(1.0))
    obs_gamma = np.zeros(num_obs)
    obs_gamma[-1] = root_obs_gamma
    gamma = np.zeros(hi - lo)
    for d in range(len(offsets) - 1):
        a, b = offsets[d] - lo, offsets[d + 1] - lo
        k = parent_obs[a:b]
        gamma[a:b] = obs_gamma[k] / np.sqrt(children_count[k])
        child_gamma = gamma[a:b] / (2.0 * np.sqrt(n_actions[a:b]))
        obs_view = obs_gamma[: (hi - lo) * num_actions].reshape(hi - lo, num_actions)
        obs_view[a:b] = np.where(legal[a:b], child_gamma[:, None], 0.0)

    kappa = gamma / (2.0 * np.sqrt(n_actions) * bound)
    return StabilitySchedule(
        kappa_star=float(kappa_star),
        gamma=gamma,
        norm_bound=bound,
        kappa=kappa,
        root_observation_gamma=float(root_obs_gamma),
        root_observation_bound=float(np.sqrt(obs_bound_sq[-1])),
    )
