"""benchmarks/fhp_tail.py: the dense curve of a saved bench_fhp_curve.py Deep CFR
run (sd_cfr average), from its checkpoint, agreeing with the run's own rows."""

import csv
import json

import pytest

from benchmarks import bench_fhp_curve, fhp_tail

GAME = "--game=flop_holdem(num_ranks=7,num_suits=1,max_raises=0 1)"
SMALL = {"traversal_backend": "poker", "num_traversals": 100, "advantage_network_layers": [16, 16],
         "advantage_network_train_steps": 20, "memory_capacity": 20000, "average_policy": "sd_cfr",
         "regret_scale": "pot"}  # fmt: skip


def read(path):
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_dense_curve_of_a_saved_run_contains_its_checkpoints(tmp_path):
    ckpt = tmp_path / "run.pt"
    bench_fhp_curve.main([GAME, "--algorithms=deep_cfr", "--iterations=6", "--fractions=0.5,1",
                          f"--checkpoint={ckpt}", f"--out_dir={tmp_path / 'bench'}",
                          f"--deep_cfr={json.dumps(SMALL)}"])  # fmt: skip
    run = read(tmp_path / "bench" / "fhp_curve" / "fhp_curve.csv")
    fhp_tail.main([str(ckpt), "--every=2", "--also=1,5,9", "--from_fraction=0.3", f"--out={tmp_path / 'tail'}"])
    rows = read(tmp_path / "tail" / "run.csv")
    assert [int(r["iterations"]) for r in rows] == [1, 2, 3, 4, 5, 6]  # 9: past the end
    assert [int(r["run_checkpoint"]) for r in rows] == [0, 0, 1, 0, 0, 1]
    ours = {int(r["iterations"]): r for r in rows}
    for own in run:  # the run's rows, at its own iterations (the tool also checks this, to 1e-9 chips)
        k = int(own["steps"])
        for key in ("nash_conv_mbb", "br_gain_p0", "br_gain_p1"):
            assert float(ours[k][key]) == pytest.approx(float(own[key]), abs=1e-6)
    seconds = [float(r["seconds"]) for r in rows]
    assert seconds == sorted(seconds) and seconds[-1] == pytest.approx(float(run[-1]["solver_seconds"]), rel=0.05)
    assert "both slopes < 0?" in (tmp_path / "tail" / "tail.md").read_text()
    assert (tmp_path / "tail" / "tail.png").exists()
    # Iteration t weighted t^0 (uniform): one iterate is the same average; two differ.
    fhp_tail.main([str(ckpt), "--every=2", "--also=1", "--weight_power=0", f"--out={tmp_path / 'uniform'}"])
    uniform = {int(r["iterations"]): r for r in read(tmp_path / "uniform" / "run.csv")}
    assert float(uniform[1]["nash_conv_mbb"]) == pytest.approx(float(ours[1]["nash_conv_mbb"]), abs=1e-9)
    assert abs(float(uniform[6]["nash_conv_mbb"]) - float(ours[6]["nash_conv_mbb"])) > 1e-6
    assert "weighted t^0" in (tmp_path / "uniform" / "tail.md").read_text()
    # The same run with average_weighting="uniform" (training does not read the average's weights): its own
    # curve (checked against its own rows by the tool) is the linear run's re-weighted by t^0, and back.
    uniform_run = tmp_path / "uniform_run.pt"
    bench_fhp_curve.main([GAME, "--algorithms=deep_cfr", "--iterations=6", "--fractions=0.5,1",
                          f"--checkpoint={uniform_run}", f"--out_dir={tmp_path / 'bench_u'}",
                          f"--deep_cfr={json.dumps({**SMALL, 'average_weighting': 'uniform'})}"])  # fmt: skip
    fhp_tail.main([str(uniform_run), "--every=2", "--also=1", f"--out={tmp_path / 'own'}"])
    fhp_tail.main([str(uniform_run), "--every=2", "--also=1", "--weight_power=1", f"--out={tmp_path / 'back'}"])
    own = {int(r["iterations"]): r for r in read(tmp_path / "own" / "uniform_run.csv")}
    back = {int(r["iterations"]): r for r in read(tmp_path / "back" / "uniform_run.csv")}
    for k in (1, 2, 4, 6):
        for key in ("nash_conv_mbb", "br_gain_p0", "br_gain_p1"):
            assert float(own[k][key]) == pytest.approx(float(uniform[k][key]), abs=1e-9)
            assert float(back[k][key]) == pytest.approx(float(ours[k][key]), abs=1e-9)
    with pytest.raises(SystemExit, match="no checkpoint at"):
        fhp_tail.main([str(tmp_path / "missing.pt"), f"--out={tmp_path / 'x'}"])
