"""The Chinese comments of a Chinese deck's code (tools.build_book.twin_deck).

A Chinese deck is shaped on the English code (tools.deck.shape, following the English deck's plan): every code cell
is cut where the English deck cuts it and every line laid out as the English deck lays it out, so that co-teachers
in two languages share slide numbers and see the same lines on each slide. Then each comment a slide shows is put in
Chinese, line for line: a twin's comment has as many lines as its English one, each starting with ``#``
(tools.i18n_code), so the comments of a cell's English and Chinese sources pair up in order (``_pairs``).
A line in Chinese must still fit the slide's ``COLUMNS`` (tools.slide_code.width: a Chinese character takes 1.7
columns of the code font), and no line is added to a slide, so:

- a comment after code is put in Chinese on its line where the line fits; where it would not, **the English comment
  stays on that line**;
- a block of whole-line comments shows its Chinese lines as translated where they fit, else its Chinese text wrapped
  again into as many lines as the block takes on the slide, as even as they can be; where that does not fit either,
  the English block stays.

A cell that keeps an English comment on a slide gets its whole Chinese code in the slide's speaker notes, where a
cell whose slide shows shortened code has it anyway (tools.deck: the ``-code`` notes); a Chinese deck's notes hold
the Chinese code, every comment in Chinese (tools.slide_code.for_notes), and so do its handouts (tools.handouts).

How much this is, on the 16 decks (2026-12-05): a slide shows few comments, since a cell whose code and output are
long loses them on its slide (tools.deck.short_code_cell; 41 cells' notes hold their whole code): 5 comment lines,
each on an exercise's task slide, all 5 in Chinese; no slide keeps an English comment. The rule matters where a slide
shows more: of the 624 translated comment lines in the decks' code cells, shown or not, 253 would not fit in Chinese
where their English stands (234 of them after code).
"""

from __future__ import annotations

import io
import tokenize

from tools import deck, i18n_code
from tools.slide_code import COLUMNS, width, wrapped


