"""network={"family": "suit_symmetric_mlp"}: an exactly suit-symmetric Deep CFR policy,
evaluated exactly on the isomorphic public tree (issue 21)."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
import torch

import games  # noqa: F401  registers flop_holdem, hulh
from openspiel_cfrx import DeepCFRSolver
from openspiel_cfrx.neural_poker import InformationStateTensors, NetworkStrategy
from openspiel_cfrx.neural_poker.suit_symmetric import SuitCanonical, card_layout
from openspiel_cfrx.poker import PublicTree, poker_nash_conv
from openspiel_cfrx.poker.isomorphism import suit_permutations


def _random_tensors(game, count: int, seed: int = 0) -> np.ndarray:
    rng, rows = np.random.default_rng(seed), []
    while len(rows) < count:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(actions, p=np.asarray(probs) / sum(probs))))
            else:
                rows.append(state.information_state_tensor(state.current_player()))
                legal = state.legal_actions()
                state.apply_action(int(legal[rng.integers(len(legal))]))
    return np.asarray(rows[:count], dtype=np.float32)


def _least_image(row: np.ndarray, blocks, num_ranks: int, num_suits: int) -> np.ndarray:
    """By brute force: the row's image under the suit permutation whose block
    codes (sum of 2^(rank * num_suits + new suit) per block, blocks in order)
    are least."""
    C, best = num_ranks * num_suits, None
    for perm in suit_permutations(num_suits):  # suit s -> perm[s]
        images = []
        for b in blocks:
            image = np.zeros(C, dtype=row.dtype)
            for card in np.flatnonzero(row[b : b + C]):
                image[(card // num_suits) * num_suits + perm[card % num_suits]] = 1
            images.append(image)
        codes = tuple(sum(1 << int(i) for i in np.flatnonzero(image)) for image in images)
        if best is None or codes < best[0]:
            best = (codes, images)
    out = row.copy()
    for b, image in zip(blocks, best[1], strict=True):
        out[b : b + C] = image
    return out


@pytest.mark.parametrize("name", ["flop_holdem(num_ranks=4,num_suits=4)", "hulh(num_ranks=3,num_suits=3,max_raises=1 1 1 1)",
                                  "hulh(max_raises=1 1 1 1)"])  # fmt: skip
def test_the_canonical_input_is_the_least_image_under_all_suit_permutations(name):
    """SuitCanonical sorts suits by their rank masks instead of trying every
    permutation; it must give the least image itself (networks trained on
    these inputs, and their checkpoints, depend on which member is chosen).
    The full deck's hulh has 5 card blocks of 13 ranks: two int64 keys."""
    game = pyspiel.load_game(name)
    layout = card_layout(game)
    canonical = SuitCanonical(layout["card_blocks"], layout["num_ranks"], layout["num_suits"])
    x = _random_tensors(game, 40, seed=3)
    want = np.stack([_least_image(row, layout["card_blocks"], layout["num_ranks"], layout["num_suits"]) for row in x])
    np.testing.assert_array_equal(canonical(torch.as_tensor(x)).numpy(), want)


@pytest.mark.parametrize("name", ["flop_holdem(num_ranks=4,num_suits=4)", "hulh(num_ranks=3,num_suits=3,max_raises=1 1 1 1)"])
def test_every_relabelling_of_an_infoset_gets_the_same_canonical_input(name):
    game = pyspiel.load_game(name)
    layout = card_layout(game)
    num_suits, blocks = layout["num_suits"], layout["card_blocks"]
    C = layout["num_ranks"] * num_suits
    assert blocks[0] == 2 + C and blocks[-1] == 2 and len(blocks) == (2 if "flop" in name else 5)
    canonical = SuitCanonical(blocks, layout["num_ranks"], num_suits)
    x = _random_tensors(game, 60)
    want = canonical(torch.as_tensor(x)).numpy()
    for perm in suit_permutations(num_suits):
        moved = x.copy()
        for b in blocks:
            cards = x[:, b : b + C].reshape(len(x), -1, num_suits)
            moved[:, b : b + C] = cards[:, :, np.argsort(perm)].reshape(len(x), C)  # suit s -> perm[s]
        np.testing.assert_array_equal(canonical(torch.as_tensor(moved)).numpy(), want)
    # The canonical input is a relabelling of the input: same cards per rank, the rest untouched.
    np.testing.assert_array_equal(want[:, 2 + 2 * C : blocks[1] if len(blocks) > 2 else None],
                                  x[:, 2 + 2 * C : blocks[1] if len(blocks) > 2 else None])  # fmt: skip
    for b in blocks:
        np.testing.assert_array_equal(want[:, b : b + C].reshape(len(x), -1, num_suits).sum(axis=2),
                                      x[:, b : b + C].reshape(len(x), -1, num_suits).sum(axis=2))  # fmt: skip


