"""Named settings of `DeepCFRSolver` behind the committed results.

A preset is the solver's keyword arguments for one game, together with the
result they gave and the results file that records it, so that a paper-scale
run is rerun by name rather than by copying a JSON string. The arguments are
plain data in the solver's own shape: OpenSpiel's arguments by name and each
settings group as a dict of its fields (`{"traversal": {"backend": "poker"},
"num_traversals": 5000}`), the shape `--deep_cfr` JSON flags take too
(`merge_settings` lays one over another, group by group):

    settings = openspiel_cfrx.presets.deep_cfr_preset("fhp_5x2")
    solver = DeepCFRSolver(pyspiel.load_game(settings.game), **settings.kwargs)

The published method is a preset too: `paper_fhp` (52-card flop hold'em) and
`paper_hulh` are Algorithm 1 with the settings of Sections 5.1-5.3 and 6 of
Brown et al. (2019), field by field (`PAPER_SOURCES` cites the sentence
behind each), and `deep_cfr_preset("paper", game=...)` is the same method for
any game (the Appendix C network on limit poker, OpenSpiel's default MLP
elsewhere: the paper defines no network for other games).

`cfrx_examples/deep_cfr.py --preset=NAME` and `benchmarks/bench_fhp_curve.py
--preset=NAME` take them by name. Hardware-specific choices are checked where
the preset is read: a preset that trains in bfloat16 falls back to float32,
with a message, on a CPU without bfloat16 matrix instructions (AMX or
AVX-512 BF16), where autocast would be slower than float32
(docs/decisions.md, "bfloat16 training").
"""

from __future__ import annotations

import dataclasses
import sys
import types

# The 5x2 flop hold'em learner behind the committed curves: state-independent
# parts shared by the flop hold'em presets.
_FHP_BASE = dict(batch_size_advantage=2048, batch_size_strategy=2048, memory_capacity=2_000_000,
                 network={"family": "mlp"})


def merge_settings(base: dict, *overrides: dict) -> dict:
    """`base` with each of `overrides` laid over it: a group (a dict value)
    field by field, any other argument replaced."""
    merged = dict(base)
    for override in overrides:
        for name, value in override.items():
            both = isinstance(value, dict) and isinstance(merged.get(name), dict)
            merged[name] = {**merged[name], **value} if both else value
    return merged


def flatten_settings(settings: dict) -> dict:
    """{"group.field": value} for the groups' fields, {name: value} for the other arguments."""
    flat = {}
    for name, value in settings.items():
        if isinstance(value, dict):
            flat.update({f"{name}.{field}": v for field, v in value.items()})
        else:
            flat[name] = value
    return flat


@dataclasses.dataclass(frozen=True)
class Preset:
    """One named setting: the game it was tuned on, the solver's keyword
    arguments (besides the game), what it gave and where that is recorded."""

    name: str
    game: str
    kwargs: types.MappingProxyType
    result: str
    results_file: str


# Algorithm 1 as published (Brown et al. 2019): every field the paper states, on every game.
# `PAPER_SOURCES` cites the sentence behind each; tests/test_paper_preset.py reads them against the paper.
PAPER_METHOD = types.MappingProxyType(dict(
    reinitialize_advantage_networks=True,  # Algorithm 1 line 7: "Train theta_p from scratch"
    memory={"kind": "reservoir"},  # Algorithm 1 line 2: reservoir-sampled memories
    averaging={
        "linear_weighting": True,  # Section 5.3: entries weighted t, batch weights rescaled by 2/T
        "average_weighting": None,  # the average's weights are the regrets' (Algorithm 1 line 9: t')
        "average_policy": "network",  # Algorithm 1 line 9: an average-strategy network trained on M_Pi
    },
    # Section 3 / Figure 4: the highest-regret action when no regret is positive
    traversal={"regret_matching_fallback": "argmax"},
    learning_rate=1e-3,  # Section 5.2: Adam, learning rate 0.001
    training={
        "gradient_clip": 1.0,  # Section 5.2: gradient norm clipping to 1
        "regret_scale": 1.0,  # Algorithm 2: raw sampled regrets
        "precision": "float32",
    },
    memory_capacity=40_000_000,  # Section 5.2: 40 million infosets per memory
    num_traversals=10_000,  # Section 6: "10,000 CFR traversals per step"
    advantage_network_train_steps=4_000, policy_network_train_steps=4_000,  # Section 5.2: 4,000 SGD iterations
    batch_size_advantage=10_000, batch_size_strategy=10_000,  # Section 5.2: batch size 10,000
))
# Section 5.2: "For HULH we use 32,000 SGD iterations and a batch size of 20,000."
_PAPER_HULH_TRAINING = dict(advantage_network_train_steps=32_000, policy_network_train_steps=32_000,
                            batch_size_advantage=20_000, batch_size_strategy=20_000)
