"""What a slide shows, and what goes to the speaker notes: the deck of a notebook, shaped for a projector and the
back row of a hall (issues 29 and 44).

``tools.sections.slides`` picks the cells of a deck (the core path's cells with ``slideshow`` metadata). The prose of
those cells was written for reading; on a projector a slide holds one idea in a few words. ``shape(deck)`` keeps on
each slide its headings, formulas, tables, figures and code, and of its prose whole sentences only
(``tools.slide_text``: the first sentence of a paragraph, the first sentence of every list item, a long list going on
over slides); the cell's full text becomes the slide's speaker notes (reveal.js's speaker view, key ``S``). A slide
that holds only its heading (a Summary, a section's first slide) takes the bullets, or the lead sentence, of the
notes that follow it. Code and its printed output are laid out for the slide's width and height by
``tools.slide_code`` (never wrapped; the notes keep what a slide leaves out); figures are trimmed and cut into panels,
or given a slide of their own, until their text can be read (``tools.slide_figures``). Code loses the markers that the
tests and the grader read (``# NBVAL_IGNORE_OUTPUT``, ``### BEGIN SOLUTION``, ...). Links point at the book's pages.
The notebooks themselves are never changed.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

from tools import slide_code, slide_figures
from tools.slide_text import (
    LINK,
    MAX_SENTENCE,
    blocks,
    first_sentence,
    items_per_page,
    list_lines,
    paginate,
    slide_pages,
    words,
)

CODE_WORDS = 45  # a code cell and its printed output above this many words lose their comments, then output lines
MAX_LINES = slide_code.MAX_LINES  # lines of code and output on a slide
SLIDE_LINES = 22  # lines of code a slide has room for (676 px at 22 px x 1.3), prose and heading counted as lines
CODE_LINE_PX = 28.6  # the height of a line of code (22 px x 1.3)
FIGURE_ROOM = (1208, 676)  # the room of a figure that shares its slide (book/_static/course-slides.css)
SHARED_PX = 48  # the margins and paddings of the cells beside a figure on a shared slide
SLIDE_WORDS = 60  # a code cell that would fill a slide beyond this starts a slide of its own
MEAN_WORDS = 40  # words a slide on average in a deck, at most (the browser test's rule; mean_words counts more)
# printed output on a slide of its own keeps its last few lines rather than send them to a slide of their own (an
# eighth lecturer's trial: 15 of 16 outputs went on over two slides, most for two to four lines): at most this many
# lines and words (as the browser counts them; its limit is 90 a slide) in all
OUTPUT_WORDS, SMALL_REST = 85, 4
FIGURE_WORDS = 20  # a figure after more words than this gets a slide of its own, and the room to be read
SHOWN_KINDS = ("slide", "subslide", "fragment", "-")
OUTPUT_ONLY = "slide-output-only"  # the tag of a code cell whose slide shows its output alone
CONTINUED = "⋮ (continued on the next slide)"  # the last line of an output that goes on over two slides
# Lines that are addressed to the tests or the grader, never to a student in a lecture hall.
MARKER = re.compile(
    r"^\s*#+\s*(NBVAL_\w+|(BEGIN|END) (SOLUTION|HIDDEN TESTS|MARK SCHEME)|nbgrader\b.*)\s*$", re.I | re.M
)


def clean_code(source: str) -> str:
    """Code for a slide: without the lines that mark it for the tests or the grader."""
    return "\n".join(line for line in source.splitlines() if not MARKER.fullmatch(line)).strip("\n")


def code_words(text: str) -> int:
    return sum(1 for token in text.split() if re.search(r"\w", token))


def shown_words(text: str) -> int:
    """Words as the browser test counts code and output: every run of characters between spaces ("->", "|" too)."""
    return len(text.split())


def without_checks(source: str) -> str:
    """Python code without its ``assert`` statements and ``assert_*(...)`` calls (the printed output shows what they
    check); the code as it was when it does not parse. A block that prints a literal ``True`` (``print("claim:",
    True)``, after the asserts that make it so) keeps its checks: without them the slide would show a True made up."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source

    def is_check(node) -> bool:
        call = node.value if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) else None
        name = getattr(call.func, "attr", getattr(call.func, "id", "")) if call else ""
        return isinstance(node, ast.Assert) or name.startswith("assert")

    def reports_true(node) -> bool:  # print(..., True): the line says a check above it passed
        call = node.value if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) else None
        return (
            bool(call)
            and getattr(call.func, "id", "") == "print"
            and any(isinstance(arg, ast.Constant) and arg.value is True for arg in call.args)
        )

    drop = set()
    # Every block keeps a statement (a `with` holding only a check keeps it); a block that prints True keeps its checks
    for node in ast.walk(tree):
        for body in (getattr(node, field, None) for field in ("body", "orelse", "finalbody")):
            if isinstance(body, list) and not all(map(is_check, body)) and not any(map(reports_true, body)):
                for statement in filter(is_check, body):
                    drop.update(range(statement.lineno, statement.end_lineno + 1))
    lines = [line for i, line in enumerate(source.splitlines(), 1) if i not in drop]
    return "\n".join(lines).strip("\n") if any(line.strip() for line in lines) else source


