"""The contenders of the equal-budget harness: OpenSpiel's algorithms and ours by name.

(Above every solver package, beside the front door: it builds our solvers and
OpenSpiel's; `cfrx_examples.contenders` re-exports it.)

Each is an `openspiel_cfrx.eval.harness.Contender`: one unit of work per
`step()` (a CFR iteration, a batch of MCCFR iterations or NFSP episodes, a Deep
CFR iteration), `policy()` returning something `openspiel_cfrx.nash_conv`
accepts. Work needed to *produce* a policy (e.g. training OpenSpiel Deep CFR's
strategy network) happens in `policy()` and is charged to the contender by the
harness (`run_timed`, `run_budget`), so curves compare usable policies at
equal compute.

Registered names (`CONTENDERS`):
  ours:      cfr, cfr+, dcfr, lcfr, pcfr+, oftrl, deep_cfr, cfr_mix (team games)
  OpenSpiel: os_cpp_cfr, os_cfr, os_cfr_plus, os_dcfr, os_es_mccfr, os_nfsp, os_deep_cfr
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyspiel

from openspiel_cfrx.eval.harness import Contender


def openspiel_deep_cfr_iteration(solver) -> None:
    """One iteration of OpenSpiel's PyTorch `DeepCFRSolver.solve()` loop (its
    own code, unrolled so a harness can time and evaluate between iterations)."""
    for p in range(2):
        for _ in range(solver._num_traversals):
            solver._traverse_game_tree(solver._root_node, p)
        if solver._reinitialize_advantage_networks:
            solver._reinitialize_advantage_network(p)
        solver._learn_advantage_network(p)
    solver._iteration += 1


class _SolverContender(Contender):
    """Anything with `evaluate_and_update_policy()` and `average_policy()`."""

    def __init__(self, name, solver, policy_fn=None):
        self.name = name
        self._solver = solver
        self._policy_fn = policy_fn or solver.average_policy

    def step(self):
        self._solver.evaluate_and_update_policy()

    def policy(self):
        return self._policy_fn()


class _MCCFRContender(Contender):
    """OpenSpiel's C++ external-sampling MCCFR; a step is `iterations_per_step` iterations."""

    def __init__(self, game, seed, iterations_per_step=100):
        self.name = "os_es_mccfr"
        self._solver = pyspiel.ExternalSamplingMCCFRSolver(game, seed=seed)
        self._per_step = iterations_per_step

    def step(self):
        for _ in range(self._per_step):
            self._solver.run_iteration()

    def policy(self):
        return self._solver.average_policy()


# OpenSpiel's Leduc NFSP example's hyperparameters: what `os_nfsp` runs unless told otherwise
# (results/full_fhp.md, hulh_head_to_head.md and fhp_curve.md were measured with them). Every key is
# an `nfsp.NFSP` constructor argument (those it hands on to its inner `dqn.DQN` included) except
# `hidden` (`hidden_layers_sizes`, both networks), `reward_scale` (rewards are divided by it
# before the agents see them; 1 = the game's chips) and `suit_symmetric` (poker games: every network
# reads its input through `SuitCanonical`, as Deep CFR's `network={"family": "suit_symmetric_mlp"}` does; the
# policy is then exactly suit-symmetric and is evaluated on the isomorphic tree). `gradient_clipping` clips the average (SL) network's
# gradients only: `nfsp.NFSP` keeps that argument and its DQN gets none. The epsilon schedule, learn_every
# of the DQN and the target-network period count the DQN's own steps (best-response episodes only).
NFSP_LEDUC_DEFAULTS = dict(
    hidden=(128,), reservoir_buffer_capacity=int(2e6), anticipatory_param=0.1,
    replay_buffer_capacity=int(2e5), batch_size=128, learn_every=64, rl_learning_rate=0.01,
    sl_learning_rate=0.01, min_buffer_size_to_learn=1000, update_target_network_every=19200,
    weight_update_coeff=0.995, epsilon_start=0.06, epsilon_end=0.001, epsilon_decay_duration=int(20e6),
    epsilon_decay_schedule_str="exp", optimizer_str="sgd", loss_str="mse", gradient_clipping=None,
    reward_scale=1.0, suit_symmetric=False,
)  # fmt: skip

