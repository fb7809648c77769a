"""Local best response (LBR) for two-player limit hold'em policies.

Lisý & Bowling 2017, "Equilibrium Approximation Quality of Current No-Limit
Poker Bots", Algorithm 1: a player that knows the opponent's policy, keeps
the opponent's range (the distribution over its hole cards given the public
actions, by Bayes' rule on the policy) and at each of its own decisions picks
the action that is best *if the hand were then checked down*:

    U(fold)  = 0
    U(call)  = wp * pot - (1 - wp) * asked                               (line 5)
    U(raise) = fp * pot + (1 - fp) * (wp * (pot + a) - (1 - wp) * (asked + a))
                                                                          (line 11)

with wp the probability of winning at showdown against the range (ties count
half; the remaining board rolled out), asked the chips to call, pot both
players' chips in, a the raise increment and fp the range's probability of
folding to the raise (the policy asked at the state after the raise for every
hand of the range). LBR plays the argmax if its utility is positive, else
folds (checks when checking is free). Limit hold'em has one raise size per
round, so the bet-size loop of the no-limit algorithm has one entry.

Its winnings against a policy are a *lower bound* on the policy's
exploitability (a real best response wins at least as much), estimated by
play: duplicate deals (both seats on the same cards), LBR's mean winnings in
mbb/g with a 95% interval over deals.

Settings (as the paper's, or stated): preflop LBR calls (`preflop="call"`,
the paper's choice for cost; "lbr" runs the rule there too with sampled
rollouts); wp enumerates every board completion when there are at most
`max_completions` (turn, river) and otherwise uses that many completions
drawn uniformly without replacement (the flop: 100 of 1,081 by default).

The policy is any OpenSpiel policy over the game's states; a
`batch_action_probabilities(states) -> [N, num_distinct_actions]` method (our
Deep CFR solvers, batched NFSP wrappers) is used when present: the range
update asks the policy at one state per hand of the range.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time

import numpy as np
import pyspiel

from openspiel_cfrx.poker.cards import Deck
from openspiel_cfrx.poker.evaluator import rank_cards, rank_hands
from openspiel_cfrx.poker.spec import PokerRules, check_poker_game

FOLD, CALL, RAISE = 0, 1, 2


@dataclasses.dataclass
class LBRResult:
    """LBR's winnings against a policy (mbb/g: chips / big blind x 1000)."""

    mbb_per_game: float  # mean over deals of the mean over both seats
    ci95_mbb: float  # half-width of the 95% interval over deals
    seat_mbb: tuple[float, float]  # LBR in seat 0 / seat 1
    deals: int
    seconds: float
    settings: dict

    def __str__(self) -> str:
        return (f"LBR {self.mbb_per_game:,.0f} +- {self.ci95_mbb:,.0f} mbb/g over {self.deals:,} duplicate deals "
                f"(seat 0 {self.seat_mbb[0]:,.0f}, seat 1 {self.seat_mbb[1]:,.0f})")  # fmt: skip


