"""The lines of the flop hold'em curves (`benchmarks/bench_fhp_curve.py`) as
contenders of the equal-budget harness (`openspiel_cfrx.eval.harness`).

Each line is a `Contender` that counts its own `steps` (iterations or
episodes, cut to `step_limit` so that exact checkpoints land), charges the
seconds of producing its policy (`timed_policy`) and measures it exactly
(`evaluate`: `poker_nash_conv` over every board, or the public tree with suit
isomorphism): our Deep CFR, OpenSpiel's C++ and Python ES-MCCFR, OpenSpiel's
NFSP (`openspiel_cfrx.contenders`' presets), vector CFR on the public tree
(lossless or on a k-means card abstraction), external-sampling Linear MCCFR
on the abstraction, and a user's policy (`policy:<module>:<function>`).
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import time

import numpy as np
import pyspiel

from openspiel_cfrx.eval.harness import Contender

FIXED_LINES = ("deep_cfr", "os_es_mccfr", "os_es_mccfr_py", "os_nfsp")
LINE_FORMS = "lossless_<variant>, abstraction_<N>, abstraction_pr_<N> or policy:<module>:<function>"


def poker_nash_conv(*args, **kwargs):
    """`openspiel_cfrx.poker.poker_nash_conv` (imported on first use)."""
    from openspiel_cfrx.poker import poker_nash_conv as exact

    return exact(*args, **kwargs)


def line_problem(name: str, args) -> str | None:
    """What is wrong with one --algorithms name (a known line, its form, the
    options it reads), or None."""
    if name in FIXED_LINES:
        if name == "os_nfsp":
            from openspiel_cfrx.contenders import NFSP_PRESETS

            if args.nfsp_preset not in NFSP_PRESETS:
                return f"--nfsp_preset={args.nfsp_preset!r} is not a preset; choose from {', '.join(NFSP_PRESETS)}"
        return None
    if name.startswith("policy:"):
        return _policy_problem(name)
    if name.startswith(("lossless_", "abstraction_")):
        return _vector_problem(name, args.abstraction_variant)
    return f"--algorithms: unknown algorithm {name!r}; choose from {', '.join(FIXED_LINES)}, {LINE_FORMS}"


def _policy_problem(name: str) -> str | None:
    parts = name.split(":", 2)
    if len(parts) != 3 or not all(parts):
        return (f"--algorithms {name}: a user's policy is policy:<module>:<function>, e.g. "
                "policy:open_spiel.python.policy:UniformRandomPolicy")  # fmt: skip
    import importlib

    try:
        function = getattr(importlib.import_module(parts[1]), parts[2])
    except (ImportError, AttributeError) as e:
        return f"--algorithms {name}: cannot import {parts[1]}.{parts[2]} ({e})"
    if not callable(function):
        return f"--algorithms {name}: {parts[1]}.{parts[2]} is not a function of the game"
    return None


def _vector_problem(name: str, variant: str) -> str | None:
    from openspiel_cfrx.regret import VARIANTS

    if name.startswith("lossless_"):
        lossless = name[len("lossless_"):]
        if lossless not in VARIANTS:
            return (f"--algorithms {name}: unknown vector CFR variant {lossless!r}; choose lossless_<variant> "
                    f"from {', '.join(VARIANTS)}")  # fmt: skip
        return None
    match = re.fullmatch(r"abstraction_(pr_)?(\d+)", name)
    if not match or int(match.group(2)) < 1:
        return (f"--algorithms {name}: a card abstraction line is abstraction_<N> or abstraction_pr_<N> "
                "(N >= 1 abstract infosets), e.g. abstraction_1000")  # fmt: skip
    if variant != "es_lmccfr" and variant not in VARIANTS:
        return (f"--abstraction_variant={variant!r} is not a solver of the abstract game; choose es_lmccfr "
                f"or a vector CFR variant: {', '.join(VARIANTS)}")  # fmt: skip
    if variant != "es_lmccfr" and VARIANTS[variant].predictive:
        return (f"--abstraction_variant={variant}: a predictive variant does not run on a card abstraction; "
                "choose lcfr, cfr+, dcfr or es_lmccfr")  # fmt: skip
    return None


class Line(Contender):
    """A line of the figure: `step()` does one unit of work, at most
    `step_limit` (None: no limit) of its iterations or episodes, so that
    --iterations lands on each checkpoint exactly; `timed_policy(clock)`
    returns (policy, seconds charged); `evaluate()` measures it exactly. A line
    with `one_evaluation` (a fixed policy) is evaluated once, not at checkpoints."""

    steps = 0
    one_evaluation = False
    last_checkpoint = True  # whether the coming evaluation is the line's last
    resumable = False  # save(path, extra) / load(path) -> extra: `--checkpoint` resumes it

    def evaluate(self, game, pol, evaluator: str):
        return evaluate(game, pol, evaluator)

    def info(self) -> dict:
        return {}


class DeepCFRLine(Line):
    name, steps_unit, resumable = "deep_cfr", "iterations", True

    def save(self, path, extra):
        self.solver.save_checkpoint(path, extra=extra)

    def load(self, path):
        self.solver.load_checkpoint(path)
        return self.solver.checkpoint_extra

    def __init__(self, game, seed, settings):
        from openspiel_cfrx.deep import DeepCFRSolver

        self.solver = DeepCFRSolver(game, num_iterations=10**9, seed=seed, **settings)
        self.steps = 0

    def step(self):
        self.solver.run_iteration()
        self.steps += 1

    @property
    def nodes_touched(self):
        return self.solver.nodes_touched

    def current_policy(self):
        return self.solver.current_policy()

    def policy(self):
        return self.timed_policy(time.perf_counter)[0]

    def timed_policy(self, clock):
        """The solver, its policy network trained from scratch first (charged)."""
        if self.solver.average_policy == "sd_cfr":  # the kept iterates' exact mixture: nothing to train
            self.policy_loss = None
            return self.solver, 0.0
        start = clock()
        self.policy_loss = self.solver.train_policy_network()
        return self.solver, clock() - start

    def info(self):
        s = self.solver
        return {
            "nodes_touched": s.nodes_touched,
            "memory": f"adv {len(s.advantage_buffers[0]):,}/{len(s.advantage_buffers[1]):,}, "
            f"strategy {len(s.strategy_buffer):,}",
            "advantage_loss": s.history[-1]["advantage_loss"] if s.history else None,
            "policy_loss": getattr(self, "policy_loss", None),
        }


class MCCFRLine(Line):
    name, steps_unit = "os_es_mccfr", "iterations"

    def __init__(self, game, seed, per_step):
        self.solver = pyspiel.ExternalSamplingMCCFRSolver(game, seed=seed)
        self.per_step = per_step
        self.steps = 0

    def step(self):
        n = self.chunk(self.per_step)
        for _ in range(n):
            self.solver.run_iteration()
        self.steps += n

    def policy(self):
        return self.solver.average_policy()  # unvisited infosets: uniform


class PythonMCCFRLine(Line):
    """OpenSpiel's Python ES-MCCFR, counting nodes touched as Deep CFR does
    (every history visited: decision, chance card, terminal = one call of its
    recursive `_update_regrets`): the x axis of the equal-nodes comparison."""

    name, steps_unit = "os_es_mccfr_py", "iterations"

    def __init__(self, game, seed, per_step):
        from open_spiel.python.algorithms import external_sampling_mccfr as es

        np.random.seed(seed)  # the Python solver samples with np.random
        self.solver = es.ExternalSamplingSolver(game, es.AverageType.SIMPLE)
        self.per_step, self.steps, self.nodes_touched = per_step, 0, 0
        visit = self.solver._update_regrets  # noqa: SLF001

        def counted(state, player):
            self.nodes_touched += 1
            return visit(state, player)

        self.solver._update_regrets = counted  # noqa: SLF001

    def step(self):
        n = self.chunk(self.per_step)
        for _ in range(n):
            self.solver.iteration()
        self.steps += n

    def policy(self):
        return self.solver.average_policy()

    def info(self):
        return {"nodes_touched": self.nodes_touched}


class NFSPLine(Line):
    name, steps_unit = "os_nfsp", "episodes"

    def __init__(self, game, seed, per_step, preset="leduc_defaults", checkpoints=()):
        from openspiel_cfrx.contenders import NFSP_PRESETS, make_contender

        if preset not in NFSP_PRESETS:
            raise SystemExit(f"--nfsp_preset={preset!r} is not a preset; choose from {', '.join(NFSP_PRESETS)}")
        # the contender's episodes per step are fixed when it is made: with --iterations, the largest
        # divisor of --nfsp-step and every checkpoint, so that each is reached exactly (the same episodes)
        per_step = math.gcd(per_step, *checkpoints)
        self.contender = make_contender("os_nfsp", game, seed=seed, episodes_per_step=per_step, **NFSP_PRESETS[preset])
        self.per_step = per_step
        self.steps = 0

    @property
    def nodes_touched(self):
        return self.contender.nodes_touched  # histories of its episodes: cards dealt, decisions, terminals

    def info(self):
        return {"nodes_touched": self.nodes_touched}

    def step(self):
        self.contender.step()
        self.steps += self.per_step

    def policy(self):
        return self.contender.policy()  # batched average network (contenders.py)

    def timed_policy(self, clock):
        return self.contender.policy(), 0.0


class VectorCFRLine(Line):
    """Tabular CFR on the poker public tree (`poker.VectorCFR`, exact full-width
    walks): `lossless_<variant>` (e.g. lossless_lcfr, the Figure 3 dotted line), or
    `abstraction_<N>`: a k-means card abstraction of about N abstract infosets
    (`poker.kmeans_abstraction`, the paper's "clusters": Figure 2 has 40,000 and
    3.6M) solved with `--abstraction_variant` (Linear CFR; the paper solved its
    abstractions with external-sampling Linear MCCFR, a sampled form of the same
    regret updates) and evaluated exactly in the full game, with its
    exploitability inside the abstraction beside it. One step = `--vector-step`
    iterations; nodes touched = the full game's histories the walks stand for
    (`PublicTree.nodes_per_walk(represented=True)`, the count Deep CFR's
    traversals use)."""

    steps_unit = "iterations"

    def __init__(self, name, game, args):
        from openspiel_cfrx.poker import PublicTree, VectorCFR

        self.name, self.per_step, self.steps, self.abstraction = name, args.vector_step, 0, None
        self.tree = PublicTree(game)
        self.abstract_eval = args.abstract_nash_conv
        if name.startswith("abstraction_"):
            self.abstraction = build_abstraction(self.tree, name, args)
            variant = args.abstraction_variant
        else:
            variant = name[len("lossless_"):]
        self.solver = VectorCFR(self.tree, variant, abstraction=self.abstraction, verbose=False)
        self.nodes_per_walk = self.tree.nodes_per_walk(represented=True)

    @property
    def nodes_touched(self):
        return self.solver.iteration * (2 if self.solver.alternating_updates else 1) * self.nodes_per_walk

    def step(self):
        n = self.chunk(self.per_step)
        for _ in range(n):
            self.solver.iterate()
        self.steps += n

    def policy(self):
        return self.solver

    def timed_policy(self, clock):
        return self.solver, 0.0

    def evaluate(self, game, pol, evaluator):
        """Exact NashConv in the full game (and in the abstract game) from the engine."""
        from types import SimpleNamespace

        start = time.perf_counter()
        gains = self.tree.best_response_values(self.solver.average_strategy)
        value = float(gains.sum())
        rules = self.tree.rules
        measure = self.abstract_eval == "every" or (self.abstract_eval == "last" and self.last_checkpoint)
        self.abstract_mbb = (rules.mbb_per_game(self.solver.abstract_nash_conv())
                             if self.abstraction is not None and measure else None)  # fmt: skip
        return SimpleNamespace(nash_conv=value, nash_conv_mbb=rules.mbb_per_game(value), player_improvements=gains,
                               seconds=time.perf_counter() - start)  # fmt: skip

    def info(self):
        row = {"nodes_touched": self.nodes_touched}
        if self.abstraction is not None:
            row.update(abstract_nash_conv_mbb=self.abstract_mbb,
                       abstract_infosets=self.abstraction.abstract_infosets(self.tree))  # fmt: skip
        return row


def build_abstraction(tree, name: str, args):
    """The k-means card abstraction of line `abstraction_<N>` (about N abstract
    infosets, seed --seed); `abstraction_pr_<N>`: its perfect-recall refinement
    of about as many (`poker.abstraction.perfect_recall`)."""
    from openspiel_cfrx.poker import kmeans_abstraction
    from openspiel_cfrx.poker.abstraction import buckets_for_abstract_infosets, perfect_recall

    recall = "perfect" if name.startswith("abstraction_pr_") else "imperfect"
    try:
        size = int(name.rpartition("_")[2])
        buckets = buckets_for_abstract_infosets(tree, size, recall=recall)
        abstraction = kmeans_abstraction(tree, buckets, seed=args.seed, clamp=True)
        if recall == "perfect":
            abstraction = perfect_recall(tree, abstraction)
    except ValueError as e:  # a size that is not a number, or too small for the game
        raise SystemExit(f"--algorithms {name}: {e}") from None
    print(f"  {name}: {abstraction.summary(tree)}", flush=True)
    return abstraction


class AbstractMCCFRLine(VectorCFRLine):
    """`abstraction_<N>` solved as the paper did: external-sampling Linear MCCFR
    (`poker.AbstractMCCFR`, seed --seed) on the same k-means abstraction, one step
    = `--es-step` iterations; nodes touched are the traversals' own count."""

    def __init__(self, name, game, args):
        from openspiel_cfrx.poker import AbstractMCCFR, PublicTree

        self.name, self.per_step, self.steps = name, args.es_step, 0
        self.tree = PublicTree(game)
        self.abstract_eval = args.abstract_nash_conv
        self.abstraction = build_abstraction(self.tree, name, args)
        self.solver = AbstractMCCFR(self.tree, self.abstraction, seed=args.seed)

    resumable = True

    def save(self, path, extra):
        """The solver's `.npz` and, beside it, the curve so far (JSON, written after it)."""
        from openspiel_cfrx.checkpoint_io import atomic_write

        self.solver.save(path)
        atomic_write(path + ".json", lambda f: f.write(json.dumps(extra).encode()))

    def load(self, path):
        try:
            with open(path + ".json", encoding="utf-8") as f:
                extra = json.load(f)
        except (OSError, ValueError) as e:
            raise SystemExit(f"--checkpoint: {path}.json (the curve beside {path}) is unreadable ({e}); "
                             "delete both to start over") from None
        self.solver.load(path)
        return extra

    @property
    def nodes_touched(self):
        return self.solver.nodes_touched

    def step(self):
        n = self.chunk(self.per_step)
        self.solver.run(n)
        self.steps += n


