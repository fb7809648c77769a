"""Where Deep CFR's 5x2 FHP floor comes from (issue 21): the diagnostics behind
`benchmarks/results/fhp_plateau.md`'s sections (session 18 on).

Three modes, each printing one line per measurement (exact NashConv by
`poker_nash_conv`, mbb/g):

    # a Deep CFR run (bench_fhp_curve.py's settings + JSON overrides), evaluated at
    # the given iterations: current iterate sigma^t and the average network
    PYTHONPATH=. python benchmarks/diag_fhp_floor.py run --iterations=60 --at=20,40,60 \
        --deep_cfr='{"num_traversals": 10000, "reinitialize_advantage_networks": false}'
    # ... with the advantage loss fitted on the memory merged by infoset
    # (minibatches of distinct infosets drawn with probability W_I / sum W: the
    # same loss, without the targets' within-infoset noise in the gradient)
    PYTHONPATH=. python benchmarks/diag_fhp_floor.py run --merged ...
    # ... also the exact linear average of the iterates (the kept networks mixed
    # on the public tree: what a perfect average network would give)
    PYTHONPATH=. python benchmarks/diag_fhp_floor.py run --exact_average ...
    # ... with the advantage networks' Adam rate annealed as sqrt(T0 / t) from iteration T0
    PYTHONPATH=. python benchmarks/diag_fhp_floor.py run --lr_decay=50 ...
    # ... with sigma^t from a moving average of the advantage weights (decay BETA)
    PYTHONPATH=. python benchmarks/diag_fhp_floor.py run --weight_average=0.99 ...
    # ... with the advantage "networks" replaced by the memory's per-infoset
    # means (a perfect regressor: the floor of the samples alone)
    PYTHONPATH=. python benchmarks/diag_fhp_floor.py run --tabular_advantage --exact_average ...

    # refit the advantage networks of a saved run much longer / wider
    PYTHONPATH=. python benchmarks/diag_fhp_floor.py refit --checkpoint=C --layers=128,128 --steps=500,2000,16000

    # where a saved run's sigma^t departs from regret matching on its memory's
    # means, by quartile of how much the loss weighs an infoset
    PYTHONPATH=. python benchmarks/diag_fhp_floor.py where --checkpoint=C --deep_cfr=...

    # the average strategy of a saved run: exact (tabular) mean of its strategy
    # memory, then average networks of other sizes / step counts
    PYTHONPATH=. python benchmarks/diag_fhp_floor.py average --checkpoint=C --layers=128,128 --steps=1000,4000

`run --save=C` writes the checkpoint the other two modes read (with the same
`--deep_cfr` overrides). One seed per line; torch threads 1.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time

import numpy as np
import pyspiel
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from open_spiel.python import policy as policy_lib  # noqa: E402

import games  # noqa: E402,F401  (registers flop_holdem)
from benchmarks.bench_fhp_curve import DEEP_CFR_SETTINGS  # noqa: E402
from games.poker_exploitability import poker_nash_conv  # noqa: E402
from openspiel_cfrx.deep import DeepCFRSolver  # noqa: E402
from openspiel_cfrx.deep.networks import make_network, reset_parameters  # noqa: E402
from openspiel_cfrx.deep.schedule import Schedule  # noqa: E402
from openspiel_cfrx.deep.trainer import Trainer  # noqa: E402

GAME = "flop_holdem(num_ranks=5,num_suits=2)"


def mbb(game, pol) -> str:
    r = poker_nash_conv(game, pol, return_details=True)
    return f"{r.nash_conv_mbb:.1f} (BR gains {r.player_improvements[0]:.1f} / {r.player_improvements[1]:.1f})"


def settings_of(args) -> dict:
    """bench_fhp_curve.py's Deep CFR settings as in its 2026-11-25 900 s run, then --deep_cfr."""
    settings = dict(DEEP_CFR_SETTINGS, regret_scale="auto", traversal_backend="poker",
                    advantage_network_layers=(128, 128), advantage_network_train_steps=500)  # fmt: skip
    settings.update(json.loads(args.deep_cfr))
    if getattr(args, "exact_average", False):
        settings["keep_iteration_networks"] = True
    return settings


