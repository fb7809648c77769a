"""Deep CFR (Brown, Lerer, Gross, Sandholm: "Deep Counterfactual Regret
Minimization", ICML 2019) as a drop-in for OpenSpiel's PyTorch `DeepCFRSolver`.

Per iteration t and player p (Algorithm 1): K external-sampling traversals
(Algorithm 2, batched: see `traversal.py`) add the traverser's sampled regrets
to p's advantage memory with weight t and the opponent's strategies to the
strategy memory with weight t; then p's advantage network is trained from
scratch (or fine-tuned) on its memory with loss t' * sum_a (r~ - V)^2, the
weights rescaled by 2/T at iteration T (linear CFR, Section 5.3). Strategies
come from regret matching (eq. 4) on predicted advantages over legal actions,
with the highest-advantage action when none is positive (the paper's choice).
The average strategy is a network trained on the strategy memory with
t-weighted MSE on probabilities; or, as the paper mentions (Steinberger 2019),
the exact mixture of every iteration's regret-matching strategy
(`average_policy="sd_cfr"`).

Every switch the paper ablates (Figure 4) is a constructor argument:
`linear_weighting`, `reinitialize_advantage_networks`,
`regret_matching_fallback`, `memory`.
"""

from __future__ import annotations

import copy
import functools
import logging
import math
import random
import time
from collections.abc import Callable, Sequence

import numpy as np
import pyspiel
import torch
from open_spiel.python import policy as policy_lib

from openspiel_cfrx.deep import checkpoint as checkpoint_lib
from openspiel_cfrx.deep.memories import make_memory
from openspiel_cfrx.deep.networks import (
    FlatAdam,
    ProbabilityNetwork,
    make_network,
    masked_softmax,
    regret_matching,
    reset_parameters,
)
from openspiel_cfrx.deep.traversal import (
    TraversalRecord,
    TreeWalker,
    external_sampling_traversal,
    legal_mask,
    run_batched,
    tree_external_sampling_traversal,
)
from openspiel_cfrx.deep.validation import check_device, check_loss, check_settings
from openspiel_cfrx.tree import check_game_supported

logger = logging.getLogger(__name__)

_EVAL_BATCH = 8192


class InformationStateTensorEncoder:
    """Encodes an infoset as the game's `information_state_tensor(player)`."""

    name = "information_state_tensor"

    def __init__(self, game: pyspiel.Game):
        if not game.get_type().provides_information_state_tensor:
            raise ValueError(
                f"game '{game.get_type().short_name}' has no information_state_tensor; "
                "pass encoder=<callable(state, player) -> list of floats> with a "
                "feature_size attribute"
            )
        self.feature_size = int(np.prod(game.information_state_tensor_shape()))

    def __call__(self, state: pyspiel.State, player: int) -> list[float]:
        return state.information_state_tensor(player)


def _first_decision_state(game: pyspiel.Game) -> pyspiel.State:
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    return state


# Constructor settings and their rules (openspiel_cfrx.deep.validation).
SETTING_RULES = {
    "num_iterations": "int>=1",
    "num_traversals": "int>=1",
    "learning_rate": "real>0",
    "batch_size_advantage": "int>=1|None",
    "batch_size_strategy": "int>=1|None",
    "memory_capacity": "int>=1",
    "policy_network_train_steps": "int>=0",
    "advantage_network_train_steps": "int>=0",
    "reinitialize_advantage_networks": "bool",
    "seed": "int>=0",
    "linear_weighting": "bool",
    "regret_matching_fallback": ("argmax", "uniform"),
    "strategy_memory_capacity": "int>=1|None",
    "gradient_clip": "real>0|None",
    "traversal_batch_size": "int>=1",
    "aggregate_duplicates": "bool",
    "learning_rate_schedule": ("constant", "cosine"),
    "advantage_steps_ramp": "int>=0",
    "advantage_steps_initial": "int>=1|None",
    "traversals_ramp": "int>=0",
    "traversals_initial": "int>=1|None",
    "num_threads": "int>=1|None",
    "average_policy": ("network", "sd_cfr"),
    "callback_every": "int>=1",
}


