"""Head-to-head matches between two policies with duplicate (seat-swapped) deals.

Each sampled deal is played twice with identical cards: policy A in seat 0 and
B in seat 1, then the seats swapped. Chance is driven by one pre-shuffled deck
per deal (the k-th chance event of a hand takes the k-th legal card of the
deck), so both plays see the same hole and board cards whatever the betting
does. The per-deal score, A's mean winnings over the two seats, removes the
variance of who held the better cards; the reported 95% confidence interval
is over deals (normal approximation).

Utilities are chips; for poker, mbb/g = 1000 * chips / big blind, the big blind
read from the game's `blind` parameter (universal_poker-based games such as
flop_holdem and hulh). Works for any 2-player zero-sum (or constant-sum; the
result is then A's utility above an even split) sequential game that starts
with a uniform chance deal.
"""

from __future__ import annotations

import dataclasses
import math
import types

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from openspiel_cfrx.tree import check_strategy
from openspiel_cfrx.tree.policy_conversion import check_policy_game


def big_blind(game: pyspiel.Game) -> float | None:
    """Largest blind of a universal_poker-style game, or None if it has none.

    A game that wraps universal_poker (e.g. `hulh`) can say so by offering
    `universal_poker_game()`; its blinds are read there."""
    if callable(getattr(game, "universal_poker_game", None)):
        game = game.universal_poker_game()
    blind = game.get_parameters().get("blind")
    if not blind:
        return None
    return float(max(int(b) for b in str(blind).split()))


@dataclasses.dataclass
class MatchResult:
    """A's result against B (positive = A wins)."""

    deals: int
    mean_chips: float  # per hand, averaged over both seats
    ci95_chips: float  # half-width of the 95% confidence interval
    mean_mbb: float | None  # the same in milli-big-blinds per game (poker only)
    ci95_mbb: float | None
    seat_means_chips: tuple[float, float]  # A's mean in seat 0 and in seat 1

    def __str__(self) -> str:
        if self.mean_mbb is not None:
            return f"{self.mean_mbb:+.1f} ± {self.ci95_mbb:.1f} mbb/g over {self.deals} duplicate deals"
        return f"{self.mean_chips:+.4f} ± {self.ci95_chips:.4f} per game over {self.deals} duplicate deals"


def check_match_game(game: pyspiel.Game) -> None:
    """ValueError in one line unless `game` is one a head-to-head match can
    score: 2 players, sequential moves, zero-sum or constant-sum utilities
    (A's winnings in one seat are B's losses; the seat swap relies on it)."""
    game_type = game.get_type()
    problems = []
    if game.num_players() != 2:
        problems.append(f"{game.num_players()}-player")
    if game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        problems.append("simultaneous-move")
    if game_type.utility not in (pyspiel.GameType.Utility.ZERO_SUM, pyspiel.GameType.Utility.CONSTANT_SUM):
        problems.append(game_type.utility.name.lower().replace("_", "-"))
    if problems:
        raise ValueError(f"head-to-head needs a 2-player zero-sum (or constant-sum) sequential game; "
                         f"{game_type.short_name} is {' and '.join(problems)}: choose such a game")  # fmt: skip


def _check_probabilities(policy, state, probs, check: bool) -> None:
    """Action ids must be ints (a float 0.0 is not an action id); with `check`,
    the legal actions' probabilities must be a distribution, as `nash_conv`
    checks them (`openspiel_cfrx.tree.check_strategy` on this one infoset)."""
    for action, prob in probs.items():
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"{type(policy).__name__} gives probability {prob!r} to action {action!r} at infoset "
                             f"{state.information_state_string()!r}: an action must be an int action id (0.."
                             f"{state.get_game().num_distinct_actions() - 1}), not a {type(action).__name__}")  # fmt: skip
    if not check:
        return
    legal = state.legal_actions()
    mask = np.zeros((1, state.get_game().num_distinct_actions()), dtype=bool)
    mask[0, legal] = True
    row = np.zeros(mask.shape)
    for action in legal:
        row[0, action] = float(probs.get(action, 0.0))
    infoset = types.SimpleNamespace(infoset_legal_mask=mask, infoset_key=[state.information_state_string()],
                                    infoset_player=[state.current_player()])  # fmt: skip
    check_strategy(infoset, row)


def _sample_action(policy, state, rng: np.random.Generator, check: bool = True) -> int:
    try:
        probs = policy.action_probabilities(state)
    except (KeyError, pyspiel.SpielError) as e:  # no entry for the infoset
        raise ValueError(f"{type(policy).__name__} cannot answer infoset {state.information_state_string()!r} "
                         f"({type(e).__name__}: {str(e).strip()[:120]}): is it a policy of another game?") from None  # fmt: skip
    _check_probabilities(policy, state, probs, False)
    actions = list(probs.keys())
    weights = np.asarray([max(float(probs[a]), 0.0) for a in actions])
    total = weights.sum()
    if not total > 0:
        raise ValueError(f"policy returned no positive probability at {state.information_state_string()!r}")
    legal = set(state.legal_actions())
    illegal = [a for a, w in zip(actions, weights, strict=True) if w > 0 and a not in legal]
    if illegal:
        raise ValueError(f"{type(policy).__name__} gives probability to action {illegal[0]!r}, not legal at infoset "
                         f"{state.information_state_string()!r} (legal: {sorted(legal)}): is it a policy of another "
                         "game?")  # fmt: skip
    _check_probabilities(policy, state, probs, check)
    return int(actions[rng.choice(len(actions), p=weights / total)])


