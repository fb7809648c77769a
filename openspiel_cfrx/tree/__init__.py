"""Array-based game-tree engine and the exact exploitability front door.

    tree = openspiel_cfrx.get_tree(game)          # extracted once, cached per game
    openspiel_cfrx.nash_conv(game, policy)        # same signature as OpenSpiel's
    openspiel_cfrx.exploitability(game, policy)   # = nash_conv / 2 for zero-sum

Conventions follow `open_spiel.python.algorithms.exploitability`:
`nash_conv` = sum over players of (best-response value - on-policy value);
`exploitability` = (sum of best-response values - game.utility_sum()) / 2.
Both are in the game's utility units (chips for poker; see the evaluation
layer for mbb/g).
"""

from __future__ import annotations

import collections
import dataclasses
import threading

import numpy as np
import pyspiel

from openspiel_cfrx.tree.game_tree import (
    CHANCE,
    TERMINAL,
    GameTree,
    TreeTooLargeError,
    UnsupportedGameError,
    check_game_supported,
    estimate_num_histories,
    extract,
)
from openspiel_cfrx.tree.policy_conversion import (
    empty_tabular_policy,
    strategy_from_policy,
    tabular_policy_from_strategy,
    uniform_strategy,
)
from openspiel_cfrx.tree.sequence_form import (
    BestResponseResult,
    best_response,
    own_plan,
    propagate_values,
    realization_plan,
    sequence_payoffs,
    sequence_payoffs_and_reach,
)

__all__ = [
    "CHANCE",
    "TERMINAL",
    "BestResponseResult",
    "GameTree",
    "NashConvResult",
    "TreeTooLargeError",
    "UnsupportedGameError",
    "best_response",
    "check_game_supported",
    "check_strategy",
    "clear_tree_cache",
    "empty_tabular_policy",
    "estimate_num_histories",
    "exploitability",
    "extract",
    "get_tree",
    "nash_conv",
    "own_plan",
    "propagate_values",
    "realization_plan",
    "sequence_payoffs",
    "sequence_payoffs_and_reach",
    "strategy_from_policy",
    "tabular_policy_from_strategy",
    "uniform_strategy",
]

_TREE_CACHE_SIZE = 4
_tree_cache: collections.OrderedDict[str, GameTree] = collections.OrderedDict()
_tree_cache_lock = threading.Lock()


def get_tree(game: pyspiel.Game | str, max_memory_bytes: int | None = None) -> GameTree:
    """Extracted tree of `game` (a pyspiel.Game or a load_game string).

    The last few trees are cached by the game's full string (name and
    parameters), so repeated evaluation during training costs only array work.
    A game too large for `max_memory_bytes` (default: 60% of available memory)
    is refused with `TreeTooLargeError` before it is walked (see `extract`).
    """
    if isinstance(game, str):
        game = pyspiel.load_game(game)
    key = str(game)
    with _tree_cache_lock:
        tree = _tree_cache.get(key)
        if tree is not None:
            _tree_cache.move_to_end(key)
            return tree
    tree = extract(game, max_memory_bytes=max_memory_bytes)
    with _tree_cache_lock:
        _tree_cache[key] = tree
        while len(_tree_cache) > _TREE_CACHE_SIZE:
            _tree_cache.popitem(last=False)
    return tree


def clear_tree_cache() -> None:
    """Drops all cached trees (frees their memory)."""
    with _tree_cache_lock:
        _tree_cache.clear()


@dataclasses.dataclass
class NashConvResult:
    """Result of `nash_conv(..., return_only_nash_conv=False)`.

    Has OpenSpiel's `nash_conv` and `player_improvements` fields plus the
    best-response and on-policy values per player.
    """

    nash_conv: float
    player_improvements: np.ndarray  # [2]
    best_response_values: np.ndarray  # [2]
    on_policy_values: np.ndarray  # [2]
    exploitability: float


# How far a row's legal probabilities may sum from 1 (float32 network outputs
# normalised in float32 are within ~1e-6).
POLICY_SUM_TOLERANCE = 1e-4


