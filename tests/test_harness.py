"""openspiel_cfrx.eval.harness.run_budget: the one equal-budget loop, on a
contender whose work is counted by a fake clock (one second per unit), so
every checkpoint and every charged second is known exactly."""

import pyspiel
import pytest

from openspiel_cfrx.eval.harness import (
    Contender,
    FunctionContender,
    RunState,
    log_checkpoints,
    run_budget,
    run_curve,
    run_timed,
)


class Ticker(Contender):
    """`per_step` units of work per step (cut to `step_limit`), one clock second
    per unit; producing the policy costs `policy_cost` seconds; nodes touched =
    10 per unit."""

    name, steps_unit = "ticker", "iterations"

    def __init__(self, per_step=3, policy_cost=0.0, count_steps=True):
        self.now, self.per_step, self.policy_cost = 0.0, per_step, policy_cost
        self.steps = 0 if count_steps else None
        self.units = 0

    def clock(self):
        return self.now

    def step(self):
        n = self.chunk(self.per_step)
        self.now += n
        self.units += n
        if self.steps is not None:
            self.steps += n

    @property
    def nodes_touched(self):
        return 10 * self.units

    def policy(self):
        self.now += self.policy_cost
        return self.units


def measured(contender, checkpoints, **kwargs):
    return run_budget(contender, lambda m: (m.steps, m.spent, m.policy_seconds, m.seconds, m.last), checkpoints,
                      clock=contender.clock, log=None, **kwargs)  # fmt: skip


def test_exact_steps_land_on_every_checkpoint_by_cutting_steps_short():
    ticker = Ticker(per_step=4)
    points = measured(ticker, [5, 10], by="steps", exact=True)
    assert [(p[0], p[4]) for p in points] == [(5, False), (10, True)]


def test_seconds_checkpoints_are_the_first_step_boundary_past_each_and_the_run_ends_at_the_last():
    points = measured(Ticker(per_step=3), [4.0, 7.0])
    assert [p[0] for p in points] == [6, 9]


def test_nodes_checkpoints_follow_nodes_touched():
    assert [p[0] for p in measured(Ticker(per_step=2), [30, 55], by="nodes")] == [4, 6]


@pytest.mark.parametrize("accumulate, spent, seconds", [(True, [3.0, 6.0], [3.0, 6.0]),
                                                        (False, [2.0, 4.0], [3.0, 5.0])])  # fmt: skip
def test_policy_seconds_add_to_the_budget_or_only_to_their_point(accumulate, spent, seconds):
    ticker = Ticker(per_step=2, policy_cost=1.0)
    points = measured(ticker, [2, 4], by="steps", accumulate_policy=accumulate)
    assert [p[1] for p in points] == spent and [p[3] for p in points] == seconds
    assert [p[2] for p in points] == [1.0, 1.0]


def test_a_budget_of_seconds_and_a_step_cap_end_the_run_whichever_comes_first():
    assert [p[0] for p in measured(Ticker(per_step=1, count_steps=False), [], seconds=5.0)] == [5]
    assert [p[0] for p in measured(Ticker(per_step=1, count_steps=False), [], seconds=5.0, max_steps=3)] == [3]
    every = measured(Ticker(per_step=1, count_steps=False), [], seconds=7.0, eval_every=3)
    assert [p[0] for p in every] == [3, 6, 7]


@pytest.mark.parametrize("charge, spent, seconds", [(False, [2.0, 4.0], [2.0, 4.0]),
                                                    (True, [3.0, 6.0], [3.0, 6.0])])  # fmt: skip
def test_a_function_contender_charges_its_policy_only_when_told(charge, spent, seconds):
    ticker = Ticker(per_step=2, policy_cost=1.0)
    contender = FunctionContender("f", ticker.step, ticker.policy, charge_policy=charge)
    points = run_budget(contender, lambda m: (m.steps, m.spent, m.policy_seconds, m.seconds, m.policy), [1, 2],
                        by="steps", clock=ticker.clock, log=None)  # fmt: skip
    assert [p[0] for p in points] == [1, 2] and [p[4] for p in points] == [2, 4]
    assert [p[1] for p in points] == spent and [p[3] for p in points] == seconds
    assert [p[2] for p in points] == ([1.0, 1.0] if charge else [0.0, 0.0])


def test_a_resumed_state_continues_where_the_saved_one_stopped():
    whole = measured(Ticker(per_step=2), [4, 8, 12], by="steps", exact=True)
    first = Ticker(per_step=2)
    state = RunState(pending=[4, 8, 12])
    run_budget(first, lambda m: None, [], by="steps", exact=True, clock=first.clock, state=state, max_steps=4,
               log=None)  # fmt: skip
    assert state.pending == [8, 12] and state.spent == 4.0
    again = Ticker(per_step=2)
    again.steps, again.units, again.now = 4, 4, 4.0
    rest = measured(again, [], by="steps", exact=True, state=state)
    assert rest == whole[1:]


def test_progress_lines_between_distant_checkpoints():
    lines = []
    ticker = Ticker(per_step=1)
    run_budget(ticker, lambda m: None, [3], by="steps", clock=ticker.clock, progress_every=0.0, log=lines.append)
    assert lines == [f"  ticker       {n:>12,.0f} of 3 iterations to the next checkpoint (solver {n} s)"
                     for n in (1, 2)]  # fmt: skip
    lines.clear()
    ticker = Ticker(per_step=1)
    run_budget(ticker, lambda m: None, [], seconds=3.0, clock=ticker.clock, progress_every=0.0, log=lines.append)
    assert lines == []  # no checkpoint ahead: nothing to report progress towards


def test_run_curve_and_run_timed_measure_a_solver_exactly():
    from openspiel_cfrx.tabular import make_solver

    game = pyspiel.load_game("kuhn_poker")
    solver = make_solver("cfr+", game)
    curve = run_curve("cfr+", game, solver.evaluate_and_update_policy, solver.average_strategy, 20,
                      log_checkpoints(20), log=None)  # fmt: skip
    assert [p.iteration for p in curve] == log_checkpoints(20) and curve[-1].exploitability < curve[0].exploitability

    from openspiel_cfrx.contenders import make_contender

    points = run_timed(make_contender("cfr", game), game, seconds=60.0, eval_times=[], log=None, max_steps=7,
                       eval_every=5)  # fmt: skip
    assert [p.iteration for p in points] == [5, 7] and points[-1].exploitability > 0
