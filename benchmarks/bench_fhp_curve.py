"""Small flop hold'em at equal wall-clock: our Deep CFR vs OpenSpiel ES-MCCFR vs OpenSpiel NFSP.

Each algorithm runs on `flop_holdem(num_ranks=5,num_suits=2)` (10-card deck,
90M histories, 70,740 infosets per player; Brown et al. 2019 rules) for the
same budget of its own compute (`--seconds`, default 300), one after the other
in one process with one torch thread. At ~5 checkpoints (fractions of the
budget, `--fractions`) the average policy is evaluated exactly with
`openspiel_cfrx.poker.poker_nash_conv` (NashConv = sum of
both best-response gains, mbb/g = chips x 10); evaluation time is excluded.

* `deep_cfr`: our `DeepCFRSolver`, `traversal={"backend": "state"}` (walks pyspiel
  states: the game is too large to extract), MLP on
  `information_state_tensor` (the `network={"family": "poker"}` Appendix C net was ~10x
  slower per SGD step on this CPU, see fhp_curve.md), duplicate merging on (it
  falls back to sampled minibatches once a memory holds more distinct infosets
  than a batch). A step is one Deep CFR iteration. Its average policy is the
  policy network trained from scratch at the checkpoint; that training is
  charged to the checkpoint it produces (x = iteration seconds + this
  checkpoint's policy-network seconds; earlier checkpoints' policy training is
  not accumulated, as a run stopped there would pay it once).
* `os_es_mccfr`: `pyspiel.ExternalSamplingMCCFRSolver` (C++), `--mccfr-step`
  iterations per step; its `average_policy()` call is charged likewise.
* `os_nfsp`: OpenSpiel's PyTorch NFSP through `cfrx_examples.contenders`
  (Leduc example hyperparameters, 128-unit nets), `--nfsp-step` episodes per
  step; the average network is the policy (evaluated in batches by the
  contender's `batch_action_probabilities`, `nfsp.NFSP._act`'s masking and softmax).

`--checkpoint=PATH` saves the Deep CFR solver (memories, networks, RNG
states, the curve so far) after every evaluated checkpoint; the same command
resumes from it, continuing exactly as the uninterrupted run would.

Writes `<out_dir>/fhp_curve/fhp_curve.csv`, `fhp_curve.png` (mbb/g vs seconds,
log y) and `<out_dir>/fhp_curve.md` (tables; the "Reading" is added by hand).

    nice -n 10 .venv/bin/python benchmarks/bench_fhp_curve.py --seconds=300
    # smoke test (about a minute):
    nice -n 15 .venv/bin/python benchmarks/bench_fhp_curve.py \\
        --game="flop_holdem(num_ranks=4,num_suits=2)" --seconds=4 --fractions=0.5,1 --out_dir=/tmp/fhp
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import sys
import time

import numpy as np
import pyspiel

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# torch and `games` (which registers flop_holdem, hulh) are imported by main() once the arguments
# have passed their checks: bad input is refused in about a second
from benchmarks.common import (  # noqa: E402
    OneLineArgumentParser,
    check_writable_dir,
    markdown_table,
    usage_error,
    write_result,
)
from openspiel_cfrx.presets import merge_settings  # noqa: E402  (torch-free)


def poker_nash_conv(*args, **kwargs):
    """`openspiel_cfrx.poker.poker_nash_conv` (imported on first use)."""
    from openspiel_cfrx.poker import poker_nash_conv as exact

    return exact(*args, **kwargs)


PROGRESS_EVERY_S = 60.0  # run_one: a progress line this often between checkpoints

DEEP_CFR_SETTINGS = dict(
    advantage_network_layers=(64, 64),
    policy_network_layers=(64, 64),
    num_traversals=1500,
    advantage_network_train_steps=150,
    batch_size_advantage=2048,
    policy_network_train_steps=1000,
    batch_size_strategy=2048,
    memory_capacity=2_000_000,
    traversal={"backend": "state"},
    network={"family": "mlp"},
)


def _fractions(text: str) -> list[float]:
    """--fractions: increasing numbers in (0, 1]."""
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        values = []
    if not values or not all(0 < v <= 1 for v in values) or values != sorted(set(values)):  # NaN fails 0 < v
        raise argparse.ArgumentTypeError(f"must be comma-separated numbers in (0, 1], increasing without repeats "
                                         f"(fractions of the budget), e.g. 0.25,0.5,1; got {text!r}")  # fmt: skip
    return values


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text!r}")
    return value


def _integer(low: int, meaning: str = ""):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}{meaning}, got {text!r}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


def _seed_list(text: str) -> list[int]:
    try:
        seeds = [int(x) for x in text.split(",")] if text else []
    except ValueError:
        seeds = [-1]
    if any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"must be comma-separated distinct integers >= 0, e.g. 0,1,2; got {text!r}")
    return seeds


def parse_args(argv=None):
    """The arguments, each checked (`check_args`) before anything is computed:
    bad input stops the program with one line naming it (`usage_error`)."""
    parser = OneLineArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="", help="default: the --preset's game, else flop_holdem(num_ranks=5,num_suits=2)")
    parser.add_argument("--preset", default="",
                        help="deep_cfr settings by name (openspiel_cfrx.presets: fhp_5x2, fhp_full); --deep_cfr "
                             "JSON overrides single settings on top")  # fmt: skip
    parser.add_argument("--algorithms", default="deep_cfr,os_es_mccfr,os_nfsp")
    parser.add_argument("--seconds", type=_positive_seconds, default=300.0, help="compute budget per algorithm")
    parser.add_argument("--iterations", type=_integer(0, " (0: use --seconds)"), default=0,
                        help="> 0: run each algorithm for this many iterations (os_nfsp: episodes), checkpoints "
                             "at exactly --fractions of it (a step is cut short to land on a checkpoint), "
                             "instead of --seconds: equal-iteration comparisons, e.g. Figure 4's "
                             "ablations, that other load on the machine does not change")  # fmt: skip
    parser.add_argument("--fractions", type=_fractions, default="0.1,0.25,0.5,0.75,1",
                        help="checkpoints as fractions of --seconds (or --iterations): increasing, in (0, 1]")  # fmt: skip
    parser.add_argument("--mccfr-step", type=_integer(1), default=2000, help="MCCFR iterations per step")
    parser.add_argument("--mccfr-py-step", type=_integer(1), default=200, help="Python MCCFR iterations per step")
    parser.add_argument("--match-nodes", action="store_true",
                        help="checkpoint os_es_mccfr_py at deep_cfr's nodes touched (run deep_cfr first) "
                             "instead of at seconds: the equal-nodes comparison")  # fmt: skip
    parser.add_argument("--deep_cfr_from", default="",
                        help="with --match-nodes: take deep_cfr's checkpoints (rows, nodes touched) from this "
                             "earlier run's fhp_curve.csv instead of running it (leave deep_cfr out of "
                             "--algorithms); the output CSV holds both, as a --match-nodes run's does")  # fmt: skip
    parser.add_argument("--nfsp-step", type=_integer(1), default=500, help="NFSP episodes per step")
    parser.add_argument("--nfsp_preset", default="leduc_defaults",
                        help="os_nfsp's settings (cfrx_examples.contenders.NFSP_PRESETS: leduc_defaults, fhp_tuned)")
    parser.add_argument("--vector-step", type=_integer(1), default=1,
                        help="lossless_* / abstraction_* (vector CFR): iterations per step")
    parser.add_argument("--abstraction_variant", default="lcfr",
                        help="abstraction_*: the solver of the abstract game: a VectorCFR variant (lcfr: full-width "
                             "Linear CFR) or es_lmccfr (external-sampling Linear MCCFR, the paper's solver)")
    parser.add_argument("--es-step", type=_integer(1), default=20000,
                        help="abstraction_* with es_lmccfr: MCCFR iterations per step")
    parser.add_argument("--abstract_nash_conv", choices=("every", "last", "never"), default="every",
                        help="abstraction_*: at which checkpoints to also measure the NashConv inside the "
                             "abstraction (a minute per point on 52-card flop hold'em)")
    parser.add_argument("--rows_from", default="",
                        help="comma-separated earlier results drawn beside this run's lines: a CSV of this program "
                             "or bench_full_fhp_nfsp.py (its rows; NAME=FILE.csv: drawn as line NAME), or "
                             "NAME=PAGE.md (the first table of a results "
                             "page with a 'NashConv (mbb/g)' column, as line NAME; lossless_* lines without a nodes "
                             "column get the vector walks' count)")
    parser.add_argument("--seed", type=_integer(0), default=0)
    parser.add_argument("--seeds", type=_seed_list, default="",
                        help="comma-separated seeds: run every line once per seed (drawn as the mean with the "
                             "seeds' range as a band); default: --seed")
    parser.add_argument("--deep_cfr", default="{}",
                        help='JSON overrides of the Deep CFR settings in the solver\'s shape: OpenSpiel\'s '
                             'arguments by name, each settings group an object of its fields laid over the '
                             'group\'s current fields, e.g. \'{"num_traversals": 5000, "training": {"regret_scale": '
                             '"auto"}, "traversal": {"backend": "poker"}}\' (one factor at a time for the plateau '
                             'diagnosis)')
    parser.add_argument("--threads", type=_integer(1), default=1, help="torch threads")
    parser.add_argument("--clock", choices=tuple(CLOCKS), default="wall",
                        help="what --seconds and the seconds columns count: wall-clock seconds, or the process's "
                             "CPU seconds (cpu: for runs that share the cores; one torch thread, no Ray workers)")
    parser.add_argument("--evaluator", choices=("states", "engine"), default="states",
                        help="states: poker_nash_conv (every board; a network read from arrays, other policies through "
                             "stand-ins for their states); engine: the public tree "
                             "with suit isomorphism (network='suit_symmetric_mlp' Deep CFR only; the current "
                             "iterate is then not evaluated)")
    parser.add_argument("--out_dir", default="benchmarks/results")
    parser.add_argument("--page", default="",
                        help="results page name (<out_dir>/<page>.md and <page>/); default full_fhp for "
                             "flop_holdem, else fhp_curve")  # fmt: skip
    parser.add_argument("--checkpoint", default="",
                        help="deep_cfr: save the solver (memories, networks, the curve so far) here after every "
                             "evaluated checkpoint; if the file exists, resume from it (same command); es_lmccfr "
                             "abstraction lines: PATH.<line>.seed<k>.npz (+ .json) likewise")  # fmt: skip
    args = parser.parse_args(argv)
    check_args(args)
    return args


FIXED_LINES = ("deep_cfr", "os_es_mccfr", "os_es_mccfr_py", "os_nfsp")
LINE_FORMS = "lossless_<variant>, abstraction_<N>, abstraction_pr_<N> or policy:<module>:<function>"
NOT_SETTINGS = ("game", "num_iterations", "seed")  # DeepCFRRunner sets these (--game, the budget, --seed)


def check_args(args) -> None:
    """Every argument that can be checked without the game, before anything
    is computed; adds `args.lines` (--algorithms as a list),
    `args.deep_cfr_settings` (defaults, --preset, --deep_cfr) and `args.seeds`
    (default [--seed]). One line (`usage_error`) for the first problem."""
    args.lines = [n.strip() for n in args.algorithms.split(",") if n.strip()]
    args.seeds = args.seeds or [args.seed]
    for name in args.lines:
        _check_line(name, args)
    repeated = sorted({n for n in args.lines if args.lines.count(n) > 1})
    if repeated:
        usage_error(f"--algorithms lists {', '.join(repeated)} more than once; list each line once "
                    "(--seeds repeats a line per seed)")  # fmt: skip
    if not args.lines and not args.rows_from:
        usage_error("--algorithms is empty and there is no --rows_from: nothing to run or draw; name the lines "
                    f"to run, from {', '.join(FIXED_LINES)}, {LINE_FORMS}")  # fmt: skip
    if args.match_nodes and "os_es_mccfr_py" in args.lines and not args.deep_cfr_from and (
            "deep_cfr" not in args.lines or args.lines.index("deep_cfr") > args.lines.index("os_es_mccfr_py")):
        usage_error("--match-nodes needs deep_cfr listed before os_es_mccfr_py in --algorithms "
                    "(or its rows from --deep_cfr_from=CSV)")  # fmt: skip
    if args.evaluator == "engine":
        unfit = [n for n in args.lines if n in ("os_es_mccfr", "os_es_mccfr_py", "os_nfsp")]
        if unfit:
            usage_error(f"--evaluator=engine evaluates Deep CFR with a suit-symmetric network and the vector CFR "
                        f"lines, not {', '.join(unfit)}; use --evaluator=states for them")  # fmt: skip
    if args.checkpoint and len(args.seeds) > 1 and "deep_cfr" in args.lines:
        usage_error("--checkpoint holds one deep_cfr run: use it with one seed (--seed), not --seeds")
    args.deep_cfr_settings, overrides = _deep_cfr_settings(args)
    args.game = args.game or "flop_holdem(num_ranks=5,num_suits=2)"
    page = args.page or ("full_fhp" if args.game == "flop_holdem" else "fhp_curve")
    check_writable_dir(args.out_dir, "--out_dir")
    check_writable_dir(os.path.join(args.out_dir, page), "--out_dir")
    if args.checkpoint:
        _check_checkpoints(args)
    if "deep_cfr" in args.lines or overrides:  # last: the library's checks import torch (seconds)
        problem = deep_cfr_settings_problem(args.deep_cfr_settings)
        if problem:
            usage_error(f"--deep_cfr{' (over --preset ' + args.preset + ')' if args.preset else ''}: {problem}")


def _check_line(name: str, args) -> None:
    """One --algorithms name: a known line, its form, and the options it reads."""
    if name in FIXED_LINES:
        if name == "os_nfsp":
            from cfrx_examples.contenders import NFSP_PRESETS

            if args.nfsp_preset not in NFSP_PRESETS:
                usage_error(f"--nfsp_preset={args.nfsp_preset!r} is not a preset; choose from {', '.join(NFSP_PRESETS)}")
        return
    if name.startswith("policy:"):
        parts = name.split(":", 2)
        if len(parts) != 3 or not all(parts):
            usage_error(f"--algorithms {name}: a user's policy is policy:<module>:<function>, e.g. "
                        "policy:open_spiel.python.policy:UniformRandomPolicy")  # fmt: skip
        import importlib

        try:
            function = getattr(importlib.import_module(parts[1]), parts[2])
        except (ImportError, AttributeError) as e:
            usage_error(f"--algorithms {name}: cannot import {parts[1]}.{parts[2]} ({e})")
        if not callable(function):
            usage_error(f"--algorithms {name}: {parts[1]}.{parts[2]} is not a function of the game")
        return
    if name.startswith(("lossless_", "abstraction_")):
        from openspiel_cfrx.regret import VARIANTS

        if name.startswith("lossless_"):
            variant = name[len("lossless_"):]
            if variant not in VARIANTS:
                usage_error(f"--algorithms {name}: unknown vector CFR variant {variant!r}; choose lossless_<variant> "
                            f"from {', '.join(VARIANTS)}")  # fmt: skip
            return
        match = re.fullmatch(r"abstraction_(pr_)?(\d+)", name)
        if not match or int(match.group(2)) < 1:
            usage_error(f"--algorithms {name}: a card abstraction line is abstraction_<N> or abstraction_pr_<N> "
                        "(N >= 1 abstract infosets), e.g. abstraction_1000")  # fmt: skip
        variant = args.abstraction_variant
        if variant != "es_lmccfr" and variant not in VARIANTS:
            usage_error(f"--abstraction_variant={variant!r} is not a solver of the abstract game; choose es_lmccfr "
                        f"or a vector CFR variant: {', '.join(VARIANTS)}")  # fmt: skip
        if variant != "es_lmccfr" and VARIANTS[variant].predictive:
            usage_error(f"--abstraction_variant={variant}: a predictive variant does not run on a card abstraction; "
                        "choose lcfr, cfr+, dcfr or es_lmccfr")  # fmt: skip
        return
    usage_error(f"--algorithms: unknown algorithm {name!r}; choose from {', '.join(FIXED_LINES)}, {LINE_FORMS}")


def _deep_cfr_settings(args) -> tuple[dict, dict]:
    """(DEEP_CFR_SETTINGS with --preset's and then --deep_cfr's on top,
    --deep_cfr's); sets args.game from the preset when --game is not given.
    The values are checked by `deep_cfr_settings_problem`."""
    settings = dict(DEEP_CFR_SETTINGS)
    if args.preset:
        from openspiel_cfrx.presets import deep_cfr_preset

        try:
            preset = deep_cfr_preset(args.preset)
        except ValueError as e:
            usage_error(f"--preset: {e}")
        settings = merge_settings(settings, preset.kwargs)
        args.game = args.game or preset.game
    try:
        overrides = json.loads(args.deep_cfr)
    except ValueError as e:
        usage_error(f"--deep_cfr is not valid JSON ({e}); give an object, e.g. '{{\"num_traversals\": 1500}}'")
    if not isinstance(overrides, dict):
        usage_error(f"--deep_cfr must be a JSON object of Deep CFR settings, e.g. '{{\"num_traversals\": 1500}}', "
                    f"got {type(overrides).__name__} {args.deep_cfr!r}")  # fmt: skip
    reserved = [k for k in NOT_SETTINGS if k in overrides]
    if reserved:
        usage_error(f"--deep_cfr sets {reserved[0]!r}, which this program sets itself (--game, --seed/--seeds, "
                    "--seconds/--iterations); drop it from the JSON")  # fmt: skip
    settings = merge_settings(settings, overrides)
    network = settings.get("network")
    family = network.get("family") if isinstance(network, dict) else None
    if args.evaluator == "engine" and "deep_cfr" in args.lines and family != "suit_symmetric_mlp":
        usage_error(f"--evaluator=engine evaluates a Deep CFR policy whose network is suit-symmetric, got "
                    f"network family {family!r}; add --deep_cfr='{{\"network\": {{\"family\": "
                    "\"suit_symmetric_mlp\"}}}}' or use --evaluator=states")  # fmt: skip
    return settings, overrides


def deep_cfr_settings_problem(settings: dict) -> str | None:
    """Why `DeepCFRSolver(game, **settings)` would refuse `settings` (an unknown
    name, a value out of range, a clash), from the solver's own checks
    (`DeepCFRSettings.resolve`, as its constructor calls them) without a game
    or the run's memories; None when they pass."""
    import inspect

    from openspiel_cfrx.deep import DeepCFRSolver
    from openspiel_cfrx.deep.settings import (
        GROUPS,
        OPENSPIEL_RULES,
        DeepCFRSettings,
        unknown_keyword_message,
    )

    parameters = [name for name in inspect.signature(DeepCFRSolver.__init__).parameters if name != "self"]
    unknown = [name for name in settings if name not in parameters[1:]]
    if unknown:
        return (unknown_keyword_message("DeepCFRSolver", unknown[0], GROUPS, parameters) + "; the settings are "
                "DeepCFRSolver's keyword arguments, each group an object of its fields (docs/deep_cfr.md)")  # fmt: skip
    given = {name: p.default for name, p in inspect.signature(DeepCFRSolver.__init__).parameters.items()
             if p.default is not inspect.Parameter.empty}  # fmt: skip
    given.update(settings)
    try:
        DeepCFRSettings.resolve({n: given[n] for n in OPENSPIEL_RULES}, {n: given[n] for n in GROUPS})
    except (TypeError, ValueError) as e:
        return str(e)
    return None


def checkpoint_path(args, name: str, seed: int) -> str:
    """Where line `name` (seed `seed`) saves and resumes with --checkpoint."""
    return args.checkpoint if name == "deep_cfr" else f"{args.checkpoint}.{name}.seed{seed}.npz"


def _check_checkpoints(args) -> None:
    """--checkpoint: its folder is writable (created), and every checkpoint the
    run would resume from looks like one (a zip archive: torch.save's and
    .npz's format, with the .npz's curve beside it); a file cut off at 0 bytes or
    overwritten is refused here, not after the lines before it have run."""
    check_writable_dir(os.path.dirname(os.path.abspath(args.checkpoint)), "--checkpoint's folder")
    import zipfile

    resumable = [n for n in args.lines if n == "deep_cfr" or
                 (n.startswith("abstraction_") and args.abstraction_variant == "es_lmccfr")]  # fmt: skip
    for name in resumable:
        for seed in args.seeds if name != "deep_cfr" else args.seeds[:1]:
            path = checkpoint_path(args, name, seed)
            if os.path.isdir(path):
                usage_error(f"--checkpoint: {path} is a directory; give a file path")
            if not os.path.exists(path):
                continue
            if os.path.getsize(path) == 0 or not zipfile.is_zipfile(path):
                what = "empty (0 bytes)" if os.path.getsize(path) == 0 else "not a checkpoint (not a zip archive)"
                usage_error(f"--checkpoint: empty or corrupt checkpoint at {path}: {what}; delete it to start that "
                            "line over, or choose another --checkpoint")  # fmt: skip
            if name != "deep_cfr":
                try:
                    with open(path + ".json", encoding="utf-8") as f:
                        json.load(f)
                except (OSError, ValueError) as e:
                    usage_error(f"--checkpoint: {path}.json (the curve beside {path}) is missing or corrupt ({e}); "
                                "delete both to start that line over")  # fmt: skip


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


class Runner:
    """step() does one unit of work, at most `step_limit` (None: no limit) of
    its iterations or episodes, so that --iterations lands on each checkpoint
    exactly; policy() returns (policy, seconds charged); evaluate() measures it
    exactly. A runner with `one_evaluation` (a fixed policy) is evaluated once,
    not at checkpoints."""

    name = ""
    steps_unit = "steps"
    nodes_touched = None
    one_evaluation = False
    last_checkpoint = True  # run_one: whether the coming evaluation is the line's last
    resumable = False  # save(path, extra) / load(path) -> extra: `--checkpoint` resumes it
    step_limit = None  # run_one, with --iterations: the iterations left to the next checkpoint
    clock = staticmethod(time.perf_counter)  # what --seconds counts (--clock): run_one sets it

    def chunk(self, per_step: int) -> int:
        """How many iterations the coming step runs: `per_step`, cut to `step_limit`."""
        return per_step if self.step_limit is None else min(per_step, self.step_limit)

    def evaluate(self, game, pol, evaluator: str):
        return evaluate(game, pol, evaluator)

    def info(self) -> dict:
        return {}


class DeepCFRRunner(Runner):
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
        if self.solver.average_policy == "sd_cfr":  # the kept iterates' exact mixture: nothing to train
            self.policy_loss = None
            return self.solver, 0.0
        start = self.clock()
        self.policy_loss = self.solver.train_policy_network()
        return self.solver, self.clock() - start

    def info(self):
        s = self.solver
        return {
            "nodes_touched": s.nodes_touched,
            "memory": f"adv {len(s.advantage_buffers[0]):,}/{len(s.advantage_buffers[1]):,}, "
            f"strategy {len(s.strategy_buffer):,}",
            "advantage_loss": s.history[-1]["advantage_loss"] if s.history else None,
            "policy_loss": getattr(self, "policy_loss", None),
        }


class MCCFRRunner(Runner):
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
        start = self.clock()
        pol = self.solver.average_policy()  # unvisited infosets: uniform
        return pol, self.clock() - start


class PythonMCCFRRunner(Runner):
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
        start = self.clock()
        pol = self.solver.average_policy()
        return pol, self.clock() - start

    def info(self):
        return {"nodes_touched": self.nodes_touched}


class NFSPRunner(Runner):
    name, steps_unit = "os_nfsp", "episodes"

    def __init__(self, game, seed, per_step, preset="leduc_defaults", checkpoints=()):
        from cfrx_examples.contenders import NFSP_PRESETS, make_contender

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
        return self.contender.policy(), 0.0  # batched average network (contenders.py)


class VectorCFRRunner(Runner):
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


class AbstractMCCFRRunner(VectorCFRRunner):
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


class PolicyRunner(Runner):
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
        start = self.clock()
        pol = self.make(self.game)
        return pol, self.clock() - start


def make_runner(name, game, args, checkpoints=()) -> Runner:
    if name.startswith("abstraction_") and args.abstraction_variant == "es_lmccfr":
        return AbstractMCCFRRunner(name, game, args)
    if name.startswith(("lossless_", "abstraction_")):
        return VectorCFRRunner(name, game, args)
    if name.startswith("policy:"):
        return PolicyRunner(name, game)
    if name == "deep_cfr":
        return DeepCFRRunner(game, args.seed, args.deep_cfr_settings)
    if name == "os_es_mccfr":
        return MCCFRRunner(game, args.seed, args.mccfr_step)
    if name == "os_nfsp":
        return NFSPRunner(game, args.seed, args.nfsp_step, args.nfsp_preset, checkpoints)
    if name == "os_es_mccfr_py":
        return PythonMCCFRRunner(game, args.seed, args.mccfr_py_step)
    raise ValueError(f"unknown algorithm {name!r}")


def run_one(name, game, args, node_targets=None) -> list[dict]:
    """Runs one algorithm to its checkpoints: fractions of --seconds (the first
    step boundary past each), exactly fractions of --iterations, or
    (node_targets) the first step boundary at or past each number of nodes touched."""
    fractions = args.fractions
    exact = not node_targets and args.iterations > 0
    if node_targets:
        pending = sorted(node_targets)
    elif exact:
        pending = sorted({max(1, round(f * args.iterations)) for f in fractions})
    else:
        pending = [f * args.seconds for f in fractions]
    runner = make_runner(name, game, args, pending if exact else ())
    runner.clock = CLOCKS[args.clock]
    if runner.one_evaluation:
        node_targets, pending = None, [0]
    rows, spent = [], 0.0
    saving = bool(args.checkpoint) and runner.resumable
    path = checkpoint_path(args, name, args.seed)
    if saving and os.path.exists(path):
        try:
            done = runner.load(path)
            rows, spent, runner.steps, pending = done["rows"], done["spent"], done["steps"], done["pending"]
            if done.get("clock", "wall") != args.clock:
                raise SystemExit(f"--checkpoint: {path} counted {done.get('clock', 'wall')} seconds, not "
                                 f"--clock={args.clock}; rerun with that clock, delete it, or choose another "
                                 "--checkpoint")  # fmt: skip
        except (ValueError, TypeError, KeyError) as e:  # the library's CheckpointError is a ValueError
            detail = str(e) if isinstance(e, ValueError) else "no curve of this program in it"
            raise SystemExit(f"--checkpoint: cannot resume {name} from {path} ({detail}); delete it to start "
                             "that line over, or choose another --checkpoint") from None
        print(f"  resumed {path}: {runner.steps} {runner.steps_unit}, {spent:.0f} s, {len(rows)} checkpoints done",
              flush=True)  # fmt: skip
    said = time.monotonic()
    while pending:
        start = runner.clock()
        runner.step_limit = pending[0] - runner.steps if exact else None
        runner.step()
        spent += runner.clock() - start
        progress = runner.nodes_touched if node_targets else runner.steps if args.iterations > 0 else spent
        if progress < pending[0]:
            if time.monotonic() - said >= PROGRESS_EVERY_S:  # a long stretch between checkpoints shows it is alive
                said = time.monotonic()
                unit = "nodes" if node_targets else runner.steps_unit if args.iterations > 0 else "s"
                print(f"  {name:<12} {progress:>12,.0f} of {pending[0]:,.0f} {unit} to the next checkpoint "
                      f"(solver {spent:.0f} s)", flush=True)  # fmt: skip
            continue
        while pending and progress >= pending[0]:
            pending.pop(0)
        pol, policy_s = runner.policy()
        runner.last_checkpoint = not pending
        result = runner.evaluate(game, pol, args.evaluator)
        row = {
            "algorithm": name,
            "seed": args.seed,
            "steps": runner.steps,
            "steps_unit": runner.steps_unit,
            "solver_seconds": spent,
            "policy_seconds": policy_s,
            "seconds": spent + policy_s,
            "nash_conv_chips": result.nash_conv,
            "nash_conv_mbb": result.nash_conv_mbb,
            "br_gain_p0": float(result.player_improvements[0]),
            "br_gain_p1": float(result.player_improvements[1]),
            "eval_seconds": result.seconds,
            "load_1min": os.getloadavg()[0],  # the machine's load when the checkpoint was reached
            **runner.info(),
        }
        current = getattr(runner, "current_policy", None)
        if current is not None and args.evaluator == "states":  # Deep CFR's last iterate sigma^t, for diagnosis (not charged, not its output)
            now = poker_nash_conv(game, current(), return_details=True)
            row.update(current_nash_conv_mbb=now.nash_conv_mbb,
                       current_br_gains=f"{now.player_improvements[0]:.2f} / {now.player_improvements[1]:.2f}")
        rows.append(row)
        if saving:
            runner.save(path, {"rows": rows, "spent": spent, "steps": runner.steps, "pending": pending,
                               "clock": args.clock})
        print(f"  {name:<12} {runner.steps:>9} {runner.steps_unit:<10} solver {spent:7.1f}s "
              f"+ policy {policy_s:5.1f}s  NashConv {result.nash_conv_mbb:9.1f} mbb/g "
              f"(eval {result.seconds:.1f}s)", flush=True)  # fmt: skip
    return rows


def evaluate(game, pol, evaluator: str):
    """Exact NashConv of `pol` (`poker_nash_conv`'s result fields)."""
    if evaluator == "states":
        return poker_nash_conv(game, pol, return_details=True)
    from types import SimpleNamespace

    from openspiel_cfrx.neural_poker import InformationStateTensors, NetworkStrategy
    from openspiel_cfrx.poker import PublicTree

    nets = getattr(pol, "policy_network", None)
    if not getattr(nets, "suit_symmetric", False):
        raise SystemExit("--evaluator=engine evaluates a Deep CFR policy whose network is suit-symmetric "
                         "(--deep_cfr='{\"network\": {\"family\": \"suit_symmetric_mlp\"}, ...}')")  # fmt: skip
    start = time.perf_counter()
    tree = PublicTree(game)  # suit isomorphism: one board per class
    strategy = NetworkStrategy(tree, InformationStateTensors(game, tree), pol.probabilities_from_tensors,
                               suit_symmetric=True)  # fmt: skip
    gains = tree.best_response_values(strategy)  # zero-sum: each player's best-response gain
    value = float(gains.sum())
    return SimpleNamespace(nash_conv=value, nash_conv_mbb=tree.rules.mbb_per_game(value),
                           player_improvements=gains, seconds=time.perf_counter() - start)  # fmt: skip


def plot(rows, uniform_mbb, path, title, x="seconds"):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9.5, 4.5))
    for name in dict.fromkeys(r["algorithm"] for r in rows):
        pts = sorted((r for r in rows if r["algorithm"] == name), key=lambda r: r["steps"])
        if pts[0]["steps_unit"] == "policy":  # a user's policy: its level
            ax.axhline(pts[-1]["nash_conv_mbb"], ls=":", lw=1.5, color="black", label=name.split(":")[-1])
            continue
        by_seed: dict = {}
        for r in pts:
            if r.get(x):
                by_seed.setdefault(r.get("seed", 0), []).append(r)
        if len(by_seed) == 1:
            pts = next(iter(by_seed.values()))
            ax.plot([r[x] for r in pts], [r["nash_conv_mbb"] for r in pts], "o-", label=name)
            continue
        # several seeds: the mean of each checkpoint over the seeds, and their range as a band; runs
        # checkpointed at different budgets are matched to the sparsest run by the nearest solver seconds,
        # and a run's other checkpoints are drawn as its own faint points
        runs = [runs for runs in by_seed.values()]
        sparsest = min(runs, key=len)
        matched = [[min(run, key=lambda r, at=ref: abs(r.get("solver_seconds", 0.0) - at.get("solver_seconds", 0.0)))
                    for ref in sparsest] if len(run) > len(sparsest) else run for run in runs]  # fmt: skip
        xs = np.array([[r[x] for r in run] for run in matched], dtype=float)
        ys = np.array([[r["nash_conv_mbb"] for r in run] for run in matched])
        line, = ax.plot(xs.mean(axis=0), ys.mean(axis=0), "o-", label=f"{name} ({len(runs)} seeds)")
        ax.fill_between(xs.mean(axis=0), ys.min(axis=0), ys.max(axis=0), color=line.get_color(), alpha=0.2)
        extra = [r for run, kept in zip(runs, matched, strict=True) for r in run if all(r is not k for k in kept)]
        if extra:
            ax.plot([r[x] for r in extra], [r["nash_conv_mbb"] for r in extra], "x", color=line.get_color(),
                    alpha=0.6, label=f"{name}: checkpoints of one seed")  # fmt: skip
    if uniform_mbb is not None:
        ax.axhline(uniform_mbb, color="gray", ls="--", lw=1, label="uniform random")
    ax.set_yscale("log")
    if x == "seconds":
        ax.set_xlabel("solver seconds (evaluation excluded; each line's threads and clock: see the page)")
    else:
        ax.set_xscale("log")
        ax.set_xlabel("nodes touched (histories visited: decision, chance, terminal)")
    ax.set_ylabel("NashConv (mbb/g, exact)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the axes, off the curves
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


INTEGER_COLUMNS = ("steps", "nodes_touched", "seed")
TEXT_COLUMNS = ("algorithm", "steps_unit")


def deep_cfr_rows(path: str, args) -> list[dict]:
    """deep_cfr's rows of an earlier run's fhp_curve.csv (`--deep_cfr_from`): its
    checkpoints' nodes touched are the equal-nodes targets, without re-running it."""
    if not args.match_nodes or "deep_cfr" in (n.strip() for n in args.algorithms.split(",")):
        raise SystemExit("--deep_cfr_from takes deep_cfr's rows from a CSV: use it with --match-nodes and "
                         "without deep_cfr in --algorithms")  # fmt: skip
    try:
        with open(path, encoding="utf-8") as f:
            found = [r for r in csv.DictReader(f) if r.get("algorithm") == "deep_cfr"]
    except OSError as e:
        raise SystemExit(f"--deep_cfr_from: cannot read {path!r} ({e.strerror})") from None
    if not found or not all(r.get("nodes_touched") for r in found):
        raise SystemExit(f"--deep_cfr_from: {path!r} has no deep_cfr rows with nodes_touched (a bench_fhp_curve.py "
                         "CSV of a run with deep_cfr)")  # fmt: skip
    try:
        return [{k: v if k in TEXT_COLUMNS else int(v) if k in INTEGER_COLUMNS else float(v)
                 for k, v in r.items() if v != ""} for r in found]  # fmt: skip
    except ValueError as e:
        raise SystemExit(f"--deep_cfr_from: {path!r} has a non-numeric value in a deep_cfr row ({e})") from None


def _number(text: str) -> float:
    """A results page's cell as a number ("**1,234.5**" -> 1234.5)."""
    return float(text.replace("*", "").replace(",", "").strip())


def page_rows(name: str, path: str, game) -> list[dict]:
    """The rows of line `name` from the first table of results page `path` with
    a "NashConv (mbb/g)" column: iterations, nodes touched, seconds ("a + b":
    solver + charged policy seconds), NashConv, BR gains where it has them; a
    lossless_* line without a nodes column gets the vector walks' count
    (`VectorCFRRunner`: two walks per iteration, the full game's histories)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise SystemExit(f"--rows_from {name}={path}: cannot read it ({e.strerror})") from None
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and "NashConv (mbb/g)" in cells:
            header, body = cells, []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                body.append([c.strip() for c in row.strip().strip("|").split("|")])
            break
    else:
        raise SystemExit(f"--rows_from {name}={path}: no table with a 'NashConv (mbb/g)' column")
    column = {c: next((j for j, h in enumerate(header) if h.startswith(c)), None)
              for c in ("iteration", "nodes touched", "seconds", "solve seconds", "NashConv (mbb/g)", "BR gain")}
    per_iteration = None
    if column["nodes touched"] is None and name.startswith("lossless_"):
        from openspiel_cfrx.poker import PublicTree

        per_iteration = 2 * PublicTree(game).nodes_per_walk(represented=True)
    big_blind = _big_blind(game)
    rows = []
    for cells in body:
        seconds = cells[column["seconds"] if column["seconds"] is not None else column["solve seconds"]].split("+")
        steps = int(_number(cells[column["iteration"]]))
        mbb = _number(cells[column["NashConv (mbb/g)"]])
        gains = cells[column["BR gain"]].split("/") if column["BR gain"] is not None else None
        rows.append({"algorithm": name, "steps": steps, "steps_unit": "iterations",
                     "solver_seconds": _number(seconds[0]),
                     "policy_seconds": _number(seconds[1]) if len(seconds) > 1 else 0.0,
                     "seconds": sum(_number(x) for x in seconds), "nash_conv_mbb": mbb,
                     "nash_conv_chips": mbb * big_blind / 1000.0,
                     "br_gain_p0": _number(gains[0]) if gains else None, "br_gain_p1": _number(gains[1]) if gains else None,
                     "nodes_touched": (int(_number(cells[column["nodes touched"]])) if per_iteration is None
                                       else steps * per_iteration), "source": path})  # fmt: skip
    return rows


def _big_blind(game) -> float:
    from openspiel_cfrx.poker import PokerRules

    return float(PokerRules.from_game(game).big_blind)


def csv_rows(path: str) -> list[dict]:
    """Every row of a CSV written by this program or bench_full_fhp_nfsp.py."""
    try:
        with open(path, encoding="utf-8") as f:
            found = list(csv.DictReader(f))
    except OSError as e:
        raise SystemExit(f"--rows_from {path}: cannot read it ({e.strerror})") from None
    if not found or "nash_conv_mbb" not in found[0] or "algorithm" not in found[0]:
        raise SystemExit(f"--rows_from {path}: not a results CSV (needs algorithm and nash_conv_mbb columns)")
    try:
        return [{k: v if k in TEXT_COLUMNS else int(v) if k in INTEGER_COLUMNS else float(v)
                 for k, v in r.items() if v not in ("", None)} | {"source": path} for r in found]  # fmt: skip
    except ValueError as e:
        raise SystemExit(f"--rows_from {path}: a non-numeric value ({e})") from None


def earlier_rows(spec: str, game) -> list[dict]:
    """`--rows_from`'s rows, in the order given."""
    rows = []
    for item in (x.strip() for x in spec.split(",")):
        if item:
            name, _, path = item.rpartition("=")
            if not name:
                rows += csv_rows(path)
            elif path.endswith(".csv"):  # a CSV's rows as line NAME (e.g. two presets of one program)
                rows += [dict(r, algorithm=name) for r in csv_rows(path)]
            else:
                rows += page_rows(name, path, game)
    return rows


def final_points(rows: list[dict]) -> dict[str, dict]:
    """Per line, its last checkpoint; with several seeds the mean of each seed's
    last NashConv and nodes touched ("seeds": how many)."""
    last: dict[str, dict] = {}
    for r in sorted(rows, key=lambda r: r["steps"]):  # an evaluation may have written its rows last-first
        last.setdefault(r["algorithm"], {})[r.get("seed", 0)] = r
    out = {}
    for name, by_seed in last.items():
        ends = list(by_seed.values())
        out[name] = dict(ends[-1], seeds=len(ends),
                         nash_conv_mbb=float(np.mean([r["nash_conv_mbb"] for r in ends])),
                         nash_conv_spread=(min(r["nash_conv_mbb"] for r in ends), max(r["nash_conv_mbb"] for r in ends)),
                         nodes_touched=(float(np.mean([r["nodes_touched"] for r in ends]))
                                        if all(r.get("nodes_touched") for r in ends) else None))  # fmt: skip
    return out


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
    --evaluator can measure (one line otherwise, before anything is computed)."""
    import games  # noqa: F401  (registers flop_holdem, hulh)
    from games.poker import game_size, limit_holdem_rules
    from openspiel_cfrx.poker.exploitability import DEFAULT_MAX_INFOSETS

    example = "e.g. --game='flop_holdem(num_ranks=5,num_suits=2)'"
    name = args.game.partition("(")[0].strip()
    if name not in pyspiel.registered_names():
        usage_error(f"--game={args.game}: unknown game {name!r}; this benchmark needs a flop_holdem/hulh poker game, "
                    f"{example}")  # fmt: skip
    try:
        game = _without_native_stderr(lambda: pyspiel.load_game(args.game))
    except (pyspiel.SpielError, ValueError, RuntimeError) as e:  # pyspiel's message lists every game after line 1
        first = (str(e).strip().splitlines() or [type(e).__name__])[0].split(" Available games")[0].rstrip(".")
        usage_error(f"--game={args.game} does not load ({first}); this benchmark needs a flop_holdem/hulh poker "
                    f"game, {example}")  # fmt: skip
    try:
        rules = limit_holdem_rules(game)
    except ValueError as e:
        usage_error(f"--game={args.game} is not a poker game this benchmark runs ({str(e).rstrip('.')}); it needs a flop_holdem/hulh "
                    f"poker game, {example}")  # fmt: skip
    if args.evaluator == "states":
        infosets = max(game_size(rules).infosets)
        if rules.num_rounds != 2:
            usage_error(f"--game={args.game}: --evaluator=states (poker_nash_conv) measures flop_holdem games (2 "
                        f"betting rounds), this one has {rules.num_rounds}; use a flop_holdem game")  # fmt: skip
        if infosets > DEFAULT_MAX_INFOSETS:
            usage_error(f"--game={args.game} has {infosets:,} infosets per player, too many for --evaluator=states "
                        "(every infoset is queried); use --evaluator=engine")  # fmt: skip
    return game


def main(argv=None):
    args = parse_args(argv)  # every argument checked: one line and exit status 2 for the first bad one
    command = "python benchmarks/bench_fhp_curve.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    game = load_poker_game(args)
    import torch

    torch.set_num_threads(args.threads)
    seeds = args.seeds
    rows = deep_cfr_rows(args.deep_cfr_from, args) if args.deep_cfr_from else []
    rows += earlier_rows(args.rows_from, game)
    from open_spiel.python import policy as policy_lib

    if args.evaluator == "engine":
        from types import SimpleNamespace

        from openspiel_cfrx.poker import PublicTree

        tree = PublicTree(game)
        uniform = SimpleNamespace(nash_conv_mbb=tree.rules.mbb_per_game(tree.nash_conv(tree.uniform)))
    else:
        uniform = poker_nash_conv(game, policy_lib.UniformRandomPolicy(game), return_details=True)
    print(f"{args.game}: uniform NashConv {uniform.nash_conv_mbb:.1f} mbb/g", flush=True)
    for name in args.lines:
        targets = None
        if name == "os_es_mccfr_py" and args.match_nodes:
            targets = [r["nodes_touched"] for r in rows if r["algorithm"] == "deep_cfr"]
            if not targets:
                raise SystemExit("--match-nodes needs deep_cfr listed before os_es_mccfr_py in --algorithms")
        unit = "episodes" if name == "os_nfsp" else "iterations"
        budget = f"{args.iterations:,} {unit}" if args.iterations > 0 else f"{args.seconds:g} s"
        for seed in seeds:
            args.seed = seed
            print(f"{name} (seed {seed}): " + (f"to {targets[-1]:,} nodes touched" if targets else budget), flush=True)
            rows.extend(run_one(name, game, args, targets))

    name = args.page or ("full_fhp" if args.game == "flop_holdem" else "fhp_curve")  # the results page it writes
    out = os.path.join(args.out_dir, name)
    os.makedirs(out, exist_ok=True)
    fields = ["algorithm", "seed", "steps", "steps_unit", "solver_seconds", "policy_seconds", "seconds",
              "nash_conv_chips", "nash_conv_mbb", "br_gain_p0", "br_gain_p1", "eval_seconds",
              "nodes_touched", "current_nash_conv_mbb", "abstract_nash_conv_mbb", "abstract_infosets",
              "load_1min"]  # fmt: skip
    with open(os.path.join(out, "fhp_curve.csv"), "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    with_nodes = [r for r in rows if r.get("nodes_touched") or r["steps_unit"] == "policy"]
    if with_nodes:
        plot(with_nodes, uniform.nash_conv_mbb, os.path.join(out, "fhp_curve_nodes.png"),
             f"{args.game}\nexact NashConv vs nodes touched", x="nodes_touched")  # fmt: skip
    plot(rows, uniform.nash_conv_mbb, os.path.join(out, "fhp_curve.png"),
         f"{args.game}\nexact NashConv at equal compute ({args.seconds:g} s each)"
         if not args.rows_from else f"{args.game}\nexact NashConv vs each line's own seconds")  # fmt: skip
    def cell(r, key, spec):
        return format(r[key], spec) if r.get(key) is not None else ""

    sources = list(dict.fromkeys(r["source"] for r in rows if r.get("source")))
    table = markdown_table(
        ["algorithm", "seed", "steps", "nodes touched", "solver s", "policy s (charged)", "x = seconds",
         "NashConv (chips)", "NashConv (mbb/g)", "in the abstraction (mbb/g)", "BR gain P0 / P1 (chips)",
         "eval s (excluded)", "load"] + (["from"] if sources else []),
        [[r["algorithm"], cell(r, "seed", "d"), f"{r['steps']:,} {r['steps_unit']}", cell(r, "nodes_touched", ","),
          cell(r, "solver_seconds", ".1f"), cell(r, "policy_seconds", ".1f"), cell(r, "seconds", ".1f"),
          cell(r, "nash_conv_chips", ".3f"), f"{r['nash_conv_mbb']:,.1f}", cell(r, "abstract_nash_conv_mbb", ",.2f"),
          f"{r['br_gain_p0']:.2f} / {r['br_gain_p1']:.2f}" if r.get("br_gain_p0") is not None else "",
          cell(r, "eval_seconds", ".1f"), cell(r, "load_1min", ".1f")] + ([f"[{sources.index(r['source']) + 1}]" if r.get("source") else "this run"]
                                            if sources else []) for r in rows],
    )  # fmt: skip
    if sources:
        table += "\n" + "".join(f"\n[{i + 1}] `{path}`" for i, path in enumerate(sources)) + "\n"
    deep = [r for r in rows if r["algorithm"] == "deep_cfr" and "memory" in r]  # (not rows read from a CSV)
    deep_lines = "".join(
        f"\n- deep_cfr @ {r['steps']} iterations: {r['nodes_touched']:,} nodes touched, "
        + (f"current iterate sigma^t NashConv {r['current_nash_conv_mbb']:,.1f} mbb/g (BR gains "
           f"{r['current_br_gains']}), " if "current_nash_conv_mbb" in r else "")
        + f"memories "
        f"{r['memory']}, last advantage losses {r['advantage_loss']}, policy loss "
        + ("none (sd_cfr: the kept iterates' mixture)" if r["policy_loss"] is None else f"{r['policy_loss']:.4g}")
        for r in deep
    )
    ran = args.lines
    settings = (
        (f"Budget {args.iterations:,} iterations (os_nfsp: episodes) of each algorithm, checkpoints at "
           if args.iterations > 0 else f"Budget {args.seconds:g} {'CPU ' if args.clock == 'cpu' else ''}s of each "
           "algorithm's own compute, checkpoints at ")
        + f"{','.join(f'{x:g}' for x in args.fractions)} of it ("
        + ("exactly" if args.iterations > 0 else "first step boundary past each")
        + f"), torch threads {args.threads}, "
        f"seeds {', '.join(map(str, seeds))}; algorithms run one after the other in one process.\n\n"
        f"Settings: deep_cfr `{args.deep_cfr_settings}`; os_es_mccfr {args.mccfr_step} iterations per "
        f"step; os_es_mccfr_py {args.mccfr_py_step} iterations per step"
        f"{' (checkpoints at deep_cfr nodes touched)' if args.match_nodes else ''}"
        f"{f', deep_cfr rows read from {args.deep_cfr_from}' if args.deep_cfr_from else ''}; os_nfsp {args.nfsp_step} "
        f"episodes per step, NFSP preset `{args.nfsp_preset}` (cfrx_examples/contenders.py); abstraction_* solved by "
        f"`{args.abstraction_variant}`" + (f" ({args.es_step:,} iterations per step)" if args.abstraction_variant ==
                                            "es_lmccfr" else "") + ".\n\n"
    ) if ran else "Every line is drawn from the earlier results listed under the table (`--rows_from`).\n\n"
    body = (
        f"Game `{args.game}`; uniform random policy: NashConv {uniform.nash_conv_mbb:,.1f} mbb/g. "
        f"{settings}{table}\n{deep_lines}\n\n![curves]({name}/fhp_curve.png)\n"
        + (f"![vs nodes]({name}/fhp_curve_nodes.png)\n" if any(r.get("nodes_touched") for r in rows) else "")
    )
    figure2 = any(r["algorithm"].startswith(("lossless_", "abstraction_")) for r in rows)
    if figure2:
        body += "\n" + paper_statements(rows)
    title = ("Flop hold'em: Deep CFR's Figure 2 (card abstractions, lossless CFR, Deep CFR, NFSP), measured exactly"
             if figure2 else "Flop hold'em: Deep CFR vs ES-MCCFR vs NFSP at equal compute")  # fmt: skip
    write_result(os.path.join(args.out_dir, f"{name}.md"), title, header_command=command, body=body)


def _nodes_to_reach(points: list[dict], level: float) -> float | None:
    """Nodes touched at which a curve first gets to `level` mbb/g (log-log
    interpolation between its checkpoints; None if it never does)."""
    points = sorted((r for r in points if r.get("nodes_touched")), key=lambda r: r["nodes_touched"])
    for a, b in zip(points, points[1:], strict=False):
        if b["nash_conv_mbb"] <= level < a["nash_conv_mbb"]:
            t = (math.log(a["nash_conv_mbb"]) - math.log(level)) / (math.log(a["nash_conv_mbb"]) - math.log(b["nash_conv_mbb"]))
            return math.exp(math.log(a["nodes_touched"]) + t * (math.log(b["nodes_touched"]) - math.log(a["nodes_touched"])))
    if points and points[0]["nash_conv_mbb"] <= level:
        return float(points[0]["nodes_touched"])
    return None


def _abstraction_size(name: str) -> int | None:
    """N of line `abstraction_<N>` or `abstraction_<N>_<tag>` (None for other lines,
    perfect-recall refinements included)."""
    match = re.fullmatch(r"abstraction_(\d+)(_\w+)?", name)
    return int(match.group(1)) if match else None


PLATEAU_CHANGE = 0.10  # a line has plateaued when its last two checkpoints differ by less than 10% per doubling of nodes


def _plateau_statement(rows: list[dict], final: dict[str, dict]) -> str | None:
    """The acceptance's "full-game exploitability plateaus at a level that falls
    with the number of buckets": per size, its line with the most nodes touched
    (first seed), the change between that line's last two checkpoints."""
    longest: dict[int, dict] = {}
    for name, end in final.items():
        size = _abstraction_size(name)
        if size and end.get("nodes_touched") and end["nodes_touched"] > longest.get(size, {}).get("nodes_touched", 0):
            longest[size] = end
    if len(longest) < 2:
        return None
    shown, flat, levels = [], [], []
    for size in sorted(longest):
        name = longest[size]["algorithm"]
        seed = next(r.get("seed", 0) for r in rows if r["algorithm"] == name)
        points = sorted((r for r in rows if r["algorithm"] == name and r.get("seed", 0) == seed and r.get("nodes_touched")),
                        key=lambda r: r["nodes_touched"])  # fmt: skip
        if len(points) < 2:
            return None
        a, b = points[-2], points[-1]
        ratio = b["nash_conv_mbb"] / a["nash_conv_mbb"]
        # per doubling of nodes touched, so that checkpoint spacing does not decide it
        per_doubling = ratio ** (math.log(2.0) / math.log(b["nodes_touched"] / a["nodes_touched"])) - 1.0
        flat.append(abs(per_doubling) <= PLATEAU_CHANGE)
        levels.append(b["nash_conv_mbb"])
        shown.append(f"{name} (seed {seed}): {a['nash_conv_mbb']:,.1f} -> {b['nash_conv_mbb']:,.1f} "
                     f"({ratio - 1.0:+.1%}) from {a['nodes_touched']:.2g} to {b['nodes_touched']:.2g} nodes, "
                     f"{per_doubling:+.1%} per doubling")  # fmt: skip
    falls = levels == sorted(levels, reverse=True)
    holds = "yes" if all(flat) and falls else ("no: still falling" if falls else "no")
    return (f"| each abstraction's full-game NashConv plateaus, lower for more buckets (last two checkpoints "
            f"of each size's longest line; plateau: within {PLATEAU_CHANGE:.0%} per doubling of nodes touched) | "
            f"{'; '.join(shown)} | {holds} |")


# Brown et al. (2019), Section 6: "Deep CFR reaches an exploitability of 37 mbb/g while NFSP
# converges to 47 mbb/g" (flop hold'em, Figure 2)
PAPER_DEEP_CFR_MBB = 37.0
PAPER_NFSP_MBB = 47.0
PAPER_LEVEL_SLACK = 1.25  # a line "reaches" the paper's number when its last level is within 25% above it


def _level(r: dict) -> str:
    """A line's last NashConv as the statements print it (mbb/g; with several
    seeds their mean and range)."""
    spread = f" (seeds {r['nash_conv_spread'][0]:,.1f}-{r['nash_conv_spread'][1]:,.1f})" if r["seeds"] > 1 else ""
    return f"{r['nash_conv_mbb']:,.1f}{spread}"


def _paper_level_statements(final: dict[str, dict]) -> list[str]:
    """Section 6's two numbers, Deep CFR's 37 and NFSP's 47 mbb/g, against each
    line's last level (mean over its seeds): it reaches the paper's number when
    within PAPER_LEVEL_SLACK of it."""
    checks = [("Deep CFR", "deep_cfr", PAPER_DEEP_CFR_MBB, "")] if "deep_cfr" in final else []
    checks += [("NFSP", name, PAPER_NFSP_MBB, f" ({name})") for name in final if name.startswith("os_nfsp")]
    lines = []
    for who, name, paper, which in checks:
        mine = final[name]["nash_conv_mbb"]
        shown = "Deep CFR" if name == "deep_cfr" else name
        lines.append(f"| {who} reaches the paper's {paper:g} mbb/g (within {PAPER_LEVEL_SLACK - 1:.0%}){which} | "
                     f"{shown} {_level(final[name])} mbb/g, {mine / paper:,.1f}x the paper's | "
                     f"{'yes' if mine <= PAPER_LEVEL_SLACK * paper else 'no'} |")  # fmt: skip
    return lines


def paper_statements(rows: list[dict]) -> str:
    """The Figure 2 statements of Brown et al. (2019), Section 6, checked on this
    run's rows one by one (computed, not typed)."""
    final = final_points(rows)  # the last checkpoint of each line (mean over its seeds)
    # `abstraction_<N>`: the size's main line; `abstraction_<N>_<tag>` (e.g. a longer run drawn with
    # --rows_from NAME=FILE.csv) joins only the plateau check, which reads each size's longest line
    abstractions = sorted((r for n, r in final.items() if _abstraction_size(n) and n.count("_") == 1),
                          key=lambda r: _abstraction_size(r["algorithm"]))  # fmt: skip
    lines = ["## The paper's statements on this run", "",
             "| statement (Brown et al. 2019, Figure 2 / Section 6) | this run | holds here |", "|---|---|---|"]
    if len(abstractions) >= 2:
        levels = [r["nash_conv_mbb"] for r in abstractions]
        shown = ", ".join(f"{r['algorithm']}: {_level(r)}" for r in abstractions)
        lines.append(f"| coarser abstractions are more exploitable | last points (mbb/g) {shown} | "
                     f"{'yes' if levels == sorted(levels, reverse=True) else 'no'} |")
    plateau = _plateau_statement(rows, final)
    if plateau:
        lines.append(plateau)
    for name in (n for n in final if n.startswith("abstraction_")):
        inside = [r for r in rows if r["algorithm"] == name and r.get("abstract_nash_conv_mbb") is not None]
        if not inside:
            continue
        perfect = name.startswith("abstraction_pr_")
        seeds = list(dict.fromkeys(r.get("seed", 0) for r in inside))
        if len(seeds) > 1:  # each seed's last value
            ends = {r.get("seed", 0): r["abstract_nash_conv_mbb"] for r in inside}
            shown = "seeds' last " + ", ".join(f"{ends[k]:,.2f}" for k in seeds)
        else:  # the line's last three values, in order
            shown = " -> ".join(f"{r['abstract_nash_conv_mbb']:,.2f}" for r in inside[-3:])
        full = final[name]["nash_conv_mbb"]
        holds = ("yes" if inside[-1]["abstract_nash_conv_mbb"] <= 0.05 * full else "no") if perfect else \
            "not measurable: imperfect recall (a lower bound)"
        lines.append(f"| the abstraction solve converges inside its abstraction ({name}) | NashConv inside "
                     f"{shown} mbb/g ({'exact: perfect recall' if perfect else 'lower bound'}), full game "
                     f"{full:,.1f} | {holds} |")
    deep = final.get("deep_cfr")
    if deep and abstractions:
        big, mine = abstractions[-1], deep["nash_conv_mbb"]
        lines.append(f"| Deep CFR reaches about the level of the largest abstraction | Deep CFR {_level(deep)} vs "
                     f"{big['algorithm']} {_level(big)} mbb/g | "
                     f"{'yes' if mine <= 1.25 * big['nash_conv_mbb'] else 'no'} |")
    if deep and abstractions and deep.get("nodes_touched"):
        big = abstractions[-1]["algorithm"]
        target, have = deep["nash_conv_mbb"], deep["nodes_touched"]
        need = [_nodes_to_reach([r for r in rows if r["algorithm"] == big and r.get("seed", 0) == seed], target)
                for seed in dict.fromkeys(r.get("seed", 0) for r in rows if r["algorithm"] == big)]  # fmt: skip
        reached = [n for n in need if n]
        shown = ", ".join(f"{n / have:,.2g}x" if n else "never" for n in need)
        holds = "yes" if reached and min(reached) > have else "no" if reached else "not measured (never reached)"
        lines.append(f"| Deep CFR converges substantially faster than the largest abstraction (nodes touched) | "
                     f"{big} needs {shown} Deep CFR's {have:,.0f} nodes to reach its {target:,.1f} mbb/g "
                     f"(per seed) | {holds} |")
    lossless = [n for n in final if n.startswith("lossless_")]
    if deep and lossless:
        for name in lossless:
            target = deep["nash_conv_mbb"]
            need = _nodes_to_reach([r for r in rows if r["algorithm"] == name], target)
            have = deep.get("nodes_touched")
            ratio = f"{need / have:,.0f}x" if need and have else "not reached in this run"
            holds = "yes" if need and have and need / have >= 100 else "no" if need and have else "not measured"
            lines.append(f"| Deep CFR needs 2-3 orders of magnitude fewer nodes touched than lossless ({name}) | "
                         f"{name} needs {ratio} Deep CFR's {have or 0:,.0f} nodes to reach its {target:,.1f} mbb/g | "
                         f"{holds} |")
    nfsp = [n for n in final if n.startswith("os_nfsp")]
    if deep and nfsp:
        for name in nfsp:
            theirs, mine = final[name]["nash_conv_mbb"], deep["nash_conv_mbb"]
            nodes = (f"; nodes touched {final[name]['nodes_touched']:,.0f} vs {deep['nodes_touched']:,.0f}"
                     if final[name].get("nodes_touched") and deep.get("nodes_touched") else "")
            lines.append(f"| NFSP ends above Deep CFR | {name} {_level(final[name])} vs Deep CFR {_level(deep)} mbb/g{nodes} | "
                         f"{'yes' if theirs > mine else 'no'} |")
    lines += _paper_level_statements(final)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
