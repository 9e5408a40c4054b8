"""course_lib.classroom.tables: an answer cell holding a table of literal values is flagged for a person to look at (a
twentieth trial's lookup-table cheat scored full marks, unflagged); no reference answer of the course is."""

import nbformat
import pytest

from course_lib.classroom.notebook import find_exercises
from course_lib.classroom.tables import TABLE_VALUES, TEXT_CHARACTERS, literal_table
from course_lib.paths import NOTEBOOKS_DIR

LOOKUP = (
    "ANSWERS = {"
    + ", ".join(f"({i}, {i + 1}): [{i}, -{i}]" for i in range(30))
    + "}\n\n\n"
    + ("def merge(ids, pair, new_id):\n    return ANSWERS[tuple(pair)]\n")
)


@pytest.mark.parametrize("path", sorted(NOTEBOOKS_DIR.glob("[0-9]*.ipynb")), ids=lambda p: p.name[:2])
def test_no_reference_answer_of_the_course_looks_like_a_table(path):
    nb = nbformat.read(path, as_version=4)
    assert [ex.label for ex in find_exercises(nb) if literal_table(nb.cells[ex.solution_cell].source)] == []


def test_a_table_of_answers_is_found_and_counted():
    assert literal_table(LOOKUP) == "120 literal values in tables"  # 30 keys of 2, 30 values of 2
    assert literal_table("x = [" + ", ".join(["1.5"] * (TABLE_VALUES - 1)) + "]") is None  # one short of the limit


def test_a_long_text_is_found_a_docstring_is_not():
    text = "x" * TEXT_CHARACTERS
    assert literal_table(f"TABLE = {text!r}") == f"line 1: a literal of {TEXT_CHARACTERS} characters"
    assert literal_table(f"def f(x):\n    {text!r}\n    return x") is None
    assert literal_table("def broken(:") is None  # a cell that does not parse: it fails when it runs