class LocalBestResponse:
    """LBR against `policy` in a two-player limit universal_poker game (or a
    wrapper with the same action and chance encoding, e.g. `hulh`).

    Args:
      game: the game (fold 0 / call 1 / raise 2; chance deals card ids
        rank * num_suits + suit: four hole cards, then the board).
      policy: the opponent's policy (both seats).
      preflop: "call" (the paper's setting) or "lbr".
      max_completions: board completions enumerated, or sampled above this.
      seed: the sampled completions' and the opponent's action draws' seed.
    """

    def __init__(self, game: pyspiel.Game, policy, preflop: str = "call", max_completions: int = 100,
                 seed: int = 0):  # fmt: skip
        check_poker_game(game, "LocalBestResponse")
        if preflop not in ("call", "lbr"):
            raise ValueError(f"preflop must be 'call' (the paper's setting) or 'lbr', got {preflop!r}")
        if isinstance(max_completions, bool) or int(max_completions) != max_completions or max_completions < 1:
            raise ValueError(f"max_completions must be an int >= 1, got {max_completions!r}")
        self.game, self.policy = game, policy
        self.rules = PokerRules.from_game(game)
        if self.rules.num_hole_cards != 2:
            raise ValueError(f"LBR here needs two hole cards per player, {game} deals {self.rules.num_hole_cards}")
        self.deck = Deck(self.rules.num_ranks, self.rules.num_suits)
        self.board_total = self.rules.num_board_cards
        self.preflop, self.max_completions = preflop, int(max_completions)
        self.rng = np.random.default_rng(seed)
        self.queries = 0  # opponent infosets asked (range updates and fold probabilities)

    # ----- the opponent's policy over a range ----------------------------------

    def _probabilities(self, states: list) -> np.ndarray:
        self.queries += len(states)
        batch = getattr(self.policy, "batch_action_probabilities", None)
        if callable(batch):
            return np.asarray(batch(states), dtype=np.float64)[:, :3]
        out = np.zeros((len(states), 3))
        for i, state in enumerate(states):
            for action, p in self.policy.action_probabilities(state).items():
                out[i, action] = p
        return out

    def _range_probabilities(self, history: list[int], seat: int, hands: np.ndarray) -> np.ndarray:
        """[len(hands), 3]: the policy's action probabilities for the opponent (1 - seat)
        holding each of `hands` after `history` (whose hole cards are replaced)."""
        opponent = 1 - seat
        states = []
        for h in hands:
            cards = list(history[:4])
            cards[2 * opponent : 2 * opponent + 2] = [int(c) for c in self.deck.hand_cards[h]]
            state = self.game.new_initial_state()
            for action in cards + list(history[4:]):
                state.apply_action(action)
            states.append(state)
        return self._probabilities(states)

    # ----- win probability ---------------------------------------------------

    def _street_scores(self, hand: np.ndarray, board: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """(sum over completions of LBR's showdown score vs each hand: 1 win, 1/2 tie;
        number of completions compatible with each hand), both [H]."""
        deck, need = self.deck, self.board_total - len(board)
        rest = np.setdiff1d(np.arange(deck.num_cards), np.concatenate([hand, board]).astype(np.int64))
        count = math.comb(len(rest), need)
        if count <= self.max_completions:
            completions = np.array(list(itertools.combinations(rest.tolist(), need)), dtype=np.int64).reshape(count, need)
        else:  # uniform without replacement: distinct random subsets
            chosen: set[tuple[int, ...]] = set()
            while len(chosen) < self.max_completions:
                chosen.add(tuple(sorted(self.rng.choice(rest, size=need, replace=False).tolist())))
            completions = np.array(sorted(chosen), dtype=np.int64)
        scores, valid = np.zeros(deck.num_hands), np.zeros(deck.num_hands)
        mine = np.concatenate([np.broadcast_to(np.concatenate([hand, board]), (len(completions), 2 + len(board))),
                               completions], axis=1)  # fmt: skip
        my_rank = rank_cards(mine, deck.num_suits)
        for full, me in zip(completions, my_rank, strict=True):
            theirs = rank_hands(deck.hand_cards, np.concatenate([board, full]).astype(np.int64), deck.num_suits)
            ok = theirs >= 0  # hands meeting the full board (incl. the completion) do not exist here
            scores += ok * ((me > theirs) + 0.5 * (me == theirs))
            valid += ok
        return scores, valid

    # ----- one game ------------------------------------------------------------

    def play(self, seat: int, cards: np.ndarray) -> float:
        """LBR in `seat` against the policy on a deal (4 hole cards: seat 0's two,
        seat 1's two, then the board in dealing order); returns LBR's chips."""
        rules, deck = self.rules, self.deck
        hand = np.array(cards[2 * seat : 2 * seat + 2], dtype=np.int64)
        state = self.game.new_initial_state()
        for card in cards[:4]:
            state.apply_action(int(card))
        dealt, rnd, board = 4, 0, []
        spent = list(rules.blinds)
        reach = (~deck.contains[:, hand].any(axis=1)).astype(np.float64)  # the opponent's range (prior: uniform)
        street: tuple | None = None
        while not state.is_terminal():
            if state.is_chance_node():
                card = int(cards[dealt])
                state.apply_action(card)
                dealt += 1
                board.append(card)
                reach *= ~deck.contains[:, card]
                if len(board) == sum(rules.board_cards[: rnd + 2]):
                    rnd += 1
                continue
            player = state.current_player()
            legal = state.legal_actions()
            if player != seat:
                hands = np.flatnonzero(reach > 0)
                probs = self._range_probabilities(state.history(), seat, hands)
                mine = deck.hand_index(*cards[2 * player : 2 * player + 2])
                row = int(np.searchsorted(hands, mine))
                if row == len(hands) or hands[row] != mine:
                    raise ValueError(f"the policy gave probability 0 to an action it took at "
                                     f"{state.history_str()!r} (its own hand left the range)")  # fmt: skip
                p = probs[row][legal]
                action = int(legal[self.rng.choice(len(legal), p=p / p.sum())])
                reach[hands] *= probs[:, action]
            elif rnd == 0 and self.preflop == "call":
                action = CALL
            else:
                if street is None or street[0] != len(board):
                    street = (len(board), *self._street_scores(hand, board))
                action = self._act(state, seat, legal, reach, street[1], street[2], spent, rnd)
            spent = list(rules.contributions_after(spent, player, action, rnd))
            state.apply_action(action)
        return float(state.returns()[seat])

    def _act(self, state, seat, legal, reach, scores, valid, spent, rnd) -> int:
        """Algorithm 1: the action with the largest checked-down utility, fold if none is positive."""
        weight = float(reach @ valid)
        wp = float(reach @ scores) / weight if weight > 0 else 0.5
        asked = max(spent) - spent[seat]
        pot = float(sum(spent))
        utility = {FOLD: 0.0, CALL: wp * pot - (1 - wp) * asked}  # line 5
        if RAISE in legal:
            raised = state.child(RAISE)
            hands = np.flatnonzero(reach > 0)
            fold = self._range_probabilities(raised.history(), seat, hands)[:, FOLD]
            fp = float(reach[hands] @ fold) / float(reach[hands].sum())
            a = self.rules.raise_sizes[rnd]
            utility[RAISE] = fp * pot + (1 - fp) * (wp * (pot + a) - (1 - wp) * (asked + a))  # line 11
        best = max((a for a in (CALL, RAISE) if a in legal), key=lambda a: (utility[a], -a))
        if utility[best] > 0 or asked == 0 or FOLD not in legal:
            return best
        return FOLD

    # ----- evaluation ------------------------------------------------------------

    def evaluate(self, deals: int, seed: int = 0, progress: bool = False) -> LBRResult:
        """LBR's mean winnings over `deals` duplicate deals (each played in both seats)."""
        if isinstance(deals, bool) or int(deals) != deals or deals < 2:
            raise ValueError(f"deals must be an int >= 2 (the interval needs two), got {deals!r}")
        rng = np.random.default_rng(seed)
        started, winnings = time.perf_counter(), np.zeros((deals, 2))
        needed = 4 + self.board_total
        for i in range(deals):
            cards = rng.permutation(self.deck.num_cards)[:needed]
            winnings[i] = [self.play(0, cards), self.play(1, cards)]
            if progress and (i + 1) % max(1, deals // 10) == 0:
                mean = self.rules.mbb_per_game(winnings[: i + 1].mean())
                print(f"  LBR {i + 1}/{deals} deals: {mean:,.0f} mbb/g", flush=True)
        per_deal = self.rules.mbb_per_game(winnings.mean(axis=1))
        return LBRResult(
            mbb_per_game=float(per_deal.mean()),
            ci95_mbb=float(1.96 * per_deal.std(ddof=1) / math.sqrt(deals)),
            seat_mbb=tuple(float(self.rules.mbb_per_game(winnings[:, s].mean())) for s in (0, 1)),
            deals=int(deals),
            seconds=time.perf_counter() - started,
            settings={"preflop": self.preflop, "max_completions": self.max_completions},
        )
