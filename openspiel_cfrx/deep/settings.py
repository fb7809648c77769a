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

A group may also be given as a dict of its fields (`traversal={"backend":
"poker"}`: JSON flags, presets, results files), the same names either way.
Each group validates itself on construction with one line naming
`Group.field`, the rule and the value; a field it does not have is one line
with the closest field. `ReportingSettings` (progress bar, log lines,
callbacks) is every solver's group for what it prints and calls, not part of
the run configuration. `DeepCFRSettings` is the whole run configuration:
what `DeepCFRSolver.settings` holds and checkpoints record (`to_record`,
with `SCHEMA`).

The names a setting may take that name an implementation (memory kinds,
training precisions, average policies, ...) are read from registries that
the implementing modules fill when `openspiel_cfrx.deep` is imported, the way
`sampling.SAMPLERS` holds the traversal backends; this module imports none
of the implementations.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from openspiel_cfrx.deep.schedule import Schedule
from openspiel_cfrx.deep.validation import check_settings
from openspiel_cfrx.registry import Registry
from openspiel_cfrx.sampling import SAMPLERS, reports_pot

# Filled by deep.memories, deep.trainer, deep.average_strategy and deep.regret_matching on import.
MEMORY_KINDS: Registry = Registry("memory")
FEATURE_DTYPES: Registry = Registry("memory feature dtype")
PRECISIONS: Registry = Registry("training precision")
AVERAGE_POLICIES: Registry = Registry("average policy")
AVERAGE_WEIGHTINGS: Registry = Registry("average weighting")
FALLBACKS: Registry = Registry("regret-matching fallback")
RENAMED_IN = "0.3.0"  # the version whose groups replaced the flat keyword names (CHANGELOG.md)

SCHEMA = 1  # of `DeepCFRSettings.to_record()`; bump it when fields change


def check_family(family, group: str = "NetworkSettings") -> None:
    """A network group's `family`: a registered family name."""
    if not isinstance(family, str):
        raise ValueError(f"{group}.family must be a registered network family name (a str), got {family!r}")


def _choices(rule):
    """A rule as `check_settings` takes it: a registry (alone or in a tuple) becomes its names."""
    if isinstance(rule, Registry):
        return tuple(rule)
    if isinstance(rule, tuple):
        return tuple(name for item in rule for name in (item if isinstance(item, Registry) else (item,)))
    return rule


class _Group:
    """A frozen settings group: `RULES` (field -> `validation` rule, or a
    registry of allowed names) checked on construction; a field it does not
    have is refused in one line with the closest one."""

    RULES: ClassVar[dict] = {}

    def __new__(cls, *args, **fields):
        unknown = [name for name in fields if name not in {f.name for f in dataclasses.fields(cls)}]
        if unknown:
            raise TypeError(unknown_field_message(cls, unknown[0]))
        return super().__new__(cls)

    def __post_init__(self):
        name = type(self).__name__
        check_settings({f"{name}.{field}": getattr(self, field) for field in self.RULES},
                       {f"{name}.{field}": _choices(rule) for field, rule in self.RULES.items() if rule is not None})  # fmt: skip

    @classmethod
    def build(cls, group: str, value, default: _Group | None = None) -> _Group:
        """The group `value` stands for: itself, a dict of its fields laid over
        `default` (else the class's defaults), or None (`default`)."""
        default = cls() if default is None else default
        if value is None:
            return default
        if isinstance(value, Mapping):
            return dataclasses.replace(default, **value)  # (an unknown field: `__new__`'s one line)
        if not isinstance(value, cls):
            first = dataclasses.fields(cls)[0].name
            hint = (f"; {group}={value!r} is spelled {group}={cls.__name__}({first}={value!r}) since "
                    f"{RENAMED_IN} (CHANGELOG.md)" if isinstance(value, str) else "")  # fmt: skip
            raise ValueError(f"{group} must be an {cls.__module__.rpartition('.')[0]}.{cls.__name__}, a dict of its "
                             f"fields or None, got {type(value).__name__}{hint}")  # fmt: skip
        return value

    def to_record(self) -> dict:
        return {field.name: _record(getattr(self, field.name)) for field in dataclasses.fields(self)}


