"""Policies for tests/test_explore.py, named as `module:function` the way a
user names theirs on the explorer's command line."""

from __future__ import annotations

import hashlib

import numpy as np
from open_spiel.python import policy as policy_lib


class HashPolicy(policy_lib.Policy):
    """A fixed, uneven, not suit-symmetric policy: each infoset's probabilities
    come from a hash of its information-state string."""

    def __init__(self, game):
        super().__init__(game, [0, 1])

    def action_probabilities(self, state, player_id=None):
        legal = state.legal_actions()
        key = state.information_state_string().encode("utf-8")
        raw = np.frombuffer(hashlib.shake_256(key).digest(4 * len(legal)), dtype=np.uint32) + 1.0
        return {int(a): float(p) for a, p in zip(legal, raw / raw.sum(), strict=True)}


def hash_policy(game):
    return HashPolicy(game)


def not_a_policy(game):
    return 42
