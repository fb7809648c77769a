"""Every measured number a docs page quotes is in the results page it cites.

The rule, per paragraph (blank-line separated) of docs/*.md:

* A paragraph cites a results page when it names the page's file name, the
  `*.md` basename of a page under benchmarks/results/ (not the untracked quick
  tier, benchmarks/results/quick/), by path (`benchmarks/results/tabular.md`),
  by link or by bare name (`tabular.md`). A name that points at a docs page
  instead is not a citation: `docs/NAME.md`, or a relative link `](NAME.md`
  (links inside docs/ resolve to docs pages).
* Every decimal number of a citing paragraph (`7.022e-03`, `0.458`, `2,794.2`)
  occurs verbatim in one of the results pages it cites, or in
  docs/decisions.md when the paragraph names `decisions.md` (the record of
  one-off measurements).
* A block that a program copies from a results page, between
  `<!-- begin: the tables of benchmarks/results/NAME.md ... -->` and
  `<!-- end: ... -->`, cites NAME.md in each of its paragraphs.
* A paragraph whose numbers are not measurements (a paper's values, settings)
  is skipped when an HTML comment `<!-- numbers: REASON -->`, with a non-empty
  REASON, stands on its own line directly above it.
"""

from __future__ import annotations

import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*\.\d+(?:e-?\d+)?")
NAME = re.compile(r"([\w-]+\.md)")
SKIP = re.compile(r"^<!--\s*numbers\s*:\s*\S.*?-->\s*$")
BLOCK_BEGIN = re.compile(r"<!--\s*begin:[^>]*?benchmarks/results/([\w/-]+\.md)")
BLOCK_END = re.compile(r"<!--\s*end:")
PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def results_pages() -> dict[str, str]:
    """Basename -> text of every results page (benchmarks/results/**/*.md, except quick/)."""
    pattern = os.path.join(ROOT, "benchmarks", "results", "**", "*.md")
    paths = sorted(os.path.relpath(p, ROOT) for p in glob.glob(pattern, recursive=True))
    return {os.path.basename(p): read(p) for p in paths if "/quick/" not in p.replace(os.sep, "/")}


def cited(paragraph: str, pages: dict[str, str]) -> set[str]:
    """The results pages a paragraph names (not counting names that point at docs pages)."""
    names = set()
    for match in NAME.finditer(paragraph):
        before = paragraph[: match.start()]
        if before.endswith(("docs/", "](", "](./")):
            continue
        names.add(match.group(1))
    return names & set(pages)


def check(doc: str, text: str, pages: dict[str, str], decisions: str) -> list[str]:
    """One line per number of `text` (the docs page `doc`) that its cited pages do not hold."""
    failures = []
    block = None  # the results page a program-copied block reproduces
    for paragraph in PARAGRAPH_BREAK.split(text):
        begin = BLOCK_BEGIN.search(paragraph)
        if begin:
            block = os.path.basename(begin.group(1))
        if BLOCK_END.search(paragraph):
            block = None
        if SKIP.match(paragraph.strip().split("\n")[0]):
            continue
        names = cited(paragraph, pages) | ({block} & set(pages) if block else set())
        if not names:
            continue
        sources = "".join(pages[n] for n in sorted(names))
        if "decisions.md" in paragraph:
            sources += decisions
        for number in NUMBER.findall(paragraph):
            if number not in sources:
                failures.append(f"{doc}: {number} not in {sorted(names)} :: {paragraph[:80]!r}")
    return failures


def docs_pages() -> list[str]:
    return sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))


def test_every_quoted_number_is_in_a_cited_results_page():
    pages, decisions = results_pages(), read("docs/decisions.md")
    failures = [line for doc in docs_pages() for line in check(doc, read(doc), pages, decisions)]
    assert not failures, "numbers the cited results pages do not hold:\n" + "\n".join(failures)


def test_an_altered_number_is_reported():
    """The check can fail: docs/tabular.md with its first quoted number
    changed in the last digit is reported, and only that number; a
    `<!-- numbers: ... -->` line above the paragraph skips it."""
    pages, decisions = results_pages(), read("docs/decisions.md")
    doc = "docs/tabular.md"
    text = read(doc)
    assert check(doc, text, pages, decisions) == []
    paragraph = next(p for p in PARAGRAPH_BREAK.split(text) if cited(p, pages) and NUMBER.search(p))
    match = NUMBER.search(paragraph)
    number = match.group(0)
    mantissa, e, exponent = number.partition("e")
    altered = mantissa[:-1] + str((int(mantissa[-1]) + 1) % 10) + e + exponent
    sources = "".join(pages[n] for n in cited(paragraph, pages))
    assert number in sources and altered not in sources, (number, altered)
    changed = paragraph[: match.start()] + altered + paragraph[match.end() :]
    failures = check(doc, text.replace(paragraph, changed, 1), pages, decisions)
    assert len(failures) == 1 and failures[0].startswith(f"{doc}: {altered} not in "), failures
    marked = text.replace(paragraph, "<!-- numbers: a test of the marker -->\n" + changed, 1)
    assert check(doc, marked, pages, decisions) == []
