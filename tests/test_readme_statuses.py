"""The README's status words for the Deep CFR and CFR-MIX papers and OFTRL-CFR's Section 6
follow from the verdict rows their results pages compute ("## The paper's statements on this run":
statement | this run | holds here), not from hand-written judgement.

The rule (stated in the README above the table): a row's status is
- "reproduced" when every deciding statement holds ("yes");
- "not reproduced" when none holds and at least one is "no";
- "partly" when some hold ("yes", or "partly") and others do not;
- "inconclusive" when none is decided (inconclusive, not measurable, pending).
"""

from __future__ import annotations

import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIG2 = "benchmarks/results/full_fhp_figure2.md"
FIGURES = "benchmarks/results/deep_cfr_figures.md"
HULH = "benchmarks/results/hulh_head_to_head.md"
RATES = "benchmarks/results/tabular_rates.md"
CFR_MIX = "benchmarks/results/cfr_mix.md"
CFR_MIX_FIG3 = "benchmarks/results/cfr_mix_figure3.md"
CFR_MIX_FIG4 = "benchmarks/results/cfr_mix_figure4.md"
ENDGAMES = "benchmarks/results/endgames.md"

# README claim (the start of its "claim" cell) -> the results page and the statements (starts of the page's
# statement cells) that decide its status.
DECIDED_BY = {
    "Figure 2: Deep CFR's exploitability": (FIG2, ("Deep CFR reaches the paper's 37 mbb/g",)),
    "Figure 2: NFSP on full flop hold'em": (FIG2, ("NFSP reaches the paper's 47 mbb/g",)),
    "Figure 2: card abstractions": (FIG2, ("coarser abstractions are more exploitable",
                                           "each abstraction's full-game NashConv plateaus",
                                           "Deep CFR reaches about the level of the largest abstraction",
                                           "Deep CFR converges substantially faster than the largest abstraction",
                                           "Deep CFR needs 2-3 orders of magnitude fewer nodes")),
    "Figure 3: traversals, SGD steps and model size": (FIGURES, ("fewer traversals", "fewer SGD steps",
                                                                 "a larger model", "... up to a certain model size")),
    "Figure 4: ablations": (FIGURES, ("without linear weighting", "fine-tuning one network",
                                      "a uniform strategy when no regret is positive", "a sliding-window memory")),
    "Table 1: Deep CFR beats NFSP head-to-head": (HULH, ("Deep CFR beats NFSP head-to-head (20 min",)),
    "Sections 5-7: OFTRL-CFR's average strategy converges at O(T^-3/4)": (
        RATES, ("OFTRL-CFR converges at least as fast as T^-3/4",)),
    # CFR-MIX (Li et al. 2021): the paper-instance grid's two pages, one README row per paper statement
    "Figure 3: the mixing layer beats the other algorithms on 6-round": (
        CFR_MIX_FIG3, ('"the algorithms with mixing layer outperform the others in 6C4P6R game"',)),
    "Figure 3: joint-action methods cannot scale; only CFR-MIX": (CFR_MIX_FIG3, ('"In 10C6P and 13C6P games',)),
    "Figure 4(a-c): the mixing layer beats the other algorithms on NEST": (
        CFR_MIX_FIG4, ('"As shown in Fig. 4(a-c)', '"In Fig. 4(c)')),
    "Figure 4(a): independent Double Neural CFR": (CFR_MIX_FIG4, ('"Individual Double Neural CFR cannot converge',)),
    "Figure 4(b): parameter sharing beats no sharing": (CFR_MIX_FIG4, ('"CFR-MIX with parameter sharing',)),
    "Figure 4(d): with 8 pursuers": (CFR_MIX_FIG4, ('"CFR-MIX get a better strategy than random',)),
    # Section 6 (endgames.md): every row of a statement decides, i.e. both units (chips, bounded), both readings of
    # "dividing the stepsize" (multiply, divide), every subgame, and for the alternating sentences both labellings
    "Section 6: with the theory stepsize OFTRL beats CFR": (ENDGAMES, ('"In the smaller subgames 3 and 4',)),
    "Section 6: the theory stepsize is much too conservative": (ENDGAMES, ('"in the larger subgames 1 and 2',)),
    "Section 6: with a hand-tuned stepsize OFTRL beats CFR": (
        ENDGAMES, ('"With a moderately-hand-tuned stepsize OFTRL beats CFR',)),
    "Section 6: with alternating updates even tuned OFTRL loses to CFR": (
        ENDGAMES, ('"In subgames 3 and 4 even the manually-tuned variant performs worse than CFR"',)),
    "Section 6: DCFR beats OFTRL": (ENDGAMES, ('"In all games DCFR performs better than OFTRL"',
                                               '"In the alternating setting DCFR performs significantly better')),
}  # fmt: skip