def _output_text(output) -> str:
    text = output.get("text") or output.get("data", {}).get("text/plain", "")
    return "".join(text)


def _is_text(output) -> bool:
    data = output.get("data", {})
    return ("text" in output or "text/plain" in data) and not any(
        k.startswith("image/") or k == "text/html" for k in data
    )


def _set_text(output, text: str) -> None:
    if "text" in output:
        output["text"] = text
    else:
        output["data"]["text/plain"] = text


def _output_lines(cell) -> int:
    return sum(len(_output_text(o).rstrip("\n").split("\n")) for o in cell.get("outputs", []) if _is_text(o))


def short_code_cell(cell) -> str | None:
    """The code of a cell shown on a slide, in place, by the rule of tools.slide_code: formatted at the slide's width;
    when code and output are long (more than CODE_WORDS words or MAX_LINES lines), without comments, then
    docstrings, then checks. Returns the original code for the speaker notes, or None when nothing changed."""
    source = cell["source"]
    printed = [_output_text(o) for o in cell.get("outputs", []) if _is_text(o)]
    out_words, out_lines = sum(code_words(t) for t in printed), _output_lines(cell)

    def long(code: str) -> bool:
        return code_words(code) + out_words > CODE_WORDS or len(code.splitlines()) + out_lines > MAX_LINES

    # Each cut is made on the code as written and formatted again after it: a line that was wide only by its
    # comment fits once the comment is out, and stays one line (not the brackets ruff broke it into with the comment).
    bare = source
    code = slide_code.formatted(bare)
    if long(code):
        bare = slide_code.without_comments(bare)
        code = slide_code.formatted(bare)
    if long(code):
        bare = slide_code.without_docstrings(bare)
        code = slide_code.formatted(bare)
    if long(code) and (code_words(code) > SLIDE_WORDS // 2 or len(code.splitlines()) > MAX_LINES):
        code = slide_code.formatted(without_checks(bare))
    cell["source"] = code
    return None if code == source else source


def _kind(cell) -> str:
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-")


def _heading_only(markdown: str) -> bool:
    return all(kind in ("heading", "badge") for kind, _ in blocks(markdown))


def _lead_from_notes(notes: str) -> list[tuple[str, str]]:
    """What a heading-only slide borrows from the notes after it: their first list (every item's first sentence)
    or their first sentence, as parts for ``slide_text.paginate``."""
    parts = [(k, t) for k, t in blocks(notes) if k not in ("heading", "badge")]
    first_list = next((t for k, t in parts if k == "list"), None)
    if first_list:
        return [("item", line) for line in list_lines(first_list)]
    para = next((t for k, t in parts if k == "para"), "")
    sentence = first_sentence(para)
    return [("para", sentence)] if sentence and words(sentence) <= MAX_SENTENCE else []


# A glossary term's Chinese name after its English one at first use, "**spectral norm** (谱范数)": the English
# notebooks and their notes keep it, an English slide drops it (a lecturer's trial); a Chinese deck has none of these.
CHINESE_TERM = re.compile(r"(?<=[A-Za-z*)\]])\s\([\u4e00-\u9fff]+\)")


def _pages(source: str, following, count: int | None = None, sizes: list[int] | None = None) -> list[str]:
    """The Markdown of the slides a Markdown cell becomes (one, or more for a long list); ``count`` slides where the
    list can be shared out over that many (the English deck's count, for its translation)."""
    if _heading_only(source) and following is not None:
        heads = [(k, LINK.sub(r"\1", t)) for k, t in blocks(source) if k == "heading"]
        lead = _lead_from_notes("".join(following["source"]))
        pages = paginate(heads + lead, heads[0][1] if heads else None, count, sizes) or [""]
    else:
        pages = slide_pages(source, count=count, sizes=sizes)
    return [CHINESE_TERM.sub("", page) for page in pages]


LINK_TARGET = re.compile(r"(?<!!)(\[[^\]]+\]\()([^)\s]+)(\))")


def book_link(target: str, chapter: str | None = None) -> str:
    """The target of a notebook's Markdown link as seen from a deck (build/html/slides/): the book's HTML pages
    instead of the repository's .md and .ipynb files. ``chapter`` is the deck's notebook ('05_masks.ipynb')."""
    if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:
        return target
    path, _, anchor = target.partition("#")
    anchor = f"#{anchor}" if anchor else ""
    if not path:
        return f"../notebooks/{Path(chapter).stem}.html{anchor}" if chapter else target
    if path.endswith(".ipynb") and "/" not in path:
        return f"../notebooks/{path[: -len('.ipynb')]}.html{anchor}"
    if path.endswith(".md"):
        return f"{path[: -len('.md')]}.html{anchor}"
    return target


MATH = re.compile(r"\$\$.*?\$\$|\$[^$]+\$", re.S)


def inline_math_on_one_line(markdown: str) -> str:
    """Markdown whose inline formulas ``$...$`` hold no line break: a formula broken before "+ 1$" would otherwise
    start a list item in nbconvert's Markdown (the book's MyST reads it whole)."""
    return MATH.sub(lambda m: m[0] if m[0].startswith("$$") else m[0].replace("\n", " "), markdown)


def book_links(markdown: str, chapter: str | None = None) -> str:
    """Markdown with every link retargeted by ``book_link``."""
    return LINK_TARGET.sub(lambda m: m[1] + book_link(m[2], chapter) + m[3], markdown)


def shape(deck, chapter: str | None = None, follow: dict | None = None) -> dict:
    """A copy of a deck (``tools.sections.slides``) shaped for a projector; see the module's docstring. ``chapter``
    names the deck's notebook, for the links of its notes to its own sections. Outputs a few lines longer than their
    budget are shown whole (:func:`_small_rest`) unless that takes the deck's words a slide over MEAN_WORDS: fewer
    slides, each fuller (13's deck).

    The shaped deck's metadata holds its ``slide_plan``: for each cell (by id) the words of the slide it joins, the
    slides a Markdown cell became and whether it opened a slide of its own. A translation's deck is shaped with
    ``follow`` set to its English deck's plan and makes the same decisions wherever it can (the same number of slides
    for a long list, the same cells sharing a slide, the same code and output cut), so that co-teachers in two
    languages share slide numbers (tests/test_deck.py; every built deck: tests/e2e/test_book_files.py)."""
    if follow is not None:
        return _shape(deck, chapter, follow["whole_outputs"], follow)
    shaped = _shape(deck, chapter, whole_outputs=True)
    return shaped if mean_words(shaped) <= MEAN_WORDS else _shape(deck, chapter, whole_outputs=False)


def mean_words(deck) -> float:
    """The words a slide of a shaped deck on average, as the browser test counts them (near enough: prose by
    tools.slide_text, code and output between spaces)."""
    per: list[int] = []
    for cell in deck["cells"]:
        kind = _kind(cell)
        if kind in ("slide", "subslide"):
            per.append(0)
        if kind not in SHOWN_KINDS or not per:
            continue
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            per[-1] += words(source)
            continue
        per[-1] += 0 if OUTPUT_ONLY in cell["metadata"].get("tags", []) else shown_words(source)
        per[-1] += sum(shown_words(_output_text(o)) for o in cell.get("outputs", []) if _is_text(o))
    return sum(per) / max(len(per), 1)


def _shape(deck, chapter: str | None, whole_outputs: bool, follow: dict | None = None) -> dict:
    deck = copy.deepcopy(deck)
    cells, on_slide = [], 0  # the words of the slide being filled
    pending: list[dict] = []  # continuation slides of a long list, placed after the notes of its first slide
    plan: dict = {"whole_outputs": whole_outputs, "cells": {}}
    for i, cell in enumerate(deck["cells"]):
        kind = _kind(cell)
        if pending and kind not in ("notes", "skip"):
            cells += pending
            pending = []
        on_slide = 0 if kind in ("slide", "subslide") else on_slide
        english = (follow or {}).get("cells", {}).get(cell.get("id"))
        plan["cells"][cell.get("id")] = mine = {"on_slide": on_slide}
        if cell["cell_type"] == "code" and kind != "skip":
            shaped, on_slide = _code_cells(cell, english["on_slide"] if english else on_slide, whole_outputs)
            cells += shaped
            continue
        if cell["cell_type"] != "markdown" or kind not in SHOWN_KINDS:
            cells.append(cell)
            continue
        source = "".join(cell["source"])
        followed = (english["pages"], english["items"]) if english else ()
        first, *rest = _pages(source, _next_notes(deck["cells"], i), *followed)
        crowded = on_slide and on_slide + words(first) > SLIDE_WORDS
        mine.update(pages=1 + len(rest), alone=bool(crowded and kind in ("fragment", "-")))
        mine["items"] = items_per_page([first, *rest])  # a translation shows as many items on each of its slides
        if (english["alone"] if english else mine["alone"]) and kind in ("fragment", "-"):
            cell = {**cell, "metadata": {**cell["metadata"], "slideshow": {"slide_type": "subslide"}}}
            on_slide = 0
        on_slide += words(first)
        cells.append({**cell, "source": first})
        if first.strip() != source.strip() and not _heading_only(source):
            cells.append(_notes(source, cell, "notes"))
        for k, page in enumerate(rest, 2):
            more = {"cell_type": "markdown", "metadata": {"slideshow": {"slide_type": "subslide"}}, "source": page}
            if "id" in cell:
                more["id"] = f"{cell['id']}-page-{k}"
            pending.append(more)
            on_slide = words(page)
    deck["cells"] = cells + pending
    for cell in deck["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = book_links(inline_math_on_one_line("".join(cell["source"])), chapter)
    deck.setdefault("metadata", {})["slide_plan"] = plan
    return deck


def _cell_words(cell, output_only: bool) -> int:
    """Visible words of a code cell on its slide: its code (unless hidden) and its text outputs."""
    shown = 0 if output_only else code_words(cell["source"])
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if any(kind.startswith("image/") for kind in data):
            continue
        text = "".join(data["text/html"]) if "text/html" in data else _output_text(output)
        shown += code_words(re.sub(r"<[^>]+>", " ", text))
    return shown


def _merged_streams(outputs: list[dict]) -> list[dict]:
    """Outputs with each run of printed text to one stream joined (a line may be split between two of them)."""
    merged: list[dict] = []
    for output in outputs:
        last = merged[-1] if merged else {}
        if output.get("output_type") == "stream" and last.get("output_type") == "stream":
            if last.get("name") == output.get("name"):
                merged[-1] = {**last, "text": _output_text(last) + _output_text(output)}
                continue
        merged.append(output)
    return merged


def _markdown_lines(n_words: int) -> float:
    """The height of a slide's heading and prose of ``n_words`` words, in lines of code (26 px text, 22 px code)."""
    return 2 + n_words / 11 if n_words else 0


def _code_cells(cell, on_slide: int, whole_outputs: bool = True) -> tuple[list[dict], int]:
    """A code cell of the deck, shaped (tools.slide_code): markers out, code and output within the slide's width;
    comments, docstrings and checks out when it is long; moved to a slide of its own when the slide it joins would
    hold more than SLIDE_WORDS or SLIDE_LINES; its output on the next slide when code and output together hold more
    than SLIDE_WORDS or MAX_LINES; code longer than MAX_LINES over several slides; output longer than its room cut
    to its first lines. Returns the cells and the words of the slide it ends."""
    cell["source"] = clean_code("".join(cell["source"]))
    output_only = OUTPUT_ONLY in cell.get("metadata", {}).get("tags", [])
    cell["outputs"] = slide_figures.for_slides(_merged_streams(cell.get("outputs", [])), cell["source"])
    printed = "".join(_output_text(o) for o in cell.get("outputs", []) if _is_text(o))
    for output in cell.get("outputs", []):
        if _is_text(output):
            _set_text(output, slide_code.narrow_output(_output_text(output)))
    full = None if output_only else short_code_cell(cell)
    # cut where ruff's lines say, then each piece's calls of one argument a line packed (tools.slide_code.packed)
    parts = [""] if output_only else [slide_code.packed(part) for part in slide_code.pieces(cell["source"])]
    cell["source"] = "\n".join(parts) if len(parts) == 1 else cell["source"]
    code_lines = len(parts[-1].splitlines())
    n, lines = _cell_words(cell, output_only), code_lines + _output_lines(cell)
    figure = any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))
    first_lines = len(parts[0].splitlines()) + (_output_lines(cell) if len(parts) == 1 else 0)
    crowded = on_slide + n > SLIDE_WORDS or (figure and on_slide > FIGURE_WORDS)
    if (
        on_slide
        and (crowded or _markdown_lines(on_slide) + first_lines > SLIDE_LINES)
        and _kind(cell)
        in (
            "fragment",
            "-",
        )
    ):
        cell["metadata"]["slideshow"] = {"slide_type": "subslide"}
        on_slide = 0
    last = cell
    if len(parts) > 1:  # code longer than a slide: one piece a slide, the output after the last
        cell["source"] = parts[0]
        outputs, cell["outputs"] = cell.get("outputs", []), []
        more = [_code_slide(cell, piece, f"part-{k}") for k, piece in enumerate(parts[1:], 2)]
        more[-1]["outputs"] = outputs
        last, on_slide = more[-1], 0
    else:
        more = []
    room = SLIDE_LINES - 2 if output_only else MAX_LINES - code_lines
    if not output_only and last.get("outputs") and (n > SLIDE_WORDS or lines > MAX_LINES):
        more.append(_output_slide(cell, last["outputs"], "output"))
        last["outputs"], last, room = [], more[-1], SLIDE_LINES - 2
    texts = [o for o in last.get("outputs", []) if _is_text(o)]
    whole = _output_text(texts[0]).rstrip("\n").split("\n") if len(texts) == 1 else []
    alone = last is not cell or (output_only and on_slide == 0)  # the output has its slide to itself
    if whole_outputs and alone and _small_rest(last, max(room, 4)):  # a few lines over the budget: shown whole
        cut = _cap_output(last, SLIDE_LINES - 2, OUTPUT_WORDS, shown_words)
    else:
        cut = _cap_output(last, max(room, 4), SLIDE_WORDS)
    if cut and whole and (rest := _continued(texts[0], whole, whole_outputs)):  # the rest fits one more slide
        cont = _output_slide(cell, [{**texts[0], "text": rest}], "output-continued")
        more = [cont, *more] if last is cell else [*more, cont]
        cut = False
    before = on_slide if last is cell else 0  # the words of prose before the code on its slide
    on_slide = (on_slide if last is cell else 0) + _cell_words(last, OUTPUT_ONLY in last["metadata"].get("tags", []))
    groups = slide_figures.split_outputs(last.get("outputs", []))
    panels = []
    if len(groups) > 1:  # a figure of several panels: one panel a slide
        last["outputs"] = groups[0]
        panels = [_output_slide(cell, group, f"panel-{k}") for k, group in enumerate(groups[1:], 2)]
        on_slide = 0
    more += _figures_alone(cell, last, before) + panels  # the first panel, moved to a slide of its own, first
    if more and more[-1] is not last and _has_figure(more[-1]):
        on_slide = 0
    notes = []
    if full is not None:
        notes.append(code_notes(full, cell))
    if cut:
        notes.append(_notes(f"```\n{printed.rstrip()}\n```", cell, "printed"))  # not "output": the output's slide
    return [cell, *notes, *more], on_slide


