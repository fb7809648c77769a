"""The NFSP contender's settings (every `nfsp.NFSP` argument passed through,
bad values refused in one line), the 5x2 sweep program end to end on a tiny
flop hold'em, and `bench_full_fhp_nfsp.py --nfsp_preset`."""

from __future__ import annotations

import csv
import functools

import numpy as np
import pyspiel
import pytest
import torch

from benchmarks import sweep_nfsp_fhp
from cfrx_examples.contenders import (
    NFSP_LEDUC_DEFAULTS,
    NFSP_PRESETS,
    make_contender,
    nfsp_settings,
)
from openspiel_cfrx.neural_poker.suit_symmetric import SuitCanonical

TINY = "flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"

EVERY_SETTING = dict(
    hidden=(24, 16), reservoir_buffer_capacity=3000, anticipatory_param=0.3, replay_buffer_capacity=4000,
    batch_size=32, learn_every=16, rl_learning_rate=0.05, sl_learning_rate=0.002, min_buffer_size_to_learn=200,
    update_target_network_every=500, weight_update_coeff=0.5, epsilon_start=0.2, epsilon_end=0.01,
    epsilon_decay_duration=777, epsilon_decay_schedule_str="linear", optimizer_str="adam", loss_str="huber",
    gradient_clipping=5.0, reward_scale=4.0, suit_symmetric=True,
)  # fmt: skip


