"""The rules the public-tree engine needs, read from the game itself.

Any two-player limit `universal_poker` game (OpenSpiel's ACPC-style poker:
`flop_holdem` and the C++ game behind `hulh` are two) is described by its
parameters; a Python game that wraps one offers `universal_poker_game()` (the
protocol `hulh` follows). So the library reads the rules through pyspiel and
never imports the `games` package.
"""

from __future__ import annotations

import dataclasses

import pyspiel


class UnsupportedPokerGameError(ValueError):
    """The game is not a two-player limit hold'em the engine handles."""


@dataclasses.dataclass(frozen=True)
class BettingRules:
    """Rules of a two-player limit hold'em game (chips; players 0 and 1).

    blinds: chips each player has in before the first action.
    raise_sizes, max_raises, first_player, board_cards: per betting round
      (first_player 0-based; board cards dealt at the start of the round).
    """

    num_ranks: int
    num_suits: int
    num_hole_cards: int
    blinds: tuple[int, int]
    stacks: tuple[int, int]
    raise_sizes: tuple[int, ...]
    max_raises: tuple[int, ...]
    first_player: tuple[int, ...]
    board_cards: tuple[int, ...]

    @property
    def num_rounds(self) -> int:
        return len(self.raise_sizes)

    @property
    def deck_size(self) -> int:
        return self.num_ranks * self.num_suits

    @property
    def big_blind(self) -> int:
        return max(self.blinds)

    @classmethod
    def from_game(cls, game: pyspiel.Game) -> BettingRules:
        """The rules of `game`; UnsupportedPokerGameError naming what is unsupported."""
        inner = game.universal_poker_game() if callable(getattr(game, "universal_poker_game", None)) else game
        name = game.get_type().short_name
        if inner.get_type().short_name != "universal_poker":
            raise UnsupportedPokerGameError(
                f"game '{name}' is not poker: the engine reads two-player limit universal_poker games "
                "(e.g. flop_holdem, hulh after `import games`)"
            )
        p = inner.get_parameters()
        problems = []
        if int(p["numPlayers"]) != 2:
            problems.append(f"{p['numPlayers']} players (only 2)")
        if str(p["betting"]) != "limit":
            problems.append(f"{p['betting']} betting (only limit)")
        if int(p["numHoleCards"]) != 2:
            problems.append(f"{p['numHoleCards']} hole cards (only 2)")
        if str(p.get("boardCards", "")).strip() or str(p.get("handReaches", "")).strip():
            problems.append("fixed board cards / hand reaches (not yet)")
        if problems:
            raise UnsupportedPokerGameError(f"game '{name}' is unsupported by the poker engine: {', '.join(problems)}")
        rounds = int(p["numRounds"])

        def per_round(key, default=None):
            values = tuple(int(v) for v in str(p.get(key, "")).split())
            if not values and default is not None:
                return (default,) * rounds
            if len(values) == 1 and rounds > 1:
                values = values * rounds
            if len(values) != rounds:
                raise UnsupportedPokerGameError(f"game '{name}': parameter {key}={p.get(key)!r} for {rounds} rounds")
            return values

        blinds = tuple(int(v) for v in str(p["blind"]).split())
        stacks = tuple(int(v) for v in str(p["stack"]).split())
        return cls(
            num_ranks=int(p["numRanks"]), num_suits=int(p["numSuits"]), num_hole_cards=2,
            blinds=(blinds[0], blinds[1]), stacks=(stacks[0], stacks[-1]), raise_sizes=per_round("raiseSize"),
            max_raises=per_round("maxRaises", default=2**31 - 1),
            first_player=tuple(v - 1 for v in per_round("firstPlayer")),  # ACPC seats are 1-based
            board_cards=per_round("numBoardCards"),
        )  # fmt: skip
