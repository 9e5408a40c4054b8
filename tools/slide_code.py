"""Code and printed output laid out for a projected slide: lines of at most ``COLUMNS`` characters, never wrapped by
the browser, and at most ``MAX_LINES`` of them on a slide (tools.deck applies these rules; the notes keep the rest).

The rule, in the order tools.deck applies it to a code cell shown on a slide:

1. Code wider than ``COLUMNS`` is formatted again at that width by ``ruff format`` (the same code; a statement
   breaks where Python allows it, inside brackets, with the indentation ruff gives it); a string literal still too
   wide becomes adjacent literals split at a space (the same string).
2. A cell whose code and output hold more than ``MAX_LINES`` lines (or more words than a slide can hold) loses its
   comments, then its docstrings, then its ``assert`` lines (the printed output shows what they check).
3. Printed output wider than ``COLUMNS``: an aligned table loses the padding between its columns beyond two spaces;
   a table still too wide is cut into column groups stacked one under the other, each with the table's first
   column; any other line is folded after a separator ("; ", ", ", ": ", " | ", or a space), the rest indented.
   Nothing is ever cut inside a word or a number.
4. Output longer than the room left keeps its first lines and a last line "⋮ (N more lines in the notes)".
"""

from __future__ import annotations

import ast
import io
import re
import shutil
import subprocess
import sys
import tokenize
import unicodedata
from pathlib import Path

COLUMNS = 88  # columns a code or output line may take on a slide (at 22 px, DejaVu Sans Mono fits 89.6)
WIDE_CHAR = 1.7  # columns a Chinese character takes (1 em in the CJK subset font, 0.6 em a Latin character)
MAX_LINES = 16  # lines of code and output on one slide
MAX_WORDS = 88  # words of code on one slide, counted between spaces (the browser test allows 90 a slide)
INDENT = "    "  # the indentation of a folded output line's continuation
SEPARATORS = ("; ", ", ", ": ", " | ", " = ", " ")
ELIDED = "⋮ ({} more lines in the notes)"
NOTES_COLUMNS = 109  # columns of the notes' code that fit a handout's page at 8 pt (tools/handout_page.py)


