"""Networks for Deep CFR (Brown et al. 2019, Section 5.1 and Appendix C).

Every network maps an encoded infoset `[B, input_size]` float32 to one output
per distinct action `[B, num_actions]`: predicted advantages for the value
(advantage) networks, logits for the average-strategy network.

`MLP` is the generic network over a flat infoset encoding (for example
`information_state_tensor`), built with the paper's two choices (Section 5.1):

* each fully connected layer is x_{i+1} = ReLU(A x_i [+ x_i]), the skip
  connection applied only where input and output widths are equal;
* the last hidden features are normalised to zero mean and unit variance per
  sample (Appendix C `normalize(z)`), then a linear action head.

Other architectures (the Appendix C card/bet network for poker) plug in through
`register_network(name, factory)`: a factory takes
`(input_size, num_actions, hidden_sizes, **options)` and returns an
`nn.Module` with the same input/output contract. Because memories store flat
float32 encodings, a structured network simply slices its own input (card
indices stored as floats, bet features) inside `forward`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from openspiel_cfrx.registry import Registry

NetworkFactory = Callable[..., nn.Module]


NORMALIZE_EPS = 1e-5
INFERENCE_CHUNK = 2048  # rows per forward pass in `forward_in_chunks`


def forward_in_chunks(fn: Callable[..., torch.Tensor], *inputs: torch.Tensor, device: torch.device | None = None,
                      chunk: int | None = None) -> torch.Tensor:  # fmt: skip
    """`fn(*rows)` over consecutive chunks of rows of `inputs` (equal leading
    lengths), outputs concatenated: the same rows as one call. On CPU a pass
    over 10^5 rows at once spends much of its time in page faults on fresh
    [B, width] temporaries; in chunks of ~2,048 rows they stay in cache and the
    allocator reuses them (`docs/decisions.md`, "chunks of 2,048 rows": MLP
    traversals 1.14-1.30x faster, the Appendix C network's unchanged). On an
    accelerator (`device` not CPU) one call."""
    n, chunk = int(inputs[0].shape[0]), int(chunk or INFERENCE_CHUNK)
    if n <= chunk or (device is not None and torch.device(device).type != "cpu"):
        return fn(*inputs)
    return torch.cat([fn(*(x[lo : lo + chunk] for x in inputs)) for lo in range(0, n, chunk)])


def normalize_features(z: torch.Tensor, eps: float = NORMALIZE_EPS) -> torch.Tensor:
    """(z - mean) / std over the feature axis of `z` [B, F] (Appendix C)."""
    return F.layer_norm(z, z.shape[-1:], eps=eps)


class MLP(nn.Module):
    """Fully connected Deep CFR network with skip connections and normalisation.

    Args:
      input_size: width of the flat infoset encoding.
      num_actions: outputs (game.num_distinct_actions()).
      hidden_sizes: hidden widths, e.g. (64, 64, 64).
      skip_connections: add x to A x where widths match (Section 5.1).
      normalize: normalise the last hidden layer (Appendix C).
    """

    def __init__(
        self,
        input_size: int,
        num_actions: int,
        hidden_sizes: Sequence[int] = (64, 64, 64),
        skip_connections: bool = True,
        normalize: bool = True,
    ):
        super().__init__()
        hidden_sizes = [int(h) for h in hidden_sizes]
        if not hidden_sizes or min(hidden_sizes) < 1:
            raise ValueError(f"hidden_sizes must be non-empty positive widths, got {hidden_sizes}")
        widths = [int(input_size), *hidden_sizes]
        self.layers = nn.ModuleList(
            nn.Linear(w_in, w_out) for w_in, w_out in zip(widths[:-1], widths[1:], strict=True)
        )
        self.skips = [skip_connections and w_in == w_out for w_in, w_out in zip(widths[:-1], widths[1:], strict=True)]
        self.normalize = normalize
        self.action_head = nn.Linear(widths[-1], num_actions)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.after_input_layer(self.layers[0](x) + x if self.skips[0] else self.layers[0](x))

    @property
    def input_layer(self) -> nn.Linear | None:
        """The first layer when the network is `after_input_layer(input_layer(x))`
        (no skip around it), else None. Its pre-activation is linear in x, so
        inputs that share most entries (one public node's infosets: the same
        betting, a few card one-hots) can sum weight columns instead of
        multiplying whole inputs (`poker.network_inputs.NetworkStrategy`)."""
        return None if self.skips[0] else self.layers[0]

    def after_input_layer(self, pre: torch.Tensor) -> torch.Tensor:
        """The outputs from the first layer's pre-activation [B, H1] (in
        inference mode the sums and ReLUs in place: the same values, fewer
        temporaries)."""
        x = F.relu(pre)
        in_place = torch.is_inference_mode_enabled()
        for layer, skip in zip(self.layers[1:], self.skips[1:], strict=True):
            if in_place:
                x = layer(x).add_(x).relu_() if skip else layer(x).relu_()
            else:
                x = F.relu(layer(x) + x) if skip else F.relu(layer(x))
        if self.normalize:
            x = normalize_features(x)
        return self.action_head(x)


NETWORKS: Registry[tuple[NetworkFactory, Callable | None]] = Registry("network")


def register_network(name: str, factory: NetworkFactory, inputs: Callable | None = None) -> None:
    """Makes `network=name` available to `DeepCFRSolver` and `CFRMixSolver`.

    `inputs(game, encoder, options) -> (encoder, options)`, optional: a network
    family that needs its own input encoding (the Appendix C poker network
    reads cards and bets) supplies it here, so solvers never special-case a
    network by name. The poker families register from
    `openspiel_cfrx.neural_poker` (declared in `openspiel_cfrx.registry`)."""
    NETWORKS.register(name, (factory, inputs))


def network_inputs(name: str, game, encoder, options: dict | None):
    """(encoder, options) for `network=name`: the family's own input hook, or
    the caller's encoder (None = the solver's default) and options unchanged."""
    _, hook = NETWORKS.get(name)
    return hook(game, encoder, options) if hook is not None else (encoder, dict(options or {}))


def network_names() -> list[str]:
    return sorted(NETWORKS.names())


def make_network(
    name: str, input_size: int, num_actions: int, hidden_sizes: Sequence[int], **options
) -> nn.Module:
    factory, _ = NETWORKS.get(name)
    return factory(input_size, num_actions, hidden_sizes, **options)


register_network("mlp", MLP)
register_network(
    "plain_mlp",
    lambda input_size, num_actions, hidden_sizes, **options: MLP(
        input_size, num_actions, hidden_sizes, skip_connections=False, normalize=False, **options
    ),
)


def count_parameters(module: nn.Module, trainable_only: bool = True) -> int:
    """Number of (trainable) parameters of `module`."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)


