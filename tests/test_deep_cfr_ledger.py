"""benchmarks/bench_deep_cfr_ledger.py: the ledger's rows, its paired aggregation and --plan (no training,
except the slow end-to-end --quick run)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import bench_deep_cfr_ledger as ledger  # noqa: E402
from benchmarks.common import mean_and_interval  # noqa: E402
from openspiel_cfrx.presets import DEEP_CFR_PRESETS, deep_cfr_preset, flatten_settings  # noqa: E402

FIELDS = ["algorithm", "seed", "steps", "steps_unit", "solver_seconds", "policy_seconds", "seconds", "nash_conv_chips",
          "nash_conv_mbb", "br_gain_p0", "br_gain_p1", "eval_seconds", "nodes_touched", "current_nash_conv_mbb",
          "abstract_nash_conv_mbb", "abstract_infosets", "load_1min"]  # bench_fhp_curve.py's CSV columns


def _changed(a: dict, b: dict) -> set:
    """The settings (`flatten_settings` names) in which `a` and `b` differ."""
    a, b = flatten_settings(a), flatten_settings(b)
    return {k for k in set(a) | set(b) if a.get(k, "absent") != b.get(k, "absent")}


def test_base_is_the_paper_preset_with_only_the_sgd_steps_scaled():
    paper = dict(deep_cfr_preset("paper", game=ledger.GAME).kwargs)
    assert _changed(ledger.BASE, paper) == set(ledger.STEP_FIELDS)
    assert all(ledger.BASE[k] * ledger.SGD_SCALE == paper[k] == 4000 for k in ledger.STEP_FIELDS)
    assert ledger.BASE["batch_size_advantage"] == ledger.BASE["batch_size_strategy"] == 10_000
    assert ledger.ROWS["base"].settings() == ledger.BASE


def test_every_row_differs_from_base_in_exactly_its_fields_and_takes_fhp_5x2s_value():
    fhp = dict(DEEP_CFR_PRESETS["fhp_5x2"].kwargs)
    names = [row.name for row in ledger.LEDGER]
    assert names[0] == "base" and names[-1] == "all_fhp_5x2" and len(set(names)) == len(names)
    deviations = [row for row in ledger.LEDGER if row.name != "base" and not row.preset]
    assert len(deviations) >= 8
    for row in deviations:
        assert row.change, row.name
        assert _changed(row.settings(), ledger.BASE) == set(flatten_settings(row.change)), row.name
        # one setting moved to fhp_5x2's value; the intermediate steps are fhp_full's (plain fine-tuning,
        # the suit-symmetric network) and the SGD scale row is the paper's full budget
        for key, value in flatten_settings(row.change).items():
            if row.name == "sgd_full":
                assert value == 4000
            elif key == "memory_capacity" and row.name in ("mlp", "suit_symmetric"):  # RAM: stated on the page
                assert value == ledger.NETWORK_MEMORY and row.note
            elif (row.name, key) in (("fine_tune", "reinitialize_advantage_networks"),
                                     ("suit_symmetric", "network.family")):  # fmt: skip
                assert flatten_settings(DEEP_CFR_PRESETS["fhp_full"].kwargs)[key] == value
            else:
                assert flatten_settings(fhp)[key] == value, (row.name, key)


def test_the_all_row_is_the_fhp_5x2_preset():
    row = ledger.ROWS["all_fhp_5x2"]
    assert row.settings() == dict(DEEP_CFR_PRESETS["fhp_5x2"].kwargs)
    # as run: deep_cfr_preset's own hardware check (float32 on a CPU without bfloat16 instructions)
    assert ledger.run_settings(row) == dict(deep_cfr_preset("fhp_5x2").kwargs)


def test_every_row_is_accepted_by_the_solver_checks():
    from benchmarks.bench_fhp_curve import deep_cfr_settings_problem

    for row in ledger.LEDGER:
        assert deep_cfr_settings_problem(ledger.run_settings(row)) is None, row.name


def test_the_full_sgd_row_is_projected_at_the_default_budget_and_base_always_runs():
    assert "projected from paper_iteration.md" in ledger.skip_reason(ledger.ROWS["sgd_full"], 600.0)
    assert ledger.skip_reason(ledger.ROWS["sgd_full"], 4000.0) is None
    assert ledger.skip_reason(ledger.ROWS["base"], 1.0) is None
    assert ledger.skip_reason(ledger.ROWS["traversals_5000"], 600.0) is None


def _write_curve(path, seed, points):
    """A bench_fhp_curve.py CSV: (solver seconds, nodes touched, NashConv mbb/g) per checkpoint."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for i, (seconds, nodes, mbb) in enumerate(points):
            writer.writerow({"algorithm": "deep_cfr", "seed": seed, "steps": i + 1, "steps_unit": "iterations",
                             "solver_seconds": seconds, "policy_seconds": 1.0, "seconds": seconds + 1.0,
                             "nash_conv_chips": mbb / 100.0, "nash_conv_mbb": mbb, "br_gain_p0": 0.1,
                             "br_gain_p1": 0.1, "eval_seconds": 1.5, "nodes_touched": nodes, "load_1min": 1.0})