def _has_figure(cell) -> bool:
    return any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


def _figures_alone(cell, last, words_before: int) -> list[dict]:
    """Slides of their own for the figures of ``last`` (the slide that ends ``cell``) that would be drawn with their
    smallest text below slide_figures.READABLE px beside what else the slide holds (its code, printed output, the
    prose before it, another figure). Returns the new slides; ``last`` keeps the rest."""
    figures = [o for o in last.get("outputs", []) if "image/png" in o.get("data", {})]
    if not figures:
        return []
    shown_code = OUTPUT_ONLY not in last["metadata"].get("tags", [])
    lines = (len(last["source"].splitlines()) if shown_code else 0) + _output_lines(last)
    lines += _markdown_lines(words_before)
    room = (FIGURE_ROOM[0], FIGURE_ROOM[1] - CODE_LINE_PX * lines - SHARED_PX)

    def readable(output) -> bool:
        size = slide_figures.size(output)
        px = output.get("metadata", {}).get("course", {}).get("text_px", slide_figures.SMALLEST_PT / 72 * 100)
        return room[1] > 0 and px * min(room[0] / size[0], room[1] / size[1]) >= slide_figures.READABLE

    if len(figures) == 1 and (lines == 0 or readable(figures[0])):
        return []
    alone = figures if len(figures) > 1 and lines == 0 else [o for o in figures if lines == 0 or not readable(o)]
    keep = alone[1:] if lines == 0 else alone  # with nothing else on the slide, the first figure stays
    last["outputs"] = [o for o in last["outputs"] if not any(o is k for k in keep)]
    return [_output_slide(cell, [o], f"figure-{k}") for k, o in enumerate(keep, 1)]