class PolicyLine(Line):
    """A user's policy as a line of the figure: `policy:<module>:<function>`, where
    `function(game)` returns an OpenSpiel `Policy` (tabular, a network policy,
    anything with `action_probabilities`); evaluated once, drawn as a level."""

    steps_unit, one_evaluation = "policy", True

    def __init__(self, name, game):
        import importlib

        _, module, function = name.split(":", 2)
        try:
            self.make = getattr(importlib.import_module(module), function)
        except (ImportError, AttributeError) as e:
            raise SystemExit(f"--algorithms {name}: cannot import {module}.{function} ({e})") from None
        self.name, self.game, self.steps = name, game, 0

    def step(self):
        self.steps = 1

    def policy(self):
        return self.make(self.game)


def make_line(name, game, args, checkpoints=()) -> Line:
    if name.startswith("abstraction_") and args.abstraction_variant == "es_lmccfr":
        return AbstractMCCFRLine(name, game, args)
    if name.startswith(("lossless_", "abstraction_")):
        return VectorCFRLine(name, game, args)
    if name.startswith("policy:"):
        return PolicyLine(name, game)
    if name == "deep_cfr":
        return DeepCFRLine(game, args.seed, args.deep_cfr_settings)
    if name == "os_es_mccfr":
        return MCCFRLine(game, args.seed, args.mccfr_step)
    if name == "os_nfsp":
        return NFSPLine(game, args.seed, args.nfsp_step, args.nfsp_preset, checkpoints)
    if name == "os_es_mccfr_py":
        return PythonMCCFRLine(game, args.seed, args.mccfr_py_step)
    raise ValueError(f"unknown algorithm {name!r}")


