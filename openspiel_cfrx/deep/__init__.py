"""Deep CFR (Brown et al. 2019) with batched traversals, on the shared neural core.

    solver = openspiel_cfrx.DeepCFRSolver(pyspiel.load_game("leduc_poker"))
    policy_network, advantage_losses, policy_loss = solver.solve()
    openspiel_cfrx.nash_conv(game, solver)       # exact, all infosets batched

The shared core, which Deep CFR here and CFR-MIX (`openspiel_cfrx.cfr_mix`,
one layer up: it imports this package, never the reverse) compose:
`solver_base` (iteration loop, timing, progress, callbacks, seeds,
checkpoints from each part's state_dict), `sampler` (where samples come from:
pyspiel-state, tree and vectorised backends over `traversal` /
`vector_traversal`), `trainer` (one SGD loop and the losses, with the
duplicate-merging identity explicit), `regret_matching`, `schedule` (ramps and
learning-rate schedule), `settings` (Deep CFR's settings groups and the
machinery CFR-MIX's groups share), `memories`, `networks` (MLP, FlatAdam, the
network registry; the Appendix C poker network and the suit-symmetric network
register from `openspiel_cfrx.neural_poker`), `checkpoint`, `distributed`,
`threads`, `validation`. `settings` is the bottom of the package: it imports
none of the implementations, whose allowed names it reads from registries
they fill on import. The solver: `deep_cfr` (with `average_strategy`: the
average policy network or SD-CFR's mixture of iterates).
"""

from openspiel_cfrx.deep.checkpoint import CheckpointError
from openspiel_cfrx.deep.deep_cfr import DeepCFRSolver, InformationStateTensorEncoder
from openspiel_cfrx.deep.memories import ReservoirMemory, SlidingWindowMemory, make_memory
from openspiel_cfrx.deep.networks import (
    MLP,
    count_parameters,
    make_network,
    masked_softmax,
    network_names,
    register_network,
    reset_parameters,
)
from openspiel_cfrx.deep.regret_matching import regret_matching
from openspiel_cfrx.deep.schedule import Schedule
from openspiel_cfrx.deep.settings import (
    AveragingSettings,
    DeepCFRSettings,
    MemorySettings,
    NetworkSettings,
    ReportingSettings,
    TrainingSettings,
    TraversalSettings,
    WorkerSettings,
)
from openspiel_cfrx.deep.solver_base import NeuralSolver
from openspiel_cfrx.deep.trainer import Trainer, WeightedSquaredLoss
from openspiel_cfrx.deep.traversal import (
    TraversalRecord,
    external_sampling_traversal,
    legal_mask,
    run_batched,
)
from openspiel_cfrx.sampling import Sampler, Samples

__all__ = [
    "MLP",
    "AveragingSettings",
    "CheckpointError",
    "DeepCFRSettings",
    "MemorySettings",
    "NetworkSettings",
    "ReportingSettings",
    "TrainingSettings",
    "TraversalSettings",
    "WorkerSettings",
    "DeepCFRSolver",
    "InformationStateTensorEncoder",
    "NeuralSolver",
    "Sampler",
    "Samples",
    "Schedule",
    "Trainer",
    "WeightedSquaredLoss",
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