def test_paired_effects_at_equal_time_and_equal_nodes(tmp_path):
    out = str(tmp_path)
    base_ends, row_ends = {0: 200.0, 1: 180.0, 2: 190.0}, {0: 150.0, 1: 160.0, 2: 140.0}
    for seed in (0, 1, 2):
        # BASE touches 1e6 then 4e6 nodes; the row 1e6 then 2e6: equal nodes is at 2e6
        _write_curve(ledger.csv_path(out, "base", seed), seed, [(50, 1e6, 400.0), (101, 4e6, base_ends[seed])])
        _write_curve(ledger.csv_path(out, "memory_2m", seed), seed, [(50, 1e6, 300.0), (100, 2e6, row_ends[seed])])
    curves = {name: {s: ledger.read_curve(ledger.csv_path(out, name, s)) for s in (0, 1, 2)}
              for name in ("base", "memory_2m")}  # fmt: skip
    assert all(ledger.finished(c, 100.0) for c in curves["base"].values())
    assert not ledger.finished(curves["base"][0], 102.0)
    effect = ledger.paired(curves["base"], curves["memory_2m"])
    diffs = [row_ends[s] - base_ends[s] for s in (0, 1, 2)]
    mean, half = mean_and_interval(diffs)
    assert effect["time"][:2] == pytest.approx((mean, half)) and mean == pytest.approx(-40.0)
    assert effect["time"][2] == pytest.approx(100.0 * mean / 190.0)
    # BASE at 2e6 nodes: halfway in log nodes from (1e6, 400) to (4e6, end) -> geometric mean
    at = {s: (400.0 * base_ends[s]) ** 0.5 for s in (0, 1, 2)}
    assert ledger.at_nodes(curves["base"][0], 2e6) == pytest.approx(at[0])
    assert ledger.at_nodes(curves["base"][0], 5e5) is None  # never extrapolated
    node_mean, node_half = mean_and_interval([row_ends[s] - at[s] for s in (0, 1, 2)])
    assert effect["nodes"][:2] == pytest.approx((node_mean, node_half))
    assert effect["node_seeds"] == 3


def test_page_shows_a_half_finished_grid_and_one_seed_without_an_interval(tmp_path):
    out = str(tmp_path)
    _write_curve(ledger.csv_path(out, "base", 0), 0, [(100, 1e6, 200.0)])
    _write_curve(ledger.csv_path(out, "base", 1), 1, [(100, 1e6, 190.0)])
    _write_curve(ledger.csv_path(out, "pot_regrets", 0), 0, [(100, 1e6, 150.0)])
    args = ledger.parse_args(["--seconds=100", "--rows=pot_regrets", "--seeds=0,1", f"--out_dir={out}"])
    curves = {name: {s: ledger.read_curve(ledger.csv_path(out, name, s)) for s in (0, 1)
                     if os.path.exists(ledger.csv_path(out, name, s))} for name in ("base", "pot_regrets")}  # fmt: skip
    page = ledger.ledger_page(args, args.row_list, curves, {"base": 2, "pot_regrets": 2}, {})
    assert "3 of 4 planned runs are finished" in page and "half-finished" in page
    assert "-50.0 (-25%; 1 seed: no interval)" in page
    assert "| 1 / 2 |" in page and "| 2 / 2 |" in page
    assert f"scaled by 1/{ledger.SGD_SCALE}" in page


