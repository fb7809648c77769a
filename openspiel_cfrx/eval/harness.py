"""The equal-budget harness: algorithms behind one interface, one budget loop.

A `Contender` does one unit of work per `step()` (a CFR iteration, a batch of
MCCFR iterations or NFSP episodes, a Deep CFR iteration) and returns from
`policy()` what the exact evaluator scores. `run_budget` steps it against a
budget of its own compute (a wall-clock or CPU clock), measures it at
checkpoints (seconds, steps or nodes touched) with an evaluator supplied as a
function, and hands each measurement to the caller, which turns it into its
point (a `CurvePoint`, a `TimedPoint`, a benchmark's CSV row). Work needed to
*produce* a policy (training a strategy network) happens in `policy()` and is
charged to the contender, so curves compare usable policies at equal compute.

`run_timed` (equal wall-clock, log-spaced evaluations: `cfrx-benchmark`) and
`run_curve` (a solver's exact curve at iteration checkpoints) are uses of it;
so is `benchmarks/bench_fhp_curve.py` (checkpoints at budget fractions,
exact iteration counts or another line's nodes touched, resumable), and the
budget loops of `bench_cfr_mix.py`, `sweep_nfsp_fhp.py`, `bench_deep_cfr.py`
and `bench_hulh_head_to_head.py`, which wrap their own solvers in a
`FunctionContender`.
"""

from __future__ import annotations

import abc
import dataclasses
import math
import time
from collections.abc import Callable, Iterable

import numpy as np

from openspiel_cfrx.tree import get_tree, strategy_from_policy
from openspiel_cfrx.tree.sequence_form import best_response


class Contender(abc.ABC):
    """One algorithm in the equal-budget harness: `step()` runs one unit of
    its own compute, `policy()` returns what the exact evaluator scores.

    `steps` counts the work done in `steps_unit`s (None: the harness counts
    `step()` calls); a contender that can run part of a step reads
    `step_limit` (the units left to the next checkpoint, set by the harness
    when checkpoints must land exactly, else None)."""

    name: str = ""
    nodes_touched: int | None = None  # None when the notion does not apply
    steps: int | None = None
    steps_unit: str = "steps"
    step_limit: int | None = None

    @abc.abstractmethod
    def step(self) -> None:
        """One iteration (or batch of episodes) of the algorithm."""

    @abc.abstractmethod
    def policy(self):
        """The current average policy (any form `openspiel_cfrx.nash_conv` takes)."""

    def timed_policy(self, clock: Callable[[], float]) -> tuple[object, float]:
        """(policy(), the seconds of `clock` charged for producing it)."""
        start = clock()
        pol = self.policy()
        return pol, clock() - start

    def chunk(self, per_step: int) -> int:
        """How many units the coming step runs: `per_step`, cut to `step_limit`."""
        return per_step if self.step_limit is None else min(per_step, self.step_limit)


@dataclasses.dataclass
class Measurement:
    """What the harness hands the caller at a checkpoint: the work done
    (`steps`, `spent` solver seconds), the policy and the seconds charged for it,
    `seconds` (the point's x), and whether it is the run's last."""

    contender: Contender
    steps: int
    spent: float
    policy: object
    policy_seconds: float
    seconds: float
    last: bool


@dataclasses.dataclass
class RunState:
    """Where a run stands: solver seconds spent and the checkpoints still
    ahead (a resumed run starts from a saved one)."""

    spent: float = 0.0
    pending: list = dataclasses.field(default_factory=list)


def run_budget(
    contender: Contender,
    measure: Callable[[Measurement], object],
    checkpoints: Iterable[float],
    by: str = "seconds",
    seconds: float | None = None,
    max_steps: int = 0,
    eval_every: int = 0,
    exact: bool = False,
    clock: Callable[[], float] = time.perf_counter,
    accumulate_policy: bool = True,
    state: RunState | None = None,
    progress_every: float | None = None,
    log: Callable[[str], None] | None = print,
) -> list:
    """Steps `contender` and calls `measure` at each checkpoint; returns what
    `measure` returned, in order.

    `checkpoints` are values of `by`: "seconds" (solver seconds), "steps"
    (`contender.steps`, else `step()` calls) or "nodes" (`nodes_touched`); a
    checkpoint is measured at the first step boundary at or past it, exactly
    with `exact` (steps: `step_limit` cuts a step short). The run ends after
    `seconds` of `clock` (None: at the last checkpoint), or `max_steps` > 0
    steps, measured there too; `eval_every` > 0 also measures every that many
    steps. The seconds charged for a policy add to the solver seconds
    (`accumulate_policy`: a run's later points pay them too) or only to their
    point. `state` carries the spent seconds and pending checkpoints in and out
    (resuming). Without progress for `progress_every` seconds of the wall
    clock, a line says the run is alive."""
    state = state if state is not None else RunState(pending=sorted(checkpoints))
    pending, points, calls, said = state.pending, [], 0, time.monotonic()
    while True:
        if exact and pending:
            contender.step_limit = int(pending[0] - _steps(contender, calls))
        start = clock()
        contender.step()
        state.spent += clock() - start
        calls += 1
        steps = _steps(contender, calls)
        progress = {"seconds": state.spent, "steps": steps, "nodes": contender.nodes_touched or 0}[by]
        reached = bool(pending) and progress >= pending[0]
        done = (seconds is not None and state.spent >= seconds) or (max_steps > 0 and steps >= max_steps)
        done = done or (seconds is None and reached and all(progress >= p for p in pending))
        if not (done or reached or (eval_every > 0 and steps % eval_every == 0)):
            if pending and progress_every is not None and time.monotonic() - said >= progress_every and log is not None:
                said = time.monotonic()
                unit = {"nodes": "nodes", "steps": contender.steps_unit, "seconds": "s"}[by]
                log(f"  {contender.name:<12} {progress:>12,.0f} of {pending[0]:,.0f} {unit} to the next checkpoint "
                    f"(solver {state.spent:.0f} s)")  # fmt: skip
            continue
        while pending and progress >= pending[0]:
            pending.pop(0)
        pol, policy_s = contender.timed_policy(clock)
        if accumulate_policy:
            state.spent += policy_s
        at = state.spent if accumulate_policy else state.spent + policy_s
        points.append(measure(Measurement(contender, steps, state.spent, pol, policy_s, at, done)))
        if done:
            return points