def reset_parameters(module: nn.Module, seed: int) -> None:
    """Re-initialises every submodule of `module` with its own default
    `reset_parameters()`, drawing from a private RNG seeded with `seed`, so
    runs are reproducible and torch's global RNG is left untouched."""
    cuda_devices = sorted({p.device.index or 0 for p in module.parameters() if p.is_cuda})
    with torch.random.fork_rng(devices=cuda_devices):
        torch.manual_seed(int(seed))
        for sub in module.modules():
            reset = getattr(sub, "reset_parameters", None)
            if callable(reset):
                reset()


def masked_softmax(logits: torch.Tensor, legal_mask: torch.Tensor) -> torch.Tensor:
    """Softmax over legal actions only: [B, A] -> [B, A], zero where illegal."""
    masked = torch.where(legal_mask, logits, torch.full_like(logits, -torch.inf))
    return torch.softmax(masked, dim=-1)


class ProbabilityNetwork(torch.nn.Module):
    """A logits network seen as OpenSpiel's Deep CFR policy network: outputs are
    probabilities (a softmax over the action dimension), as the network
    `open_spiel.python.pytorch.deep_cfr.DeepCFRSolver.solve()` returns.

    `forward(x)` takes the wrapped network's input (the information-state
    tensor for the MLP) and returns a softmax over all actions, like
    OpenSpiel's; `forward(x, legal_mask)` renormalises over the legal actions,
    which is exactly what the solver's `action_probabilities` plays. (Illegal
    actions are never trained, so without a mask some probability can land on
    them.)
    """

    def __init__(self, logits_network: torch.nn.Module):
        super().__init__()
        self.logits_network = logits_network

    def forward(self, x: torch.Tensor, legal_mask: torch.Tensor | None = None) -> torch.Tensor:
        logits = self.logits_network(x)
        if legal_mask is None:
            return torch.softmax(logits, dim=-1)
        return masked_softmax(logits, legal_mask)


