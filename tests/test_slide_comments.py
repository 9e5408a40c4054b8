"""The Chinese comments of a Chinese deck's code (tools/slide_comments.py): cut and laid out on the English code, the
same lines on the same slides, comments in Chinese where they fit the slide."""

import io
import json
import tokenize

import pytest

from course_lib.paths import NOTEBOOKS_DIR
from tools import build_book, deck, slide_code, slide_comments

needs_ruff = pytest.mark.skipif(slide_code._ruff() is None, reason="ruff is not installed: slide code is not formatted")


def code_lines(source: str) -> list[str]:
    """The lines of ``source`` with their comments out (a whole-line comment leaves its indentation)."""
    lines = source.split("\n")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            row, column = token.start
            lines[row - 1] = lines[row - 1][:column].rstrip()
    return lines


def comments(source: str) -> list[str]:
    return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]


def test_a_comment_after_code_is_chinese_where_its_line_fits_and_english_where_it_would_not():
    code = "x = q @ k.T  # scores, one row a query\ny = torch.softmax(x, -1) + 0  # weights of each row, summing to one"
    table = {
        "# scores, one row a query": "# 分数，每个查询一行",
        "# weights of each row, summing to one": "# 每一行的权重" * 8,
    }
    shown, kept = slide_comments.with_chinese_comments(code, table)
    first, second = shown.split("\n")
    assert first == "x = q @ k.T  # 分数，每个查询一行"
    assert second == code.split("\n")[1] and kept == 1, "too wide in Chinese: the English comment stays"
    assert all(slide_code.width(line) <= slide_code.COLUMNS for line in shown.split("\n"))


def test_a_block_too_wide_in_chinese_is_wrapped_again_into_its_lines_or_stays_english():
    english = "    # the keys of every position\n    # and the values of each\n    v = x @ w_v"
    wide = ["# " + "每个位置的键" * 9, "# " + "以及值" * 3]  # the first line wider than the slide, the second short
    table = dict(zip(comments(english), wide, strict=True))
    shown, kept = slide_comments.with_chinese_comments(english, table)
    lines = shown.split("\n")
    assert kept == 0 and len(lines) == 3 and lines[2] == "    v = x @ w_v"
    assert all(line.startswith("    # ") and slide_code.width(line) <= slide_code.COLUMNS for line in lines[:2])
    assert "".join(line[6:] for line in lines[:2]) == "每个位置的键" * 9 + "以及值" * 3, "every word, in order"
    too_long = dict(zip(comments(english), ["# " + "键" * 60, "# " + "值" * 60], strict=True))
    assert slide_comments.with_chinese_comments(english, too_long) == (english, 2)


def test_the_comment_table_pairs_a_cells_comments_in_order_and_only_for_the_same_code():
    english = "a = 1  # one\n# two\nb = 2  # noqa: E731"
    chinese = "a = 1  # 一\n# 二\nb = 2  # noqa: E731"
    pairs = slide_comments._pairs(english, chinese)
    assert pairs == [("# one", "# 一"), ("# two", "# 二"), ("# noqa: E731", "# noqa: E731")]
    assert slide_comments._unambiguous(pairs) == {"# one": "# 一", "# two": "# 二"}
    assert slide_comments._pairs(english, chinese.replace("b = 2", "b = 3")) == []
    assert slide_comments._unambiguous([*pairs, ("# one", "# 壹")]) == {"# two": "# 二"}, "two translations: neither"


def test_a_cell_that_keeps_an_english_comment_on_its_slide_has_its_chinese_code_in_the_notes():
    english = {"c1": "weights = scores.softmax(-1)  # one row a query\nprint(weights)"}
    chinese = {"c1": "weights = scores.softmax(-1)  # " + "每个查询一行" * 12 + "\nprint(weights)"}
    shown = {"id": "c1", "cell_type": "code", "metadata": {"slideshow": {"slide_type": "subslide"}}}
    skipped = {"id": "c1-part-2", "cell_type": "code", "metadata": {"slideshow": {"slide_type": "skip"}}}
    cells = [{**shown, "source": english["c1"]}, {**skipped, "source": english["c1"]}]
    out = slide_comments.translated({"cells": cells}, english, chinese)["cells"]
    assert [c["id"] for c in out] == ["c1", "c1-code", "c1-part-2"], "notes after the slide, none for a skipped cell"
    assert out[0]["source"] == english["c1"], "too wide in Chinese: the slide keeps the English comment"
    assert out[1]["metadata"]["slideshow"]["slide_type"] == "notes" and "每个查询一行" in out[1]["source"]


@needs_ruff
@pytest.mark.parametrize("name", ["12_decoder_that_writes", "15_modern_decoder"])
def test_a_chinese_decks_code_slides_show_the_english_lines_with_chinese_comments(name):
    """The Chinese deck showed the English code, comments included, so that its code cells were cut where the
    English ones are (12's and 15's Chinese decks cut a code cell into fewer slides than the English). Its code is
    now cut and laid out on the English code, line for line, and its comments are Chinese; so are the comments of
    the code in its notes (and handouts)."""
    rel, twin = f"notebooks/{name}.ipynb", f"notebooks/zh/{name}.ipynb"
    if not (NOTEBOOKS_DIR / "zh" / f"{name}.ipynb").exists():
        pytest.skip("no Chinese twin")
    english = build_book.slides_notebook(json.loads((NOTEBOOKS_DIR / f"{name}.ipynb").read_text("utf-8")), rel)
    chinese = build_book.twin_deck(rel, twin)
    code = [[c for c in nb.cells if c.cell_type == "code" and slide_comments._shown(c)] for nb in (english, chinese)]
    assert [c.id for c in code[0]] == [c.id for c in code[1]]
    shown = 0
    for en, zh in zip(*code, strict=True):
        assert code_lines(en.source) == code_lines(zh.source), en.id  # the same code, line for line
        assert all(slide_code.width(line) <= slide_code.COLUMNS for line in zh.source.split("\n")), zh.source
        shown += sum(not c.isascii() for c in "".join(comments(zh.source)))
    assert shown, "no Chinese comment on a code slide"
    notes = [c for c in chinese.cells if c.cell_type == "markdown" and c.get("id", "").endswith("-code")]
    twin_cells = json.loads((NOTEBOOKS_DIR.parent / twin).read_text(encoding="utf-8"))["cells"]
    chinese_code = {c["id"]: "".join(c["source"]) for c in twin_cells}
    assert notes and all(c.source.removeprefix("```python\n").removesuffix("\n```")
                         == slide_code.for_notes(deck.clean_code(chinese_code[c.id[: -len("-code")]]))
                         for c in notes)  # fmt: skip
