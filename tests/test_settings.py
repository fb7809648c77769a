"""Both neural solvers' settings groups (openspiel_cfrx.deep.settings,
openspiel_cfrx.cfr_mix.settings): groups and flat keywords build the same
`settings`, a field given both ways is refused, an unknown keyword gets a
suggestion, a bad value is one line naming the flat keyword, and checkpoints
record the run configuration."""

from __future__ import annotations

import json

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
MIX_FLAT = dict(joint_cap=5, traversal_batch_size=16, alternating_updates=False, gradient_clip=None,
                schedule=Schedule(traversals_ramp=3), reinitialize_regret_networks=True,
                rescale_regret_targets=False, anchor_ratio=0.5, linear_averaging=False,
                network="plain_mlp", share_parameters=False, num_threads=1)  # fmt: skip
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


def test_cfr_mix_groups_and_flat_keywords_give_the_same_settings(tiny_game):
    flat = CFRMixSolver(tiny_game, **MIX_CORE, **MIX_FLAT)
    grouped = CFRMixSolver(tiny_game, **MIX_CORE, **MIX_GROUPS)
    mixed = CFRMixSolver(tiny_game, **MIX_CORE, **{**MIX_GROUPS, "traversal": None},
                         joint_cap=5, traversal_batch_size=16,
                         alternating_updates=False)  # fmt: skip
    assert isinstance(flat.settings, CFRMixSettings)
    assert flat.settings == grouped.settings == mixed.settings
    assert flat.settings.traversal.joint_cap == 5 and flat.settings.network.family == "plain_mlp"
    assert flat.config == grouped.config and flat.num_team_regret_networks == 2
    record = flat.settings.to_record()
    assert record == grouped.settings.to_record() and json.loads(json.dumps(record)) == record
    assert record["core"]["regret_network_layers"] == [8]
    assert record["traversal"]["batch_size"] == 16


def test_cfr_mix_group_and_flat_runs_are_identical(tiny_game):
    flat = CFRMixSolver(tiny_game, **MIX_CORE, **MIX_FLAT)
    grouped = CFRMixSolver(tiny_game, **MIX_CORE, **MIX_GROUPS)
    flat.solve()
    grouped.solve()
    for a, b in zip(flat.parts().values(), grouped.parts().values(), strict=True):
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

    # A workers group brings its own defaults; flat keywords replace fields of the solver's.
    assert built(num_workers=1).workers.num_threads == 1
    assert built(workers=WorkerSettings()).workers.num_threads == "auto"
    assert built(network="plain_mlp").network.family == "plain_mlp"


def test_deep_cfr_groups_and_flat_keywords_give_the_same_settings(kuhn):
    flat = DeepCFRSolver(kuhn, **DEEP_CORE, traversal_backend="tree", traversal_batch_size=64,
                         gradient_clip=None, regret_scale="auto", average_policy="sd_cfr",
                         num_threads=1)  # fmt: skip
    grouped = DeepCFRSolver(kuhn, **DEEP_CORE,
                            traversal=TraversalSettings(backend="tree", batch_size=64),
                            training=TrainingSettings(gradient_clip=None, regret_scale="auto"),
                            averaging=AveragingSettings(average_policy="sd_cfr"),
                            workers=WorkerSettings(num_threads=1))  # fmt: skip
    assert flat.settings == grouped.settings
    assert flat.settings.to_record() == grouped.settings.to_record()


@pytest.mark.parametrize("solver", ["cfr_mix", "deep_cfr"])
def test_a_field_given_both_ways_is_refused(solver, tiny_game, kuhn):
    both = r"^num_workers is given both as a keyword and in workers=.*give it once$"
    with pytest.raises(ValueError, match=both):
        if solver == "cfr_mix":
            CFRMixSolver(tiny_game, **MIX_CORE, num_workers=1, workers=WorkerSettings())
        else:
            DeepCFRSolver(kuhn, **DEEP_CORE, num_workers=1, workers=WorkerSettings())
    if solver == "cfr_mix":
        with pytest.raises(ValueError, match="joint_cap is given both as a keyword and in trav"):
            CFRMixSolver(tiny_game, **MIX_CORE, joint_cap=8, traversal=ProbeTraversalSettings())
        with pytest.raises(ValueError, match="training_precision is given both"):
            CFRMixSolver(tiny_game, **MIX_CORE, training_precision="float32",
                         training=MixTrainingSettings())  # fmt: skip


