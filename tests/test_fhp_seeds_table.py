"""benchmarks/fhp_seeds_table.py: checkpoints paired by index across seeds whose
iteration counts differ, the equal-seconds verdicts, and the refusal of a CSV
without both algorithms."""

import csv

import pytest

from benchmarks.fhp_seeds_table import band, main

FIELDS = ["algorithm", "steps", "seconds", "nash_conv_mbb", "br_gain_p0", "br_gain_p1", "nodes_touched"]


def write(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow(dict(zip(FIELDS, row, strict=True)))
    return str(path)


def test_equal_seconds_pairs_by_checkpoint_and_flags_a_rising_gain(tmp_path, capsys):
    seed0 = write(tmp_path / "s0.csv", [
        ("deep_cfr", 20, 45, 400.0, 20.0, 20.0, 6e6), ("deep_cfr", 60, 135, 200.0, 10.0, 10.0, 2e7),
        ("os_es_mccfr", 270000, 45, 800.0, 40.0, 40.0, ""), ("os_es_mccfr", 990000, 135, 100.0, 5.0, 5.0, "")])  # fmt: skip
    seed1 = write(tmp_path / "s1.csv", [
        ("deep_cfr", 24, 45, 300.0, 15.0, 15.0, 7e6), ("deep_cfr", 73, 135, 250.0, 16.0, 9.0, 2.2e7),
        ("os_es_mccfr", 310000, 45, 600.0, 30.0, 30.0, ""), ("os_es_mccfr", 1036000, 135, 125.0, 6.0, 6.0, "")])  # fmt: skip
    main(["--against=os_es_mccfr", f"--plot={tmp_path / 'bands.png'}", seed0, seed1])
    lines = capsys.readouterr().out.splitlines()
    second = [line for line in lines if line.startswith("| 2 | ")]
    assert "| 2.00x |" in second[0] and second[0].endswith("| yes |")  # seed 0: 200 / 100, all fell
    assert "| 2.00x |" in second[1] and second[1].endswith("| NO |")  # seed 1: P0's gain rose 15 -> 16
    summary = [line for line in lines if line.startswith("| 2 | 2 | 135 |")]
    assert (tmp_path / "bands.png").read_bytes()[:4] == b"\x89PNG"
    assert summary and "2.00x ± 0.00" in summary[0] and "225.0 ± 317.7" in summary[0]  # sd 35.36 / sqrt 2 x 12.706


def test_equal_seconds_against_a_shorter_es_run_shows_deep_cfr_alone_after_it(tmp_path, capsys):
    rows = [("deep_cfr", 20, 45, 400.0, 20.0, 20.0, 6e6), ("deep_cfr", 60, 135, 200.0, 10.0, 10.0, 2e7),
            ("deep_cfr", 90, 300, 150.0, 9.0, 8.0, 3e7), ("os_es_mccfr", 270000, 45, 800.0, 40.0, 40.0, ""),
            ("os_es_mccfr", 990000, 135, 100.0, 5.0, 5.0, "")]  # fmt: skip
    main(["--against=os_es_mccfr", f"--plot={tmp_path / 'bands.png'}", write(tmp_path / "s0.csv", rows)])
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if line.startswith("| 2 | 0 |")][0].count("2.00x") == 1
    third = [line for line in lines if line.startswith("| 3 | 0 |")][0]
    assert "| 300 / – |" in third and "| 150.0 | – | – |" in third and third.endswith("| yes |")
    assert [line for line in lines if line.startswith("| 3 | 1 | 300 |")][0].endswith("| 150.0 | – | – |")
    with pytest.raises(SystemExit, match="3 deep_cfr and 4 os_es_mccfr checkpoints"):  # longer is still refused
        main(["--against=os_es_mccfr", write(tmp_path / "s1.csv", rows + [rows[-1]] * 2)])


def test_refuses_a_csv_without_the_other_algorithm(tmp_path):
    only_deep = write(tmp_path / "s0.csv", [("deep_cfr", 20, 45, 400.0, 20.0, 20.0, 6e6)])
    with pytest.raises(SystemExit, match="1 deep_cfr and 0 os_es_mccfr_py checkpoints"):
        main([only_deep])


def test_band_is_the_95_percent_t_interval():
    assert band([1.0]) == "1.0"
    assert band([1.0, 3.0]) == "2.0 ± 12.7"  # t(0.975, 1) = 12.706, sd 1.414 / sqrt(2) = 1
