"""Structured infoset encoding of the Deep CFR poker network (Appendix C).

Brown, Lerer, Gross and Sandholm, "Deep Counterfactual Regret Minimization",
ICML 2019, Section 5 and Appendix C: an infoset is given to the network as

* card groups, each a vector of card indices in 0..51 (`rank * 4 + suit`,
  rank 0 = deuce), -1 for a card not dealt yet: hole [2], flop [3] and, for
  HULH, turn [1] and river [1]; the network sums rank, suit and card
  embeddings inside a group;
* bets: one float per betting position, 6 positions per round (a round has at
  most 6 sequential actions), -1 where no action happened at that position,
  otherwise the chips the acting player put into the pot with that action
  (check 0, call the amount called, raise call + raise size), scaled by
  `chip_scale` (default 1 / big blind, so a preflop raise to 2 BB by the small
  blind is 1.5). The network derives "occurred" as `bets >= 0` and size as
  `bets.clamp(0)`.

`PokerEncoder(game)` works on any game loaded as `flop_holdem(...)` or
`hulh(...)`. It replays `state.history()` (cheap: at most ~40 integers), so it
also gives a perfect-recall infoset string and flat tensor. (Raw
universal_poker's information state merges flop and turn cards into one set;
`hulh` fixes that in its own information state, see `games.poker.HulhGame`.)
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pyspiel

from games.poker import (
    BIG_BLIND,
    CALL,
    FOLD,
    MAX_RANKS,
    MAX_SUITS,
    NUM_HOLE_CARDS,
    RAISE,
    bet_positions_per_round,
    card_from_action,
    card_to_string,
    limit_holdem_rules,
)
from openspiel_cfrx.encoders import register_input_encoder
from openspiel_cfrx.poker.spec import PokerRules

NUM_CARD_INDICES = 52
CARD_GROUP_NAMES = ("hole", "flop", "turn", "river")


@dataclasses.dataclass
class PokerReplay:
    """What a history of a limit hold'em game says, rule by rule.

    Attributes:
      hole_cards: per player, the 52-card indices dealt so far.
      board_cards: per round, the 52-card indices dealt for that round.
      actions: per round, `(player, action, chips_put_in)` in order.
      spent: chips each player has put into the pot, blinds included.
      round: current betting round (0-based).
      raises: raises made in the current round.
      current_player: player to act, or -1 at chance / terminal.
      folded: player who folded, or -1.
      terminal: whether the hand is over.
    """

    hole_cards: list[list[int]]
    board_cards: list[list[int]]
    actions: list[list[tuple[int, int, int]]]
    spent: list[int]
    round: int = 0
    raises: int = 0
    current_player: int = -1
    folded: int = -1
    terminal: bool = False

    @property
    def pot(self) -> int:
        return self.spent[0] + self.spent[1]


def replay_history(rules: PokerRules, history) -> PokerReplay:
    """Replays a universal_poker history (chance and player actions).

    Deal order (universal_poker's): player 0's hole cards, player 1's, then
    each round's board cards right after the previous betting round closes.
    A betting round closes on a call/check that is not the round's first
    action; a fold ends the hand.
    """
    replay = PokerReplay(
        hole_cards=[[], []],
        board_cards=[[] for _ in range(rules.num_rounds)],
        actions=[[] for _ in range(rules.num_rounds)],
        spent=list(rules.blinds),
    )
    num_suits = rules.num_suits
    board_needed = rules.board_cards
    player = -1
    for action in history:
        if len(replay.hole_cards[1]) < NUM_HOLE_CARDS:
            seat = 0 if len(replay.hole_cards[0]) < NUM_HOLE_CARDS else 1
            replay.hole_cards[seat].append(card_from_action(action, num_suits))
            if len(replay.hole_cards[1]) == NUM_HOLE_CARDS:
                player = rules.first_player[0]
            continue
        rnd = replay.round
        if len(replay.board_cards[rnd]) < board_needed[rnd]:
            replay.board_cards[rnd].append(card_from_action(action, num_suits))
            if len(replay.board_cards[rnd]) == board_needed[rnd]:
                player = rules.first_player[rnd]
            continue
        if replay.terminal:
            raise ValueError(f"history {list(history)} continues after the hand ended.")
        round_actions = replay.actions[rnd]
        if action not in (FOLD, CALL, RAISE):
            raise ValueError(f"unknown betting action {action} in history {list(history)}.")
        chips = rules.contributions_after(replay.spent, player, action, rnd)[player] - replay.spent[player]
        if action == FOLD:
            replay.folded = player
            replay.terminal = True
        elif action == RAISE:
            replay.raises += 1
        replay.spent[player] += chips
        round_actions.append((player, action, chips))
        if action == CALL and len(round_actions) >= 2:
            if rnd + 1 == rules.num_rounds:
                replay.terminal = True
            else:
                replay.round += 1
                replay.raises = 0
        player = 1 - player
    if replay.terminal:
        replay.current_player = -1
    elif len(replay.hole_cards[1]) < NUM_HOLE_CARDS or (
        len(replay.board_cards[replay.round]) < board_needed[replay.round]
    ):
        replay.current_player = -1  # a chance node
    else:
        replay.current_player = player
    return replay


@dataclasses.dataclass
class StructuredInfoState:
    """One infoset in the Appendix C format.

    Attributes:
      cards: one int64 array per card group (hole [2], flop [3], turn [1],
        river [1]; FHP has hole and flop only), 52-card indices, -1 = not dealt.
      bets: float32 [num_rounds * bet_positions_per_round], -1 = no action.
    """

    cards: tuple[np.ndarray, ...]
    bets: np.ndarray


@dataclasses.dataclass(frozen=True)
class PokerNetworkLayout:
    """Layout of `PokerEncoder.network_tensor`, the flat input of the Appendix C
    network (`openspiel_cfrx.neural_poker.poker_network`).

    The flat float32 vector is the paper's `forward(cards, bets)` arguments
    side by side: `sum(card_group_sizes)` card indices (group after group,
    `rank * num_suits + suit` in the 52-card space, -1 = not dealt), then
    `num_bet_features` bet floats (one per betting position, -1 = no action,
    else the chips put in, scaled). The network splits it back, turns the
    card slots into integers and derives "occurred" / size from each bet
    float, so the memories store only `input_size` floats per infoset.

    Attributes:
      card_group_sizes: cards per group: (2, 3) for FHP (hole, flop),
        (2, 3, 1, 1) for HULH (hole, flop, turn, river).
      num_bet_features: betting positions (6 per round for the paper's caps);
        the network's bet branch sees twice as many inputs (occurred, size).
      num_ranks, num_suits: the card index space of the embeddings (13 x 4:
        small decks use a subset of it, as in `PokerEncoder`).
    """

    card_group_sizes: tuple[int, ...]
    num_bet_features: int
    num_ranks: int = MAX_RANKS
    num_suits: int = MAX_SUITS

    @property
    def num_card_groups(self) -> int:
        return len(self.card_group_sizes)

    @property
    def num_card_slots(self) -> int:
        return sum(self.card_group_sizes)

    @property
    def input_size(self) -> int:
        return self.num_card_slots + self.num_bet_features

    def as_options(self) -> dict:
        """Keyword arguments of the "poker" network factory."""
        return {
            "card_group_sizes": tuple(self.card_group_sizes),
            "num_bet_features": int(self.num_bet_features),
            "num_ranks": int(self.num_ranks),
            "num_suits": int(self.num_suits),
        }


class PokerEncoder:
    """Encodes infosets of a `flop_holdem` / `hulh` game for neural networks.

    Args:
      game: a game loaded as `flop_holdem(...)` or `hulh(...)`.
      chip_scale: factor applied to chip amounts in the bet features; the
        default 1 / big blind expresses them in big blinds.
    """

    def __init__(self, game: pyspiel.Game, chip_scale: float = 1.0 / BIG_BLIND):
        self.rules = limit_holdem_rules(game)
        self.chip_scale = float(chip_scale)
        self.card_group_sizes: tuple[int, ...] = (NUM_HOLE_CARDS,) + tuple(
            self.rules.board_cards[1:]
        )
        self.card_group_names: tuple[str, ...] = CARD_GROUP_NAMES[: len(self.card_group_sizes)]
        self.bet_positions_per_round = bet_positions_per_round(self.rules)
        self.num_bet_features = self.rules.num_rounds * self.bet_positions_per_round
        # Flat layout: one 52-wide multi-hot block per card group, then for each
        # betting position an "occurred" bit and the scaled chips.
        self.flat_tensor_size = (
            NUM_CARD_INDICES * len(self.card_group_sizes) + 2 * self.num_bet_features
        )
        self.network_layout = PokerNetworkLayout(self.card_group_sizes, self.num_bet_features)
        self.network_tensor_size = self.network_layout.input_size
        # Rules, precomputed as plain tuples for the hot path.
        self._num_rounds = self.rules.num_rounds
        self._first_player = self.rules.first_player
        self._raise_size = self.rules.raise_sizes
        self._board_cards = self.rules.board_cards
        self._blinds = self.rules.blinds
        self._card_of_action = tuple(
            card_from_action(action, self.rules.num_suits) for action in range(self.rules.deck_size)
        )
        self._num_card_slots = sum(self.card_group_sizes)
        stops = np.cumsum(self.card_group_sizes).tolist()
        self._group_bounds = tuple(zip([0] + stops[:-1], stops, strict=True))
        # Slot of each round's first board card (round 0 deals none).
        self._board_slot = (0,) + tuple(stops[:-1])

    def _player_of(self, state: pyspiel.State, player: int | None) -> int:
        if player is None:
            player = state.current_player()
        if player not in (0, 1):
            raise ValueError(
                f"player={player}: pass 0 or 1 (the state's current player is "
                f"{state.current_player()}, not a decision node)."
            )
        return player

    def encode_history(self, history, player: int) -> tuple[list[int], list[float]]:
        """Flat Python lists for one infoset: (cards [sum(group sizes)], bets).

        The hot path of `encode` / `encode_batch`: a single pass over the
        history with the rules of `replay_history` inlined (Deep CFR encodes
        millions of infosets, and the dataclass replay costs several times more).
        """
        card_of = self._card_of_action
        cards = [-1] * self._num_card_slots
        bets = [-1.0] * self.num_bet_features
        length = len(history)
        for slot in range(min(NUM_HOLE_CARDS, max(0, length - NUM_HOLE_CARDS * player))):
            cards[slot] = card_of[history[NUM_HOLE_CARDS * player + slot]]
        index = 2 * NUM_HOLE_CARDS
        rnd, position, actor = 0, 0, self._first_player[0]
        spent = list(self._blinds)
        scale = self.chip_scale
        base = 0
        while index < length:
            action = history[index]
            index += 1
            if action == FOLD:
                bets[base + position] = 0.0
                break
            chips = spent[1 - actor] - spent[actor]
            if action == RAISE:
                chips += self._raise_size[rnd]
            spent[actor] += chips
            bets[base + position] = chips * scale
            position += 1
            if action == CALL and position >= 2:
                rnd += 1
                if rnd == self._num_rounds:
                    break
                slot = self._board_slot[rnd]
                for _ in range(self._board_cards[rnd]):
                    if index < length:
                        cards[slot] = card_of[history[index]]
                        index += 1
                        slot += 1
                position, actor = 0, self._first_player[rnd]
                base = rnd * self.bet_positions_per_round
            else:
                actor = 1 - actor
        return cards, bets

    def encode(self, state: pyspiel.State, player: int | None = None) -> StructuredInfoState:
        """Structured encoding of `player`'s infoset (default: player to act)."""
        player = self._player_of(state, player)
        cards, bets = self.encode_history(state.history(), player)
        cards = np.asarray(cards, dtype=np.int64)
        return StructuredInfoState(
            cards=tuple(cards[start:stop] for start, stop in self._group_bounds),
            bets=np.asarray(bets, dtype=np.float32),
        )

    def encode_batch(self, states, players=None) -> tuple[list[np.ndarray], np.ndarray]:
        """Encodes N infosets at once, in the network's input format.

        Args:
          states: N pyspiel states.
          players: N players (default: each state's player to act).

        Returns:
          (cards, bets): cards is a list with one contiguous int64 array
          [N, group size] per card group; bets is float32 [N, num_bet_features].
        """
        states = list(states)
        if players is None:
            players = [None] * len(states)
        card_rows, bet_rows = [], []
        for state, player in zip(states, players, strict=True):
            cards, bets = self.encode_history(state.history(), self._player_of(state, player))
            card_rows.append(cards)
            bet_rows.append(bets)
        all_cards = np.array(card_rows, dtype=np.int64).reshape(len(states), self._num_card_slots)
        bets = np.array(bet_rows, dtype=np.float32).reshape(len(states), self.num_bet_features)
        # Contiguous groups, so the paper's `input.view(-1)` works on them.
        groups = [np.ascontiguousarray(all_cards[:, a:b]) for a, b in self._group_bounds]
        return groups, bets

    def flat_tensor(self, state: pyspiel.State, player: int | None = None) -> np.ndarray:
        """Perfect-recall flat encoding, float32 [flat_tensor_size], for any MLP.

        Layout: per card group a 52-wide multi-hot block (hole, flop[, turn,
        river]); then per betting position (round-major, 6 per round) an
        "occurred" bit; then per position the scaled chips (0 if no action).
        """
        encoded = self.encode(state, player)
        flat = np.zeros(self.flat_tensor_size, dtype=np.float32)
        for group, group_cards in enumerate(encoded.cards):
            dealt = group_cards[group_cards >= 0]
            flat[group * NUM_CARD_INDICES + dealt] = 1.0
        offset = NUM_CARD_INDICES * len(self.card_group_sizes)
        occurred = encoded.bets >= 0
        flat[offset: offset + self.num_bet_features] = occurred
        offset += self.num_bet_features
        flat[offset:] = np.where(occurred, encoded.bets, 0.0)
        return flat

    def network_tensor(self, state: pyspiel.State, player: int | None = None) -> np.ndarray:
        """Compact flat input of the Appendix C network, float32 [network_tensor_size].

        Layout (`network_layout`): the card indices of every group in order
        (hole, flop[, turn, river]; -1 = not dealt), then the bet floats of
        `encode` (-1 = no action at that position). 17 floats for FHP, 31 for
        HULH, against 128 / 256 for `flat_tensor`.
        """
        cards, bets = self.encode_history(state.history(), self._player_of(state, player))
        return np.asarray(cards + bets, dtype=np.float32)

    def information_state_string(self, state: pyspiel.State, player: int | None = None) -> str:
        """Perfect-recall infoset string: own cards, board per street, bets."""
        player = self._player_of(state, player)
        replay = replay_history(self.rules, state.history())
        groups = [sorted(replay.hole_cards[player])] + [
            sorted(replay.board_cards[rnd]) for rnd in range(1, self.rules.num_rounds)
        ]
        cards = "|".join("".join(card_to_string(c) for c in group) for group in groups)
        letters = {FOLD: "f", CALL: "c", RAISE: "r"}
        bets = "/".join(
            "".join(letters[a] for _, a, _ in round_actions) for round_actions in replay.actions
        )
        return f"[P{player}][Cards {cards}][Bets {bets}]"


class PokerNetworkEncoder(PokerEncoder):
    """A `PokerEncoder` that is also a Deep CFR encoder for the "poker" network.

    `encoder(state, player)` returns the `network_tensor` as a Python list
    (the traversal hot path: one history replay, no numpy), `feature_size` is
    its length and `network_layout` tells the network how to split it.
    `DeepCFRSolver(game, network=NetworkSettings(family="poker"))` builds one automatically.
    """

    name = "poker_network_tensor"

    def __init__(self, game: pyspiel.Game, chip_scale: float = 1.0 / BIG_BLIND):
        super().__init__(game, chip_scale=chip_scale)
        self.feature_size = self.network_tensor_size

    def __call__(self, state: pyspiel.State, player: int) -> list[float]:
        cards, bets = self.encode_history(state.history(), player)
        return cards + bets


def poker_network_options(game: pyspiel.Game, chip_scale: float = 1.0 / BIG_BLIND, **options) -> dict:
    """`DeepCFRSolver` keyword arguments for the Appendix C network on `game`.

        solver = DeepCFRSolver(game, **poker_network_options(game, dim=96))

    Returns {"network": {"family": "poker", "encoder": PokerNetworkEncoder(game),
    "options": layout + `options`}} (the network settings group as a dict;
    options: `dim`, `card_skips`, see
    `openspiel_cfrx.neural_poker.poker_network.PokerNetwork`). Raises ValueError when
    `game` is not a `flop_holdem` / `hulh` variant.
    """
    encoder = PokerNetworkEncoder(game, chip_scale=chip_scale)
    options = {**encoder.network_layout.as_options(), **options}
    return {"network": {"family": "poker", "encoder": encoder, "options": options}}


# DeepCFRSolver(game, network=NetworkSettings(family="poker")) reads its input through this registry
# (openspiel_cfrx never imports games).
register_input_encoder("poker", PokerNetworkEncoder)
