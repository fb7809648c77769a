"""openspiel_cfrx: Deep CFR, CFR-MIX and OFTRL-CFR as OpenSpiel drop-ins.

Public front doors:
  * `nash_conv(game, policy)` / `exploitability(game, policy)`: exact, with
    OpenSpiel's conventions: flop hold'em games (two-player limit
    universal_poker, two rounds) on the poker public-tree engine
    (`openspiel_cfrx.poker.poker_nash_conv`), every other game on a cached
    array view of its game tree (`openspiel_cfrx.tree`).
  * `DeepCFRSolver`, `CFRMixSolver` (loaded on first access: they import torch),
    the tabular CFR family, `load_game(string)`.
"""

from openspiel_cfrx import tree as _tree
from openspiel_cfrx.game_loading import GameStringError, load_game  # noqa: F401
from openspiel_cfrx.tabular import (  # noqa: F401
    CFRPlusSolver,
    CFRSolver,
    DCFRSolver,
    LCFRSolver,
    OFTRLCFRSolver,
    PCFRPlusSolver,
)
from openspiel_cfrx.tree import GameTree, NashConvResult, get_tree  # noqa: F401

__version__ = "0.3.0.dev0"

# The neural solvers load torch; they are imported on first use, so that the
# tabular side, the tree engine and `openspiel_cfrx.team` (which `import
# games` uses) do not pay for torch.
_LAZY = {
    "DeepCFRSolver": "openspiel_cfrx.deep.deep_cfr",
    "CFRMixSolver": "openspiel_cfrx.cfr_mix",
}


def _poker_engine(game, policy):
    """`openspiel_cfrx.poker.exploitability` when it evaluates `game` (flop hold'em) and
    `policy` is not an array in `get_tree(game)` order; else None (the tree engine)."""
    inner = game.universal_poker_game() if callable(getattr(game, "universal_poker_game", None)) else game
    if getattr(policy, "ndim", None) is not None or not hasattr(inner, "get_type") or \
            inner.get_type().short_name != "universal_poker":  # fmt: skip
        return None
    from openspiel_cfrx.poker import exploitability as engine  # loads numba: only for poker games

    return engine if engine.supported(game) else None


def nash_conv(game, policy, return_only_nash_conv: bool = True, use_cpp_br: bool = False,
              max_memory_bytes: int | None = None, check: bool = True):  # fmt: skip
    """Exact NashConv of `policy` in `game`, as OpenSpiel's `exploitability.nash_conv`
    (arguments and result: `openspiel_cfrx.tree.nash_conv`). Flop hold'em games
    go to the poker engine (`openspiel_cfrx.poker.poker_nash_conv`: the full
    game's uniform policy in seconds, any policy read per public node), every
    other game to the game-tree engine; both agree to ~1e-9 where both run."""
    engine = _poker_engine(game, policy)
    if engine is None:
        return _tree.nash_conv(game, policy, return_only_nash_conv, use_cpp_br, max_memory_bytes, check)
    if return_only_nash_conv:
        return engine.poker_nash_conv(game, policy, check=check, max_memory_bytes=max_memory_bytes)
    result = engine.poker_nash_conv(game, policy, return_details=True, check=check,
                                    max_memory_bytes=max_memory_bytes)
    return NashConvResult(nash_conv=result.nash_conv, player_improvements=result.player_improvements,
                          best_response_values=result.best_response_values,
                          on_policy_values=result.on_policy_values, exploitability=result.exploitability)  # fmt: skip


def exploitability(game, policy, max_memory_bytes: int | None = None, check: bool = True) -> float:
    """(sum of best-response values - utility sum) / 2, as OpenSpiel's `exploitability`
    (flop hold'em on the poker engine, as `nash_conv`)."""
    engine = _poker_engine(game, policy)
    if engine is None:
        return _tree.exploitability(game, policy, max_memory_bytes, check)
    return engine.poker_exploitability(game, policy, check=check, max_memory_bytes=max_memory_bytes)


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'openspiel_cfrx' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
