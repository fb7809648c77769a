"""The poker engine's first pieces (issue 18): deck and hands, the vectorised
evaluator (against the per-hand reference) and O(H log H) terminal values with
card removal (against the brute-force [H x H] sums)."""

import itertools
import math

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from poker_reference import best_hand_rank  # noqa: E402  (tests/ is on sys.path)

import games  # noqa: F401  (registers flop_holdem, hulh)
from games import poker
from openspiel_cfrx.poker import (
    BetAbstraction,
    Deck,
    PokerRules,
    UnsupportedPokerGameError,
    canonical_boards,
    fold_values,
    hand_permutation,
    rank_hands,
    relabel,
    showdown_values,
    suit_permutations,
)
from openspiel_cfrx.poker.nolimit import nolimit_betting_tree
from openspiel_cfrx.poker.public_tree import DEAL, DECISION, PublicTree


def test_deck_hands_and_conflicts():
    deck = Deck(13, 4)
    assert deck.num_hands == 1326 and deck.card_hands.shape == (52, 51)
    assert deck.hand_index(51, 0) == deck.hand_index(0, 51) == 50
    assert set(deck.hand_cards[deck.hand_index(7, 9)]) == {7, 9}
    assert deck.conflicts([0, 1, 2]).sum() == 1326 - 1176  # C(49, 2) = 1176 hands miss the flop
    with pytest.raises(ValueError, match="ranks"):
        Deck(14, 4)


@pytest.mark.parametrize("num_ranks, num_suits, board_size", [(13, 4, 3), (13, 4, 5), (5, 2, 3), (6, 3, 4), (4, 4, 3)])
def test_vectorised_ranks_equal_the_reference_evaluator(num_ranks, num_suits, board_size):
    deck, rng = Deck(num_ranks, num_suits), np.random.default_rng(num_ranks * 10 + board_size)
    to52 = np.array([poker.card_from_action(c, num_suits) for c in range(deck.num_cards)])
    for _ in range(3):
        board = rng.choice(deck.num_cards, size=board_size, replace=False)
        ranks = rank_hands(deck.hand_cards, board, num_suits)
        free = np.flatnonzero(~deck.conflicts(board))
        assert (ranks[deck.conflicts(board)] == -1).all()
        for h in rng.choice(free, size=min(60, free.size), replace=False):
            assert ranks[h] == best_hand_rank(to52[[*deck.hand_cards[h], *board]])


def test_categories_are_ordered_and_the_wheel_is_the_lowest_straight():
    deck = Deck(13, 4)

    def card(rank, suit):
        return rank * 4 + suit

    hole = deck.hand_index(card(0, 0), card(1, 0))  # deuce and trey of one suit
    boards = [  # with the hole cards: increasing strength
        [card(5, 1), card(7, 2), card(9, 3)],  # high card
        [card(0, 1), card(7, 2), card(9, 3)],  # pair of deuces
        [card(0, 1), card(1, 2), card(9, 3)],  # two pair
        [card(0, 1), card(0, 2), card(9, 3)],  # trips
        [card(12, 1), card(2, 2), card(3, 3)],  # A-2-3-4-5, the wheel
        [card(2, 1), card(3, 2), card(4, 3)],  # 2-3-4-5-6
        [card(5, 0), card(7, 0), card(9, 0)],  # flush
        [card(0, 1), card(0, 2), card(1, 3)],  # full house
        [card(0, 1), card(0, 2), card(0, 3)],  # quads
        [card(2, 0), card(3, 0), card(4, 0)],  # straight flush
    ]
    values = [rank_hands(deck.hand_cards, board, 4)[hole] for board in boards]
    assert values == sorted(values) and len(set(values)) == len(values)


def _brute_force(ranks, reach, deck):
    compatible = ~(deck.contains @ deck.contains.T)  # [H, H]: no shared card
    sign = np.sign(ranks[:, None] - ranks[None, :])
    return (compatible * sign * reach[None, :]).sum(axis=1), (compatible * reach[None, :]).sum(axis=1)


