"""What the strategy explorer shows for Kuhn and Leduc poker, computed on the
game's extracted tree (`openspiel_cfrx.tree`).

`PublicCardTree(tree)` groups the histories of the extracted `GameTree` by
their public actions: the first chance outcomes deal one private card to each
player in seat order, a later chance outcome is a public card (Leduc's), and
every other action is public. Its nodes are those of the poker public tree
(decision, deal, fold, showdown), its boards the public cards, and every
infoset of the game is one (node, board, private card).

`CardExplorer(game, policies)` gives, per policy, the exact best response's
gain at each infoset I of player q,

    reach_q(I) * (max_a Q(I, a) - sum_a sigma(I, a) Q(I, a)),

with reach_q q's own reach and Q q's counterfactual best-response values
(`sequence_form.propagate_values` with the max); over q's infosets these
telescope to q's best-response value minus its on-policy value, so over all
infosets to the exact NashConv. A public node's gain is the sum over its
infosets. It has the members of `analysis.Explorer` that `page.page_data`
reads, so both games draw the same page (a card list instead of a grid).
"""

from __future__ import annotations

import time

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from openspiel_cfrx.explore.analysis import Analysis
from openspiel_cfrx.explore.policies import ExploreError, NamedPolicy, game_kind
from openspiel_cfrx.poker.policy_reading import SUIT_NAMES
from openspiel_cfrx.poker.public_tree import DEAL, DECISION, FOLDED, SHOWDOWN
from openspiel_cfrx.tree import (
    CHANCE,
    GameTree,
    check_strategy,
    get_tree,
    own_plan,
    propagate_values,
    realization_plan,
    sequence_payoffs,
    strategy_from_policy,
)

RANKS = "JQK"  # two-player Kuhn and Leduc: three ranks
SUITS = {"kuhn_poker": 1, "leduc_poker": 2}  # card c is rank c // suits, suit c % suits
DEALT = -1  # a public card in a node's key (the card itself is the board)


class PublicNode:
    """One node of the public tree (the fields `analysis.Explorer`'s nodes have)."""

    def __init__(self, kind: str, round_: int, player: int, actions: tuple[int, ...]):
        self.kind, self.round, self.player, self.actions = kind, round_, player, actions
        self.legal: tuple[int, ...] = ()
        self.children: list[int] = []
        self.names: list[str] = []
        self.text = ""


