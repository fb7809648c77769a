"""Random-playout speed of flop_holdem / hulh against raw universal_poker.

The Deep CFR paper's games (Brown et al. 2019, Appendix A) are registered in
`games/poker.py` by translating their rules into a universal_poker limit
gamedef. This benchmark plays uniformly random hands (chance and player
actions alike) on our registered game and on `universal_poker` loaded directly
with the same gamedef, alternating the two in short timed slices so load on a
shared machine hits both equally, and reports steps (applied actions) per
second. Extra rows add the per-decision work Deep CFR traversals do: OpenSpiel's
flat `information_state_tensor`, and our Appendix C structured encoding.

With `--openspiel_br_game NAME --openspiel_br_cap_gb 6` it also runs
OpenSpiel's own exact best response (`pyspiel.nash_conv` of the uniform policy,
C++ TabularBestResponse) on NAME in a child process whose address space is
capped, and reports how it ended, its wall time and its peak memory.

Usage:
  .venv/bin/python benchmarks/bench_poker_games.py [--seconds 2] [--rounds 5] \
      [--openspiel_br_game "flop_holdem(num_ranks=4,num_suits=2)"] \
      [--out benchmarks/results/poker_games.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import time

import numpy as np
import pyspiel

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import games  # noqa: E402,F401  (registers flop_holdem, hulh)
from games import poker  # noqa: E402
from games.poker_encoding import PokerEncoder  # noqa: E402


def playout_slice(game, seconds: float, rng: random.Random, per_decision=None) -> float:
    """Plays random hands for about `seconds`; returns applied actions per second."""
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(50):  # hands between clock reads
            state = game.new_initial_state()
            while not state.is_terminal():
                if per_decision is not None and not state.is_chance_node():
                    per_decision(state)
                state.apply_action(rng.choice(state.legal_actions()))
                steps += 1
    return steps / (time.perf_counter() - start)


def measure(name: str, seconds: float, rounds: int, seed: int) -> list[dict]:
    ours = pyspiel.load_game(name)
    raw = pyspiel.load_game("universal_poker", poker.limit_holdem_spec(ours).universal_poker_params())
    encoder = PokerEncoder(ours)
    tensor = lambda state: state.information_state_tensor()  # noqa: E731
    # (workload, per-decision work on ours, per-decision work on raw)
    workloads = [
        ("playout", None, None),
        ("playout + information_state_tensor", tensor, tensor),
        ("playout + Appendix C encoding (raw: tensor)", encoder.encode, tensor),
    ]
    rows = []
    for workload, ours_work, raw_work in workloads:
        rng = random.Random(seed)
        samples = {"raw": [], "ours": []}
        for _ in range(rounds):
            samples["raw"].append(playout_slice(raw, seconds / 2, rng, raw_work))
            samples["ours"].append(playout_slice(ours, seconds / 2, rng, ours_work))
        raw_rate = statistics.median(samples["raw"])
        our_rate = statistics.median(samples["ours"])
        rows.append({"game": name, "workload": workload, "raw": raw_rate, "ours": our_rate,
                     "ratio": our_rate / raw_rate})
    return rows


_BR_CHILD = """
import resource, sys
cap = int(float(sys.argv[2]) * 2**30)
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
sys.path.insert(0, sys.argv[3])
import pyspiel, games
game = pyspiel.load_game(sys.argv[1])
print("nash_conv", pyspiel.nash_conv(game, pyspiel.UniformRandomPolicy(game)), flush=True)
"""


def openspiel_best_response(name: str, cap_gb: float, timeout_s: float) -> dict:
    """Runs OpenSpiel's C++ exact best response under an address-space cap."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", _BR_CHILD, name, str(cap_gb), repo],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = start + timeout_s
    status = rusage = None
    while status is None:
        pid, wait_status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            status, rusage = wait_status, usage
        elif time.perf_counter() > deadline:
            child.kill()
            _, status, rusage = os.wait4(child.pid, 0)
        else:
            time.sleep(0.2)
    seconds = time.perf_counter() - start
    output = child.stdout.read().strip().splitlines()
    if os.WIFSIGNALED(status):
        outcome = f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
        if seconds > timeout_s:
            outcome += f" (timeout {timeout_s:.0f} s)"
    else:
        outcome = f"exit {os.WEXITSTATUS(status)}"
    return {"game": name, "cap_gb": cap_gb, "outcome": outcome, "seconds": seconds,
            "peak_rss_mb": rusage.ru_maxrss / 1024, "last_output": output[-1] if output else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per (workload, round)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating slices per workload")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--games", default="flop_holdem,hulh")
    parser.add_argument("--out", default="", help="markdown file to write the table to")
    parser.add_argument("--openspiel_br_game", default="",
                        help="also run OpenSpiel's C++ best response on this game")
    parser.add_argument("--openspiel_br_cap_gb", type=float, default=6.0)
    parser.add_argument("--openspiel_br_timeout", type=float, default=540.0)
    args = parser.parse_args()

    rows = []
    for name in [n for n in args.games.split(",") if n]:
        rows.extend(measure(name, args.seconds, args.rounds, args.seed))

    header = "| game | workload | raw universal_poker steps/s | ours steps/s | ours / raw |"
    lines = [header, "|---|---|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {row['game']} | {row['workload']} | {row['raw']:,.0f} | "
                     f"{row['ours']:,.0f} | {row['ratio']:.2f} |")
    table = "\n".join(lines) if rows else ""
    print(table)
    br_section = ""
    if args.openspiel_br_game:
        br = openspiel_best_response(args.openspiel_br_game, args.openspiel_br_cap_gb,
                                     args.openspiel_br_timeout)
        br_section = (
            "\n## OpenSpiel's own exact best response\n\n"
            "`pyspiel.nash_conv(game, pyspiel.UniformRandomPolicy(game))` (C++ "
            "TabularBestResponse) in a child process with `RLIMIT_AS` = "
            f"{br['cap_gb']:g} GiB:\n\n"
            "| game | outcome | wall s | peak RSS MB | last output |\n|---|---|---:|---:|---|\n"
            f"| {br['game']} | {br['outcome']} | {br['seconds']:.0f} | "
            f"{br['peak_rss_mb']:.0f} | {br['last_output'][:120]} |\n"
        )
        print(br_section)
    if args.out:
        import open_spiel  # noqa: PLC0415

        cpu = "unknown"
        if os.path.exists("/proc/cpuinfo"):
            for line in open("/proc/cpuinfo", encoding="utf-8"):
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        command = "python benchmarks/bench_poker_games.py " + " ".join(sys.argv[1:])
        with open(args.out, "w", encoding="utf-8") as out:
            out.write(
                "# flop_holdem / hulh random-playout speed vs raw universal_poker\n\n"
                f"* machine: {platform.machine()}, {cpu}, {os.cpu_count()} cores "
                "(shared with other jobs while measuring)\n"
                f"* python {platform.python_version()}, open_spiel "
                f"{getattr(open_spiel, '__version__', '2.0.2')}, numpy {np.__version__}\n"
                f"* command: `{command}`\n"
                "* steps = applied actions (chance deals included) of uniformly random "
                "hands; median of alternating timed slices. `ours` = "
                "`pyspiel.load_game(name)`, `raw` = `pyspiel.load_game(\"universal_poker\", "
                "same gamedef)`; the extra workloads call the encoding at every "
                "decision node (in the Appendix C row, raw computes OpenSpiel's flat "
                "tensor instead, for reference).\n\n"
                f"{table}\n{br_section}"
            )


if __name__ == "__main__":
    main()