def check_strategy(tree: GameTree, strategy: np.ndarray) -> None:
    """Raises ValueError naming the first infoset where `strategy [N, A]` is not a
    probability distribution over the legal actions (NaN/inf, negative, or a
    sum other than 1, e.g. a policy with no entry for the infoset)."""
    legal = tree.infoset_legal_mask
    masked = np.where(legal, strategy, 0.0)
    finite = np.isfinite(masked).all(axis=1)
    totals = masked.sum(axis=1)
    bad = ~finite | (masked < 0).any(axis=1) | ~(np.abs(totals - 1.0) <= POLICY_SUM_TOLERANCE)
    if not bad.any():
        return
    i = int(np.flatnonzero(bad)[0])
    row = masked[i][legal[i]]
    if not finite[i]:
        problem = "has non-finite probabilities"
    elif (row < 0).any():
        problem = "has negative probabilities"
    elif totals[i] == 0:
        problem = "gives no probability to any legal action (missing entry?)"
    else:
        problem = f"has probabilities summing to {totals[i]:.6g}, not 1"
    raise ValueError(
        f"policy is not a distribution at infoset {tree.infoset_key[i]!r} of player "
        f"{int(tree.infoset_player[i])} ({int(bad.sum())} bad infosets in all): it {problem} "
        f"over legal actions {np.flatnonzero(legal[i]).tolist()}: {np.round(row, 6).tolist()}; "
        "fix the policy, or pass check=False to evaluate it as is"
    )


def _evaluate(game, policy, max_memory_bytes=None, check=True) -> tuple[GameTree, BestResponseResult]:
    tree = get_tree(game, max_memory_bytes=max_memory_bytes)
    strategy = strategy_from_policy(tree, policy)
    if check:
        check_strategy(tree, strategy)
    return tree, best_response(tree, strategy)


def nash_conv(
    game,
    policy,
    return_only_nash_conv: bool = True,
    use_cpp_br: bool = False,
    max_memory_bytes: int | None = None,
    check: bool = True,
):
    """Exact NashConv of `policy` in `game`, as OpenSpiel's `exploitability.nash_conv`.

    Args:
      game: a 2-player zero-/constant-sum sequential pyspiel.Game.
      policy: any `open_spiel.python.policy.Policy` (TabularPolicy is read
        directly), an object with `batch_action_probabilities(states)` or
        `strategy_array(tree)`, or a [num_infosets, num_actions] array in
        `get_tree(game)` order.
      return_only_nash_conv: as in OpenSpiel; False returns a `NashConvResult`.
      use_cpp_br: accepted for signature compatibility; ignored (always exact).
      max_memory_bytes: memory limit for extracting the game's tree (default
        60% of available memory); larger games raise `TreeTooLargeError`.
      check: first verify that the policy is a probability distribution over
        the legal actions at every infoset (ValueError naming the first bad
        infoset otherwise; NaN, negative, missing or unnormalised rows);
        False evaluates it as is, as OpenSpiel does.
    """
    del use_cpp_br
    tree, result = _evaluate(game, policy, max_memory_bytes, check)
    value = result.nash_conv
    if return_only_nash_conv:
        return value
    return NashConvResult(
        nash_conv=value,
        player_improvements=result.player_improvements,
        best_response_values=result.best_response_values,
        on_policy_values=result.on_policy_values,
        exploitability=float(
            (np.sum(result.best_response_values) - tree.game.utility_sum()) / 2
        ),
    )


def exploitability(
    game, policy, max_memory_bytes: int | None = None, check: bool = True
) -> float:
    """(sum of best-response values - utility sum) / 2, as OpenSpiel's
    `exploitability`; `max_memory_bytes` and `check` as in `nash_conv`."""
    tree, result = _evaluate(game, policy, max_memory_bytes, check)
    return float((np.sum(result.best_response_values) - tree.game.utility_sum()) / 2)
