"""tools.deck, tools.slide_text and tools.slide_figures: what a projected slide keeps of a notebook's cells."""

import base64
import io
import json

import nbformat
import numpy as np
import pytest

from course_lib.paths import NOTEBOOKS_DIR
from tools import build_book, deck, sections, slide_figures, slide_text

BADGE = '<span class="section-badge core">● core · 5 min</span>'
LONG = (
    "Self-attention gives every token all three roles at once, and this sentence goes on and on about it. "
    "A second sentence that a reader needs and a slide does not, with many more words than a slide can hold "
    "when it is projected in a lecture hall for students at the back of the room to read."
)


def cell(kind, source, slide_type, tags=()):
    make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    c = make(source)
    c.metadata["slideshow"] = {"slide_type": slide_type}
    c.metadata["tags"] = list(tags)
    return c


def shaped(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nbformat.from_dict(deck.shape(nb))["cells"]


def test_a_long_paragraph_keeps_its_first_sentence_and_the_notes_keep_all():
    cells = shaped(cell("markdown", f"## 1. Roles\n{BADGE}\n\n{LONG}\n\n$$a = b$$", "slide"))
    slide, notes = cells
    assert slide.source.startswith("## 1. Roles") and "section-badge" not in slide.source
    assert "all three roles at once" in slide.source and "second sentence" not in slide.source
    assert "$$a = b$$" in slide.source, "formulas stay on the slide"
    assert notes.metadata["slideshow"]["slide_type"] == "notes" and LONG in notes.source
    assert slide_text.words(slide.source) <= slide_text.BUDGET + 2


def test_a_short_slide_is_shown_whole_without_notes():
    cells = shaped(cell("markdown", "**Step 1.** $E[s] = 0$ by linearity.", "subslide"))
    assert len(cells) == 1 and cells[0].source == "**Step 1.** $E[s] = 0$ by linearity."


def test_a_heading_only_summary_takes_the_bullets_of_its_notes():
    bullets = "\n".join(f"- Point {k}: {LONG}" for k in range(8))
    cells = shaped(cell("markdown", f"## Summary\n{BADGE}", "slide"), cell("markdown", bullets, "notes"))
    summary = cells[0].source
    assert [line[:2] for line in summary.splitlines()[2:]] == ["- "] * deck.MAX_ITEMS, summary
    assert "Point 0" in summary and "Point 7" not in summary
    assert all(slide_text.words(line) <= slide_text.ITEM_WORDS[1] + 2 for line in summary.splitlines()[2:])
    assert cells[1].source == bullets, "the notes keep every bullet"


@pytest.mark.parametrize(
    "text, limit, expected",
    [
        ("One. Two three.", 10, "One."),
        ("**Setting.** Scores $s = (s_1, \\dots, s_n)$, normaliser $Z$. More.", 12, None),
        ("a b c d e f (g h i j k l) m", 8, "a b c d e f …"),
    ],
)
def test_shorten_never_cuts_a_formula_or_leaves_a_parenthesis_open(text, limit, expected):
    out = slide_text.shorten(text, limit)
    if expected:
        assert out == expected
    assert out.count("$") % 2 == 0 and out.count("(") == out.count(")")
    assert "**Setting.** Scores" in out or not text.startswith("**Setting")


def test_code_loses_test_and_grading_markers():
    source = "# NBVAL_IGNORE_OUTPUT\nx = 1\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION\nprint(x + y)"
    assert deck.clean_code(source) == "x = 1\ny = 2\nprint(x + y)"


def test_wordy_code_loses_comments_and_checks_and_its_output_moves_to_the_next_slide():
    source = "\n".join(f"value_{k} = compute(data, k, k + 1)  # what step {k} of the method does" for k in range(12))
    source += "\nassert value_0 == value_0\nprint(value_7)"
    c = cell("code", source, "fragment")
    c.outputs = [nbformat.v4.new_output("stream", text="".join(f"line {k} of many words here\n" for k in range(30)))]
    cells = shaped(cell("markdown", "## Code", "slide"), c)
    kinds = [(x.cell_type, x.metadata["slideshow"]["slide_type"]) for x in cells]
    assert kinds == [("markdown", "slide"), ("code", "subslide"), ("markdown", "notes"), ("code", "subslide")]
    code, notes, output = cells[1], cells[2], cells[3]
    assert "#" not in code.source and "assert" not in code.source and code.outputs == []
    assert source in notes.source, "the full code is in the notes"
    assert deck.OUTPUT_ONLY in output.metadata["tags"]
    assert deck.code_words(output.outputs[0]["text"]) <= deck.SLIDE_WORDS
    assert output.outputs[0]["text"].endswith("…\n")


def panels_png(n, title=False):
    """A white image with n dark panels side by side (and a title across them)."""
    from PIL import Image

    pixels = np.full((300, 420 * n), 255, dtype=np.uint8)
    for k in range(n):
        pixels[60:280, 420 * k + 20 : 420 * k + 390] = 0
    if title:
        pixels[5:25, 100 : 420 * n - 100] = 0
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("n, title", [(1, False), (3, False), (3, True)])
def test_a_wide_figure_is_cut_at_the_gaps_between_its_panels(n, title):
    from PIL import Image

    pieces = slide_figures.panels(panels_png(n, title))
    assert len(pieces) == n
    sizes = [Image.open(io.BytesIO(p)).size for p in pieces]
    assert sum(w for w, _ in sizes) == 420 * n
    if n > 1:
        assert all(300 <= w <= 560 for w, _ in sizes), sizes
        assert sizes[0][1] == (300 - 30 if title else 300) or sizes[0][1] < 300, "a spanning title is cut off"


def test_each_panel_of_a_figure_gets_a_slide():
    c = cell("code", "plot()", "subslide", tags=[deck.OUTPUT_ONLY])
    png = base64.b64encode(panels_png(3)).decode()
    c.outputs = [nbformat.v4.new_output("display_data", data={"image/png": png})]
    cells = shaped(c)
    assert [x.metadata["slideshow"]["slide_type"] for x in cells] == ["subslide"] * 3
    assert all(len(x.outputs) == 1 and "image/png" in x.outputs[0]["data"] for x in cells)


def test_every_deck_is_shaped_within_the_word_rules():
    """Markdown and code words as tools.deck counts them: the browser test measures what is drawn."""
    for path in sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        cells = build_book.slides_notebook(nb, path.name).cells
        shown = [c for c in cells if c.metadata["slideshow"]["slide_type"] not in ("skip", "notes")]
        assert shown and sections.is_sectioned(nb)
        for c in shown:
            if c.cell_type == "code" and deck.OUTPUT_ONLY not in c.metadata.get("tags", []):
                assert "NBVAL_" not in c.source and "BEGIN SOLUTION" not in c.source, f"{path.name}: {c.source}"
            if c.cell_type == "markdown":
                assert slide_text.words(c.source) <= 90, f"{path.name}: {c.source[:200]}"