# Named NFSP settings (`make_contender("os_nfsp", game, **NFSP_PRESETS[name])`;
# `benchmarks/bench_full_fhp_nfsp.py --nfsp_preset=NAME`). `fhp_tuned` is the best configuration of
# `benchmarks/sweep_nfsp_fhp.py` on 5x2 flop hold'em (benchmarks/results/nfsp_sweep.md).
NFSP_PRESETS: dict[str, dict] = {
    "leduc_defaults": {},
    # The sweep's `combined` row: Heinrich & Silver's settings with every single change that beat them
    # at 40,000 episodes on seed 0 (anticipatory 0.5, Adam at 0.001 for both networks, a 20k replay
    # memory, 256x256 networks), rewards in big blinds; 1,091.7 +- 141.2 mbb/g at 40,000 episodes
    # (3 seeds) where `leduc_defaults` is at 2,001.4 +- 77.0 (3 seeds; benchmarks/results/nfsp_sweep.md).
    "fhp_tuned": dict(
        hidden=(256, 256), reservoir_buffer_capacity=2_000_000, anticipatory_param=0.5,
        replay_buffer_capacity=20_000, batch_size=128, learn_every=64, rl_learning_rate=0.001,
        sl_learning_rate=0.001, min_buffer_size_to_learn=1000, update_target_network_every=1000,
        weight_update_coeff=0.995, epsilon_start=0.08, epsilon_end=0.0, epsilon_decay_duration=10_000,
        epsilon_decay_schedule_str="linear", optimizer_str="adam", loss_str="mse", gradient_clipping=None,
        reward_scale=100.0,
    ),
}
# Full flop hold'em: the sweep's settings with Deep CFR's network size on that game (`fhp_full`'s
# 128x128), as the paper ran NFSP ("the same network architecture"); its 256x256 on every one of the
# 22,100 flops would take ~4 h to evaluate exactly here.
NFSP_PRESETS["fhp_full_tuned"] = dict(NFSP_PRESETS["fhp_tuned"], hidden=(128, 128))
# The same with Deep CFR's whole `fhp_full` network: `SuitCanonical` in front of the 128x128 MLP. The
# policy is suit-symmetric, so its exact evaluation walks the 1,755 flop classes instead of 22,100 flops.
NFSP_PRESETS["fhp_full_symmetric"] = dict(NFSP_PRESETS["fhp_full_tuned"], suit_symmetric=True)


def nfsp_settings(**overrides) -> dict:
    """`NFSP_LEDUC_DEFAULTS` with `overrides`, checked: an unknown key or a bad
    value (a learning rate <= 0, an anticipatory parameter outside [0, 1], a
    capacity < 1, ...) raises ValueError with one line naming it."""
    unknown = sorted(set(overrides) - set(NFSP_LEDUC_DEFAULTS))
    if unknown:
        raise ValueError(f"unknown NFSP setting(s) {', '.join(unknown)}; choose from {', '.join(NFSP_LEDUC_DEFAULTS)}")
    s = {**NFSP_LEDUC_DEFAULTS, **overrides}
    s["hidden"] = tuple(s["hidden"]) if isinstance(s["hidden"], list | tuple) else (s["hidden"],)

    def number(key, low, high=float("inf"), low_open=False, integer=False):
        v = s[key]
        ok = isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v)
        ok = ok and (v > low if low_open else v >= low) and v <= high and (not integer or float(v).is_integer())
        if not ok:
            kind = "an integer" if integer else "a number"
            where = f"{'>' if low_open else '>='} {low:g}" + (f" and <= {high:g}" if high != float("inf") else "")
            raise ValueError(f"NFSP setting {key}={v!r}: must be {kind} {where}")
        if integer:
            s[key] = int(v)

    if not s["hidden"] or not all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in s["hidden"]):
        raise ValueError(f"NFSP setting hidden={s['hidden']!r}: must be one or more positive layer widths")
    for key in ("rl_learning_rate", "sl_learning_rate", "reward_scale"):
        number(key, 0, low_open=True)
    number("anticipatory_param", 0, 1)
    number("epsilon_start", 0, 1, low_open=True)
    number("epsilon_end", 0, s["epsilon_start"])
    number("weight_update_coeff", 0, 1)
    for key in ("reservoir_buffer_capacity", "replay_buffer_capacity", "batch_size", "learn_every",
                "update_target_network_every", "epsilon_decay_duration"):  # fmt: skip
        number(key, 1, integer=True)
    number("min_buffer_size_to_learn", 0, integer=True)
    if s["weight_update_coeff"] == 1:
        raise ValueError("NFSP setting weight_update_coeff=1: must be < 1 (OpenSpiel's DQN asserts it)")
    if not isinstance(s["suit_symmetric"], bool):
        raise ValueError(f"NFSP setting suit_symmetric={s['suit_symmetric']!r}: must be True or False")
    if s["gradient_clipping"] is not None:
        number("gradient_clipping", 0, low_open=True)
    for key, choices in (("epsilon_decay_schedule_str", ("exp", "linear")), ("optimizer_str", ("sgd", "adam")),
                         ("loss_str", ("mse", "huber"))):  # fmt: skip
        if s[key] not in choices:
            raise ValueError(f"NFSP setting {key}={s[key]!r}: choose from {', '.join(choices)}")
    return s


