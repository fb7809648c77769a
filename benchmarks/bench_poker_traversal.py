r"""Deep CFR traversal throughput on poker: the "poker" backend (deals as
arrays over the betting tree) against the pyspiel-state backend, the same
trained network answering both (issue 21: target >= 20x on full FHP and HULH).

For each game and backend: a `DeepCFRSolver` runs one iteration (so the
advantage networks are trained and every strategy query is a forward pass),
then K traversals are timed (`--repeats`, best kept): `solver.sampler.collect`
alone (the traversals: nodes touched per second, the state backend's count:
decisions, terminals, one chance node per card), and `solver.collect` (the
same plus inserting the samples into the memories, a cost both backends pay
per row). With the Appendix C network the poker backend asks sigma^t by
parts (`deep_cfr.FactoredStrategy`: each deal's card part once per round, each
node's bet part once, the trunk per visit); the row "poker, whole inputs"
times the same backend with one forward pass per visit's whole input.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_poker_traversal.py \
        --output=benchmarks/results/poker_traversal.md
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
flags.DEFINE_multi_string("game", ["flop_holdem(num_ranks=5,num_suits=2)", "flop_holdem", "hulh"], "Games (repeat the flag).")
flags.DEFINE_integer("traversals", 2000, "Traversals timed per backend (the state backend gets a tenth).")
flags.DEFINE_integer("batch", 4096, "traversal_batch_size of both backends (the poker backend uses >= 4,096).")
flags.DEFINE_integer("repeats", 3, "Timed repeats per backend (best kept).")
flags.DEFINE_multi_string("network", ["mlp"], "Deep CFR networks (repeat the flag): mlp (default sizes) or poker "
                          "(Appendix C, d = 64).")  # fmt: skip


def main(argv):
    del argv
    import pyspiel
    import torch

    import games  # noqa: F401
    from openspiel_cfrx.deep import DeepCFRSolver

    torch.set_num_threads(1)
    load = os.getloadavg()[0]
    lines = ["| game | network | backend | traversals | nodes | traversal seconds (best) | traversal nodes/s | ratio to state | "
             "nodes/s with memory insertion | ratio |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for name, network in ((g, n) for g in FLAGS.game for n in FLAGS.network):
        game = pyspiel.load_game(name)
        sizes = {"advantage_network_layers": (64,), "policy_network_layers": (64,)} if network == "poker" else {}
        speeds = {}
        for backend in ("state", "poker", "poker, whole inputs"):
            if backend == "poker, whole inputs" and network != "poker":
                continue
            count = FLAGS.traversals // (10 if backend == "state" else 1)
            solver = DeepCFRSolver(game, num_iterations=1, num_traversals=200, advantage_network_train_steps=20,
                                   policy_network_train_steps=1, traversal_backend=backend.split(",")[0],
                                   network=network, traversal_batch_size=FLAGS.batch, seed=0, num_threads=1,
                                   **sizes)  # fmt: skip
            solver.run_iteration()  # trained networks: every query is a forward pass
            strategy = solver.current_strategy  # the Appendix C network's sigma^t by parts on the poker backend
            whole = backend.endswith("whole inputs")
            if whole:  # without `factored`: one forward pass on each visit's whole input (the path before parts)
                def strategy(player, features, mask, by_parts=strategy):
                    return by_parts(player, features, mask)
            best = {}
            for _ in range(FLAGS.repeats):
                for what in ("traversal",) if whole else ("traversal", "with memories"):
                    start = time.perf_counter()
                    if what == "traversal":
                        nodes = sum(x.nodes for x in solver.sampler.collect(strategy, 0, 1, count))
                    else:
                        nodes = solver.collect(0, count)
                    seconds = time.perf_counter() - start
                    if what not in best or seconds < best[what][1]:
                        best[what] = (nodes, seconds)
            speeds[backend] = {what: nodes / seconds for what, (nodes, seconds) in best.items()}
            ratio = speeds[backend]["traversal"] / speeds["state"]["traversal"]
            nodes, seconds = best["traversal"]
            if whole:
                memories = "– | –"
            else:
                memories = (f"{speeds[backend]['with memories']:,.0f} | "
                            f"{speeds[backend]['with memories'] / speeds['state']['with memories']:.1f}x")  # fmt: skip
            lines.append(f"| {name} | {network} | {backend} | {count:,} | {nodes:,} | {seconds:.2f} | {nodes / seconds:,.0f} | "
                         f"**{ratio:.1f}x** | {memories} |")  # fmt: skip
            print(lines[-1], flush=True)
    text = (f"# Deep CFR traversals on poker: the poker backend vs pyspiel states (issue 21)\n\n"
            f"{run_header(load)}. Advantage network (default MLP, or the Appendix C network d = 64) trained one "
            f"iteration, one torch thread, "
            f"one process; best of {FLAGS.repeats}.\n\n" + "\n".join(lines) + "\n")  # fmt: skip
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
