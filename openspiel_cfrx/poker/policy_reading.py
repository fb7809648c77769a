"""Any OpenSpiel policy as a `public_tree.Strategy`: read per public node, over all hands at once.

The exact evaluation (`poker.exploitability`) walks the public tree and asks
a `Strategy` for [boards, hands, actions] blocks. `read_policy(game, policy)`
turns a policy into one, choosing the cheapest reading that is exact for it:

* `UniformRandomPolicy` (OpenSpiel's class itself): the uniform strategy, no
  query; suit-symmetric, so the walk may visit one board per suit class.
* a network with `probabilities_from_tensors(features, legal_mask)` and an
  `encoder` (`DeepCFRSolver` with average_policy="network"): one forward per
  public node and board chunk on inputs built in arrays
  (`network_inputs.InformationStateTensors` or `CardSlotInputs`);
  suit-symmetric when its network says so (`policy_network.suit_symmetric`).
* `TabularPolicy`: its rows, looked up by information-state strings written
  from a per-node template.
* a torch module `module(tensors [N, F]) -> [N, num_actions]` of
  non-negative scores (e.g. a softmax) on `information_state_tensor`s,
  renormalised over the legal actions: one forward per public node and
  board chunk, on the same arrays.
* an object with `batch_action_probabilities(states)`: one call per public
  node and board chunk, over lightweight stand-ins for its states.
* any other `policy.Policy` or `pyspiel.Policy` (`action_probabilities`), or
  a callable `f(states) -> [len(states), num_actions]`: one call per infoset,
  on the same stand-ins.

A stand-in (`InfosetView`) answers what an infoset determines
(`current_player`, `legal_actions`, `information_state_string`,
`information_state_tensor`, ...) from the node's template and the acting
player's cards; anything else (`history`, `clone`, `child`, ...) is answered
by a real pyspiel state built on first use, with the opponent's hole cards
the lowest free ones (a representative: a policy reads infosets). The
templates are checked against pyspiel on random states when built, and
a layout that differs is answered by real states throughout.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections.abc import Callable

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from openspiel_cfrx.encoders import InformationStateTensorEncoder
from openspiel_cfrx.poker.network_inputs import (
    CardSlotInputs,
    InformationStateTensors,
    NetworkStrategy,
    state_at,
)
from openspiel_cfrx.poker.public_tree import DECISION, PublicTree
from openspiel_cfrx.poker.spec import UnsupportedPokerGameError

RANK_NAMES, SUIT_NAMES = "23456789TJQKA", "cdhs"
CACHE_BYTES = 2 * 2**30  # strategies kept between the walks of one evaluation up to this size
PROBABILITY_TOLERANCE = 1e-4  # a row's legal probabilities sum to 1 within this (tree.POLICY_SUM_TOLERANCE: float32 networks)


@dataclasses.dataclass
class Reading:
    """How a policy is read (`read_policy`).

    kind: "uniform", "network", "tabular", "batch" or "per_infoset".
    suit_symmetric: exact on a tree that visits one board per suit class.
    per_infoset: one Python call per infoset (the evaluation refuses games
      with more infosets than its `max_infosets`).
    strategy: `strategy(tree) -> Strategy` for a `PublicTree` of the game.
    """

    kind: str
    suit_symmetric: bool
    per_infoset: bool
    strategy: Callable[[PublicTree], Callable]


class InfosetSpace:
    """Per-node templates of a game's information-state strings and tensors,
    and the real states behind `InfosetView`s."""

    def __init__(self, game: pyspiel.Game, tree: PublicTree, check_states: int = 32, seed: int = 0):
        self.game, self.tree = game, tree
        self.num_actions = game.num_distinct_actions()
        try:
            self.tensors = InformationStateTensors(game, tree, check_states, seed)
        except UnsupportedPokerGameError:
            self.tensors = None  # another layout: real states answer
        self._strings: dict[int, tuple[str, str, str]] = {}
        self._lock = threading.Lock()
        self.card_names = [RANK_NAMES[c // tree.deck.num_suits] + SUIT_NAMES[c % tree.deck.num_suits]
                           for c in range(tree.deck.num_cards)]  # fmt: skip
        self.strings_checked = self._check_strings(check_states, np.random.default_rng(seed))

    def state(self, n: int, hole, board) -> pyspiel.State:
        """A real state at decision node n: the acting player holds `hole`, the
        opponent the two lowest cards not dealt, `board` in dealing order."""
        taken = {int(c) for c in hole} | {int(c) for c in board}
        other = [c for c in range(self.tree.deck.num_cards) if c not in taken][:2]
        player = self.tree.nodes[n].player
        return state_at(self.game, self.tree, n, ([*hole, *other] if player == 0 else [*other, *hole]) + [*board])

    def _template(self, n: int) -> tuple[str, str, str]:
        """(text before the private cards, between private and public, after the public cards) at node n."""
        with self._lock:
            if n not in self._strings:
                node = self.tree.nodes[n]
                board = list(range(4, 4 + self.tree.board_size[node.round]))
                text = self.state(n, (0, 1), board).information_state_string(node.player)
                match = re.fullmatch(r"(.*\[Private: )[^\]]*(\]\[Public: )[^\]]*(\].*)", text, re.S)
                if match is None:
                    raise UnsupportedPokerGameError(f"{self.game}: information_state_string {text!r} has no "
                                                    "[Private: ...][Public: ...] fields")  # fmt: skip
                self._strings[n] = match.groups()
            return self._strings[n]

    def string(self, n: int, hole, board) -> str:
        """The acting player's information-state string at node n (universal_poker's: cards high to low)."""
        before, middle, after = self._template(n)
        names = self.card_names
        private = "".join(names[c] for c in sorted(hole, reverse=True))
        public = "".join(names[c] for c in sorted(board, reverse=True))
        return f"{before}{private}{middle}{public}{after}"

    def _check_strings(self, count: int, rng: np.random.Generator) -> bool:
        """Whether `string` equals pyspiel's on `count` random (node, deal)s."""
        decisions = [n for n, node in enumerate(self.tree.nodes) if node.kind == DECISION]
        try:
            for _ in range(count):
                n = int(rng.choice(decisions))
                node = self.tree.nodes[n]
                cards = [int(c) for c in rng.permutation(self.tree.deck.num_cards)[: 2 + self.tree.board_size[node.round]]]
                state = self.state(n, cards[:2], cards[2:])
                if self.string(n, cards[:2], cards[2:]) != state.information_state_string(node.player):
                    return False
        except UnsupportedPokerGameError:
            return False
        return True


