"""What a slide shows, and what goes to the speaker notes: the deck of a notebook, shaped for a projector.

``tools.sections.slides`` picks the cells of a deck (the core path's cells with ``slideshow`` metadata). The prose of
those cells was written for reading; on a projector a slide holds one idea in a few words. ``shape(deck)`` keeps on
each slide its headings, formulas, tables, figures and code, and of its prose the first sentence of a paragraph and
the first clause of each list item, within ``BUDGET`` words; the cell's full text becomes the slide's speaker notes
(reveal.js's speaker view, key ``S``). A slide that holds only its heading (a Summary, a section's first slide) takes
the bullets, or the lead sentence, of the notes that follow it. Code loses the markers that the tests and the grader
read (``# NBVAL_IGNORE_OUTPUT``, ``### BEGIN SOLUTION``, ...). The notebooks themselves are never changed.
"""

from __future__ import annotations

import copy
import re

from tools import slide_figures
from tools.slide_text import BUDGET, blocks, short_list, shorten, slide_text, words

CODE_WORDS = 45  # a code cell and its printed output above this many words lose their comments, then output lines
OUTPUT_LINES = 8
SLIDE_WORDS = 60  # a code cell that would fill a slide beyond this starts a slide of its own
FIGURE_WORDS = 20  # a figure after more words than this gets a slide of its own, and the room to be read
MAX_ITEMS = 6  # a summary pulled from the notes shows at most this many bullets
SHOWN_KINDS = ("slide", "subslide", "fragment", "-")
OUTPUT_ONLY = "slide-output-only"  # the tag of a code cell whose slide shows its output alone
# Lines that are addressed to the tests or the grader, never to a student in a lecture hall.
MARKER = re.compile(
    r"^\s*#+\s*(NBVAL_\w+|(BEGIN|END) (SOLUTION|HIDDEN TESTS|MARK SCHEME)|nbgrader\b.*)\s*$", re.I | re.M
)


def clean_code(source: str) -> str:
    """Code for a slide: without the lines that mark it for the tests or the grader."""
    return "\n".join(line for line in source.splitlines() if not MARKER.fullmatch(line)).strip("\n")


def code_words(text: str) -> int:
    return sum(1 for token in text.split() if re.search(r"\w", token))


def without_comments(source: str) -> str:
    """Python code without its comments (a ``#`` outside a string literal, found by the tokenizer)."""
    import io
    import tokenize

    try:
        comments = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    lines = source.splitlines()
    for token in reversed(comments):
        row, col = token.start
        lines[row - 1] = lines[row - 1][:col].rstrip()
    return "\n".join(line for i, line in enumerate(lines) if line or (i and lines[i - 1])).strip("\n")


def without_checks(source: str) -> str:
    """Python code without its ``assert`` statements and ``assert_*(...)`` calls (the printed output shows what they
    check); the code as it was when it does not parse."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    drop = set()
    for node in ast.walk(tree):
        call = node.value if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) else None
        name = getattr(call.func, "attr", getattr(call.func, "id", "")) if call else ""
        if isinstance(node, ast.Assert) or name.startswith("assert"):
            drop.update(range(node.lineno, node.end_lineno + 1))
    lines = [line for i, line in enumerate(source.splitlines(), 1) if i not in drop]
    return "\n".join(lines).strip("\n") if any(line.strip() for line in lines) else source


def _output_text(output) -> str:
    text = output.get("text") or output.get("data", {}).get("text/plain", "")
    return "".join(text)


def short_code_cell(cell) -> str | None:
    """Shorten a code cell shown on a slide, in place, when it and its output are too long to read from a hall:
    first its comments go, then the lines of its text outputs beyond OUTPUT_LINES. Returns the original code for
    the speaker notes, or None when nothing changed."""
    source = cell["source"]
    outputs = [o for o in cell.get("outputs", []) if "text" in o or "text/plain" in o.get("data", {})]
    total = code_words(source) + sum(code_words(_output_text(o)) for o in outputs)
    if total <= CODE_WORDS:
        return None
    cell["source"] = without_comments(source)
    if code_words(cell["source"]) > SLIDE_WORDS // 2:
        cell["source"] = without_checks(cell["source"])
    left = OUTPUT_LINES
    for output in outputs:
        if "image/png" in output.get("data", {}) or "text/html" in output.get("data", {}):
            continue
        lines = _output_text(output).splitlines(keepends=True)
        kept = lines[:left] + (["…\n"] if len(lines) > left else [])
        left = max(left - len(lines), 0)
        if output.get("output_type") == "stream":
            output["text"] = "".join(kept)
        else:
            output["data"]["text/plain"] = "".join(kept)
    return source


def _kind(cell) -> str:
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-")


def _heading_only(markdown: str) -> bool:
    return all(kind in ("heading", "badge") for kind, _ in blocks(markdown))


def _lead_from_notes(notes: str) -> str:
    """What a heading-only slide borrows from the notes after it: their first list (as bullets) or sentence."""
    parts = [(k, t) for k, t in blocks(notes) if k not in ("heading", "badge")]
    first_list = next((t for k, t in parts if k == "list"), None)
    if first_list:
        return short_list(first_list, 11 * MAX_ITEMS, MAX_ITEMS)
    para = next((t for k, t in parts if k == "para"), "")
    return shorten(para, BUDGET) if para else ""


def shape(deck) -> dict:
    """A copy of a deck (``tools.sections.slides``) shaped for a projector; see the module's docstring."""
    deck = copy.deepcopy(deck)
    cells, on_slide = [], 0  # the words of the slide being filled
    for i, cell in enumerate(deck["cells"]):
        kind = _kind(cell)
        on_slide = 0 if kind in ("slide", "subslide") else on_slide
        if cell["cell_type"] == "code" and kind != "skip":
            shaped, on_slide = _code_cells(cell, on_slide)
            cells += shaped
            continue
        if cell["cell_type"] != "markdown" or kind not in SHOWN_KINDS:
            cells.append(cell)
            continue
        source = "".join(cell["source"])
        shown = slide_text(source)
        following = _next_notes(deck["cells"], i)
        if _heading_only(source) and following is not None:
            lead = _lead_from_notes("".join(following["source"]))
            shown = "\n\n".join(part for part in (shown, lead) if part)
        on_slide += words(shown)
        cells.append({**cell, "source": shown})
        if shown.strip() != source.strip() and not _heading_only(source):
            cells.append(_notes(source, cell, "notes"))
    deck["cells"] = cells
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


