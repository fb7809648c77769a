"""External-sampling traversals (Deep CFR, Brown et al. 2019, Algorithm 2) on
the betting tree of a limit poker game, many deals advanced together as
arrays: the "poker" traversal backend (registered in `sampling.SAMPLERS`).

The betting tree does not depend on the cards (`PublicTree.nodes`), so a
traversal is a deal plus a walk of that tree. K traversals start together:
each draws its whole deal up front (both players' hole cards and every board
card: the same distribution as drawing each chance card when reached, and
external sampling draws chance once per traversal). Then, one depth of the
tree at a time, every pending visit (traversal, node) moves on as a row of
flat arrays:

* deal node: to its child (the cards are already drawn);
* the opponent's decision (lines 11-15 of Algorithm 2): one action drawn from
  sigma^t(I) (its (I, sigma^t(I)) row goes to the strategy memory);
* the traverser's decision (lines 5-10): every legal action is visited;
* fold / showdown: the traverser's chips (pyspiel's `returns()`), showdowns
  from both hands' best-five-card ranks on the deal's full board.

sigma^t at all decision visits of a depth is one `strategy` call per player,
on network inputs built for all of them at once (`InformationStateTensors`:
the node's betting template plus the card one-hots, checked against pyspiel
when built; or `CardSlotInputs` for the Appendix C network's card indices).
A strategy that is regret matching on the Appendix C network
(`poker_network.factored_strategy`) is asked by parts instead: the card part of
each distinct hand (preflop) and of each deal's later rounds once per batch,
the bet parts of the player's decision nodes once per batch, the trunk per
visit, once per distinct (hand, node) before the flop (`_by_parts`; the same
function). Row gathers from [n, A] tables use `np.take(axis=0)`: numpy's
2-D fancy indexing `a[idx]` is 4-5x slower on them.
Values then flow back depth by depth: a sampled node takes its
child's value, a traverser node v(I) = sum_a sigma^t(I, a) v(I, a) and
records r~(I, a) = v(I, a) - v(I) for the advantage memory (line 10), with
the pot at the node (`Samples.advantage_pot`, for `TrainingSettings(regret_scale="pot")`).

These are the samples of `deep.traversal.external_sampling_traversal` over pyspiel
states, distribution for distribution (tested: their expectation equals the
exact counterfactual regrets of the public-tree engine, and the state
backend's on the same statistic); only the random stream differs. `nodes`
counts what the state backend counts: decisions, terminals and one chance
node per card dealt.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from openspiel_cfrx.encoders import InformationStateTensorEncoder
from openspiel_cfrx.poker.evaluator import rank_cards
from openspiel_cfrx.poker.network_inputs import CardSlotInputs, InformationStateTensors
from openspiel_cfrx.poker.public_tree import DEAL, DECISION, FOLDED, SHOWDOWN, PublicTree
from openspiel_cfrx.poker.spec import UnsupportedPokerGameError
from openspiel_cfrx.sampling import Sampler, Samples, StrategyFn, register_sampler

_KIND = {DECISION: 0, DEAL: 1, FOLDED: 2, SHOWDOWN: 3}
MIN_BATCH = 4096


class _Rows:
    """Rows of float32 appended in place to one [capacity, width] array that
    grows by doubling; the pages of `np.empty` are only touched where written,
    so a generous capacity costs address space, not memory."""

    def __init__(self, capacity: int, width: int):
        self.data, self.size = np.empty((max(capacity, 1), width), np.float32), 0

    def append(self, n: int) -> np.ndarray:
        """The next n rows (a view to write into)."""
        if self.size + n > len(self.data):
            grown = np.empty((max(2 * len(self.data), self.size + n), self.data.shape[1]), np.float32)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.size += n
        return self.data[self.size - n : self.size]

    def filled(self) -> np.ndarray:
        return self.data[: self.size]


def _distinct_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(one position of each distinct pair (a[i], b[i]), each position's pair number): `np.unique`'s
    return_index / return_inverse for pairs of small non-negative ints, by counting instead of
    sorting (~4x faster for the traversal's preflop rows)."""
    used = np.zeros(b.max() + 1, dtype=bool)
    used[b] = True
    b = (np.cumsum(used) - 1)[b]  # b's values renumbered 0, 1, ... in order
    keys = a * (b.max() + 1) + b
    some = np.empty(keys.max() + 1, dtype=np.int64)
    some[keys] = np.arange(len(keys))
    present = np.zeros(len(some), dtype=bool)
    present[keys] = True
    return some[present], (np.cumsum(present) - 1)[keys]