class InfosetView:
    """A stand-in for the pyspiel state of one infoset (module doc): the acting
    player's view at decision node n holding `hole` with `board` shown."""

    __slots__ = ("_space", "_n", "_hole", "_board", "_tensor", "_real")

    def __init__(self, space: InfosetSpace, n: int, hole, board, tensor=None):
        self._space, self._n, self._hole, self._board, self._tensor = space, n, hole, board, tensor
        self._real = None

    def _state(self) -> pyspiel.State:
        if self._real is None:
            self._real = self._space.state(self._n, self._hole, self._board)
        return self._real

    def __getattr__(self, name):  # anything an infoset does not determine: a real state's
        return getattr(self._state(), name)

    def __str__(self) -> str:
        return str(self._state())

    def _acting(self, player) -> bool:
        return player is None or player == self._space.tree.nodes[self._n].player

    def current_player(self) -> int:
        return self._space.tree.nodes[self._n].player

    def is_terminal(self) -> bool:
        return False

    def is_chance_node(self) -> bool:
        return False

    def is_simultaneous_node(self) -> bool:
        return False

    def is_player_node(self) -> bool:
        return True

    def get_game(self) -> pyspiel.Game:
        return self._space.game

    def num_distinct_actions(self) -> int:
        return self._space.num_actions

    def legal_actions(self, player=None) -> list[int]:
        return list(self._space.tree.nodes[self._n].legal) if self._acting(player) else []

    def legal_actions_mask(self, player=None) -> list[int]:
        mask = [0] * self._space.num_actions
        for a in self.legal_actions(player):
            mask[a] = 1
        return mask

    def information_state_string(self, player=None) -> str:
        if not self._acting(player) or not self._space.strings_checked:
            return self._state().information_state_string(self.current_player() if player is None else player)
        return self._space.string(self._n, self._hole, self._board)

    def information_state_tensor(self, player=None):
        if not self._acting(player) or self._space.tensors is None:
            return self._state().information_state_tensor(self.current_player() if player is None else player)
        if self._tensor is None:
            space = self._space
            rnd = space.tree.nodes[self._n].round
            self._tensor = space.tensors.batch(space.tensors.template(self._n)[None], np.array([rnd]),
                                               np.asarray([self._hole]), np.asarray([self._board]))[0]  # fmt: skip
        return self._tensor


