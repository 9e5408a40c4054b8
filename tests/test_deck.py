"""tools.deck, tools.slide_text, tools.slide_code and tools.slide_figures: what a projected slide keeps of a
notebook's cells."""

import ast
import base64
import io
import json
import re

import nbformat
import numpy as np
import pytest

from course_lib.paths import NOTEBOOKS_DIR
from tools import build_book, deck, figure_panels, sections, slide_code, slide_figures, slide_text

BADGE = '<span class="section-badge core">● core · 5 min</span>'
LONG = (
    "Self-attention gives every token all three roles at once, and this sentence goes on and on about it. "
    "A second sentence that a reader needs and a slide does not, with many more words than a slide can hold "
    "when it is projected in a lecture hall for students at the back of the room to read."
)


# tools.slide_code formats code wider than a slide with ruff (dev and book extras; a GPU machine's image may lack it)
needs_ruff = pytest.mark.skipif(slide_code._ruff() is None, reason="ruff is not installed: slide code is not formatted")


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
    assert slide_text.words(slide.source) <= slide_text.BUDGET and "…" not in slide.source


def test_a_short_slide_is_shown_whole_without_notes():
    cells = shaped(cell("markdown", "**Step 1.** $E[s] = 0$ by linearity.", "subslide"))
    assert len(cells) == 1 and cells[0].source == "**Step 1.** $E[s] = 0$ by linearity."


def test_a_heading_only_summary_takes_every_bullet_of_its_notes_in_whole_sentences_over_slides():
    bullets = "\n".join(f"- Point {k}: {LONG}" for k in range(8))
    cells = shaped(cell("markdown", f"## Summary\n{BADGE}", "slide"), cell("markdown", bullets, "notes"))
    pages = [c for c in cells if c.cell_type == "markdown" and c.metadata["slideshow"]["slide_type"] != "notes"]
    first_sentence = LONG.split(". ")[0] + "."
    shown = [line for page in pages for line in page.source.splitlines() if line.startswith("- ")]
    assert shown == [f"- Point {k}: {first_sentence}" for k in range(8)], "every bullet, its first sentence whole"
    assert len(pages) == 3 and pages[1].source.startswith("## Summary (continued)")
    assert all(slide_text.words(p.source) <= slide_text.PAGE + 4 for p in pages)
    assert cells[1].source == bullets and cells[1].metadata["slideshow"]["slide_type"] == "notes", "notes after 1st"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("One. Two three.", ["One.", "Two three."]),
        (
            "**Step 1.** Scores $s = (s_1, \\dots, s_n)$, e.g. three. More!",
            ["**Step 1.** Scores $s = (s_1, \\dots, s_n)$, e.g. three.", "More!"],
        ),
        (
            "A value $x = 1.5$ and (i.e. this) one. Then `a.b()` runs",
            ["A value $x = 1.5$ and (i.e. this) one.", "Then `a.b()` runs"],
        ),
        ("Vaswani et al. (2017) add a vector. Then more.", ["Vaswani et al. (2017) add a vector.", "Then more."]),
    ],
)
def test_sentences_are_whole_and_never_split_a_formula(text, expected):
    assert slide_text.sentences(text) == expected


def test_a_year_at_the_start_of_a_line_goes_on_the_paragraph_not_a_list():
    """Notebook 15: "LoRA (Hu et al.,\n2022) assumes ..." showed on its slide as "2022. assumes ...", a list item."""
    text = "## LoRA\n\nFull fine-tuning learns a change. LoRA (Hu et al.,\n2022) assumes the change has low rank.\n"
    assert [kind for kind, _ in slide_text.blocks(text)] == ["heading", "para"]
    assert [kind for kind, _ in slide_text.blocks("Steps:\n1. one\n2. two\n")] == ["para", "list"]


def test_a_long_first_sentence_stays_in_the_notes_rather_than_being_cut():
    long_sentence = " ".join(["word"] * (slide_text.MAX_SENTENCE + 5)) + "."
    source = f"## Heading\n\n{long_sentence} Short one.\n\n" + " ".join(["more"] * 30) + "."
    pages = slide_text.slide_pages(source)
    assert len(pages) == 1 and "word" not in pages[0] and "Short one" not in pages[0], pages
    assert pages[0].startswith("## Heading") and pages[0].endswith(" more."), "the next paragraph, whole"


def test_a_wordy_table_goes_on_over_slides_with_its_header():
    rows = "\n".join(f"| row {k} | " + " ".join(["text"] * 12) + " |" for k in range(10))
    pages = slide_text.slide_pages(f"## Parts\n\n| part | what |\n|---|---|\n{rows}")
    assert len(pages) > 1 and all("| part | what |" in p for p in pages)
    assert pages[1].startswith("## Parts (continued)")
    assert sum(p.count("| row ") for p in pages) == 10


def test_code_loses_test_and_grading_markers():
    source = "# NBVAL_IGNORE_OUTPUT\nx = 1\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION\nprint(x + y)"
    assert deck.clean_code(source) == "x = 1\ny = 2\nprint(x + y)"


def test_wordy_code_loses_comments_and_checks_and_its_output_moves_to_the_next_slide():
    source = "\n".join(f"value_{k} = compute(data, k, k + 1)  # what step {k} of the method does" for k in range(12))
    source += "\nassert value_0 == value_0\nprint(value_7)"
    c = cell("code", source, "fragment")
    printed = "".join(f"line {k} of many words here\n" for k in range(30))
    c.outputs = [nbformat.v4.new_output("stream", text=printed)]
    cells = shaped(cell("markdown", "## Code", "slide"), c)
    kinds = [(x.cell_type, x.metadata["slideshow"]["slide_type"]) for x in cells]
    assert kinds == [
        ("markdown", "slide"),
        ("code", "subslide"),
        ("markdown", "notes"),
        ("markdown", "notes"),
        ("code", "subslide"),
    ]
    code, notes, output_notes, output = cells[1], cells[2], cells[3], cells[4]
    assert "#" not in code.source and "assert" not in code.source and code.outputs == []
    assert source in notes.source, "the full code is in the notes"
    assert printed.strip() in output_notes.source, "the full output is in the notes"
    assert deck.OUTPUT_ONLY in output.metadata["tags"]
    assert deck.code_words(output.outputs[0]["text"]) <= deck.SLIDE_WORDS
    assert re.search(r"⋮ \(\d+ more lines in the notes\)\n$", output.outputs[0]["text"])