def _code_cells(cell, on_slide: int) -> tuple[list[dict], int]:
    """A code cell of the deck, shaped: markers out; comments and long outputs cut when it is wordy; moved to a
    slide of its own when the slide it joins would hold more than SLIDE_WORDS; its output on the next slide when
    code and output together hold more. Returns the cells and the words of the slide it ends."""
    cell["source"] = clean_code("".join(cell["source"]))
    output_only = OUTPUT_ONLY in cell.get("metadata", {}).get("tags", [])
    full = None if output_only else short_code_cell(cell)
    n = _cell_words(cell, output_only)
    figure = any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))
    crowded = on_slide + n > SLIDE_WORDS or (figure and on_slide > FIGURE_WORDS)
    if on_slide and crowded and _kind(cell) in ("fragment", "-"):
        cell["metadata"]["slideshow"] = {"slide_type": "subslide"}
        on_slide = 0
    shaped = [cell]
    if output_only and n > SLIDE_WORDS:  # a wordy printout: its first lines, all of it in the notes
        printed = "".join(_output_text(o) for o in cell.get("outputs", []))
        _cap_output_words(cell, SLIDE_WORDS)
        shaped.append(_notes(f"```\n{printed}\n```", cell, "output"))
        n = _cell_words(cell, True)
    if not output_only and n > SLIDE_WORDS and cell.get("outputs"):
        shaped.append(_output_slide(cell, cell["outputs"], "output"))
        cell["outputs"] = []
        _cap_output_words(shaped[-1], SLIDE_WORDS)
        on_slide = _cell_words(shaped[-1], True)
    else:
        on_slide += n
    groups = slide_figures.split_outputs(shaped[-1].get("outputs", []))
    if len(groups) > 1:  # a figure of several panels: one panel a slide
        shaped[-1]["outputs"] = groups[0]
        shaped += [_output_slide(cell, group, f"panel-{k}") for k, group in enumerate(groups[1:], 2)]
        on_slide = 0
    if full is not None:
        shaped.insert(1, _notes(f"```python\n{full}\n```", cell, "code"))
    if not output_only and code_words(cell["source"]) > SLIDE_WORDS + 20 and "\n\n" in cell["source"]:
        head, tail = cell["source"].rsplit("\n\n", 1)  # a long definition, then its use: two slides
        second = {**copy.deepcopy(cell), "source": tail, "metadata": {**copy.deepcopy(cell["metadata"])}}
        second["metadata"]["slideshow"] = {"slide_type": "subslide"}
        if "id" in second:
            second["id"] = f"{cell['id']}-part-2"
        cell["source"], cell["outputs"], shaped[0] = head, [], cell
        shaped.insert(1 + (full is not None), second)
    return shaped, on_slide


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


def _cap_output_words(cell, budget: int) -> None:
    """Cut the text outputs of ``cell`` after the line that reaches ``budget`` words, in place."""
    for output in cell.get("outputs", []):
        if not ("text" in output or "text/plain" in output.get("data", {})) or "image/png" in output.get("data", {}):
            continue
        kept = []
        for line in _output_text(output).splitlines(keepends=True):
            if budget - code_words(line) < 0:
                kept.append("…\n")
                budget = -1
                break
            kept.append(line)
            budget -= code_words(line)
        if "text" in output:
            output["text"] = "".join(kept)
        else:
            output["data"]["text/plain"] = "".join(kept)


def _notes(source: str, cell, suffix: str) -> dict:
    """A speaker-notes cell holding ``source``, placed after ``cell``."""
    notes = {"cell_type": "markdown", "metadata": {"slideshow": {"slide_type": "notes"}}, "source": source}
    if "id" in cell:
        notes["id"] = f"{cell['id']}-{suffix}"
    return notes


def _next_notes(cells, i: int):
    """The notes cell that follows cell ``i`` (skipped cells between them aside), or None."""
    for cell in cells[i + 1 :]:
        kind = _kind(cell)
        if kind == "notes" and cell["cell_type"] == "markdown":
            return cell
        if kind != "skip":
            return None
    return None
