"""Rules of flop_holdem / hulh (Deep CFR paper, Appendix A) on hand-built hands."""

import numpy as np
import pyspiel
import pytest

import games  # noqa: F401  (registers the games)
from games import poker
from games.poker import CALL, FOLD, RAISE

RANKS = "23456789TJQKA"
SUITS = "cdhs"


def deal_action(card: str, num_suits: int = 4) -> int:
    """Chance action dealing `card` ('As') in a deck with `num_suits` suits."""
    return RANKS.index(card[0]) * num_suits + SUITS.index(card[1])


def play(game, cards, bets):
    """State after dealing `cards` (hole P0 x2, hole P1 x2, then board) and `bets`.

    `bets` is a string of f/c/r with '/' where the next board cards are dealt.
    """
    num_suits = poker.limit_holdem_rules(game).num_suits
    deals = iter(cards)
    state = game.new_initial_state()
    for _ in range(4):
        state.apply_action(deal_action(next(deals), num_suits))
    board_per_round = poker.limit_holdem_rules(game).board_cards
    rnd = 0
    for symbol in bets:
        if symbol == "/":
            rnd += 1
            for _ in range(board_per_round[rnd]):
                assert state.is_chance_node()
                state.apply_action(deal_action(next(deals), num_suits))
            continue
        state.apply_action({"f": FOLD, "c": CALL, "r": RAISE}[symbol])
    return state


FHP_CARDS = ["Ah", "Kd", "7c", "2s", "Qs", "9d", "4h"]
HULH_CARDS = FHP_CARDS + ["3c", "8h"]




def test_default_games_are_the_papers(fhp, hulh):
    fhp_params = fhp.get_parameters()
    assert (fhp_params["numRounds"], fhp_params["numRanks"], fhp_params["numSuits"]) == (2, 13, 4)
    assert fhp_params["blind"] == "50 100"
    assert fhp_params["raiseSize"] == "100 100"
    assert fhp_params["maxRaises"] == "3 3"
    assert fhp_params["numBoardCards"] == "0 3"
    assert hulh.get_type().short_name == "hulh"  # wraps universal_poker (per-street infosets)
    hulh_params = hulh.universal_poker_game().get_parameters()
    assert hulh_params["numRounds"] == 4
    assert hulh_params["raiseSize"] == "100 100 200 200"
    assert hulh_params["maxRaises"] == "3 3 4 4"
    assert hulh_params["numBoardCards"] == "0 3 1 1"
    assert hulh_params["firstPlayer"] == "1 2 2 2"
    # All rounds capped: 100 (BB) + 3*100 + 3*100 [+ 4*200 + 4*200].
    assert fhp.max_utility() == 700 and fhp.min_utility() == -700
    assert hulh.max_utility() == 2300
    assert fhp.num_distinct_actions() == 3
    assert fhp.num_players() == 2
    assert {"flop_holdem", "hulh"} <= set(pyspiel.registered_names())


def test_parameters_give_small_variants():
    game = pyspiel.load_game("flop_holdem(num_ranks=4,num_suits=2)")
    assert game.max_chance_outcomes() == 8
    rules = poker.limit_holdem_rules(game)
    assert (rules.num_ranks, rules.num_suits, rules.max_raises) == (4, 2, (3, 3))
    capped = pyspiel.load_game("hulh(num_ranks=5,num_suits=2,max_raises=1 1 2 2)")
    assert poker.limit_holdem_rules(capped).max_raises == (1, 1, 2, 2)
    assert capped.max_utility() == 100 + 100 + 100 + 400 + 400
    # The loaded game's string (a universal_poker string) round-trips.
    assert str(pyspiel.load_game(str(game))) == str(game)
    state = game.new_initial_state()
    for action in (0, 1, 2, 3, RAISE):
        state.apply_action(action)
    _, restored = pyspiel.deserialize_game_and_state(
        pyspiel.serialize_game_and_state(game, state))
    assert restored.history() == state.history()
    # The factory classes give the same game as load_game.
    assert str(poker.FlopHoldemGame({"num_ranks": 4, "num_suits": 2})) == str(game)


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("flop_holdem(num_ranks=3,num_suits=2)", "cannot deal 7 cards"),
        ("hulh(num_ranks=4,num_suits=2)", "cannot deal 9 cards"),
        ("flop_holdem(num_ranks=14)", "num_ranks=14"),
        ("flop_holdem(num_ranks=1)", "num_ranks=1"),
        ("hulh(num_suits=0)", "num_suits=0"),
        ("flop_holdem(max_raises=3 3 3)", "give 2 integers"),
        ("hulh(max_raises=3 3 x 4)", "space-separated integers"),
        ("flop_holdem(max_raises=3 -1)", "max_raises"),
    ],
)
def test_bad_parameters_raise_clear_value_errors(name, fragment):
    with pytest.raises(ValueError, match=fragment):
        pyspiel.load_game(name)


