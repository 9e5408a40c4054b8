"""The text of a Markdown slide: what of a cell's prose a projected slide keeps (tools.deck uses it).

A cell of at most ``KEEP`` words is shown whole. A longer one keeps its headings, formulas, tables and HTML, and of
its prose the first sentence of each paragraph and the first clause of each list item, within ``BUDGET`` words; a
wordy table keeps the first clause of each cell. Formulas and code spans count as one word and are never cut.
"""

from __future__ import annotations

import re

BUDGET = 28  # words of prose a slide keeps (headings, formulas, tables and code are kept whole)
KEEP = 38  # a slide of at most this many words is shown whole
ITEM_WORDS = (8, 14)  # each list item keeps its first clause, within these many words
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


def short_table(table: str, limit: int = 7) -> str:
    """A Markdown table whose wordy cells are cut to their first clause (a table of figures stays as it is)."""
    if words(table) <= KEEP:
        return table
    rows = []
    for row in table.splitlines():
        cells = re.split(r"(?<!\\)\|", row.strip().strip("|"))
        if all(re.fullmatch(r"\s*:?-+:?\s*", c) for c in cells):
            rows.append(row)
            continue
        cut = [shorten(c.strip(), limit) if words(c) > limit else c.strip() for c in cells]
        rows.append("| " + " | ".join(cut) + " |")
    return "\n".join(rows)


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
        if kind == "table":
            shown.append(short_table(LINK.sub(r"\1", text)))
        elif kind in ("heading", "math", "html"):
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
