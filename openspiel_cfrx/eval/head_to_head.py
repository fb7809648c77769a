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
flop_holdem and hulh). Works for any 2-player game with explicit chance.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

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


def _sample_action(policy, state, rng: np.random.Generator) -> int:
    try:
        probs = policy.action_probabilities(state)
    except (KeyError, pyspiel.SpielError) as e:  # no entry for the infoset
        raise ValueError(f"{type(policy).__name__} cannot answer infoset {state.information_state_string()!r} "
                         f"({type(e).__name__}: {str(e).strip()[:120]}): is it a policy of another game?") from None  # fmt: skip
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
    return int(actions[rng.choice(len(actions), p=weights / total)])


def _play(game, seat_policies, deck, rng) -> float:
    """Plays one hand; returns seat 0's utility."""
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
            state.apply_action(_sample_action(seat_policies[state.current_player()], state, rng))
    return float(state.returns()[0])


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
) -> MatchResult:
    """A vs B over `num_deals` duplicate deals (2 * num_deals hands).

    Chance events with non-uniform probabilities are not supported by the deck
    trick; poker deals are uniform.
    """
    if not isinstance(game, pyspiel.Game):
        raise TypeError(f"play_match expects a pyspiel.Game, got {type(game).__name__}")
    for name, policy in (("policy_a", policy_a), ("policy_b", policy_b)):
        if not callable(getattr(policy, "action_probabilities", None)):
            raise TypeError(f"{name} is a {type(policy).__name__}, not a policy with action_probabilities(state): "
                            "pass a policy (a solver's average_policy(), or the solver itself if it is one)")  # fmt: skip
        check_policy_game(game, policy, name)
    if game.num_players() != 2:
        raise ValueError(f"head-to-head needs a 2-player game, got {game.num_players()} players")
    if num_deals < 2:
        raise ValueError(f"num_deals must be >= 2 for a confidence interval, got {num_deals}")
    outcomes = game.new_initial_state().chance_outcomes()
    if outcomes and not np.allclose([p for _, p in outcomes], outcomes[0][1]):
        raise ValueError("duplicate deals assume uniform chance events (as in poker)")
    universe = _chance_universe(game)
    rng = np.random.default_rng(seed)
    scores = np.empty(num_deals)
    seat = np.empty((num_deals, 2))
    for d in range(num_deals):
        deck = rng.permutation(universe)
        a_first = _play(game, (policy_a, policy_b), deck, rng)
        a_second = -_play(game, (policy_b, policy_a), deck, rng)  # zero-sum: A's utility
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
