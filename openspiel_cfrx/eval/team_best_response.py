"""Team worst-case utility: the adversary's best response to a team's product strategy.

The team's worst-case utility (Li et al. 2021, Figures 3-4) is
min over adversary strategies of the team's expected utility, i.e. minus the
adversary's best-response value against the fixed team strategy.

Two methods:

* "exact": the tree engine (`openspiel_cfrx.tree.best_response`) on the
  extracted game, with the team's rows built as products of the agents'
  strategies. Exact, but it extracts the game (and its joint actions), so it
  is for instances of up to ~10^6 histories.
* "sampled": a particle best response that never enumerates joint actions.
  `num_particles` games are sampled from the root; at every adversary
  information set (grouped by `information_state_string(1)`) each adversary
  action is tried on all particles there, and chance and the team continue by
  sampling (the team agent by agent from its own distributions, eq. 1). The
  adversary picks, bottom up, the action with the best particle sum: the
  exact best response to the *sampled* team behaviour, which exists because
  the adversary acts on its own information only (NEST: its own path;
  Goofspiel: its hand and round outcomes). Its in-sample value is biased in
  the adversary's favour (it maximises over the same noise). The strategy it
  finds is therefore re-evaluated on `num_eval_games` fresh games; that
  held-out value is an unbiased estimate of one adversary strategy's value,
  so (up to its confidence interval) minus it is an *upper* bound on the
  team's worst-case utility, and minus the in-sample value an optimistic
  lower estimate. Both are reported with a 95% normal confidence interval.
  The cost is num_particles x (adversary decision paths), so it suits games
  where the adversary has few decisions (short horizons).

Two methods for the paper's larger instances, which never extract the game
and query the team's strategy in batches (products of the agents' marginals
for CFR-MIX, eq. 1):

* `exact_goofspiel_team_worst_case`: team Goofspiel's adversary observes only
  the point cards, its own bids and the round winners, so its best response
  is an exact dynamic program over those observation sequences (histories
  enumerated round by round with their reach, the last round vectorised).
  Exact; cost = last-round histories x joint bids, e.g. 6 cards / 4 agents /
  2 rounds in ~10 s. Agrees with the tree engine and OpenSpiel to 1e-9
  (tests/test_team_best_response.py).
* `nest_team_worst_case`: in NEST the evader observes only its own path (and
  the public start) and a capture ends the game, so its pure strategies are
  open-loop paths; per start configuration, a vectorised particle search over
  all path prefixes picks the path with the most escapes against sampled
  team plays, and fresh plays re-evaluate it (held-out value with a 95%
  interval, an upper bound on the worst case in expectation). Exact over all
  start configurations when there are few (3x3 grid: 320), else over sampled
  ones; `max_slack` restricts the evader to near-shortest paths where the
  path tree is too large (5x5 / 8 steps: ~12k prefixes per start).

The team policy is anything with `agent_strategies(states)` -> [n, A] per
state (e.g. `CFRMixSolver`), `batch_action_probabilities(states)`
(`DeepCFRSolver`), or an OpenSpiel `Policy` (`action_probabilities`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random

import numpy as np
import pyspiel

from openspiel_cfrx import team as team_lib
from openspiel_cfrx import tree as tree_lib

ADVERSARY = team_lib.ADVERSARY_PLAYER
TEAM = team_lib.TEAM_PLAYER


@dataclasses.dataclass
class WorstCaseResult:
    """Team worst-case utility (team's units; higher is better for the team).

    method: "exact" or "sampled".
    value: exact value, or the held-out estimate (an upper bound in expectation).
    ci95: half-width of the 95% interval of `value` (0 if exact).
    in_sample_value: sampled only: minus the in-sample best-response value.
    num_starts: NEST path method: start configurations evaluated (all of
      them when `adversary_class` says "all starts").
    adversary_class: the adversary strategies searched, where restricted.
    per_start_values: NEST path method: held-out team utility per start
      configuration (in the order drawn from `seed`, so two evaluations with
      the same seed and settings can be compared start by start: a paired
      difference, without the spread over starts).
    """

    method: str
    value: float
    ci95: float = 0.0
    in_sample_value: float | None = None
    num_particles: int = 0
    num_eval_games: int = 0
    adversary_infosets: int = 0
    seconds: float = 0.0
    num_starts: int = 0
    adversary_class: str = ""
    per_start_values: tuple | None = None


def _team_sampler(policy):
    """Returns sample(states, rng) -> list of pyspiel actions for team states."""
    if hasattr(policy, "agent_strategies"):

        def sample(states, rng):
            strategies = policy.agent_strategies(states)
            actions = []
            for state, strategy in zip(states, strategies, strict=True):
                if strategy.shape[0] == 1:
                    legal = state.legal_actions()
                    probs = np.asarray([strategy[0, a] for a in legal])
                    actions.append(legal[_draw(probs, rng)])
                    continue
                digits = []
                for agent in range(strategy.shape[0]):
                    legal = state.legal_agent_actions(agent)
                    probs = np.asarray([strategy[agent, a] for a in legal])
                    digits.append(legal[_draw(probs, rng)])
                actions.append(state.encode_joint_action(digits))
            return actions

        return sample

    def sample(states, rng):
        actions = []
        for state in states:
            probs = policy.action_probabilities(state)
            keys = list(probs)
            actions.append(keys[_draw(np.asarray([probs[k] for k in keys]), rng)])
        return actions

    return sample


def _draw(probs: np.ndarray, rng: random.Random) -> int:
    total = float(probs.sum())
    u = rng.random() * total
    cumulative = 0.0
    for index, p in enumerate(probs):
        cumulative += p
        if u < cumulative:
            return index
    return int(np.flatnonzero(probs > 0)[-1]) if total > 0 else len(probs) - 1


def _advance(states, sample_team, rng):
    """Plays chance and the team by sampling until every state is terminal or
    at an adversary decision. Mutates and returns `states`."""
    active = list(states)
    while active:
        team_states = []
        still = []
        for state in active:
            if state.is_terminal():
                continue
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                index = _draw(np.asarray([p for _, p in outcomes]), rng)
                state.apply_action(outcomes[index][0])
                still.append(state)
            elif state.current_player() == TEAM:
                team_states.append(state)
            # adversary: stops here
        if team_states:
            for state, action in zip(team_states, sample_team(team_states, rng), strict=True):
                state.apply_action(action)
            still.extend(team_states)
        active = still
    return states


def exact_team_worst_case(game: pyspiel.Game, policy, max_histories: int | None = None) -> WorstCaseResult:
    """Exact worst case through the tree engine (small instances only).

    With `max_histories`, the game is extracted under that cap (ValueError
    above it) instead of through the shared `get_tree` cache."""
    import time

    from openspiel_cfrx.tree import best_response, extract, get_tree, strategy_from_policy

    start = time.perf_counter()
    tree = get_tree(game) if max_histories is None else extract(game, max_histories=max_histories)
    strategy = policy.strategy_array(tree) if hasattr(policy, "strategy_array") else strategy_from_policy(tree, policy)
    result = best_response(tree, strategy)
    value = -float(result.best_response_values[ADVERSARY])
    return WorstCaseResult("exact", value, adversary_infosets=tree.num_infosets_of(ADVERSARY),
                           seconds=time.perf_counter() - start)  # fmt: skip


def sampled_team_worst_case(
    game: pyspiel.Game,
    policy,
    num_particles: int = 200,
    num_eval_games: int = 2000,
    seed: int = 0,
    max_particle_nodes: int = 2_000_000,
) -> WorstCaseResult:
    """Particle best response of the adversary (see module docstring)."""
    import time

    if num_particles < 1 or num_eval_games < 1:
        raise ValueError("num_particles and num_eval_games must be >= 1")
    start = time.perf_counter()
    rng = random.Random(seed)
    sample_team = _team_sampler(policy)
    best_action: dict[str, int] = {}
    budget = [max_particle_nodes]

    def solve(states) -> float:
        """Sum over particles of the adversary's utility under its best response."""
        budget[0] -= len(states)
        if budget[0] < 0:
            raise ValueError(
                f"particle best response exceeded max_particle_nodes={max_particle_nodes}; the adversary "
                "has too many decision paths here: use fewer num_particles or a shorter horizon"
            )
        total = 0.0
        groups: dict[str, list] = {}
        for state in states:
            if state.is_terminal():
                total += state.returns()[ADVERSARY]
            else:
                groups.setdefault(state.information_state_string(ADVERSARY), []).append(state)
        for key, group in groups.items():
            values = {}
            for action in group[0].legal_actions():
                children = _advance([s.child(action) for s in group], sample_team, rng)
                values[action] = solve(children)
            action = max(values, key=values.get)
            best_action[key] = action
            total += values[action]
        return total

    roots = _advance([game.new_initial_state() for _ in range(num_particles)], sample_team, rng)
    in_sample = solve(roots) / num_particles

    # Held-out evaluation of the adversary strategy found (uniform where unseen).
    returns = np.zeros(num_eval_games)
    states = _advance([game.new_initial_state() for _ in range(num_eval_games)], sample_team, rng)
    while True:
        pending = [s for s in states if not s.is_terminal()]
        if not pending:
            break
        for state in pending:
            action = best_action.get(state.information_state_string(ADVERSARY))
            state.apply_action(action if action is not None else rng.choice(state.legal_actions()))
        _advance(pending, sample_team, rng)
    for i, state in enumerate(states):
        returns[i] = state.returns()[ADVERSARY]
    mean = float(returns.mean())
    ci = 1.96 * float(returns.std(ddof=1)) / math.sqrt(num_eval_games) if num_eval_games > 1 else float("inf")
    return WorstCaseResult(
        "sampled",
        value=-mean,
        ci95=ci,
        in_sample_value=-in_sample,
        num_particles=num_particles,
        num_eval_games=num_eval_games,
        adversary_infosets=len(best_action),
        seconds=time.perf_counter() - start,
    )


def team_worst_case(
    game: pyspiel.Game, policy, method: str = "auto", max_exact_histories: int = 200_000, **sampled_options
) -> WorstCaseResult:
    """Team worst-case utility by `method` "exact", "sampled" or "auto": exact
    when the game extracts within `max_exact_histories` histories, else for
    team Goofspiel the exact dynamic program (`exact_goofspiel_team_worst_case`,
    within its default limits), else sampled. NEST's path best response is
    `nest_team_worst_case` (called directly: its options matter)."""
    if method not in ("auto", "exact", "sampled"):
        raise ValueError(f"method must be 'auto', 'exact' or 'sampled', got {method!r}")
    if method == "exact":
        return exact_team_worst_case(game, policy)
    if method == "auto":
        try:
            return exact_team_worst_case(game, policy, max_histories=max_exact_histories)
        except tree_lib.TreeTooLargeError:
            pass
        except ValueError as e:
            if "max_histories" not in str(e):
                raise
        if game.get_type().short_name == "team_goofspiel":
            try:
                return exact_goofspiel_team_worst_case(game, policy)
            except ValueError as e:
                if "max_terminal_pairs" not in str(e) and "max_team_states" not in str(e):
                    raise
    return sampled_team_worst_case(game, policy, **sampled_options)


# --------------------------------------------------------------------------
# Team strategies in batches (product or joint form).


def _mixed_radix(digits: np.ndarray, radices) -> np.ndarray:
    """[..., n] individual actions -> joint action ids (agent 0 least significant)."""
    ids = np.zeros(digits.shape[:-1], dtype=np.int64)
    scale = 1
    for agent, radix in enumerate(radices):
        ids += digits[..., agent].astype(np.int64) * scale
        scale *= int(radix)
    return ids


def team_joint_probabilities(policy, states, digits: np.ndarray, radices) -> np.ndarray:
    """Probabilities of given team joint actions at many team states: [B, J].

    Args:
      policy: anything with `agent_strategies(states)` -> [n, A] per state
        (`CFRMixSolver`: a product of per-agent strategies, eq. 1, or with
        n = 1 a joint-action head), `batch_action_probabilities(states)` ->
        [B, num_distinct_actions] (`DeepCFRSolver`), or an OpenSpiel `Policy`.
      states: B pyspiel states at the team's turn (anything `policy` accepts).
      digits: [B, J, n] individual actions of the J joint actions asked for.
      radices: the game's `agent_num_actions()`.
    """
    digits = np.asarray(digits)
    batch, count, n = digits.shape
    out = np.zeros((batch, count))
    if not batch:
        return out
    if hasattr(policy, "agent_strategies"):
        strategies = np.asarray(policy.agent_strategies(states), dtype=np.float64)  # [B, n or 1, A]
        rows = np.arange(batch)[:, None]
        if strategies.shape[1] == 1 and n > 1:  # one head over joint actions
            return strategies[:, 0][rows, _mixed_radix(digits, radices)]
        for agent in range(n):
            factor = strategies[:, agent][rows, digits[:, :, agent]]
            out = factor if agent == 0 else out * factor
        return out
    ids = _mixed_radix(digits, radices)
    if hasattr(policy, "batch_action_probabilities"):
        probs = np.asarray(policy.batch_action_probabilities(states), dtype=np.float64)
        return np.take_along_axis(probs, ids, axis=1)
    for b, state in enumerate(states):
        row = policy.action_probabilities(state)
        out[b] = [row.get(int(a), 0.0) for a in ids[b]]
    return out


# --------------------------------------------------------------------------
# Team Goofspiel: exact best response of the adversary by a dynamic program
# over its observation sequence.


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
    game: pyspiel.Game, policy, max_terminal_pairs: int = 100_000_000, max_team_states: int = 200_000
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
    triples or `max_team_states` team states to query.
    """
    import time

    if game.get_type().short_name != "team_goofspiel":
        raise ValueError(f"exact_goofspiel_team_worst_case needs team_goofspiel, got {game.get_type().short_name}")
    start = time.perf_counter()
    params = game.get_parameters()
    k, p = int(params["num_cards"]), int(params["num_agents"])
    rounds = k if int(params["num_turns"]) == -1 else int(params["num_turns"])
    order, returns_type = str(params["points_order"]), str(params["returns_type"])
    radices = game.agent_num_actions()
    full = (1 << k) - 1

    def fixed_card(r):
        return k - r if order == "descending" else r + 1

    # Level r: histories at the team's decision of round r.
    if order == "random":
        level = dict(actions=[(c,) for c in range(k)], card=np.arange(1, k + 1), used=[1 << c for c in range(k)],
                     reach=np.full(k, 1.0 / k))  # fmt: skip
    else:
        level = dict(actions=[()], card=np.array([fixed_card(0)]), used=[0], reach=np.ones(1))
    count = len(level["actions"])
    level.update(team_hands=np.full((count, p), full, dtype=np.int64), adv_hand=np.full(count, full, dtype=np.int64),
                 team_points=np.zeros((count, p)), adv_points=np.zeros(count),
                 adv_key=[(int(c),) for c in level["card"]], team_key=[(int(c),) for c in level["card"]])  # fmt: skip
    adv_parent: list[dict] = []  # per level >= 1: child adversary infoset -> (parent infoset id, bid index)
    adv_levels = []  # per level: (infoset ids [H], number of infosets, adversary hand per infoset)
    team_states_built = 0

    for r in range(rounds):
        count = len(level["actions"])
        keys = {}
        adv_ids = np.array([keys.setdefault(key, len(keys)) for key in level["adv_key"]], dtype=np.int64)
        hands_of = np.zeros(len(keys), dtype=np.int64)
        hands_of[adv_ids] = level["adv_hand"]
        adv_levels.append((adv_ids, len(keys), hands_of))
        # Team joint bids: positions into each agent's sorted hand.
        m = k - r
        num_joint = m**p
        positions = (np.arange(num_joint)[:, None] // (m ** np.arange(p))[None, :]) % m  # [J, P]
        hand_cards = np.array([[_bits(int(h)) for h in row] for row in level["team_hands"]], dtype=np.int16)
        # agent_digits[i][h, j]: card - 1 that agent i bids in joint bid j of history h.
        agent_digits = [np.ascontiguousarray(hand_cards[:, i, positions[:, i]]) for i in range(p)]
        adv_cards = np.array([_bits(int(h)) for h in level["adv_hand"]], dtype=np.int64)  # [H, m]
        if r == rounds - 1 and count * num_joint * m > max_terminal_pairs:
            raise ValueError(
                f"team_goofspiel exact best response: {count} last-round histories x {num_joint} joint bids x "
                f"{m} bids exceed max_terminal_pairs={max_terminal_pairs}; use fewer rounds, or the sampled method"
            )
        team_index = {}
        representative = []
        team_ids = np.empty(count, dtype=np.int64)
        for h, key in enumerate(level["team_key"]):
            slot = team_index.get(key)
            if slot is None:
                slot = team_index[key] = len(representative)
                representative.append(h)
            team_ids[h] = slot
        team_states_built += len(representative)
        if team_states_built > max_team_states:
            raise ValueError(
                f"team_goofspiel exact best response needs more than max_team_states={max_team_states} team "
                "information sets; use fewer rounds, or the sampled method"
            )
        sigma = np.zeros((len(representative), num_joint))
        for lo in range(0, len(representative), 2048):
            chunk = representative[lo : lo + 2048]
            states = []
            for h in chunk:
                state = game.new_initial_state()
                for action in level["actions"][h]:
                    state.apply_action(action)
                states.append(state)
            digits = np.stack([d[chunk] for d in agent_digits], axis=2)
            sigma[lo : lo + len(chunk)] = team_joint_probabilities(policy, states, digits, radices)
        sigma = sigma[team_ids]  # [H, J]
        card = level["card"].astype(np.float64)
        if r == rounds - 1:
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
            code = np.where(holders > 1, p, code)  # agent holding the highest bid, or p = a tie within the team
            cells = k * (p + 1)
            flat = (np.arange(count)[:, None] * cells + team_high * (p + 1) + code).ravel()
            dist = np.bincount(flat, weights=sigma.ravel(), minlength=count * cells).reshape(count, k, p + 1)
            high = np.arange(1, k + 1)[None, :, None, None]  # [1, K, 1, 1]
            holder = np.arange(p + 1)[None, None, :, None]  # [1, 1, P+1, 1]
            adv = adv_cards[:, None, None, :] + 1  # [H, 1, 1, m]
            points = level["team_points"]
            best = points.max(axis=1)[:, None, None, None]
            c = card[:, None, None, None]
            holder_points = np.concatenate([points, np.zeros((count, 1))], axis=1)[:, None, :, None]
            team_wins = (adv < high) & (holder < p)
            team_best = np.where(team_wins, np.maximum(best, holder_points + c), best)
            adv_total = level["adv_points"][:, None, None, None] + np.where(adv > high, c, 0.0)
            diff = team_best - adv_total  # [H, K, P+1, m]
            value = np.sign(diff) if returns_type == "win_loss" else diff
            e = -np.einsum("hkw,hkwb->hb", dist, value)
            expected = np.full((count, k), -np.inf)
            np.put_along_axis(expected, adv_cards, e, axis=1)
            q = np.zeros((adv_levels[-1][1], k))
            np.add.at(q, adv_ids, level["reach"][:, None] * np.where(np.isfinite(expected), expected, 0.0))
            break
        # Children at round r + 1: (h, j, b[, next card]).
        h_idx, j_idx, b_idx = np.meshgrid(np.arange(count), np.arange(num_joint), np.arange(m), indexing="ij")
        h_idx, j_idx, b_idx = h_idx.ravel(), j_idx.ravel(), b_idx.ravel()
        team_bid = np.stack([d[h_idx, j_idx] for d in agent_digits], axis=1).astype(np.int64) + 1  # [C, P]
        adv_bid = adv_cards[h_idx, b_idx] + 1  # [C]
        winner = _goofspiel_winners(team_bid, adv_bid)
        c = level["card"][h_idx]
        team_points = level["team_points"][h_idx].copy()
        rows = np.flatnonzero(winner < p)
        team_points[rows, winner[rows]] += c[rows]
        adv_points = level["adv_points"][h_idx] + np.where(winner == p, c, 0)
        team_hands = level["team_hands"][h_idx] & ~(1 << (team_bid - 1))
        adv_hand = level["adv_hand"][h_idx] & ~(1 << (adv_bid - 1))
        reach = level["reach"][h_idx] * sigma[h_idx, j_idx]
        joint_action = _mixed_radix(team_bid - 1, radices)
        children = dict(actions=[], card=[], used=[], reach=[], team_hands=[], adv_hand=[], team_points=[],
                        adv_points=[], adv_key=[], team_key=[])  # fmt: skip
        parents = {}
        for i in range(len(h_idx)):
            h = int(h_idx[i])
            base_actions = level["actions"][h] + (int(joint_action[i]), int(adv_bid[i]) - 1)
            w = int(winner[i])
            if order == "random":
                nexts = [cc for cc in range(k) if not level["used"][h] >> cc & 1]
                chance = [(cc + 1, 1.0 / len(nexts), (cc,)) for cc in nexts]
            else:
                chance = [(fixed_card(r + 1), 1.0, ())]
            for next_card, prob, extra in chance:
                adv_key = level["adv_key"][h] + (int(adv_bid[i]), w, next_card)
                parents.setdefault(adv_key, (int(adv_ids[h]), int(adv_bid[i]) - 1))
                children["adv_key"].append(adv_key)
                children["team_key"].append(level["team_key"][h] + (tuple(int(x) for x in team_bid[i]), w, next_card))
                children["actions"].append(base_actions + extra)
                children["card"].append(next_card)
                children["used"].append(level["used"][h] | (1 << (next_card - 1)))
                children["reach"].append(reach[i] * prob)
                children["team_hands"].append(team_hands[i])
                children["adv_hand"].append(adv_hand[i])
                children["team_points"].append(team_points[i])
                children["adv_points"].append(adv_points[i])
        adv_parent.append(parents)
        level = dict(
            actions=children["actions"],
            card=np.asarray(children["card"], dtype=np.int64),
            used=children["used"],
            reach=np.asarray(children["reach"]),
            team_hands=np.asarray(children["team_hands"], dtype=np.int64),
            adv_hand=np.asarray(children["adv_hand"], dtype=np.int64),
            team_points=np.asarray(children["team_points"], dtype=np.float64),
            adv_points=np.asarray(children["adv_points"], dtype=np.float64),
            adv_key=children["adv_key"],
            team_key=children["team_key"],
        )

    # Bottom-up: V(J) = max over legal bids of Q(J, b); Q(J, b) = sum of V over child infosets.
    for r in range(len(adv_levels) - 1, -1, -1):
        _, num, hands = adv_levels[r]
        legal = np.array([[h >> b & 1 for b in range(k)] for h in hands], dtype=bool)
        value = np.where(legal, q, -np.inf).max(axis=1)
        if r == 0:
            break
        q = np.zeros((adv_levels[r - 1][1], k))
        # Child infoset ids at level r follow first appearance, as the parent dict's keys.
        for child_id, (parent, bid) in enumerate(adv_parent[r - 1].values()):
            q[parent, bid] += value[child_id]
    best_response_value = float(value.sum())
    return WorstCaseResult("exact", -best_response_value, adversary_infosets=sum(lv[1] for lv in adv_levels),
                           seconds=time.perf_counter() - start)  # fmt: skip


# --------------------------------------------------------------------------
# NEST: the evader's pure strategies are paths.


def _joint_legal_mask(legal_mask: np.ndarray, radices) -> np.ndarray:
    """[B, n, A] per-agent legal masks -> [B, prod radices] joint mask (agent 0 least significant)."""
    joint = np.ones((legal_mask.shape[0], 1), dtype=bool)
    for agent in range(len(radices) - 1, -1, -1):
        joint = (joint[:, :, None] & legal_mask[:, None, agent, : radices[agent]]).reshape(legal_mask.shape[0], -1)
    return joint


def _tensor_strategies(policy, features, agent_features, legal_mask, radices):
    """The team's average strategies straight from tensors, without building a
    query per state: [B, n, A] per agent for a factored `CFRMixSolver`,
    [B, 1, J] for a joint-head one or a `DeepCFRSolver` (policy network); None
    for any other policy (the caller then goes through `agent_strategies` /
    `batch_action_probabilities` on query states). Computes exactly what those
    methods compute (tested)."""
    views = getattr(policy, "views", None)
    if callable(getattr(policy, "strategies_from_tensors", None)) and views:  # CFRMixSolver
        if getattr(views[TEAM], "factored", False):
            return policy.strategies_from_tensors(TEAM, features, agent_features, legal_mask)
        joint = _joint_legal_mask(legal_mask, radices)[:, None, :]
        empty = np.zeros((features.shape[0], 1, 0), dtype=np.float32)
        return policy.strategies_from_tensors(TEAM, features, empty, joint)
    if callable(getattr(policy, "probabilities_from_tensors", None)) and getattr(
        policy, "config", {}).get("average_policy") == "network":  # DeepCFRSolver  # fmt: skip
        mask = _joint_legal_mask(legal_mask, radices)
        return np.asarray(policy.probabilities_from_tensors(features, mask), dtype=np.float64)[:, None, :]
    return None


class _TeamQueryState:
    """A team decision given by its tensors, for `agent_strategies` /
    `batch_action_probabilities` (duck-types the pyspiel calls they make)."""

    __slots__ = ("_features", "_agent_features", "_legal", "_radices")

    def __init__(self, features, agent_features, legal, radices):
        self._features = features
        self._agent_features = agent_features
        self._legal = legal
        self._radices = radices

    def current_player(self):
        return TEAM

    def is_chance_node(self):
        return False

    def is_terminal(self):
        return False

    def information_state_tensor(self, player=TEAM):
        return self._features

    def compact_information_state_array(self, player=TEAM):
        return self._features  # the caller built compact features (policy.infoset_encoding == "compact")

    def agent_observation_tensor(self, agent):
        return self._agent_features[agent]

    def compact_agent_features(self):
        return self._agent_features  # built with the compact layout by the caller

    def legal_agent_actions(self, agent):
        return self._legal[agent]

    def num_team_agents(self):
        return len(self._legal)

    def legal_actions(self, player=None):
        ids = np.zeros(1, dtype=np.int64)
        scale = 1
        for actions, radix in zip(self._legal, self._radices, strict=True):
            ids = (ids[None, :] + scale * np.asarray(actions, dtype=np.int64)[:, None]).reshape(-1)
            scale *= int(radix)
        return sorted(int(a) for a in ids)


class _NestSimulator:
    """Vectorised NEST dynamics and team tensors for many particles (same
    layout as games/nest.py's perfect-recall team observer; tested)."""

    def __init__(self, game):
        cfg = getattr(game, "_cfg", None)
        if game.get_type().short_name != "nest" or cfg is None:
            raise ValueError(f"nest_team_worst_case needs the nest game, got {game.get_type().short_name}")
        self.cfg = cfg
        self.slots = np.asarray(cfg.slots, dtype=np.int64)  # [N, A]
        self.n, self.a = self.slots.shape
        self.m = int(cfg.num_pursuers)
        self.horizon = int(cfg.horizon)
        self.exit = np.zeros(self.n, dtype=bool)
        self.exit[list(cfg.exits)] = True
        self.radices = tuple(int(r) for r in game.agent_num_actions())
        # Shortest distance (in evader moves) to an exit.
        dist = np.full(self.n, np.iinfo(np.int64).max // 4, dtype=np.int64)
        dist[self.exit] = 0
        for _ in range(self.n):
            nxt = np.where(self.slots >= 0, dist[np.maximum(self.slots, 0)] + 1, dist[:, None]).min(axis=1)
            nxt = np.minimum(nxt, dist)
            if np.array_equal(nxt, dist):
                break
            dist = nxt
        self.dist = dist
        t1, n, m = self.horizon + 1, self.n, self.m
        self.off_step = 2
        self.off_evader = 2 + t1
        self.off_pursuer = 2 + t1 + t1 * n
        self.feature_size = 2 + t1 + t1 * n + t1 * m * n
        self.agent_feature_size = m + n + self.a
        self.compact = None  # the game config's CompactLayout, read on first use

    def _compact_layout(self):
        if self.compact is None:
            # The game's own compact-input layout (the NEST config builds one per game).
            self.compact = self.cfg.compact_layout
        return self.compact

    def start_configurations(self):
        """(evader starts, pursuer start choices per pursuer or None when fixed)."""
        cfg = self.cfg
        evaders = (int(cfg.evader_start),) if cfg.evader_start != -1 else tuple(cfg.evader_start_choices)
        return evaders, (tuple(cfg.pursuer_starts) if cfg.pursuer_starts else None)

    def evader_moves(self, node: int, budget_left: int) -> list[tuple[int, int]]:
        """(slot, target) the evader may take that keep an exit reachable within budget_left - 1 steps."""
        first = 0 if self.cfg.evader_can_stay else 1
        return [(k, int(t)) for k, t in enumerate(self.slots[node]) if k >= first and t >= 0
                and self.dist[t] <= budget_left - 1]  # fmt: skip

    def default_move(self, node: int) -> int:
        """A legal evader slot towards the nearest exit (used past a plan's end)."""
        first = 0 if self.cfg.evader_can_stay else 1
        legal = [(int(self.dist[t]), k) for k, t in enumerate(self.slots[node]) if k >= first and t >= 0]
        return min(legal)[1]

    def team_queries(self, evader_paths: np.ndarray, pursuer_paths: np.ndarray, step: int, compact: bool = False):
        """Team decisions at `step` for rows with evader_paths [R, step+1] and
        pursuer_paths [R, step+1, M]: (features [R, F], agent features [R, M, F_a],
        legal mask [R, M, A]); features and agent features are the
        information-state tensor and agent observations, or with `compact` the
        game's compact network inputs (`CompactLayout`)."""
        rows = evader_paths.shape[0]
        n, m = self.n, self.m
        r = np.arange(rows)
        if compact:
            x = self._compact_layout().features(TEAM, evader_paths[:, : step + 1], pursuer_paths[:, : step + 1])
        else:
            x = np.zeros((rows, self.feature_size), dtype=np.float32)
            x[:, 0] = 1.0
            x[:, self.off_step + step] = 1.0
            for i in range(step + 1):
                x[r, self.off_evader + i * n + evader_paths[:, i]] = 1.0
                for agent in range(m):
                    x[r, self.off_pursuer + (i * m + agent) * n + pursuer_paths[:, i, agent]] = 1.0
        now = pursuer_paths[:, step]  # [R, M]
        if compact:
            xa = self._compact_layout().agent_features(now, evader_paths[:, step])
            return x, xa, self.slots[now] >= 0
        xa = np.zeros((rows, m, self.agent_feature_size), dtype=np.float32)
        xa[:, np.arange(m), np.arange(m)] = 1.0
        rr = np.repeat(r, m)
        aa = np.tile(np.arange(m), rows)
        xa[rr, aa, m + now.reshape(-1)] = 1.0
        legal_mask = self.slots[now] >= 0  # [R, M, A]
        xa[:, :, m + n :] = legal_mask
        return x, xa, legal_mask

    def sample_team(self, policy, evader_paths, pursuer_paths, step, rng, chunk=None) -> np.ndarray:
        """Samples the team's move for every row: new pursuer nodes [R, M]."""
        rows = evader_paths.shape[0]
        compact = getattr(policy, "infoset_encoding", "tensor") == "compact"
        width = self._compact_layout().size if compact else self.feature_size
        chunk = chunk or max(64, min(4096, 16_000_000 // (4 * width)))
        out = np.empty((rows, self.m), dtype=np.int64)
        for lo in range(0, rows, chunk):
            hi = min(rows, lo + chunk)
            x, xa, legal_mask = self.team_queries(evader_paths[lo:hi], pursuer_paths[lo:hi], step, compact)
            strategies = _tensor_strategies(policy, x, xa, legal_mask, self.radices)
            if strategies is None:
                states = [_TeamQueryState(x[i], xa[i], self._legal_lists(legal_mask[i]), self.radices)
                          for i in range(hi - lo)]  # fmt: skip
                strategies = self._strategies(policy, states, hi - lo)
            slots = self._sample(strategies, rng)
            moves = self.slots[pursuer_paths[lo:hi, step]]  # [rows, M, A]
            out[lo:hi] = np.take_along_axis(moves, slots[:, :, None], axis=2)[:, :, 0]
        if (out < 0).any():
            raise RuntimeError("team policy put probability on an illegal pursuer move")
        return out

    def _legal_lists(self, legal_mask: np.ndarray) -> list[list[int]]:
        return [np.flatnonzero(legal_mask[agent]).tolist() for agent in range(self.m)]

    def _strategies(self, policy, states, rows) -> np.ndarray:
        """[rows, M, A] per-agent strategies, or [rows, 1, J] joint ones."""
        if hasattr(policy, "agent_strategies"):
            return np.asarray(policy.agent_strategies(states), dtype=np.float64)
        if hasattr(policy, "batch_action_probabilities"):
            return np.asarray(policy.batch_action_probabilities(states), dtype=np.float64)[:, None, :]
        joint = np.zeros((rows, 1, int(np.prod(self.radices))))
        for i, state in enumerate(states):
            for action, prob in policy.action_probabilities(state).items():
                joint[i, 0, action] = prob
        return joint

    def _sample(self, strategies: np.ndarray, rng) -> np.ndarray:
        """[rows, M] individual actions sampled from per-agent or joint strategies."""
        rows = strategies.shape[0]
        if strategies.shape[1] == self.m:
            cum = np.cumsum(strategies, axis=2)
            u = rng.random((rows, self.m, 1)) * cum[:, :, -1:]
            return np.minimum((cum <= u).sum(axis=2), self.a - 1)
        joint = strategies[:, 0]
        cum = np.cumsum(joint, axis=1)
        u = rng.random((rows, 1)) * cum[:, -1:]
        ids = np.minimum((cum <= u).sum(axis=1), joint.shape[1] - 1)
        digits = np.empty((rows, self.m), dtype=np.int64)
        for agent, radix in enumerate(self.radices):
            digits[:, agent] = ids % radix
            ids = ids // radix
        return digits

    def resolve(self, pursuers_old, pursuers_new, evader_old, evader_new):
        """(captured, escaped) booleans for rows (evader_* broadcast against [R])."""
        captured = (pursuers_new == evader_new[:, None]).any(axis=1)
        if self.cfg.capture_on_swap:
            swap = ((pursuers_old == evader_new[:, None]) & (pursuers_new == evader_old[:, None])).any(axis=1)
            captured |= swap & (evader_new != evader_old)
        return captured, ~captured & self.exit[evader_new]


def nest_team_worst_case(
    game: pyspiel.Game,
    policy,
    num_starts: int = 64,
    num_particles: int = 16,
    num_eval_games: int = 16,
    max_slack: int | None = None,
    seed: int = 0,
    max_rows: int = 5_000_000,
) -> WorstCaseResult:
    """Team worst case in NEST by a particle best response over evader paths.

    The evader observes only its own path (and the public start), and a
    capture ends the game, so each of its pure strategies is an open-loop
    path and its best response is, start by start, the path that maximises
    the escape probability against the team's strategy. For each start
    configuration (all of them when there are at most `num_starts`, weighted
    exactly; else `num_starts` drawn from the chance distribution)
    `num_particles` team plays are simulated along every candidate path prefix
    at once (vectorised; the team is sampled agent by agent from its product
    strategy, in batches, and the same team sample is shared by all evader
    moves of a step), the path with the most escapes is chosen, and then
    replayed on `num_eval_games` fresh team plays. Returned: `value` = team
    utility against the chosen paths (held-out; in expectation an *upper*
    bound on the worst case, as any evader strategy gives one), its 95%
    interval (particle noise, plus the spread over sampled starts), and
    `in_sample_value` (minus the in-sample best-response value, optimistic
    for the evader). Candidate paths: every path that can still reach an exit
    before the horizon (`max_slack=None`: the unrestricted best response), or
    only paths of at most (distance to the nearest exit + `max_slack`) steps
    (a restricted evader, so a weaker upper bound, for large grids).
    """
    import time

    start_time = time.perf_counter()
    if num_starts < 1 or num_particles < 1 or num_eval_games < 1:
        raise ValueError("num_starts, num_particles and num_eval_games must be >= 1")
    sim = _NestSimulator(game)
    rng = np.random.default_rng(seed)
    evaders, fixed_pursuers = sim.start_configurations()
    m, horizon = sim.m, sim.horizon
    pursuer_choices = 1 if fixed_pursuers is not None else (sim.n - 1) ** m
    total = len(evaders) * pursuer_choices
    starts = []  # (evader node, pursuer nodes tuple)
    if total <= num_starts:
        weights = np.full(total, 1.0 / total)
        for e in evaders:
            if fixed_pursuers is not None:
                starts.append((e, fixed_pursuers))
                continue
            others = [v for v in range(sim.n) if v != e]
            for index in range(pursuer_choices):
                nodes, rest = [], index
                for _ in range(m):
                    nodes.append(others[rest % (sim.n - 1)])
                    rest //= sim.n - 1
                starts.append((e, tuple(nodes)))
        exact_starts = True
    else:
        weights = np.full(num_starts, 1.0 / num_starts)
        for _ in range(num_starts):
            e = int(evaders[rng.integers(len(evaders))])
            if fixed_pursuers is not None:
                starts.append((e, fixed_pursuers))
            else:
                others = [v for v in range(sim.n) if v != e]
                starts.append((e, tuple(int(others[i]) for i in rng.integers(0, sim.n - 1, size=m))))
        exact_starts = False
    num = len(starts)
    budget = np.array([horizon if max_slack is None else min(horizon, int(sim.dist[e]) + int(max_slack))
                       for e, _ in starts])  # fmt: skip

    # Search tree over evader path prefixes, level by level: node k = (start,
    # evader path so far), rows = its surviving particles.
    first_slot = 0 if sim.cfg.evader_can_stay else 1
    slot_ok = np.arange(sim.a) >= first_slot
    node_start = np.arange(num)
    node_path = np.array([[e] for e, _ in starts], dtype=np.int64)  # [K, t+1]
    row_node = np.repeat(np.arange(num), num_particles)
    row_pursuers = np.repeat(np.array([p for _, p in starts], dtype=np.int64), num_particles, axis=0)[:, None, :]
    levels = []  # per depth: edges (node, slot, escapes, child) and the number of nodes
    rows_done = 0
    for step in range(horizon):
        count = len(node_start)
        rows_done += len(row_node)
        if rows_done > max_rows:
            raise ValueError(f"nest path best response exceeded max_rows={max_rows}; lower num_particles or "
                             "num_starts, or restrict the evader with max_slack")  # fmt: skip
        e_old = node_path[:, -1]
        targets = sim.slots[e_old]  # [K, A]
        reach = sim.dist[np.maximum(targets, 0)] <= (budget[node_start] - step - 1)[:, None]
        allowed = (targets >= 0) & reach & slot_ok[None, :]  # evader moves that can still escape in time
        new = sim.sample_team(policy, node_path[row_node], row_pursuers, step, rng)
        old = row_pursuers[:, step]
        row_targets = targets[row_node]  # [R, A]
        row_old = e_old[row_node]
        captured = (new[:, :, None] == row_targets[:, None, :]).any(axis=1)
        if sim.cfg.capture_on_swap:
            swap = ((old[:, :, None] == row_targets[:, None, :]) & (new[:, :, None] == row_old[:, None, None])).any(1)
            captured |= swap & (row_targets != row_old[:, None])
        escaped = ~captured & sim.exit[np.maximum(row_targets, 0)] & allowed[row_node]
        escapes = np.bincount((row_node[:, None] * sim.a + np.arange(sim.a)).ravel(), weights=escaped.ravel(),
                              minlength=count * sim.a)  # fmt: skip
        going = allowed[row_node] & ~captured & ~escaped & (step + 1 < horizon)
        going_rows, going_slots = np.nonzero(going)
        pairs, inverse = np.unique(row_node[going_rows] * sim.a + going_slots, return_inverse=True)
        child_of_pair = np.full(count * sim.a, -1, dtype=np.int64)
        child_of_pair[pairs] = np.arange(len(pairs))
        edge_node, edge_slot = np.nonzero(allowed)
        edge_pair = edge_node * sim.a + edge_slot
        levels.append((edge_node, edge_slot, escapes[edge_pair], child_of_pair[edge_pair], count))
        if not len(pairs):
            break
        order = np.argsort(inverse, kind="stable")
        rows = going_rows[order]
        row_node = inverse[order]
        row_pursuers = np.concatenate([row_pursuers[rows], new[rows][:, None, :]], axis=1)
        parent, slot = pairs // sim.a, pairs % sim.a
        node_start = node_start[parent]
        node_path = np.concatenate([node_path[parent], targets[parent, slot][:, None]], axis=1)

    # Bottom-up: escapes along the best path from each node (0 if none can escape).
    child_value = np.zeros(0)
    best_edges = []
    for edge_node, edge_slot, edge_escapes, edge_child, count in reversed(levels):
        below = child_value[np.maximum(edge_child, 0)] if len(child_value) else np.zeros(len(edge_child))
        total_value = edge_escapes + np.where(edge_child >= 0, below, 0.0)
        value = np.zeros(count)
        np.maximum.at(value, edge_node, total_value)
        best = np.full(count, len(edge_node), dtype=np.int64)
        ties = np.flatnonzero(total_value >= value[edge_node])
        np.minimum.at(best, edge_node[ties], ties)
        best_edges.append((best, edge_slot, edge_child))
        child_value = value
    best_edges.reverse()
    in_sample_escape = child_value / num_particles
    plans = np.full((num, horizon), -1, dtype=np.int64)  # evader slot per step, -1 past the plan
    node = np.arange(num)
    for step, (best, edge_slot, edge_child) in enumerate(best_edges):
        live = np.flatnonzero(node >= 0)
        if not len(live):
            break
        edge = best[node[live]]
        ok = edge < len(edge_slot)
        plans[live[ok], step] = edge_slot[edge[ok]]
        node[:] = -1
        node[live[ok]] = edge_child[edge[ok]]
    default_slot = np.array([sim.default_move(v) for v in range(sim.n)], dtype=np.int64)

    # Held-out: each start's plan against fresh team plays.
    games_ = num * num_eval_games
    start_of = np.repeat(np.arange(num), num_eval_games)
    evader_paths = np.array([starts[s][0] for s in start_of], dtype=np.int64)[:, None]
    pursuer_paths = np.array([starts[s][1] for s in start_of], dtype=np.int64)[:, None, :]
    alive = np.arange(games_)
    escaped_games = np.zeros(games_, dtype=bool)
    for step in range(horizon):
        if not len(alive):
            break
        new = sim.sample_team(policy, evader_paths, pursuer_paths, step, rng)
        e_old = evader_paths[:, step]
        slot = plans[start_of[alive], step]
        slot = np.where(slot >= 0, slot, default_slot[e_old])
        e_new = sim.slots[e_old, slot]
        captured, escaped = sim.resolve(pursuer_paths[:, step], new, e_old, e_new)
        escaped_games[alive[escaped]] = True
        keep = ~captured & ~escaped
        alive = alive[keep]
        evader_paths = np.concatenate([evader_paths, e_new[:, None]], axis=1)[keep]
        pursuer_paths = np.concatenate([pursuer_paths, new[:, None, :]], axis=1)[keep]
    team_value = 1.0 - escaped_games.reshape(num, num_eval_games).astype(np.float64)
    per_start = team_value.mean(axis=1)
    value = float(weights @ per_start)
    if exact_starts:
        var = team_value.var(axis=1, ddof=1) if num_eval_games > 1 else np.full(num, np.inf)
        ci = 1.96 * math.sqrt(float(np.sum(weights**2 * var / num_eval_games)))
    else:
        ci = 1.96 * float(per_start.std(ddof=1)) / math.sqrt(num) if num > 1 else float("inf")
    adversary_class = "all evader paths" if max_slack is None else f"evader paths of <= distance+{max_slack} steps"
    adversary_class += ", all starts" if exact_starts else f", {num} sampled starts"
    return WorstCaseResult(
        "sampled_paths",
        value=value,
        ci95=ci,
        in_sample_value=float(weights @ (1.0 - in_sample_escape)),
        num_particles=num_particles,
        num_eval_games=num_eval_games,
        adversary_infosets=int(sum(level[4] for level in levels)),
        seconds=time.perf_counter() - start_time,
        num_starts=num,
        adversary_class=adversary_class,
        per_start_values=tuple(float(v) for v in per_start),
    )
