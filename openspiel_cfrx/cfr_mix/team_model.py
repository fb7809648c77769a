"""CFR-MIX's per-player model (Li et al. 2021, Appendix B, Algorithm 1): an
agent network with its trainer, memory and target scale, updated by one of
the two backbones, and the probe sampler that feeds it.

* double neural (CFR-MIX): R^{t+1}(I, a) = (R^t(I, a) + r^(I, a))^+ is
  accumulated *through* the network (`accumulate`), with anchor rows from
  earlier iterations holding R^{t+1} = R^t elsewhere;
* Deep CFR (Deep CFR + MIX): a reservoir of raw samples and a network
  re-initialised and fitted to their t-weighted mean every iteration (`refit`).

Targets are kept in units of a scalar scale re-chosen every update so that
they are O(1); regret matching and strategy normalisation are invariant to it.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import torch

from openspiel_cfrx.cfr_mix.agent_network import AgentNetwork, Packer, mix
from openspiel_cfrx.cfr_mix.probe_traversal import AgentView, run_traversals
from openspiel_cfrx.deep.memories import make_memory
from openspiel_cfrx.deep.networks import reset_parameters
from openspiel_cfrx.deep.sampler import gc_paused
from openspiel_cfrx.deep.trainer import SQUARED, Trainer, array_batches
from openspiel_cfrx.sampling import Sampler

_EVAL_BATCH = 4096
TINY = 1e-12


class TeamValues:
    """A player's network outputs in real units: all a strategy needs of a `TeamModel`."""

    def __init__(self, view: AgentView, net, scale: float, trained: bool, device):
        self.view, self.net, self.scale, self.trained, self.device = view, net, scale, trained, device

    @torch.inference_mode()
    def values(self, features: np.ndarray, agent_features: np.ndarray) -> np.ndarray:
        """[B, n, A] (zeros before the first training)."""
        if not self.trained:
            return np.zeros((features.shape[0], self.view.num_agents, self.view.max_actions))
        out = []
        for lo in range(0, features.shape[0], _EVAL_BATCH):
            x = torch.from_numpy(features[lo : lo + _EVAL_BATCH]).to(self.device)
            xa = torch.from_numpy(agent_features[lo : lo + _EVAL_BATCH]).to(self.device)
            out.append(self.net(x, xa).cpu().numpy().astype(np.float64))
        return np.concatenate(out) * self.scale