class PokerSampler(Sampler):
    """The "poker" traversal backend: `batch_size` external-sampling
    traversals at a time over the game's betting tree (module doc).

    Args:
      game: a two-player limit universal_poker game whose
        `information_state_tensor` has universal_poker's layout (flop_holdem;
        hulh with its per-street card blocks).
      batch_size: traversals advanced together (at least `MIN_BATCH`: smaller
        arrays are dominated by the per-depth overhead; measured on full FHP:
        14x the state backend's nodes/s at 1,024, 22x at 4,096 and 16,384).
      rng: numpy Generator (deals, opponent actions).
      encoder: None for `information_state_tensor` inputs, or a Deep CFR
        encoder with a card-slot layout (`network_layout`, e.g. the Appendix C
        network's `PokerNetworkEncoder`): `poker.network_inputs.CardSlotInputs`.
    """

    def __init__(self, game: pyspiel.Game, batch_size: int, rng: np.random.Generator, encoder=None):
        self.tree = tree = PublicTree(game, isomorphism=False, threads=1)
        # checked against pyspiel / the encoder on random states; other layouts are refused
        self.inputs = InformationStateTensors(game, tree) if encoder is None else CardSlotInputs(game, tree, encoder)
        self.batch_size, self.rng = max(int(batch_size), MIN_BATCH), rng
        self._rows_per_traversal = [4.0, 4.0]  # decision visits per traversal (traverser's, opponent's): a first guess, low (the rows grow)
        self.num_actions = game.num_distinct_actions()
        nodes = tree.nodes
        N = len(nodes)
        self.kind = np.array([_KIND[node.kind] for node in nodes])
        self.player = np.array([node.player for node in nodes])
        self.round = np.array([node.round for node in nodes])
        self.stake = np.array([node.contributions for node in nodes], dtype=np.float64)  # [N, 2]
        self.pot = self.stake.sum(axis=1)  # chips in the pot at each node (`Samples.advantage_pot`)
        self.children = np.full((N, self.num_actions), -1, dtype=np.int64)  # by action id
        for n, node in enumerate(nodes):
            if node.kind == DECISION:
                self.children[n, list(node.legal)] = node.children
        self.legal = self.children >= 0
        self._decisions = [np.flatnonzero((self.kind == _KIND[DECISION]) & (self.player == p)) for p in (0, 1)]
        # Per node, for the walk: its children in action order (a deal node's one child), at
        # child_list[first_of[n] : first_of[n] + num_children[n]]; each legal action's position among
        # them; the last legal action; the nodes touched on arrival (one, or one per card a deal node
        # deals, as the state backend counts)
        self.num_children = np.array([len(node.children) for node in nodes])
        self.first_of = np.cumsum(self.num_children) - self.num_children
        self.child_list = np.array([c for node in nodes for c in node.children], dtype=np.int64)
        self.slot = np.maximum(np.cumsum(self.legal, axis=1) - 1, 0)
        self.last_legal = self.num_actions - 1 - np.argmax(self.legal[:, ::-1], axis=1)
        cards_dealt = np.array([tree.rules.board_cards[node.round + 1] if node.kind == DEAL else 0 for node in nodes])
        self.touched = np.where(self.kind == _KIND[DEAL], cards_dealt, 1)
        # per traverser, its chips at fold nodes (the folder loses its contribution, the other player
        # wins it; a fold node's player is the one who folded), 0 elsewhere
        folder = np.where(self.kind == _KIND[FOLDED], self.player, 0)
        stake = self.stake[np.arange(N), folder]
        self.fold_value = [np.where(self.kind == _KIND[FOLDED], np.where(folder == p, -stake, stake), 0.0) for p in (0, 1)]
        self.board_size = np.array(tree.board_size)
        if tree.board_size[-1] < 3:
            raise UnsupportedPokerGameError("the poker traversal backend needs a board of 3 or more cards at the end")
        self.templates = np.zeros((N, self.inputs.size), dtype=np.float32)
        for n, node in enumerate(nodes):
            if node.kind == DECISION:
                self.templates[n] = self.inputs.template(n)

    def collect(self, strategy: StrategyFn, traverser: int, iteration: int, count: int):
        for lo in range(0, count, self.batch_size):
            yield self._traverse(strategy, traverser, min(self.batch_size, count - lo))

    # ----- one batch ---------------------------------------------------------

    def _deal(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(cards [K, 4 + board]: hole cards of players 0, 1 then the board; showdown sign [K] for player 0)."""
        deck = self.tree.deck
        size = 4 + int(self.board_size[-1])
        cards, taken = np.empty((count, size), dtype=np.int64), np.empty((count, 0), dtype=np.int64)
        for j in range(size):  # card j: uniform over the cards not dealt yet, as the dealer draws it
            x = self.rng.integers(0, deck.num_cards - j, count)  # the x-th card not taken, counting from 0:
            for i in range(j):  # each taken card at or below it (in increasing order) moves it up one
                x += x >= taken[:, i]
            cards[:, j] = x
            taken = np.sort(cards[:, : j + 1], axis=1)
        board = cards[:, 4:]
        ranks = [rank_cards(np.concatenate([cards[:, 2 * p : 2 * p + 2], board], axis=1), deck.num_suits) for p in (0, 1)]
        return cards, np.sign(ranks[0] - ranks[1]).astype(np.float64)

    def features(self, nodes: np.ndarray, cards: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """[V, F] network inputs of the acting player at decision `nodes` [V] with deals
        `cards` [V, 4 + board], written into `out` ([V, F] float32) when given."""
        rows, player = np.arange(len(nodes))[:, None], self.player[nodes][:, None]
        hole = cards[rows, 2 * player + np.arange(2)]
        templates = np.take(self.templates, nodes, axis=0, out=out, mode="clip")  # valid indices: 'clip' writes out directly
        return self.inputs.batch(templates, self.round[nodes], hole, cards[:, 4:], copy=False)

    def _traverse(self, strategy: StrategyFn, traverser: int, count: int) -> Samples:
        """`count` traversals of Algorithm 2 for `traverser`, as arrays of visits.

        Each decision visit's network input is built once, in place in its
        sample row (the traverser's for M_V, the opponent's for M_Pi), and
        answers the sigma^t query from there."""
        cards, sign = self._deal(count)  # chance, drawn once per traversal (lines 11-12)
        slot_rows = self._card_slot_rows(cards)
        factored, card_parts = self._factored(strategy), [None, None]
        width = self.inputs.size
        inputs = [_Rows(int(count * per), width) for per in self._rows_per_traversal]  # advantage, strategy
        levels, strategy_rows = [], []
        node, deal = np.zeros(count, dtype=np.int64), np.arange(count)
        nodes_touched = 4 * count  # the hole cards' chance nodes
        while len(node):  # down, one depth at a time
            kind = self.kind[node]
            nodes_touched += int(self.touched[node].sum())
            decision = np.flatnonzero(kind == _KIND[DECISION])
            acting = self.player[node[decision]]
            mine, theirs = decision[acting == traverser], decision[acting != traverser]
            sigma = [None, None]  # at mine, at theirs
            for i, (visits, player, rows) in enumerate(((mine, traverser, inputs[0]), (theirs, 1 - traverser, inputs[1]))):
                if len(visits):
                    at, of = node[visits], deal[visits]
                    features = self._features(player, at, of, cards, slot_rows, rows.append(len(visits)))
                    if factored[player] is None:
                        sigma[i] = strategy(player, features, np.take(self.legal, at, axis=0))
                    else:
                        sigma[i] = self._by_parts(factored[player], card_parts, player, at, of, cards, slot_rows[player])
            if len(theirs):  # line 13: (I, sigma^t(I)) to the strategy memory
                strategy_rows.append((node[theirs], sigma[1].astype(np.float32)))
            step, start, child = self._children(node, theirs, sigma[1])
            sampled = np.concatenate([theirs, np.flatnonzero(kind == _KIND[DEAL])])
            levels.append((node, deal, start, mine, sigma[0], sampled))
            node, deal = child, np.repeat(deal, step)
        advantage = self._values(levels, traverser, sign)
        self._rows_per_traversal = [1.25 * rows.size / count + 1 for rows in inputs]  # the next batch's first guess
        pot = self.pot[np.concatenate([nodes for nodes, _ in advantage])] if advantage else np.zeros(0)
        return Samples(*self._samples(advantage, inputs[0]), *self._samples(strategy_rows, inputs[1]), nodes_touched,
                       advantage_pot=pot)  # fmt: skip

    def _factored(self, strategy: StrategyFn) -> list:
        """Per player, sigma^t by parts (`poker_network.FactoredStrategy`) where the
        strategy is regret matching on the Appendix C network (card-slot inputs), else None."""
        if not isinstance(self.inputs, CardSlotInputs):
            return [None, None]
        from openspiel_cfrx.neural_poker.poker_network import (
            factored_strategy,  # (torch: only with such inputs)
        )

        return [factored_strategy(strategy, player) for player in (0, 1)]

    def _card_slot_rows(self, cards: np.ndarray) -> list | None:
        """Per player, the card slots of every (round r, deal k) of the batch at row r K + k, for
        card-slot inputs (a decision visit's input is its node's template with these slots); else None."""
        if not isinstance(self.inputs, CardSlotInputs):
            return None
        R = len(self.board_size)
        rounds, board = np.repeat(np.arange(R), len(cards)), np.tile(cards[:, 4:], (R, 1))
        return [self.inputs.card_slots(rounds, np.tile(cards[:, 2 * p : 2 * p + 2], (R, 1)), board) for p in (0, 1)]

    def _features(self, player: int, nodes: np.ndarray, deals: np.ndarray, cards: np.ndarray, slot_rows,
                  out: np.ndarray) -> np.ndarray:  # fmt: skip
        """`features(nodes, cards[deals], out)` for `player`'s visits, from the batch's card slots when
        the inputs have them (`_card_slot_rows`)."""
        if slot_rows is None:
            return self.features(nodes, cards[deals], out=out)
        templates = np.take(self.templates, nodes, axis=0, out=out, mode="clip")  # valid indices: 'clip' writes out directly
        templates[:, : self.inputs.slots] = np.take(slot_rows[player], self.round[nodes] * len(cards) + deals, axis=0)
        return templates

    def _by_parts(self, strategy, card_parts: list, player: int, nodes: np.ndarray, deals: np.ndarray,
                  cards: np.ndarray, slot_rows: np.ndarray) -> np.ndarray:  # fmt: skip
        """sigma^t at `player`'s decision visits (nodes, deals) from the network's
        parts: at the player's first visit of the batch, its card and bet parts
        (`_parts`; the bet parts of all its nodes in one call: per depth, a few
        rows a call cost more than their arithmetic); then the trunk per visit,
        once per distinct (hand, node) before the flop. The same numbers as
        `strategy(player, features, legal)`."""
        K = len(cards)
        if card_parts[player] is None:
            card_parts[player] = self._parts(strategy, player, cards, slot_rows)
        parts, of_row, bets, bet_row = card_parts[player]
        rounds = self.round[nodes]
        card_rows, bet_rows, legal = of_row[rounds * K + deals], bet_row[nodes], np.take(self.legal, nodes, axis=0)
        preflop = np.flatnonzero(rounds == 0)
        if len(preflop) < 2:
            return strategy(parts, card_rows, bets, bet_rows, legal)
        # Before the flop a visit's input is (hand, node): deals that share both
        # (~2/3 of the preflop visits of a 4,096-deal batch) ask once.
        once, back = _distinct_pairs(card_rows[preflop], bet_rows[preflop])
        later = np.flatnonzero(rounds)
        ask = np.concatenate([preflop[once], later])
        answers = strategy(parts, card_rows[ask], bets, bet_rows[ask], np.take(legal, ask, axis=0))
        answer_of = np.empty(len(nodes), dtype=np.int64)
        answer_of[preflop], answer_of[later] = back, len(once) + np.arange(len(later))
        return np.take(answers, answer_of, axis=0)

    def _parts(self, strategy, player: int, cards: np.ndarray, slot_rows: np.ndarray) -> tuple:
        """(card parts, their row of each (round r, deal k) at r K + k, bet parts, their row of each node)
        of `player` for the batch's deals `cards` (card slots `slot_rows`, `_card_slot_rows`): before the
        flop one card part per distinct hand, in later rounds one per deal and round (the board makes
        nearly every deal's cards distinct)."""
        K, R, C = len(cards), len(self.board_size), self.tree.deck.num_cards
        hole = np.sort(cards[:, 2 * player : 2 * player + 2], axis=1)  # the hand, either order
        hand = hole[:, 0] * C + hole[:, 1]
        some_deal = np.zeros(C * C, dtype=np.int64)
        some_deal[hand] = np.arange(K)  # a deal holding each hand
        present = np.zeros(C * C, dtype=bool)
        present[hand] = True
        hands = np.flatnonzero(present)
        H = len(hands)
        of_row = np.concatenate([np.cumsum(present)[hand] - 1, H + np.arange((R - 1) * K)])
        mine = self._decisions[player]
        bet_row = np.zeros(len(self.kind), dtype=np.int64)
        bet_row[mine] = np.arange(len(mine))
        return (strategy.cards(slot_rows[np.concatenate([some_deal[hands], K + np.arange((R - 1) * K)])]), of_row,
                strategy.bets(self.templates[mine, self.inputs.slots :]), bet_row)  # fmt: skip

    def _samples(self, parts: list, rows: _Rows) -> tuple:
        """(features, values, legal masks) of the sample rows: each depth's (nodes, values), in depth order."""
        A = self.num_actions
        if not parts:
            return np.zeros((0, self.inputs.size), np.float32), np.zeros((0, A), np.float32), np.zeros((0, A), bool)
        nodes, values = (np.concatenate([part[i] for part in parts]) for i in range(2))
        return rows.filled(), values, np.take(self.legal, nodes, axis=0)

    def _children(self, node, theirs, sigma):
        """(children per visit, first child's position, child nodes): every legal
        action at the traverser's decisions (line 6), one drawn from sigma^t
        [len(theirs), A] at the opponent's (line 14), the dealt round at deal
        nodes, none at terminals."""
        step = self.num_children[node]
        step[theirs] = 1
        start = np.cumsum(step) - step
        # each visit's first `step` children, at start[v] + j: child_list[first_of[node[v]] + j]
        child = self.child_list[np.arange(int(start[-1] + step[-1])) + np.repeat(self.first_of[node] - start, step)]
        if len(theirs):
            legal = np.take(self.legal, node[theirs], axis=0)
            cumulative = np.cumsum(np.where(legal, sigma, 0.0), axis=1)
            u = self.rng.random(len(theirs)) * cumulative[:, -1]
            drawn = (cumulative <= u[:, None]).sum(axis=1)  # the first action whose cumulative exceeds u
            drawn = np.minimum(drawn, self.last_legal[node[theirs]])  # (u at the very top of the rounding range)
            child[start[theirs]] = self.children[node[theirs], drawn]
        return step, start, child

    def _values(self, levels, traverser: int, sign: np.ndarray) -> list:
        """The traverser's values, deepest depth first (lines 2-3, 8-9), and its
        sampled regrets r~(I, a) = v(I, a) - v(I) per decision (line 10):
        [(nodes, regrets [m, A])] per depth with a traverser decision, in depth order."""
        advantage, below = [], None
        for node, deal, start, mine, sigma, sampled in reversed(levels):
            value = self.fold_value[traverser][node]  # 0 except at folds
            shown = np.flatnonzero(self.kind[node] == _KIND[SHOWDOWN])
            if len(shown):
                won = sign[deal[shown]] * (1.0 if traverser == 0 else -1.0)
                value[shown] = won * self.stake[node[shown], 0]
            if len(sampled):  # deal and opponent visits: the value of the one child
                value[sampled] = below[start[sampled]]
            if len(mine):
                legal = np.take(self.legal, node[mine], axis=0)
                action_values = np.where(legal, below[start[mine][:, None] + np.take(self.slot, node[mine], axis=0)], 0.0)
                value[mine] = (sigma * action_values).sum(axis=1)
                regrets = np.where(legal, action_values - value[mine][:, None], 0.0)
                advantage.append((node[mine], regrets.astype(np.float32)))
            below = value
        return advantage[::-1]  # in depth order, like the rows of their inputs


def poker_sampler(game, encoder, num_actions, batch_size, py_rng, np_rng) -> PokerSampler:
    """The "poker" traversal backend: OpenSpiel's information state tensor, or
    an encoder's card-slot inputs (`network_layout`, e.g. the "poker" network family)."""
    if isinstance(encoder, InformationStateTensorEncoder):
        return PokerSampler(game, batch_size, np_rng)
    if getattr(encoder, "network_layout", None) is None:
        raise ValueError(f"TraversalSettings(backend='poker') builds its inputs itself: information_state_tensor, or an "
                         f"encoder with a card-slot network_layout (network='poker'); the encoder "
                         f"{getattr(encoder, 'name', type(encoder).__name__)!r} is neither: use "
                         "TraversalSettings(backend='state') with it")  # fmt: skip
    return PokerSampler(game, batch_size, np_rng, encoder=encoder)


register_sampler("poker", poker_sampler, reports_pot=True)