def test_every_setting_reaches_the_nfsp_agents():
    assert set(EVERY_SETTING) == set(NFSP_LEDUC_DEFAULTS)
    assert all(EVERY_SETTING[k] != v for k, v in NFSP_LEDUC_DEFAULTS.items())  # each one observable
    contender = make_contender("os_nfsp", pyspiel.load_game(TINY), seed=3, **EVERY_SETTING)
    assert contender._reward_scale == 4.0  # noqa: SLF001
    for agent in contender._agents:  # noqa: SLF001
        rl = agent._rl_agent
        assert all(isinstance(net[0], SuitCanonical) for net in (agent._avg_network, rl._q_network, rl._target_q_network))
        widths = [m.out_features for m in agent._avg_network.modules() if isinstance(m, torch.nn.Linear)]
        assert widths[:-1] == [24, 16] and list(agent._layer_sizes) == [24, 16] and list(rl._layer_sizes) == [24, 16]
        assert agent._reservoir_buffer_capacity == 3000 and agent._anticipatory_param == 0.3
        assert agent._batch_size == 32 and rl._batch_size == 32
        assert agent._learn_every == 16 and rl._learn_every == 16
        assert agent._min_buffer_size_to_learn == 200 and rl._min_buffer_size_to_learn == 200
        assert isinstance(agent._optimizer, torch.optim.Adam) and isinstance(rl._optimizer, torch.optim.Adam)
        assert agent._optimizer.param_groups[0]["lr"] == 0.002 and rl._optimizer.param_groups[0]["lr"] == 0.05
        assert agent._gradient_norm_clipping == 5.0
        assert rl._replay_buffer_capacity == 4000 and rl._update_target_network_every == 500 and rl._tau == 0.5
        assert isinstance(rl.loss_class, functools.partial)  # huber (mse is F.mse_loss itself)
        schedule = [rl.epsilon_schedule(t) for t in (0, 777 // 2, 777, 5000)]
        assert schedule[0] == pytest.approx(0.2) and schedule[2] == pytest.approx(0.01) == schedule[3]
        assert schedule[1] == pytest.approx(0.2 + (0.01 - 0.2) / 777 * (777 // 2))  # linear


def test_defaults_are_the_leduc_example():
    contender = make_contender("os_nfsp", pyspiel.load_game("kuhn_poker"), seed=0)
    assert contender.settings == nfsp_settings() and NFSP_PRESETS["leduc_defaults"] == {}
    agent = contender._agents[0]  # noqa: SLF001
    assert list(agent._layer_sizes) == [128] and agent._anticipatory_param == 0.1
    assert isinstance(agent._optimizer, torch.optim.SGD) and agent._optimizer.param_groups[0]["lr"] == 0.01
    assert agent._rl_agent._update_target_network_every == 19200
    assert agent._rl_agent.epsilon_schedule(0) == pytest.approx(0.06)


@pytest.mark.parametrize("bad, word", [
    (dict(rl_learning_rate=-0.1), "rl_learning_rate"), (dict(sl_learning_rate=0), "sl_learning_rate"),
    (dict(anticipatory_param=1.5), "anticipatory_param"), (dict(anticipatory_param=-0.1), "anticipatory_param"),
    (dict(reservoir_buffer_capacity=0), "reservoir_buffer_capacity"), (dict(replay_buffer_capacity=0), "replay"),
    (dict(batch_size=2.5), "batch_size"), (dict(hidden=()), "hidden"), (dict(hidden=(64, 0)), "hidden"),
    (dict(epsilon_start=0.1, epsilon_end=0.2), "epsilon_end"), (dict(epsilon_start=0), "epsilon_start"),
    (dict(epsilon_decay_schedule_str="cosine"), "epsilon_decay_schedule_str"), (dict(optimizer_str="rmsprop"),
    "optimizer_str"), (dict(reward_scale=float("nan")), "reward_scale"), (dict(weight_update_coeff=1), "weight"),
    (dict(learning_rate=0.1), "unknown NFSP setting"), (dict(learn_every=True), "learn_every"),
    (dict(suit_symmetric="yes"), "suit_symmetric"), (dict(suit_symmetric=True), "needs a poker game"),
])  # fmt: skip
def test_bad_settings_get_one_line(bad, word):
    with pytest.raises(ValueError) as err:
        make_contender("os_nfsp", pyspiel.load_game("kuhn_poker"), seed=0, **bad)
    assert word in str(err.value) and "\n" not in str(err.value)


def test_rewards_reach_the_replay_memory_divided_by_reward_scale():
    contender = make_contender("os_nfsp", pyspiel.load_game("kuhn_poker"), seed=1, episodes_per_step=200,
                               anticipatory_param=1.0, reward_scale=4.0)  # fmt: skip
    contender.step()
    buffer = contender._agents[0]._rl_agent.replay_buffer  # noqa: SLF001
    rewards = buffer.experience.reward[: len(buffer)]
    assert set(np.abs(rewards).round(6)) <= {0.0, 0.25, 0.5} and np.abs(rewards).max() == 0.5  # kuhn: +-1, +-2


def test_eval_points_and_combined_settings():
    assert sweep_nfsp_fhp.eval_points(50_000, 5, 500) == [3000, 6500, 12500, 25000, 50000]
    assert sweep_nfsp_fhp.eval_points(2000, 3, 250) == [500, 1000, 2000]
    configs = {name: nfsp_settings(**s) for name, (_, s) in sweep_nfsp_fhp.GRID.items()}
    final = {("hs", 0): 500.0, ("hs_eta0.5", 0): 400.0, ("hs_adam", 0): 450.0, ("hs_sl0.02", 0): 480.0,
             ("hs_rl0.01", 0): 900.0}  # fmt: skip
    merged = sweep_nfsp_fhp.combined_settings(final, configs)
    # eta 0.5 and Adam beat hs; Adam's rates win over the SL rate 0.02 (450 < 480); RL rate 0.01 lost
    assert merged["anticipatory_param"] == 0.5 and merged["optimizer_str"] == "adam"
    assert merged["sl_learning_rate"] == 0.001 and merged["rl_learning_rate"] == 0.001
    assert merged["hidden"] == (128, 128) and merged["reward_scale"] == 100.0
    assert sweep_nfsp_fhp.combined_settings({("hs", 0): 1.0, ("hs_adam", 0): 2.0}, configs) is None


def _sweep(tmp_path, *extra):
    out = tmp_path / "out"
    sweep_nfsp_fhp.main([f"--game={TINY}", "--configs=leduc_defaults,hs", "--episodes=300", "--episodes_per_step=100",
                         "--points=2", "--seeds=2", "--top=1", "--no-combine", f"--out_dir={out}",
                         f"--output={tmp_path / 'page.md'}", *extra])  # fmt: skip
    with open(out / "nfsp_sweep.csv", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_sweep_writes_rows_and_a_page_and_resumes(tmp_path):
    rows = _sweep(tmp_path)
    runs = sorted({(r["config"], int(r["seed"])) for r in rows})
    assert runs == [("hs", 0), ("hs", 1), ("leduc_defaults", 0), ("leduc_defaults", 1)]
    assert sorted(int(r["episodes"]) for r in rows if r["config"] == "hs" and r["seed"] == "0") == [200, 300]
    assert all(0 < float(r["nash_conv_mbb"]) and float(r["train_seconds"]) > 0 for r in rows)
    page = (tmp_path / "page.md").read_text()
    assert "<!-- generated by the program" in page and "- commit:" in page and "sweep_nfsp_fhp" in page
    assert "## Sweep" in page and "## Seeds" in page and "## Chosen settings" in page and "`hs`" in page
    # a finished sweep is not rerun; a run missing its last row (killed) is rerun, its rows replaced
    kept = [r for r in rows if not (r["config"] == "hs" and r["seed"] == "1" and r["episodes"] == "300")]
    with open(tmp_path / "out" / "nfsp_sweep.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=sweep_nfsp_fhp.FIELDS)
        writer.writeheader()
        writer.writerows(kept)
    again = _sweep(tmp_path)
    assert len(again) == len(rows)
    unchanged = [r for r in again if (r["config"], r["seed"]) != ("hs", "1")]
    assert unchanged == [r for r in rows if (r["config"], r["seed"]) != ("hs", "1")]


def test_a_diverging_run_is_recorded_as_failed_and_not_retried(tmp_path, monkeypatch):
    real = sweep_nfsp_fhp.make_contender

    def diverging(name, game, seed, **settings):
        contender = real(name, game, seed=seed, **settings)
        if settings.get("reward_scale") == 100.0 and seed == 0:  # hs on seed 0: fails in its second step
            steps = iter([contender.step])
            contender.step = lambda: next(steps, lambda: (_ for _ in ()).throw(TypeError("nan")))()
        return contender

    monkeypatch.setattr(sweep_nfsp_fhp, "make_contender", diverging)
    rows = _sweep(tmp_path, "--seeds=1")
    failed = [r for r in rows if r["failed"]]
    assert [(r["config"], r["episodes"]) for r in failed] == [("hs", "100")] and "TypeError" in failed[0]["failed"]
    assert "Failed: `hs` seed 0" in (tmp_path / "page.md").read_text()
    assert _sweep(tmp_path, "--seeds=1") == rows  # finished (failed) runs are not rerun


@pytest.mark.parametrize("argv, word", [(["--configs=hs,nope"], "nope"), (["--episodes=250"], "multiple"),
                                        (["--points=0"], "--points")])  # fmt: skip
def test_sweep_refuses_bad_flags(tmp_path, capsys, argv, word):
    with pytest.raises(SystemExit):
        sweep_nfsp_fhp.parse_args(["--out_dir", str(tmp_path), *argv])
    assert word in capsys.readouterr().err


@pytest.mark.slow
def test_sweep_quick_tier(tmp_path):
    sweep_nfsp_fhp.main(["--quick", f"--game={TINY}", f"--out_dir={tmp_path}", f"--output={tmp_path / 'q.md'}"])
    page = (tmp_path / "q.md").read_text()
    assert "<!-- generated by the program" in page and "`leduc_defaults`" in page and "## Chosen settings" in page


def test_full_fhp_program_takes_a_preset_and_refuses_another_presets_checkpoints(tmp_path, monkeypatch):
    from benchmarks import bench_full_fhp_nfsp

    monkeypatch.setitem(NFSP_PRESETS, "tiny_test", dict(hidden=(8,), anticipatory_param=0.5))
    args = [f"--game={TINY}", "--seconds=0.5", "--episodes_per_step=50", f"--out_dir={tmp_path}"]
    bench_full_fhp_nfsp.main([*args, "--nfsp_preset=tiny_test", f"--output={tmp_path / 'p.md'}"])
    saved = torch.load(bench_full_fhp_nfsp.checkpoint_path(str(tmp_path), 0), weights_only=False)
    assert saved["preset"] == "tiny_test" and saved["networks"][0]["model.0.0.weight"].shape[0] == 8
    assert "preset `tiny_test`" in (tmp_path / "p.md").read_text()
    with pytest.raises(SystemExit, match="tiny_test"):
        bench_full_fhp_nfsp.main([*args, "--nfsp_preset=leduc_defaults"])


def test_a_suit_symmetric_nfsp_is_evaluated_on_the_suit_classes_exactly(tmp_path, monkeypatch):
    """`suit_symmetric=True` NFSP (the `fhp_full_symmetric` preset's network):
    the exact NashConv on one board per suit class equals the one over every
    board to 1e-9, the program takes that path and records the seed."""
    import csv

    from benchmarks import bench_full_fhp_nfsp

    monkeypatch.setitem(NFSP_PRESETS, "tiny_symmetric", dict(hidden=(8,), min_buffer_size_to_learn=50,
                                                             learn_every=8, suit_symmetric=True))  # fmt: skip
    args = [f"--game={TINY}", "--seconds=0.5", "--episodes_per_step=50", f"--out_dir={tmp_path}", "--clock=cpu",
            "--seed=1"]
    bench_full_fhp_nfsp.main([*args, "--nfsp_preset=tiny_symmetric", f"--output={tmp_path / 'p.md'}"])
    with open(tmp_path / "nfsp.csv", encoding="utf-8") as f:
        (row,) = list(csv.DictReader(f))
    page = (tmp_path / "p.md").read_text()
    assert row["seed"] == "1" and "one board per suit class" in page and "CPU seconds" in page
    game = pyspiel.load_game(TINY)
    nets, saved = bench_full_fhp_nfsp.average_networks(game, bench_full_fhp_nfsp.parse_args(
        [*args, "--nfsp_preset=tiny_symmetric"]), bench_full_fhp_nfsp.checkpoint_path(str(tmp_path), 0))
    every_board = bench_full_fhp_nfsp.evaluate(game, nets, suit_symmetric=True, isomorphism=False)
    classes = bench_full_fhp_nfsp.evaluate(game, nets, suit_symmetric=True)
    assert saved["seed"] == 1 and float(row["nash_conv_chips"]) == pytest.approx(classes["nash_conv_chips"], abs=1e-12)
    assert classes["nash_conv_chips"] == pytest.approx(every_board["nash_conv_chips"], abs=1e-9)
    assert every_board["nash_conv_chips"] > 0.01 and classes["queries"] < every_board["queries"]
    with pytest.raises(SystemExit, match="seed 1"):
        bench_full_fhp_nfsp.main([*args[:-1], "--seed=2", "--nfsp_preset=tiny_symmetric"])
    with pytest.raises(SystemExit, match="counted cpu seconds"):
        bench_full_fhp_nfsp.main([*args, "--clock=wall", "--nfsp_preset=tiny_symmetric"])