class TeamModel:
    """One player's network (regret or average strategy) with its trainer,
    memory, scale and update rules."""

    def __init__(self, view: AgentView, feature_size: int, hidden, share: bool, network: str, learning_rate: float,
                 gradient_clip: float | None, capacity: int, max_pairs: int, seed: int, device,
                 rescale: bool = True, precision: str = "float32"):  # fmt: skip
        self.view, self.seed, self.device = view, seed, device
        net = AgentNetwork(feature_size, view.agent_feature_size, view.num_agents, view.max_actions, hidden, share,
                           network).to(device)  # fmt: skip
        reset_parameters(net, seed)
        self.packer = Packer(feature_size, view.agent_feature_size, view.num_agents, view.max_actions, max_pairs)
        self.trainer = Trainer(net, learning_rate, gradient_clip, forward=self._mixed, precision=precision)
        self.memory = make_memory("reservoir", capacity, self.packer.width, max_pairs)
        self.scale = 1.0
        self.rescale = bool(rescale)  # re-choose the target scale at every fit (False: keep the first one)
        self.trained = False
        self.losses: list[float] = []
        self.schedule = None  # the solver's Schedule (learning rates of each fit)

    @property
    def net(self) -> AgentNetwork:
        return self.trainer.network

    def _mixed(self, net, rows: torch.Tensor) -> torch.Tensor:
        """R_tot(I, pair) for packed rows: the mixing layer on the agents' outputs (eq. 4)."""
        f, fa, _, pairs = self.packer.unpack(rows)
        return mix(net(f, fa).float(), pairs)  # the product in float32 (under bfloat16 training the outputs are not)

    def values(self, features: np.ndarray, agent_features: np.ndarray) -> np.ndarray:
        """Network outputs in real units [B, n, A] (zeros before the first training)."""
        return TeamValues(self.view, self.net, self.scale, self.trained, self.device).values(features, agent_features)

    def snapshot(self) -> TeamValues:
        """The model's outputs as a picklable object with a CPU copy of the network (for Ray workers)."""
        net = copy.deepcopy(self.net).cpu() if self.trained else None
        return TeamValues(self.view, net, self.scale, self.trained, torch.device("cpu"))

    @torch.inference_mode()
    def _prev_mixed(self, rows: np.ndarray) -> np.ndarray:
        """R_tot(I, pair | theta^t) in real units for packed rows: [B, m]."""
        if not self.trained or rows.shape[0] == 0:
            return np.zeros((rows.shape[0], self.packer.m))
        out = [self._mixed(self.net, torch.from_numpy(rows[lo : lo + _EVAL_BATCH]).to(self.device)).cpu().numpy()
               for lo in range(0, rows.shape[0], _EVAL_BATCH)]  # fmt: skip
        return np.concatenate(out).astype(np.float64) * self.scale

    def _fit(self, rows, targets, valid, weights, steps, batch_size, rng) -> float:
        """Minimises mean_rows w * sum_pairs (R_tot - target)^2 over the given rows."""
        batches = array_batches(rows, targets, valid, weights, batch_size, rng, self.device)
        loss = self.trainer.fit(batches, steps, SQUARED, self.schedule)
        self.trained = True
        self.losses.append(loss)
        return loss

    def _anchors(self, rows: np.ndarray, ratio: float, rng) -> np.ndarray:
        """Indices of up to ratio * len(rows) memory rows whose infosets were not sampled now."""
        size = len(self.memory)
        if not size or ratio <= 0:
            return np.zeros(0, dtype=np.int64)
        keys = {row[: self.packer.f].tobytes() for row in rows}
        want = int(math.ceil(ratio * rows.shape[0]))
        candidates = rng.integers(0, size, size=min(2 * want, 4 * size))
        fresh = [i for i in candidates if self.memory.features[i, : self.packer.f].tobytes() not in keys]
        return np.asarray(fresh[:want], dtype=np.int64)

    def accumulate(self, rows, increments, valid, iteration, steps, batch_size, anchor_ratio, rng) -> float:
        """Double-neural update (Algorithm 1 lines 7-8): fit R^{t+1} = (R^t + r^)^+ on
        the sampled rows and R^{t+1} = R^t on anchor rows from earlier iterations."""
        if rows.shape[0] == 0:
            return float("nan")
        chosen = self._anchors(rows, anchor_ratio, rng)
        anchors, anchor_valid = self.memory.features[chosen], self.memory.legal_mask[chosen]
        new_targets = np.maximum(self._prev_mixed(rows) + increments, 0.0)
        targets = np.concatenate([new_targets, self._prev_mixed(anchors)])
        magnitude = float(np.abs(new_targets[valid]).mean()) if valid.any() else 0.0
        if magnitude > TINY and (self.rescale or not self.trained):
            self.scale = magnitude
        all_rows = np.concatenate([rows, anchors])
        loss = self._fit(all_rows, targets / self.scale, np.concatenate([valid, anchor_valid]),
                         np.ones(all_rows.shape[0]), steps, batch_size, rng)  # fmt: skip
        self.memory.add(rows, increments.astype(np.float32), valid, iteration, rng)
        return loss

    def refit(self, rows, samples, valid, iteration, steps, batch_size, rng, linear_scale,
              reinitialize: bool = True) -> float:  # fmt: skip
        """Deep CFR update: add the raw samples, re-initialise (or fine-tune the
        last network), fit the t-weighted mean of everything in the reservoir
        (weights t * linear_scale, or 1)."""
        if rows.shape[0]:
            self.memory.add(rows, samples.astype(np.float32), valid, iteration, rng)
        size = len(self.memory)
        if size == 0:
            return float("nan")
        if reinitialize or not self.trained:
            self.trainer.reinitialize(self.seed + 7919 * iteration)
        targets = self.memory.targets[:size].astype(np.float64)
        mask = self.memory.legal_mask[:size]
        magnitude = float(np.abs(targets[mask]).mean()) if mask.any() else 0.0
        if self.rescale or not self.trained:
            self.scale = magnitude if magnitude > TINY else 1.0
        its = self.memory.iteration[:size].astype(np.float64)
        weights = np.ones(size) if linear_scale is None else its * linear_scale
        return self._fit(self.memory.features[:size], targets / self.scale, mask, weights, steps, batch_size, rng)

    def state_dict(self) -> dict:
        return {"trainer": self.trainer.state_dict(), "memory": self.memory.state_dict(), "scale": float(self.scale),
                "trained": bool(self.trained), "losses": [float(x) for x in self.losses], "seed": int(self.seed)}  # fmt: skip

    def load_state_dict(self, state: dict) -> None:
        self.trainer.load_state_dict(state["trainer"])
        self.memory.load_state_dict(state["memory"])
        self.scale, self.trained = float(state["scale"]), bool(state["trained"])
        self.losses, self.seed = [float(x) for x in state["losses"]], int(state["seed"])


