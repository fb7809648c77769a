"""Deep CFR's settings as typed, frozen groups, one per concern.

`DeepCFRSolver` keeps OpenSpiel's fifteen constructor arguments
(`open_spiel.python.pytorch.deep_cfr.DeepCFRSolver`: layers, iterations,
traversals, learning rate, batch sizes, memory capacity, train steps,
reinitialisation, device, seed, print_nash_convs) and takes everything the
paper's recipe and this library add as optional groups:

    DeepCFRSolver(game, num_traversals=10_000,
                  traversal=TraversalSettings(backend="poker"),
                  averaging=AveragingSettings(average_policy="sd_cfr"),
                  workers=WorkerSettings(num_workers=4))

Each group validates itself on construction with one line naming the
setting, the rule and the value. Every field also has a flat keyword name
(`FLAT_NAMES`: `traversal_backend="poker"` is `TraversalSettings(backend=
"poker")`), so existing calls keep working; a field given both ways is
refused. `DeepCFRSettings` is the whole run configuration: what
`DeepCFRSolver.settings` holds and checkpoints record (`to_record`, with
`SCHEMA`).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import openspiel_cfrx.deep.sampler  # noqa: F401  (registers the backends the defaults name)
from openspiel_cfrx.deep.average_strategy import AVERAGE_WEIGHTINGS, KINDS
from openspiel_cfrx.deep.memories import FEATURE_DTYPES, MEMORIES
from openspiel_cfrx.deep.regret_matching import FALLBACKS
from openspiel_cfrx.deep.schedule import Schedule
from openspiel_cfrx.deep.trainer import PRECISIONS
from openspiel_cfrx.deep.validation import check_settings
from openspiel_cfrx.sampling import SAMPLERS

SCHEMA = 1  # of `DeepCFRSettings.to_record()`; bump it (and migrate older records) when fields change


def check_family(family) -> None:
    """A network group's `family`: a registered family name (flat keyword `network`)."""
    if not isinstance(family, str):
        raise ValueError(f"network must be a registered family name (a str), got {family!r}")


class _Group:
    """A frozen settings group: `RULES` (field -> `validation` rule) checked on construction."""

    RULES: ClassVar[dict] = {}

    def __post_init__(self):
        values = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        check_settings({FIELD_NAMES[type(self), n]: v for n, v in values.items() if n in self.RULES},
                       {FIELD_NAMES[type(self), n]: rule for n, rule in self.RULES.items() if rule is not None})  # fmt: skip

    def to_record(self) -> dict:
        return {field.name: _record(getattr(self, field.name)) for field in dataclasses.fields(self)}


class _TrainingGroup(_Group):
    """What every solver's training group has: `gradient_clip`, `precision`
    (flat `training_precision`) and `schedule` (a `Schedule` or None)."""

    RULES: ClassVar[dict] = {"gradient_clip": "real>0|None", "precision": tuple(PRECISIONS)}

    def __post_init__(self):
        super().__post_init__()
        if self.schedule is not None and not isinstance(self.schedule, Schedule):
            raise ValueError("schedule must be an openspiel_cfrx.deep.Schedule, "
                             f"got {type(self.schedule).__name__}")


@dataclasses.dataclass(frozen=True)
class TraversalSettings(_Group):
    """How samples are drawn (Algorithm 2).

    backend: a registered traversal backend (`openspiel_cfrx.sampling.SAMPLERS`):
      "state" (pyspiel states, any game), "tree" (the extracted tree: the same
      samples, faster), "vectorized" (numpy arrays over the extracted tree: the
      same distribution, fastest for small games), "poker" (limit poker: deals
      as arrays over the betting tree, the same distribution).
    batch_size: traversals run together (one forward pass per player per round).
    regret_matching_fallback: sigma^t where no predicted advantage is positive:
      "argmax" (the paper) or "uniform".
    """

    backend: str = "state"
    batch_size: int = 1000
    regret_matching_fallback: str = "argmax"
    RULES: ClassVar[dict] = {"backend": None, "batch_size": "int>=1", "regret_matching_fallback": FALLBACKS}

    def __post_init__(self):
        if not isinstance(self.backend, str) or self.backend not in SAMPLERS:
            raise ValueError(f"traversal_backend must be one of {', '.join(map(repr, SAMPLERS))}, "
                             f"got {self.backend!r}")  # fmt: skip
        super().__post_init__()


