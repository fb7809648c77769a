"""The rules of a two-player hold'em game, limit or no-limit: one model the
public-tree engine, its no-limit betting trees, local best response and the
network encoders read.

`PokerRules` holds the deck, the blinds and stacks, per betting round the board
cards dealt at its start and its first player, and the betting as data: limit
(per-round raise sizes and raise caps) or no-limit (a `BetAbstraction` of pot
fractions; `openspiel_cfrx.poker.nolimit` builds its tree).

Any two-player limit `universal_poker` game (OpenSpiel's ACPC-style poker:
`flop_holdem` and the C++ game behind `hulh` are two) is described by its
parameters; a Python game that wraps one offers `universal_poker_game()` (the
protocol `hulh` follows). `PokerRules.from_game` reads them through pyspiel,
and `universal_poker_params` writes them back, so the library never imports
the `games` package, which builds the rules of its own games (the Deep CFR
paper's flop hold'em and HULH in `games.poker`, the Libratus endgames' no-limit
hold'em in `games.libratus_endgames`).
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np
import pyspiel

# universal_poker's (ACPC's) limits: rounds, board cards in all, hole cards, suits, ranks.
MAX_ROUNDS, MAX_BOARD_CARDS, MAX_HOLE_CARDS, MAX_SUITS, MAX_RANKS = 4, 7, 3, 4, 13


def _int(name: str, value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"PokerRules {name} must be an int, got {value!r}")
    return int(value)


def _ints(name: str, value) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list, np.ndarray)):
        per = "player" if name in ("blinds", "stacks") else "betting round"
        raise TypeError(f"PokerRules {name} must be a tuple of ints, one per {per}, got {value!r}")
    return tuple(_int(f"{name} entry", v) for v in value)


class UnsupportedPokerGameError(ValueError):
    """The game is not a two-player limit hold'em the engine handles."""


def check_poker_game(game, who: str) -> None:
    """TypeError naming what `who` expects unless `game` is a pyspiel.Game (a game
    string, a state or a solver is not)."""
    if not isinstance(game, pyspiel.Game):
        hint = f"pyspiel.load_game({game!r})" if isinstance(game, str) else "pyspiel.load_game('flop_holdem')"
        raise TypeError(f"{who} expects a pyspiel.Game (a two-player limit universal_poker game, e.g. {hint} "
                        f"after `import games`), got {type(game).__name__}")  # fmt: skip


@dataclasses.dataclass(frozen=True)
class BetAbstraction:
    """Pot fractions offered for the first bet of a round and for later raises
    in it; `all_in` adds the all-in bet everywhere a bet is allowed."""

    first: tuple[float, ...] = (0.5, 1.0)
    later: tuple[float, ...] = (1.0,)
    all_in: bool = True

    def __post_init__(self):
        for name in ("first", "later"):
            value = getattr(self, name)
            if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list, np.ndarray)):
                raise TypeError(f"BetAbstraction {name} must be a tuple of pot fractions, got {value!r}; "
                                f"write ({value!r},) for one size")  # fmt: skip
            for f in value:
                if isinstance(f, bool) or not isinstance(f, numbers.Real):
                    raise TypeError(f"BetAbstraction {name}: bet fractions must be numbers, got {f!r}")
                if not (math.isfinite(f) and f > 0):
                    raise ValueError(f"bet fractions must be > 0, got {f!r}")
            object.__setattr__(self, name, tuple(float(f) for f in value))
        if not isinstance(self.all_in, (bool, np.bool_)):
            raise TypeError(f"BetAbstraction all_in must be True or False, got {self.all_in!r}")
        object.__setattr__(self, "all_in", bool(self.all_in))