def unknown_field_message(cls: type, name: str) -> str:
    """One line: `cls` has no field `name`, with the closest field."""
    close = difflib.get_close_matches(name, [f.name for f in dataclasses.fields(cls)], n=1)
    return f"{cls.__name__} has no field {name!r}" + (f"; did you mean {close[0]!r}?" if close else "")


class _TrainingGroup(_Group):
    """What every solver's training group has: `gradient_clip`, `precision`
    and `schedule` (a `Schedule` or None)."""

    RULES: ClassVar[dict] = {"gradient_clip": "real>0|None", "precision": PRECISIONS}

    def __post_init__(self):
        super().__post_init__()
        if self.schedule is not None and not isinstance(self.schedule, Schedule):
            raise ValueError(f"{type(self).__name__}.schedule must be an openspiel_cfrx.deep.Schedule, "
                             f"got {type(self.schedule).__name__}")  # fmt: skip


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
    RULES: ClassVar[dict] = {"backend": SAMPLERS, "batch_size": "int>=1", "regret_matching_fallback": FALLBACKS}


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
    RULES: ClassVar[dict] = {"kind": MEMORY_KINDS, "strategy_capacity": "int>=1|None",
                             "feature_dtype": FEATURE_DTYPES, "aggregate_duplicates": "bool"}  # fmt: skip


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
    RULES: ClassVar[dict] = {"linear_weighting": "bool", "average_weighting": (AVERAGE_WEIGHTINGS, None),
                             "average_policy": AVERAGE_POLICIES, "keep_iteration_networks": "bool|None"}  # fmt: skip

    def __post_init__(self):
        super().__post_init__()
        if self.average_policy == "sd_cfr" and self.keep_iteration_networks is False:
            raise ValueError("AveragingSettings(average_policy='sd_cfr') needs keep_iteration_networks=True "
                             "(or None)")

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
            raise ValueError(f"NetworkSettings.options must be a dict of keyword arguments, got {self.options!r}")


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

@dataclasses.dataclass(frozen=True)
class ReportingSettings(_Group):
    """What a solver prints and calls while it runs (every solver's; not part
    of the run configuration: it changes no result).

    progress: a tqdm bar in `solve()`.
    log_every: log a line every N iterations (0 = never), printed too when `verbose`.
    verbose: print the log lines as well.
    callback, callback_every: `callback(solver)` after every N-th iteration.
    """

    progress: bool = False
    log_every: int = 0
    verbose: bool = False
    callback: Callable | None = None
    callback_every: int = 1
    RULES: ClassVar[dict] = {"progress": "bool", "log_every": "int>=0", "verbose": "bool", "callback_every": "int>=1"}

    def __post_init__(self):
        super().__post_init__()
        if self.callback is not None and not callable(self.callback):
            raise ValueError(f"ReportingSettings.callback must be a function callback(solver) or None, "
                             f"got {self.callback!r}")  # fmt: skip


def build_groups(table: dict[str, type[_Group]], given: dict,
                 defaults: Mapping[str, _Group] | None = None) -> dict[str, _Group]:  # fmt: skip
    """The groups of a constructor call: `given[name]` a group, a dict of its
    fields laid over the solver's default group (`defaults[name]`, else the
    class's defaults), or None (that default)."""
    return {name: group_cls.build(name, given.get(name), (defaults or {}).get(name))
            for name, group_cls in table.items()}  # fmt: skip


