"""Traversals on Ray workers: a `Sampler` whose K traversals run on N actors.

Deep CFR's cost is K traversals per iteration and player (Algorithm 1 lines
3-5, Algorithm 2) plus SGD; the traversals of one iteration are independent
given sigma^t, so they spread over processes. `RaySampler.collect` does, per
call (one traverser p at iteration t):

1. the learner puts sigma^t (a picklable snapshot of the current networks:
   `solver.strategy_snapshot()`) in Ray's object store once;
2. K is cut into shares by factoring (`share_sizes`: rounds of N equal
   shares, each round handing out half of what is left, down to the
   sampler's smallest efficient share; K/N each when K is small); each worker
   runs one share at a time with its own in-process sampler (any backend:
   pyspiel states, tree, vectorised, CFR-MIX's probes) and a random stream
   seeded from (seed, t, p, share) alone, and gets the next unsent share when
   it finishes, so the big shares keep every worker busy and the small last
   ones even out slow cores and long deals;
3. the learner takes each share's chunks, as compact numpy arrays, in share
   order, and the solver inserts them into its memories in that order.

So a fixed seed and worker count reproduce a run exactly, whatever the timing
and whichever worker ran which share.
A worker that dies during its share (a crash, a lost node, `ray.kill`), or
whose finished results were lost with its node before the learner fetched
them, is replaced by a new actor on a live node and the share re-run from the
same seed: the memories receive exactly the samples a healthy worker would
have returned, never part of a share (tests/test_ray_cluster.py loses one of
two nodes mid-run). What happened goes to `take_events()` (the iteration's
log line).

Ray is optional (`pip install 'openspiel_cfrx[ray]'`); nothing here imports it
until a `RaySampler` is built. Workers need this package importable (installed
on every node of a cluster). The sampler factory travels pickled with every
pyspiel game in it replaced by its game string and the modules that register
it (`dumps`), so Python-implemented games (registered by `import games`, say)
are rebuilt by `load_game` on the worker.
"""

from __future__ import annotations

import importlib
import io
import os
import pickle
import resource
import socket
import time
from collections.abc import Callable

import numpy as np

from openspiel_cfrx.sampling import Sampler

RAY_INSTALL_HINT = "pip install 'openspiel_cfrx[ray]' (or: pip install -c constraints.txt ray)"
MAX_RESTARTS_PER_SHARE = 3


class RayUnavailableError(ImportError):
    """num_workers > 1 without Ray installed."""


class RayConnectionError(ConnectionError):
    """A Ray address that cannot be reached."""


def import_ray():
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(f"num_workers > 1 runs traversals on Ray, which is not installed: {RAY_INSTALL_HINT}") from None
    return ray