def test_a_cut_output_does_not_end_on_a_line_that_announces_what_is_cut():
    c = cell("code", "show()", "subslide", tags=[deck.OUTPUT_ONLY])
    printed = "".join(f"d{k}\n" for k in range(deck.SLIDE_LINES - 4)) + "the first training pairs:\n"
    printed += "".join(f"  pair {k}\n" for k in range(40))  # more lines than two slides have room for
    c.outputs = [nbformat.v4.new_output("stream", text=printed)]
    shown = shaped(c)[0].outputs[0]["text"].splitlines()
    assert re.match(r"⋮ \(\d+ more lines in the notes\)$", shown[-1]), shown
    assert not shown[-2].endswith(":"), shown


def test_an_output_a_little_longer_than_its_slide_goes_on_over_the_next():
    """A lecturer's trial: 12's table of five sampling settings lost its last row to the notes on a half-empty slide."""
    c = cell("code", "show()", "subslide", tags=[deck.OUTPUT_ONLY])
    c.id = "table"
    rows = [f"setting {k}: " + " ".join(f"0.{k}{j}" for j in range(8)) for k in range(10)]  # 10 words a row
    c.outputs = [nbformat.v4.new_output("stream", text="\n".join(rows) + "\n")]
    first, second = [x for x in shaped(c) if x.metadata["slideshow"]["slide_type"] != "notes"]
    shown = first.outputs[0]["text"].splitlines()
    assert shown[-1] == deck.CONTINUED and second.id == "table-output-continued"
    assert shown[:-1] + second.outputs[0]["text"].splitlines() == rows, "every row, in order, none twice"
    assert deck.code_words(first.outputs[0]["text"]) <= deck.SLIDE_WORDS


def test_the_rest_of_a_table_goes_on_under_its_header_when_it_fits_a_slide_as_the_browser_counts():
    """An eighth lecturer's trial: 12's sampling table lost its top-p row, which the next figure shows, to the notes:
    its header and the rest held 62 words by the old count (60 allowed), within the browser's count's 85."""
    c = cell("code", "show()", "subslide", tags=[deck.OUTPUT_ONLY])
    rows = [f"{'name':<8}" + "".join(f"{f'c{j}':>6}" for j in range(8))]  # an aligned table: its header, then rows
    rows += [f"{f'row {k}':<8}" + "".join(f"{k / 10 + j / 100:>6.2f}" for j in range(8)) for k in range(11)]
    c.outputs = [nbformat.v4.new_output("stream", text="\n".join(rows) + "\n")]
    others = [cell("markdown", f"## Part {k}", "slide") for k in range(6)]  # a deck of few words a slide
    first, second = [x for x in shaped(c, *others) if x.cell_type == "code"]
    rest = second.outputs[0]["text"].splitlines()
    assert rest[0] == rows[0] and deck.code_words("\n".join(rest)) > deck.SLIDE_WORDS, "the header, then 60+ words"
    assert first.outputs[0]["text"].splitlines()[:-1] + rest[1:] == rows[:1] + rows[1:]


def test_an_output_alone_that_fits_its_slide_is_not_split():
    """An eighth lecturer's trial: 15 of 16 outputs went on over two slides with room to spare (60 words a slide)."""
    c = cell("code", "show()", "subslide", tags=[deck.OUTPUT_ONLY])
    rows = [f"setting {k}: " + " ".join(f"0.{k}{j}" for j in range(8)) for k in range(7)]  # 70 words, 7 lines
    c.outputs = [nbformat.v4.new_output("stream", text="\n".join(rows) + "\n")]
    others = [cell("markdown", f"## Part {k}", "slide") for k in range(3)]  # a deck of few words a slide
    (only, *_) = [x for x in shaped(c, *others) if x.cell_type == "code"]
    assert only.outputs[0]["text"].splitlines() == rows
    # a deck that is wordy already keeps the split: the browser test allows 40 words a slide on average
    first, second = [x for x in shaped(c) if x.metadata["slideshow"]["slide_type"] != "notes"]
    assert first.outputs[0]["text"].splitlines()[-1] == deck.CONTINUED and deck.mean_words({"cells": [first]}) > 40


@needs_ruff
def test_code_wider_than_a_slide_is_formatted_to_fit_and_stays_the_same_program():
    source = (
        "result = some_function(first_argument_name, second_argument_name, third_argument_name, fourth_argument)\n"
        'print(f"{len(corpus)} sentences, vocabulary of {len(vocab)} tokens, {len(centres)} (centre, context) pairs")'
    )
    out = slide_code.formatted(source)
    assert all(len(line) <= slide_code.COLUMNS for line in out.splitlines()), out
    assert ast.dump(ast.parse(out)) == ast.dump(ast.parse(source))
    assert slide_code.formatted("x = 1  # fmt: skip") == "x = 1  # fmt: skip", "narrow code is left alone"


def test_without_ruff_a_wide_line_is_an_error_and_a_narrow_one_is_kept(monkeypatch):
    """Never a slide whose code silently wraps: a wider line needs the formatter, a narrow one does not."""
    monkeypatch.setattr(slide_code, "_ruff", lambda: None)
    assert slide_code.formatted("x = 1") == "x = 1"
    with pytest.raises(RuntimeError, match="ruff, which is not installed"):
        slide_code.formatted("x = " + " + ".join(["value"] * 30))


