"""Exact (tabular) team regret minimizers: CFR-MIX's product-form decomposition
with a perfect regressor, and the individual-agents baseline.

CFR-MIX (Li et al. 2021) keeps one non-negative cumulative regret R_i(I, a_i)
per agent and reads the team's joint regret as their product (eq. 4,
R_tot(I, a) = prod_i R_i(I, a_i)); the team plays the product of the agents'
normalised R_i (eqs. 5-6, Theorem 2). Section 4.3 sets tabular CFR aside
because solving eq. 4 for the R_i "is a non-linear equation which is
difficult to be solved efficiently", and trains networks on the loss of
Algorithm 1 line 8 instead:

    L = sum_a ((R(. | theta^t) + r~)^+ (a) - R(. | theta^{t+1})(a))^2.

Minimising that loss exactly at every team information set (no sampling, no
network error, no memory) is a well-defined tabular algorithm: the best
non-negative rank-one (product-form) fit of the new RM+ target
T = (prod_i R_i^t + r^t)^+ over the joint actions,

    R^{t+1} = argmin_{R_i >= 0} sum_a (T(a) - prod_i R_i(a_i))^2,

found by alternating least squares (each agent's factor in closed form given
the others', warm-started from the previous factors; every update stays
non-negative because T >= 0). It is what CFR-MIX converges to as its
networks, memories and probes become perfect, so it separates what the
product-form decomposition does to CFR from what sampling and function
approximation do.

`IndependentRegretMatching` is the paper's "every agent learns its strategy
independently" baseline with exact values: agent i runs RM+ on its own
counterfactual regrets r_i(a_i) = sum_{a_-i} sigma_-i(a_-i) v(a_i, a_-i) - v(I).

Both minimizers are local regret minimizers for `driver.TabularCFR` (same protocol as
`regret.minimizers.RegretMatching`) over the team player's infosets, whose
actions are joint actions numbered with agent 0 least significant
(`openspiel_cfrx.team`). `initial_noise > 0` starts every agent's factor at
`initial_noise * U(0, 1)` per action (seeded) instead of 0: a tie-breaker that
makes the otherwise exchangeable agents distinguishable from iteration 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from openspiel_cfrx import team
from openspiel_cfrx.regret.minimizers import RegretMatching, _normalise_positive
from openspiel_cfrx.tabular.solvers import TabularSolver, _legal
from openspiel_cfrx.tree import best_response


class _AgentAxes:
    """Joint actions [n_inf, J] <-> per-agent axes [n_inf, A_{n-1}, ..., A_0]."""

    def __init__(self, legal: np.ndarray, radices: Sequence[int]):
        self.radices = tuple(int(r) for r in radices)
        self.n = len(self.radices)
        self.joint = int(np.prod(self.radices))
        if legal.shape[1] < self.joint:
            raise ValueError(
                f"team infosets have {legal.shape[1]} action columns but the agents' radices "
                f"{self.radices} give {self.joint} joint actions; is this the team player of a team game?"
            )
        if legal[:, self.joint :].any():
            raise ValueError(f"a team infoset has a legal action id >= {self.joint} (the product of the radices)")
        self.legal = legal
        grid = self.to_grid(legal[:, : self.joint])
        # Agent i's action is legal iff some legal joint action uses it (legal sets are products).
        self.agent_legal = [grid.any(axis=tuple(k for k in range(1, self.n + 1) if k != self.axis(i))) for i in range(self.n)]
        product = self.product([m.astype(float) for m in self.agent_legal]) > 0
        if not np.array_equal(product, legal[:, : self.joint]):
            raise ValueError("a team infoset's legal joint actions are not the product of its agents' legal actions")

    def axis(self, agent: int) -> int:
        return self.n - agent  # agent 0 is the last (least significant) axis

    def to_grid(self, joint: np.ndarray) -> np.ndarray:
        return joint.reshape(joint.shape[0], *reversed(self.radices))

    def product(self, factors: Sequence[np.ndarray]) -> np.ndarray:
        """[n_inf, A_i] per agent -> [n_inf, J] products (agent 0 least significant)."""
        out = np.ones((factors[0].shape[0],) + (1,) * self.n)
        for i, f in enumerate(factors):
            shape = [f.shape[0]] + [1] * self.n
            shape[self.axis(i)] = f.shape[1]
            out = out * f.reshape(shape)
        return out.reshape(out.shape[0], -1)

    def contract(self, grid: np.ndarray, factors: Sequence[np.ndarray], keep: int) -> np.ndarray:
        """sum over every agent but `keep` of grid * prod_{j != keep} factor_j: [n_inf, A_keep]."""
        letters = [chr(ord("a") + i) for i in range(self.n)]
        grid_subscripts = "z" + "".join(reversed(letters))
        operands, subscripts = [grid], [grid_subscripts]
        for j in range(self.n):
            if j != keep:
                operands.append(factors[j])
                subscripts.append("z" + letters[j])
        return np.einsum(",".join(subscripts) + "->z" + letters[keep], *operands)

    def marginals(self, joint: np.ndarray) -> list[np.ndarray]:
        """Per-agent marginals of joint distributions [n_inf, J]."""
        grid = self.to_grid(joint[:, : self.joint])
        return [grid.sum(axis=tuple(k for k in range(1, self.n + 1) if k != self.axis(i))) for i in range(self.n)]

    def strategy(self, factors: Sequence[np.ndarray]) -> np.ndarray:
        """Eqs. 5-6: the product of each agent's normalised factor, as [n_inf, A] rows."""
        marginals = [_normalise_positive(f, legal) for f, legal in zip(factors, self.agent_legal, strict=True)]
        out = np.zeros(self.legal.shape)
        out[:, : self.joint] = self.product(marginals)
        return out


