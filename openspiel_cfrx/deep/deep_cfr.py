"""Deep CFR (Brown, Lerer, Gross, Sandholm: "Deep Counterfactual Regret
Minimization", ICML 2019) as a drop-in for OpenSpiel's PyTorch `DeepCFRSolver`.

Algorithm 1, per iteration t and player p: K external-sampling traversals
(Algorithm 2, a `Sampler`) add p's sampled regrets to its advantage memory and
the opponent's strategies to the strategy memory, both with weight t; then
p's advantage network is trained from scratch on its memory with loss
t' * sum_a (r~ - V)^2, the weights rescaled by 2/T (linear CFR, Section 5.3).
Strategies are regret matching (eq. 4) on predicted advantages over legal
actions, the highest-advantage action when none is positive (the paper's
choice). The average strategy is a network trained on the strategy memory, or
the exact mixture of every iteration's strategy (`AveragingSettings(average_policy="sd_cfr")`,
Steinberger 2019).

Every switch the paper ablates (Figure 4) is a setting:
`AveragingSettings(linear_weighting=)`, `reinitialize_advantage_networks`,
`TraversalSettings(regret_matching_fallback=)`, `MemorySettings(kind=)`.
"""

from __future__ import annotations

import copy
import functools
import random
from collections.abc import Sequence

import numpy as np
import pyspiel
import torch
from open_spiel.python import policy as policy_lib

from openspiel_cfrx.deep import checkpoint as checkpoint_lib
from openspiel_cfrx.deep.average_strategy import (
    AveragePolicy,
    AverageStrategy,
    IterationNetworks,
)
from openspiel_cfrx.deep.distributed import RaySampler
from openspiel_cfrx.deep.memories import check_memory_budget, make_memory
from openspiel_cfrx.deep.networks import (
    ProbabilityNetwork,
    forward_in_chunks,
    make_network,
    network_inputs,
    reset_parameters,
)
from openspiel_cfrx.deep.regret_matching import regret_matching, uniform_strategy
from openspiel_cfrx.deep.sampler import smallest_share
from openspiel_cfrx.deep.settings import (
    GROUPS,
    OPENSPIEL_RULES,
    AveragingSettings,
    DeepCFRSettings,
    MemorySettings,
    NetworkSettings,
    ReportingSettings,
    TrainingSettings,
    TraversalSettings,
    WorkerSettings,
    regrets_weighting,
)
from openspiel_cfrx.deep.solver_base import NeuralSolver, format_loss
from openspiel_cfrx.deep.threads import apply_num_threads
from openspiel_cfrx.deep.trainer import SQUARED, Trainer
from openspiel_cfrx.deep.validation import check_device, check_loss
from openspiel_cfrx.encoders import InformationStateTensorEncoder, encoded_size
from openspiel_cfrx.sampling import Samples, make_sampler
from openspiel_cfrx.tree import check_game_supported


