"""No-limit betting trees for the public-tree engine: a pot-fraction bet
abstraction (`PokerRules.abstraction`) over heads-up no-limit hold'em rules,
as the OFTRL-CFR paper's Section 6 endgames use them (Farina, Kroer, Brown,
Sandholm 2019; `games.libratus_endgames.hunl_rules` builds those rules).

The rules the paper states (Section 6): stacks of 20,000 chips, big blind 100;
a round ends when both players have acted and the last one called; "all raises
must be at least $100 and at least as large as any previous raise in that
round"; players cannot bet beyond their stack. Its abstraction: "the bet sizes
of 0.5x the size of the pot, 1x the size of the pot, and the all-in bet for the
first bet of each round. For subsequent bets in a round, we consider 1x the pot
and the all-in bet", plus fold / check / call. The tree reads the stacks, the
big blind (the minimum raise), the abstraction and each round's first player
from the rules.

What the paper leaves open, decided here (docs/poker_engine.md lists them):

* A bet of f x pot puts the bettor's total at m + f * 2m, where m is the larger
  contribution: f times the pot *after calling* (the usual pot-size raise; for
  an opening bet the pot is simply 2m).
* A size below the minimum raise (the big blind, and at least the round's
  previous raise increment) is raised to the minimum; a size at or above the
  stack is the all-in. Equal sizes are merged, so a node never offers the same
  bet twice.
* A player facing an all-in can only fold or call; once both players are
  all-in (or one is and the other called), the remaining board cards are dealt
  without betting and the hand goes to showdown.
* The Libratus endgames' rules make player 0, the out-of-position player (the
  data's first range), first to act in every round; fold is offered only when
  facing a bet.
"""

from __future__ import annotations

from openspiel_cfrx.poker.public_tree import (
    CALL,
    DEAL,
    DECISION,
    FOLD,
    FOLDED,
    SHOWDOWN,
    PublicNode,
)
from openspiel_cfrx.poker.spec import PokerRules


def bet_sizes(rules: PokerRules, contributions: tuple[int, int], player: int, first_bet: bool,
              last_increment: int) -> list[int]:  # fmt: skip
    """The totals `player` may raise to (ascending, distinct), given both contributions."""
    stack = rules.stacks[player]
    top = max(contributions)
    if top >= stack or contributions[1 - player] >= rules.stacks[1 - player]:
        return []  # someone is all-in: nothing to raise
    minimum = top + max(rules.big_blind, last_increment)
    sizes = set()
    for fraction in rules.abstraction.first if first_bet else rules.abstraction.later:
        target = max(int(round(top + fraction * 2 * top)), minimum)
        sizes.add(min(target, stack))
    if rules.abstraction.all_in:
        sizes.add(stack)
    return sorted(sizes)


def nolimit_betting_tree(rules: PokerRules, root_round: int, contributions: tuple[int, int]) -> list[PublicNode]:
    """Public nodes in depth-first order from the first decision of `root_round`
    with the given contributions. Decision nodes' `legal` are 0 (fold), 1
    (check / call) and 2, 3, ... (the bets, ascending); `actions` holds the
    chosen labels from the root and `bets` (see `bet_totals`) is implied by the
    children's contributions."""
    if rules.is_limit:
        raise ValueError("nolimit_betting_tree needs no-limit rules (a PokerRules with a bet abstraction)")
    if not 0 <= root_round < rules.num_rounds:
        raise ValueError(f"root round must be in 0..{rules.num_rounds - 1}, got {root_round}")
    if any(c > s for c, s in zip(contributions, rules.stacks, strict=True)):
        raise ValueError(f"contributions {contributions} exceed the stacks {rules.stacks}")
    nodes: list[PublicNode] = []

    def add(node: PublicNode) -> int:
        nodes.append(node)
        return len(nodes) - 1

    def end_of_round(rnd: int, c: tuple[int, int], actions: tuple) -> int:
        if rnd == rules.num_rounds - 1:
            return add(PublicNode(SHOWDOWN, rnd, c, actions=actions))
        index = add(PublicNode(DEAL, rnd, c, actions=actions))
        all_in = any(x >= s for x, s in zip(c, rules.stacks, strict=True))
        if all_in:
            child = end_of_round(rnd + 1, c, actions)
        else:
            child = decide(rnd + 1, c, rules.first_player[rnd + 1], True, 0, False, actions)
        nodes[index].children.append(child)
        return index

    def decide(rnd: int, c: tuple[int, int], player: int, first_bet: bool, increment: int, acted: bool,
               actions: tuple) -> int:  # fmt: skip
        facing = c[1 - player] - c[player]
        bets = bet_sizes(rules, c, player, first_bet, increment)
        legal = ((FOLD,) if facing > 0 else ()) + (CALL,) + tuple(range(2, 2 + len(bets)))
        index = add(PublicNode(DECISION, rnd, c, player, legal, actions=actions))
        children = []
        for label in legal:
            path = actions + (label,)
            if label == FOLD:
                children.append(add(PublicNode(FOLDED, rnd, c, player, actions=path)))
            elif label == CALL:
                called = (max(c), max(c))
                if facing > 0 or acted:  # a call, or the second check: the round ends
                    children.append(end_of_round(rnd, called, path))
                else:  # first check
                    children.append(decide(rnd, called, 1 - player, first_bet, increment, True, path))
            else:
                total = bets[label - 2]
                spent = (total, c[1]) if player == 0 else (c[0], total)
                children.append(decide(rnd, spent, 1 - player, False, max(increment, total - max(c)), True, path))
        nodes[index].children.extend(children)
        return index

    root = (int(contributions[0]), int(contributions[1]))
    decide(root_round, root, rules.first_player[root_round], True, 0, False, ())
    return nodes
