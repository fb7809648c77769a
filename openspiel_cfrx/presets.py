"""Named settings of `DeepCFRSolver` behind the committed results.

A preset is the solver's keyword arguments for one game, together with the
result they gave and the results file that records it, so that a paper-scale
run is rerun by name rather than by copying a JSON string:

    settings = openspiel_cfrx.presets.deep_cfr_preset("fhp_5x2")
    solver = DeepCFRSolver(pyspiel.load_game(settings.game), **settings.kwargs)

`openspiel_cfrx/examples/deep_cfr.py --preset=NAME` and `benchmarks/bench_fhp_curve.py
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
_FHP_BASE = dict(batch_size_advantage=2048, batch_size_strategy=2048, memory_capacity=2_000_000, network="mlp")


@dataclasses.dataclass(frozen=True)
class Preset:
    """One named setting: the game it was tuned on, the solver's keyword
    arguments (besides the game), what it gave and where that is recorded."""

    name: str
    game: str
    kwargs: types.MappingProxyType
    result: str
    results_file: str


def _preset(name, game, kwargs, result, results_file) -> Preset:
    return Preset(name, game, types.MappingProxyType(dict(kwargs)), result, results_file)


DEEP_CFR_PRESETS = {
    p.name: p
    for p in (
        _preset(
            "kuhn_demo", "kuhn_poker",
            dict(num_traversals=2000, advantage_network_train_steps=100, policy_network_train_steps=500,
                 advantage_network_layers=(32, 32), policy_network_layers=(32, 32), learning_rate=1e-2,
                 memory_capacity=2_000_000, traversal_backend="vectorized"),
            "NashConv ~0.03 after 40 iterations (about a minute on 2 cores; `make demo`, which runs it with --iterations=40)", "README.md",
        ),
        _preset(
            "fhp_5x2", "flop_holdem(num_ranks=5,num_suits=2)",
            dict(_FHP_BASE, regret_scale="pot", traversal_backend="poker", advantage_network_layers=(256, 256),
                 advantage_network_train_steps=150, num_traversals=5000, reinitialize_advantage_networks=0.05,
                 policy_network_layers=(128, 128), policy_network_train_steps=4000, training_precision="bfloat16",
                 average_policy="sd_cfr", average_weighting="uniform"),
            "exact NashConv 119.8 ± 3.3 mbb/g after 900 s of training on 2 cores (4 seeds)",
            "benchmarks/results/fhp_curve.md",
        ),
        _preset(
            "fhp_full", "flop_holdem",
            dict(_FHP_BASE, network="suit_symmetric_mlp", traversal_backend="poker",
                 regret_scale="auto", advantage_network_layers=(128, 128), advantage_network_train_steps=150,
                 num_traversals=5000, reinitialize_advantage_networks=False, policy_network_layers=(128, 128),
                 policy_network_train_steps=4000),
            "exact NashConv 232.5 mbb/g after 60 minutes of training on 2 cores with 2 Ray workers "
            "(num_workers=2; one seed; the paper: 37)",
            "benchmarks/results/full_fhp.md",
        ),
    )
}  # fmt: skip


def bfloat16_is_fast() -> bool:
    """Whether this CPU has bfloat16 matrix instructions (AMX or AVX-512 BF16),
    read from /proc/cpuinfo's flags (False where that cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return False
    return any(flag in flags.split() for flag in ("amx_bf16", "avx512_bf16"))


def deep_cfr_preset(name: str, device: str = "cpu") -> Preset:
    """The preset called `name`, with its training precision checked against
    the hardware it will train on (`device`); unknown names get one line
    naming the known ones."""
    if name not in DEEP_CFR_PRESETS:
        raise ValueError(f"unknown Deep CFR preset {name!r}; choose from {', '.join(DEEP_CFR_PRESETS)}")
    preset = DEEP_CFR_PRESETS[name]
    if preset.kwargs.get("training_precision") == "bfloat16" and device == "cpu" and not bfloat16_is_fast():
        print(f"preset {name}: this CPU has no bfloat16 matrix instructions (AMX / AVX-512 BF16), so it trains "
              "in float32 (bfloat16 autocast would be slower here)", file=sys.stderr)  # fmt: skip
        kwargs = dict(preset.kwargs, training_precision="float32")
        preset = dataclasses.replace(preset, kwargs=types.MappingProxyType(kwargs))
    return preset
