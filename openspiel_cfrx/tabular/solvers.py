"""Tabular solvers with OpenSpiel's verbs, on the array engine.

    solver = openspiel_cfrx.OFTRLCFRSolver(game)          # or CFRSolver, CFRPlusSolver, ...
    for _ in range(1000):
        solver.evaluate_and_update_policy()
    exploitability.nash_conv(game, solver.average_policy())  # OpenSpiel's own tooling

`current_policy()` / `average_policy()` return a `policy.TabularPolicy` that is
updated in place on each call (as OpenSpiel's solvers do). `nash_conv()` and
`exploitability()` evaluate the average strategy exactly on the arrays, and the
solver itself can be passed to `openspiel_cfrx.nash_conv(game, solver)`.

Defaults reproduce OpenSpiel's Python solvers exactly (alternating updates;
CFR uniform averaging; CFR+ RM+ with linear averaging; DCFR(1.5, 0, 2) with
OpenSpiel's discounting and t^gamma averaging). Each solver's minimizer,
averaging and discounting come from `openspiel_cfrx.regret.VARIANTS`, the table
the poker engine's `VectorCFR` reads too.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from collections.abc import Callable

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from openspiel_cfrx.checkpoint_io import array_digest, atomic_write
from openspiel_cfrx.regret.variants import VARIANTS, Discount
from openspiel_cfrx.tabular.driver import TabularCFR
from openspiel_cfrx.tabular.stability import stability_schedule
from openspiel_cfrx.tree import (
    GameTree,
    best_response,
    empty_tabular_policy,
    tabular_policy_from_strategy,
)


def _check_real(name: str, value, minimum: float | None = None, strict: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if minimum is not None and (value <= minimum if strict else value < minimum):
        relation = ">" if strict else ">="
        raise ValueError(f"{name} must be {relation} {minimum}, got {value}")
    return value


# The average-strategy label of DCFR checkpoints (the weight t^gamma; gamma is recorded beside it).
_DCFR_AVERAGING_LABEL = "t^gamma"


class TabularSolver:
    """Base class: OpenSpiel solver verbs over a `TabularCFR` driver."""

    def __init__(
        self,
        game: pyspiel.Game | GameTree,
        make_minimizer: Callable[[GameTree, int], object],
        alternating_updates: bool,
        averaging,
        hyperparameters: dict | None = None,
    ):
        self._driver = TabularCFR(game, make_minimizer, alternating_updates, averaging)
        # Settings a checkpoint must match (besides class, game and update mode).
        self._hyperparameters = {
            "averaging": averaging if isinstance(averaging, str) else getattr(averaging, "__qualname__", "callable"),
            **(hyperparameters or {}),
        }
        self._tree = self._driver.tree
        self._game = self._tree.game
        self._current_policy: policy_lib.TabularPolicy | None = None
        self._average_policy: policy_lib.TabularPolicy | None = None

    # -- OpenSpiel verbs -----------------------------------------------------
    def evaluate_and_update_policy(self) -> None:
        """Performs one iteration of the algorithm (both players)."""
        self._driver.iterate()

    def current_policy(self) -> policy_lib.TabularPolicy:
        """The current strategy profile (same object, updated in place)."""
        if self._current_policy is None:
            self._current_policy = empty_tabular_policy(self._tree)
        return tabular_policy_from_strategy(
            self._tree, self._driver.strategy, self._current_policy
        )

    def average_policy(self) -> policy_lib.TabularPolicy:
        """The average strategy profile (same object, updated in place)."""
        if self._average_policy is None:
            self._average_policy = empty_tabular_policy(self._tree)
        return tabular_policy_from_strategy(
            self._tree, self._driver.average_strategy(), self._average_policy
        )

    # -- checkpoints -----------------------------------------------------------
    CHECKPOINT_FORMAT = "openspiel_cfrx.tabular/3"  # 3: DCFR's averaging recorded as "t^gamma"

    def _checkpoint_meta(self) -> dict:
        tree = self._tree
        return {
            "format": self.CHECKPOINT_FORMAT,
            "solver": type(self).__name__,
            "game": str(self._game),
            "num_infosets": tree.num_infosets,
            "num_actions": tree.num_actions,
            "alternating_updates": self._driver.alternating_updates,
            "hyperparameters": self._hyperparameters,
        }

    def save(self, path: str) -> None:
        """Writes everything needed to resume (strategies, accumulators,
        regret-minimizer state, iteration) to a `.npz` file, atomically."""
        arrays = {
            "strategy": self._driver.strategy,
            "average_accumulator": self._driver.average_accumulator,
            "iteration": np.array(self._driver.iteration),
            "meta": np.array(json.dumps(self._checkpoint_meta())),
        }
        for p, minimizer in enumerate(self._driver.minimizers):
            for name in minimizer.state_arrays:
                arrays[f"player{p}/{name}"] = getattr(minimizer, name)
        arrays["sha256"] = np.array(array_digest(arrays))
        atomic_write(path, lambda f: np.savez(f, **arrays))

    def load(self, path: str) -> None:
        """Restores a checkpoint written by `save` by a solver of the same class,
        game and update mode; raises ValueError naming any mismatch."""
        if os.path.isfile(path) and os.path.getsize(path) == 0:
            raise ValueError(f"checkpoint {path} is empty (0 bytes): the run that wrote it was cut off; "
                             "delete it and start over, or use an earlier checkpoint")
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {key: data[key] for key in data.files}
            meta = json.loads(str(arrays["meta"]))
        except FileNotFoundError:
            raise
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, json.JSONDecodeError) as e:
            raise ValueError(
                f"{path} is not a readable openspiel_cfrx tabular checkpoint "
                f"({type(e).__name__}: {str(e)[:200]}); it may be truncated, damaged or from another program"
            ) from None
        expected = self._checkpoint_meta()
        found = meta.get("format")
        if found != self.CHECKPOINT_FORMAT:
            raise ValueError(f"checkpoint {path} has format {found!r}, expected {self.CHECKPOINT_FORMAT!r}: this "
                             "version of openspiel_cfrx reads no other; re-create it with this version (re-run the "
                             "command that wrote it)")  # fmt: skip
        stored = str(arrays.pop("sha256", ""))
        if stored != array_digest(arrays):
            raise ValueError(
                f"checkpoint {path} is damaged: its contents do not match the checksum written "
                "with them; use an earlier checkpoint"
            )
        arrays.pop("meta")
        for key in ("solver", "game", "num_infosets", "num_actions", "alternating_updates"):
            if meta.get(key) != expected[key]:
                raise ValueError(
                    f"checkpoint {path} was written with {key}={meta.get(key)!r} but this solver "
                    f"has {key}={expected[key]!r}; construct the solver the same way to resume"
                )
        saved = meta["hyperparameters"]
        differing = {
            k: (saved.get(k), v) for k, v in expected["hyperparameters"].items() if saved.get(k) != v
        }
        if differing:
            details = ", ".join(f"{k}={a!r} (this solver: {b!r})" for k, (a, b) in differing.items())
            raise ValueError(
                f"checkpoint {path} was written with {details}; construct the solver with the "
                "checkpoint's settings to resume"
            )
        try:
            restored = {"strategy": arrays["strategy"], "average_accumulator": arrays["average_accumulator"]}
            shape = self._driver.strategy.shape
            for name, value in restored.items():
                if value.shape != shape:
                    raise ValueError(f"{name} has shape {value.shape}, expected {shape}")
            minimizer_state = []
            for p, minimizer in enumerate(self._driver.minimizers):
                for name in minimizer.state_arrays:
                    value = arrays[f"player{p}/{name}"]
                    if value.shape != getattr(minimizer, name).shape:
                        raise ValueError(f"player{p}/{name} has shape {value.shape}")
                    minimizer_state.append((minimizer, name, value))
            iteration = int(arrays["iteration"])
        except KeyError as e:
            raise ValueError(f"checkpoint {path} lacks array {e}; it is incomplete") from None
        self._driver.strategy[...] = restored["strategy"]
        self._driver.average_accumulator[...] = restored["average_accumulator"]
        for minimizer, name, value in minimizer_state:
            setattr(minimizer, name, value.copy())
        self._driver.iteration = iteration

    # -- extras ----------------------------------------------------------------
    @property
    def iteration(self) -> int:
        return self._driver.iteration

    @property
    def alternating_updates(self) -> bool:
        """True: players are updated one after the other; False: simultaneously."""
        return self._driver.alternating_updates

    @property
    def tree(self) -> GameTree:
        return self._tree

    def run(self, iterations: int) -> None:
        """Runs `iterations` iterations."""
        if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)):
            raise TypeError(f"iterations must be an int, got {iterations!r}")
        if iterations < 0:
            raise ValueError(f"iterations must be >= 0, got {iterations}")
        for _ in range(iterations):
            self._driver.iterate()

    def current_strategy(self) -> np.ndarray:
        """Current strategy as [num_infosets, num_actions] (tree order; a copy)."""
        return self._driver.strategy.copy()

    def average_strategy(self) -> np.ndarray:
        """Average strategy as [num_infosets, num_actions] (tree order)."""
        return self._driver.average_strategy()

    def strategy_array(self, tree: GameTree) -> np.ndarray:
        """Lets `openspiel_cfrx.nash_conv(game, solver)` evaluate the average strategy."""
        if tree is not self._tree and str(tree.game) != str(self._game):
            raise ValueError(f"solver was built for {self._game}, not {tree.game}")
        return self.average_strategy()

    def nash_conv(self, average: bool = True) -> float:
        """Exact NashConv of the average (or current) strategy."""
        strategy = self._driver.average_strategy() if average else self._driver.strategy
        return best_response(self._tree, strategy).nash_conv

    def exploitability(self, average: bool = True) -> float:
        """Exact exploitability (NashConv / 2 for zero-sum games)."""
        strategy = self._driver.average_strategy() if average else self._driver.strategy
        result = best_response(self._tree, strategy)
        return float((result.best_response_values.sum() - self._game.utility_sum()) / 2)


class CFRSolver(TabularSolver):
    """Vanilla CFR (Zinkevich et al. 2007) with regret matching.

    Defaults match OpenSpiel's `cfr.CFRSolver` (alternating updates, uniform
    averaging); `regret_matching_plus` / `linear_averaging` mirror OpenSpiel's
    `_CFRSolver` switches.
    """

    def __init__(
        self,
        game,
        alternating_updates: bool = True,
        linear_averaging: bool = False,
        regret_matching_plus: bool = False,
        averaging=None,
    ):
        variant = VARIANTS["cfr"]
        if averaging is None:
            averaging = "linear" if linear_averaging else variant.averaging
        super().__init__(
            game,
            lambda tree, p: variant.make_minimizer(_legal(tree, p), plus=regret_matching_plus),
            alternating_updates,
            averaging,
            {"regret_matching_plus": bool(regret_matching_plus)},
        )


class CFRPlusSolver(CFRSolver):
    """CFR+ (Tammelin et al. 2015): RM+, alternating updates, linear averaging,
    as OpenSpiel's `cfr.CFRPlusSolver`."""

    def __init__(
        self, game, alternating_updates: bool = True, averaging: str = "linear"
    ):
        super().__init__(
            game,
            alternating_updates=alternating_updates,
            regret_matching_plus=VARIANTS["cfr+"].plus,
            averaging=averaging,
        )