class DeepCFRSolver(policy_lib.Policy):
    """Deep CFR with batched traversals; an OpenSpiel `Policy` (the average strategy).

    The first fifteen arguments are OpenSpiel's
    (`open_spiel.python.pytorch.deep_cfr.DeepCFRSolver`), same names and
    meaning; `*_network_layers` are hidden widths of our MLP (skip connections
    and final normalisation, Section 5.1). Defaults differ where OpenSpiel's do
    not converge (one SGD step per iteration, lr 1e-4); ours follow the paper's
    training recipe (Adam lr 1e-3, gradient-norm clip 1, many SGD steps) scaled
    to small games.

    Args (beyond OpenSpiel's):
      linear_weighting: weight samples by their iteration t, rescaled by 2/T
        when training at iteration T (Section 5.3); False = uniform weights.
      regret_matching_fallback: "argmax" (paper) or "uniform" when no predicted
        advantage is positive.
      memory: "reservoir" (paper) or "sliding_window" (Figure 4 ablation).
      strategy_memory_capacity: capacity of the strategy memory (default
        `memory_capacity`).
      network: registered network name ("mlp", "plain_mlp", or one added with
        `openspiel_cfrx.deep.register_network`); network_options: its kwargs.
        "poker" (Appendix C card/bet network, flop_holdem / hulh only) brings
        its own encoder, `games.poker_encoding.PokerNetworkEncoder`.
      encoder: callable(state, player) -> floats with a `feature_size`
        attribute; default `information_state_tensor`.
      gradient_clip: max gradient norm (paper: 1); None disables clipping.
      traversal_batch_size: traversals run concurrently (each round of queries
        is one forward pass per player).
      aggregate_duplicates: merge memory entries of the same infoset
        (summed weights, weighted-mean targets: exactly the same loss up to a
        constant, memories.py) and, while a memory holds at most a batch's
        worth of distinct infosets, take each SGD step on the whole merged
        memory (the exact gradient of the loss the paper's minibatches
        estimate). Small games only; large ones fall back to sampling.
      learning_rate_schedule: "constant" (paper) or "cosine": within each
        (re)training run the Adam learning rate anneals from `learning_rate`
        to ~0 over the run's SGD steps (a new run restarts it).
      advantage_steps_ramp: 0 (paper: every iteration takes
        `advantage_network_train_steps`) or R > 0: iteration t takes
        ceil(steps * min(1, t / R)) steps, so the first iterations, whose
        strategies carry linear-CFR weight ~t and are soon outweighed, cost
        less wall-clock; with `advantage_steps_initial=S0` the steps go
        linearly from S0 at t = 1 to `advantage_network_train_steps` at t = R
        instead (S0 may be larger: fewer steps late).
      traversals_ramp, traversals_initial: the same ramp for the number of
        traversals per player (`num_traversals` from iteration R on).
      traversal_backend: "state" walks pyspiel states (any game); "tree"
        walks the extracted `openspiel_cfrx.get_tree(game)` arrays instead
        (same samples for the same seed, much faster; only for games small
        enough to extract); "vectorized" runs all traversals of a batch
        together as numpy arrays over the extracted tree, with sigma^t of
        every infoset from one forward pass per player
        (`vector_traversal.py`: same sampling distribution, different random
        stream; fastest for small games).
      num_threads: if set, `torch.set_num_threads(num_threads)` (process-wide).
      average_policy: "network" (train the policy network, paper default) or
        "sd_cfr" (keep every iteration's advantage networks and play their
        reach-weighted average, exact on the infosets asked for).
      keep_iteration_networks: store every iteration's advantage networks
        (default: only when average_policy="sd_cfr"); lets
        `strategy_array(tree, average="sd_cfr")` evaluate the exact mixture
        whatever `average_policy` is.
      progress: show a tqdm progress bar in `solve()`.
      log_every: log a line every N iterations (0 = never) through `logging`
        and `print` when `verbose`.
      callback, callback_every: `callback(solver)` after every
        `callback_every`-th iteration (e.g. to record exploitability).
    """

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
        reinitialize_advantage_networks: bool = True,
        device: str = "cpu",
        seed: int = 42,
        print_nash_convs: bool = False,
        *,
        linear_weighting: bool = True,
        regret_matching_fallback: str = "argmax",
        memory: str = "reservoir",
        strategy_memory_capacity: int | None = None,
        network: str = "mlp",
        network_options: dict | None = None,
        encoder: Callable | None = None,
        gradient_clip: float | None = 1.0,
        traversal_batch_size: int = 1000,
        aggregate_duplicates: bool = True,
        learning_rate_schedule: str = "constant",
        advantage_steps_ramp: int = 0,
        advantage_steps_initial: int | None = None,
        traversals_ramp: int = 0,
        traversals_initial: int | None = None,
        traversal_backend: str = "state",
        num_threads: int | None = None,
        average_policy: str = "network",
        keep_iteration_networks: bool | None = None,
        progress: bool = False,
        log_every: int = 0,
        verbose: bool = False,
        callback: Callable[[DeepCFRSolver], None] | None = None,
        callback_every: int = 1,
    ):
        check_game_supported(game)
        super().__init__(game, list(range(game.num_players())))
        self._validate(locals())
        if network == "poker":  # Appendix C card/bet network: PokerEncoder input and layout
            from openspiel_cfrx.deep.poker_network import solver_inputs

            encoder, network_options = solver_inputs(game, encoder, network_options)
        self._game = game
        self._num_actions = game.num_distinct_actions()
        self._encoder = encoder if encoder is not None else InformationStateTensorEncoder(game)
        self._feature_size = int(getattr(self._encoder, "feature_size", 0))
        if self._feature_size < 1:
            first = _first_decision_state(game)
            self._feature_size = len(self._encoder(first, first.current_player()))
        self._num_iterations = int(num_iterations)
        self._num_traversals = int(num_traversals)
        self._learning_rate = float(learning_rate)
        self._batch_size_advantage = batch_size_advantage
        self._batch_size_strategy = batch_size_strategy
        self._memory_capacity = int(memory_capacity)
        self._policy_network_train_steps = int(policy_network_train_steps)
        self._advantage_network_train_steps = int(advantage_network_train_steps)
        self._reinitialize_advantage_networks = bool(reinitialize_advantage_networks)
        self._device = torch.device(device)
        self._seed = int(seed)
        self._print_nash_convs = bool(print_nash_convs)
        self._linear_weighting = bool(linear_weighting)
        self._fallback = regret_matching_fallback
        self._gradient_clip = gradient_clip
        self._traversal_batch_size = int(traversal_batch_size)
        self._aggregate_duplicates = bool(aggregate_duplicates)
        self._lr_schedule = learning_rate_schedule
        self._advantage_steps_ramp = int(advantage_steps_ramp)
        self._advantage_steps_initial = None if advantage_steps_initial is None else int(advantage_steps_initial)
        self._traversals_ramp = int(traversals_ramp)
        self._traversals_initial = None if traversals_initial is None else int(traversals_initial)
        self._walker = self._vector = None
        if traversal_backend == "tree":
            from openspiel_cfrx.tree import get_tree

            self._walker = TreeWalker(get_tree(game), self._encoder)
        elif traversal_backend == "vectorized":
            from openspiel_cfrx.deep.vector_traversal import VectorTree
            from openspiel_cfrx.tree import get_tree

            tree = get_tree(game)
            self._vector = VectorTree(tree)
            self._vector_features = np.asarray(
                [self._encoder(s, int(p)) for s, p in zip(tree.infoset_states(), tree.infoset_player, strict=True)],
                dtype=np.float32,
            ).reshape(tree.num_infosets, -1)
            self._vector_mask = tree.infoset_legal_mask.astype(bool)
        elif traversal_backend != "state":
            raise ValueError(
                f"traversal_backend must be 'state', 'tree' or 'vectorized', got {traversal_backend!r}"
            )
        self._average_policy_kind = average_policy
        self._keep_iteration_networks = (
            average_policy == "sd_cfr" if keep_iteration_networks is None else bool(keep_iteration_networks)
        )
        if average_policy == "sd_cfr" and not self._keep_iteration_networks:
            raise ValueError("average_policy='sd_cfr' needs keep_iteration_networks=True (or None)")
        self._progress = progress
        self._log_every = int(log_every)
        self._verbose = verbose
        self._callback = callback
        self._callback_every = int(callback_every)
        if num_threads is not None:
            torch.set_num_threads(int(num_threads))

        self.config = {
            "game": str(game),
            "feature_size": self._feature_size,
            "num_actions": self._num_actions,
            "policy_network_layers": [int(h) for h in policy_network_layers],
            "advantage_network_layers": [int(h) for h in advantage_network_layers],
            "network": network,
            "memory": memory,
            "memory_capacity": self._memory_capacity,
            "strategy_memory_capacity": int(strategy_memory_capacity or memory_capacity),
            "average_policy": average_policy,
        }
        options = dict(network_options or {})
        self._advantage_networks = [
            make_network(network, self._feature_size, self._num_actions, advantage_network_layers, **options).to(
                self._device
            )
            for _ in range(2)
        ]
        self._policy_network = make_network(
            network, self._feature_size, self._num_actions, policy_network_layers, **options
        ).to(self._device)
        for p, net in enumerate(self._advantage_networks):
            reset_parameters(net, self._seed * 1009 + p)
        reset_parameters(self._policy_network, self._seed * 1009 + 2)
        self._advantage_optimizers = [self._new_optimizer(net) for net in self._advantage_networks]
        self._policy_optimizer = self._new_optimizer(self._policy_network)
        self._advantage_memories = [
            make_memory(memory, self._memory_capacity, self._feature_size, self._num_actions) for _ in range(2)
        ]
        self._strategy_memory = make_memory(
            memory, self.config["strategy_memory_capacity"], self._feature_size, self._num_actions
        )
        if self._aggregate_duplicates:
            for mem in (*self._advantage_memories, self._strategy_memory):
                mem.track_duplicates(max_unique=max(self._batch_size_advantage or 0,
                                                    self._batch_size_strategy or 0, 4096))  # fmt: skip
        self._np_rng = np.random.default_rng(self._seed)
        self._py_rng = random.Random(self._seed)
        self._iteration = 1  # the next iteration to run (OpenSpiel counts from 1)
        self._trained = [False, False]  # advantage net p trained at least once
        self._policy_trained_at = -1  # strategy-memory add_calls when last trained
        self._policy_loss = None
        self._advantage_losses = {0: [], 1: []}
        self._kept_networks: list[tuple[int, list[dict]]] = []  # (iteration, [state_dict p0, p1])
        self._eval_cache: dict[int, tuple] = {}
        self.nodes_touched = 0
        self.traversal_seconds = 0.0
        self.training_seconds = 0.0
        self.history: list[dict] = []
        self.checkpoint_extra = None  # `extra` of the last loaded checkpoint

    # ---------------------------------------------------------------- validation
    @staticmethod
    def _validate(args: dict) -> None:
        check_settings(args, SETTING_RULES)
        for prefix, unit in (("advantage_steps", "steps"), ("traversals", "traversals")):
            ramp, initial = int(args[f"{prefix}_ramp"]), args[f"{prefix}_initial"]
            if initial is not None and ramp < 2:
                raise ValueError(
                    f"{prefix}_initial ({unit} at iteration 1) needs {prefix}_ramp >= 2, got {ramp}"
                )
        check_device(args["device"])

    def _new_optimizer(self, net: torch.nn.Module) -> FlatAdam:
        return FlatAdam(net, lr=self._learning_rate, max_grad_norm=self._gradient_clip)

    # ------------------------------------------------------------ OpenSpiel API
    @property
    def advantage_buffers(self):
        return self._advantage_memories

    @property
    def strategy_buffer(self):
        return self._strategy_memory

    @property
    def iteration(self) -> int:
        """Number of completed iterations."""
        return self._iteration - 1

    @property
    def advantage_networks(self) -> list[torch.nn.Module]:
        return self._advantage_networks

    @property
    def policy_network(self) -> torch.nn.Module:
        return self._policy_network

    def solve(self):
        """Runs the remaining iterations up to `num_iterations`, then trains the
        average-strategy network.

        Returns (like OpenSpiel): (policy_network, advantage_losses
        {player: [loss per iteration]}, policy_loss). The policy network
        outputs probabilities, as OpenSpiel's does (`ProbabilityNetwork`: a
        softmax over all actions of the trained logits, from the encoder's
        features, `information_state_tensor` by default; batched or a single
        row). One difference with OpenSpiel: its `action_probabilities(state)`
        is the row read at the legal actions (summing to less than 1 where some
        mass sits on illegal actions); ours is the row renormalised over the
        legal actions (illegal actions are not trained), i.e. the same where
        every action is legal and exactly `policy_network(x, legal_mask)`
        ([B, A] bool) everywhere. `solver.policy_network` is the raw logits
        network.
        """
        remaining = range(self._iteration, self._num_iterations + 1)
        bar = None
        if self._progress:
            from tqdm import tqdm

            bar = tqdm(total=len(remaining), desc="Deep CFR", unit="it")
        for _ in remaining:
            stats = self.run_iteration()
            if bar is not None:
                bar.update(1)
                bar.set_postfix(nodes=stats["nodes"], adv_loss=f"{stats['advantage_loss'][1]:.3g}")
        if bar is not None:
            bar.close()
        policy_loss = self.train_policy_network() if self._average_policy_kind == "network" else None
        return ProbabilityNetwork(self._policy_network), self._advantage_losses, policy_loss

    def run_iteration(self) -> dict:
        """One Deep CFR iteration: for each player, K traversals then training
        of that player's advantage network (alternating updates, Algorithm 1)."""
        t = self._iteration
        start = time.perf_counter()
        stats = {"iteration": t, "nodes": 0, "advantage_loss": [None, None]}
        traversal_s = train_s = 0.0
        for player in (0, 1):
            t0 = time.perf_counter()
            stats["nodes"] += self.collect(player, self.traversals(t))
            t1 = time.perf_counter()
            loss = self.train_advantage_network(player)
            check_loss(loss, f"player {player}'s advantage network", t)
            t2 = time.perf_counter()
            traversal_s += t1 - t0
            train_s += t2 - t1
            stats["advantage_loss"][player] = loss
            self._advantage_losses[player].append(loss)
        if self._keep_iteration_networks:
            self._kept_networks.append(
                (t, [copy.deepcopy({k: v.cpu() for k, v in n.state_dict().items()}) for n in self._advantage_networks])
            )
        self._iteration += 1
        self.traversal_seconds += traversal_s
        self.training_seconds += train_s
        stats.update(
            traversals=2 * self.traversals(t),
            traversal_seconds=traversal_s,
            training_seconds=train_s,
            seconds=time.perf_counter() - start,
            nodes_per_second=stats["nodes"] / max(traversal_s, 1e-9),
        )
        self.history.append(stats)
        if self._log_every and t % self._log_every == 0:
            line = (
                f"iteration {t}: traversals {stats['traversals']}, nodes {stats['nodes']} "
                f"({stats['nodes_per_second']:.0f}/s), advantage losses "
                f"{_fmt(stats['advantage_loss'][0])}/{_fmt(stats['advantage_loss'][1])}, "
                f"{stats['seconds']:.2f}s (traverse {traversal_s:.2f}s, train {train_s:.2f}s)"
            )
            logger.info(line)
            if self._verbose:
                print(line, flush=True)
        if self._print_nash_convs:
            from openspiel_cfrx.tree import nash_conv

            print(f"NashConv @ {t} = {nash_conv(self._game, self)} | Policy loss = {self._policy_loss}")
        if self._callback is not None and t % self._callback_every == 0:
            self._callback(self)
        return stats

    # ---------------------------------------------------------------- traversal
    @torch.inference_mode()
    def _answer(self, queries) -> list:
        """Strategies for a round of traversal queries: one forward pass per player."""
        answers = [None] * len(queries)
        by_player: dict[int, list[int]] = {}
        for index, query in enumerate(queries):
            by_player.setdefault(query[0], []).append(index)
        for player, indices in by_player.items():
            legal = [queries[i][2] for i in indices]
            mask = legal_mask(legal, self._num_actions)
            if not self._trained[player]:
                # The initial network "returns 0 for all inputs" (Algorithm 1);
                # regret matching over all-zero advantages plays uniformly.
                rows = (mask / mask.sum(axis=1, keepdims=True)).tolist()
            else:
                features = torch.as_tensor(
                    np.asarray([queries[i][1] for i in indices], dtype=np.float32), device=self._device
                )
                advantages = self._advantage_networks[player](features).cpu().numpy()
                rows = regret_matching(advantages, mask, self._fallback).tolist()
            for i, row in zip(indices, rows, strict=True):
                answers[i] = row
        return answers

    def collect(self, traverser: int, num_traversals: int) -> int:
        """Runs `num_traversals` traversals for `traverser` at the current
        iteration and stores their samples. Returns nodes touched."""
        t = self._iteration
        if self._vector is not None:
            return self._collect_vectorized(traverser, num_traversals, t)
        root = self._game.new_initial_state()
        nodes = 0
        for lo in range(0, num_traversals, self._traversal_batch_size):
            count = min(self._traversal_batch_size, num_traversals - lo)
            record = TraversalRecord()
            if self._walker is not None:
                traversals = (
                    tree_external_sampling_traversal(
                        self._walker, 0, traverser, self._num_actions, self._py_rng, record
                    )
                    for _ in range(count)
                )
            else:
                traversals = (
                    external_sampling_traversal(
                        root.clone(), traverser, self._num_actions, self._encoder, self._py_rng, record
                    )
                    for _ in range(count)
                )
            run_batched(traversals, self._answer)
            self._store(traverser, record, t)
            nodes += record.nodes
        self.nodes_touched += nodes
        return nodes

    @torch.inference_mode()
    def _tree_strategy_table(self) -> np.ndarray:
        """sigma^t (regret matching on the advantage networks) at every infoset
        of the extracted tree: one forward pass per player."""
        tree = self._vector.tree
        table = np.zeros((tree.num_infosets, self._num_actions))
        for p in (0, 1):
            lo, hi = tree.infoset_range[p]
            mask = self._vector_mask[lo:hi]
            if not self._trained[p]:
                table[lo:hi] = mask / mask.sum(axis=1, keepdims=True)
                continue
            features = torch.from_numpy(self._vector_features[lo:hi]).to(self._device)
            advantages = self._advantage_networks[p](features).cpu().numpy()
            table[lo:hi] = regret_matching(advantages, mask, self._fallback)
        return table

    def _collect_vectorized(self, traverser: int, num_traversals: int, t: int) -> int:
        strategy = self._tree_strategy_table()
        nodes = 0
        for lo in range(0, num_traversals, self._traversal_batch_size):
            count = min(self._traversal_batch_size, num_traversals - lo)
            samples = self._vector.traverse(traverser, count, strategy, self._np_rng)
            adv, strat = samples.advantage_infosets, samples.strategy_infosets
            if adv.size:
                self._advantage_memories[traverser].add(
                    self._vector_features[adv], samples.advantage_regrets, self._vector_mask[adv], t, self._np_rng
                )
            if strat.size:
                self._strategy_memory.add(
                    self._vector_features[strat], samples.strategy_probs, self._vector_mask[strat], t, self._np_rng
                )
            nodes += samples.nodes
        self.nodes_touched += nodes
        return nodes

    def _store(self, traverser: int, record: TraversalRecord, t: int) -> None:
        if record.advantage_features:
            self._advantage_memories[traverser].add(
                np.asarray(record.advantage_features, dtype=np.float32),
                np.asarray(record.advantage_regrets, dtype=np.float32),
                legal_mask(record.advantage_legal, self._num_actions),
                t,
                self._np_rng,
            )
        if record.strategy_features:
            self._strategy_memory.add(
                np.asarray(record.strategy_features, dtype=np.float32),
                np.asarray(record.strategy_probs, dtype=np.float32),
                legal_mask(record.strategy_legal, self._num_actions),
                t,
                self._np_rng,
            )

    # ----------------------------------------------------------------- training
    def _sample_weights(self, iterations: torch.Tensor) -> torch.Tensor:
        """Linear CFR: weight t' rescaled by 2/T at the current iteration T
        (Section 5.3), so the mean weight stays near 1; else uniform."""
        if not self._linear_weighting:
            return torch.ones_like(iterations, dtype=torch.float32)
        return iterations.to(torch.float32) * (2.0 / self._iteration)

    def _merged_batch(self, memory, batch_size):
        """The whole memory merged by infoset (memories.py, exact for these
        weighted squared losses), as one batch whose `loss_fn` mean equals the
        memory's mean loss minus a constant; None when not applicable (tracking
        off, or more distinct infosets than `batch_size`)."""
        if not memory.duplicates_tracked:
            return None
        if batch_size is not None and memory.num_unique > batch_size:
            return None
        if self._linear_weighting:  # the weights of _sample_weights
            merged = memory.aggregate("linear", 2.0 / self._iteration)
        else:
            merged = memory.aggregate("uniform", 1.0)
        rows, size = len(merged["weight"]), merged["size"]
        to = functools.partial(torch.as_tensor, device=self._device)
        return (
            to(merged["features"]),
            to(merged["targets"]),
            to(merged["legal_mask"]),
            to(merged["weight"] * rows / size, dtype=torch.float32),
            merged["constant"] / size,
        )

    def advantage_train_steps(self, iteration: int) -> int:
        """SGD steps of the advantage networks at `iteration` (see
        `advantage_steps_ramp`)."""
        return _ramped(self._advantage_network_train_steps, self._advantage_steps_ramp,
                       self._advantage_steps_initial, iteration)  # fmt: skip

    def traversals(self, iteration: int) -> int:
        """Traversals per player at `iteration` (see `traversals_ramp`)."""
        return _ramped(self._num_traversals, self._traversals_ramp, self._traversals_initial, iteration)

    def _step_learning_rates(self, steps: int) -> list[float]:
        """Learning rate of each SGD step of one (re)training run: constant
        (the paper's Adam, lr 1e-3) or cosine-annealed from `learning_rate` to
        ~0 over the run, so a run from scratch ends on a settled fit."""
        if self._lr_schedule == "constant":
            return [self._learning_rate] * steps
        return [0.5 * self._learning_rate * (1.0 + math.cos(math.pi * k / steps)) for k in range(steps)]

    def _train(self, net, optimizer, memory, batch_size, steps, loss_fn, rng) -> float | None:
        if len(memory) == 0 or steps == 0:
            return None
        rates = self._step_learning_rates(steps)
        merged = self._merged_batch(memory, batch_size) if self._aggregate_duplicates else None
        if merged is not None:
            x, y, m, w, constant = merged
            tail = max(1, steps // 10)
            recent = []
            net.train()
            for step in range(steps):
                optimizer.lr = rates[step]
                loss = loss_fn(net(x), y, m, w)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if step >= steps - tail:
                    recent.append(loss.detach())
            net.eval()
            return float(torch.stack(recent).mean()) + constant
        features = torch.from_numpy(memory.features)
        targets = torch.from_numpy(memory.targets)
        masks = torch.from_numpy(memory.legal_mask)
        iterations = torch.from_numpy(memory.iteration)
        tail = max(1, steps // 10)
        recent = []
        net.train()
        for step in range(steps):
            index = torch.from_numpy(memory.sample_indices(batch_size, rng))
            x = features[index].to(self._device, non_blocking=True)
            y = targets[index].to(self._device, non_blocking=True)
            m = masks[index].to(self._device, non_blocking=True)
            w = self._sample_weights(iterations[index]).to(self._device, non_blocking=True)
            optimizer.lr = rates[step]
            loss = loss_fn(net(x), y, m, w)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()  # clips the global gradient norm first
            if step >= steps - tail:
                recent.append(loss.detach())
        net.eval()
        return float(torch.stack(recent).mean())

    def train_advantage_network(self, player: int) -> float | None:
        """Fits V(I, a | theta_p) to p's advantage memory with loss
        t' * sum_a (r~(a) - V(I, a))^2 over legal actions (Algorithm 1)."""
        net = self._advantage_networks[player]
        if self._reinitialize_advantage_networks:
            reset_parameters(net, self._seed * 1009 + 3 * self._iteration + player)
            self._advantage_optimizers[player].reset_state()

        def loss_fn(predicted, regrets, mask, weights):
            squared = torch.where(mask, (predicted - regrets) ** 2, torch.zeros_like(predicted))
            return (weights * squared.sum(dim=1)).mean()

        loss = self._train(
            net,
            self._advantage_optimizers[player],
            self._advantage_memories[player],
            self._batch_size_advantage,
            self.advantage_train_steps(self._iteration),
            loss_fn,
            self._np_rng,
        )
        if loss is not None:
            self._trained[player] = True
        return loss

    def train_policy_network(self) -> float | None:
        """Fits the average-strategy network Pi from scratch to the strategy
        memory: t' * sum_a (sigma^t'(a) - Pi(I, a))^2, Pi a softmax over legal
        actions (Algorithm 1). Returns the final loss (None if memory empty)."""
        reset_parameters(self._policy_network, self._seed * 1009 + 2)
        self._policy_optimizer.reset_state()

        def loss_fn(logits, probs, mask, weights):
            squared = (masked_softmax(logits, mask) - probs) ** 2
            return (weights * squared.sum(dim=1)).mean()

        self._policy_loss = self._train(
            self._policy_network,
            self._policy_optimizer,
            self._strategy_memory,
            self._batch_size_strategy,
            self._policy_network_train_steps,
            loss_fn,
            # Its own stream, a function of the memory's contents only: evaluating
            # the average strategy mid-run never changes the training trajectory.
            np.random.default_rng((self._seed, 2, self._strategy_memory.add_calls)),
        )
        self._policy_trained_at = self._strategy_memory.add_calls
        self._eval_cache.clear()
        check_loss(self._policy_loss, "the average-strategy network", self._iteration)
        return self._policy_loss

    def _ensure_policy_network(self) -> None:
        if self._policy_trained_at != self._strategy_memory.add_calls:
            self.train_policy_network()

    # --------------------------------------------------------------- evaluation
    def _encode_states(self, states) -> tuple[torch.Tensor, torch.Tensor]:
        features = np.asarray(
            [self._encoder(s, s.current_player()) for s in states], dtype=np.float32
        ).reshape(len(states), self._feature_size)
        mask = legal_mask([s.legal_actions() for s in states], self._num_actions)
        return torch.from_numpy(features), torch.from_numpy(mask)

    def _policy_probs(self, features: torch.Tensor, mask: torch.Tensor) -> np.ndarray:
        self._ensure_policy_network()  # outside inference mode: it may train
        out = []
        for lo in range(0, features.shape[0], _EVAL_BATCH):
            x = features[lo : lo + _EVAL_BATCH].to(self._device)
            m = mask[lo : lo + _EVAL_BATCH].to(self._device)
            with torch.inference_mode():
                out.append(masked_softmax(self._policy_network(x), m).cpu().numpy())
        if not out:
            return np.zeros((0, self._num_actions))
        return np.concatenate(out).astype(np.float64)

    @torch.inference_mode()
    def current_strategy(self, player: int, features: torch.Tensor, mask: torch.Tensor) -> np.ndarray:
        """sigma^t of `player` from its current advantage network: [B, A]."""
        if not self._trained[player]:
            m = mask.to(torch.float64)
            return (m / m.sum(dim=1, keepdim=True)).numpy()
        advantages = self._advantage_networks[player](features.to(self._device)).cpu().numpy()
        return regret_matching(advantages, mask.numpy(), self._fallback)

    def batch_action_probabilities(self, states) -> np.ndarray:
        """Average-strategy probabilities for many states at once: [len(states), A]."""
        states = list(states)
        if self._average_policy_kind == "sd_cfr":
            return np.stack([self._sd_cfr_state_probs(s) for s in states]) if states else np.zeros(
                (0, self._num_actions)
            )
        features, mask = self._encode_states(states)
        return self._policy_probs(features, mask)

    def action_probabilities(self, state, player_id=None):
        """{action: probability} of the average strategy at `state` (OpenSpiel Policy API)."""
        del player_id
        probs = self.batch_action_probabilities([state])[0]
        return {int(a): float(probs[a]) for a in state.legal_actions()}

    def strategy_array(self, tree, average: str | None = None) -> np.ndarray:
        """Average strategy on every infoset of `tree` ([N, A], tree order), in
        large batches; lets `openspiel_cfrx.nash_conv(game, solver)` run fast.

        `average`: "network" or "sd_cfr" (needs kept iteration networks);
        default the constructor's `average_policy`."""
        average = average or self._average_policy_kind
        if average not in ("network", "sd_cfr"):
            raise ValueError(f"average must be 'network' or 'sd_cfr', got {average!r}")
        if average == "sd_cfr" and not self._keep_iteration_networks:
            raise ValueError("sd_cfr average needs DeepCFRSolver(..., keep_iteration_networks=True)")
        cached = self._eval_cache.get(id(tree))
        if cached is None or cached[0] is not tree:
            features, mask = self._encode_states(tree.infoset_states())
            cached = (tree, features, mask)
            self._eval_cache = {id(tree): cached}
        _, features, mask = cached
        if average == "sd_cfr":
            return self._sd_cfr_tree_strategy(tree, features, mask)
        return self._policy_probs(features, mask)

    def nash_conv(self, average: str | None = None) -> float:
        """Exact NashConv of the average strategy ("network" or "sd_cfr"),
        through the cached game tree (OpenSpiel's convention: sum of both
        players' best-response gains)."""
        from openspiel_cfrx.tree import best_response, get_tree

        tree = get_tree(self._game)
        return float(best_response(tree, self.strategy_array(tree, average)).nash_conv)

    # SD-CFR-style average (Steinberger 2019): sigma-bar(I) is the mixture of the
    # iterations' strategies weighted by w_t * (own reach of I under sigma^t).
    def _iteration_weights(self) -> np.ndarray:
        its = np.array([t for t, _ in self._kept_networks], dtype=np.float64)
        return its if self._linear_weighting else np.ones_like(its)

    @torch.inference_mode()
    def _kept_strategies(self, features: torch.Tensor, mask: torch.Tensor, players: np.ndarray):
        """[T, B, A] regret-matching strategies of every kept iteration."""
        probe = copy.deepcopy(self._advantage_networks[0]).to(self._device).eval()
        out = np.zeros((len(self._kept_networks), features.shape[0], self._num_actions))
        for k, (_, state_dicts) in enumerate(self._kept_networks):
            for p in (0, 1):
                rows = np.flatnonzero(players == p)
                if rows.size == 0:
                    continue
                probe.load_state_dict(state_dicts[p])
                idx = torch.from_numpy(rows)
                adv = probe(features[idx].to(self._device)).cpu().numpy()
                out[k, rows] = regret_matching(adv, mask[idx].numpy(), self._fallback)
        return out

    def _sd_cfr_tree_strategy(self, tree, features, mask) -> np.ndarray:
        from openspiel_cfrx.tree import realization_plan

        if not self._kept_networks:
            m = tree.infoset_legal_mask.astype(np.float64)
            return m / m.sum(axis=1, keepdims=True)
        players = np.asarray(tree.infoset_player)
        strategies = self._kept_strategies(features, mask, players)
        weights = self._iteration_weights()
        plan = np.zeros(tree.num_sequences)
        for w, strategy in zip(weights, strategies, strict=True):
            plan += w * realization_plan(tree, strategy)
        num_flat = tree.num_infosets * tree.num_actions
        seq = plan[:num_flat].reshape(tree.num_infosets, tree.num_actions)
        parent = plan[tree.infoset_parent_sequence][:, None]
        legal = tree.infoset_legal_mask.astype(np.float64)
        uniform = legal / legal.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(parent > 0, seq / np.where(parent > 0, parent, 1.0), uniform)

    def _sd_cfr_state_probs(self, state) -> np.ndarray:
        """Exact SD-CFR average at one state: replays the player's own earlier
        decisions to weight each iteration by its reach of this infoset."""
        player = state.current_player()
        legal_now = state.legal_actions()
        if not self._kept_networks:
            probs = np.zeros(self._num_actions)
            probs[legal_now] = 1.0 / len(legal_now)
            return probs
        replay = self._game.new_initial_state()
        own_states, own_actions = [], []
        for action in state.history():
            if not replay.is_chance_node() and replay.current_player() == player:
                own_states.append(replay.clone())
                own_actions.append(action)
            replay.apply_action(action)
        features, mask = self._encode_states([*own_states, state])
        strategies = self._kept_strategies(features, mask, np.full(len(own_states) + 1, player))
        reach = np.ones(len(self._kept_networks))
        for k, action in enumerate(own_actions):
            reach *= strategies[:, k, action]
        weights = self._iteration_weights() * reach
        if weights.sum() <= 0:
            probs = np.zeros(self._num_actions)
            probs[legal_now] = 1.0 / len(legal_now)
            return probs
        return weights @ strategies[:, -1] / weights.sum()

    # --------------------------------------------------------------- checkpoint
    @classmethod
    def from_checkpoint(cls, path: str, game: pyspiel.Game | None = None, **kwargs) -> DeepCFRSolver:
        """A solver rebuilt from a checkpoint alone (e.g. to play or evaluate
        its average strategy): the game (loaded from the checkpoint's game
        string unless given) and the shape settings come from the file;
        `kwargs` add other constructor arguments (e.g. training settings to
        continue a run)."""
        config = checkpoint_lib.read_config(path)
        if game is None:
            from openspiel_cfrx.game_loading import load_game

            game = load_game(config["game"])  # our games need `import games` first (the error says so)
        try:
            settings = dict(
                policy_network_layers=tuple(config["policy_network_layers"]),
                advantage_network_layers=tuple(config["advantage_network_layers"]),
                network=config["network"],
                memory=config["memory"],
                memory_capacity=int(config["memory_capacity"]),
                strategy_memory_capacity=int(config["strategy_memory_capacity"]),
                average_policy=config["average_policy"],
            )
        except (KeyError, TypeError, ValueError) as e:
            raise checkpoint_lib.CheckpointError(f"checkpoint {path!r} has an incomplete config ({e})") from None
        solver = cls(game, **{**settings, **kwargs})
        solver.load_checkpoint(path)
        return solver

    def save_checkpoint(self, path: str, extra=None) -> None:
        """Writes networks, optimisers, memories, iteration and RNG states;
        `extra` (numbers, strings, lists, dicts: e.g. a program's curve rows)
        is stored with them, covered by the checksum, and comes back as
        `checkpoint_extra` after `load_checkpoint`."""
        checkpoint_lib.save(self, path, extra)

    def load_checkpoint(self, path: str) -> None:
        """Restores a checkpoint written by `save_checkpoint` of a solver built
        with the same game and shape settings (raises CheckpointError otherwise)."""
        checkpoint_lib.load(self, path)


def _ramped(final: int, ramp: int, initial: int | None, iteration: int) -> int:
    """`final` from iteration `ramp` on (always when ramp = 0); before that
    ceil(final * t / ramp), or linear from `initial` at t = 1."""
    if ramp == 0 or iteration >= ramp:
        return final
    if initial is None:
        return max(1, math.ceil(final * iteration / ramp))
    return max(1, round(initial + (final - initial) * (iteration - 1) / (ramp - 1)))


def _fmt(value) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4g}"