class DeepCFRSolver(AveragePolicy, NeuralSolver):
    """Deep CFR with batched traversals; an OpenSpiel `Policy` (the average strategy).

    The first fifteen arguments are OpenSpiel's
    (`open_spiel.python.pytorch.deep_cfr.DeepCFRSolver`), same names and
    meaning; `*_network_layers` are hidden widths. Defaults follow the paper's
    recipe (Adam lr 1e-3, gradient-norm clip 1, many SGD steps) where
    OpenSpiel's do not converge.

    Args beyond OpenSpiel's, in groups (`openspiel_cfrx.deep.settings`; each
    a group, a dict of its fields, e.g. `traversal={"backend": "tree"}` for
    `traversal=TraversalSettings(backend="tree")`, or None for its defaults):
      traversal: `TraversalSettings` (backend "state" / "tree" / "vectorized" /
        "poker", batch size, regret-matching fallback).
      training: `TrainingSettings` (gradient clip, bfloat16 precision,
        regret scale "auto" / "pot" / a number, `Schedule`).
      memory: `MemorySettings` (reservoir or sliding window, the strategy
        memory's capacity, float16 features, duplicate aggregation).
      averaging: `AveragingSettings` (linear weighting (Section 5.3), the
        average's own weighting (`docs/decisions.md`, "A uniform average"),
        "network" or "sd_cfr" average policy, kept iteration networks).
      network: `NetworkSettings` (a registered family: "mlp", "plain_mlp",
        "poker" (Appendix C), "suit_symmetric_mlp"; its options; an encoder).
      workers: `WorkerSettings` (Ray workers and address, torch threads).
      reporting: `ReportingSettings` (progress bar, log lines, callbacks; not
        part of `settings`: it changes no result).

    `reinitialize_advantage_networks` (OpenSpiel's, a bool there) also takes a
    fraction rho in (0, 1): each fit starts rho of the way to a fresh
    initialisation, Adam's moments kept ("shrink and perturb",
    `Trainer.reinitialize`). `settings` holds the whole run configuration
    (`DeepCFRSettings`).
    """

    display_name = "Deep CFR"
    settings_groups, settings_type = GROUPS, DeepCFRSettings
    advantage_loss = SQUARED  # Algorithm 1: sum_a (r~(a) - V(I, a))^2, weighted by t'; a variant may override

    def __init__(
        self,
        game: pyspiel.Game,
        policy_network_layers: Sequence[int] = (64, 64, 64),
        advantage_network_layers: Sequence[int] = (64, 64, 64),
        num_iterations: int = 100,
        num_traversals: int = 1000,
        learning_rate: float = 1e-3,
        batch_size_advantage: int | None = 2048,
        batch_size_strategy: int | None = 2048,
        memory_capacity: int = int(1e6),
        policy_network_train_steps: int = 2000,
        advantage_network_train_steps: int = 300,
        reinitialize_advantage_networks: bool | float = True,
        device: str = "cpu",
        seed: int = 42,
        print_nash_convs: bool = False,
        *,
        traversal: TraversalSettings | None = None,
        training: TrainingSettings | None = None,
        memory: MemorySettings | None = None,
        averaging: AveragingSettings | None = None,
        network: NetworkSettings | None = None,
        workers: WorkerSettings | None = None,
        reporting: ReportingSettings | None = None,
    ):
        args = dict(locals())
        openspiel = {name: args[name] for name in OPENSPIEL_RULES}
        self.settings = settings = DeepCFRSettings.resolve(openspiel, {name: args[name] for name in GROUPS})
        check_game_supported(game)
        check_device(device)
        training, avg, net, work = settings.training, settings.averaging, settings.network, settings.workers
        super().__init__(game, num_iterations=num_iterations, seed=seed, schedule=training.schedule,
                         reporting=reporting)  # fmt: skip
        apply_num_threads(work.num_threads, (*policy_network_layers, *advantage_network_layers), device)
        encoder, options = network_inputs(net.family, game, net.encoder, net.options)
        self._encoder = encoder if encoder is not None else InformationStateTensorEncoder(game)
        self._network_options = options
        self._num_actions, self._feature_size = game.num_distinct_actions(), encoded_size(game, self._encoder)
        self._num_traversals, self._advantage_steps = int(num_traversals), int(advantage_network_train_steps)
        self._batch_size, self._reinitialize = batch_size_advantage, float(reinitialize_advantage_networks)
        self._device, self._print_nash_convs = torch.device(device), bool(print_nash_convs)
        self._linear_weighting = bool(avg.linear_weighting)
        self._fallback = settings.traversal.regret_matching_fallback
        self._average_weighting = avg.average_weighting or regrets_weighting(self._linear_weighting)
        scale = training.regret_scale
        self.regret_scale = (max(abs(game.max_utility()), abs(game.min_utility())) if scale == "auto"
                             else scale if scale == "pot" else float(scale))  # fmt: skip
        self._average_policy_kind, self._keep_iteration_networks = avg.average_policy, avg.keeps_iteration_networks
        self._build_parts()
        self._trained = [False, False]  # advantage net p trained at least once
        self._advantage_losses = {0: [], 1: []}

    def _build_parts(self) -> None:
        """Networks with their trainers (seeded), memories, sampler, average strategy."""
        s = self.settings
        o, training, traversal, mem, work = s.openspiel, s.training, s.traversal, s.memory, s.workers

        def trainer(layers, seed_offset):
            net = make_network(s.network.family, self._feature_size, self._num_actions, layers,
                               **self._network_options)  # fmt: skip
            reset_parameters(net.to(self._device), self._seed * 1009 + seed_offset)
            return Trainer(net, o["learning_rate"], training.gradient_clip, precision=training.precision)

        self._advantage = [trainer(o["advantage_network_layers"], p) for p in (0, 1)]
        capacities = (o["memory_capacity"], o["memory_capacity"], mem.strategy_capacity or o["memory_capacity"])
        check_memory_budget(capacities, self._feature_size, self._num_actions, mem.feature_dtype)
        self._memories = [make_memory(mem.kind, int(c), self._feature_size, self._num_actions,
                                      mem.feature_dtype) for c in capacities]  # fmt: skip
        batch_sizes = (o["batch_size_advantage"] or 0, o["batch_size_strategy"] or 0, 4096)
        for memory in self._memories if mem.aggregate_duplicates else ():
            memory.track_duplicates(max_unique=max(batch_sizes))
        local = functools.partial(make_sampler, traversal.backend, self._game, self._encoder, self._num_actions,
                                  int(traversal.batch_size))  # fmt: skip
        if work.num_workers == 1:
            self._sampler = local(self.py_rng, self.np_rng)
        else:
            self._sampler = RaySampler(functools.partial(local, random.Random(0), np.random.default_rng(0)),
                                       int(work.num_workers), self._seed, work.ray_address,
                                       min_share=smallest_share(traversal.backend, traversal.batch_size))  # fmt: skip
        self._kept = IterationNetworks(self._advantage[0].network, self._fallback, self._average_weighting)
        self._average = AverageStrategy(self._game, self._encoder, self._num_actions, self._feature_size,
                                        trainer(o["policy_network_layers"], 2), self._memories[2], self._kept,
                                        int(o["policy_network_train_steps"]), o["batch_size_strategy"],
                                        self._seed)  # fmt: skip

    # ----------------------------------------------------- Algorithm 1, one t
    def iteration_step(self, t: int, stats: dict) -> None:
        """For each player p: K traversals (Algorithm 1 lines 3-5), then train
        p's advantage network on its memory (line 6); alternating updates."""
        stats["advantage_loss"] = [None, None]
        for player in (0, 1):
            with self.timed("traversal"):
                stats["nodes"] += self.collect(player, self.traversals(t))
            stats.setdefault("events", []).extend(self._sampler.take_events())
            with self.timed("training"):
                loss = self.train_advantage_network(player)
            check_loss(loss, f"player {player}'s advantage network", t)
            stats["advantage_loss"][player] = loss
            self._advantage_losses[player].append(loss)
        if self._keep_iteration_networks:
            self._kept.keep(t, self.advantage_networks)
        stats["traversals"] = 2 * self.traversals(t)

    def collect(self, traverser: int, num_traversals: int) -> int:
        """Algorithm 2 `num_traversals` times for `traverser` at the current
        iteration t; regrets go to M_V,p and the opponent's strategies to M_Pi,
        with weight t (lines 10 and 13). Returns nodes touched."""
        nodes = 0
        strategy = self.strategy_snapshot() if self._sampler.distributed else self.current_strategy
        for samples in self._sampler.collect(strategy, traverser, self._iteration, num_traversals):
            self._store(traverser, samples)
            nodes += samples.nodes
        return nodes

    def _store(self, traverser: int, s: Samples) -> None:
        t = self._iteration
        if len(s.advantage_features):
            regrets = s.advantage_regrets
            if self.regret_scale == "pot":  # (the sampler's pot per sample, checked at construction)
                regrets = regrets / s.advantage_pot.astype(np.float32)[:, None]
            elif self.regret_scale != 1.0:
                regrets = regrets / np.float32(self.regret_scale)
            self._memories[traverser].add(s.advantage_features, regrets, s.advantage_mask, t, self.np_rng)
        if len(s.strategy_features):
            self._memories[2].add(s.strategy_features, s.strategy_probs, s.strategy_mask, t, self.np_rng)

    @property
    def current_strategy(self) -> AdvantageStrategy:
        """sigma^t as a `StrategyFn`: `current_strategy(player, features, mask)`
        is regret matching on V(I, . | theta_p) (eq. 4); uniform before the
        first training ("returns 0 for all inputs", line 2). Live networks
        (`strategy_snapshot` copies them)."""
        return AdvantageStrategy(self.advantage_networks, self._trained, self._fallback, self._device)

    def current_policy(self) -> CurrentPolicy:
        """sigma^t (regret matching on the advantage networks, eq. 4) as an OpenSpiel
        `Policy`, with `batch_action_probabilities(states)`: the last iterate, for
        diagnosis (Deep CFR's output is the average strategy, this solver itself)."""
        return CurrentPolicy(self._game, self.strategy_snapshot(), self._average.encode)

    def strategy_snapshot(self) -> AdvantageStrategy:
        """sigma^t as a picklable object holding CPU copies of the advantage
        networks (what Ray workers receive once per traversal round)."""
        nets = [copy.deepcopy(net).cpu() if trained else None
                for net, trained in zip(self.advantage_networks, self._trained, strict=True)]  # fmt: skip
        return AdvantageStrategy(nets, list(self._trained), self._fallback, torch.device("cpu"))

    def linear_scale(self) -> float | None:
        """Linear CFR: a sample from iteration t' weighs t' * 2/T at the current
        iteration T (Section 5.3), so the mean weight stays near 1; None = uniform."""
        return 2.0 / self._iteration if self._linear_weighting else None

    def average_scale(self) -> float | None:
        """`linear_scale` for the strategy memory's samples (`average_weighting`)."""
        return 2.0 / self._iteration if self._average_weighting == "linear" else None

    def train_advantage_network(self, player: int) -> float | None:
        """Fits V(I, a | theta_p) to M_V,p with loss t' * sum_a (r~(a) - V(I, a))^2
        over legal actions, from scratch (Algorithm 1 line 6), or from the
        last iteration's (or a shrunk and perturbed) theta_p."""
        trainer = self._advantage[player]
        if self._reinitialize:  # 1 (True): from scratch; a fraction: shrink and perturb (`Trainer.reinitialize`)
            trainer.reinitialize(self._seed * 1009 + 3 * self._iteration + player, self._reinitialize)
        loss = trainer.fit_memory(self._memories[player], self.advantage_loss, self.advantage_train_steps(self._iteration),
                                  self._batch_size, self.np_rng, self.linear_scale(), self.schedule)  # fmt: skip
        self._trained[player] = self._trained[player] or loss is not None
        return loss

    def train_policy_network(self) -> float | None:
        """Fits Pi(I, a) (a softmax over legal actions) from scratch to M_Pi with
        loss t' * sum_a (sigma^t'(a) - Pi(I, a))^2 (Algorithm 1 line 8; weight 1
        with average_weighting="uniform")."""
        loss = self._average.train(self.average_scale(), self.schedule)
        check_loss(loss, "the average-strategy network", self._iteration)
        return loss

    def save_policy(self, path: str, extra=None) -> None:
        """Writes a policy file: the game, `settings.to_record()` and the
        average-policy network (trained first if M_Pi changed since), without the memories, advantage networks
        and optimiser state of a checkpoint. `DeepCFRSolver.from_checkpoint(path)`
        rebuilds a solver that plays and evaluates that average strategy (head
        to head, LBR, NashConv) but cannot train. A full HULH checkpoint is
        several GB; its policy file a few hundred KB."""
        if self._average_policy_kind != "network":
            raise ValueError("save_policy needs AveragingSettings(average_policy='network'): the sd_cfr average plays every "
                             "iteration's networks, which save_checkpoint keeps")  # fmt: skip
        if self._average.trained_at != self.strategy_buffer.add_calls:
            self.train_policy_network()
        state = {"policy_network": self.policy_network.state_dict(), "iteration": self.iteration,
                 "policy_loss": self._average.loss, "nodes_touched": self.nodes_touched,
                 "history": list(self.history)}  # fmt: skip
        checkpoint_lib.save_policy(self, path, state, extra)

    def load_policy_state(self, state: dict) -> None:
        """Restores `save_policy`'s state (`checkpoint.load_policy` calls it)."""
        self.policy_network.load_state_dict(state["policy_network"])
        self._average.trained_at = self.strategy_buffer.add_calls  # trained: never refitted to the empty M_Pi
        self._average.loss = state["policy_loss"]
        self._iteration = int(state["iteration"]) + 1
        self.nodes_touched = int(state["nodes_touched"])
        self.history = [dict(stats) for stats in state["history"]]

    def traversals(self, iteration: int) -> int:
        """K at `iteration` (the schedule's ramp of `num_traversals`)."""
        return self.schedule.traversals(self._num_traversals, iteration)

    def advantage_train_steps(self, iteration: int) -> int:
        """SGD steps of the advantage networks at `iteration`."""
        return self.schedule.train_steps(self._advantage_steps, iteration)

    # ------------------------------------------------------- NeuralSolver hooks
    def solve_result(self):
        """Like OpenSpiel: (policy network, advantage losses {player: [...]},
        policy loss). The policy network outputs probabilities
        (`ProbabilityNetwork`; `net(x, legal_mask)` is exactly what
        `action_probabilities` plays); `solver.policy_network` is the logits network."""
        policy_loss = self.train_policy_network() if self._average_policy_kind == "network" else None
        return ProbabilityNetwork(self.policy_network), self._advantage_losses, policy_loss

    def progress_postfix(self, stats: dict) -> dict:
        return {"nodes": stats["nodes"], "adv_loss": f"{stats['advantage_loss'][1]:.3g}"}

    def log_line(self, stats: dict) -> str:
        losses = "/".join(format_loss(x) for x in stats["advantage_loss"])
        return f"{super().log_line(stats)}, traversals {stats['traversals']}, advantage losses {losses}"

    def report(self, stats: dict) -> None:
        if self._print_nash_convs:  # OpenSpiel's option
            print(f"NashConv @ {stats['iteration']} = {self.nash_conv()} | Policy loss = {self._average.loss}")

    def parts(self) -> dict:
        return {"advantage_0": self._advantage[0], "advantage_1": self._advantage[1], "policy": self._average.trainer,
                "advantage_memory_0": self._memories[0], "advantage_memory_1": self._memories[1],
                "strategy_memory": self._memories[2], "iteration_networks": self._kept}  # fmt: skip

    def extra_state(self) -> dict:
        return {"trained": list(self._trained), "policy_trained_at": self._average.trained_at,
                "policy_loss": self._average.loss,
                "advantage_losses": [list(self._advantage_losses[p]) for p in (0, 1)]}  # fmt: skip

    def load_extra_state(self, state: dict) -> None:
        self._trained = [bool(x) for x in state["trained"]]
        self._average.trained_at = int(state["policy_trained_at"])
        self._average.loss = state["policy_loss"]
        self._advantage_losses = {p: list(v) for p, v in enumerate(state["advantage_losses"])}

    # ------------------------------------------------------------ OpenSpiel API
    @property
    def advantage_buffers(self):
        return self._memories[:2]

    @property
    def strategy_buffer(self):
        return self._memories[2]

    @property
    def advantage_networks(self) -> list[torch.nn.Module]:
        return [trainer.network for trainer in self._advantage]

    @property
    def policy_network(self) -> torch.nn.Module:
        return self._average.trainer.network

    @property
    def sampler(self):
        """Where the traversals run (`sampler.py`; a `distributed.RaySampler` when num_workers > 1)."""
        return self._sampler

    @property
    def feature_size(self) -> int:
        """The length of the networks' input (the encoder's features)."""
        return self._feature_size

    @property
    def encoder(self):
        """The networks' input: `encoder(state, player) -> floats`."""
        return self._encoder

    @property
    def advantage_trainers(self) -> list[Trainer]:
        """The advantage networks' trainers (network and optimiser), one per player."""
        return list(self._advantage)

    @property
    def iteration_networks(self) -> IterationNetworks:
        """Every iteration's advantage networks (empty unless kept)."""
        return self._kept


