"""CFR-MIX (Li, Zhang, Wang, Xue, An: "CFR-MIX: Solving Imperfect Information
Extensive-Form Games with Combinatorial Action Space", IJCAI 2021) and the
baselines of its Section 5, as one OpenSpiel `Policy`.

    solver = openspiel_cfrx.CFRMixSolver(team_game, num_iterations=50)
    solver.solve()
    openspiel_cfrx.nash_conv(team_game, solver)      # tiny instances, exact
    solver.agent_action_probabilities(state)          # decentralised view
    solver.save_checkpoint("run.pt")                  # resume: a solver built with the
    solver.load_checkpoint("run.pt")                  # same game and settings

The team (player 0) is n agents sharing one information set I. Its strategy
is kept in individual form: agent i plays sigma_i(I, .) over its own actions
and the joint strategy is the product (eq. 1). The team's cumulative-regret
network is an *agent network* R_i(I, a_i) >= 0 (softplus output, the RM+
setting of Section 4.2), evaluated on [information_state_tensor(team),
agent_observation_tensor(i)] and shared by all agents (parameter sharing; one
network per agent with `share_parameters=False`), followed by a *mixing layer*
R_tot(I, a) = prod_i R_i(I, a_i) (eq. 4) that is only used in training, on the
joint actions whose regrets a traversal sampled. Agents act by regret
matching+ on their own R_i (decentralised execution); by Theorem 2 this is
exactly regret matching+ on R_tot.

Backbones (Appendix B, Algorithm 1):

* "double_neural" (CFR-MIX): cumulative regrets are *accumulated* through the
  network: at iteration t the net is fine-tuned on targets
  (R(I, a | theta^t) + r^(I, a))^+ for the information sets sampled at t,
  where r^ = sum of the sampled regrets at I over the K traversals / K, and on
  `anchor` information sets from earlier iterations (reservoir) with target
  R(I, a | theta^t) (r^ = 0: not sampled), so that the net keeps tracking
  R^t everywhere. The average-strategy net accumulates
  S^{t+1} = S^t + t * sigma^ the same way (linear averaging, as CFR+).
* "deep_cfr" (Deep CFR + MIX): a reservoir of all sampled regrets and a net
  re-initialised and fitted every iteration to their t-weighted mean
  (Brown et al. 2019), through the same mixing layer.

Targets are kept in units of a per-player scale (a scalar re-chosen every
iteration so targets are O(1)); regret matching and strategy normalisation are
invariant to it.

Variants (`VARIANTS`), all on the same traversal and training code:
  cfr_mix               double neural + mixing layer + parameter sharing
  cfr_mix_no_sharing    ... one agent network per agent (ablation, Fig. 4b)
  deep_cfr_mix          Deep CFR backbone + mixing layer (Fig. 3 "Deep CFR + MIX")
  double_neural_joint   double neural over joint actions (one head of size
                        prod(n_i); only for small joint spaces)
  deep_cfr_joint        Deep CFR backbone over joint actions with probe
                        sampling (`openspiel_cfrx.DeepCFRSolver(game)` is the
                        external-sampling joint-action Deep CFR)
  independent           each agent its own regret from its marginal,
                        no mixing (Fig. 4a "individual")

The average strategy of the factored team is the product of per-agent average
strategies: a product, like every iterate, so it can be played without
communication (the mixture of products that exact averaging would give is in
general not a product).
"""

from __future__ import annotations

import copy
import logging
import math
import random
import time
from collections.abc import Callable, Sequence

import numpy as np
import pyspiel
import torch
from open_spiel.python import policy as policy_lib
from torch import nn
from torch.nn import functional as F

from openspiel_cfrx import team as team_lib
from openspiel_cfrx.deep import checkpoint as checkpoint_lib
from openspiel_cfrx.deep.memories import make_memory
from openspiel_cfrx.deep.networks import (
    MLP,
    FlatAdam,
    make_network,
    normalize_features,
    reset_parameters,
)
from openspiel_cfrx.deep.probe_traversal import AgentView, Query, make_query, run_traversals
from openspiel_cfrx.deep.validation import TrainingDivergedError, check_device, check_settings
from openspiel_cfrx.tree import check_game_supported

logger = logging.getLogger(__name__)

VARIANTS = {
    "cfr_mix": dict(backbone="double_neural", team_view="factored", regret_targets="joint", share=True),
    "cfr_mix_no_sharing": dict(backbone="double_neural", team_view="factored", regret_targets="joint", share=False),
    "deep_cfr_mix": dict(backbone="deep_cfr", team_view="factored", regret_targets="joint", share=True),
    "double_neural_joint": dict(backbone="double_neural", team_view="joint", regret_targets="joint", share=True),
    "deep_cfr_joint": dict(backbone="deep_cfr", team_view="joint", regret_targets="joint", share=True),
    "independent": dict(backbone="double_neural", team_view="factored", regret_targets="independent", share=True),
}

INFOSET_ENCODINGS = ("tensor", "compact")

_EVAL_BATCH = 4096
_TINY = 1e-12


