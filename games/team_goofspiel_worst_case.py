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

import functools

import numpy as np
import pyspiel

from openspiel_cfrx.eval.team_best_response import (
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
            raise WorstCaseTooLargeError(
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
            raise WorstCaseTooLargeError(
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
        joint_action = mixed_radix(team_bid - 1, radices)
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
