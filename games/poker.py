"""Flop hold'em (FHP) and heads-up limit hold'em (HULH) with the Deep CFR rules.

Rules are those of Brown, Lerer, Gross and Sandholm, "Deep Counterfactual
Regret Minimization", ICML 2019, Section 5 and Appendix A:

* two players; P1 (pyspiel player 0) posts a 50-chip small blind, P2 (player 1)
  a 100-chip big blind; P1 acts first preflop, P2 first in every later round;
* limit betting: fold, call (check), raise; raises are 100 chips in rounds 1-2
  and 200 chips in rounds 3-4; at most 3 raises in rounds 1-2 and 4 in rounds
  3-4, where a raise is a player's action that puts in more than the opponent's
  share (the forced big blind is *not* a raise; see docs/poker_games.md);
* two private cards each, a 3-card flop after round 1, and for HULH one turn
  card after round 2 and one river card after round 3; FHP ends after round 2;
* showdown: best five-card hand from private + board cards, ties split.

Dynamics are delegated to OpenSpiel's C++ `universal_poker` (ACPC engine): the
registered factories validate their parameters and translate them into an ACPC
limit gamedef. `flop_holdem` returns the `universal_poker` game itself (its
only board is the flop, so universal_poker's information state is exact).
`hulh` is a thin Python game (`HulhGame`) around it: dynamics are C++ calls,
but the information state keeps the streets apart (universal_poker's merges
the flop and turn cards into one set) and shows the real stacks; see its
docstring. After
`import games`:

    pyspiel.load_game("flop_holdem")                          # the paper's FHP
    pyspiel.load_game("hulh")                                 # the paper's HULH
    pyspiel.load_game("flop_holdem(num_ranks=4,num_suits=2)")  # small FHP

Parameters of both games: `num_ranks` (2..13, the lowest ranks 2, 3, ... are
kept), `num_suits` (1..4) and `max_raises` (raise caps per round, e.g. "3 3").

Actions: 0 = fold, 1 = call/check, 2 = raise; as in ACPC, fold is offered only
when facing a bet (folding instead of checking is weakly dominated, so game
values are unchanged). Chance actions index the deck as
`rank * num_suits + suit` (rank 0 = deuce, suits c, d, h, s); `card_from_action`
maps them to the paper's 52-card index `rank * 4 + suit` (Appendix C).
Utilities are in chips; `chips_to_mbb_per_game` converts to mbb/g.
`paper_rules(num_rounds, ...)` builds the rules (`openspiel_cfrx.poker.PokerRules`,
the one model the engine, encoders and LBR read), `limit_holdem_rules(game)`
recovers those of a loaded game and `game_size(rules)` counts its histories and
infosets exactly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import pyspiel

from games._common import two_player_zero_sum_game_type
from openspiel_cfrx.poker.spec import PokerRules

FLOP_HOLDEM = "flop_holdem"
HULH = "hulh"

# The paper's rules (Section 5 and Appendix A, see the module docstring);
# `paper_rules` builds them as the library's `PokerRules`.
SMALL_BLIND = 50
BIG_BLIND = 100
STACK = 20000  # per player (limit betting never reaches it)
NUM_HOLE_CARDS = 2
# Per round, for the full four-round game (FHP uses the first two entries).
_BOARD_CARDS_PER_ROUND = (0, 3, 1, 1)
_RAISE_SIZE_PER_ROUND = (100, 100, 200, 200)
_FIRST_PLAYER_PER_ROUND = (0, 1, 1, 1)
_PAPER_MAX_RAISES = (3, 3, 4, 4)
# Appendix C: "at most 6 sequential actions" per betting round.
PAPER_BET_POSITIONS_PER_ROUND = 6

FOLD, CALL, RAISE = 0, 1, 2
MAX_RANKS, MAX_SUITS = 13, 4
RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"


def paper_rules(num_rounds: int, num_ranks: int = MAX_RANKS, num_suits: int = MAX_SUITS,
                max_raises: tuple[int, ...] = ()) -> PokerRules:  # fmt: skip
    """The Deep CFR paper's limit hold'em rules (module docstring): flop hold'em
    with `num_rounds=2`, HULH with 4, on a deck of the lowest `num_ranks` ranks
    in `num_suits` suits; raise caps per round `max_raises` (default the
    paper's, 3 in rounds 1-2 and 4 in rounds 3-4).

    Raises ValueError saying what is wrong and how to fix it.
    """
    if not max_raises:
        max_raises = _PAPER_MAX_RAISES[:num_rounds]
    _validate(num_rounds, num_ranks, num_suits, max_raises)
    return PokerRules(
        num_ranks=num_ranks,
        num_suits=num_suits,
        num_hole_cards=NUM_HOLE_CARDS,
        blinds=(SMALL_BLIND, BIG_BLIND),
        stacks=(STACK, STACK),
        board_cards=_BOARD_CARDS_PER_ROUND[:num_rounds],
        first_player=_FIRST_PLAYER_PER_ROUND[:num_rounds],
        raise_sizes=_RAISE_SIZE_PER_ROUND[:num_rounds],
        max_raises=tuple(max_raises),
    )


def bet_positions_per_round(rules: PokerRules) -> int:
    """Betting positions per round in the structured encoding (Appendix C).

    A round has at most `max_raises + 2` actions (check/limp, the raises,
    the closing call); the paper's network uses 6, which fits caps <= 4.
    """
    return max(PAPER_BET_POSITIONS_PER_ROUND, max(rules.max_raises) + 2)


def _load(rules: PokerRules) -> pyspiel.Game:
    """`rules` loaded as a `universal_poker` game."""
    return pyspiel.load_game("universal_poker", rules.universal_poker_params())


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _validate(num_rounds, num_ranks, num_suits, max_raises) -> None:
    """Raises ValueError saying what is wrong with `paper_rules`' arguments and how to fix it."""
    if num_rounds not in (2, 4):
        raise ValueError(
            f"num_rounds={num_rounds!r}: use 2 (flop hold'em) or 4 (limit hold'em)."
        )
    if not _is_int(num_ranks) or not 2 <= num_ranks <= MAX_RANKS:
        raise ValueError(
            f"num_ranks={num_ranks!r}: must be an integer in [2, {MAX_RANKS}] "
            "(the lowest ranks, deuce upwards, are kept)."
        )
    if not _is_int(num_suits) or not 1 <= num_suits <= MAX_SUITS:
        raise ValueError(f"num_suits={num_suits!r}: must be an integer in [1, {MAX_SUITS}].")
    deck_size = num_ranks * num_suits
    num_board_cards = sum(_BOARD_CARDS_PER_ROUND[:num_rounds])
    cards_needed = 2 * NUM_HOLE_CARDS + num_board_cards
    if deck_size < cards_needed:
        raise ValueError(
            f"a deck of num_ranks * num_suits = {num_ranks} * {num_suits} = "
            f"{deck_size} cards cannot deal {cards_needed} cards (2 x 2 hole + "
            f"{num_board_cards} board); raise num_ranks or num_suits."
        )
    if len(max_raises) != num_rounds or not all(
        _is_int(cap) and 0 <= cap <= 20 for cap in max_raises
    ):
        raise ValueError(
            f"max_raises={max_raises!r}: give {num_rounds} integers in [0, 20], "
            f"one raise cap per round, e.g. {' '.join(map(str, _PAPER_MAX_RAISES[:num_rounds]))!r}."
        )


def _parse_max_raises(text, num_rounds: int) -> tuple[int, ...]:
    if not isinstance(text, str):
        raise ValueError(
            f"max_raises={text!r}: must be a string of {num_rounds} space-separated integers."
        )
    try:
        return tuple(int(token) for token in text.split())
    except ValueError:
        raise ValueError(
            f"max_raises={text!r}: must be {num_rounds} space-separated integers, e.g. "
            f"{' '.join(map(str, _PAPER_MAX_RAISES[:num_rounds]))!r}."
        ) from None


def rules_from_parameters(num_rounds: int, params: Mapping) -> PokerRules:
    """The validated rules of `flop_holdem` / `hulh` game parameters."""
    return paper_rules(
        num_rounds,
        num_ranks=params.get("num_ranks", MAX_RANKS),
        num_suits=params.get("num_suits", MAX_SUITS),
        max_raises=_parse_max_raises(
            params.get("max_raises", " ".join(map(str, _PAPER_MAX_RAISES[:num_rounds]))),
            num_rounds,
        ),
    )


def _split_ints(text) -> tuple[int, ...]:
    return tuple(int(token) for token in str(text).split())


def limit_holdem_rules(game: pyspiel.Game) -> PokerRules:
    """Recovers the rules of a game loaded as `flop_holdem` / `hulh`.

    Raises ValueError if `game` is not a two-player limit `universal_poker`
    game with this module's blinds, raise sizes, acting order and deal.
    """
    if callable(getattr(game, "universal_poker_game", None)):  # hulh wraps one
        game = game.universal_poker_game()
    if game.get_type().short_name != "universal_poker":
        raise ValueError(
            f"expected a game loaded as '{FLOP_HOLDEM}' or '{HULH}' (a universal_poker "
            f"game), got {game.get_type().short_name!r}."
        )
    params = game.get_parameters()
    num_rounds = int(params["numRounds"])
    if not str(params.get("maxRaises", "")).strip():
        raise ValueError(
            f"{game} is not a flop_holdem/hulh variant: it has no raise caps (maxRaises). "
            f"Load it with pyspiel.load_game('{FLOP_HOLDEM}(...)') or '{HULH}(...)'."
        )
    try:
        rules = paper_rules(
            num_rounds,
            num_ranks=int(params["numRanks"]),
            num_suits=int(params["numSuits"]),
            max_raises=_split_ints(params.get("maxRaises", "")),
        )
    except ValueError as err:
        raise ValueError(f"{game} is not a flop_holdem/hulh variant: {err}") from None
    expected = rules.universal_poker_params()
    for key in ("betting", "numPlayers", "blind", "raiseSize", "firstPlayer",
                "numHoleCards", "numBoardCards"):
        if str(params.get(key)) != str(expected[key]):
            raise ValueError(
                f"{game} is not a flop_holdem/hulh variant: parameter {key}="
                f"{params.get(key)!r}, expected {expected[key]!r}. Load it with "
                f"pyspiel.load_game('{FLOP_HOLDEM}(...)') or '{HULH}(...)'."
            )
    return rules


def card_from_action(chance_action: int, num_suits: int) -> int:
    """Paper's 52-card index (rank * 4 + suit, Appendix C) of a chance action."""
    return (chance_action // num_suits) * MAX_SUITS + chance_action % num_suits


def card_to_string(card: int) -> str:
    """'As'-style name of a 52-card index (rank * 4 + suit, rank 0 = deuce)."""
    return RANK_CHARS[card // MAX_SUITS] + SUIT_CHARS[card % MAX_SUITS]


def chips_to_mbb_per_game(chips, big_blind: float = BIG_BLIND):
    """Chips per game -> milli-big-blinds per game (1 chip = 10 mbb at BB=100).

    Works on floats and numpy arrays alike.
    """
    return chips * 1000.0 / big_blind


def mbb_per_game_to_chips(mbb, big_blind: float = BIG_BLIND):
    """Inverse of `chips_to_mbb_per_game`."""
    return mbb * big_blind / 1000.0


def _game_type(short_name: str, long_name: str, num_rounds: int) -> pyspiel.GameType:
    return two_player_zero_sum_game_type(
        short_name,
        long_name,
        {
            "num_ranks": MAX_RANKS,
            "num_suits": MAX_SUITS,
            "max_raises": " ".join(map(str, _PAPER_MAX_RAISES[:num_rounds])),
        },
    )


class FlopHoldemGame:
    """Factory registered as `flop_holdem`: `FlopHoldemGame(params)` is a game.

    Calling it returns the `universal_poker` game with the paper's FHP rules;
    `params` (a dict, all optional) are the registered parameters. A class
    rather than a closure: pyspiel keeps the registered Python callable until
    C++ static destruction, after the interpreter has finalized, and a class
    (held alive by its own reference cycle) is never freed there.
    """

    NUM_ROUNDS = 2

    def __new__(cls, params: Mapping | None = None) -> pyspiel.Game:
        return _load(rules_from_parameters(cls.NUM_ROUNDS, params or {}))


_INT_MAX = 2**31 - 1  # universal_poker's limit-betting stack, shown as "Money"


class HulhGame(pyspiel.Game):
    """The paper's heads-up limit hold'em, registered as `hulh`.

    universal_poker's information state shows the board as one sorted set, so
    in HULH flop 2c3d4h + turn 9s and flop 2c3d9s + turn 4h are one infoset
    (an imperfect-recall merge the paper's game does not have). This game keeps
    universal_poker's C++ dynamics (every state wraps a C++ state and
    delegates to it) and shows the board street by street
    (`[Public: 4h3d2c|9s]`) in `information_state_string`, adds one
    street-by-card block to `information_state_tensor`, and shows each
    player's real remaining stack in "Money" (universal_poker prints
    2^31 - 1 minus the contribution under limit betting). Random playouts run
    at ~0.8-0.9x the raw C++ game's steps/s, ~0.7x when every decision also
    asks the information state string or tensor
    (docs/decisions.md, "`hulh` as a `pyspiel.State` wrapper"). With the merged board,
    `openspiel_cfrx.get_tree` refuses raw universal_poker HULH as imperfect
    recall; `hulh`'s infosets are `game_size`'s perfect-recall count.

    States are `pyspiel.State` objects (`HulhState`) that wrap the C++
    states: Python callers (OpenSpiel's Python algorithms, `openspiel_cfrx`)
    call the C++ state through one Python delegation, and OpenSpiel's C++
    algorithms (`pyspiel.CFRSolver`, `pyspiel.ExternalSamplingMCCFRSolver`,
    `pyspiel.deserialize_game_and_state`, ...) reach them through pybind11's
    trampolines and see the same per-street information state (slowly: a
    Python call per C++ call). `game.universal_poker_game()` is the C++ game
    inside (merged-board infosets).
    """

    NUM_ROUNDS = 4

    def __init__(self, params: Mapping | None = None):
        params = dict(params or {})
        self._rules = rules_from_parameters(self.NUM_ROUNDS, params)
        inner = _load(self._rules)
        self._inner = inner
        self._num_deck = self._rules.deck_size
        # universal_poker's card names ("2c", ...) indexed by chance action
        self._card_names = tuple(
            card_to_string(card_from_action(a, self._rules.num_suits)) for a in range(self._num_deck)
        )
        self._inner_tensor_size = int(inner.information_state_tensor_size())
        info = pyspiel.GameInfo(
            num_distinct_actions=inner.num_distinct_actions(),
            max_chance_outcomes=inner.max_chance_outcomes(),
            num_players=2,
            min_utility=inner.min_utility(),
            max_utility=inner.max_utility(),
            utility_sum=0.0,
            max_game_length=inner.max_game_length(),
        )
        super().__init__(HULH_GAME_TYPE, info, params)

    def universal_poker_game(self) -> pyspiel.Game:
        """The underlying C++ `universal_poker` game (merged-board infosets)."""
        return self._inner

    def new_initial_state(self) -> HulhState:
        return HulhState(self, self._inner.new_initial_state())

    def information_state_tensor_shape(self) -> list[int]:
        return [self.information_state_tensor_size()]

    def information_state_tensor_size(self) -> int:
        # universal_poker's tensor + which card came on which board street
        return self._inner_tensor_size + self._num_deck * (self.NUM_ROUNDS - 1)

    def observation_tensor_shape(self) -> list[int]:
        return self._inner.observation_tensor_shape()

    def observation_tensor_size(self) -> int:
        return self._inner.observation_tensor_size()

    def make_py_observer(self, iig_obs_type=None, params=None) -> _HulhObserver:
        """The observer pyspiel's C++ side uses for information state (perfect
        recall) or observation strings and tensors of `hulh` states."""
        if isinstance(iig_obs_type, Mapping):  # pyspiel passes params alone
            iig_obs_type, params = None, iig_obs_type
        if params:
            raise ValueError(f"hulh observers take no parameters, got {dict(params)}")
        if iig_obs_type is not None and iig_obs_type.perfect_recall:
            return _HulhObserver(True, self.information_state_tensor_size())
        return _HulhObserver(False, self.observation_tensor_size())

    def deserialize_state(self, text: str) -> HulhState:
        """Inverse of `state.serialize()` (one action per line)."""
        return _hulh_state_from_history(self, [int(line) for line in text.split()])

    def __reduce__(self):
        # Pickles (and copies) as its game string: the C++ game inside is rebuilt.
        return pyspiel.load_game, (str(self),)

    def __deepcopy__(self, memo) -> HulhGame:
        return self  # immutable

    def __copy__(self) -> HulhGame:
        return self


class HulhState(pyspiel.State):
    """A `hulh` state: a `pyspiel.State` that wraps universal_poker's C++
    state, with per-street board information states (see `HulhGame`).

    Python callers get Python methods that call the C++ state directly (one
    delegation per call): the hot ones below, and every other public
    `pyspiel.State` method through `_delegate` (states it returns are wrapped).
    C++ callers (OpenSpiel's C++ algorithms, which reach a Python state through
    pybind11's trampolines) use `_apply_action`, `_legal_actions` and the game's
    `make_py_observer`, so they see the same dynamics and the same per-street
    information state. (The C++ base's own history is kept only on that C++
    path; Python reads `history()` from the wrapped state.)
    """

    def __init__(self, game: HulhGame, state: pyspiel.State):
        super().__init__(game)
        self._game = game
        self._state = state

    # -- dynamics: the C++ state's ------------------------------------------------
    def apply_action(self, action: int) -> None:
        self._state.apply_action(action)

    def child(self, action: int) -> HulhState:
        return HulhState(self._game, self._state.child(action))

    def clone(self) -> HulhState:
        return HulhState(self._game, self._state.clone())

    def __deepcopy__(self, memo) -> HulhState:
        return self.clone()

    def __copy__(self) -> HulhState:
        return self.clone()

    def __reduce__(self):
        return _hulh_state_from_history, (self._game, self._state.history())

    def is_terminal(self) -> bool:
        return self._state.is_terminal()

    def is_chance_node(self) -> bool:
        return self._state.is_chance_node()

    def is_player_node(self) -> bool:
        return self._state.is_player_node()

    def current_player(self) -> int:
        return self._state.current_player()

    def legal_actions(self, *player) -> list[int]:
        return self._state.legal_actions(*player)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self._state.chance_outcomes()

    def returns(self) -> list[float]:
        return self._state.returns()

    def rewards(self) -> list[float]:
        return self._state.rewards()

    def history(self) -> list[int]:
        return self._state.history()

    def get_game(self) -> HulhGame:
        return self._game

    def universal_poker_state(self) -> pyspiel.State:
        """The wrapped C++ `universal_poker` state (merged-board infosets)."""
        return self._state

    def __str__(self) -> str:
        return _real_money(str(self._state))

    to_string = __str__

    def __repr__(self) -> str:
        return str(self)

    # -- what C++ callers use (pybind11 trampolines of pyspiel's PyState) --------
    def _apply_action(self, action: int) -> None:
        self._state.apply_action(action)

    def _legal_actions(self, player: int) -> list[int]:
        return self._state.legal_actions(player)

    def _action_to_string(self, player: int, action: int) -> str:
        return self._state.action_to_string(player, action)

    # -- what the players see ----------------------------------------------------
    def board_by_street(self) -> list[list[int]]:
        """Chance actions of the board cards dealt so far, per board street
        (flop, turn, river), read off the history (see `_board_by_street`);
        nothing is tracked on the playout path."""
        return _board_by_street(self._state.history())

    def information_state_string(self, player: int | None = None) -> str:
        state = self._state
        if player is None:
            player = state.current_player()
        text = state.information_state_string(player)
        names = self._game._card_names
        public = "|".join(
            "".join([names[a] for a in sorted(street, reverse=True)])
            for street in _board_by_street(state.history())
            if street
        )
        start = text.index("[Public: ")
        end = text.index("]", start)
        return _real_money(f"{text[:start]}[Public: {public}{text[end:]}")

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        state = self._state
        if player is None:
            player = state.current_player()
        deck = self._game._num_deck
        extra = [0.0] * (deck * (HulhGame.NUM_ROUNDS - 1))
        for street, actions in enumerate(_board_by_street(state.history())):
            for a in actions:
                extra[street * deck + a] = 1.0
        tensor = state.information_state_tensor(player)
        tensor.extend(extra)
        return tensor

    def observation_string(self, player: int | None = None) -> str:
        if player is None:
            player = self._state.current_player()
        return _real_money(self._state.observation_string(player))

    def observation_tensor(self, player: int | None = None) -> list[float]:
        if player is None:
            player = self._state.current_player()
        return self._state.observation_tensor(player)


def _delegate(name: str):
    def method(self, *args, **kwargs):
        result = getattr(self._state, name)(*args, **kwargs)
        if isinstance(result, pyspiel.State) and not isinstance(result, HulhState):
            return HulhState(self._game, result)
        return result

    method.__name__ = name
    method.__doc__ = f"The wrapped C++ state's `{name}` (see `HulhState`)."
    return method


# Every other public pyspiel.State method is the wrapped C++ state's, so that
# Python callers never read the C++ base's history (kept only on the C++ path).
for _name in dir(pyspiel.State):
    if not _name.startswith("_") and _name not in HulhState.__dict__:
        setattr(HulhState, _name, _delegate(_name))
del _name


def _hulh_state_from_history(game: HulhGame, history: list[int]) -> HulhState:
    """Unpickles a `hulh` state (the game pickles as its string)."""
    state = game.new_initial_state()
    for action in history:
        state.apply_action(action)
    return state


class _HulhObserver:
    """The Python observer pyspiel's C++ side asks for a `hulh` state's
    information state (or observation) string and tensor: the same per-street
    ones as the Python methods."""

    def __init__(self, information_state: bool, size: int):
        self._information_state = information_state
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"info_state" if information_state else "observation": self.tensor}

    def set_from(self, state: HulhState, player: int) -> None:
        if self._information_state:
            self.tensor[:] = state.information_state_tensor(player)
        else:
            self.tensor[:] = state.observation_tensor(player)

    def string_from(self, state: HulhState, player: int) -> str:
        if self._information_state:
            return state.information_state_string(player)
        return state.observation_string(player)


def _board_by_street(history: list[int]) -> list[list[int]]:
    """Board chance actions per street (flop, turn, river) of a universal_poker
    hulh history, as far as dealt: the 4 hole cards come first, and each
    betting round that closes (a call/check that is not the round's first
    action; a fold ends the hand) is followed by its street's board cards."""
    streets = []
    position = 2 * NUM_HOLE_CARDS
    end = len(history)
    for count in _BOARD_CARDS_PER_ROUND[1:]:
        actions_in_round = 0
        while True:
            if position >= end:
                return streets
            action = history[position]
            position += 1
            if action == FOLD:
                return streets
            actions_in_round += 1
            if action == CALL and actions_in_round >= 2:
                break
        streets.append(history[position : position + count])
        position += count
    return streets


def _real_money(text: str) -> str:
    """universal_poker shows 2^31 - 1 - contribution as "Money" under limit
    betting; show the real remaining stack (STACK - contribution)."""
    start = text.find("[Money: ")
    if start < 0:
        return text
    start += 8
    end = text.index("]", start)
    shown = text[start:end]
    real = _REAL_MONEY.get(shown)
    if real is None:  # few distinct values: contributions are bounded
        real = _REAL_MONEY[shown] = " ".join(str(STACK - _INT_MAX + int(m)) for m in shown.split())
    return f"{text[:start]}{real}{text[end:]}"


_REAL_MONEY: dict[str, str] = {}


FLOP_HOLDEM_GAME_TYPE = _game_type(FLOP_HOLDEM, "Flop Hold'em (Deep CFR rules)", 2)
HULH_GAME_TYPE = _game_type(HULH, "Heads-Up Limit Hold'em (Deep CFR rules)", 4)

if FLOP_HOLDEM not in pyspiel.registered_names():
    pyspiel.register_game(FLOP_HOLDEM_GAME_TYPE, FlopHoldemGame)
if HULH not in pyspiel.registered_names():
    pyspiel.register_game(HULH_GAME_TYPE, HulhGame)


@dataclasses.dataclass(frozen=True)
class GameSize:
    """Node and infoset counts of one variant (see `game_size`)."""

    histories: int  # all nodes: chance, decision and terminal
    chance_nodes: int
    decision_nodes: tuple[int, int]  # per player
    terminals: int
    infosets: tuple[int, int]  # per player


def _betting_round(cap: int, first_facing_bet: bool) -> tuple[list[int], int, int]:
    """Decision nodes per acting parity, fold leaves and round-closing calls of one round.

    Parity 0 is the round's first actor. A call closes the round unless it is
    the round's first action (a limp or a check); a fold needs a bet to face.
    """
    decisions = [0, 0]
    folds = closes = 0

    def visit(num_actions: int, raises: int, facing: bool) -> None:
        nonlocal folds, closes
        decisions[num_actions % 2] += 1
        if facing:
            folds += 1
        if num_actions >= 1:
            closes += 1
        else:
            visit(num_actions + 1, raises, False)
        if raises < cap:
            visit(num_actions + 1, raises + 1, True)

    visit(0, 0, first_facing_bet)
    return decisions, folds, closes


def _falling(n: int, k: int) -> int:
    result = 1
    for i in range(k):
        result *= n - i
    return result


def game_size(rules: PokerRules, card_by_card: bool = True) -> GameSize:
    """Exact node and infoset counts, computed combinatorially (no tree walk).

    Args:
      rules: the variant's rules (limit betting).
      card_by_card: True counts the tree as universal_poker (and so
        OpenSpiel and `openspiel_cfrx.get_tree`) sees it, one chance node per
        dealt card in deal order; False counts one chance node per deal (all
        hole cards at once, then each street's board at once, unordered
        within a player's hand and a street), the usual way poker trees are
        sized in papers.

    Infosets are per player with perfect recall: own hole cards, each street's
    board as a set, and the betting so far; they do not depend on the
    convention.
    """
    from math import comb

    if not rules.is_limit:
        raise ValueError("game_size counts limit betting trees (these rules have a bet abstraction)")
    deck = rules.deck_size
    hole = 2 * NUM_HOLE_CARDS
    chance_nodes = 0
    if card_by_card:
        chance_nodes += sum(_falling(deck, k) for k in range(hole))
        multiplicity = _falling(deck, hole)
    else:
        chance_nodes += 1
        multiplicity = comb(deck, NUM_HOLE_CARDS) * comb(deck - NUM_HOLE_CARDS, NUM_HOLE_CARDS)
    decision_nodes = [0, 0]
    infosets = [0, 0]
    terminals = 0
    # Distinct (own hole, board per street) views of one player, and betting
    # sequences that reached the current round.
    private_views = comb(deck, NUM_HOLE_CARDS)
    sequences = 1
    dealt = hole
    seen = NUM_HOLE_CARDS
    for rnd in range(rules.num_rounds):
        board = rules.board_cards[rnd]
        if board:
            closing = multiplicity  # one chance subtree per closed sequence and deal
            if card_by_card:
                chance_nodes += closing * sum(_falling(deck - dealt, k) for k in range(board))
                multiplicity *= _falling(deck - dealt, board)
            else:
                chance_nodes += closing
                multiplicity *= comb(deck - dealt, board)
            private_views *= comb(deck - seen, board)
            dealt += board
            seen += board
        decisions, folds, closes = _betting_round(rules.max_raises[rnd], first_facing_bet=rnd == 0)
        first = rules.first_player[rnd]
        for parity in (0, 1):
            player = first if parity == 0 else 1 - first
            decision_nodes[player] += multiplicity * decisions[parity]
            infosets[player] += private_views * sequences * decisions[parity]
        terminals += multiplicity * folds
        multiplicity *= closes
        sequences *= closes
    terminals += multiplicity  # showdowns after the last round
    histories = chance_nodes + sum(decision_nodes) + terminals
    return GameSize(
        histories=histories,
        chance_nodes=chance_nodes,
        decision_nodes=tuple(decision_nodes),
        terminals=terminals,
        infosets=tuple(infosets),
    )