def connect(num_workers: int, address: str | None):
    """Ray, initialised: an existing connection of this process, else a new
    local instance sized to the machine (address None), else the cluster at
    `address` ("auto", "host:port" or "ray://host:port")."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    quiet = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    # A local instance talks to this machine only: no usage-statistics upload (the user's setting wins).
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if address is None:
        # Ray starts workers at niceness 15, so its own processes and the learner
        # (niceness 0) preempt them; a local instance that exists to run
        # traversals runs them at 0 (16 workers at K = 10,000: ~8% more
        # throughput, benchmarks/results/distributed.md). RAY_worker_niceness wins.
        system = {} if "RAY_worker_niceness" in os.environ else {"_system_config": {"worker_niceness": 0}}
        ray.init(address="local", num_cpus=max(os.cpu_count() or 1, int(num_workers)), **quiet, **system)
        return ray
    _check_reachable(address)
    try:
        ray.init(address=address, **quiet)
    except (ConnectionError, ValueError, RuntimeError) as e:
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise RayConnectionError(f"cannot join the Ray cluster at {address!r}: {first_line} "
                                 "(start one with `ray start --head`, or pass ray_address=None for a local instance)") from None  # fmt: skip
    return ray


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """A "host:port" address must accept a TCP connection within `timeout`
    seconds (Ray itself retries for minutes before giving up)."""
    if address == "auto" or address.startswith("ray://") or ":" not in address:
        return  # "auto" and bad formats fail fast inside ray.init; ray:// has its own client
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except (OSError, ValueError) as e:
        raise RayConnectionError(f"cannot reach a Ray cluster at {address!r} ({e}); start its head with "
                                 "`ray start --head` and pass the address it prints, or ray_address=None "
                                 "for a local instance") from None  # fmt: skip


def game_modules(game) -> list[str]:
    """Python modules a worker must import before it can load `game` (those
    that registered a Python-implemented game with pyspiel); [] for C++ games."""
    module = type(game).__module__
    return [] if module.startswith("pyspiel") or module == "builtins" else [module]


def load_game(game_string: str, modules: list[str]):
    """pyspiel.load_game after importing the modules that register the game."""
    import pyspiel

    for module in modules:
        importlib.import_module(module)
    return pyspiel.load_game(game_string)


def dumps(obj, cloudpickle) -> bytes:
    """`cloudpickle.dumps(obj)` with each pyspiel game as `load_game(str(game), game_modules(game))`."""
    import pyspiel

    class GamePickler(cloudpickle.CloudPickler):
        def reducer_override(self, value):
            if isinstance(value, pyspiel.Game):
                return load_game, (str(value), game_modules(value))
            return super().reducer_override(value)

    buffer = io.BytesIO()
    GamePickler(buffer).dump(obj)
    return buffer.getvalue()


def share_seed(seed: int, iteration: int, traverser: int, share: int) -> int:
    """The random seed of share `share` at (iteration, traverser)."""
    return int(np.random.SeedSequence([seed, iteration, traverser, share]).generate_state(1, np.uint64)[0])


def split(count: int, parts: int) -> list[int]:
    """`count` as `parts` integers differing by at most one (first ones larger)."""
    return [count // parts + (w < count % parts) for w in range(parts)]


def share_sizes(count: int, num_workers: int, min_share: int) -> list[int]:
    """`count` traversals as shares for `num_workers` workers, by factoring
    (Hummel, Schonberg & Flynn 1992): rounds of N equal shares, each round
    handing out half of the traversals not yet handed out (ceil(left / 2N)
    each), until that would be below `min_share`; then what is left as N
    shares differing by at most one. Workers take the next share when free,
    so early shares are big (little per-share cost) and the last ones small
    (the round ends with every worker finishing together, whichever cores are
    slow). `count` <= 2N x `min_share` gives N equal shares, one per worker."""
    n, sizes, left = max(1, int(num_workers)), [], int(count)
    while left > 0:
        share = -(-left // (2 * n))
        if share < max(1, min_share) or share * n > left:
            return sizes + split(left, n)
        sizes += [share] * n
        left -= share * n
    return sizes


def pick_node(nodes: dict[str, float], placed: list[str | None]) -> str | None:
    """The node for one more worker: among `nodes` (id -> CPUs, live nodes
    with CPUs), the one with the fewest workers per CPU once it has this one
    (`placed`: the other workers' nodes; ties: the first in `nodes`); None
    when `nodes` is empty. Equal nodes take workers in turn; a 32-CPU node
    takes twice a 16-CPU one's."""
    counts = {node: 0 for node in nodes}
    for node in placed:
        if node in counts:
            counts[node] += 1
    return min(nodes, key=lambda node: (counts[node] + 1) / nodes[node], default=None)


class TraversalWorker:
    """A Ray actor's body: one in-process sampler built from a pickled factory
    (`dumps`); one share of traversals per call."""

    def __init__(self, factory: bytes, torch_threads: int = 1):
        import torch

        torch.set_num_threads(torch_threads)  # one core per worker; N workers share the machine
        self.sampler = pickle.loads(factory)()

    def pid(self) -> int:
        return os.getpid()

    def node_id(self) -> str:
        """The Ray node this actor runs on (hex), to see where a cluster placed the workers."""
        import ray

        return ray.get_runtime_context().get_node_id()

    def collect(self, strategy, traverser: int, iteration: int, count: int, seed: int) -> tuple[list, dict]:
        """Every chunk of `count` traversals, drawn with a stream seeded by
        `seed`, and what they cost here: wall seconds, this thread's CPU
        seconds and its involuntary context switches (wall - CPU is time the
        worker was ready but another process had its core)."""
        start, cpu, switches = time.perf_counter(), time.thread_time(), _involuntary_switches()
        self.sampler.reseed(seed)
        chunks = list(self.sampler.collect(strategy, traverser, iteration, count))
        return chunks, {"seconds": time.perf_counter() - start, "cpu": time.thread_time() - cpu,
                        "preempted": _involuntary_switches() - switches}  # fmt: skip


def _involuntary_switches() -> int:
    """This thread's involuntary context switches so far (0 where the OS does not count them)."""
    return getattr(resource.getrusage(getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)), "ru_nivcsw", 0)


