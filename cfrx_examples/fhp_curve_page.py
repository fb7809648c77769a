"""The flop hold'em curves' outputs (`benchmarks/bench_fhp_curve.py`): the
CSV, the plots (NashConv in mbb/g against seconds and nodes touched, several
seeds as a mean and a band), the results page's tables, earlier results read
back (`--rows_from`, `--deep_cfr_from`), and the Deep CFR paper's Figure 2
statements computed from the rows (Brown et al. 2019, Section 6).
"""

from __future__ import annotations

import csv
import math
import os
import re

import numpy as np

from openspiel_cfrx.eval.report import markdown_table

CSV_FIELDS = ["algorithm", "seed", "steps", "steps_unit", "solver_seconds", "policy_seconds", "seconds",
              "nash_conv_chips", "nash_conv_mbb", "br_gain_p0", "br_gain_p1", "eval_seconds",
              "nodes_touched", "current_nash_conv_mbb", "abstract_nash_conv_mbb", "abstract_infosets",
              "load_1min"]  # fmt: skip


def write_curve_files(rows: list[dict], uniform_mbb: float, args, out: str) -> None:
    """`<out>/fhp_curve.csv` (every row) and the plots: `fhp_curve.png` (against
    seconds) and, where lines count nodes touched, `fhp_curve_nodes.png`."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "fhp_curve.csv"), "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    with_nodes = [r for r in rows if r.get("nodes_touched") or r["steps_unit"] == "policy"]
    if with_nodes:
        plot(with_nodes, uniform_mbb, os.path.join(out, "fhp_curve_nodes.png"),
             f"{args.game}\nexact NashConv vs nodes touched", x="nodes_touched")  # fmt: skip
    plot(rows, uniform_mbb, os.path.join(out, "fhp_curve.png"),
         f"{args.game}\nexact NashConv at equal compute ({args.seconds:g} s each)"
         if not args.rows_from else f"{args.game}\nexact NashConv vs each line's own seconds")  # fmt: skip


def _rows_table(rows: list[dict]) -> str:
    """Every checkpoint as a table row (with a `from` column and its sources when rows were read back)."""
    def cell(r, key, spec):
        return format(r[key], spec) if r.get(key) is not None else ""

    sources = list(dict.fromkeys(r["source"] for r in rows if r.get("source")))
    table = markdown_table(
        ["algorithm", "seed", "steps", "nodes touched", "solver s", "policy s (charged)", "x = seconds",
         "NashConv (chips)", "NashConv (mbb/g)", "in the abstraction (mbb/g)", "BR gain P0 / P1 (chips)",
         "eval s (excluded)", "load"] + (["from"] if sources else []),
        [[r["algorithm"], cell(r, "seed", "d"), f"{r['steps']:,} {r['steps_unit']}", cell(r, "nodes_touched", ","),
          cell(r, "solver_seconds", ".1f"), cell(r, "policy_seconds", ".1f"), cell(r, "seconds", ".1f"),
          cell(r, "nash_conv_chips", ".3f"), f"{r['nash_conv_mbb']:,.1f}", cell(r, "abstract_nash_conv_mbb", ",.2f"),
          f"{r['br_gain_p0']:.2f} / {r['br_gain_p1']:.2f}" if r.get("br_gain_p0") is not None else "",
          cell(r, "eval_seconds", ".1f"), cell(r, "load_1min", ".1f")] + ([f"[{sources.index(r['source']) + 1}]" if r.get("source") else "this run"]
                                            if sources else []) for r in rows],
    )  # fmt: skip
    if sources:
        table += "\n" + "".join(f"\n[{i + 1}] `{path}`" for i, path in enumerate(sources)) + "\n"
    return table


def _deep_cfr_lines(rows: list[dict]) -> str:
    """Deep CFR's checkpoints of this run: nodes touched, current iterate, memories, losses."""
    deep = [r for r in rows if r["algorithm"] == "deep_cfr" and "memory" in r]  # (not rows read from a CSV)
    return "".join(
        f"\n- deep_cfr @ {r['steps']} iterations: {r['nodes_touched']:,} nodes touched, "
        + (f"current iterate sigma^t NashConv {r['current_nash_conv_mbb']:,.1f} mbb/g (BR gains "
           f"{r['current_br_gains']}), " if "current_nash_conv_mbb" in r else "")
        + f"memories "
        f"{r['memory']}, last advantage losses {r['advantage_loss']}, policy loss "
        + ("none (sd_cfr: the kept iterates' mixture)" if r["policy_loss"] is None else f"{r['policy_loss']:.4g}")
        for r in deep
    )


