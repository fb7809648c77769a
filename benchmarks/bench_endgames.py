"""The OFTRL paper's experiment (Farina et al. 2019, Section 6), controlled:
CFR, DCFR and OFTRL-CFR on the four Libratus river/turn endgames, both update
modes, both unit conventions of the "theory" stepsize (--oftrl_units=chips
and bounded) and both readings of the paper's tuning (the theory stepsize
divided by 10, 100, 1000 as printed, or multiplied, as the earlier runs
read it), the stepsizes extended x10 past the grid's edge until the best by
final gap is interior (both units on one stepsize axis); exact saddle-point
gap at log-spaced iterations.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_endgames.py [--quick] [--plan] [--report_only]
        [--subgames=1,2,3,4] [--jobs=2] [--runs_dir=DIR]

Resumable: every finished run is one JSON file under --runs_dir (committed in
benchmarks/results/runs/endgames/, so a fresh clone regenerates the page and continues the grid)
(`cfrx_examples/oftrl_endgames.py --runs_dir`), skipped when present with the
same settings; an interrupted grid continues where it stopped. --plan prints
the runs still to do and their CPU cost (timed by a short run per subgame)
and runs nothing; --report_only writes the page from the stored runs. The
page (benchmarks/results[/quick]/endgames.md) covers subgames 1-4 whatever
--subgames runs now: runs not stored yet are "not measured yet", never
extrapolated. Quick: subgames 3 and 4, 100 iterations.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import ROOT, markdown_table, usage_error, write_result  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_bool("quick", False, "Quick tier: subgames 3-4, 100 iterations, results under results/quick/.")
flags.DEFINE_bool("plan", False, "Print the runs still to do and their cost (a short timed run per subgame); run nothing.")
flags.DEFINE_bool("report_only", False, "Write the page from the runs stored in --runs_dir; run nothing.")
flags.DEFINE_list("subgames", ["1", "2", "3", "4"], "Subgames to run now (the page covers all four).")
flags.DEFINE_integer("jobs", 2, "Runs in parallel (processes); 1 runs them in order of use, CFR and DCFR first.")
flags.DEFINE_string("runs_dir", "", "One JSON file per finished run (resumable); default "
                    "benchmarks/results/runs/endgames (committed: the page regenerates, and the grid continues, on a "
                    "fresh clone), with --quick out/endgames_quick.")
flags.DEFINE_string("output", "", "The page (default benchmarks/results[/quick]/endgames.md); its plots go to "
                    "endgames/ beside it.")

ITERATIONS, QUICK_ITERATIONS, EVALUATIONS = 1000, 100, 25
MULTIPLY, DIVIDE = (10.0, 100.0, 1000.0), (0.1, 0.01, 0.001)
READINGS = {"multiply": MULTIPLY, "divide": DIVIDE}
UNITS = ("chips", "bounded")
MODES = ("simultaneous", "alternating")
SUBGAMES = (1, 2, 3, 4)
POTS = {1: "turn + river, pot 500", 2: "turn + river, pot 4,780", 3: "river, pot 500", 4: "river, pot 3,750"}
SIGNIFICANT = 0.9  # "significantly" better: a final gap at most 0.9x the other's
NEAR = 1.1  # "near-identical": final gaps within a factor 1.1
EXAMPLE = "cfrx_examples/oftrl_endgames.py"


def runs_dir() -> str:
    path = FLAGS.runs_dir or ("out/endgames_quick" if FLAGS.quick else "benchmarks/results/runs/endgames")
    return path if os.path.isabs(path) else os.path.join(ROOT, path)


def example_args(iterations: int, subgames: list[str], jobs: int) -> list[str]:
    return [f"--subgames={','.join(subgames)}", f"--iterations={iterations}", f"--evaluations={EVALUATIONS}",
            "--oftrl_units=chips,bounded", f"--tuned_scales={','.join(f'{m:g}' for m in MULTIPLY + DIVIDE)}",
            "--extend_edges", f"--runs_dir={runs_dir()}", f"--jobs={jobs}"]  # fmt: skip


# ----------------------------------------------------------------------------- the stored runs
class Grid:
    """The stored runs of one iteration count: CFR / DCFR curves per (subgame,
    mode), OFTRL curves per (subgame, mode, units, multiple); a curve is
    {iteration: saddle-point gap in mbb/g}."""

    def __init__(self, runs_dir: str, iterations: int):
        self.iterations, self.curves, self.cpu_seconds, self.runs, self.costs = iterations, {}, 0.0, 0, {}
        for path in sorted(glob.glob(os.path.join(glob.escape(runs_dir), "*.json"))):
            try:
                with open(path, encoding="utf-8") as f:
                    record = json.load(f)
                settings = record["settings"]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if settings.get("iterations") != iterations or settings.get("data_dir") != "" or \
                    len(settings.get("evaluated_at", [])) != len(_points(iterations)):  # fmt: skip
                continue
            key = (settings["subgame"], settings["update_mode"], settings["algorithm"],
                   settings.get("units", ""), float(settings.get("multiple", 1.0)))  # fmt: skip
            self.curves[key] = {int(t): float(g) for t, g in record["curve"]}
            self.cpu_seconds += float(record.get("cpu_seconds", 0.0))
            self.runs += 1
            cost = self.costs.setdefault(settings["subgame"], {"runs": 0, "cpu": 0.0, "cfr": [], "oftrl": []})
            cost["runs"] += 1
            cost["cpu"] += float(record.get("cpu_seconds", 0.0))
            cost["oftrl" if settings["algorithm"] == "oftrl" else "cfr"].append(float(record.get("iterations_per_second", 0.0)))

    def curve(self, subgame: int, mode: str, algorithm: str, units: str = "", multiple: float = 1.0) -> dict | None:
        return self.curves.get((subgame, mode, algorithm, units, float(multiple)))

    def final(self, *key) -> float | None:
        curve = self.curve(*key)
        return None if curve is None else curve[max(curve)]

    def multiples(self, subgame: int, mode: str, units: str) -> dict[float, float]:
        """{multiple: final gap} of the stored OFTRL runs."""
        return {k[4]: c[max(c)] for k, c in self.curves.items() if k[:4] == (subgame, mode, "oftrl", units)}

    def tuned(self, subgame: int, mode: str, units: str, reading: str) -> tuple[float, dict] | None:
        """(multiple, curve) of the reading's best multiple by final gap; None until all three are stored."""
        curves = {m: self.curve(subgame, mode, "oftrl", units, m) for m in READINGS[reading]}
        if any(c is None for c in curves.values()):
            return None
        best = min(curves, key=lambda m: curves[m][max(curves[m])])
        return best, curves[best]


