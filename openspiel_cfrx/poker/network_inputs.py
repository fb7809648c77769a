"""Neural policies on the public tree without pyspiel states.

At a public node every (board, hand) infoset of the acting player differs from
every other only in its cards, so the network inputs of all of them are one
template (the betting part, read once from a representative state) plus the
card one-hots. `InformationStateTensors` builds them for universal_poker's
`information_state_tensor` layout:

    [current player (2)] [private cards (deck)] [public cards (deck)] [betting ...]

optionally followed by one card block per board street (the card(s) dealt on
the flop, turn, river: the `hulh` game's extension, recognised by its size),
and checks the layout against pyspiel on random states when constructed (a
game with another layout is refused). `CardSlotInputs` does the same for
an encoder of card slots + bet features (the Appendix C network's).
`NetworkStrategy` turns a batched network, `probabilities(features [N, F],
legal_mask [N, A]) -> [N, A]` (e.g. `DeepCFRSolver.probabilities_from_tensors`),
into a `public_tree.Strategy`, querying only the hands that miss the board.
A network fed raw cards is not suit-symmetric, so the tree must visit every
board (`PublicTree(game, isomorphism=False)`); one that is by construction
(`network="suit_symmetric_mlp"`, `neural_poker/suit_symmetric.py`) may be walked on
the isomorphic tree, one board per suit class (`suit_symmetric=True`).
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable

import numpy as np
import pyspiel

from openspiel_cfrx.poker.public_tree import DEAL, DECISION, PublicTree
from openspiel_cfrx.poker.spec import UnsupportedPokerGameError


def state_at(game: pyspiel.Game, tree: PublicTree, n: int, cards) -> pyspiel.State:
    """A state of `game` at decision node n of `tree` dealing `cards` (4 hole
    cards in seat order, then the board cards the betting reaches, in order)."""
    cards = [int(c) for c in cards]
    state = game.new_initial_state()
    for card in cards[:4]:
        state.apply_action(card)
    dealt = 4
    for action in tree.nodes[n].actions:
        while state.is_chance_node():
            state.apply_action(cards[dealt])
            dealt += 1
        state.apply_action(action)
    while state.is_chance_node():
        state.apply_action(cards[dealt])
        dealt += 1
    return state


class NodeInputs(abc.ABC):
    """Network inputs of a public node's infosets: the node's template (the
    betting part, read once from a representative state) with the acting
    player's cards written in (`batch`). Subclasses define `size`,
    `template(n)`, `batch(...)` and `reference(state, player)`, the encoding
    they reproduce, which `check` compares them with on random states."""

    size: int

    def __init__(self, game: pyspiel.Game, tree: PublicTree):
        self.game, self.tree = game, tree
        self.num_cards = tree.deck.num_cards
        self._templates: dict[int, np.ndarray] = {}

    @abc.abstractmethod
    def reference(self, state: pyspiel.State, player: int) -> np.ndarray:
        """The encoding reproduced: `player`'s input at `state`, float32."""

    @abc.abstractmethod
    def template(self, n: int) -> np.ndarray:
        """Node n's input with the cards left out (cached)."""

    @abc.abstractmethod
    def batch(self, templates: np.ndarray, rounds: np.ndarray, hole: np.ndarray, board: np.ndarray,
              copy: bool = True) -> np.ndarray:  # fmt: skip
        """[V, F] inputs from node templates [V, F] (copied, or filled in place
        with copy=False), the nodes' rounds [V], the acting player's hole cards
        [V, 2] and board cards [V, k] in dealing order (flop, turn, river; only
        the round's first board_size[round] are shown)."""

    def state_at(self, n: int, cards) -> pyspiel.State:
        """A state at decision node n dealing `cards` (4 hole cards, then board cards in order)."""
        return state_at(self.game, self.tree, n, cards)

    def tensors(self, n: int, hands: np.ndarray, boards: np.ndarray) -> np.ndarray:
        """[N, F] float32 inputs of the acting player holding hands[i] (indices)
        on boards[i] ([N, k] cards)."""
        rounds = np.full(len(hands), self.tree.nodes[n].round)
        return self.batch(np.broadcast_to(self.template(n), (len(hands), self.size)), rounds,
                          self.tree.deck.hand_cards[hands], np.asarray(boards, dtype=np.int64))  # fmt: skip

    def check(self, count: int, rng: np.random.Generator) -> bool:
        """Whether `batch` (cards in dealing order) equals `reference` on `count` random (node, deal)s."""
        tree = self.tree
        decisions = [n for n, node in enumerate(tree.nodes) if node.kind == DECISION]
        for _ in range(count):
            n = int(rng.choice(decisions))
            cards = rng.permutation(self.num_cards)[: 4 + tree.board_size[-1]]
            state = self.state_at(n, cards)
            player, rnd = state.current_player(), tree.nodes[n].round
            hole, board = cards[2 * player : 2 * player + 2], cards[4 : 4 + tree.board_size[rnd]]  # dealing order
            ours = self.batch(self.template(n)[None], np.array([rnd]), hole[None], board[None])[0]
            if not np.array_equal(ours, self.reference(state, player)):
                return False
        return True


