"""CFR-MIX (Li, Zhang, Wang, Xue, An: "CFR-MIX: Solving Imperfect Information
Extensive-Form Games with Combinatorial Action Space", IJCAI 2021) and the
baselines of its Section 5, as one OpenSpiel `Policy`.

    solver = openspiel_cfrx.CFRMixSolver(team_game, num_iterations=50)
    solver.solve()
    openspiel_cfrx.nash_conv(team_game, solver)      # tiny instances, exact
    solver.agent_action_probabilities(state)          # decentralised view
    solver.save_checkpoint("run.pt")                  # resume: a solver built with the
    solver.load_checkpoint("run.pt")                  # same game and settings

The team (player 0) is n agents sharing one information set I. Its strategy
is kept in individual form: agent i plays sigma_i(I, .) over its own actions
and the joint strategy is the product (eq. 1). The team's cumulative-regret
network is an *agent network* R_i(I, a_i) >= 0 (softplus output, the RM+
setting of Section 4.2), evaluated on [information_state_tensor(team),
agent_observation_tensor(i)] and shared by all agents (parameter sharing; one
network per agent with `share_parameters=False`), followed by a *mixing layer*
R_tot(I, a) = prod_i R_i(I, a_i) (eq. 4) that is only used in training, on the
joint actions whose regrets a traversal sampled. Agents act by regret
matching+ on their own R_i (decentralised execution); by Theorem 2 this is
exactly regret matching+ on R_tot.

Backbones (Appendix B, Algorithm 1; `team_model.py`): "double_neural"
(CFR-MIX: cumulative regrets and strategies accumulated through the network
with anchors) and "deep_cfr" (Deep CFR + MIX: a reservoir of raw samples and a
network refitted every iteration).

Variants (`VARIANTS`, Section 5's comparisons) share the traversal and
training code (`team_model.py`, `agent_network.py`, `probe_traversal.py`).

The average strategy of the factored team is the product of per-agent average
strategies: a product, like every iterate, so it can be played without
communication (the mixture of products that exact averaging would give is in
general not a product).
"""

from __future__ import annotations

import functools
import logging
import math
import random
from collections.abc import Sequence

import pyspiel
import torch

from openspiel_cfrx import team as team_lib
from openspiel_cfrx.cfr_mix.agent_network import AgentNetwork
from openspiel_cfrx.cfr_mix.probe_traversal import AgentView
from openspiel_cfrx.cfr_mix.settings import (
    CORE_RULES,
    GROUPS,
    AccumulationSettings,
    AgentNetworkSettings,
    CFRMixSettings,
    MixTrainingSettings,
    ProbeTraversalSettings,
)
from openspiel_cfrx.cfr_mix.team_model import (
    ProbeSampler,
    TeamModel,
    aggregate_samples,
    merge_records,
    team_views,
)
from openspiel_cfrx.cfr_mix.team_policy import TeamPolicy, regret_matching_plus  # noqa: F401  (re-exported)
from openspiel_cfrx.deep.distributed import RaySampler
from openspiel_cfrx.deep.settings import ReportingSettings, WorkerSettings
from openspiel_cfrx.deep.solver_base import NeuralSolver
from openspiel_cfrx.deep.threads import apply_num_threads
from openspiel_cfrx.deep.validation import check_device, check_loss
from openspiel_cfrx.tree import check_game_supported

logger = logging.getLogger(__name__)


