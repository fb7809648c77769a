r"""Poker public-tree engine: exact NashConv times and peak memory.

Each case runs in a fresh process (peak RSS is per case):

* `uniform`: exact NashConv of the uniform policy, on full flop hold'em with
  suit isomorphism (1,755 flop classes) and on every board (22,100 flops);
* `peer`: the same number by OpenSpiel's `exploitability.nash_conv` and by
  the engine on a small FHP where OpenSpiel runs (side by side);
* `network`: exact NashConv of a Deep CFR policy network (an MLP of the
  requested size, untrained: the cost does not depend on the weights) through
  the batched tensor path, with network queries/s and their share of the time;
  a projection to full FHP from the measured rate (say so: a projection).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_poker_engine.py \
        --output=benchmarks/results/poker_engine.md
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import case_in_fresh_process, print_and_write  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("output", "", "Markdown file for the table (printed anyway).")
flags.DEFINE_string("one", "", "Internal: run one case (JSON) and print its result.")
flags.DEFINE_string("network_game", "flop_holdem(num_ranks=6,num_suits=4)", "Game of the network case.")
flags.DEFINE_list("hidden", ["256", "192", "128"], "MLP hidden layers of the network case (~100k parameters).")
flags.DEFINE_bool("every_board", True, "Also time full FHP without isomorphism (~12x longer).")


def _peak_gib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def run_case(case: dict) -> dict:
    import numpy as np
    import pyspiel

    import games  # noqa: F401
    from openspiel_cfrx.neural_poker import InformationStateTensors, NetworkStrategy
    from openspiel_cfrx.poker import PublicTree

    game = pyspiel.load_game(case["game"])
    start = time.perf_counter()
    if case["kind"] == "uniform":
        tree = PublicTree(game, isomorphism=case["isomorphism"], threads=2)
        value = tree.nash_conv(tree.uniform)
        return {"nash_conv": value, "seconds": time.perf_counter() - start, "peak_gib": _peak_gib(),
                "boards": len(tree.first_boards)}  # fmt: skip
    if case["kind"] == "openspiel":
        from open_spiel.python import policy as policy_lib
        from open_spiel.python.algorithms import exploitability

        value = exploitability.nash_conv(game, policy_lib.UniformRandomPolicy(game))
        return {"nash_conv": value, "seconds": time.perf_counter() - start, "peak_gib": _peak_gib()}
    if case["kind"] == "network":
        import torch

        from openspiel_cfrx import DeepCFRSolver

        torch.manual_seed(0)
        solver = DeepCFRSolver(game, policy_network_layers=tuple(case["hidden"]), num_iterations=1, seed=0)
        parameters = sum(p.numel() for p in solver.policy_network.parameters())
        tree = PublicTree(game, isomorphism=False, threads=case.get("threads", 1))
        strategy = NetworkStrategy(tree, InformationStateTensors(game, tree), solver.probabilities_from_tensors)
        start = time.perf_counter()
        value = tree.nash_conv(strategy)
        seconds = time.perf_counter() - start
        return {"nash_conv": value, "seconds": seconds, "peak_gib": _peak_gib(), "queries": strategy.queries,
                "network_seconds": strategy.network_seconds, "parameters": parameters,
                "torch_threads": torch.get_num_threads(), "numpy": np.__version__}  # fmt: skip
    raise ValueError(case)


def in_fresh_process(case: dict) -> dict:
    return case_in_fresh_process(__file__, case)


def full_fhp_queries(num_cards: int = 52) -> int:
    """Infosets of full FHP a network is queried on (every flop, hands missing it)."""
    import pyspiel

    import games  # noqa: F401
    from openspiel_cfrx.poker.public_tree import DECISION, betting_tree
    from openspiel_cfrx.poker.spec import PokerRules

    game = pyspiel.load_game("flop_holdem")
    nodes = betting_tree(PokerRules.from_game(game))
    per_round = {0: math.comb(num_cards, 2), 1: math.comb(num_cards, 3) * math.comb(num_cards - 3, 2)}
    return sum(per_round[node.round] for node in nodes if node.kind == DECISION)


def main(argv):
    del argv
    if FLAGS.one:
        print(json.dumps(run_case(json.loads(FLAGS.one))))
        return
    import numpy as np
    import torch

    lines = ["# Poker public-tree engine: exact NashConv speed and memory", ""]
    load = os.getloadavg()[0]
    lines += [f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; Python "
              f"{platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}; load average "
              f"{load:.2f} at start. Each row is a fresh process (peak RSS per row).", "",
              "Command: `PYTHONPATH=. .venv/bin/python benchmarks/bench_poker_engine.py "
              "--output=benchmarks/results/poker_engine.md`", ""]  # fmt: skip
    rows = []
    small = "flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"
    peer_os = in_fresh_process({"kind": "openspiel", "game": small})
    peer_us = in_fresh_process({"kind": "uniform", "game": small, "isomorphism": True})
    rows.append(("uniform, 4x2 FHP (raises 1 1)", "OpenSpiel exploitability.nash_conv", peer_os))
    rows.append(("uniform, 4x2 FHP (raises 1 1)", "engine, isomorphism", peer_us))
    iso = in_fresh_process({"kind": "uniform", "game": "flop_holdem", "isomorphism": True})
    rows.append(("uniform, full FHP 13x4", f"engine, isomorphism ({iso['boards']:,} flop classes)", iso))
    if FLAGS.every_board:
        every = in_fresh_process({"kind": "uniform", "game": "flop_holdem", "isomorphism": False})
        rows.append(("uniform, full FHP 13x4", f"engine, every board ({every['boards']:,} flops)", every))
    hidden = [int(h) for h in FLAGS.hidden]
    net = in_fresh_process({"kind": "network", "game": FLAGS.network_game, "hidden": hidden})
    rows.append((f"MLP {hidden} policy, {FLAGS.network_game}", "engine, tensor path, every board", net))
    lines += ["| policy, game | how | NashConv (chips) | seconds | peak GiB |", "|---|---|---:|---:|---:|"]
    for what, how, r in rows:
        lines.append(f"| {what} | {how} | {r['nash_conv']:.10f} | {r['seconds']:.1f} | {r['peak_gib']:.2f} |")
    lines.append("")
    lines.append(f"Side by side on the small game: engine {peer_us['seconds']:.2f} s vs OpenSpiel "
                 f"{peer_os['seconds']:.1f} s ({peer_os['seconds'] / peer_us['seconds']:.0f}x), "
                 f"|difference| = {abs(peer_us['nash_conv'] - peer_os['nash_conv']):.1e}.")  # fmt: skip
    if FLAGS.every_board:
        lines.append(f"Full FHP: isomorphism and every board agree to {abs(iso['nash_conv'] - every['nash_conv']):.1e} "
                     f"chips; isomorphism is {every['seconds'] / iso['seconds']:.1f}x faster.")  # fmt: skip
    rate = net["queries"] / net["network_seconds"]
    total = full_fhp_queries()
    share = net["network_seconds"] / net["seconds"]
    projected = total / rate / share
    lines += ["", f"Network case: {net['parameters']:,} parameters, {net['queries']:,} queries in "
              f"{net['network_seconds']:.1f} s of network time = {rate:,.0f} queries/s "
              f"({100 * share:.0f}% of the evaluation; torch threads {net['torch_threads']}).",
              f"**Projection** (not measured): full FHP needs {total:,} queries (every flop, hands missing it), "
              f"so about {total / rate / 60:.0f} min of network time and ~{projected / 60:.0f} min in all on this "
              "CPU at the measured rate and share."]  # fmt: skip
    text = "\n".join(lines) + "\n"
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