@dataclasses.dataclass(frozen=True)
class TrainingSettings(_TrainingGroup):
    """How the networks are fitted (Algorithm 1 lines 6 and 8).

    gradient_clip: max gradient norm (the paper: 1); None disables clipping.
    precision: "float32" or "bfloat16" (mixed-precision SGD; float32
      parameters, loss and queries).
    regret_scale: sampled regrets are stored divided by this positive number;
      "auto" = the game's largest |utility|; "pot" (backend "poker") = the
      chips in the pot at each sample's node. Regret matching is invariant to
      it; it changes what the advantage network must output (raw chips in
      poker reach 1e2-1e3, while Adam moves a fresh head by ~lr a step) and,
      for "pot", how the loss weighs infosets against each other (an
      infoset's regrets share its pot, so each infoset's minimiser still
      implies the same sigma^t). Default 1: the paper's raw regrets.
    schedule: per-iteration ramps and learning-rate schedule (`Schedule`; None = constant).
    """

    gradient_clip: float | None = 1.0
    precision: str = "float32"
    regret_scale: float | str = 1.0
    schedule: Schedule | None = None
    RULES: ClassVar[dict] = {**_TrainingGroup.RULES, "regret_scale": "real>0|auto|pot"}


@dataclasses.dataclass(frozen=True)
class MemorySettings(_Group):
    """The reservoir memories M_V,p and M_Pi (Algorithm 1; capacity is OpenSpiel's `memory_capacity`).

    kind: "reservoir" (the paper) or "sliding_window" (Figure 4's ablation).
    strategy_capacity: the strategy memory's capacity (None = `memory_capacity`).
    feature_dtype: "float32" or "float16" (exact for 0/1 and card-index inputs; refused otherwise).
    aggregate_duplicates: fit memories merged by infoset while they hold at most
      a batch of distinct infosets (exact for the squared losses).
    """

    kind: str = "reservoir"
    strategy_capacity: int | None = None
    feature_dtype: str = "float32"
    aggregate_duplicates: bool = True
    RULES: ClassVar[dict] = {"strategy_capacity": "int>=1|None", "feature_dtype": FEATURE_DTYPES,
                             "aggregate_duplicates": "bool"}  # fmt: skip

    def __post_init__(self):
        if not isinstance(self.kind, str) or self.kind not in MEMORIES:
            raise ValueError(f"unknown memory {self.kind!r}; choose from {', '.join(MEMORIES)}")
        super().__post_init__()


@dataclasses.dataclass(frozen=True)
class AveragingSettings(_Group):
    """Iteration weights and the average strategy (Section 5.3, SD-CFR).

    linear_weighting: samples weighted by iteration t (rescaled by 2/T), else uniform.
    average_weighting: the average's own weights, "linear" or "uniform";
      None = as the regrets' (the paper's coupling).
    average_policy: "network" (the paper's average-strategy network) or
      "sd_cfr" (the exact mixture of the kept iteration networks).
    keep_iteration_networks: keep every iteration's networks (None = when
      average_policy="sd_cfr").
    """

    linear_weighting: bool = True
    average_weighting: str | None = None
    average_policy: str = "network"
    keep_iteration_networks: bool | None = None
    RULES: ClassVar[dict] = {"linear_weighting": "bool", "average_weighting": (*AVERAGE_WEIGHTINGS, None),
                             "average_policy": KINDS, "keep_iteration_networks": "bool|None"}  # fmt: skip

    def __post_init__(self):
        super().__post_init__()
        if self.average_policy == "sd_cfr" and self.keep_iteration_networks is False:
            raise ValueError("average_policy='sd_cfr' needs keep_iteration_networks=True (or None)")

    @property
    def keeps_iteration_networks(self) -> bool:
        if self.keep_iteration_networks is None:
            return self.average_policy == "sd_cfr"
        return self.keep_iteration_networks


