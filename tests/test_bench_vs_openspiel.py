"""benchmarks/bench_vs_openspiel.py reads the harness's benchmark.csv, whose
text columns (solver, game) stay text and whose numbers become floats."""

import json
import os

from benchmarks.bench_vs_openspiel import run_harness


def test_the_harness_rows_are_read_with_the_game_column(tmp_path):
    rows = run_harness("kuhn_poker", 0.3, "cfr+", 0, str(tmp_path))
    assert rows and all(r["solver"] == "cfr+" and r["game"] == "kuhn_poker" for r in rows)
    numbers = [v for r in rows for k, v in r.items() if k not in ("solver", "game") and v is not None]
    assert numbers and all(isinstance(v, float) for v in numbers)


def test_a_kept_run_is_reused_and_the_cpu_clock_is_passed_on(tmp_path):
    runs = str(tmp_path / "runs")
    first = run_harness("kuhn_poker", 0.3, "cfr+", 0, str(tmp_path / "unused"), clock="cpu", runs_dir=runs)
    (folder,) = os.listdir(runs)
    with open(os.path.join(runs, folder, "finished.json"), encoding="utf-8") as f:
        assert json.load(f)["clock"] == "cpu"
    assert run_harness("kuhn_poker", 0.3, "cfr+", 0, str(tmp_path / "unused"), clock="cpu", runs_dir=runs) == first
