"""CFR-MIX (Li et al. 2021) for factored team games, on the neural core of `openspiel_cfrx.deep`.

    solver = openspiel_cfrx.CFRMixSolver(team_game, num_iterations=50)
    solver.solve()
    openspiel_cfrx.nash_conv(team_game, solver)       # tiny instances, exact

The solver (`solver`: `CFRMixSolver`, the variants of Section 5 in
`VARIANTS`) and the parts only it uses: `settings` (CFR-MIX's settings groups
and `CFRMixSettings`, built on the machinery of `deep.settings`),
`probe_traversal` (Algorithms 2-3), `agent_network` (agent networks and the
mixing layer), `team_model` (one player's model with its trainer and memory;
`ProbeSampler`) and `team_policy` (the OpenSpiel `Policy` views of the
product-form strategy). Imports go one way: this package imports
`openspiel_cfrx.deep` (`NeuralSolver`, `Trainer`, memories, networks,
`WorkerSettings`, checkpoints, ...); `deep` never imports it.
"""

from openspiel_cfrx.cfr_mix.settings import (
    VARIANTS,
    AccumulationSettings,
    AgentNetworkSettings,
    CFRMixSettings,
    MixTrainingSettings,
    ProbeTraversalSettings,
)
from openspiel_cfrx.cfr_mix.solver import CFRMixSolver

__all__ = [
    "VARIANTS",
    "AccumulationSettings",
    "AgentNetworkSettings",
    "CFRMixSettings",
    "CFRMixSolver",
    "MixTrainingSettings",
    "ProbeTraversalSettings",
]
