"""Neural solvers meet the poker engine: the layer above `openspiel_cfrx.deep`
and `openspiel_cfrx.poker` (neither imports the other or this package).

* `NetworkStrategy`, `InformationStateTensors`, `CardSlotInputs`: re-exported
  from `openspiel_cfrx.poker.network_inputs` (torch-free, where the poker
  evaluation reads networks too).
* `traversal`: `PokerSampler`, Deep CFR's "poker" traversal backend (external
  sampling on the betting tree, deals as arrays; torch-free).
* `poker_network`: the Deep CFR paper's Appendix C card/bet network
  (network family "poker"; torch).
* `suit_symmetric`: a suit-symmetric MLP over information-state tensors
  (network family "suit_symmetric_mlp"; torch).

The solvers find the registered names through `openspiel_cfrx.registry`
(imported on first use); import the modules directly for their classes.
"""

from openspiel_cfrx.neural_poker.traversal import PokerSampler
from openspiel_cfrx.poker.network_inputs import (
    CardSlotInputs,
    InformationStateTensors,
    NetworkStrategy,
)

__all__ = ["CardSlotInputs", "InformationStateTensors", "NetworkStrategy", "PokerSampler"]