@dataclasses.dataclass(frozen=True)
class PokerRules:
    """Rules of a two-player hold'em game (chips; players 0 and 1).

    num_ranks, num_suits: the deck (the lowest ranks, deuce upwards; card =
      rank * num_suits + suit, as universal_poker numbers them).
    blinds: chips each player has in before the first action.
    stacks: each player's chips at the start of the hand (contributions count
      against them; limit betting never reaches them).
    board_cards, first_player: per betting round, the board cards dealt at its
      start and its first player (0-based).
    raise_sizes, max_raises: limit betting, per round: the chips a raise adds
      and the most raises (empty for no-limit).
    abstraction: no-limit betting: the bet sizes offered (None for limit).

    Every field is checked on construction (TypeError / ValueError naming it):
    universal_poker's ranges (2..13 ranks, 1..4 suits, 1..4 rounds, at most 7
    board cards, a deck that deals every card), first players 0 or 1, blinds
    >= 0 (a no-limit big blind >= 1), stacks >= 1 covering the blinds, raise
    sizes >= 1 and caps >= 0: rules that pass load as a universal_poker game.
    """

    num_ranks: int
    num_suits: int
    blinds: tuple[int, int]
    stacks: tuple[int, int]
    board_cards: tuple[int, ...]
    first_player: tuple[int, ...]
    raise_sizes: tuple[int, ...] = ()
    max_raises: tuple[int, ...] = ()
    abstraction: BetAbstraction | None = None
    num_hole_cards: int = 2

    def __post_init__(self):
        # Types first (every integer field an int, every per-player / per-round field a
        # sequence of ints), then the ranges universal_poker (ACPC) and the engine need:
        # rules that pass here load as a universal_poker game (`universal_poker_params`).
        for name in ("num_ranks", "num_suits", "num_hole_cards"):
            object.__setattr__(self, name, _int(name, getattr(self, name)))
        for name in ("blinds", "stacks", "board_cards", "first_player", "raise_sizes", "max_raises"):
            object.__setattr__(self, name, _ints(name, getattr(self, name)))
        if self.abstraction is not None and not isinstance(self.abstraction, BetAbstraction):
            raise TypeError(f"abstraction must be a BetAbstraction (no-limit) or None (limit), got {self.abstraction!r}")
        rounds = len(self.board_cards)
        if len(self.blinds) != 2 or len(self.stacks) != 2:
            raise ValueError(f"blinds {self.blinds} and stacks {self.stacks}: one per player (2)")
        if not 1 <= rounds <= MAX_ROUNDS:
            raise ValueError(f"board_cards {self.board_cards}: one entry per betting round, 1 to {MAX_ROUNDS} rounds")
        if len(self.first_player) != rounds:
            raise ValueError(f"first_player {self.first_player}: one per round ({rounds})")
        if self.abstraction is None:
            if len(self.raise_sizes) != rounds or len(self.max_raises) != rounds:
                raise ValueError(f"limit betting needs raise_sizes {self.raise_sizes} and max_raises "
                                 f"{self.max_raises} for each of the {rounds} rounds")  # fmt: skip
        elif self.raise_sizes or self.max_raises:
            raise ValueError("no-limit rules (an abstraction) take no raise_sizes or max_raises")
        if not 2 <= self.num_ranks <= MAX_RANKS:
            raise ValueError(f"num_ranks must be in 2..{MAX_RANKS} (the lowest ranks, deuce upwards), "
                             f"got {self.num_ranks}")  # fmt: skip
        if not 1 <= self.num_suits <= MAX_SUITS:
            raise ValueError(f"num_suits must be in 1..{MAX_SUITS}, got {self.num_suits}")
        if not 1 <= self.num_hole_cards <= MAX_HOLE_CARDS:
            raise ValueError(f"num_hole_cards must be in 1..{MAX_HOLE_CARDS}, got {self.num_hole_cards}")
        if min(self.board_cards) < 0 or sum(self.board_cards) > MAX_BOARD_CARDS:
            raise ValueError(f"board_cards {self.board_cards}: each round deals >= 0 cards, at most "
                             f"{MAX_BOARD_CARDS} in all")  # fmt: skip
        dealt = 2 * self.num_hole_cards + sum(self.board_cards)
        if dealt > self.num_ranks * self.num_suits:
            raise ValueError(f"a deck of {self.num_ranks} ranks x {self.num_suits} suits = "
                             f"{self.num_ranks * self.num_suits} cards cannot deal {dealt} cards (2 x "
                             f"{self.num_hole_cards} hole + {sum(self.board_cards)} board); raise num_ranks or "
                             "num_suits, or deal fewer board cards")  # fmt: skip
        if any(p not in (0, 1) for p in self.first_player):
            raise ValueError(f"first_player {self.first_player}: each round's first player is 0 or 1 (0-based)")
        if min(self.blinds) < 0:
            raise ValueError(f"blinds {self.blinds} must be >= 0 chips")
        if not self.is_limit and self.big_blind < 1:
            raise ValueError(f"no-limit rules need a big blind >= 1 chip (the minimum raise), got blinds {self.blinds}")
        if any(s < max(b, 1) for s, b in zip(self.stacks, self.blinds, strict=True)):
            raise ValueError(f"stacks {self.stacks} must be >= 1 chip and cover each player's blind {self.blinds}")
        if any(r < 1 for r in self.raise_sizes):
            raise ValueError(f"raise_sizes {self.raise_sizes} must be >= 1 chip per round")
        if any(m < 0 for m in self.max_raises):
            raise ValueError(f"max_raises {self.max_raises} must be >= 0 per round")

    @property
    def is_limit(self) -> bool:
        return self.abstraction is None

    @property
    def num_rounds(self) -> int:
        return len(self.board_cards)

    @property
    def deck_size(self) -> int:
        return self.num_ranks * self.num_suits

    @property
    def num_board_cards(self) -> int:
        return sum(self.board_cards)

    @property
    def big_blind(self) -> int:
        return max(self.blinds)

    def contributions_after(self, contributions, player: int, action: int, rnd: int) -> tuple[int, ...]:
        """Limit betting's one step: the chips each player has put in after `player`
        takes `action` (0 fold, 1 call / check, 2 raise by round `rnd`'s raise size)."""
        spent = list(contributions)
        if action == 1:
            spent[player] = max(spent)
        elif action == 2:
            spent[player] = max(spent) + self.raise_sizes[rnd]
        elif action != 0:
            raise ValueError(f"unknown limit betting action {action!r} (0 fold, 1 call, 2 raise)")
        return tuple(spent)

    def mbb_per_game(self, chips):
        """Chips per game -> milli-big-blinds per game (floats and numpy arrays alike)."""
        return chips * 1000.0 / self.big_blind

    def max_contribution(self) -> int:
        """The most chips one player can put in: with limit betting, the big
        blind plus every round's raises at its cap; with no-limit, the larger stack."""
        if not self.is_limit:
            return max(self.stacks)
        return self.big_blind + sum(cap * size for cap, size in zip(self.max_raises, self.raise_sizes, strict=True))

    def universal_poker_params(self) -> dict:
        """Parameters of the equivalent `universal_poker` game (ACPC gamedef) of
        limit rules; `from_game` of that game gives these rules back.

        ACPC seats are 1-based and `blind` is per seat, so seat 1 (player 0)
        posts blinds[0]; ACPC limit games ignore the stacks.
        """
        if not self.is_limit:
            raise ValueError("universal_poker_params describes limit rules only (no bet abstraction)")

        def join(values):
            return " ".join(str(v) for v in values)

        return {
            "betting": "limit",
            "numPlayers": 2,
            "numRounds": self.num_rounds,
            "blind": join(self.blinds),
            "raiseSize": join(self.raise_sizes),
            "firstPlayer": join(p + 1 for p in self.first_player),
            "maxRaises": join(self.max_raises),
            "numSuits": self.num_suits,
            "numRanks": self.num_ranks,
            "numHoleCards": self.num_hole_cards,
            "numBoardCards": join(self.board_cards),
            "stack": join(self.stacks),
        }

    @classmethod
    def from_game(cls, game: pyspiel.Game) -> PokerRules:
        """The rules of `game`; UnsupportedPokerGameError naming what is unsupported."""
        check_poker_game(game, "PokerRules.from_game")
        inner = game.universal_poker_game() if callable(getattr(game, "universal_poker_game", None)) else game
        name = game.get_type().short_name
        if inner.get_type().short_name != "universal_poker":
            raise UnsupportedPokerGameError(
                f"game '{name}' is not a universal_poker game: the poker engine reads two-player limit hold'em "
                "built on universal_poker (e.g. flop_holdem, hulh after `import games`); for small games such "
                "as kuhn_poker or leduc_poker use openspiel_cfrx.nash_conv (the exact game-tree engine)"
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
