"""Conversions between array strategies `[num_infosets, num_actions]` (rows in
`GameTree` infoset order) and OpenSpiel policies, keyed by
`information_state_string`.

Policies are read in the cheapest way they support:

1. `np.ndarray` of shape [N, A]: used as is (must follow the tree's order).
2. Objects with `strategy_array(tree) -> [N, A]` (our solvers implement it).
3. `policy.TabularPolicy` (unless it overrides `action_probabilities`): rows are
   gathered with one fancy-index from `action_probability_array`.
4. C++ `pyspiel.Policy` objects (e.g. `pyspiel.CFRSolver().average_policy()`):
   `get_state_policy(information_state_string)` once per infoset.
5. Objects with `batch_action_probabilities(states) -> [len(states), A]`
   (e.g. neural policies), called on all infosets in batches of `batch_size`.
6. Any `policy.Policy`: `action_probabilities(state)` once per infoset.
"""

from __future__ import annotations

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from openspiel_cfrx.tree.game_tree import GameTree

DEFAULT_BATCH_SIZE = 4096


def policy_game(policy) -> pyspiel.Game | None:
    """The game `policy` was built for, where it says: an OpenSpiel `Policy`'s
    `game` (TabularPolicy, neural solvers, ...), a solver's `_game`; else None."""
    for name in ("game", "_game"):
        game = getattr(policy, name, None)
        if isinstance(game, pyspiel.Game):
            return game
    return None


def same_game(a: pyspiel.Game, b: pyspiel.Game) -> bool:
    """The same game: the same short name and parameters (defaults filled in, so
    'kuhn_poker' and 'kuhn_poker(players=2)' are one game)."""
    if a is b:
        return True
    try:
        return a.get_type().short_name == b.get_type().short_name and a.get_parameters() == b.get_parameters()
    except (AttributeError, RuntimeError, pyspiel.SpielError):
        return str(a) == str(b)


def check_policy_game(game: pyspiel.Game, policy, what: str = "policy") -> None:
    """ValueError in one line when `policy` says it belongs to another game than `game`."""
    own = policy_game(policy)
    if own is not None and not same_game(own, game):
        raise ValueError(f"{what} is a {type(policy).__name__} of game {own}, not of {game}: evaluate it in its "
                         f"own game, or build the policy for {game.get_type().short_name}")  # fmt: skip


def _another_game(tree: GameTree, i: int, error: Exception) -> ValueError:
    return ValueError(
        f"policy cannot answer infoset {tree.infoset_key[i]!r} of player {int(tree.infoset_player[i])} of "
        f"{tree.game} ({type(error).__name__}: {str(error).strip()[:120]}): is it a policy of another game? "
        "Build it for this game"
    )


def _tabular_rows(tree: GameTree, tabular: policy_lib.TabularPolicy) -> np.ndarray:
    """Row of `tabular.action_probability_array` for each infoset: [N] int64.

    Cached on the tree per `state_lookup` dict (policies copied with
    `__copy__` share it), so repeated evaluation during training is one gather.
    """
    cache = tree.__dict__.setdefault("_tabular_rows_cache", {})
    lookup = tabular.state_lookup
    hit = cache.get(id(lookup))
    if hit is not None and hit[0] is lookup and hit[1] == len(lookup):
        return hit[2]
    rows = np.empty(tree.num_infosets, dtype=np.int64)
    for i, key in enumerate(tree.infoset_key):
        row = lookup.get(key)
        if row is None:
            raise ValueError(
                f"TabularPolicy has no entry for infoset {key!r} of player "
                f"{int(tree.infoset_player[i])}; build it with "
                "policy.TabularPolicy(game) so it covers both players"
            )
        rows[i] = row
    if len(cache) > 8:
        cache.clear()
    cache[id(lookup)] = (lookup, len(lookup), rows)
    return rows


def _fill_from_dicts(tree: GameTree, strategy: np.ndarray, ids, dicts) -> None:
    num_actions = tree.num_actions
    for i, probs in zip(ids, dicts, strict=True):
        items = probs.items() if hasattr(probs, "items") else probs
        for action, prob in items:
            if not (type(action) is int or isinstance(action, np.integer)) or not 0 <= action < num_actions:
                legal = np.flatnonzero(tree.infoset_legal_mask[i]).tolist()
                if isinstance(action, (float, np.floating)):
                    raise ValueError(
                        f"policy keys action {action!r} as a {type(action).__name__} at infoset "
                        f"{tree.infoset_key[i]!r}: actions are int ids (write {{{int(action)}: ...}} if that id "
                        f"is meant; legal here: {legal})"
                    )
                raise ValueError(
                    f"policy gives probability {prob!r} to action {action!r} at infoset "
                    f"{tree.infoset_key[i]!r} of player {int(tree.infoset_player[i])}, which is not an "
                    f"action of the game (actions are 0..{num_actions - 1}; legal here: {legal})"
                )
            strategy[i, action] = prob


