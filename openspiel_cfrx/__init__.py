"""openspiel_cfrx: Deep CFR, CFR-MIX and OFTRL-CFR as OpenSpiel drop-ins.

Public front doors:
  * `nash_conv(game, policy)` / `exploitability(game, policy)`: exact, computed on
    a cached array view of the game tree (`openspiel_cfrx.tree`), with
    OpenSpiel's conventions.
  * `DeepCFRSolver`, `CFRMixSolver` (loaded on first access: they import torch),
    the tabular CFR family, `load_game(string)`.
"""

from openspiel_cfrx.game_loading import GameStringError, load_game  # noqa: F401
from openspiel_cfrx.tabular import (  # noqa: F401
    CFRPlusSolver,
    CFRSolver,
    DCFRSolver,
    LCFRSolver,
    OFTRLCFRSolver,
    PCFRPlusSolver,
)
from openspiel_cfrx.tree import (  # noqa: F401
    GameTree,
    NashConvResult,
    exploitability,
    get_tree,
    nash_conv,
)

__version__ = "0.3.0.dev0"

# The neural solvers load torch; they are imported on first use, so that the
# tabular side, the tree engine and `openspiel_cfrx.team` (which `import
# games` uses) do not pay for torch.
_LAZY = {
    "DeepCFRSolver": "openspiel_cfrx.deep.deep_cfr",
    "CFRMixSolver": "openspiel_cfrx.cfr_mix",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'openspiel_cfrx' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