def make_solver(game, args) -> DeepCFRSolver:
    solver = DeepCFRSolver(game, num_iterations=10**9, seed=args.seed, **settings_of(args))
    if args.schedule:
        solver.schedule = Schedule(learning_rate=args.schedule)
    return solver


def fit_merged(memory, loss, steps, batch_size, rng, linear_scale, schedule=None, *, trainer) -> float:
    """The advantage loss on the memory merged by infoset (memories.py), as
    minibatches of distinct infosets I drawn with probability W_I / sum W, each
    weighted sum W / entries: an unbiased estimate of the same loss's gradient
    without the sampled targets' spread within an infoset."""
    merged = memory.aggregate("linear", linear_scale)
    weight = merged["weight"]
    cdf = np.cumsum(weight / weight.sum())
    x, y, m = (torch.from_numpy(merged[k]) for k in ("features", "targets", "legal_mask"))
    scale = float(weight.sum() / merged["size"])

    def batch(step):
        index = torch.from_numpy(np.minimum(np.searchsorted(cdf, rng.random(batch_size)), len(cdf) - 1))
        return x[index], y[index], m[index], torch.full((batch_size,), scale)

    return trainer.fit(batch, steps, loss, schedule) + merged["constant"] / merged["size"]


class ExactAverage:
    """The exact linear average of the iterates sigma^1..sigma^T on every
    infoset (what an infinite strategy memory and a perfectly fitted average
    network would give, and what Deep CFR's bound is about; the paper's
    "store each iteration's value network" alternative, Section 4):
    sum_t t pi_p^t(I) sigma^t(I) / sum_t t pi_p^t(I), mixed by
    `poker_nash_conv` on the public tree from the solver's kept networks
    (`keep_iteration_networks=True`)."""

    average_policy = "sd_cfr"

    def __init__(self, solver):
        self.solver = solver

    def iterate_strategies(self, states):
        return self.solver.iterate_strategies(states)


class TableNetwork(torch.nn.Module):
    """A perfect regressor on the advantage memory: V(I, .) = the t-weighted mean
    of I's sampled regrets in the memory (the minimiser of the advantage loss
    over all functions); equal (sigma^t uniform, as in tabular sampled CFR)
    at infosets the memory does not hold. Deep CFR with it isolates the
    samples and the memory from the network's approximation."""

    def __init__(self, num_actions: int):
        super().__init__()
        self.unused = torch.nn.Parameter(torch.zeros(1))  # Trainer/device lookups want one parameter
        self.num_actions, self.index, self.values = num_actions, {}, torch.ones((1, num_actions))

    @staticmethod
    def keys(features: np.ndarray) -> list:
        features = np.ascontiguousarray(features, dtype=np.float32)
        return features.view(np.dtype((np.void, features.shape[1] * 4))).ravel().tolist()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        missing = len(self.values) - 1
        rows = [self.index.get(k, missing) for k in self.keys(x.detach().cpu().numpy())]
        return self.values.index_select(0, torch.as_tensor(rows, dtype=torch.int64))


def fit_table(memory, loss, steps, batch_size, rng, linear_scale, schedule=None, *, trainer) -> float:
    """`Trainer.fit_memory` for a `TableNetwork`: the merged memory's means."""
    merged = memory.aggregate("linear" if linear_scale is not None else "uniform", linear_scale or 1.0)
    net = trainer.network
    net.index = {k: i for i, k in enumerate(TableNetwork.keys(merged["features"]))}
    net.values = torch.cat([torch.from_numpy(merged["targets"]), torch.ones((1, net.num_actions))])
    return merged["constant"] / merged["size"]