def strategy_from_policy(
    tree: GameTree, policy, batch_size: int = DEFAULT_BATCH_SIZE
) -> np.ndarray:
    """Evaluates `policy` on every infoset of `tree`.

    Returns:
      strategy: [N, A] float64; probabilities of illegal actions are dropped
        (OpenSpiel's evaluators never visit them either).
    """
    num_infosets, num_actions = tree.num_infosets, tree.num_actions
    check_policy_game(tree.game, policy)
    if isinstance(policy, np.ndarray):
        if policy.shape != (num_infosets, num_actions):
            raise ValueError(
                f"strategy array has shape {policy.shape}, expected "
                f"[num_infosets, num_actions] = {(num_infosets, num_actions)} in the "
                "order of openspiel_cfrx.get_tree(game)"
            )
        return np.where(tree.infoset_legal_mask, policy.astype(np.float64, copy=False), 0.0)
    if hasattr(policy, "strategy_array"):
        return strategy_from_policy(tree, np.asarray(policy.strategy_array(tree)))
    if (
        isinstance(policy, policy_lib.TabularPolicy)
        and type(policy).action_probabilities is policy_lib.TabularPolicy.action_probabilities
    ):
        strategy = policy.action_probability_array[_tabular_rows(tree, policy)]
        return np.where(tree.infoset_legal_mask, strategy, 0.0)
    if isinstance(policy, pyspiel.Policy):
        strategy = np.zeros((num_infosets, num_actions), dtype=np.float64)
        try:
            rows = [policy.get_state_policy(key) for key in tree.infoset_key]
        except pyspiel.SpielError:
            # Some C++ policies (e.g. MCCFR's on Python games) only answer by state.
            rows = []
            for i, state in enumerate(tree.infoset_states()):
                try:
                    rows.append(policy.action_probabilities(state))
                except pyspiel.SpielError as e:  # "No policy found": a policy of another game
                    raise _another_game(tree, i, e) from None
        _fill_from_dicts(tree, strategy, range(num_infosets), rows)
        return np.where(tree.infoset_legal_mask, strategy, 0.0)
    if not hasattr(policy, "action_probabilities") and not hasattr(
        policy, "batch_action_probabilities"
    ):
        raise TypeError(
            f"cannot evaluate a {type(policy).__name__}: pass an "
            "open_spiel.python.policy.Policy, a TabularPolicy, or a [num_infosets, "
            "num_actions] numpy array"
        )
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    states = tree.infoset_states()
    strategy = np.zeros((num_infosets, num_actions), dtype=np.float64)
    if hasattr(policy, "batch_action_probabilities"):
        for lo in range(0, num_infosets, batch_size):
            hi = min(lo + batch_size, num_infosets)
            probs = np.asarray(policy.batch_action_probabilities(states[lo:hi]), dtype=np.float64)
            if probs.shape != (hi - lo, num_actions):
                raise ValueError(
                    f"batch_action_probabilities returned shape {probs.shape}, expected "
                    f"{(hi - lo, num_actions)}"
                )
            strategy[lo:hi] = probs
    else:
        def answers():
            for i, state in enumerate(states):
                try:
                    yield policy.action_probabilities(state)
                except (KeyError, pyspiel.SpielError) as e:  # no entry for the infoset
                    raise _another_game(tree, i, e) from None

        _fill_from_dicts(tree, strategy, range(num_infosets), answers())
    return np.where(tree.infoset_legal_mask, strategy, 0.0)


def tabular_policy_from_strategy(
    tree: GameTree,
    strategy: np.ndarray,
    tabular_policy: policy_lib.TabularPolicy | None = None,
) -> policy_lib.TabularPolicy:
    """Writes `strategy [N, A]` into a `policy.TabularPolicy`.

    Args:
      tabular_policy: policy to overwrite (e.g. `policy.TabularPolicy(game)`);
        by default one is built from the tree's representative states, which
        avoids OpenSpiel's full-state enumeration but has the same keys.
    """
    if strategy.shape != (tree.num_infosets, tree.num_actions):
        raise ValueError(
            f"strategy has shape {strategy.shape}, expected {(tree.num_infosets, tree.num_actions)}"
        )
    if tabular_policy is None:
        tabular_policy = empty_tabular_policy(tree)
    rows = _tabular_rows(tree, tabular_policy)
    tabular_policy.action_probability_array[rows] = strategy
    return tabular_policy


def empty_tabular_policy(tree: GameTree) -> policy_lib.TabularPolicy:
    """A uniform `TabularPolicy` equal, row for row, to `policy.TabularPolicy(game)`
    (same `state_lookup`, `legal_actions_mask`, `states`, `state_in`), built
    without OpenSpiel's `get_all_states` walk.

    OpenSpiel orders rows by player, then by the smallest `history_str()` of
    the infoset's states; the tree's representative state of each infoset is
    that state (see `extract`), so handing OpenSpiel exactly those states keyed
    by their history strings reproduces its order.
    """
    states = {s.history_str(): s for s in tree.infoset_states()}
    return policy_lib.TabularPolicy(tree.game, states=states)


def uniform_strategy(tree: GameTree) -> np.ndarray:
    """Uniform over legal actions: [N, A]."""
    mask = tree.infoset_legal_mask.astype(np.float64)
    return mask / mask.sum(axis=1, keepdims=True)
