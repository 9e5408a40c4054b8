"""Every decimal number in a notebook's prose is one a cell of that notebook printed (tools/quoted_numbers.py): the
promise "every number you read was produced by the code above it", checked."""

import nbformat
import pytest

from course_lib.paths import NOTEBOOKS_DIR
from tools import quoted_numbers

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_quoted_number_is_printed(path):
    missing = quoted_numbers.missing(nbformat.read(path, as_version=4), path.stem[:2])
    assert missing == [], f"{path.name}: the prose quotes numbers no cell prints: {missing}"


def test_the_checker_finds_an_unprinted_number_and_accepts_a_printed_or_rounded_one():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("Accuracy 0.74 and 85.8 %, weight 0.38, see section 4.1.")]
    code = nbformat.v4.new_code_cell("print(...)")
    code.outputs = [nbformat.v4.new_output("stream", text="acc 0.7412 share 0.858\n")]
    nb.cells.append(code)
    assert quoted_numbers.missing(nb, "99") == ["0.38"], "0.74 rounds from 0.7412, 85.8 % is 0.858, 4.1 a section"
    assert len(quoted_numbers.ALLOWED) <= 8 and all(len(v) <= 6 for v in quoted_numbers.CITED.values()), "short"


def test_a_count_printed_with_thousands_commas_is_read_whole():
    """f"{n:,}" prints 2,894: that is the number 2894 (and its parts stay readable, as in a tuple (1,234))."""
    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("print(...)")
    code.outputs = [nbformat.v4.new_output("stream", text="2,894 of 5,958 words; 1,000,000 steps; shape (1,234)\n")]
    nb.cells = [code]
    printed = quoted_numbers.printed_numbers(nb)
    assert {2894.0, 5958.0, 1_000_000.0, 1234.0, 1.0, 234.0} <= set(printed)
