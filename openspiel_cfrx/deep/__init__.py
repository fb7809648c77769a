"""Deep CFR (Brown et al. 2019) with batched traversals, and the parts CFR-MIX reuses.

    solver = openspiel_cfrx.DeepCFRSolver(pyspiel.load_game("leduc_poker"))
    policy_network, advantage_losses, policy_loss = solver.solve()
    openspiel_cfrx.nash_conv(game, solver)       # exact, all infosets batched

Modules: `traversal` (external sampling as generators yielding network
queries, answered in batches), `memories` (reservoir / sliding window on
preallocated arrays), `networks` (MLP with skip connections and normalisation,
regret matching, network registry), `poker_network` (the Appendix C card/bet
network, `network="poker"`), `checkpoint`, `deep_cfr` (the solver).
"""

from openspiel_cfrx.deep.checkpoint import CheckpointError
from openspiel_cfrx.deep.deep_cfr import DeepCFRSolver, InformationStateTensorEncoder
from openspiel_cfrx.deep.memories import ReservoirMemory, SlidingWindowMemory, make_memory
from openspiel_cfrx.deep.networks import (
    MLP,
    make_network,
    masked_softmax,
    network_names,
    register_network,
    regret_matching,
    reset_parameters,
)
from openspiel_cfrx.deep.poker_network import PokerNetwork, count_parameters  # registers "poker"
from openspiel_cfrx.deep.traversal import (
    TraversalRecord,
    external_sampling_traversal,
    legal_mask,
    run_batched,
)

__all__ = [
    "MLP",
    "CheckpointError",
    "DeepCFRSolver",
    "InformationStateTensorEncoder",
    "PokerNetwork",
    "ReservoirMemory",
    "SlidingWindowMemory",
    "TraversalRecord",
    "count_parameters",
    "external_sampling_traversal",
    "legal_mask",
    "make_memory",
    "make_network",
    "masked_softmax",
    "network_names",
    "register_network",
    "regret_matching",
    "reset_parameters",
    "run_batched",
]
