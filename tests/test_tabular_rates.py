"""`benchmarks/bench_tabular.py --rates`: the log-log slope fit, the verdict
rules of its statements section, and a tiny end-to-end run on Kuhn poker."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import (  # noqa: E402
    SlopeFit,
    faster_verdict,
    fit_loglog_slope,
    horizons_in_window,
    rate_verdict,
    split_games,
)


def test_an_exact_power_law_gives_its_exponent():
    t = np.unique(np.round(np.logspace(0, 5, 41)).astype(int))
    fit = fit_loglog_slope(t, 3.7 * t**-0.75, 1e4, 1e5)
    assert fit is not None and abs(fit.slope + 0.75) < 1e-9 and fit.half_width < 1e-9
    assert fit.lo >= 1e4 and fit.hi == 100_000 and fit.points == int(((t >= 1e4) & (t <= 1e5)).sum())


def test_noise_gives_an_interval_that_covers_the_true_slope():
    rng = np.random.default_rng(0)
    t = np.unique(np.round(np.logspace(1, 4, 60)).astype(int))
    covered = 0
    for _ in range(200):
        values = 2.0 * t**-0.5 * np.exp(rng.normal(0.0, 0.1, t.size))
        fit = fit_loglog_slope(t, values, 10, 1e4)
        covered += fit.low <= -0.5 <= fit.high
        assert fit.half_width > 0
    assert covered >= 180  # independent noise: ~95% coverage (190 expected)


def test_the_window_and_the_floor_select_the_points():
    t = np.array([1, 10, 100, 1000, 10000])
    values = np.array([1.0, 0.1, 0.01, 0.0, 1e-20])
    fit = fit_loglog_slope(t, values, 1, 10000, floor=1e-15)  # the 0 and the 1e-20 are left out
    assert fit.points == 3 and fit.hi == 100 and abs(fit.slope + 1) < 1e-12
    assert fit_loglog_slope(t, values, 10, 10000, floor=1e-15) is None  # 3 points above the floor needed
    assert fit_loglog_slope(t, values, 2, 9) is None


def fit(slope, half):
    return SlopeFit(slope, half, 10, 100, 1000)


@pytest.mark.parametrize(("slope", "half", "verdict"), [
    (-0.9, 0.1, "yes"),           # upper end -0.8 <= -0.75
    (-0.85, 0.1, "yes"),          # upper end exactly -0.75
    (-0.7, 0.04, "no"),           # lower end -0.74 > -0.75
    (-0.75, 0.1, "inconclusive"),
    (-0.8, 0.2, "inconclusive"),
])  # fmt: skip
def test_rate_verdict(slope, half, verdict):
    assert rate_verdict(fit(slope, half), -0.75) == verdict


def test_rate_verdict_without_a_fit_is_inconclusive():
    assert rate_verdict(None, -0.5) == "inconclusive"
    assert rate_verdict(fit(-0.6, 0.05), -0.5) == "yes"
    assert rate_verdict(fit(-0.4, 0.05), -0.5) == "no"


def test_faster_verdict():
    assert faster_verdict(fit(-1.0, 0.1), fit(-0.5, 0.1)) == "yes"
    assert faster_verdict(fit(-0.5, 0.1), fit(-1.0, 0.1)) == "no"
    assert faster_verdict(fit(-0.6, 0.1), fit(-0.5, 0.1)) == "inconclusive"  # the intervals overlap
    assert faster_verdict(None, fit(-0.5, 0.1)) == faster_verdict(fit(-0.5, 0.1), None) == "inconclusive"


def test_games_split_outside_parentheses_and_horizons_span_the_window():
    assert split_games("kuhn_poker, flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1),x(a=1)") == [
        "kuhn_poker", "flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)", "x(a=1)"]  # fmt: skip
    assert horizons_in_window(1000, 0.1, 3) == [100, 316, 1000]
    assert horizons_in_window(1000, 0.1, 1) == [1000] and horizons_in_window(1000, 0.1, 0) == []


def test_a_tiny_rates_run_writes_the_page_and_the_plot(tmp_path):
    env = {**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "bench_tabular.py"), "--rates", "--rates_games=kuhn_poker",
         "--rates_iterations=200", "--rates_horizons=3", "--rates_extra_scales=", f"--output_dir={tmp_path}"],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    page = (tmp_path / "tabular_rates.md").read_text()
    assert (tmp_path / "tabular" / "rates.png").stat().st_size > 1000
    assert "## `kuhn_poker`" in page and "OFTRL large" not in page.split("## `kuhn_poker`")[1]
    statements = page.split("## The paper's statements on this run")[1]
    assert "| statement | this run | holds here |" in statements
    rows = [line for line in statements.splitlines() if line.startswith("| ") and "(kuhn_poker," in line]
    # per mode: OFTRL theory, tuned and across horizons vs T^-3/4; CFR+ and DCFR vs T^-1/2; OFTRL vs CFR
    assert len(rows) == 12
    assert all(line.rstrip(" |").rsplit("| ", 1)[1] in ("yes", "no", "inconclusive") for line in rows)
    assert "autocorrelated" in page and "upper end of the slope's 95% interval is <= -0.75" in page


def test_bad_rates_flags_are_one_line(tmp_path):
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "bench_tabular.py"), "--rates",
         "--rates_games=kuhn_poker,leduc_poker", "--rates_iterations=100,100,100", f"--output_dir={tmp_path}"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": ROOT}, check=False,
    )  # fmt: skip
    assert out.returncode == 2 and "--rates_iterations has 3 values for 2 games" in out.stderr
    assert not (tmp_path / "tabular_rates.md").exists()