class WeightAverage:
    """Polyak averaging of an advantage network's weights (an exponential
    moving average over its Adam steps, decay `beta`): SGD keeps training the
    raw weights, sigma^t (and the kept iterate) uses the averaged ones. A
    constant-rate optimiser leaves the raw weights jittering around the fit;
    their average cancels that noise without slowing the fit's tracking much.
    (On 5x2 FHP it made the iterates and their average worse:
    `fhp_plateau.md`, session 25.)"""

    def __init__(self, trainer, beta: float):
        self.trainer, self.beta = trainer, beta
        optimizer = trainer.optimizer
        self.average = optimizer.params.detach().clone()
        self.raw = None
        step, fit_memory = optimizer.step, trainer.fit_memory

        def averaged_step():
            step()
            self.average.lerp_(optimizer.params, 1.0 - self.beta)

        def averaged_fit(*a, **k):
            if self.raw is not None:  # train on from the raw weights
                optimizer.params.copy_(self.raw)
            loss = fit_memory(*a, **k)
            self.raw = optimizer.params.clone()
            optimizer.params.copy_(self.average)  # sigma^t: the averaged weights
            return loss

        optimizer.step, trainer.fit_memory = averaged_step, averaged_fit


def run(game, args) -> None:
    solver = make_solver(game, args)
    if args.weight_average:
        for trainer in solver.advantage_trainers:
            WeightAverage(trainer, args.weight_average)
    exact = ExactAverage(solver) if args.exact_average else None
    if args.tabular_advantage:
        for memory, trainer in zip(solver.advantage_buffers, solver.advantage_trainers, strict=True):
            memory.track_duplicates(max_unique=10**8)
            trainer.network = TableNetwork(game.num_distinct_actions())
            trainer.fit_memory = functools.partial(fit_table, trainer=trainer)
    if args.merged:
        for memory in solver.advantage_buffers:
            memory.track_duplicates(max_unique=10**7)

        for trainer in solver.advantage_trainers:  # the solver's own step (reinit, steps, weights), merged batches
            trainer.fit_memory = functools.partial(fit_merged, trainer=trainer)
    at = {int(a) for a in args.at.split(",")}
    start = time.perf_counter()
    for it in range(1, args.iterations + 1):
        if args.lr_decay:  # Adam's rate of the advantage networks: lr * min(1, sqrt(T0 / t))
            for trainer in solver.advantage_trainers:
                trainer.learning_rate = settings_of(args).get("learning_rate", 1e-3) * min(1.0, (args.lr_decay / it) ** 0.5)
        solver.run_iteration()
        if it in at:
            spent = time.perf_counter() - start
            losses = [round(x, 4) for x in solver.history[-1]["advantage_loss"]]
            current = mbb(game, solver.current_policy())
            solver.train_policy_network()
            exact_part = "" if exact is None else f"; exact average of the iterates {mbb(game, exact)}"
            print(f"iteration {it}: {spent:.0f} s (earlier evaluations included), {solver.nodes_touched:,} nodes, "
                  f"advantage losses {losses}; current iterate {current}; average network {mbb(game, solver)}"
                  f"{exact_part}", flush=True)  # fmt: skip
    if args.save:
        solver.save_checkpoint(args.save)


def refit(game, args) -> None:
    solver = make_solver(game, args)
    solver.load_checkpoint(args.checkpoint)
    print(f"checkpoint (iteration {solver.iteration}): current iterate {mbb(game, solver.current_policy())}", flush=True)
    layers = tuple(int(w) for w in args.layers.split(","))
    trainers = []
    for player in (0, 1):
        network = make_network("mlp", *trainer_shape(solver), layers)
        reset_parameters(network, 7 + player)
        trainers.append(Trainer(network, args.learning_rate, 1.0))
    solver._advantage = trainers  # noqa: SLF001  (the networks sigma^t is read from)
    rng, done, start = np.random.default_rng(1), 0, time.perf_counter()
    for steps in (int(s) for s in args.steps.split(",")):
        losses = [round(t.fit_memory(solver.advantage_buffers[p], solver.advantage_loss, steps - done,
                                     settings_of(args)["batch_size_advantage"], rng, solver.linear_scale()), 4)
                  for p, t in enumerate(trainers)]  # fmt: skip
        done = steps
        print(f"advantage {layers} refitted {steps} steps ({time.perf_counter() - start:.0f} s): losses {losses}; "
              f"current iterate {mbb(game, solver.current_policy())}", flush=True)  # fmt: skip