@needs_ruff
def test_a_call_ruff_spreads_one_argument_a_line_is_packed_onto_fewer_lines():
    """A lecturer's trial: 10's print of five arguments took seven lines of its slide once ruff formatted it."""
    source = 'print("tokens", tuple(tokens.shape), " conv output", tuple(by_conv.shape), "-> flattened: equal")'
    assert len(slide_code.formatted(source).splitlines()) == 7, "ruff: one argument a line"
    out = slide_code.packed(slide_code.formatted(source))  # as tools.deck packs each piece of a slide's code
    assert out.splitlines() == [
        "print(",
        '    "tokens", tuple(tokens.shape), " conv output", tuple(by_conv.shape),',
        '    "-> flattened: equal",',
        ")",
    ], out
    assert ast.dump(ast.parse(out)) == ast.dump(ast.parse(source))
    strings = 'f(\n    a,\n    """x,\n    y,\n    z,\n""",\n)'  # lines inside a string are the string's: kept
    assert slide_code.packed(strings) == strings
    commented = "f(\n    a,  # first\n    b,\n    c,\n)"
    assert slide_code.packed(commented) == commented, "a comment ends its line"


@needs_ruff
def test_a_line_wide_only_by_its_comment_stays_one_line_once_the_comment_is_cut():
    """08's slide of the overflow demo showed ``big = (`` / ``1000 * s`` / ``)``: ruff broke the line for its comment,
    then the comment was cut. Cuts are made on the code as written, formatted after."""
    comment = "  # scores in the thousands: e^2000 does not fit in float64 (the largest is about e^709)"
    source = "\n".join([f"big = 1000 * s{comment}", *(f"value_{k} = compute(big, k)  # step {k}" for k in range(8))])
    c = cell("code", source, "fragment")
    c.outputs = [nbformat.v4.new_output("stream", text="".join(f"line {k} of the output\n" for k in range(6)))]
    code = shaped(cell("markdown", "## Code", "slide"), c)[1].source
    assert "#" not in code, code
    assert code.splitlines()[0] == "big = 1000 * s", code


def test_a_block_holding_only_a_check_keeps_it_so_the_slide_shows_a_program():
    source = "with torch.no_grad():\n    torch.testing.assert_close(a, b)\nassert a.shape == (2, 3)\nprint(a)"
    out = deck.without_checks(source)
    assert out == "with torch.no_grad():\n    torch.testing.assert_close(a, b)\nprint(a)"
    ast.parse(out)


def test_a_block_that_prints_a_literal_true_keeps_the_checks_that_make_it_true():
    source = (
        "same = torch.allclose(a, b)\nassert same\nprint('cached = uncached:', True)\n"
        "for x in xs:\n    assert x > 0\n    print(x)"
    )
    out = deck.without_checks(source)
    assert out.splitlines()[:3] == source.splitlines()[:3], "the assert that the printed True reports stays"
    assert "assert x > 0" not in out and "    print(x)" in out, "a block printing no literal True loses its checks"


def test_wide_output_is_narrowed_without_cutting_a_word():
    header = f"{'implementation':<22}" + "".join(f"{n:>20}" for n in ("alpha", "beta_check", "gamma", "delta_x", "eps"))
    rows = [f"{name:<22}" + "".join(f"{mark:>20}" for mark in "x.x.x") for name in ("correct", "no scale", "other")]
    table = slide_code.narrow_output("\n".join([header, *rows]) + "\n")
    assert all(len(line) <= slide_code.COLUMNS for line in table.splitlines()), table
    assert table.split() == [header, *rows][0].split() + sum((r.split() for r in rows), []) or "eps" in table
    assert sorted(table.split()) == sorted(" ".join([header, *rows]).split()), "every cell is still there"
    line = "  CAUGHT  check: " + "; ".join(f"clause number {k} of a long message" for k in range(6))
    folded = slide_code.narrow_output(line)
    assert all(len(part) <= slide_code.COLUMNS for part in folded.splitlines())
    assert folded.split() == line.split(), "the same words, in order"


def test_long_code_is_cut_between_top_level_statements():
    source = "\n".join(f"def f{k}(x):\n    y = x + {k}\n    return y\n" for k in range(8))
    pieces = slide_code.pieces(source, 10)
    assert "\n\n".join(pieces).split() == source.split()
    assert all(len(p.splitlines()) <= 10 and p.startswith("def ") for p in pieces)


def test_wordy_code_of_few_lines_is_cut_between_statements_too():
    """An eighth lecturer's trial: 15's LoRA comparison put 104 words of code on one slide (16 lines or fewer)."""
    source = "\n".join(f"value_{k} = first + second * third - fourth / fifth + sixth * seventh" for k in range(8))
    assert len(source.splitlines()) <= slide_code.MAX_LINES and len(source.split()) > slide_code.MAX_WORDS
    parts = slide_code.pieces(source)
    assert len(parts) == 2 and "\n".join(parts) == source
    assert all(len(part.split()) <= slide_code.MAX_WORDS for part in parts)


@pytest.mark.parametrize(
    "target, expected",
    [
        ("../docs/glossary.md#softmax", "../docs/glossary.html#softmax"),
        ("01_sequences_and_embeddings.ipynb", "../notebooks/01_sequences_and_embeddings.html"),
        ("#3-masks", "../notebooks/05_x.html#3-masks"),
        ("https://nbgrader.readthedocs.io", "https://nbgrader.readthedocs.io"),
    ],
)
def test_links_of_the_notes_open_the_books_pages(target, expected):
    assert deck.book_link(target, "05_x.ipynb") == expected
    assert deck.book_links(f"see [it]({target}).", "05_x.ipynb") == f"see [it]({expected})."


def test_an_inline_formula_broken_over_two_lines_is_joined_for_the_notes():
    text = "With $\\phi = \\operatorname{elu}\n+ 1$, and\n$$\na\n$$\n"
    assert deck.inline_math_on_one_line(text) == "With $\\phi = \\operatorname{elu} + 1$, and\n$$\na\n$$\n"