class InformationStateTensors(NodeInputs):
    """Batched `information_state_tensor`s of a public node's infosets."""

    def __init__(self, game: pyspiel.Game, tree: PublicTree, check_states: int = 32, seed: int = 0):
        super().__init__(game, tree)
        self.size = int(np.prod(game.information_state_tensor_shape()))
        self.private, self.public = 2, 2 + self.num_cards
        inner = game.universal_poker_game() if callable(getattr(game, "universal_poker_game", None)) else game
        base = int(np.prod(inner.information_state_tensor_shape()))
        streets = tree.num_rounds - 1
        # Per-street card blocks after universal_poker's tensor (hulh): block r - 1 holds round r's cards.
        self.streets = base if streets and self.size == base + self.num_cards * streets else None
        if not self.check(check_states, np.random.default_rng(seed)):
            raise UnsupportedPokerGameError(
                f"{game}: its information_state_tensor is not universal_poker's layout "
                "([player][private cards][public cards][betting], optionally one card block per board "
                "street); evaluate the policy through states instead (openspiel_cfrx.poker.poker_nash_conv reads it so)"
            )

    def reference(self, state: pyspiel.State, player: int) -> np.ndarray:
        return np.asarray(state.information_state_tensor(player), dtype=np.float32)

    def template(self, n: int) -> np.ndarray:
        """Node n's tensor with the card one-hots cleared (cached)."""
        if n not in self._templates:
            state = self.state_at(n, np.arange(4 + self.tree.board_size[-1]))
            tensor = self.reference(state, state.current_player()).copy()
            tensor[self.private : self.public + self.num_cards] = 0.0
            if self.streets is not None:
                tensor[self.streets :] = 0.0
            self._templates[n] = tensor
        return self._templates[n]

    def batch(self, templates, rounds, hole, board, copy=True):
        out = np.array(templates, dtype=np.float32, copy=True) if copy else templates
        rows = np.arange(len(out))
        out[rows[:, None], self.private + hole] = 1.0
        sizes = np.asarray(self.tree.board_size)
        shown = sizes[rounds]
        for j in range(board.shape[1]):
            on = rows[shown > j]
            out[on, self.public + board[on, j]] = 1.0
            if self.streets is not None:  # the street block of the round that dealt card j
                street = int(np.searchsorted(sizes, j, side="right")) - 1
                out[on, self.streets + street * self.num_cards + board[on, j]] = 1.0
        return out


    def hand_columns(self) -> np.ndarray:
        """[H, 2]: the columns a hand's one-hots set (`batch`'s private cards)."""
        return self.private + self.tree.deck.hand_cards

    def board_columns(self, n: int, boards: np.ndarray) -> np.ndarray:
        """[b, m]: the columns the board cards shown at node n set (`batch`'s
        public cards, and street blocks where the game has them)."""
        sizes = np.asarray(self.tree.board_size)
        shown = np.asarray(boards, dtype=np.int64)[:, : sizes[self.tree.nodes[n].round]]
        columns = [self.public + shown]
        if self.streets is not None:
            street = np.searchsorted(sizes, np.arange(shown.shape[1]), side="right") - 1
            columns.append(self.streets + street * self.num_cards + shown)
        return np.concatenate(columns, axis=1)