class AgentNetwork(nn.Module):
    """Agent network(s) with non-negative outputs: [B, F], [B, n, F_a] -> [B, n, A].

    With `share=True` one network serves all agents (its input carries the
    agent's own features, including its id); otherwise agent i has network i.
    """

    def __init__(
        self,
        feature_size: int,
        agent_feature_size: int,
        num_agents: int,
        max_actions: int,
        hidden_sizes: Sequence[int],
        share: bool = True,
        network: str = "mlp",
    ):
        super().__init__()
        self.num_agents = int(num_agents)
        self.share = bool(share)
        count = 1 if self.share else self.num_agents
        self.nets = nn.ModuleList(
            make_network(network, feature_size + agent_feature_size, max_actions, hidden_sizes) for _ in range(count)
        )

    def forward(self, features: torch.Tensor, agent_features: torch.Tensor) -> torch.Tensor:
        batch, n = features.shape[0], self.num_agents
        net = self.nets[0]
        if self.share and type(net) is MLP and not net.skips[0]:
            return F.softplus(_shared_mlp(net, features, agent_features))
        x = torch.cat([features[:, None, :].expand(batch, n, features.shape[1]), agent_features], dim=2)
        if self.share:
            out = self.nets[0](x.reshape(batch * n, -1)).reshape(batch, n, -1)
        else:
            out = torch.stack([net(x[:, i]) for i, net in enumerate(self.nets)], dim=1)
        return F.softplus(out)


def _shared_mlp(net: MLP, features: torch.Tensor, agent_features: torch.Tensor) -> torch.Tensor:
    """`net` on [features, agent_features[:, i]] for every agent i: [B, n, A].

    The same function as the concatenated input (up to float summation
    order), computed cheaply: the first layer's infoset part W_f x is computed
    once per row instead of once per agent, and only over the input columns
    that are non-zero somewhere in the batch (information-state tensors are
    sparse one-hots: NEST 15x15 has ~150 non-zeros of 32,656), so a batch
    costs O(B * non-zero columns * H) instead of O(B * n * F * H), forward
    and backward."""
    first = net.layers[0]
    size = features.shape[1]
    columns = torch.nonzero(features.abs().sum(dim=0) != 0).squeeze(1)  # (faster here than ne().any())
    hidden = features.index_select(1, columns) @ first.weight[:, :size].index_select(1, columns).T  # [B, H]
    hidden = hidden[:, None, :] + F.linear(agent_features, first.weight[:, size:], first.bias)  # [B, n, H]
    x = F.relu(hidden).reshape(-1, hidden.shape[-1])
    for layer, skip in zip(net.layers[1:], net.skips[1:], strict=True):
        x = F.relu(layer(x) + x) if skip else F.relu(layer(x))
    if net.normalize:
        x = normalize_features(x)
    return net.action_head(x).reshape(features.shape[0], agent_features.shape[1], -1)


def mix(agent_values: torch.Tensor, pairs: torch.Tensor) -> torch.Tensor:
    """Mixing layer, eq. 4: R_tot(I, a) = prod_i R_i(I, a_i).

    Args:
      agent_values: [B, n, A] non-negative R_i.
      pairs: [B, m, n] int64 individual actions; -1 leaves agent i out of the
        product (independent targets involve one agent only).
    Returns:
      [B, m].
    """
    index = pairs.clamp(min=0).transpose(1, 2)  # [B, n, m]
    gathered = torch.gather(agent_values, 2, index)  # [B, n, m]
    gathered = torch.where(pairs.transpose(1, 2) >= 0, gathered, torch.ones_like(gathered))
    return gathered.prod(dim=1)