def read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def deep_cfr_rows(paper: str | None = "Deep CFR", text: str | None = None) -> list[tuple[str, str]]:
    """(claim, status) of one paper's rows of the README's "Reproducing the papers" table (None: every row)."""
    text = read("README.md") if text is None else text
    start = text.index("## Reproducing the papers")
    section = text[start:text.index("\n## ", start + 1)]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 6 and cells[0] != "paper" and (paper is None or cells[0] == paper):
            rows.append((cells[1], cells[4]))
    return rows


def page_verdicts(path: str) -> list[tuple[str, str]]:
    """(statement, holds here) of a results page's statements table."""
    text = read(path)
    start = text.index("## The paper's statements on this run")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and not set(cells[0]) <= {"-"} and not cells[0].startswith("statement"):
            rows.append((cells[0], cells[2]))
    return rows


def verdict_class(holds: str) -> str:
    word = re.match(r"[a-z]+", holds.lower())
    return {"yes": "yes", "no": "no", "partly": "partly"}.get(word.group(0) if word else "", "open")


def status_from(verdicts: list[str]) -> str:
    kinds = {verdict_class(v) for v in verdicts}
    if kinds == {"yes"}:
        return "reproduced"
    if "yes" not in kinds and "partly" not in kinds:
        return "not reproduced" if "no" in kinds else "inconclusive"
    return "partly"


def test_the_rule():
    assert status_from(["yes", "yes"]) == "reproduced"
    assert status_from(["no", "no (the opposite: lower)"]) == "not reproduced"
    assert status_from(["no", "inconclusive (1 seed: no interval)"]) == "not reproduced"
    assert status_from(["yes", "no: still falling"]) == "partly"
    assert status_from(["partly (higher, by 17%, not ~50%)"]) == "partly"
    assert status_from(["yes", "pending (runs not finished)"]) == "partly"
    assert status_from(["pending (runs not finished)", "not measurable at this budget"]) == "inconclusive"


def test_every_deep_cfr_paper_row_is_decided_by_its_page():
    rows = deep_cfr_rows()
    paper_rows = [(claim, status) for claim, status in rows if not status.startswith("our measurement")
                  and "`openspiel_cfrx." not in claim]  # fmt: skip
    assert len(paper_rows) >= 5
    undecided = [claim for claim, _ in paper_rows if not any(claim.startswith(k) for k in DECIDED_BY)]
    assert not undecided, f"README Deep CFR rows whose status no page decides: {undecided}"


def test_every_oftrl_section_6_row_is_decided_by_its_page():
    rows = [(claim, status) for claim, status in deep_cfr_rows("OFTRL-CFR") if claim.startswith("Section 6")]
    assert len(rows) >= 5
    undecided = [claim for claim, _ in rows if not any(claim.startswith(k) for k in DECIDED_BY)]
    assert not undecided, f"README OFTRL-CFR Section 6 rows whose status no page decides: {undecided}"


def status_problems(readme: str) -> tuple[list[str], int]:
    """(README rows whose status word differs from their page's verdicts, rows checked)."""
    problems, checked = [], 0
    for claim, status in deep_cfr_rows(None, readme):
        key = next((k for k in DECIDED_BY if claim.startswith(k)), None)
        if key is None:
            continue
        path, starts = DECIDED_BY[key]
        verdicts = [holds for statement, holds in page_verdicts(path) if statement.startswith(starts)]
        found = {s for s in starts if any(st.startswith(s) for st, _ in page_verdicts(path))}
        if found != set(starts):
            problems.append(f"{claim!r}: {path} has no statement starting {sorted(set(starts) - found)}")
            continue
        expected = status_from(verdicts)
        checked += 1
        word = re.match(r"(not reproduced|reproduced|partly|inconclusive)\b", status)
        if not word or word.group(1) != expected:
            problems.append(f"{claim!r}: README says {status[:40]!r}..., {path}'s verdicts {verdicts} give "
                            f"{expected!r}")  # fmt: skip
    return problems, checked


