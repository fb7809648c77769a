"""The public tree of a flop hold'em game and exact best response on it
(issue 18, first version: one board deal, strategies as arrays or callables).

The betting tree does not depend on the cards, so it is read once from the
game itself (universal_poker's legal actions and acting player, with a fixed
deal); contributions follow `BettingRules`. Each player's private information
is a vector over the C(deck, 2) hands; the deal node sums over every board with
card removal; terminal values come from `showdown` in O(H log H) per board.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable

import numpy as np
import pyspiel

from openspiel_cfrx.poker.cards import Deck
from openspiel_cfrx.poker.evaluator import rank_hands
from openspiel_cfrx.poker.showdown import fold_values, showdown_values
from openspiel_cfrx.poker.spec import BettingRules, UnsupportedPokerGameError

FOLD, CALL, RAISE = 0, 1, 2
DECISION, DEAL, FOLDED, SHOWDOWN = "decision", "deal", "fold", "showdown"


@dataclasses.dataclass
class PublicNode:
    kind: str
    round: int
    contributions: tuple[int, int]
    player: int = -1  # decision: the acting player; fold: the player who folded
    legal: tuple[int, ...] = ()
    children: list[int] = dataclasses.field(default_factory=list)


def betting_tree(game: pyspiel.Game, rules: BettingRules) -> list[PublicNode]:
    """Nodes in depth-first order, node 0 the first decision (one board deal: flop hold'em)."""
    if sum(1 for cards in rules.board_cards if cards) != 1:
        raise UnsupportedPokerGameError("the public-tree engine handles one board deal (flop hold'em) so far")
    inner = game.universal_poker_game() if callable(getattr(game, "universal_poker_game", None)) else game
    state = inner.new_initial_state()
    for card in range(4):  # hole cards: any fixed deal (betting does not depend on cards)
        state.apply_action(card)
    nodes: list[PublicNode] = []

    def visit(state, rnd: int, contributions: tuple[int, int]) -> int:
        index = len(nodes)
        if state.is_terminal():
            folded = [p for p in (0, 1) if contributions[p] < max(contributions)]
            kind = FOLDED if folded else SHOWDOWN
            nodes.append(PublicNode(kind, rnd, contributions, player=folded[0] if folded else -1))
            return index
        if state.is_chance_node():
            nodes.append(PublicNode(DEAL, rnd, contributions))
            child = state.clone()
            for card in range(4, 4 + rules.board_cards[rnd + 1]):
                child.apply_action(card)
            nodes[index].children.append(visit(child, rnd + 1, contributions))
            return index
        player, legal = state.current_player(), tuple(state.legal_actions())
        nodes.append(PublicNode(DECISION, rnd, contributions, player=player, legal=legal))
        for action in legal:
            spent = list(contributions)
            if action == CALL:
                spent[player] = max(contributions)
            elif action == RAISE:
                spent[player] = max(contributions) + rules.raise_sizes[rnd]
            nodes[index].children.append(visit(state.child(action), rnd, (spent[0], spent[1])))
        return index

    visit(state, 0, tuple(rules.blinds))
    return nodes


# strategy(node, board_index) -> [H, 3] action probabilities of the acting player's hands
# (board_index -1 before the deal; the rows of hands that meet the board are ignored).
Strategy = Callable[[int, int], np.ndarray]


class PublicTree:
    """A flop hold'em game's public tree, deck and boards."""

    def __init__(self, game: pyspiel.Game):
        self.rules = BettingRules.from_game(game)
        self.deck = Deck(self.rules.num_ranks, self.rules.num_suits)
        self.nodes = betting_tree(game, self.rules)
        board_size = next(cards for cards in self.rules.board_cards if cards)
        self.boards = np.array(list(itertools.combinations(range(self.deck.num_cards), board_size)))
        self.boards_per_deal = math.comb(self.deck.num_cards - 4, board_size)
        self._ranks: dict[int, np.ndarray] = {}
        self._free = [~self.deck.conflicts(board) for board in self.boards]

    def uniform(self, node: int, board_index: int) -> np.ndarray:
        legal = np.zeros(3)
        legal[list(self.nodes[node].legal)] = 1.0 / len(self.nodes[node].legal)
        return np.broadcast_to(legal, (self.deck.num_hands, 3))

    def ranks(self, board_index: int) -> np.ndarray:
        if board_index not in self._ranks:
            self._ranks[board_index] = rank_hands(self.deck.hand_cards, self.boards[board_index], self.deck.num_suits)
        return self._ranks[board_index]

    def best_response_value(self, strategy: Strategy, player: int) -> float:
        """`player`'s best-response value (chips per game) against `strategy`'s other player."""
        values = self._values(0, np.ones(self.deck.num_hands), -1, strategy, player)
        n = self.deck.num_cards
        return float(values.sum() / (math.comb(n, 2) * math.comb(n - 2, 2)))

    def nash_conv(self, strategy: Strategy) -> float:
        """Sum of both players' best-response values (zero-sum: OpenSpiel's NashConv)."""
        return self.best_response_value(strategy, 0) + self.best_response_value(strategy, 1)

    def _values(self, n: int, opp_reach: np.ndarray, board: int, strategy: Strategy, br: int) -> np.ndarray:
        """Counterfactual values of `br`'s hands at node n (summed over opponent hands and boards)."""
        node, deck = self.nodes[n], self.deck
        if node.kind == FOLDED:
            payoff = -node.contributions[br] if node.player == br else node.contributions[1 - br]
            return payoff * fold_values(opp_reach, deck.hand_cards, deck.card_hands)
        if node.kind == SHOWDOWN:
            stake = node.contributions[br]
            return stake * showdown_values(self.ranks(board), opp_reach, deck.hand_cards, deck.card_hands)
        if node.kind == DEAL:
            total = np.zeros(deck.num_hands)
            for b, free in enumerate(self._free):
                total += np.where(free, self._values(node.children[0], opp_reach * free, b, strategy, br), 0.0)
            return total / self.boards_per_deal
        children = [self._values(c, opp_reach * (1.0 if node.player == br else strategy(n, board)[:, a]), board,
                                 strategy, br) for a, c in zip(node.legal, node.children, strict=True)]  # fmt: skip
        if node.player == br:
            return np.max(children, axis=0)
        return np.sum(children, axis=0)