class PublicCardTree:
    """The public betting tree of a two-player card game with one private card per player
    and at most one public card (module doc), read from its extracted `GameTree`.

    Attributes:
      nodes: the public nodes, the root first (children after parents).
      cards: [C] the private cards, ascending (a "hand" is an index into it).
      boards: [B, 1] the public cards, ascending (none in Kuhn).
      infoset_cell: [N, 3] int (node, board index (0 before the public card), hand) of each infoset.
    """

    def __init__(self, tree: GameTree):
        self.tree = tree
        players = tree.history_player
        first = np.flatnonzero(players >= 0)[0]
        self.num_private = int(np.searchsorted(tree.depth_offsets, first, side="right") - 1)
        if self.num_private != 2 or (players[: tree.depth_offsets[2]] != CHANCE).any():
            raise ExploreError(f"{tree.game} does not deal one private card to each player before the betting")
        self.nodes: list[PublicNode] = []
        history_node, history_board, deals = self._group_histories()
        self.cards = np.unique([card for dealt in deals for card in dealt])
        boards = sorted({b for b in history_board if b})
        if any(len(b) != 1 for b in boards):
            raise ExploreError(f"{tree.game} deals more than one public card; the explorer shows one")
        self.boards = np.asarray(boards, dtype=np.int64).reshape(len(boards), 1)
        self._link()
        self._describe_terminals(history_node)
        self.infoset_cell = self._infoset_cells(history_node, history_board, deals)

    def _group_histories(self):
        """Each history's public node (-1 during the private deals), public cards and private cards."""
        tree, index = self.tree, {}
        history_node = np.full(tree.num_histories, -1, dtype=np.int64)
        keys: list = [()] * tree.num_histories  # the public actions, DEALT for a public card
        boards: list = [()] * tree.num_histories
        deals: list = [()] * tree.num_histories
        start = int(tree.depth_offsets[self.num_private])  # the first history after the private deals
        for h in range(1, tree.num_histories):
            parent, action = int(tree.history_parent[h]), int(tree.history_action[h])
            if parent < start:  # h deals a private card (the last one when h >= start)
                deals[h] = deals[parent] + (action,)
            else:
                dealt = tree.history_player[parent] == CHANCE
                deals[h], boards[h] = deals[parent], boards[parent] + ((action,) if dealt else ())
                keys[h] = keys[parent] + (DEALT if dealt else action,)
            if h >= start:
                if keys[h] not in index:
                    index[keys[h]] = len(self.nodes)
                    self.nodes.append(self._new_node(h, keys[h]))
                history_node[h] = index[keys[h]]
        self._index = index
        return history_node, boards, deals

    def _new_node(self, h: int, key: tuple) -> PublicNode:
        tree, player = self.tree, int(self.tree.history_player[h])
        kind = DECISION if player >= 0 else DEAL if player == CHANCE else "terminal"
        node = PublicNode(kind, key.count(DEALT), player, tuple(a for a in key if a != DEALT))
        if kind == DECISION:
            node.legal = tuple(int(a) for a in np.flatnonzero(tree.infoset_legal_mask[tree.history_infoset[h]]))
            state = tree.state(h)
            node.names = [state.action_to_string(player, a).lower() for a in node.legal]
        return node

    def _link(self) -> None:
        keys = {n: key for key, n in self._index.items()}
        for n, node in enumerate(self.nodes):
            if node.kind == DECISION:
                node.children = [self._index[keys[n] + (a,)] for a in node.legal]
            elif node.kind == DEAL:
                node.children = [self._index[keys[n] + (DEALT,)]]

    def _describe_terminals(self, history_node: np.ndarray) -> None:
        """fold: every history at the node pays the same (no cards shown); else showdown."""
        tree = self.tree
        terminal_node = history_node[tree.terminal_history]
        for n, node in enumerate(self.nodes):
            if node.kind != "terminal":
                continue
            utilities = tree.terminal_utility[terminal_node == n]  # [histories, 2]
            if (utilities == utilities[0]).all():
                loser = int(np.argmin(utilities[0]))
                node.kind, node.player = FOLDED, loser
                node.text = f"player {loser} folds · player {1 - loser} wins {utilities[0][1 - loser]:g}"
            else:
                node.kind = SHOWDOWN
                node.text = f"showdown · the better hand wins {np.abs(utilities).max():g}"

    def _infoset_cells(self, history_node, history_board, deals) -> np.ndarray:
        """(node, board, hand) of each infoset; ExploreError unless infosets and cells match one to one."""
        tree = self.tree
        decisions = np.flatnonzero(tree.history_infoset >= 0)
        board_index = {(int(b[0]),): i for i, b in enumerate(self.boards)}
        cells = np.asarray([(history_node[h], board_index.get(history_board[h], 0),
                             int(np.searchsorted(self.cards, deals[h][tree.history_player[h]])))
                            for h in decisions], dtype=np.int64)  # fmt: skip
        infosets = tree.history_infoset[decisions]
        out = np.full((tree.num_infosets, 3), -1, dtype=np.int64)
        out[infosets] = cells
        if not (out[infosets] == cells).all() or len(np.unique(out, axis=0)) != tree.num_infosets:
            raise ExploreError(f"the infosets of {tree.game} are not (public actions, public card, private card)")
        return out

    def boards_in_round(self, round_: int) -> int:
        return len(self.boards) if round_ > 0 else 1

    def free_hands(self, board: int | None) -> np.ndarray:
        """Indices of the private cards other than the public card `board` (None: every card)."""
        if board is None:
            return np.arange(len(self.cards))
        return np.flatnonzero(self.cards != self.boards[board][0])


