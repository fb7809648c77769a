"""What the strategy explorer shows for flop hold'em, computed on the poker public tree.

`Explorer(game, policies)` (policies from `policies.load_policy`) walks the
public tree once per policy with the exact best response and keeps, at every
decision node, the best response's gain there; `Explorer.board_view(b)` gives each policy's action
probabilities and own reach for every hand at every decision node of board b
(`None`: the preflop nodes).

The gain of decision node n for its acting player q is

    sum over (board, hand) of  reach_q(n) * (max_a Q(n, a) - sum_a sigma(n, a) Q(n, a))

with reach_q q's own reach under the policy and Q q's counterfactual
best-response values (chance and the opponent's reach included). Summed
over q's decision nodes these telescope to q's best-response value minus its
on-policy value, so over both players they sum to the exact NashConv.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np
import pyspiel

from openspiel_cfrx.explore.policies import ExploreError, NamedPolicy, game_kind
from openspiel_cfrx.poker.exploitability import DEFAULT_MAX_INFOSETS
from openspiel_cfrx.poker.isomorphism import canonical_boards, hand_permutation
from openspiel_cfrx.poker.policy_reading import RANK_NAMES, SUIT_NAMES, read_policy
from openspiel_cfrx.poker.public_tree import DEAL, DECISION, FOLDED, MAX, SHOWDOWN, PublicTree
from openspiel_cfrx.poker.spec import PokerRules
from openspiel_cfrx.poker.vector_cfr import load_strategy

# An embedded page holds every (node, board, hand) view; above this estimate the
# page holds the preflop and the gains, and boards are served one at a time (`serve`).
DEFAULT_MAX_EMBED_BYTES = 40 * 2**20
BYTES_PER_NUMBER = 9  # "0.123456," in the page's JSON


def check_game(game) -> PokerRules:
    """The rules of a flop hold'em game; ExploreError (one line) for any other game."""
    if game_kind(game) != "poker":
        raise ExploreError(f"{game} is not a flop hold'em game; make_explorer(game, policies) shows Kuhn, Leduc "
                           "and team games")  # fmt: skip
    return PokerRules.from_game(game)


class _StatesOnly:
    """A policy's `batch_action_probabilities` alone (a network whose inputs have no array form)."""

    def __init__(self, policy):
        self.batch_action_probabilities = policy.batch_action_probabilities


def expand_isomorphic(iso_tree: PublicTree, strategy: Callable, tree: PublicTree) -> Callable:
    """A strategy of the suit-isomorphic tree on `tree`'s every board: board b
    plays its class representative's rows, each hand relabelled with b's suits."""
    first = tree.first_deal_round
    _, _, board_class, board_perm = canonical_boards(tree.deck, tree.board_size[first])
    hand_maps: dict[tuple, np.ndarray] = {}

    def full(n: int, lo: int, hi: int) -> np.ndarray:
        if tree.nodes[n].round < first:
            return np.asarray(strategy(n, 0, 1))
        rows = []
        for b in range(lo, hi):
            key = tuple(board_perm[b])
            if key not in hand_maps:
                hand_maps[key] = hand_permutation(tree.deck, board_perm[b])
            c = int(board_class[b])
            rows.append(np.asarray(strategy(n, c, c + 1))[0][hand_maps[key]])
        return np.stack(rows)

    return full


@dataclasses.dataclass
class Analysis:
    """One policy on the explorer's tree (values in chips per game)."""

    name: str
    reading: str  # how it was read: "uniform", "network", "tabular", "batch", "per_infoset", "strategy file", ...
    strategy: object  # poker: a public-tree Strategy(node, lo, hi); Kuhn/Leduc: [infosets, actions] in get_tree order
    node_gain: np.ndarray  # [nodes]: the best response's gain at each decision node, over all boards
    board_gain: dict[int, np.ndarray]  # decision node -> [boards of its round]: per board (class representative)
    hand_gain: dict[int, np.ndarray]  # decision node -> [boards, H] (preflop always; flop in embedded pages)
    best_response: np.ndarray  # [2]
    on_policy: np.ndarray  # [2]
    seconds: float
    own_reach: np.ndarray | None = None  # Kuhn/Leduc: [infosets] each infoset's own reach (poker: walked per board)

    @property
    def nash_conv(self) -> float:
        return float(self.best_response.sum())

    @property
    def gains_by_player(self) -> np.ndarray:
        return self.best_response - self.on_policy


