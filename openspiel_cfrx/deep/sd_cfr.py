"""The exact average of Deep CFR's iterates, kept as networks (Steinberger
2019, "Single Deep Counterfactual Regret Minimization", mentioned in Brown et
al. 2019 Section 4): sigma-bar(I) is the mixture of the iterations'
regret-matching strategies, iteration t weighted by w_t times the player's own
reach of I under sigma^t."""

from __future__ import annotations

import copy

import numpy as np
import torch

from openspiel_cfrx.deep.regret_matching import regret_matching, uniform_strategy


class IterationNetworks:
    """Every iteration's advantage networks (a checkpointed part).

    Args:
      template: a module of the advantage networks' shape (weights replaced on use).
      fallback: regret matching's fallback (as the solver's).
      linear_weighting: w_t = t (linear CFR) or 1.
    """

    def __init__(self, template: torch.nn.Module, fallback: str, linear_weighting: bool):
        self._template, self._fallback, self._linear = template, fallback, linear_weighting
        self.kept: list[tuple[int, list[dict]]] = []  # (iteration, [state_dict p0, p1])

    def __len__(self) -> int:
        return len(self.kept)

    def keep(self, iteration: int, networks) -> None:
        self.kept.append((iteration, [copy.deepcopy({k: v.cpu() for k, v in n.state_dict().items()})
                                      for n in networks]))  # fmt: skip

    def weights(self) -> np.ndarray:
        its = np.array([t for t, _ in self.kept], dtype=np.float64)
        return its if self._linear else np.ones_like(its)

    @torch.inference_mode()
    def strategies(self, features: torch.Tensor, mask: torch.Tensor, players: np.ndarray) -> np.ndarray:
        """[T, B, A] regret-matching strategies of every kept iteration."""
        device = next(self._template.parameters()).device
        probe = copy.deepcopy(self._template).to(device).eval()
        out = np.zeros((len(self.kept), features.shape[0], mask.shape[1]))
        for k, (_, state_dicts) in enumerate(self.kept):
            for p in (0, 1):
                rows = np.flatnonzero(players == p)
                if rows.size == 0:
                    continue
                probe.load_state_dict(state_dicts[p])
                idx = torch.from_numpy(rows)
                adv = probe(features[idx].to(device)).cpu().numpy()
                out[k, rows] = regret_matching(adv, mask[idx].numpy(), self._fallback)
        return out

    def tree_strategy(self, tree, features: torch.Tensor, mask: torch.Tensor) -> np.ndarray:
        """The average on every infoset of `tree`, through realization plans."""
        from openspiel_cfrx.tree import realization_plan

        if not self.kept:
            return uniform_strategy(tree.infoset_legal_mask.astype(np.float64))
        strategies = self.strategies(features, mask, np.asarray(tree.infoset_player))
        plan = np.zeros(tree.num_sequences)
        for w, strategy in zip(self.weights(), strategies, strict=True):
            plan += w * realization_plan(tree, strategy)
        num_flat = tree.num_infosets * tree.num_actions
        seq = plan[:num_flat].reshape(tree.num_infosets, tree.num_actions)
        parent = plan[tree.infoset_parent_sequence][:, None]
        uniform = uniform_strategy(tree.infoset_legal_mask.astype(np.float64))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(parent > 0, seq / np.where(parent > 0, parent, 1.0), uniform)

    def state_probs(self, game, state, encode_states, num_actions: int) -> np.ndarray:
        """The average at one state: replays the player's own earlier decisions
        to weight each iteration by its reach of this infoset."""
        player = state.current_player()
        uniform = np.zeros(num_actions)
        uniform[state.legal_actions()] = 1.0 / len(state.legal_actions())
        if not self.kept:
            return uniform
        replay = game.new_initial_state()
        own_states, own_actions = [], []
        for action in state.history():
            if not replay.is_chance_node() and replay.current_player() == player:
                own_states.append(replay.clone())
                own_actions.append(action)
            replay.apply_action(action)
        features, mask = encode_states([*own_states, state])
        strategies = self.strategies(features, mask, np.full(len(own_states) + 1, player))
        reach = np.ones(len(self.kept))
        for k, action in enumerate(own_actions):
            reach *= strategies[:, k, action]
        weights = self.weights() * reach
        if weights.sum() <= 0:
            return uniform
        return weights @ strategies[:, -1] / weights.sum()

    def state_dict(self) -> dict:
        return {"iterations": [t for t, _ in self.kept], "networks": [sds for _, sds in self.kept]}

    def load_state_dict(self, state: dict) -> None:
        self.kept = [(int(t), list(sds)) for t, sds in zip(state["iterations"], state["networks"], strict=True)]