def _initial_factors(axes: _AgentAxes, noise: float, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [noise * rng.random(legal.shape) * legal for legal in axes.agent_legal]


def _instant_regret(cf_values, infoset_values, tie_tolerance, joint):
    instant = cf_values[:, :joint] - infoset_values[:, None]
    if tie_tolerance is not None:  # exact ties stay exact (see regret.variants.TIE_TOLERANCE)
        np.copyto(instant, 0.0, where=np.abs(instant) <= tie_tolerance[:, None])
    return instant


class ProductFormRegretMatching:
    """CFR-MIX with a perfect regressor: RM+ targets fitted in product form.

    observe: T = (prod_i R_i + r)^+ on legal joint actions (Algorithm 1
    line 8's target), then R_i <- best non-negative rank-one fit of T
    (`sweeps` rounds of alternating least squares from the previous factors;
    an all-zero factor restarts from its legal ones). next_strategy: eqs. 5-6.

    `feedback=False` is Deep CFR + mixing layer with a perfect regressor:
    Deep CFR regresses its memory of every sampled regret (Brown et al. 2019,
    Algorithm 1, linear weighting), so the target is the exact cumulative
    sum_t t r^t (signed, no RM+), kept here, and the fit's error never feeds
    into the next target; the fit is non-negative least squares (the mixing
    layer's outputs are non-negative).
    """

    predictive = False

    def __init__(self, legal: np.ndarray, radices: Sequence[int], initial_noise: float = 0.0, seed: int = 0,
                 sweeps: int = 30, feedback: bool = True):  # fmt: skip
        self.axes = _AgentAxes(legal, radices)
        self.sweeps = int(sweeps)
        self.feedback = bool(feedback)
        self._factors = _initial_factors(self.axes, float(initial_noise), seed)
        self.last_fit_error = 0.0  # relative squared error of the last fit (0: T was product-form)
        if not self.feedback:
            self.cumulative = np.zeros((legal.shape[0], self.axes.joint))
        self.state_arrays = ("factors",) if self.feedback else ("factors", "cumulative")

    @property
    def factors(self) -> np.ndarray:
        """The agents' R_i stacked as [n_inf, n, max A_i] (checkpoint view)."""
        width = max(self.axes.radices)
        out = np.zeros((self.axes.legal.shape[0], self.axes.n, width))
        for i, f in enumerate(self._factors):
            out[:, i, : f.shape[1]] = f
        return out

    @factors.setter
    def factors(self, stacked: np.ndarray) -> None:
        self._factors = [np.array(stacked[:, i, :r]) for i, r in enumerate(self.axes.radices)]

    def joint_regret(self) -> np.ndarray:
        """R_tot = prod_i R_i (eq. 4) on every team infoset: [n_inf, J]."""
        return self.axes.product(self._factors)

    def observe(self, t, cf_values, infoset_values, strategy, tie_tolerance=None):
        axes = self.axes
        instant = _instant_regret(cf_values, infoset_values, tie_tolerance, axes.joint)
        if self.feedback:  # CFR-MIX: the new target is built on the previous fit
            target = np.maximum(self.joint_regret() + instant, 0.0)
        else:  # Deep CFR + MIX: the fit is recomputed from every (linearly weighted) regret so far
            self.cumulative += t * instant
            target = self.cumulative.copy()
        target *= axes.legal[:, : axes.joint]
        grid = axes.to_grid(target)
        factors = [np.where(f.sum(axis=1, keepdims=True) > 0, f, legal.astype(float))
                   for f, legal in zip(self._factors, axes.agent_legal, strict=True)]  # fmt: skip
        for _ in range(self.sweeps):
            for i in range(axes.n):
                others = np.ones(target.shape[0])
                for j in range(axes.n):
                    if j != i:
                        others = others * (factors[j] ** 2).sum(axis=1)
                numerator = axes.contract(grid, factors, keep=i)
                if not self.feedback:  # signed target: projected (non-negative) least squares
                    np.maximum(numerator, 0.0, out=numerator)
                factors[i] = np.divide(numerator, others[:, None], out=np.zeros_like(numerator), where=others[:, None] > 0)
        self._factors = factors
        residual = ((axes.product(factors) - target) ** 2).sum()
        total = (target**2).sum()
        self.last_fit_error = float(residual / total) if total > 0 else 0.0

    def next_strategy(self, t, lo, hi, prediction=None):
        return self.axes.strategy([f[lo:hi] for f in self._factors])


class IndependentRegretMatching:
    """Each agent runs RM+ on its own counterfactual regrets, the teammates'
    current strategies held fixed (the paper's individual-agents baseline)."""

    predictive = False
    state_arrays = ("factors",)

    def __init__(self, legal: np.ndarray, radices: Sequence[int], initial_noise: float = 0.0, seed: int = 0):
        self.axes = _AgentAxes(legal, radices)
        self._factors = _initial_factors(self.axes, float(initial_noise), seed)

    factors = ProductFormRegretMatching.factors

    def observe(self, t, cf_values, infoset_values, strategy, tie_tolerance=None):
        axes = self.axes
        instant = _instant_regret(cf_values, infoset_values, tie_tolerance, axes.joint) * axes.legal[:, : axes.joint]
        played = axes.marginals(strategy)  # the product's marginals are the agents' strategies
        grid = axes.to_grid(instant)
        for i in range(axes.n):
            # r_i(a_i) = sum_{a_-i} sigma_-i(a_-i) (v(a) - v(I))
            regret_i = axes.contract(grid, played, keep=i)
            self._factors[i] = np.maximum(self._factors[i] + regret_i, 0.0) * axes.agent_legal[i]

    def next_strategy(self, t, lo, hi, prediction=None):
        return self.axes.strategy([f[lo:hi] for f in self._factors])


def product_of_marginals(strategy: np.ndarray, legal: np.ndarray, radices: Sequence[int]) -> np.ndarray:
    """Team rows [n_inf, A] -> the product of their per-agent marginals (how
    CFR-MIX plays an average strategy: one average network per agent)."""
    axes = _AgentAxes(legal, radices)
    out = np.zeros(strategy.shape)
    out[:, : axes.joint] = axes.product(axes.marginals(strategy))
    return out


TEAM_REGRETS = ("joint", "product", "product_no_feedback", "independent")


class TeamCFRSolver(TabularSolver):
    """CFR+ on a team-adversary game with the team's regrets kept four ways.

    The team (player `team.TEAM_PLAYER`, one player of the 2-player zero-sum
    game whose actions are joint actions) keeps its regrets

      * "joint": one cumulative regret per joint action (CFR+ on the team as
        one player; converges to a team-maxmin equilibrium with correlation);
      * "product": CFR-MIX with a perfect regressor (`ProductFormRegretMatching`);
      * "product_no_feedback": Deep CFR + mixing layer with a perfect regressor
        (`ProductFormRegretMatching(feedback=False)`);
      * "independent": per agent, RM+ on its own regrets (`IndependentRegretMatching`).

    The adversary runs RM+. Alternating updates and linear averaging, as
    `CFRPlusSolver`. `average_strategy()` is the reach-weighted average joint
    strategy (a correlated team strategy); `product_average_strategy()` is how
    CFR-MIX plays its average: the product of each agent's average marginal.

    Args:
      game: a factored team game (`openspiel_cfrx.team` protocol) small enough
        to extract.
      team_regrets: "joint", "product", "product_no_feedback" or "independent".
      initial_noise: agents' initial regrets ~ initial_noise * U(0, 1) per
        action (0: the symmetric start every CFR variant uses).
      seed: seeds the initial noise.
    """

    def __init__(self, game, team_regrets: str = "product", initial_noise: float = 0.0, seed: int = 0,
                 alternating_updates: bool = True, averaging="linear"):  # fmt: skip
        if team_regrets not in TEAM_REGRETS:
            raise ValueError(f"team_regrets must be one of {', '.join(TEAM_REGRETS)}; got {team_regrets!r}")
        if not team.is_factored_team_game(game):
            raise ValueError(
                f"{game} is not a factored team game (it lacks agent_num_actions() and the rest of the "
                "openspiel_cfrx.team protocol); TeamCFRSolver needs the agents' individual actions"
            )
        initial_noise = float(initial_noise)
        if not np.isfinite(initial_noise) or initial_noise < 0:
            raise ValueError(f"initial_noise must be finite and >= 0, got {initial_noise}")
        self.team_regrets, self.radices = team_regrets, tuple(int(r) for r in game.agent_num_actions())

        def make(tree, p):
            legal = _legal(tree, p)
            if p != team.TEAM_PLAYER or team_regrets == "joint":
                return RegretMatching(legal, plus=True)
            if team_regrets == "independent":
                return IndependentRegretMatching(legal, self.radices, initial_noise, seed)
            return ProductFormRegretMatching(legal, self.radices, initial_noise, seed,
                                             feedback=team_regrets == "product")  # fmt: skip

        super().__init__(game, make, alternating_updates, averaging,
                         {"team_regrets": team_regrets, "initial_noise": initial_noise, "seed": int(seed)})  # fmt: skip

    def product_average_strategy(self) -> np.ndarray:
        """The average strategy with every team row replaced by the product of
        its agents' average marginals (CFR-MIX's deployed average)."""
        strategy = self.average_strategy()
        lo, hi = self._tree.infoset_range[team.TEAM_PLAYER]
        strategy[lo:hi] = product_of_marginals(strategy[lo:hi], _legal(self._tree, team.TEAM_PLAYER), self.radices)
        return strategy

    def nash_conv_of(self, strategy: np.ndarray) -> float:
        """Exact NashConv of a [num_infosets, num_actions] strategy on this game's tree."""
        return float(best_response(self._tree, strategy).nash_conv)

    @property
    def product_fit_error(self) -> float | None:
        """"product" modes only: relative squared error sum (T - prod R_i)^2 / sum T^2 of
        the last iteration's fit, over all team infosets (0 when the RM+ target
        was already product-form; for "product_no_feedback" the target is the
        signed cumulative regret, whose negative entries a non-negative product
        cannot fit, so values near 1 are normal there); None for the other modes."""
        minimizer = self._driver.minimizers[team.TEAM_PLAYER]
        return minimizer.last_fit_error if isinstance(minimizer, ProductFormRegretMatching) else None