@pytest.mark.parametrize("num_ranks, num_suits, board_size", [(4, 2, 3), (5, 3, 3), (6, 4, 3), (13, 4, 3), (13, 4, 5)])
def test_showdown_and_fold_values_equal_the_brute_force_sums(num_ranks, num_suits, board_size):
    deck, rng = Deck(num_ranks, num_suits), np.random.default_rng(7 + num_ranks)
    for trial in range(3):
        board = rng.choice(deck.num_cards, size=board_size, replace=False)
        ranks = rank_hands(deck.hand_cards, board, num_suits)
        reach = np.where(deck.conflicts(board), 0.0, rng.random(deck.num_hands))
        if trial == 2:
            reach[rng.random(deck.num_hands) < 0.5] = 0.0  # sparse ranges
        expected_showdown, expected_fold = _brute_force(ranks, reach, deck)
        np.testing.assert_allclose(showdown_values(ranks, reach, deck.hand_cards, deck.card_hands),
                                   expected_showdown, rtol=1e-12, atol=1e-9)  # fmt: skip
        np.testing.assert_allclose(fold_values(reach, deck.hand_cards, deck.card_hands), expected_fold,
                                   rtol=1e-12, atol=1e-9)  # fmt: skip


def test_ties_and_the_hand_itself_add_nothing():
    deck = Deck(4, 2)
    board = [0, 2, 4]
    ranks = np.zeros(deck.num_hands, dtype=np.int64)  # every hand ties
    reach = np.where(deck.conflicts(board), 0.0, 1.0)
    np.testing.assert_allclose(showdown_values(ranks, reach, deck.hand_cards, deck.card_hands), 0.0, atol=1e-12)
    # A hand off the board meets C(8 - 3 - 2, 2) = 3 opponent hands that share no card with it.
    folds = fold_values(reach, deck.hand_cards, deck.card_hands)
    np.testing.assert_allclose(folds[~deck.conflicts(board)], 3.0)


@pytest.mark.parametrize("num_ranks, num_suits, classes", [(13, 4, 1755), (4, 2, None), (5, 3, None)])
def test_suit_isomorphic_flops_have_the_same_values_after_permuting_hands(num_ranks, num_suits, classes):
    deck = Deck(num_ranks, num_suits)
    boards, multiplicity, board_class, board_perm = canonical_boards(deck, 3)
    if classes is not None:
        assert len(boards) == classes
    assert multiplicity.sum() == math.comb(deck.num_cards, 3)
    every = np.array(list(itertools.combinations(range(deck.num_cards), 3)))
    rng = np.random.default_rng(num_ranks)
    for b in rng.choice(len(every), size=12, replace=False):
        board, canonical = every[b], boards[board_class[b]]
        assert sorted(relabel(deck, board, board_perm[b])) == list(canonical)
        moved = hand_permutation(deck, board_perm[b])
        ranks, canonical_ranks = rank_hands(deck.hand_cards, board, num_suits), rank_hands(deck.hand_cards,
                                                                                              canonical, num_suits)  # fmt: skip
        np.testing.assert_array_equal(ranks, canonical_ranks[moved])
        reach = np.where(deck.conflicts(board), 0.0, rng.random(deck.num_hands))
        moved_reach = np.zeros_like(reach)
        moved_reach[moved] = reach
        np.testing.assert_allclose(
            showdown_values(ranks, reach, deck.hand_cards, deck.card_hands),
            showdown_values(canonical_ranks, moved_reach, deck.hand_cards, deck.card_hands)[moved], atol=1e-12)
    assert sorted(hand_permutation(deck, suit_permutations(num_suits)[-1])) == list(range(deck.num_hands))


@pytest.mark.parametrize("game_string", ["flop_holdem(num_ranks=5,num_suits=2)", "flop_holdem", "hulh",
                                         "hulh(num_ranks=6,num_suits=3,max_raises=2 2 3 3)"])
def test_rules_read_from_the_game_equal_the_games_own_rules(game_string):
    game = pyspiel.load_game(game_string)
    rules = PokerRules.from_game(game)
    assert rules == poker.limit_holdem_rules(game) and rules.is_limit
    assert rules.big_blind == 100 and rules.deck_size == rules.num_ranks * rules.num_suits
    assert rules.max_contribution() == game.max_utility()  # every round capped
    # The universal_poker gamedef of the rules is the game's own.
    assert PokerRules.from_game(pyspiel.load_game("universal_poker", rules.universal_poker_params())) == rules