def test_a_finished_run_is_kept_as_a_record_the_page_reads_without_its_folder(tmp_path):
    """Finished runs are kept under --records (committed), so a fresh clone regenerates the pages and
    skips them; a record of other settings or budget is not this run's; a corrupt one is one line."""
    import shutil

    out, records = str(tmp_path / "runs"), str(tmp_path / "records")
    args = ledger.parse_args(["--seconds=100", "--rows=pot_regrets", "--seeds=0", f"--out_dir={out}",
                              f"--records={records}"])  # fmt: skip
    base = ledger.ROWS["base"]
    _write_curve(ledger.csv_path(out, "base", 0), 0, [(50, 1e6, 300.0)])
    assert ledger.run_record(args, base, 0) is None and not os.path.exists(records)  # not finished: no record
    _write_curve(ledger.csv_path(out, "base", 0), 0, [(50, 1e6, 300.0), (101, 2e6, 200.0)])
    curve = ledger.run_record(args, base, 0)["curve"]
    assert [r["nash_conv_mbb"] for r in curve] == [300.0, 200.0]
    shutil.rmtree(out)
    assert ledger.run_record(args, base, 0)["curve"] == curve  # from the record alone
    assert ledger.run_record(ledger.parse_args(["--seconds=200", f"--out_dir={out}", f"--records={records}"]),
                             base, 0) is None  # another budget: another run  # fmt: skip
    with open(ledger.record_path(args, "base", 0), "w", encoding="utf-8") as f:
        f.write("{not json")
    with pytest.raises(SystemExit):
        ledger.run_record(args, base, 0)


def test_the_full_fhp_grid_splits_the_gap_into_method_and_compute(tmp_path):
    """--grid=full_fhp: BASE against the fhp_full preset on 52 cards, one walk per checkpoint, its own run
    names; the page splits fhp_full / 37 into fhp_full / BASE (method) x BASE / 37 (compute)."""
    args = ledger.parse_args(["--grid=full_fhp", f"--out_dir={tmp_path}", f"--records={tmp_path}/records"])
    assert (args.game, args.evaluator, args.seconds, args.seeds, args.fractions) == ("flop_holdem", "engine", 2700.0, [0], "1")
    assert [r.name for r in args.row_list] == ["base", "fhp_full"]
    assert ledger.run_settings(ledger.ROWS["fhp_full"]) == dict(deep_cfr_preset("fhp_full").kwargs)
    assert ledger.run_name(args, "base") == "full_fhp_base"  # not the 5x2 grids' BASE run
    assert ledger.run_stamp(args, ledger.ROWS["base"])["game"] == "flop_holdem"
    curves = {"base": {0: _curve([(10, 370.0)])}, "fhp_full": {0: _curve([(50, 185.0)])}}
    page = ledger.full_fhp_page(args, args.row_list, curves, {"base": 1, "fhp_full": 1}, {})
    assert "5.00x = 0.50x (method) x 10.00x (compute)" in page
    page = ledger.full_fhp_page(args, args.row_list, {"base": curves["base"]}, {"base": 1, "fhp_full": 1}, {})
    assert "not measured yet" in page and "1 of 2 planned runs" in page


def test_plan_names_the_total_cpu_hours_and_runs_nothing(tmp_path):
    run = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench_deep_cfr_ledger.py"), "--plan",
                          f"--out_dir={tmp_path}/runs"], capture_output=True, text=True, timeout=60, cwd=ROOT)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "CPU hours" in run.stdout and "grid: 14 rows x 3 seeds" in run.stdout
    assert not os.path.exists(tmp_path / "runs")


def test_bad_input_is_one_line():
    run = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench_deep_cfr_ledger.py"), "--plan",
                          "--rows=nonsense"], capture_output=True, text=True, timeout=60, cwd=ROOT)  # fmt: skip
    assert run.returncode == 2 and "unknown row 'nonsense'" in run.stderr and len(run.stderr.splitlines()) == 1


