"""python -m course_lib.classroom.precheck: what the grader's reading would flag, read before a hand-in (a nineteenth
trial: an honest answer flagged at grading time only, no warning in the lab)."""

import nbformat
import pytest

from course_lib.classroom.precheck import VARIANT_LEFT, WHAT_TO_DO, main, report, variant_left


def _assignment(tmp_path, answer, variant="VARIANT = 's1234567'"):
    cells = [
        nbformat.v4.new_code_cell(f"import torch\nimport course_lib as cl\n{variant}"),
        nbformat.v4.new_code_cell(answer),
        nbformat.v4.new_code_cell("cl.check_function(f, reference, inputs)"),
    ]
    meta = [{"locked": True, "solution": False, "grade": False, "grade_id": "setup"},
            {"locked": False, "solution": True, "grade": False, "grade_id": "answer"},
            {"locked": True, "solution": False, "grade": True, "grade_id": "check", "points": 1}]  # fmt: skip
    for cell, nbgrader in zip(cells, meta, strict=True):
        cell.metadata["nbgrader"] = nbgrader
    path = tmp_path / "a14.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def test_a_flagged_line_is_printed_with_its_cell_and_the_exit_status_is_1(tmp_path, capsys):
    path = _assignment(tmp_path, "def f(x):\n    g = getattr\n    return g(cl, 'x')")
    assert report(path)[0] == ("code cell 1 ('def f(x):'): line 2: takes getattr as a value, an alias that could read "
                               "any attribute")  # fmt: skip
    assert main([str(path)]) == 1
    out = capsys.readouterr().out
    assert "the grader's reading flags:\n  code cell 1" in out and out.rstrip().endswith(WHAT_TO_DO)  # and what to do


def test_an_honest_answer_with_a_local_named_like_the_shells_parts_is_clean(tmp_path, capsys):
    path = _assignment(tmp_path, "def f(rows):\n    for parent, token in rows:\n        kernel = parent\n    return 0")
    assert report(path) == [] and main([str(path)]) == 0
    assert capsys.readouterr().out.strip() == f"{path}: nothing the grader's reading flags"


def test_a_missing_notebook_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as raised:
        main([str(tmp_path / "none.ipynb")])
    assert raised.value.code == 2 and "none.ipynb: no such notebook" in capsys.readouterr().err


@pytest.mark.parametrize("answer", [
    "import operator\ndef f(rows):\n    return sorted(rows, key=operator.itemgetter(1))",
    "from pprint import pprint\nimport sys\ndef f(x):\n    print(type(cl), sys.getsizeof(x))\n    return x",
])  # fmt: skip
def test_a_twentieth_trials_honest_lines_are_clean(tmp_path, answer):
    assert report(_assignment(tmp_path, answer)) == []


def test_a_variant_left_at_0_is_said_with_what_to_write(tmp_path, capsys):
    """A twentieth trial: an honest student kept VARIANT = 0 and answered for the text's numbers: zero, no warning."""
    path = _assignment(tmp_path, "def f(x):\n    return x", variant="VARIANT = 0  # your numbers")
    assert report(path) == [] and variant_left(path) and main([str(path)]) == 1
    out = capsys.readouterr().out  # a warning of its own: nothing is "Not graded" for it (a re-check of the trial)
    assert f"nothing the grader's reading flags\n  {VARIANT_LEFT}" in out and WHAT_TO_DO not in out
    assert 'VARIANT = "<your user name>"' in VARIANT_LEFT
    plain = nbformat.read(path, as_version=4)
    for cell in plain.cells:  # the course's own notebook (no nbgrader cells): 0 is its numbers, as it should be
        del cell.metadata["nbgrader"]
    nbformat.write(plain, path)
    assert not variant_left(path) and main([str(path)]) == 0