_SMALLEST_NORMAL = float(torch.finfo(torch.float32).tiny)


class FlatAdam:
    """Adam (Kingma & Ba) with global gradient-norm clipping over one flat
    parameter buffer: the project's one optimiser, for both neural solvers.

    The module's parameters and gradients are re-pointed to views of two
    contiguous buffers, so one optimiser step is ~10 tensor ops instead of ~8
    per parameter tensor: on small networks (the Deep CFR regime) PyTorch's
    per-op overhead, not arithmetic, is the cost of a step. Same update as
    `torch.optim.Adam(lr, betas, eps)` preceded by
    `clip_grad_norm_(params, max_grad_norm)` (tested). From
    `FUSED_MIN_PARAMETERS` parameters on (wide inputs, e.g. NEST's one-hot
    information state) the update of the flat buffer is torch's own fused
    `torch.optim.Adam(fused=True)`, which is faster there.

    Why not `torch.optim.Adam` on the module (`docs/decisions.md`, "FlatAdam"):
    on the project's small networks (Kuhn, Leduc, team Goofspiel) a whole SGD
    step takes 0.5-0.85x the time with torch's foreach Adam and 0.55-1.0x with
    its fused Adam.

    On a CUDA device the step reads its learning rate and step count from
    device scalars (`prepare` writes them, `update` is the step itself), so
    that `update` can be captured in a CUDA graph and replayed (`Trainer`);
    there the fused optimiser is not used (inside a graph, op count is free).
    """

    FUSED_MIN_PARAMETERS = 1 << 17

    def __init__(self, module: nn.Module, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 max_grad_norm: float | None = 1.0):  # fmt: skip
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise ValueError("module has no trainable parameters")
        total = sum(p.numel() for p in params)
        self.params = torch.zeros(total, dtype=params[0].dtype, device=params[0].device)
        self.grads = torch.zeros_like(self.params)
        offset = 0
        for p in params:
            n = p.numel()
            self.params[offset : offset + n].copy_(p.detach().reshape(-1))
            offset += n
        self._fused = None
        self.bind(module)
        self.lr, self.betas, self.eps, self.max_grad_norm = float(lr), betas, float(eps), max_grad_norm
        self._lr_t = torch.zeros((), dtype=torch.float32, device=self.params.device)  # CUDA: `prepare`
        self._step_t = torch.zeros((), dtype=torch.float32, device=self.params.device)
        if total >= self.FUSED_MIN_PARAMETERS and not self.params.is_cuda:
            self.params.grad = self.grads
            self._fused = torch.optim.Adam([self.params], lr=self.lr, betas=betas, eps=self.eps, fused=True)
        self.reset_state()

    def bind(self, module: nn.Module) -> None:
        """Re-points `module`'s trainable parameters and gradients to views of
        the flat buffers (at construction, and after a copy or unpickling,
        which copy the module's tensors and the buffers separately)."""
        offset = 0
        for p in (p for p in module.parameters() if p.requires_grad):
            n = p.numel()
            p.data = self.params[offset : offset + n].view_as(p)
            p.grad = self.grads[offset : offset + n].view_as(p)
            offset += n
        if offset != self.params.numel():
            raise ValueError(f"module has {offset} trainable parameters, the optimiser {self.params.numel()}")
        if self._fused is not None:
            self.params.grad = self.grads

    def reset_state(self) -> None:
        """Forgets the moment estimates (a fresh optimiser for a re-initialised net)."""
        self.exp_avg = torch.zeros_like(self.params)
        self.exp_avg_sq = torch.zeros_like(self.params)
        self.steps = 0
        if self._fused is not None:
            self._fused.state.clear()

    def zero_grad(self) -> None:
        self.grads.zero_()

    @torch.no_grad()
    def step(self) -> None:
        if self.params.is_cuda:
            self.prepare()
            self.update()
            return
        self._clip()
        self.steps += 1
        if self._fused is not None:
            self._fused.param_groups[0]["lr"] = self.lr
            self._fused.step()
            return
        beta1, beta2 = self.betas
        self.exp_avg.mul_(beta1).add_(self.grads, alpha=1 - beta1)
        self.exp_avg_sq.mul_(beta2).addcmul_(self.grads, self.grads, value=1 - beta2)
        denom = (self._second_moment_root() / (1 - beta2**self.steps) ** 0.5).add_(self.eps)
        self.params.addcdiv_(self.exp_avg, denom, value=-self.lr / (1 - beta1**self.steps))

    def _clip(self) -> None:
        if self.max_grad_norm is not None:
            norm = torch.linalg.vector_norm(self.grads)
            self.grads.mul_(torch.clamp(self.max_grad_norm / (norm + 1e-6), max=1.0))

    def prepare(self) -> None:
        """Counts the step and writes this step's learning rate and count to the
        device scalars `update` reads (outside a captured graph: no sync)."""
        self.steps += 1
        self._lr_t.fill_(self.lr)
        self._step_t.fill_(self.steps)

    @torch.no_grad()
    def update(self) -> None:
        """The step itself, on device tensors only (capturable): clip, then
        Adam with the bias corrections 1 - beta^t of the step count `prepare` wrote."""
        self._clip()
        beta1, beta2 = self.betas
        self.exp_avg.mul_(beta1).add_(self.grads, alpha=1 - beta1)
        self.exp_avg_sq.mul_(beta2).addcmul_(self.grads, self.grads, value=1 - beta2)
        denom = (self._second_moment_root() / (1 - beta2**self._step_t).sqrt()).add_(self.eps)
        self.params.sub_(self.exp_avg / denom * (self._lr_t / (1 - beta1**self._step_t)))

    def _second_moment_root(self) -> torch.Tensor:
        """sqrt(v), computed faster where most second moments are exactly 0 (the
        first layer on a wide one-hot input, whose unused columns never get a
        gradient): torch's sqrt is several times slower on zeros than on
        normal floats, so v is raised to the smallest normal float first.
        sqrt(1.2e-38) / sqrt(1 - beta2^t) <= 3.4e-18 is far below half an ulp
        of eps >= 1e-9, so the update is unchanged bit for bit."""
        if self.eps < 1e-9:
            return self.exp_avg_sq.sqrt()
        return self.exp_avg_sq.clamp_min(_SMALLEST_NORMAL).sqrt_()

    def state_dict(self) -> dict:
        exp_avg, exp_avg_sq = self.exp_avg, self.exp_avg_sq
        if self._fused is not None and self._fused.state.get(self.params):
            exp_avg, exp_avg_sq = (self._fused.state[self.params][k] for k in ("exp_avg", "exp_avg_sq"))
        return {"exp_avg": exp_avg.clone(), "exp_avg_sq": exp_avg_sq.clone(), "steps": self.steps}

    def load_state_dict(self, state: dict) -> None:
        if state["exp_avg"].shape != self.params.shape:
            raise ValueError(
                f"optimiser state has {state['exp_avg'].numel()} parameters, network has {self.params.numel()}"
            )
        self.reset_state()
        self.exp_avg = state["exp_avg"].to(self.params).clone()
        self.exp_avg_sq = state["exp_avg_sq"].to(self.params).clone()
        self.steps = int(state["steps"])
        if self._fused is not None and self.steps:
            self._fused.state[self.params] = {
                "step": torch.tensor(float(self.steps), dtype=torch.float32, device=self.params.device),
                "exp_avg": self.exp_avg, "exp_avg_sq": self.exp_avg_sq,
            }  # fmt: skip
