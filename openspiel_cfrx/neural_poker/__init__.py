"""Neural solvers meet the poker engine: the layer above `openspiel_cfrx.deep`
and `openspiel_cfrx.poker` (neither imports the other or this package).

* `network_policy`: `NetworkStrategy` + `InformationStateTensors` (or
  `CardSlotInputs`, the Appendix C network's card indices): a batched
  network's strategy on the public tree from inputs built per public node,
  without pyspiel states (torch-free).
* `traversal`: `PokerSampler`, Deep CFR's "poker" traversal backend (external
  sampling on the betting tree, deals as arrays; torch-free).
* `poker_network`: the Deep CFR paper's Appendix C card/bet network
  (`network="poker"`; torch).
* `suit_symmetric`: a suit-symmetric MLP over information-state tensors
  (`network="suit_symmetric_mlp"`; torch).

The solvers find the registered names through `openspiel_cfrx.registry`
(imported on first use); import the modules directly for their classes.
"""

from openspiel_cfrx.neural_poker.network_policy import (
    CardSlotInputs,
    InformationStateTensors,
    NetworkStrategy,
)
from openspiel_cfrx.neural_poker.traversal import PokerSampler

__all__ = ["CardSlotInputs", "InformationStateTensors", "NetworkStrategy", "PokerSampler"]
