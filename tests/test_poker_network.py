"""The Appendix C card/bet network (`network="poker"`) and its Deep CFR use."""

import numpy as np
import pyspiel
import pytest
import torch
import torch.nn.functional as F
from test_poker_games import FHP_CARDS, HULH_CARDS, play
from torch import nn

import games  # noqa: F401  (registers flop_holdem, hulh)
from games.poker_encoding import PokerEncoder, PokerNetworkEncoder, poker_network_options
from openspiel_cfrx import DeepCFRSolver
from openspiel_cfrx.deep import count_parameters, legal_mask, make_network, network_names
from openspiel_cfrx.neural_poker.poker_network import (
    APPENDIX_C_DIM,
    PAPER_FHP_DIM,
    PAPER_FHP_PARAMETERS,
    PokerNetwork,
    appendix_c_parameter_count,
)

SMALL_FHP = "flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Tiny networks on a shared machine: intra-op threads only contend."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)




def assert_close(actual, expected, tol=1e-5):
    """Like torch's assert_close, which imports torch.distributed (~10 s here)."""
    np.testing.assert_allclose(actual.detach().cpu().numpy(), expected.detach().cpu().numpy(),
                               rtol=tol, atol=tol)  # fmt: skip


def idx(card: str) -> int:
    return "23456789TJQKA".index(card[0]) * 4 + "cdhs".index(card[1])


def network_for(game, dim=16, seed=0, **options):
    encoder = PokerNetworkEncoder(game)
    torch.manual_seed(seed)
    net = make_network("poker", encoder.feature_size, game.num_distinct_actions(), (dim,),
                       **encoder.network_layout.as_options(), **options)  # fmt: skip
    return encoder, net.eval()


def hand_states(game, cards, histories):
    return [play(game, cards, h) for h in histories]


def features(encoder, states, player=None):
    return torch.tensor(np.stack([encoder.network_tensor(s, player) for s in states]))


