"""Every ```python block of README.md and docs/**/*.md runs as written, and
every plot the docs show is the committed one.

The rules a docs page follows:

* The blocks of one page run in order, in one namespace of their own, with
  the working directory set to a fresh temporary folder: a later block may use
  the names an earlier block of the same page defined (a page reads top to
  bottom), nothing carries from one page to another, and nothing is written
  into the checkout.
* A block is left out only by an HTML comment on the line directly above its
  opening fence, `<!-- fragment: REASON -->`, with a non-empty REASON (why it
  cannot run here, e.g. "runs 3 minutes"); such a page shows a small runnable
  version beside it. A left-out block defines nothing for the blocks after it.
* A block marked `<!-- example: NAME -->` is run, and its output checked, by
  tests/test_docs_examples.py; it is not run a second time here, so it too
  defines nothing for the blocks after it.
* Budgets are small: each block runs in seconds, all pages in about a minute
  on two shared cores. A block that claims a number is checked by its own
  test elsewhere or by an assertion below.
"""

import ast
import glob
import hashlib
import os
import re

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))  # fmt: skip
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
MARKER = re.compile(r"^<!--\s*(fragment|example)\s*:(.*?)-->\s*$")

# docs/img/NAME.png -> the committed plot it is a copy of (byte for byte)
PLOTS = {
    "docs/img/deep_cfr_leduc_compare.png": "benchmarks/results/deep_cfr_leduc/leduc_compare.png",
    "docs/img/cfr_mix_goofspiel_6c4p2r.png": "benchmarks/results/cfr_mix/goofspiel_6c4p2r/curves.png",
    "docs/img/tabular_leduc.png": "benchmarks/results/tabular/leduc.png",
    "docs/img/endgames_subgame3_alternating.png": "benchmarks/results/endgames/subgame3_alternating.png",
    "docs/img/lossless_fhp_exploitability_vs_seconds.png": "benchmarks/results/lossless_fhp/exploitability_vs_seconds.png",
}


def blocks(page: str) -> list[tuple[int, str, str | None, str]]:
    """(line of the opening fence, code, marker kind or None, marker text) per python block."""
    text = open(os.path.join(ROOT, page), encoding="utf-8").read()
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].split("\n")  # ends with "": the fence starts a line
        line = len(before)
        marker = MARKER.match(before[-2].strip()) if len(before) > 1 else None
        kind, reason = (marker.group(1), marker.group(2).strip()) if marker else (None, "")
        found.append((line, match.group(1), kind, reason))
    return found


def test_every_page_with_python_is_collected():
    """The pages scanned include the ones that hold snippets (a moved docs
    folder would otherwise pass with nothing run)."""
    with_code = [page for page in PAGES if blocks(page)]
    assert {
        "README.md",
        "docs/index.md",
        "docs/deep_cfr.md",
        "docs/tabular.md",
        "docs/engine.md",
    } <= set(with_code)


def test_every_fragment_says_why_and_marks_a_block():
    """Every fragment marker has a reason and sits directly above a python
    block (a marker one line too high would leave nothing out)."""
    empty = [f"{page}:{line}" for page in PAGES for line, _, kind, reason in blocks(page)
             if kind is not None and not reason]  # fmt: skip
    assert not empty, f"fragment/example markers without a reason or name: {empty}"
    for page in PAGES:
        text = open(os.path.join(ROOT, page), encoding="utf-8").read()
        markers = len(re.findall(r"<!--\s*fragment\s*:", text))
        marked = sum(kind == "fragment" for _, _, kind, _ in blocks(page))
        assert markers == marked, (
            f"{page}: a fragment marker that is not directly above a ```python block"
        )


def run_page(page: str) -> tuple[dict, dict[str, list]]:
    """Runs the page's runnable blocks in order in one namespace; returns the
    namespace and the value of every top-level expression statement, by its
    source text (`ast.unparse`), in order: what the page's comments describe."""
    scope, values = {"__name__": "__docs__"}, {}
    for line, code, kind, _ in blocks(page):
        if kind is not None:
            continue
        # padded so that line numbers (tracebacks) are the page's own
        for node in ast.parse("\n" * line + code, page).body:
            if isinstance(node, ast.Expr):
                value = eval(compile(ast.Expression(node.value), page, "eval"), scope)
                values.setdefault(ast.unparse(node.value), []).append(value)
            else:
                exec(compile(ast.Module([node], type_ignores=[]), page, "exec"), scope)
    return scope, values


def _check_readme(scope, values, out):
    # OpenSpiel's evaluator and ours print the same NashConv
    theirs, ours = (float(x) for x in out.split())
    assert ours == pytest.approx(theirs, abs=1e-9) and ours < 1e-3


def _check_index(scope, values, out):  # DCFR on Leduc after 1000 iterations
    assert float(out) < 1e-3


def _check_engine(scope, values, out):  # "4.747222..., as OpenSpiel", "2.373611... = NashConv / 2"
    assert values["openspiel_cfrx.nash_conv(game, pol)"] == [pytest.approx(4.747222222, abs=1e-8)]
    assert values["openspiel_cfrx.exploitability(game, policy.UniformRandomPolicy(game))"] == [
        pytest.approx(2.373611111)
    ]


