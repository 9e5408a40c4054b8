"""Notebook hygiene that strict nbval cannot see on its own (see shared/NBVAL_NOTES.md).

Strict nbval silently skips a code cell stored without an execution count, so a notebook committed without
outputs would "pass" while checking nothing. These tests fail instead.
"""

import json
import re

import pytest

from course_lib.paths import NOTEBOOKS_DIR, ROOT

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
IDS = [nb.name for nb in NOTEBOOKS]


def code_cells(nb):
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    return [c for c in cells if c["cell_type"] == "code" and "".join(c["source"]).strip()]


def test_there_are_notebooks():
    assert NOTEBOOKS, f"no notebooks found in {NOTEBOOKS_DIR}"
    assert NOTEBOOKS[0].name == "00_start_here.ipynb"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=IDS)
def test_every_code_cell_was_executed_in_order(nb):
    counts = [c["execution_count"] for c in code_cells(nb)]
    assert None not in counts, f"{nb.name}: {counts.count(None)} code cell(s) were never executed"
    assert counts == list(range(1, len(counts) + 1)), (
        f"{nb.name}: execution counts {counts} are not 1..N: re-run it top to bottom in a fresh kernel (make execute)"
    )


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=IDS)
def test_no_error_outputs_and_some_checks(nb):
    cells = code_cells(nb)
    errors = [i for i, c in enumerate(cells) for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors, f"{nb.name}: error output stored in code cell(s) {errors}"
    sources = ["".join(c["source"]) for c in cells]
    assert any("assert" in s for s in sources), f"{nb.name} has no check cell (assert / assert_close)"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=IDS)
def test_nbval_markers_are_exact(nb):
    """`# NBVAL_IGNORE_OUTPUT extra words` silently disables the marker; only the bare marker line is allowed."""
    for cell in code_cells(nb):
        for line in "".join(cell["source"]).splitlines():
            if "NBVAL_" in line:
                assert re.fullmatch(r"# NBVAL_[A-Z_]+", line.strip()), f"{nb.name}: malformed marker {line!r}"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=IDS)
def test_notebook_conventions(nb):
    text = nb.read_text(encoding="utf-8")
    data = json.loads(text)
    assert data["metadata"]["kernelspec"]["name"] == "python3", f"{nb.name}: kernel must be python3"
    markdown = "\n".join("".join(c["source"]) for c in data["cells"] if c["cell_type"] == "markdown")
    for heading in ("Learning objectives", "Prerequisites", "Summary", "Further reading"):
        assert heading.lower() in markdown.lower(), f"{nb.name}: no '{heading}' section"
    assert "/work/" not in text and "/home/" not in text, f"{nb.name}: an absolute path leaked into the outputs"


def test_sanitize_file_is_well_formed():
    lines = (ROOT / "tests" / "nbval_sanitize.cfg").read_text(encoding="ascii").splitlines()
    assert len(lines) % 2 == 0
    for regex, replace in zip(lines[::2], lines[1::2]):
        assert regex.startswith("regex: ") and regex == regex.rstrip(), regex
        assert replace.startswith("replace: "), replace
        re.compile(regex[len("regex: ") :])


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=IDS)
def test_relative_links_point_at_pages_of_the_book(nb):
    """A relative Markdown link must name a notebook or a Markdown page that exists (with an optional #anchor): those
    are what JupyterLab opens and what the book (`make book`) turns into pages. A link to a source file, such as
    ../course_lib/kernels.py, works in JupyterLab but is a broken link in the book (name it in `code` instead)."""
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", markdown):
        if re.match(r"[a-z]+:|#", target):  # https:, mailto:, or an anchor in this notebook
            continue
        path = (nb.parent / target.split("#", 1)[0]).resolve()
        if path.suffix not in (".ipynb", ".md") or not path.is_file():
            bad.append(target)
    assert not bad, f"{nb.name}: relative links the book cannot follow: {sorted(set(bad))}"


def prints_text(cell) -> bool:
    """True for a code cell whose stored outputs hold text that strict nbval compares (a stream, or a text result that
    is not just the repr beside a figure's image, which nbval does not compare)."""
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            return True
        data = out.get("data", {})
        if "image/png" not in data and any(k in data for k in ("text/plain", "text/html", "text/latex")):
            return True
    return False


def output_ignored(cell) -> bool:
    source = "".join(cell["source"])
    tags = cell.get("metadata", {}).get("tags", [])
    return "# NBVAL_IGNORE_OUTPUT" in source.splitlines() or "nbval-ignore-output" in tags


def test_most_printed_outputs_are_compared():
    """Portability must not be bought by switching comparisons off: at least 90 % of the code cells that print text
    stay strictly compared, across the course (issue 16)."""
    cells = [c for nb in NOTEBOOKS for c in code_cells(nb) if prints_text(c)]
    ignored = [c for c in cells if output_ignored(c)]
    assert len(cells) > 100, f"only {len(cells)} cells print text: are the notebooks executed?"
    assert len(ignored) <= 0.10 * len(cells), f"{len(ignored)} of {len(cells)} printing cells are not compared (> 10 %)"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=IDS)
def test_every_uncompared_cell_still_checks_its_claim(nb):
    """A cell whose printed digits are not compared (timings, device names, digits that move between CPUs) asserts
    what it claims, so a wrong result still fails on every machine."""
    unchecked = [i for i, c in enumerate(code_cells(nb)) if output_ignored(c) and "assert" not in "".join(c["source"])]
    assert not unchecked, f"{nb.name}: code cell(s) {unchecked} ignore their output and assert nothing"


def test_heat_maps_that_share_one_colour_bar_share_one_scale():
    """A figure that draws one colour bar for several heat maps (``colorbar=h == 3``) gives them one range (``vmax``):
    cl.plot_attention's default scales each panel to its own largest weight, which the one bar, drawn for the last
    panel, then misdescribes (06 and 11 did), and the slides copy that bar to every panel (tools/figure_panels.py)."""
    import ast

    found = []
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code" or "plot_attention" not in "".join(cell["source"]):
                continue
            for node in ast.walk(ast.parse(re.sub(r"(?m)^\s*[%!].*$", "", "".join(cell["source"])))):
                words = {k.arg: k.value for k in getattr(node, "keywords", [])}
                name = getattr(getattr(node, "func", None), "attr", getattr(getattr(node, "func", None), "id", ""))
                if name == "plot_attention" and "colorbar" in words and not isinstance(words["colorbar"], ast.Constant):
                    found.append((path.name, "vmax" in words))
    assert found and all(shared for _, shared in found), found
