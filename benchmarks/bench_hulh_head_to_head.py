"""HULH head-to-head: short-trained Deep CFR (Appendix C network) vs short-trained NFSP and fixed bots.

Trains, on full heads-up limit hold'em (`hulh`, Brown et al. 2019 rules),

* our `DeepCFRSolver(network=NetworkSettings(family="poker"))` (Appendix C card/bet network, width
  `--dim`; or `--network=suit_symmetric_mlp` / `mlp` with `--layers`) for
  `--deep-seconds` of iterations (traversals on `--traversal-backend` +
  advantage-network training; duplicate merging off, i.e. the paper's
  sampled minibatches), then its average-strategy network once (timed and
  reported separately);
* OpenSpiel's PyTorch NFSP (`openspiel_cfrx.contenders`, Leduc example
  hyperparameters, 128-unit nets, `information_state_tensor` input) for
  `--nfsp-seconds` of self-play episodes;

estimates the local best response (LBR) value of `--lbr-agents` (a lower
bound on exploitability, `openspiel_cfrx.poker.lbr`), and
then plays every pair in `--pairs` with `openspiel_cfrx.eval.head_to_head.play_match`:
`--deals` duplicate deals (each dealt twice, seats swapped, same cards), the
row agent's winnings in mbb/g with a 95% confidence interval over deals.
`call` = always-call (check/call), `raise` = always-raise (else call),
`uniform` = uniform random over legal actions.

These agents are trained for minutes on one CPU thread, a speck of the paper's
budget (HULH: 32,000 SGD steps of batch 20,000 per iteration); the table
says how far such agents get, not what Deep CFR or NFSP reach.

    nice -n 10 .venv/bin/python benchmarks/bench_hulh_head_to_head.py \\
        --out=benchmarks/results/hulh_head_to_head.md
    # smoke test (about a minute):
    nice -n 15 .venv/bin/python benchmarks/bench_hulh_head_to_head.py --deep-seconds=5 \\
        --nfsp-seconds=5 --deals=20 --traversals=50 --sgd-steps=5 --policy-steps=5
"""

from __future__ import annotations

import os
import re
import sys
import time

import pyspiel
import torch
from absl import flags
from open_spiel.python import policy as policy_lib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402,F401  (registers flop_holdem, hulh)
from benchmarks.common import markdown_table, parse_flags, write_result  # noqa: E402
from openspiel_cfrx.eval.head_to_head import always_call, always_raise, play_match  # noqa: E402
from openspiel_cfrx.poker.lbr import LocalBestResponse  # noqa: E402

DEFAULT_PAIRS = "deep_cfr:nfsp,deep_cfr:call,deep_cfr:uniform,deep_cfr:raise,nfsp:call,nfsp:uniform"
TABLE1 = "+43 ± 2"  # Table 1 (Section 6): Deep CFR's head-to-head result against NFSP in HULH, mbb/g
STATEMENTS = "## The paper's statements on this run"
EARLIER = "## Earlier settings"


def table1_verdict(mean: float, half: float) -> str:
    """Table 1's direction, Deep CFR ahead of NFSP, judged by a match's 95% interval."""
    if mean - half > 0:
        return "yes"
    return "no (the opposite: NFSP ahead)" if mean + half < 0 else "inconclusive (the interval holds 0)"


def paper_statements(results: list[tuple[str, float, float]], source: str = "") -> str:
    """The statements table for (run label, Deep CFR vs NFSP mean, 95% half-width) of each run."""
    rows = [[f"Deep CFR beats NFSP head-to-head ({label})", f"{mean:+,.0f} ± {half:,.0f} mbb/g (the paper: {TABLE1})",
             table1_verdict(mean, half)] for label, mean, half in results]  # fmt: skip
    return (f"{STATEMENTS}\n\nBrown et al. 2019, Table 1: Deep CFR beats NFSP by {TABLE1} mbb/g. Each run's "
            "duplicate match decides the direction: yes when its 95% interval is above 0, no when below"
            + (f" (computed from {source})" if source else "") + ".\n\n"
            + markdown_table(["statement (Brown et al. 2019, Table 1)", "this run", "holds here"], rows) + "\n")


