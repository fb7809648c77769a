"""Stop and resume at any iteration boundary equals the uninterrupted run, bit
for bit, on CPU: for Deep CFR with every traversal backend, CFR-MIX, the
tabular solvers and the poker vector CFR engine, and through
cfrx_examples/deep_cfr.py.

Each case runs N iterations straight, then for three boundaries k: k
iterations, a checkpoint, a freshly built solver that loads it and runs to N.
The evaluations (NashConv, which trains Deep CFR's policy network) happen at
the same iterations in both, and must not change the training itself
(`test_evaluation_leaves_the_training_run_unchanged`).
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys

import numpy as np
import pyspiel
import pytest

import games  # noqa: F401  (registers flop_holdem and team_goofspiel)
import openspiel_cfrx
from openspiel_cfrx import CFRMixSolver, DeepCFRSolver
from openspiel_cfrx.deep.checkpoint import payload_digest
from openspiel_cfrx.presets import merge_settings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N, BOUNDARIES = 4, (1, 2, 3)
TIMING = {"seconds", "traversal_seconds", "training_seconds", "nodes_per_second"}  # wall clock only
SMALL_POKER = "flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"
TEAM_GAME = "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)"

TINY_DEEP_CFR = dict(num_iterations=N, num_traversals=40, advantage_network_train_steps=6,
                     policy_network_train_steps=6, advantage_network_layers=(8,), policy_network_layers=(8,),
                     memory_capacity=300, averaging={"keep_iteration_networks": True},
                     workers={"num_threads": 1}, seed=5)  # fmt: skip
# backend -> (game, settings), the reservoirs full after an iteration or two: with "state" the
# networks train on the memories merged by infoset (few infosets, large batches) and keep their
# Adam moments from fit to fit (shrink and perturb); else on sampled minibatches, from scratch.
# The poker backend deals as arrays.
DEEP_CFR_CASES = {
    "state": ("kuhn_poker", dict(memory_capacity=60, reinitialize_advantage_networks=0.5)),
    "tree": ("kuhn_poker", dict(memory_capacity=60, batch_size_advantage=4, batch_size_strategy=4)),
    "vectorized": ("leduc_poker", dict(batch_size_advantage=32, batch_size_strategy=32)),
    "poker": (SMALL_POKER, dict(num_traversals=64, batch_size_advantage=64, batch_size_strategy=64,
                                memory_capacity=2000)),
}  # fmt: skip


def _digests(solver) -> dict:
    """Digest of each checkpointed part (networks with their optimisers,
    memories with their reservoir counters and duplicate tracking, kept
    iterates) and of the rest of `state_dict()` (random streams, sampler,
    iteration, history, counters), wall-clock times left out."""
    state = solver.state_dict()
    parts = state.pop("parts")
    state["counters"] = {k: v for k, v in state["counters"].items() if k not in TIMING}
    state["history"] = [{k: v for k, v in row.items() if k not in TIMING} for row in state["history"]]
    return {**{name: payload_digest({"part": part}) for name, part in parts.items()},
            "rest": payload_digest({"state": state})}  # fmt: skip


def _resume_equals_straight(make, evaluate, tmp_path) -> None:
    """Runs `make()` N iterations straight and, for each k, k iterations +
    checkpoint + a fresh `make()` loading it + the rest; `evaluate(solver)`
    (at even iterations) and the digests after every iteration must be equal."""

    def run(solver, until, log):
        while solver.iteration < until:
            solver.run_iteration()
            result = evaluate(solver) if solver.iteration % 2 == 0 else None
            log.append((solver.iteration, result, _digests(solver)))
        return log

    straight = run(make(), N, [])
    for k in BOUNDARIES:
        first = make()
        log = run(first, k, [])
        path = str(tmp_path / f"at{k}.pt")
        first.save_checkpoint(path)
        resumed = make()
        resumed.load_checkpoint(path)
        assert resumed.iteration == k
        assert _digests(resumed) == log[-1][2]
        run(resumed, N, log)
        for (t, result, digests), (_, expected_result, expected) in zip(log, straight, strict=True):
            differing = sorted(name for name in expected if digests[name] != expected[name])
            assert not differing, f"resumed at {k}: {differing} differ at iteration {t}"
            np.testing.assert_array_equal(result, expected_result, err_msg=f"resumed at {k}, iteration {t}")


def _deep_cfr_evaluation(game, exact: bool):
    """NashConv of the policy network and of the SD-CFR average (the
    example's columns), or, for a game not worth extracting, the policy
    network's probabilities on the first strategy-memory entries."""
    if exact:
        return lambda solver: np.array([openspiel_cfrx.nash_conv(game, solver), solver.nash_conv("sd_cfr")])

    def probabilities(solver):
        memory = solver.strategy_buffer
        return solver.probabilities_from_tensors(memory.features[:64], memory.legal_mask[:64])

    return probabilities


@pytest.mark.parametrize("backend", list(DEEP_CFR_CASES))
def test_deep_cfr_resumes_exactly(backend, tmp_path):
    game_string, settings = DEEP_CFR_CASES[backend]
    game = pyspiel.load_game(game_string)
    kwargs = merge_settings(TINY_DEEP_CFR, settings, {"traversal": {"backend": backend}})
    evaluate = _deep_cfr_evaluation(game, exact=backend != "poker")
    _resume_equals_straight(lambda: DeepCFRSolver(game, **kwargs), evaluate, tmp_path)


@pytest.fixture(scope="module")
def team_game():
    return pyspiel.load_game(TEAM_GAME)


TINY_CFR_MIX = dict(num_iterations=N, num_traversals=8, regret_train_steps=5, policy_train_steps=5, batch_size=16,
                    regret_network_layers=(8,), policy_network_layers=(8,), memory_capacity=24, workers={"num_threads": 1},
                    seed=3)  # fmt: skip


@pytest.mark.parametrize("variant", ["cfr_mix", "deep_cfr_mix"])
def test_cfr_mix_resumes_exactly(variant, team_game, tmp_path):
    _resume_equals_straight(lambda: CFRMixSolver(team_game, variant=variant, **TINY_CFR_MIX),
                            lambda solver: np.float64(openspiel_cfrx.nash_conv(team_game, solver)), tmp_path)  # fmt: skip


def _without_policy(digests: dict) -> dict:
    return {name: value for name, value in digests.items() if name not in ("policy", "rest")}


def test_evaluation_leaves_the_training_run_unchanged(kuhn):
    """Evaluating after every iteration (NashConv of the policy network,
    which trains it, and of the SD-CFR average) or never: the same
    advantage networks, memories, kept iterates, random streams and losses."""
    def run(evaluate):
        solver = DeepCFRSolver(kuhn, **TINY_DEEP_CFR, traversal={"backend": "tree"})
        for _ in range(N):
            solver.run_iteration()
            if evaluate:
                openspiel_cfrx.nash_conv(kuhn, solver)
                solver.nash_conv("sd_cfr")
        state = solver.state_dict()
        streams = (state["np_rng"], state["py_rng"], state["sampler"], state["solver"]["advantage_losses"])
        return _without_policy(_digests(solver)), payload_digest({"streams": streams})

    assert run(True) == run(False)


def test_deep_cfr_resumes_exactly_after_the_sampler_is_reseeded(kuhn, tmp_path):
    """`sampler.reseed(seed)` gives the sampler a stream of its own: the checkpoint keeps it."""
    def make():
        return DeepCFRSolver(kuhn, **TINY_DEEP_CFR, traversal={"backend": "tree"})

    straight = make()
    straight.run_iteration()
    straight.sampler.reseed(11)
    straight.solve()
    first = make()
    first.run_iteration()
    first.sampler.reseed(11)
    first.run_iteration()
    first.save_checkpoint(str(tmp_path / "reseeded.pt"))
    resumed = make()
    resumed.load_checkpoint(str(tmp_path / "reseeded.pt"))
    resumed.solve()
    assert _digests(resumed) == _digests(straight)


def test_a_memory_restores_its_duplicate_tracking_exactly():
    """The merged rows (and their order) of a restored memory are those of the
    memory that was saved; one whose tracking stopped stays stopped."""
    from openspiel_cfrx.deep.memories import make_memory

    rng = np.random.default_rng(0)

    def memory(capacity, max_unique):
        m = make_memory("reservoir", capacity, 3, 2)
        m.track_duplicates(max_unique=max_unique)
        return m

    tracking = memory(40, 100)
    for t in range(1, 6):
        features = rng.integers(0, 4, (30, 3)).astype(np.float32)
        tracking.add(features, rng.normal(size=(30, 2)).astype(np.float32), np.ones((30, 2), bool), t, rng)
    restored = memory(40, 100)
    restored.load_state_dict(tracking.state_dict())
    for weighting in ("linear", "uniform"):
        a, b = tracking.aggregate(weighting, 0.5), restored.aggregate(weighting, 0.5)
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    stopped = memory(5, 6)  # 8 infosets seen (tracking stops), at most 5 held
    for i in range(8):
        stopped.add(np.full((1, 3), i, np.float32), np.ones((1, 2), np.float32), np.ones((1, 2), bool), 1, rng)
    assert not stopped.duplicates_tracked
    again = memory(5, 6)
    again.load_state_dict(stopped.state_dict())
    assert not again.duplicates_tracked


@pytest.mark.parametrize("name", sorted(openspiel_cfrx.tabular.SOLVERS))
def test_tabular_solvers_resume_exactly(name, tmp_path):
    game = pyspiel.load_game("leduc_poker")
    options = {"stepsize_scale": 100} if name == "oftrl" else {}
    _tabular_resume_equals_straight(lambda: openspiel_cfrx.tabular.make_solver(name, game, **options), tmp_path)


@pytest.mark.parametrize("team_regrets", ["joint", "product", "product_no_feedback", "independent"])
def test_team_cfr_resumes_exactly(team_regrets, team_game, tmp_path):
    _tabular_resume_equals_straight(
        lambda: openspiel_cfrx.tabular.TeamCFRSolver(team_game, team_regrets, initial_noise=0.1, seed=2), tmp_path)


def _tabular_state(solver) -> list[np.ndarray]:
    driver = solver._driver
    return [driver.strategy, driver.average_accumulator,
            *[getattr(m, name) for m in driver.minimizers for name in m.state_arrays]]  # fmt: skip


def _tabular_resume_equals_straight(make, tmp_path, iterations: int = 12) -> None:
    straight = make()
    straight.run(iterations)
    for k in (1, iterations // 2, iterations - 1):
        first = make()
        first.run(k)
        path = str(tmp_path / f"at{k}.npz")
        first.save(path)
        resumed = make()
        resumed.load(path)
        resumed.run(iterations - k)
        assert resumed.iteration == straight.iteration
        for a, b in zip(_tabular_state(resumed), _tabular_state(straight), strict=True):
            np.testing.assert_array_equal(a, b)
        assert resumed.nash_conv() == straight.nash_conv()


@pytest.fixture(scope="module")
def poker_tree():
    from openspiel_cfrx.poker import PublicTree

    return PublicTree(pyspiel.load_game(SMALL_POKER))


@pytest.mark.parametrize("variant", ["cfr+", "dcfr", "pcfr+", "oftrl"])
def test_vector_cfr_resumes_exactly(variant, poker_tree, tmp_path):
    from openspiel_cfrx.poker import VectorCFR

    def make():
        return VectorCFR(poker_tree, variant, verbose=False)

    def state(solver):
        return [a for key in sorted(solver.strategy)
                for a in (solver.strategy[key], solver.average[key],
                          *[getattr(solver.minimizers[key], name) for name in solver.minimizers[key].state_arrays])]  # fmt: skip

    iterations = 8
    straight = make()
    straight.run(iterations, progress=False)
    for k in (1, 4, 7):
        first = make()
        first.run(k, progress=False)
        path = str(tmp_path / f"at{k}.npz")
        first.save(path)
        resumed = make()
        resumed.load(path)
        resumed.run(iterations, progress=False)
        assert resumed.iteration == iterations
        for a, b in zip(state(resumed), state(straight), strict=True):
            np.testing.assert_array_equal(a, b)
        assert resumed.evaluate()["nash_conv"] == straight.evaluate()["nash_conv"]


EXAMPLE = ["--game=kuhn_poker", "--eval_every=2", "--traversal_backend=vectorized"]
# Tiny settings (counters and any stream that is not restored show at once); in the slow tier,
# settings under which a resume that rebuilt the memories' duplicate-tracking sums instead of
# restoring them changed the NashConv column at iteration 4 (0.267138 against 0.267134).
EXAMPLE_SETTINGS = [
    pytest.param(["--traversals=100", "--advantage_steps=10", "--policy_steps=20", "--layers=8", "--seed=4"],
                 marks=pytest.mark.slow),  # ~25 s of subprocesses; test_resume_examples covers the examples
    pytest.param(["--traversals=200", "--advantage_steps=20", "--policy_steps=300", "--layers=16,16", "--seed=0"],
                 marks=pytest.mark.slow),
]  # fmt: skip


@pytest.mark.parametrize("settings", EXAMPLE_SETTINGS)
def test_extended_example_run_equals_the_uninterrupted_one(settings, tmp_path):
    """cfrx_examples/deep_cfr.py run to 2 iterations and extended to 4 (same
    command, same folders) writes exactly the curve of a straight run to 4."""
    def start(folder, iterations):
        log = open(tmp_path / f"{folder.name}_{iterations}.log", "w")  # (a pipe left unread could fill up)
        process = subprocess.Popen([sys.executable, os.path.join(ROOT, "cfrx_examples", "deep_cfr.py"), *EXAMPLE,
                                    *settings, f"--iterations={iterations}", f"--output_dir={folder}",
                                    f"--checkpoint_dir={folder}"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
        log.close()
        return process, log.name

    def rows(started, folder):
        process, log = started
        process.wait(timeout=300)
        with open(log, encoding="utf-8") as f:
            assert process.returncode == 0, f.read()
        with open(folder / "curve.csv", encoding="utf-8") as f:
            return [{k: v for k, v in row.items() if k not in TIMING} for row in csv.DictReader(f)]

    straight_dir, resumed_dir = tmp_path / "straight", tmp_path / "resumed"
    straight, first = start(straight_dir, 4), start(resumed_dir, 2)  # independent: side by side
    rows(first, resumed_dir)
    resumed = rows(start(resumed_dir, 4), resumed_dir)
    straight = rows(straight, straight_dir)
    assert [row["iteration"] for row in straight] == ["2", "4"]
    assert resumed == straight  # NashConv, SD-CFR NashConv, nodes and traversals, as written
