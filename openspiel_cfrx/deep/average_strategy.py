"""Deep CFR's average strategy sigma-bar, the policy the solver plays and is
evaluated on, in two forms:

* the policy network Pi trained on the strategy memory M_Pi (Algorithm 1
  line 8, the paper's default; `AverageStrategy`);
* the exact average of the iterates, kept as networks (Steinberger 2019,
  "Single Deep Counterfactual Regret Minimization", mentioned in Brown et al.
  2019 Section 4; `IterationNetworks`): sigma-bar(I) is the mixture of the
  iterations' regret-matching strategies, iteration t weighted by w_t times
  the player's own reach of I under sigma^t.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch.nn import functional as F

from openspiel_cfrx.deep import settings
from openspiel_cfrx.deep.networks import forward_in_chunks, masked_softmax
from openspiel_cfrx.deep.regret_matching import regret_matching, uniform_strategy
from openspiel_cfrx.deep.trainer import SQUARED_ON_PROBABILITIES
from openspiel_cfrx.deep.traversal import legal_mask

_EVAL_BATCH = 8192
KINDS = ("network", "sd_cfr")
AVERAGE_WEIGHTINGS = ("linear", "uniform")  # w_t = t (linear CFR, Section 5.3) or 1
settings.AVERAGE_POLICIES.register_all(dict.fromkeys(KINDS))
settings.AVERAGE_WEIGHTINGS.register_all(dict.fromkeys(AVERAGE_WEIGHTINGS))


class IterationNetworks:
    """Every iteration's advantage networks (a checkpointed part).

    Args:
      template: a module of the advantage networks' shape (weights replaced on use).
      fallback: regret matching's fallback (as the solver's).
      weighting: "linear" (w_t = t, linear CFR) or "uniform" (w_t = 1).
    """

    def __init__(self, template: torch.nn.Module, fallback: str, weighting: str):
        if weighting not in AVERAGE_WEIGHTINGS:
            raise ValueError(f"weighting must be one of {AVERAGE_WEIGHTINGS}, got {weighting!r}")
        self._template, self._fallback, self._linear = template, fallback, weighting == "linear"
        self.kept: list[tuple[int, list[dict]]] = []  # (iteration, [state_dict p0, p1])

    def __len__(self) -> int:
        return len(self.kept)

    def keep(self, iteration: int, networks) -> None:
        self.kept.append((iteration, [copy.deepcopy({k: v.cpu() for k, v in n.state_dict().items()})
                                      for n in networks]))  # fmt: skip

    def weights(self) -> np.ndarray:
        its = np.array([t for t, _ in self.kept], dtype=np.float64)
        return its if self._linear else np.ones_like(its)

    def strategies(self, features: torch.Tensor, mask: torch.Tensor, players: np.ndarray) -> np.ndarray:
        """[T, B, A] regret-matching strategies of every kept iteration."""
        out = np.zeros((len(self.kept), features.shape[0], mask.shape[1]))
        for k, (_, strategy) in enumerate(self.iterates(features, mask, players)):
            out[k] = strategy
        return out

    def iterates(self, features: torch.Tensor, mask: torch.Tensor, players: np.ndarray):
        """(w_t, sigma^t [B, A]) of every kept iteration in turn (one in memory at a time)."""
        device = next(self._template.parameters()).device
        probe = copy.deepcopy(self._template).to(device).eval()
        for weight, (_, state_dicts) in zip(self.weights(), self.kept, strict=True):
            out = np.zeros((features.shape[0], mask.shape[1]))
            for p in (0, 1):
                rows = np.flatnonzero(players == p)
                if rows.size == 0:
                    continue
                probe.load_state_dict(state_dicts[p])
                idx = torch.from_numpy(rows)
                with torch.inference_mode():
                    adv = probe(features[idx].to(device)).cpu().numpy()
                out[rows] = regret_matching(adv, mask[idx].numpy(), self._fallback)
            yield float(weight), out

    def tree_strategy(self, tree, features: torch.Tensor, mask: torch.Tensor) -> np.ndarray:
        """The average on every infoset of `tree`, through realization plans."""
        from openspiel_cfrx.tree import realization_plan

        if not self.kept:
            return uniform_strategy(tree.infoset_legal_mask.astype(np.float64))
        strategies = self.strategies(features, mask, np.asarray(tree.infoset_player))
        plan = np.zeros(tree.num_sequences)
        for w, strategy in zip(self.weights(), strategies, strict=True):
            plan += w * realization_plan(tree, strategy)
        num_flat = tree.num_infosets * tree.num_actions
        seq = plan[:num_flat].reshape(tree.num_infosets, tree.num_actions)
        parent = plan[tree.infoset_parent_sequence][:, None]
        uniform = uniform_strategy(tree.infoset_legal_mask.astype(np.float64))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(parent > 0, seq / np.where(parent > 0, parent, 1.0), uniform)

    def state_probs(self, game, state, encode_states, num_actions: int) -> np.ndarray:
        """The average at one state: replays the player's own earlier decisions
        to weight each iteration by its reach of this infoset."""
        player = state.current_player()
        uniform = np.zeros(num_actions)
        uniform[state.legal_actions()] = 1.0 / len(state.legal_actions())
        if not self.kept:
            return uniform
        replay = game.new_initial_state()
        own_states, own_actions = [], []
        for action in state.history():
            if not replay.is_chance_node() and replay.current_player() == player:
                own_states.append(replay.clone())
                own_actions.append(action)
            replay.apply_action(action)
        features, mask = encode_states([*own_states, state])
        strategies = self.strategies(features, mask, np.full(len(own_states) + 1, player))
        reach = np.ones(len(self.kept))
        for k, action in enumerate(own_actions):
            reach *= strategies[:, k, action]
        weights = self.weights() * reach
        if weights.sum() <= 0:
            return uniform
        return weights @ strategies[:, -1] / weights.sum()

    def state_dict(self) -> dict:
        return {"iterations": [t for t, _ in self.kept], "networks": [sds for _, sds in self.kept]}

    def load_state_dict(self, state: dict) -> None:
        self.kept = [(int(t), list(sds)) for t, sds in zip(state["iterations"], state["networks"], strict=True)]


class AverageStrategy:
    """sigma-bar on states and trees, from the policy network (trained lazily,
    whenever the strategy memory changed) or the kept iteration networks.

    Args:
      game, encoder, num_actions, feature_size: the solver's game and input encoding.
      trainer: the policy network's `Trainer`; memory: M_Pi.
      kept: the `IterationNetworks` (used for kind "sd_cfr").
      steps, batch_size, seed: Pi's training run (from scratch each time).
    """

    def __init__(self, game, encoder, num_actions, feature_size, trainer, memory, kept, steps, batch_size, seed):
        self.game, self.encoder, self.num_actions, self.feature_size = game, encoder, num_actions, feature_size
        self.trainer, self.memory, self.kept = trainer, memory, kept
        self.steps, self.batch_size, self.seed = steps, batch_size, seed
        self.trained_at = -1  # memory.add_calls when last trained
        self.loss = None
        self._cache: dict[int, tuple] = {}

    def train(self, linear_scale, schedule) -> float | None:
        """Fits Pi from scratch to M_Pi: t' * sum_a (sigma^t'(a) - Pi(I, a))^2, Pi a
        softmax over legal actions. Its random stream depends on the memory's
        contents only, so evaluating mid-run never changes the training trajectory."""
        self.trainer.reinitialize(self.seed * 1009 + 2)
        rng = np.random.default_rng((self.seed, 2, self.memory.add_calls))
        self.loss = self.trainer.fit_memory(self.memory, SQUARED_ON_PROBABILITIES, self.steps, self.batch_size, rng,
                                            linear_scale, schedule)  # fmt: skip
        self.trained_at = self.memory.add_calls
        self._cache.clear()
        return self.loss

    def encode(self, states) -> tuple[torch.Tensor, torch.Tensor]:
        features = np.asarray([self.encoder(s, s.current_player()) for s in states],
                              dtype=np.float32).reshape(len(states), self.feature_size)  # fmt: skip
        return torch.from_numpy(features), torch.from_numpy(legal_mask([s.legal_actions() for s in states],
                                                                       self.num_actions))  # fmt: skip

    def network_probabilities(self, features: torch.Tensor, mask: torch.Tensor, retrain) -> np.ndarray:
        """Pi(I, .) over legal actions; `retrain()` first if M_Pi changed since training."""
        if self.trained_at != self.memory.add_calls:
            retrain()  # outside inference mode
        device = next(self.trainer.network.parameters()).device
        out = [np.zeros((0, self.num_actions))]
        for lo in range(0, features.shape[0], _EVAL_BATCH):
            x, m = features[lo : lo + _EVAL_BATCH].to(device), mask[lo : lo + _EVAL_BATCH].to(device)
            with torch.inference_mode():
                out.append(masked_softmax(self.trainer.network(x), m).cpu().numpy())
        return np.concatenate(out).astype(np.float64)

    def input_layer(self, retrain) -> tuple[np.ndarray, np.ndarray] | None:
        """(weight [H, F], bias [H]) of Pi's first layer when it is linear on the
        encoding (`MLP.input_layer`), else None; `retrain()` first if M_Pi changed."""
        layer = getattr(self.trainer.network, "input_layer", None)
        if layer is None:
            return None
        if self.trained_at != self.memory.add_calls:
            retrain()
        return (layer.weight.detach().cpu().numpy().astype(np.float32), layer.bias.detach().cpu().numpy().astype(np.float32))

    def probabilities_from_sums(self, table: np.ndarray, rows: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Pi(I, .) over legal actions for inputs whose first-layer pre-activation
        is the sum of `table`'s rows `rows[i]` ([N, k]; an embedding bag), in
        chunks of `INFERENCE_CHUNK` rows."""
        network = self.trainer.network
        device = next(network.parameters()).device
        table = torch.as_tensor(table, device=device)

        def forward(rows, mask):
            return masked_softmax(network.after_input_layer(F.embedding_bag(rows, table, mode="sum")), mask)

        with torch.inference_mode():
            probs = forward_in_chunks(forward, torch.as_tensor(rows, device=device),
                                      torch.as_tensor(mask, device=device), device=device)  # fmt: skip
        return probs.cpu().numpy().astype(np.float64)

    def states(self, states, kind: str, retrain) -> np.ndarray:
        """[len(states), A] probabilities."""
        states = list(states)
        if kind == "sd_cfr":
            rows = [self.kept.state_probs(self.game, s, self.encode, self.num_actions) for s in states]
            return np.stack(rows) if rows else np.zeros((0, self.num_actions))
        return self.network_probabilities(*self.encode(states), retrain)

    def tree(self, tree, kind: str, retrain) -> np.ndarray:
        """[N, A] on every infoset of `tree` (encodings cached per tree)."""
        cached = self._cache.get(id(tree))
        if cached is None or cached[0] is not tree:
            cached = (tree, *self.encode(tree.infoset_states()))
            self._cache = {id(tree): cached}
        if kind == "sd_cfr":
            return self.kept.tree_strategy(tree, cached[1], cached[2])
        return self.network_probabilities(cached[1], cached[2], retrain)


