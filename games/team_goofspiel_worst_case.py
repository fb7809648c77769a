"""Team Goofspiel's exact team worst case: a dynamic program over the
adversary's observations (the game's own rules), offered to
`openspiel_cfrx.eval.team_best_response.team_worst_case` through the game's
`team_worst_case(policy)` method.

Team Goofspiel's adversary observes only the point cards, its own bids and
the round winners, so its best response is an exact dynamic program over those
observation sequences (histories enumerated round by round with their reach,
the last round vectorised). Exact; cost = last-round histories x joint bids,
e.g. 6 cards / 4 agents / 2 rounds in ~10 s. Agrees with the tree engine and
OpenSpiel to 1e-9 (tests/test_team_best_response.py).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import pyspiel

from openspiel_cfrx.eval.team_best_response import (
    TEAM,
    WorstCaseResult,
    WorstCaseTooLargeError,
    mixed_radix,
    team_joint_probabilities,
)


def _goofspiel_winners(team_bids: np.ndarray, adversary_bid: np.ndarray) -> np.ndarray:
    """Winner codes (agent i, P = adversary, P + 1 = discarded) of one round.

    team_bids [..., P] and adversary_bid [...] (cards, broadcastable)."""
    num_agents = team_bids.shape[-1]
    team_high = team_bids.max(axis=-1)
    high = np.maximum(team_high, adversary_bid)
    top = (team_bids == high[..., None]).sum(axis=-1) + (adversary_bid == high)
    agent = team_bids.argmax(axis=-1)
    winner = np.where(adversary_bid == high, num_agents, agent)
    return np.where(top == 1, winner, num_agents + 1)


@functools.lru_cache(maxsize=1 << 16)
def _bits(mask: int) -> tuple[int, ...]:
    return tuple(d for d in range(mask.bit_length()) if mask >> d & 1)


def exact_goofspiel_team_worst_case(
    game: pyspiel.Game, policy, max_terminal_pairs: int = 100_000_000, max_team_states: int = 200_000,
    max_round_histories: int = 2_000_000,
) -> WorstCaseResult:
    """Exact team worst case of `team_goofspiel` without extracting the game.

    The adversary observes only the point cards, its own bids and who won
    each round, so its best response is a dynamic program over those
    observation sequences: histories (team bids, adversary bids, point cards)
    are enumerated round by round with their chance x team reach, grouped by
    the adversary's information set, and the last round is evaluated in one
    vectorised pass over (history, team joint bid, adversary bid). The team's
    strategy is queried once per distinct team information set, in batches
    (`team_joint_probabilities`: products of the agents' marginals for
    CFR-MIX). Exact (float64) and in agreement with the tree engine on
    instances it can extract (tests); the cost is the number of histories at
    the last round times its joint bids, so it suits few rounds (6 cards / 4
    agents / 2 rounds: 7,776 last-round histories x 625 joint bids x 5 bids).
    Raises ValueError above `max_terminal_pairs` (history, joint bid, bid)
    triples, `max_team_states` team states to query, or `max_round_histories`
    (history, joint bid, bid) triples of an earlier round (built one by one:
    6 cards / 4 agents / 3 rounds would build 24M), before allocating them.
    """
    import time

    if game.get_type().short_name != "team_goofspiel":
        raise ValueError(f"exact_goofspiel_team_worst_case needs team_goofspiel, got {game.get_type().short_name}")
    start = time.perf_counter()
    rules = _Rules.of(game)
    level = _first_level(rules)  # level r: histories at the team's decision of round r
    adv_parent: list[dict] = []  # per level >= 1: child adversary infoset -> (parent infoset id, bid index)
    adv_levels = []  # per level: (infoset ids [H], number of infosets, adversary hand per infoset)
    team_states_built = 0
    for r in range(rules.rounds):
        adv_levels.append(_adversary_infosets(level))
        adv_ids = adv_levels[-1][0]
        count, m = len(level.actions), rules.k - r
        num_joint, agent_digits, adv_cards = _bid_tables(level, m, rules.p)
        if r == rules.rounds - 1 and count * num_joint * m > max_terminal_pairs:
            raise WorstCaseTooLargeError(
                f"team_goofspiel exact best response: {count} last-round histories x {num_joint} joint bids x "
                f"{m} bids exceed max_terminal_pairs={max_terminal_pairs}; use fewer rounds, or the sampled method"
            )
        representative, team_ids = _team_infosets(level.team_key)
        team_states_built += len(representative)
        if team_states_built > max_team_states:
            raise WorstCaseTooLargeError(
                f"team_goofspiel exact best response needs more than max_team_states={max_team_states} team "
                "information sets; use fewer rounds, or the sampled method"
            )
        sigma = _team_strategy(game, policy, rules, level, representative, agent_digits, num_joint)
        sigma = sigma[team_ids]  # [H, J]
        if r == rules.rounds - 1:
            num_adv = adv_levels[-1][1]
            q = _last_round_values(rules, level, sigma, agent_digits, adv_cards, adv_ids, num_adv)
            break
        # Children at round r + 1: (h, j, b[, next card]).
        if count * num_joint * m > max_round_histories:
            raise WorstCaseTooLargeError(
                f"team_goofspiel exact best response: round {r + 1} has {count} histories x {num_joint} joint bids "
                f"x {m} bids = {count * num_joint * m:,} > max_round_histories={max_round_histories:,}; use fewer "
                "rounds, or the particle method (team_worst_case(method='particle'))"
            )
        played = _play_round(rules, level, sigma, agent_digits, adv_cards, m, num_joint)
        level, parents = _deal_next_card(rules, r, level, played, adv_ids)
        adv_parent.append(parents)
    best_response_value = _adversary_best_response(adv_levels, adv_parent, q, rules.k)
    return WorstCaseResult("exact", -best_response_value, adversary_infosets=sum(lv[1] for lv in adv_levels),
                           seconds=time.perf_counter() - start)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class _Rules:
    """The parameters of a team_goofspiel game that the dynamic program reads."""

    k: int  # cards per hand (and point cards)
    p: int  # team agents
    rounds: int
    order: str  # points_order: "descending", "ascending" or "random"
    returns_type: str
    radices: tuple  # actions per agent (`game.agent_num_actions()`)

    @classmethod
    def of(cls, game: pyspiel.Game) -> _Rules:
        params = game.get_parameters()
        k, p = int(params["num_cards"]), int(params["num_agents"])
        rounds = k if int(params["num_turns"]) == -1 else int(params["num_turns"])
        order, returns_type = str(params["points_order"]), str(params["returns_type"])
        return cls(k, p, rounds, order, returns_type, game.agent_num_actions())

    @property
    def full(self) -> int:
        """A full hand as a bitmask (bit c: card c + 1)."""
        return (1 << self.k) - 1

    def fixed_card(self, r: int) -> int:
        """The point card of round r when the order is not random."""
        return self.k - r if self.order == "descending" else r + 1


@dataclasses.dataclass
class _Level:
    """Histories at the team's decision of one round, one entry per history."""

    actions: list  # action tuple from the root
    card: np.ndarray  # point card on offer
    used: list  # bitmask of the point cards dealt so far
    reach: np.ndarray  # chance x team reach
    team_hands: np.ndarray  # [H, P] bitmask of each agent's remaining cards
    adv_hand: np.ndarray  # [H] bitmask of the adversary's remaining cards
    team_points: np.ndarray  # [H, P]
    adv_points: np.ndarray  # [H]
    adv_key: list  # the adversary's observation sequence (its information set)
    team_key: list  # the team's observation sequence (its information set)


