"""Deep CFR with the Appendix C card/bet network on full-size FHP and HULH.

For each game (`flop_holdem`, `hulh`; Brown et al. 2019, Section 5) it measures,
with `DeepCFRSolver(game, network="poker")` (inputs: `PokerNetworkEncoder`):

* traversal throughput: external-sampling traversals per second and nodes
  touched per second, networks answering every query (random weights; both
  players' advantage networks count as trained, so regret matching runs on
  network outputs as in any iteration t > 1);
* SGD steps per second of one advantage network at the paper's batch size
  (Section 5.2: 10,000 for FHP, 20,000 for HULH), sampled minibatches from the
  reservoir memory as in the paper's regime (merging of duplicate infosets off);
* memory sizing: bytes per memory entry for the compact flat encoding
  (card indices + bet floats), and how many entries fit in a budget
  (default 24 GB), against the paper's 3 x 40M entries (two advantage
  memories and the strategy memory, Section 5.2) and the larger flat encodings.

Prints a markdown table; `--out PATH` also writes it (e.g.
benchmarks/results/poker_deep_cfr.md). `--parameter-search` prints the search
over interpretations of the paper's 98,948-parameter figure (docs/deep_cfr.md).

    nice -n 15 .venv/bin/python benchmarks/bench_poker_deep_cfr.py \\
        --traversals=2000 --sgd-steps=20 --out=benchmarks/results/poker_deep_cfr.md
    # smoke test (seconds):
    nice -n 15 .venv/bin/python benchmarks/bench_poker_deep_cfr.py --traversals=20 \\
        --sgd-steps=2 --batch-scale=0.01 --memory-capacity=20000
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import os
import sys
import time

import numpy as np
import pyspiel
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402,F401  (registers flop_holdem, hulh)
from benchmarks.common import markdown_table, write_result  # noqa: E402
from openspiel_cfrx.deep import DeepCFRSolver, count_parameters, trainer  # noqa: E402
from openspiel_cfrx.deep.memories import ReservoirMemory  # noqa: E402
from openspiel_cfrx.deep.poker_network import (  # noqa: E402
    PAPER_FHP_DIM,
    PAPER_FHP_PARAMETERS,
    appendix_c_parameter_count,
)

PAPER_BATCH = {"flop_holdem": 10_000, "hulh": 20_000}  # Section 5.2
PAPER_MEMORY_ENTRIES = 40_000_000  # per memory, Section 5.2
NUM_MEMORIES = 3  # two advantage memories + the strategy memory


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="flop_holdem,hulh", help="comma-separated game strings")
    parser.add_argument("--dim", type=int, default=PAPER_FHP_DIM, help="network width d")
    parser.add_argument("--traversals", type=int, default=2000, help="timed traversals per player")
    parser.add_argument("--traversal-batch-size", type=int, default=1000)
    parser.add_argument("--sgd-steps", type=int, default=20, help="timed SGD steps")
    parser.add_argument("--batch-scale", type=float, default=1.0,
                        help="fraction of the paper's batch size (smoke tests)")  # fmt: skip
    parser.add_argument("--memory-capacity", type=int, default=1_000_000)
    parser.add_argument("--memory-budget-gb", type=float, default=24.0)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--traversal-backend", default="state", help="state or poker (traversal.py)")
    parser.add_argument("--training-precision", default="float32", help="float32 or bfloat16 (trainer.py)")
    parser.add_argument("--host-batches", action="store_true",
                        help="on an accelerator, sample each minibatch on the host and copy it over (the trainer "
                             "before device-resident memories) instead of gathering on the device")  # fmt: skip
    parser.add_argument("--eager", action="store_true",
                        help="on CUDA, run every SGD step eagerly (no CUDA graph replay; the trainer before them)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="also write the tables to this markdown file")
    parser.add_argument("--parameter-search", action="store_true",
                        help="only print the 98,948-parameter interpretation search")  # fmt: skip
    return parser.parse_args(argv)


def make_solver(game, args, batch_size: int) -> DeepCFRSolver:
    kwargs = dict(
        network="poker",
        advantage_network_layers=(args.dim,),
        policy_network_layers=(args.dim,),
        memory_capacity=args.memory_capacity,
        traversal_batch_size=args.traversal_batch_size,
        batch_size_advantage=batch_size,
        advantage_network_train_steps=args.sgd_steps,
        device=args.device,
        seed=args.seed,
        traversal_backend=args.traversal_backend,
        training_precision=args.training_precision,
    )
    if "aggregate_duplicates" in inspect.signature(DeepCFRSolver).parameters:
        kwargs["aggregate_duplicates"] = False  # the paper's sampled minibatches
    return DeepCFRSolver(game, **kwargs)


def bench_game(name: str, args) -> dict:
    game = pyspiel.load_game(name)
    short = name.split("(")[0]
    batch = max(1, int(round(PAPER_BATCH.get(short, 10_000) * args.batch_scale)))
    solver = make_solver(game, args, batch)
    # Warm-up: a few traversals, then count both networks as trained so every
    # query is answered by a forward pass + regret matching.
    for player in (0, 1):
        solver.collect(player, min(args.traversal_batch_size, max(1, args.traversals // 10)))
    solver._trained = [True, True]  # noqa: SLF001  (benchmark: skip the t=1 uniform shortcut)
    nodes = 0
    start = time.perf_counter()
    for player in (0, 1):
        nodes += solver.collect(player, args.traversals)
    traverse_s = time.perf_counter() - start
    traversals = 2 * args.traversals
    # SGD at the paper's batch size on player 0's memory.
    resident = trainer._resident  # noqa: SLF001
    if args.host_batches:
        trainer._resident = lambda arrays, size, device: None  # noqa: SLF001
    trainer.Trainer.cuda_graphs = not args.eager
    try:
        start = time.perf_counter()
        loss = solver.train_advantage_network(0)
        sgd_s = time.perf_counter() - start
    finally:
        trainer._resident = resident  # noqa: SLF001
    graphed = args.device.startswith("cuda") and solver.advantage_trainers[0].cuda_graphs  # (False after a failed capture)
    net = solver.advantage_networks[0]
    encoder = solver._encoder  # noqa: SLF001
    feature_size = encoder.feature_size
    num_actions = game.num_distinct_actions()
    entry = ReservoirMemory.entry_bytes(feature_size, num_actions)
    flat_entry = ReservoirMemory.entry_bytes(encoder.flat_tensor_size, num_actions)
    ist_entry = ReservoirMemory.entry_bytes(int(np.prod(game.information_state_tensor_shape())), num_actions)
    budget = args.memory_budget_gb * 1e9
    return {
        "game": short,
        "dim": args.dim,
        "parameters": count_parameters(net),
        "device": args.device + (" (host batches)" if args.host_batches and args.device != "cpu" else "")
        + (" (CUDA graph)" if graphed else " (eager)" if args.device != "cpu" else ""),
        "backend": args.traversal_backend,
        "precision": args.training_precision,
        "traversals": traversals,
        "traversals/s": traversals / traverse_s,
        "nodes": nodes,
        "nodes/s": nodes / traverse_s,
        "nodes/traversal": nodes / traversals,
        "memory entries": len(solver.advantage_buffers[0]),
        "batch": batch,
        "sgd steps": args.sgd_steps,
        "sgd steps/s": args.sgd_steps / sgd_s if args.sgd_steps else float("nan"),
        "samples/s": args.sgd_steps * batch / sgd_s if args.sgd_steps else float("nan"),
        "loss": loss,
        "feature_size": feature_size,
        "entry_bytes": entry,
        "entries_in_budget": int(budget // entry),
        "paper_memories_gb": NUM_MEMORIES * PAPER_MEMORY_ENTRIES * entry / 1e9,
        "flat_tensor": (encoder.flat_tensor_size, flat_entry),
        "info_state_tensor": (int(np.prod(game.information_state_tensor_shape())), ist_entry),
    }


def render(results: list[dict], args) -> str:
    throughput = markdown_table(
        ["game", "d", "params", "device", "backend", "training precision", "traversals", "traversals/s", "nodes/s",
         "nodes/traversal", "batch", "SGD steps", "SGD steps/s", "samples/s"],
        [[r["game"], r["dim"], f"{r['parameters']:,}", r["device"], r["backend"], r["precision"], r["traversals"],
          f"{r['traversals/s']:.1f}", f"{r['nodes/s']:,.0f}", f"{r['nodes/traversal']:.0f}",
          f"{r['batch']:,}", r["sgd steps"], f"{r['sgd steps/s']:.2f}", f"{r['samples/s']:,.0f}"]
         for r in results],
    )  # fmt: skip
    gb = args.memory_budget_gb
    memory = markdown_table(
        ["game", "encoding", "floats", "bytes/entry", f"entries in {gb:g} GB",
         "paper's 3 x 40M entries"],
        [row for r in results for row in (
            [r["game"], "network_tensor (cards + bets, this network)", r["feature_size"], r["entry_bytes"],
             f"{r['entries_in_budget'] / 1e6:,.1f}M", f"{r['paper_memories_gb']:.1f} GB"],
            [r["game"], "PokerEncoder.flat_tensor (multi-hot, MLP)", *r["flat_tensor"],
             f"{gb * 1e9 / r['flat_tensor'][1] / 1e6:,.1f}M",
             f"{NUM_MEMORIES * PAPER_MEMORY_ENTRIES * r['flat_tensor'][1] / 1e9:.1f} GB"],
            [r["game"], "information_state_tensor (MLP)", *r["info_state_tensor"],
             f"{gb * 1e9 / r['info_state_tensor'][1] / 1e6:,.1f}M",
             f"{NUM_MEMORIES * PAPER_MEMORY_ENTRIES * r['info_state_tensor'][1] / 1e9:.1f} GB"],
        )],
    )  # fmt: skip
    settings = (
        f"Settings: d={args.dim}, {args.traversals} timed traversals per player (batches of "
        f"{args.traversal_batch_size}), {args.sgd_steps} SGD steps at {args.batch_scale:g} x the "
        f"paper's batch (FHP 10,000, HULH 20,000), memory capacity {args.memory_capacity:,}, "
        f"device {args.device}, torch threads {torch.get_num_threads()}. Bytes per entry = "
        "4 x floats + 5 x actions + 4 (features float32, targets float32, legal mask bool, "
        "iteration int32; memories.py); GB = 1e9 bytes."
    )
    return f"## Throughput\n\n{throughput}\n\n## Memory sizing\n\n{memory}\n\n{settings}\n"


def parameter_search(target: int = PAPER_FHP_PARAMETERS, max_dim: int = 400) -> str:
    """Closest parameter counts to `target` over readings of Appendix C for FHP.

    Varied: embeddings per group or one shared table; embedding vocabulary
    (13 + 4 + 52, card only, rank + suit); bet inputs (2 x 12 positions as
    the code, 12, or 2 x 24 if 24 was passed as nbets); actions 2..5; biases
    (all, none in the head, none); normalisation without parameters or an
    affine LayerNorm (2 d); 2 card groups (FHP) or 4 (the HULH network);
    hidden = embedding width d.
    """
    rows = []
    for groups, shared, vocab, bet_inputs, actions, bias, affine in itertools.product(
        (2, 4), (False, True), (69, 52, 17), (24, 12, 48), (2, 3, 4, 5),
        ("all", "no head", "none"), (False, True),
    ):  # fmt: skip
        b_layers = 0 if bias == "none" else 1
        b_head = 1 if bias == "all" else 0
        for d in range(1, max_dim):
            n = (1 if shared else groups) * vocab * d + (groups + 7) * d * d
            n += bet_inputs * d + 8 * b_layers * d + actions * d + b_head * actions + (2 * d if affine else 0)
            rows.append((abs(n - target), n, groups, shared, vocab, bet_inputs, actions, bias, affine, d))
    rows.sort(key=lambda r: (r[0], r[-1]))
    exact = [r for r in rows if r[0] == 0]
    literal = [r for r in rows if r[2:9] == (2, False, 69, 24, 3, "all", False)]
    table = markdown_table(
        ["|diff|", "params", "groups", "shared emb", "vocab", "bet inputs", "actions", "biases",
         "affine norm", "d"],
        [[r[0], f"{r[1]:,}", *r[2:]] for r in rows[:12]],
    )  # fmt: skip
    lit = ", ".join(f"d={r[-1]}: {r[1]:,} ({r[1] - target:+,})" for r in literal[:2])
    return (
        f"Target: {target:,} parameters (Sections 5, 5.1). Exact matches: {len(exact)}.\n\n"
        f"Appendix C code as printed (2 groups, 69-row embeddings per group, 24 bet inputs, "
        f"3 actions, biases, parameter-free normalize): 9 d^2 + 173 d + 3; closest {lit}. "
        f"Appendix default d=256: {appendix_c_parameter_count(256):,}.\n\n"
        f"Closest over all readings:\n\n{table}\n"
    )


def main(argv=None):
    args = parse_args(argv)
    if args.parameter_search:
        print(parameter_search())
        return
    if args.threads:
        torch.set_num_threads(args.threads)
    results = []
    for name in args.games.split(","):
        name = name.strip()
        print(f"{name}: {args.traversals} traversals per player, {args.sgd_steps} SGD steps ...", flush=True)
        results.append(bench_game(name, args))
    body = render(results, args)
    print(body)
    if args.out:
        write_result(args.out, "Deep CFR with the Appendix C poker network: FHP and HULH", body)


if __name__ == "__main__":
    main()