@pytest.mark.parametrize("solver, keyword, suggestion", [
    ("cfr_mix", "joint_capp", "joint_cap"), ("cfr_mix", "anchor_ration", "anchor_ratio"),
    ("cfr_mix", "num_worker", "num_workers"), ("deep_cfr", "traversal_backnd", "traversal_backend"),
])  # fmt: skip
def test_an_unknown_keyword_gets_a_suggestion(solver, keyword, suggestion, tiny_game, kuhn):
    name = "CFRMixSolver" if solver == "cfr_mix" else "DeepCFRSolver"
    with pytest.raises(TypeError, match=rf"^{name} got an unexpected keyword argument '{keyword}'; "
                                        rf"did you mean '{suggestion}'\?$"):  # fmt: skip
        if solver == "cfr_mix":
            CFRMixSolver(tiny_game, **MIX_CORE, **{keyword: 1})
        else:
            DeepCFRSolver(kuhn, **DEEP_CORE, **{keyword: 1})


def test_a_group_of_the_other_solver_is_refused(tiny_game):
    expected = r"^traversal must be an openspiel_cfrx\.cfr_mix\.ProbeTraversalSettings \(or None\), got TraversalSettings$"
    with pytest.raises(ValueError, match=expected):
        CFRMixSolver(tiny_game, **MIX_CORE, traversal=TraversalSettings())


MIX_BAD = [  # (flat keyword, value, message start), each also checked through its group
    ("joint_cap", 0, "joint_cap must be an int >= 1, got 0"),
    ("joint_cap", 1, "joint_cap must be >= 2 (a* plus at least one probe), got 1"),
    ("traversal_batch_size", 0, "traversal_batch_size must be an int >= 1, got 0"),
    ("alternating_updates", 1, "alternating_updates must be True or False, got 1"),
    ("gradient_clip", -1.0, "gradient_clip must be a finite number > 0 or None (off), got -1."),
    ("training_precision", "fp8", "training_precision must be one of 'float32', 'bfloat16', got"),
    ("schedule", "cosine", "schedule must be an openspiel_cfrx.deep.Schedule, got str"),
    ("reinitialize_regret_networks", 0.5, "reinitialize_regret_networks must be True, False or"),
    ("rescale_regret_targets", None, "rescale_regret_targets must be True or False, got None"),
    ("anchor_ratio", -0.5, "anchor_ratio must be a finite number >= 0, got -0.5"),
    ("linear_averaging", "yes", "linear_averaging must be True or False, got 'yes'"),
    ("infoset_encoding", "bits", "infoset_encoding must be one of 'tensor', 'compact', got"),
    ("num_workers", 0, "num_workers must be an int >= 1, got 0"),
    ("num_threads", 0, "num_threads must be an int >= 1, 'auto' or None (torch's setting left alone), got 0"),
    ("ray_address", 5, "ray_address must be None, 'auto', 'host:port' or 'ray://host:port'"),
]


@pytest.mark.parametrize("keyword, value, message", MIX_BAD)
def test_a_bad_value_is_one_line_naming_the_flat_keyword(keyword, value, message, tiny_game):
    from openspiel_cfrx.cfr_mix.settings import FLAT_NAMES, GROUPS

    group, field = FLAT_NAMES[keyword]
    for build in (lambda: CFRMixSolver(tiny_game, **MIX_CORE, **{keyword: value}),
                  lambda: GROUPS[group](**{field: value})):  # fmt: skip
        with pytest.raises(ValueError) as raised:
            build()
        assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


@pytest.mark.parametrize("keyword, value, message", [
    ("variant", "qmix", "unknown CFR-MIX variant 'qmix'; choose from cfr_mix, "),
    ("batch_size", 0, "batch_size must be an int >= 1, got 0"),
    ("memory_capacity", 2.5, "memory_capacity must be an int >= 1, got 2.5"),
    ("seed", -1, "seed must be an int >= 0, got -1"),
    ("callback_every", 0, "callback_every must be an int >= 1, got 0"),
])  # fmt: skip
def test_cfr_mix_core_arguments_are_checked(keyword, value, message, tiny_game):
    with pytest.raises(ValueError) as raised:
        CFRMixSolver(tiny_game, **{**MIX_CORE, keyword: value})
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


def test_cfr_mix_checkpoints_record_the_settings(tiny_game, tmp_path):
    solver = CFRMixSolver(tiny_game, **MIX_CORE, **MIX_GROUPS)
    path = str(tmp_path / "mix.pt")
    solver.save_checkpoint(path)
    payload = torch.load(path, weights_only=True)
    assert payload["settings"] == solver.settings.to_record()
    assert payload["settings"]["schema"] == 1
    assert payload["settings"]["accumulation"]["anchor_ratio"] == 0.5
    CFRMixSolver(tiny_game, **MIX_CORE, **MIX_FLAT).load_checkpoint(path)