# ------------------------------------------------- Appendix C code, verbatim
class RefCardEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.rank = nn.Embedding(13, dim)
        self.suit = nn.Embedding(4, dim)
        self.card = nn.Embedding(52, dim)

    def forward(self, input):
        B, num_cards = input.shape
        x = input.view(-1)
        valid = x.ge(0).float()  # -1 means 'no card'
        x = x.clamp(min=0)
        embs = self.card(x) + self.rank(x // 4) + self.suit(x % 4)
        embs = embs * valid.unsqueeze(1)  # zero out 'no card' embeddings
        return embs.view(B, num_cards, -1).sum(1)


class RefDeepCFRModel(nn.Module):
    def __init__(self, ncardtypes, nbets, nactions, dim=256):
        super().__init__()
        self.card_embeddings = nn.ModuleList([RefCardEmbedding(dim) for _ in range(ncardtypes)])
        self.card1 = nn.Linear(dim * ncardtypes, dim)
        self.card2 = nn.Linear(dim, dim)
        self.card3 = nn.Linear(dim, dim)
        self.bet1 = nn.Linear(nbets * 2, dim)
        self.bet2 = nn.Linear(dim, dim)
        self.comb1 = nn.Linear(2 * dim, dim)
        self.comb2 = nn.Linear(dim, dim)
        self.comb3 = nn.Linear(dim, dim)
        self.action_head = nn.Linear(dim, nactions)

    def forward(self, cards, bets):
        card_embs = [emb(group) for emb, group in zip(self.card_embeddings, cards, strict=True)]
        x = F.relu(self.card1(torch.cat(card_embs, dim=1)))
        x = F.relu(self.card2(x))
        x = F.relu(self.card3(x))
        bet_size = bets.clamp(0, 1e6)
        bet_occurred = bets.ge(0)
        y = F.relu(self.bet1(torch.cat([bet_size, bet_occurred.float()], dim=1)))
        y = F.relu(self.bet2(y) + y)
        z = torch.cat([x, y], dim=1)
        z = F.relu(self.comb1(z))
        z = F.relu(self.comb2(z) + z)
        z = F.relu(self.comb3(z) + z)
        z = F.layer_norm(z, z.shape[-1:])  # normalize(z): (z - mean) / std
        return self.action_head(z)


@pytest.mark.parametrize("name", ["fhp", "hulh"])
def test_equals_the_appendix_c_code(name, request):
    game = request.getfixturevalue(name)
    cards = FHP_CARDS if name == "fhp" else HULH_CARDS
    histories = ["", "c", "rc/r", "rrc/"] if name == "fhp" else ["", "cc/cc/c", "cc/cc/crrrrc/", "rc/r"]
    encoder, net = network_for(game, dim=24)
    ref = RefDeepCFRModel(len(encoder.card_group_sizes), encoder.num_bet_features, 3, dim=24)
    ref.load_state_dict(net.state_dict())  # same parameter names and shapes
    states = [s for s in hand_states(game, cards, histories) if not s.is_terminal()]
    for player in (0, 1):
        group_cards, bets = encoder.encode_batch(states, [player] * len(states))
        expected = ref([torch.from_numpy(c) for c in group_cards], torch.from_numpy(bets))
        got = net(features(encoder, states, player))
        assert_close(got, expected)
        with torch.inference_mode():  # sigma^t queries: the trunk's fused inference path, the same function
            assert_close(net(features(encoder, states, player)), expected)


def test_inference_trunk_keeps_its_precision_when_the_spread_is_small(fhp):
    """The inference path centres before the variance: rows with mean 30 and spread 0.01."""
    _, net = network_for(fhp, dim=24)
    with torch.no_grad():
        for layer in (net.comb2, net.comb3):  # the skips then pass z through unchanged
            layer.weight.zero_()
            layer.bias.zero_()
    pre = 30.0 + 0.01 * torch.randn(256, 24, generator=torch.Generator().manual_seed(0))
    expected = net.trunk(pre)
    with torch.inference_mode():
        assert_close(net.trunk(pre), expected, tol=2e-3)


@pytest.mark.parametrize("name", ["fhp", "hulh"])
@pytest.mark.parametrize("card_skips", [False, True])
def test_inference_card_part_folds_the_embeddings_into_card1(name, card_skips, request):
    """sigma^t queries compute the card part with the embeddings projected
    through card1 first (one embedding bag): the same function, missing cards
    included (preflop rows have no board)."""
    game = request.getfixturevalue(name)
    encoder, net = network_for(game, dim=24, card_skips=card_skips)
    slots = net.num_card_slots
    rng = np.random.default_rng(0)
    cards = torch.from_numpy(np.stack([rng.permutation(52)[:slots] for _ in range(64)]))
    cards[:16, 2:] = -1  # preflop: the hand only
    cards[16:32, 5:] = -1  # the flop without later cards (hulh)
    expected = net.card_part(cards)
    with torch.inference_mode():
        assert_close(net.card_part(cards), expected)
        assert_close(net.card_part(cards.float()), expected)  # the flat input's floats


@pytest.mark.parametrize("name", ["fhp", "hulh"])
def test_card_embeddings_by_row_counts_equal_the_embedding_bags(name, request):
    """The CUDA training path (row counts x table: capturable in a CUDA graph)
    gives the embedding bags' sums and the same gradients, missing cards included."""
    game = request.getfixturevalue(name)
    _, net = network_for(game, dim=24)
    slots = net.num_card_slots
    rng = np.random.default_rng(0)
    cards = torch.from_numpy(np.stack([rng.permutation(52)[:slots] for _ in range(64)]))
    cards[:16, 2:] = -1  # preflop: the hand only
    outputs, grads = [], []
    for by_counts in (False, True):
        net.zero_grad()
        out = net.embed_cards(cards, by_counts=by_counts)
        (out * torch.linspace(-1, 1, out.shape[1])).sum().backward()
        outputs.append(out)
        grads.append([p.grad.clone() for p in net.card_embeddings.parameters()])
    assert_close(outputs[1], outputs[0])
    for a, b in zip(grads[1], grads[0], strict=True):
        assert_close(a, b)


def test_flat_layout_read_from_the_encoder(fhp, hulh):
    for game, groups, bets in ((fhp, (2, 3), 12), (hulh, (2, 3, 1, 1), 24)):
        encoder = PokerNetworkEncoder(game)
        layout = encoder.network_layout
        assert layout.card_group_sizes == groups and layout.num_bet_features == bets
        assert (layout.num_ranks, layout.num_suits) == (13, 4)
        assert encoder.feature_size == layout.input_size == sum(groups) + bets
        _, net = network_for(game)
        assert net.card_group_sizes == groups and net.num_bet_features == bets
    encoder = PokerNetworkEncoder(fhp)
    state = play(fhp, FHP_CARDS, "rc/r")
    flat = encoder.network_tensor(state)
    assert flat.dtype == np.float32
    np.testing.assert_array_equal(flat[:5], [idx("Ah"), idx("Kd"), idx("Qs"), idx("9d"), idx("4h")])
    np.testing.assert_allclose(flat[5:], PokerEncoder(fhp).encode(state).bets)
    np.testing.assert_array_equal(np.asarray(encoder(state, 0), np.float32), flat)
    cards, bets = _net_split(encoder, fhp, state)
    np.testing.assert_array_equal(cards, flat[:5])
    np.testing.assert_array_equal(bets, flat[5:])


def _net_split(encoder, game, state):
    _, net = network_for(game)
    cards, bets = net.split(torch.from_numpy(encoder.network_tensor(state))[None])
    assert cards.dtype == torch.int64
    return cards[0].numpy(), bets[0].numpy()


def test_missing_cards_contribute_zero(fhp):
    encoder, net = network_for(fhp, seed=1)
    preflop = play(fhp, FHP_CARDS, "c")  # flop group all -1
    x = features(encoder, [preflop], player=0)  # Ah Kd
    assert (x[0, 2:5] == -1).all()
    before = net(x)
    with torch.no_grad():
        for table in (net.card_embeddings[1].card, net.card_embeddings[1].rank, net.card_embeddings[1].suit):
            table.weight.normal_(0, 10)  # every flop embedding, index 0 included
        # Hole cards Ah Kd: neither card 0 (2c) nor rank 0 (deuce) nor suit 0 (clubs).
        net.card_embeddings[0].card.weight[0].normal_(0, 10)
        net.card_embeddings[0].rank.weight[0].normal_(0, 10)
        net.card_embeddings[0].suit.weight[0].normal_(0, 10)
    assert_close(net(x), before)
    # ...while a dealt flop does see them.
    flop = features(encoder, [play(fhp, FHP_CARDS, "cc/")], player=0)
    _, fresh = network_for(fhp, seed=1)
    assert not torch.allclose(net(flop), fresh(flop))


def test_permutation_invariant_within_a_group_only(fhp):
    encoder, net = network_for(fhp, seed=2)
    x = features(encoder, [play(fhp, FHP_CARDS, "rc/r")])
    swapped_hole = x[:, [1, 0, 2, 3, 4, *range(5, 17)]]
    rotated_flop = x[:, [0, 1, 4, 2, 3, *range(5, 17)]]
    across = x[:, [2, 1, 0, 3, 4, *range(5, 17)]]  # hole card <-> flop card
    out = net(torch.cat([x, swapped_hole, rotated_flop, across]))
    assert_close(out[1], out[0])
    assert_close(out[2], out[0])
    assert not torch.allclose(out[3], out[0])
    # Bets are positional: the same chips at another position differ.
    moved = x.clone()
    moved[0, 5:17] = torch.roll(x[0, 5:17], 1)
    assert not torch.allclose(net(moved), out[:1])


def test_parameter_count(fhp, hulh):
    # FHP: 2 card groups, 12 bet positions, 3 actions -> 9 d^2 + 173 d + 3.
    for dim in (8, 95, PAPER_FHP_DIM, APPENDIX_C_DIM):
        _, net = network_for(fhp, dim=dim)
        assert count_parameters(net) == appendix_c_parameter_count(dim) == 9 * dim**2 + 173 * dim + 3
    assert count_parameters(network_for(fhp, dim=PAPER_FHP_DIM)[1]) == 99_555  # documented
    assert count_parameters(network_for(fhp, dim=APPENDIX_C_DIM)[1]) == 634_115
    assert count_parameters(network_for(hulh, dim=96)[1]) == appendix_c_parameter_count(96, 4, 24) == 133_539
    # The paper's 98,948 is not reachable by the appendix code for any width.
    assert PAPER_FHP_PARAMETERS not in {appendix_c_parameter_count(d) for d in range(1, 400)}
    assert count_parameters(nn.Linear(3, 2)) == 8


def test_options_and_errors(fhp):
    assert "poker" in network_names()
    encoder = PokerNetworkEncoder(fhp)
    layout = encoder.network_layout.as_options()
    with pytest.raises(ValueError, match="PokerEncoder layout"):
        make_network("poker", 17, 3, (16,))
    with pytest.raises(ValueError, match="one width"):
        make_network("poker", 17, 3, (16, 32), **layout)
    with pytest.raises(ValueError, match="does not match the poker layout"):
        make_network("poker", 128, 3, (16,), **layout)
    net = make_network("poker", 17, 3, (16, 16), dim=8, card_skips=True, **layout)
    assert isinstance(net, PokerNetwork) and net.dim == 8 and net.card_skips
    with pytest.raises(ValueError, match="flop_holdem"):
        DeepCFRSolver(pyspiel.load_game("kuhn_poker"), network={"family": "poker"})
    with pytest.raises(ValueError, match="flop_holdem"):
        poker_network_options(pyspiel.load_game("leduc_poker"))


def test_masks_illegal_actions(fhp):
    solver = DeepCFRSolver(fhp, network={"family": "poker"}, advantage_network_layers=(8,), policy_network_layers=(8,),
                           num_iterations=1, num_traversals=1, policy_network_train_steps=1,
                           memory_capacity=1024, seed=3)  # fmt: skip
    # The big blind after the small blind's limp: fold is not offered.
    state = play(fhp, FHP_CARDS, "c")
    assert state.legal_actions() == [1, 2]
    capped = play(fhp, FHP_CARDS, "rrr")  # raise cap reached: no raise
    assert 2 not in capped.legal_actions()
    # Strategy samples with illegal actions, so the average network has trained.
    encoder = solver.encoder
    memory = solver.strategy_buffer
    feats = np.stack([encoder(s, s.current_player()) for s in (state, capped)]).astype(np.float32)
    probs = np.array([[0.0, 0.3, 0.7], [0.4, 0.6, 0.0]], dtype=np.float32)
    mask = np.array([[False, True, True], [True, True, False]])
    memory.add(feats, probs, mask, 1, np.random.default_rng(0))
    rows = solver.batch_action_probabilities([state, capped])
    assert rows[0, 0] == 0 and rows[1, 2] == 0
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, rtol=1e-6)
    # Untrained advantage networks (Algorithm 1: return 0) -> uniform over legal.
    x = np.asarray([encoder(state, state.current_player())], dtype=np.float32)
    m = legal_mask([state.legal_actions()], 3)
    np.testing.assert_allclose(solver.current_strategy(1, x, m)[0], [0, 0.5, 0.5])