class CardSlotInputs(NodeInputs):
    """Batched inputs of a Deep CFR encoder whose vector is card slots, then
    features of the betting alone: the Appendix C network's input
    (`games.poker_encoding.PokerNetworkEncoder`: card indices of the hole
    cards, then of each street's board cards in dealing order, -1 = not
    dealt; then the bet features).

    The protocol: `encoder(state, player)` returns the vector,
    `encoder.network_layout.card_group_sizes` gives the slots per card group
    (2 hole cards, then each street's board cards), and a slot holds a fixed
    number per card. That number is read from the encoder by dealing each
    card as a hole card, and the whole layout is checked against the encoder
    on random states when constructed (another layout is refused).
    `tensors` writes a hand's two cards in index order, not dealing order:
    the same input for a network that sums each group's cards (Appendix C).
    """

    def __init__(self, game: pyspiel.Game, tree: PublicTree, encoder, check_states: int = 32, seed: int = 0):
        super().__init__(game, tree)
        self.encoder = encoder
        groups = tuple(int(g) for g in getattr(getattr(encoder, "network_layout", None), "card_group_sizes", ()))
        if not groups or groups[0] != 2 or sum(groups[1:]) != tree.board_size[-1]:
            raise UnsupportedPokerGameError(
                f"encoder {getattr(encoder, 'name', type(encoder).__name__)!r} has no card-slot layout for {game} "
                f"(network_layout.card_group_sizes {groups or None}, want 2 hole cards then the board's "
                f"{tree.board_size[-1]}); use traversal=TraversalSettings(backend='state') with it"
            )
        self.slots = sum(groups)
        root = next(n for n, node in enumerate(tree.nodes) if node.kind == DECISION)
        player, others = tree.nodes[root].player, np.arange(4 + tree.board_size[-1])
        self.size = len(self.reference(self.state_at(root, others), player))
        self.card_value = np.zeros(self.num_cards, dtype=np.float32)
        for card in range(self.num_cards):  # the encoder's number for each card, from the first hole slot
            cards = list(others[others != card])
            cards.insert(2 * player, card)
            self.card_value[card] = self.reference(self.state_at(root, cards), player)[0]
        if not self.check(check_states, np.random.default_rng(seed)):
            raise UnsupportedPokerGameError(
                f"encoder {getattr(encoder, 'name', type(encoder).__name__)!r} on {game}: its vector is not "
                "card slots (hole, then board in dealing order, -1 = not dealt) followed by betting features; "
                "use traversal=TraversalSettings(backend='state') with it"
            )

    def reference(self, state: pyspiel.State, player: int) -> np.ndarray:
        return np.asarray(self.encoder(state, player), dtype=np.float32)

    def template(self, n: int) -> np.ndarray:
        """Node n's vector with every card slot cleared to -1 (cached)."""
        if n not in self._templates:
            state = self.state_at(n, np.arange(4 + self.tree.board_size[-1]))
            vector = self.reference(state, state.current_player()).copy()
            vector[: self.slots] = -1.0
            self._templates[n] = vector
        return self._templates[n]

    def batch(self, templates, rounds, hole, board, copy=True):
        out = np.array(templates, dtype=np.float32, copy=True) if copy else templates
        self._write_cards(out, rounds, hole, board)
        return out

    def card_slots(self, rounds: np.ndarray, hole: np.ndarray, board: np.ndarray) -> np.ndarray:
        """[V, slots]: the card-slot part of `batch`'s inputs alone (the rest is
        the node's template: betting features)."""
        out = np.full((len(rounds), self.slots), -1.0, dtype=np.float32)
        self._write_cards(out, rounds, hole, board)
        return out

    def _write_cards(self, out: np.ndarray, rounds, hole, board) -> None:
        """Card slots of `out` (hole, then board; -1 where not dealt yet in the round)."""
        out[:, :2] = self.card_value[hole]
        shown = np.asarray(self.tree.board_size)[rounds]
        out[:, 2 : 2 + board.shape[1]] = np.where(np.arange(board.shape[1]) < shown[:, None], self.card_value[board], -1.0)