def _code_slide(cell, source: str, suffix: str) -> dict:
    """A sub-slide showing ``source``, a piece of the code of ``cell``."""
    piece = copy.deepcopy({**cell, "outputs": []})
    piece["source"] = source
    piece["metadata"]["slideshow"] = {"slide_type": "subslide"}
    if "id" in piece:
        piece["id"] = f"{cell['id']}-{suffix}"
    return piece


def _output_slide(cell, outputs: list[dict], suffix: str) -> dict:
    """A sub-slide showing ``outputs`` of ``cell`` without its code."""
    output = copy.deepcopy({**cell, "outputs": []})
    output["outputs"] = copy.deepcopy(outputs)
    output["metadata"]["slideshow"] = {"slide_type": "subslide"}
    tags = output["metadata"].get("tags", [])
    output["metadata"]["tags"] = tags if OUTPUT_ONLY in tags else [*tags, OUTPUT_ONLY]
    if "id" in output:
        output["id"] = f"{cell['id']}-{suffix}"
    return output


def _small_rest(cell, room: int) -> bool:
    """Whether the text output of ``cell``, cut to ``room`` lines and SLIDE_WORDS words, would leave SMALL_REST lines
    or fewer, and all of it holds OUTPUT_WORDS words or fewer and fits the slide: then it is shown whole."""
    texts = [_output_text(o) for o in cell.get("outputs", []) if _is_text(o)]
    if len(texts) != 1:
        return False
    lines = texts[0].rstrip("\n").split("\n")
    keep, budget = 0, SLIDE_WORDS
    while keep < len(lines) and keep < room and budget - code_words(lines[keep]) >= 0:
        budget -= code_words(lines[keep])
        keep += 1
    return (len(lines) - keep <= SMALL_REST and len(lines) <= SLIDE_LINES - 2
            and shown_words(texts[0]) <= OUTPUT_WORDS)  # fmt: skip