def test_a_figure_knows_the_size_of_its_smallest_text():
    assert slide_figures.smallest_text_pt("plt.plot(x)") == slide_figures.SMALLEST_PT
    assert slide_figures.smallest_text_pt("ax.text(0, 0, 's', fontsize=7)\nplt.scatter(x, y, s=3)") == 7
    assert slide_figures.smallest_text_pt("ax.text(0, 0, 's', size=6.5)") == 6.5
    png = panels_png(1)
    assert slide_figures.text_px(png, 9) == round(9 / 72 * 100, 2)


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
    if n > 1:
        assert all(370 <= w <= 420 for w, _ in sizes), sizes  # each panel, trimmed to its ink
        assert all(h <= (300 - 30 if title else 300) for _, h in sizes), "a spanning title is cut off"


def test_a_figure_is_cut_only_when_its_text_would_be_too_small_on_a_slide():
    png = panels_png(2)  # 840 x 300 pixels: shown alone, scaled by 1272 / 840 = 1.51
    assert len(slide_figures.panels(png, text_px=11.11)) == 1, "8 pt text drawn at 16.8 px: kept whole"
    assert len(slide_figures.panels(png, text_px=9.72)) == 2, "7 pt text drawn at 14.7 px: one panel a slide"


def words_over_a_gap_png(second_word: int):
    """Two panels (rows 60-280; columns 20-390 and 440-810, the gap 390-440) under a line of text 22 px high
    (rows 5-27) of two words 20 px apart: one ending at column 400, one starting at 420 and ending near
    ``second_word``. The space between the words is less than the line's height, and the blank columns 400-420 run
    down the whole figure (notebook 09's figure of an 8 x 8 digit)."""
    from PIL import Image

    pixels = np.full((300, 830), 255, dtype=np.uint8)
    pixels[60:280, 20:390] = pixels[60:280, 440:810] = 0
    pixels[5:27, 39:400:12] = 0  # letters: single columns of ink, 11 blank columns apart
    pixels[5:27, 420:second_word:12] = 0
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def test_a_cut_never_passes_through_a_line_of_text():
    pieces = slide_figures.panels(words_over_a_gap_png(480), text_px=9.72)  # a panel's title reaching over the gap
    assert len(pieces) == 2
    first, second = inks(pieces)
    title_rows = [k for k, row in enumerate(first) if row.any() and row.sum() < 100]
    assert title_rows and first[title_rows[0]].sum() == len(range(39, 400, 12)) + len(range(420, 480, 12)), (
        "the whole line of text goes with the panel under most of it"
    )
    assert second.shape[0] <= 280 - 60 + 2 * figure_panels.MARGIN, "and the other panel has none of it"
    assert second.sum() == 220 * 370, "the other panel whole, nothing else"
    # a title over both panels (reaching far into both): no cut through it; cut below it, the title with each panel
    pieces = slide_figures.panels(words_over_a_gap_png(800), text_px=9.72)
    title = (len(range(39, 400, 12)) + len(range(420, 800, 12))) * 22
    assert len(pieces) == 2 and all(used.sum() == 220 * 370 + title for used in inks(pieces))


def test_rows_of_panels_are_cut_only_where_each_row_keeps_its_panels_above_each_other():
    """An eighth lecturer's find: 10's six digits over their six attention maps, the maps narrowed by a colour bar,
    were cut after the fourth digit and the fifth map; the maps stood under the wrong digits."""

    def rows(map_width: int, map_step: int) -> np.ndarray:  # 10's layout, in its pixels: six digits over six maps
        pixels = np.zeros((300, 1000), dtype=bool)
        for k in range(6):
            pixels[10:130, 40 + 160 * k : 173 + 160 * k] = True
            pixels[160:290, 40 + map_step * k : 40 + map_step * k + map_width] = True
        return pixels

    assert figure_panels.cuts(rows(133, 160)) == [346, 666], "columns of panels, aligned: cut between them"
    narrowed = rows(107, 128)  # the maps' columns blank at 660-678 as the digits' are: a gap through both rows
    assert not figure_panels._aligned(narrowed, 669), "four digits, five maps on its left"
    assert figure_panels.cuts(narrowed) == []


def png_of(pixels) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def inks(pieces):
    from PIL import Image

    return [figure_panels.ink(Image.open(io.BytesIO(p))) for p in pieces]


def test_a_colour_bar_stays_with_its_panel_and_an_axis_label_with_its_axis():
    """Two panels (columns 20-300 and 366-650); the first one's colour bar (320-335) is nearer the second panel's
    axis label (345-355) than its own panel, and that label is as near its axis as the bar (10 blank columns)."""
    pixels = np.full((300, 670), 255, dtype=np.uint8)
    pixels[60:280, 20:300] = pixels[60:280, 366:650] = 0  # the panels
    pixels[60:280, 320:335] = 0  # a colour bar: as tall as the panels, narrower than BAR of the figure
    pixels[120:220, 345:355] = 0  # an axis label: shorter than FRAME of the height
    first, second = inks(slide_figures.panels(png_of(pixels), text_px=7))  # 7 px: 13.3 on a slide, too small
    assert first.sum() == 220 * 280 + 220 * 15, "the first panel and its colour bar"
    assert second.sum() == 220 * 284 + 100 * 10, "the second panel and its axis label"


def test_a_legend_beside_a_panel_is_not_a_panel():
    pixels = np.full((300, 820), 255, dtype=np.uint8)
    pixels[20:280, 20:600] = 0
    pixels[20:80, 640:800] = 0  # a legend outside the axes: MIN_PANEL wide, a fifth of the height
    assert len(slide_figures.panels(png_of(pixels), text_px=9.72)) == 1


def test_panels_that_share_their_value_axis_each_get_its_labels():
    """sharey=True: the tick labels (columns 5-25) are drawn left of the first panel only."""
    pixels = np.full((300, 840), 255, dtype=np.uint8)
    for left in (40, 460):
        pixels[40:280, left : left + 360] = 0
        pixels[60:261:50, left - 6 : left] = 0  # tick marks
    for row in range(55, 260, 50):
        pixels[row : row + 12, 5:25] = 0  # tick labels
    first, second = inks(slide_figures.panels(png_of(pixels), text_px=9.72))
    assert first.sum() == second.sum() == 240 * 360 + 5 * 6 + 5 * 12 * 20
    assert (first == second).all(), "the second panel with the first one's axis"