class DCFRSolver(TabularSolver):
    """Discounted CFR (Brown & Sandholm 2019), as OpenSpiel's
    `discounted_cfr.DCFRSolver`: positive cumulative regrets scaled by
    t^alpha/(t^alpha+1), negative by t^beta/(t^beta+1), average weights t^gamma.
    Recommended (1.5, 0, 2); LCFR is (1, 1, 1)."""

    def __init__(
        self,
        game,
        alpha: float = 1.5,
        beta: float = 0.0,
        gamma: float = 2.0,
        alternating_updates: bool = True,
    ):
        alpha = _check_real("alpha", alpha)
        beta = _check_real("beta", beta)
        gamma = _check_real("gamma", gamma, minimum=0.0)
        self.alpha, self.beta, self.gamma = alpha, beta, gamma
        variant, discount = VARIANTS["dcfr"], Discount(alpha, beta, gamma)
        super().__init__(
            game,
            lambda tree, p: variant.make_minimizer(_legal(tree, p), discount=discount),
            alternating_updates,
            variant.weight(discount),
            {"averaging": _DCFR_AVERAGING_LABEL, **discount._asdict()},
        )


class LCFRSolver(DCFRSolver):
    """Linear CFR: DCFR with (alpha, beta, gamma) = (1, 1, 1)."""

    def __init__(self, game, alternating_updates: bool = True):
        super().__init__(game, *VARIANTS["lcfr"].discount, alternating_updates)


