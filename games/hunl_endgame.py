"""A small Libratus river endgame as a pyspiel game (a cross-check of the endgame engine).

`hunl_endgame(subgame=4,max_hands=24)`: the river subgame 3 or 4 of
`games.libratus_endgames` with each player's range cut to its `max_hands`
largest reach weights (the rest set to 0), so that OpenSpiel's own tools
(`exploitability.nash_conv`, the generic tree engine) can solve and measure it
and check the public-tree engine on exactly the same game.

Rules: one chance node deals the pair (out-of-position hand, button hand)
with probability proportional to r0[h0] r1[h1] over pairs sharing no card
(with each other or the board); then the betting of
`openspiel_cfrx.poker.nolimit.nolimit_betting_tree` (the paper's abstraction):
actions 0 fold, 1 check/call, 2.. the node's bets in ascending size. Returns
are the engine's: chips won from the opponent's contribution (each starts
with half the pot in), 0 on a tie. Player 0 (out of position) acts first.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from games._common import two_player_zero_sum_game_type
from games.libratus_endgames import hunl_rules, load_endgame
from openspiel_cfrx.poker import Deck, rank_hands
from openspiel_cfrx.poker.nolimit import nolimit_betting_tree
from openspiel_cfrx.poker.public_tree import DECISION, FOLDED

_DEFAULTS = {"subgame": 4, "max_hands": 24}
_GAME_TYPE = two_player_zero_sum_game_type(
    "hunl_endgame", "Libratus river endgame, restricted ranges (HUNL, paper's bet abstraction)", _DEFAULTS,
    observations=False,
)


def restricted_ranges(reach: np.ndarray, max_hands: int) -> np.ndarray:
    """Each row keeps its `max_hands` largest weights (ties: lower hand index)."""
    out = np.zeros_like(reach)
    for p in (0, 1):
        keep = np.argsort(-reach[p], kind="stable")[:max_hands]
        keep = keep[reach[p, keep] > 0]
        out[p, keep] = reach[p, keep]
    return out


class HunlEndgameGame(pyspiel.Game):
    def __init__(self, params=None):
        params = {**_DEFAULTS, **(params or {})}
        unknown = set(params) - set(_DEFAULTS)
        if unknown:
            raise ValueError(f"hunl_endgame: unknown parameter(s) {sorted(unknown)}; accepted: {sorted(_DEFAULTS)}")
        if params["subgame"] not in (3, 4):
            raise ValueError(f"hunl_endgame: subgame must be 3 or 4 (the river endgames), got {params['subgame']}")
        if params["max_hands"] < 1:
            raise ValueError(f"hunl_endgame: max_hands must be >= 1, got {params['max_hands']}")
        self.endgame = load_endgame(int(params["subgame"]))
        self.ranges = restricted_ranges(self.endgame.reach, int(params["max_hands"]))
        self.rules = hunl_rules()
        pot = self.endgame.pot
        self.nodes = nolimit_betting_tree(self.rules, self.endgame.round, (pot // 2, pot - pot // 2))
        deck = Deck(self.rules.num_ranks, self.rules.num_suits)
        self.deck = deck
        self.ranks = rank_hands(deck.hand_cards, np.array(self.endgame.board), deck.num_suits)
        hands = [np.flatnonzero(self.ranges[p] * ~deck.conflicts(self.endgame.board)) for p in (0, 1)]
        deals = []
        for h0 in hands[0]:
            for h1 in hands[1]:
                if not deck.contains[h0, deck.hand_cards[h1]].any():
                    deals.append((int(h0), int(h1), self.ranges[0, h0] * self.ranges[1, h1]))
        total = sum(w for _, _, w in deals)
        self.deals = [(h0, h1, w / total) for h0, h1, w in deals]
        stack = max(self.rules.stacks)
        info = pyspiel.GameInfo(
            num_distinct_actions=max(len(n.legal) for n in self.nodes if n.kind == DECISION) + 1,
            max_chance_outcomes=len(self.deals), num_players=2, min_utility=-float(stack),
            max_utility=float(stack), utility_sum=0.0, max_game_length=1 + _depth(self.nodes, 0),
        )  # fmt: skip
        super().__init__(_GAME_TYPE, info, params)
        self.tables = _Tables(self.nodes, self.deals, self.ranks)

    def new_initial_state(self):
        return HunlEndgameState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return _Observer()


class HunlEndgameState(pyspiel.State):
    def __init__(self, game):
        super().__init__(game)
        self._game = game.tables
        self.deal: tuple[int, int] | None = None
        self.node = 0
        self.labels: list[int] = []

    def current_player(self):
        if self.deal is None:
            return pyspiel.PlayerId.CHANCE
        node = self._game.nodes[self.node]
        return node.player if node.kind == DECISION else pyspiel.PlayerId.TERMINAL

    def is_terminal(self):
        return self.deal is not None and self._game.nodes[self.node].kind != DECISION

    def chance_outcomes(self):
        return [(i, w) for i, (_, _, w) in enumerate(self._game.deals)]

    def _legal_actions(self, player):
        return list(self._game.nodes[self.node].legal)

    def _apply_action(self, action):
        if self.deal is None:
            h0, h1, _ = self._game.deals[action]
            self.deal = (h0, h1)
            return
        node = self._game.nodes[self.node]
        self.node = node.children[node.legal.index(action)]
        self.labels.append(int(action))

    def returns(self):
        if not self.is_terminal():
            return [0.0, 0.0]
        node, game = self._game.nodes[self.node], self._game
        c = node.contributions
        if node.kind == FOLDED:
            loser = node.player
        else:
            r0, r1 = game.ranks[self.deal[0]], game.ranks[self.deal[1]]
            if r0 == r1:
                return [0.0, 0.0]
            loser = 1 if r0 > r1 else 0
        won = float(c[loser])
        return [won, -won] if loser == 1 else [-won, won]

    def information_state_string(self, player=None):
        player = self.current_player() if player is None else player
        hand = self.deal[player] if self.deal is not None else -1
        return f"p{player} hand {hand} betting {' '.join(map(str, self.labels))}"

    def __str__(self):
        return f"deal {self.deal} betting {self.labels}"


class _Tables:
    """What states read from their game; shared by clones (never copied)."""

    def __init__(self, nodes, deals, ranks):
        self.nodes, self.deals, self.ranks = nodes, deals, ranks

    def __deepcopy__(self, memo):
        return self


class _Observer:
    """Information-state strings only (what exploitability and the tree engine read)."""

    def __init__(self):
        self.tensor, self.dict = np.zeros(0, np.float32), {}

    def set_from(self, state, player):
        del state, player  # no tensor: strings are computed on demand by string_from

    def string_from(self, state, player):
        return state.information_state_string(player)


def _depth(nodes, n: int) -> int:
    return 1 + max((_depth(nodes, c) for c in nodes[n].children), default=0)


pyspiel.register_game(_GAME_TYPE, HunlEndgameGame)