class SwappedNetwork(torch.nn.Module):
    """An advantage network, except at the chosen infosets, where the memory's
    t-weighted mean regrets answer (`TableNetwork`'s values)."""

    def __init__(self, network, index: dict, values: torch.Tensor):
        super().__init__()
        self.network, self.index, self.values = network, index, values

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.network(x).clone()
        hits = [(i, self.index[k]) for i, k in enumerate(TableNetwork.keys(x.detach().cpu().numpy())) if k in self.index]
        if hits:
            rows, table_rows = (list(v) for v in zip(*hits, strict=True))
            out[rows] = self.values[table_rows]
        return out


def where(game, args) -> None:
    """Where sigma^t's error is, by how much weight the loss gives an infoset:
    per quartile of the held infosets (ordered by their summed weight W_I in
    the advantage memory), how far regret matching on the network is from
    regret matching on the memory's mean regrets (L1), then the current
    iterate's NashConv with the network swapped for the means on the rarest
    or the most frequent half of the infosets, or on all of them."""
    from openspiel_cfrx.deep.deep_cfr import AdvantageStrategy, CurrentPolicy
    from openspiel_cfrx.deep.regret_matching import regret_matching

    solver = make_solver(game, args)
    solver.load_checkpoint(args.checkpoint)
    print(f"checkpoint: iteration {solver.iteration}; current iterate {mbb(game, solver.current_policy())}", flush=True)
    halves = {"rarest half": [{}, {}], "most frequent half": [{}, {}], "all held infosets": [{}, {}]}
    values = []
    for player in (0, 1):
        memory = solver.advantage_buffers[player]
        memory.track_duplicates(max_unique=10**8)
        merged = memory.aggregate("linear", 1.0)
        features, mask, weight = merged["features"], merged["legal_mask"], merged["weight"]
        with torch.inference_mode():
            predicted = solver.advantage_networks[player](torch.from_numpy(features)).numpy()
        gap = np.abs(regret_matching(predicted, mask, "argmax") - regret_matching(merged["targets"], mask, "argmax")).sum(1)
        order = np.argsort(weight, kind="stable")
        print(f"player {player}: {len(order):,} held infosets, {merged['size']:,} entries; by quartile of W_I "
              "(rarest first): infosets, share of the weight, mean L1 |sigma_net - sigma_means|, share with another argmax")
        argmax_differs = predicted.argmax(1) != np.where(mask, merged["targets"], -np.inf).argmax(1)
        for q, rows in enumerate(np.array_split(order, 4)):
            print(f"  Q{q + 1}: {len(rows):,}  {weight[rows].sum() / weight.sum():.3f}  {gap[rows].mean():.3f}  "
                  f"{argmax_differs[rows].mean():.3f}")
        keys = TableNetwork.keys(features)
        half = len(order) // 2
        for name, rows in (("rarest half", order[:half]), ("most frequent half", order[half:]), ("all held infosets", order)):
            halves[name][player] = {keys[i]: int(i) for i in rows}
        values.append(torch.from_numpy(merged["targets"]))
    for name, index in halves.items():
        nets = [SwappedNetwork(solver.advantage_networks[p], index[p], values[p]).eval() for p in (0, 1)]
        policy = CurrentPolicy(game, AdvantageStrategy(nets, [True, True], "argmax", torch.device("cpu")),
                               solver._average.encode)  # noqa: SLF001  fmt: skip
        print(f"current iterate with the memory's means on the {name}: {mbb(game, policy)}", flush=True)


def trainer_shape(solver) -> tuple[int, int]:
    net = solver.advantage_networks[0]
    first, last = next(net.parameters()), list(net.parameters())[-1]
    return first.shape[1], last.shape[0]


