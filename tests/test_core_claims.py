"""Every common claim the course corrects reaches a class on the core path (issue 31): a **Common claim** box that is
not tagged ``deep-dive``, whose correction quotes a number that a core-path cell printed. A deep dive may argue the
claim at length, but a class that skips the deep dives still meets the claim, its correction and the evidence.

How a claim is recognised: the quoted text right after ``**Common claim:**`` (its first words, compared loosely, so a
deep dive may phrase the quote a little differently from the core box)."""

import difflib
import math
import re

import nbformat
import pytest

from course_lib.paths import NOTEBOOKS_DIR
from tools import quoted_numbers
from tools.sections import DEEP

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
MARK = re.compile(r"\*\*Common claim:?\*\*:?\s*>?\s*[\"“]?(?P<quote>.{10,160}?)(?:[\"”]|$)", re.S | re.M)
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)*")
REFERENCE = re.compile(r"(?:[Ss]ections?|§|[Dd]eep dives?|[Nn]otebooks?|[Cc]ells?|[Ee]xercises?|[Ww]eeks?)\s*\d+")
SIMILAR = 0.6  # difflib ratio of two quotes' first 60 characters, normalised, above which they are the same claim


def _normal(quote: str) -> str:
    quote = re.sub(r"\]\([^)]*\)|[\[\]*_`>\n]", " ", quote)
    return re.sub(r"\s+", " ", quote).strip().lower()[:60]


def _deep(cell) -> bool:
    return DEEP in cell.get("metadata", {}).get("tags", [])


def claims(nb) -> list[tuple[int, bool, str, str]]:
    """(cell index, in a deep dive, normalised quote, the box's text after the quote) for every box of ``nb``."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for m in MARK.finditer(cell.source):
            rest = cell.source[m.end() :].split("**Common claim", 1)[0]
            found.append((i, _deep(cell), _normal(m["quote"]), rest))
    return found


def _same(a: str, b: str) -> bool:
    return difflib.SequenceMatcher(None, a, b).ratio() >= SIMILAR


def core_printed(nb) -> list[float]:
    core = nbformat.from_dict({**nb, "cells": [c for c in nb.cells if not _deep(c)]})
    return quoted_numbers.printed_numbers(core)


def _printed(number: str, printed: list[float]) -> bool:
    number = number.replace(",", "") if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+", number) else number.split(",")[0]
    if "." in number:
        return any(math.isfinite(v) and quoted_numbers._rounds_to(v, number.lstrip("-")) for v in printed)
    return any(v == float(number) for v in printed)


def _plain(text: str) -> str:
    """``text`` without link targets, section references, and the sub- and superscripts and commands of its maths
    (``$d_k$`` and ``$10^{20}$`` quote no printed number, ``$(98, 400)$`` does)."""
    text = re.sub(r"\]\([^)]*\)", " ", text)
    text = re.sub(r"\$[^$]*\$", lambda m: re.sub(r"[_^](?:\{[^}]*\}|\\?\w)|\\[a-zA-Z]+", " ", m[0]), text)
    text = quoted_numbers.NOT_A_QUANTITY.sub(" ", text)
    return REFERENCE.sub(" ", text)  # "section 6", "notebook 03", "deep dive 2": places, not printed evidence


def problems(nb, elsewhere: tuple[str, ...] = ()) -> list[str]:
    """What keeps ``nb``'s claims off the core path; ``elsewhere``: the quotes of core boxes in the other notebooks
    (a claim corrected on the core path of notebook 03 need not be corrected again on 06's)."""
    found = claims(nb)
    printed = core_printed(nb)
    core = [q for _, d, q, _ in found if not d] + list(elsewhere)
    out = []
    for i, deep, quote, _ in found:
        if deep and not any(_same(quote, q) for q in core):
            out.append(f"cell {i}: the claim {quote!r} is corrected only in a deep dive")
    for i, deep, quote, rest in found:
        if deep:
            continue
        numbers = NUMBER.findall(_plain(rest))
        missing = [n for n in numbers if "." in n and not _printed(n, printed)]
        if missing:
            out.append(f"cell {i}: the correction of {quote!r} quotes {missing}, printed only in a deep dive or never")
        elif not any(_printed(n, printed) for n in numbers):
            out.append(f"cell {i}: the correction of {quote!r} quotes no number a core-path cell printed {numbers[:6]}")
    return out


@pytest.fixture(scope="module")
def core_quotes() -> dict[str, list[str]]:
    return {p.name: [q for _, d, q, _ in claims(nbformat.read(p, as_version=4)) if not d] for p in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_common_claim_reaches_the_core_path_with_a_printed_number(path, core_quotes):
    elsewhere = tuple(q for name, quotes in core_quotes.items() if name != path.name for q in quotes)
    found = problems(nbformat.read(path, as_version=4), elsewhere)
    assert not found, f"{path.name}:\n" + "\n".join(found)


def _cell(kind, text, deep=False, output=None):
    cell = nbformat.v4.new_markdown_cell(text) if kind == "md" else nbformat.v4.new_code_cell("print()")
    if deep:
        cell.metadata["tags"] = [DEEP]
    if output is not None:
        cell.outputs = [nbformat.v4.new_output("stream", text=output)]
    return cell


def test_the_checker_flags_deep_only_claims_and_corrections_without_core_evidence():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _cell("code", "", output="ratio 3.82 after 40 steps\n"),
        _cell("code", "", deep=True, output="0.4344 0.2661\n"),
        _cell("md", '> **Common claim:** "the ratio of two weights is 11." It is 3.82 (above).'),
        _cell("md", '> **Common claim:** "The ratio of two weights is 11". The deep dive shows 0.4344.', deep=True),
        _cell("md", '> **Common claim:** "heads stabilise training". They do not; see the deep dive.', deep=True),
        _cell("md", '**Common claim:** "a cache costs accuracy." It changes nothing: 0.4344 from the deep dive.'),
        _cell("md", '**Common claim:** "tokens are words." No evidence (see section 40 and notebook 3).'),
    ]
    found = problems(nb)
    assert [f.split(":")[0] for f in found] == ["cell 4", "cell 5", "cell 6"], found
    assert "only in a deep dive" in found[0] and "['0.4344']" in found[1] and "no number" in found[2], found
    assert [f.split(":")[0] for f in problems(nb, ("heads stabilise training",))] == ["cell 5", "cell 6"]