def _check_tabular(scope, values, out):  # "~5e-4 (uniform play: 4.75)", "the same number"
    """CFR+'s iterates amplify last-bit differences (RM+ resets regrets at 0): after 1,000 Leduc iterations two
    x86 machines gave 5.14e-4 and 4.94e-4 (OpenSpiel's CFR+ and ours agree to 1e-9 for ~100 iterations, then
    part), so the docs' number holds to 10%; the two evaluations of one policy agree to 1e-12 anywhere."""
    (theirs,), (ours,) = (
        values["exploitability.nash_conv(game, solver.average_policy())"],
        values["solver.nash_conv()"],
    )
    assert ours == pytest.approx(5e-4, rel=0.1) and ours == pytest.approx(theirs, abs=1e-12)


def _check_team_games(scope, values, out):
    # the encoded joint action was legal: the adversary moves next
    assert scope["state"].current_player() == scope["team"].ADVERSARY_PLAYER


def _check_cfr_mix(scope, values, out):  # "0.26 (uniform: 1.31)", "True", a resumable checkpoint
    assert values["openspiel_cfrx.nash_conv(game, solver)"] == [pytest.approx(0.26, abs=0.03)]
    assert values["grouped.settings == from_dicts.settings"] == [True]
    assert scope["solver"].iteration == 4 and os.path.exists(scope["path"])


def _check_deep_cfr(scope, values, out):  # the small run: "NashConv ~1.0" (uniform 4.75)
    assert values["openspiel_cfrx.nash_conv(game, solver)"] == [pytest.approx(1.0, abs=0.3)]
    assert values["solver.nash_conv('sd_cfr')"] == [pytest.approx(1.0, abs=0.3)]
    assert values["solver.settings.to_record()"][0]["averaging"]["average_policy"] == "sd_cfr"
    assert 0 < values["tree.nash_conv(strategy)"][0] < 300


def _check_poker_games(scope, values, out):  # "297.963" (4 x 2 FHP, uniform)
    assert values["poker_nash_conv(game, policy)"] == [pytest.approx(297.963, abs=1e-3)]
    assert len(scope["cards"]) == 2 and scope["bets"].shape == (2, 12)


def _check_poker_engine(scope, values, out):  # "297.963 chips", "0.366 chips"
    assert values["tree.nash_conv(tree.uniform)"] == [pytest.approx(297.963, abs=1e-3)]
    assert values["tree.nash_conv(solver.average_strategy)"][0] == pytest.approx(0.366, abs=1e-3)


def _check_abstraction(scope, values, out):  # "(None, 85)", "4,960", "42.3, 23.9, 1,324,797"
    assert tuple(scope["buckets"]) == (None, 85)
    assert values["abstraction.abstract_infosets(tree)"] == [4960]
    ((nash_conv, abstract, nodes),) = values[
        "(solver.nash_conv(), solver.abstract_nash_conv(), solver.nodes_touched)"
    ]
    assert (round(nash_conv, 1), round(abstract, 1), nodes) == (42.3, 23.9, 1_324_797)


CHECKS = {
    "README.md": _check_readme,
    "docs/index.md": _check_index,
    "docs/engine.md": _check_engine,
    "docs/tabular.md": _check_tabular,
    "docs/team_games.md": _check_team_games,
    "docs/cfr_mix.md": _check_cfr_mix,
    "docs/deep_cfr.md": _check_deep_cfr,
    "docs/poker_games.md": _check_poker_games,
    "docs/poker_engine.md": _check_poker_engine,
    "docs/abstraction.md": _check_abstraction,
}


@pytest.mark.parametrize(
    "page", [page for page in PAGES if any(kind is None for _, _, kind, _ in blocks(page))]
)
def test_page_snippets_run(page, tmp_path, monkeypatch, capsys):
    """The page's runnable blocks, in order, in one namespace, in a temporary
    folder (a failure names the page and its line); then the numbers the
    page's comments state beside them (CHECKS)."""
    torch.set_num_threads(1)
    monkeypatch.chdir(tmp_path)
    scope, values = run_page(page)
    if page in CHECKS:
        CHECKS[page](scope, values, capsys.readouterr().out)


def test_plots_in_the_docs_are_the_committed_ones():
    """Each docs/img plot is byte-identical to the benchmarks/results file it
    was copied from (re-copy it when the result is re-run), and every one is
    shown by some page."""
    images = sorted(
        os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "img", "*.png"))
    )
    assert images == sorted(PLOTS), (
        "docs/img and PLOTS disagree: add the mapping (or remove the file)"
    )
    text = "".join(open(os.path.join(ROOT, page), encoding="utf-8").read() for page in PAGES)

    def digest(path):
        return hashlib.sha256(open(os.path.join(ROOT, path), "rb").read()).hexdigest()

    for image, source in PLOTS.items():
        assert digest(image) == digest(source), f"{image} is not {source}: cp {source} {image}"
        assert os.path.relpath(image, "docs").replace(os.sep, "/") in text, f"no page shows {image}"