def width(line: str) -> float:
    """The width of a line of text in columns of the slide's monospace font (a Chinese character is wider)."""
    return sum(WIDE_CHAR if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def _ruff() -> str | None:
    local = Path(sys.executable).parent / "ruff"
    return str(local) if local.is_file() else shutil.which("ruff")


DIRECTIVE = re.compile(r"\s*#\s*(fmt:\s*(skip|off|on)|noqa\b[^#]*|type:\s*ignore\S*)\s*$")
STRING_LINE = re.compile(r"""^(\s*)([rRbBfFuU]{0,2})(["'])((?:(?!\3)[^\\]|\\.)*)\3(\s*[,)]*)$""")


def formatted(source: str, columns: int = COLUMNS) -> str:
    """``source`` formatted by ruff at ``columns`` when a line of it is wider (its formatter's directives, such as
    ``# fmt: skip``, out first), and a string literal still too wide split in two adjacent literals at a space (the
    same string); unchanged when none is wider or when it does not parse (IPython magics). Without ruff a wider
    line is an error, never a slide that wraps: ruff comes with the dev and book extras."""
    if all(width(line) <= columns for line in source.splitlines()):
        return source
    source = comments_wrapped(source, columns)  # (a comment ruff cannot break: a Chinese twin's, or a long one)
    if all(width(line) <= columns for line in source.splitlines()):
        return source
    ruff = _ruff()
    if ruff is None:
        raise RuntimeError(f"slide code wider than {columns} columns is formatted by ruff, which is not installed "
                           "(pip install -e '.[book]' or pip install ruff)")  # fmt: skip
    bare = "\n".join(DIRECTIVE.sub("", line) for line in source.splitlines())
    done = subprocess.run(
        [ruff, "format", "--isolated", "--line-length", str(columns), "--stdin-filename", "slide.py", "-"],
        input=bare,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip():
        return source
    return split_strings(done.stdout.rstrip("\n"), columns)


def same_program(changed: str, source: str) -> str:
    """``changed`` when Python reads it as the same program as ``source`` (the same syntax tree), else ``source``."""
    try:
        same = ast.dump(ast.parse(changed)) == ast.dump(ast.parse(source))
    except SyntaxError:
        same = False
    return changed if same else source


def packed(source: str, columns: int = COLUMNS) -> str:
    """Runs of three or more lines holding one item each, as ruff leaves a call too long for one line (the same
    indentation, no comment, each ending in a comma), packed onto as few lines of ``columns`` as hold them (a
    lecturer's trial: 10's print took seven lines of a slide); kept only when Python reads the same program."""
    lines, out, i = source.splitlines(), [], 0
    item = re.compile(r"^(\s+)([^\s#][^#]*,)$")
    while i < len(lines):
        first = item.match(lines[i])
        j = i
        while first and j < len(lines) and (m := item.match(lines[j])) and m[1] == first[1]:
            j += 1
        if j - i < 3:
            out.append(lines[i])
            i += 1
            continue
        row = ""
        for line in lines[i:j]:
            if row and width(f"{row} {line.strip()}") <= columns:
                row = f"{row} {line.strip()}"
            else:
                out += [row] if row else []
                row = line
        out.append(row)
        i = j
    return same_program("\n".join(out), source)


def split_strings(source: str, columns: int = COLUMNS) -> str:
    """Each line that is one string literal wider than ``columns`` (an argument on its own line, as ruff leaves it)
    written as adjacent literals at spaces outside ``{...}``; kept only when Python reads the same program."""
    out = []
    for line in source.splitlines():
        match = STRING_LINE.match(line)
        if width(line) <= columns or not match:
            out.append(line)
            continue
        indent, prefix, quote, body, tail = match.groups()
        room = columns - len(indent) - len(prefix) - 3 - len(tail)
        parts, start, depth, last_space = [], 0, 0, None
        for i, ch in enumerate(body):
            depth += (ch == "{") - (ch == "}") if "f" in prefix.lower() else 0
            if ch == " " and depth == 0:
                last_space = i
            if width(body[start : i + 1]) > room and last_space is not None and last_space > start:
                parts.append(body[start : last_space + 1])
                start, last_space = last_space + 1, None
        parts.append(body[start:])
        out += [f"{indent}{prefix}{quote}{part}{quote}" for part in parts[:-1]]
        out.append(f"{indent}{prefix}{quote}{parts[-1]}{quote}{tail}")
    return same_program("\n".join(out), source)


def without_docstrings(source: str) -> str:
    """Python code without the docstrings of its functions and classes (the book and the notes keep them)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    drop: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and len(node.body) > 1:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                drop.update(range(first.lineno, first.end_lineno + 1))
    return "\n".join(line for i, line in enumerate(source.splitlines(), 1) if i not in drop)


def for_notes(source: str, columns: int = NOTES_COLUMNS) -> str:
    """The full code of a cell for its slide's speaker notes, which the handouts print at 8 pt (``columns`` a line):
    a comment that makes its line wider goes on lines of its own above it, wrapped (``comments_wrapped``), then the
    code is formatted at that width (``formatted``). The same program, every word of its comments kept, in order; a
    handout zoomed deck 14's longer lines down to 6.9 pt (an eighteenth lecturer's trial)."""
    return formatted(comments_wrapped(source, columns), columns)


def comments_wrapped(source: str, columns: int) -> str:
    """``source`` with each comment on a line wider than ``columns`` wrapped on lines of its own, at the line's
    indentation: above its code for a comment after code. Unchanged where that could change the program (a line that
    a string or a backslash carries over from the line before)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    comments = {t.start[0]: t for t in tokens if t.type == tokenize.COMMENT}
    carried = {row for t in tokens if t.start[0] < t.end[0] for row in range(t.start[0] + 1, t.end[0] + 1)}
    lines, out = source.splitlines(), []
    for row, line in enumerate(lines, 1):
        token = comments.get(row)
        if token is None or width(line) <= columns or row in carried or (row > 1 and lines[row - 2].endswith("\\")):
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        words = DIRECTIVE.sub("", token.string).lstrip("#").strip()
        out += [f"{indent}# {part}" for part in wrapped(words, max(columns - len(indent) - 2, 20))]
        if code := line[: token.start[1]].rstrip():
            out.append(code)
    return same_program("\n".join(out), source)


def wrapped(text: str, room: float) -> list[str]:
    """``text`` in lines of at most ``room`` columns as :func:`width` counts them: broken at spaces, and between any
    two Chinese characters (a Chinese comment has no spaces to break at); a word longer than a line is never cut."""
    lines, line = [], ""
    for piece in re.findall(r"[^\x00-\x7f]|[\x21-\x7e]+|\s+", text):
        if line.strip() and width(line + piece.rstrip()) > room:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
    return [*lines, line.rstrip()] if line.strip() else lines


def without_comments(source: str) -> str:
    """Python code without its comments (a ``#`` outside a string literal, found by the tokenizer)."""
    try:
        comments = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    lines = source.splitlines()
    for token in reversed(comments):
        row, col = token.start
        lines[row - 1] = lines[row - 1][:col].rstrip()
    return "\n".join(line for i, line in enumerate(lines) if line or (i and lines[i - 1])).strip("\n")


def pieces(source: str, max_lines: int = MAX_LINES, max_words: int = MAX_WORDS) -> list[str]:
    """``source`` cut into consecutive pieces of at most ``max_lines`` lines and ``max_words`` words (as the browser
    test counts them: between spaces), between top-level statements (at a blank line when one is near). A single
    statement longer than that stays whole."""
    lines = source.splitlines()

    def fits(begin: int, end: int) -> bool:
        return end - begin <= max_lines and len(" ".join(lines[begin:end]).split()) <= max_words

    if fits(0, len(lines)):
        return [source]
    try:
        tree = ast.parse(source).body
    except SyntaxError:
        return [source]
    starts = {0}
    for node in tree:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        while start > 0 and lines[start - 1].lstrip().startswith("#"):  # its comment goes with it
            start -= 1
        starts.add(start)
    starts = sorted(starts)
    out, begin = [], 0
    while not fits(begin, len(lines)):
        cuts = [s for s in starts if begin < s and fits(begin, s)]
        if not cuts:
            later = [s for s in starts if s > begin]
            cut = later[0] if later else len(lines)
        else:
            blank = [s for s in cuts if not lines[s - 1].strip()]
            cut = blank[-1] if blank and blank[-1] - begin >= max_lines // 2 else cuts[-1]
        out.append("\n".join(lines[begin:cut]).strip("\n"))
        begin = cut
    out.append("\n".join(lines[begin:]).strip("\n"))
    return [piece for piece in out if piece.strip()]


# ------------------------------------------------------------------------------------------------ output


def _gaps(lines: list[str], width: int) -> list[tuple[int, int]]:
    """[start, end) of the runs of at least two columns that are blank in every line (padded to ``width``); a ``|``
    drawn in the same column of every line that has text there is a gap too (04's table: "0.00% |   1.5e-01")."""
    blank = [all(c >= len(line) or line[c] in " |" for line in lines) for c in range(width)]
    runs, start = [], None
    for c, is_blank in enumerate([*blank, False]):
        if is_blank and start is None:
            start = c
        elif not is_blank and start is not None:
            if c - start >= 2 and start > 0 and c < width:
                runs.append((start, c))
            start = None
    return runs


def _columns(lines: list[str]) -> list[list[str]] | None:
    """The cells of an aligned text table, one list of strings a line (each cell keeps its spaces: right- and
    left-aligned columns stay aligned), or None when ``lines`` is not one."""
    if len(lines) < 3:
        return None
    width = max(len(line) for line in lines)
    gaps = _gaps(lines, width)
    if not gaps:
        return None
    bars = [[c for c in range(a, b) if all(c < len(line) and line[c] == "|" for line in lines)] for a, b in gaps]
    bounds = [0, *[bar[0] if bar else (a + b) // 2 for (a, b), bar in zip(gaps, bars, strict=True)], width]
    rows = [[line.ljust(width)[a:b] for a, b in zip(bounds, bounds[1:], strict=False)] for line in lines]
    return rows


def _join(rows: list[list[str]]) -> list[str]:
    """Table rows from cells, each column padded to its widest cell (right-aligned when every cell of the column
    that has text ends at the same column in the original), two spaces between columns."""
    out = [""] * len(rows)
    for k in range(len(rows[0])):
        cells = [row[k] for row in rows]
        stripped = [c.strip() for c in cells]
        right = len({len(c.rstrip()) for c, s in zip(cells, stripped, strict=True) if s}) == 1 and k > 0
        left = len({len(c) - len(c.lstrip()) for c, s in zip(cells, stripped, strict=True) if s}) == 1 or k == 0
        width = max(len(s) for s in stripped)
        indent = min((len(c) - len(c.lstrip()) for c, s in zip(cells, stripped, strict=True) if s), default=0)
        for i, s in enumerate(stripped):
            cell = s.rjust(width) if right and not left else s.ljust(width)
            out[i] += (" " * indent + cell) if k == 0 else "  " + cell
    return [line.rstrip() for line in out]


def compact_table(lines: list[str], columns: int = COLUMNS) -> list[str]:
    """An aligned text table narrowed to ``columns``: padding between columns cut to two spaces, then, when still
    too wide, column groups stacked one under the other, each with the first column. Lines that are no table come
    back unchanged."""
    rows = _columns(lines)
    if rows is None:
        return lines
    narrow = _join(rows)
    if max(width(line) for line in narrow) <= columns:
        return narrow
    label = max(width(row[0].rstrip()) for row in rows)
    # a cell of the header alone (08's "(matrix-product FLOPs)") is a note on the table, not a column: it goes first
    notes = [k for k in range(1, len(rows[0])) if rows[0][k].strip() and not any(row[k].strip() for row in rows[1:])]
    sections: list[list[int]] = [[]]  # a column that starts with "|" in every line opens a section: never split
    for k in (k for k in range(1, len(rows[0])) if k not in notes):
        if sections[-1] and all(row[k].strip().startswith("|") for row in rows if row[k].strip()):
            sections.append([])
        sections[-1].append(k)
    groups, group, used = [], [], label
    for section in sections:
        wide = sum(max(width(row[k].strip()) for row in rows) + 2 for k in section)
        if group and used + wide > columns:
            groups.append(group)
            group, used = [], label
        group += section
        used += wide
    groups.append(group)
    out: list[str] = [" ".join(rows[0][k].strip() for k in notes)] if notes else []
    for g, group in enumerate(groups):
        out += ([""] if g else []) + _join([[row[0], *(row[k] for k in group)] for row in rows])
    return out


def fold(line: str, columns: int = COLUMNS) -> list[str]:
    """A line wider than ``columns`` folded after separators, its continuations indented; never inside a word."""
    indent = " " * (len(line) - len(line.lstrip())) + INDENT
    out, rest = [], line
    while width(rest) > columns:
        cut, fits = None, _fitting(rest, columns)
        for sep in SEPARATORS:
            at = rest.rfind(sep, len(indent) + 1, fits - len(sep.rstrip()) + 1)
            if at > fits // 3:
                cut = at + len(sep.rstrip())
                break
        if cut is None:
            break
        out.append(rest[:cut].rstrip())
        rest = indent + rest[cut:].lstrip()
    return [*out, rest]


def _fitting(text: str, columns: float) -> int:
    """How many characters of ``text`` fit in ``columns``."""
    used = 0.0
    for i, ch in enumerate(text):
        used += width(ch)
        if used > columns:
            return i
    return len(text)


def narrow_output(text: str, columns: int = COLUMNS) -> str:
    """Printed text with no line wider than ``columns`` where it can be helped (see the module's docstring)."""
    if all(width(line) <= columns for line in text.splitlines()):
        return text
    out: list[str] = []
    for block in re.split(r"(\n[ \t]*\n)", text.rstrip("\n")):
        if not block.strip():
            out.append(block.strip(" \t").rstrip("\n"))
            continue
        lines = block.split("\n")
        if max(width(line) for line in lines) > columns:
            lines = compact_table(lines, columns)
        out += [part for line in lines for part in (fold(line, columns) if width(line) > columns else [line])]
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def elide(text: str, keep: int) -> tuple[str, bool]:
    """The first ``keep`` lines of ``text`` and a line saying how many more the notes hold; (text, whether cut)."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= keep:
        return text, False
    shown = lines[: max(keep - 1, 1)]
    return "\n".join([*shown, ELIDED.format(len(lines) - len(shown))]) + "\n", True