def evaluate(game, pol, evaluator: str):
    """Exact NashConv of `pol` (`poker_nash_conv`'s result fields). states:
    `poker_nash_conv(..., return_details=True)` (a best-response and an
    on-policy walk; player_improvements are each player's gains); engine: one
    best-response walk (`poker_best_response_values`: suit isomorphism for a
    suit-symmetric network, every board otherwise; player_improvements are
    the best-response values, whose sum is the NashConv)."""
    if evaluator == "states":
        return poker_nash_conv(game, pol, return_details=True)
    from types import SimpleNamespace

    from openspiel_cfrx.poker import PokerRules, poker_best_response_values

    start = time.perf_counter()
    best = poker_best_response_values(game, pol)
    value = float(best.sum())
    return SimpleNamespace(nash_conv=value, nash_conv_mbb=PokerRules.from_game(game).mbb_per_game(value),
                           player_improvements=best, seconds=time.perf_counter() - start)  # fmt: skip


def resume(line: Line, path: str, clock: str, state) -> list[dict]:
    """Restores a line saved by `bench_fhp_curve.run_one` (its steps; the spent
    seconds and pending checkpoints into `state`, a harness `RunState`); its
    rows so far. A checkpoint that counted another `clock` ("wall" or "cpu") is
    refused."""
    try:
        done = line.load(path)
        rows, state.spent, line.steps, state.pending = done["rows"], done["spent"], done["steps"], done["pending"]
        if done.get("clock", "wall") != clock:
            raise SystemExit(f"--checkpoint: {path} counted {done.get('clock', 'wall')} seconds, not "
                             f"--clock={clock}; rerun with that clock, delete it, or choose another "
                             "--checkpoint")  # fmt: skip
    except (ValueError, TypeError, KeyError) as e:  # the library's CheckpointError is a ValueError
        detail = str(e) if isinstance(e, ValueError) else "no curve of this program in it"
        raise SystemExit(f"--checkpoint: cannot resume {line.name} from {path} ({detail}); delete it to start "
                         "that line over, or choose another --checkpoint") from None
    print(f"  resumed {path}: {line.steps} {line.steps_unit}, {state.spent:.0f} s, {len(rows)} checkpoints done",
          flush=True)  # fmt: skip
    return rows