def _signed(cell: str) -> tuple[float, float] | None:
    """(mean, half) of a cell like "**+286 ± 75**"; None for "–"."""
    match = re.search(r"([+-−]?[\d,]+) ± ([\d,]+)", cell.replace("−", "-"))
    return (float(match.group(1).replace(",", "")), float(match.group(2).replace(",", ""))) if match else None


def statements_from_page(path: str) -> str:
    """Recomputes the statements section of a recorded page from its "Earlier settings" table (one run per row:
    its settings, its training, Deep CFR vs NFSP) and writes it back before the page's "## Reading"."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if EARLIER not in text:
        raise SystemExit(f"--statements_from {path}: no '{EARLIER}' table to read the runs from")
    lines = text[text.index(EARLIER):].splitlines()
    header = [c.strip() for c in next(x for x in lines if x.startswith("|")).strip("|").split("|")]
    column = header.index("Deep CFR vs NFSP")
    results = []
    for line in (x for x in lines[1:] if x.startswith("|") and not x.startswith("|---")):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells == header:
            continue
        value = _signed(cells[column])
        if value:
            results.append((f"{cells[1]}: {cells[0]}", *value))
    section = paper_statements(results, f"the '{EARLIER[3:]}' table by `python benchmarks/bench_hulh_head_to_head.py "
                                        f"--statements_from={path}`")  # fmt: skip
    start = text.find(STATEMENTS)
    end = text.find("\n## ", start + 1) + 1 if start >= 0 else text.index("## Reading")
    start = start if start >= 0 else end
    with open(path, "w", encoding="utf-8") as f:
        f.write(text[:start] + section + "\n" + text[end:])
    return section


FLAGS = flags.FlagValues()  # this program's own (tests import several programs into one process)
flags.DEFINE_string("game", "hulh", "the game", flag_values=FLAGS)
flags.DEFINE_float("deep-seconds", 180.0, "Deep CFR iteration budget", flag_values=FLAGS)
flags.DEFINE_float("nfsp-seconds", 180.0, "NFSP training budget", flag_values=FLAGS)
flags.DEFINE_enum("network", "poker", ["poker", "suit_symmetric_mlp", "mlp"], "Deep CFR network: poker = Appendix C "
                  "(width --dim); the MLPs take --layers", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_integer("dim", 64, "Appendix C network width d", flag_values=FLAGS)
flags.DEFINE_string("layers", "128,128", "MLP hidden widths (--network=*mlp)", flag_values=FLAGS)
flags.DEFINE_enum("traversal-backend", "state", ["state", "poker"], "Deep CFR traversals: pyspiel states, or the "
                  "poker backend (arrays of deals)", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_integer("traversals", 250, "traversals per player per iteration", flag_values=FLAGS)
flags.DEFINE_integer("sgd-steps", 100, "advantage SGD steps per iteration", flag_values=FLAGS)
flags.DEFINE_integer("batch", 1024, "advantage and strategy batch size", flag_values=FLAGS)
flags.DEFINE_string("regret-scale", "1", 'DeepCFRSolver regret_scale: a number (1 = raw chip regrets, the paper) or '
                    '"auto"', flag_values=FLAGS)  # fmt: skip
flags.DEFINE_integer("memory", 4_000_000, "entries per Deep CFR memory", flag_values=FLAGS)
flags.DEFINE_bool("fine-tune", False, "fine-tune the advantage networks each iteration instead of retraining them "
                  "from scratch (reinitialize_advantage_networks=False; Figure 4's 'continue' arm)",
                  flag_values=FLAGS)  # fmt: skip
flags.DEFINE_integer("policy-steps", 300, "average-network SGD steps", flag_values=FLAGS)
flags.DEFINE_integer("nfsp-step", 1000, "NFSP episodes between clock checks", flag_values=FLAGS)
flags.DEFINE_string("pairs", DEFAULT_PAIRS, "comma-separated A:B pairs", flag_values=FLAGS)
flags.DEFINE_integer("deals", 1000, "duplicate deals per pair", flag_values=FLAGS)
flags.DEFINE_string("lbr-agents", "deep_cfr,nfsp,call,raise", "agents whose local best response value is estimated "
                    "('' for none)", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_integer("lbr-deals", 200, "duplicate deals per LBR estimate", flag_values=FLAGS)
flags.DEFINE_integer("lbr-completions", 100, "board completions per LBR win probability (sampled above this: the "
                     "flop)", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_integer("seed", 0, "the seed", flag_values=FLAGS)
flags.DEFINE_integer("threads", 1, "torch threads", flag_values=FLAGS)
flags.DEFINE_string("save", "", "also save the Deep CFR checkpoint here", flag_values=FLAGS)
flags.DEFINE_string("save-policy", "", "also save the Deep CFR policy file here (average network only: small, for "
                    "later matches with --deep-load)", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("deep-load", "", "play a saved Deep CFR checkpoint or policy file instead of training one",
                    flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("nfsp-save", "", "also save NFSP's average networks here", flag_values=FLAGS)
flags.DEFINE_string("nfsp-load", "", "play NFSP's average networks saved by --nfsp-save instead of training it",
                    flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("out", "", "write the markdown report here", flag_values=FLAGS)
flags.DEFINE_string("statements_from", "", "train nothing: recompute the Table 1 statements section of this recorded "
                    "page from its 'Earlier settings' table and write it back", flag_values=FLAGS)  # fmt: skip


def parse_args(argv=None):
    return parse_flags(FLAGS, argv, __doc__.split("\n\n")[0])


def train_deep_cfr(game, args) -> tuple[object, dict]:
    from openspiel_cfrx.deep import DeepCFRSolver, count_parameters

    if args.deep_load:
        solver = DeepCFRSolver.from_checkpoint(args.deep_load, game)
        info = {"iterations": solver.iteration, "nodes": solver.nodes_touched, "loaded": args.deep_load,
                "parameters": count_parameters(solver.policy_network)}  # fmt: skip
        print(f"  deep_cfr: {info}", flush=True)
        return solver, info

    layers = (args.dim,) if args.network == "poker" else tuple(int(w) for w in args.layers.split(","))
    solver = DeepCFRSolver(
        game,
        network={"family": args.network},
        traversal={"backend": args.traversal_backend},
        advantage_network_layers=layers,
        policy_network_layers=layers,
        num_iterations=10**9,
        num_traversals=args.traversals,
        advantage_network_train_steps=args.sgd_steps,
        batch_size_advantage=args.batch,
        policy_network_train_steps=args.policy_steps,
        batch_size_strategy=args.batch,
        memory_capacity=args.memory,
        reinitialize_advantage_networks=not args.fine_tune,
        memory={"aggregate_duplicates": False},
        training={"regret_scale": args.regret_scale if args.regret_scale == "auto" else float(args.regret_scale)},
        seed=args.seed,
    )
    from openspiel_cfrx.eval.harness import FunctionContender, run_budget

    def step():
        stats = solver.run_iteration()
        print(
            f"  deep_cfr iteration {stats['iteration']}: {stats['nodes']:,} nodes, "
            f"traverse {stats['traversal_seconds']:.1f}s, train {stats['training_seconds']:.1f}s, "
            f"losses {stats['advantage_loss']}",
            flush=True,
        )

    # the harness's budget loop (wall clock), measured once, at the end: solver seconds; the average network
    # is trained after it, timed separately
    (spent,) = run_budget(FunctionContender("deep_cfr", step, lambda: solver), lambda m: m.spent, [],
                          seconds=args.deep_seconds, log=None)  # fmt: skip
    start = time.perf_counter()
    policy_loss = solver.train_policy_network()
    policy_s = time.perf_counter() - start
    if args.save:
        solver.save_checkpoint(args.save)
    if args.save_policy:
        solver.save_policy(args.save_policy)
    info = {
        "iterations": solver.iteration,
        "traversals": 2 * args.traversals * solver.iteration,
        "nodes": solver.nodes_touched,
        "seconds": spent,
        "traversal_seconds": solver.traversal_seconds,
        "training_seconds": solver.training_seconds,
        "policy_seconds": policy_s,
        "policy_loss": policy_loss,
        "parameters": count_parameters(solver.policy_network),
        "memories": (
            len(solver.advantage_buffers[0]),
            len(solver.advantage_buffers[1]),
            len(solver.strategy_buffer),
        ),
        "losses": solver.history[-1]["advantage_loss"],
    }
    print(f"  deep_cfr: {info}", flush=True)
    return solver, info


def train_nfsp(game, args) -> tuple[object, dict]:
    from openspiel_cfrx.contenders import make_contender

    contender = make_contender("os_nfsp", game, seed=args.seed, episodes_per_step=args.nfsp_step)
    if args.nfsp_load:
        saved = contender.load_average_networks(args.nfsp_load)
        info = {"episodes": saved["episodes"], "seconds": saved["seconds"], "loaded": args.nfsp_load}
        print(f"  nfsp: {info}", flush=True)
        return contender.policy(), info
    from openspiel_cfrx.eval.harness import run_budget

    # the harness's budget loop, measured once, at the end: (steps, solver seconds)
    (steps, spent), = run_budget(contender, lambda m: (m.steps, m.spent), [], seconds=args.nfsp_seconds,
                                 accumulate_policy=False, log=None)  # fmt: skip
    info = {"episodes": steps * args.nfsp_step, "seconds": spent}
    if args.nfsp_save:
        contender.save_average_networks(args.nfsp_save, **info)
    print(f"  nfsp: {info}", flush=True)
    return contender.policy(), info


def describe_network(args) -> str:
    if args.network == "poker":
        return f"Appendix C network d={args.dim}"
    return f"{args.network} {args.layers.replace(',', 'x')} on information_state_tensor"


def main(argv=None):
    args = parse_args(argv)
    if args.statements_from:
        print(statements_from_page(args.statements_from))
        return
    torch.set_num_threads(args.threads)
    command = "python benchmarks/bench_hulh_head_to_head.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    game = pyspiel.load_game(args.game)
    pairs = [tuple(p.split(":")) for p in args.pairs.split(",")]
    lbr_agents = [a for a in args.lbr_agents.split(",") if a]
    needed = {name for pair in pairs for name in pair} | set(lbr_agents)
    agents, infos = {}, {}
    if "deep_cfr" in needed:
        print(f"training Deep CFR for {args.deep_seconds:g} s ...", flush=True)
        agents["deep_cfr"], infos["deep_cfr"] = train_deep_cfr(game, args)
    if "nfsp" in needed:
        print(f"training NFSP for {args.nfsp_seconds:g} s ...", flush=True)
        agents["nfsp"], infos["nfsp"] = train_nfsp(game, args)
    agents.update(
        call=always_call(game),
        raise_=always_raise(game),
        uniform=policy_lib.UniformRandomPolicy(game),
    )
    agents["raise"] = agents.pop("raise_")
    rows, statements = [], ""
    for a, b in pairs:
        start = time.perf_counter()
        result = play_match(game, agents[a], agents[b], args.deals, seed=args.seed)
        seconds = time.perf_counter() - start
        s0, s1 = (1000 * c / 100 for c in result.seat_means_chips)
        if (a, b) == ("deep_cfr", "nfsp"):
            statements = paper_statements([(f"seed {args.seed}", result.mean_mbb, result.ci95_mbb)])
        rows.append([a, b, f"{result.mean_mbb:+,.0f} ± {result.ci95_mbb:,.0f}", f"{s0:+,.0f}", f"{s1:+,.0f}",
                     result.deals, f"{seconds:.0f}"])  # fmt: skip
        print(f"  {a} vs {b}: {result} ({seconds:.0f}s)", flush=True)
    lbr_rows = []
    for name in lbr_agents:
        lbr = LocalBestResponse(game, agents[name], max_completions=args.lbr_completions, seed=args.seed)
        result = lbr.evaluate(args.lbr_deals, seed=args.seed, progress=True)
        lbr_rows.append([name, f"{result.mbb_per_game:+,.0f} ± {result.ci95_mbb:,.0f}",
                         f"{result.seat_mbb[0]:+,.0f}", f"{result.seat_mbb[1]:+,.0f}", result.deals,
                         f"{lbr.queries:,}", f"{result.seconds:.0f}"])  # fmt: skip
        print(f"  LBR vs {name}: {result} ({result.seconds:.0f}s)", flush=True)
    lbr_table = markdown_table(
        ["policy", "LBR's winnings (mbb/g, 95% CI)", "LBR as P1", "LBR as P2", "duplicate deals",
         "policy queries", "seconds"], lbr_rows)  # fmt: skip
    table = markdown_table(
        [
            "A",
            "B",
            "A's result (mbb/g, 95% CI)",
            "A as P1 (SB)",
            "A as P2 (BB)",
            "duplicate deals",
            "seconds",
        ],
        rows,
    )
    d, n = infos.get("deep_cfr"), infos.get("nfsp")
    lines = []
    if d and d.get("loaded"):
        lines.append(f"- deep_cfr: loaded from `{d['loaded']}` (trained by an earlier run: {d['iterations']} "
                     f"iterations, {d['nodes']:,} nodes touched; {d['parameters']:,} policy parameters).")  # fmt: skip
    elif d:
        lines.append(
            f"- deep_cfr: {describe_network(args)} ({d['parameters']:,} parameters), "
            f"{args.traversal_backend} traversal backend, regret_scale {args.regret_scale}, "
            f"{d['iterations']} iterations x {args.traversals} traversals per player "
            f"({d['traversals']:,} traversals, {d['nodes']:,} nodes touched), {args.sgd_steps} advantage SGD "
            f"steps of batch {args.batch} per player per iteration "
            f"({'fine-tuned' if args.fine_tune else 'retrained from scratch'}), average network {args.policy_steps} steps "
            f"of batch {args.batch}; {d['seconds']:.0f} s of iterations (traversal {d['traversal_seconds']:.0f} s, "
            f"advantage training {d['training_seconds']:.0f} s) + {d['policy_seconds']:.0f} s average-network "
            f"training; memories (adv P1, adv P2, strategy) {d['memories']}; last advantage losses "
            f"{[round(x) for x in d['losses']]}, policy loss {d['policy_loss']:.4g}."
        )
    if n:
        lines.append(
            f"- nfsp: OpenSpiel PyTorch NFSP (contenders.py settings: 128-unit nets, anticipatory 0.1, "
            f"lr 0.01, batch 128), {n['episodes']:,} self-play episodes in {n['seconds']:.0f} s; "
            "plays its average network"
            + (f" (trained by an earlier run, loaded from `{n['loaded']}`)." if n.get("loaded") else ".")
        )
    body = (
        f"Game `{args.game}`. Each pair: {args.deals} duplicate deals (every deal played twice with the "
        "same cards, seats swapped); 'A's result' is A's mean winnings per hand over both seats, in "
        "mbb/g (1 big blind = 100 chips), with the 95% CI over deals; the seat columns are A's mean "
        f"in each seat (not duplicate-corrected). Torch threads {args.threads}, seed {args.seed}.\n\n"
        + "\n".join(lines)
        + f"\n\n{table}\n"
        + (f"\nLocal best response (`openspiel_cfrx.poker.lbr`, Lisý & Bowling 2017 Algorithm 1: preflop "
           f"call, wp over all turn/river completions and {args.lbr_completions} sampled flop completions, "
           "the policy's range updated by Bayes' rule at every opponent action; a lower bound on "
           f"exploitability), {args.lbr_deals} duplicate deals per policy:\n\n{lbr_table}\n"
           if lbr_rows else "")
        + (f"\n{statements}" if statements else "")
    )
    print(body)
    if args.out:
        write_result(args.out, "HULH head-to-head: short-trained Deep CFR and NFSP", header_command=command,
                     body=body)  # fmt: skip


if __name__ == "__main__":
    main()
