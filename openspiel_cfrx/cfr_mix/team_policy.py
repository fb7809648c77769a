"""The OpenSpiel `Policy` views of a factored team strategy (CFR-MIX, Li et al.
2021): the team's joint strategy is the product of its agents' individual
strategies (eq. 1), each agent playing regret matching+ on its own R_i
(current strategy; Theorem 2: the same as RM+ on the mixed R_tot) or its
normalised cumulative strategy S_i (average).

`TeamPolicy` is a mixin for a solver that has `_game`, `_views` (one
`AgentView` per player), `_regret_models` / `_policy_models` (one `TeamModel`
per player) and `_adversary_declared`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from openspiel_cfrx.cfr_mix.probe_traversal import Query, make_query
from openspiel_cfrx.cfr_mix.team_model import TINY, joint_product, width_error
from openspiel_cfrx.deep.regret_matching import regret_matching

_EVAL_BATCH = 4096


def regret_matching_plus(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Per-agent RM+ on non-negative R_i ([B, n, A]); uniform where none is positive."""
    return regret_matching(values, legal, "uniform", min_total=TINY)


class TeamAnswer:
    """Answers a round of probe queries with per-agent strategies [n, A] from
    each player's model (`values(features, agent_features)`), one forward pass per player."""

    def __init__(self, models, game_name: str, adversary_declared: bool):
        self.models, self.game_name, self.adversary_declared = models, game_name, adversary_declared

    def __call__(self, queries: list[Query]) -> list[np.ndarray]:
        answers: list = [None] * len(queries)
        by_player: dict[int, list[int]] = {}
        for index, query in enumerate(queries):
            by_player.setdefault(query.player, []).append(index)
        for player, indices in by_player.items():
            view, batch = self.models[player].view, [queries[i] for i in indices]
            legal = np.zeros((len(batch), view.num_agents, view.max_actions), dtype=bool)
            for r, query in enumerate(batch):
                for agent, actions in enumerate(query.legal):
                    if actions and actions[-1] >= view.max_actions:
                        raise ValueError(width_error(self.game_name, query.player, actions[-1], view.max_actions,
                                                     self.adversary_declared))  # fmt: skip
                    legal[r, agent, actions] = True
            values = self.models[player].values(np.stack([q.features for q in batch]).astype(np.float32, copy=False),
                                                np.stack([q.agent_features for q in batch]).astype(np.float32,
                                                                                                    copy=False))
            for i, row in zip(indices, regret_matching_plus(values, legal), strict=True):
                answers[i] = row
        return answers


class TeamPolicy:
    """Per-agent, joint and OpenSpiel views of the current and average strategies."""

    def strategies_from_tensors(self, player: int, features: np.ndarray, agent_features: np.ndarray,
                                legal_mask: np.ndarray, average: bool = True) -> np.ndarray:  # fmt: skip
        """Per-agent strategies [B, n, A] of `player` straight from network inputs
        (features [B, F], agent features [B, n, F_a], legal mask [B, n, A] in
        the player's view), without states: what `answer` computes for the
        same queries."""
        model = (self._policy_models if average else self._regret_models)[player]
        values = model.values(np.asarray(features, np.float32), np.asarray(agent_features, np.float32))
        return regret_matching_plus(values, legal_mask)

    def answer(self, queries: list[Query], average: bool = False) -> list[np.ndarray]:
        """Per-agent strategies [n, A] for a round of probe queries: RM+ on each agent's
        R_i (Theorem 2; current) or the normalised S_i (average), one forward pass per player."""
        models = self._policy_models if average else self._regret_models
        return TeamAnswer(models, self._game.get_type().short_name, self._adversary_declared)(queries)

    def strategy_snapshot(self) -> TeamAnswer:
        """The current strategy (RM+ on the regret networks) as a picklable
        object with CPU copies of the networks (what Ray workers receive)."""
        return TeamAnswer([model.snapshot() for model in self._regret_models], self._game.get_type().short_name, self._adversary_declared)

    def _queries(self, states) -> list[Query]:
        return [make_query(self._views[s.current_player()], s) for s in states]

    def agent_strategies(self, states, average: bool = True) -> list[np.ndarray]:
        """Per-agent strategies [n, A_max] at each state (average or current)."""
        queries = self._queries(states)
        return self.answer(queries, average)

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
                    out[lo + r] = joint_product(strategy, view.num_actions, tree.num_actions)
        return np.where(tree.infoset_legal_mask, out, 0.0)

    def current_policy_array(self, tree) -> np.ndarray:
        return self.strategy_array(tree, average=False)