def _first_level(rules: _Rules) -> _Level:
    """Histories at the team's decision of round 0 (after the first point card)."""
    k, p, full = rules.k, rules.p, rules.full
    if rules.order == "random":  # chance deals the first card uniformly
        actions, card = [(c,) for c in range(k)], np.arange(1, k + 1)
        used, reach = [1 << c for c in range(k)], np.full(k, 1.0 / k)
    else:
        actions, card, used, reach = [()], np.array([rules.fixed_card(0)]), [0], np.ones(1)
    count = len(actions)
    return _Level(
        actions=actions,
        card=card,
        used=used,
        reach=reach,
        team_hands=np.full((count, p), full, dtype=np.int64),
        adv_hand=np.full(count, full, dtype=np.int64),
        team_points=np.zeros((count, p)),
        adv_points=np.zeros(count),
        adv_key=[(int(c),) for c in card],
        team_key=[(int(c),) for c in card],
    )


def _adversary_infosets(level: _Level) -> tuple[np.ndarray, int, np.ndarray]:
    """(adversary infoset id of each history [H], number of infosets, adversary
    hand per infoset); ids follow first appearance."""
    keys = {}
    adv_ids = np.array([keys.setdefault(key, len(keys)) for key in level.adv_key], dtype=np.int64)
    hands_of = np.zeros(len(keys), dtype=np.int64)
    hands_of[adv_ids] = level.adv_hand
    return adv_ids, len(keys), hands_of


