"""Full flop hold'em: OpenSpiel's NFSP beside the Deep CFR run of `full_fhp.md`
(the paper's Figure 2 compares the two on this game).

Phase 1 trains OpenSpiel's PyTorch NFSP (`openspiel_cfrx.contenders`' `os_nfsp` on
`information_state_tensor`, with the settings of `--nfsp_preset`: by default
`leduc_defaults`, the Leduc example's hyperparameters and one hidden layer of
128 units; `fhp_tuned` is the best of `sweep_nfsp_fhp.py` on 5x2 flop
hold'em, results/nfsp_sweep.md) by self-play for `--seconds` of its own compute,
one torch thread, and saves both players' average networks at the
`--fractions` of that budget (`<out_dir>/nfsp_<k>.pt`: episodes, nodes
touched, seconds, the preset, state dicts). Nodes touched count every state an episode
visits (one per card dealt, decision, terminal: what Deep CFR's traversals
count).

Phase 2 evaluates the saved networks exactly (NashConv = both players'
best-response gains, `PublicTree.best_response_values`), last checkpoint
first, each appended to `<out_dir>/nfsp.csv` as it finishes. OpenSpiel's
networks are not suit-symmetric, so the evaluation walks every flop (22,100
boards, ~1.46e9 network queries on full FHP: 1-2 hours here), not the
isomorphic classes Deep CFR's suit-symmetric network allows. A preset with
`suit_symmetric=True` (`fhp_full_symmetric`: Deep CFR's `fhp_full` network,
`SuitCanonical` in front of the MLP) is evaluated on the 1,755 flop classes.
Rerunning the same command resumes: finished checkpoints are not retrained,
evaluated rows are not recomputed (a run stopped mid-training starts its
training again); checkpoints of another preset or seed in `--out_dir` are
refused.

    nice -n 10 .venv/bin/python benchmarks/bench_full_fhp_nfsp.py --seconds=3600 --fractions=1 \\
        --out_dir=out/full_fhp_nfsp --output=benchmarks/results/full_fhp_nfsp.md
    # the settings chosen by the 5x2 sweep:
    nice -n 10 .venv/bin/python benchmarks/bench_full_fhp_nfsp.py --nfsp_preset=fhp_tuned --seconds=3600 \
        --fractions=1 --out_dir=out/full_fhp_nfsp_tuned --output=out/full_fhp_nfsp_tuned.md  # ~4 h
    # smoke test (a minute):
    .venv/bin/python benchmarks/bench_full_fhp_nfsp.py --game="flop_holdem(num_ranks=5,num_suits=2)" \\
        --seconds=5 --fractions=0.5,1 --episodes_per_step=100 --out_dir=/tmp/nfsp_smoke
"""

from __future__ import annotations

import copy
import csv
import os
import sys
import time

import numpy as np
import pyspiel
import torch
from absl import flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402,F401  (registers flop_holdem)
from benchmarks.common import markdown_table, parse_flags, usage_error, write_result  # noqa: E402
from openspiel_cfrx.contenders import NFSP_PRESETS, make_contender  # noqa: E402
from openspiel_cfrx.deep.threads import usable_cpus  # noqa: E402
from openspiel_cfrx.eval.harness import Measurement, run_budget  # noqa: E402

FIELDS = ["algorithm", "seed", "steps", "steps_unit", "solver_seconds", "policy_seconds", "seconds", "nash_conv_chips",
          "nash_conv_mbb", "br_gain_p0", "br_gain_p1", "eval_seconds", "nodes_touched"]  # fmt: skip


