"""Tabular policy files: a policy of any game the tree engine extracts, as
OpenSpiel's `TabularPolicy` holds it.

The file is a numpy `.npz` (read with `allow_pickle=False`) holding

* `action_probability_array` [num_states, num_actions] float64: row r is the
  infoset `TabularPolicy(game).state_lookup` maps to r (OpenSpiel's row
  order: by player, then by the infoset's smallest history string), columns
  are the game's actions (illegal ones 0);
* `meta`, a JSON string: `format` ("openspiel_cfrx.tabular_policy/1"),
  `game` (`str(game)`), `num_states`, `num_actions` and `states_sha256` (a
  SHA-256 of the infoset keys in row order, so a file whose rows follow
  another order is refused);
* `sha256`, `checkpoint_io.array_digest` of the two above.

    save_tabular_policy("cfr_plus.npz", game, solver.average_policy())
    policy = load_tabular_policy("cfr_plus.npz", game)   # a TabularPolicy

`cfrx-oftrl-cfr --save_policy=FILE` writes one; `cfrx-explore --policy=FILE`
reads one.
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from openspiel_cfrx.checkpoint_io import array_digest, atomic_write, read_checked_npz
from openspiel_cfrx.tree import (
    empty_tabular_policy,
    get_tree,
    strategy_from_policy,
    tabular_policy_from_strategy,
)
from openspiel_cfrx.tree.policy_conversion import same_game

POLICY_FORMAT = "openspiel_cfrx.tabular_policy/1"


def _states_digest(tabular: policy_lib.TabularPolicy) -> str:
    keys = sorted(tabular.state_lookup, key=tabular.state_lookup.get)
    return hashlib.sha256("\n".join(keys).encode("utf-8")).hexdigest()


def save_tabular_policy(path: str, game: pyspiel.Game, policy) -> int:
    """Writes `policy` (any policy `openspiel_cfrx.nash_conv` reads: a
    TabularPolicy, a solver's `average_policy()`, ...) of `game` to `path`
    atomically in the module's format; returns the file's size in bytes."""
    tree = get_tree(game)
    tabular = tabular_policy_from_strategy(tree, strategy_from_policy(tree, policy))  # TabularPolicy(game)'s rows
    probabilities = tabular.action_probability_array
    meta = {"format": POLICY_FORMAT, "game": str(game), "num_states": int(probabilities.shape[0]),
            "num_actions": int(probabilities.shape[1]), "states_sha256": _states_digest(tabular)}  # fmt: skip
    arrays = {"action_probability_array": np.asarray(probabilities, dtype=np.float64),
              "meta": np.array(json.dumps(meta))}  # fmt: skip
    arrays["sha256"] = np.array(array_digest(arrays))
    atomic_write(path, lambda f: np.savez(f, **arrays))
    return os.path.getsize(path)


def read_meta(path: str) -> dict:
    """The `meta` of a tabular policy file (checksum verified); ValueError in one line otherwise."""
    return read_checked_npz(path, "tabular policy file")[1]


def load_tabular_policy(path: str, game: pyspiel.Game) -> policy_lib.TabularPolicy:
    """The `TabularPolicy` saved in `path` by `save_tabular_policy`; ValueError in
    one line when the file is damaged or holds a policy of another game, shape
    or row order than `TabularPolicy(game)`."""
    arrays, meta = read_checked_npz(path, "tabular policy file")
    if meta.get("format") != POLICY_FORMAT:
        raise ValueError(f"{path} has format {meta.get('format')!r}, not a tabular policy file ({POLICY_FORMAT!r}, "
                         "written by openspiel_cfrx.tabular.save_tabular_policy)")  # fmt: skip
    if meta.get("game") != str(game) and not _same_game_string(meta.get("game"), game):
        raise ValueError(f"tabular policy file {path} holds a policy of {meta.get('game')}, not of {game}; "
                         "load it with its own game")  # fmt: skip
    tabular = empty_tabular_policy(get_tree(game))
    probabilities = arrays.get("action_probability_array")
    expected = tabular.action_probability_array.shape
    if probabilities is None or probabilities.shape != expected:
        found = None if probabilities is None else probabilities.shape
        raise ValueError(f"tabular policy file {path} holds action probabilities of shape {found}, but "
                         f"TabularPolicy({game}) has {expected} (states x actions); it was written for "
                         "another version of the game")  # fmt: skip
    if meta.get("states_sha256") != _states_digest(tabular):
        raise ValueError(f"tabular policy file {path} orders its rows otherwise than TabularPolicy({game})."
                         "state_lookup; it was written for another version of the game")  # fmt: skip
    tabular.action_probability_array[...] = probabilities
    return tabular


def _same_game_string(stored, game: pyspiel.Game) -> bool:
    """True when the game string `stored` loads the same game as `game` ('kuhn_poker' and 'kuhn_poker()')."""
    try:
        return same_game(pyspiel.load_game(str(stored)), game)
    except (pyspiel.SpielError, RuntimeError, ValueError):
        return False
