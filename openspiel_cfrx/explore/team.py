"""What the strategy explorer shows for a factored team game (team Goofspiel,
NEST: `openspiel_cfrx.team`): at every infoset of the team and of the
adversary, each agent's action probabilities.

The team's policy gives probabilities of joint actions; agent i's table holds
their marginals, sum over the joint actions whose i-th individual action is d
(`game.decode_joint_action`). For a product-form policy (CFR-MIX, eq. 1 of
Li et al. 2021) these are the agents' own strategies. The adversary is one
agent. Each infoset also shows its own reach under each policy. The game is
extracted with `openspiel_cfrx.get_tree`, so only games small enough for the
exact engine are shown; no best-response gains are computed.
"""

from __future__ import annotations

import re

import numpy as np
import pyspiel

from openspiel_cfrx.explore.policies import ExploreError, NamedPolicy, game_kind
from openspiel_cfrx.team import TEAM_PLAYER
from openspiel_cfrx.tree import check_strategy, get_tree, realization_plan, strategy_from_policy

MAX_INFOSETS = 20_000  # a page lists every infoset; above this it would be too long to read or load
PER_AGENT = re.compile(r"\[([^\]]*)\]")  # "Bids[a0:1 a1:2]": one "label:action" token per agent


class TeamExplorer:
    """Per-agent action tables at every infoset of a factored team game (module doc).

    Args:
      game: a factored team game (`openspiel_cfrx.team.is_factored_team_game`)
        small enough for `openspiel_cfrx.get_tree`.
      policies: `NamedPolicy`s (`load_policy`): one shown, or two compared.
      game_name: how the page names the game (default `str(game)`).
      max_infosets: refuse games with more infosets than this.
    """

    layout = "team"
    num_boards = 0  # nothing for `server` to serve but the page

    def __init__(self, game: pyspiel.Game, policies: list[NamedPolicy], *, game_name: str | None = None,
                 max_infosets: int = MAX_INFOSETS):  # fmt: skip
        if game_kind(game) != "team":
            raise ExploreError(f"{game} is not a factored team game; make_explorer(game, policies) picks the "
                               "explorer for a game")  # fmt: skip
        if not 1 <= len(policies) <= 2:
            raise ExploreError(f"the explorer shows one policy or compares two, got {len(policies)}")
        self.game, self.policies = game, list(policies)
        self.game_name = game_name or str(game)
        try:
            self.tree = get_tree(game)
        except ValueError as e:  # too large to extract, or a joint action space too large to list
            raise ExploreError(f"{game} is too large for the explorer's exact tree: {str(e).splitlines()[0]}") from None
        if self.tree.num_infosets > max_infosets:
            raise ExploreError(f"{game} has {self.tree.num_infosets:,} infosets, more than max_infosets="
                               f"{max_infosets:,} that a page lists; use a smaller instance")  # fmt: skip
        self.strategies = [self._strategy(p) for p in policies]  # each [infosets, actions]
        self.reaches = [realization_plan(self.tree, s)[self.tree.infoset_parent_sequence] for s in self.strategies]
        self.infosets = [self._infoset(i) for i in range(self.tree.num_infosets)]
        self.analyses: list = []  # no best-response gains for team games (the poker explorers' `analyses`)

    def _strategy(self, policy: NamedPolicy) -> np.ndarray:
        try:
            strategy = strategy_from_policy(self.tree, policy.policy)
            check_strategy(self.tree, strategy)
        except (TypeError, ValueError) as e:
            raise ExploreError(f"policy {policy.name!r}: {str(e).splitlines()[0]}") from None
        return strategy

    def _infoset(self, i: int) -> dict:
        """One infoset's agents: their labels, legal individual actions and names."""
        tree, game = self.tree, self.game
        state = tree.state(int(tree.infoset_history[i]))
        player = int(tree.infoset_player[i])
        legal = np.flatnonzero(tree.infoset_legal_mask[i])
        if player != TEAM_PLAYER:
            names = [state.action_to_string(player, int(a)) for a in legal]
            return {"player": player, "agents": ["adversary"], "actions": [legal.tolist()], "names": [names]}
        agents = range(game.num_team_agents())
        actions = [list(state.legal_agent_actions(agent)) for agent in agents]
        names = [[_agent_action_name(state, agent, d, actions) for d in actions[agent]] for agent in agents]
        return {"player": player, "agents": [f"agent {agent}" for agent in agents], "actions": actions, "names": names}

    def agent_probabilities(self, policy: int, i: int) -> list[np.ndarray]:
        """Per agent of infoset i's player: [its legal individual actions] probabilities under
        policy number `policy` (the team's: marginals of its joint action, module doc)."""
        info, row = self.infosets[i], self.strategies[policy][i]
        if info["player"] != TEAM_PLAYER:
            return [row[info["actions"][0]]]
        radices = self.game.agent_num_actions()
        out = [np.zeros(radix) for radix in radices]
        for joint in np.flatnonzero(self.tree.infoset_legal_mask[i]):
            for agent, digit in enumerate(self.game.decode_joint_action(int(joint))):
                out[agent][digit] += row[joint]
        return [out[agent][actions] for agent, actions in enumerate(info["actions"])]

    def page_data(self) -> dict:
        """Everything the team page's script reads."""
        tree = self.tree
        infosets = []
        for i, info in enumerate(self.infosets):
            infosets.append({
                "p": info["player"], "d": int(tree.infoset_depth[i]), "key": tree.infoset_key[i],
                "agents": info["agents"], "names": info["names"], "actions": info["actions"],
                "probs": [[_rounded(p) for p in self.agent_probabilities(k, i)] for k in range(len(self.policies))],
                "reach": [float(f"{reach[i]:.12g}") for reach in self.reaches],
            })  # fmt: skip
        return {"game": self.game_name, "layout": self.layout, "policies": [{"name": p.name} for p in self.policies],
                "player_names": ["team", "adversary"], "infosets": infosets}  # fmt: skip


def _agent_action_name(state, agent: int, digit: int, actions: list[list[int]]) -> str:
    """Agent `agent`'s individual action `digit`, named from the joint action's string when
    it lists one "label:action" token per agent ("Bids[a0:1 a1:2]" -> "1"); else its index."""
    joint = state.encode_joint_action([digit if j == agent else legal[0] for j, legal in enumerate(actions)])
    match = PER_AGENT.search(state.action_to_string(TEAM_PLAYER, joint))
    tokens = match.group(1).split() if match else []
    if len(tokens) == len(actions) and ":" in tokens[agent]:
        return tokens[agent].split(":", 1)[1]
    return f"action {digit}"


def _rounded(values: np.ndarray) -> list[float]:
    return [float(f"{x:.12g}") for x in np.asarray(values, dtype=np.float64)]


__all__ = ["MAX_INFOSETS", "TeamExplorer"]
