"""What the explorer reads: the kind of game it is given, and the policies
named on the command line.

`game_kind(game)` says which explorer shows a game: "poker" (flop hold'em
variants, `analysis.Explorer`), "cards" (Kuhn and Leduc poker,
`cards.CardExplorer`) or "team" (factored team games such as team Goofspiel
and NEST, `team.TeamExplorer`); any other game is refused in one line.
`load_policy(game, spec)` reads a policy: "uniform", "module:function", or a
file (a Deep CFR checkpoint or policy file, a CFR-MIX checkpoint, a VectorCFR
strategy file, a tabular policy file). Files are never unpickled.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import re
import zipfile

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from openspiel_cfrx.poker.exploitability import supported
from openspiel_cfrx.tabular.policy_file import POLICY_FORMAT, load_tabular_policy
from openspiel_cfrx.team import is_factored_team_game

MODULE_FUNCTION = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
CARD_GAMES = ("kuhn_poker", "leduc_poker")  # OpenSpiel's small poker games, shown as card lists
TABULAR_CHECKPOINT = "openspiel_cfrx.tabular/"  # the format prefix of TabularSolver.save checkpoints


class ExploreError(ValueError):
    """A policy, game or option the explorer cannot use (one line saying why)."""


@dataclasses.dataclass
class NamedPolicy:
    """A policy as named on the command line (`load_policy`): an OpenSpiel
    policy, or a VectorCFR strategy file (flop hold'em only)."""

    name: str
    policy: object = None
    strategy_file: str = ""
    file_isomorphism: bool = False


def game_kind(game) -> str:
    """"poker", "cards" or "team" (module doc); ExploreError (one line) for any other game."""
    if not isinstance(game, pyspiel.Game):
        raise ExploreError(f"the explorer needs a pyspiel.Game, got {type(game).__name__}")
    if supported(game):
        return "poker"
    if game.get_type().short_name in CARD_GAMES and game.num_players() == 2:
        return "cards"
    if is_factored_team_game(game):
        return "team"
    raise ExploreError(f"the explorer reads flop hold'em variants (e.g. flop_holdem(num_ranks=4,num_suits=2)), "
                       f"two-player kuhn_poker and leduc_poker, and factored team games (team_goofspiel, nest); "
                       f"{game} is none of these (HULH is not supported)")  # fmt: skip


def load_policy(game: pyspiel.Game, spec: str) -> NamedPolicy:
    """A policy named by `spec`: "uniform"; a file (a Deep CFR checkpoint or
    policy file, or a CFR-MIX checkpoint for a team game, loaded with
    `torch.load(weights_only=True)`; a VectorCFR strategy `.npz` from
    `vector_cfr.save_strategy` or a tabular policy `.npz` from
    `tabular.save_tabular_policy`, loaded without pickle); or
    "module:function", `function(game)` returning an OpenSpiel policy."""
    spec = spec.strip()
    if not spec:
        raise ExploreError("empty policy name; give uniform, a policy file, or module:function")
    if spec == "uniform":
        return NamedPolicy(spec, policy_lib.UniformRandomPolicy(game))
    if os.path.isfile(spec):
        return _policy_file(game, spec)
    if os.path.exists(spec):
        raise ExploreError(f"policy {spec!r} is not a regular file; give a checkpoint, strategy or policy file")
    if MODULE_FUNCTION.fullmatch(spec):
        return _policy_function(game, spec)
    raise ExploreError(f"policy {spec!r} is neither uniform, an existing file (a Deep CFR checkpoint or policy "
                       "file, a CFR-MIX checkpoint, a VectorCFR strategy or tabular policy .npz) nor "
                       "module:function")  # fmt: skip


def _policy_file(game: pyspiel.Game, path: str) -> NamedPolicy:
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError) as e:
        raise ExploreError(f"policy file {path!r} is neither a Deep CFR or CFR-MIX checkpoint, a VectorCFR "
                           f"strategy file nor a tabular policy file ({e})") from None  # fmt: skip
    if "meta.npy" in names:  # numpy .npz: a VectorCFR strategy or a tabular policy
        return _npz_file(game, path)
    if any(name.endswith("data.pkl") for name in names):  # torch.save's zip layout
        return _checkpoint(game, path)
    raise ExploreError(f"policy file {path!r} is a zip archive but neither a Deep CFR or CFR-MIX checkpoint, a "
                       "VectorCFR strategy file nor a tabular policy file")  # fmt: skip


def _npz_file(game: pyspiel.Game, path: str) -> NamedPolicy:
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
    except (ValueError, KeyError, OSError) as e:
        raise ExploreError(f"policy file {path!r} cannot be read ({e})") from None
    found = str(meta.get("format", ""))
    if found == POLICY_FORMAT:
        try:
            return NamedPolicy(os.path.basename(path), load_tabular_policy(path, game))
        except ValueError as e:
            raise ExploreError(str(e)) from None
    if found.startswith(TABULAR_CHECKPOINT):
        raise ExploreError(f"{path!r} is a tabular solver checkpoint, not a policy; write the policy with "
                           "cfrx-oftrl-cfr --save_policy (openspiel_cfrx.tabular.save_tabular_policy)")  # fmt: skip
    if game_kind(game) != "poker":
        raise ExploreError(f"{path!r} is a VectorCFR strategy file (format {found!r}), which only flop hold'em "
                           f"games read; {game} is not one")  # fmt: skip
    return NamedPolicy(os.path.basename(path), strategy_file=path, file_isomorphism=bool(meta.get("isomorphism")))


def _checkpoint(game: pyspiel.Game, path: str) -> NamedPolicy:
    """A Deep CFR checkpoint or policy file, or for a team game a CFR-MIX checkpoint."""
    from openspiel_cfrx.deep import CheckpointError

    if game_kind(game) == "team":
        from openspiel_cfrx.cfr_mix import CFRMixSolver as solver_class
    else:
        from openspiel_cfrx.deep import DeepCFRSolver as solver_class
    try:
        solver = solver_class.from_checkpoint(path, game)
    except CheckpointError as e:
        raise ExploreError(str(e)) from None
    if solver_class.__name__ == "DeepCFRSolver" and solver.average_policy != "network":
        raise ExploreError(f"{path!r} plays average_policy={solver.average_policy!r}; the explorer reads "
                           "the average-policy network (AveragingSettings(average_policy='network'))")  # fmt: skip
    return NamedPolicy(os.path.basename(path), solver)


def _policy_function(game: pyspiel.Game, spec: str) -> NamedPolicy:
    module_name, _, function_name = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ExploreError(f"policy {spec!r}: cannot import {module_name} ({e})") from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ExploreError(f"policy {spec!r}: {module_name} has no function {function_name}")
    policy = function(game)
    if not (hasattr(policy, "action_probabilities") or hasattr(policy, "batch_action_probabilities")
            or hasattr(policy, "probabilities_from_tensors")):  # fmt: skip
        raise ExploreError(f"policy {spec!r} returned a {type(policy).__name__}, not an OpenSpiel policy "
                           "(an object with action_probabilities(state))")  # fmt: skip
    return NamedPolicy(spec, policy)


__all__ = ["CARD_GAMES", "ExploreError", "NamedPolicy", "game_kind", "load_policy"]