# The Appendix C network: width 96 is the paper-sized FHP network (99,555 parameters, the closest the appendix
# code comes to Section 5's 98,948: neural_poker.poker_network.PAPER_FHP_DIM); the paper gives no HULH size, so
# paper_hulh keeps the appendix code's default width, 256 (APPENDIX_C_DIM).
_PAPER_FHP_NETWORK = dict(network={"family": "poker"}, traversal={"backend": "poker"}, advantage_network_layers=(96,),
                          policy_network_layers=(96,))
_PAPER_HULH_NETWORK = dict(_PAPER_FHP_NETWORK, advantage_network_layers=(256,), policy_network_layers=(256,))
# Where the paper states each field of PAPER_METHOD (and of the network and HULH fields above), by
# `flatten_settings` name.
PAPER_SOURCES = types.MappingProxyType({
    "reinitialize_advantage_networks": ("Algorithm 1", "from scratch"),
    "memory.kind": ("Algorithm 1", "reservoir-sampled advantage memories"),
    "averaging.linear_weighting": ("Section 5.3", "rescale all the batch weights by"),
    "averaging.average_weighting": ("Algorithm 1", "Train  $\\theta_\\Pi$  on loss"),
    "traversal.regret_matching_fallback": ("Section 3", "we choose the action with highest counterfactual regret"),
    "averaging.average_policy": ("Algorithm 1", "Train  $\\theta_\\Pi$  on loss"),
    "learning_rate": ("Section 5.2", "with a learning rate of 0.001"),
    "training.gradient_clip": ("Section 5.2", "gradient norm clipping to 1"),
    "training.regret_scale": ("Algorithm 2", "Compute advantages"),
    "training.precision": ("Appendix C", "nn.Linear"),
    "memory_capacity": ("Section 5.2", "maximum size of 40 million infosets"),
    "num_traversals": ("Section 6", "10,000 CFR traversals per step"),
    "advantage_network_train_steps": ("Section 5.2", "We perform 4,000 mini-batch"),
    "policy_network_train_steps": ("Section 5.2", "We perform 4,000 mini-batch"),
    "batch_size_advantage": ("Section 5.2", "using a batch size of 10,000"),
    "batch_size_strategy": ("Section 5.2", "using a batch size of 10,000"),
    "hulh_training": ("Section 5.2", "For HULH we use 32,000 SGD iterations and a batch size of 20,000"),
    "network.family": ("Section 5.1 / Appendix C", "class DeepCFRModel(nn.Module)"),
    "fhp_width": ("Section 5", "98,948 parameters"),
    "hulh_width": ("Appendix C", "dim=256"),
    "traversal.backend": ("Algorithm 2", "CFR Traversal with External Sampling"),
})


def _preset(name, game, kwargs, result, results_file) -> Preset:
    return Preset(name, game, types.MappingProxyType(dict(kwargs)), result, results_file)