class AveragePolicy:
    """The OpenSpiel `Policy` views of Deep CFR's average strategy (a mixin for
    a solver with `_game`, `_average` (an `AverageStrategy`),
    `_average_policy_kind`, `_keep_iteration_networks` and
    `train_policy_network()`)."""

    def batch_action_probabilities(self, states) -> np.ndarray:
        """Average-strategy probabilities for many states at once: [len(states), A]."""
        return self._average.states(states, self._average_policy_kind, self.train_policy_network)

    def probabilities_from_tensors(self, features, legal_mask) -> np.ndarray:
        """Policy-network probabilities [B, A] straight from encoded infosets
        ([B, F] features, [B, A] bool legal mask), without states."""
        if self._average_policy_kind != "network":
            raise ValueError("probabilities_from_tensors needs AveragingSettings(average_policy='network') (SD-CFR needs histories)")
        return self._average.network_probabilities(torch.as_tensor(features), torch.as_tensor(legal_mask),
                                                   self.train_policy_network)  # fmt: skip

    def policy_input_layer(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(weight [H, F], bias [H]) of the policy network's first layer when it
        is linear on the encoded infoset, else None (an SD-CFR average, or a
        network with a skip around its first layer). With
        `probabilities_from_sums`, the poker engine computes that layer for a
        public node's infosets as sums of weight columns (same betting, a few
        card one-hots) instead of a matmul over whole tensors."""
        if self._average_policy_kind != "network":
            return None
        return self._average.input_layer(self.train_policy_network)

    def probabilities_from_sums(self, table, rows, legal_mask) -> np.ndarray:
        """Policy-network probabilities [N, A] for inputs whose first-layer
        pre-activation is the sum of `table`'s rows `rows[i]` (`policy_input_layer`)."""
        return self._average.probabilities_from_sums(table, rows, legal_mask)

    def action_probabilities(self, state, player_id=None):
        """{action: probability} of the average strategy at `state` (OpenSpiel Policy API)."""
        del player_id
        probs = self.batch_action_probabilities([state])[0]
        return {int(a): float(probs[a]) for a in state.legal_actions()}

    def strategy_array(self, tree, average: str | None = None) -> np.ndarray:
        """Average strategy on every infoset of `tree` ([N, A], tree order), in
        large batches (`openspiel_cfrx.nash_conv(game, solver)` uses it).
        `average`: "network" or "sd_cfr"; default the constructor's `average_policy`."""
        average = average or self._average_policy_kind
        if average not in KINDS:
            raise ValueError(f"average must be 'network' or 'sd_cfr', got {average!r}")
        if average == "sd_cfr" and not self._keep_iteration_networks:
            raise ValueError("sd_cfr average needs DeepCFRSolver(..., averaging=AveragingSettings(keep_iteration_networks=True))")
        return self._average.tree(tree, average, self.train_policy_network)

    @property
    def average_policy(self) -> str:
        """"network" (Pi, the paper's average network) or "sd_cfr" (the kept iterates' mixture)."""
        return self._average_policy_kind

    def iterate_strategies(self, states):
        """The parts of the "sd_cfr" average at `states` (one player's, or any):
        (w_t, sigma^t [len(states), A]) for every kept iteration t, in turn.
        The average at an infoset of player p is sum_t w_t pi_p^t sigma^t /
        sum_t w_t pi_p^t, pi_p^t p's own reach under sigma^t: an evaluator that
        knows the game's sequences (`openspiel_cfrx.poker.poker_nash_conv`) mixes them
        for every infoset at once instead of replaying each history."""
        if not self._keep_iteration_networks:
            raise ValueError("iterate_strategies needs DeepCFRSolver(..., averaging=AveragingSettings(keep_iteration_networks=True))")
        states = list(states)
        features, mask = self._average.encode(states)
        return self._average.kept.iterates(features, mask, np.array([s.current_player() for s in states]))

    def nash_conv(self, average: str | None = None) -> float:
        """Exact NashConv of the average strategy through the cached game tree
        (OpenSpiel's convention: the sum of both players' best-response gains)."""
        from openspiel_cfrx.tree import best_response, get_tree

        tree = get_tree(self._game)
        return float(best_response(tree, self.strategy_array(tree, average)).nash_conv)
