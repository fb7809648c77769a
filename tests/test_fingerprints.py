"""Fixed-seed fingerprints: refactoring must not change what a solver computes.

Each case runs a small fixed-seed solve and digests its average policy on a
fixed set of decision states (every decision state of the tiny games; the
states met by 60 seeded random playouts on flop hold'em), bit for bit:
sha256 over the float64 probabilities. `tests/data/fingerprints.json` holds
the digests of the code before the layering of `openspiel_cfrx` was changed;
a case whose digest moves computes something else.

To regenerate after an intended change of behaviour (say so in the commit):

    CFRX_WRITE_FINGERPRINTS=1 .venv/bin/python -m pytest tests/test_fingerprints.py
"""

from __future__ import annotations

import hashlib
import json
import os
import random

import numpy as np
import pyspiel
import pytest
from deep_cfr_settings import SMALL

import games  # noqa: F401  registers flop_holdem, team_goofspiel
from openspiel_cfrx import tabular
from openspiel_cfrx.poker import PublicTree, PublicTreePolicy, VectorCFR

PATH = os.path.join(os.path.dirname(__file__), "data", "fingerprints.json")
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


def digest(policy, states) -> str:
    h = hashlib.sha256()
    for state in states:
        probs = policy.action_probabilities(state)
        h.update(np.array(sorted(probs.items()), dtype=np.float64).tobytes())
    return h.hexdigest()[:20]


def _deep_cfr(game_string, playouts=None, **options):
    from openspiel_cfrx.deep import DeepCFRSolver

    game = pyspiel.load_game(game_string)
    solver = DeepCFRSolver(game, seed=3, **{**SMALL, **options})
    solver.solve()
    return digest(solver, decision_states(game, playouts))


def _cfr_mix(variant):
    from openspiel_cfrx.deep.cfr_mix import CFRMixSolver

    game = pyspiel.load_game(TINY_GOOFSPIEL)
    solver = CFRMixSolver(game, variant=variant, num_iterations=2, num_traversals=20, regret_train_steps=10,
                          policy_train_steps=10, regret_network_layers=(16,), policy_network_layers=(16,),
                          num_threads=1, seed=2)  # fmt: skip
    solver.solve()
    return digest(solver, decision_states(game))  # a CFRMixSolver is its TeamPolicy


def _tabular(name, alternating):
    game = pyspiel.load_game("leduc_poker")
    solver = tabular.make_solver(name, game, alternating_updates=alternating)
    for _ in range(12):
        solver.evaluate_and_update_policy()
    return digest(solver.average_policy(), decision_states(game))


def _vector(variant):
    game = pyspiel.load_game(SMALL_FHP)
    tree = PublicTree(game, chunk_boards=5, threads=1)
    solver = VectorCFR(tree, variant, verbose=False)
    for _ in range(6):
        solver.iterate()
    return digest(
        PublicTreePolicy(game, tree, solver.average_strategy), decision_states(game, playouts=60)
    )


CASES = {
    **{f"deep_cfr/{backend}": (lambda b=backend: _deep_cfr("leduc_poker", traversal_backend=b))
       for backend in ("state", "tree", "vectorized")},
    "deep_cfr/sd_cfr": lambda: _deep_cfr("kuhn_poker", average_policy="sd_cfr"),
    "deep_cfr/poker": lambda: _deep_cfr(SMALL_FHP, playouts=60, traversal_backend="poker"),
    "deep_cfr/poker_network": lambda: _deep_cfr(SMALL_FHP, playouts=60, traversal_backend="poker", network="poker"),
    **{f"cfr_mix/{variant}": (lambda v=variant: _cfr_mix(v))
       for variant in ("cfr_mix", "cfr_mix_no_sharing", "deep_cfr_mix", "double_neural_joint", "deep_cfr_joint",
                       "independent")},
    **{f"tabular/{name}/{'alternating' if alt else 'simultaneous'}": (lambda n=name, a=alt: _tabular(n, a))
       for name in ("cfr", "cfr+", "dcfr", "lcfr", "pcfr+", "oftrl") for alt in (True, False)},
    **{f"vector_cfr/{variant}": (lambda v=variant: _vector(v))
       for variant in ("cfr", "cfr+", "lcfr", "dcfr", "pcfr+", "oftrl")},
}  # fmt: skip


@pytest.fixture(scope="module")
def recorded():
    if WRITE or not os.path.exists(PATH):
        return {}
    with open(PATH) as f:
        return json.load(f)


@pytest.mark.parametrize("name", list(CASES))
def test_fingerprint_is_unchanged(name, recorded):
    import torch

    torch.set_num_threads(1)
    value = CASES[name]()
    if WRITE:
        os.makedirs(os.path.dirname(PATH), exist_ok=True)
        table = json.load(open(PATH)) if os.path.exists(PATH) else {}
        table[name] = value
        with open(PATH, "w") as f:
            json.dump(dict(sorted(table.items())), f, indent=1)
            f.write("\n")
        return
    assert name in recorded, (
        f"no recorded fingerprint for {name}: regenerate (see the module docstring)"
    )
    assert value == recorded[name]
