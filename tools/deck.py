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

BUDGET = 30  # words of prose a slide keeps (headings, formulas, tables and code are kept whole)
KEEP = 40  # a slide of at most this many words is shown whole
ITEM_WORDS = (6, 12)  # each list item keeps its first clause, within these many words
MAX_ITEMS = 6  # a summary pulled from the notes shows at most this many bullets
SHOWN_KINDS = ("slide", "subslide", "fragment", "-")
# Lines that are addressed to the tests or the grader, never to a student in a lecture hall.
MARKER = re.compile(
    r"^\s*#+\s*(NBVAL_\w+|(BEGIN|END) (SOLUTION|HIDDEN TESTS|MARK SCHEME)|nbgrader\b.*)\s*$", re.I | re.M
)
BADGE_LINE = re.compile(r'^\s*<span class="section-badge[^"]*">.*?</span>\s*$', re.M)
LINK = re.compile(r"(?<!!)\[([^\]]+)\]\([^)\s]+\)")
# An atom: a run of non-space characters, where a formula or a code span (spaces and all) counts as one.
ATOM = re.compile(r"(?:\$\$.+?\$\$|\$[^$]+\$|`[^`]+`|[^\s$`])+", re.S)
LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+")


def words(markdown: str) -> int:
    """Visible words of a piece of Markdown: a formula or a code span counts as one, HTML tags as none."""
    text = re.sub(r"<[^>]+>", " ", LINK.sub(r"\1", markdown))
    return sum(1 for atom in ATOM.findall(text) if re.search(r"[\w$`]", atom))


def blocks(markdown: str) -> list[tuple[str, str]]:
    """The Markdown of one cell as (kind, text) blocks: heading, badge, math, table, list, quote, html, para."""
    out: list[tuple[str, str]] = []
    kind, lines, in_math = None, [], False

    def close():
        nonlocal kind, lines
        if lines:
            out.append((kind, "\n".join(lines)))
        kind, lines = None, []

    for line in markdown.splitlines():
        stripped = line.strip()
        if in_math:
            lines.append(line)
            in_math = not stripped.endswith("$$")
            if not in_math and kind == "math":
                close()
            continue
        if stripped.startswith("$$") and kind != "list":
            close()
            kind, lines = "math", [line]
            in_math = not (len(stripped) > 2 and stripped.endswith("$$"))
            if not in_math:
                close()
            continue
        if not stripped:
            close()
            continue
        new = _line_kind(line, stripped, kind)
        if new != kind or new in ("heading", "badge"):
            close()
            kind = new
        lines.append(line)
        in_math = stripped.count("$$") % 2 == 1
    close()
    return out


def _line_kind(line: str, stripped: str, current: str | None) -> str:
    if BADGE_LINE.match(line):
        return "badge"
    if stripped.startswith("#"):
        return "heading"
    if stripped.startswith("|"):
        return "table"
    if stripped.startswith(">"):
        return "quote"
    if LIST_ITEM.match(line) or (current == "list" and line[:1] in " \t"):
        return "list"
    if stripped.startswith("<") and current != "para":
        return "html"
    return current if current in ("para", "quote", "list") else "para"