def _points(iterations: int) -> set[int]:
    import math

    count = EVALUATIONS
    return {max(1, round(10 ** (k * math.log10(iterations) / (count - 1)))) for k in range(count)} | {iterations}


def planned_runs() -> int:
    """The base grid per iteration count: per subgame and mode, CFR, DCFR and
    per units OFTRL theory and the six multiples (extensions come on top)."""
    return len(SUBGAMES) * len(MODES) * (2 + len(UNITS) * (1 + len(MULTIPLY) + len(DIVIDE)))


def below_from(a: dict, b: dict) -> int | None:
    """The first checkpoint from which curve `a` is below curve `b` at every
    later checkpoint (None when it is not below at the last one)."""
    start = None
    for t in sorted(set(a) & set(b)):
        if a[t] < b[t]:
            start = t if start is None else start
        else:
            start = None
    return start


def fmt(value: float) -> str:
    return f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


# ----------------------------------------------------------------------------- the statements
QUOTES = {
    "A": "In the smaller subgames 3 and 4 we find that OFTRL with the stepsize set according to our theory "
         "outperforms CFR: in subgame 4 almost immediately and significantly, in subgame 3 only after roughly 800 "
         "iterations",
    "B": "in the larger subgames 1 and 2 the OFTRL stepsize is much too conservative, and the algorithm barely "
         "starts to make progress",
    "C": "With a moderately-hand-tuned stepsize OFTRL beats CFR somewhat significantly",
    "D": "In all games DCFR performs better than OFTRL",
    "E": "In the alternating-updates setting OFTRL performs worse relative to CFR and DCFR",
    "F": "In subgame 1 OFTRL with stepsizes set according to the theory slightly outperforms CFR, but in subgame 2 "
         "they have near-identical performance",
    "G": "In subgames 3 and 4 even the manually-tuned variant performs worse than CFR",
    "H": "In the alternating setting DCFR performs significantly better than all other algorithms",
}  # fmt: skip
SWAP = {1: 3, 2: 4, 3: 1, 4: 2}  # the sentence's subgame label -> our subgame under the label swap