class PolicyStrategy:
    """A policy read through `InfosetView`s as a `Strategy` (module doc): one
    `read(views, player) -> [N, num_actions]` per public node and board chunk,
    rows checked, blocks cached up to `CACHE_BYTES` (the best-response and
    on-policy walks then query once)."""

    def __init__(self, tree: PublicTree, space: InfosetSpace, read: Callable, tensors: bool = False,
                 check: bool = True, cache: bool = True, batch_size: int = 4096):  # fmt: skip
        self.tree, self.space, self.read, self.tensors, self.check = tree, space, read, tensors, check
        self.cache: dict | None = {} if cache else None
        self.batch_size = int(batch_size)
        self.queries, self.read_seconds = 0, 0.0

    def __call__(self, n: int, lo: int, hi: int) -> np.ndarray:
        key = (n, lo, hi)
        if self.cache is not None and key in self.cache:
            return self.cache[key]
        tree, node = self.tree, self.tree.nodes[n]
        H, legal = tree.deck.num_hands, list(node.legal)
        boards = tree.first_boards[lo:hi] if node.round >= (tree.first_deal_round or 1) else np.zeros((1, 0), np.int64)
        free = ~tree.deck.contains[:, boards].any(axis=2).T  # [b, H]: hands that miss the board
        board_of, hand_of = np.nonzero(free)
        holes = tree.deck.hand_cards[hand_of]
        rows = None
        if self.tensors and self.space.tensors is not None:
            rows = self.space.tensors.tensors(n, hand_of, boards[board_of])
        views = [InfosetView(self.space, n, (int(h[0]), int(h[1])), tuple(int(c) for c in boards[b]),
                             None if rows is None else rows[i])
                 for i, (b, h) in enumerate(zip(board_of, holes, strict=True))]  # fmt: skip
        began = time.perf_counter()
        parts = []
        for lo_view in range(0, len(views), self.batch_size):
            batch = views[lo_view : lo_view + self.batch_size]
            part = np.asarray(self.read(batch, node.player), dtype=np.float64)
            if part.shape != (len(batch), self.space.num_actions):
                raise ValueError(f"the policy returned probabilities of shape {part.shape} for {len(batch)} "
                                 f"infosets, expected {(len(batch), self.space.num_actions)}")  # fmt: skip
            parts.append(part)
        probs = np.concatenate(parts) if parts else np.zeros((0, self.space.num_actions))
        self.read_seconds += time.perf_counter() - began
        self.queries += len(views)
        probs = probs[:, legal]
        if self.check:
            self._check_rows(probs, views)
        out = np.full((len(boards), H, len(legal)), 1.0 / len(legal))
        out[board_of, hand_of] = probs
        if self.cache is not None:
            self.cache[key] = out
        return out

    def _check_rows(self, probs: np.ndarray, views: list[InfosetView]) -> None:
        bad = ~np.isfinite(probs).all(axis=1) | (probs < -PROBABILITY_TOLERANCE).any(axis=1)
        bad |= np.abs(probs.sum(axis=1) - 1.0) > PROBABILITY_TOLERANCE
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"the policy's probabilities over the legal actions at infoset "
                             f"{views[i].information_state_string()!r} are {probs[i].tolist()}, not a distribution "
                             f"(within {PROBABILITY_TOLERANCE:g}); pass check=False to evaluate it as is")  # fmt: skip


def _tabular_read(policy: policy_lib.TabularPolicy) -> Callable:
    lookup, table = policy.state_lookup, policy.action_probability_array

    def read(views, player):
        rows = []
        for view in views:
            key = view.information_state_string()
            row = lookup.get(key)
            if row is None:
                raise ValueError(f"TabularPolicy has no entry for infoset {key!r} of player {player}; "
                                 "build it with policy.TabularPolicy(game) so it covers both players")  # fmt: skip
            rows.append(row)
        return table[np.asarray(rows, dtype=np.int64)]

    return read


def _dicts_read(call: Callable, num_actions: int) -> Callable:
    def read(views, player):
        out = np.zeros((len(views), num_actions))
        for i, view in enumerate(views):
            probs = call(view, player)
            for action, prob in probs.items() if hasattr(probs, "items") else probs:
                out[i, action] = prob
        return out

    return read


def _network_reading(game: pyspiel.Game, policy) -> Reading | None:
    """A network read from tensors, or None when its encoder has no array form."""
    if getattr(policy, "average_policy", "network") != "network":
        return None
    encoder = getattr(policy, "encoder", None)
    if not (isinstance(encoder, InformationStateTensorEncoder) or getattr(encoder, "network_layout", None)):
        return None
    symmetric = bool(getattr(getattr(policy, "policy_network", None), "suit_symmetric", False))

    def strategy(tree: PublicTree):
        try:
            inputs = (InformationStateTensors(game, tree) if isinstance(encoder, InformationStateTensorEncoder)
                      else CardSlotInputs(game, tree, encoder))  # fmt: skip
        except UnsupportedPokerGameError:
            return None
        layer = policy.policy_input_layer() if callable(getattr(policy, "policy_input_layer", None)) else None
        input_layer = None if layer is None else (*layer, policy.probabilities_from_sums)
        return NetworkStrategy(tree, inputs, policy.probabilities_from_tensors, suit_symmetric=symmetric,
                               input_layer=input_layer)  # fmt: skip

    return Reading("network", symmetric, False, strategy)