class _NFSPContender(Contender):
    """OpenSpiel's PyTorch NFSP; a step is `episodes_per_step` episodes. Its
    settings are `NFSP_LEDUC_DEFAULTS` (the Leduc example's hyperparameters,
    128-unit nets, anticipatory 0.1, ...) with any of them overridden by
    keyword (`nfsp_settings`)."""

    def __init__(self, game, seed, episodes_per_step=100, **overrides):
        from open_spiel.python import policy as policy_lib
        from open_spiel.python import rl_environment
        from open_spiel.python.pytorch import nfsp

        if not (isinstance(episodes_per_step, int) and episodes_per_step >= 1):
            raise ValueError(f"episodes_per_step={episodes_per_step!r}: must be an integer >= 1")
        self.settings = nfsp_settings(**overrides)
        self.name = "os_nfsp"
        self._env = rl_environment.Environment(
            game, chance_event_sampler=rl_environment.ChanceEventSampler(seed=seed)
        )
        info_size = self._env.observation_spec()["info_state"][0]
        num_actions = self._env.action_spec()["num_actions"]
        kwargs = {k: v for k, v in self.settings.items() if k not in ("hidden", "reward_scale", "suit_symmetric")}
        self._reward_scale = float(self.settings["reward_scale"])
        self._agents = [
            nfsp.NFSP(p, info_size, num_actions, list(self.settings["hidden"]), seed=seed + 10 * p, **kwargs)
            for p in range(2)
        ]
        if self.settings["suit_symmetric"]:
            self._read_through_suit_canonical(game)
        self._per_step = episodes_per_step
        self.nodes_touched = 0  # histories visited by self-play (decisions, chance cards, terminals)
        agents, env = self._agents, self._env
        mode = nfsp.MODE.AVERAGE_POLICY

        class _AveragePolicy(policy_lib.Policy):
            def __init__(self):
                super().__init__(game, [0, 1])

            def action_probabilities(self, state, player_id=None):
                player = state.current_player()
                legal = state.legal_actions(player)
                obs = {
                    "info_state": [None, None],
                    "legal_actions": [None, None],
                    "current_player": player,
                }
                obs["info_state"][player] = state.information_state_tensor(player)
                obs["legal_actions"][player] = legal
                step = rl_environment.TimeStep(
                    observations=obs, rewards=None, discounts=None, step_type=None
                )
                with agents[player].temp_mode_as(mode):
                    probs = agents[player].step(step, is_evaluation=True).probs
                return {a: probs[a] for a in legal}

            def batch_action_probabilities(self, states) -> np.ndarray:
                """[len(states), num_actions]: one forward pass of each player's average
                network over many states (`nfsp.NFSP._act`'s masking and softmax)."""
                import torch
                from open_spiel.python.pytorch import dqn

                states = list(states)
                out = np.zeros((len(states), num_actions))
                by_player: dict[int, list[int]] = {}
                for i, state in enumerate(states):
                    by_player.setdefault(state.current_player(), []).append(i)
                with torch.inference_mode():
                    for player, rows in by_player.items():
                        x = torch.tensor(np.asarray([states[i].information_state_tensor(player) for i in rows],
                                                    dtype=np.float32))  # fmt: skip
                        mask = np.zeros((len(rows), num_actions), dtype=bool)
                        for k, i in enumerate(rows):
                            mask[k, states[i].legal_actions()] = True
                        logits = agents[player]._avg_network(x)  # noqa: SLF001
                        logits = torch.where(torch.from_numpy(mask), logits,
                                             torch.full_like(logits, dqn.ILLEGAL_ACTION_LOGITS_PENALTY))  # fmt: skip
                        out[rows] = torch.softmax(logits, dim=-1).numpy()
                return out

        self._policy = _AveragePolicy()
        del env

    def _read_through_suit_canonical(self, game):
        """Puts `SuitCanonical` in front of every network of both agents (the average
        network, the DQN's Q and target networks). It has no parameters, so the
        optimisers' parameter lists and the target network's copies stay valid."""
        from torch import nn

        from openspiel_cfrx.neural_poker.suit_symmetric import SuitCanonical, card_layout

        try:
            canonical = SuitCanonical(**card_layout(game))
        except ValueError as e:
            raise ValueError(f"NFSP setting suit_symmetric=True: {e}") from None
        for agent in self._agents:
            rl = agent._rl_agent  # noqa: SLF001
            agent._avg_network = nn.Sequential(canonical, agent._avg_network)  # noqa: SLF001
            rl._q_network = nn.Sequential(canonical, rl._q_network)  # noqa: SLF001
            rl._target_q_network = nn.Sequential(canonical, rl._target_q_network)  # noqa: SLF001

    def step(self):
        env, agents = self._env, self._agents
        for _ in range(self._per_step):
            time_step = self._scaled(env.reset())
            while not time_step.last():
                player = time_step.observations["current_player"]
                action = agents[player].step(time_step).action
                time_step = self._scaled(env.step([action]))
            for agent in agents:
                agent.step(time_step)
            self.nodes_touched += len(env.get_state.history()) + 1  # its states: one per card dealt, decision, terminal

    def _scaled(self, time_step):
        """`time_step` with its rewards divided by the `reward_scale` setting."""
        if self._reward_scale == 1.0 or time_step.rewards is None:
            return time_step
        return time_step._replace(rewards=[r / self._reward_scale for r in time_step.rewards])

    def policy(self):
        return self._policy

    def save_average_networks(self, path: str, **info) -> None:
        """Both players' average networks (the policy) and `info` (e.g. episodes, seconds) to `path`."""
        import torch

        networks = [agent._avg_network.state_dict() for agent in self._agents]  # noqa: SLF001
        torch.save({**info, "nodes_touched": self.nodes_touched, "networks": networks}, path)

    def load_average_networks(self, path: str) -> dict:
        """Restores networks saved by `save_average_networks` (same game); returns the saved info."""
        import torch

        saved = torch.load(path, weights_only=False)
        for agent, weights in zip(self._agents, saved["networks"], strict=True):
            agent._avg_network.load_state_dict(weights)  # noqa: SLF001
        self.nodes_touched = saved["nodes_touched"]
        return saved