class Verdicts:
    """The verdict rows (statement | this run | holds here) computed from a Grid."""

    def __init__(self, grid: Grid):
        self.grid, self.rows = grid, []

    def add(self, statement: str, measured: str, holds: str) -> None:
        self.rows.append((statement, measured, holds))

    def pending(self, statement: str, what: str) -> None:
        self.add(statement, f"{what} not stored yet", "not measured yet")

    def oftrl_lines(self, subgame: int, mode: str, units: str, reading: str) -> dict[str, float] | None:
        """{line: final gap} of OFTRL theory and the reading's tuned line; None until stored."""
        theory = self.grid.final(subgame, mode, "oftrl", units, 1.0)
        tuned = self.grid.tuned(subgame, mode, units, reading)
        if theory is None or tuned is None:
            return None
        return {"theory": theory, f"tuned x{tuned[0]:g}": tuned[1][max(tuned[1])]}

    def statement_a(self) -> None:
        for units in UNITS:
            for subgame in (4, 3):
                statement = f'"{QUOTES["A"]}" (simultaneous; subgame {subgame}; {units} units; theory)'
                cfr, theory = (self.grid.curve(subgame, "simultaneous", *k) for k in (("cfr",), ("oftrl", units, 1.0)))
                if cfr is None or theory is None:
                    self.pending(statement, "CFR or OFTRL theory")
                    continue
                start, t = below_from(theory, cfr), self.grid.iterations
                ratio = theory[t] / cfr[t]
                measured = (f"theory {fmt(theory[t])} vs CFR {fmt(cfr[t])} at {t:,} (x{ratio:.2f})"
                            + (f"; below CFR from iteration {start} on" if start else "; not below CFR at the end"))  # fmt: skip
                if start is None:
                    holds = "no"
                elif (subgame == 4 and start <= 100 and ratio <= SIGNIFICANT) or (subgame == 3 and start > 100):
                    holds = "yes"
                else:
                    holds = "partly (beats CFR, not with the stated timing)"
                self.add(statement, measured, holds)

    def statement_b(self) -> None:
        for units in UNITS:
            for subgame in (1, 2):
                statement = f'"{QUOTES["B"]}" (simultaneous; subgame {subgame}; {units} units; theory)'
                cfr, theory = (self.grid.curve(subgame, "simultaneous", *k) for k in (("cfr",), ("oftrl", units, 1.0)))
                if cfr is None or theory is None:
                    self.pending(statement, "CFR or OFTRL theory")
                    continue
                t, first = self.grid.iterations, min(theory)
                measured = (f"theory {fmt(theory[first])} at iteration {first} -> {fmt(theory[t])} at {t:,}; "
                            f"CFR {fmt(cfr[t])} at {t:,} ({theory[t] / cfr[t]:.1f}x below theory)")  # fmt: skip
                if theory[t] >= theory[first] / 2:
                    holds = "yes"
                elif theory[t] >= 10 * cfr[t]:
                    holds = "partly (progresses more than 2x, but ends >= 10x above CFR)"
                else:
                    holds = "no"
                self.add(statement, measured, holds)

    def statement_c(self) -> None:
        for units in UNITS:
            for reading in READINGS:
                for subgame in (1, 2):
                    statement = f'"{QUOTES["C"]}" (simultaneous; subgame {subgame}; {units} units; {_reading(reading)})'
                    cfr, tuned = self.grid.final(subgame, "simultaneous", "cfr"), self.grid.tuned(subgame, "simultaneous", units, reading)
                    if cfr is None or tuned is None:
                        self.pending(statement, "CFR or the reading's three multiples")
                        continue
                    gap = tuned[1][max(tuned[1])]
                    measured = f"tuned (x{tuned[0]:g}) {fmt(gap)} vs CFR {fmt(cfr)} (x{gap / cfr:.2f})"
                    holds = "yes" if gap <= SIGNIFICANT * cfr else "partly (lower by < 10%)" if gap < cfr else "no"
                    self.add(statement, measured, holds)

    def statement_d(self) -> None:
        for units in UNITS:
            for reading in READINGS:
                for subgame in SUBGAMES:
                    statement = f'"{QUOTES["D"]}" (both modes; subgame {subgame}; {units} units; {_reading(reading)})'
                    parts, wins = [], 0
                    for mode in MODES:
                        dcfr, lines = self.grid.final(subgame, mode, "dcfr"), self.oftrl_lines(subgame, mode, units, reading)
                        if dcfr is None or lines is None:
                            break
                        best = min(lines, key=lines.get)
                        wins += dcfr < lines[best]
                        parts.append(f"{mode}: DCFR {fmt(dcfr)} vs OFTRL {best} {fmt(lines[best])}")
                    if len(parts) < len(MODES):
                        self.pending(statement, "DCFR or OFTRL")
                        continue
                    holds = "yes" if wins == 2 else "no" if wins == 0 else "partly (one mode)"
                    self.add(statement, "; ".join(parts), holds)

    def statement_e(self) -> None:
        for units in UNITS:
            for reading in READINGS:
                for subgame in SUBGAMES:
                    statement = f'"{QUOTES["E"]}" (subgame {subgame}; {units} units; {_reading(reading)})'
                    ratios = {}
                    for mode in MODES:
                        cfr, dcfr = self.grid.final(subgame, mode, "cfr"), self.grid.final(subgame, mode, "dcfr")
                        lines = self.oftrl_lines(subgame, mode, units, reading)
                        if cfr is None or dcfr is None or lines is None:
                            break
                        oftrl = min(lines.values())
                        ratios[mode] = (oftrl / cfr, oftrl / dcfr)
                    if len(ratios) < len(MODES):
                        self.pending(statement, "CFR, DCFR or OFTRL")
                        continue
                    (sc, sd), (ac, ad) = ratios["simultaneous"], ratios["alternating"]
                    worse = (ac > sc) + (ad > sd)
                    measured = (f"best OFTRL / CFR {sc:.2f} simultaneous -> {ac:.2f} alternating; "
                                f"/ DCFR {sd:.2f} -> {ad:.2f}")  # fmt: skip
                    holds = "yes" if worse == 2 else "no" if worse == 0 else "partly (worse relative to one of them)"
                    self.add(statement, measured, holds)

    def statement_f(self) -> None:
        for units in UNITS:
            for swapped in (False, True):
                for label, claim in ((1, "slightly outperforms"), (2, "near-identical")):
                    subgame = SWAP[label] if swapped else label
                    where = (f"subgame {subgame}, the sentence's \"subgame {label}\" under the label swap" if swapped
                             else f"subgame {subgame} as printed")  # fmt: skip
                    statement = f'"{QUOTES["F"]}" (alternating; {where}; {units} units; theory)'
                    cfr, theory = self.grid.final(subgame, "alternating", "cfr"), self.grid.final(subgame, "alternating", "oftrl", units, 1.0)
                    if cfr is None or theory is None:
                        self.pending(statement, "CFR or OFTRL theory")
                        continue
                    ratio = theory / cfr
                    measured = f"theory {fmt(theory)} vs CFR {fmt(cfr)} (x{ratio:.2f}); the sentence: {claim}"
                    if claim == "near-identical":
                        holds = "yes" if 1 / NEAR <= ratio <= NEAR else "no"
                    else:
                        holds = "yes" if 0.5 <= ratio < 1 else "partly (outperforms by more than 2x)" if ratio < 0.5 else "no"
                    self.add(statement, measured, holds)

    def statement_g(self) -> None:
        for units in UNITS:
            for reading in READINGS:
                for swapped in (False, True):
                    for label in (3, 4):
                        subgame = SWAP[label] if swapped else label
                        where = (f"subgame {subgame}, the sentence's \"subgame {label}\" under the label swap" if swapped
                                 else f"subgame {subgame} as printed")  # fmt: skip
                        statement = f'"{QUOTES["G"]}" (alternating; {where}; {units} units; {_reading(reading)})'
                        cfr, tuned = self.grid.final(subgame, "alternating", "cfr"), self.grid.tuned(subgame, "alternating", units, reading)
                        if cfr is None or tuned is None:
                            self.pending(statement, "CFR or the reading's three multiples")
                            continue
                        gap = tuned[1][max(tuned[1])]
                        self.add(statement, f"tuned (x{tuned[0]:g}) {fmt(gap)} vs CFR {fmt(cfr)} (x{gap / cfr:.2f})",
                                 "yes" if gap > cfr else "no")  # fmt: skip

    def statement_h(self) -> None:
        for units in UNITS:
            for reading in READINGS:
                for subgame in SUBGAMES:
                    statement = f'"{QUOTES["H"]}" (alternating; subgame {subgame}; {units} units; {_reading(reading)})'
                    dcfr, cfr = self.grid.final(subgame, "alternating", "dcfr"), self.grid.final(subgame, "alternating", "cfr")
                    lines = self.oftrl_lines(subgame, "alternating", units, reading)
                    if dcfr is None or cfr is None or lines is None:
                        self.pending(statement, "DCFR, CFR or OFTRL")
                        continue
                    others = {"CFR": cfr, **{f"OFTRL {k}": v for k, v in lines.items()}}
                    best = min(others, key=others.get)
                    ratio = dcfr / others[best]
                    measured = f"DCFR {fmt(dcfr)} vs the best other, {best}, {fmt(others[best])} (x{ratio:.2f})"
                    holds = "yes" if ratio <= SIGNIFICANT else "partly (lower by < 10%)" if ratio < 1 else "no"
                    self.add(statement, measured, holds)

    def all(self) -> list[tuple[str, str, str]]:
        for part in "abcdefgh":
            getattr(self, f"statement_{part}")()
        return self.rows


