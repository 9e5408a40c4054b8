"""The comments of the notebooks' code cells, for the Chinese edition (tools/i18n.py): units of a notebook's
catalogue like its prose, so that a Chinese reader meets Chinese comments in the code too.

A **unit** is a comment after code on its line (``x = q @ k.T  # scores: (B, T, T)``), or a block of whole-line
comments one under the other at the same indentation; its ``msgid`` is the comment as written, ``#`` included, a
block's lines joined by line breaks. Its translation keeps the same number of lines, each starting with ``#``
(tools.i18n.problems: a unit starting with ``#`` keeps its lines), and the numbers; the twin's cell has each comment
replaced where it stood, its indentation kept. Not units: the markers tools and nbgrader read (``# BEGIN
SOLUTION``, ``### BEGIN HIDDEN TESTS``, ``# NBVAL_IGNORE_OUTPUT``), Colab's set-up cell (``#@title``: it is
tools/colab_cell.py's), a formatter's directive (``# fmt: skip``, ``# noqa``: kept after the translated text), and a
comment without a Latin letter. A cell that Python's tokenizer cannot read (an IPython magic it does not know) keeps
its English comments.

Comments are required as prose is: ``check`` reports one not translated, or fuzzy after an English edit (every
comment of every notebook was translated on 2026-12-05). Until it is, the twin keeps it English, so a twin is never
broken by a comment. Only comments change: the twin's code is the English code, token for token
(:func:`same_code`), and its outputs are the English outputs.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

from tools.slide_code import DIRECTIVE

MARKERS = re.compile(r"^#+\s*(?:BEGIN |END |YOUR (?:CODE|ANSWER) HERE|NBVAL_)|^#[@!]")
CODE_WHERE = ":code"  # the end of a code comment unit's place in the catalogue (``notebooks/x.ipynb:<cell id>:code``)


@dataclass(frozen=True)
class Comment:
    first: int  # its first and last line (0-based) in the cell
    last: int
    column: int
    text: str  # the msgid: the comment as written, a block's lines joined by "\n"
    after_code: bool
    directive: str = ""  # a formatter's directive after it, kept untranslated


def _tokens(source: str) -> list[tokenize.TokenInfo] | None:
    try:
        return list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None


def comments(source: str) -> list[Comment]:
    """The comment units of a code cell's ``source``, in order."""
    tokens = None if source.startswith("#@title") else _tokens(source)  # (Colab's set-up: tools.colab_cell's own)
    if tokens is None:
        return []
    lines, found = source.split("\n"), []
    for token in (t for t in tokens if t.type == tokenize.COMMENT):
        (row, column), text = token.start, token.string.rstrip()
        directive = DIRECTIVE.search(text)
        words, kept = (text[: directive.start()], text[directive.start() :]) if directive else (text, "")
        after_code = bool(lines[row - 1][:column].strip())
        if MARKERS.match(words) or not re.search(r"[A-Za-z]", words.lstrip("#")):
            continue
        last = found[-1] if found else None
        if (last and not after_code and not last.after_code and not last.directive and not kept
                and last.last == row - 2 and last.column == column):  # fmt: skip
            found[-1] = Comment(last.first, row - 1, column, f"{last.text}\n{words}", False)
        else:
            found.append(Comment(row - 1, row - 1, column, words.rstrip(), after_code, kept.strip()))
    return found


def units(source: str) -> list[str]:
    return [c.text for c in comments(source)]


def translate(source: str, table: dict[str, str]) -> str:
    """``source`` with each comment unit that ``table`` translates replaced by its translation; the others as they
    are."""
    lines = source.split("\n")
    for c in reversed(comments(source)):
        text = table.get(c.text)
        if not text:
            continue
        tail = f"  {c.directive}" if c.directive else ""
        if c.after_code:
            lines[c.first] = lines[c.first][: c.column] + text + tail
        else:
            lines[c.first : c.last + 1] = [" " * c.column + line for line in text.split("\n")]
    return "\n".join(lines)


def same_code(english: str, chinese: str) -> bool:
    """Whether two cells are the same code, token for token, comments and line breaks aside."""
    kinds = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)
    a, b = _tokens(english), _tokens(chinese)
    if a is None or b is None:
        return english == chinese
    return [(t.type, t.string) for t in a if t.type not in kinds] == [
        (t.type, t.string) for t in b if t.type not in kinds
    ]


def problems(msgid: str, msgstr: str) -> list[str]:
    """What a comment's translation must keep beyond a prose unit's: a comment on every line, where the English had."""
    if any(not line.lstrip().startswith("#") for line in msgstr.split("\n")):
        return ["a code comment's translation: every line starts with #"]
    return []


def is_code(entry) -> bool:
    """Whether a catalogue entry is a code comment's unit (its places end with CODE_WHERE)."""
    return bool(entry.occurrences) and all(where.endswith(CODE_WHERE) for where, _ in entry.occurrences)
