"""Shared plumbing for the team-adversary games (`team_goofspiel`, `nest`).

Implements the game/state halves of `openspiel_cfrx.team.FactoredTeamGame` /
`FactoredTeamState` once, on top of a per-game frozen config object, and the
parameter-parsing helpers both games use at their boundary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pyspiel

from games._common import two_player_zero_sum_game_type
from openspiel_cfrx import team as team_protocol


class FrozenConfig:
    """Immutable per-game data shared by every state of one game.

    OpenSpiel clones a Python state by deep-copying each attribute of its
    `__dict__`; returning `self` here keeps a clone from copying lookup tables
    (NEST's neighbour slots, say) on every `state.child(a)`.  Pickling (used
    by `pyspiel.serialize_game_and_state`) still copies it by value.
    """

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self


def team_game_type(short_name: str, long_name: str, defaults: dict) -> pyspiel.GameType:
    """GameType shared by the team games: 2-player zero-sum, sequential, terminal rewards."""
    return two_player_zero_sum_game_type(short_name, long_name, defaults)


def full_params(game_name: str, params: dict, defaults: dict) -> dict:
    """Defaults overlaid with `params`; unknown names raise ValueError."""
    unknown = set(params) - set(defaults)
    if unknown:
        raise ValueError(
            f"{game_name}: unknown parameter(s) {sorted(unknown)}; accepted: {sorted(defaults)}"
        )
    full = dict(defaults)
    full.update(params)
    return full


def allocate_pieces(pieces: list[tuple[str, tuple[int, ...]]]):
    """One flat float32 tensor and named reshaped views into it, in order.

    Returns (tensor [sum of sizes], {name: view of its shape}), the layout the
    PyObserver interface expects (see open_spiel/python/games/kuhn_poker.py).
    """
    total = sum(int(np.prod(shape)) for _, shape in pieces)
    tensor = np.zeros(total, np.float32)
    views = {}
    index = 0
    for name, shape in pieces:
        size = int(np.prod(shape))
        views[name] = tensor[index : index + size].reshape(shape)
        index += size
    return tensor, views


def format_int_list(values: Sequence[int]) -> str:
    """(0, 8) -> '0;8'; (3,) -> '3;'; () -> ''.

    The trailing ';' of a one-element list keeps `str(game)` loadable:
    pyspiel would parse a bare '3' back as an int and reject it for a string
    parameter (and the game string is what serialization and caches use).
    """
    if len(values) == 1:
        return f"{values[0]};"
    return ";".join(str(v) for v in values)


def parse_int_list(text: str, name: str) -> tuple[int, ...]:
    """'0;8', '0 8' or '0,8' -> (0, 8); '' -> ().

    Game strings cannot carry commas inside a value, so ';' or spaces are the
    separators to use in `pyspiel.load_game("nest(exits=0;8)")`.
    """
    text = text.strip()
    if not text:
        return ()
    pieces = [p for p in re.split(r"[;\s,]+", text) if p]
    try:
        return tuple(int(p) for p in pieces)
    except ValueError:
        raise ValueError(
            f"{name}={text!r} is not a list of integers; write it as "
            f"'a;b;c' (semicolon- or space-separated node/card indices)"
        ) from None


class TeamGameMixin:
    """Game half of the factored protocol; needs `self._cfg.radices` and
    `self._cfg.adversary_num_actions`."""

    def num_team_agents(self) -> int:
        return len(self._cfg.radices)

    def agent_num_actions(self) -> tuple[int, ...]:
        return self._cfg.radices

    def adversary_num_actions(self) -> int:
        return self._cfg.adversary_num_actions

    def agent_observation_size(self) -> int:
        return self._cfg.agent_observation_size

    def encode_joint_action(self, agent_actions: Sequence[int]) -> int:
        return team_protocol.encode_mixed_radix(agent_actions, self._cfg.radices)

    def decode_joint_action(self, joint_action: int) -> tuple[int, ...]:
        return team_protocol.decode_mixed_radix(joint_action, self._cfg.radices)


class TeamStateMixin(TeamGameMixin):
    """State half; the game defines `legal_agent_actions(agent)`."""

    def num_legal_joint_actions(self) -> int:
        count = 1
        for agent in range(len(self._cfg.radices)):
            count *= len(self.legal_agent_actions(agent))
        return count

    def _check_team_turn(self, agent: int) -> None:
        if self.current_player() != team_protocol.TEAM_PLAYER:
            raise ValueError(
                f"legal_agent_actions is defined on the team's turn only; "
                f"current player is {self.current_player()}"
            )
        if not 0 <= agent < len(self._cfg.radices):
            raise ValueError(
                f"agent {agent} does not exist; agents are 0..{len(self._cfg.radices) - 1}"
            )

    def _team_legal_joint_actions(self) -> list[int]:
        """Enumerated joint actions, refusing above the documented cap."""
        per_agent = [self.legal_agent_actions(a) for a in range(len(self._cfg.radices))]
        return team_protocol.enumerate_joint_actions(
            per_agent, self._cfg.radices, self._cfg.max_joint_actions
        )