class CFRMixSolver(TeamPolicy, NeuralSolver):
    """CFR-MIX and its baselines on a team-adversary game; an OpenSpiel `Policy`
    whose team probabilities are the product of the agents' average strategies.

    Args:
      game: a 2-player zero-sum pyspiel game offering the factored team protocol
        (`openspiel_cfrx.team.FactoredTeamGame`), team = player 0.
      variant: one of `VARIANTS` (default "cfr_mix").
      num_iterations: CFR iterations T run by each `solve()` call.
      num_traversals: K probe-sampling traversals per player per iteration.
      regret_network_layers, policy_network_layers: hidden widths of the agent
        networks (regret and average strategy).
      regret_train_steps, policy_train_steps: Adam steps per iteration.
      batch_size: rows per Adam step.
      learning_rate: Adam step size.
      memory_capacity: rows per reservoir (anchors for the double-neural
        backbone, samples for the Deep CFR backbone).
      device: "cpu", "cuda" or "cuda:N".
      seed: all randomness derives from it.

    Args beyond the paper's, in groups (`openspiel_cfrx.cfr_mix.settings`;
    each a group, a dict of its fields, e.g. `traversal={"joint_cap": 128}`
    for `traversal=ProbeTraversalSettings(joint_cap=128)`, or None):
      traversal: `ProbeTraversalSettings`: `joint_cap` (at the team's sampled
        information sets, regrets are computed for all legal joint actions
        when there are at most this many, else for `joint_cap` sampled ones:
        `probe_traversal`), `batch_size`,
        `alternating_updates` (True, the default: the team traverses and
        trains, then the adversary traverses against the team's new network;
        False: Algorithm 1's simultaneous updates, both players traversing
        against theta^t, then both training).
      training: `MixTrainingSettings`: `gradient_clip` (gradient-norm clip),
        `precision` ("float32", the default, or
        "bfloat16": the agent networks' training forward passes under
        bfloat16 autocast; parameters, Adam state, loss and gradients stay
        float32 (`deep.trainer`); the mixing layer's product (eq. 4) takes
        the agents' outputs in float32, and every query (strategies, probe
        traversals) runs in float32; on CPU it does not pay:
        docs/decisions.md, "bfloat16 training"), `schedule`
        (`openspiel_cfrx.deep.Schedule`: traversal and regret-step ramps,
        learning rates of every fit; default constant, as the paper),
        `reinitialize_regret_networks` (Deep CFR backbone only: refit the
        regret networks from a fresh initialisation every iteration (Brown et
        al. 2019, Algorithm 1 "train from scratch"; default for
        `deep_cfr_joint`) or fine-tune the last ones (default for
        `deep_cfr_mix`: with exchangeable agents a fresh initialisation
        re-draws which agent takes which role each iteration, and the product
        of the agents' average marginals then mixes incompatible roles —
        docs/cfr_mix.md, "Deep CFR + mixing layer")),
        `rescale_regret_targets` (True, the default: every regret-network fit
        divides its targets by their mean |value| in that fit, re-chosen each
        iteration (an implementation choice, not the paper's:
        docs/cfr_mix_audit.md, "Target scale"); False: fixed at the network's
        first fit. Average-strategy networks always re-choose theirs (their
        linearly weighted targets grow like t^2; a fixed scale breaks them,
        measured in docs/decisions.md, "CFR-MIX's product form")).
      accumulation: `AccumulationSettings`: `anchor_ratio` (anchor rows, from
        the model's reservoir of earlier iterations, per sampled row in a
        double-neural update: the regret networks of the double-neural
        backbone and every variant's average-strategy networks),
        `linear_averaging` (weight iteration t's strategy by t in the
        average, as CFR+).
      network: `AgentNetworkSettings`: `family` (a registered network name
        for the agent networks), `infoset_encoding` ("tensor":
        `information_state_tensor(player)`, or "compact": the game's own lossy
        network input (`compact_information_state_size()` /
        `compact_information_state_array`, and per-agent
        `compact_agent_features()` where offered: NEST)), `share_parameters`
        (overrides the variant's parameter sharing).
      workers: `WorkerSettings`: `num_workers`, `ray_address` (probe
        traversals on `num_workers` Ray actors (`distributed.py`; same seed
        and worker count = same run); 1 runs them in-process without
        importing Ray; ray_address None starts a local instance, "auto" /
        "host:port" / "ray://host:port" join a cluster), `num_threads`
        (`torch.set_num_threads`, process-wide; default 1 here, while a
        `WorkerSettings()` given as the group has "auto", `deep.threads`).
      reporting: `ReportingSettings` (progress bar, log lines, callbacks; see
        `NeuralSolver`).

    The adversary's head has `team.adversary_num_actions(game)` outputs (a
    legal action beyond it raises a ValueError naming the fix). Checkpoints:
    as `DeepCFRSolver`; `settings` holds the whole run configuration
    (`CFRMixSettings`), whose shapes a checkpoint must match.
    """

    display_name = "CFR-MIX"
    settings_groups, settings_type = GROUPS, CFRMixSettings

    def __init__(
        self,
        game: pyspiel.Game,
        variant: str = "cfr_mix",
        num_iterations: int = 100,
        num_traversals: int = 100,
        regret_network_layers: Sequence[int] = (64, 64),
        policy_network_layers: Sequence[int] = (64, 64),
        *,
        regret_train_steps: int = 200,
        policy_train_steps: int = 200,
        batch_size: int = 256,
        learning_rate: float = 1e-3,
        memory_capacity: int = 20_000,
        device: str = "cpu",
        seed: int = 0,
        traversal: ProbeTraversalSettings | None = None,
        training: MixTrainingSettings | None = None,
        accumulation: AccumulationSettings | None = None,
        network: AgentNetworkSettings | None = None,
        workers: WorkerSettings | None = None,
        reporting: ReportingSettings | None = None,
    ):
        args = dict(locals())
        core = {name: args[name] for name in CORE_RULES}
        self.settings = settings = CFRMixSettings.resolve(core, {name: args[name] for name in GROUPS})
        _check_game(game, settings)
        probe, work = settings.traversal, settings.workers
        super().__init__(game, num_iterations=num_iterations, seed=seed,
                         schedule=settings.training.schedule, reporting=reporting)  # fmt: skip
        self.variant, flags = variant, settings.flags
        self._flags = flags
        apply_num_threads(work.num_threads, (*regret_network_layers, *policy_network_layers), device)
        self._device = torch.device(device)
        self._adversary_declared, adversary_actions = _adversary_width(game)
        self.infoset_encoding = infoset_encoding = settings.network.infoset_encoding
        self._views, self.feature_size = team_views(game, flags["team_view"], adversary_actions, infoset_encoding)
        self._num_traversals, self._joint_cap = int(num_traversals), int(probe.joint_cap)
        self._steps, self._batch_size = (int(regret_train_steps), int(policy_train_steps)), int(batch_size)
        self._anchor_ratio = float(settings.accumulation.anchor_ratio)
        self._linear_averaging = bool(settings.accumulation.linear_averaging)
        self._alternating = bool(probe.alternating_updates)
        self._reinitialize = settings.reinitializes_regret_networks
        self._build_models(self.feature_size)
        local = functools.partial(ProbeSampler, game, self._views, flags["regret_targets"], self._joint_cap,
                                  int(probe.batch_size))  # fmt: skip
        if work.num_workers == 1:
            self._sampler = local(self.py_rng)
        else:
            self._sampler = RaySampler(functools.partial(local, random.Random(0)),
                                       int(work.num_workers), self._seed, work.ray_address,
                                       min_share=int(probe.batch_size))  # fmt: skip
        self.probes = 0

    def _build_models(self, feature_size: int) -> None:
        """Each player's regret and average-strategy models (seeded); the regret
        model holds one value per candidate pair (joint actions up to
        `joint_cap`, or one per individual action for independent targets)."""
        s, training = self.settings, self.settings.training
        self._regret_models, self._policy_models = [], []
        for p, view in enumerate(self._views):
            if self._flags["regret_targets"] == "independent" and view.num_agents > 1:
                regret_pairs = sum(view.num_actions)
            else:
                regret_pairs = min(self._joint_cap, math.prod(view.num_actions))
            share = self._flags["share"] if p == team_lib.TEAM_PLAYER else True

            def model(layers, pairs, seed_offset, rescale=True, view=view, share=share):
                return TeamModel(view, feature_size, layers, share, s.network.family,
                                 s.learning_rate, training.gradient_clip, s.memory_capacity, pairs,
                                 self._seed * 1009 + seed_offset, self._device, rescale=rescale,
                                 precision=training.precision)  # fmt: skip

            rescale = training.rescale_regret_targets
            self._regret_models.append(model(s.regret_network_layers, regret_pairs, p, rescale))
            self._policy_models.append(model(s.policy_network_layers, sum(view.num_actions), 2 + p))
        for m in (*self._regret_models, *self._policy_models):
            m.schedule = self.schedule

    # ------------------------------------------------------- Algorithm 1, one t
    def iteration_step(self, t: int, stats: dict) -> None:
        """For each player p: K probe-sampling traversals (Algorithms 2-3), then
        p's regret network and the opponent's average-strategy network."""
        stats.update(regret_loss=[None, None], policy_loss=[None, None])
        k = self.schedule.traversals(self._num_traversals, t)
        pending = []
        for player in (0, 1):
            strategy = self.strategy_snapshot() if self._sampler.distributed else self.answer
            with self.timed("traversal"):
                record = merge_records(self._sampler.collect(strategy, player, t, k))
            stats.setdefault("events", []).extend(self._sampler.take_events())
            stats["nodes"] += record.nodes
            self.probes += record.probes
            pending.append((player, record))
            if self._alternating:  # player 1 traverses against player 0's new network
                self._train(pending.pop(), t, k, stats)
        for item in pending:  # simultaneous (Algorithm 1): both traversed against theta^t, then both trained
            self._train(item, t, k, stats)

    def _train(self, item, t: int, k: int, stats: dict) -> None:
        """Player p's regret network and the opponent's average-strategy network
        on p's traversal record (Algorithm 1 lines 6-9)."""
        player, record = item
        with self.timed("training"):
            stats["regret_loss"][player] = self._train_regrets(player, record, t, k)
            check_loss(stats["regret_loss"][player], f"player {player}'s regret network", t)
            stats["policy_loss"][1 - player] = self._train_policy(1 - player, record, t, k)
            check_loss(stats["policy_loss"][1 - player], f"player {1 - player}'s average-strategy network", t)

    def _train_regrets(self, player: int, record, t: int, k: int) -> float:
        """Regret network update (Algorithm 1 lines 6-8): the double-neural
        accumulation of r^ = (sum of sampled regrets) / K, or the Deep CFR refit."""
        model = self._regret_models[player]
        steps = self.schedule.train_steps(self._steps[0], t)
        if self._flags["backbone"] == "deep_cfr":
            rows, targets, valid = model.packer.pack(record.regret_queries, record.regret_pairs, record.regret_values)
            return model.refit(rows, targets, valid, t, steps, self._batch_size, self.np_rng, 2.0 / t,
                               reinitialize=self._reinitialize)  # fmt: skip
        queries, pairs, values = aggregate_samples(record.regret_queries, record.regret_pairs, record.regret_values,
                                                   1.0 / k, model.packer.m)  # fmt: skip
        rows, increments, valid = model.packer.pack(queries, pairs, values)
        return model.accumulate(rows, increments, valid, t, steps, self._batch_size, self._anchor_ratio, self.np_rng)

    def _train_policy(self, player: int, record, t: int, k: int) -> float:
        """Cumulative strategy S^{t+1} = S^t + w_t * sigma^ per agent (Algorithm 1
        line 9; w_t = t with linear averaging, as CFR+)."""
        model = self._policy_models[player]
        weight = float(t) if self._linear_averaging else 1.0
        pairs, values = [], []
        for query, probs in zip(record.strategy_queries, record.strategy_probs, strict=True):
            row_pairs, row_values = [], []
            for agent, actions in enumerate(query.legal):
                for action in actions:
                    digits = [-1] * model.view.num_agents
                    digits[agent] = action
                    row_pairs.append(digits)
                    row_values.append(float(probs[agent, action]))
            pairs.append(row_pairs)
            values.append(row_values)
        queries, pairs, values = aggregate_samples(record.strategy_queries, pairs, values,
                                                   weight / k, model.packer.m)  # fmt: skip
        rows, increments, valid = model.packer.pack(queries, pairs, values)
        return model.accumulate(rows, increments, valid, t, self._steps[1], self._batch_size, self._anchor_ratio,
                                self.np_rng)  # fmt: skip

    # ------------------------------------------------------- NeuralSolver hooks
    def solve_result(self):
        """(average-strategy networks [team, adversary], regret losses {player: [...]},
        policy losses {player: [...]})."""
        return ([m.net for m in self._policy_models], {p: list(m.losses) for p, m in enumerate(self._regret_models)},
                {p: list(m.losses) for p, m in enumerate(self._policy_models)})  # fmt: skip

    def parts(self) -> dict:
        models = {f"regret_model_{p}": m for p, m in enumerate(self._regret_models)}
        return {**models, **{f"policy_model_{p}": m for p, m in enumerate(self._policy_models)}}

    def extra_state(self) -> dict:
        return {"probes": self.probes}

    def load_extra_state(self, state: dict) -> None:
        self.probes = int(state["probes"])

    # ------------------------------------------------------------ introspection
    @property
    def sampler(self):
        """Where the probe traversals run (a `distributed.RaySampler` when num_workers > 1)."""
        return self._sampler

    @property
    def views(self) -> list[AgentView]:
        return list(self._views)

    @property
    def num_team_regret_networks(self) -> int:
        """Agent networks behind the team's regrets (1 with parameter sharing, n without)."""
        return len(self._regret_models[team_lib.TEAM_PLAYER].net.nets)

    @property
    def regret_models(self) -> list[TeamModel]:
        """Each player's regret model (network, trainer, memory, scale, losses)."""
        return list(self._regret_models)

    @property
    def policy_models(self) -> list[TeamModel]:
        """Each player's average-strategy model."""
        return list(self._policy_models)

    def regret_network(self, player: int) -> AgentNetwork:
        return self._regret_models[player].net

    def policy_network(self, player: int) -> AgentNetwork:
        return self._policy_models[player].net

    def num_parameters(self, player: int = team_lib.TEAM_PLAYER) -> int:
        return sum(p.numel() for p in self._regret_models[player].net.parameters())