class _OpenSpielDeepCFRContender(Contender):
    """OpenSpiel's PyTorch Deep CFR, one iteration (K traversals per player +
    advantage training) per step; `policy()` trains its strategy network."""

    def __init__(self, game, seed, **kwargs):
        from open_spiel.python.pytorch import deep_cfr

        self.name = "os_deep_cfr"
        params = dict(
            policy_network_layers=(64, 64), advantage_network_layers=(64, 64),
            num_iterations=10**9, num_traversals=375, learning_rate=1e-3,
            batch_size_advantage=2048, batch_size_strategy=2048, memory_capacity=int(1e7),
            policy_network_train_steps=5000, advantage_network_train_steps=750,
            reinitialize_advantage_networks=True, seed=seed,
        )  # fmt: skip
        params.update(kwargs)
        self._solver = deep_cfr.DeepCFRSolver(game, **params)
        self._trained_at = -1

    def step(self):
        openspiel_deep_cfr_iteration(self._solver)

    def policy(self):
        from open_spiel.python import policy as policy_lib

        s = self._solver
        if self._trained_at != s._iteration:
            s._reinitialize_policy_network()
            s._learn_strategy_network()
            self._trained_at = s._iteration
        return policy_lib.tabular_policy_from_callable(s._game, s.action_probabilities)


def _tabular(name: str) -> Callable:
    def build(game, seed, **kwargs):
        from openspiel_cfrx.tabular import make_solver

        solver = make_solver(name, game, **kwargs)
        return _SolverContender(name, solver, solver.average_strategy)

    return build


def _openspiel_solver(name: str, factory: Callable) -> Callable:
    def build(game, seed, **kwargs):
        return _SolverContender(name, factory(game))

    return build


def _os_cfr(game):
    from open_spiel.python.algorithms import cfr

    return cfr.CFRSolver(game)


def _os_cfr_plus(game):
    from open_spiel.python.algorithms import cfr

    return cfr.CFRPlusSolver(game)


def _os_dcfr(game):
    from open_spiel.python.algorithms import discounted_cfr

    return discounted_cfr.DCFRSolver(game)