def uniform_nash_conv_mbb(game, evaluator: str) -> float:
    """The uniform random policy's NashConv (mbb/g), measured as `evaluator` measures the lines."""
    if evaluator == "engine":
        from openspiel_cfrx.poker import PublicTree

        tree = PublicTree(game)
        return tree.rules.mbb_per_game(tree.nash_conv(tree.uniform))
    from open_spiel.python import policy as policy_lib

    return poker_nash_conv(game, policy_lib.UniformRandomPolicy(game), return_details=True).nash_conv_mbb


def _without_native_stderr(call):
    """call(), with what C++ writes to stderr meanwhile held back (OpenSpiel
    prints its exceptions there, a list of every game among them) and written
    out only if the call succeeds."""
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            result = call()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        held.seek(0)
        sys.stderr.write(held.read().decode(errors="replace"))
    return result


def load_poker_game(args):
    """--game loaded, and checked to be a flop_holdem / hulh poker game that
    --evaluator can measure; ValueError saying what is wrong otherwise (the
    program reports it in one line, before anything is computed)."""
    import games  # noqa: F401  (registers flop_holdem, hulh)
    from games.poker import game_size, limit_holdem_rules
    from openspiel_cfrx.poker.exploitability import DEFAULT_MAX_INFOSETS

    example = "e.g. --game='flop_holdem(num_ranks=5,num_suits=2)'"
    name = args.game.partition("(")[0].strip()
    if name not in pyspiel.registered_names():
        raise ValueError(f"--game={args.game}: unknown game {name!r}; this benchmark needs a flop_holdem/hulh poker game, "
                    f"{example}")  # fmt: skip
    try:
        game = _without_native_stderr(lambda: pyspiel.load_game(args.game))
    except (pyspiel.SpielError, ValueError, RuntimeError) as e:  # pyspiel's message lists every game after line 1
        first = (str(e).strip().splitlines() or [type(e).__name__])[0].split(" Available games")[0].rstrip(".")
        raise ValueError(f"--game={args.game} does not load ({first}); this benchmark needs a flop_holdem/hulh "
                         f"poker game, {example}") from None
    try:
        rules = limit_holdem_rules(game)
    except ValueError as e:
        raise ValueError(f"--game={args.game} is not a poker game this benchmark runs ({str(e).rstrip('.')}); it needs "
                         f"a flop_holdem/hulh poker game, {example}") from None
    if args.evaluator == "states":
        infosets = max(game_size(rules).infosets)
        if rules.num_rounds != 2:
            raise ValueError(f"--game={args.game}: --evaluator=states (poker_nash_conv) measures flop_holdem games (2 "
                        f"betting rounds), this one has {rules.num_rounds}; use a flop_holdem game")  # fmt: skip
        if infosets > DEFAULT_MAX_INFOSETS:
            raise ValueError(f"--game={args.game} has {infosets:,} infosets per player, too many for --evaluator=states "
                        "(every infoset is queried); use --evaluator=engine")  # fmt: skip
    return game