def regret_matching_plus(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Per-agent RM+ on non-negative R_i: [B, n, A], legal [B, n, A] -> [B, n, A].

    Rows with no positive legal value play uniformly over legal actions.
    """
    positive = np.where(legal, np.maximum(values, 0.0), 0.0)
    total = positive.sum(axis=2, keepdims=True)
    uniform = legal / np.maximum(legal.sum(axis=2, keepdims=True), 1)
    return np.where(total > _TINY, positive / np.where(total > _TINY, total, 1.0), uniform)


class _Packer:
    """Packs (infoset, per-agent legal masks, pairs) rows into a flat memory row.

    Layout of `features` [F + n*F_a + n*A + m*n]: infoset features, agent
    features, legal masks (0/1), pairs (-1 padded); `targets` [m] and the
    memory's `legal_mask` [m] mark which pairs are real.
    """

    def __init__(self, feature_size, agent_feature_size, num_agents, max_actions, max_pairs):
        self.f, self.fa, self.n, self.a, self.m = feature_size, agent_feature_size, num_agents, max_actions, max_pairs
        self.width = self.f + self.n * self.fa + self.n * self.a + self.m * self.n

    def pack(self, queries: list[Query], pairs: list[list], values: list[list]) -> tuple[np.ndarray, ...]:
        rows = np.zeros((len(queries), self.width), dtype=np.float32)
        targets = np.zeros((len(queries), self.m), dtype=np.float32)
        valid = np.zeros((len(queries), self.m), dtype=bool)
        legal_off = self.f + self.n * self.fa
        pair_off = legal_off + self.n * self.a
        for r, (query, row_pairs, row_values) in enumerate(zip(queries, pairs, values, strict=True)):
            rows[r, : self.f] = query.features
            if self.fa:
                rows[r, self.f : legal_off] = query.agent_features.reshape(-1)
            for agent, actions in enumerate(query.legal):
                rows[r, legal_off + agent * self.a + np.asarray(actions)] = 1.0
            count = len(row_pairs)
            if count > self.m:
                raise ValueError(f"{count} regret pairs exceed the packed width {self.m}")
            block = np.full((self.m, self.n), -1.0, dtype=np.float32)
            block[:count] = np.asarray(row_pairs, dtype=np.float32).reshape(count, self.n)
            rows[r, pair_off:] = block.reshape(-1)
            targets[r, :count] = row_values
            valid[r, :count] = True
        return rows, targets, valid

    def unpack(self, rows: torch.Tensor):
        legal_off = self.f + self.n * self.fa
        pair_off = legal_off + self.n * self.a
        b = rows.shape[0]
        features = rows[:, : self.f]
        agent_features = rows[:, self.f : legal_off].reshape(b, self.n, self.fa)
        legal = rows[:, legal_off:pair_off].reshape(b, self.n, self.a) > 0.5
        pairs = rows[:, pair_off:].reshape(b, self.m, self.n).round().long()
        return features, agent_features, legal, pairs


class _Adam(FlatAdam):
    """`FlatAdam` with the same update, bit for bit, computed faster when most
    second moments are exactly 0 (the first layer on a wide one-hot input,
    whose unused columns never get a gradient): torch's sqrt is several times
    slower on zeros than on normal floats, so the moments are raised to the
    smallest normal float first. sqrt(1.2e-38) / sqrt(1 - beta2^t) <= 3.4e-18
    is far below half an ulp of eps = 1e-8, so `denom` is unchanged."""

    _SMALLEST_NORMAL = float(torch.finfo(torch.float32).tiny)

    def _second_moment_root(self) -> torch.Tensor:
        if self.eps < 1e-9:
            return super()._second_moment_root()
        return self.exp_avg_sq.clamp_min(self._SMALLEST_NORMAL).sqrt_()


# Constructor settings and their rules (openspiel_cfrx.deep.validation).
SETTING_RULES = {
    "num_iterations": "int>=1",
    "num_traversals": "int>=1",
    "joint_cap": "int>=1",
    "regret_train_steps": "int>=1",
    "policy_train_steps": "int>=1",
    "batch_size": "int>=1",
    "learning_rate": "real>0",
    "gradient_clip": "real>0|None",
    "memory_capacity": "int>=1",
    "anchor_ratio": "real>=0",
    "linear_averaging": "bool",
    "infoset_encoding": INFOSET_ENCODINGS,
    "num_threads": "int>=1|None",
    "seed": "int>=0",
    "traversal_batch_size": "int>=1",
    "callback_every": "int>=1",
}


class _Model:
    """One player's network (regret or average strategy) with its optimiser,
    memory, scale and training routine."""

    def __init__(self, view: AgentView, feature_size: int, hidden, share, network, lr, clip, capacity, max_pairs,
                 seed: int, device):  # fmt: skip
        self.view = view
        self.net = AgentNetwork(feature_size, view.agent_feature_size, view.num_agents, view.max_actions, hidden,
                                share, network).to(device)  # fmt: skip
        self.seed = seed
        reset_parameters(self.net, seed)
        self.optimizer = _Adam(self.net, lr=lr, max_grad_norm=clip)
        self.packer = _Packer(feature_size, view.agent_feature_size, view.num_agents, view.max_actions, max_pairs)
        self.memory = make_memory("reservoir", capacity, self.packer.width, max_pairs)
        self.scale = 1.0
        self.trained = False
        self.device = device
        self.losses: list[float] = []

    @torch.inference_mode()
    def values(self, features: np.ndarray, agent_features: np.ndarray) -> np.ndarray:
        """Scaled network outputs [B, n, A] (zeros before the first training)."""
        batch = features.shape[0]
        if not self.trained:
            return np.zeros((batch, self.view.num_agents, self.view.max_actions))
        out = []
        for lo in range(0, batch, _EVAL_BATCH):
            x = torch.from_numpy(features[lo : lo + _EVAL_BATCH]).to(self.device)
            xa = torch.from_numpy(agent_features[lo : lo + _EVAL_BATCH]).to(self.device)
            out.append(self.net(x, xa).cpu().numpy().astype(np.float64))
        return np.concatenate(out) * self.scale

    @torch.inference_mode()
    def _prev_mixed(self, rows: np.ndarray) -> np.ndarray:
        """R_tot(I, pair | theta^t) in real units for packed rows: [B, m]."""
        if not self.trained or rows.shape[0] == 0:
            return np.zeros((rows.shape[0], self.packer.m))
        out = []
        for lo in range(0, rows.shape[0], _EVAL_BATCH):
            f, fa, _, pairs = self.packer.unpack(torch.from_numpy(rows[lo : lo + _EVAL_BATCH]).to(self.device))
            out.append(mix(self.net(f, fa), pairs).cpu().numpy().astype(np.float64))
        return np.concatenate(out) * self.scale

    def _fit(self, rows, targets, valid, weights, steps, batch_size, rng) -> float:
        """Minimises mean_rows w * sum_pairs (R_tot - target)^2 over the given rows."""
        rows_t = torch.from_numpy(rows)
        targets_t = torch.from_numpy(targets.astype(np.float32))
        valid_t = torch.from_numpy(valid)
        weights_t = torch.from_numpy(weights.astype(np.float32))
        recent = []
        self.net.train()
        for step in range(steps):
            index = torch.from_numpy(rng.integers(0, rows.shape[0], size=min(batch_size, rows.shape[0])))
            f, fa, _, pairs = self.packer.unpack(rows_t[index].to(self.device))
            predicted = mix(self.net(f, fa), pairs)
            y = targets_t[index].to(self.device)
            m = valid_t[index].to(self.device)
            squared = torch.where(m, (predicted - y) ** 2, torch.zeros_like(predicted)).sum(dim=1)
            loss = (weights_t[index].to(self.device) * squared).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if step >= steps - max(1, steps // 10):
                recent.append(float(loss.detach()))
        self.net.eval()
        if recent and not np.all(np.isfinite(recent)):
            raise TrainingDivergedError(f"loss {recent[-1]}")
        return float(np.mean(recent)) if recent else float("nan")

    def accumulate(self, rows, increments, valid, iteration, steps, batch_size, anchor_ratio, rng) -> float:
        """Double-neural update: fit R^{t+1} = (R^t + increment)^+ on the sampled
        rows and R^{t+1} = R^t on anchor rows from earlier iterations."""
        if rows.shape[0] == 0:
            return float("nan")
        keys = {row[: self.packer.f].tobytes() for row in rows}
        chosen = np.zeros(0, dtype=np.int64)
        size = len(self.memory)
        if size and anchor_ratio > 0:
            want = int(math.ceil(anchor_ratio * rows.shape[0]))
            candidates = rng.integers(0, size, size=min(2 * want, 4 * size))
            fresh = [i for i in candidates if self.memory.features[i, : self.packer.f].tobytes() not in keys]
            chosen = np.asarray(fresh[:want], dtype=np.int64)
        anchors = self.memory.features[chosen]
        anchor_valid = self.memory.legal_mask[chosen]
        prev_rows = self._prev_mixed(rows)
        new_targets = np.maximum(prev_rows + increments, 0.0)
        anchor_targets = self._prev_mixed(anchors)
        all_rows = np.concatenate([rows, anchors])
        all_targets = np.concatenate([new_targets, anchor_targets])
        all_valid = np.concatenate([valid, anchor_valid])
        magnitude = float(np.abs(new_targets[valid]).mean()) if valid.any() else 0.0
        if magnitude > _TINY:
            self.scale = magnitude
        loss = self._fit(all_rows, all_targets / self.scale, all_valid, np.ones(all_rows.shape[0]), steps,
                         batch_size, rng)  # fmt: skip
        self.trained = True
        self.memory.add(rows, increments.astype(np.float32), valid, iteration, rng)
        self.losses.append(loss)
        return loss

    def state_dict(self) -> dict:
        """Everything that changes while training (memory as numpy arrays)."""
        return {
            "net": self.net.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "memory": self.memory.state_dict(),
            "scale": float(self.scale),
            "trained": bool(self.trained),
            "losses": [float(x) for x in self.losses],
            "seed": int(self.seed),
        }

    def load_state_dict(self, state: dict) -> None:
        self.net.load_state_dict(state["net"])  # in place: the optimiser's flat buffer stays bound
        self.optimizer.load_state_dict(state["optimizer"])
        self.memory.load_state_dict(state["memory"])
        self.scale = float(state["scale"])
        self.trained = bool(state["trained"])
        self.losses = [float(x) for x in state["losses"]]
        self.seed = int(state["seed"])

    def refit(self, rows, samples, valid, iteration, steps, batch_size, rng, linear_weighting=True) -> float:
        """Deep CFR update: add the raw samples, re-initialise, fit the
        t-weighted mean of everything in the reservoir (Brown et al. 2019)."""
        if rows.shape[0]:
            self.memory.add(rows, samples.astype(np.float32), valid, iteration, rng)
        size = len(self.memory)
        if size == 0:
            return float("nan")
        reset_parameters(self.net, self.seed + 7919 * iteration)
        self.optimizer.reset_state()
        targets = self.memory.targets[:size].astype(np.float64)
        mask = self.memory.legal_mask[:size]
        magnitude = float(np.abs(targets[mask]).mean()) if mask.any() else 0.0
        self.scale = magnitude if magnitude > _TINY else 1.0
        its = self.memory.iteration[:size].astype(np.float64)
        weights = its * (2.0 / iteration) if linear_weighting else np.ones(size)
        loss = self._fit(self.memory.features[:size], targets / self.scale, mask, weights, steps, batch_size, rng)
        self.trained = True
        self.losses.append(loss)
        return loss


def _compact_features(state, player: int) -> np.ndarray:
    return np.asarray(state.compact_information_state_array(player), dtype=np.float32)


def _compact_agent_features(state) -> np.ndarray:
    return np.asarray(state.compact_agent_features(), dtype=np.float32)


def _team_views(game, team_view: str, adversary_actions: int) -> list[AgentView]:
    if team_view == "factored":
        team = AgentView(
            team_lib.TEAM_PLAYER,
            game.num_team_agents(),
            tuple(int(n) for n in game.agent_num_actions()),
            int(game.agent_observation_size()),
            True,
        )
    else:
        team = AgentView(team_lib.TEAM_PLAYER, 1, (int(game.num_distinct_actions()),), 0, False)
    adversary = AgentView(team_lib.ADVERSARY_PLAYER, 1, (adversary_actions,), 0, False)
    return [team, adversary]


class CFRMixSolver(policy_lib.Policy):
    """CFR-MIX and its baselines on a team-adversary game; an OpenSpiel `Policy`
    whose team probabilities are the product of the agents' average strategies.

    Args:
      game: a 2-player zero-sum pyspiel game offering the factored team protocol
        (`openspiel_cfrx.team.FactoredTeamGame`), team = player 0.
      variant: one of `VARIANTS` (default "cfr_mix").
      num_iterations: CFR iterations T run by `solve()`.
      num_traversals: K probe-sampling traversals per player per iteration.
      regret_network_layers, policy_network_layers: hidden widths of the agent
        networks (regret and average strategy).
      joint_cap: at the team's sampled information sets, regrets are computed
        for all legal joint actions when there are at most this many, else for
        `joint_cap` sampled ones (see `probe_traversal`).
      regret_train_steps, policy_train_steps: Adam steps per iteration.
      batch_size: rows per Adam step.
      learning_rate, gradient_clip: Adam step size and gradient-norm clip.
      memory_capacity: rows per reservoir (anchors for the double-neural
        backbone, samples for the Deep CFR backbone).
      anchor_ratio: anchor rows per sampled row in a double-neural update.
      linear_averaging: weight iteration t's strategy by t in the average (CFR+).
      infoset_encoding: the networks' information-state input. "tensor"
        (default): `information_state_tensor(player)`. "compact": the game's
        own compact, lossy network input, for games whose states offer
        `compact_information_state_array(player)` and whose game offers
        `compact_information_state_size()` (NEST: `games.nest.CompactLayout`);
        used everywhere the networks are queried and recorded in `config`.
        When the game also offers `compact_agent_feature_size()` and states
        `compact_agent_features()` ([n, F_a]), factored team agents take those
        as their own inputs instead of `agent_observation_tensor(i)`.
      share_parameters: overrides the variant's parameter sharing.
      network: registered network name for the agent networks.
      num_threads: `torch.set_num_threads` (process-wide); default 1.
      seed: all randomness derives from it.
      callback, callback_every: `callback(solver)` after every N-th iteration.

    The adversary's network head has `openspiel_cfrx.team.adversary_num_actions(game)`
    outputs: the game's `adversary_num_actions()`, or for games without that
    method the largest agent action count (logged; a legal adversary action
    beyond it raises a ValueError saying what to add to the game).

    Checkpoints: `save_checkpoint(path)` / `load_checkpoint(path)` (same API
    as `DeepCFRSolver`); a resumed run continues exactly. `config` holds the
    settings a checkpoint must match.
    """

    def __init__(
        self,
        game: pyspiel.Game,
        variant: str = "cfr_mix",
        num_iterations: int = 100,
        num_traversals: int = 100,
        regret_network_layers: Sequence[int] = (64, 64),
        policy_network_layers: Sequence[int] = (64, 64),
        *,
        joint_cap: int = 64,
        regret_train_steps: int = 200,
        policy_train_steps: int = 200,
        batch_size: int = 256,
        learning_rate: float = 1e-3,
        gradient_clip: float | None = 1.0,
        memory_capacity: int = 20_000,
        anchor_ratio: float = 1.0,
        linear_averaging: bool = True,
        infoset_encoding: str = "tensor",
        share_parameters: bool | None = None,
        network: str = "mlp",
        num_threads: int | None = 1,
        device: str = "cpu",
        seed: int = 0,
        traversal_batch_size: int = 256,
        callback: Callable[[CFRMixSolver], None] | None = None,
        callback_every: int = 1,
    ):
        if variant not in VARIANTS:
            raise ValueError(f"unknown CFR-MIX variant {variant!r}; choose from {', '.join(VARIANTS)}")
        if not team_lib.is_factored_team_game(game):
            raise TypeError(
                f"CFRMixSolver needs a team-adversary game offering the factored team protocol "
                f"(openspiel_cfrx.team.FactoredTeamGame: num_team_agents(), agent_num_actions(), ...); "
                f"game '{game.get_type().short_name}' does not. Load e.g. "
                "'team_goofspiel(...)' or 'nest(...)' after `import games`, or use "
                "openspiel_cfrx.DeepCFRSolver for ordinary 2-player games"
            )
        check_game_supported(game)
        check_settings(locals(), SETTING_RULES)
        if joint_cap < 2:
            raise ValueError(f"joint_cap must be >= 2 (a* plus at least one probe), got {joint_cap}")
        check_device(device)
        if infoset_encoding == "compact" and not callable(getattr(game, "compact_information_state_size", None)):
            raise ValueError(
                f"infoset_encoding='compact' needs a game with compact_information_state_size() and "
                f"states with compact_information_state_array(player); game "
                f"'{game.get_type().short_name}' has none: use infoset_encoding='tensor'"
            )
        super().__init__(game, [0, 1])
        self._game = game
        self.variant = variant
        config = dict(VARIANTS[variant])
        if share_parameters is not None:
            config["share"] = bool(share_parameters)
        self._config = config
        if config["team_view"] == "joint" and game.num_distinct_actions() > 100_000:
            raise ValueError(
                f"variant {variant!r} needs one network output per joint action, and this game has "
                f"{game.num_distinct_actions()} joint actions; use a factored variant (cfr_mix)"
            )
        if num_threads is not None:
            torch.set_num_threads(int(num_threads))
        self._device = torch.device(device)
        self._adversary_declared = callable(getattr(game, "adversary_num_actions", None))
        adversary_actions = team_lib.adversary_num_actions(game)
        if not self._adversary_declared:
            logger.warning(
                "game '%s' has no adversary_num_actions(); assuming the adversary has "
                "max(agent_num_actions()) = %d actions (add the method to the game to be sure)",
                game.get_type().short_name,
                adversary_actions,
            )
        self.infoset_encoding = infoset_encoding
        self._views = _team_views(game, config["team_view"], adversary_actions)
        if infoset_encoding == "compact":
            for view in self._views:
                view.encoder = _compact_features
            team = self._views[team_lib.TEAM_PLAYER]
            if team.factored and callable(getattr(game, "compact_agent_feature_size", None)):
                team.agent_encoder = _compact_agent_features
                team.agent_feature_size = int(game.compact_agent_feature_size())
            self._feature_sizes = [int(game.compact_information_state_size())] * 2
        else:
            self._feature_sizes = [int(np.prod(game.information_state_tensor_shape()))] * 2
        self._num_iterations = int(num_iterations)
        self._num_traversals = int(num_traversals)
        self._joint_cap = int(joint_cap)
        self._regret_steps = int(regret_train_steps)
        self._policy_steps = int(policy_train_steps)
        self._batch_size = int(batch_size)
        self._anchor_ratio = float(anchor_ratio)
        self._linear_averaging = bool(linear_averaging)
        self._traversal_batch_size = int(traversal_batch_size)
        self._callback = callback
        self._callback_every = int(callback_every)
        self._np_rng = np.random.default_rng(seed)
        self._py_rng = random.Random(seed)
        self._regret_models = []
        self._policy_models = []
        for p, view in enumerate(self._views):
            if config["regret_targets"] == "independent" and view.num_agents > 1:
                regret_pairs = sum(view.num_actions)
            else:
                regret_pairs = min(self._joint_cap, math.prod(view.num_actions))
            share = config["share"] if p == team_lib.TEAM_PLAYER else True
            self._regret_models.append(_Model(view, self._feature_sizes[p], regret_network_layers, share, network,
                                              learning_rate, gradient_clip, memory_capacity, regret_pairs,
                                              seed * 1009 + p, self._device))  # fmt: skip
            self._policy_models.append(_Model(view, self._feature_sizes[p], policy_network_layers, share, network,
                                              learning_rate, gradient_clip, memory_capacity, sum(view.num_actions),
                                              seed * 1009 + 2 + p, self._device))  # fmt: skip
        # Settings a checkpoint must match (shapes and the variant; see save_checkpoint).
        self.config = {
            "game": str(game),
            "variant": variant,
            **{key: config[key] for key in ("backbone", "team_view", "regret_targets")},
            "share_parameters": bool(config["share"]),
            "infoset_encoding": infoset_encoding,
            "views": [[v.num_agents, list(v.num_actions), v.agent_feature_size] for v in self._views],
            "feature_sizes": list(self._feature_sizes),
            "regret_network_layers": [int(h) for h in regret_network_layers],
            "policy_network_layers": [int(h) for h in policy_network_layers],
            "network": network,
            "memory_capacity": int(memory_capacity),
            "joint_cap": self._joint_cap,
        }
        self._iteration = 1
        self.nodes_touched = 0
        self.probes = 0
        self.traversal_seconds = 0.0
        self.training_seconds = 0.0
        self.history: list[dict] = []
        self.checkpoint_extra = None  # `extra` of the last loaded checkpoint

    # ------------------------------------------------------------- introspection
    @property
    def iteration(self) -> int:
        """Completed iterations."""
        return self._iteration - 1

    @property
    def views(self) -> list[AgentView]:
        return list(self._views)

    @property
    def num_team_regret_networks(self) -> int:
        """Agent networks behind the team's regrets (1 with parameter sharing, n without)."""
        return len(self._regret_models[team_lib.TEAM_PLAYER].net.nets)

    def regret_network(self, player: int) -> AgentNetwork:
        return self._regret_models[player].net

    def policy_network(self, player: int) -> AgentNetwork:
        return self._policy_models[player].net

    def num_parameters(self, player: int = team_lib.TEAM_PLAYER) -> int:
        return sum(p.numel() for p in self._regret_models[player].net.parameters())

    # ------------------------------------------------------------------ solving
    def solve(self):
        """Runs the remaining iterations. Returns (average-strategy networks
        [team, adversary], regret losses {player: [...]}, policy losses {player: [...]})."""
        for _ in range(self._iteration, self._num_iterations + 1):
            self.run_iteration()
        return (
            [m.net for m in self._policy_models],
            {p: list(m.losses) for p, m in enumerate(self._regret_models)},
            {p: list(m.losses) for p, m in enumerate(self._policy_models)},
        )

    def _answer(self, queries: list[Query], models=None) -> list[np.ndarray]:
        """Current strategies (RM+ on each agent's R_i) for a round of queries."""
        models = self._regret_models if models is None else models
        answers: list = [None] * len(queries)
        by_player: dict[int, list[int]] = {}
        for index, query in enumerate(queries):
            by_player.setdefault(query.player, []).append(index)
        for player, indices in by_player.items():
            probs = self._strategies(models[player], [queries[i] for i in indices])
            for i, row in zip(indices, probs, strict=True):
                answers[i] = row
        return answers

    def _strategies(self, model: _Model, queries: list[Query]) -> np.ndarray:
        view = model.view
        legal = np.zeros((len(queries), view.num_agents, view.max_actions), dtype=bool)
        for r, query in enumerate(queries):
            for agent, actions in enumerate(query.legal):
                if actions and actions[-1] >= view.max_actions:
                    raise ValueError(self._width_error(query.player, actions[-1], view.max_actions))
                legal[r, agent, actions] = True
        features = np.stack([q.features for q in queries]).astype(np.float32, copy=False)
        agent_features = np.stack([q.agent_features for q in queries]).astype(np.float32, copy=False)
        return regret_matching_plus(model.values(features, agent_features), legal)

    def _width_error(self, player: int, action: int, width: int) -> str:
        name = self._game.get_type().short_name
        if player != team_lib.ADVERSARY_PLAYER:
            return (
                f"player {player} of game '{name}' has legal action {action} but its network has "
                f"{width} outputs: the game's agent_num_actions() / num_distinct_actions() are too small"
            )
        if self._adversary_declared:
            return (
                f"the adversary of game '{name}' has legal action {action}, but the game's "
                f"adversary_num_actions() is {width}: inconsistent sizes, fix adversary_num_actions() "
                f"to count every adversary action"
            )
        return (
            f"the adversary of game '{name}' has legal action {action}, but the game has no "
            f"adversary_num_actions() and CFR-MIX assumed max(agent_num_actions()) = {width} "
            f"actions; give the game an adversary_num_actions() method returning the adversary's "
            f"number of distinct actions"
        )

    def run_iteration(self) -> dict:
        """One iteration of Algorithm 1: for each player, K traversals, then
        its regret network and the opponent's average-strategy network."""
        t = self._iteration
        start = time.perf_counter()
        stats = {"iteration": t, "nodes": 0, "regret_loss": [None, None], "policy_loss": [None, None]}
        for player in (0, 1):
            t0 = time.perf_counter()
            record = None
            for lo in range(0, self._num_traversals, self._traversal_batch_size):
                count = min(self._traversal_batch_size, self._num_traversals - lo)
                part, _ = run_traversals(self._game, player, count, self._views, self._answer, self._py_rng,
                                         self._config["regret_targets"], self._joint_cap)  # fmt: skip
                record = part if record is None else _merge(record, part)
            t1 = time.perf_counter()
            stats["nodes"] += record.nodes
            self.probes += record.probes
            try:
                stats["regret_loss"][player] = self._train_regrets(player, record, t)
                stats["policy_loss"][1 - player] = self._train_policy(1 - player, record, t)
            except TrainingDivergedError as e:
                kind = "regret" if stats["regret_loss"][player] is None else "average-strategy"
                raise TrainingDivergedError(
                    f"{kind} network ({e}) at iteration {t}: training diverged; lower "
                    "learning_rate or set gradient_clip"
                ) from None
            self.traversal_seconds += t1 - t0
            self.training_seconds += time.perf_counter() - t1
        self.nodes_touched += stats["nodes"]
        self._iteration += 1
        stats["seconds"] = time.perf_counter() - start
        self.history.append(stats)
        if self._callback is not None and t % self._callback_every == 0:
            self._callback(self)
        return stats

    def _train_regrets(self, player: int, record, t: int) -> float:
        model = self._regret_models[player]
        if self._config["backbone"] == "deep_cfr":
            rows, targets, valid = model.packer.pack(record.regret_queries, record.regret_pairs,
                                                     record.regret_values)  # fmt: skip
            return model.refit(rows, targets, valid, t, self._regret_steps, self._batch_size, self._np_rng)
        queries, pairs, values = _aggregate(record.regret_queries, record.regret_pairs, record.regret_values,
                                            1.0 / self._num_traversals, model.packer.m)  # fmt: skip
        rows, increments, valid = model.packer.pack(queries, pairs, values)
        return model.accumulate(rows, increments, valid, t, self._regret_steps, self._batch_size,
                                self._anchor_ratio, self._np_rng)  # fmt: skip

    def _train_policy(self, player: int, record, t: int) -> float:
        """Cumulative strategy S^{t+1} = S^t + w_t * sigma^ per agent (double neural)."""
        model = self._policy_models[player]
        weight = float(t) if self._linear_averaging else 1.0
        pairs, values = [], []
        for query, probs in zip(record.strategy_queries, record.strategy_probs, strict=True):
            row_pairs, row_values = [], []
            for agent, actions in enumerate(query.legal):
                for action in actions:
                    digits = [-1] * model.view.num_agents
                    digits[agent] = action
                    row_pairs.append(digits)
                    row_values.append(float(probs[agent, action]))
            pairs.append(row_pairs)
            values.append(row_values)
        queries, pairs, values = _aggregate(record.strategy_queries, pairs, values, weight / self._num_traversals,
                                            model.packer.m)
        rows, increments, valid = model.packer.pack(queries, pairs, values)
        return model.accumulate(rows, increments, valid, t, self._policy_steps, self._batch_size,
                                self._anchor_ratio, self._np_rng)  # fmt: skip

    # ------------------------------------------------------------ policy views
    def _queries(self, states) -> list[Query]:
        return [make_query(self._views[s.current_player()], s) for s in states]

    def agent_strategies(self, states, average: bool = True) -> list[np.ndarray]:
        """Per-agent strategies [n, A_max] at each state (average or current)."""
        queries = self._queries(states)
        return self._answer(queries, self._policy_models if average else self._regret_models)

    def agent_action_probabilities(self, state, average: bool = True) -> list[dict[int, float]]:
        """Decentralised view: one {individual action: probability} per agent
        (a single dict for the adversary)."""
        (strategy,) = self.agent_strategies([state], average)
        legal = self._views[state.current_player()].legal(state)
        return [{int(a): float(strategy[i, a]) for a in actions} for i, actions in enumerate(legal)]

    def joint_action_probabilities(self, state, actions: Sequence[int], average: bool = True) -> np.ndarray:
        """Probabilities of the given pyspiel actions only (product for the team, eq. 1)."""
        (strategy,) = self.agent_strategies([state], average)
        return self._product(state.current_player(), strategy, actions)

    def _product(self, player: int, strategy: np.ndarray, actions) -> np.ndarray:
        view = self._views[player]
        if view.num_agents == 1:
            return np.asarray([strategy[0, a] for a in actions], dtype=np.float64)
        out = np.ones(len(actions))
        for k, action in enumerate(actions):
            for agent, digit in enumerate(self._game.decode_joint_action(int(action))):
                out[k] *= strategy[agent, digit]
        return out

    def action_probabilities(self, state, player_id=None):
        """{action: probability} over legal actions (OpenSpiel Policy API).

        On the team's turn this enumerates legal joint actions, so it works
        where the game can list them; use `agent_action_probabilities` or
        `joint_action_probabilities` on larger instances."""
        del player_id
        actions = state.legal_actions()
        probs = self.joint_action_probabilities(state, actions)
        return {int(a): float(p) for a, p in zip(actions, probs, strict=True)}

    def strategy_array(self, tree, average: bool = True) -> np.ndarray:
        """[N, A] strategy on every infoset of `tree` (team rows as products)."""
        states = tree.infoset_states()
        out = np.zeros((len(states), tree.num_actions))
        for lo in range(0, len(states), _EVAL_BATCH):
            chunk = states[lo : lo + _EVAL_BATCH]
            strategies = self.agent_strategies(chunk, average)
            for r, (state, strategy) in enumerate(zip(chunk, strategies, strict=True)):
                player = state.current_player()
                view = self._views[player]
                if view.num_agents == 1:
                    out[lo + r, : view.max_actions] = strategy[0, : tree.num_actions]
                else:
                    out[lo + r] = _joint_product(strategy, view.num_actions, tree.num_actions)
        return np.where(tree.infoset_legal_mask, out, 0.0)

    def current_policy_array(self, tree) -> np.ndarray:
        return self.strategy_array(tree, average=False)

    # --------------------------------------------------------------- checkpoint
    def save_checkpoint(self, path: str, extra=None) -> None:
        """Writes every network, optimiser, memory, target scale, the iteration,
        history, counters and RNG states to `path` (atomically); `extra` as in
        `DeepCFRSolver.save_checkpoint`."""
        checkpoint_lib.save_cfr_mix(self, path, extra)

    def load_checkpoint(self, path: str) -> None:
        """Restores a checkpoint written by `save_checkpoint` into a solver built
        with the same game, variant and shape settings (`self.config`); the run
        then continues exactly as the checkpointed one would have (its RNG
        states and seeds replace this solver's). Raises
        `openspiel_cfrx.deep.CheckpointError` naming the problem otherwise."""
        checkpoint_lib.load_cfr_mix(self, path)


def _joint_product(strategy: np.ndarray, radices: Sequence[int], num_actions: int) -> np.ndarray:
    """[n, A_max] per-agent strategy -> [prod radices] joint probabilities (agent 0 least significant)."""
    joint = np.ones(1)
    for agent in range(len(radices) - 1, -1, -1):
        joint = np.outer(joint, strategy[agent, : radices[agent]]).reshape(-1)
    return joint[:num_actions]


def _aggregate(queries, pairs, values, factor: float, max_pairs: int):
    """Sums samples of the same information set and pair, times `factor`.

    r^(I, a) = factor * sum over visits of I of the sampled value of pair a,
    i.e. with factor 1/K an unbiased estimate of (per-infoset constant) times
    the counterfactual regret (Section 4.3 / Algorithm 1)."""
    index: dict[bytes, int] = {}
    out_queries, sums = [], []
    for query, row_pairs, row_values in zip(queries, pairs, values, strict=True):
        key = query.features.tobytes()
        slot = index.get(key)
        if slot is None:
            slot = index[key] = len(out_queries)
            out_queries.append(query)
            sums.append({})
        bucket = sums[slot]
        for digits, value in zip(row_pairs, row_values, strict=True):
            digits = tuple(int(d) for d in digits)
            bucket[digits] = bucket.get(digits, 0.0) + value
    # An information set sampled often (the root) can collect more distinct
    # pairs than a row holds: it then takes several rows.
    rows_q, rows_p, rows_v = [], [], []
    for query, bucket in zip(out_queries, sums, strict=True):
        items = list(bucket.items())
        for lo in range(0, len(items), max_pairs):
            chunk = items[lo : lo + max_pairs]
            rows_q.append(query)
            rows_p.append([list(d) for d, _ in chunk])
            rows_v.append([factor * v for _, v in chunk])
    return rows_q, rows_p, rows_v


def _merge(a, b):
    merged = copy.copy(a)
    for field in ("regret_queries", "regret_pairs", "regret_values", "strategy_queries", "strategy_probs"):
        setattr(merged, field, getattr(a, field) + getattr(b, field))
    merged.nodes = a.nodes + b.nodes
    merged.probes = a.probes + b.probes
    return merged