@pytest.mark.slow
def test_quick_runs_end_to_end(tmp_path):
    """--quick on two rows (BASE and one deviation), then again: the second call runs nothing."""
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "bench_deep_cfr_ledger.py"), "--quick",
               "--rows=traversals_5000", f"--out_dir={tmp_path}/runs", f"--output={tmp_path}/page.md"]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    page = (tmp_path / "page.md").read_text()
    assert "2 of 2 planned runs are finished" in page and "`traversals_5000`" in page
    assert sorted(os.listdir(tmp_path / "runs" / "records")) == ["base_seed0.json", "traversals_5000_seed0.json"]
    again = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert again.returncode == 0 and again.stdout.count("finished earlier") == 2


# --- the Figures 3-4 grid (--grid=figures) ---


def _curve(points):
    """In-memory curve: (iterations, NashConv mbb/g) per checkpoint."""
    return [{"steps": it, "seconds": 10.0 * it, "solver_seconds": 10.0 * it, "nodes_touched": 1e5 * it,
             "nash_conv_mbb": mbb} for it, mbb in points]  # fmt: skip


def test_figure_rows_change_one_setting_of_base_and_shared_rows_are_one_run():
    from benchmarks.bench_fhp_curve import deep_cfr_settings_problem

    for row in ledger.FIGURES:
        if row.name == "base":
            continue
        assert _changed(row.settings(), ledger.BASE) == set(flatten_settings(row.change)), row.name
        assert deep_cfr_settings_problem(ledger.run_settings(row)) is None, row.name
    shared = {r.name for r in ledger.FIGURES} & {r.name for r in ledger.LEDGER}
    assert shared == {"base", "traversals_5000", "fine_tune"}
    assert all(ledger.ROWS[n] in ledger.FIGURES and ledger.ROWS[n] in ledger.LEDGER for n in shared)
    # the sliding-window row differs from its reference only in the memory kind
    assert _changed(ledger.ROWS["window_small"].settings(), ledger.ROWS["reservoir_small"].settings()) == {"memory.kind"}
    # every statement names rows of the grid; the width that does not fit 600 s is skipped with its cost
    names = {r.name for r in ledger.FIGURES}
    assert all(st.row in names and st.reference in names for st in ledger.STATEMENTS)
    assert "CPU s" in ledger.skip_reason(ledger.ROWS["width_192"], 600.0)
    assert ledger.skip_reason(ledger.ROWS["width_24"], 600.0) is None


def _verdict(kind, row_points, ref_points, reference="base"):
    st = ledger.Statement("s", "r", kind, reference)
    curves = {"r": {s: _curve(p) for s, p in row_points.items()}, reference: {s: _curve(p) for s, p in ref_points.items()}}
    return ledger.statement_verdict(st, curves, {})


def test_statement_rules_give_yes_no_and_inconclusive():
    ref = {s: [(1, 1000.0), (2, 800.0), (4, 600.0 + s)] for s in (0, 1, 2)}
    higher = {s: [(1, 1100.0), (2, 900.0), (4, 700.0 + 2 * s)] for s in (0, 1, 2)}
    lower = {s: [(1, 900.0), (2, 700.0), (4, 500.0 - s)] for s in (0, 1, 2)}
    mixed = {0: [(4, 650.0)], 1: [(4, 550.0)], 2: [(4, 600.0)]}
    assert _verdict("higher", higher, ref)[1] == "yes"
    assert _verdict("higher", lower, ref)[1].startswith("no (the opposite")
    assert _verdict("higher", mixed, ref)[1] == "inconclusive (the interval holds 0)"
    assert _verdict("higher", {0: higher[0]}, ref)[1] == "inconclusive (1 seed: no interval)"
    # about 50%: +100/600 is +17%, not ~50%; +300/600 holds it
    assert _verdict("higher_50", higher, ref)[1].startswith("partly (higher, by 17%")
    half_again = {s: [(1, 1500.0), (2, 1200.0), (4, 900.0 + 1.5 * s + (s - 1) * 20)] for s in (0, 1, 2)}
    assert _verdict("higher_50", half_again, ref)[1] == "yes"
    # the reference still falls 25% per doubling: a final level cannot be compared
    assert _verdict("same_level", higher, ref)[1].startswith("not measurable at this budget")
    flat = {s: [(2, 610.0), (4, 600.0 + s)] for s in (0, 1, 2)}
    near = {s: [(2, 612.0), (4, 601.0 + s)] for s in (0, 1, 2)}
    assert _verdict("same_level", near, flat)[1] == "yes"
    far = {s: [(2, 800.0), (4, 800.0 + s)] for s in (0, 1, 2)}
    assert _verdict("same_level", far, flat)[1] == "no"
    # same rate: a curve shifted up by a constant factor has the same log-log slope
    assert _verdict("same_rate", {s: [(it, 1.2 * v) for it, v in p] for s, p in ref.items()}, ref)[1] == "yes"
    steep = {s: [(1, 1000.0), (2, 500.0), (4, 250.0 - s)] for s in (0, 1, 2)}
    assert _verdict("same_rate", steep, ref)[1] == "no"
    # a faster row's first checkpoint after the reference's last: no common point, said so
    assert _verdict("higher", {s: [(10, 500.0)] for s in (0, 1, 2)}, ref)[1] == ledger.NO_COMMON