class AdvantageStrategy:
    """sigma^t(I): regret matching on a player's advantage network (eq. 4), or
    uniform before its first training; `strategy(player, features, mask)`."""

    def __init__(self, networks, trained, fallback: str, device):
        self.networks, self.trained, self.fallback, self.device = networks, trained, fallback, device

    def __call__(self, player: int, features, mask) -> np.ndarray:
        mask = np.asarray(mask)
        if not self.trained[player]:
            return uniform_strategy(mask)
        with torch.inference_mode():
            advantages = forward_in_chunks(self.networks[player], torch.as_tensor(features, device=self.device),
                                           device=self.device)  # fmt: skip
        return regret_matching(advantages.cpu().numpy(), mask, self.fallback)

    def trained_network(self, player: int):
        """`player`'s advantage network once trained, else None (sigma^t is
        uniform): for samplers that evaluate the network in parts of its own
        (the Appendix C network under the poker backend,
        `neural_poker.poker_network.factored_strategy`)."""
        return self.networks[player] if self.trained[player] else None


class CurrentPolicy(policy_lib.Policy):
    """`DeepCFRSolver.current_policy()`: sigma^t at any states of the game."""

    def __init__(self, game, strategy: AdvantageStrategy, encode):
        super().__init__(game, list(range(game.num_players())))
        self._strategy, self._encode = strategy, encode

    def batch_action_probabilities(self, states) -> np.ndarray:
        states = list(states)
        out = np.zeros((len(states), self.game.num_distinct_actions()))
        if not states:
            return out
        features, mask = (t.numpy() for t in self._encode(states))
        players = np.array([s.current_player() for s in states])
        for player in np.unique(players):
            rows = np.flatnonzero(players == player)
            out[rows] = self._strategy(int(player), features[rows], mask[rows])
        return out

    def action_probabilities(self, state, player_id=None):
        probs = self.batch_action_probabilities([state])[0]
        return {int(a): float(probs[a]) for a in state.legal_actions()}
