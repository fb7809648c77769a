"""Traversals on a Ray cluster of two nodes, one of them lost mid-run (issue 60).

Both nodes run on this machine (`ray.cluster_utils.Cluster`, everything on
127.0.0.1, no dashboard): a head node, which the test process joins as the
learner, and a second node, each with 1 CPU. Deep CFR on Leduc with 2
workers puts one worker on each node; during the second iteration the second
node is killed with SIGKILL, as a machine that vanishes, either once its
worker has finished its shares (their results are in that node's object
store) or at once, while the worker runs one. The run goes on with a new
worker on the head node and ends with exactly the memories and strategies of
an undisturbed run with the same seed.
"""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

from openspiel_cfrx.deep import DeepCFRSolver

ray = pytest.importorskip("ray")
from ray._common.utils import reset_ray_address  # noqa: E402
from ray._private.utils import read_ray_address  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

FAST = dict(advantage_network_train_steps=20, policy_network_train_steps=5, batch_size_advantage=64,
            batch_size_strategy=64, advantage_network_layers=(16,), policy_network_layers=(16,))  # fmt: skip
# 1000 traversals: a share's result is a few hundred KB, so it waits in the worker node's object store
LEDUC_ON_TWO = dict(num_iterations=2, num_traversals=1000, seed=11, workers={"num_workers": 2}, **FAST)
NODE = dict(num_cpus=1, node_ip_address="127.0.0.1", object_store_memory=100 * 1024**2)
# A SIGKILLed node is declared dead after 5 missed 1 s health checks (Ray's default: 5 x 3 s)
HEAD = dict(include_dashboard=False, _system_config={"health_check_period_ms": 1000,
                                                     "health_check_failure_threshold": 5}, **NODE)  # fmt: skip


@pytest.fixture(scope="module")
def cluster():
    """A head node on 127.0.0.1 with the test process connected to it (the
    learner); everything stopped afterwards."""
    assert not ray.is_initialized(), "another test left a Ray connection open in this process"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_USAGE_STATS_ENABLED", "0")
        # Ray rewrites "127.0.0.1" in an address to the machine's outward IP unless it runs in
        # single-machine mode (what it does on macOS and Windows): keep every address on loopback,
        # here (the constant is read at import) and in the node processes (the environment).
        patch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        patch.setattr(ray._private.ray_constants, "ENABLE_RAY_CLUSTER", False)
        cluster = Cluster(initialize_head=True, head_node_args=HEAD)
        address = cluster.address
        try:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
            yield cluster
        finally:
            ray.shutdown()
            cluster.shutdown()
            if read_ray_address() == address:  # Cluster wrote it: no `ray.init()` may find the dead cluster
                reset_ray_address()


@pytest.fixture
def second_node(cluster):
    """A second node (1 CPU) joined to the cluster for one test."""
    node = cluster.add_node(**NODE)
    cluster.wait_for_nodes()
    yield node
    if node in cluster.worker_nodes:
        cluster.remove_node(node)


@pytest.fixture(scope="module")
def clean_run(cluster):
    """An undisturbed 2-worker run (LEDUC_ON_TWO); where its workers ran does
    not change its samples (each share has its own seed)."""
    solver = DeepCFRSolver(pyspiel.load_game("leduc_poker"), **LEDUC_ON_TWO)
    solver.solve()
    solver.sampler.close()
    return solver


def _memories(solver):
    return [memory.state_dict() for memory in (*solver.advantage_buffers, solver.strategy_buffer)]


def _nodes(solver):
    """The node each worker actor runs on, as the actor itself reports it."""
    return ray.get([worker.node_id.remote() for worker in solver.sampler.workers])


def _run_losing_the_second_node(cluster, second, wait_for_its_shares: bool):
    """A 2-worker run, one worker on each node, that SIGKILLs the second node
    in iteration 2 (player 0's round, all shares sent); returns the solver and
    the index of the worker that was on it."""
    head_id, second_id = cluster.head_node.node_id, second.node_id
    solver = DeepCFRSolver(pyspiel.load_game("leduc_poker"), **LEDUC_ON_TWO)
    placed = _nodes(solver)
    assert placed == solver.sampler.worker_nodes and sorted(placed) == sorted([head_id, second_id])
    lost = placed.index(second_id)

    def kill_the_second_node(workers):
        if solver.iteration == 1 and second in cluster.worker_nodes:
            if wait_for_its_shares:  # an actor runs its calls in order: after this, its shares are done
                ray.get(workers[lost].pid.remote())
            cluster.remove_node(second, allow_graceful=False)

    solver.sampler.on_dispatch = kill_the_second_node
    solver.solve()
    assert second not in cluster.worker_nodes
    assert _nodes(solver) == solver.sampler.worker_nodes == [head_id, head_id]  # the new worker on the live node
    return solver, lost


def _assert_same_run(clean, faulty):
    """The same samples, in the same order, hence the same networks: equal, not merely close."""
    for left, right in zip(_memories(clean), _memories(faulty), strict=True):
        for key in ("features", "targets", "legal_mask", "iteration"):
            np.testing.assert_array_equal(left[key], right[key])
    assert faulty.nodes_touched == clean.nodes_touched
    root = pyspiel.load_game("leduc_poker").new_initial_state()
    for first in root.legal_actions():
        for other in root.child(first).legal_actions():
            state = root.child(first).child(other)
            assert faulty.action_probabilities(state) == clean.action_probabilities(state)
            for action in state.legal_actions():  # the second player's turn too
                child = state.child(action)
                if not child.is_terminal():
                    assert faulty.action_probabilities(child) == clean.action_probabilities(child)


def test_a_node_lost_with_its_finished_shares_gives_the_undisturbed_run(cluster, second_node, clean_run):
    """The second node's worker has finished its shares (their results wait in
    that node's object store) when the node dies: the shares are run again."""
    faulty, lost = _run_losing_the_second_node(cluster, second_node, wait_for_its_shares=True)
    assert faulty.sampler.restarts == 1 and faulty.history[0].get("events", []) == []
    events = faulty.history[1]["events"]
    assert len(events) == 1 and f"worker {lost} lost its results with its node" in events[0], events
    _assert_same_run(clean_run, faulty)


# Slow (~15-20 s more, ~40 s alone): the fast tier loses the node after its shares, the path that
# needs the lost results handled; a worker dying inside a share is the path test_distributed.py's
# ray.kill takes too.
@pytest.mark.slow
def test_a_node_lost_during_its_shares_gives_the_undisturbed_run(cluster, second_node, clean_run):
    """The second node dies at once, its worker inside a share (Ray reports the
    actor unreachable, or dead once the node is declared dead): one new
    worker, on the head node, not on the node that stopped answering."""
    faulty, lost = _run_losing_the_second_node(cluster, second_node, wait_for_its_shares=False)
    assert faulty.sampler.restarts == 1 and faulty.history[0].get("events", []) == []
    events = faulty.history[1]["events"]
    assert len(events) == 1 and f"worker {lost} " in events[0] and "re-run from their seeds" in events[0], events
    _assert_same_run(clean_run, faulty)
