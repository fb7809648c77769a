"""A per-hand poker evaluator, the reference the engine's vectorised one
(`openspiel_cfrx.poker.evaluator`) is tested against (and itself against eval7)."""

import itertools

_HIGH_CARD, _PAIR, _TWO_PAIR, _TRIPS, _STRAIGHT, _FLUSH, _FULL_HOUSE, _QUADS, _STRAIGHT_FLUSH = (
    range(9)
)


def hand_rank5(cards) -> int:
    """Strength of a five-card hand (52-card indices `rank * 4 + suit`).

    Standard poker order (straight flush > quads > full house > flush >
    straight > trips > two pair > pair > high card, kickers after; A-2-3-4-5
    is the lowest straight); larger is stronger, equal means a split pot.
    """
    ranks = sorted((c // 4 for c in cards), reverse=True)
    if len(ranks) != 5:
        raise ValueError(f"hand_rank5 needs 5 cards, got {len(ranks)}")
    flush = len({c % 4 for c in cards}) == 1
    counts: dict[int, int] = {}
    for r in ranks:
        counts[r] = counts.get(r, 0) + 1
    # Ranks ordered by (multiplicity, rank), e.g. full house: trips rank first.
    groups = sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)
    shape = tuple(n for _, n in groups)
    order = [r for r, _ in groups]
    straight_high = -1
    if len(counts) == 5:
        if ranks[0] - ranks[4] == 4:
            straight_high = ranks[0]
        elif ranks == [12, 3, 2, 1, 0]:  # wheel: A-2-3-4-5, five high
            straight_high = 3
    if straight_high >= 0:
        category, order = (_STRAIGHT_FLUSH if flush else _STRAIGHT), [straight_high]
    elif shape == (4, 1):
        category = _QUADS
    elif shape == (3, 2):
        category = _FULL_HOUSE
    elif flush:
        category = _FLUSH
    elif shape == (3, 1, 1):
        category = _TRIPS
    elif shape == (2, 2, 1):
        category = _TWO_PAIR
    elif shape == (2, 1, 1, 1):
        category = _PAIR
    else:
        category = _HIGH_CARD
    value = category
    for i in range(5):
        value = value * 13 + (order[i] if i < len(order) else 0)
    return value


def best_hand_rank(cards) -> int:
    """Strength of the best five-card hand out of 5-7 cards (see `hand_rank5`)."""
    cards = list(cards)
    return max(hand_rank5(combo) for combo in itertools.combinations(cards, 5))
