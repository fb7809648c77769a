"""Fitting a network to weighted targets: the one SGD loop of both neural solvers.

A `Trainer` owns one network and its Adam optimiser (`FlatAdam`, the project's
one optimiser: see its docstring and `docs/decisions.md`, "FlatAdam") and
runs `steps` Adam steps on batches it is handed, with the learning rates of
the solver's `Schedule`. The solver owns everything algorithmic: which targets,
which weights (Deep CFR's linear weighting t * 2/T is written once, in the
solver), which loss.

Losses are callables `loss(outputs, targets, mask, weights) -> scalar`. A
loss that is a weighted sum of squares may declare `merges_duplicates = True`:
then, for a memory that tracks its duplicate infosets, the trainer may fit the
memory merged by infoset (summed weights, weighted-mean targets) instead of
sampled entries, which is exact only for that loss:

    sum_k w_k ||y_k - f||^2 = W ||ybar - f||^2 + sum_k w_k ||y_k - ybar||^2

(W = sum_k w_k, ybar the w-weighted mean of the y_k). Any other loss (a Huber
loss, a cross-entropy) leaves the flag False and is always trained on sampled
entries, so it cannot silently get the squared loss's gradients.

Precision: "float32" (default) or "bfloat16", mixed precision by
`torch.autocast`: the network's matmuls run in bfloat16 (on CPUs with AMX or
AVX-512 BF16 several times faster than float32), while its parameters, Adam's
moments, the loss and the gradients stay float32. Only the training forward
pass is affected; the networks answer queries (sigma^t, the average policy)
in float32. `docs/decisions.md` ("bfloat16 training") records the step's speed-up
(1.6-2.2x for MLPs on an AMX CPU, none without bfloat16 instructions) and
why float32 stays the default.

On a CUDA device a fit keeps its memory (or arrays) on the device and, from
GRAPH_MIN_STEPS steps on, replays one captured step as a CUDA graph (`fit`):
the project's networks are small, so an eager GPU step is a few hundred
kernel launches and costs ~5x the replayed one on an H100
(`benchmarks/results/poker_network_step.md`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import warnings
from collections.abc import Callable

import numpy as np
import torch

from openspiel_cfrx.deep import settings
from openspiel_cfrx.deep.networks import FlatAdam, masked_softmax, reset_parameters
from openspiel_cfrx.deep.schedule import Schedule
from openspiel_cfrx.presets import bfloat16_is_fast

PRECISIONS = {"float32": None, "bfloat16": torch.bfloat16}  # training precision -> autocast dtype
settings.PRECISIONS.register_all(PRECISIONS)
# On a CUDA device a fit of at least GRAPH_MIN_STEPS steps runs GRAPH_WARMUP_STEPS
# eagerly (kernels chosen, workspaces allocated), then replays one captured step.
GRAPH_MIN_STEPS, GRAPH_WARMUP_STEPS = 16, 3
# (inputs, targets, mask, weights) on the training device.
Batch = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


class WeightedSquaredLoss:
    """mean over rows of w * sum over masked outputs of (f(output) - target)^2.

    Deep CFR's advantage loss (Algorithm 1: t * sum_a (r~(I, a) - V(I, a))^2),
    its average-strategy loss (`transform=masked_softmax`: the network outputs
    logits, the target is sigma^t(I)), and CFR-MIX's regret/strategy losses on
    mixed outputs.
    """

    merges_duplicates = True  # the identity in the module docstring holds

    def __init__(self, transform: Callable | None = None):
        self.transform = transform

    def __call__(self, outputs, targets, mask, weights):
        predicted = outputs if self.transform is None else self.transform(outputs, mask)
        squared = torch.where(mask, (predicted - targets) ** 2, torch.zeros_like(predicted))
        return (weights * squared.sum(dim=1)).mean()


SQUARED = WeightedSquaredLoss()
SQUARED_ON_PROBABILITIES = WeightedSquaredLoss(transform=masked_softmax)


def _plain_forward(network: torch.nn.Module, inputs):
    """`network(inputs)`: a trainer's default forward pass."""
    return network(inputs)