SUIT_SYMMETRIC_GAME = "flop_holdem(num_ranks=3,num_suits=4)"


def _trained(game, network):
    solver = DeepCFRSolver(game, network={"family": network}, num_iterations=2, num_traversals=100, seed=1,
                           policy_network_train_steps=20, advantage_network_train_steps=20,
                           traversal={"backend": "poker"})  # fmt: skip
    solver.solve()
    return solver


def test_a_suit_symmetric_policy_is_evaluated_exactly_on_the_isomorphic_tree():
    """One board per suit class (20 of 220 flops here) gives exactly the
    NashConv of every board; a plain MLP's policy is not symmetric, and the
    isomorphic tree refuses it instead of a wrong value."""
    game = pyspiel.load_game(SUIT_SYMMETRIC_GAME)
    full, iso = PublicTree(game, isomorphism=False), PublicTree(game)
    assert (full.num_boards[1], iso.num_boards[1]) == (220, 20)
    strategies = {}
    for network in ("suit_symmetric_mlp", "mlp"):
        solver = _trained(game, network)
        every = NetworkStrategy(full, InformationStateTensors(game, full), solver.probabilities_from_tensors)
        classes = NetworkStrategy(iso, InformationStateTensors(game, iso), solver.probabilities_from_tensors,
                                  suit_symmetric=True)  # fmt: skip
        strategies[network] = every, classes
    every, classes = strategies["suit_symmetric_mlp"]
    assert iso.nash_conv(classes) == pytest.approx(full.nash_conv(every), abs=1e-9)
    assert classes.queries < every.queries / 5
    plain_every, plain_classes = strategies["mlp"]
    with pytest.raises(ValueError, match="not suit-symmetric"):
        iso.nash_conv(plain_classes)


# Slow (~12 s: the state evaluator queries the network on pyspiel states); the fast tier has the same
# comparison for a plain MLP, test_poker_public_tree.py::test_network_strategy_builds_the_states_tensors_and_equals_the_state_path.
@pytest.mark.slow
def test_a_suit_symmetric_policy_on_every_board_equals_the_state_evaluator():
    """The suit-symmetric network on every board's tensors gives exactly the
    NashConv of the pyspiel-state evaluator, which queries it on states."""
    game = pyspiel.load_game(SUIT_SYMMETRIC_GAME)
    full = PublicTree(game, isomorphism=False)
    solver = _trained(game, "suit_symmetric_mlp")
    every = NetworkStrategy(full, InformationStateTensors(game, full), solver.probabilities_from_tensors)
    assert full.nash_conv(every) == pytest.approx(poker_nash_conv(game, solver), abs=1e-9)


def test_suit_symmetric_network_refuses_what_it_cannot_read():
    with pytest.raises(ValueError, match="needs a poker game"):
        DeepCFRSolver(pyspiel.load_game("kuhn_poker"), network={"family": "suit_symmetric_mlp"})
    game = pyspiel.load_game("flop_holdem(num_ranks=4,num_suits=4)")
    with pytest.raises(ValueError, match="reads information_state_tensor inputs"):
        DeepCFRSolver(game, network={"family": "suit_symmetric_mlp", "encoder": "poker"})
    tree = PublicTree(game)
    with pytest.raises(ValueError, match="suit_symmetric_mlp"):
        NetworkStrategy(tree, None, lambda features, mask: None)


def test_suit_symmetric_solver_checkpoints_resume(tmp_path):
    game = pyspiel.load_game("flop_holdem(num_ranks=4,num_suits=4)")
    kwargs = dict(network={"family": "suit_symmetric_mlp"}, num_iterations=3, num_traversals=40, seed=2,
                  policy_network_train_steps=5, advantage_network_train_steps=5)  # fmt: skip
    straight = DeepCFRSolver(game, **kwargs)
    straight.solve()
    first = DeepCFRSolver(game, **kwargs)
    first.run_iteration()
    first.save_checkpoint(str(tmp_path / "c.pt"))
    resumed = DeepCFRSolver(game, **kwargs)
    resumed.load_checkpoint(str(tmp_path / "c.pt"))
    resumed.solve()
    x = _random_tensors(game, 20)
    mask = np.ones((20, 3), dtype=bool)
    np.testing.assert_array_equal(np.asarray(resumed.probabilities_from_tensors(x, mask)),
                                  np.asarray(straight.probabilities_from_tensors(x, mask)))  # fmt: skip