def test_readme_status_words_equal_the_pages_verdicts():
    problems, checked = status_problems(read("README.md"))
    assert checked == len(DECIDED_BY), "a DECIDED_BY claim matches no README row"
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("row, named", [("| Table 1: Deep CFR beats NFSP", "Table 1"),
                                        ("| Section 6: with the theory stepsize OFTRL beats CFR", "theory stepsize")])
def test_an_edited_status_word_fails(row, named):
    """The check fails on a copy of the README whose row (status "partly") says "reproduced"."""
    readme = read("README.md")
    line = next(x for x in readme.splitlines() if row in x)
    edited = readme.replace(line, line.replace("| partly (", "| reproduced (", 1))
    assert edited != readme
    problems, _ = status_problems(edited)
    assert len(problems) == 1 and named in problems[0] and "'partly'" in problems[0]


def test_a_recorded_pages_statements_are_what_its_program_computes(tmp_path):
    """hulh_head_to_head.md is recorded by hand; its statements section is computed from its runs' table."""
    import shutil
    import subprocess
    import sys

    copy = tmp_path / "page.md"
    shutil.copy(os.path.join(ROOT, HULH), copy)
    text = copy.read_text(encoding="utf-8")
    start = text.index("## The paper's statements on this run")
    copy.write_text(text[:start] + text[text.index("## Reading"):], encoding="utf-8")  # the section removed
    run = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench_hulh_head_to_head.py"),
                          f"--statements_from={copy}"], capture_output=True, text=True, timeout=120, cwd=ROOT)  # fmt: skip
    assert run.returncode == 0, run.stderr
    recomputed = copy.read_text(encoding="utf-8").replace(str(copy), HULH)
    assert recomputed == text


def test_every_cfr_mix_paper_row_is_decided_by_its_page():
    rows = [(claim, status) for claim, status in deep_cfr_rows("CFR-MIX") if not status.startswith("our measurement")]
    assert len(rows) >= 6  # Figure 3's two statements, Figure 4's four
    undecided = [claim for claim, _ in rows if not any(claim.startswith(k) for k in DECIDED_BY)]
    assert not undecided, f"README CFR-MIX rows whose status no page decides: {undecided}"


def test_the_cfr_mix_statements_are_computed_from_the_page_s_own_tables():
    """cfr_mix.md's statements table is what `bench_cfr_mix.py --statements_from` computes from its tables."""
    import sys

    sys.path.insert(0, ROOT)
    from benchmarks.bench_cfr_mix import statement_rows
    from benchmarks.common import markdown_table

    text = read(CFR_MIX)
    assert markdown_table(["statement: instance", "ours", "holds here"], statement_rows(text)) in text


VS_OPENSPIEL = "benchmarks/results/vs_openspiel.md"


def harness_problems(readme: str) -> list[str]:
    """The "Against OpenSpiel's own tools" row of the equal-budget harness quotes each statement of its page
    ("## Statements on this run": statement | this run | holds here) as "statement: holds here"."""
    text = read(VS_OPENSPIEL)
    table = text[text.index("## Statements on this run"):].split("\n## ")[0]
    statements = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.splitlines()
                  if line.startswith("|") and not line.startswith(("| statement", "|---"))]  # fmt: skip
    row = next((x for x in readme.splitlines() if x.startswith("|") and "bench_vs_openspiel.py" in x), None)
    if row is None or not statements:
        return ["no README row cites bench_vs_openspiel.py, or its page has no statements"]
    return [f"README's harness row does not say {s!r}: {holds!r}" for s, _, holds in statements
            if f"{s}: {holds}" not in row]  # fmt: skip


def test_the_harness_row_quotes_its_pages_statements():
    problems = harness_problems(read("README.md"))
    assert not problems, "\n".join(problems)


def test_an_edited_harness_verdict_fails():
    readme = read("README.md")
    line = next(x for x in readme.splitlines() if "bench_vs_openspiel.py" in x)
    word = re.search(r": (yes|no|partly|undecided) \(", line)
    assert word, line
    other = "no" if word.group(1) != "no" else "yes"
    edited = readme.replace(line, line[: word.start(1)] + other + line[word.end(1):], 1)
    problems = harness_problems(edited)
    assert len(problems) == 1 and "does not say" in problems[0]