def _play(game, seat_policies, deck, rng, check: bool = True) -> np.ndarray:
    """Plays one hand; returns both seats' utilities."""
    state = game.new_initial_state()
    next_card = 0
    while not state.is_terminal():
        if state.is_chance_node():
            legal = set(state.legal_actions())
            # Deal the deck's next card that is legal here (all are, for poker).
            while deck[next_card] not in legal:
                next_card += 1
            state.apply_action(int(deck[next_card]))
            next_card += 1
        else:
            state.apply_action(_sample_action(seat_policies[state.current_player()], state, rng, check))
    return np.asarray(state.returns(), dtype=np.float64)


def _chance_universe(game) -> np.ndarray:
    """All chance actions of the root chance node (the deck for poker)."""
    state = game.new_initial_state()
    if not state.is_chance_node():
        raise ValueError("head-to-head duplicate deals need a game that starts with a chance node")
    return np.asarray([a for a, _ in state.chance_outcomes()], dtype=np.int64)


def play_match(
    game: pyspiel.Game,
    policy_a,
    policy_b,
    num_deals: int,
    seed: int = 0,
    check: bool = True,
) -> MatchResult:
    """A vs B over `num_deals` duplicate deals (2 * num_deals hands).

    The game must be 2-player, sequential and zero- or constant-sum
    (`check_match_game`). Chance events with non-uniform probabilities are not
    supported by the deck trick; poker deals are uniform. `check`: every
    probability a policy answers must form a distribution over the legal
    actions, as `nash_conv` requires (ValueError naming the infoset otherwise);
    False plays it as is (negative entries clipped, the rest renormalised).
    """
    if not isinstance(game, pyspiel.Game):
        raise TypeError(f"play_match expects a pyspiel.Game, got {type(game).__name__}")
    for name, policy in (("policy_a", policy_a), ("policy_b", policy_b)):
        if not callable(getattr(policy, "action_probabilities", None)):
            raise TypeError(f"{name} is a {type(policy).__name__}, not a policy with action_probabilities(state): "
                            "pass a policy (a solver's average_policy(), or the solver itself if it is one)")  # fmt: skip
        check_policy_game(game, policy, name)
    check_match_game(game)
    if num_deals < 2:
        raise ValueError(f"num_deals must be >= 2 for a confidence interval, got {num_deals}")
    outcomes = game.new_initial_state().chance_outcomes()
    if outcomes and not np.allclose([p for _, p in outcomes], outcomes[0][1]):
        raise ValueError("duplicate deals assume uniform chance events (as in poker)")
    universe = _chance_universe(game)
    even = game.utility_sum() / 2  # a constant-sum game's even split (0 if zero-sum): A's result is above it
    rng = np.random.default_rng(seed)
    scores = np.empty(num_deals)
    seat = np.empty((num_deals, 2))
    for d in range(num_deals):
        deck = rng.permutation(universe)
        a_first = _play(game, (policy_a, policy_b), deck, rng, check)[0] - even
        a_second = _play(game, (policy_b, policy_a), deck, rng, check)[1] - even  # A in seat 1
        seat[d] = a_first, a_second
        scores[d] = 0.5 * (a_first + a_second)
    mean = float(scores.mean())
    ci = float(1.96 * scores.std(ddof=1) / math.sqrt(num_deals))
    bb = big_blind(game)
    to_mbb = (lambda chips: 1000.0 * chips / bb) if bb else None
    return MatchResult(
        deals=num_deals,
        mean_chips=mean,
        ci95_chips=ci,
        mean_mbb=to_mbb(mean) if to_mbb else None,
        ci95_mbb=to_mbb(ci) if to_mbb else None,
        seat_means_chips=(float(seat[:, 0].mean()), float(seat[:, 1].mean())),
    )


class FixedActionPolicy(policy_lib.Policy):
    """Always plays the first legal action of `preference` (e.g. always-call:
    (1, 0); always-raise: (2, 1, 0) in universal_poker's fold/call/raise order)."""

    def __init__(self, game, preference: tuple[int, ...], name: str):
        super().__init__(game, list(range(game.num_players())))
        self.preference = preference
        self.name = name

    def action_probabilities(self, state, player_id=None):
        legal = state.legal_actions()
        for action in self.preference:
            if action in legal:
                return {a: float(a == action) for a in legal}
        return {a: 1.0 / len(legal) for a in legal}


def always_call(game) -> FixedActionPolicy:
    return FixedActionPolicy(game, (1, 0), "always-call")


def always_raise(game) -> FixedActionPolicy:
    return FixedActionPolicy(game, (2, 1, 0), "always-raise")