def test_unknown_parameter_is_rejected():
    with pytest.raises(pyspiel.SpielError, match="num_ranks"):
        pyspiel.load_game("flop_holdem(ranks=4)")


def test_limit_holdem_rules_rejects_other_games():
    with pytest.raises(ValueError, match="kuhn_poker"):
        poker.limit_holdem_rules(pyspiel.load_game("kuhn_poker"))
    other = pyspiel.load_game(
        "universal_poker", dict(poker.paper_rules(2).universal_poker_params(), blind="100 50")
    )
    with pytest.raises(ValueError, match="blind"):
        poker.limit_holdem_rules(other)
    uncapped_params = poker.paper_rules(2).universal_poker_params()
    del uncapped_params["maxRaises"]
    with pytest.raises(ValueError, match="no raise caps"):
        poker.limit_holdem_rules(pyspiel.load_game("universal_poker", uncapped_params))


def test_blinds_and_first_actor_each_round(hulh):
    state = play(hulh, HULH_CARDS, "")
    assert state.current_player() == 0  # P1 (small blind) acts first preflop
    assert state.to_struct().player_contributions == [50, 100]
    assert state.legal_actions() == [FOLD, CALL, RAISE]
    state.apply_action(CALL)  # limp: the big blind still has the option
    assert state.current_player() == 1
    # Not facing a bet, folding is not offered (ACPC rule; see docs).
    assert state.legal_actions() == [CALL, RAISE]
    state.apply_action(CALL)  # check closes round 1
    assert state.is_chance_node()
    for expected_bets, first in [("cc/", 1), ("cc/cc/", 1), ("cc/cc/cc/", 1)]:
        state = play(hulh, HULH_CARDS, expected_bets)
        assert state.current_player() == first  # P2 first after the preflop


def test_fold_payoffs_and_pots(fhp):
    assert play(fhp, FHP_CARDS, "f").returns() == [-50, 50]
    assert play(fhp, FHP_CARDS, "cr").to_struct().player_contributions == [100, 200]
    assert play(fhp, FHP_CARDS, "crf").returns() == [-100, 100]
    assert play(fhp, FHP_CARDS, "crrf").returns() == [200, -200]
    # Postflop the first player cannot fold into an unbet pot, only check or bet.
    assert play(fhp, FHP_CARDS, "cc/").legal_actions() == [CALL, RAISE]


def test_fold_payoffs_after_raises(fhp, hulh):
    assert play(fhp, FHP_CARDS, "rf").returns() == [100, -100]
    assert play(fhp, FHP_CARDS, "rrf").returns() == [-200, 200]
    assert play(fhp, FHP_CARDS, "rc/rf").returns() == [-200, 200]  # P2 bets, P1 folds
    # P2 bets the flop, P1 raises, P2 re-raises, P1 folds: P1 lost 200 + 200.
    assert play(fhp, FHP_CARDS, "rc/rrrf").returns() == [-400, 400]
    assert play(fhp, FHP_CARDS, "rc/rrf").returns() == [300, -300]  # P2 folds its 300
    # Turn and river raises are 200 chips.
    state = play(hulh, HULH_CARDS, "cc/cc/r")
    assert state.to_struct().player_contributions == [100, 300]
    assert play(hulh, HULH_CARDS, "cc/cc/rf").returns() == [-100, 100]
    assert play(hulh, HULH_CARDS, "cc/cc/cc/rrf").returns() == [300, -300]


