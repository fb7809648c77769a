"""Both neural solvers' settings groups (openspiel_cfrx.deep.settings,
openspiel_cfrx.cfr_mix.settings): one spelling (a group, or a dict of its
fields, the same names), a misspelt field or an old flat keyword refused in
one line naming the group spelling, a bad value one line naming
`Group.field`, allowed names read from registries (settings.py imports no
implementation), and checkpoints record the run configuration."""

from __future__ import annotations

import ast
import inspect
import json
import os

import pyspiel
import pytest
import torch

import games  # noqa: F401  (team_goofspiel)
from openspiel_cfrx.cfr_mix import (
    AccumulationSettings,
    AgentNetworkSettings,
    CFRMixSettings,
    CFRMixSolver,
    MixTrainingSettings,
    ProbeTraversalSettings,
)
from openspiel_cfrx.deep import (
    AveragingSettings,
    DeepCFRSolver,
    Schedule,
    TrainingSettings,
    TraversalSettings,
    WorkerSettings,
)

TINY_GOOFSPIEL = "team_goofspiel(num_cards=3,num_agents=2,num_turns=2)"
MIX_CORE = dict(num_iterations=1, num_traversals=10, regret_train_steps=3, policy_train_steps=3,
                regret_network_layers=(8,), policy_network_layers=(8,), seed=4)  # fmt: skip
MIX_DICTS = dict(traversal={"joint_cap": 5, "batch_size": 16, "alternating_updates": False},
                 training={"gradient_clip": None, "schedule": Schedule(traversals_ramp=3),
                           "reinitialize_regret_networks": True, "rescale_regret_targets": False},
                 accumulation={"anchor_ratio": 0.5, "linear_averaging": False},
                 network={"family": "plain_mlp", "share_parameters": False}, workers={"num_threads": 1})  # fmt: skip
MIX_GROUPS = dict(
    traversal=ProbeTraversalSettings(joint_cap=5, batch_size=16, alternating_updates=False),
    training=MixTrainingSettings(gradient_clip=None, schedule=Schedule(traversals_ramp=3),
                                 reinitialize_regret_networks=True, rescale_regret_targets=False),
    accumulation=AccumulationSettings(anchor_ratio=0.5, linear_averaging=False),
    network=AgentNetworkSettings(family="plain_mlp", share_parameters=False),
    workers=WorkerSettings(num_threads=1),
)  # fmt: skip
DEEP_CORE = dict(num_iterations=1, num_traversals=10, advantage_network_train_steps=2,
                 policy_network_train_steps=2, advantage_network_layers=(8,),
                 policy_network_layers=(8,), memory_capacity=1000)  # fmt: skip


@pytest.fixture(scope="module")
def tiny_game():
    return pyspiel.load_game(TINY_GOOFSPIEL)


def test_deep_cfr_takes_openspiels_arguments_and_the_groups_only():
    from open_spiel.python.pytorch import deep_cfr as openspiel_deep_cfr

    ours = list(inspect.signature(DeepCFRSolver.__init__).parameters)[1:]
    theirs = list(inspect.signature(openspiel_deep_cfr.DeepCFRSolver.__init__).parameters)[1:]
    assert ours[: len(theirs)] == theirs and len(theirs) == 15  # OpenSpiel's fifteen (game first), same order
    assert ours[len(theirs):] == ["traversal", "training", "memory", "averaging", "network", "workers", "reporting"]
    assert len(ours) <= 25
    assert len(inspect.signature(CFRMixSolver.__init__).parameters) - 1 <= 25


def test_cfr_mix_groups_and_dicts_give_the_same_settings(tiny_game):
    from_dicts = CFRMixSolver(tiny_game, **MIX_CORE, **MIX_DICTS)
    grouped = CFRMixSolver(tiny_game, **MIX_CORE, **MIX_GROUPS)
    assert isinstance(from_dicts.settings, CFRMixSettings)
    assert from_dicts.settings == grouped.settings
    assert from_dicts.settings.traversal.joint_cap == 5 and from_dicts.settings.network.family == "plain_mlp"
    assert from_dicts.num_team_regret_networks == 2
    record = from_dicts.settings.to_record()
    assert record == grouped.settings.to_record() and json.loads(json.dumps(record)) == record
    assert record["core"]["regret_network_layers"] == [8]
    assert record["traversal"]["batch_size"] == 16


