"""CFR-MIX's settings as typed, frozen groups, one per concern (the pattern of
`deep.settings`, Deep CFR's groups).

`CFRMixSolver` takes the paper's knobs as plain arguments (variant,
iterations, traversals, layer widths, train steps, batch size, learning
rate, memory capacity, device, seed) and the rest as optional groups:

    CFRMixSolver(game, variant="cfr_mix", num_traversals=200,
                 traversal=ProbeTraversalSettings(joint_cap=128),
                 network=AgentNetworkSettings(infoset_encoding="compact"),
                 workers=WorkerSettings(num_workers=4))

A group may also be a dict of its fields (`traversal={"joint_cap": 128}`).
Each group validates itself on construction with one line naming
`Group.field`, the rule and the value. `CFRMixSettings` is the whole run
configuration: what `CFRMixSolver.settings` holds and checkpoints record
(`to_record`, with `SCHEMA`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar

from openspiel_cfrx.deep.schedule import Schedule
from openspiel_cfrx.deep.settings import (
    WorkerSettings,
    _Group,
    _record,
    _TrainingGroup,
    build_groups,
    check_family,
)
from openspiel_cfrx.deep.validation import check_settings

SCHEMA = 1  # of `CFRMixSettings.to_record()`; bump it on field changes


def _variant(backbone: str, team_view: str, regret_targets: str = "joint", share: bool = True):
    return dict(backbone=backbone, team_view=team_view, regret_targets=regret_targets, share=share)


VARIANTS = {
    # double neural + mixing layer + parameter sharing (CFR-MIX); one network per agent (Fig. 4b)
    "cfr_mix": _variant("double_neural", "factored"),
    "cfr_mix_no_sharing": _variant("double_neural", "factored", share=False),
    # Deep CFR backbone + mixing layer (Fig. 3 "Deep CFR + MIX")
    "deep_cfr_mix": _variant("deep_cfr", "factored"),
    # over joint actions (one head of size prod(n_i), small joint spaces only; DeepCFRSolver(game)
    # is the external-sampling joint-action Deep CFR)
    "double_neural_joint": _variant("double_neural", "joint"),
    "deep_cfr_joint": _variant("deep_cfr", "joint"),
    # each agent its own regret from its marginal, no mixing (Fig. 4a "individual")
    "independent": _variant("double_neural", "factored", regret_targets="independent"),
}
INFOSET_ENCODINGS = ("tensor", "compact")


@dataclasses.dataclass(frozen=True)
class ProbeTraversalSettings(_Group):
    """How the probe-sampling traversals run (Algorithms 2-3, `probe_traversal`).

    joint_cap: at the team's sampled information sets, regrets are computed
      for all legal joint actions when there are at most this many, else for
      `joint_cap` sampled ones (a* plus at least one probe: >= 2).
    batch_size: traversals run together.
    alternating_updates: True: the team traverses and trains, then the
      adversary traverses against the team's new network; False: Algorithm
      1's simultaneous updates (both players traverse against theta^t, then
      both train).
    """

    joint_cap: int = 64
    batch_size: int = 256
    alternating_updates: bool = True
    RULES: ClassVar[dict] = {"joint_cap": "int>=1", "batch_size": "int>=1",
                             "alternating_updates": "bool"}  # fmt: skip

    def __post_init__(self):
        super().__post_init__()
        if self.joint_cap < 2:
            raise ValueError("ProbeTraversalSettings.joint_cap must be >= 2 (a* plus at least one probe), "
                             f"got {self.joint_cap}")


@dataclasses.dataclass(frozen=True)
class MixTrainingSettings(_TrainingGroup):
    """How the agent networks are fitted (Algorithm 1 lines 6-9).

    gradient_clip: max gradient norm; None disables clipping.
    precision: "float32" or "bfloat16":
      the agent networks' training forward passes under bfloat16 autocast
      (parameters, Adam state, loss, the mixing layer's product and every
      query stay float32).
    schedule: traversal and regret-step ramps, learning rates of every fit
      (`Schedule`; None = constant, as the paper).
    reinitialize_regret_networks: Deep CFR backbone only: refit the regret
      networks from a fresh initialisation every iteration, or fine-tune the
      last ones; None = the variant's default (`CFRMixSettings.
      reinitializes_regret_networks`: fresh for the joint view only).
    rescale_regret_targets: True: every regret-network fit divides its
      targets by their mean |value| in that fit; False: the scale of the
      network's first fit is kept.
    """

    gradient_clip: float | None = 1.0
    precision: str = "float32"
    schedule: Schedule | None = None
    reinitialize_regret_networks: bool | None = None
    rescale_regret_targets: bool = True
    RULES: ClassVar[dict] = {**_TrainingGroup.RULES, "reinitialize_regret_networks": "bool|None",
                             "rescale_regret_targets": "bool"}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class AccumulationSettings(_Group):
    """How cumulative regrets and strategies are accumulated through the
    networks (Appendix B, Algorithm 1 lines 8-9): the double-neural backbone's
    regret networks, R^{t+1} = (R^t + r^)^+, and every variant's
    average-strategy networks, S^{t+1} = S^t + w_t * sigma^.

    anchor_ratio: each such fit also holds R^{t+1} = R^t (S^{t+1} = S^t) on
      up to this many anchor rows per sampled row, drawn from the model's
      reservoir of earlier iterations' rows (information sets sampled in this
      iteration excluded); 0 fits the sampled rows only.
    linear_averaging: w_t = t (CFR+'s linear averaging), else 1.
    """

    anchor_ratio: float = 1.0
    linear_averaging: bool = True
    RULES: ClassVar[dict] = {"anchor_ratio": "real>=0", "linear_averaging": "bool"}


@dataclasses.dataclass(frozen=True)
class AgentNetworkSettings(_Group):
    """The agent networks' family and input.

    family: a registered network name for the per-agent body
      (`openspiel_cfrx.deep.register_network`).
    infoset_encoding: "tensor" (`information_state_tensor(player)`) or
      "compact" (the game's own lossy input, `compact_information_state_array`).
    share_parameters: one agent network shared by the team's agents or one
      per agent; None = the variant's.
    """

    family: str = "mlp"
    infoset_encoding: str = "tensor"
    share_parameters: bool | None = None
    RULES: ClassVar[dict] = {"infoset_encoding": INFOSET_ENCODINGS}

    def __post_init__(self):
        check_family(self.family, type(self).__name__)
        super().__post_init__()


GROUPS: dict[str, type[_Group]] = {
    "traversal": ProbeTraversalSettings, "training": MixTrainingSettings,
    "accumulation": AccumulationSettings, "network": AgentNetworkSettings,
    "workers": WorkerSettings,
}  # fmt: skip

# The core arguments (after `game`) and their rules (`variant` has its own message).
CORE_RULES = {
    "variant": None, "num_iterations": "int>=1", "num_traversals": "int>=1",
    "regret_network_layers": "layers", "policy_network_layers": "layers",
    "regret_train_steps": "int>=1", "policy_train_steps": "int>=1", "batch_size": "int>=1",
    "learning_rate": "real>0", "memory_capacity": "int>=1", "device": None, "seed": "int>=0",
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class CFRMixSettings:
    """A whole CFR-MIX run configuration: the core arguments and the groups.

    The core arguments have no defaults here: `CFRMixSolver`'s signature holds
    them. `workers` defaults to one torch thread (`num_threads=1`), as
    `CFRMixSolver` always has; a `WorkerSettings()` given as a group has its
    own default, "auto" (`deep.threads`).
    """

    variant: str
    num_iterations: int
    num_traversals: int
    regret_network_layers: Sequence[int]
    policy_network_layers: Sequence[int]
    regret_train_steps: int
    policy_train_steps: int
    batch_size: int
    learning_rate: float
    memory_capacity: int
    device: str
    seed: int
    traversal: ProbeTraversalSettings = dataclasses.field(default_factory=ProbeTraversalSettings)
    training: MixTrainingSettings = dataclasses.field(default_factory=MixTrainingSettings)
    accumulation: AccumulationSettings = dataclasses.field(default_factory=AccumulationSettings)
    network: AgentNetworkSettings = dataclasses.field(default_factory=AgentNetworkSettings)
    workers: WorkerSettings = WorkerSettings(num_threads=1)

    def __post_init__(self):
        if not isinstance(self.variant, str) or self.variant not in VARIANTS:
            raise ValueError(f"unknown CFR-MIX variant {self.variant!r}; "
                             f"choose from {', '.join(VARIANTS)}")
        rules = {name: rule for name, rule in CORE_RULES.items() if rule is not None}
        check_settings({name: getattr(self, name) for name in CORE_RULES}, rules)

    @classmethod
    def resolve(cls, core: dict, groups: dict) -> CFRMixSettings:
        """The settings of a `CFRMixSolver` constructor call (`deep.settings.build_groups`)."""
        defaults = {f.name: f.default for f in dataclasses.fields(cls) if f.name in GROUPS and isinstance(f.default, _Group)}
        return cls(**core, **build_groups(GROUPS, groups, defaults))

    @property
    def flags(self) -> dict:
        """The variant's flags (backbone, team_view, regret_targets, share), with
        `share_parameters` applied."""
        flags = dict(VARIANTS[self.variant])
        share = self.network.share_parameters
        flags["share"] = flags["share"] if share is None else bool(share)
        return flags

    @property
    def reinitializes_regret_networks(self) -> bool:
        """`reinitialize_regret_networks`, None resolved: fresh for the joint-view variants."""
        reinitialize = self.training.reinitialize_regret_networks
        if reinitialize is None:
            return VARIANTS[self.variant]["team_view"] == "joint"
        return bool(reinitialize)

    def to_record(self) -> dict:
        """The run configuration as plain data (checkpoints; results files)."""
        core = {name: _record(getattr(self, name)) for name in CORE_RULES}
        groups = {name: getattr(self, name).to_record() for name in GROUPS}
        return {"schema": SCHEMA, "core": core, **groups}

    @staticmethod
    def shape_of(record) -> dict:
        """What a checkpoint must match of a `to_record()` (the agent networks'
        shapes, the variant, the reservoirs' size), as {"group.field": value}
        with `share_parameters` resolved."""
        core, network = record["core"], record["network"]
        share = network["share_parameters"]
        return {"core.variant": core["variant"], "core.memory_capacity": int(core["memory_capacity"]),
                **{f"core.{k}": [int(h) for h in core[k]] for k in ("regret_network_layers", "policy_network_layers")},
                "network.family": network["family"], "network.infoset_encoding": network["infoset_encoding"],
                "network.share_parameters": VARIANTS[core["variant"]]["share"] if share is None else bool(share),
                "traversal.joint_cap": int(record["traversal"]["joint_cap"])}  # fmt: skip

    @staticmethod
    def shape_arguments(record) -> dict:
        """`CFRMixSolver` keyword arguments that rebuild the shapes of a record (`shape_of`)."""
        shape = CFRMixSettings.shape_of(record)
        return {"variant": shape["core.variant"], "memory_capacity": shape["core.memory_capacity"],
                **{k: tuple(shape[f"core.{k}"]) for k in ("regret_network_layers", "policy_network_layers")},
                "network": {"family": shape["network.family"], "infoset_encoding": shape["network.infoset_encoding"],
                            "share_parameters": shape["network.share_parameters"]},
                "traversal": {"joint_cap": shape["traversal.joint_cap"]}}  # fmt: skip
