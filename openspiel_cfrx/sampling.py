"""The sampler protocol: where a neural solver's training data comes from.

Torch-free, and the leaf both `openspiel_cfrx.deep` (the solvers and the
"state", "tree" and "vectorized" backends) and `openspiel_cfrx.neural_poker`
(the "poker" backend) stand on; neither names the other. A sampler runs K
traversals for one traverser at iteration t against the current strategies
and hands back what they produced as arrays, chunk by chunk (`Samples`); the
solver inserts each chunk into its memories before the next one is drawn
(Deep CFR, Algorithm 2 of Brown et al. 2019). Backends register a factory by
name in `SAMPLERS`; `DeepCFRSolver(traversal=TraversalSettings(backend=name))` builds one with
`make_sampler`.

The current strategies reach a sampler as a `StrategyFn`:
`strategy(player, features [B, F] float32, legal_mask [B, A] bool) -> [B, A]`
(for Deep CFR: regret matching on the player's advantage network).
"""

from __future__ import annotations

import abc
import dataclasses
import random
from collections.abc import Callable, Iterator

import numpy as np

from openspiel_cfrx.registry import Registry

StrategyFn = Callable[[int, np.ndarray, np.ndarray], np.ndarray]


@dataclasses.dataclass
class Samples:
    """One chunk of traversals' memory insertions (Algorithm 2 lines 10 and 13).

    advantage_*: per traverser infoset visit: encoding [n, F], sampled regrets
      r~(I, a) [n, A] (0 at illegal actions), legal mask [n, A].
    strategy_*: per opponent infoset visit: encoding, sigma^t(I), legal mask.
    nodes: histories touched.
    advantage_pot: per traverser visit, the chips both players have put in at
      its node [n], from samplers registered with `reports_pot=True` (the
      "poker" backend); None elsewhere. `TrainingSettings(regret_scale="pot")` divides by it.
    """

    advantage_features: np.ndarray
    advantage_regrets: np.ndarray
    advantage_mask: np.ndarray
    strategy_features: np.ndarray
    strategy_probs: np.ndarray
    strategy_mask: np.ndarray
    nodes: int
    advantage_pot: np.ndarray | None = None


class Sampler(abc.ABC):
    """Runs traversals; `collect` yields their `Samples` in a reproducible order.

    `rng` is the sampler's random stream (random.Random or a numpy Generator);
    `distributed` samplers need a picklable `strategy`."""

    distributed = False
    rng: random.Random | np.random.Generator

    @abc.abstractmethod
    def collect(self, strategy: StrategyFn, traverser: int, iteration: int, count: int) -> Iterator[Samples]:
        """`count` traversals for `traverser` at `iteration`, in chunks."""

    def reseed(self, seed: int) -> None:
        """A fresh random stream of the same kind, seeded by `seed`."""
        self.rng = random.Random(seed) if isinstance(self.rng, random.Random) else np.random.default_rng(seed)

    def take_events(self) -> list[str]:
        """Notable events since the last call (e.g. a restarted worker), for the log line."""
        return []


# factory(game, encoder, num_actions, batch_size, py_rng, np_rng) -> Sampler
SamplerFactory = Callable[..., Sampler]
SAMPLERS: Registry[SamplerFactory] = Registry("traversal backend")


_REPORTS_POT: set[str] = set()


def register_sampler(name: str, factory: SamplerFactory, *, reports_pot: bool = False) -> None:
    """Makes `TraversalSettings(backend=name)` available to `DeepCFRSolver`;
    `reports_pot`: its `Samples` carry `advantage_pot`."""
    SAMPLERS.register(name, factory)
    (_REPORTS_POT.add if reports_pot else _REPORTS_POT.discard)(name)


def reports_pot(backend: str) -> bool:
    """Whether the backend's `Samples` carry `advantage_pot` (for `regret_scale="pot"`)."""
    SAMPLERS.get(backend)  # (a declared backend registers itself on first lookup)
    return backend in _REPORTS_POT


def make_sampler(backend: str, game, encoder, num_actions: int, batch_size: int,
                 py_rng: random.Random, np_rng: np.random.Generator) -> Sampler:  # fmt: skip
    """The sampler of a traversal backend name (`SAMPLERS`)."""
    return SAMPLERS.get(backend)(game, encoder, num_actions, batch_size, py_rng, np_rng)
