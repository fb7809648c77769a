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
the exact mixture of every iteration's strategy (`average_policy="sd_cfr"`,
Steinberger 2019).

Every switch the paper ablates (Figure 4) is a constructor argument:
`linear_weighting`, `reinitialize_advantage_networks`,
`regret_matching_fallback`, `memory`.
"""

from __future__ import annotations

import copy
import functools
import random
from collections.abc import Callable, Sequence

import numpy as np
import pyspiel
import torch
from open_spiel.python import policy as policy_lib

from openspiel_cfrx.deep import checkpoint as checkpoint_lib
from openspiel_cfrx.deep.average_strategy import (
    AVERAGE_WEIGHTINGS,
    KINDS,
    AveragePolicy,
    AverageStrategy,
    IterationNetworks,
)
from openspiel_cfrx.deep.distributed import RaySampler
from openspiel_cfrx.deep.memories import FEATURE_DTYPES, check_memory_budget, make_memory
from openspiel_cfrx.deep.networks import (
    ProbabilityNetwork,
    forward_in_chunks,
    make_network,
    network_inputs,
    reset_parameters,
)
from openspiel_cfrx.deep.regret_matching import FALLBACKS, regret_matching, uniform_strategy
from openspiel_cfrx.deep.sampler import smallest_share
from openspiel_cfrx.deep.schedule import Schedule
from openspiel_cfrx.deep.solver_base import NeuralSolver, format_loss
from openspiel_cfrx.deep.trainer import PRECISIONS, SQUARED, Trainer
from openspiel_cfrx.deep.validation import check_device, check_loss, check_settings
from openspiel_cfrx.encoders import InformationStateTensorEncoder, encoded_size
from openspiel_cfrx.sampling import SAMPLERS, Samples, make_sampler
from openspiel_cfrx.tree import check_game_supported

# Constructor settings and their rules (openspiel_cfrx.deep.validation).
SETTING_RULES = {
    "num_iterations": "int>=1", "num_traversals": "int>=1", "learning_rate": "real>0",
    "batch_size_advantage": "int>=1|None", "batch_size_strategy": "int>=1|None", "memory_capacity": "int>=1",
    "policy_network_train_steps": "int>=0", "advantage_network_train_steps": "int>=0",
    "reinitialize_advantage_networks": "bool|unit", "seed": "int>=0", "linear_weighting": "bool",
    "average_weighting": (*AVERAGE_WEIGHTINGS, None),
    "regret_scale": "real>0|auto|pot",
    "regret_matching_fallback": FALLBACKS, "strategy_memory_capacity": "int>=1|None",
    "gradient_clip": "real>0|None", "traversal_batch_size": "int>=1", "aggregate_duplicates": "bool",
    "traversal_backend": tuple(SAMPLERS), "num_threads": "int>=1|None", "average_policy": KINDS,
    "callback_every": "int>=1", "num_workers": "int>=1",
    "ray_address": "address|None", "training_precision": tuple(PRECISIONS),
    "memory_feature_dtype": FEATURE_DTYPES,
}  # fmt: skip


class DeepCFRSolver(AveragePolicy, NeuralSolver):
    """Deep CFR with batched traversals; an OpenSpiel `Policy` (the average strategy).

    The first fifteen arguments are OpenSpiel's
    (`open_spiel.python.pytorch.deep_cfr.DeepCFRSolver`), same names and
    meaning; `*_network_layers` are hidden widths. Defaults follow the paper's
    recipe (Adam lr 1e-3, gradient-norm clip 1, many SGD steps) where
    OpenSpiel's do not converge.

    Args (beyond OpenSpiel's):
      linear_weighting: weight samples by iteration t, rescaled by 2/T (Section 5.3); else uniform.
      average_weighting: the average strategy's own weights w_t: "linear"
        (w_t = t) or "uniform" (w_t = 1), for both averages (the strategy
        memory's loss weights and the sd_cfr mixture); None (default) = as
        the regrets' (`linear_weighting`), the paper's coupling (Section 5.3
        weighs both by t). A departure for the average alone: on 5x2 flop
        hold'em the uniform average of the same iterates is lower at 900 s
        and still falling (`docs/decisions.md`, "A uniform average";
        `benchmarks/results/fhp_curve.md`).
      regret_scale: sampled regrets are stored (and fitted) divided by this
        positive number; "auto" = the game's largest |utility|. Regret
        matching is invariant to it, so the strategies it implies are the
        same; it only changes what the advantage network must output (raw
        chips in poker reach 1e2-1e3, while Adam's steps of ~lr move a
        freshly initialised head slowly). Default 1 (the paper's raw regrets).
        "pot" (traversal_backend="poker") divides each sample by the chips in
        the pot at its node: the advantage network predicts regrets in pots.
        An infoset's regrets all share its pot, so the minimiser of the loss
        at each infoset still implies the same sigma^t; what changes is how
        the loss weighs infosets against each other (the paper's, in chips,
        weighs an infoset's error by its pot squared).
      reinitialize_advantage_networks (OpenSpiel's, a bool there): True (paper)
        retrains each advantage network from scratch every iteration, False
        fine-tunes it (warm start); a fraction rho in (0, 1) moves it rho of
        the way to a fresh initialisation before each fit, Adam's moments
        kept ("shrink and perturb", `Trainer.reinitialize`).
      regret_matching_fallback: "argmax" (paper) or "uniform" when no predicted advantage is positive.
      memory: "reservoir" (paper) or "sliding_window" (Figure 4 ablation);
        strategy_memory_capacity: the strategy memory's (default `memory_capacity`).
      network, network_options: a registered network family
        (`openspiel_cfrx.deep.register_network`: "mlp", "plain_mlp", "poker"
        (Appendix C, brings its own card/bet encoder)) and its kwargs.
      encoder: callable(state, player) -> floats with a `feature_size`
        attribute; default `information_state_tensor`.
      gradient_clip: max gradient norm (paper: 1); None disables clipping.
      traversal_batch_size: traversals run concurrently (one forward pass per player per round).
      aggregate_duplicates: let the trainer fit memories merged by infoset
        (exact for the squared losses; `trainer.py`) while they hold at most a
        batch of distinct infosets.
      schedule: ramps and learning-rate schedule (`Schedule`; default constant).
      traversal_backend: "state" (pyspiel states, any game), "tree" (the
        extracted tree: same samples, faster), "vectorized" (numpy arrays over
        the extracted tree: same distribution, fastest for small games),
        "poker" (limit poker with universal_poker's tensor, e.g. flop hold'em:
        deals as arrays over the betting tree, same distribution); `sampler.py`.
      num_threads: if set, `torch.set_num_threads(num_threads)` (process-wide).
      training_precision: "float32" (default) or "bfloat16": the networks'
        SGD in mixed precision (`trainer.py`; float32 parameters, loss and
        queries).
      memory_feature_dtype: "float32" (default) or "float16": the memories
        store features in half the bytes, exactly (refused otherwise: the
        0/1 infoset tensors and the poker encoders' inputs are exact), so a
        memory of the same RAM holds ~2x the entries (`memories.py`). Memories
        that could not fill up in the RAM available are refused up front.
      num_workers, ray_address: traversals on `num_workers` Ray actors
        (`distributed.py`; same seed and worker count = same run); 1 runs them
        in-process without importing Ray. `ray_address` None starts a local
        Ray instance, "auto" / "host:port" / "ray://host:port" join a cluster.
      average_policy: "network" (paper) or "sd_cfr" (exact mixture of kept iteration networks).
      keep_iteration_networks: keep every iteration's networks (default: when
        average_policy="sd_cfr"); lets `strategy_array(tree, average="sd_cfr")` work.
      progress, log_every, verbose, callback, callback_every: see `NeuralSolver`.
    """

    display_name = "Deep CFR"
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
        linear_weighting: bool = True,
        average_weighting: str | None = None,
        regret_scale: float | str = 1.0,
        regret_matching_fallback: str = "argmax",
        memory: str = "reservoir",
        strategy_memory_capacity: int | None = None,
        network: str = "mlp",
        network_options: dict | None = None,
        encoder: Callable | None = None,
        gradient_clip: float | None = 1.0,
        traversal_batch_size: int = 1000,
        aggregate_duplicates: bool = True,
        schedule: Schedule | None = None,
        traversal_backend: str = "state",
        num_threads: int | None = None,
        num_workers: int = 1,
        ray_address: str | None = None,
        average_policy: str = "network",
        keep_iteration_networks: bool | None = None,
        progress: bool = False,
        log_every: int = 0,
        verbose: bool = False,
        callback: Callable[[DeepCFRSolver], None] | None = None,
        callback_every: int = 1,
        training_precision: str = "float32",
        memory_feature_dtype: str = "float32",
    ):
        keep = _check_arguments(game, locals())
        super().__init__(game, num_iterations=num_iterations, seed=seed, schedule=schedule, progress=progress,
                         log_every=log_every, verbose=verbose, callback=callback,
                         callback_every=callback_every)  # fmt: skip
        if num_threads is not None:
            torch.set_num_threads(int(num_threads))
        encoder, options = network_inputs(network, game, encoder, network_options)
        self._encoder = encoder if encoder is not None else InformationStateTensorEncoder(game)
        self._num_actions, self._feature_size = game.num_distinct_actions(), encoded_size(game, self._encoder)
        self._num_traversals, self._advantage_steps = int(num_traversals), int(advantage_network_train_steps)
        self._batch_size, self._reinitialize = batch_size_advantage, float(reinitialize_advantage_networks)
        self._device, self._print_nash_convs = torch.device(device), bool(print_nash_convs)
        self._linear_weighting, self._fallback = bool(linear_weighting), regret_matching_fallback
        regrets_weighting = "linear" if self._linear_weighting else "uniform"
        self._average_weighting = average_weighting or regrets_weighting
        self.regret_scale = (max(abs(game.max_utility()), abs(game.min_utility())) if regret_scale == "auto"
                             else regret_scale if regret_scale == "pot" else float(regret_scale))  # fmt: skip
        self._average_policy_kind, self._keep_iteration_networks = average_policy, keep
        self.config = _config(game, self._feature_size, self._num_actions, policy_network_layers,
                              advantage_network_layers, network, memory, memory_capacity, strategy_memory_capacity,
                              average_policy)  # fmt: skip
        # Settings absent at their defaults, so checkpoints written before the options existed still match.
        if self.regret_scale != 1.0:
            self.config["regret_scale"] = self.regret_scale
        if not self._linear_weighting:
            self.config["linear_weighting"] = False
        if self._average_weighting != regrets_weighting:
            self.config["average_weighting"] = self._average_weighting
        self._build_parts(dict(locals(), network_options=options))
        self._trained = [False, False]  # advantage net p trained at least once
        self._advantage_losses = {0: [], 1: []}

    def _build_parts(self, a: dict) -> None:
        """Networks with their trainers (seeded), memories, sampler, average strategy."""

        def trainer(layers, seed_offset):
            net = make_network(a["network"], self._feature_size, self._num_actions, layers, **a["network_options"])
            reset_parameters(net.to(self._device), self._seed * 1009 + seed_offset)
            return Trainer(net, a["learning_rate"], a["gradient_clip"], precision=a["training_precision"])

        self._advantage = [trainer(a["advantage_network_layers"], p) for p in (0, 1)]
        capacities = (a["memory_capacity"], a["memory_capacity"], self.config["strategy_memory_capacity"])
        check_memory_budget(capacities, self._feature_size, self._num_actions, a["memory_feature_dtype"])
        self._memories = [make_memory(a["memory"], int(c), self._feature_size, self._num_actions,
                                      a["memory_feature_dtype"]) for c in capacities]  # fmt: skip
        batch_sizes = (a["batch_size_advantage"] or 0, a["batch_size_strategy"] or 0, 4096)
        for mem in self._memories if a["aggregate_duplicates"] else ():
            mem.track_duplicates(max_unique=max(batch_sizes))
        local = functools.partial(make_sampler, a["traversal_backend"], self._game, self._encoder, self._num_actions,
                                  int(a["traversal_batch_size"]))  # fmt: skip
        if a["num_workers"] == 1:
            self._sampler = local(self.py_rng, self.np_rng)
        else:
            self._sampler = RaySampler(functools.partial(local, random.Random(0), np.random.default_rng(0)),
                                       int(a["num_workers"]), self._seed, a["ray_address"],
                                       min_share=smallest_share(a["traversal_backend"], a["traversal_batch_size"]))  # fmt: skip
        self._kept = IterationNetworks(self._advantage[0].network, self._fallback, self._average_weighting)
        self._average = AverageStrategy(self._game, self._encoder, self._num_actions, self._feature_size,
                                        trainer(a["policy_network_layers"], 2), self._memories[2], self._kept,
                                        int(a["policy_network_train_steps"]), a["batch_size_strategy"],
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
        """Writes a policy file: `config` and the average-policy network (trained
        first if M_Pi changed since), without the memories, advantage networks
        and optimiser state of a checkpoint. `DeepCFRSolver.from_checkpoint(path)`
        rebuilds a solver that plays and evaluates that average strategy (head
        to head, LBR, NashConv) but cannot train. A full HULH checkpoint is
        several GB; its policy file a few hundred KB."""
        if self._average_policy_kind != "network":
            raise ValueError("save_policy needs average_policy='network': the sd_cfr average plays every "
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

    @classmethod
    def settings_from_config(cls, config: dict) -> dict:
        settings = {key: config[key] for key in ("network", "memory", "average_policy")}
        settings.update({key: tuple(config[key]) for key in ("policy_network_layers", "advantage_network_layers")})
        settings.update({key: int(config[key]) for key in ("memory_capacity", "strategy_memory_capacity")})
        if "regret_scale" in config:
            scale = config["regret_scale"]
            settings["regret_scale"] = scale if scale == "pot" else float(scale)
            if scale == "pot":  # (only the poker backend knows the pots)
                settings["traversal_backend"] = "poker"
        settings.update({key: config[key] for key in ("linear_weighting", "average_weighting") if key in config})
        return settings


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

    def factored(self, player: int) -> FactoredStrategy | None:
        """`player`'s sigma^t by parts (`FactoredStrategy`) when its network
        computes its forward pass in parts (`card_part`, `bet_part`, `trunk`:
        the Appendix C network) and is trained; else None."""
        network = self.networks[player]
        if not self.trained[player] or not all(hasattr(network, name) for name in ("card_part", "bet_part", "trunk")):
            return None
        return FactoredStrategy(network, self.fallback, self.device)


class FactoredStrategy:
    """sigma^t(I) (eq. 4) for rows that repeat the same cards or the same
    betting, e.g. the poker traversal backend's (one deal's cards at every
    node of a round, one node's betting for every deal): `cards(slots)` and
    `bets(features)` compute the network's card and bet parts once per
    distinct value, then `__call__` runs the per-row trunk on row i's parts
    `card_rows[i]`, `bet_rows[i]` and regret-matches. The same function as
    `AdvantageStrategy` on the concatenated inputs (equal up to float
    rounding); only the work is shared."""

    def __init__(self, network, fallback: str, device):
        self.network, self.fallback, self.device = network, fallback, device

    def cards(self, slots: np.ndarray) -> torch.Tensor:
        """Card parts of the card-slot inputs [K, slots]."""
        with torch.inference_mode():
            return self.network.card_part(torch.as_tensor(slots, device=self.device))

    def bets(self, features: np.ndarray) -> torch.Tensor:
        """Bet parts of the bet inputs [M, nb]."""
        with torch.inference_mode():
            return self.network.bet_part(torch.as_tensor(features, device=self.device))

    def __call__(self, cards: torch.Tensor, card_rows: np.ndarray, bets: torch.Tensor, bet_rows: np.ndarray,
                 mask: np.ndarray) -> np.ndarray:  # fmt: skip
        def trunk(card_rows, bet_rows):
            return self.network.trunk(cards.index_select(0, card_rows).add_(bets.index_select(0, bet_rows)))

        with torch.inference_mode():
            card_rows, bet_rows = (torch.as_tensor(rows, device=self.device) for rows in (card_rows, bet_rows))
            advantages = forward_in_chunks(trunk, card_rows, bet_rows, device=self.device)
        return regret_matching(advantages.cpu().numpy(), np.asarray(mask), self.fallback)


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


def _check_arguments(game, args: dict) -> bool:
    """Validates the constructor's arguments; returns whether to keep iteration networks."""
    check_game_supported(game)
    check_settings(args, SETTING_RULES)
    check_device(args["device"])
    keep = args["keep_iteration_networks"]
    keep = args["average_policy"] == "sd_cfr" if keep is None else bool(keep)
    if args["average_policy"] == "sd_cfr" and not keep:
        raise ValueError("average_policy='sd_cfr' needs keep_iteration_networks=True (or None)")
    if args["regret_scale"] == "pot" and args["traversal_backend"] != "poker":
        raise ValueError(f"regret_scale='pot' needs traversal_backend='poker' (it reads the pot at each node from the "
                         f"betting tree), got traversal_backend={args['traversal_backend']!r}: use 'poker' for limit "
                         "poker, or regret_scale='auto' / a number")  # fmt: skip
    return keep


def _config(game, feature_size, num_actions, policy_layers, advantage_layers, network, memory, capacity,
            strategy_capacity, average_policy) -> dict:  # fmt: skip
    """The settings a checkpoint must match."""
    return {"game": str(game), "feature_size": feature_size, "num_actions": num_actions,
            "policy_network_layers": [int(h) for h in policy_layers],
            "advantage_network_layers": [int(h) for h in advantage_layers], "network": network, "memory": memory,
            "memory_capacity": int(capacity), "strategy_memory_capacity": int(strategy_capacity or capacity),
            "average_policy": average_policy}  # fmt: skip