def shorten(text: str, limit: int) -> str:
    """The first sentence of ``text``; when longer than ``limit`` words, its last clause boundary within them (or
    its first ``limit`` words and an ellipsis). Formulas and code spans are never cut."""
    atoms = ATOM.findall(LINK.sub(r"\1", text))
    ends = [i + 1 for i, a in enumerate(atoms) if re.search(r"[.?!]\**$", a) and not _abbreviation(a)]
    lead = next((i + 1 for i, a in enumerate(atoms) if a.endswith("**")), 0) if atoms[:1] != [""] else 0
    lead = lead if atoms and atoms[0].startswith("**") else 0
    end = next((e for e in ends if e > lead), None)  # a bold lead ("**Step 1.**") joins the sentence after it
    atoms = atoms[:end] if end else atoms
    if len(atoms) > limit:
        cut = [i + 1 for i, a in enumerate(atoms[:limit]) if re.search(r"[,;:]\**$|^[—–]$", a) and i >= limit // 2]
        atoms = atoms[: cut[-1]] if cut else atoms[:limit]
        atoms = _balanced(atoms)
        atoms[-1] = re.sub(r"[,;:—–]+(\**)$", r"\1", atoms[-1])
        atoms.append("…")
    out = " ".join(a for a in atoms if a)
    if out.count("**") % 2:
        out += "**"
    return out


def _balanced(atoms: list[str]) -> list[str]:
    """``atoms`` without the tail that opens a parenthesis it does not close."""
    depth, last_open = 0, None
    for i, atom in enumerate(atoms):
        for ch in re.sub(r"\$[^$]*\$|`[^`]*`", "", atom):
            if ch == "(":
                depth, last_open = depth + 1, (i if depth == 0 else last_open)
            elif ch == ")" and depth:
                depth -= 1
    return atoms[:last_open] if depth and last_open else atoms


def _abbreviation(atom: str) -> bool:
    return atom.lower().rstrip("*") in ("e.g.", "i.e.", "cf.", "vs.", "etc.)") or bool(re.fullmatch(r"\d+\.", atom))


def _list_items(text: str) -> list[tuple[str, str]]:
    """(marker, text) of each top-level item of a Markdown list."""
    items: list[tuple[str, str]] = []
    for line in text.splitlines():
        match = LIST_ITEM.match(line)
        if match and not match[1]:
            items.append((match[2], line[match.end() :]))
        elif items:
            items[-1] = (items[-1][0], items[-1][1] + " " + line.strip())
    return items


def short_list(text: str, budget: int, max_items: int | None = None) -> str:
    """A list with each item cut to its first clause, sized so that the items share ``budget`` words."""
    items = _list_items(text)[:max_items]
    if not items:
        return ""
    low, high = ITEM_WORDS
    limit = max(low, min(high, budget // len(items)))
    return "\n".join(f"{marker} {shorten(item, limit)}" for marker, item in items)


def slide_text(markdown: str, budget: int = BUDGET) -> str:
    """What a Markdown slide shows: headings, formulas, tables and HTML whole; prose cut to fit ``budget``."""
    parts = blocks(markdown)
    if words(markdown) - sum(words(t) for k, t in parts if k == "badge") <= KEEP:
        return "\n\n".join(LINK.sub(r"\1", t) for k, t in parts if k != "badge")
    left = budget - sum(words(t) for k, t in parts if k in ("heading",))
    shown = []
    for kind, text in parts:
        if kind == "badge":
            continue
        if kind in ("heading", "math", "table", "html"):
            shown.append(LINK.sub(r"\1", text))
        elif kind == "list" and left > 0:
            shown.append(short_list(text, max(left, 3 * ITEM_WORDS[0])))
            left -= words(shown[-1])
        elif kind in ("para", "quote") and left > 0:
            prefix = "> " if kind == "quote" else ""
            body = re.sub(r"^\s*>\s?", "", text, flags=re.M) if prefix else text
            sentence = shorten(body, max(left, 8))
            if words(sentence) <= max(left, 8):
                shown.append(prefix + sentence)
                left -= words(sentence)
    return "\n\n".join(shown)


def clean_code(source: str) -> str:
    """Code for a slide: without the lines that mark it for the tests or the grader."""
    return re.sub(r"\n{3,}", "\n\n", MARKER.sub("", source)).strip("\n")


def _kind(cell) -> str:
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-")


def _heading_only(markdown: str) -> bool:
    return all(kind in ("heading", "badge") for kind, _ in blocks(markdown))


def _lead_from_notes(notes: str) -> str:
    """What a heading-only slide borrows from the notes after it: their first list (as bullets) or sentence."""
    parts = [(k, t) for k, t in blocks(notes) if k not in ("heading", "badge")]
    first_list = next((t for k, t in parts if k == "list"), None)
    if first_list:
        return short_list(first_list, 5 * BUDGET // 3, MAX_ITEMS)
    para = next((t for k, t in parts if k == "para"), "")
    return shorten(para, BUDGET) if para else ""


def shape(deck) -> dict:
    """A copy of a deck (``tools.sections.slides``) shaped for a projector; see the module's docstring."""
    deck = copy.deepcopy(deck)
    cells = []
    for i, cell in enumerate(deck["cells"]):
        kind = _kind(cell)
        if cell["cell_type"] == "code" and kind != "skip":
            cell["source"] = clean_code("".join(cell["source"]))
        if cell["cell_type"] != "markdown" or kind not in SHOWN_KINDS:
            cells.append(cell)
            continue
        source = "".join(cell["source"])
        shown = slide_text(source)
        following = _next_notes(deck["cells"], i)
        if _heading_only(source) and following is not None:
            lead = _lead_from_notes("".join(following["source"]))
            shown = "\n\n".join(part for part in (shown, lead) if part)
        cells.append({**cell, "source": shown})
        if shown.strip() != source.strip() and not _heading_only(source):
            notes = {"cell_type": "markdown", "metadata": {"slideshow": {"slide_type": "notes"}}, "source": source}
            if "id" in cell:
                notes["id"] = f"{cell['id']}-notes"
            cells.append(notes)
    deck["cells"] = cells
    return deck


def _next_notes(cells, i: int):
    """The notes cell that follows cell ``i`` (skipped cells between them aside), or None."""
    for cell in cells[i + 1 :]:
        kind = _kind(cell)
        if kind == "notes" and cell["cell_type"] == "markdown":
            return cell
        if kind != "skip":
            return None
    return None
