"""Appendix C structured encoding of flop_holdem / hulh infosets."""

import numpy as np
import pyspiel
import pytest
from test_poker_games import FHP_CARDS, HULH_CARDS, play

import games  # noqa: F401  (registers the games)
from games.poker_encoding import PokerEncoder, replay_history


def idx(card: str) -> int:
    """Paper's 52-card index: rank * 4 + suit."""
    return "23456789TJQKA".index(card[0]) * 4 + "cdhs".index(card[1])


def test_shapes_match_the_papers_network():
    fhp = pyspiel.load_game("flop_holdem")
    hulh = pyspiel.load_game("hulh")
    fhp_encoder, hulh_encoder = PokerEncoder(fhp), PokerEncoder(hulh)
    assert fhp_encoder.card_group_sizes == (2, 3)
    assert fhp_encoder.num_bet_features == 12  # 6 positions x 2 rounds
    assert hulh_encoder.card_group_sizes == (2, 3, 1, 1)
    assert hulh_encoder.card_group_names == ("hole", "flop", "turn", "river")
    assert hulh_encoder.num_bet_features == 24
    assert hulh_encoder.flat_tensor_size == 4 * 52 + 2 * 24


def test_hand_built_infoset():
    fhp = pyspiel.load_game("flop_holdem")
    encoder = PokerEncoder(fhp)
    # P1 raises to 150 more (total 200), P2 calls 100, P2 bets 100 on the flop.
    state = play(fhp, FHP_CARDS, "rc/r")
    assert state.current_player() == 0
    encoded = encoder.encode(state)
    np.testing.assert_array_equal(encoded.cards[0], [idx("Ah"), idx("Kd")])
    np.testing.assert_array_equal(encoded.cards[1], [idx("Qs"), idx("9d"), idx("4h")])
    np.testing.assert_allclose(
        encoded.bets, [1.5, 1.0, -1, -1, -1, -1, 1.0, -1, -1, -1, -1, -1]
    )
    # Player 1's view of the same history: own cards, same bets.
    other = encoder.encode(state, player=1)
    np.testing.assert_array_equal(other.cards[0], [idx("7c"), idx("2s")])
    np.testing.assert_array_equal(other.bets, encoded.bets)
    # Before the flop the flop group is all "no card"; chips in raw units.
    preflop = PokerEncoder(fhp, chip_scale=1.0).encode(play(fhp, FHP_CARDS, "c"))
    np.testing.assert_array_equal(preflop.cards[1], [-1, -1, -1])
    assert preflop.bets[0] == 50.0 and preflop.bets[1] == -1


def test_full_capped_round_uses_six_positions():
    hulh = pyspiel.load_game("hulh")
    encoder = PokerEncoder(hulh)
    state = play(hulh, HULH_CARDS, "cc/cc/crrrrc/")
    encoded = encoder.encode(state)
    turn_bets = encoded.bets[12:18]
    np.testing.assert_allclose(turn_bets, [0, 2, 4, 4, 4, 2])  # check, bet, 3 raises, call
    np.testing.assert_array_equal(encoded.cards[2], [idx("3c")])
    np.testing.assert_array_equal(encoded.cards[3], [idx("8h")])


def test_encoding_hides_opponent_cards():
    hulh = pyspiel.load_game("hulh")
    encoder = PokerEncoder(hulh)
    swapped = list(HULH_CARDS)
    swapped[2], swapped[3] = "5h", "5d"
    a, b = play(hulh, HULH_CARDS, "cc/cr"), play(hulh, swapped, "cc/cr")
    for encoded_a, encoded_b in [(encoder.encode(a, 0), encoder.encode(b, 0))]:
        for group_a, group_b in zip(encoded_a.cards, encoded_b.cards, strict=True):
            np.testing.assert_array_equal(group_a, group_b)
        np.testing.assert_array_equal(encoded_a.bets, encoded_b.bets)
    np.testing.assert_array_equal(encoder.flat_tensor(a, 0), encoder.flat_tensor(b, 0))
    assert encoder.information_state_string(a, 0) == encoder.information_state_string(b, 0)
    assert encoder.information_state_string(a, 1) != encoder.information_state_string(b, 1)