class PCFRPlusSolver(TabularSolver):
    """Predictive CFR+ (Farina, Kroer & Sandholm, AAAI 2021): predictive RM+ at
    each infoset, prediction = last utility propagated with the subtree's new
    decisions, quadratic averaging by default."""

    def __init__(
        self, game, alternating_updates: bool = True, averaging: str = "quadratic"
    ):
        super().__init__(
            game,
            lambda tree, p: VARIANTS["pcfr+"].make_minimizer(_legal(tree, p)),
            alternating_updates,
            averaging,
        )


class OFTRLCFRSolver(TabularSolver):
    """Stable-predictive optimistic CFR (Farina, Kroer, Brown & Sandholm, ICML 2019).

    Every infoset j runs OFTRL with the entropy regularizer (eq. 8) on
    counterfactual losses scaled to infinity-norm <= 1/3, with stepsize
    eta_j = stepsize_scale * kappa_j from the stability schedule (eqs. 14-16)
    and counterfactual predictions built from the subtree's new decisions
    (eq. 17), with m^{t+1} = l^t.

    Args:
      kappa: kappa_star, the stability of the whole decision process. Default
        horizon ** -0.25 (Theta(T^{-1/4}) gives the O(T^{-3/4}) rate).
      horizon: the planned number of iterations T (used only for the default kappa).
      stepsize_scale: 1 = theory ("OFTRL theory"); the paper's "OFTRL tuned"
        uses 10, 100 or 1000.
      alternating_updates: False (the paper's simultaneous setting) by default.
      averaging: "uniform" (the theory's average of sequence-form iterates).
    """

    def __init__(
        self,
        game,
        kappa: float | None = None,
        horizon: int = 1000,
        stepsize_scale: float = 1.0,
        alternating_updates: bool = False,
        averaging: str = "uniform",
    ):
        if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
            raise ValueError(f"horizon must be a positive int (planned iterations), got {horizon!r}")
        kappa = float(horizon) ** -0.25 if kappa is None else _check_real("kappa", kappa, 0.0, True)
        stepsize_scale = _check_real("stepsize_scale", stepsize_scale, 0.0, strict=True)
        self.kappa_star, self.horizon, self.stepsize_scale = kappa, int(horizon), stepsize_scale
        self.schedules = []

        def make(tree, p):
            schedule = stability_schedule(tree, p, kappa)
            self.schedules.append(schedule)
            max_utility = float(np.abs(tree.terminal_utility[:, p]).max(initial=0.0))
            # Counterfactual utilities at an infoset are bounded by max |u|
            # (opponent/chance reaches over an infoset sum to at most 1), so
            # dividing by 3 max|u| gives losses of infinity-norm <= 1/3.
            utility_scale = 3.0 * max_utility if max_utility > 0 else 1.0
            return VARIANTS["oftrl"].make_minimizer(
                _legal(tree, p),
                stepsizes=stepsize_scale * schedule.kappa,
                utility_scale=utility_scale,
            )

        super().__init__(
            game,
            make,
            alternating_updates,
            averaging,
            {"kappa": kappa, "horizon": int(horizon), "stepsize_scale": stepsize_scale},
        )


def _legal(tree: GameTree, player: int) -> np.ndarray:
    lo, hi = tree.infoset_range[player]
    return tree.infoset_legal_mask[lo:hi]


SOLVERS: dict[str, type[TabularSolver]] = {
    "cfr": CFRSolver,
    "cfr+": CFRPlusSolver,
    "dcfr": DCFRSolver,
    "lcfr": LCFRSolver,
    "pcfr+": PCFRPlusSolver,
    "oftrl": OFTRLCFRSolver,
}


def make_solver(
    name: str, game, alternating_updates: bool | None = None, **kwargs
) -> TabularSolver:
    """Builds a solver by short name (see `SOLVERS`); kwargs go to its constructor.

    `alternating_updates=None` keeps the solver's own default (alternating for
    the CFR family, simultaneous for OFTRL-CFR, as in its paper)."""
    try:
        cls = SOLVERS[name]
    except KeyError:
        raise ValueError(
            f"unknown tabular solver {name!r}; choose from {', '.join(SOLVERS)}"
        ) from None
    if alternating_updates is not None:
        kwargs["alternating_updates"] = alternating_updates
    return cls(game, **kwargs)