def _steps(contender: Contender, calls: int) -> int:
    return calls if contender.steps is None else contender.steps


# --- exact curves of small games ------------------------------------------------------------------------------

@dataclasses.dataclass
class CurvePoint:
    solver: str
    iteration: int
    seconds: float
    exploitability: float  # (sum of best-response values - utility sum) / 2
    nash_conv: float


@dataclasses.dataclass
class TimedPoint(CurvePoint):
    nodes_touched: int | None = None


def exact_exploitability(game, average_policy) -> tuple[float, float]:
    """(exploitability, nash_conv) of any policy our evaluator accepts."""
    tree = get_tree(game)
    result = best_response(tree, strategy_from_policy(tree, average_policy))
    exploit = float((result.best_response_values.sum() - game.utility_sum()) / 2)
    return exploit, result.nash_conv


def log_checkpoints(iterations: int, per_decade: int = 8, every: int | None = None) -> list[int]:
    """Roughly log-spaced iteration numbers in [1, iterations] (always includes
    the last); or every `every` iterations when given."""
    if every:
        points = set(range(every, iterations + 1, every))
    else:
        count = max(2, int(per_decade * math.log10(max(iterations, 10))) + 1)
        points = {int(round(v)) for v in np.logspace(0, math.log10(iterations), count)}
    points.add(iterations)
    return sorted(p for p in points if 1 <= p <= iterations)


def log_times(seconds: float, count: int = 12, first: float = 0.5) -> list[float]:
    """Log-spaced evaluation times in (0, seconds)."""
    first = min(first, seconds / 10)
    return [float(t) for t in np.geomspace(first, seconds, count)[:-1]]


def run_timed(
    contender: Contender,
    game,
    seconds: float,
    eval_times: list[float],
    log: Callable[[str], None] | None = print,
    max_steps: int = 0,
    eval_every: int = 0,
    into: list | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> list[TimedPoint]:
    """Steps `contender` for `seconds` of its own compute (policy production
    included, exact evaluation excluded), evaluating at the first step boundary
    after each time in `eval_times` and at the end.

    `max_steps` > 0 also stops after that many steps (whichever comes first);
    `eval_every` > 0 also evaluates after every `eval_every`-th step. Each
    point is also appended to `into` (if given) as soon as it is measured, so
    a caller interrupted mid-run (Ctrl-C) still has them. `clock` measures the
    compute: wall-clock (`time.perf_counter`) or the process's CPU time
    (`time.process_time`, for runs that share the machine's cores)."""

    def measure(m: Measurement) -> TimedPoint:
        exploit, conv = exact_exploitability(game, m.policy)
        point = TimedPoint(contender.name, m.steps, m.seconds, exploit, conv, contender.nodes_touched)
        if into is not None:
            into.append(point)
        if log is not None:
            log(f"  {contender.name:<14} step {m.steps:>7} {m.seconds:8.1f}s  exploitability {exploit:.4e}")
        return point

    times = [t for t in eval_times if t < seconds]
    return run_budget(contender, measure, times, seconds=seconds, max_steps=max_steps, eval_every=eval_every,
                      clock=clock, log=log)  # fmt: skip


class FunctionContender(Contender):
    """`step` and `average_policy` callables as a contender (a benchmark's own
    solver loop under `run_budget`). Producing the policy is not charged
    (`run_curve`'s convention) unless `charge_policy`: then `average_policy()`
    is timed on the run's clock like any contender's `policy()`."""

    def __init__(self, name: str, step: Callable[[], None], average_policy: Callable[[], object],
                 charge_policy: bool = False):  # fmt: skip
        self.name, self._step, self._average_policy = name, step, average_policy
        self._charge_policy = charge_policy

    def step(self):
        self._step()

    def policy(self):
        return self._average_policy()

    def timed_policy(self, clock):
        if self._charge_policy:
            return super().timed_policy(clock)
        return self._average_policy(), 0.0


def run_curve(
    name: str,
    game,
    step: Callable[[], None],
    average_policy: Callable[[], object],
    iterations: int,
    checkpoints: Iterable[int],
    time_budget: float | None = None,
    log: Callable[[str], None] | None = print,
) -> list[CurvePoint]:
    """Calls `step()` `iterations` times, evaluating `average_policy()` exactly
    at each checkpoint. Stops early once `time_budget` solver-seconds are spent
    (evaluating that last point)."""
    points: list[CurvePoint] = []
    if iterations < 1:
        return points

    def measure(m: Measurement) -> CurvePoint:
        exploit, conv = exact_exploitability(game, m.policy)
        points.append(CurvePoint(name, m.steps, m.spent, exploit, conv))
        if log is not None and (m.last or len(points) % 5 == 0):
            log(f"  {name:<28} it {m.steps:>6}  {m.spent:8.2f}s  exploitability {exploit:.3e}")
        return points[-1]

    marks = sorted({c for c in checkpoints if 1 <= c <= iterations} | {iterations})
    return run_budget(FunctionContender(name, step, average_policy), measure, marks, by="steps",
                      seconds=time_budget, max_steps=iterations, log=None)  # fmt: skip