def test_street_of_each_board_card_is_kept():
    """universal_poker merges flop and turn into one set; the encoder does not,
    nor does `hulh`'s own information state (it wraps universal_poker)."""
    hulh = pyspiel.load_game("hulh")
    encoder = PokerEncoder(hulh)
    base = ["Ah", "Kd", "7c", "2s"]
    a = play(hulh, base + ["Qs", "9d", "4h", "3c"], "cc/cc/c")
    b = play(hulh, base + ["Qs", "9d", "3c", "4h"], "cc/cc/c")
    assert a._state.information_state_string(0) == b._state.information_state_string(0)  # C++: conflated
    assert a.information_state_string(0) != b.information_state_string(0)
    assert encoder.information_state_string(a, 0) != encoder.information_state_string(b, 0)
    assert not np.array_equal(encoder.flat_tensor(a, 0), encoder.flat_tensor(b, 0))


def test_batch_equals_single_and_cards_fit_small_decks():
    game = pyspiel.load_game("flop_holdem(num_ranks=5,num_suits=2)")
    encoder = PokerEncoder(game)
    rng = np.random.default_rng(0)
    states = []
    while len(states) < 50:
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node():
                states.append(state.clone())
            state.apply_action(int(rng.choice(state.legal_actions())))
    cards, bets = encoder.encode_batch(states)
    assert [c.shape for c in cards] == [(len(states), 2), (len(states), 3)]
    assert bets.shape == (len(states), 12)
    for row, state in enumerate(states):
        single = encoder.encode(state)
        np.testing.assert_array_equal(cards[0][row], single.cards[0])
        np.testing.assert_array_equal(cards[1][row], single.cards[1])
        np.testing.assert_array_equal(bets[row], single.bets)
    dealt = np.concatenate(cards, axis=1)
    dealt = dealt[dealt >= 0]
    assert (dealt // 4 < 5).all() and (dealt % 4 < 2).all()  # ranks 2-6, suits c, d


def test_bad_inputs():
    fhp = pyspiel.load_game("flop_holdem")
    with pytest.raises(ValueError, match="kuhn_poker"):
        PokerEncoder(pyspiel.load_game("kuhn_poker"))
    chance_state = fhp.new_initial_state()
    with pytest.raises(ValueError, match="pass 0 or 1"):
        PokerEncoder(fhp).encode(chance_state)


def test_feeds_the_appendix_c_network():
    fhp = pyspiel.load_game("flop_holdem")
    import torch  # a core dependency of the project
    encoder = PokerEncoder(fhp)
    states = [play(fhp, FHP_CARDS, "c"), play(fhp, FHP_CARDS, "rc/r")]
    cards, bets = encoder.encode_batch(states)
    embedding = torch.nn.ModuleDict(
        {"rank": torch.nn.Embedding(13, 4), "suit": torch.nn.Embedding(4, 4),
         "card": torch.nn.Embedding(52, 4)}
    )
    for group in cards:  # Appendix C CardEmbedding.forward
        x = torch.from_numpy(group).view(-1)
        valid = x.ge(0).float()
        x = x.clamp(min=0)
        embs = embedding["card"](x) + embedding["rank"](x // 4) + embedding["suit"](x % 4)
        summed = (embs * valid.unsqueeze(1)).view(len(states), group.shape[1], -1).sum(1)
        assert summed.shape == (2, 4)
    bet_tensor = torch.from_numpy(bets)
    assert torch.equal(bet_tensor.ge(0).sum(1), torch.tensor([1, 3]))


def reference_encoding(encoder, state, player):
    """Appendix C encoding built from the readable rules replay."""
    replay = replay_history(encoder.rules, state.history())
    cards = [-1] * sum(encoder.card_group_sizes)
    cards[: len(replay.hole_cards[player])] = replay.hole_cards[player]
    slot = 2
    for rnd in range(1, encoder.rules.num_rounds):
        cards[slot: slot + len(replay.board_cards[rnd])] = replay.board_cards[rnd]
        slot += encoder.card_group_sizes[rnd]
    bets = [-1.0] * encoder.num_bet_features
    for rnd, round_actions in enumerate(replay.actions):
        for position, (_, _, chips) in enumerate(round_actions):
            bets[rnd * encoder.bet_positions_per_round + position] = chips * encoder.chip_scale
    return cards, bets


@pytest.mark.parametrize("name", ["flop_holdem", "hulh", "hulh(num_ranks=5,num_suits=2)"])
def test_fast_encoder_matches_rules_replay(name):
    game = pyspiel.load_game(name)
    encoder = PokerEncoder(game)
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(200):
        state = game.new_initial_state()
        while True:
            if not state.is_chance_node():
                for player in (0, 1):
                    assert encoder.encode_history(state.history(), player) == (
                        reference_encoding(encoder, state, player)
                    )
                    checked += 1
            if state.is_terminal():
                break
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert checked > 1000