def test_figures_page_has_a_verdict_per_statement_and_states_pending_runs(tmp_path):
    out = str(tmp_path)
    for seed in (0, 1):
        _write_curve(ledger.csv_path(out, "base", seed), seed, [(50, 1e6, 400.0), (100, 2e6, 300.0 + seed)])
        _write_curve(ledger.csv_path(out, "uniform_fallback", seed), seed, [(50, 1e6, 600.0), (100, 2e6, 450.0 + 3 * seed)])
    args = ledger.parse_args(["--grid=figures", "--seconds=100", "--seeds=0,1", f"--out_dir={out}"])
    assert args.output.endswith("deep_cfr_figures.md")
    curves = {name: {s: ledger.read_curve(ledger.csv_path(out, name, s)) for s in (0, 1)
                     if os.path.exists(ledger.csv_path(out, name, s))} for name in ("base", "uniform_fallback")}  # fmt: skip
    planned = {r.name: 2 for r in args.row_list}
    page = ledger.figures_page(args, args.row_list, curves, planned, {})
    verdicts = page.split("## The paper's statements on this run")[1]
    assert sum(st.text in verdicts for st in ledger.STATEMENTS) == len(ledger.STATEMENTS)
    assert "| a uniform strategy when no regret is positive: about 50% higher |" in verdicts
    line = next(x for x in verdicts.splitlines() if x.startswith("| a uniform strategy"))
    assert line.endswith("| yes |")  # +150 / +152 on 300 / 301: +50%
    assert "pending (runs not finished)" in verdicts and "4 of " in page


def test_unknown_row_of_the_grid_is_one_line():
    run = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench_deep_cfr_ledger.py"), "--plan",
                          "--grid=figures", "--rows=pot_regrets"], capture_output=True, text=True, timeout=60, cwd=ROOT)  # fmt: skip
    assert run.returncode == 2 and "unknown row 'pot_regrets' of --grid=figures" in run.stderr
    assert len(run.stderr.splitlines()) == 1


def test_the_docs_show_each_pages_tables_as_they_are():
    """docs/deep_cfr.md holds a copy of the ledger's and the figures page's tables (--docs fills it)."""
    with open(os.path.join(ROOT, "docs", "deep_cfr.md"), encoding="utf-8") as f:
        docs = f.read()
    for grid, page in ((g, ledger.OUTPUTS[g]) for g in ("ledger", "figures")):  # full_fhp: its page once run
        begin, end = ledger.docs_block(grid)
        assert begin in docs and end in docs, f"docs/deep_cfr.md has no block for {page}"
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            tables = ledger.page_tables(f.read())
        shown = docs.split(begin, 1)[1].split(end, 1)[0].strip()
        assert shown == tables, (f"docs/deep_cfr.md's copy of {page}'s tables is stale: run "
                                 f"bench_deep_cfr_ledger.py --grid={grid} --no_run --docs=docs/deep_cfr.md")  # fmt: skip