DEEP_CFR_PRESETS = {
    p.name: p
    for p in (
        _preset(
            "kuhn_demo", "kuhn_poker",
            dict(num_traversals=2000, advantage_network_train_steps=100, policy_network_train_steps=500,
                 advantage_network_layers=(32, 32), policy_network_layers=(32, 32), learning_rate=1e-2,
                 memory_capacity=2_000_000, traversal={"backend": "vectorized"}),
            "NashConv ~0.03 after 40 iterations (about a minute on 2 cores; `make demo`, which runs it with --iterations=40)", "README.md",
        ),
        _preset(
            "fhp_5x2", "flop_holdem(num_ranks=5,num_suits=2)",
            dict(_FHP_BASE, training={"regret_scale": "pot", "precision": "bfloat16"}, traversal={"backend": "poker"},
                 advantage_network_layers=(256, 256), advantage_network_train_steps=150, num_traversals=5000,
                 reinitialize_advantage_networks=0.05, policy_network_layers=(128, 128),
                 policy_network_train_steps=4000,
                 averaging={"average_policy": "sd_cfr", "average_weighting": "uniform"}),
            "exact NashConv 119.8 ± 3.3 mbb/g after 900 s of training on 2 cores (4 seeds)",
            "benchmarks/results/fhp_curve.md",
        ),
        _preset(
            "fhp_full", "flop_holdem",
            dict(_FHP_BASE, network={"family": "suit_symmetric_mlp"}, traversal={"backend": "poker"},
                 training={"regret_scale": "auto"}, advantage_network_layers=(128, 128),
                 advantage_network_train_steps=150,
                 num_traversals=5000, reinitialize_advantage_networks=False, policy_network_layers=(128, 128),
                 policy_network_train_steps=4000),
            "exact NashConv 232.5 mbb/g after 60 minutes of training on 2 cores with 2 Ray workers "
            "(num_workers=2; one seed; the paper: 37)",
            "benchmarks/results/full_fhp.md",
        ),
        _preset(
            "paper_fhp", "flop_holdem", merge_settings(PAPER_METHOD, _PAPER_FHP_NETWORK),
            "the published method (Brown et al. 2019, Sections 5.1-5.3 and 6); the paper: 37 mbb/g on flop hold'em",
            "docs/deep_cfr.md",
        ),
        _preset(
            "paper_hulh", "hulh", merge_settings(PAPER_METHOD, _PAPER_HULH_NETWORK, _PAPER_HULH_TRAINING),
            "the published method on heads-up limit hold'em (Section 5.2's HULH training); the paper: beats NFSP "
            "by 43 +- 2 mbb/g head to head (Table 1)",
            "docs/deep_cfr.md",
        ),
    )
}  # fmt: skip
PRESET_NAMES = (*DEEP_CFR_PRESETS, "paper")  # "paper" takes any game: deep_cfr_preset("paper", game=...)


def paper_preset(game: str) -> Preset:
    """Algorithm 1 as published for any game string: the Appendix C network
    and the poker traversal on the paper's games (`flop_holdem`, `hulh`, and
    their small decks; HULH's training sizes on `hulh`), elsewhere
    OpenSpiel's default network sizes and the pyspiel-state traversal (the
    same external sampling)."""
    if not isinstance(game, str) or not game.strip():
        raise ValueError("preset 'paper' needs the game: deep_cfr_preset('paper', game='leduc_poker')")
    name = game.split("(", 1)[0].strip()
    if name == "hulh":
        kwargs = merge_settings(PAPER_METHOD, _PAPER_HULH_NETWORK, _PAPER_HULH_TRAINING)
    elif name == "flop_holdem":
        kwargs = merge_settings(PAPER_METHOD, _PAPER_FHP_NETWORK)
    else:  # OpenSpiel's DeepCFRSolver defaults: policy (256, 256), advantage (128, 128)
        kwargs = merge_settings(PAPER_METHOD, dict(network={"family": "mlp"}, traversal={"backend": "state"},
                                                   policy_network_layers=(256, 256), advantage_network_layers=(128, 128)))  # fmt: skip
    return _preset("paper", game, kwargs, "the published method (Brown et al. 2019) on this game", "docs/deep_cfr.md")


def bfloat16_is_fast() -> bool:
    """Whether this CPU has bfloat16 matrix instructions (AMX or AVX-512 BF16),
    read from /proc/cpuinfo's flags (False where that cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return False
    return any(flag in flags.split() for flag in ("amx_bf16", "avx512_bf16"))


def trains_in_bfloat16(settings) -> bool:
    """Whether solver arguments (`settings`, preset-shaped) train in bfloat16."""
    return (settings.get("training") or {}).get("precision") == "bfloat16"


def deep_cfr_preset(name: str, device: str = "cpu", game: str | None = None) -> Preset:
    """The preset called `name`, with its training precision checked against
    the hardware it will train on (`device`); "paper" is the published
    method on `game` (`paper_preset`). Unknown names get one line naming the
    known ones."""
    if name == "paper":
        return paper_preset(game)
    if name not in DEEP_CFR_PRESETS:
        raise ValueError(f"unknown Deep CFR preset {name!r}; choose from {', '.join(PRESET_NAMES)}")
    preset = DEEP_CFR_PRESETS[name]
    if trains_in_bfloat16(preset.kwargs) and device == "cpu" and not bfloat16_is_fast():
        print(f"preset {name}: this CPU has no bfloat16 matrix instructions (AMX / AVX-512 BF16), so it trains "
              "in float32 (bfloat16 autocast would be slower here)", file=sys.stderr)  # fmt: skip
        kwargs = merge_settings(preset.kwargs, {"training": {"precision": "float32"}})
        preset = dataclasses.replace(preset, kwargs=types.MappingProxyType(kwargs))
    return preset
