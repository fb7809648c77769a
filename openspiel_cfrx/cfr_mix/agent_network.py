"""CFR-MIX's networks (Li et al. 2021, Section 4): agent networks R_i(I, a_i)
(one shared by all agents, or one per agent) and the mixing layer (eq. 4), and
the packing of a team information set's training row into a flat memory row.

The per-agent body comes from the network registry (`make_network`, e.g.
"mlp"); an `AgentNetwork` is that family applied agent by agent.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from openspiel_cfrx.cfr_mix.probe_traversal import Query
from openspiel_cfrx.deep.networks import MLP, make_network, normalize_features


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
    if features.is_cuda and torch.cuda.is_current_stream_capturing():
        # the column set is a host read (torch.nonzero), which a CUDA graph cannot capture
        # (trainer.py): all columns, the same function (not yet run on a device)
        hidden = features @ first.weight[:, :size].T
    else:
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


class Packer:
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
