r"""Deep CFR traversal throughput on poker: the "poker" backend (deals as
arrays over the betting tree) against the pyspiel-state backend, the same
trained network answering both (issue 21: target >= 20x on full FHP and HULH).

For each game: a `DeepCFRSolver` runs one iteration (so the advantage
networks are trained and every strategy query is a forward pass) and every
backend's solver loads its state (the same networks answer all of them);
then K traversals per backend are timed, the backends in turn (`--repeats`
rounds, best kept: this VM's speed drifts by 20-30% within seconds, so
consecutive per-backend blocks were not comparable): `solver.sampler.collect`
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
flags.DEFINE_integer("repeats", 7, "Timed repeats per backend, round-robin over the backends (best kept).")
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

        def solver_for(backend, game=game, network=network, sizes=sizes):
            return DeepCFRSolver(game, num_iterations=1, num_traversals=200, advantage_network_train_steps=20,
                                 policy_network_train_steps=1, traversal_backend=backend, network=network,
                                 traversal_batch_size=FLAGS.batch, seed=0, num_threads=1, **sizes)  # fmt: skip

        trained = solver_for("poker")
        trained.run_iteration()  # trained networks: every query is a forward pass
        state = trained.state_dict()
        backends = ["state", "poker"] + (["poker, whole inputs"] if network == "poker" else [])
        runs = {}
        for backend in backends:  # one set of trained networks answers every backend
            solver = solver_for(backend.split(",")[0])
            solver.load_state_dict(state)
            strategy = solver.current_strategy  # the Appendix C network's sigma^t by parts on the poker backend
            if backend.endswith("whole inputs"):  # without `factored`: one forward pass on each visit's whole input
                def strategy(player, features, mask, by_parts=strategy):
                    return by_parts(player, features, mask)
            runs[backend] = (solver, strategy, FLAGS.traversals // (10 if backend == "state" else 1))
        best = {}
        for _ in range(FLAGS.repeats):  # round-robin, so that the VM's drifts reach every backend alike
            for backend, (solver, strategy, count) in runs.items():
                for what in ("traversal",) if backend.endswith("whole inputs") else ("traversal", "with memories"):
                    start = time.perf_counter()
                    if what == "traversal":
                        nodes = sum(x.nodes for x in solver.sampler.collect(strategy, 0, 1, count))
                    else:
                        nodes = solver.collect(0, count)
                    seconds = time.perf_counter() - start
                    if (backend, what) not in best or seconds < best[backend, what][1]:
                        best[backend, what] = (nodes, seconds)
        speed = {key: nodes / seconds for key, (nodes, seconds) in best.items()}
        for backend, (_, _, count) in runs.items():
            nodes, seconds = best[backend, "traversal"]
            ratio = speed[backend, "traversal"] / speed["state", "traversal"]
            if (backend, "with memories") in speed:
                memories = (f"{speed[backend, 'with memories']:,.0f} | "
                            f"{speed[backend, 'with memories'] / speed['state', 'with memories']:.1f}x")  # fmt: skip
            else:
                memories = "– | –"
            lines.append(f"| {name} | {network} | {backend} | {count:,} | {nodes:,} | {seconds:.2f} | {nodes / seconds:,.0f} | "
                         f"**{ratio:.1f}x** | {memories} |")  # fmt: skip
            print(lines[-1], flush=True)
    text = (f"# Deep CFR traversals on poker: the poker backend vs pyspiel states (issue 21)\n\n"
            f"{run_header(load)}. Advantage network (default MLP, or the Appendix C network d = 64) trained one "
            f"iteration (the same networks for every backend), one torch thread, one process; best of "
            f"{FLAGS.repeats} round-robin repeats.\n\n" + "\n".join(lines) + "\n")  # fmt: skip
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
