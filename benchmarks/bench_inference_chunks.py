"""sigma^t queries in one forward pass vs in chunks of rows
(`networks.forward_in_chunks`), measured as the poker traversal backend's
nodes/s (issue 21).

A depth of a batch of 4,096 poker traversals asks sigma^t for up to ~10^5
decision visits at once. On CPU one forward pass over all of them allocates
fresh [B, width] temporaries (tens of MB each) whose first touch costs page
faults; in chunks of ~2,048 rows they stay in cache and the allocator reuses
them. For each game and network: a `DeepCFRSolver` trains one iteration (so
every query is a forward pass), then `--traversals` traversals of player 0
are timed with each chunk size, interleaved round-robin, best of
`--repeats`; "one pass" is a chunk larger than any query.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_inference_chunks.py \
        --output=benchmarks/results/inference_chunks.md
"""

from __future__ import annotations

import os
import sys
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import print_and_write, run_header  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("output", "", "Markdown file for the table (printed anyway).")
flags.DEFINE_multi_string("case", ["flop_holdem(num_ranks=5,num_suits=2):mlp", "flop_holdem:suit_symmetric_mlp",
                                   "flop_holdem:poker", "hulh:suit_symmetric_mlp", "hulh:poker"],
                          "game:network (repeat the flag); MLPs 128x128, the Appendix C network d = 64.")  # fmt: skip
flags.DEFINE_list("chunks", ["1000000000", "4096", "2048", "1024"], "Rows per forward pass (1e9: one pass).")
flags.DEFINE_integer("traversals", 8192, "Traversals per timing.")
flags.DEFINE_integer("repeats", 3, "Interleaved repeats (best kept).")


def main(argv):
    del argv
    import pyspiel
    import torch

    import games  # noqa: F401
    from openspiel_cfrx.deep import DeepCFRSolver, networks

    torch.set_num_threads(1)
    load = os.getloadavg()[0]
    chunks = [int(c) for c in FLAGS.chunks]
    label = {c: "one pass" if c >= 10**8 else f"{c:,}" for c in chunks}
    lines = ["| game | network | " + " | ".join(f"nodes/s, {label[c]}" for c in chunks) + " | best chunk vs one pass |",
             "|---|---|" + "---:|" * (len(chunks) + 1)]  # fmt: skip
    default = networks.INFERENCE_CHUNK
    for case in FLAGS.case:
        name, network = case.rsplit(":", 1)
        layers = (64,) if network == "poker" else (128, 128)
        solver = DeepCFRSolver(pyspiel.load_game(name), num_iterations=1, num_traversals=300,
                               advantage_network_train_steps=20, policy_network_train_steps=1,
                               traversal_backend="poker", network=network, traversal_batch_size=4096, seed=0,
                               num_threads=1, advantage_network_layers=layers, policy_network_layers=layers,
                               memory_capacity=100_000)  # fmt: skip
        solver.run_iteration()
        strategy, best = solver.current_strategy, {}
        for _ in range(FLAGS.repeats):
            for chunk in chunks:
                networks.INFERENCE_CHUNK = chunk
                start = time.perf_counter()
                nodes = sum(s.nodes for s in solver.sampler.collect(strategy, 0, 1, FLAGS.traversals))
                best[chunk] = max(best.get(chunk, 0.0), nodes / (time.perf_counter() - start))
        networks.INFERENCE_CHUNK = default
        one = best[max(chunks)]
        lines.append(f"| {name} | {network} | " + " | ".join(f"{best[c]:,.0f}" for c in chunks)
                     + f" | {max(best.values()) / one:.2f}x |")  # fmt: skip
        print(lines[-1], flush=True)
    text = (f"# sigma^t queries: one forward pass vs chunks of rows (issue 21)\n\n{run_header(load)}. Poker traversal "
            f"backend, {FLAGS.traversals:,} traversals of player 0 per timing (batches of 4,096), advantage networks "
            f"trained one iteration, one torch thread, chunk sizes interleaved, best of {FLAGS.repeats}; the solver's "
            f"default chunk is {default:,} rows.\n\n" + "\n".join(lines) + "\n")  # fmt: skip
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