def _settings_text(args) -> str:
    """The budget, checkpoints and every line's settings, as the page states them."""
    if not args.lines:
        return "Every line is drawn from the earlier results listed under the table (`--rows_from`).\n\n"
    return (
        (f"Budget {args.iterations:,} iterations (os_nfsp: episodes) of each algorithm, checkpoints at "
           if args.iterations > 0 else f"Budget {args.seconds:g} {'CPU ' if args.clock == 'cpu' else ''}s of each "
           "algorithm's own compute, checkpoints at ")
        + f"{','.join(f'{x:g}' for x in args.fractions)} of it ("
        + ("exactly" if args.iterations > 0 else "first step boundary past each")
        + f"), torch threads {args.threads}, "
        f"seeds {', '.join(map(str, args.seeds))}; algorithms run one after the other in one process.\n\n"
        f"Settings: deep_cfr `{args.deep_cfr_settings}`; os_es_mccfr {args.mccfr_step} iterations per "
        f"step; os_es_mccfr_py {args.mccfr_py_step} iterations per step"
        f"{' (checkpoints at deep_cfr nodes touched)' if args.match_nodes else ''}"
        f"{f', deep_cfr rows read from {args.deep_cfr_from}' if args.deep_cfr_from else ''}; os_nfsp {args.nfsp_step} "
        f"episodes per step, NFSP preset `{args.nfsp_preset}` (cfrx_examples/contenders.py); abstraction_* solved by "
        f"`{args.abstraction_variant}`" + (f" ({args.es_step:,} iterations per step)" if args.abstraction_variant ==
                                            "es_lmccfr" else "") + ".\n\n"
    )  # fmt: skip


def page(rows: list[dict], uniform_mbb: float, args, name: str) -> tuple[str, str]:
    """(title, body) of results page `name` (its figures in folder `name`)."""
    body = (
        f"Game `{args.game}`; uniform random policy: NashConv {uniform_mbb:,.1f} mbb/g. "
        f"{_settings_text(args)}{_rows_table(rows)}\n{_deep_cfr_lines(rows)}\n\n![curves]({name}/fhp_curve.png)\n"
        + (f"![vs nodes]({name}/fhp_curve_nodes.png)\n" if any(r.get("nodes_touched") for r in rows) else "")
    )
    figure2 = any(r["algorithm"].startswith(("lossless_", "abstraction_")) for r in rows)
    if figure2:
        body += "\n" + paper_statements(rows)
    title = ("Flop hold'em: Deep CFR's Figure 2 (card abstractions, lossless CFR, Deep CFR, NFSP), measured exactly"
             if figure2 else "Flop hold'em: Deep CFR vs ES-MCCFR vs NFSP at equal compute")  # fmt: skip
    return title, body