class ProbeSampler(Sampler):
    """CFR-MIX's traversals (Algorithms 2-3, `probe_traversal.py`) as a `Sampler`:
    yields one `ProbeRecord` per chunk of `batch_size` traversals."""

    def __init__(self, game, views, regret_targets: str, joint_cap: int, batch_size: int, rng):
        self.game, self.views, self.regret_targets = game, views, regret_targets
        self.joint_cap, self.batch_size, self.rng = joint_cap, batch_size, rng

    def collect(self, strategy, traverser, iteration, count):
        for lo in range(0, count, self.batch_size):
            with gc_paused():  # the record's samples are Python objects until the batch ends (sampler.gc_paused)
                record, _ = run_traversals(self.game, traverser, min(self.batch_size, count - lo), self.views,
                                           strategy, self.rng, self.regret_targets, self.joint_cap)  # fmt: skip
            yield record


def merge_records(records):
    """One `ProbeRecord` holding every chunk's samples, in order."""
    merged = None
    for record in records:
        if merged is None:
            merged = record
            continue
        merged = copy.copy(merged)
        for field in ("regret_queries", "regret_pairs", "regret_values", "strategy_queries", "strategy_probs"):
            setattr(merged, field, getattr(merged, field) + getattr(record, field))
        merged.nodes += record.nodes
        merged.probes += record.probes
    return merged


def aggregate_samples(queries, pairs, values, factor: float, max_pairs: int):
    """Sums samples of the same information set and pair, times `factor`:
    r^(I, a) = factor * sum over visits of I of the sampled value of pair a,
    with factor 1/K an unbiased estimate of (a per-infoset constant times) the
    counterfactual regret (Section 4.3 / Algorithm 1). An information set with
    more distinct pairs than a row holds takes several rows."""
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
    rows_q, rows_p, rows_v = [], [], []
    for query, bucket in zip(out_queries, sums, strict=True):
        items = list(bucket.items())
        for lo in range(0, len(items), max_pairs):
            chunk = items[lo : lo + max_pairs]
            rows_q.append(query)
            rows_p.append([list(d) for d, _ in chunk])
            rows_v.append([factor * v for _, v in chunk])
    return rows_q, rows_p, rows_v


def joint_product(strategy: np.ndarray, radices, num_actions: int) -> np.ndarray:
    """[n, A_max] per-agent strategy -> [prod radices] joint probabilities (agent 0 least significant)."""
    joint = np.ones(1)
    for agent in range(len(radices) - 1, -1, -1):
        joint = np.outer(joint, strategy[agent, : radices[agent]]).reshape(-1)
    return joint[:num_actions]


def team_views(game, team_view: str, adversary_actions: int, infoset_encoding: str) -> tuple[list[AgentView], int]:
    """([team view, adversary view], information-state feature size) for a factored team game."""
    from openspiel_cfrx import team as team_lib

    if team_view == "factored":
        team = AgentView(team_lib.TEAM_PLAYER, game.num_team_agents(), tuple(int(n) for n in game.agent_num_actions()),
                         int(game.agent_observation_size()), True)  # fmt: skip
    else:
        team = AgentView(team_lib.TEAM_PLAYER, 1, (int(game.num_distinct_actions()),), 0, False)
    views = [team, AgentView(team_lib.ADVERSARY_PLAYER, 1, (adversary_actions,), 0, False)]
    if infoset_encoding != "compact":
        return views, int(np.prod(game.information_state_tensor_shape()))
    for view in views:
        view.encoder = lambda state, player: np.asarray(state.compact_information_state_array(player), np.float32)
    if team.factored and callable(getattr(game, "compact_agent_feature_size", None)):
        team.agent_encoder = lambda state: np.asarray(state.compact_agent_features(), dtype=np.float32)
        team.agent_feature_size = int(game.compact_agent_feature_size())
    return views, int(game.compact_information_state_size())


def width_error(name: str, player: int, action: int, width: int, adversary_declared: bool) -> str:
    """The message for a legal action beyond a network head's width in game `name`."""
    if player != 1:
        return (f"player {player} of game '{name}' has legal action {action} but its network has {width} outputs: "
                "the game's agent_num_actions() / num_distinct_actions() are too small")  # fmt: skip
    if adversary_declared:
        return (f"the adversary of game '{name}' has legal action {action}, but the game's adversary_num_actions() "
                f"is {width}: inconsistent sizes, fix adversary_num_actions() to count every adversary action")  # fmt: skip
    return (f"the adversary of game '{name}' has legal action {action}, but the game has no adversary_num_actions() "
            f"and CFR-MIX assumed max(agent_num_actions()) = {width} actions; give the game an "
            "adversary_num_actions() method returning the adversary's number of distinct actions")  # fmt: skip
