r"""Cost of one SGD step of the Deep CFR card/bet network (Appendix C) at
the paper's batch, on CPU and (when one is available) on a GPU, beside the
MLP the solvers use by default.

One step = forward, squared loss, backward, Adam (torch.optim.Adam), float32,
on CPU with `--threads` torch threads (default 1) or on `--device=cuda`
(synchronised before and after the timed steps), on random FHP inputs (2 hole + 3 flop cards, 12 bet
positions). `--base=DIR` also times the network of another checkout (e.g.
`git worktree add /tmp/base <commit>`) in a fresh process, alternating with
this one, so a change can be measured side by side.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_poker_network_step.py \
        --base=/tmp/base --output=benchmarks/results/poker_network_step.md
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import print_and_write  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("output", "", "Markdown file for the table (printed anyway).")
flags.DEFINE_string("base", "", "Another checkout whose network is timed too (fresh process each).")
flags.DEFINE_list("dims", ["96", "256"], "Network widths d (96: the paper-sized FHP network; 256: Appendix C's default).")
flags.DEFINE_integer("batch", 10_000, "Rows per step (the paper's batch).")
flags.DEFINE_integer("steps", 5, "Timed steps (after one warm-up), best of --repeats.")
flags.DEFINE_string("device", "cpu", "torch device of the step (cpu, cuda).")
flags.DEFINE_integer("threads", 1, "torch threads (CPU steps).")
flags.DEFINE_integer("repeats", 3, "Repeats (fresh process each, alternating with --base).")

_WORKER = r"""
import json, sys, time
import numpy as np, torch
sys.path.insert(0, {root!r})
from openspiel_cfrx.deep.networks import make_network
from openspiel_cfrx.neural_poker.poker_network import PokerNetwork
torch.set_num_threads({threads})
kind, dim, batch, steps, device = {kind!r}, {dim}, {batch}, {steps}, torch.device({device!r})
rng = np.random.default_rng(0)
cards = np.stack([rng.permutation(52)[:5] for _ in range(batch)]).astype(np.float32)
bets = rng.choice([-1.0, 0.0, 1.0, 2.0], size=(batch, 12)).astype(np.float32)
torch.manual_seed(0)
if kind == "poker":
    net = PokerNetwork(17, 3, (2, 3), 12, dim=dim)
    x = torch.tensor(np.concatenate([cards, bets], axis=1))
else:  # the MLP on the information-state tensor's width for FHP (one-hot cards + bets)
    net = make_network("mlp", 200, 3, (dim, dim, dim))
    x = torch.rand(batch, 200)
y = torch.randn(batch, 3)
net, x, y = net.to(device), x.to(device), y.to(device)
sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
def step():
    opt.zero_grad()
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
step()
sync()
start = time.perf_counter()
for _ in range(steps):
    step()
sync()
print(json.dumps({{"seconds": (time.perf_counter() - start) / steps,
                   "parameters": sum(p.numel() for p in net.parameters())}}))
"""


def _time(root: str, kind: str, dim: int) -> dict:
    """One network timed in a fresh interpreter importing `root`'s package (so
    --base times the other checkout's code; `common.case_in_fresh_process`
    always imports this checkout)."""
    code = _WORKER.format(root=root, kind=kind, dim=dim, batch=FLAGS.batch, steps=FLAGS.steps,
                          threads=FLAGS.threads, device=FLAGS.device)  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv):
    del argv

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    checkouts = [("this checkout", here)] + ([("base", os.path.abspath(FLAGS.base))] if FLAGS.base else [])
    lines = ["| network | d | parameters | checkout | seconds per step (best) | ratio to the MLP |", "|---|---:|---:|---|---:|---:|"]
    for dim in (int(d) for d in FLAGS.dims):
        mlp = min(_time(here, "mlp", dim)["seconds"] for _ in range(FLAGS.repeats))
        lines.append(f"| MLP (3 x {dim}) on the 200-float tensor | {dim} | - | this checkout | {mlp:.4f} | 1.0x |")
        best = {}
        for _ in range(FLAGS.repeats):
            for label, root in checkouts:  # alternating
                result = _time(root, "poker", dim)
                if label not in best or result["seconds"] < best[label]["seconds"]:
                    best[label] = result
        for label, result in best.items():
            lines.append(f"| Appendix C | {dim} | {result['parameters']:,} | {label} | {result['seconds']:.4f} | "
                         f"{result['seconds'] / mlp:.1f}x |")  # fmt: skip
        print("\n".join(lines[-1 - len(best):]), flush=True)
    where = FLAGS.device if FLAGS.device != "cpu" else f"CPU, {FLAGS.threads} torch thread(s)"
    if FLAGS.device.startswith("cuda"):
        import torch

        where += f" ({torch.cuda.get_device_name()})"
    text = (f"# One SGD step of the Appendix C network\n\n"
            f"Batch "
            f"{FLAGS.batch:,}, {where}, Adam, float32; best of {FLAGS.repeats} fresh processes x {FLAGS.steps} "
            f"steps.\n\n" + "\n".join(lines) + "\n")  # fmt: skip
    print_and_write(text, FLAGS.output)


if __name__ == "__main__":
    app.run(main)