def test_the_one_colour_bar_of_a_figure_goes_with_each_panel():
    """Two heat maps, one colour bar right of the second (one scale for both): the first panel's slide showed none."""
    pixels = np.full((300, 900), 255, dtype=np.uint8)
    pixels[40:280, 20:400] = pixels[40:280, 460:840] = 0  # the panels
    pixels[40:280, 860:875] = 0  # the bar
    pixels[60:261:50, 880:890] = 0  # its ticks
    first, second = inks(slide_figures.panels(png_of(pixels), text_px=7))
    assert first.sum() == second.sum() == 240 * 380 + 240 * 15 + 5 * 10, "each panel with the bar and its ticks"


def test_a_title_over_all_panels_goes_wrapped_with_each_panel():
    """A title centred over three panels, 12 words of 60 columns 10 apart, wider than a panel."""
    pixels = np.full((330, 1260), 255, dtype=np.uint8)
    for k in range(3):
        pixels[60:310, 420 * k + 20 : 420 * k + 390] = 0
    for k in range(12):
        start = 630 - 415 + 70 * k
        pixels[10:30, start : start + 60] = 0
    pieces = slide_figures.panels(png_of(pixels), text_px=9.72)
    assert len(pieces) == 3
    for used in inks(pieces):
        title = used[: -250 - 2 * figure_panels.MARGIN]
        assert title.sum() == 12 * 60 * 20, "the whole title"
        assert used.shape[1] <= 370 + 2 * figure_panels.MARGIN, "no wider than the panel"
        lines = figure_panels.runs(title.any(axis=1))
        assert len(lines) == 3, "in three lines"
        assert [int(title[a:b].any(axis=0).sum()) for a, b in lines] == [4 * 60] * 3, "of 4 words each, not 5, 5, 2"


def test_each_panel_of_a_figure_gets_a_slide():
    c = cell("code", "plot()", "subslide", tags=[deck.OUTPUT_ONLY])
    png = base64.b64encode(panels_png(3)).decode()
    c.outputs = [nbformat.v4.new_output("display_data", data={"image/png": png})]
    cells = shaped(c)
    assert [x.metadata["slideshow"]["slide_type"] for x in cells] == ["subslide"] * 3
    assert all(len(x.outputs) == 1 and "image/png" in x.outputs[0]["data"] for x in cells)


def test_the_panels_of_a_figure_keep_their_order_when_the_first_leaves_its_code():
    """Deck 08 showed a figure's panels 2, 3, then 1: the first panel, moved off its code's slide to be read, went
    after the others."""
    source = "\n".join(f"draw_line_{k}(ax, data, k={k})" for k in range(12))
    c = cell("code", source, "subslide")
    c.id = "fig"
    png = base64.b64encode(panels_png(3)).decode()
    c.outputs = [nbformat.v4.new_output("display_data", data={"image/png": png})]
    shown = [x for x in shaped(c) if x.metadata["slideshow"]["slide_type"] != "notes"]
    assert [x.id for x in shown] == ["fig", "fig-figure-1", "fig-panel-2", "fig-panel-3"]
    assert shown[0].outputs == [] and all(len(x.outputs) == 1 for x in shown[1:])


def test_an_exercise_slide_shows_the_code_it_asks_for_and_never_the_solution():
    """A lecturer's trial: exercise slides showed the given numbers but not the question, or only their title."""
    from tools import slide_tasks

    heading = cell(
        "markdown", "### Exercise 1: add one\n\nWrite a function " + "of a long task " * 30 + ".", "subslide"
    )
    heading.id = "ex1"
    answer = cell(
        "code", "def f(x):\n    # x: (n,) -> (n,)\n    # BEGIN SOLUTION\n    return x + 1\n    # END SOLUTION", "-"
    )
    value = cell("code", "# Exercise 2: a number\n# BEGIN SOLUTION\nn_ex2 = 3 * 4\n# END SOLUTION", "-")
    nb = nbformat.v4.new_notebook(cells=[heading, answer, cell("markdown", "### Exercise 2 (by hand)", "-"), value])
    nb.cells[2].id = "ex2"
    deck_cells = [nb.cells[0], nb.cells[2]]  # the deck holds the headings, not the answer cells
    shown = slide_tasks.with_tasks({**nb, "cells": deck_cells}, nb)["cells"]
    assert [c["id"] for c in shown] == ["ex1", "ex1-task", "ex2", "ex2-task"]
    assert shown[1]["source"] == "def f(x):\n    # x: (n,) -> (n,)\n    ..."
    assert shown[3]["source"] == "# Exercise 2: a number\nn_ex2 = ..."
    heading.source = "### Exercise 1: add one\n\nWrite `f(x)`, which adds one."  # the slide names the function
    nb.cells[2].metadata["slideshow"] = {"slide_type": "notes"}  # and an exercise only in the notes gets no task
    assert [c["id"] for c in slide_tasks.with_tasks({**nb, "cells": deck_cells}, nb)["cells"]] == ["ex1", "ex2"]


@needs_ruff
def test_no_deck_shows_a_solution_in_an_exercise_task():
    from course_lib.classroom.stubs import solution_regions

    shown = 0
    for path in sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        tasks = [c for c in build_book.slides_notebook(nb, path.name).cells if c.get("id", "").endswith("-task")]
        shown += len(tasks)
        solved = {line.strip() for c in nb["cells"] if c["cell_type"] == "code"
                  for begin, end, _ in solution_regions("".join(c["source"]))
                  for line in "".join(c["source"]).splitlines()[begin + 1 : end] if line.strip()}  # fmt: skip
        for task in tasks:
            assert not {line.strip() for line in task.source.splitlines()} & solved, (path.name, task.source)
    assert shown >= 6, "the exercise slides that did not say what to write (12's exercise 3, the by-hand ones)"