class NetworkStrategy:
    """A batched network as a `public_tree.Strategy` (one forward per node and board chunk).

    Args:
      tree: `PublicTree(game, isomorphism=False)` (flop hold'em: one board deal), or
        the isomorphic tree for a suit-symmetric network.
      inputs: `InformationStateTensors` (or any object with `tensors(n, hands, boards)`).
      probabilities: `(features [N, F] float32, legal_mask [N, A] bool) -> [N, A]`
        over the game's distinct actions.
      batch_rows: rows per network call.
      suit_symmetric: the network's policy is invariant under relabelling the
        suits (true of `network="suit_symmetric_mlp"`, whose nets have
        `suit_symmetric = True`); required for an isomorphic tree.
      input_layer: optional (weight [H1, F], bias [H1], from_sums) of a network
        whose first layer is linear on the inputs, with `from_sums(table [T, H1],
        rows [N, k], legal_mask [N, A]) -> [N, A]` the network from that layer's
        pre-activation given as sums of table rows. With `InformationStateTensors`
        the node's infosets are then never built as tensors: each pre-activation
        is one row for the node and board (template and board one-hots through
        W) plus one for the hand; the same function up to float32 rounding.
    """

    def __init__(self, tree: PublicTree, inputs, probabilities: Callable, batch_rows: int = 65536,
                 suit_symmetric: bool = False, input_layer: tuple | None = None):  # fmt: skip
        if tree.isomorphism and not suit_symmetric:
            raise ValueError("a network is not suit-symmetric: build the tree with isomorphism=False "
                             "(or train with network='suit_symmetric_mlp' and pass suit_symmetric=True)")  # fmt: skip
        if any(node.kind == DEAL and node.round + 1 != tree.first_deal_round for node in tree.nodes):
            raise UnsupportedPokerGameError("the network path handles one board deal (flop hold'em) so far")
        self.tree, self.inputs, self.probabilities = tree, inputs, probabilities
        self.batch_rows = int(batch_rows)
        self.num_actions = 3
        self.queries, self.network_seconds = 0, 0.0
        self._sums = None
        if input_layer is not None and callable(getattr(inputs, "hand_columns", None)):
            weight, bias, from_sums = input_layer
            columns = np.asarray(weight, dtype=np.float32).T  # [F, H1]: row c = column c of W
            self._sums = (columns, np.asarray(bias, dtype=np.float32), columns[inputs.hand_columns()].sum(axis=1),
                          from_sums)  # fmt: skip

    def __call__(self, n: int, lo: int, hi: int) -> np.ndarray:
        tree, node = self.tree, self.tree.nodes[n]
        H, legal = tree.deck.num_hands, list(node.legal)
        if node.round == 0:
            boards, free = np.zeros((1, 0), dtype=np.int64), np.ones((1, H), dtype=bool)
        else:
            boards = tree.first_boards[lo:hi]
            free = ~tree.deck.contains[:, boards].any(axis=2).T  # [b, H]
        board_of, hand_of = np.nonzero(free)
        out = np.full((len(boards), H, len(legal)), 1.0 / len(legal))
        mask = np.zeros((min(self.batch_rows, len(hand_of)), self.num_actions), dtype=bool)
        mask[:, legal] = True
        if self._sums is not None:
            out[board_of, hand_of] = self._by_sums(n, boards, hand_of, board_of, legal)
            return out
        for start in range(0, len(hand_of), self.batch_rows):
            rows = slice(start, start + self.batch_rows)
            features = self.inputs.tensors(n, hand_of[rows], boards[board_of[rows]])
            began = time.perf_counter()
            probs = np.asarray(self.probabilities(features, mask[: len(features)]), dtype=np.float64)
            self.network_seconds += time.perf_counter() - began
            self.queries += len(features)
            out[board_of[rows], hand_of[rows]] = probs[:, legal]
        return out

    def _by_sums(self, n: int, boards: np.ndarray, hand_of: np.ndarray, board_of: np.ndarray, legal: list) -> np.ndarray:
        """The network's probabilities at node n for (hand_of[i], boards[board_of[i]]),
        its first layer's pre-activation as sums: W x + b = (W template + b + the
        board's columns of W) + the hand's columns of W, one table row each."""
        columns, bias, hand_rows, from_sums = self._sums
        node_row = columns.T @ self.inputs.template(n) + bias
        board_rows = node_row + columns[self.inputs.board_columns(n, boards)].sum(axis=1)  # [b, H1]
        table = np.concatenate([hand_rows, board_rows])
        rows = np.stack([hand_of, len(hand_rows) + board_of], axis=1)
        mask = np.zeros((len(rows), self.num_actions), dtype=bool)
        mask[:, legal] = True
        began = time.perf_counter()
        probs = np.asarray(from_sums(table, rows, mask), dtype=np.float64)
        self.network_seconds += time.perf_counter() - began
        self.queries += len(rows)
        return probs[:, legal]
