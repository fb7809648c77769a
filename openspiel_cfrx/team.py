"""The factored team action: a duck-typed protocol plus pure mixed-radix helpers.

Team-adversary games (Li et al. 2021, "CFR-MIX: Solving Imperfect Information
Extensive-Form Games with Combinatorial Action Space", Sections 3-4) are
2-player zero-sum pyspiel games: player `TEAM_PLAYER` (0) is a team of n agents
sharing one utility and one information set, player `ADVERSARY_PLAYER` (1) is
the adversary.  The team's pyspiel action is a *joint* action, a mixed-radix
index over the agents' individual actions, so that OpenSpiel's CFR, best
response and `exploitability.nash_conv` run unchanged on small instances.

CFR-MIX never enumerates the joint space (it can be 10^6 or 13^6 joint actions
at one information set).  It needs, instead, the factored view described by
`FactoredTeamGame` and `FactoredTeamState` below.  Games provide it by duck
typing: nothing here imports a game, and algorithms test for the protocol with
`is_factored_team_game(game)` / `isinstance(state, FactoredTeamState)`.  The
adversary's action count comes from `adversary_num_actions(game)`, which
reads the game's (optional) `adversary_num_actions()` method.

Encoding (fixed, state independent).  With radices ``n = (n_0, ..., n_{P-1})``
(agent i's number of *distinct* individual actions, not its legal ones)::

    joint = a_0 + n_0 * (a_1 + n_1 * (a_2 + ... + n_{P-2} * a_{P-1}))

i.e. agent 0 is the least significant digit, as in OpenSpiel's flattening of
simultaneous-move joint actions.  Because the radices are the distinct-action
counts, the joint index of a given tuple of individual actions is the same in
every state, which is what lets a network keyed on (agent, individual action)
be mixed back into joint-action regrets.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

TEAM_PLAYER = 0
ADVERSARY_PLAYER = 1

# Above this many legal joint actions, `legal_actions()` on the team's turn
# refuses to build the list (a 10-card 6-agent Goofspiel state has 10^6); the
# factored calls work at any size.  1e5 keeps a Python list of joint actions
# below ~4 MB and a tabular row below what OpenSpiel's TabularPolicy can hold
# for a handful of information sets.
DEFAULT_MAX_ENUMERATED_JOINT_ACTIONS = 100_000


class JointActionSpaceTooLargeError(ValueError):
    """Raised instead of enumerating a joint action space above the cap."""


@runtime_checkable
class FactoredTeamGame(Protocol):
    """Game-level view of the factored team action (no state needed)."""

    def num_team_agents(self) -> int:
        """Number of agents n in the team (player `TEAM_PLAYER`)."""
        ...

    def agent_num_actions(self) -> tuple[int, ...]:
        """Distinct individual actions per agent, shape [n]: the radices."""
        ...

    def agent_observation_size(self) -> int:
        """Length F of every `agent_observation_tensor(agent)` vector."""
        ...

    def encode_joint_action(self, agent_actions: Sequence[int]) -> int:
        """[n] individual actions -> the team's pyspiel (joint) action."""
        ...

    def decode_joint_action(self, joint_action: int) -> tuple[int, ...]:
        """The team's pyspiel (joint) action -> [n] individual actions."""
        ...

    def adversary_num_actions(self) -> int:
        """Distinct actions of the adversary (`ADVERSARY_PLAYER`): every
        adversary pyspiel action lies in [0, adversary_num_actions()).

        Algorithms size the adversary's network head with it (the game's
        `num_distinct_actions()` is the joint team space, far too wide).
        Optional: `is_factored_team_game` does not require it, and for a game
        that does not define it `adversary_num_actions(game)` below falls back
        to the largest agent action count.
        """
        ...


# The members `is_factored_team_game` requires; `adversary_num_actions` is the
# optional one (see `adversary_num_actions(game)`).
REQUIRED_GAME_METHODS = (
    "num_team_agents",
    "agent_num_actions",
    "agent_observation_size",
    "encode_joint_action",
    "decode_joint_action",
)


@runtime_checkable
class FactoredTeamState(Protocol):
    """State-level view; every call is O(n * actions), never O(joint space).

    `legal_agent_actions` is only meaningful when `current_player()` is
    `TEAM_PLAYER`; implementations raise ValueError otherwise.  The team's
    legal joint actions are exactly the product of the agents' legal lists
    (team games here have no cross-agent legality constraints), so
    ``encode_joint_action([a_0, ..., a_{n-1}])`` with each ``a_i`` taken from
    ``legal_agent_actions(i)`` is always a legal `apply_action` argument.
    """

    def num_team_agents(self) -> int: ...

    def agent_num_actions(self) -> tuple[int, ...]: ...

    def encode_joint_action(self, agent_actions: Sequence[int]) -> int: ...

    def decode_joint_action(self, joint_action: int) -> tuple[int, ...]: ...

    def legal_agent_actions(self, agent: int) -> list[int]:
        """Agent `agent`'s legal individual actions here, ascending."""
        ...

    def num_legal_joint_actions(self) -> int:
        """Product of the agents' legal-list lengths (not enumerated)."""
        ...

    def agent_observation_tensor(self, agent: int) -> list[float]:
        """What distinguishes `agent` (its id, hand, position...): shape [F].

        Complements, not replaces, the shared team information state tensor
        `information_state_tensor(TEAM_PLAYER)`.
        """
        ...