class Explorer:
    """Policies of a flop hold'em game on one public tree, with their gains (module doc).

    `cards.CardExplorer` offers the same members for Kuhn and Leduc poker;
    `page.page_data` reads them (`layout`, `num_boards`, `page_nodes`,
    `page_fields`, `mbb_per_game`, `analyses`, `board_view`, `embedded`).

    Args:
      game: a flop hold'em game (`flop_holdem(...)`).
      policies: `NamedPolicy`s (`load_policy`); the first is the one shown,
        a second is compared with it.
      max_embed_bytes: the largest page that embeds every board's view
        (`embedded`); larger games keep per-hand gains for the preflop only
        and give boards one at a time (`board_view`, served by `serve`).
      max_infosets: refuse policies read one infoset at a time on games with
        more (node, board, hand) infosets per player than this.
      game_name: how the page names the game (default `str(game)`, the
        universal_poker string; the programs pass the --game string).

    The tree visits one board per suit class when every policy is
    suit-symmetric (uniform, VectorCFR strategies saved on the isomorphic
    tree, suit-symmetric networks); otherwise every board.
    """

    def __init__(self, game: pyspiel.Game, policies: list[NamedPolicy], *,
                 max_embed_bytes: int = DEFAULT_MAX_EMBED_BYTES, max_infosets: int = DEFAULT_MAX_INFOSETS,
                 game_name: str | None = None):  # fmt: skip
        self.rules = check_game(game)
        if not 1 <= len(policies) <= 2:
            raise ExploreError(f"the explorer shows one policy or compares two, got {len(policies)}")
        self.game, self.policies = game, list(policies)
        self.game_name = game_name or str(game)
        readings = [None if p.strategy_file else read_policy(game, p.policy) for p in policies]
        symmetric = all(p.file_isomorphism if r is None else r.suit_symmetric for p, r in zip(policies, readings, strict=True))
        slow = any(r is not None and r.kind not in ("uniform", "network") for r in readings)
        self.tree = PublicTree(game, isomorphism=symmetric, threads=1 if slow else None)
        tree = self.tree
        self.decisions = [n for n, node in enumerate(tree.nodes) if node.kind == DECISION]
        # Each first-deal board's weight in the sums: its class's multiplicity with isomorphism, else 1.
        self.board_weights = tree.first_weights * len(tree.hand_perms)
        for policy, reading in zip(policies, readings, strict=True):
            if reading is not None and reading.per_infoset and self.max_infosets_per_player() > max_infosets:
                raise ExploreError(f"{game} has {self.max_infosets_per_player():,} infosets per player, more than "
                                   f"max_infosets={max_infosets:,}; the policy {policy.name!r} is read one infoset "
                                   "at a time, which would take too long")  # fmt: skip
        self.embedded = self.embedded_bytes() <= max_embed_bytes
        self.analyses = [self._analyse(p, r) for p, r in zip(policies, readings, strict=True)]

    layout = "grid"  # the page shows rank x rank grids

    # ----- what the page reads ----------------------------------------------

    @property
    def num_boards(self) -> int:
        return len(self.tree.first_boards)

    def mbb_per_game(self, chips: float) -> float:
        return float(self.rules.mbb_per_game(chips))

    def page_nodes(self) -> list[dict]:
        """The public tree as the page reads it: kind, round, player, legal actions,
        children, actions from the root, pot, and the actions' names (decisions) or
        what happens (fold, showdown)."""
        out = []
        for node in self.tree.nodes:
            record = {"k": node.kind, "r": node.round, "p": node.player, "l": list(node.legal),
                      "c": list(node.children), "a": list(node.actions), "pot": sum(node.contributions)}  # fmt: skip
            if node.kind == DECISION:
                record["n"] = [_action_name(node, a) for a in node.legal]
            elif node.kind == FOLDED:
                won = node.contributions[node.player]
                record["t"] = f"player {node.player} folds · player {1 - node.player} wins {won} chips"
            elif node.kind == SHOWDOWN:
                record["t"] = f"showdown · pot {sum(node.contributions)}"
            out.append(record)
        return out

    def page_fields(self) -> dict:
        """The cards, hands and boards as the page reads them (`page.page_data`)."""
        tree, deck = self.tree, self.tree.deck
        ranks, suits = RANK_NAMES[: deck.num_ranks], SUIT_NAMES[: deck.num_suits]
        return {
            "layout": self.layout, "ranks": deck.num_ranks, "suits": deck.num_suits, "rank_names": ranks,
            "card_names": [ranks[c // deck.num_suits] + suits[c % deck.num_suits] for c in range(deck.num_cards)],
            "hands": deck.hand_cards.tolist(), "unit": "chips",
            "isomorphism": bool(tree.isomorphism), "num_all_boards": int(round(float(self.board_weights.sum()))),
            "boards": tree.first_boards.tolist(), "board_weights": [int(round(w)) for w in self.board_weights],
            "first_deal_round": tree.first_deal_round, "round_names": ["preflop", "flop"], "deal_name": "flop",
            "board_name": "Board",
        }  # fmt: skip

    # ----- sizes ----------------------------------------------------------

    def max_infosets_per_player(self) -> int:
        tree, counts = self.tree, [0, 0]
        for n in self.decisions:
            node = tree.nodes[n]
            counts[node.player] += tree.num_boards[node.round] * tree.deck.num_hands
        return max(counts)

    def embedded_bytes(self) -> int:
        """Estimated bytes of the page's data when every board's view is embedded."""
        tree, deck = self.tree, self.tree.deck
        total = 0
        for n in self.decisions:
            node = tree.nodes[n]
            free = len(deck.hand_cards) if node.round == 0 else int((~deck.contains[:, tree.first_boards[0]]
                                                                     .any(axis=1)).sum())  # fmt: skip
            total += tree.num_boards[node.round] * free * (len(node.legal) + 2)
        return total * BYTES_PER_NUMBER * len(self.policies)

    # ----- analysis -------------------------------------------------------

    def _strategy(self, policy: NamedPolicy, reading) -> tuple[Callable, str]:
        tree = self.tree
        if policy.strategy_file:
            try:
                if policy.file_isomorphism and not tree.isomorphism:
                    iso_tree = PublicTree(self.game, isomorphism=True)
                    strategy = expand_isomorphic(iso_tree, load_strategy(policy.strategy_file, iso_tree), tree)
                else:
                    strategy = load_strategy(policy.strategy_file, tree)
            except (ValueError, KeyError, OSError) as e:
                raise ExploreError(f"strategy file {policy.strategy_file!r}: {e}") from None
            return strategy, "strategy file"
        strategy = reading.strategy(tree)
        if strategy is None:  # a network whose inputs have no array form here: read through states
            reading = read_policy(self.game, _StatesOnly(policy.policy))
            strategy = reading.strategy(tree)
        return strategy, reading.kind

    def _analyse(self, policy: NamedPolicy, reading) -> Analysis:
        start = time.perf_counter()
        tree = self.tree
        strategy, kind = self._strategy(policy, reading)
        tree.check_suit_symmetric(strategy)
        board_gain = {n: np.zeros(tree.num_boards[tree.nodes[n].round]) for n in self.decisions}
        hand_gain = {n: np.zeros((tree.num_boards[tree.nodes[n].round], tree.deck.num_hands))
                     for n in self.decisions if self.embedded or tree.nodes[n].round == 0}  # fmt: skip

        def hook(n, chunk, reach, probs, action_values):
            q = tree.nodes[n].player
            mixed = np.einsum("bha,bha->bh", probs, action_values)
            per_hand = reach[q] * (action_values.max(axis=2) - mixed)  # [b, H]
            board_gain[n][chunk.lo : chunk.hi] = per_hand.sum(axis=1)
            if n in hand_gain:
                hand_gain[n][chunk.lo : chunk.hi] = per_hand

        best = tree.walk(strategy, (MAX, MAX), on_decision=hook).sum(axis=1)
        on_policy = tree.expected_values(strategy)
        node_gain = np.zeros(len(tree.nodes))
        for n in self.decisions:
            weights = self.board_weights if tree.nodes[n].round >= tree.first_deal_round else np.ones(1)
            node_gain[n] = float(board_gain[n] @ weights)
        return Analysis(policy.name, kind, strategy, node_gain, board_gain, hand_gain, best, on_policy,
                        time.perf_counter() - start)  # fmt: skip

    # ----- views ----------------------------------------------------------

    def board_view(self, board: int | None) -> list[dict[int, tuple[np.ndarray, np.ndarray, np.ndarray | None]]]:
        """Per policy: {decision node: (probs [F, A], own reach [F], gains [F] or None)} over the
        hands F not meeting first-deal board `board` (its flop nodes), or over every hand
        at the preflop nodes (board None); `free_hands(board)` lists F."""
        if board is not None and not 0 <= board < len(self.tree.first_boards):
            raise ExploreError(f"board {board} is not one of the {len(self.tree.first_boards)} boards")
        return [self._view(analysis, board) for analysis in self.analyses]

    def free_hands(self, board: int | None) -> np.ndarray:
        """Indices of the hands that share no card with first-deal board `board` (None: every hand)."""
        deck = self.tree.deck
        if board is None:
            return np.arange(deck.num_hands)
        return np.flatnonzero(~deck.contains[:, self.tree.first_boards[board]].any(axis=1))

    def _view(self, analysis: Analysis, board: int | None) -> dict:
        tree, first = self.tree, self.tree.first_deal_round
        free = self.free_hands(board)
        out = {}

        def visit(n: int, reach: np.ndarray) -> None:
            node = tree.nodes[n]
            if node.kind == DEAL and board is not None:
                visit(node.children[0], reach)
            if node.kind != DECISION:
                return
            flop = node.round >= first
            index = board if flop else 0
            probs = np.asarray(analysis.strategy(n, index, index + 1))[0]
            if flop == (board is not None):
                gains = analysis.hand_gain.get(n)
                out[n] = (probs[free], reach[node.player][free], None if gains is None else gains[index][free])
            for a, child in enumerate(node.children):
                visit(child, _moved(reach, node.player, probs[:, a]))

        visit(0, np.ones((2, tree.deck.num_hands)))
        return out


def _action_name(node, action: int) -> str:
    """fold, check or call, bet or raise (a bet opens a round after the first)."""
    level = node.contributions[0] == node.contributions[1]
    if action == 0:
        return "fold"
    if action == 1:
        return "check" if level else "call"
    return "bet" if level and node.round > 0 else "raise"


def _moved(reach: np.ndarray, player: int, probs: np.ndarray) -> np.ndarray:
    moved = reach.copy()
    moved[player] = reach[player] * probs
    return moved


__all__ = ["Analysis", "DEFAULT_MAX_EMBED_BYTES", "Explorer", "check_game", "expand_isomorphic"]
