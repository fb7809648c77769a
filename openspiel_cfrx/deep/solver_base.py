"""What every neural CFR solver shares: the iteration loop, timing, progress,
logging, callbacks, seeded random streams, and checkpoints built from each
part's `state_dict()`.

A solver subclasses `NeuralSolver` and writes its paper's algorithm box in
`iteration_step(t, stats)` (timing each phase with `self.timed(...)`), lists
its stateful parts in `parts()` (anything with `state_dict()` /
`load_state_dict()`: trainers, memories, models), and its own scalars in
`extra_state()` / `load_extra_state()`.
"""

from __future__ import annotations

import abc
import contextlib
import inspect
import logging
import math
import random
import time

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from openspiel_cfrx.deep import checkpoint as checkpoint_lib
from openspiel_cfrx.deep.schedule import Schedule
from openspiel_cfrx.deep.settings import ReportingSettings, unknown_keyword_message

logger = logging.getLogger(__name__)


class NeuralSolver(policy_lib.Policy, abc.ABC):
    """Base of `DeepCFRSolver` and `CFRMixSolver` (an OpenSpiel `Policy`).

    Args:
      game: the pyspiel game (2 players).
      num_iterations: T, the iterations `solve()` runs.
      seed: seeds the solver's numpy and Python random streams (`np_rng`,
        `py_rng`); networks initialise from their own seeded streams.
      schedule: per-iteration budget (`Schedule`; default constant, as the papers).
      reporting: `ReportingSettings` (progress bar, log lines, callbacks), a
        dict of its fields, or None (quiet).

    A subclass names its settings groups in `settings_groups` (name -> group
    class): a keyword the constructor does not take is refused in one line,
    with the group spelling when it is a group field's flat name of before
    the groups (`settings.unknown_keyword_message`). `settings_type` (the
    class of `settings`) reads checkpoints' records (`shape_of`,
    `shape_arguments`).
    """

    display_name = "neural CFR"
    settings_groups: dict = {}
    settings_type = None

    def __new__(cls, *args, **kwargs):
        parameters = inspect.signature(cls.__init__).parameters
        unknown = [name for name in kwargs if name not in parameters]
        if unknown:
            groups = {**cls.settings_groups, "reporting": ReportingSettings}
            raise TypeError(unknown_keyword_message(cls.__name__, unknown[0], groups, [p for p in parameters if p != "self"]))
        return super().__new__(cls)

    def __init__(self, game: pyspiel.Game, *, num_iterations: int, seed: int, schedule: Schedule | None,
                 reporting: ReportingSettings | dict | None):  # fmt: skip
        reporting = ReportingSettings.build("reporting", reporting)
        super().__init__(game, list(range(game.num_players())))
        if schedule is not None and not isinstance(schedule, Schedule):
            raise ValueError(f"schedule must be an openspiel_cfrx.deep.Schedule, got {type(schedule).__name__}")
        self._game = game
        self._num_iterations = int(num_iterations)
        self._seed = int(seed)
        self.schedule = schedule or Schedule()
        self.np_rng = np.random.default_rng(self._seed)
        self.py_rng = random.Random(self._seed)
        self.reporting = reporting
        self._iteration = 1  # the next iteration to run (the papers count from 1)
        self._timers: dict[str, float] = {}
        self.nodes_touched = 0
        self.traversal_seconds = 0.0
        self.training_seconds = 0.0
        self.history: list[dict] = []
        self.checkpoint_extra = None  # `extra` of the last loaded checkpoint
        self.policy_only = False  # rebuilt from a policy file: plays, cannot train

    # ------------------------------------------------------------ the algorithm
    @abc.abstractmethod
    def iteration_step(self, t: int, stats: dict) -> None:
        """Iteration t of the paper's algorithm; fills `stats` (at least "nodes")."""

    @abc.abstractmethod
    def parts(self) -> dict:
        """{name: object with state_dict()/load_state_dict()} saved in checkpoints."""

    def extra_state(self) -> dict:
        """The solver's own scalars and lists saved in checkpoints."""
        return {}

    def load_extra_state(self, state: dict) -> None:
        pass

    def solve_result(self):
        """What `solve()` returns after the iterations."""
        return None

    def report(self, stats: dict) -> None:
        """Called after each iteration's log line, before the callback."""

    def progress_postfix(self, stats: dict) -> dict:
        return {"nodes": stats["nodes"]}

    def log_line(self, stats: dict) -> str:
        events = "".join(f"; {event}" for event in stats.get("events", ()))
        return (f"iteration {stats['iteration']}: nodes {stats['nodes']} ({stats['nodes_per_second']:.0f}/s), "
                f"{stats['seconds']:.2f}s (traverse {stats['traversal_seconds']:.2f}s, "
                f"train {stats['training_seconds']:.2f}s){events}")  # fmt: skip

    # ----------------------------------------------------------------- the loop
    @property
    def iteration(self) -> int:
        """Completed iterations."""
        return self._iteration - 1

    def solve(self):
        """Runs `num_iterations` iterations and returns `solve_result()`.

        As OpenSpiel's `solve()`, every call runs `num_iterations` more. The
        first call of a solver resumed with `load_checkpoint` runs only the
        rest up to `num_iterations` (so a resumed run ends where the
        uninterrupted one did); later calls run `num_iterations` more."""
        end = self._iteration + self._num_iterations if getattr(self, "_solved", False) else self._num_iterations + 1
        self._solved = True
        remaining = range(self._iteration, end)
        bar = None
        if self.reporting.progress:
            from tqdm import tqdm

            bar = tqdm(total=len(remaining), desc=self.display_name, unit="it")
        for _ in remaining:
            stats = self.run_iteration()
            if bar is not None:
                bar.update(1)
                bar.set_postfix(**self.progress_postfix(stats))
        if bar is not None:
            bar.close()
        return self.solve_result()

    @contextlib.contextmanager
    def timed(self, phase: str):
        """Adds the block's wall-clock time to this iteration's `phase` ("traversal" / "training")."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self._timers[phase] = self._timers.get(phase, 0.0) + time.perf_counter() - start

    def run_iteration(self) -> dict:
        """One iteration (`iteration_step`) with timing, history, log line and callback."""
        if self.policy_only:
            raise RuntimeError(f"this {type(self).__name__} was rebuilt from a policy file (save_policy), which "
                               "holds no memories or optimiser state: it can play and be evaluated, not train; "
                               "resume runs from a save_checkpoint file")  # fmt: skip
        t = self._iteration
        start = time.perf_counter()
        self._timers = {"traversal": 0.0, "training": 0.0}
        stats = {"iteration": t, "nodes": 0}
        self.iteration_step(t, stats)
        self._iteration += 1
        traversal_s, train_s = self._timers["traversal"], self._timers["training"]
        self.nodes_touched += stats["nodes"]
        self.traversal_seconds += traversal_s
        self.training_seconds += train_s
        stats.update(traversal_seconds=traversal_s, training_seconds=train_s,
                     seconds=time.perf_counter() - start,
                     nodes_per_second=stats["nodes"] / max(traversal_s, 1e-9))  # fmt: skip
        self.history.append(stats)
        for event in stats.get("events", ()):  # e.g. a restarted worker: always reported
            logger.warning("iteration %d: %s", t, event)
        reporting = self.reporting
        if reporting.log_every and t % reporting.log_every == 0:
            line = self.log_line(stats)
            logger.info(line)
            if reporting.verbose:
                print(line, flush=True)
        self.report(stats)
        if reporting.callback is not None and t % reporting.callback_every == 0:
            reporting.callback(self)
        return stats

    # --------------------------------------------------------------- checkpoint
    def state_dict(self) -> dict:
        """Everything a resumed run needs (tensors, numpy arrays, numbers,
        strings, containers): loaded into a solver built with the same
        settings, the run continues bit for bit on CPU as this one would."""
        return {
            "iteration": self._iteration,
            "np_rng": self.np_rng.bit_generator.state,
            "py_rng": self.py_rng.getstate(),
            "history": list(self.history),
            "counters": {"nodes_touched": self.nodes_touched, "traversal_seconds": self.traversal_seconds,
                         "training_seconds": self.training_seconds},  # fmt: skip
            "parts": {name: part.state_dict() for name, part in self.parts().items()},
            "solver": self.extra_state(),
            "sampler": self._sampler_state(),
        }

    def _sampler_state(self) -> dict | None:
        """What decides the traversal sampler's future draws besides the
        solver's streams: None while it draws from `np_rng` / `py_rng` (the
        usual case, saved above); its own stream once `reseed` gave it one;
        a distributed sampler's seed (its shares' streams derive from it)."""
        sampler = getattr(self, "_sampler", None)
        if sampler is None:
            return None
        if getattr(sampler, "distributed", False):
            return {"seed": int(sampler.seed)}
        rng = getattr(sampler, "rng", None)
        if rng is None or rng is self.np_rng or rng is self.py_rng:
            return None
        if isinstance(rng, np.random.Generator):
            return {"numpy": rng.bit_generator.state}
        if isinstance(rng, random.Random):
            return {"python": rng.getstate()}
        raise TypeError(f"cannot checkpoint the traversal sampler's stream of type {type(rng).__name__}")

    def _load_sampler_state(self, state: dict | None) -> None:
        """Restores `_sampler_state` (None: the sampler draws from the solver's streams again)."""
        sampler = getattr(self, "_sampler", None)
        if sampler is None:
            return
        state = state or {}
        if getattr(sampler, "distributed", False):
            sampler.reseed(int(state.get("seed", self._seed)))
            return
        if not hasattr(sampler, "rng"):
            return
        if "numpy" in state:
            sampler.rng = np.random.default_rng()
            sampler.rng.bit_generator.state = state["numpy"]
        elif "python" in state:
            version, internal, gauss = state["python"]
            sampler.rng = random.Random()
            sampler.rng.setstate((version, tuple(internal), gauss))
        else:  # the solver's stream of the sampler's kind
            sampler.rng = self.py_rng if isinstance(sampler.rng, random.Random) else self.np_rng

    def load_state_dict(self, state: dict) -> None:
        parts = self.parts()
        missing = sorted(set(parts) - set(state["parts"]))
        if missing:
            raise KeyError(f"parts {missing} missing")
        for name, part in parts.items():
            part.load_state_dict(state["parts"][name])
        self.np_rng.bit_generator.state = state["np_rng"]
        version, internal, gauss = state["py_rng"]
        self.py_rng.setstate((version, tuple(internal), gauss))  # in place: samplers hold this object
        self.load_extra_state(state["solver"])
        self._load_sampler_state(state["sampler"])
        self._iteration = int(state["iteration"])
        self.history = [dict(stats) for stats in state["history"]]
        counters = state["counters"]
        self.nodes_touched = int(counters["nodes_touched"])
        self.traversal_seconds = float(counters["traversal_seconds"])
        self.training_seconds = float(counters["training_seconds"])

    @classmethod
    def from_checkpoint(cls, path: str, game: pyspiel.Game | None = None, **kwargs):
        """A solver rebuilt from a checkpoint alone (e.g. to play or evaluate its
        average strategy): the game (from the checkpoint's game string unless
        given) and shape settings come from the file; `kwargs` add other
        constructor arguments (e.g. training settings to continue). From a
        policy file (`save_policy`) the solver plays and evaluates its average
        strategy but cannot train (`policy_only`)."""
        game_string, record, policy_only = checkpoint_lib.read_header(path, cls.__name__)
        if game is None:
            from openspiel_cfrx.game_loading import load_game

            game = load_game(game_string)  # our games need `import games` first (the error says so)
        try:
            arguments = cls.settings_type.shape_arguments(record)
        except (KeyError, TypeError, ValueError) as e:
            raise checkpoint_lib.CheckpointError(f"checkpoint {path!r} has an incomplete settings record ({e!r})") from None
        solver = cls(game, **{**arguments, **kwargs})
        if policy_only:
            checkpoint_lib.load_policy(solver, path)
            solver.policy_only = True
        else:
            solver.load_checkpoint(path)
        return solver

    def save_checkpoint(self, path: str, extra=None) -> None:
        """Writes `state_dict()`, the game and `settings.to_record()` to `path` atomically, with a
        checksum; `extra` (numbers, strings, lists, dicts: e.g. a program's
        curve rows) is stored with them and comes back as `checkpoint_extra`
        after `load_checkpoint`."""
        checkpoint_lib.save(self, path, extra)

    def load_checkpoint(self, path: str) -> None:
        """Restores a checkpoint of a solver of this class built with the same
        game and shape settings (`settings_type.shape_of`); the run then continues exactly as
        the checkpointed one would have (bit for bit on CPU, every traversal
        backend; on CUDA not checked: docs/deep_cfr.md, "Exact resume").
        Raises `CheckpointError` naming the problem otherwise."""
        checkpoint_lib.load(self, path)


def format_loss(value) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4g}"