def test_cfr_mix_group_and_dict_runs_are_identical(tiny_game):
    from_dicts = CFRMixSolver(tiny_game, **MIX_CORE, **MIX_DICTS)
    grouped = CFRMixSolver(tiny_game, **MIX_CORE, **MIX_GROUPS)
    from_dicts.solve()
    grouped.solve()
    for a, b in zip(from_dicts.parts().values(), grouped.parts().values(), strict=True):
        for x, y in zip(a.net.parameters(), b.net.parameters(), strict=True):
            assert torch.equal(x, y)


def test_cfr_mix_defaults(tiny_game):
    settings = CFRMixSolver(tiny_game, **MIX_CORE).settings
    assert settings.workers == WorkerSettings(num_threads=1)  # the solver's default thread count
    assert settings.traversal == ProbeTraversalSettings()
    assert settings.network == AgentNetworkSettings()
    assert settings.flags == dict(backbone="double_neural", team_view="factored",
                                  regret_targets="joint", share=True)  # fmt: skip
    assert not settings.reinitializes_regret_networks
    joint = CFRMixSolver(tiny_game, "deep_cfr_joint", **MIX_CORE).settings
    assert joint.reinitializes_regret_networks

    def built(**kwargs):
        return CFRMixSolver(tiny_game, **MIX_CORE, **kwargs).settings

    # A group brings its own defaults; a dict lays its fields over the solver's default group.
    assert built(workers={"num_workers": 1}).workers.num_threads == 1
    assert built(workers=WorkerSettings()).workers.num_threads == "auto"
    assert built(network={"family": "plain_mlp"}).network.family == "plain_mlp"


def test_deep_cfr_groups_and_dicts_give_the_same_settings(kuhn):
    from_dicts = DeepCFRSolver(kuhn, **DEEP_CORE, traversal={"backend": "tree", "batch_size": 64},
                               training={"gradient_clip": None, "regret_scale": "auto"},
                               averaging={"average_policy": "sd_cfr"}, workers={"num_threads": 1})  # fmt: skip
    grouped = DeepCFRSolver(kuhn, **DEEP_CORE,
                            traversal=TraversalSettings(backend="tree", batch_size=64),
                            training=TrainingSettings(gradient_clip=None, regret_scale="auto"),
                            averaging=AveragingSettings(average_policy="sd_cfr"),
                            workers=WorkerSettings(num_threads=1))  # fmt: skip
    assert from_dicts.settings == grouped.settings
    assert from_dicts.settings.to_record() == grouped.settings.to_record()


@pytest.mark.parametrize("build", [lambda: TraversalSettings(backnd="poker"),
                                   lambda: DeepCFRSolver(pyspiel.load_game("kuhn_poker"), traversal={"backnd": "poker"})])  # fmt: skip
def test_a_misspelt_field_names_the_group_and_the_closest_field(build):
    with pytest.raises(TypeError) as raised:
        build()
    assert str(raised.value) == "TraversalSettings has no field 'backnd'; did you mean 'backend'?"


@pytest.mark.parametrize("solver, keyword, spelling", [
    ("deep_cfr", "traversal_backend", "traversal=TraversalSettings(backend=...)"),
    ("deep_cfr", "training_precision", "training=TrainingSettings(precision=...)"),
    ("deep_cfr", "memory_feature_dtype", "memory=MemorySettings(feature_dtype=...)"),
    ("deep_cfr", "average_policy", "averaging=AveragingSettings(average_policy=...)"),
    ("deep_cfr", "num_workers", "workers=WorkerSettings(num_workers=...)"),
    ("deep_cfr", "log_every", "reporting=ReportingSettings(log_every=...)"),
    ("cfr_mix", "joint_cap", "traversal=ProbeTraversalSettings(joint_cap=...)"),
    ("cfr_mix", "anchor_ratio", "accumulation=AccumulationSettings(anchor_ratio=...)"),
    ("cfr_mix", "traversal_batch_size", "traversal=ProbeTraversalSettings(batch_size=...)"),
])  # fmt: skip
def test_an_old_flat_keyword_names_its_group_spelling(solver, keyword, spelling, tiny_game, kuhn):
    name = "CFRMixSolver" if solver == "cfr_mix" else "DeepCFRSolver"
    with pytest.raises(TypeError) as raised:
        if solver == "cfr_mix":
            CFRMixSolver(tiny_game, **MIX_CORE, **{keyword: 1})
        else:
            DeepCFRSolver(kuhn, **DEEP_CORE, **{keyword: 1})
    assert str(raised.value) == (f"{name} got an unexpected keyword argument {keyword!r}: {keyword} is spelled "
                                 f"{spelling} since 0.3.0; see CHANGELOG.md")  # fmt: skip