def _reading(reading: str) -> str:
    return {"multiply": "multiply reading: theory x10 / x100 / x1000",
            "divide": "divide reading: theory / 10 / 100 / 1000"}[reading]  # fmt: skip


# ----------------------------------------------------------------------------- the page
def grid_tables(grid: Grid) -> str:
    t = grid.iterations
    finals = []
    for subgame in SUBGAMES:
        for mode in MODES:
            cells = [f"{subgame} ({POTS[subgame]})" if mode == "simultaneous" else str(subgame), mode]
            for algorithm in ("cfr", "dcfr"):
                value = grid.final(subgame, mode, algorithm)
                cells.append("not measured yet" if value is None else fmt(value))
            for units in UNITS:
                theory = grid.final(subgame, mode, "oftrl", units, 1.0)
                cells.append("not measured yet" if theory is None else fmt(theory))
                for reading in READINGS:
                    tuned = grid.tuned(subgame, mode, units, reading)
                    cells.append("not measured yet" if tuned is None else f"{fmt(tuned[1][max(tuned[1])])} (x{tuned[0]:g})")
            finals.append(cells)
    headers = ["subgame", "updates", "CFR", "DCFR", "theory [chips]", "multiply [chips]", "divide [chips]",
               "theory [bounded]", "multiply [bounded]", "divide [bounded]"]  # fmt: skip
    scan, axis = [], []
    for subgame in SUBGAMES:
        for mode in MODES:
            cfr = grid.final(subgame, mode, "cfr")
            versus = "" if cfr is None else f" (CFR {fmt(cfr)})"
            complete = True
            for units in UNITS:
                tried = grid.multiples(subgame, mode, units)
                complete = complete and all(m in tried for m in (1.0, *MULTIPLY, *DIVIDE))
                if not tried:
                    scan.append([subgame, mode, units, "not measured yet", "", ""])
                    continue
                best = min(sorted(tried), key=tried.get)
                row = ", ".join(f"x{m:g}: {fmt(tried[m])}" for m in sorted(tried))
                scan.append([subgame, mode, units, f"x{best:g}: {fmt(tried[best])}{versus}",
                             f"x{min(tried):g} to x{max(tried):g} ({len(tried)})", row])  # fmt: skip
            axis.append(_axis_row(grid, subgame, mode, complete, versus))
    import statistics

    costs = []
    for subgame in SUBGAMES:
        cost = grid.costs.get(subgame)
        if cost is None:
            costs.append([subgame, 0, "", "", ""])
            continue
        speeds = [f"{statistics.median(cost[k]):,.1f}" if cost[k] else "-" for k in ("cfr", "oftrl")]
        costs.append([subgame, cost["runs"], f"{cost['cpu'] / 3600:.2f}", *speeds])
    return ("### Runs stored and their cost\n\n" + markdown_table(
                ["subgame", "runs stored", "CPU hours", "median iterations/s, CFR and DCFR", "median iterations/s, OFTRL"],
                costs) + "\n\nIterations/s per run as it ran (beside other jobs of the machine; not a speed benchmark).\n\n"
            f"### Final gaps (mbb/g after {t:,} iterations)\n\n"
            "multiply / divide = OFTRL tuned under that reading: the best of its three multiples by final gap "
            "(the multiple in parentheses).\n\n" + markdown_table(headers, finals)
            + "\n\n### The stepsize scan: every multiple of the theory stepsize, best by final gap\n\n"
            "The grid: theory x0.001, x0.01, x0.1, x1, x10, x100, x1000 per subgame, mode and units. The two units "
            "are one stepsize axis: OFTRL's stepsize is the units' theory scale x the multiple, and the `chips` scale "
            "is 3 max|u| P in `bounded` units (P: the sum of compatible reach pairs at the root), so `bounded` x M is "
            "the same run as `chips` x M / (3 max|u| P). The scan is extended x10 past whichever edge of that axis "
            "holds the best final gap, per subgame and mode, until the best is interior "
            "(`cfrx_examples/oftrl_endgames.py --extend_edges`, at most 12 extensions); runs of an earlier rule "
            "that extended each units' multiples on their own are kept as further points of the axis.\n\n"
            + markdown_table(["subgame", "updates", "units", "best multiple: final gap", "multiples tried",
                              "final gap per multiple"], scan)
            + "\n\n### One stepsize axis: the best stepsize of both units, in `chips` multiples\n\n"
            + markdown_table(["subgame", "updates", "`chips` scale in `bounded` units", "best stepsize: final gap", "interior",
                              "stepsizes tried (`chips` multiples)"], axis))  # fmt: skip