def _cap_output(cell, room: int, budget: int, count=code_words) -> bool:
    """Cut the text outputs of ``cell`` to their first lines, in place, so that they take at most ``room`` lines and
    ``budget`` words (as ``count`` counts them), the last line saying how many more the notes hold; a kept line that
    ends in a colon (``the first training pairs:``) announces what is cut, and goes with it. Returns whether anything
    was cut."""
    cut = False
    for output in cell.get("outputs", []):
        if not _is_text(output):
            continue
        lines = _output_text(output).rstrip("\n").split("\n")
        keep = 0
        while keep < len(lines) and keep < room and budget - count(lines[keep]) >= 0:
            budget -= count(lines[keep])
            keep += 1
        if keep < len(lines):
            while keep > 2 and lines[keep - 2].rstrip().endswith(":"):  # the last line shown (elide) announces the cut
                keep -= 1
            text, _ = slide_code.elide("\n".join(lines), max(keep, 2))
            _set_text(output, text)
            cut, room, budget = True, 0, -1
        else:
            room -= len(lines)
    return cut


def _continued(output, whole: list[str], roomy: bool = True) -> str | None:
    """After ``_cap_output`` cut ``output`` (its lines were ``whole``): the lines it left out, under the header of the
    table they belong to, when they fit one more slide (SLIDE_LINES - 2 lines; OUTPUT_WORDS words as the browser
    counts them, or SLIDE_WORDS when not ``roomy``: a deck over its words a slide), its last line then saying so;
    else None (the notes keep them)."""
    shown = _output_text(output).rstrip("\n").split("\n")[:-1]  # less the line that says how many are cut
    rest = whole[len(shown) :]
    while len(shown) > 2 and rest and _indent(rest[0]) > _indent(shown[-1]):  # a line, or a block, never cut in two
        rest.insert(0, shown.pop())  # (13's "... 8,789 words by WORD," went on as "2,831 of them ..." over the page)
    start = max((i + 1 for i, line in enumerate(shown) if not line.strip()), default=0)  # the block cut in two
    rows = [i for i in range(start, len(shown)) if _data_row(shown[i])]
    head = rows[0] - 1 if rows and rows[0] > start and rest and _data_row(rest[0]) else start  # the line above the rows
    if rest and len(shown) - head >= 2 and slide_code._columns(shown[head:] + rest[:1]) is not None:
        rest = [shown[head], *rest]  # a table cut in its rows goes on under its header (04/27 had none; 10's went on
        # under its title line, the line above its header: a lecturer's trial)
    fits = shown_words("\n".join(rest)) <= OUTPUT_WORDS if roomy else code_words("\n".join(rest)) <= SLIDE_WORDS
    if not shown or len(rest) > SLIDE_LINES - 2 or not fits:
        return None
    _set_text(output, "\n".join([*shown, CONTINUED]) + "\n")
    return "\n".join(rest) + "\n"