def _module_reading(game: pyspiel.Game, module, check: bool) -> Reading:
    """A torch module on information-state tensors, read like a network (torch imported here, on use)."""
    import torch

    def probabilities(features: np.ndarray, legal_mask: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            out = module(torch.as_tensor(features))
        return on_legal(out, legal_mask, len(features))

    def from_sums(table: np.ndarray, rows: np.ndarray, legal_mask: np.ndarray) -> np.ndarray:
        table, rows = torch.as_tensor(table), torch.as_tensor(rows)
        with torch.inference_mode():
            out = [module[1:](torch.nn.functional.embedding_bag(rows[lo : lo + 2048], table, mode="sum"))
                   for lo in range(0, len(rows), 2048)]  # fmt: skip
        return on_legal(torch.cat(out), legal_mask, len(rows))

    def on_legal(out, legal_mask: np.ndarray, count: int) -> np.ndarray:
        probs = np.asarray(out.detach().cpu().numpy() if hasattr(out, "detach") else out, dtype=np.float64)
        if probs.shape != legal_mask.shape:
            raise ValueError(f"the module returned shape {probs.shape} for {count} information-state "
                             f"tensors, expected {legal_mask.shape} (scores over the game's actions)")  # fmt: skip
        legal = np.where(legal_mask, probs, 0.0)
        totals = legal.sum(axis=1, keepdims=True)
        bad = ~np.isfinite(legal).all(axis=1) | (legal < 0).any(axis=1) | ~(totals[:, 0] > 0)
        if check and bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"the module's output over the legal actions is {legal[i][legal_mask[i]].tolist()}, not "
                             "non-negative with a positive sum: return probabilities (e.g. end with a softmax), or "
                             "pass check=False to evaluate it as is")  # fmt: skip
        return legal / np.where(totals > 0, totals, 1.0)  # the network's distribution over the legal actions

    first = module[0] if isinstance(module, torch.nn.Sequential) and len(module) > 1 else None
    input_layer = None  # an nn.Sequential opening with a Linear: its first layer as sums (NetworkStrategy)
    if isinstance(first, torch.nn.Linear) and first.bias is not None:
        input_layer = (first.weight.detach().cpu().numpy(), first.bias.detach().cpu().numpy(), from_sums)

    def strategy(tree: PublicTree):
        return NetworkStrategy(tree, InformationStateTensors(game, tree), probabilities, input_layer=input_layer)

    return Reading("module", False, False, strategy)


def read_policy(game: pyspiel.Game, policy, *, check: bool = True, batch_size: int = 4096) -> Reading:
    """How `policy` is read on `game`'s public trees (module doc).

    check: each row's legal probabilities must be a distribution (ValueError
    naming the infoset otherwise); False evaluates them as they are.
    batch_size: the most states per call of the policy."""
    if isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
    num_actions = game.num_distinct_actions()

    def via_views(kind: str, read: Callable, per_infoset: bool, tensors: bool = False) -> Reading:
        def strategy(tree):
            return PolicyStrategy(tree, InfosetSpace(game, tree), read, tensors=tensors, check=check,
                                  batch_size=batch_size)  # fmt: skip

        return Reading(kind, False, per_infoset, strategy)

    if type(policy) is policy_lib.UniformRandomPolicy:
        return Reading("uniform", True, False, lambda tree: tree.uniform)
    if hasattr(policy, "probabilities_from_tensors"):
        reading = _network_reading(game, policy)
        if reading is not None:
            return reading
    if callable(getattr(policy, "forward", None)) and callable(getattr(policy, "parameters", None)):
        return _module_reading(game, policy, check)
    if (isinstance(policy, policy_lib.TabularPolicy)
            and type(policy).action_probabilities is policy_lib.TabularPolicy.action_probabilities):  # fmt: skip
        return via_views("tabular", _tabular_read(policy), True)
    if hasattr(policy, "batch_action_probabilities"):
        return via_views("batch", lambda views, player: policy.batch_action_probabilities(views), False, True)
    if hasattr(policy, "action_probabilities"):
        if isinstance(policy, pyspiel.Policy):
            return via_views("per_infoset", _dicts_read(lambda v, p: policy.action_probabilities(v._state()), num_actions), True)
        return via_views("per_infoset", _dicts_read(policy.action_probabilities, num_actions), True, True)
    if callable(policy):
        return via_views("batch", lambda views, player: policy(views), False, True)
    raise TypeError(f"cannot evaluate a {type(policy).__name__}: pass an open_spiel.python.policy.Policy "
                    "(TabularPolicy, ...), an object with batch_action_probabilities(states), a "
                    "pyspiel.Policy, or a callable f(states) -> [len(states), num_actions]")  # fmt: skip