@dataclasses.dataclass(frozen=True)
class NetworkSettings(_Group):
    """The network family (layers are OpenSpiel's `*_network_layers`).

    family: a registered family (`openspiel_cfrx.deep.register_network`: "mlp",
      "plain_mlp", "poker" (the Appendix C network), "suit_symmetric_mlp").
    options: the family's keyword arguments.
    encoder: callable(state, player) -> floats with a `feature_size`
      attribute; None = `information_state_tensor` (or the family's own).
    """

    family: str = "mlp"
    options: Mapping[str, Any] | None = None
    encoder: Callable | None = None
    RULES: ClassVar[dict] = {}

    def __post_init__(self):
        check_family(self.family)
        if self.options is not None and not isinstance(self.options, Mapping):
            raise ValueError(f"network_options must be a dict of keyword arguments, got {self.options!r}")


@dataclasses.dataclass(frozen=True)
class WorkerSettings(_Group):
    """Where traversals and training run.

    num_workers: traversals on this many Ray actors (the same seed and count
      give the same run); 1 runs them in-process without importing Ray.
    ray_address: None starts a local Ray instance; "auto", "host:port" or
      "ray://host:port" join a cluster.
    num_threads: torch's intra-op threads on CPU (process-wide): "auto" one
      for networks at most 128 units wide, else the usable CPUs
      (`deep.threads`); an int sets it; None leaves torch's setting alone.
    """

    num_workers: int = 1
    ray_address: str | None = None
    num_threads: int | str | None = "auto"
    RULES: ClassVar[dict] = {"num_workers": "int>=1", "ray_address": "address|None",
                             "num_threads": "int>=1|None|auto"}  # fmt: skip


GROUPS: dict[str, type[_Group]] = {
    "traversal": TraversalSettings, "training": TrainingSettings, "memory": MemorySettings,
    "averaging": AveragingSettings, "network": NetworkSettings, "workers": WorkerSettings,
}  # fmt: skip

# Flat keyword name of every group field (the constructor's names before the groups existed).
FLAT_NAMES: dict[str, tuple[str, str]] = {
    "traversal_backend": ("traversal", "backend"), "traversal_batch_size": ("traversal", "batch_size"),
    "regret_matching_fallback": ("traversal", "regret_matching_fallback"),
    "gradient_clip": ("training", "gradient_clip"), "training_precision": ("training", "precision"),
    "regret_scale": ("training", "regret_scale"), "schedule": ("training", "schedule"),
    "memory": ("memory", "kind"), "strategy_memory_capacity": ("memory", "strategy_capacity"),
    "memory_feature_dtype": ("memory", "feature_dtype"), "aggregate_duplicates": ("memory", "aggregate_duplicates"),
    "linear_weighting": ("averaging", "linear_weighting"), "average_weighting": ("averaging", "average_weighting"),
    "average_policy": ("averaging", "average_policy"),
    "keep_iteration_networks": ("averaging", "keep_iteration_networks"),
    "network": ("network", "family"), "network_options": ("network", "options"), "encoder": ("network", "encoder"),
    "num_workers": ("workers", "num_workers"), "ray_address": ("workers", "ray_address"),
    "num_threads": ("workers", "num_threads"),
}  # fmt: skip
FIELD_NAMES: dict[tuple[type, str], str] = {}  # (group class, field) -> flat name, for messages


def register_flat_names(groups: dict[str, type[_Group]], flat_names: dict[str, tuple[str, str]]) -> None:
    """Records the flat keyword names of a solver's groups (used in validation messages)."""
    FIELD_NAMES.update({(groups[group], name): flat for flat, (group, name) in flat_names.items()})


register_flat_names(GROUPS, FLAT_NAMES)