class RaySampler(Sampler):
    """`num_workers` Ray actors, each holding the sampler `factory()` builds
    (a picklable zero-argument callable, e.g. a `functools.partial` of
    `make_sampler`). `collect`'s `strategy` must be picklable (a snapshot of
    the networks, not a bound method of the solver).

    Args:
      factory: builds a worker's in-process sampler (with `reseed(seed)`).
      num_workers: actors (>= 2; one in-process sampler is the 1-worker path).
      seed: the solver's seed; share i is seeded by (seed, t, p, i).
      address: None (local instance), "auto", "host:port" or "ray://host:port".
      min_share: the smallest share factoring hands out (`share_sizes`); the
        backend's `sampler.smallest_share`: smaller shares run their
        traversals in smaller lock-step batches, which costs more per
        traversal than the balancing gains.
      cpus_per_worker: CPUs each actor holds while alive (None: Ray's actor
        default, 1 to place and 0 to run, so several solvers can share a
        local instance).

    Actors go to a cluster's live nodes in proportion to their CPUs
    (`pick_node`, each pinned with a soft node affinity); Ray's own "SPREAD"
    is best effort (it put both workers of a 2-node test cluster on one node
    in 2 of 4 tries). `worker_nodes` lists each worker's node.
    """

    distributed = True

    def __init__(self, factory: Callable[[], Sampler], num_workers: int, seed: int,
                 address: str | None = None, min_share: int = 1, cpus_per_worker: float | None = None):  # fmt: skip
        if int(num_workers) < 2:
            raise ValueError(f"RaySampler needs num_workers >= 2, got {num_workers} (1 worker runs in-process)")
        self._ray = connect(num_workers, address)
        self.num_workers, self.seed = int(num_workers), int(seed)
        self._payload = dumps(factory, self._ray.cloudpickle)
        actor_class = self._ray.remote(TraversalWorker)
        self._actor_class = actor_class if cpus_per_worker is None else actor_class.options(num_cpus=cpus_per_worker)
        self.workers: list = []
        self.worker_nodes: list[str | None] = []  # the node each worker was placed on (None: Ray's choice)
        for _ in range(self.num_workers):
            actor, node = self._start_worker()
            self.workers.append(actor)
            self.worker_nodes.append(node)
        self._ray.get([w.pid.remote() for w in self.workers])  # built (game, tree) before the first iteration
        self._events: list[str] = []
        self.on_dispatch: Callable[[list], None] | None = None  # called with the workers once shares are sent
        # seconds: ray.put of sigma^t; waiting for results; the slowest worker's
        # own traversal time per round (the rest of a round's wall time is overhead)
        # and the workers' mean (the gap between the two is imbalance); the workers'
        # mean CPU seconds (mean - CPU: time their cores went to other processes),
        # involuntary context switches and shares, summed over rounds
        self.timings = {"broadcast": 0.0, "wait": 0.0, "slowest_worker": 0.0, "mean_worker": 0.0,
                        "mean_worker_cpu": 0.0, "preempted": 0, "shares": 0}
        self.restarts = 0
        self.queued = 2  # shares sent to a worker ahead (1: the next share is sent when one ends)
        self.min_share = max(1, int(min_share))

    def _start_worker(self, worker: int | None = None, avoid: str | None = None) -> tuple:
        """A new actor (and its node) on the live node `pick_node` chooses
        given the other workers' nodes (all but `worker`, which it replaces),
        not on node `avoid` while another one has CPUs."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = {n["NodeID"]: n.get("Resources", {}).get("CPU", 0.0) for n in self._ray.nodes() if n.get("Alive")}
        nodes = {n: cpus for n, cpus in nodes.items() if cpus > 0}
        if len(nodes) > 1:
            nodes.pop(avoid, None)
        others = [node for i, node in enumerate(self.worker_nodes) if i != worker]
        node = pick_node(nodes, others)
        if node is None:  # no live node with CPUs (yet): Ray places it when one joins
            return self._actor_class.remote(self._payload), None
        # soft: should the node die before the actor starts, Ray places it on another one
        strategy = NodeAffinitySchedulingStrategy(node, soft=True)
        return self._actor_class.options(scheduling_strategy=strategy).remote(self._payload), node

    def collect(self, strategy, traverser, iteration, count):
        ray = self._ray
        start = time.perf_counter()
        strategy_ref = ray.put(strategy)  # once per call; every worker reads the same object
        self.timings["broadcast"] += time.perf_counter() - start
        sizes = share_sizes(int(count), self.num_workers, self.min_share)
        seeds = [share_seed(self.seed, iteration, traverser, i) for i in range(len(sizes))]
        queue = [i for i, size in enumerate(sizes) if size]  # shares not yet sent, in order
        pending: dict = {}  # ref -> (share, worker index, the actor it went to, attempt)
        busy, cpu = [0.0] * self.num_workers, [0.0] * self.num_workers

        def send(share: int, worker: int, attempt: int = 0) -> None:
            actor = self.workers[worker]
            ref = actor.collect.remote(strategy_ref, traverser, iteration, sizes[share], seeds[share])
            pending[ref] = (share, worker, actor, attempt)

        # Every worker holds up to `queued` shares: the next one waits in its
        # actor's queue and starts the moment the current one ends, instead of
        # after the learner has taken the result and inserted earlier samples.
        for _ in range(self.queued):
            for worker in range(self.num_workers):
                if queue:
                    send(queue.pop(0), worker)
        if self.on_dispatch is not None:
            self.on_dispatch(list(self.workers))
        done: dict[int, list] = {}
        next_share = 0
        while pending:
            wait_start = time.perf_counter()
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            share, worker, actor, attempt = pending.pop(ref)
            try:
                chunks, cost = ray.get(ref)
            except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as e:
                # ObjectLostError: the share had finished, but its result was in the object
                # store of a node that is gone (with the worker); run it again all the same.
                if self.workers[worker] is actor:  # its other queued share fails too: one restart
                    self._replace(worker, traverser, iteration, attempt, e)
                send(share, worker, attempt + 1)  # the same share, the same seed
                continue
            finally:
                self.timings["wait"] += time.perf_counter() - wait_start
            busy[worker] += cost["seconds"]
            cpu[worker] += cost["cpu"]
            self.timings["preempted"] += cost["preempted"]
            done[share] = chunks
            if queue:
                send(queue.pop(0), worker)
            while next_share < len(sizes) and (next_share in done or not sizes[next_share]):
                yield from done.pop(next_share, [])  # in share order, whatever order they finished in
                next_share += 1
        self.timings["slowest_worker"] += max(busy)
        self.timings["mean_worker"] += sum(busy) / len(busy)
        self.timings["mean_worker_cpu"] += sum(cpu) / len(cpu)
        self.timings["shares"] += len(sizes)

    def _replace(self, worker: int, traverser: int, iteration: int, attempt: int, error) -> None:
        """A new actor in place of a dead one (or one whose node, holding its
        results, is gone); its shares will be re-run from their seeds."""
        if attempt == MAX_RESTARTS_PER_SHARE:
            raise RuntimeError(f"a traversal share of iteration {iteration} lost its worker "
                               f"{attempt + 1} times (last: {type(error).__name__}); giving up") from error  # fmt: skip
        self._ray.kill(self.workers[worker], no_restart=True)  # dead already, unless only its result was lost
        # Unreachable (a node that stopped answering, before Ray declares it dead): not there again
        unreachable = isinstance(error, getattr(self._ray.exceptions, "ActorUnavailableError", ()))
        avoid = self.worker_nodes[worker] if unreachable else None
        self.workers[worker], self.worker_nodes[worker] = self._start_worker(worker, avoid)  # on a live node
        self.restarts += 1
        lost = "died" if isinstance(error, self._ray.exceptions.RayActorError) else "lost its results with its node"
        self._events.append(f"worker {worker} {lost} ({type(error).__name__}); restarted, its unfinished shares "
                            f"for player {traverser} re-run from their seeds")  # fmt: skip

    def take_events(self) -> list[str]:
        events, self._events = self._events, []
        return events

    def reseed(self, seed: int) -> None:
        self.seed = int(seed)

    def close(self) -> None:
        """Stops the workers (the Ray instance stays up for others)."""
        for worker in self.workers:
            self._ray.kill(worker)
        self.workers, self.worker_nodes = [], []

