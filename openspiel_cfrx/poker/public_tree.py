"""The public tree of a two-player limit hold'em game (flop hold'em, HULH) and
exact computations on it with hand vectors.

Public tree = betting tree x public chance. The betting tree does not depend on
the cards, so it is read once from the game itself (universal_poker's legal
actions and acting player with a fixed deal; contributions from
`PokerRules`). At every public node each player's private information is a
vector over the C(deck, 2) hands, and all boards of a round are processed
together as `[boards, hands]` arrays, in chunks of boards (threads across
chunks: numpy releases the GIL).

Card removal is exact: a hand meeting the board has zero reach, and terminal
values sum only over opponent hands sharing no card with the hand
(`showdown.BoardShowdowns`, O(H) per board after one sort).

Suit isomorphism (`isomorphism=True`): the first board deal visits one board per
class of suit-relabelled boards (52-card flops: 1,755 of 22,100). For a
suit-symmetric strategy (uniform, anything CFR computes on this tree, any
strategy defined on the class representatives) the value of hand h summed over
the boards of a class is (1 / |stabiliser|) sum over suit permutations s of
v_rep[s(h)], so the deal sums u = sum_c v_c multiplicity_c / num_suits! and
then V[h] = sum_s u[s(h)]. Strategies that are not suit-symmetric (a neural
network's) need `isomorphism=False` (every board).

Conventions (OpenSpiel's): values are chips for the player, averaged over the
deal; chance probabilities are 1 / (C(n, 2) C(n - 2, 2)) for the hole cards and
1 / C(n - 4 - k, d) for each board deal of d cards onto k, the number of boards
compatible with both hands.

A strategy is a callable `strategy(node, lo, hi) -> [hi - lo, H, len(legal)]`:
the acting player's action probabilities at decision node `node` on the round's
boards lo:hi (global board indices of that round, see `round_boards`; the
preflop round has one, empty, board). Rows of hands meeting the board are
ignored.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import itertools
import math
import os
import threading
from collections.abc import Callable

import numba
import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from openspiel_cfrx.poker.cards import Deck
from openspiel_cfrx.poker.evaluator import rank_hands
from openspiel_cfrx.poker.isomorphism import (
    canonical_boards,
    hand_permutation,
    relabel,
    suit_permutations,
)
from openspiel_cfrx.poker.showdown import BoardShowdowns, fold_values_batch, kernel_cards
from openspiel_cfrx.poker.spec import PokerRules, UnsupportedPokerGameError, check_poker_game
from openspiel_cfrx.rows import by_width, row_dot, row_max

FOLD, CALL, RAISE = 0, 1, 2
DECISION, DEAL, FOLDED, SHOWDOWN = "decision", "deal", "fold", "showdown"
MAX, MIX = "max", "mix"  # what a player does at its own decision nodes in a walk

Strategy = Callable[[int, int, int], np.ndarray]


def _combine(fn, *values: tuple) -> tuple:
    """fn over the components of k-tuples of value arrays (a walk's values; k = 2:
    observed and predicted). Components that are the same arrays in every input
    (observed = predicted below any updated decision) are computed once and stay shared."""
    first = fn(*(v[0] for v in values))
    return (first,) + tuple(first if all(v[i] is v[0] for v in values) else fn(*(v[i] for v in values))
                            for i in range(1, len(values[0])))  # fmt: skip


def _single(values):
    return None if values is None else (values,)


@by_width
def _reach_by_action(width):
    @numba.njit(cache=True, nogil=True)
    def kernel(reach, probs, out):  # pragma: no cover - compiled
        """out[a] = reach x probs[:, a] for every action at once (reach [n], probs [n, A],
        out [A, n]): one pass over the strategy's rows; numpy's strided probs[:, a]
        per action took ~15% of a Libratus turn-subgame iteration."""
        n, actions = probs.shape[0], width or probs.shape[1]
        for i in range(n):
            r = reach[i]
            for a in range(actions):
                out[a, i] = r * probs[i, a]

    return kernel


@by_width
def _stack_actions(width):
    @numba.njit(cache=True, nogil=True)
    def kernel(columns, out):  # pragma: no cover - compiled
        """out[:, a] = columns[a] (a tuple of [n] arrays; out [n, A]), row by row."""
        n, actions = out.shape[0], width or out.shape[1]
        for i in range(n):
            for a in range(actions):
                out[i, a] = columns[a][i]

    return kernel


def _stack(*columns: np.ndarray) -> np.ndarray:
    """np.stack(columns, axis=-1) of same-shaped float64 arrays, in one compiled pass."""
    out = np.empty(columns[0].shape + (len(columns),))
    _stack_actions(len(columns))(tuple(np.ascontiguousarray(c, dtype=np.float64).reshape(-1) for c in columns),
                                 out.reshape(-1, len(columns)))  # fmt: skip
    return out


@dataclasses.dataclass
class PublicNode:
    kind: str
    round: int
    contributions: tuple[int, int]
    player: int = -1  # decision: the acting player; fold: the player who folded
    legal: tuple[int, ...] = ()
    children: list[int] = dataclasses.field(default_factory=list)
    actions: tuple[int, ...] = ()  # betting actions from the root (for states)


@dataclasses.dataclass
class _Betting:
    """Where limit betting stands: round, both contributions, raises and actions so far in the round, who acts."""

    round: int
    contributions: tuple[int, int]
    raises: int
    actions_in_round: int
    player: int

    def legal(self, rules: PokerRules) -> tuple[int, ...]:
        """universal_poker's limit actions: fold only facing a bet, call, raise below the round's cap."""
        facing = self.contributions[self.player] < max(self.contributions)
        return ((FOLD,) if facing else ()) + (CALL,) + ((RAISE,) if self.raises < rules.max_raises[self.round] else ())

    def after(self, rules: PokerRules, action: int) -> _Betting | str:
        """The betting after `action`: the next decision, or FOLDED / DEAL / SHOWDOWN when the round or hand ends."""
        spent = rules.contributions_after(self.contributions, self.player, action, self.round)
        if action == FOLD:
            return FOLDED
        if action == CALL and self.actions_in_round >= 1:  # a check or call after the round's first action ends it
            return SHOWDOWN if self.round + 1 == rules.num_rounds else DEAL
        return _Betting(self.round, (spent[0], spent[1]), self.raises + (action == RAISE), self.actions_in_round + 1,
                        1 - self.player)  # fmt: skip


def betting_tree(rules: PokerRules, prefix: tuple[int, ...] = ()) -> list[PublicNode]:
    """The public nodes of a limit game in depth-first order (actions in id order);
    node 0 is the first decision (after the betting actions `prefix`, for a
    subgame). Derived from the rules alone (`PokerRules.contributions_after`,
    universal_poker's legal actions and round ends; tested against pyspiel)."""
    if rules.board_cards[0]:
        raise UnsupportedPokerGameError("the public-tree engine needs round 0 without board cards")
    if not all(rules.board_cards[1:]):  # universal_poker has no chance node for them: no DEAL node marks the round
        raise UnsupportedPokerGameError(f"the public-tree engine needs every round after the first to deal board "
                                        f"cards, got numBoardCards {' '.join(map(str, rules.board_cards))}")  # fmt: skip
    if not rules.is_limit:
        raise UnsupportedPokerGameError("betting_tree builds limit trees; no-limit: nolimit.nolimit_betting_tree")

    def round_start(rnd: int, contributions: tuple[int, int]) -> _Betting:
        return _Betting(rnd, contributions, 0, 0, rules.first_player[rnd])

    betting = round_start(0, (rules.blinds[0], rules.blinds[1]))
    for action in prefix:
        step = betting.after(rules, action) if action in betting.legal(rules) and action != FOLD else FOLDED
        if step == FOLDED:
            raise ValueError(f"subgame betting {tuple(prefix)} is not a sequence of calls and raises of this game "
                             f"(at {action!r})")  # fmt: skip
        if step == SHOWDOWN:
            raise ValueError(f"subgame betting {tuple(prefix)} ends the game")
        if step == DEAL:
            spent = rules.contributions_after(betting.contributions, betting.player, action, betting.round)
            step = round_start(betting.round + 1, (spent[0], spent[1]))
        betting = step
    nodes: list[PublicNode] = []

    def visit(betting: _Betting, actions: tuple[int, ...]) -> int:
        index = len(nodes)
        legal = betting.legal(rules)
        nodes.append(PublicNode(DECISION, betting.round, betting.contributions, betting.player, legal, actions=actions))
        for action in legal:
            spent = rules.contributions_after(betting.contributions, betting.player, action, betting.round)
            spent = (spent[0], spent[1])
            step = betting.after(rules, action)
            child = len(nodes)
            if step == FOLDED:
                nodes.append(PublicNode(FOLDED, betting.round, spent, betting.player, actions=actions + (action,)))
            elif step == SHOWDOWN:
                nodes.append(PublicNode(SHOWDOWN, betting.round, spent, actions=actions + (action,)))
            elif step == DEAL:
                nodes.append(PublicNode(DEAL, betting.round, spent, actions=actions + (action,)))
                nodes[child].children.append(visit(round_start(betting.round + 1, spent), actions + (action,)))
            else:
                visit(step, actions + (action,))
            nodes[index].children.append(child)
        return index

    visit(betting, tuple(prefix))
    return nodes


@dataclasses.dataclass
class Subgame:
    """A subgame that starts at a later decision point with given ranges.

    betting: the betting actions (calls 1 and raises 2, no chance actions) from
      the game's first decision to the subgame's root decision.
    board: the board cards dealt by then (as many as that round shows).
    reach: [2, H] each player's weight of holding each hand at the root (its
      range: chance x its own reach); hands meeting the board are ignored. The
      subgame's values are expected chips given the root is reached: deals of
      hands are weighted r0[h0] r1[h1] over compatible pairs, normalised.
    """

    betting: tuple[int, ...]
    board: tuple[int, ...]
    reach: np.ndarray


class PokerTreeTooLargeError(UnsupportedPokerGameError, MemoryError):
    """The public tree's walk would not fit in the allowed memory."""


class PokerWalkTooLongError(UnsupportedPokerGameError):
    """An exact walk of the public tree would take far longer than anyone waits."""


# (public node, board, hand) triples an exact walk visits per second: full flop hold'em's
# NashConv (3.4e8 triples) took 7.7 s on 2 shared cores (4.4e7/s); rounded up so the estimate
# errs towards the shorter time.
WALK_TRIPLES_PER_SECOND = 1e8


def _nbytes(obj) -> int:
    """Bytes of the numpy arrays among `obj`'s attributes."""
    return sum(v.nbytes for v in vars(obj).values() if isinstance(v, np.ndarray))


def _depth(nodes: list[PublicNode], n: int) -> int:
    return 1 + max((_depth(nodes, c) for c in nodes[n].children), default=0)


@dataclasses.dataclass
class Chunk:
    """Boards lo:hi of one round, with what terminals need on them."""

    round: int
    lo: int
    hi: int
    boards: np.ndarray  # [b, k] cards
    free: np.ndarray  # [b, H] hands not meeting the board
    weights: np.ndarray | None = None  # first deal: class multiplicity / num_suits!
    showdowns: BoardShowdowns | None = None


class PublicTree:
    """A limit hold'em game's public tree, deck and boards.

    Args:
      game: a two-player limit universal_poker game (flop_holdem, hulh, ...).
      isomorphism: visit one board per suit class at the first deal (see module doc).
      chunk_boards: boards per array block (memory and cache size of a walk).
      threads: worker threads over board chunks (default: CPU count, at most 4).
      max_memory_bytes: working memory a walk may use (default 60% of available
        memory); `chunk_boards` is lowered to fit (later deals multiply a chunk's
        boards), and a tree whose single-board walk does not fit is refused.
      subgame: start at a later decision point with a fixed board and given
        ranges (`Subgame`); its board is the root round's only board, later
        deals extend it (isomorphism does not apply).
      betting: instead of `game`, a (rules, nodes) pair: `PokerRules` (the
        deck, blinds and per-round board cards are read) and public
        nodes from their root (e.g. `nolimit.nolimit_betting_tree`); needs a
        `subgame` (board, ranges; its `betting` must be empty).
    """

    def __init__(self, game: pyspiel.Game | None = None, isomorphism: bool = True, chunk_boards: int = 64,
                 threads: int | None = None, max_memory_bytes: int | None = None,
                 subgame: Subgame | None = None, betting: tuple | None = None):  # fmt: skip
        if isinstance(chunk_boards, bool) or int(chunk_boards) != chunk_boards or chunk_boards < 1:
            raise ValueError(f"chunk_boards must be an int >= 1, got {chunk_boards!r}")
        if threads is not None and (isinstance(threads, bool) or int(threads) != threads or threads < 1):
            raise ValueError(f"threads must be an int >= 1 (or None: CPU count, at most 4), got {threads!r}")
        if (game is None) == (betting is None):
            raise ValueError("PublicTree needs exactly one of a game or betting=(rules, nodes)")
        if game is not None:
            check_poker_game(game, "PublicTree")
        if subgame is not None and not isinstance(subgame, Subgame):
            raise TypeError(f"subgame must be an openspiel_cfrx.poker.Subgame(betting, board, reach), "
                            f"got {type(subgame).__name__}")  # fmt: skip
        if betting is not None and not (isinstance(betting, (tuple, list)) and len(betting) == 2
                                        and isinstance(betting[0], PokerRules)
                                        and all(isinstance(n, PublicNode) for n in betting[1]) and betting[1]):
            raise TypeError("betting must be a (PokerRules, public nodes) pair, e.g. (rules, "
                            f"nolimit.nolimit_betting_tree(rules, round, contributions)), got {betting!r:.80}")  # fmt: skip
        if betting is not None and (subgame is None or tuple(subgame.betting)):
            raise ValueError("PublicTree(betting=...) needs a subgame with its board and ranges (and no betting prefix)")
        self.rules = PokerRules.from_game(game) if game is not None else betting[0]
        self.deck = Deck(self.rules.num_ranks, self.rules.num_suits)
        self.subgame = subgame
        self.nodes = betting_tree(self.rules, subgame.betting if subgame else ()) if game is not None else list(betting[1])
        self.isomorphism = bool(isomorphism) and subgame is None
        self.chunk_boards = int(chunk_boards)
        self.threads = int(threads or min(4, os.cpu_count() or 1))
        n, H = self.deck.num_cards, self.deck.num_hands
        cards = np.cumsum(self.rules.board_cards)  # board size per round
        self.board_size = tuple(int(c) for c in cards)
        self.num_rounds = len(cards)
        first = next((r for r in range(self.num_rounds) if cards[r]), None)
        self.root_round = self.nodes[0].round
        if subgame is not None:
            first = self.root_round  # the subgame's board is the "first deal": one board
        self.first_deal_round = first
        self.chance = [1.0 / (math.comb(n, 2) * math.comb(n - 2, 2))]  # per round: chance weight of a deal
        for r in range(1, self.num_rounds):
            self.chance.append(self.chance[-1] / math.comb(n - 4 - int(cards[r - 1]), self.rules.board_cards[r]))
        self.max_abs_utility = float(max(max(node.contributions) for node in self.nodes))
        self.root_reach = np.ones((2, H))
        self.hands = np.arange(H)  # the walk's hand axis (deck hand indices; a subgame: the held hands)
        if subgame is not None:
            self._set_subgame_root(subgame)
        elif first is None:
            self.first_boards = np.zeros((1, 0), dtype=np.int64)
            self.first_weights, self.hand_perms = np.ones(1), np.arange(H)[None]
        elif self.isomorphism:
            boards, multiplicity, board_class, board_perm = canonical_boards(self.deck, self.board_size[first])
            perms = suit_permutations(self.deck.num_suits)
            self.first_boards, self.first_weights = boards, multiplicity / len(perms)
            self._board_class, self._board_perm = board_class, board_perm
            self.hand_perms = np.stack([hand_permutation(self.deck, p) for p in perms])
        else:
            self.first_boards = np.array(list(itertools.combinations(range(n), self.board_size[first])))
            self.first_weights, self.hand_perms = np.ones(len(self.first_boards)), np.arange(H)[None]
        self.num_hands = len(self.hands)
        self.hand_cards = np.ascontiguousarray(self.deck.hand_cards[self.hands])  # [num_hands, 2]
        self._fold_cards = kernel_cards(self.hand_cards, self.deck.num_cards)
        self._contains = self.deck.contains[self.hands]
        self._walk_reach = np.ascontiguousarray(self.root_reach[:, self.hands])
        # Boards per round: the first deal's boards, then each board extended by
        # every combination of the remaining cards (a fixed fan-out per deal).
        self.fan_out = [1] * self.num_rounds
        for r in range(1, self.num_rounds):
            if first is not None and r > first:
                self.fan_out[r] = math.comb(n - int(cards[r - 1]), self.rules.board_cards[r])
        self.num_boards = [1 if first is None or r < first else len(self.first_boards) * math.prod(self.fan_out[first + 1:r + 1])
                           for r in range(self.num_rounds)]  # fmt: skip
        self._fit_chunks(max_memory_bytes)
        self.max_walk_hours: float | None = 24.0  # walks estimated longer are refused (`walk_estimate`)
        self._chunks: list[Chunk] | None = None
        self._root_chunk: Chunk | None = None
        self.deal_cache_bytes = 2**30  # later deals' chunks kept across walks (`deal_chunk`)
        self._dealt: dict[tuple[int, int], Chunk] = {}
        self._dealt_bytes, self._dealt_lock = 0, threading.Lock()
        self._board_index: dict[tuple[int, ...], int] | None = None
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    # ----- copies ---------------------------------------------------------

    def __getstate__(self) -> dict:
        """Pickle / deepcopy without the deal cache's lock and the worker threads
        (recreated empty on the copy; the later deals' cache is rebuilt on demand)."""
        state = dict(self.__dict__)
        state.pop("_dealt_lock", None)
        state["_pool"] = None
        state["_dealt"], state["_dealt_bytes"] = {}, 0
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._dealt_lock = threading.Lock()

    def _set_subgame_root(self, subgame: Subgame) -> None:
        r0, deck = self.root_round, self.deck
        board = np.array(sorted(int(c) for c in subgame.board), dtype=np.int64)
        if len(board) != self.board_size[r0] or len(set(board.tolist())) != len(board) or (
                len(board) and not 0 <= board.min() <= board.max() < deck.num_cards):  # fmt: skip
            raise ValueError(f"subgame board {tuple(subgame.board)} must hold {self.board_size[r0]} distinct "
                             f"cards of 0..{deck.num_cards - 1} at round {r0}")  # fmt: skip
        reach = np.asarray(subgame.reach, dtype=np.float64)
        if reach.shape != (2, deck.num_hands) or not np.all(np.isfinite(reach)) or reach.min() < 0:
            raise ValueError(f"subgame reach must be finite, >= 0, of shape (2, {deck.num_hands}); got "
                             f"shape {reach.shape}")  # fmt: skip
        free = ~deck.conflicts(board)
        reach = reach * free
        pairs = float((reach[0] * fold_values_batch(reach[1][None], deck.hand_cards, deck.card_hands)[0]).sum())
        if not pairs > 0:
            raise ValueError("subgame reach: no pair of compatible hands has positive weight")
        self.root_reach = reach
        # The walk's arrays run over the hands some player holds at the root: the others
        # have zero reach throughout and values nobody reads (Libratus turn subgames:
        # 859-965 of 1,326 hands).
        self.hands = np.flatnonzero((reach > 0).any(axis=0))
        # Values are conditional on reaching the root: chance 1 / (weight of all hand pairs) there,
        # then 1 / C(cards left, dealt) per later deal.
        self.chance[r0] = 1.0 / pairs
        for r in range(r0 + 1, self.num_rounds):
            self.chance[r] = self.chance[r - 1] / math.comb(
                deck.num_cards - 4 - self.board_size[r - 1], self.rules.board_cards[r])  # fmt: skip
        self.first_boards, self.first_weights = board[None], np.ones(1)
        self.hand_perms = np.arange(len(self.hands))[None]

    def working_bytes(self, chunk_boards: int) -> int:
        """Estimated peak bytes of one walk per thread with `chunk_boards` first-deal boards
        per chunk: the deepest round's boards x hands, float64, ~8 arrays per tree level."""
        first = self.first_deal_round or 0
        boards = chunk_boards * math.prod(self.fan_out[first + 1 :])
        depth = _depth(self.nodes, 0)
        return int(boards * self.num_hands * 8 * 8 * depth)

    def _fit_chunks(self, limit: int | None) -> None:
        if limit is None:
            import psutil

            limit = int(0.6 * psutil.virtual_memory().available)
        per_thread = limit // max(1, self.threads)
        while self.chunk_boards > 1 and self.working_bytes(self.chunk_boards) > per_thread:
            self.chunk_boards //= 2
        if self.working_bytes(self.chunk_boards) > per_thread:
            raise PokerTreeTooLargeError(
                f"a walk of this game's public tree needs ~{self.working_bytes(1) / 2**30:.1f} GiB per thread "
                f"even one first-deal board at a time ({math.prod(self.fan_out[(self.first_deal_round or 0) + 1:]):,} "
                f"later boards x {self.num_hands:,} hands), over the {per_thread / 2**30:.1f} GiB allowed; "
                "use a smaller deck or fewer rounds, or pass max_memory_bytes="
            )

    # ----- boards ---------------------------------------------------------

    def first_chunks(self) -> list[Chunk]:
        """The first deal's boards in chunks (cached with their showdown tables)."""
        if self._chunks is None:
            self._chunks = []
            r = self.first_deal_round
            for lo in range(0, len(self.first_boards), self.chunk_boards):
                hi = min(lo + self.chunk_boards, len(self.first_boards))
                chunk = self._chunk(r, lo, hi, self.first_boards[lo:hi])
                chunk.weights = self.first_weights[lo:hi]
                self._chunks.append(chunk)
        return self._chunks

    def _chunk(self, rnd: int, lo: int, hi: int, boards: np.ndarray) -> Chunk:
        deck = self.deck
        free = ~self._contains[:, boards].any(axis=2)  # [H, b]
        chunk = Chunk(rnd, lo, hi, boards, np.ascontiguousarray(free.T))
        if rnd == self.num_rounds - 1 or self._has_showdown(rnd):
            ranks = np.stack([rank_hands(self.hand_cards, board, deck.num_suits) for board in boards])
            chunk.showdowns = BoardShowdowns(ranks, self.hand_cards, deck.card_hands, chunk.free)
        return chunk

    def _has_showdown(self, rnd: int) -> bool:
        return any(node.kind == SHOWDOWN and node.round == rnd for node in self.nodes)

    def deal_chunk(self, chunk: Chunk) -> Chunk:
        """The boards of the next round dealt onto `chunk`'s boards, with their
        showdown tables; kept for later walks while the kept chunks take at most
        `deal_cache_bytes` (a subgame's few river boards always are)."""
        key = (chunk.round + 1, chunk.lo)
        dealt = self._dealt.get(key)
        if dealt is None:
            dealt = self._deal(chunk)
            size = _nbytes(dealt) + (_nbytes(dealt.showdowns) if dealt.showdowns is not None else 0)
            with self._dealt_lock:
                if self._dealt_bytes + size <= self.deal_cache_bytes:
                    self._dealt[key], self._dealt_bytes = dealt, self._dealt_bytes + size
        return dealt

    def _deal(self, chunk: Chunk) -> Chunk:
        rnd, n = chunk.round + 1, self.deck.num_cards
        extensions = []
        for board in chunk.boards:
            rest = np.setdiff1d(np.arange(n), board)
            for extra in itertools.combinations(rest, self.rules.board_cards[rnd]):
                extensions.append(np.concatenate([board, extra]))
        fan = self.fan_out[rnd]
        return self._chunk(rnd, chunk.lo * fan, chunk.hi * fan, np.array(extensions, dtype=np.int64))

    def board_cards(self, rnd: int, index: int) -> np.ndarray:
        """The cards of board `index` of round `rnd` (first-deal cards, then each later deal's)."""
        first = self.first_deal_round
        if first is None or rnd < first:
            return np.zeros(0, dtype=np.int64)
        digits = []
        for r in range(rnd, first, -1):
            index, j = divmod(index, self.fan_out[r])
            digits.append((r, j))
        board = list(self.first_boards[index])
        for r, j in reversed(digits):
            rest = np.setdiff1d(np.arange(self.deck.num_cards), board)
            board += list(next(itertools.islice(itertools.combinations(rest.tolist(), self.rules.board_cards[r]), j, None)))
        return np.array(board, dtype=np.int64)

    def locate(self, state) -> tuple[int, int, int]:
        """(decision node, board index in the node's round, hand index) of the
        acting player at a universal_poker (or hulh) state: where a `Strategy`
        keeps that infoset (with isomorphism, the board's class representative
        and the hand relabelled with it)."""
        if self.subgame is not None:
            raise ValueError("locate maps states of the whole game; this tree is a subgame")
        history, player = state.history(), state.current_player()
        node, dealt = 0, []
        for action in history[4:]:
            current = self.nodes[node]
            if current.kind == DEAL:
                dealt.append(action)
                if len(dealt) == self.board_size[current.round + 1]:
                    node = current.children[0]
            else:
                node = current.children[current.legal.index(action)]
        if self.nodes[node].kind != DECISION:
            raise ValueError(f"state {state.history_str()!r} is not a decision state")
        hand = np.array(history[2 * player : 2 * player + 2])  # player 0 holds cards 1-2, player 1 cards 3-4
        rnd = self.nodes[node].round
        if not dealt or self.first_deal_round is None or rnd < self.first_deal_round:
            return node, 0, self.deck.hand_index(*hand)
        size = self.board_size[self.first_deal_round]
        if self._board_index is None:
            combos = itertools.combinations(range(self.deck.num_cards), size)
            self._board_index = {board: i for i, board in enumerate(combos)}
        index = self._board_index[tuple(sorted(dealt[:size]))]
        dealt = np.array(dealt)
        if self.isomorphism:
            permutation = self._board_perm[index]
            index = int(self._board_class[index])
            hand, dealt = relabel(self.deck, hand, permutation), relabel(self.deck, dealt, permutation)
        board = list(self.first_boards[index])
        for r in range(self.first_deal_round + 1, rnd + 1):
            extra = tuple(sorted(dealt[self.board_size[r - 1] : self.board_size[r]].tolist()))
            rest = np.setdiff1d(np.arange(self.deck.num_cards), board)
            options = [tuple(c) for c in itertools.combinations(rest.tolist(), self.rules.board_cards[r])]
            index = index * self.fan_out[r] + options.index(extra)
            board += list(extra)
        return node, index, self.deck.hand_index(*hand)

    # ----- walks ----------------------------------------------------------

    def walk(self, strategy: Strategy, modes: tuple[str | None, str | None], on_decision=None,
             paired: bool = False, compact: bool = False) -> np.ndarray:  # fmt: skip
        """Both players' root values [2, H] (chips x chance, summed over the deal; in a
        subgame weighted by the player's own root range).

        modes[p] = MAX: p best-responds; MIX: p plays `strategy`; None: p's
        values are not computed (zeros). Player p's values use the opponent's
        reach. `on_decision(node, chunk, reach, probs, action_values)` (if
        given) sees every decision node of the acting player q after its
        children, with both players' reach (a pair of [b, H] arrays) and q's
        action values [b, H, A]; it may return q's node values [b, H] to use
        instead (CFR's hook).

        paired: each player's values are carried as a pair (observed,
        predicted) that starts equal at the terminals; `on_decision` gets the
        pair of action values and returns the pair of node values (and is
        required). Predictive CFR's observation and prediction (the subtree's
        new decisions against the same opponent reach) then take one walk: the
        terminal values, most of a walk's work, are computed once. Returns the
        pair of root values.

        The walk's arrays run over `self.hands` (a subgame's held hands; every
        hand of a whole game): `on_decision` sees [b, num_hands] arrays, and
        with compact=True `strategy` answers over them too (a solver's
        storage) instead of over the deck's hands.
        """
        if paired and on_decision is None:
            raise ValueError("walk(paired=True) needs an on_decision hook that returns (observed, predicted) values")
        self._check_walk_time()
        H = self.deck.num_hands
        if self.subgame is None:
            if self._root_chunk is None:  # the preflop round's one, empty, board (with showdowns in a one-round game)
                self._root_chunk = self._chunk(0, 0, 1, np.zeros((1, 0), dtype=np.int64))
            root = self._root_chunk
        else:
            root = self.first_chunks()[0]
        if not compact and self.num_hands < H:
            deck_strategy = strategy

            def strategy(n: int, lo: int, hi: int) -> np.ndarray:
                return np.asarray(deck_strategy(n, lo, hi))[:, self.hands]

        hook = on_decision if paired or on_decision is None else (
            lambda n, chunk, reach, probs, values: _single(on_decision(n, chunk, reach, probs, values[0])))  # fmt: skip
        k = 2 if paired else 1
        values = self._walk(0, root, tuple(r[None] for r in self._walk_reach * root.free), strategy, modes, hook, k)
        # Player p's root values weighted by p's own root reach (1 in the whole game; the
        # range in a subgame); hands meeting the root board do not exist.
        own = self._walk_reach * root.free
        out = []
        for i in range(k):
            deck_values = np.zeros((2, H))
            for p, v in enumerate(values):
                if v is not None:
                    deck_values[p, self.hands] = v[i][0] * own[p]
            out.append(deck_values)
        return tuple(out) if paired else out[0]

    def _walk(self, n: int, chunk: Chunk, reach: tuple, strategy, modes, on_decision, k: int) -> list:
        """[v0, v1]: each player's counterfactual values, a k-tuple of [b, H] arrays
        (`_combine`; None where modes[p] is None); reach: both players' plans (no
        chance), a pair of [b, H] arrays (an action's child shares the one that
        does not move)."""
        node = self.nodes[n]
        chance = self.chance[node.round]
        deck = self.deck
        if node.kind in (FOLDED, SHOWDOWN):
            # Player p's values are against the opponent's reach; with both players wanted, one
            # sweep over reach itself: reach[k] gives player 1 - k's values.
            if modes[0] is None and modes[1] is None:
                return [None, None]
            if modes[0] is not None and modes[1] is not None:
                opponents, owners = reach, (1, 0)
            else:
                p = 0 if modes[0] is not None else 1
                opponents, owners = reach[1 - p : 2 - p], (p,)
            if node.kind == FOLDED:
                folder, paid = node.player, node.contributions
                scale = [(-paid[p] if p == folder else paid[folder]) * chance for p in owners]
                values = fold_values_batch(opponents, self._fold_cards, None, scale, deck.num_cards)
            else:
                values = chunk.showdowns.showdown(opponents, node.contributions[0] * chance)
            out = [None, None]
            for i, p in enumerate(owners):
                out[p] = (values[i],) * k
            return out
        if node.kind == DEAL:
            child = node.children[0]
            if chunk.round + 1 == self.first_deal_round:
                return self._first_deal(child, reach, strategy, modes, on_decision, k)
            dealt = self.deal_chunk(chunk)
            fan = self.fan_out[dealt.round]
            below = tuple(np.repeat(r, fan, axis=0) * dealt.free for r in reach)
            values = self._walk(child, dealt, below, strategy, modes, on_decision, k)
            return [None if v is None else _combine(lambda u: (u * dealt.free).reshape(chunk.hi - chunk.lo, fan, -1)
                                                    .sum(axis=1), v) for v in values]  # fmt: skip
        q, o = node.player, 1 - node.player
        probs = np.asarray(strategy(n, chunk.lo, chunk.hi))  # [b, H, A]
        A = len(node.children)
        moved = np.empty((A,) + reach[q].shape)  # q's reach after each action
        _reach_by_action(A)(np.ascontiguousarray(reach[q]).reshape(-1), np.ascontiguousarray(probs).reshape(-1, A),
                            moved.reshape(A, -1))  # fmt: skip
        mine, theirs = [], None
        for a, c in enumerate(node.children):
            below = (moved[a], reach[1]) if q == 0 else (reach[0], moved[a])
            values = self._walk(c, chunk, below, strategy, modes, on_decision, k)
            mine.append(values[q])
            if values[o] is not None:
                theirs = values[o] if theirs is None else _combine(np.add, theirs, values[o])
        out = [None, None]
        out[o] = theirs
        if modes[q] is None:
            return out
        action_values = _combine(_stack, *mine)  # k x [b, H, A]
        if on_decision is not None:
            replaced = on_decision(n, chunk, reach, probs, action_values)
            if replaced is not None:
                out[q] = tuple(replaced)
                return out
        if modes[q] == MAX:
            out[q] = _combine(row_max, action_values)
        else:
            out[q] = _combine(lambda u: row_dot(u, probs), action_values)
        return out

    def _first_deal(self, child: int, reach: tuple, strategy, modes, on_decision, k: int) -> np.ndarray:
        """Values of the first board deal: every (class of) board, summed with its
        weight, then symmetrised over suit permutations (isomorphism)."""

        def one(chunk: Chunk) -> np.ndarray:
            below = tuple(r * chunk.free for r in reach)  # 2 x [b, H]
            values = self._walk(child, chunk, below, strategy, modes, on_decision, k)
            return np.stack([np.zeros((k, chunk.free.shape[1])) if v is None else
                             np.stack([np.einsum("bh,b,bh->h", u, chunk.weights, chunk.free) for u in v])
                             for v in values])  # fmt: skip  # [2, k, H]

        chunks = self.first_chunks()
        if self.threads > 1 and len(chunks) > 1:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(self.threads)
            total = sum(self._pool.map(one, chunks))
        else:
            total = sum(one(chunk) for chunk in chunks)
        symmetric = total[:, :, self.hand_perms].sum(axis=2)[:, :, None, :]  # [2, k, 1, H]
        return [None if modes[p] is None else tuple(symmetric[p]) for p in (0, 1)]

    # ----- front doors ----------------------------------------------------

    def walk_estimate(self) -> tuple[float, float]:
        """(public node, board, hand) triples one exact walk visits, and the hours
        that takes at `WALK_TRIPLES_PER_SECOND` (an optimistic rate measured on
        full flop hold'em, 2 cores)."""
        triples = float(sum(self.num_boards[node.round] for node in self.nodes)) * self.num_hands
        return triples, triples / WALK_TRIPLES_PER_SECOND / 3600

    def nodes_per_walk(self, represented: bool = False) -> int:
        """Game-tree nodes one walk touches, counted as Deep CFR's traversals count
        histories (`deep.traversal`, `neural_poker.traversal`: one per decision and
        terminal history, one per card a chance node deals, four for the hole
        cards), for every history the walk processes: each (public node, visited
        board of its round, ordered pair of hands meeting neither the board nor
        each other). The count depends on the tree only (an abstract solve walks
        the same tree). With isomorphism the walk visits the first deal's class
        representatives only; `represented=True` counts the full game's
        histories they stand for (every board: the count of a walk without
        isomorphism). A subgame counts every pair of the deck's hands (an upper
        bound where ranges are narrower) and no hole cards."""
        n = self.deck.num_cards

        def pairs(board_cards: int) -> int:
            return math.comb(n - board_cards, 2) * math.comb(n - board_cards - 2, 2)

        scale = 1
        if represented and self.isomorphism and self.first_deal_round is not None:
            scale = math.comb(n, self.board_size[self.first_deal_round]) / len(self.first_boards)
        total = 4 * pairs(0) if self.subgame is None else 0
        for node in self.nodes:
            touched = self.rules.board_cards[node.round + 1] if node.kind == DEAL else 1
            boards = self.num_boards[node.round]
            if self.first_deal_round is not None and node.round >= self.first_deal_round:
                boards = round(boards * scale)
            total += touched * boards * pairs(self.board_size[node.round])
        return total

    def _check_walk_time(self) -> None:
        triples, hours = self.walk_estimate()
        if self.max_walk_hours is not None and hours > self.max_walk_hours:
            raise PokerWalkTooLongError(
                f"an exact walk of this public tree visits ~{triples:.2g} (node, board, hand) triples: ~{hours:,.0f} "
                f"hours at the engine's best measured rate ({WALK_TRIPLES_PER_SECOND:.0e}/s), above "
                f"max_walk_hours={self.max_walk_hours:g}. Use a smaller deck or fewer rounds, a subgame, "
                "openspiel_cfrx.poker.lbr.LocalBestResponse (a lower bound for HULH-sized games), or set "
                "tree.max_walk_hours=None to run it anyway"
            )

    def uniform(self, node: int, lo: int, hi: int, compact: bool = False) -> np.ndarray:
        """The uniform strategy (a `Strategy`; compact: over `self.hands`, as `walk(compact=True)`)."""
        legal = len(self.nodes[node].legal)
        return np.full((hi - lo, self.num_hands if compact else self.deck.num_hands, legal), 1.0 / legal)

    def best_response_values(self, strategy: Strategy, compact: bool = False) -> np.ndarray:
        """[2]: each player's best-response value (chips per game) against the other's
        `strategy` (compact: over `self.hands`, as `walk`)."""
        self.check_suit_symmetric(strategy, compact)
        return self.walk(strategy, (MAX, MAX), compact=compact).sum(axis=1)

    def expected_values(self, strategy: Strategy) -> np.ndarray:
        """[2]: each player's expected value (chips per game) when both play `strategy`."""
        self.check_suit_symmetric(strategy)
        return self.walk(strategy, (MIX, MIX)).sum(axis=1)

    def check_suit_symmetric(self, strategy: Strategy, compact: bool = False, tolerance: float = 1e-9) -> None:
        """With `isomorphism`, a walk visits one board per suit class, which is exact
        only for suit-symmetric strategies. Checks the decisions before the first
        board (every hand, every suit relabelling) and raises ValueError naming the
        first asymmetric node and hand; later rounds are not checked (their boards
        are class representatives)."""
        if not self.isomorphism or compact or self.first_deal_round is None or len(self.hand_perms) < 2:
            return
        for n, node in enumerate(self.nodes):
            if node.kind != DECISION or node.round >= self.first_deal_round:
                continue
            probs = np.asarray(strategy(n, 0, 1), dtype=np.float64)[0]  # [H, A]
            for perm in self.hand_perms[1:]:
                gap = np.abs(probs[perm] - probs).max(axis=1)
                if gap.max() > tolerance:
                    hand = int(np.argmax(gap))
                    raise ValueError(
                        f"the strategy is not suit-symmetric: at preflop node {n} hand {hand} and its suit relabelling "
                        f"{int(perm[hand])} differ by {gap.max():.3g}, and with isomorphism=True the engine evaluates "
                        "one board per suit class (exact only for suit-symmetric strategies); build "
                        "PublicTree(game, isomorphism=False)"
                    )

    def nash_conv(self, strategy: Strategy, compact: bool = False) -> float:
        """Sum of both players' best-response values (zero-sum: OpenSpiel's NashConv)."""
        return float(self.best_response_values(strategy, compact).sum())

    def exploitability(self, strategy: Strategy) -> float:
        """NashConv / 2 in chips per game (OpenSpiel's `exploitability`)."""
        return self.nash_conv(strategy) / 2.0


def check_public_tree(tree, who: str) -> None:
    """TypeError naming what `who` expects unless `tree` is a `PublicTree` (a game is not: build the tree)."""
    if not isinstance(tree, PublicTree):
        hint = " (build one with PublicTree(game))" if isinstance(tree, (pyspiel.Game, str)) else ""
        raise TypeError(f"{who} expects an openspiel_cfrx.poker.PublicTree{hint}, got {type(tree).__name__}")


class PublicTreePolicy(policy_lib.Policy):
    """A `Strategy` on a public tree as an OpenSpiel policy: answers
    `action_probabilities(state)` for any decision state of the game by lookup
    (`PublicTree.locate`), so OpenSpiel's tools and head-to-head play can use it."""

    def __init__(self, game: pyspiel.Game, tree: PublicTree, strategy: Strategy):
        check_poker_game(game, "PublicTreePolicy")
        check_public_tree(tree, "PublicTreePolicy")
        if not callable(strategy):
            raise TypeError(f"PublicTreePolicy's strategy must be a callable strategy(node, lo, hi) (e.g. "
                            f"tree.uniform, solver.average_strategy), got {type(strategy).__name__}")  # fmt: skip
        super().__init__(game, [0, 1])
        self.tree, self.strategy = tree, strategy

    def action_probabilities(self, state, player_id=None):
        node, board, hand = self.tree.locate(state)
        probs = np.asarray(self.strategy(node, board, board + 1))[0, hand]
        legal = self.tree.nodes[node].legal
        return {int(a): float(probs[legal.index(a)]) for a in state.legal_actions()}