def _bid_tables(level: _Level, m: int, p: int) -> tuple[int, list[np.ndarray], np.ndarray]:
    """Bids of a round with m cards left: (number of team joint bids J,
    agent_digits, adversary cards [H, m] (card - 1, ascending)), where
    agent_digits[i][h, j] is the card - 1 that agent i bids in joint bid j of
    history h (joint bids are positions into each agent's sorted hand)."""
    num_joint = m**p
    positions = (np.arange(num_joint)[:, None] // (m ** np.arange(p))[None, :]) % m  # [J, P]
    hand_cards = np.array(
        [[_bits(int(h)) for h in row] for row in level.team_hands], dtype=np.int16
    )
    agent_digits = [np.ascontiguousarray(hand_cards[:, i, positions[:, i]]) for i in range(p)]
    adv_cards = np.array([_bits(int(h)) for h in level.adv_hand], dtype=np.int64)  # [H, m]
    return num_joint, agent_digits, adv_cards


def _team_infosets(team_keys: list) -> tuple[list[int], np.ndarray]:
    """(one representative history per team information set, in order of first
    appearance; each history's team information set id [H])."""
    team_index = {}
    representative = []
    team_ids = np.empty(len(team_keys), dtype=np.int64)
    for h, key in enumerate(team_keys):
        slot = team_index.get(key)
        if slot is None:
            slot = team_index[key] = len(representative)
            representative.append(h)
        team_ids[h] = slot
    return representative, team_ids


def _team_strategy(
    game, policy, rules, level, representative, agent_digits, num_joint
) -> np.ndarray:
    """[len(representative), J] the team's joint-bid probabilities at each
    representative history, queried in batches of 2048 states."""
    sigma = np.zeros((len(representative), num_joint))
    for lo in range(0, len(representative), 2048):
        chunk = representative[lo : lo + 2048]
        states = _states_at(game, level, chunk)
        digits = np.stack([d[chunk] for d in agent_digits], axis=2)
        sigma[lo : lo + len(chunk)] = team_joint_probabilities(
            policy, states, digits, rules.radices
        )
    return sigma


def _states_at(game, level, histories) -> list:
    """The pyspiel states of `histories` (indices into the level), replayed from the root."""
    states = []
    for h in histories:
        state = game.new_initial_state()
        for action in level.actions[h]:
            state.apply_action(action)
        states.append(state)
    return states


def _last_round_values(
    rules, level, sigma, agent_digits, adv_cards, adv_ids, num_adv
) -> np.ndarray:
    """[num_adv, K] Q(J, b): the adversary's expected utility of bidding card
    b + 1 at each last-round information set J, weighted by reach; -inf-free
    (bids it does not hold count 0 here and are masked by the caller)."""
    k, p, count = rules.k, rules.p, len(level.actions)
    card = level.card.astype(np.float64)
    # Last round, vectorised. Only the team's highest bid and who holds
    # it (one agent, or a tie) matter: D[h, high, code] = probability.
    team_high = agent_digits[0].astype(np.int64)  # [H, J], card - 1
    for agent in range(1, p):
        np.maximum(team_high, agent_digits[agent], out=team_high)
    holders = np.zeros(team_high.shape, dtype=np.int8)
    code = np.zeros(team_high.shape, dtype=np.int64)
    for agent in range(p):
        at_high = agent_digits[agent] == team_high
        holders += at_high
        code = np.where(at_high, agent, code)
    # The agent holding the highest bid, or p = a tie within the team.
    code = np.where(holders > 1, p, code)
    cells = k * (p + 1)
    flat = (np.arange(count)[:, None] * cells + team_high * (p + 1) + code).ravel()
    dist = np.bincount(flat, weights=sigma.ravel(), minlength=count * cells)
    dist = dist.reshape(count, k, p + 1)
    high = np.arange(1, k + 1)[None, :, None, None]  # [1, K, 1, 1]
    holder = np.arange(p + 1)[None, None, :, None]  # [1, 1, P+1, 1]
    adv = adv_cards[:, None, None, :] + 1  # [H, 1, 1, m]
    points = level.team_points
    best = points.max(axis=1)[:, None, None, None]
    c = card[:, None, None, None]
    holder_points = np.concatenate([points, np.zeros((count, 1))], axis=1)[:, None, :, None]
    team_wins = (adv < high) & (holder < p)
    team_best = np.where(team_wins, np.maximum(best, holder_points + c), best)
    adv_total = level.adv_points[:, None, None, None] + np.where(adv > high, c, 0.0)
    diff = team_best - adv_total  # [H, K, P+1, m]
    value = np.sign(diff) if rules.returns_type == "win_loss" else diff
    e = -np.einsum("hkw,hkwb->hb", dist, value)
    expected = np.full((count, k), -np.inf)
    np.put_along_axis(expected, adv_cards, e, axis=1)
    q = np.zeros((num_adv, k))
    np.add.at(q, adv_ids, level.reach[:, None] * np.where(np.isfinite(expected), expected, 0.0))
    return q


@dataclasses.dataclass
class _Played:
    """Every (history h, team joint bid j, adversary bid b) of a round, resolved;
    one entry per triple, before the next point card is dealt."""

    h_idx: np.ndarray  # [C] history
    team_bid: np.ndarray  # [C, P] cards
    adv_bid: np.ndarray  # [C] card
    winner: np.ndarray  # [C] winner code (`_goofspiel_winners`)
    team_points: np.ndarray  # [C, P]
    adv_points: np.ndarray  # [C]
    team_hands: np.ndarray  # [C, P]
    adv_hand: np.ndarray  # [C]
    reach: np.ndarray  # [C] reach x team probability of j
    joint_action: np.ndarray  # [C] the team's joint action id of j


def _play_round(rules, level, sigma, agent_digits, adv_cards, m, num_joint) -> _Played:
    """Plays every team joint bid and adversary bid at every history of the round."""
    count, p = len(level.actions), rules.p
    h_idx, j_idx, b_idx = np.meshgrid(
        np.arange(count), np.arange(num_joint), np.arange(m), indexing="ij"
    )
    h_idx, j_idx, b_idx = h_idx.ravel(), j_idx.ravel(), b_idx.ravel()
    team_bid = np.stack([d[h_idx, j_idx] for d in agent_digits], axis=1).astype(np.int64) + 1
    adv_bid = adv_cards[h_idx, b_idx] + 1  # [C]
    winner = _goofspiel_winners(team_bid, adv_bid)
    c = level.card[h_idx]
    team_points = level.team_points[h_idx].copy()
    rows = np.flatnonzero(winner < p)
    team_points[rows, winner[rows]] += c[rows]
    return _Played(
        h_idx=h_idx,
        team_bid=team_bid,
        adv_bid=adv_bid,
        winner=winner,
        team_points=team_points,
        adv_points=level.adv_points[h_idx] + np.where(winner == p, c, 0),
        team_hands=level.team_hands[h_idx] & ~(1 << (team_bid - 1)),
        adv_hand=level.adv_hand[h_idx] & ~(1 << (adv_bid - 1)),
        reach=level.reach[h_idx] * sigma[h_idx, j_idx],
        joint_action=mixed_radix(team_bid - 1, rules.radices),
    )


def _deal_next_card(rules, r, level, played, adv_ids, rng=None) -> tuple[_Level, dict]:
    """Histories at round r + 1: each played triple followed by each possible
    next point card (with `rng`: by one card drawn uniformly, the particle
    methods' chance sample). Returns them and, for each new adversary
    information set, (parent infoset id, bid index) in order of first appearance."""
    order, k = rules.order, rules.k
    children = _Level(*([] for _ in dataclasses.fields(_Level)))  # one list per field
    parents = {}
    h_idx, team_bid, adv_bid, winner = played.h_idx, played.team_bid, played.adv_bid, played.winner
    for i in range(len(h_idx)):
        h = int(h_idx[i])
        base_actions = level.actions[h] + (int(played.joint_action[i]), int(adv_bid[i]) - 1)
        w = int(winner[i])
        if order == "random":
            nexts = [cc for cc in range(k) if not level.used[h] >> cc & 1]
            if rng is not None:
                nexts = [nexts[int(rng.integers(len(nexts)))]]
            chance = [(cc + 1, 1.0 / len(nexts), (cc,)) for cc in nexts]
        else:
            chance = [(rules.fixed_card(r + 1), 1.0, ())]
        for next_card, prob, extra in chance:
            adv_key = level.adv_key[h] + (int(adv_bid[i]), w, next_card)
            parents.setdefault(adv_key, (int(adv_ids[h]), int(adv_bid[i]) - 1))
            children.adv_key.append(adv_key)
            team_bids = tuple(int(x) for x in team_bid[i])
            children.team_key.append(level.team_key[h] + (team_bids, w, next_card))
            children.actions.append(base_actions + extra)
            children.card.append(next_card)
            children.used.append(level.used[h] | (1 << (next_card - 1)))
            children.reach.append(played.reach[i] * prob)
            children.team_hands.append(played.team_hands[i])
            children.adv_hand.append(played.adv_hand[i])
            children.team_points.append(played.team_points[i])
            children.adv_points.append(played.adv_points[i])
    return _Level(
        actions=children.actions,
        card=np.asarray(children.card, dtype=np.int64),
        used=children.used,
        reach=np.asarray(children.reach),
        team_hands=np.asarray(children.team_hands, dtype=np.int64),
        adv_hand=np.asarray(children.adv_hand, dtype=np.int64),
        team_points=np.asarray(children.team_points, dtype=np.float64),
        adv_points=np.asarray(children.adv_points, dtype=np.float64),
        adv_key=children.adv_key,
        team_key=children.team_key,
    ), parents


def _adversary_best_response(adv_levels, adv_parent, q, k, choices: list | None = None) -> float:
    """The adversary's best-response value, bottom-up over its information sets:
    V(J) = max over legal bids of Q(J, b); Q(J, b) = sum of V over child infosets.
    `choices`, when given, receives per level the best bid (card - 1) of each infoset."""
    for r in range(len(adv_levels) - 1, -1, -1):
        _, num, hands = adv_levels[r]
        legal = np.array([[h >> b & 1 for b in range(k)] for h in hands], dtype=bool)
        masked = np.where(legal, q, -np.inf)
        value = masked.max(axis=1)
        if choices is not None:
            choices.insert(0, masked.argmax(axis=1))
        if r == 0:
            break
        q = np.zeros((adv_levels[r - 1][1], k))
        # Child infoset ids at level r follow first appearance, as the parent dict's keys.
        for child_id, (parent, bid) in enumerate(adv_parent[r - 1].values()):
            q[parent, bid] += value[child_id]
    return float(value.sum())


# --------------------------------------------------------------------------
# Particle best response: the same dynamic program on sampled team behaviour,
# for any number of rounds.


def particle_goofspiel_team_worst_case(
    game: pyspiel.Game, policy, num_particles: int = 500, num_eval_games: int = 4000, seed: int = 0,
    max_histories: int = 2_000_000,
) -> WorstCaseResult:
    """Team worst case of `team_goofspiel` by a particle best response.

    The exact dynamic program enumerates every team joint bid of every round
    (m^P of them with m cards left), which no longer fits beyond two or three
    rounds. Here `num_particles` games start at the root and, at each round,
    every history draws ONE team joint bid from the policy (and, with random
    point order, one next point card); every adversary bid is still tried at
    every adversary information set. The dynamic program above then gives the
    adversary's exact best response to this *sampled* team behaviour:
    - in-sample value: it maximises over the same samples, so its expectation
      is at least the true best-response value: minus it is a *lower*
      estimate of the team's worst case (`in_sample_value`);
    - held-out value: the bids it chose (uniform where a fresh game reaches an
      information set the particles did not) are replayed against
      `num_eval_games` fresh games; that is the value of one adversary
      strategy, at most the best response's, so minus it is an *upper* bound
      on the team's worst case in expectation (`value`, with its 95% interval).
    The exact worst case lies between the two in expectation; where the exact
    program runs they are checked against it (tests/test_team_best_response.py,
    benchmarks/results/cfr_mix.md). Cost: histories = particles x the
    adversary's bid sequences (6 cards, 6 rounds: 720 x particles at the last
    round); refused above `max_histories`. A product policy (per-agent
    strategies, as CFR-MIX's) is sampled agent by agent, so the m^P joint
    bids are never tabulated (10 cards / 6 agents / 4 rounds runs); a policy
    over joint actions needs that table and is refused up front where it
    would not fit.
    """
    import time

    if num_particles < 1 or num_eval_games < 2:
        raise ValueError(f"num_particles must be >= 1 and num_eval_games >= 2, got {num_particles}, {num_eval_games}")
    if game.get_type().short_name != "team_goofspiel":
        raise ValueError(f"particle_goofspiel_team_worst_case needs team_goofspiel, got {game.get_type().short_name}")
    start = time.perf_counter()
    rules = _Rules.of(game)
    last = num_particles * math.perm(rules.k, rules.rounds - 1)
    if last > max_histories:
        raise WorstCaseTooLargeError(
            f"team_goofspiel particle best response: {num_particles} particles x {math.perm(rules.k, rules.rounds - 1)} "
            f"adversary bid sequences = {last:,} last-round histories exceed max_histories={max_histories:,}; use "
            "fewer particles"
        )
    _check_joint_tables(game, policy, rules, max(num_particles, num_eval_games))
    rng = np.random.default_rng(seed)
    choices, keys, in_sample = _particle_search(game, policy, rules, num_particles, rng)
    returns = _held_out_returns(game, policy, rules, choices, keys, num_eval_games, rng)
    mean = float(returns.mean())
    return WorstCaseResult(
        "sampled", value=-mean, ci95=1.96 * float(returns.std(ddof=1)) / math.sqrt(len(returns)),
        in_sample_value=-in_sample, num_particles=num_particles, num_eval_games=num_eval_games,
        adversary_infosets=sum(len(level) for level in keys), seconds=time.perf_counter() - start,
        adversary_class="particle best response (held-out value: an upper bound on the team's worst case)",
    )  # fmt: skip


def _particles(rules: _Rules, count: int, rng) -> _Level:
    """`count` games at the team's decision of round 0, each of reach 1 / count
    (random order: the first point card drawn per game)."""
    level = _first_level(rules)
    pick = rng.integers(len(level.actions), size=count) if rules.order == "random" else np.zeros(count, dtype=np.int64)
    return _Level(
        actions=[level.actions[i] for i in pick], card=level.card[pick], used=[level.used[i] for i in pick],
        reach=np.full(count, 1.0 / count), team_hands=level.team_hands[pick], adv_hand=level.adv_hand[pick],
        team_points=level.team_points[pick], adv_points=level.adv_points[pick],
        adv_key=[level.adv_key[i] for i in pick], team_key=[level.team_key[i] for i in pick],
    )  # fmt: skip


def _sampled_team_bids(game, policy, rules, level, m, rng) -> tuple[list[np.ndarray], np.ndarray]:
    """One team joint bid per history drawn from the policy: (agent_digits, each
    [H, 1] card - 1; the adversary's cards [H, m]).

    A product policy (per-agent strategies, CFR-MIX's eq. 1) is sampled agent
    by agent: the same distribution as drawing from the product, without the
    m^P joint-bid table (10 cards / 6 agents: 531,441 joint bids per
    information set at the second round). Any other policy goes through the
    joint table (`_check_joint_tables` refuses it up front where it does not fit)."""
    count = len(level.actions)
    representative, team_ids = _team_infosets(level.team_key)
    adv_cards = np.array([_bits(int(h)) for h in level.adv_hand], dtype=np.int64)  # [H, m]
    if m == 1:
        hands = np.array([[_bits(int(h))[0] for h in row] for row in level.team_hands], dtype=np.int64)
        return [hands[:, i : i + 1] for i in range(rules.p)], adv_cards
    agent = _agent_strategies(game, policy, rules, level, representative)
    if agent is not None:  # [R, P, A]: each agent's card - 1 drawn from its own strategy
        hands = np.asarray(level.team_hands, dtype=np.int64)[:, :, None]  # [H, P, 1] bit masks of the cards left
        legal = (hands >> np.arange(agent.shape[2])) & 1  # [H, P, A]: card - 1 in hand
        cumulative = np.cumsum(agent[team_ids] * legal, axis=2)  # [H, P, A]
        cumulative /= cumulative[:, :, -1:]
        u = rng.random((count, rules.p, 1))
        cards = np.minimum((cumulative < u).sum(axis=2), agent.shape[2] - 1)  # [H, P]
        return [cards[:, i : i + 1] for i in range(rules.p)], adv_cards
    num_joint, digits, adv_cards = _bid_tables(level, m, rules.p)
    sigma = _team_strategy(game, policy, rules, level, representative, digits, num_joint)
    cumulative = np.cumsum(sigma, axis=1)
    cumulative /= cumulative[:, -1:]
    u = rng.random(count)
    pick = np.minimum((cumulative[team_ids] < u[:, None]).sum(axis=1), num_joint - 1)
    return [d[np.arange(count), pick][:, None] for d in digits], adv_cards


def _check_joint_tables(game, policy, rules, games_at_once: int) -> None:
    """Refuses, before any table is built, a policy without per-agent
    strategies whose joint-bid tables would not fit: k^P probabilities at the
    first round, up to `games_at_once` x (k - 1)^P at the second."""
    if rules.p == 1 or _per_agent(game, policy, rules):
        return
    cells = max(rules.k**rules.p, games_at_once * (rules.k - 1) ** rules.p if rules.rounds > 1 else 0)
    if cells > _MAX_JOINT_TABLE:
        raise WorstCaseTooLargeError(
            f"team_goofspiel particle best response: this policy has no per-agent strategies, and its joint-bid "
            f"table (up to {games_at_once:,} games x {rules.k - 1}^{rules.p} joint bids = {cells:,} probabilities, "
            f"~{cells * 8 * (rules.p + 1) / 2**30:.1f} GiB with the bid tables) exceeds {_MAX_JOINT_TABLE:,}: use a "
            "factored policy (agent_strategies), fewer particles and held-out games, or a smaller instance")


def _per_agent(game, policy, rules) -> bool:
    """Whether `policy` answers per-agent strategies (P rows) at the team's first decision."""
    if not hasattr(policy, "agent_strategies"):
        return False
    state = game.new_initial_state()
    while state.is_chance_node() or state.current_player() != TEAM:
        state.apply_action(state.chance_outcomes()[0][0] if state.is_chance_node() else state.legal_actions()[0])
    return np.asarray(policy.agent_strategies([state])[0]).shape[0] == rules.p


def _agent_strategies(game, policy, rules, level, representative) -> np.ndarray | None:
    """[R, P, A] each agent's strategy at each representative history, from a
    policy with per-agent strategies (`agent_strategies`, P rows per state);
    None for any other policy (a joint head, a Deep CFR network, an OpenSpiel
    `Policy`)."""
    if not hasattr(policy, "agent_strategies") or rules.p == 1:
        return None
    out = []
    for lo in range(0, len(representative), 2048):
        states = _states_at(game, level, representative[lo : lo + 2048])
        chunk = np.asarray(policy.agent_strategies(states), dtype=np.float64)
        if chunk.ndim != 3 or chunk.shape[1] != rules.p:
            return None  # one head over joint actions
        out.append(chunk)
    return np.concatenate(out)


_MAX_JOINT_TABLE = 50_000_000  # joint-bid probabilities of one round (x (P + 1) arrays of 8 bytes: ~2.4 GiB at P=5)


def _particle_search(game, policy, rules, num_particles, rng) -> tuple[list, list, float]:
    """The dynamic program on sampled team bids: (best bid per adversary infoset
    per round, the infosets' keys per round ({key: id}), in-sample value)."""
    level = _particles(rules, num_particles, rng)
    adv_levels, adv_parent, keys = [], [], []
    for r in range(rules.rounds):
        adv_levels.append(_adversary_infosets(level))
        adv_ids = adv_levels[-1][0]
        keys.append(dict(zip(level.adv_key, adv_ids.tolist(), strict=True)))
        agent_digits, adv_cards = _sampled_team_bids(game, policy, rules, level, rules.k - r, rng)
        one = np.ones((len(level.actions), 1))
        if r == rules.rounds - 1:
            q = _last_round_values(rules, level, one, agent_digits, adv_cards, adv_ids, adv_levels[-1][1])
            break
        played = _play_round(rules, level, one, agent_digits, adv_cards, rules.k - r, 1)
        level, parents = _deal_next_card(rules, r, level, played, adv_ids, rng)
        adv_parent.append(parents)
    choices: list = []
    value = _adversary_best_response(adv_levels, adv_parent, q, rules.k, choices)
    return choices, keys, value


def _held_out_returns(game, policy, rules, choices, keys, count, rng) -> np.ndarray:
    """The adversary's return in each of `count` fresh games when it bids as
    `choices` says (uniformly among its cards at infosets the search never saw)."""
    level = _particles(rules, count, rng)
    level.reach = np.ones(count)
    for r in range(rules.rounds):
        agent_digits, adv_cards = _sampled_team_bids(game, policy, rules, level, rules.k - r, rng)
        known = [keys[r].get(key) for key in level.adv_key]
        bid = np.array([-1 if i is None else choices[r][i] for i in known], dtype=np.int64)
        unseen = np.flatnonzero(bid < 0)
        bid[unseen] = adv_cards[unseen, rng.integers(adv_cards.shape[1], size=len(unseen))]
        one = np.ones((len(level.actions), 1))
        if r == rules.rounds - 1:
            ids = np.arange(len(level.actions))
            q = _last_round_values(rules, level, one, agent_digits, bid[:, None], ids, len(ids))
            return q[ids, bid]
        played = _play_round(rules, level, one, agent_digits, bid[:, None], 1, 1)
        level, _ = _deal_next_card(rules, r, level, played, np.zeros(len(level.actions), dtype=np.int64), rng)
    raise AssertionError("unreachable: the last round returns")