def chips_scale(subgame: int) -> float:
    """The `chips` theory scale in `bounded` units, 3 max|u| P (`oftrl_endgames.theory_scale`)."""
    from games.libratus_endgames import load_endgame

    if subgame not in _SCALES:
        tree = load_endgame(subgame).tree(threads=1)
        _SCALES[subgame] = 3 * tree.max_abs_utility / tree.chance[tree.root_round]
    return _SCALES[subgame]


_SCALES: dict = {}


def _axis_row(grid: Grid, subgame: int, mode: str, complete: bool, versus: str) -> list:
    """Both units' OFTRL runs of a subgame and mode on one axis, in `chips` multiples: the best, and whether it is
    interior (a smaller and a larger stepsize tried)."""
    scale = chips_scale(subgame)
    points = {}  # chips multiple -> (final gap, label)
    for units in UNITS:
        for multiple, gap in grid.multiples(subgame, mode, units).items():
            points[multiple if units == "chips" else multiple / scale] = (gap, f"{units} x{multiple:g}")
    if not points:
        return [subgame, mode, f"{scale:.3g}", "not measured yet", "", ""]
    best = min(sorted(points), key=lambda m: points[m][0])
    if not complete:
        interior = "not measured yet (base grid unfinished)"
    else:
        interior = "yes" if min(points) < best < max(points) else "no (at the edge: extension pending)"
    label = points[best][1]
    where = label if label.startswith("chips") else f"{label} = chips x{best:.3g}"
    return [subgame, mode, f"{scale:.3g}", f"{where}: {fmt(points[best][0])}{versus}", interior,
            f"x{min(points):.3g} to x{max(points):.3g} ({len(points)})"]


