"""Fixed-seed fingerprints: refactoring must not change what a solver computes.

Each case runs a small fixed-seed solve and records its average policy on a
fixed set of decision states (every decision state of the tiny games; the
states met by 60 seeded random playouts on flop hold'em), in that order: the
legal actions and their float64 probabilities. `tests/data/fingerprints.npz`
holds them as the code computed them before the layering of `openspiel_cfrx`
was changed; a case whose actions differ, or whose probabilities differ by
more than its family's tolerance, computes something else.

The probabilities are compared as values, not bits: libraries pick their
SIMD kernels (numpy's dispatch, numba's target CPU, torch's ATen and MKL
kernels) by the CPU they run on, and another x86 CPU rounds differently
(`.ci/other_cpu.sh` runs these cases under emulated older CPUs). Tolerances,
absolute, probabilities being in [0, 1]:

- tabular and vector CFR: 1e-10. Pure float64: another CPU changes only the
  last bits (reported: ~4e-15 on Leduc after 12 iterations on another x86
  machine; 2.2e-16 under the emulated CPUs). A real change is far larger:
  DCFR's alpha at 1.4 instead of 1.5 moves probabilities by up to 0.39.
- Deep CFR and CFR-MIX: 1e-5. float32 networks trained by Adam carry a
  different rounding through every step: under the emulated CPUs, at most
  2.3e-7 (Deep CFR) and 1.2e-7 (CFR-MIX), a margin of 40x. A real change is
  far larger: a learning rate 1% higher moves every case by 1.3e-3 to 1.5e-2,
  one more training step or traversal by 4e-2 to 0.17.

To regenerate after an intended change of behaviour (say so in the commit):

    CFRX_WRITE_FINGERPRINTS=1 .venv/bin/python -m pytest -p no:xdist tests/test_fingerprints.py
"""

from __future__ import annotations

import os
import random

import numpy as np
import pyspiel
import pytest
from deep_cfr_settings import SMALL

import games  # noqa: F401  registers flop_holdem, team_goofspiel
from openspiel_cfrx import tabular
from openspiel_cfrx.poker import PublicTree, PublicTreePolicy, VectorCFR

PATH = os.path.join(os.path.dirname(__file__), "data", "fingerprints.npz")
WRITE = bool(os.environ.get("CFRX_WRITE_FINGERPRINTS"))
SMALL_FHP = "flop_holdem(num_ranks=4,num_suits=2,max_raises=1 1)"
TINY_GOOFSPIEL = "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)"


def decision_states(game, playouts: int | None = None):
    """Every decision state (depth first) or those met by seeded random playouts."""
    if playouts is None:
        out, stack = [], [game.new_initial_state()]
        while stack:
            state = stack.pop()
            if state.is_terminal():
                continue
            if not state.is_chance_node():
                out.append(state)
            stack.extend(state.child(a) for a in reversed(state.legal_actions()))
        return out
    rng, out = random.Random(0), []
    for _ in range(playouts):
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node():
                out.append(state.clone())
            state.apply_action(rng.choice(state.legal_actions()))
    return out


def probabilities(policy, states) -> dict:
    """The policy on `states`, in order: each state's actions (sorted) and
    their probabilities, concatenated."""
    rows = [sorted(policy.action_probabilities(state).items()) for state in states]
    return {"actions": np.array([a for row in rows for a, _ in row], dtype=np.int32),
            "probabilities": np.array([p for row in rows for _, p in row], dtype=np.float64)}  # fmt: skip


def _deep_cfr(game_string, playouts=None, **options):
    from openspiel_cfrx.deep import DeepCFRSolver

    game = pyspiel.load_game(game_string)
    solver = DeepCFRSolver(game, seed=3, **{**SMALL, **options})
    solver.solve()
    return probabilities(solver, decision_states(game, playouts))


