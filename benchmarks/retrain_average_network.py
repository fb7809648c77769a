r"""Retrain a saved Deep CFR run's average network (Algorithm 1 line 8) for
other step counts on its final strategy memory and evaluate each exactly:
how much of a flop hold'em floor is the average network (issue 21).

    PYTHONPATH=. .venv/bin/python benchmarks/retrain_average_network.py \
        --checkpoint=/tmp/fullfhp2/ckpt.pt --steps=4000,16000 --evaluator=engine

The checkpoint is a `bench_fhp_curve.py --checkpoint` (or any
`DeepCFRSolver.save_checkpoint`) file; the network's shape is the
checkpoint's, only its training steps change. One line per step count:
NashConv in mbb/g and both players' best-response gains (chips).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="a saved DeepCFRSolver")
    parser.add_argument("--steps", default="4000,16000", help="average-network SGD steps, comma-separated")
    parser.add_argument("--evaluator", choices=("states", "engine"), default="engine",
                        help="as bench_fhp_curve.py (engine: suit-symmetric networks on the isomorphic tree)")  # fmt: skip
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args(argv)
    import torch

    import games  # noqa: F401  (registers flop_holdem)
    from benchmarks.bench_fhp_curve import evaluate
    from openspiel_cfrx.deep import DeepCFRSolver

    torch.set_num_threads(args.threads)
    for steps in (int(s) for s in args.steps.split(",")):
        start = time.perf_counter()
        solver = DeepCFRSolver.from_checkpoint(args.checkpoint, policy_network_train_steps=steps)
        loaded = time.perf_counter() - start
        start = time.perf_counter()
        loss = solver.train_policy_network()
        trained = time.perf_counter() - start
        result = evaluate(solver.game, solver, args.evaluator)
        gains = result.player_improvements
        print(f"steps {steps}: iteration {solver.iteration}, policy loss {loss:.4f}, train {trained:.0f} s "
              f"(load {loaded:.0f} s), NashConv {result.nash_conv_mbb:.1f} mbb/g, BR gains {gains[0]:.2f} / "
              f"{gains[1]:.2f} chips", flush=True)  # fmt: skip
        del solver


if __name__ == "__main__":
    main()