@needs_ruff
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
                assert not re.search(r"(…|\.\.\.)\**\s*$", c.source, re.M), f"{path.name}: a cut sentence {c.source}"
            if c.cell_type == "code":
                shown = ("" if deck.OUTPUT_ONLY in c.metadata.get("tags", []) else c.source).splitlines()
                shown += [
                    line for o in c.get("outputs", []) if deck._is_text(o) for line in deck._output_text(o).split("\n")
                ]
                wide = [line for line in shown if slide_code.width(line) > slide_code.COLUMNS]
                assert not wide, f"{path.name}: lines wider than a slide: {wide}"
                assert len(shown) <= slide_code.MAX_LINES + 6, f"{path.name}: {len(shown)} lines on one slide"
                for o in c.get("outputs", []):
                    if "image/png" in o.get("data", {}):
                        assert o["metadata"]["course"]["text_px"] > 0, f"{path.name}: a figure without its text size"


@needs_ruff
def test_every_cell_of_every_deck_has_an_id_of_its_own():
    """12's deck gave a cut output's notes and the output's own slide one id ("...-output"), which nbformat renamed."""
    for path in sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")):
        cells = build_book.slides_notebook(json.loads(path.read_text(encoding="utf-8")), path.name).cells
        ids = [c.get("id") for c in cells]
        assert len(ids) == len(set(ids)), f"{path.name}: {sorted({i for i in ids if ids.count(i) > 1})}"


POSITION_WORDS = re.compile(r"\b(left|middle|centre|center|right|top|bottom)\b\s*\)|\((left|middle|right|top|bottom)\b")


@needs_ruff
def test_a_figure_cut_into_panels_has_no_title_that_names_a_panels_place():
    """Each panel of a cut figure carries the title over all of them (tools.figure_panels): 06's "(middle) vs
    (right)" was shown on three slides of one panel each, where no panel is in the middle."""
    for path in sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        cut = {c.get("id", "").split("-panel-")[0] for c in build_book.slides_notebook(nb, path.name).cells
               if "-panel-" in c.get("id", "")}  # fmt: skip
        for c in nb["cells"]:
            if c.get("id") in cut:
                titles = re.findall(r"suptitle\((.*)", "".join(c["source"]))
                assert not [t for t in titles if POSITION_WORDS.search(t)], (path.name, titles)
    assert POSITION_WORDS.search('"view(L, H, Dk)  (middle)   vs   view(H, L, Dk)  (right)"')


def test_an_italic_lead_joins_the_sentence_after_it_as_a_bold_one_does():
    """The seventh lecturer's trial: 10's list "- *Scale.* The claim that matters..." showed "Scale." alone."""
    shown = slide_text.list_lines("- *Scale.* The claim is about large data. More.\n- *Recipe.* ViTs need more. More.")
    assert shown == ["- *Scale.* The claim is about large data.", "- *Recipe.* ViTs need more."]
    assert slide_text.first_sentence("**Step 1.** Do this. Then that.") == "**Step 1.** Do this."


def test_a_common_claim_is_never_shown_without_the_sentence_that_corrects_it():
    """The eighteenth lecturer's trial: 13's slide showed only '**Common claim:** "The vocabulary size of a BPE
    tokenizer is its number of merges."', a false claim projected as if it were the course's."""
    claim = '**Common claim:** "A token is a word." Tokens are what the merges made. Of 5,958 words, 2,894 split.'
    assert slide_text.first_sentence(claim) == '**Common claim:** "A token is a word." Tokens are what the merges made.'
    chinese = "**常见说法：**“一个词元就是一个词。”词元是合并造出来的。其余略。"
    assert slide_text.first_sentence(chinese) == "**常见说法：**“一个词元就是一个词。”词元是合并造出来的。"
    assert slide_text.first_sentence("**Claim.** One. Two.") == "**Claim.** One."


def test_an_escaped_section_number_does_not_end_a_bullets_sentence():
    """The eighteenth lecturer's trial: 13's "Part 2 of the lecture" listed only "3. 4. 5. 6. 7. 8." (its bullets
    are "3\\. Byte-pair ...", escaped so that Markdown draws no list inside the list)."""
    assert slide_text.list_lines("- 3\\. Byte-pair encoding\n- 4\\. Special tokens. More.") == [
        "- 3\\. Byte-pair encoding",
        "- 4\\. Special tokens.",
    ]


def test_a_table_in_sections_is_stacked_by_section_and_a_header_note_goes_first():
    """The seventh lecturer's trial: 04's 91-column table (d_k | raw: two columns | scaled: two columns) was stacked
    one column at a time, so slide 27 showed the raw medians under the scaled run's percentages; 08's FLOPs table
    left its header's "(matrix-product FLOPs)" as a column of its own, with the method names and no numbers."""
    header = f"{'d_k':>5} | {'raw: median ||J||':>24} {'in small-grad region':>21} | {'scaled: median ||J||':>24} " + (
        f"{'in small-grad region':>21}"
    )
    rows = [f"{d:>5} | {r:>24} {p:>21} | {s:>24} {q:>21}" for d, r, p, s, q in
            ((1, "1.5e-01", "0.00%", "1.6e-01", "0.01%"), (64, "1.2e-01", "12.00%", "2.0e-01", "0.02%"),
             (1024, "1.4e-05", "64.50%", "2.1e-01", "0.03%"))]  # fmt: skip
    assert len(header) > slide_code.COLUMNS
    first, second = slide_code.narrow_output("\n".join([header, *rows]) + "\n").split("\n\n")
    assert "raw:" in first and "scaled" not in first and "64.50%" in first and "0.03%" not in first
    assert "scaled:" in second and "raw" not in second and "2.1e-01" in second and "0.03%" in second
    note = f"{'method':>8}" + "".join(f"{f'n = {n}':>20}" for n in range(5)) + f"{'slope':>7}   (matrix FLOPs)"
    table = [note] + [f"{m:>8}" + "".join(f"{10**k * 7:>20,}" for k in range(9, 14)) + "   2.00" for m in "abc"]
    shown = slide_code.narrow_output("\n".join(table) + "\n").splitlines()
    assert shown[0] == "(matrix FLOPs)" and all(len(line) <= slide_code.COLUMNS for line in shown), shown
    assert not any(line.split() in (["a"], ["b"], ["c"]) for line in shown), "no column of names without numbers"


