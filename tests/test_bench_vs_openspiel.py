"""benchmarks/bench_vs_openspiel.py reads the harness's benchmark.csv, whose
text columns (solver, game) stay text and whose numbers become floats."""

from benchmarks.bench_vs_openspiel import run_harness


def test_the_harness_rows_are_read_with_the_game_column(tmp_path):
    rows = run_harness("kuhn_poker", 0.3, "cfr+", 0, str(tmp_path))
    assert rows and all(r["solver"] == "cfr+" and r["game"] == "kuhn_poker" for r in rows)
    numbers = [v for r in rows for k, v in r.items() if k not in ("solver", "game") and v is not None]
    assert numbers and all(isinstance(v, float) for v in numbers)