@pytest.mark.parametrize("solver, keyword, suggestion", [
    ("cfr_mix", "joint_capp", "traversal=ProbeTraversalSettings(joint_cap=...)"),
    ("cfr_mix", "num_traversal", "'num_traversals'"), ("deep_cfr", "num_traverals", "'num_traversals'"),
])  # fmt: skip
def test_a_misspelt_keyword_gets_a_suggestion(solver, keyword, suggestion, tiny_game, kuhn):
    name = "CFRMixSolver" if solver == "cfr_mix" else "DeepCFRSolver"
    with pytest.raises(TypeError) as raised:
        if solver == "cfr_mix":
            CFRMixSolver(tiny_game, **MIX_CORE, **{keyword: 1})
        else:
            DeepCFRSolver(kuhn, **DEEP_CORE, **{keyword: 1})
    assert str(raised.value) == f"{name} got an unexpected keyword argument {keyword!r}; did you mean {suggestion}?"


def test_a_str_for_a_group_names_the_group_spelling(kuhn):
    with pytest.raises(ValueError, match=r"; network='poker' is spelled network=NetworkSettings\(family='poker'\) "
                                         r"since 0\.3\.0 \(CHANGELOG\.md\)$"):  # fmt: skip
        DeepCFRSolver(kuhn, network="poker")


def test_a_group_of_the_other_solver_is_refused(tiny_game):
    expected = (r"^traversal must be an openspiel_cfrx\.cfr_mix\.ProbeTraversalSettings, a dict of its fields or "
                r"None, got TraversalSettings$")  # fmt: skip
    with pytest.raises(ValueError, match=expected):
        CFRMixSolver(tiny_game, **MIX_CORE, traversal=TraversalSettings())


MIX_BAD = [  # (group, field, value, message start)
    ("traversal", "joint_cap", 0, "ProbeTraversalSettings.joint_cap must be an int >= 1, got 0"),
    ("traversal", "joint_cap", 1, "ProbeTraversalSettings.joint_cap must be >= 2 (a* plus at least one probe), got 1"),
    ("traversal", "batch_size", 0, "ProbeTraversalSettings.batch_size must be an int >= 1, got 0"),
    ("traversal", "alternating_updates", 1, "ProbeTraversalSettings.alternating_updates must be True or False, got 1"),
    ("training", "gradient_clip", -1.0, "MixTrainingSettings.gradient_clip must be a finite number > 0 or None (off), got -1."),
    ("training", "precision", "fp8", "MixTrainingSettings.precision must be one of 'float32', 'bfloat16', got"),
    ("training", "schedule", "cosine", "MixTrainingSettings.schedule must be an openspiel_cfrx.deep.Schedule, got str"),
    ("training", "reinitialize_regret_networks", 0.5, "MixTrainingSettings.reinitialize_regret_networks must be True, False or"),
    ("training", "rescale_regret_targets", None, "MixTrainingSettings.rescale_regret_targets must be True or False, got None"),
    ("accumulation", "anchor_ratio", -0.5, "AccumulationSettings.anchor_ratio must be a finite number >= 0, got -0.5"),
    ("accumulation", "linear_averaging", "yes", "AccumulationSettings.linear_averaging must be True or False, got 'yes'"),
    ("network", "infoset_encoding", "bits", "AgentNetworkSettings.infoset_encoding must be one of 'tensor', 'compact', got"),
    ("workers", "num_workers", 0, "WorkerSettings.num_workers must be an int >= 1, got 0"),
    ("workers", "num_threads", 0, "WorkerSettings.num_threads must be an int >= 1, 'auto' or None (torch's setting left alone), got 0"),
    ("workers", "ray_address", 5, "WorkerSettings.ray_address must be None, 'auto', 'host:port' or 'ray://host:port'"),
]  # fmt: skip