class CardExplorer:
    """Policies of Kuhn or Leduc poker on their public betting tree, with the exact
    best response's gains (module doc); the members `page.page_data` reads are
    those of `analysis.Explorer`.

    Args:
      game: two-player `kuhn_poker` or `leduc_poker`.
      policies: `NamedPolicy`s (`load_policy`): one shown, or two compared.
      game_name: how the page names the game (default `str(game)`).
    """

    layout = "list"  # the page lists the private cards
    embedded = True  # every view is small enough to embed

    def __init__(self, game: pyspiel.Game, policies: list[NamedPolicy], *, game_name: str | None = None):
        if game_kind(game) != "cards":
            raise ExploreError(f"{game} is not two-player kuhn_poker or leduc_poker; make_explorer(game, policies) "
                               "picks the explorer for a game")  # fmt: skip
        if not 1 <= len(policies) <= 2:
            raise ExploreError(f"the explorer shows one policy or compares two, got {len(policies)}")
        self.game, self.policies = game, list(policies)
        self.game_name = game_name or str(game)
        self.num_suits = SUITS[game.get_type().short_name]
        self.tree = PublicCardTree(get_tree(game))
        self.decisions = [n for n, node in enumerate(self.tree.nodes) if node.kind == DECISION]
        self._cells = self._cell_infosets()
        self.analyses = [self._analyse(p) for p in policies]

    def _cell_infosets(self) -> dict[int, np.ndarray]:
        """decision node -> [boards, hands] infoset at each (board, hand), -1 where the hand meets the board."""
        public, out = self.tree, {}
        for n in self.decisions:
            out[n] = np.full((public.boards_in_round(public.nodes[n].round), len(public.cards)), -1, dtype=np.int64)
        for i, (n, b, hand) in enumerate(public.infoset_cell):
            out[int(n)][b, hand] = i
        for n, cells in out.items():
            for b in range(len(cells)):
                board = b if public.nodes[n].round > 0 else None
                if (cells[b, public.free_hands(board)] < 0).any():
                    raise ExploreError(f"node {n} of {self.game} lacks an infoset for a private card")
        return out

    def _strategy(self, policy: NamedPolicy) -> np.ndarray:
        """[infosets, actions] of `policy` in get_tree order, checked to be a distribution everywhere."""
        tree = self.tree.tree
        try:
            strategy = strategy_from_policy(tree, policy.policy)
            check_strategy(tree, strategy)
        except (TypeError, ValueError) as e:
            raise ExploreError(f"policy {policy.name!r}: {str(e).splitlines()[0]}") from None
        return strategy

    def _analyse(self, policy: NamedPolicy) -> Analysis:
        start = time.perf_counter()
        tree = self.tree.tree
        strategy = self._strategy(policy)
        plan = realization_plan(tree, strategy)
        gains, best, on_policy = np.zeros(tree.num_infosets), np.zeros(2), np.zeros(2)
        for q in (0, 1):
            payoffs = sequence_payoffs(tree, plan, q)
            on_policy[q] = own_plan(tree, plan, q) @ payoffs
            propagate_values(tree, q, payoffs, None)  # payoffs become best-response Q(I, a); the last, q's BR value
            best[q] = payoffs[-1]
            lo, hi = tree.infoset_range[q]
            values = payoffs[:-1].reshape(hi - lo, tree.num_actions)
            legal = tree.infoset_legal_mask[lo:hi]
            best_values = np.where(legal, values, -np.inf).max(axis=1)
            mixed = np.einsum("ia,ia->i", strategy[lo:hi], np.where(legal, values, 0.0))
            gains[lo:hi] = plan[tree.infoset_parent_sequence[lo:hi]] * (best_values - mixed)
        node_gain = np.zeros(len(self.tree.nodes))
        board_gain, hand_gain = {}, {}
        for n, cells in self._cells.items():
            hand_gain[n] = np.where(cells >= 0, gains[cells], 0.0)  # [boards, hands]
            board_gain[n] = hand_gain[n].sum(axis=1)
            node_gain[n] = board_gain[n].sum()
        return Analysis(policy.name, _reading(policy.policy), strategy, node_gain, board_gain, hand_gain, best,
                        on_policy, time.perf_counter() - start,
                        own_reach=plan[tree.infoset_parent_sequence])  # fmt: skip

    # ----- what the page reads ----------------------------------------------

    @property
    def num_boards(self) -> int:
        return len(self.tree.boards)

    def mbb_per_game(self, chips: float) -> None:
        return None  # no big blind in Kuhn or Leduc: chips only

    def free_hands(self, board: int | None) -> np.ndarray:
        return self.tree.free_hands(board)

    def board_view(self, board: int | None) -> list[dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        """Per policy: {decision node: (probs [F, A], own reach [F], gains [F])} over the private
        cards F other than public card `board` at the nodes after it, or over every card at
        the nodes before it (board None); as `analysis.Explorer.board_view`."""
        if board is not None and not 0 <= board < self.num_boards:
            raise ExploreError(f"board {board} is not one of the {self.num_boards} public cards")
        free, out = self.free_hands(board), []
        for analysis in self.analyses:
            view = {}
            for n, cells in self._cells.items():
                node = self.tree.nodes[n]
                if (node.round > 0) != (board is not None):
                    continue
                infosets = cells[board or 0, free]
                probs = analysis.strategy[infosets][:, list(node.legal)]
                view[n] = (probs, analysis.own_reach[infosets], analysis.hand_gain[n][board or 0, free])
            out.append(view)
        return out

    def page_nodes(self) -> list[dict]:
        """The public tree as `analysis.Explorer.page_nodes` gives it (no pot: Kuhn and Leduc states do not say it)."""
        out = []
        for node in self.tree.nodes:
            record = {"k": node.kind, "r": node.round, "p": node.player, "l": list(node.legal),
                      "c": list(node.children), "a": list(node.actions), "pot": None}  # fmt: skip
            if node.kind == DECISION:
                record["n"] = node.names
            elif node.text:
                record["t"] = node.text
            out.append(record)
        return out

    def page_fields(self) -> dict:
        """The cards and boards as the page reads them (a list of private cards, no grid)."""
        cards, suits = self.tree.cards, self.num_suits
        names = {int(c): RANKS[c // suits] + (SUIT_NAMES[c % suits] if suits > 1 else "") for c in cards}
        rounds = max(node.round for node in self.tree.nodes) + 1
        return {
            "layout": self.layout, "card_names": [names.get(c, str(c)) for c in range(int(cards.max()) + 1)],
            "hands": [[int(c)] for c in cards], "unit": "chips", "isomorphism": False,
            "num_all_boards": self.num_boards, "boards": self.tree.boards.tolist(),
            "board_weights": [1] * self.num_boards,
            "first_deal_round": 1, "round_names": ["round 1", "round 2"][:rounds] if rounds > 1 else ["betting"],
            "deal_name": "public card", "board_name": "Public card",
        }  # fmt: skip


def _reading(policy) -> str:
    """How `strategy_from_policy` reads `policy` (the header says it)."""
    if isinstance(policy, policy_lib.UniformRandomPolicy):
        return "uniform"
    if isinstance(policy, policy_lib.TabularPolicy):
        return "tabular"
    if hasattr(policy, "strategy_array"):
        return "network" if hasattr(policy, "probabilities_from_tensors") else "strategy array"
    return "batch" if hasattr(policy, "batch_action_probabilities") else "per_infoset"
