"""The benchmark suite: one program per headline claim, run in a quick tier
(`make bench`: every program at a reduced budget, <= 30 min on 2 cores,
results under benchmarks/results/quick/) or at the committed settings
(`make bench-full`: hours; rewrites benchmarks/results/<name>.md).

    PYTHONPATH=. .venv/bin/python benchmarks/suite.py --tier=quick [--only=tabular,deep_cfr_leduc]

Each program writes its results file itself, with the generated header
(`benchmarks.common.generated_header`: date, CPU, cores, load at start and
end, versions, commit, exact command). The programs run one after the other
(never two timings at once); the suite prints each one's wall-clock seconds
and the machine's load before it starts, and warns when the load is above 1.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import flags  # noqa: E402

from benchmarks.common import parse_flags, usage_error  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUICK = "benchmarks/results/quick"
FULL = "benchmarks/results"

# name (the results page) -> (program, quick-tier arguments or None (not in the quick tier: the same
# program's quick run covers it), committed-settings arguments)
PROGRAMS = {
    "tabular": ("bench_tabular.py",
                ["--games=leduc_poker", "--iterations=100", "--speed_seconds=3", f"--output_dir={QUICK}"],
                [f"--output_dir={FULL}"]),
    # the OFTRL paper's rate statements: log-log slopes of NashConv on Kuhn, Leduc, 4x2 flop hold'em and Libratus
    # endgame 4 (the full tier: 24 CPU minutes on one core, tabular_rates.md)
    "tabular_rates": ("bench_tabular.py",
                      ["--rates", "--rates_iterations=3000,3000,1000,300", "--rates_extra_scales=",
                       f"--output_dir={QUICK}"],
                      ["--rates", f"--output_dir={FULL}"]),
    "exploitability_engine": ("bench_exploitability.py",
                              ["--repeat=1", f"--output={QUICK}/exploitability_engine.md"],
                              [f"--output={FULL}/exploitability_engine.md"]),
    "deep_cfr_leduc": ("bench_deep_cfr.py",
                       ["--mode=throughput,compare", "--seconds=60", "--eval_every_seconds=20", f"--output_dir={QUICK}"],
                       ["--mode=throughput,compare", "--seconds=600", "--eval_every_seconds=50",
                        f"--output_dir={FULL}"]),
    "vs_openspiel": ("bench_vs_openspiel.py", ["--quick"], ["--clock=cpu"]),  # full: CPU-second budgets (shared cores)
    "poker_engine": ("bench_poker_engine.py", ["--noevery_board", "--network_game=flop_holdem(num_ranks=4,num_suits=2)",
                      f"--output={QUICK}/poker_engine.md"],
                     [f"--output={FULL}/poker_engine.md"]),
    "lossless_fhp": ("bench_lossless_fhp.py", ["--quick"], []),
    "fhp_curve": ("bench_fhp_curve.py",
                  ["--preset=fhp_5x2", "--deep_cfr={\"num_traversals\": 1500, \"policy_network_train_steps\": 500}",
                   "--algorithms=deep_cfr,os_es_mccfr", "--seconds=60", "--fractions=0.5,1",
                   f"--out_dir={QUICK}"],
                  ["--preset=fhp_5x2", "--algorithms=deep_cfr,os_es_mccfr", "--seconds=900",
                   "--fractions=0.3334,0.6,1", f"--out_dir={FULL}"]),
    "fhp_figure2": ("bench_fhp_curve.py",
                    ["--preset=fhp_5x2", "--deep_cfr={\"num_traversals\": 1500, \"policy_network_train_steps\": 500}",
                     "--algorithms=lossless_lcfr,abstraction_1000,abstraction_10000,deep_cfr,os_nfsp",
                     "--nfsp_preset=fhp_tuned", "--seconds=20", "--fractions=0.5,1", "--page=fhp_figure2",
                     f"--out_dir={QUICK}"],
                    ["--preset=fhp_5x2", "--algorithms=lossless_lcfr,lossless_cfr+,abstraction_1000,abstraction_3000,"
                     "abstraction_10000,deep_cfr,os_nfsp", "--nfsp_preset=fhp_tuned", "--seconds=120",
                     "--fractions=0.02,0.05,0.1,0.25,0.5,1", "--page=fhp_figure2", f"--out_dir={FULL}"]),
    # Figure 2 on 52-card flop hold'em (full tier only): the k-means abstractions of 40,000 and 3.6M clusters
    # and their perfect-recall refinements solved by external-sampling Linear MCCFR, 10 minutes per line and
    # seed; drawn beside the committed Deep CFR run (full_fhp.md, seed 0) and its seeds 1-2
    # (full_fhp_deep_cfr_seeds), lossless CFR+ (lossless_fhp.md), the tuned NFSP (full_fhp_nfsp_tuned),
    # NFSP with Deep CFR's network (full_fhp_nfsp_symmetric_seed0-2), the long 3.6M line and lossless Linear
    # CFR (full_fhp_abstraction_long, full_fhp_lossless_lcfr); those must run first. About 2.5 hours, plus
    # 2.3 hours for the Deep CFR seeds, 0.6 hours per NFSP seed and 1.2 hours for the last two.
    "full_fhp_nfsp_tuned": ("bench_full_fhp_nfsp.py", None,
                            ["--nfsp_preset=fhp_full_tuned", "--seconds=1800", "--fractions=0.25,1",
                             "--out_dir=out/bench-full/full_fhp_nfsp_tuned",
                             "--output=out/bench-full/full_fhp_nfsp_tuned/nfsp_tuned.md"]),
    **{f"full_fhp_nfsp_symmetric_seed{k}": (
        "bench_full_fhp_nfsp.py", None,
        ["--nfsp_preset=fhp_full_symmetric", "--seconds=1800", "--clock=cpu", "--fractions=0.25,1", f"--seed={k}",
         f"--out_dir=out/bench-full/full_fhp_nfsp_symmetric_seed{k}",
         f"--output=out/bench-full/full_fhp_nfsp_symmetric_seed{k}/nfsp.md"]) for k in range(3)},
    "full_fhp_deep_cfr_seeds": ("bench_fhp_curve.py", None,
                                ["--preset=fhp_full", "--deep_cfr={\"workers\": {\"num_workers\": 2}}", "--algorithms=deep_cfr",
                                 "--seeds=1,2", "--seconds=3600", "--fractions=0.25,0.5,1", "--evaluator=engine",
                                 "--page=full_fhp_deep_cfr_seeds", "--out_dir=out/bench-full"]),
    # the 3.6M abstraction's plateau: seed 0 for 480M iterations (5.2x the 600-s line; about an hour on a core),
    # and lossless Linear CFR for 24 iterations (about 5 minutes on 2 threads), both drawn in full_fhp_figure2
    "full_fhp_abstraction_long": ("bench_fhp_curve.py", None,
                                  ["--game=flop_holdem", "--evaluator=engine", "--abstraction_variant=es_lmccfr",
                                   "--algorithms=abstraction_3600000", "--seed=0", "--iterations=480000000",
                                   "--fractions=0.2,0.4,0.7,1", "--abstract_nash_conv=last",
                                   "--checkpoint=out/bench-full/full_fhp_abstraction_long/ckpt",
                                   "--page=full_fhp_abstraction_long", "--out_dir=out/bench-full"]),
    "full_fhp_lossless_lcfr": ("bench_fhp_curve.py", None,
                               ["--game=flop_holdem", "--evaluator=engine", "--algorithms=lossless_lcfr",
                                "--iterations=24", "--fractions=0.125,0.25,0.5,1",
                                "--page=full_fhp_lossless_lcfr", "--out_dir=out/bench-full"]),
    "full_fhp_figure2": ("bench_fhp_curve.py", None,
                         ["--game=flop_holdem", "--evaluator=engine", "--abstraction_variant=es_lmccfr",
                          "--algorithms=abstraction_40000,abstraction_3600000,abstraction_pr_40000,"
                          "abstraction_pr_3600000", "--seeds=0,1,2", "--seconds=600",
                          "--fractions=0.01,0.03,0.1,0.3,1", "--abstract_nash_conv=last",
                          "--rows_from=deep_cfr=benchmarks/results/full_fhp.md,"
                          "lossless_cfr+=benchmarks/results/lossless_fhp.md,"
                          "out/bench-full/full_fhp_deep_cfr_seeds/fhp_curve.csv,"
                          "abstraction_3600000_long=out/bench-full/full_fhp_abstraction_long/fhp_curve.csv,"
                          "out/bench-full/full_fhp_lossless_lcfr/fhp_curve.csv,"
                          "out/bench-full/full_fhp_nfsp_tuned/nfsp.csv,"
                          + ",".join(f"os_nfsp_symmetric=out/bench-full/full_fhp_nfsp_symmetric_seed{k}/nfsp.csv"
                                     for k in range(3)),
                          "--page=full_fhp_figure2", f"--out_dir={FULL}"]),
    "full_fhp": ("bench_fhp_curve.py", None,
                 ["--preset=fhp_full", "--deep_cfr={\"workers\": {\"num_workers\": 2}}", "--algorithms=deep_cfr", "--seconds=3600",
                  "--fractions=0.03,0.1,0.25,0.5,0.75,1", "--evaluator=engine", f"--out_dir={FULL}"]),
    "full_fhp_nfsp": ("bench_full_fhp_nfsp.py",
                      ["--game=flop_holdem(num_ranks=5,num_suits=2)", "--seconds=30", "--out_dir=out/bench/full_fhp_nfsp",
                       f"--output={QUICK}/full_fhp_nfsp.md"],
                      ["--seconds=3600", "--out_dir=out/bench-full/full_fhp_nfsp", f"--output={FULL}/full_fhp_nfsp.md"]),
    "nfsp_sweep": ("sweep_nfsp_fhp.py", ["--quick", "--out_dir=out/bench/nfsp_sweep", f"--output={QUICK}/nfsp_sweep.md"],
                   ["--configs=leduc_defaults,hs,hs_chips,hs_eta0.5,hs_rl0.01,hs_sl0.02,hs_replay20k,hs_target300,hs_256,"
                    "hs_adam", "--top=2", "--out_dir=out/bench-full/nfsp_sweep",
                    f"--output={FULL}/nfsp_sweep.md"]),
    "hulh_head_to_head": ("bench_hulh_head_to_head.py",
                          ["--deep-seconds=30", "--nfsp-seconds=30", "--deals=200", "--lbr-deals=10",
                           "--lbr-completions=10", f"--out={QUICK}/hulh_head_to_head.md"],
                          ["--lbr-deals=200", f"--out={FULL}/hulh_head_to_head.md"]),
    "cfr_mix": ("bench_cfr_mix.py", ["--quick", "--parts=goofspiel_3c2p2r", f"--out={QUICK}"], [f"--out={FULL}"]),
    # the paper's Figures 3 and 4 on its instances, 3 seeds, resumable from benchmarks/results/runs/cfr_mix/
    # (full tier: ~5 and ~5 CPU hours, `--plan` prints what is left)
    "cfr_mix_figure3": ("bench_cfr_mix_paper.py", None, ["--figure=3"]),
    "cfr_mix_figure4": ("bench_cfr_mix_paper.py",
                        ["--figure=4", "--instances=nest_3x3_2", "--budget_factor=0.1", "--seeds=0,1",
                         "--records=out/cfr_mix_paper_quick", f"--output={QUICK}/cfr_mix_figure4.md"],
                        ["--figure=4"]),
    "endgames": ("bench_endgames.py", ["--quick"], []),
    "distributed": ("bench_distributed.py",
                    ["--workloads=leduc", "--iterations=1", f"--output={QUICK}/distributed.md"],
                    ["--iterations=5", f"--output={FULL}/distributed.md"]),
    "poker_network_step": ("bench_poker_network_step.py",
                           ["--dims=96", "--repeats=1", "--steps=2", f"--output={QUICK}/poker_network_step.md"],
                           [f"--output={FULL}/poker_network_step.md"]),
    "paper_iteration": ("bench_paper_iteration.py",
                        ["--presets=paper_fhp", "--steps=1", f"--output={QUICK}/paper_iteration.md"],
                        [f"--output={FULL}/paper_iteration.md"]),
    "deep_cfr_ledger": ("bench_deep_cfr_ledger.py", ["--quick", f"--output={QUICK}/deep_cfr_ledger.md"],
                        [f"--output={FULL}/deep_cfr_ledger.md"]),
    "deep_cfr_figures": ("bench_deep_cfr_ledger.py", ["--grid=figures", "--quick", f"--output={QUICK}/deep_cfr_figures.md"],
                         ["--grid=figures", f"--output={FULL}/deep_cfr_figures.md"]),
    "careless_user": ("sweep_careless_user.py", ["--quick", f"--output={QUICK}/careless_user.md"],
                      [f"--output={FULL}/careless_user.md"]),
}  # fmt: skip

FLAGS = flags.FlagValues()
flags.DEFINE_enum("tier", "quick", ["quick", "full"], "quick: reduced budgets (results/quick/); full: the committed "
                  "settings (results/)", flag_values=FLAGS)  # fmt: skip
flags.DEFINE_string("only", "", f"run only these, comma-separated, by name: {', '.join(PROGRAMS)}", flag_values=FLAGS)
flags.DEFINE_bool("dry_run", False, "print the commands without running them", flag_values=FLAGS)
flags.DEFINE_alias("dry-run", "dry_run", flag_values=FLAGS)


def parse_args(argv=None):
    """--tier, --only and --dry_run, checked before any program runs: a bad
    value is one line (`error: ...; see --help`, exit status 2)."""
    args = parse_flags(FLAGS, argv, __doc__.split("\n\n")[0])
    args.only = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in args.only if n not in PROGRAMS]
    if unknown:
        usage_error(f"unknown --only {', '.join(unknown)}; choose from {', '.join(PROGRAMS)}")
    if args.tier == "quick":
        full_only = [n for n in args.only if PROGRAMS[n][1] is None]
        if full_only:
            usage_error(f"--only {', '.join(full_only)}: no quick tier (the quick run of the same program covers "
                        "it); run it with --tier=full")  # fmt: skip
    return args


def command(name: str, tier: str) -> list[str]:
    program, quick, full = PROGRAMS[name]
    return [sys.executable, os.path.join("benchmarks", program), *(quick if tier == "quick" else full)]


def main(argv=None):
    args = parse_args(argv)
    names = args.only or [n for n in PROGRAMS if args.tier == "full" or PROGRAMS[n][1] is not None]
    os.makedirs(os.path.join(ROOT, QUICK), exist_ok=True)
    env = {**os.environ, "PYTHONPATH": ROOT}
    failed, start = [], time.perf_counter()
    for i, name in enumerate(names, 1):
        cmd = command(name, args.tier)
        load = os.getloadavg()[0]
        print(f"[{i}/{len(names)}] {name}: load {load:.2f}{' (above 1: timings will be noisy)' if load > 1 else ''}"
              f"\n$ {' '.join(cmd[1:])}", flush=True)  # fmt: skip
        if args.dry_run:
            continue
        t0 = time.perf_counter()
        code = subprocess.run(cmd, cwd=ROOT, env=env, check=False).returncode
        print(f"[{i}/{len(names)}] {name}: {'ok' if code == 0 else f'FAILED (exit {code})'} in "
              f"{time.perf_counter() - t0:.0f} s", flush=True)  # fmt: skip
        if code:
            failed.append(name)
    print(f"suite ({args.tier}): {len(names) - len(failed)}/{len(names)} programs ok in "
          f"{(time.perf_counter() - start) / 60:.1f} min" + (f"; failed: {', '.join(failed)}" if failed else ""))
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
