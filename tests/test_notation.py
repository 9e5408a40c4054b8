"""One notation for the whole course (docs/glossary.md, "Notation"; issue 31): the notebooks' prose uses the symbols
stated there, and none of the old ones: $D_h$ or $N_h$ or $d_\\text{head}$ for the width and number of heads (the course
writes $d_k$ and $H$), $L_q$/$L_k$ for the numbers of queries and keys ($L$ and $S$), and column-vector projections
such as $W_q x$ (tokens are row vectors: $x W_q$)."""

import json
import re

import pytest

from course_lib.paths import NOTEBOOKS_DIR, ROOT

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
GLOSSARY = ROOT / "docs" / "glossary.md"
# A cell that quotes a paper in the paper's own symbols says so with this HTML comment (invisible when rendered),
# and maps them to the course's symbols in the same cell.
PAPERS_NOTATION = "<!-- paper's notation"
OLD = {
    r"(?<![\w\\])D_h\b|D_\{h\}": "the width of one head is $d_k$",
    r"(?<![\w\\])N_h\b|N_\{h\}": "the number of heads is $H$",
    r"d_\{?\\text\{head\}|(?<![\w`])d_head\b(?!`)": "the width of one head is $d_k$",
    r"(?<![\w\\])L_q\b|(?<![\w\\])L_k\b|L_\{q\}|L_\{k\}": "the numbers of queries and keys are $L$ and $S$",
    r"(?<![\w\\])W_\{?[qkvQKV]\}?(?:\^\{?\(h\)\}?)?\s*x\b": "tokens are row vectors: $x W_q$, not $W_q x$",
    r"d_\{\\text\{model\}\}\s*/\s*h\b": "the number of heads is $H$ (lower-case $h$ numbers one head)",
}


def prose(path) -> list[tuple[int, str]]:
    """(cell index, Markdown text) up to "Further reading", without code blocks, code spans and link targets."""
    out = []
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        if re.match(r"\s*##\s+Further reading", text, re.I):
            break
        text = re.sub(r"```.*?```", " ", text, flags=re.S)
        text = re.sub(r"`[^`\n]*`|\]\([^)]*\)", " ", text)
        out.append((i, text))
    return out


def old_symbols(cells: list[tuple[int, str]]) -> list[str]:
    found = []
    for i, text in cells:
        for pattern, rule in OLD.items():
            if PAPERS_NOTATION in text and ("D_h" in pattern or "N_h" in pattern):
                continue
            for m in re.finditer(pattern, text):
                context = text[max(0, m.start() - 40) : m.end() + 40].replace("\n", " ")
                found.append(f"markdown cell {i}: {m[0]!r} ({rule}): ...{context}...")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_prose_uses_the_course_notation(path):
    found = old_symbols(prose(path))
    assert not found, f"{path.name}: old symbols (see docs/glossary.md#notation):\n" + "\n".join(found)


def test_the_checker_flags_old_symbols_and_spares_code_and_quoted_papers():
    cells = [
        (0, "Heads of width $D_h = D/H$, $N_h$ of them, a projection $q = W_q x$, $L_q = 5$ queries."),
        (1, "Code such as `Q.view(B, L, H, D_h)` and $x W_q$ with $d_k$, $H$, $L$, $S$ is fine."),
        (2, "<!-- paper's notation: quoted -->\n> with $N_h$ heads of dimension $D_h$ ..."),
    ]
    cells = [(i, re.sub(r"`[^`\n]*`", " ", t)) for i, t in cells]
    found = old_symbols(cells)
    assert [f.split(":")[0] for f in found] == ["markdown cell 0"] * 4, found


def test_the_notation_is_stated_once_and_linked_from_notebook_00():
    glossary = GLOSSARY.read_text(encoding="utf-8")
    assert glossary.count("\n## Notation\n") == 1
    table = glossary.split("\n## Notation\n")[1].split("\n## ")[0]
    for symbol in ("$d_k$", "$d_v$", "$H$", "$n$", "$L$, $S$", "$Q = X W_q$"):
        assert symbol in table, f"the Notation table does not define {symbol}"
    start = "".join("".join(c["source"]) for c in json.loads(NOTEBOOKS[0].read_text(encoding="utf-8"))["cells"])
    assert "glossary.md#notation" in start, "notebook 00 should point at the notation table"