def rules_text() -> str:
    return f"""Rules (computed by `Verdicts` in `benchmarks/bench_endgames.py` from the final gaps at T and the
curves' checkpoints; runs not stored yet give **not measured yet**, never an extrapolation):

- A (theory beats CFR, simultaneous, subgames 3-4): **yes** when OFTRL theory is below CFR at every checkpoint from
  some iteration n on and at T, with n <= 100 and a final gap <= {SIGNIFICANT}x CFR's on subgame 4 ("almost
  immediately and significantly") and n > 100 on subgame 3 ("only after roughly 800"); **partly** when it ends below
  CFR with another timing; **no** when it does not end below CFR.
- B (theory barely progresses, subgames 1-2): **yes** when theory's final gap is at least half its gap at iteration 1
  (the uniform strategy); **partly** when it falls further but ends at least 10x above CFR; else **no**.
- C (tuned beats CFR somewhat significantly, simultaneous, subgames 1-2): **yes** when tuned's final gap is <=
  {SIGNIFICANT}x CFR's; **partly** when lower by less; **no** when not lower.
- D (DCFR better than OFTRL): OFTRL = the better of theory and the reading's tuned line; **yes** when DCFR's final
  gap is lower in both modes, **partly** in one, **no** in neither.
- E (alternating: OFTRL worse relative to CFR and DCFR): OFTRL as in D; **yes** when OFTRL/CFR and OFTRL/DCFR (final
  gaps) are both higher with alternating than with simultaneous updates, **partly** when one is, **no** when neither.
- F (alternating, theory): "slightly outperforms" **yes** when 0.5 <= theory/CFR < 1, **partly** below 0.5, **no**
  at >= 1; "near-identical" **yes** when theory/CFR is within a factor {NEAR}, else **no**.
- G (alternating: even tuned worse than CFR): **yes** when the reading's tuned final gap is above CFR's, else **no**.
- H (alternating: DCFR significantly better than all others): **yes** when DCFR's final gap is <= {SIGNIFICANT}x the
  lowest of CFR, theory and the reading's tuned line; **partly** when lower by less; **no** when not lowest.

F and G are checked twice: as printed, and under the label swap the pot sentence invites (the sentence's subgames
1, 2, 3, 4 read as our 3, 4, 1, 2). Rows name the units (chips, bounded) and the reading (multiply: the theory
stepsize x10 / x100 / x1000; divide: / 10 / 100 / 1000, the printed words); "theory" rows need no reading."""