def unknown_keyword_message(solver: str, keyword: str, table: dict[str, type[_Group]], parameters) -> str:
    """One line for a keyword `solver` does not take. A group field's flat
    name of before the groups (the field's name, or it with the group's name
    before or after) is told its group spelling; a misspelling, the closest
    parameter or group field."""
    spellings = {name: repr(name) for name in parameters}  # a spelling -> what to write
    for group, group_cls in table.items():
        for field in dataclasses.fields(group_cls):
            spelling = f"{group}={group_cls.__name__}({field.name}=...)"
            for flat in (field.name, f"{group}_{field.name}", f"{field.name}_{group}"):
                spellings.setdefault(flat, spelling)
    start = f"{solver} got an unexpected keyword argument {keyword!r}"
    if keyword in spellings:
        return f"{start}: {keyword} is spelled {spellings[keyword]} since {RENAMED_IN}; see CHANGELOG.md"
    close = difflib.get_close_matches(keyword, list(spellings), n=1)
    return start + (f"; did you mean {spellings[close[0]]}?" if close else "")


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
    traversal: TraversalSettings = dataclasses.field(default_factory=TraversalSettings)
    training: TrainingSettings = dataclasses.field(default_factory=TrainingSettings)
    memory: MemorySettings = dataclasses.field(default_factory=MemorySettings)
    averaging: AveragingSettings = dataclasses.field(default_factory=AveragingSettings)
    network: NetworkSettings = dataclasses.field(default_factory=NetworkSettings)
    workers: WorkerSettings = dataclasses.field(default_factory=WorkerSettings)

    def __post_init__(self):
        check_settings(self.openspiel, {k: r for k, r in OPENSPIEL_RULES.items() if r is not None})
        if self.training.regret_scale == "pot" and not reports_pot(self.traversal.backend):
            raise ValueError("TrainingSettings(regret_scale='pot') needs a traversal backend whose samples carry the "
                             f"pot at each node, got backend={self.traversal.backend!r}: use "
                             "TraversalSettings(backend='poker') for limit poker, or regret_scale='auto' / a number")  # fmt: skip

    @classmethod
    def resolve(cls, openspiel: dict, groups: dict) -> DeepCFRSettings:
        """The settings of a `DeepCFRSolver` constructor call (`build_groups`)."""
        return cls(openspiel=dict(openspiel), **build_groups(GROUPS, groups))

    def to_record(self) -> dict:
        """The run configuration as plain data (checkpoints; results files)."""
        return {"schema": SCHEMA, "openspiel": {k: _record(v) for k, v in self.openspiel.items()},
                **{name: getattr(self, name).to_record() for name in GROUPS}}  # fmt: skip

    @staticmethod
    def shape_of(record: Mapping) -> dict:
        """What a checkpoint must match of a `to_record()`: the networks' and
        memories' shapes and the weightings its memories hold, as
        {"group.field": value} with the defaults resolved."""
        o, memory, averaging = record["openspiel"], record["memory"], record["averaging"]
        linear = averaging["linear_weighting"]
        return {"openspiel.policy_network_layers": [int(h) for h in o["policy_network_layers"]],
                "openspiel.advantage_network_layers": [int(h) for h in o["advantage_network_layers"]],
                "openspiel.memory_capacity": int(o["memory_capacity"]), "memory.kind": memory["kind"],
                "memory.strategy_capacity": int(memory["strategy_capacity"] or o["memory_capacity"]),
                "network.family": record["network"]["family"], "network.encoder": record["network"]["encoder"],
                "averaging.average_policy": averaging["average_policy"], "averaging.linear_weighting": linear,
                "averaging.average_weighting": averaging["average_weighting"] or regrets_weighting(linear),
                "training.regret_scale": record["training"]["regret_scale"]}  # fmt: skip

    @staticmethod
    def shape_arguments(record: Mapping) -> dict:
        """`DeepCFRSolver` keyword arguments that rebuild the shapes of a record (`shape_of`)."""
        o, memory, averaging = record["openspiel"], record["memory"], record["averaging"]
        scale = record["training"]["regret_scale"]
        arguments = {key: tuple(o[key]) for key in ("policy_network_layers", "advantage_network_layers")}
        arguments.update(memory_capacity=int(o["memory_capacity"]), network={"family": record["network"]["family"]},
                         memory={key: memory[key] for key in ("kind", "strategy_capacity")},
                         averaging={key: averaging[key] for key in ("average_policy", "linear_weighting",
                                                                    "average_weighting")},
                         training={"regret_scale": scale if scale in ("auto", "pot") else float(scale)})  # fmt: skip
        if scale == "pot":  # (a backend that reports pots: the record's)
            arguments["traversal"] = {"backend": record["traversal"]["backend"]}
        return arguments


def regrets_weighting(linear_weighting: bool) -> str:
    """The average strategy's weighting when `average_weighting` is None: the regrets'."""
    return "linear" if linear_weighting else "uniform"


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