def _indent(line: str) -> int:
    """How far a printed line is indented; a blank line as a line at the margin (a block ends there)."""
    return len(line) - len(line.lstrip(" ")) if line.strip() else 0


def _data_row(line: str) -> bool:
    """A row of numbers in a printed table: most of its fields hold a digit (a header's names do not)."""
    fields = [f for f in re.split(r"[\s|]+", line) if f]
    return bool(fields) and sum(bool(re.search(r"\d", f)) for f in fields) > len(fields) / 2


def _notes(source: str, cell, suffix: str) -> dict:
    """A speaker-notes cell holding ``source``, placed after ``cell``."""
    notes = {"cell_type": "markdown", "metadata": {"slideshow": {"slide_type": "notes"}}, "source": source}
    if "id" in cell:
        notes["id"] = f"{cell['id']}-{suffix}"
    return notes


def code_notes(source: str, cell) -> dict:
    """The speaker notes that hold the whole code of ``cell`` (``source``, as a handout prints it: for_notes)."""
    return _notes(f"```python\n{slide_code.for_notes(source)}\n```", cell, "code")


def _next_notes(cells, i: int):
    """The notes cell that follows cell ``i`` (skipped cells between them aside), or None."""
    for cell in cells[i + 1 :]:
        kind = _kind(cell)
        if cell.get("metadata", {}).get("course_printed"):  # a code cell's printed result (tools.sections.slides)
            continue
        if kind == "notes" and cell["cell_type"] == "markdown":
            return cell
        if kind != "skip":
            return None
    return None