def page(grid: Grid, command: str) -> str:
    t = grid.iterations
    rows = Verdicts(grid).all()
    # A verdict is its first words: "no" must not count "not measured yet".
    counts = {word: sum(h == word or h.startswith(word + " ") for _, _, h in rows)
              for word in ("yes", "no", "partly", "not measured")}  # fmt: skip
    base = {1.0, *MULTIPLY, *DIVIDE}
    done = sum(k[2] != "oftrl" or k[4] in base for k in grid.curves)
    planned = planned_runs()
    unfinished = [s for s in SUBGAMES if any(grid.curve(s, m, "cfr") is None or grid.curve(s, m, "dcfr") is None
                  or any(grid.curve(s, m, "oftrl", u, x) is None for u in UNITS for x in (1.0, *MULTIPLY, *DIVIDE))
                  for m in MODES)]  # fmt: skip
    state = ("the base grid is complete" if not unfinished else
             f"**a half-finished grid**: subgame{'s' if len(unfinished) > 1 else ''} "
             f"{', '.join(map(str, unfinished))} not (fully) run yet; their rows say **not measured yet**")  # fmt: skip
    statement_table = markdown_table(["statement", "this run", "holds here"], [list(r) for r in rows])
    pictures = "\n".join(f"![subgame {s}, {m}](endgames/subgame{s}_{m}.png)" for s in (4, 3) for m in MODES)
    return f"""Command: `{command}`; resume the grid with the same command (stored runs are skipped).

The OFTRL paper's experiment (Farina et al. 2019, Section 6), controlled: CFR, DCFR(1.5, 0, 2) and OFTRL-CFR on the
four Libratus endgames, both update modes, {t:,} iterations per run, exact saddle-point gap (NashConv) of the average
strategies in mbb/g at {len(_points(t))} log-spaced checkpoints; deterministic (no sampling: one run is the result).
OFTRL: the entropy regularizer, the stability schedule of eqs. 14-16 (gamma_root = kappa*, gamma_v = gamma_u /
(2 sqrt(n_u)) below a decision node, gamma_u / sqrt(n_u) below an observation node, eq. 14; kappa_j = gamma_j /
(2 sqrt(n_j) B_j), eq. 15; B_j from eq. 16) with the stability constant **kappa* = T^-1/4 = {t ** -0.25:.4f} for
T = {t:,}** (Section 3.1: kappa* = Theta(T^-1/4) gives the O(T^-3/4) residual), and the stepsize eta_j = kappa_j
(Section 5.1, for losses of dual norm <= 1/3; Theorem 1: OFTRL's stability is 3 l eta, l the largest dual norm of
a loss or prediction) on losses in one of two units, both ours to choose (docs/endgames.md): `chips` (the
unnormalised chip losses with the data's raw reach weights; inferred from an earlier stepsize scan, not from the
paper's code) and `bounded` (losses divided by their bound 3 x max utility, for which Corollary 1's guarantee holds).

Runs stored: {done} of the base grid's {planned} at {t:,} iterations, and {grid.runs - done} edge extensions;
{grid.cpu_seconds / 3600:.2f} CPU hours (the runs' own process CPU time); {state}.

## The paper's conflicting sentences (Section 6, verbatim)

- The tuned line is for subgames 1 and 2 only: "For OFTRL we use the stepsize that the theory suggests in our
  experiments on subgames 3 and 4 (labeled OFTRL theory). For subgames 1 and 2 we found that the
  theoretically-correct stepsize is much too conservative, so we also show results with a less-conservative
  parameter found through dividing the stepsize by 10, 100, and 1000, and picking the best among those (labeled
  OFTRL tuned)." The legends agree: "Subgame 2, simultaneous CFR DCFR OFTRL theory OFTRL tuned", "Subgame 4,
  simultaneous CFR DCFR OFTRL theory".
- Yet of the alternating updates: "In subgames 3 and 4 even the manually-tuned variant performs worse than CFR,
  although we suspect that it is possible to improve on this with a better choice of stepsize parameter."
- The pot sentence labels subgame 3 "Subgame 1": "Subgames 1 and 2 occur over the third and fourth betting round.
  Subgame 1 has $500 in the pot at the start of the game while Subgame 2 has $4,780. Subgames 3 and 4 occur over
  only the fourth betting round. Subgame 1 has $500 in the pot at the start of the game while Subgame 4 has $3,750."
- "dividing the stepsize by 10, 100, and 1000" makes a "much too conservative" stepsize smaller still when eta is the
  stepsize (x_t = argmin <L, x> + R(x) / eta, Section 3.2); the earlier runs multiplied eta instead. Both readings
  are run here.

{grid_tables(grid)}

{pictures}

(The plots: subgames 4 and 3, CFR, DCFR, OFTRL theory in both units and the multiply and divide readings' tuned lines
in chips units.)

## The paper's statements on this run

{rules_text()}

{counts['yes']} yes, {counts['partly']} partly, {counts['no']} no, {counts['not measured']} not measured yet.

{statement_table}
"""