def test_a_chinese_sentence_ends_before_a_code_span_that_opens_the_next():
    """The seventh lecturer's trial: zh/06 slide 16 showed "**一个经典错误：变形时漏掉转置**。`Q.view(B, H, L, Dk)`"."""
    text = "**一个经典错误：变形时漏掉转置**。`Q.view(B, H, L, Dk)` 的*形状*是对的，代码也不报错。但这是错的。"
    first = "**一个经典错误：变形时漏掉转置**。`Q.view(B, H, L, Dk)` 的*形状*是对的，代码也不报错。"
    assert slide_text.first_sentence(text) == first


def test_a_table_continued_on_the_next_slide_keeps_its_header():
    """The seventh lecturer's trial: 04/27, 06/21-22 and 10/47-48 went on without their column headers."""
    c = cell("code", "show()", "subslide", tags=[deck.OUTPUT_ONLY])
    c.id = "table"
    header = f"{'n':>6}  {'naive ms':>10}  {'chunked ms':>10}"
    rows = [f"{2**k:>6}  {k * 1.5:>10.2f}  {k * 0.5:>10.2f}" for k in range(deck.SLIDE_LINES + 2)]
    c.outputs = [nbformat.v4.new_output("stream", text="\n".join([header, *rows]) + "\n")]
    first, second = [x for x in shaped(c) if x.metadata["slideshow"]["slide_type"] != "notes"]
    shown, more = first.outputs[0]["text"].splitlines(), second.outputs[0]["text"].splitlines()
    assert shown[0].split() == more[0].split() == header.split(), "the header on both slides"
    assert [r.split() for r in shown[1:-1] + more[1:]] == [r.split() for r in rows], "every row once, in order"


def test_an_english_slide_drops_a_terms_chinese_name_and_its_notes_keep_it():
    """The seventh lecturer's trial: English slides showed the glossary's Chinese names ("head (注意力头)")."""
    name = "06_multi_head_attention.ipynb"
    cells = build_book.slides_notebook(json.loads((NOTEBOOKS_DIR / name).read_text(encoding="utf-8")), name).cells
    shown = [c.source for c in cells if c.cell_type == "markdown" and c.metadata["slideshow"]["slide_type"] != "notes"]
    notes = [c.source for c in cells if c.metadata["slideshow"]["slide_type"] == "notes"]
    assert not any("(多头注意力)" in s or "(注意力头)" in s for s in shown)
    assert any("(多头注意力)" in n or "(注意力头)" in n for n in notes) or any("注意力头" in s for s in notes), notes[
        :2
    ]
    assert deck.CHINESE_TERM.sub("", "a **head** (注意力头) and 猫 (cat), 分块注意力 (chunked attention)") == (
        "a **head** and 猫 (cat), 分块注意力 (chunked attention)")  # fmt: skip


def test_a_list_goes_on_over_as_many_slides_as_asked_when_it_can():
    """``count`` (a translation's deck follows its English deck's slides): the items shared out over that many
    slides, as light as can be; a count no limit up to SLIDE_MAX reaches leaves the layout as it was."""
    items = [("item", f"- item {k} " + "word " * 10) for k in range(8)]  # 8 items of 12 words: 96 words
    natural = slide_text.paginate(items, "## A list")
    assert len(natural) == 2
    three = slide_text.paginate(items, "## A list", count=3)
    assert len(three) == 3 and all(p.startswith("## A list (continued)") for p in three[1:])
    assert sum(p.count("- item") for p in three) == 8
    assert max(slide_text.words(p) for p in three) <= slide_text.PAGE
    assert slide_text.paginate(items, "## A list", count=1) == natural  # 96 words: over SLIDE_MAX on one slide
    assert slide_text.paginate(items, "## A list", count=2) == natural


def _slides(nb) -> list[list[str]]:
    """The ids of the cells shown on each slide of a shaped deck."""
    out: list[list[str]] = []
    for c in nb["cells"]:
        kind = c.get("metadata", {}).get("slideshow", {}).get("slide_type", "-")
        if kind in ("slide", "subslide"):
            out.append([])
        if out and kind not in ("notes", "skip"):
            out[-1].append(c.get("id"))
    return out


@needs_ruff
@pytest.mark.parametrize("name", ["02_limits_of_rnns", "12_decoder_that_writes"])
def test_a_chinese_deck_shows_its_english_decks_cells_slide_for_slide(name):
    """Co-teachers in two languages share slide numbers (a lecturer's trial: 10's decks had 69 and 71 slides). Shaped
    alone, these two Chinese decks differ from their English ones (a list on one more slide; an exercise's task code
    not needed where the Chinese slide names the function); following the English deck's plan, they do not. Every
    built deck is compared in tests/e2e/test_book_files.py."""
    from tools import book_zh

    rel, twin = f"notebooks/{name}.ipynb", f"notebooks/zh/{name}.ipynb"
    if not (NOTEBOOKS_DIR / "zh" / f"{name}.ipynb").exists():
        pytest.skip("no Chinese twin")
    english = build_book.slides_notebook(json.loads((NOTEBOOKS_DIR / f"{name}.ipynb").read_text("utf-8")), rel)
    staged = book_zh.staged_twin(json.loads((NOTEBOOKS_DIR / "zh" / f"{name}.ipynb").read_text("utf-8")), twin)
    alone = build_book.slides_notebook(staged, rel)
    assert _slides(alone) != _slides(english)  # what the plan is for
    assert _slides(build_book.twin_deck(rel, twin)) == _slides(english)


