"""benchmarks/bench_fhp_curve.py --deep_cfr_from: the equal-nodes comparison from
an earlier run's CSV (OpenSpiel's Python ES-MCCFR run to its node counts)."""

import csv

import pytest

from benchmarks.bench_fhp_curve import main

GAME = "--game=flop_holdem(num_ranks=4,num_suits=2)"
FIELDS = ["algorithm", "steps", "steps_unit", "solver_seconds", "policy_seconds", "seconds", "nash_conv_chips",
          "nash_conv_mbb", "br_gain_p0", "br_gain_p1", "eval_seconds", "nodes_touched", "current_nash_conv_mbb"]


def test_deep_cfr_rows_from_a_csv_set_the_node_targets(tmp_path):
    earlier = tmp_path / "earlier.csv"
    with open(earlier, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for steps, nodes, mbb in ((3, 4_000, 900.5), (9, 12_000, 600.25)):
            writer.writerow(dict(zip(FIELDS, ["deep_cfr", steps, "iterations", 1.5, 0.0, 1.5, mbb / 10, mbb, 40.0,
                                              50.0, 0.1, nodes, ""], strict=True)))  # fmt: skip
        writer.writerow(dict(zip(FIELDS, ["os_es_mccfr", 100, "iterations", 1, 0, 1, 1, 10, 1, 1, 0, "", ""],
                                 strict=True)))  # fmt: skip
    out = tmp_path / "out"
    main([GAME, "--algorithms=os_es_mccfr_py", "--match-nodes", f"--deep_cfr_from={earlier}", "--mccfr-py-step=20",
          f"--out_dir={out}"])  # fmt: skip
    with open(out / "fhp_curve" / "fhp_curve.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    deep = [r for r in rows if r["algorithm"] == "deep_cfr"]
    es = [r for r in rows if r["algorithm"] == "os_es_mccfr_py"]
    assert [(int(r["nodes_touched"]), float(r["nash_conv_mbb"])) for r in deep] == [(4_000, 900.5), (12_000, 600.25)]
    assert len(es) == 2  # one checkpoint per Deep CFR row, at the first 20-iteration boundary past its nodes
    assert int(es[0]["nodes_touched"]) >= 4_000 and int(es[1]["nodes_touched"]) >= 12_000
    assert int(es[0]["nodes_touched"]) < 12_000
    assert all(float(r["nash_conv_mbb"]) > 0 for r in es)  # evaluated (a few hundred iterations: not yet falling)
    assert "deep_cfr rows read from" in (out / "fhp_curve.md").read_text()


def test_deep_cfr_from_is_refused_without_match_nodes_or_with_deep_cfr_run(tmp_path):
    with pytest.raises(SystemExit, match="use it with --match-nodes and without deep_cfr"):
        main([GAME, "--algorithms=os_es_mccfr_py", f"--deep_cfr_from={tmp_path / 'x.csv'}"])
    with pytest.raises(SystemExit, match="use it with --match-nodes and without deep_cfr"):
        main([GAME, "--algorithms=deep_cfr,os_es_mccfr_py", "--match-nodes", f"--deep_cfr_from={tmp_path / 'x.csv'}"])
    with pytest.raises(SystemExit, match="cannot read"):
        main([GAME, "--algorithms=os_es_mccfr_py", "--match-nodes", f"--deep_cfr_from={tmp_path / 'x.csv'}"])
    empty = tmp_path / "empty.csv"
    empty.write_text("algorithm,nodes_touched\nos_es_mccfr,\n")
    with pytest.raises(SystemExit, match="has no deep_cfr rows"):
        main([GAME, "--algorithms=os_es_mccfr_py", "--match-nodes", f"--deep_cfr_from={empty}"])


TINY_GAME = "--game=flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"


def test_figure_2_lines_a_users_policy_and_the_papers_statements(tmp_path):
    """Lossless and card-abstracted vector CFR lines (exact NashConv, nodes
    touched, NashConv inside the abstraction), a user's policy as a level, and
    the Figure 2 statements computed from the rows."""
    main([TINY_GAME, "--algorithms=lossless_lcfr,abstraction_100,abstraction_400,policy:open_spiel.python.policy:"
          "UniformRandomPolicy", "--iterations=40", "--fractions=0.25,1", f"--out_dir={tmp_path}",
          "--page=fig2"])  # fmt: skip
    with open(tmp_path / "fig2" / "fhp_curve.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    last = {r["algorithm"]: r for r in rows}
    assert [int(r["steps"]) for r in rows if r["algorithm"] == "lossless_lcfr"] == [10, 40]
    lossless, coarse, finer = (float(last[n]["nash_conv_mbb"]) for n in ("lossless_lcfr", "abstraction_100",
                                                                         "abstraction_400"))  # fmt: skip
    assert lossless < finer < coarse  # more buckets, less exploitable; lossless below both
    assert int(last["abstraction_100"]["abstract_infosets"]) <= 100 < int(last["abstraction_400"]["abstract_infosets"])
    assert int(last["abstraction_100"]["nodes_touched"]) == int(last["lossless_lcfr"]["nodes_touched"]) > 0
    uniform = last["policy:open_spiel.python.policy:UniformRandomPolicy"]
    assert uniform["steps_unit"] == "policy" and float(uniform["nash_conv_mbb"]) > coarse
    page = (tmp_path / "fig2.md").read_text()
    assert "Deep CFR's Figure 2" in page and "| coarser abstractions are more exploitable |" in page
    assert "| each abstraction's full-game NashConv plateaus, lower for more buckets" in page
    assert (tmp_path / "fig2" / "fhp_curve_nodes.png").exists()


def test_the_plateau_statement_reads_each_sizes_longest_line():
    """An abstraction size's plateau is judged on its longest line (a longer run
    drawn as `abstraction_<N>_<tag>`), by the change between its last two
    checkpoints; the coarser-is-worse row keeps to the sizes' main lines."""
    from benchmarks.bench_fhp_curve import paper_statements

    def line(name, points):
        return [{"algorithm": name, "seed": 0, "steps": n, "nodes_touched": n, "nash_conv_mbb": v} for n, v in points]

    rows = (line("abstraction_100", [(10, 120.0), (40, 118.0)]) + line("abstraction_400", [(10, 200.0), (40, 90.0)])
            + line("abstraction_400_long", [(40, 90.0), (160, 60.0), (640, 57.0)]))  # fmt: skip
    table = paper_statements(rows)
    plateau = next(r for r in table.splitlines() if "plateaus" in r)
    assert "abstraction_400_long (seed 0): 60.0 -> 57.0 (-5.0%) from 1.6e+02 to 6.4e+02 nodes, -2.5% per doubling" in plateau
    assert "abstraction_100 (seed 0): 120.0 -> 118.0 (-1.7%)" in plateau and plateau.endswith("| yes |")
    coarser = next(r for r in table.splitlines() if "coarser" in r)
    assert "_long" not in coarser and coarser.endswith("| yes |")
    still = paper_statements(rows[:4])  # without the long run, the 400 size is still falling
    assert next(r for r in still.splitlines() if "plateaus" in r).endswith("| no: still falling |")


def test_an_abstraction_too_small_for_the_game_is_one_line(tmp_path):
    with pytest.raises(SystemExit, match="abstraction_60: 60 abstract infosets leave -4 .* ask for more"):
        main([TINY_GAME, "--algorithms=abstraction_60", "--iterations=2", f"--out_dir={tmp_path}"])


def test_external_sampling_abstraction_lines_over_seeds_beside_earlier_results(tmp_path):
    """abstraction_<N> solved by external-sampling Linear MCCFR (its own nodes
    touched), two seeds drawn as one line with a band, and earlier results (a CSV
    of this program, a results page's table) drawn beside them with their source."""
    main([TINY_GAME, "--algorithms=abstraction_100", "--abstraction_variant=es_lmccfr", "--es-step=500",
          "--iterations=2000", "--fractions=0.5,1", "--seeds=1,2", "--abstract_nash_conv=last",
          f"--out_dir={tmp_path}", "--page=es"])  # fmt: skip
    with open(tmp_path / "es" / "fhp_curve.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["seed"], r["steps"]) for r in rows] == [("1", "1000"), ("1", "2000"), ("2", "1000"), ("2", "2000")]
    assert rows[1]["nash_conv_mbb"] != rows[3]["nash_conv_mbb"]  # two seeds, two runs
    assert 0 < int(rows[0]["nodes_touched"]) < int(rows[1]["nodes_touched"])
    assert rows[0]["abstract_nash_conv_mbb"] == "" and float(rows[1]["abstract_nash_conv_mbb"]) > 0  # --abstract_nash_conv=last
    page = tmp_path / "deep.md"
    page.write_text("# a page\n\n| iterations | nodes touched | seconds (+ average network) | NashConv (mbb/g) |\n"
                    "|---:|---:|---:|---:|\n| 3 | 1,000 | 10 + 2 | **2,500.0** |\n| 9 | 3,000 | 30 + 2 | 900.5 |\n\n")
    with open(tmp_path / "es" / "fhp_curve.csv", encoding="utf-8") as f:
        lines = f.read().splitlines()
    (tmp_path / "last_first.csv").write_text("\n".join([lines[0], *reversed(lines[1:])]) + "\n")
    main([TINY_GAME, "--algorithms=", f"--rows_from={tmp_path}/es/fhp_curve.csv,deep_cfr={page},"
          f"renamed={tmp_path}/es/fhp_curve.csv,os_nfsp_x={tmp_path}/last_first.csv", f"--out_dir={tmp_path}",
          "--page=together"])  # fmt: skip
    text = (tmp_path / "together.md").read_text()
    assert f"[2] `{page}`" in text and "| deep_cfr |  | 9 iterations | 3,000 | 30.0 | 2.0 | 32.0 |" in text
    assert f"| renamed | 2 | 2,000 iterations | {int(rows[3]['nodes_touched']):,} |" in text  # NAME=FILE.csv
    last = (float(rows[1]["nash_conv_mbb"]) + float(rows[3]["nash_conv_mbb"])) / 2  # each seed's most steps
    assert f"| os_nfsp_x {last:,.1f} (seeds" in text  # rows written last-first still end at their last checkpoint
    low, high = sorted(float(rows[i]["nash_conv_mbb"]) for i in (1, 3))
    assert f"(seeds {low:,.1f}-{high:,.1f})" in text  # the two seeds' range beside their mean
    assert (tmp_path / "together" / "fhp_curve_nodes.png").exists()


def test_rows_from_a_page_without_a_nashconv_table_is_one_line(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# nothing here\n")
    with pytest.raises(SystemExit, match=r"--rows_from deep_cfr=.*p.md: no table with a 'NashConv \(mbb/g\)' column"):
        main([TINY_GAME, "--algorithms=", f"--rows_from=deep_cfr={page}", f"--out_dir={tmp_path}"])


def test_an_external_sampling_line_killed_after_a_checkpoint_resumes_to_the_same_curve(tmp_path, monkeypatch, capsys):
    from benchmarks import bench_fhp_curve

    command = [TINY_GAME, "--algorithms=abstraction_100", "--abstraction_variant=es_lmccfr", "--es-step=500",
               "--iterations=2000", "--fractions=0.5,1", "--abstract_nash_conv=never", f"--out_dir={tmp_path}",
               "--page=es", f"--checkpoint={tmp_path}/ckpt"]  # fmt: skip

    def curve():
        with open(tmp_path / "es" / "fhp_curve.csv", encoding="utf-8") as f:
            return [(r["steps"], r["nodes_touched"], r["nash_conv_mbb"]) for r in csv.DictReader(f)]

    main(command[:-1])
    whole = curve()
    step = bench_fhp_curve.AbstractMCCFRLine.step

    def killed(self):
        if self.steps == 1000:  # after the first checkpoint was saved
            raise KeyboardInterrupt
        step(self)

    monkeypatch.setattr(bench_fhp_curve.AbstractMCCFRLine, "step", killed)
    with pytest.raises(KeyboardInterrupt):
        main(command)
    assert (tmp_path / "ckpt.abstraction_100.seed0.npz").exists()
    monkeypatch.setattr(bench_fhp_curve.AbstractMCCFRLine, "step", step)
    capsys.readouterr()
    main(command)
    out = capsys.readouterr().out
    assert "resumed " in out and ": 1000 iterations, " in out  # from the checkpoint, not from the start
    assert curve() == whole and len(whole) == 2