def _comment_tokens(source: str) -> list[tokenize.TokenInfo] | None:
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        return [t for t in tokens if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None


def _unambiguous(pairs) -> dict[str, str]:
    """{English: Chinese} from (English, Chinese) pairs, without an English comment given two translations."""
    table: dict[str, str | None] = {}
    for english, chinese in pairs:
        table[english] = chinese if table.get(english, chinese) == chinese else None
    return {english: chinese for english, chinese in table.items() if chinese and chinese != english}


def _pairs(english: str, chinese: str) -> list[tuple[str, str]]:
    """The comments of a cell's English and Chinese sources, paired in order (each as its token: ``#`` and a
    formatter's directive included); none when the two are not the same code with as many comments."""
    a, b = _comment_tokens(english), _comment_tokens(chinese)
    if a is None or b is None or len(a) != len(b) or not i18n_code.same_code(english, chinese):
        return []
    return [(x.string, y.string) for x, y in zip(a, b, strict=True)]


def _blocks(tokens: list[tokenize.TokenInfo], lines: list[str]) -> list[list[tokenize.TokenInfo]]:
    """The comments of a piece of code as a reader meets them: a comment after code alone, whole-line comments one
    under the other at one column together."""
    blocks: list[list[tokenize.TokenInfo]] = []
    for token in tokens:
        row, column = token.start
        alone = not lines[row - 1][:column].strip()
        last = blocks[-1][-1] if blocks else None
        if (alone and last and last.start == (row - 1, column)
                and not lines[row - 2][:column].strip()):  # fmt: skip
            blocks[-1].append(token)
        else:
            blocks.append([token])
    return blocks


def _joined(lines: list[str]) -> str:
    """The words of a comment's lines (``#`` out) as one text: lines joined by a space, or by nothing between two
    Chinese characters."""
    text = ""
    for line in (line.lstrip("#").strip() for line in lines):
        close = text and line and not text[-1].isascii() and not line[0].isascii()
        text += line if close or not text else f" {line}"
    return text


def _even(text: str, count: int, room: float) -> list[str] | None:
    """``text`` wrapped into exactly ``count`` lines of at most ``room`` columns, as even as they can be (the
    narrowest room that takes no more lines), or None."""
    if len(wrapped(text, room)) > count:
        return None
    low, high = 1, int(room)
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if len(wrapped(text, middle)) <= count else (middle + 1, high)
    lines = wrapped(text, low)
    return lines if len(lines) == count else None


def _fitted(block: list[tokenize.TokenInfo], chinese: list[str], lines: list[str], columns: int) -> list[str] | None:
    """The Chinese lines of a block of comments, each to put where its English comment starts, when they fit the
    slide's ``columns`` in the block's lines; None where they do not."""
    before = [lines[t.start[0] - 1][: t.start[1]] for t in block]
    if all(width(code + line) <= columns for code, line in zip(before, chinese, strict=True)):
        return chinese
    if before[0].strip():  # a comment after code: its line has no room to wrap into
        return None
    if any(t.string == line for t, line in zip(block, chinese, strict=True)):  # a line not translated (a directive)
        return None
    text = _joined(chinese)
    even = _even(text, len(block), columns - width(before[0]) - 2)
    return None if even is None else [f"# {line}" for line in even]


def with_chinese_comments(code: str, table: dict[str, str], columns: int = COLUMNS) -> tuple[str, int]:
    """``code`` (what a slide shows of a cell) with its comments that ``table`` translates put in Chinese where they
    fit (see the module's docstring), and how many of them stay English because the Chinese would not fit."""
    tokens = _comment_tokens(code)
    if not tokens:
        return code, 0
    lines, kept = code.split("\n"), 0
    for block in _blocks(tokens, lines):
        chinese = [table.get(t.string, t.string) for t in block]
        if chinese == [t.string for t in block]:
            continue
        fitted = _fitted(block, chinese, lines, columns)
        if fitted is None:
            kept += sum(1 for t in block if t.string in table)
            continue
        for token, line in zip(block, fitted, strict=True):
            row, column = token.start
            lines[row - 1] = lines[row - 1][:column] + line
    return "\n".join(lines), kept


def _source_id(cell_id: str, sources: dict[str, str]) -> str | None:
    """The code cell of the notebook that a deck's cell shows ('c7-part-2' -> 'c7'), or None (an exercise's task)."""
    while cell_id and cell_id not in sources:
        cell_id = cell_id.rpartition("-")[0]
    return cell_id or None


def translated(shaped: dict, english: dict[str, str], chinese: dict[str, str]) -> dict:
    """A deck shaped on the English code with its comments in Chinese, in place (see the module's docstring).
    ``english`` and ``chinese``: the notebook's code cells, id -> source, in the two languages."""
    pairs = {i: _pairs(english[i], chinese[i]) for i in english if i in chinese}
    tables = {i: _unambiguous(cell) for i, cell in pairs.items()}
    shared = _unambiguous(pair for cell in pairs.values() for pair in cell)  # (an exercise's task: no cell of its own)
    cells, noted = [], set()
    for cell in shaped["cells"]:
        source_id = _source_id(cell.get("id", ""), tables)
        cells.append(cell)
        if cell["cell_type"] == "markdown" and source_id and cell.get("id") == f"{source_id}-code":
            cell["source"] = deck.code_notes(deck.clean_code(chinese[source_id]), {"id": source_id})["source"]
            noted.add(source_id)
        if cell["cell_type"] != "code" or not _shown(cell):
            continue
        cell["source"], kept = with_chinese_comments("".join(cell["source"]), tables.get(source_id, shared))
        if kept and source_id and source_id not in noted and not _has_notes(shaped["cells"], source_id):
            cells.append(deck.code_notes(deck.clean_code(chinese[source_id]), {"id": source_id}))
            noted.add(source_id)
    shaped["cells"] = cells
    return shaped


def _shown(cell: dict) -> bool:
    """Whether a code cell of a shaped deck shows its code on a slide."""
    metadata = cell.get("metadata", {})
    skipped = metadata.get("slideshow", {}).get("slide_type") == "skip"
    return not skipped and deck.OUTPUT_ONLY not in metadata.get("tags", [])


def _has_notes(cells: list[dict], source_id: str) -> bool:
    return any(c.get("id") == f"{source_id}-code" for c in cells)