def plot(grid: Grid, out_dir: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(out_dir, exist_ok=True)
    for subgame in (3, 4):
        for mode in MODES:
            lines = {"CFR": grid.curve(subgame, mode, "cfr"), "DCFR": grid.curve(subgame, mode, "dcfr"),
                     "OFTRL theory [chips]": grid.curve(subgame, mode, "oftrl", "chips", 1.0),
                     "OFTRL theory [bounded]": grid.curve(subgame, mode, "oftrl", "bounded", 1.0)}  # fmt: skip
            for reading in READINGS:
                tuned = grid.tuned(subgame, mode, "chips", reading)
                if tuned is not None:
                    lines[f"OFTRL {reading} x{tuned[0]:g} [chips]"] = tuned[1]
            lines = {k: v for k, v in lines.items() if v is not None}
            if not lines:
                continue
            fig, ax = plt.subplots(figsize=(5.5, 4))
            for label, curve in lines.items():
                ax.loglog(sorted(curve), [curve[t] for t in sorted(curve)], label=label)
            ax.set_xlabel("iterations")
            ax.set_ylabel("saddle point gap (mbb/g)")
            ax.set_title(f"Subgame {subgame}, {mode}")
            ax.legend(fontsize=7)
            fig.tight_layout()
            fig.savefig(os.path.join(out_dir, f"subgame{subgame}_{mode}.png"), dpi=100)
            plt.close(fig)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments {argv[1:]}; flags only (--helpfull)")
    if FLAGS.jobs < 1:
        usage_error(f"--jobs must be >= 1, got {FLAGS.jobs}")
    subgames = ["3", "4"] if FLAGS.quick else FLAGS.subgames
    if not subgames or any(s not in ("1", "2", "3", "4") for s in subgames):
        usage_error(f"--subgames must list 1-4, got {','.join(subgames)}")
    iterations = QUICK_ITERATIONS if FLAGS.quick else ITERATIONS
    env = {**os.environ, "PYTHONPATH": ROOT}
    if not FLAGS.report_only:
        with tempfile.TemporaryDirectory() as tmp:
            command = [sys.executable, os.path.join(ROOT, EXAMPLE), *example_args(iterations, subgames, FLAGS.jobs),
                       f"--output_dir={tmp}", *(["--plan"] if FLAGS.plan else [])]  # fmt: skip
            print("$", " ".join(command[1:]), flush=True)
            subprocess.run(command, check=True, cwd=ROOT, env=env)
        if FLAGS.plan:
            return
    grid = Grid(runs_dir(), iterations)
    output = FLAGS.output or os.path.join(ROOT, "benchmarks", "results", *(["quick"] if FLAGS.quick else []), "endgames.md")
    shown = " ".join(a for a in sys.argv[1:] if not a.startswith(("--report_only", "--subgames", "--jobs", "--output")))
    command = f"PYTHONPATH=. .venv/bin/python benchmarks/bench_endgames.py {shown}".strip()
    write_result(output, "OFTRL-CFR on the Libratus endgames: Section 6, controlled",
                 page(grid, command), header_command=command)  # fmt: skip
    plot(grid, os.path.join(os.path.dirname(os.path.abspath(output)), "endgames"))  # after the header's git check
    print(f"{grid.runs} runs stored at {iterations} iterations; {time.strftime('%H:%M')}")


if __name__ == "__main__":
    app.run(main)