def is_factored_team_game(game: object) -> bool:
    """True if `game` offers the factored team action protocol.

    Checks the required members (`REQUIRED_GAME_METHODS`); the optional
    `adversary_num_actions()` may be missing (`isinstance(game,
    FactoredTeamGame)` checks the full protocol, that one included).
    """
    return all(callable(getattr(game, name, None)) for name in REQUIRED_GAME_METHODS)


def adversary_num_actions(game: object) -> int:
    """The adversary's number of distinct actions, for sizing its outputs.

    `game.adversary_num_actions()` when the game defines it, checked to lie in
    [1, game.num_distinct_actions()]; otherwise (third-party games written
    before the method existed) the largest agent action count
    `max(game.agent_num_actions())`, right when the adversary's action set is
    that of one agent (team Goofspiel, NEST).  A wrong fallback is caught
    where it matters: solvers raise if the adversary ever has a legal action
    at or above this count.

    Raises:
      ValueError: the declared count is not a positive integer or exceeds
        `num_distinct_actions()` (inconsistent game sizes).
    """
    method = getattr(game, "adversary_num_actions", None)
    if method is None:
        return int(max(game.agent_num_actions()))
    count = method()
    total = game.num_distinct_actions() if hasattr(game, "num_distinct_actions") else None
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
        raise ValueError(
            f"{type(game).__name__}.adversary_num_actions() returned {count!r}; it must be a "
            f"positive int, the adversary's number of distinct actions"
        )
    if total is not None and count > total:
        raise ValueError(
            f"{type(game).__name__}.adversary_num_actions() = {count} exceeds "
            f"num_distinct_actions() = {total}; every pyspiel action, the adversary's included, "
            f"must be below num_distinct_actions(), so one of the two sizes is wrong"
        )
    return int(count)


def joint_action_space_size(radices: Sequence[int]) -> int:
    """Number of distinct joint actions, prod(radices) (exact Python int)."""
    return math.prod(radices)


def encode_mixed_radix(digits: Sequence[int], radices: Sequence[int]) -> int:
    """Individual actions [n] -> joint index; agent 0 least significant.

    Raises ValueError if the lengths differ or a digit is out of its range.
    """
    if len(digits) != len(radices):
        raise ValueError(
            f"expected one action per agent ({len(radices)} agents), got "
            f"{len(digits)}: {list(digits)}"
        )
    joint = 0
    # Horner's rule from the most significant agent (the last one) down.
    for agent in range(len(radices) - 1, -1, -1):
        digit = digits[agent]
        radix = radices[agent]
        if not 0 <= digit < radix:
            raise ValueError(
                f"agent {agent}'s action {digit} is outside [0, {radix}); "
                f"individual actions are indices into that agent's action set"
            )
        joint = joint * radix + digit
    return joint


def decode_mixed_radix(joint: int, radices: Sequence[int]) -> tuple[int, ...]:
    """Joint index -> individual actions [n]; inverse of `encode_mixed_radix`."""
    if not 0 <= joint < math.prod(radices):
        raise ValueError(
            f"joint action {joint} is outside [0, {math.prod(radices)}) for "
            f"radices {tuple(radices)}"
        )
    digits = []
    for radix in radices:
        joint, digit = divmod(joint, radix)
        digits.append(digit)
    return tuple(digits)


def enumerate_joint_actions(
    agent_legal_actions: Sequence[Sequence[int]],
    radices: Sequence[int],
    max_joint_actions: int = DEFAULT_MAX_ENUMERATED_JOINT_ACTIONS,
) -> list[int]:
    """All legal joint actions, ascending, refusing spaces above the cap.

    Args:
      agent_legal_actions: [n] ascending lists of each agent's legal actions.
      radices: [n] distinct individual actions per agent.
      max_joint_actions: cap on the product of the list lengths.

    Raises:
      JointActionSpaceTooLargeError: if the product exceeds the cap; the size
        is computed from the lengths, before anything is built.
    """
    size = math.prod(len(actions) for actions in agent_legal_actions)
    if size > max_joint_actions:
        raise JointActionSpaceTooLargeError(
            f"the team has {size} legal joint actions here, above the "
            f"enumeration cap of {max_joint_actions}; use the factored calls "
            f"(legal_agent_actions(agent), encode_joint_action(...), "
            f"num_legal_joint_actions()) from openspiel_cfrx.team instead of "
            f"legal_actions(), or a smaller instance for tabular methods"
        )
    joint = [0]
    # Most significant agent first, so each extension keeps the list sorted.
    for agent in range(len(radices) - 1, -1, -1):
        radix = radices[agent]
        actions = agent_legal_actions[agent]
        joint = [prefix * radix + action for prefix in joint for action in actions]
    return joint


def sample_uniform_joint_action(state: FactoredTeamState, rng) -> int:
    """A uniformly random legal joint action, drawn agent by agent.

    The product of independent uniform choices is uniform over the product of
    the agents' legal lists, so this never builds the joint list.

    Args:
      state: a state on the team's turn offering `FactoredTeamState`.
      rng: a `random.Random` (anything with `.choice`).
    """
    return state.encode_joint_action(
        [rng.choice(state.legal_agent_actions(agent)) for agent in range(state.num_team_agents())]
    )
