"""Drawing SGD minibatches from a full Deep CFR memory: `tensor[index]`
(advanced indexing, the trainer before session 20) against
`tensor.index_select(0, index)` (the trainer now), alone and inside a whole
SGD step (issue 21: the 5x2 FHP curve is SGD-bound).

The memory is a 2M-entry reservoir memory with the 5x2 FHP shape (106 0/1
features, 3 actions, linear-CFR weights), filled with random rows; each
timed round draws `--steps` fresh batches of 2,048 rows (new random indices
every time, as in training: a repeated index would find its rows in cache).
The two gathers are interleaved round-robin, `--rounds` rounds, one thread;
the table shows the median ms per batch / per SGD step (MLP 128x128, Adam,
weighted squared loss) and the ratio to advanced indexing. Both return the
same rows (checked).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_memory_batches.py \
        --output=benchmarks/results/memory_batches.md
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np
import torch
from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import print_and_write, run_header  # noqa: E402
from openspiel_cfrx.deep.memories import ReservoirMemory  # noqa: E402
from openspiel_cfrx.deep.networks import MLP  # noqa: E402
from openspiel_cfrx.deep.trainer import SQUARED, Trainer, memory_batches  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("output", "", "Markdown file for the table (printed anyway).")
flags.DEFINE_integer("entries", 2_000_000, "Memory entries (filled).")
flags.DEFINE_integer("features", 106, "Feature width (5x2 FHP's information_state_tensor: 106).")
flags.DEFINE_integer("batch", 2048, "Rows per batch.")
flags.DEFINE_integer("steps", 300, "Batches (or SGD steps) per timed round.")
flags.DEFINE_integer("rounds", 5, "Interleaved rounds per method.")


def advanced_indexing_batches(memory, batch_size, rng, linear_scale, device):
    """The trainer's `memory_batches` before session 20: `tensor[index]`."""
    features, targets = torch.from_numpy(memory.features), torch.from_numpy(memory.targets)
    masks, iterations = torch.from_numpy(memory.legal_mask), torch.from_numpy(memory.iteration)

    def batch(step: int):
        index = torch.from_numpy(memory.sample_indices(batch_size, rng))
        t = iterations[index]
        w = t.to(torch.float32) * linear_scale
        return features[index].to(device), targets[index].to(device), masks[index].to(device), w.to(device)

    return batch


METHODS = {"tensor[index]": advanced_indexing_batches, "index_select": memory_batches}


def filled_memory(entries: int, width: int) -> ReservoirMemory:
    memory, rng, chunk = ReservoirMemory(entries, width, 3), np.random.default_rng(0), 100_000
    for lo in range(0, entries, chunk):
        n = min(chunk, entries - lo)
        memory.add((rng.random((n, width)) > 0.9).astype(np.float32), rng.normal(size=(n, 3)).astype(np.float32),
                   rng.random((n, 3)) > 0.3, 1 + lo * 300 // entries, rng)  # fmt: skip
    return memory


def main(argv):
    del argv
    torch.set_num_threads(1)
    load = os.getloadavg()[0]
    memory, cpu = filled_memory(FLAGS.entries, FLAGS.features), torch.device("cpu")
    a, b = (METHODS[m](memory, FLAGS.batch, np.random.default_rng(1), 0.01, cpu)(0) for m in METHODS)
    if not all(torch.equal(x, y) for x, y in zip(a, b, strict=True)):
        raise AssertionError("the two gathers returned different rows")
    trainer = Trainer(MLP(FLAGS.features, 3, (128, 128)), 1e-3, 1.0)
    times = {(m, what): [] for m in METHODS for what in ("batch", "step")}
    for r in range(FLAGS.rounds):
        for name, make in METHODS.items():
            draw = make(memory, FLAGS.batch, np.random.default_rng(r), 0.01, cpu)
            start = time.perf_counter()
            for k in range(FLAGS.steps):
                draw(k)
            times[name, "batch"].append((time.perf_counter() - start) / FLAGS.steps * 1e3)
            draw = make(memory, FLAGS.batch, np.random.default_rng(r), 0.01, cpu)
            start = time.perf_counter()
            trainer.fit(draw, FLAGS.steps, SQUARED)
            times[name, "step"].append((time.perf_counter() - start) / FLAGS.steps * 1e3)
    median = {key: statistics.median(v) for key, v in times.items()}
    base = next(iter(METHODS))
    rows = [f"| {name} | {median[name, 'batch']:.3f} ({median[name, 'batch'] / median[base, 'batch']:.2f}x) | "
            f"{median[name, 'step']:.2f} ({median[name, 'step'] / median[base, 'step']:.2f}x) |" for name in METHODS]  # fmt: skip
    text = (f"# Minibatches from a full memory: tensor[index] vs index_select (issue 21)\n\n{run_header(load)}. "
            f"Reservoir memory of {FLAGS.entries:,} entries x {FLAGS.features} features, batches of {FLAGS.batch:,} "
            f"rows with fresh random indices, {FLAGS.steps} per round, {FLAGS.rounds} interleaved rounds, median; "
            f"SGD step: MLP 128x128, Adam, one thread.\n\n"
            "| gather | ms per batch | ms per SGD step (batch included) |\n|---|---:|---:|\n"
            + "\n".join(rows) + "\n")  # fmt: skip
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