FLAGS = flags.FlagValues()  # this program's own (tests import several programs into one process)
flags.DEFINE_string("game", "flop_holdem", "the game", flag_values=FLAGS)
flags.DEFINE_float("seconds", 3600.0, "NFSP training budget (its own compute)", flag_values=FLAGS)
flags.DEFINE_enum("clock", "wall", ["wall", "cpu"], "what --seconds and the seconds column count: wall-clock seconds "
                  "of the training steps, or the process's CPU seconds (one torch thread), for a run that shares the "
                  "cores with other work", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("fractions", "1", "checkpoints, as fractions of --seconds", flag_values=FLAGS)
flags.DEFINE_integer("episodes_per_step", 1000, "self-play episodes between clock checks", flag_values=FLAGS)
flags.DEFINE_string("nfsp_preset", "leduc_defaults", "NFSP settings by name (openspiel_cfrx.contenders.NFSP_PRESETS)",
                    flag_values=FLAGS)  # fmt: skip
flags.DEFINE_integer("seed", 0, "the seed", flag_values=FLAGS)
flags.DEFINE_integer("threads", 1, "torch threads while training", flag_values=FLAGS)
flags.DEFINE_integer("eval_threads", 0, "torch threads for the exact evaluation (not timed); 0: the usable CPUs",
                     flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("out_dir", None, "checkpoints and nfsp.csv (resumable)", flag_values=FLAGS)
flags.mark_flag_as_required("out_dir", flag_values=FLAGS)
flags.DEFINE_string("output", "", "also write this results page (markdown) from nfsp.csv", flag_values=FLAGS)


def parse_args(argv=None):
    args = parse_flags(FLAGS, argv, __doc__.split("\n\n")[0])
    if args.nfsp_preset not in NFSP_PRESETS:
        usage_error(f"--nfsp_preset={args.nfsp_preset!r} is not a preset; choose from {', '.join(sorted(NFSP_PRESETS))}")
    return args


def checkpoint_path(out_dir: str, k: int) -> str:
    return os.path.join(out_dir, f"nfsp_{k}.pt")


def train(game, args, fractions) -> None:
    """Phase 1: self-play to each checkpoint (the harness's `run_budget`), saving the average networks there."""
    contender = make_contender("os_nfsp", game, seed=args.seed, episodes_per_step=args.episodes_per_step,
                               **NFSP_PRESETS[args.nfsp_preset])  # fmt: skip
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    saved = []  # checkpoints written: one file per fraction, even when one step passes several

    def measure(m: Measurement) -> None:
        episodes = m.steps * args.episodes_per_step
        while len(saved) < len(fractions) and m.spent >= fractions[len(saved)] * args.seconds:
            k = len(saved)
            contender.save_average_networks(checkpoint_path(args.out_dir, k), episodes=episodes, seconds=m.spent,
                                            preset=args.nfsp_preset, seed=args.seed, clock=args.clock)  # fmt: skip
            print(f"  checkpoint {k}: {episodes:,} episodes, {contender.nodes_touched:,} nodes, {m.spent:.0f} s",
                  flush=True)  # fmt: skip
            saved.append(k)
        if m.steps % 50 == 0:
            print(f"  nfsp {episodes:,} episodes, {m.spent:.0f} s", flush=True)

    run_budget(contender, measure, [f * args.seconds for f in fractions], eval_every=50, clock=clock,
               accumulate_policy=False, log=None)  # fmt: skip


def average_networks(game, args, path: str) -> tuple[list[torch.nn.Module], dict]:
    """(both players' average networks, the saved info) of checkpoint `path`."""
    contender = make_contender("os_nfsp", game, seed=args.seed, episodes_per_step=1, **NFSP_PRESETS[args.nfsp_preset])
    try:
        saved = torch.load(path, weights_only=False)
    except (OSError, RuntimeError, EOFError) as e:
        raise SystemExit(f"cannot read checkpoint {path}: {e}") from None
    if saved.get("preset", "leduc_defaults") != args.nfsp_preset:
        raise SystemExit(f"{path} holds NFSP preset {saved.get('preset', 'leduc_defaults')!r}, not "
                         f"--nfsp_preset={args.nfsp_preset!r}: use another --out_dir")  # fmt: skip
    if saved.get("clock", "wall") != args.clock:
        raise SystemExit(f"{path} counted {saved.get('clock', 'wall')} seconds, not --clock={args.clock}: "
                         "use another --out_dir")  # fmt: skip
    if saved.get("seed", 0) != args.seed:
        raise SystemExit(f"{path} holds seed {saved.get('seed', 0)}, not --seed={args.seed}: use another --out_dir")
    saved = contender.load_average_networks(path)
    return [agent._avg_network.eval() for agent in contender._agents], saved  # noqa: SLF001


def _mlp_in_float64(net: torch.nn.Module) -> torch.nn.Module:
    """A copy of a suit-symmetric NFSP network (`SuitCanonical`, then the MLP)
    with the MLP's weights in float64 (`SuitCanonical` keeps its float32 sums)."""
    canonical, mlp = net
    return torch.nn.Sequential(canonical, copy.deepcopy(mlp).double()).eval()


def evaluate(game, nets, suit_symmetric: bool = False, isomorphism: bool | None = None) -> dict:
    """Exact NashConv of the average networks on every board, or on one board
    per suit class (`isomorphism`, by default when the networks are
    suit-symmetric; module doc)."""
    from open_spiel.python.pytorch import dqn

    from openspiel_cfrx.neural_poker import InformationStateTensors, NetworkStrategy
    from openspiel_cfrx.poker import PublicTree

    dtype = np.float32
    if suit_symmetric:
        # The weights in float64: float32 matrix products round equal rows differently by their
        # position in the batch (~1e-8 here), and the isomorphic walk checks that the members of
        # a suit class get the same strategy (to 1e-9) before it trusts one board per class.
        nets, dtype = [_mlp_in_float64(net) for net in nets], np.float64

    def probabilities(features: np.ndarray, legal: np.ndarray) -> np.ndarray:
        # universal_poker's information_state_tensor starts with the acting player's one-hot;
        # masking and softmax as nfsp.NFSP._act
        out = np.zeros(legal.shape, dtype=dtype)
        x, mask = torch.from_numpy(np.ascontiguousarray(features, dtype=dtype)), torch.from_numpy(legal)
        with torch.inference_mode():
            for player, net in enumerate(nets):
                rows = np.flatnonzero(features[:, player] == 1.0)
                if len(rows):
                    logits = net(x[rows])
                    logits = torch.where(mask[rows], logits, torch.full_like(logits, dqn.ILLEGAL_ACTION_LOGITS_PENALTY))
                    out[rows] = torch.softmax(logits, dim=-1).numpy()
        return out

    start = time.perf_counter()
    tree = PublicTree(game, isomorphism=suit_symmetric if isomorphism is None else isomorphism)
    strategy = NetworkStrategy(tree, InformationStateTensors(game, tree), probabilities, suit_symmetric=suit_symmetric)
    gains = tree.best_response_values(strategy)
    value = float(gains.sum())
    return {"nash_conv_chips": value, "nash_conv_mbb": tree.rules.mbb_per_game(value),
            "br_gain_p0": float(gains[0]), "br_gain_p1": float(gains[1]),
            "eval_seconds": time.perf_counter() - start, "queries": strategy.queries}  # fmt: skip


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    os.makedirs(args.out_dir, exist_ok=True)
    fractions = sorted(float(f) for f in args.fractions.split(","))
    if not all(0 < f <= 1 for f in fractions):
        raise SystemExit(f"--fractions must lie in (0, 1], got {args.fractions!r}")
    game = pyspiel.load_game(args.game)
    if not all(os.path.exists(checkpoint_path(args.out_dir, k)) for k in range(len(fractions))):
        print(f"{args.game}: training NFSP for {args.seconds:g} s", flush=True)
        train(game, args, fractions)
    table = os.path.join(args.out_dir, "nfsp.csv")
    done = set()
    if os.path.exists(table):
        with open(table, encoding="utf-8") as f:
            done = {int(r["steps"]) for r in csv.DictReader(f)}
    symmetric = NFSP_PRESETS[args.nfsp_preset].get("suit_symmetric", False)
    torch.set_num_threads(args.eval_threads or usable_cpus())
    for k in reversed(range(len(fractions))):
        nets, saved = average_networks(game, args, checkpoint_path(args.out_dir, k))
        if saved["episodes"] in done:
            continue
        print(f"evaluating checkpoint {k} ({saved['episodes']:,} episodes) on "
              f"{'one board per suit class' if symmetric else 'every board'} ...", flush=True)  # fmt: skip
        result = evaluate(game, nets, symmetric)
        row = {"algorithm": "os_nfsp", "seed": args.seed, "steps": saved["episodes"], "steps_unit": "episodes",
               "solver_seconds": saved["seconds"], "policy_seconds": 0.0, "seconds": saved["seconds"],
               "nodes_touched": saved["nodes_touched"], **result}  # fmt: skip
        new = not os.path.exists(table)
        with open(table, "a", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
            if new:
                writer.writeheader()
            writer.writerow(row)
        print(f"  NFSP @ {saved['episodes']:,} episodes ({saved['seconds']:.0f} s): NashConv "
              f"{result['nash_conv_mbb']:,.1f} mbb/g, BR gains {result['br_gain_p0']:.2f} / "
              f"{result['br_gain_p1']:.2f} chips ({result['queries']:,} queries, {result['eval_seconds']:.0f} s)",
              flush=True)  # fmt: skip
    with open(table, encoding="utf-8") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: int(r["steps"]))
    body = (f"OpenSpiel's PyTorch NFSP (`cfrx_examples.contenders` `os_nfsp`, preset `{args.nfsp_preset}`: "
            f"{NFSP_PRESETS[args.nfsp_preset] or 'the Leduc example settings'}) on `{args.game}`, seed {args.seed}, "
            f"{args.seconds:g} {'CPU ' if args.clock == 'cpu' else ''}s of self-play, evaluated exactly "
            + ("on one board per suit class (`openspiel_cfrx.poker.PublicTree` with isomorphism: the networks read "
               "their input through `SuitCanonical`)" if symmetric else
               "on every board (`openspiel_cfrx.poker.PublicTree`, no isomorphism: NFSP's network is not "
               "suit-symmetric)") + ".\n\n" + markdown_table(
                ["episodes", "CPU seconds" if args.clock == "cpu" else "seconds", "nodes touched", "NashConv (mbb/g)", "BR gain P0 / P1 (chips)", "eval s"],
                [[f"{int(r['steps']):,}", f"{float(r['seconds']):.0f}", f"{int(float(r['nodes_touched'])):,}",
                  f"{float(r['nash_conv_mbb']):,.1f}", f"{float(r['br_gain_p0']):.2f} / {float(r['br_gain_p1']):.2f}",
                  f"{float(r['eval_seconds']):.0f}"] for r in rows]))  # fmt: skip
    write_result(args.output, f"NFSP on {args.game}, evaluated exactly", body)


if __name__ == "__main__":
    main()
