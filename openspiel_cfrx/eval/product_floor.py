"""The product-form floor of a team-adversary game.

CFR-MIX's team strategies are *product form*: at every team information set
the joint action's probability is the product of the agents' individual
probabilities (Li et al. 2021, eq. 1). The best such team, judged by its
worst case (the adversary best-responding), has value

    V_prod = max over product-form team strategies sigma of min over adversary strategies of u_team,

which can be below the game value V* (the team as one player, joint actions
correlated at each information set). No product-form solver can do better
than V_prod, so a variant's worst-case utility is better judged against
V_prod than against V*; the gap V* - V_prod is the price of the product form.

V* is exact (CFR+ on the extracted game until its NashConv is below
`tolerance`; the value of its average profile is within NashConv of V*).
V_prod is a non-concave maximisation; `product_form_floor` runs projected
supergradient ascent on the agents' individual strategies from several
random starts and returns the best worst case found: a *lower bound* on
V_prod (an achieved value, re-evaluated exactly), not V_prod itself.

The gradient: with the adversary's best response y fixed (Danskin), the
team's value is multilinear in its behaviour strategy; its derivative with
respect to sigma(I, a) is the team's reach of I times the counterfactual
value of a at I (`tree.propagate_values`), and the chain rule through
sigma(I, (a_1..a_n)) = prod_i s_i(I, a_i) gives each agent's derivative.
Ascent runs on softmax logits of s_i(I, .) over the agent's legal actions.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pyspiel

from openspiel_cfrx.team import TEAM_PLAYER, is_factored_team_game
from openspiel_cfrx.tree import best_response, get_tree, strategy_from_policy
from openspiel_cfrx.tree.sequence_form import (
    own_plan,
    propagate_values,
    realization_plan,
    sequence_payoffs,
)

ADVERSARY = 1 - TEAM_PLAYER


@dataclasses.dataclass
class ProductFloorResult:
    game_value: float  # V*: team as one player (correlated joint actions), from CFR+
    game_value_error: float  # |value - V*| <= this (the CFR+ average's NashConv)
    product_value: float  # best product-form worst case found: a lower bound on V_prod
    restart_values: list[float]  # each start's final worst case
    strategy: np.ndarray  # [N, A] the best product-form team rows (adversary rows: its best response)
    seconds: float

    @property
    def price_of_product_form(self) -> float:
        """V* - (best product value found): an upper bound on V* - V_prod."""
        return self.game_value - self.product_value


def correlated_value(game: pyspiel.Game, tolerance: float = 1e-6, max_iterations: int = 100_000) -> tuple[float, float]:
    """(V*, error bound): the team-as-one-player game value by CFR+ to NashConv <= tolerance."""
    from openspiel_cfrx.tabular import make_solver

    tree = get_tree(game)
    solver = make_solver("cfr+", game)
    iterations, check = 0, 50
    while True:
        for _ in range(check):
            solver.evaluate_and_update_policy()
        iterations += check
        result = best_response(tree, strategy_from_policy(tree, solver.average_policy()))
        if result.nash_conv <= tolerance or iterations >= max_iterations:
            return float(result.on_policy_values[TEAM_PLAYER]), float(result.nash_conv)
        check = min(2 * check, 2000)


class _ProductForm:
    """Team rows [n_team, A] as products of per-agent softmaxes over legal individual actions."""

    def __init__(self, game, tree):
        lo, hi = tree.infoset_range[TEAM_PLAYER]
        self.lo, self.hi, self.A = lo, hi, tree.num_actions
        radices = tuple(game.agent_num_actions())
        self.n = len(radices)
        legal = tree.infoset_legal_mask[lo:hi]
        joint = np.arange(self.A)
        digits = np.stack([np.array(game.decode_joint_action(int(j))) if j < int(np.prod(radices)) else
                           np.zeros(self.n, dtype=int) for j in joint])  # fmt: skip  # [A, n]
        self.digits = digits
        # Agent i's legal individual actions at each team infoset: those of some legal joint action.
        self.agent_legal = []
        for i in range(self.n):
            mask = np.zeros((hi - lo, radices[i]), dtype=bool)
            rows, cols = np.nonzero(legal)
            mask[rows, digits[cols, i]] = True
            self.agent_legal.append(mask)
        self.legal = legal
        product = np.broadcast_to(joint < int(np.prod(radices)), legal.shape).copy()
        for i in range(self.n):
            product &= self.agent_legal[i][:, digits[:, i]]
        if not np.array_equal(product, legal):
            raise ValueError("the team's legal joint actions are not the product of the agents' legal actions")

    def marginals(self, logits):
        out = []
        for i in range(self.n):
            z = np.where(self.agent_legal[i], logits[i], -np.inf)
            z = np.exp(z - z.max(axis=1, keepdims=True))
            out.append(z / z.sum(axis=1, keepdims=True))
        return out

    def joint(self, marginals) -> np.ndarray:
        rows = np.ones((self.hi - self.lo, self.A))
        for i, m in enumerate(marginals):
            rows *= m[:, self.digits[:, i]]
        return rows * self.legal


def _worst_case(tree, team_rows, lo, hi):
    """(team's worst-case value, full strategy with the adversary's best response, team realization plan)."""
    strategy = np.zeros((tree.num_infosets, tree.num_actions))
    strategy[lo:hi] = team_rows
    x = realization_plan(tree, strategy)
    payoffs = sequence_payoffs(tree, x, ADVERSARY)
    propagate_values(tree, ADVERSARY, payoffs, None)
    alo, ahi = tree.infoset_range[ADVERSARY]
    cf = payoffs[:-1].reshape(ahi - alo, tree.num_actions)
    best = np.where(tree.infoset_legal_mask[alo:ahi], cf, -np.inf).argmax(axis=1)
    strategy[alo + np.arange(ahi - alo), best] = 1.0
    return -float(payoffs[-1]), strategy


def product_form_floor(game: pyspiel.Game, restarts: int = 8, steps: int = 300, learning_rate: float = 1.0,
                       seed: int = 0, tolerance: float = 1e-6) -> ProductFloorResult:  # fmt: skip
    """V* and the best product-form worst case found (see the module doc)."""
    if not is_factored_team_game(game):
        raise TypeError(f"{game} is not a factored team game (the product form needs the agents' actions)")
    start = time.perf_counter()
    tree = get_tree(game)
    value, error = correlated_value(game, tolerance)
    form = _ProductForm(game, tree)
    lo, hi = form.lo, form.hi
    parent = tree.infoset_parent_sequence[lo:hi]
    rng = np.random.default_rng(seed)
    best_value, best_rows, finals = -np.inf, None, []
    for r in range(restarts):
        logits = [rng.normal(scale=0.0 if r == 0 else 2.0, size=m.shape) for m in form.agent_legal]  # start 0: uniform
        run_best, run_rows = -np.inf, None
        for step in range(steps):
            marginals = form.marginals(logits)
            rows = form.joint(marginals)
            worst, strategy = _worst_case(tree, rows, lo, hi)
            if worst > run_best:
                run_best, run_rows = worst, rows
            # Team counterfactual values against the adversary's best response (Danskin).
            x = realization_plan(tree, strategy)
            payoffs = sequence_payoffs(tree, x, TEAM_PLAYER)
            propagate_values(tree, TEAM_PLAYER, payoffs, strategy)
            cf = payoffs[:-1].reshape(hi - lo, tree.num_actions)
            reach = own_plan(tree, x, TEAM_PLAYER)[np.where(parent >= tree.num_infosets * tree.num_actions,
                                                            -1, parent - lo * tree.num_actions)]  # fmt: skip
            grad_joint = reach[:, None] * cf * form.legal  # d value / d sigma(I, joint)
            step_size = learning_rate / np.sqrt(step + 1)
            for i in range(form.n):
                others = rows / np.where(marginals[i][:, form.digits[:, i]] > 0, marginals[i][:, form.digits[:, i]], 1.0)
                g = np.zeros_like(marginals[i])
                np.add.at(g.T, form.digits[:, i], (grad_joint * others).T)  # d value / d s_i(I, b)
                g_logit = marginals[i] * (g - (marginals[i] * g).sum(axis=1, keepdims=True))  # softmax Jacobian
                scale = np.abs(g_logit).max()
                logits[i] = logits[i] + step_size * g_logit / (scale if scale > 0 else 1.0)
        finals.append(float(run_best))
        if run_best > best_value:
            best_value, best_rows = run_best, run_rows
    worst, strategy = _worst_case(tree, best_rows, lo, hi)  # re-evaluated exactly
    return ProductFloorResult(value, error, float(worst), finals, strategy, time.perf_counter() - start)