class Trainer:
    """One network, its optimiser, and the SGD loop.

    Args:
      network: the module to fit.
      learning_rate, gradient_clip: Adam's step size and global norm clip.
      forward: `forward(network, inputs) -> outputs` (default `network(inputs)`;
        CFR-MIX passes its mixing layer).
      precision: "float32" or "bfloat16" (mixed precision; module docstring).
    """

    def __init__(self, network: torch.nn.Module, learning_rate: float, gradient_clip: float | None,
                 forward: Callable | None = None, precision: str = "float32"):  # fmt: skip
        if precision not in PRECISIONS:
            raise ValueError(f"unknown training precision {precision!r}; choose from {', '.join(PRECISIONS)}")
        self.precision = precision
        self.network = network
        _warn_if_bfloat16_is_emulated(precision, network)
        self.learning_rate = float(learning_rate)
        self.optimizer = FlatAdam(network, lr=learning_rate, max_grad_norm=gradient_clip)
        self.forward = forward or _plain_forward  # a module-level function: trainers (and solvers) pickle

    def __setstate__(self, state: dict) -> None:
        # A copy or an unpickled trainer has the network's parameters and the
        # optimiser's flat buffer as separate tensors: make them views again.
        self.__dict__.update(state)
        self.optimizer.bind(self.network)

    cuda_graphs = True  # on a CUDA device, each fit replays one captured step (`fit`)

    def reinitialize(self, seed: int, fraction: float = 1.0) -> None:
        """Fresh parameters (seeded) and fresh Adam moments: training "from scratch".

        A `fraction` < 1 only moves the parameters that far toward the fresh
        initialisation theta_0 and keeps Adam's moments:
        theta <- (1 - fraction) theta + fraction theta_0, the "shrink and
        perturb" warm start (Ash & Adams, NeurIPS 2020, Section 4, with
        shrink = 1 - fraction, perturbation = fraction x a fresh initialisation)."""
        if fraction >= 1.0:
            reset_parameters(self.network, seed)
            self.optimizer.reset_state()
            return
        fresh = copy.deepcopy(self.network)
        reset_parameters(fresh, seed)
        theta0 = torch.cat([p.detach().reshape(-1) for p in fresh.parameters() if p.requires_grad])
        self.optimizer.params.lerp_(theta0, float(fraction))  # the flat buffer behind every parameter

    def state_dict(self) -> dict:
        return {"network": self.network.state_dict(), "optimizer": self.optimizer.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.network.load_state_dict(state["network"])  # in place: the optimiser's flat buffer stays bound
        self.optimizer.load_state_dict(state["optimizer"])

    def fit(self, batches: Callable[[int], Batch], steps: int, loss, schedule: Schedule | None = None) -> float:
        """`steps` Adam steps, step k on `batches(k)`. Returns the mean loss of
        the last tenth of the steps."""
        rates = (schedule or Schedule()).learning_rates(self.learning_rate, steps)
        net, optimizer = self.network, self.optimizer
        tail = max(1, steps // 10)
        recent = []
        graphed = self.cuda_graphs and steps >= GRAPH_MIN_STEPS and next(net.parameters()).is_cuda
        eager = GRAPH_WARMUP_STEPS if graphed else steps
        side = torch.cuda.Stream() if graphed else None  # CUDA graphs: warm up off the default stream
        net.train()
        if side is not None:
            side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side) if side is not None else contextlib.nullcontext():
            for step in range(eager):
                optimizer.lr = rates[step]
                optimizer.zero_grad()
                value = self._loss_and_gradients(batches(step), loss, graph_safe=graphed)
                optimizer.step()  # clips the global gradient norm first
                if step >= steps - tail:
                    recent.append(value)
        if side is not None:
            torch.cuda.current_stream().wait_stream(side)
            recent += self._fit_graphed(batches, range(eager, steps), loss, rates, steps - tail)
        net.eval()
        return float(torch.stack(recent).mean())

    def _loss_and_gradients(self, batch: Batch, loss, graph_safe: bool = False) -> torch.Tensor:
        x, y, m, w = batch
        dtype = PRECISIONS[self.precision]
        with torch.autocast(x.device.type, dtype=dtype or torch.bfloat16, enabled=dtype is not None,
                            cache_enabled=False if graph_safe else None):  # (no cast cache under graph capture)
            outputs = self.forward(self.network, x)
        value = loss(outputs.float(), y, m, w)  # the loss in float32 (a no-op at float32)
        value.backward()
        return value.detach()  # (holding the autograd graph past the step would tie the next one to its streams)

    def _fit_graphed(self, batches, steps: range, loss, rates, tail_from: int) -> list[torch.Tensor]:
        """`steps` as replays of one CUDA graph of a whole step (zero the
        gradients, forward, loss, backward, clip + Adam): a step of the
        project's small networks launches a few hundred kernels that each cost
        more to launch than to run (`benchmarks/results/poker_network_step.md`). Each step copies its batch into the graph's input tensors
        and writes its learning rate and count first (`FlatAdam.prepare`; the
        update is the eager step's `FlatAdam.update`). A step whose batch has
        another shape runs eagerly."""
        optimizer, recent = self.optimizer, []
        if not steps:
            return recent
        static = tuple(t.clone() for t in batches(steps[0]))
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                optimizer.zero_grad()
                static_loss = self._loss_and_gradients(static, loss, graph_safe=True)
                optimizer.update()
        except RuntimeError as error:  # an op that synchronises with the host: nothing ran, train eagerly
            warnings.warn(f"CUDA graph capture of the training step failed, training eagerly: {error}",
                          stacklevel=3)  # fmt: skip
            self.cuda_graphs, graph = False, None
        for step in steps:
            batch = static if step == steps[0] else batches(step)
            optimizer.lr = rates[step]
            if graph is not None and all(a.shape == b.shape for a, b in zip(static, batch, strict=True)):
                for a, b in zip(static, batch, strict=True):
                    if a is not b:
                        a.copy_(b, non_blocking=True)
                optimizer.prepare()
                graph.replay()
                value = static_loss
            else:
                optimizer.zero_grad()
                value = self._loss_and_gradients(batch, loss, graph_safe=True)
                optimizer.step()
            if step >= tail_from:
                recent.append(value.clone())
        return recent

    def fit_memory(self, memory, loss, steps: int, batch_size: int | None, rng: np.random.Generator,
                   linear_scale: float | None, schedule: Schedule | None = None) -> float | None:  # fmt: skip
        """Fits the memory's entries, each weighted by `linear_scale * t` (its
        iteration t; linear CFR) or 1 (`linear_scale=None`). Uses the merged
        memory when the loss declares `merges_duplicates` and the memory holds
        at most a batch of distinct infosets (then the exact gradient of the
        loss minibatches estimate); samples `batch_size` entries per step
        otherwise. Returns the final loss (None for an empty memory or 0 steps)."""
        if len(memory) == 0 or steps == 0:
            return None
        device = next(self.network.parameters()).device
        merged = _merged(memory, batch_size, linear_scale, device) if getattr(loss, "merges_duplicates", False) else None
        if merged is not None:
            batch, constant = merged
            return self.fit(lambda step: batch, steps, loss, schedule) + constant
        return self.fit(memory_batches(memory, batch_size, rng, linear_scale, device), steps, loss, schedule)


def memory_batches(memory, batch_size, rng, linear_scale, device) -> Callable[[int], Batch]:
    """Batches of `batch_size` entries drawn uniformly (with replacement) from a memory.

    On an accelerator the memory's filled part is copied to the device once
    (`_resident`) and each step gathers its rows there (sampling the rows on
    the host and copying each minibatch over cost 15% of the Appendix C
    network's eager step at the paper's batch on an H100, and more against a
    replayed CUDA graph: `benchmarks/results/poker_network_step.md`). The
    indices are drawn on the host either way, so both paths see the same rows."""
    arrays = (memory.features, memory.targets, memory.legal_mask, memory.iteration)
    resident = _resident(arrays, len(memory), device)
    features, targets, masks, iterations = resident or tuple(torch.from_numpy(a) for a in arrays)
    to = functools.partial(torch.Tensor.to, device=device, non_blocking=True)

    def batch(step: int) -> Batch:
        # index_select, not tensor[index]: ~3x faster gathering random rows of a large memory on CPU
        index = torch.from_numpy(memory.sample_indices(batch_size, rng))
        if resident:
            index = to(index)
        t = iterations.index_select(0, index)
        w = torch.ones_like(t, dtype=torch.float32) if linear_scale is None else t.to(torch.float32) * linear_scale
        x = features.index_select(0, index).to(torch.float32)  # (a float16 memory's exact values: no copy if float32)
        return tuple(to(v) for v in (x, targets.index_select(0, index), masks.index_select(0, index), w))

    return batch


def _resident(arrays, size: int, device) -> tuple[torch.Tensor, ...] | None:
    """The first `size` rows of each array on `device`, when it is an
    accelerator with room for them (at most half its free memory); None otherwise."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    needed = sum(a[:size].nbytes for a in arrays)
    if needed > torch.cuda.mem_get_info(device)[0] // 2:
        return None
    return tuple(torch.from_numpy(a[:size]).to(device) for a in arrays)


def array_batches(inputs, targets, mask, weights, batch_size, rng, device) -> Callable[[int], Batch]:
    """Batches of min(batch_size, rows) rows drawn uniformly (with replacement)
    from arrays (on an accelerator, gathered there: `memory_batches`)."""
    arrays = [np.ascontiguousarray(a) for a in (inputs, targets.astype(np.float32), mask, weights.astype(np.float32))]
    rows = inputs.shape[0]
    tensors = _resident(arrays, rows, device) or [torch.from_numpy(a) for a in arrays]
    device = torch.device(device)

    def batch(step: int) -> Batch:
        index = torch.from_numpy(rng.integers(0, rows, size=min(batch_size, rows))).to(tensors[0].device)
        return tuple(t.index_select(0, index).to(device) for t in tensors)

    return batch


def _merged(memory, batch_size, linear_scale, device):
    """The whole memory merged by infoset (memories.py), as one batch whose
    loss mean equals the memory's mean loss minus the returned constant; None
    when tracking is off or there are more distinct infosets than a batch."""
    if not memory.duplicates_tracked:
        return None
    if batch_size is not None and memory.num_unique > batch_size:
        return None
    merged = memory.aggregate("uniform", 1.0) if linear_scale is None else memory.aggregate("linear", linear_scale)
    rows, size = len(merged["weight"]), merged["size"]
    to = functools.partial(torch.as_tensor, device=device)
    batch = (to(merged["features"]), to(merged["targets"]), to(merged["legal_mask"]),
             to(merged["weight"] * rows / size, dtype=torch.float32))  # fmt: skip
    return batch, merged["constant"] / size


_BFLOAT16_WARNED: list[bool] = []  # once per process


def _warn_if_bfloat16_is_emulated(precision: str, network: torch.nn.Module) -> None:
    """Once per process: bfloat16 training on a CPU without bfloat16 matrix
    instructions is emulated and much slower than float32 (on an AMD EPYC VM:
    4 iterations of 5x2 flop hold'em in 353 s against 54 in 300 s with float32)."""
    on_cpu = all(p.device.type == "cpu" for p in network.parameters())
    if precision == "bfloat16" and on_cpu and not _BFLOAT16_WARNED and not bfloat16_is_fast():
        _BFLOAT16_WARNED.append(True)
        warnings.warn("TrainingSettings(precision='bfloat16') on a CPU without AMX / AVX-512 BF16 instructions is emulated "
                      "and ~10x slower than float32 here; use precision='float32' (the presets fall "
                      "back by themselves)", RuntimeWarning, stacklevel=3)  # fmt: skip