def test_every_core_result_is_on_a_slide_or_in_the_notes():
    """A ninth lecturer's trial: 14's test score was in neither the deck nor its notes (a core code cell without a
    slide of its own was left out whole). Such a cell's printed result now goes to the notes (and so to the
    handouts), as a cell of the deck; a cell of the exercises (the lab) does not."""
    nb = json.loads((NOTEBOOKS_DIR / "14_encoder_decoder_translates.ipynb").read_text(encoding="utf-8"))
    shown = sections.slides(nb)
    found, _ = sections.sections(nb)
    owner = sections._owners(found, len(nb["cells"]))
    printed = {c["id"] for c in shown["cells"] if c.get("metadata", {}).get("course_printed")}
    wanted = set()
    for cell, section in zip(nb["cells"], owner, strict=True):
        marked = cell["metadata"].get("slideshow", {}).get("slide_type")
        lab = sections._is_lab(*sections._up_to(found, section))
        if cell["cell_type"] == "code" and section.on_deck and not marked and sections._printed(cell) and not lab:
            wanted.add(f"{cell['id']}-printed")
    assert wanted and printed == wanted
    notes = {c["id"]: c["source"] for c in shown["cells"] if c["id"] in printed}
    c40 = next(c for c in nb["cells"] if c["id"] == "c40")  # the test set's checks
    assert sections._printed(c40).splitlines()[0] in notes["c40-printed"]
    assert all(kind == "notes" for kind in (c["metadata"]["slideshow"]["slide_type"] for c in shown["cells"]
                                            if c["id"] in printed))  # fmt: skip


@needs_ruff
def test_a_chinese_slide_shows_as_many_list_items_as_its_english_slide():
    """The ninth lecturer's trial: same slide numbers, but 13's objectives 3-4 / 5-6 in English were 3-5 / 6 in
    Chinese. A translation's long list is shared out over its slides item for item as its English deck's."""
    from tools import book_zh

    name = "13_text_to_tokens"
    rel, twin = f"notebooks/{name}.ipynb", f"notebooks/zh/{name}.ipynb"
    if not book_zh.twins():
        pytest.skip("no Chinese twins")

    def items(nb) -> list[int]:
        pages = [[]]
        for c in nb["cells"]:
            kind = c.get("metadata", {}).get("slideshow", {}).get("slide_type", "-")
            if kind in ("slide", "subslide"):
                pages.append([])
            if kind not in ("notes", "skip") and c["cell_type"] == "markdown":
                pages[-1].append(c["source"])
        return slide_text.items_per_page(["\n\n".join(p) for p in pages])

    english = items(build_book.slides_notebook(json.loads((NOTEBOOKS_DIR / f"{name}.ipynb").read_text("utf-8")), rel))
    assert english[3:5] == [2, 2]  # the learning objectives' second and third slides
    assert items(build_book.twin_deck(rel, twin)) == english


def test_an_output_goes_on_over_the_next_slide_between_blocks_never_inside_one():
    """The eighteenth lecturer's trial: 13's slides 6-7 cut a printed sentence that the deck had folded in two ("the
    test prose has 8,789 words by WORD," on one slide, "2,831 of them punctuation" on the next)."""
    c = cell("code", "show()", "subslide", tags=[deck.OUTPUT_ONLY])
    c.id = "blocks"
    lines = []
    for k in range(5):  # a block: a heading, a line the deck folded at its comma, its fold indented four more
        lines += [f"corpus {k}", f"  words V = {k},074 and then some more words to count,", "      2,831 of them"]
    c.outputs = [nbformat.v4.new_output("stream", text="\n".join(lines) + "\n")]
    first, second = [x for x in shaped(c) if x.metadata["slideshow"]["slide_type"] != "notes"]
    shown, more = first.outputs[0]["text"].splitlines(), second.outputs[0]["text"].splitlines()
    assert shown[-1] == deck.CONTINUED and shown[:-1] + more == lines, "every line once, in order"
    assert deck._indent(more[0]) <= deck._indent(shown[-2]), (shown[-2], more[0])


def test_the_notes_code_fits_a_handouts_page_at_8_pt_and_stays_the_same_program():
    """An eighteenth lecturer's trial: the handouts zoomed deck 14's notes' code to 6.9 pt to fit a line of up to 120
    columns. The notes now hold each cell's code at 109 columns (a long comment on lines of its own above its code,
    wrapped), the same program with the same comment words; only a format string ruff cannot split stays wider."""
    wide = []
    for path in sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")):
        for c in nbformat.read(path, as_version=4).cells:
            if c.cell_type != "code" or all(len(line) <= slide_code.NOTES_COLUMNS for line in c.source.splitlines()):
                continue
            notes = slide_code.for_notes(c.source)
            assert ast.dump(ast.parse(notes)) == ast.dump(ast.parse(c.source)), (path.name, c.source[:80])
            assert _comment_words(c.source) == _comment_words(notes), (path.name, c.source[:80])
            wide += [line for line in notes.splitlines() if slide_code.width(line) > slide_code.NOTES_COLUMNS]
    assert len(wide) <= 2 and all(line.strip().startswith('f"') for line in wide), wide


def _comment_words(code: str) -> list[str]:
    """The words of the comments of ``code``, in order, formatter directives (``# fmt: skip``, ``# noqa``) left out."""
    tokens = slide_code.tokenize.generate_tokens(io.StringIO(code).readline)
    comments = [slide_code.DIRECTIVE.sub("", t.string) for t in tokens if t.type == slide_code.tokenize.COMMENT]
    return [word for comment in comments for word in comment.lstrip("#").split()]


def test_a_chinese_comment_wider_than_the_slide_goes_above_its_code_in_lines_that_fit():
    """A Chinese twin's comments (tools.i18n_code): a Chinese character is 1.7 columns, and ruff cannot break a
    comment, so a slide would have drawn the line wider than its 88 columns."""
    source = "weights = scores.softmax(-1)  # " + "每一行的权重之和为一，" * 6 + "\nprint(weights.shape)"
    shaped_code = slide_code.formatted(source)
    assert all(slide_code.width(line) <= slide_code.COLUMNS for line in shaped_code.splitlines()), shaped_code
    assert ast.dump(ast.parse(shaped_code)) == ast.dump(ast.parse(source))
    assert "".join(_comment_words(shaped_code)) == "".join(_comment_words(source))
