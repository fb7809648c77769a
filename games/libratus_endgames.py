"""The Libratus endgames (heads-up no-limit hold'em subgames) of the OFTRL-CFR
paper's Section 6, read from the public data files shipped in this package
(`games/data/libratus_endgames/`, read with `importlib.resources`; source,
licence and format in its SOURCE.md and README.md):

    -round 3|4     (3: turn + river, 4: river; 1-based like the data)
    -board 7s9h9cTc
    -pot 500       (each player has put in half)
    -reach p_1 ... p_2652   (out-of-position player's 1,326 hands, then the button's)

Hands are ordered 2s2h, 2s2d, 2s2c, 2s3s, ..., AdAc: cards by rank (deuce
first), suits s, h, d, c within a rank, pairs in that card order. The engine
numbers cards rank * 4 + suit with suits c, d, h, s (universal_poker's
order), so the reach vectors are permuted into the engine's hand order here.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import itertools
import os

import numpy as np

from openspiel_cfrx.poker import BetAbstraction, Deck, PokerRules, PublicTree, Subgame
from openspiel_cfrx.poker.nolimit import nolimit_betting_tree

RANKS = "23456789TJQKA"
DATA_SUITS = "shdc"  # the data's suit order within a rank
ENGINE_SUITS = "cdhs"  # universal_poker's (the engine's) suit order
# The packaged data (a Traversable: a directory of an installed wheel, or of the checkout).
DATA = importlib.resources.files("games") / "data" / "libratus_endgames"

# The paper's heads-up no-limit hold'em (Section 6): "stacks of 20,000 chips",
# big blind 100 (the minimum raise: "all raises must be at least $100").
SMALL_BLIND, BIG_BLIND, STACK = 50, 100, 20_000
BOARD_CARDS = (0, 3, 1, 1)  # preflop, flop, turn, river
# Player 0, the out-of-position player (the data's first range), acts first in every round.
FIRST_PLAYER = (0, 0, 0, 0)


def hunl_rules(abstraction: BetAbstraction | None = None) -> PokerRules:
    """The paper's heads-up no-limit hold'em on a 52-card deck, with its bet
    abstraction (`BetAbstraction()`: 0.5x and 1x pot and all-in for a round's
    first bet, 1x pot and all-in after) or `abstraction`."""
    return PokerRules(
        num_ranks=len(RANKS),
        num_suits=len(ENGINE_SUITS),
        blinds=(SMALL_BLIND, BIG_BLIND),
        stacks=(STACK, STACK),
        board_cards=BOARD_CARDS,
        first_player=FIRST_PLAYER,
        abstraction=abstraction or BetAbstraction(),
    )


def engine_card(text: str) -> int:
    """'Ts' -> the engine's card index."""
    if len(text) != 2 or text[0] not in RANKS or text[1] not in ENGINE_SUITS:
        raise ValueError(f"bad card {text!r}: expected a rank of {RANKS} and a suit of {ENGINE_SUITS}")
    return RANKS.index(text[0]) * 4 + ENGINE_SUITS.index(text[1])


def data_hand_order(deck: Deck) -> np.ndarray:
    """[1326] engine hand index of the data's k-th hand."""
    cards = [RANKS.index(r) * 4 + ENGINE_SUITS.index(s) for r in RANKS for s in DATA_SUITS]
    return np.array([deck.hand_index(a, b) for a, b in itertools.combinations(cards, 2)], dtype=np.int64)


@dataclasses.dataclass
class Endgame:
    """One endgame: engine round of the root (2 = turn, 3 = river), board
    (engine cards), pot (chips, half from each player) and ranges [2, 1326]
    in engine hand order (row 0: the out-of-position player, first to act)."""

    name: str
    round: int
    board: tuple[int, ...]
    pot: int
    reach: np.ndarray

    def rules(self, abstraction: BetAbstraction | None = None) -> PokerRules:
        return hunl_rules(abstraction)

    def tree(self, abstraction: BetAbstraction | None = None, **kwargs) -> PublicTree:
        """The public tree of the endgame under the paper's abstraction (or `abstraction`)."""
        rules = self.rules(abstraction)
        nodes = nolimit_betting_tree(rules, self.round, (self.pot // 2, self.pot - self.pot // 2))
        return PublicTree(betting=(rules, nodes), subgame=Subgame((), self.board, self.reach), **kwargs)


def read_endgame(path: str) -> Endgame:
    """Parses one data file; ValueError naming the file and the problem."""
    fields: dict[str, list[str]] = {}
    try:
        with open(path) as f:
            tokens = f.read().split()
    except OSError as e:
        raise ValueError(f"cannot read endgame file {path!r}: {e.strerror}") from None
    key = None
    for token in tokens:
        if token.startswith("-") and not _is_number(token):
            key = token[1:]
            fields[key] = []
        elif key is None:
            raise ValueError(f"{path}: expected '-round', '-board', '-pot', '-reach' fields, got {token!r}")
        else:
            fields[key].append(token)
    missing = {"round", "board", "pot", "reach"} - set(fields)
    if missing:
        raise ValueError(f"{path}: missing field(s) {', '.join(sorted(missing))}")
    data_round, board_text, pot = int(fields["round"][0]), fields["board"][0], int(fields["pot"][0])
    if data_round not in (3, 4):
        raise ValueError(f"{path}: round must be 3 (turn) or 4 (river), got {data_round}")
    board = tuple(engine_card(board_text[i : i + 2]) for i in range(0, len(board_text), 2))
    if len(board) != data_round + 1:
        raise ValueError(f"{path}: round {data_round} needs {data_round + 1} board cards, got {board_text!r}")
    reach = np.array([float(x) for x in fields["reach"]])
    if reach.shape != (2652,) or not np.all(np.isfinite(reach)) or reach.min() < 0:
        raise ValueError(f"{path}: reach must be 2,652 finite probabilities >= 0, got {reach.size}")
    deck = Deck(13, 4)
    ranges = np.zeros((2, deck.num_hands))
    order = data_hand_order(deck)
    ranges[:, order] = reach.reshape(2, deck.num_hands)
    name = os.path.splitext(os.path.basename(path))[0]
    return Endgame(name, data_round - 1, board, pot, ranges)


def load_endgame(number: int, directory: str | os.PathLike | None = None) -> Endgame:
    """Subgame 1-4 of the paper: from the data packaged with `games`, or
    from `directory` (subgame1.txt..subgame4.txt) if given."""
    if number not in (1, 2, 3, 4):
        raise ValueError(f"the Libratus endgames are numbered 1-4, got {number}")
    name = f"subgame{number}.txt"
    if directory:
        return read_endgame(os.path.join(directory, name))
    with importlib.resources.as_file(DATA / name) as path:  # a real file even from a zipped install
        return read_endgame(str(path))


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True