def test_tiny_deep_cfr_run_gives_a_valid_policy():
    game = pyspiel.load_game(SMALL_FHP)
    kwargs = poker_network_options(game, dim=8)
    assert kwargs["network"]["options"]["card_group_sizes"] == (2, 3)
    solver = DeepCFRSolver(game, **kwargs, num_iterations=2, num_traversals=8, traversal={"batch_size": 8},
                           advantage_network_train_steps=4, policy_network_train_steps=4,
                           batch_size_advantage=32, batch_size_strategy=32, memory_capacity=4096,
                           seed=5)  # fmt: skip
    assert isinstance(solver.policy_network, PokerNetwork) and solver.policy_network.dim == 8
    policy_net, advantage_losses, policy_loss = solver.solve()
    # (A player's loss is None at an iteration where the opponent's trained,
    # argmax-fallback strategy folds before that player ever acts.)
    losses = [loss for p in (0, 1) for loss in advantage_losses[p] if loss is not None]
    assert len(losses) >= 2 and np.isfinite(losses).all() and np.isfinite(policy_loss)
    assert solver.advantage_buffers[0].features.shape[1] == 17
    # The automatic path (network="poker", no encoder) builds the same layout.
    auto = DeepCFRSolver(game, network={"family": "poker"}, advantage_network_layers=(8,), policy_network_layers=(8,),
                         memory_capacity=16)  # fmt: skip
    assert auto.feature_size == 17 and isinstance(auto.advantage_networks[0], PokerNetwork)
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(8):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(int(rng.choice(state.legal_actions())))
                continue
            probs = solver.action_probabilities(state)
            assert sorted(probs) == state.legal_actions()
            values = np.array(list(probs.values()))
            assert (values >= 0).all() and abs(values.sum() - 1) < 1e-5
            checked += 1
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert checked >= 8


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_matches_cpu(fhp):
    encoder, net = network_for(fhp, dim=32)
    x = features(encoder, hand_states(fhp, FHP_CARDS, ["", "c", "rc/r"]))
    assert_close(net.cuda()(x.cuda()), net.cpu()(x), tol=1e-4)