class _DeepContender(Contender):
    """Our DeepCFRSolver / CFRMixSolver: one `run_iteration()` per step; the
    solver itself is the policy (`strategy_array` evaluates the average
    network on all infosets in batches, training it first if needed)."""

    def __init__(self, name, solver, game):
        self.name = name
        self._solver = solver
        self._game = game

    @property
    def nodes_touched(self):
        return getattr(self._solver, "nodes_touched", None)

    def step(self):
        self._solver.run_iteration()

    def policy(self):
        # Evaluating the average network on every infoset (training it first
        # if new samples arrived) happens here, so its cost is charged to us.
        from openspiel_cfrx.tree import get_tree

        return self._solver.strategy_array(get_tree(self._game))


# The settings of the dedicated Deep CFR benchmark (benchmarks/bench_deep_cfr.py
# reads them from here; results/deep_cfr_leduc.md): vectorised traversals over the extracted tree (the
# harness extracts it anyway for exact evaluation), traversal and SGD-step ramps,
# cosine-annealed retraining, and the SD-CFR average of the kept advantage
# networks, so an evaluation point costs one batched pass and no policy-network
# training. (The previous settings retrained the policy network at every
# evaluation point, charged to the contender: on Leduc in 60 s, exploitability
# 0.12-0.25 after 41-147 iterations vs 0.053-0.082 now; docs/benchmarks.md.)
DEEP_CFR_HARNESS_SETTINGS = dict(
    advantage_network_layers=(64, 64, 64),
    policy_network_layers=(64, 64, 64),
    num_traversals=10000,
    traversal={"backend": "vectorized"},
    learning_rate=1e-2,
    advantage_network_train_steps=250,
    batch_size_advantage=2048,
    averaging={"average_policy": "sd_cfr"},
)
DEEP_CFR_HARNESS_SCHEDULE = dict(
    traversals_ramp=40, traversals_initial=3000, train_steps_ramp=40, train_steps_initial=100, learning_rate="cosine"
)


def _deep_cfr(game, seed, **kwargs):
    from openspiel_cfrx.deep import DeepCFRSolver, Schedule
    from openspiel_cfrx.presets import merge_settings

    schedule = {**DEEP_CFR_HARNESS_SCHEDULE, **{k: kwargs.pop(k) for k in list(kwargs) if k in DEEP_CFR_HARNESS_SCHEDULE}}
    params = merge_settings(dict(num_iterations=10**9, seed=seed, workers={"num_threads": None},
                                 training={"schedule": Schedule(**schedule)}), DEEP_CFR_HARNESS_SETTINGS, kwargs)  # fmt: skip
    return _DeepContender("deep_cfr", DeepCFRSolver(game, **params), game)


def _cfr_mix(game, seed, **kwargs):
    from openspiel_cfrx.cfr_mix import CFRMixSolver

    params = dict(num_iterations=10**9, seed=seed)
    params.update(kwargs)
    return _DeepContender("cfr_mix", CFRMixSolver(game, **params), game)


CONTENDERS: dict[str, Callable] = {
    "deep_cfr": _deep_cfr,
    "cfr_mix": _cfr_mix,
    **{n: _tabular(n) for n in ("cfr", "cfr+", "dcfr", "lcfr", "pcfr+", "oftrl")},
    "os_cpp_cfr": _openspiel_solver("os_cpp_cfr", pyspiel.CFRSolver),
    "os_cfr": _openspiel_solver("os_cfr", _os_cfr),
    "os_cfr_plus": _openspiel_solver("os_cfr_plus", _os_cfr_plus),
    "os_dcfr": _openspiel_solver("os_dcfr", _os_dcfr),
    "os_es_mccfr": lambda game, seed, **kw: _MCCFRContender(game, seed, **kw),
    "os_nfsp": lambda game, seed, **kw: _NFSPContender(game, seed, **kw),
    "os_deep_cfr": lambda game, seed, **kw: _OpenSpielDeepCFRContender(game, seed, **kw),
}


def register_contender(name: str, build: Callable) -> None:
    """Adds `build(game, seed, **kwargs) -> Contender` under `name`."""
    CONTENDERS[name] = build


def make_contender(name: str, game, seed: int = 0, **kwargs) -> Contender:
    if name not in CONTENDERS:
        raise ValueError(f"unknown algorithm {name!r}; choose from {', '.join(CONTENDERS)}")
    return CONTENDERS[name](game, seed, **kwargs)
