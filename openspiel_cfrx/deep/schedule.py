"""How a neural solver's per-iteration budget changes over a run.

The papers use a constant budget (Deep CFR: K traversals and a fixed number of
SGD steps with Adam at lr 1e-3 every iteration). Benchmarks at equal
wall-clock gain from spending less on the first iterations, whose strategies
carry little linear-CFR weight and are soon outweighed, and from a settled fit
at the end of each training run; those options live here, in one object, not
in the solvers' constructors:

    DeepCFRSolver(game, schedule=Schedule(traversals_ramp=40, traversals_initial=3000,
                                          train_steps_ramp=40, train_steps_initial=100,
                                          learning_rate="cosine"))
"""

from __future__ import annotations

import dataclasses
import math

from openspiel_cfrx.deep.validation import check_settings

RULES = {
    "learning_rate": ("constant", "cosine"),
    "train_steps_ramp": "int>=0",
    "train_steps_initial": "int>=1|None",
    "traversals_ramp": "int>=0",
    "traversals_initial": "int>=1|None",
}


@dataclasses.dataclass(frozen=True)
class Schedule:
    """Per-iteration traversals, SGD steps and learning rates.

    Attributes:
      learning_rate: "constant" (the papers) or "cosine": within each
        (re)training run Adam's rate anneals from the solver's learning rate to
        ~0 over the run's steps (a new run restarts it).
      train_steps_ramp: 0 (every iteration takes the solver's SGD steps) or
        R > 0: iteration t takes ceil(steps * min(1, t / R)) steps of the
        regret (advantage) networks; with `train_steps_initial=S0`, linearly
        from S0 at t = 1 to the solver's steps at t = R instead (S0 may be
        larger: fewer steps late).
      traversals_ramp, traversals_initial: the same ramp for the traversals
        per player.
    """

    learning_rate: str = "constant"
    train_steps_ramp: int = 0
    train_steps_initial: int | None = None
    traversals_ramp: int = 0
    traversals_initial: int | None = None

    def __post_init__(self):
        check_settings(dataclasses.asdict(self), RULES)
        for prefix in ("train_steps", "traversals"):
            ramp, initial = getattr(self, f"{prefix}_ramp"), getattr(self, f"{prefix}_initial")
            if initial is not None and ramp < 2:
                raise ValueError(f"{prefix}_initial (value at iteration 1) needs {prefix}_ramp >= 2, got {ramp}")

    def traversals(self, final: int, iteration: int) -> int:
        """Traversals per player at `iteration` (`final` once ramped)."""
        return _ramped(final, self.traversals_ramp, self.traversals_initial, iteration)

    def train_steps(self, final: int, iteration: int) -> int:
        """SGD steps of the regret networks at `iteration`."""
        return _ramped(final, self.train_steps_ramp, self.train_steps_initial, iteration)

    def learning_rates(self, learning_rate: float, steps: int) -> list[float]:
        """Adam's rate at each step of one (re)training run."""
        if self.learning_rate == "constant":
            return [learning_rate] * steps
        return [0.5 * learning_rate * (1.0 + math.cos(math.pi * k / steps)) for k in range(steps)]


def _ramped(final: int, ramp: int, initial: int | None, iteration: int) -> int:
    """`final` from iteration `ramp` on (always when ramp = 0); before that
    ceil(final * t / ramp), or linear from `initial` at t = 1."""
    if ramp == 0 or iteration >= ramp:
        return final
    if initial is None:
        return max(1, math.ceil(final * iteration / ramp))
    return max(1, round(initial + (final - initial) * (iteration - 1) / (ramp - 1)))