def test_rules_hold_limit_or_no_limit_betting_not_both():
    limit = poker.paper_rules(2)
    with pytest.raises(ValueError, match="no-limit rules"):
        PokerRules(**{**vars(limit), "abstraction": BetAbstraction()})
    with pytest.raises(ValueError, match="each of the 2 rounds"):
        PokerRules(**{**vars(limit), "max_raises": (3,)})
    with pytest.raises(ValueError, match="first_player"):
        PokerRules(**{**vars(limit), "first_player": (0,)})
    no_limit = PokerRules(**{**vars(limit), "raise_sizes": (), "max_raises": (), "abstraction": BetAbstraction()})
    assert not no_limit.is_limit and no_limit.max_contribution() == 20000
    with pytest.raises(ValueError, match="limit rules only"):
        no_limit.universal_poker_params()
    with pytest.raises(ValueError, match="needs no-limit rules"):
        nolimit_betting_tree(limit, 1, (100, 100))


@pytest.mark.parametrize("game_string, match", [
    ("kuhn_poker", "is not a universal_poker game"),
    ("universal_poker(betting=nolimit,numPlayers=2)", "nolimit betting"),
    ("universal_poker(numPlayers=3,stack=2000 2000 2000,blind=50 100 0)", r"3 players \(only 2\), nolimit betting"),
])  # fmt: skip
def test_unsupported_poker_games_are_refused_naming_why(game_string, match):
    with pytest.raises(UnsupportedPokerGameError, match=match):
        PokerRules.from_game(pyspiel.load_game(game_string))


def _hashed_strategy(tree):
    """A fixed non-uniform strategy over (public node, board, hand): one array per node."""
    arrays = {}
    for n, node in enumerate(tree.nodes):
        if node.kind == DECISION:
            shape = (tree.num_boards[node.round], tree.deck.num_hands, len(node.legal))
            weights = np.random.default_rng(n).random(shape) + 0.05
            arrays[n] = weights / weights.sum(axis=2, keepdims=True)
    return lambda n, lo, hi: arrays[n][lo:hi]


class _ArrayPolicy(policy_lib.Policy):
    """The same strategy as an OpenSpiel Policy on universal_poker states (every board, no isomorphism)."""

    def __init__(self, game, tree, strategy):
        super().__init__(game, [0, 1])
        self.tree, self.strategy = tree, strategy
        self.board_index = {tuple(b): i for i, b in enumerate(tree.first_boards.tolist())}

    def action_probabilities(self, state, player_id=None):
        history, player = state.history(), state.current_player()
        hand = self.tree.deck.hand_index(*history[2 * player : 2 * player + 2])  # p0 gets cards 1-2, p1 3-4
        node, board = 0, []
        for action in history[4:]:
            current = self.tree.nodes[node]
            if current.kind == DEAL:
                board.append(action)
                if len(board) == self.tree.first_boards.shape[1]:
                    node = current.children[0]
            else:
                node = current.children[current.legal.index(action)]
        b = self.board_index[tuple(sorted(board))] if board else 0
        probs = self.strategy(node, b, b + 1)[0, hand]
        return {a: float(probs[self.tree.nodes[node].legal.index(a)]) for a in state.legal_actions()}


@pytest.mark.parametrize("game_string", ["flop_holdem(num_ranks=4,num_suits=2)", "flop_holdem(num_ranks=5,num_suits=2)"])
def test_public_tree_nash_conv_equals_the_state_based_evaluator(game_string):
    """Uniform and a hashed non-uniform strategy: the public-tree engine's exact
    NashConv equals openspiel_cfrx.poker.poker_nash_conv (which agrees
    with the generic tree engine) to 1e-9."""
    from openspiel_cfrx.poker import poker_nash_conv

    game = pyspiel.load_game(game_string)
    tree = PublicTree(game, isomorphism=False)
    assert tree.nash_conv(tree.uniform) == pytest.approx(
        poker_nash_conv(game, policy_lib.UniformRandomPolicy(game)), abs=1e-9)
    strategy = _hashed_strategy(tree)
    assert tree.nash_conv(strategy) == pytest.approx(
        poker_nash_conv(game, _ArrayPolicy(game, tree, strategy)), abs=1e-9)