def test_raise_caps_and_pot_sizes(fhp, hulh):
    # Preflop: the big blind is not a raise, so three raises follow it.
    state = play(fhp, FHP_CARDS, "rrr")
    assert state.to_struct().player_contributions == [400, 300]
    assert state.legal_actions() == [FOLD, CALL]
    state = play(fhp, FHP_CARDS, "crrr")
    assert state.to_struct().player_contributions == [300, 400]
    assert state.legal_actions() == [FOLD, CALL]
    # Flop: three raises (the opening bet counts), 100 chips each.
    state = play(fhp, FHP_CARDS, "rrrc/rrr")  # P2 bets, P1 raises, P2 re-raises
    assert state.to_struct().player_contributions == [600, 700]
    assert state.legal_actions() == [FOLD, CALL]
    assert play(fhp, FHP_CARDS, "rrrc/rrrc").is_terminal()
    # Turn and river: four raises of 200 chips.
    state = play(hulh, HULH_CARDS, "rrrc/rrrc/crrrr")
    assert state.legal_actions() == [FOLD, CALL]
    assert state.to_struct().player_contributions == [700 + 600, 700 + 800]
    state = play(hulh, HULH_CARDS, "rrrc/rrrc/crrrrc/rrrr")
    assert state.to_struct().player_contributions == [2300, 2100]
    assert state.legal_actions() == [FOLD, CALL]
    state.apply_action(CALL)
    assert state.is_terminal()
    assert abs(state.returns()[0]) == 2300


def test_round_closes_on_call_not_on_first_check(hulh):
    state = play(hulh, HULH_CARDS, "cc/c")  # P2 checks the flop
    assert state.current_player() == 0
    state.apply_action(CALL)
    assert state.is_chance_node()  # check-check closes the flop
    state = play(hulh, HULH_CARDS, "cc/cr")
    assert state.current_player() == 1
    assert state.legal_actions() == [FOLD, CALL, RAISE]


def test_showdown_winner_and_split(fhp, hulh):
    # Ah Kd vs 7c 2s on Qs 9d 4h: ace high beats seven high.
    state = play(fhp, FHP_CARDS, "rc/cc")
    assert state.returns() == [200, -200]
    # Same ranks, different suits, rainbow board: the pot is split.
    state = play(fhp, ["Ah", "Kd", "Ac", "Kh", "Qs", "9d", "4h"], "rc/rc")
    assert state.returns() == [0, 0]
    # HULH: the board plays (broadway straight on board), both split.
    state = play(hulh, ["2c", "3d", "2h", "3s", "Ts", "Jd", "Qh", "Kc", "Ad"], "cc/cc/cc/cc")
    assert state.returns() == [0, 0]
    # HULH: the river pairs P2's seven.
    state = play(hulh, ["Ah", "Kd", "7c", "2s", "Qs", "9d", "4h", "3c", "7h"], "cc/cc/cc/cc")
    assert state.returns() == [-100, 100]


def test_information_state_hides_opponent_cards(fhp, hulh):
    for game, cards, bets in [(fhp, FHP_CARDS, "rc/r"), (hulh, HULH_CARDS, "cc/cc/cr")]:
        swapped = list(cards)
        swapped[2], swapped[3] = "5h", "5d"  # only P2's hole cards change
        a, b = play(game, cards, bets), play(game, swapped, bets)
        assert a.information_state_string(0) == b.information_state_string(0)
        assert a.information_state_tensor(0) == b.information_state_tensor(0)
        assert a.observation_string(0) == b.observation_string(0)
        assert a.information_state_string(1) != b.information_state_string(1)
        assert a.information_state_tensor(1) != b.information_state_tensor(1)
        assert "7c" not in a.information_state_string(0)
        assert "Ah" not in a.information_state_string(1)


def test_chips_to_mbb():
    assert poker.chips_to_mbb_per_game(100) == 1000.0  # one big blind
    assert poker.chips_to_mbb_per_game(1) == 10.0
    np.testing.assert_allclose(poker.chips_to_mbb_per_game(np.array([0.37, -5.0])), [3.7, -50.0])
    assert poker.mbb_per_game_to_chips(37.0) == pytest.approx(3.7)


def test_card_from_action_matches_paper_indexing():
    # Appendix C: card = rank * 4 + suit, rank 0 = deuce.
    assert poker.card_from_action(deal_action("As"), 4) == 51
    assert poker.card_from_action(deal_action("2c"), 4) == 0
    assert poker.card_from_action(deal_action("5d", num_suits=2), 2) == 3 * 4 + 1
    assert poker.card_to_string(51) == "As"