def _check_game(game, settings: CFRMixSettings) -> None:
    """What the settings need of the game (and the device of this machine)."""
    if not team_lib.is_factored_team_game(game):
        raise TypeError(
            "CFRMixSolver needs a team-adversary game offering the factored team protocol "
            "(openspiel_cfrx.team.FactoredTeamGame: num_team_agents(), agent_num_actions(), ...); "
            f"game '{game.get_type().short_name}' does not. Load e.g. 'team_goofspiel(...)' or 'nest(...)' "
            "after `import games`, or use openspiel_cfrx.DeepCFRSolver for ordinary 2-player games"
        )
    check_game_supported(game)
    check_device(settings.device)
    if settings.network.infoset_encoding == "compact" and not callable(
        getattr(game, "compact_information_state_size", None)
    ):
        raise ValueError(
            "infoset_encoding='compact' needs a game with compact_information_state_size() and states with "
            f"compact_information_state_array(player); game '{game.get_type().short_name}' has none: use "
            "infoset_encoding='tensor'"
        )
    if settings.flags["team_view"] == "joint" and game.num_distinct_actions() > 100_000:
        raise ValueError(
            f"variant {settings.variant!r} needs one network output per joint action, and this "
            f"game has {game.num_distinct_actions()} joint actions; use a factored variant "
            "(cfr_mix)"
        )


def _adversary_width(game) -> tuple[bool, int]:
    """(does the game declare adversary_num_actions(), the adversary head's width)."""
    declared = callable(getattr(game, "adversary_num_actions", None))
    width = team_lib.adversary_num_actions(game)
    if not declared:
        logger.warning("game '%s' has no adversary_num_actions(); assuming the adversary has max(agent_num_actions()) "
                       "= %d actions (add the method to the game to be sure)", game.get_type().short_name, width)  # fmt: skip
    return declared, width