def plot(rows, uniform_mbb, path, title, x="seconds"):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9.5, 4.5))
    for name in dict.fromkeys(r["algorithm"] for r in rows):
        pts = sorted((r for r in rows if r["algorithm"] == name), key=lambda r: r["steps"])
        if pts[0]["steps_unit"] == "policy":  # a user's policy: its level
            ax.axhline(pts[-1]["nash_conv_mbb"], ls=":", lw=1.5, color="black", label=name.split(":")[-1])
            continue
        by_seed: dict = {}
        for r in pts:
            if r.get(x):
                by_seed.setdefault(r.get("seed", 0), []).append(r)
        if len(by_seed) == 1:
            pts = next(iter(by_seed.values()))
            ax.plot([r[x] for r in pts], [r["nash_conv_mbb"] for r in pts], "o-", label=name)
            continue
        # several seeds: the mean of each checkpoint over the seeds, and their range as a band; runs
        # checkpointed at different budgets are matched to the sparsest run by the nearest solver seconds,
        # and a run's other checkpoints are drawn as its own faint points
        runs = [runs for runs in by_seed.values()]
        sparsest = min(runs, key=len)
        matched = [[min(run, key=lambda r, at=ref: abs(r.get("solver_seconds", 0.0) - at.get("solver_seconds", 0.0)))
                    for ref in sparsest] if len(run) > len(sparsest) else run for run in runs]  # fmt: skip
        xs = np.array([[r[x] for r in run] for run in matched], dtype=float)
        ys = np.array([[r["nash_conv_mbb"] for r in run] for run in matched])
        line, = ax.plot(xs.mean(axis=0), ys.mean(axis=0), "o-", label=f"{name} ({len(runs)} seeds)")
        ax.fill_between(xs.mean(axis=0), ys.min(axis=0), ys.max(axis=0), color=line.get_color(), alpha=0.2)
        extra = [r for run, kept in zip(runs, matched, strict=True) for r in run if all(r is not k for k in kept)]
        if extra:
            ax.plot([r[x] for r in extra], [r["nash_conv_mbb"] for r in extra], "x", color=line.get_color(),
                    alpha=0.6, label=f"{name}: checkpoints of one seed")  # fmt: skip
    if uniform_mbb is not None:
        ax.axhline(uniform_mbb, color="gray", ls="--", lw=1, label="uniform random")
    ax.set_yscale("log")
    if x == "seconds":
        ax.set_xlabel("solver seconds (evaluation excluded; each line's threads and clock: see the page)")
    else:
        ax.set_xscale("log")
        ax.set_xlabel("nodes touched (histories visited: decision, chance, terminal)")
    ax.set_ylabel("NashConv (mbb/g, exact)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the axes, off the curves
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


INTEGER_COLUMNS = ("steps", "nodes_touched", "seed")
TEXT_COLUMNS = ("algorithm", "steps_unit")


def deep_cfr_rows(path: str, args) -> list[dict]:
    """deep_cfr's rows of an earlier run's fhp_curve.csv (`--deep_cfr_from`): its
    checkpoints' nodes touched are the equal-nodes targets, without re-running it."""
    if not args.match_nodes or "deep_cfr" in (n.strip() for n in args.algorithms.split(",")):
        raise SystemExit("--deep_cfr_from takes deep_cfr's rows from a CSV: use it with --match-nodes and "
                         "without deep_cfr in --algorithms")  # fmt: skip
    try:
        with open(path, encoding="utf-8") as f:
            found = [r for r in csv.DictReader(f) if r.get("algorithm") == "deep_cfr"]
    except OSError as e:
        raise SystemExit(f"--deep_cfr_from: cannot read {path!r} ({e.strerror})") from None
    if not found or not all(r.get("nodes_touched") for r in found):
        raise SystemExit(f"--deep_cfr_from: {path!r} has no deep_cfr rows with nodes_touched (a bench_fhp_curve.py "
                         "CSV of a run with deep_cfr)")  # fmt: skip
    try:
        return [{k: v if k in TEXT_COLUMNS else int(v) if k in INTEGER_COLUMNS else float(v)
                 for k, v in r.items() if v != ""} for r in found]  # fmt: skip
    except ValueError as e:
        raise SystemExit(f"--deep_cfr_from: {path!r} has a non-numeric value in a deep_cfr row ({e})") from None


def _number(text: str) -> float:
    """A results page's cell as a number ("**1,234.5**" -> 1234.5)."""
    return float(text.replace("*", "").replace(",", "").strip())


def page_rows(name: str, path: str, game) -> list[dict]:
    """The rows of line `name` from the first table of results page `path` with
    a "NashConv (mbb/g)" column: iterations, nodes touched, seconds ("a + b":
    solver + charged policy seconds), NashConv, BR gains where it has them; a
    lossless_* line without a nodes column gets the vector walks' count
    (`fhp_lines.VectorCFRLine`: two walks per iteration, the full game's histories)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise SystemExit(f"--rows_from {name}={path}: cannot read it ({e.strerror})") from None
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and "NashConv (mbb/g)" in cells:
            header, body = cells, []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                body.append([c.strip() for c in row.strip().strip("|").split("|")])
            break
    else:
        raise SystemExit(f"--rows_from {name}={path}: no table with a 'NashConv (mbb/g)' column")
    column = {c: next((j for j, h in enumerate(header) if h.startswith(c)), None)
              for c in ("iteration", "nodes touched", "seconds", "solve seconds", "NashConv (mbb/g)", "BR gain")}
    per_iteration = None
    if column["nodes touched"] is None and name.startswith("lossless_"):
        from openspiel_cfrx.poker import PublicTree

        per_iteration = 2 * PublicTree(game).nodes_per_walk(represented=True)
    big_blind = _big_blind(game)
    rows = []
    for cells in body:
        seconds = cells[column["seconds"] if column["seconds"] is not None else column["solve seconds"]].split("+")
        steps = int(_number(cells[column["iteration"]]))
        mbb = _number(cells[column["NashConv (mbb/g)"]])
        gains = cells[column["BR gain"]].split("/") if column["BR gain"] is not None else None
        rows.append({"algorithm": name, "steps": steps, "steps_unit": "iterations",
                     "solver_seconds": _number(seconds[0]),
                     "policy_seconds": _number(seconds[1]) if len(seconds) > 1 else 0.0,
                     "seconds": sum(_number(x) for x in seconds), "nash_conv_mbb": mbb,
                     "nash_conv_chips": mbb * big_blind / 1000.0,
                     "br_gain_p0": _number(gains[0]) if gains else None, "br_gain_p1": _number(gains[1]) if gains else None,
                     "nodes_touched": (int(_number(cells[column["nodes touched"]])) if per_iteration is None
                                       else steps * per_iteration), "source": path})  # fmt: skip
    return rows


def _big_blind(game) -> float:
    from openspiel_cfrx.poker import PokerRules

    return float(PokerRules.from_game(game).big_blind)


def csv_rows(path: str) -> list[dict]:
    """Every row of a CSV written by this program or bench_full_fhp_nfsp.py."""
    try:
        with open(path, encoding="utf-8") as f:
            found = list(csv.DictReader(f))
    except OSError as e:
        raise SystemExit(f"--rows_from {path}: cannot read it ({e.strerror})") from None
    if not found or "nash_conv_mbb" not in found[0] or "algorithm" not in found[0]:
        raise SystemExit(f"--rows_from {path}: not a results CSV (needs algorithm and nash_conv_mbb columns)")
    try:
        return [{k: v if k in TEXT_COLUMNS else int(v) if k in INTEGER_COLUMNS else float(v)
                 for k, v in r.items() if v not in ("", None)} | {"source": path} for r in found]  # fmt: skip
    except ValueError as e:
        raise SystemExit(f"--rows_from {path}: a non-numeric value ({e})") from None


def earlier_rows(spec: str, game) -> list[dict]:
    """`--rows_from`'s rows, in the order given."""
    rows = []
    for item in (x.strip() for x in spec.split(",")):
        if item:
            name, _, path = item.rpartition("=")
            if not name:
                rows += csv_rows(path)
            elif path.endswith(".csv"):  # a CSV's rows as line NAME (e.g. two presets of one program)
                rows += [dict(r, algorithm=name) for r in csv_rows(path)]
            else:
                rows += page_rows(name, path, game)
    return rows


def final_points(rows: list[dict]) -> dict[str, dict]:
    """Per line, its last checkpoint; with several seeds the mean of each seed's
    last NashConv and nodes touched ("seeds": how many)."""
    last: dict[str, dict] = {}
    for r in sorted(rows, key=lambda r: r["steps"]):  # an evaluation may have written its rows last-first
        last.setdefault(r["algorithm"], {})[r.get("seed", 0)] = r
    out = {}
    for name, by_seed in last.items():
        ends = list(by_seed.values())
        out[name] = dict(ends[-1], seeds=len(ends),
                         nash_conv_mbb=float(np.mean([r["nash_conv_mbb"] for r in ends])),
                         nash_conv_spread=(min(r["nash_conv_mbb"] for r in ends), max(r["nash_conv_mbb"] for r in ends)),
                         nodes_touched=(float(np.mean([r["nodes_touched"] for r in ends]))
                                        if all(r.get("nodes_touched") for r in ends) else None))  # fmt: skip
    return out


def _nodes_to_reach(points: list[dict], level: float) -> float | None:
    """Nodes touched at which a curve first gets to `level` mbb/g (log-log
    interpolation between its checkpoints; None if it never does)."""
    points = sorted((r for r in points if r.get("nodes_touched")), key=lambda r: r["nodes_touched"])
    for a, b in zip(points, points[1:], strict=False):
        if b["nash_conv_mbb"] <= level < a["nash_conv_mbb"]:
            t = (math.log(a["nash_conv_mbb"]) - math.log(level)) / (math.log(a["nash_conv_mbb"]) - math.log(b["nash_conv_mbb"]))
            return math.exp(math.log(a["nodes_touched"]) + t * (math.log(b["nodes_touched"]) - math.log(a["nodes_touched"])))
    if points and points[0]["nash_conv_mbb"] <= level:
        return float(points[0]["nodes_touched"])
    return None


def _abstraction_size(name: str) -> int | None:
    """N of line `abstraction_<N>` or `abstraction_<N>_<tag>` (None for other lines,
    perfect-recall refinements included)."""
    match = re.fullmatch(r"abstraction_(\d+)(_\w+)?", name)
    return int(match.group(1)) if match else None


PLATEAU_CHANGE = 0.10  # a line has plateaued when its last two checkpoints differ by less than 10% per doubling of nodes


def _plateau_statement(rows: list[dict], final: dict[str, dict]) -> str | None:
    """The acceptance's "full-game exploitability plateaus at a level that falls
    with the number of buckets": per size, its line with the most nodes touched
    (first seed), the change between that line's last two checkpoints."""
    longest: dict[int, dict] = {}
    for name, end in final.items():
        size = _abstraction_size(name)
        if size and end.get("nodes_touched") and end["nodes_touched"] > longest.get(size, {}).get("nodes_touched", 0):
            longest[size] = end
    if len(longest) < 2:
        return None
    shown, flat, levels = [], [], []
    for size in sorted(longest):
        name = longest[size]["algorithm"]
        seed = next(r.get("seed", 0) for r in rows if r["algorithm"] == name)
        points = sorted((r for r in rows if r["algorithm"] == name and r.get("seed", 0) == seed and r.get("nodes_touched")),
                        key=lambda r: r["nodes_touched"])  # fmt: skip
        if len(points) < 2:
            return None
        a, b = points[-2], points[-1]
        ratio = b["nash_conv_mbb"] / a["nash_conv_mbb"]
        # per doubling of nodes touched, so that checkpoint spacing does not decide it
        per_doubling = ratio ** (math.log(2.0) / math.log(b["nodes_touched"] / a["nodes_touched"])) - 1.0
        flat.append(abs(per_doubling) <= PLATEAU_CHANGE)
        levels.append(b["nash_conv_mbb"])
        shown.append(f"{name} (seed {seed}): {a['nash_conv_mbb']:,.1f} -> {b['nash_conv_mbb']:,.1f} "
                     f"({ratio - 1.0:+.1%}) from {a['nodes_touched']:.2g} to {b['nodes_touched']:.2g} nodes, "
                     f"{per_doubling:+.1%} per doubling")  # fmt: skip
    falls = levels == sorted(levels, reverse=True)
    holds = "yes" if all(flat) and falls else ("no: still falling" if falls else "no")
    return (f"| each abstraction's full-game NashConv plateaus, lower for more buckets (last two checkpoints "
            f"of each size's longest line; plateau: within {PLATEAU_CHANGE:.0%} per doubling of nodes touched) | "
            f"{'; '.join(shown)} | {holds} |")


# Brown et al. (2019), Section 6: "Deep CFR reaches an exploitability of 37 mbb/g while NFSP
# converges to 47 mbb/g" (flop hold'em, Figure 2)
PAPER_DEEP_CFR_MBB = 37.0
PAPER_NFSP_MBB = 47.0
PAPER_LEVEL_SLACK = 1.25  # a line "reaches" the paper's number when its last level is within 25% above it


def _level(r: dict) -> str:
    """A line's last NashConv as the statements print it (mbb/g; with several
    seeds their mean and range)."""
    spread = f" (seeds {r['nash_conv_spread'][0]:,.1f}-{r['nash_conv_spread'][1]:,.1f})" if r["seeds"] > 1 else ""
    return f"{r['nash_conv_mbb']:,.1f}{spread}"


def _paper_level_statements(final: dict[str, dict]) -> list[str]:
    """Section 6's two numbers, Deep CFR's 37 and NFSP's 47 mbb/g, against each
    line's last level (mean over its seeds): it reaches the paper's number when
    within PAPER_LEVEL_SLACK of it."""
    checks = [("Deep CFR", "deep_cfr", PAPER_DEEP_CFR_MBB, "")] if "deep_cfr" in final else []
    checks += [("NFSP", name, PAPER_NFSP_MBB, f" ({name})") for name in final if name.startswith("os_nfsp")]
    lines = []
    for who, name, paper, which in checks:
        mine = final[name]["nash_conv_mbb"]
        shown = "Deep CFR" if name == "deep_cfr" else name
        lines.append(f"| {who} reaches the paper's {paper:g} mbb/g (within {PAPER_LEVEL_SLACK - 1:.0%}){which} | "
                     f"{shown} {_level(final[name])} mbb/g, {mine / paper:,.1f}x the paper's | "
                     f"{'yes' if mine <= PAPER_LEVEL_SLACK * paper else 'no'} |")  # fmt: skip
    return lines


def paper_statements(rows: list[dict]) -> str:
    """The Figure 2 statements of Brown et al. (2019), Section 6, checked on this
    run's rows one by one (computed, not typed)."""
    final = final_points(rows)  # the last checkpoint of each line (mean over its seeds)
    # `abstraction_<N>`: the size's main line; `abstraction_<N>_<tag>` (e.g. a longer run drawn with
    # --rows_from NAME=FILE.csv) joins only the plateau check, which reads each size's longest line
    abstractions = sorted((r for n, r in final.items() if _abstraction_size(n) and n.count("_") == 1),
                          key=lambda r: _abstraction_size(r["algorithm"]))  # fmt: skip
    lines = ["## The paper's statements on this run", "",
             "| statement (Brown et al. 2019, Figure 2 / Section 6) | this run | holds here |", "|---|---|---|"]
    if len(abstractions) >= 2:
        levels = [r["nash_conv_mbb"] for r in abstractions]
        shown = ", ".join(f"{r['algorithm']}: {_level(r)}" for r in abstractions)
        lines.append(f"| coarser abstractions are more exploitable | last points (mbb/g) {shown} | "
                     f"{'yes' if levels == sorted(levels, reverse=True) else 'no'} |")
    plateau = _plateau_statement(rows, final)
    if plateau:
        lines.append(plateau)
    for name in (n for n in final if n.startswith("abstraction_")):
        inside = [r for r in rows if r["algorithm"] == name and r.get("abstract_nash_conv_mbb") is not None]
        if not inside:
            continue
        perfect = name.startswith("abstraction_pr_")
        seeds = list(dict.fromkeys(r.get("seed", 0) for r in inside))
        if len(seeds) > 1:  # each seed's last value
            ends = {r.get("seed", 0): r["abstract_nash_conv_mbb"] for r in inside}
            shown = "seeds' last " + ", ".join(f"{ends[k]:,.2f}" for k in seeds)
        else:  # the line's last three values, in order
            shown = " -> ".join(f"{r['abstract_nash_conv_mbb']:,.2f}" for r in inside[-3:])
        full = final[name]["nash_conv_mbb"]
        holds = ("yes" if inside[-1]["abstract_nash_conv_mbb"] <= 0.05 * full else "no") if perfect else \
            "not measurable: imperfect recall (a lower bound)"
        lines.append(f"| the abstraction solve converges inside its abstraction ({name}) | NashConv inside "
                     f"{shown} mbb/g ({'exact: perfect recall' if perfect else 'lower bound'}), full game "
                     f"{full:,.1f} | {holds} |")
    deep = final.get("deep_cfr")
    if deep and abstractions:
        big, mine = abstractions[-1], deep["nash_conv_mbb"]
        lines.append(f"| Deep CFR reaches about the level of the largest abstraction | Deep CFR {_level(deep)} vs "
                     f"{big['algorithm']} {_level(big)} mbb/g | "
                     f"{'yes' if mine <= 1.25 * big['nash_conv_mbb'] else 'no'} |")
    if deep and abstractions and deep.get("nodes_touched"):
        big = abstractions[-1]["algorithm"]
        target, have = deep["nash_conv_mbb"], deep["nodes_touched"]
        need = [_nodes_to_reach([r for r in rows if r["algorithm"] == big and r.get("seed", 0) == seed], target)
                for seed in dict.fromkeys(r.get("seed", 0) for r in rows if r["algorithm"] == big)]  # fmt: skip
        reached = [n for n in need if n]
        shown = ", ".join(f"{n / have:,.2g}x" if n else "never" for n in need)
        holds = "yes" if reached and min(reached) > have else "no" if reached else "not measured (never reached)"
        lines.append(f"| Deep CFR converges substantially faster than the largest abstraction (nodes touched) | "
                     f"{big} needs {shown} Deep CFR's {have:,.0f} nodes to reach its {target:,.1f} mbb/g "
                     f"(per seed) | {holds} |")
    lossless = [n for n in final if n.startswith("lossless_")]
    if deep and lossless:
        for name in lossless:
            target = deep["nash_conv_mbb"]
            need = _nodes_to_reach([r for r in rows if r["algorithm"] == name], target)
            have = deep.get("nodes_touched")
            ratio = f"{need / have:,.0f}x" if need and have else "not reached in this run"
            holds = "yes" if need and have and need / have >= 100 else "no" if need and have else "not measured"
            lines.append(f"| Deep CFR needs 2-3 orders of magnitude fewer nodes touched than lossless ({name}) | "
                         f"{name} needs {ratio} Deep CFR's {have or 0:,.0f} nodes to reach its {target:,.1f} mbb/g | "
                         f"{holds} |")
    nfsp = [n for n in final if n.startswith("os_nfsp")]
    if deep and nfsp:
        for name in nfsp:
            theirs, mine = final[name]["nash_conv_mbb"], deep["nash_conv_mbb"]
            nodes = (f"; nodes touched {final[name]['nodes_touched']:,.0f} vs {deep['nodes_touched']:,.0f}"
                     if final[name].get("nodes_touched") and deep.get("nodes_touched") else "")
            lines.append(f"| NFSP ends above Deep CFR | {name} {_level(final[name])} vs Deep CFR {_level(deep)} mbb/g{nodes} | "
                         f"{'yes' if theirs > mine else 'no'} |")
    lines += _paper_level_statements(final)
    return "\n".join(lines) + "\n"
