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
* `os_nfsp`: OpenSpiel's PyTorch NFSP through `openspiel_cfrx.contenders`
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

import json
import os
import sys
import time

from absl import flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# torch and `games` (which registers flop_holdem, hulh) are imported by main() once the arguments
# have passed their checks: bad input is refused in about a second
from benchmarks.common import (  # noqa: E402
    budget_fractions,
    check_writable_dir,
    define_checked,
    distinct_seeds,
    integer_at_least,
    parse_flags,
    positive_seconds,
    usage_error,
    write_result,
)
from cfrx_examples.fhp_curve_page import (  # noqa: E402,F401
    deep_cfr_rows,
    earlier_rows,
    page,
    paper_statements,
    write_curve_files,
)
from cfrx_examples.fhp_lines import (  # noqa: E402,F401  (the lines, by their names here too)
    FIXED_LINES,
    LINE_FORMS,
    AbstractMCCFRLine,
    Line,
    line_problem,
    load_poker_game,
    make_line,
    poker_nash_conv,
    resume,
    uniform_nash_conv_mbb,
)
from openspiel_cfrx.eval.harness import RunState, run_budget  # noqa: E402
from openspiel_cfrx.presets import merge_settings  # noqa: E402  (torch-free)

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


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
FLAGS = flags.FlagValues()  # this program's own (tests import several programs into one process)
flags.DEFINE_string("game", "", "default: the --preset's game, else flop_holdem(num_ranks=5,num_suits=2)", flag_values=FLAGS)
flags.DEFINE_string("preset", "", "deep_cfr settings by name (openspiel_cfrx.presets: fhp_5x2, fhp_full); --deep_cfr "
                    "JSON overrides single settings on top", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("algorithms", "deep_cfr,os_es_mccfr,os_nfsp", "comma-separated lines to run", flag_values=FLAGS)
define_checked(FLAGS, "seconds", "300", "compute budget per algorithm", positive_seconds, "float")
define_checked(FLAGS, "iterations", "0", "> 0: run each algorithm for this many iterations (os_nfsp: episodes), "
               "checkpoints at exactly --fractions of it (a step is cut short to land on a checkpoint), instead of "
               "--seconds: equal-iteration comparisons, e.g. Figure 4's ablations, that other load on the machine "
               "does not change", integer_at_least(0, " (0: use --seconds)"), "int")  # fmt: skip
define_checked(FLAGS, "fractions", "0.1,0.25,0.5,0.75,1", "checkpoints as fractions of --seconds (or --iterations): "
               "increasing, in (0, 1]", budget_fractions, "list")  # fmt: skip
define_checked(FLAGS, "mccfr-step", "2000", "MCCFR iterations per step", integer_at_least(1), "int")
define_checked(FLAGS, "mccfr-py-step", "200", "Python MCCFR iterations per step", integer_at_least(1), "int")
flags.DEFINE_bool("match-nodes", False, "checkpoint os_es_mccfr_py at deep_cfr's nodes touched (run deep_cfr first) "
                  "instead of at seconds: the equal-nodes comparison", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("deep_cfr_from", "", "with --match-nodes: take deep_cfr's checkpoints (rows, nodes touched) from "
                    "this earlier run's fhp_curve.csv instead of running it (leave deep_cfr out of --algorithms); the "
                    "output CSV holds both, as a --match-nodes run's does", flag_values=FLAGS)  # fmt: skip
define_checked(FLAGS, "nfsp-step", "500", "NFSP episodes per step", integer_at_least(1), "int")
flags.DEFINE_string("nfsp_preset", "leduc_defaults", "os_nfsp's settings (openspiel_cfrx.contenders.NFSP_PRESETS: "
                    "leduc_defaults, fhp_tuned)", flag_values=FLAGS)  # fmt: skip
define_checked(FLAGS, "vector-step", "1", "lossless_* / abstraction_* (vector CFR): iterations per step", integer_at_least(1),
               "int")  # fmt: skip
flags.DEFINE_string("abstraction_variant", "lcfr", "abstraction_*: the solver of the abstract game: a VectorCFR "
                    "variant (lcfr: full-width Linear CFR) or es_lmccfr (external-sampling Linear MCCFR, the paper's "
                    "solver)", flag_values=FLAGS)  # fmt: skip
define_checked(FLAGS, "es-step", "20000", "abstraction_* with es_lmccfr: MCCFR iterations per step", integer_at_least(1), "int")
flags.DEFINE_enum("abstract_nash_conv", "every", ["every", "last", "never"], "abstraction_*: at which checkpoints to "
                  "also measure the NashConv inside the abstraction (a minute per point on 52-card flop hold'em)",
                  flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("rows_from", "", "comma-separated earlier results drawn beside this run's lines: a CSV of this "
                    "program or bench_full_fhp_nfsp.py (its rows; NAME=FILE.csv: drawn as line NAME), or NAME=PAGE.md "
                    "(the first table of a results page with a 'NashConv (mbb/g)' column, as line NAME; lossless_* "
                    "lines without a nodes column get the vector walks' count)", flag_values=FLAGS)  # fmt: skip
define_checked(FLAGS, "seed", "0", "the seed (of every line)", integer_at_least(0), "int")
define_checked(FLAGS, "seeds", "", "comma-separated seeds: run every line once per seed (drawn as the mean with the "
               "seeds' range as a band); default: --seed", distinct_seeds, "list")  # fmt: skip
flags.DEFINE_string("deep_cfr", "{}", 'JSON overrides of the Deep CFR settings in the solver\'s shape: OpenSpiel\'s '
                    'arguments by name, each settings group an object of its fields laid over the group\'s current '
                    'fields, e.g. \'{"num_traversals": 5000, "training": {"regret_scale": "auto"}, "traversal": '
                    '{"backend": "poker"}}\' (one factor at a time for the plateau diagnosis)',
                    flag_values=FLAGS)  # fmt: skip
define_checked(FLAGS, "threads", "1", "torch threads", integer_at_least(1), "int")
flags.DEFINE_enum("clock", "wall", list(CLOCKS), "what --seconds and the seconds columns count: wall-clock seconds, "
                  "or the process's CPU seconds (cpu: for runs that share the cores; one torch thread, no Ray "
                  "workers)", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_enum("evaluator", "states", ["states", "engine"], "states: poker_nash_conv with details (every board; "
                  "a network read from arrays, other policies through stand-ins for their states; a best-response "
                  "and an on-policy walk, and Deep CFR's current iterate too); engine: one best-response walk "
                  "(poker_best_response_values: suit isomorphism for a suit-symmetric network; Deep CFR and the "
                  "vector CFR lines; the current iterate is not evaluated)", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("out_dir", "benchmarks/results", "where the page and its folder go", flag_values=FLAGS)
flags.DEFINE_string("page", "", "results page name (<out_dir>/<page>.md and <page>/); default full_fhp for "
                    "flop_holdem, else fhp_curve", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("checkpoint", "", "deep_cfr: save the solver (memories, networks, the curve so far) here after "
                    "every evaluated checkpoint; if the file exists, resume from it (same command); es_lmccfr "
                    "abstraction lines: PATH.<line>.seed<k>.npz (+ .json) likewise", flag_values=FLAGS)  # fmt: skip


def parse_args(argv=None):
    """The flags, each checked (`check_args`) before anything is computed:
    bad input stops the program with one line naming it (`usage_error`)."""
    args = parse_flags(FLAGS, argv, __doc__.split("\n\n")[0])
    check_args(args)
    return args


NOT_SETTINGS = ("game", "num_iterations", "seed")  # DeepCFRLine sets these (--game, the budget, --seed)


def check_args(args) -> None:
    """Every argument that can be checked without the game, before anything
    is computed; adds `args.lines` (--algorithms as a list),
    `args.deep_cfr_settings` (defaults, --preset, --deep_cfr) and `args.seeds`
    (default [--seed]). One line (`usage_error`) for the first problem."""
    args.lines = [n.strip() for n in args.algorithms.split(",") if n.strip()]
    args.seeds = args.seeds or [args.seed]
    for name in args.lines:
        problem = line_problem(name, args)
        if problem:
            usage_error(problem)
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
            usage_error(f"--evaluator=engine evaluates Deep CFR and the vector CFR lines, not {', '.join(unfit)}; "
                        "use --evaluator=states for them")  # fmt: skip
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




def run_one(name, game, args, node_targets=None) -> list[dict]:
    """Runs one line to its checkpoints (the harness's `run_budget`): fractions
    of --seconds (the first step boundary past each), exactly fractions of
    --iterations, or (node_targets) the first step boundary at or past each
    number of nodes touched; its rows, resumed ones first with --checkpoint."""
    exact = not node_targets and args.iterations > 0
    if node_targets:
        by, pending = "nodes", sorted(node_targets)
    elif exact:
        by, pending = "steps", sorted({max(1, round(f * args.iterations)) for f in args.fractions})
    else:
        by, pending = "seconds", [f * args.seconds for f in args.fractions]
    line = make_line(name, game, args, pending if exact else ())
    if line.one_evaluation:
        pending = [0]
    state, rows = RunState(pending=pending), []
    saving = bool(args.checkpoint) and line.resumable
    path = checkpoint_path(args, name, args.seed)
    if saving and os.path.exists(path):
        rows = resume(line, path, args.clock, state)

    def measure(m) -> dict:
        line.last_checkpoint = m.last
        result = line.evaluate(game, m.policy, args.evaluator)
        row = {"algorithm": name, "seed": args.seed, "steps": line.steps, "steps_unit": line.steps_unit,
               "solver_seconds": m.spent, "policy_seconds": m.policy_seconds, "seconds": m.seconds,
               "nash_conv_chips": result.nash_conv, "nash_conv_mbb": result.nash_conv_mbb,
               "br_gain_p0": float(result.player_improvements[0]), "br_gain_p1": float(result.player_improvements[1]),
               "eval_seconds": result.seconds,
               "load_1min": os.getloadavg()[0],  # the machine's load when the checkpoint was reached
               **line.info()}  # fmt: skip
        current = getattr(line, "current_policy", None)
        if current is not None and args.evaluator == "states":  # Deep CFR's last iterate sigma^t, for diagnosis (not charged, not its output)
            now = poker_nash_conv(game, current(), return_details=True)
            row.update(current_nash_conv_mbb=now.nash_conv_mbb,
                       current_br_gains=f"{now.player_improvements[0]:.2f} / {now.player_improvements[1]:.2f}")
        rows.append(row)
        if saving:
            line.save(path, {"rows": rows, "spent": state.spent, "steps": line.steps, "pending": state.pending,
                             "clock": args.clock})  # fmt: skip
        print(f"  {name:<12} {line.steps:>9} {line.steps_unit:<10} solver {m.spent:7.1f}s "
              f"+ policy {m.policy_seconds:5.1f}s  NashConv {result.nash_conv_mbb:9.1f} mbb/g "
              f"(eval {result.seconds:.1f}s)", flush=True)  # fmt: skip
        return row

    if state.pending:
        run_budget(line, measure, state.pending, by=by, exact=exact, clock=CLOCKS[args.clock], accumulate_policy=False,
                   state=state, progress_every=PROGRESS_EVERY_S, log=lambda text: print(text, flush=True))  # fmt: skip
    return rows


def main(argv=None):
    args = parse_args(argv)  # every argument checked: one line and exit status 2 for the first bad one
    command = "python benchmarks/bench_fhp_curve.py " + " ".join(sys.argv[1:] if argv is None else argv)
    try:
        game = load_poker_game(args)
    except ValueError as e:
        usage_error(str(e))
    import torch

    torch.set_num_threads(args.threads)
    rows = deep_cfr_rows(args.deep_cfr_from, args) if args.deep_cfr_from else []
    rows += earlier_rows(args.rows_from, game)
    uniform_mbb = uniform_nash_conv_mbb(game, args.evaluator)
    print(f"{args.game}: uniform NashConv {uniform_mbb:.1f} mbb/g", flush=True)
    for name in args.lines:
        targets = None
        if name == "os_es_mccfr_py" and args.match_nodes:
            targets = [r["nodes_touched"] for r in rows if r["algorithm"] == "deep_cfr"]
            if not targets:
                raise SystemExit("--match-nodes needs deep_cfr listed before os_es_mccfr_py in --algorithms")
        unit = "episodes" if name == "os_nfsp" else "iterations"
        budget = f"{args.iterations:,} {unit}" if args.iterations > 0 else f"{args.seconds:g} s"
        for seed in args.seeds:
            args.seed = seed
            print(f"{name} (seed {seed}): " + (f"to {targets[-1]:,} nodes touched" if targets else budget), flush=True)
            rows.extend(run_one(name, game, args, targets))
    name = args.page or ("full_fhp" if args.game == "flop_holdem" else "fhp_curve")  # the results page it writes
    write_curve_files(rows, uniform_mbb, args, os.path.join(args.out_dir, name))
    title, body = page(rows, uniform_mbb, args, name)
    write_result(os.path.join(args.out_dir, f"{name}.md"), title, header_command=command, body=body)


if __name__ == "__main__":
    main()