def resolve_groups(solver: str, groups_table: dict[str, type[_Group]], flat_names: dict[str, tuple[str, str]],
                   core: list[str], groups: dict, flat: dict,
                   defaults: Mapping[str, _Group] | None = None) -> dict[str, _Group]:  # fmt: skip
    """A solver's groups from its constructor call: `groups` (name -> group, or
    a str for the `network` / `memory` group's main field, or None) and `flat`
    keyword names (`flat_names`); a field set both ways is refused, and an
    unknown keyword gets a "did you mean". A group not given is `defaults[name]`
    (else the class's defaults) with the flat keywords' fields replaced."""
    unknown = sorted(set(flat) - set(flat_names))
    if unknown:
        close = difflib.get_close_matches(unknown[0], [*flat_names, *core, *groups_table], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise TypeError(f"{solver} got an unexpected keyword argument {unknown[0]!r}{hint}")
    main_field = {"network": "network", "memory": "memory"}  # a str stands for the group's main field
    for name, value in groups.items():
        if isinstance(value, str) and name in main_field and main_field[name] in flat_names:
            flat, groups = {**flat, main_field[name]: value}, {**groups, name: None}
        elif value is not None and not isinstance(value, groups_table[name]):
            group_cls = groups_table[name]  # named as its package exports it: openspiel_cfrx.deep / .cfr_mix
            raise ValueError(f"{name} must be an {group_cls.__module__.rpartition('.')[0]}.{group_cls.__name__} "
                             f"(or None), got {type(value).__name__}")  # fmt: skip
    built = {}
    for name, group_cls in groups_table.items():
        given = {field: flat[key] for key, (group, field) in flat_names.items() if group == name and key in flat}
        if groups.get(name) is None:
            default = (defaults or {}).get(name)
            built[name] = (group_cls(**given) if default is None
                           else dataclasses.replace(default, **given))  # fmt: skip
        elif given:
            first = next(key for key, (group, _) in flat_names.items() if group == name and key in flat)
            raise ValueError(f"{first} is given both as a keyword and in {name}={groups[name]!r}; give it once")
        else:
            built[name] = groups[name]
    return built

# OpenSpiel's constructor arguments (after `game`) and their rules.
OPENSPIEL_RULES = {
    "policy_network_layers": "layers", "advantage_network_layers": "layers",
    "num_iterations": "int>=1", "num_traversals": "int>=1", "learning_rate": "real>0",
    "batch_size_advantage": "int>=1|None", "batch_size_strategy": "int>=1|None", "memory_capacity": "int>=1",
    "policy_network_train_steps": "int>=0", "advantage_network_train_steps": "int>=0",
    "reinitialize_advantage_networks": "bool|unit", "device": None, "seed": "int>=0", "print_nash_convs": "bool",
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class DeepCFRSettings:
    """A whole Deep CFR run configuration: OpenSpiel's arguments (`openspiel`) and the groups."""

    openspiel: Mapping[str, Any]
    traversal: TraversalSettings = TraversalSettings()
    training: TrainingSettings = TrainingSettings()
    memory: MemorySettings = MemorySettings()
    averaging: AveragingSettings = AveragingSettings()
    network: NetworkSettings = NetworkSettings()
    workers: WorkerSettings = WorkerSettings()

    def __post_init__(self):
        check_settings(self.openspiel, {k: r for k, r in OPENSPIEL_RULES.items() if r is not None})
        if self.training.regret_scale == "pot" and self.traversal.backend != "poker":
            raise ValueError(f"regret_scale='pot' needs traversal_backend='poker' (it reads the pot at each node from "
                             f"the betting tree), got traversal_backend={self.traversal.backend!r}: use 'poker' for "
                             "limit poker, or regret_scale='auto' / a number")  # fmt: skip

    @classmethod
    def resolve(cls, openspiel: dict, groups: dict, flat: dict) -> DeepCFRSettings:
        """The settings of a `DeepCFRSolver` constructor call (`resolve_groups`)."""
        built = resolve_groups("DeepCFRSolver", GROUPS, FLAT_NAMES, [*OPENSPIEL_RULES], groups, flat)
        return cls(openspiel=dict(openspiel), **built)

    def to_record(self) -> dict:
        """The run configuration as plain data (checkpoints; results files)."""
        return {"schema": SCHEMA, "openspiel": {k: _record(v) for k, v in self.openspiel.items()},
                **{name: getattr(self, name).to_record() for name in GROUPS}}  # fmt: skip


def _record(value):
    if isinstance(value, Schedule):
        return {"schedule": dataclasses.asdict(value)}
    if isinstance(value, tuple):
        return [_record(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _record(v) for k, v in value.items()}
    if callable(value):
        return f"<{getattr(value, 'name', type(value).__name__)}>"
    return value