def _cfr_mix(variant):
    from openspiel_cfrx.cfr_mix import CFRMixSolver

    game = pyspiel.load_game(TINY_GOOFSPIEL)
    solver = CFRMixSolver(game, variant=variant, num_iterations=2, num_traversals=20, regret_train_steps=10,
                          policy_train_steps=10, regret_network_layers=(16,), policy_network_layers=(16,),
                          workers={"num_threads": 1}, seed=2)  # fmt: skip
    solver.solve()
    return probabilities(solver, decision_states(game))  # a CFRMixSolver is its TeamPolicy


def _tabular(name, alternating):
    game = pyspiel.load_game("leduc_poker")
    solver = tabular.make_solver(name, game, alternating_updates=alternating)
    for _ in range(12):
        solver.evaluate_and_update_policy()
    return probabilities(solver.average_policy(), decision_states(game))


def _vector(variant):
    game = pyspiel.load_game(SMALL_FHP)
    tree = PublicTree(game, chunk_boards=5, threads=1)
    solver = VectorCFR(tree, variant, verbose=False)
    for _ in range(6):
        solver.iterate()
    return probabilities(
        PublicTreePolicy(game, tree, solver.average_strategy), decision_states(game, playouts=60)
    )


CASES = {
    **{f"deep_cfr/{backend}": (lambda b=backend: _deep_cfr("leduc_poker", traversal={"backend": b}))
       for backend in ("state", "tree", "vectorized")},
    "deep_cfr/sd_cfr": lambda: _deep_cfr("kuhn_poker", averaging={"average_policy": "sd_cfr"}),
    "deep_cfr/poker": lambda: _deep_cfr(SMALL_FHP, playouts=60, traversal={"backend": "poker"}),
    "deep_cfr/poker_network": lambda: _deep_cfr(SMALL_FHP, playouts=60, traversal={"backend": "poker"},
                                                network={"family": "poker"}),
    **{f"cfr_mix/{variant}": (lambda v=variant: _cfr_mix(v))
       for variant in ("cfr_mix", "cfr_mix_no_sharing", "deep_cfr_mix", "double_neural_joint", "deep_cfr_joint",
                       "independent")},
    **{f"tabular/{name}/{'alternating' if alt else 'simultaneous'}": (lambda n=name, a=alt: _tabular(n, a))
       for name in ("cfr", "cfr+", "dcfr", "lcfr", "pcfr+", "oftrl") for alt in (True, False)},
    **{f"vector_cfr/{variant}": (lambda v=variant: _vector(v))
       for variant in ("cfr", "cfr+", "lcfr", "dcfr", "pcfr+", "oftrl")},
}  # fmt: skip


# absolute, per family (the module docstring says why)
TOLERANCE = {"tabular": 1e-10, "vector_cfr": 1e-10, "deep_cfr": 1e-5, "cfr_mix": 1e-5}


def _load() -> dict:
    if not os.path.exists(PATH):
        return {}
    with np.load(PATH) as data:
        return {key: data[key] for key in data.files}


@pytest.fixture(scope="module")
def recorded():
    return {} if WRITE else _load()


@pytest.mark.parametrize("name", list(CASES))
def test_fingerprint_is_unchanged(name, recorded):
    import torch

    torch.set_num_threads(1)
    value = CASES[name]()
    if WRITE:
        table = {**_load(), **{f"{name}:{part}": array for part, array in value.items()}}
        os.makedirs(os.path.dirname(PATH), exist_ok=True)
        np.savez_compressed(PATH, **dict(sorted(table.items())))
        return
    assert f"{name}:actions" in recorded, (
        f"no recorded fingerprint for {name}: regenerate (see the module docstring)"
    )
    actions, probs = recorded[f"{name}:actions"], recorded[f"{name}:probabilities"]
    np.testing.assert_array_equal(value["actions"], actions, err_msg=f"{name}: actions")
    tolerance = TOLERANCE[name.split("/")[0]]
    np.testing.assert_allclose(value["probabilities"], probs, rtol=0, atol=tolerance,
                               err_msg=f"{name}: probabilities")  # fmt: skip
