"""benchmarks/bench_cfr_mix_paper.py: the paper's Figures 3-4 grid runs, stores one record per run, resumes
from its records, refuses joint-action variants that cannot run with their estimate, and computes its
statement rows from the records."""

from __future__ import annotations

import inspect
import json
import os
import types

import pytest

from benchmarks import bench_cfr_mix_paper as paper


def _main(tmp_path, *extra):
    return paper.main(["--figure=4", "--instances=nest_3x3_2", "--variants=cfr_mix,independent", "--seeds=0,1",
                       "--budget_factor=0.02", f"--records={tmp_path / 'records'}",
                       f"--output={tmp_path / 'figure4.md'}", *extra])  # fmt: skip


@pytest.mark.slow  # ~20 s: 4 short runs and their 13 evaluations
def test_the_grid_stores_records_resumes_and_computes_statement_rows(tmp_path):
    assert _main(tmp_path) == 0
    records = sorted(os.listdir(tmp_path / "records"))
    assert records == ["nest_3x3_2_cfr_mix_s0.json", "nest_3x3_2_cfr_mix_s1.json", "nest_3x3_2_chase.json",
                       "nest_3x3_2_independent_s0.json", "nest_3x3_2_independent_s1.json",
                       "nest_3x3_2_intercept.json", "nest_3x3_2_uniform.json"]  # fmt: skip
    run = json.loads((tmp_path / "records" / "nest_3x3_2_cfr_mix_s0.json").read_text())
    assert run["iterations"] >= 1 and [p["nodes"] for p in run["points"]] == sorted(p["nodes"] for p in run["points"])
    assert all(0.0 <= p["value"] <= 1.0 for p in run["points"])
    text = (tmp_path / "figure4.md").read_text()
    assert "(nest_3x3_2: cfr_mix > independent) | cfr_mix - independent:" in text
    assert "(nest_5x5_4: cfr_mix > cfr_mix_no_sharing) | 0 of 2 seeds paired | not measured yet" in text
    assert "a half-finished grid" in text and (tmp_path / "cfr_mix_paper" / "figure4.png").exists()
    before = {name: (tmp_path / "records" / name).stat().st_mtime_ns for name in records}
    assert _main(tmp_path) == 0  # every run is stored: nothing reruns
    assert {name: (tmp_path / "records" / name).stat().st_mtime_ns for name in records} == before
    (tmp_path / "records" / "nest_3x3_2_cfr_mix_s1.json").write_text("{not json")
    with pytest.raises(SystemExit):
        _main(tmp_path, "--report_only")


def test_statement_verdicts_follow_the_paired_interval():
    def rec(value):
        return {"points": [{"value": value}]}

    records = {("nest_3x3_2", "cfr_mix", s): rec(0.5 + 0.01 * s) for s in range(3)}
    records.update({("nest_3x3_2", "independent", s): rec(0.3 + 0.01 * s) for s in range(3)})
    records.update({("nest_3x3_2", "deep_cfr", s): {"refused": "too costly"} for s in range(3)})
    records[("nest_3x3_2", "uniform", None)] = rec(0.6)
    records.update({("nest_3x3_2", "double_neural_joint", s): dict(rec(0.0), iterations=0) for s in range(3)})
    assert paper.comparison(records, "nest_3x3_2", "cfr_mix", "double_neural_joint", [0, 1, 2])[1] == "yes"
    assert paper.comparison(records, "nest_3x3_2", "cfr_mix", "independent", [0, 1, 2])[1] == "yes"
    assert paper.comparison(records, "nest_3x3_2", "independent", "cfr_mix", [0, 1, 2])[1] == "no"
    assert paper.comparison(records, "nest_3x3_2", "cfr_mix", "deep_cfr", [0, 1, 2])[1] == "yes"  # cannot run
    assert paper.comparison(records, "nest_3x3_2", "cfr_mix", "uniform", [0, 1, 2])[1] == "no"
    assert paper.comparison(records, "nest_3x3_2", "cfr_mix", "independent", [0])[1] == "not measured yet"
    records[("nest_3x3_2", "independent", 2)] = rec(0.9)
    assert paper.comparison(records, "nest_3x3_2", "cfr_mix", "independent", [0, 1, 2])[1] == "inconclusive"
    records[("nest_3x3_2", "intercept", None)] = rec(0.505)  # a hand-written team: one record for every seed
    shows, verdict = paper.comparison(records, "nest_3x3_2", "cfr_mix", "intercept", [0, 1, 2])
    assert verdict == "inconclusive" and shows == "cfr_mix - intercept: +0.0050 ± 0.0248 (3 seeds)"
    records[("nest_3x3_2", "intercept", None)] = rec(0.3)
    assert paper.comparison(records, "nest_3x3_2", "cfr_mix", "intercept", [0, 1, 2])[1] == "yes"
    # its own evaluation interval joins the seeds' in quadrature: 0.3 +- 0.3 no longer decides
    records[("nest_3x3_2", "intercept", None)] = {"points": [{"value": 0.3, "ci95": 0.3}]}
    shows, verdict = paper.comparison(records, "nest_3x3_2", "cfr_mix", "intercept", [0, 1, 2])
    assert verdict == "inconclusive" and shows == "cfr_mix - intercept: +0.2100 ± 0.3010 (3 seeds)"


def test_joint_action_variants_are_refused_with_their_estimate():
    import pyspiel

    import games  # noqa: F401

    inst = paper.INSTANCES["goofspiel_13c6p2r"]
    game = pyspiel.load_game(inst.game)
    reason = paper.refusal(game, inst, "double_neural_joint", inst.budget)
    assert reason and "4,826,809 joint actions" in reason and "budget 300 s" in reason
    assert paper.refusal(game, inst, "cfr_mix", inst.budget) is None


def test_the_default_variant_rule_counts_instances_won_and_lost():
    def runs(instance, variant, values):
        return {(instance, variant, s): {"points": [{"value": v}]} for s, v in enumerate(values)}

    records = {}
    for instance, ahead in (("goofspiel_10c6p2r", 0.2), ("goofspiel_6c4p6r", 0.2), ("nest_3x3_2", -0.2)):
        records.update(runs(instance, "cfr_mix", [0.1, 0.11, 0.12]))
        records.update(runs(instance, "deep_cfr_mix", [0.1 + ahead, 0.11 + ahead, 0.12 + ahead]))
    choice, tally = paper.default_variant(records, [0, 1, 2])
    assert choice == "deep_cfr_mix" and tally["yes"] == ["goofspiel_6c4p6r", "goofspiel_10c6p2r"]
    assert tally["no"] == ["nest_3x3_2"] and len(tally["not measured yet"]) == 4
    records.update(runs("nest_5x5_4", "cfr_mix", [0.5, 0.51, 0.52]))
    records.update(runs("nest_5x5_4", "deep_cfr_mix", [0.1, 0.11, 0.12]))
    assert paper.default_variant(records, [0, 1, 2])[0] == "cfr_mix"  # 2 won, 2 lost: the paper's method


def test_the_library_default_is_the_variant_the_committed_grid_picks():
    from openspiel_cfrx import CFRMixSolver

    args = types.SimpleNamespace(records=paper.RECORDS, budget_factor=1.0, seeds=[0, 1, 2])
    choice, tally = paper.default_variant(paper.load_all(args, paper.INSTANCES.values()), [0, 1, 2])
    assert inspect.signature(CFRMixSolver).parameters["variant"].default == choice, tally