class TabularMean(policy_lib.Policy):
    """The t-weighted mean of a strategy memory's entries per infoset (what a
    perfectly fitted average network would output on the infosets it holds;
    uniform elsewhere)."""

    def __init__(self, game, memory):
        super().__init__(game, [0, 1])
        n = len(memory)
        features, probs = memory.features[:n], memory.targets[:n].astype(np.float64)
        weight = memory.iteration[:n].astype(np.float64)
        keys = np.ascontiguousarray(features).view(np.dtype((np.void, features.shape[1] * 4))).ravel()
        distinct, inverse = np.unique(keys, return_inverse=True)
        total = np.bincount(inverse, weights=weight)
        means = np.stack([np.bincount(inverse, weights=weight * probs[:, a], minlength=len(distinct))
                          for a in range(probs.shape[1])], axis=1) / total[:, None]  # fmt: skip
        self.table = {k.tobytes(): means[i] for i, k in enumerate(distinct)}
        self.misses = 0

    def action_probabilities(self, state, player_id=None):
        legal = state.legal_actions()
        p = self.table.get(np.asarray(state.information_state_tensor(), np.float32).tobytes())
        if p is None:
            self.misses += 1
            return {a: 1.0 / len(legal) for a in legal}
        total = sum(p[a] for a in legal)
        return {a: p[a] / total for a in legal}


def average(game, args) -> None:
    solver = make_solver(game, args)
    solver.load_checkpoint(args.checkpoint)
    table = TabularMean(game, solver.strategy_buffer)
    value = mbb(game, table)
    print(f"checkpoint (iteration {solver.iteration}): strategy memory {len(solver.strategy_buffer):,} entries, "
          f"{len(table.table):,} infosets; exact mean of the memory {value} ({table.misses:,} infosets absent: "
          f"uniform)", flush=True)  # fmt: skip
    layers = tuple(int(w) for w in args.layers.split(","))
    average = solver._average  # noqa: SLF001
    average.trainer = Trainer(make_network("mlp", *trainer_shape(solver), layers), args.learning_rate, 1.0)
    average.batch_size = args.batch_size
    for steps in (int(s) for s in args.steps.split(",")):
        average.steps = steps
        start = time.perf_counter()
        loss = solver.train_policy_network()
        print(f"average network {layers}, {steps} steps of batch {args.batch_size}, lr {args.learning_rate} "
              f"{args.schedule or 'constant'} ({time.perf_counter() - start:.1f} s, loss {loss:.4f}): "
              f"{mbb(game, solver)}", flush=True)  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("run", "refit", "average", "where"))
    parser.add_argument("--deep_cfr", default="{}", help="JSON overrides of the Deep CFR settings")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--schedule", default="", help="learning-rate schedule (cosine); default constant")
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--at", default="10,20,40", help="run: evaluate after these iterations")
    parser.add_argument("--merged", action="store_true", help="run: fit the advantage loss on merged infosets")
    parser.add_argument("--lr_decay", type=int, default=0,
                        help="run: T0 > 0 anneals the advantage networks' Adam rate as sqrt(T0 / t) from iteration T0")
    parser.add_argument("--tabular_advantage", action="store_true",
                        help="run: advantage 'networks' = the memory's per-infoset means (TableNetwork)")
    parser.add_argument("--weight_average", type=float, default=0.0,
                        help="run: BETA > 0: sigma^t from the advantage weights' moving average (WeightAverage)")
    parser.add_argument("--exact_average", action="store_true",
                        help="run: also the exact linear average of the iterates (ExactAverage)")
    parser.add_argument("--save", default="", help="run: save the solver here at the end")
    parser.add_argument("--checkpoint", default="", help="refit/average/where: the saved run")
    parser.add_argument("--layers", default="128,128")
    parser.add_argument("--steps", default="500,2000")
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--batch_size", type=int, default=2048)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    game = pyspiel.load_game(GAME)
    {"run": run, "refit": refit, "average": average, "where": where}[args.mode](game, args)


if __name__ == "__main__":
    main()