@pytest.mark.parametrize("group, field, value, message", MIX_BAD)
def test_a_bad_value_is_one_line_naming_the_group_field(group, field, value, message, tiny_game):
    from openspiel_cfrx.cfr_mix.settings import GROUPS

    for build in (lambda: CFRMixSolver(tiny_game, **MIX_CORE, **{group: {field: value}}),
                  lambda: GROUPS[group](**{field: value})):  # fmt: skip
        with pytest.raises(ValueError) as raised:
            build()
        assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


@pytest.mark.parametrize("keyword, value, message", [
    ("variant", "qmix", "unknown CFR-MIX variant 'qmix'; choose from cfr_mix, "),
    ("batch_size", 0, "batch_size must be an int >= 1, got 0"),
    ("memory_capacity", 2.5, "memory_capacity must be an int >= 1, got 2.5"),
    ("seed", -1, "seed must be an int >= 0, got -1"),
    ("reporting", {"callback_every": 0}, "ReportingSettings.callback_every must be an int >= 1, got 0"),
])  # fmt: skip
def test_cfr_mix_core_arguments_are_checked(keyword, value, message, tiny_game):
    with pytest.raises(ValueError) as raised:
        CFRMixSolver(tiny_game, **{**MIX_CORE, keyword: value})
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


def test_settings_read_allowed_names_from_registries_and_import_no_implementation():
    from openspiel_cfrx.deep import settings

    source = open(settings.__file__, encoding="utf-8").read()
    imported = {node.module for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Import)
                 for alias in node.names}  # fmt: skip
    implementations = {f"openspiel_cfrx.deep.{name}" for name in ("sampler", "memories", "trainer", "average_strategy")}
    assert not imported & implementations, imported
    assert list(settings.MEMORY_KINDS) == ["reservoir", "sliding_window"]
    assert list(settings.PRECISIONS) == ["float32", "bfloat16"]
    assert list(settings.AVERAGE_POLICIES) == ["network", "sd_cfr"]
    assert {"state", "tree", "vectorized", "poker"} <= set(settings.SAMPLERS)


def test_cfr_mix_checkpoints_record_the_settings(tiny_game, tmp_path):
    solver = CFRMixSolver(tiny_game, **MIX_CORE, **MIX_GROUPS)
    path = str(tmp_path / "mix.pt")
    solver.save_checkpoint(path)
    payload = torch.load(path, weights_only=True)
    assert payload["settings"] == solver.settings.to_record() and "config" not in payload
    assert payload["settings"]["schema"] == 1 and payload["game"] == str(tiny_game)
    assert payload["settings"]["accumulation"]["anchor_ratio"] == 0.5
    CFRMixSolver(tiny_game, **MIX_CORE, **MIX_DICTS).load_checkpoint(path)


def test_a_checkpoint_holding_a_config_is_refused_in_one_line(kuhn, tmp_path):
    """Files of an earlier development version hold a `config` (the shapes and
    the game) beside the settings record: they are refused, naming the fix."""
    from openspiel_cfrx.deep import checkpoint as checkpoint_lib

    solver = DeepCFRSolver(kuhn, **DEEP_CORE, averaging={"average_policy": "sd_cfr"}, workers={"num_threads": 1})
    solver.run_iteration()
    solver.save_checkpoint(path := str(tmp_path / "old.pt"))
    payload = torch.load(path, weights_only=True)
    payload["config"] = {"game": payload.pop("game"), "feature_size": 11, "num_actions": 2,
                         "policy_network_layers": [8], "advantage_network_layers": [8], "network": "mlp",
                         "memory": "reservoir", "memory_capacity": 1000, "strategy_memory_capacity": 1000,
                         "average_policy": "sd_cfr", "linear_weighting": True, "average_weighting": "linear"}  # fmt: skip
    payload["sha256"] = checkpoint_lib.payload_digest(payload)
    torch.save(payload, path)
    resumed = DeepCFRSolver(kuhn, **DEEP_CORE, averaging={"average_policy": "sd_cfr"}, workers={"num_threads": 1})
    refusal = "lacks 'game'; it holds a 'config' entry .* re-create it with this version of openspiel_cfrx"
    with pytest.raises(checkpoint_lib.CheckpointError, match=refusal):
        resumed.load_checkpoint(path)
    with pytest.raises(checkpoint_lib.CheckpointError, match=refusal):
        DeepCFRSolver.from_checkpoint(path)
    assert os.path.exists(path)
