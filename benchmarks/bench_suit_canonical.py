"""`SuitCanonical` (the suit-symmetric MLP's input relabelling): every suit
permutation's float64 block codes (the network before session 21) against
sorting the suits by their rank masks (now), alone and in the poker traversal
backend's nodes/s (issue 21).

For each game: rows are decision-state information_state_tensors of random
play; both forms must return the same rows (checked, then timed on `--rows`
rows per call, interleaved, best of `--repeats`). Then a `DeepCFRSolver` with
`network="suit_symmetric_mlp"` trains one iteration and `--traversals`
traversals of player 0 are timed with each form, interleaved, best of
`--repeats`.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_suit_canonical.py \
        --output=benchmarks/results/suit_canonical.md
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
import torch
from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import print_and_write, run_header  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("output", "", "Markdown file for the table (printed anyway).")
flags.DEFINE_list("games", ["flop_holdem", "hulh"], "Games.")
flags.DEFINE_integer("rows", 2048, "Rows per canonicalisation call (the solver's inference chunk).")
flags.DEFINE_integer("traversals", 8192, "Traversals per timing.")
flags.DEFINE_integer("repeats", 3, "Interleaved repeats (best kept).")


def all_permutations_forward(self, x: torch.Tensor) -> torch.Tensor:
    """`SuitCanonical.forward` before session 21: every permutation's codes, block by block."""
    from openspiel_cfrx.poker.isomorphism import suit_permutations

    if not hasattr(self, "_old"):
        S, C = self.num_suits, self.num_cards
        perms = suit_permutations(S)
        cards = np.arange(C)
        rank, suit = cards // S, cards % S
        moved = rank[None, :] * S + perms[:, suit]
        source = np.empty_like(moved)
        source[np.arange(len(perms))[:, None], moved] = cards[None, :]
        self._old = (torch.tensor(np.ldexp(1.0, moved.T), dtype=torch.float64), torch.as_tensor(source))
    code, source = self._old
    with torch.no_grad():
        C, best = self.num_cards, None
        for b in self.card_blocks:
            codes = x[:, b : b + C].to(torch.float64) @ code
            if best is not None:
                codes = codes.masked_fill(~best, float("inf"))
            best = codes == codes.min(dim=1, keepdim=True).values
        index = source[best.to(torch.int8).argmax(dim=1)]
        out = x.clone()
        for b in self.card_blocks:
            out[:, b : b + C] = torch.gather(x[:, b : b + C], 1, index)
    return out


def main(argv):
    del argv
    import pyspiel

    import games  # noqa: F401
    from openspiel_cfrx.deep import DeepCFRSolver
    from openspiel_cfrx.deep.suit_symmetric import SuitCanonical, card_layout
    from tests.test_suit_symmetric import _random_tensors

    torch.set_num_threads(1)
    load = os.getloadavg()[0]
    forms = {"all permutations (before)": all_permutations_forward, "sorted rank masks (now)": SuitCanonical.forward}
    new = SuitCanonical.forward
    lines = ["| game | form | us per row (canonicalisation alone) | ratio | traversal nodes/s | ratio |",
             "|---|---|---:|---:|---:|---:|"]  # fmt: skip
    for name in FLAGS.games:
        game = pyspiel.load_game(name)
        layout = card_layout(game)
        canonical = SuitCanonical(layout["card_blocks"], layout["num_ranks"], layout["num_suits"])
        x = torch.as_tensor(_random_tensors(game, FLAGS.rows, seed=0))
        if not torch.equal(all_permutations_forward(canonical, x), new(canonical, x)):
            raise AssertionError(f"{name}: the two forms return different rows")
        solver = DeepCFRSolver(game, num_iterations=1, num_traversals=300, advantage_network_train_steps=20,
                               policy_network_train_steps=1, traversal_backend="poker", network="suit_symmetric_mlp",
                               traversal_batch_size=4096, seed=0, num_threads=1, advantage_network_layers=(128, 128),
                               policy_network_layers=(128, 128), memory_capacity=100_000)  # fmt: skip
        solver.run_iteration()
        per_row, nodes_per_s = {}, {}
        for _ in range(FLAGS.repeats):
            for form, forward in forms.items():
                start = time.perf_counter()
                for _ in range(20):
                    forward(canonical, x)
                per_row[form] = min(per_row.get(form, 1e9), (time.perf_counter() - start) / 20 / len(x) * 1e6)
                SuitCanonical.forward = forward
                try:
                    start = time.perf_counter()
                    nodes = sum(s.nodes for s in solver.sampler.collect(solver.current_strategy, 0, 1, FLAGS.traversals))
                    nodes_per_s[form] = max(nodes_per_s.get(form, 0.0), nodes / (time.perf_counter() - start))
                finally:
                    SuitCanonical.forward = new
        base = next(iter(forms))
        for form in forms:
            lines.append(f"| {name} | {form} | {per_row[form]:.3f} | {per_row[base] / per_row[form]:.2f}x | "
                         f"{nodes_per_s[form]:,.0f} | **{nodes_per_s[form] / nodes_per_s[base]:.2f}x** |")  # fmt: skip
            print(lines[-1], flush=True)
    text = (f"# SuitCanonical: every permutation vs sorted rank masks (issue 21)\n\n{run_header(load)}. "
            f"Canonicalisation of {FLAGS.rows:,} decision-state rows per call (the same rows from both forms, "
            f"checked); poker traversal backend, suit-symmetric MLP 128x128 trained one iteration, "
            f"{FLAGS.traversals:,} traversals of player 0 per timing (batches of 4,096); one torch thread, forms "
            f"interleaved, best of {FLAGS.repeats}.\n\n" + "\n".join(lines) + "\n")  # fmt: skip
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
