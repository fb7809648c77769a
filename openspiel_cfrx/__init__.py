"""openspiel_cfrx: Deep CFR, CFR-MIX and OFTRL-CFR as OpenSpiel drop-ins.

Public front doors:
  * `nash_conv(game, policy)` / `exploitability(game, policy)`: exact, computed on
    a cached array view of the game tree (`openspiel_cfrx.tree`), with
    OpenSpiel's conventions.
"""

from openspiel_cfrx.deep.cfr_mix import CFRMixSolver  # noqa: F401
from openspiel_cfrx.deep.deep_cfr import DeepCFRSolver  # noqa: F401
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

__version__ = "0.1.0"
