"""python -m course_lib.classroom.precheck: what the grader's reading would flag, read before a hand-in (a nineteenth
trial: an honest answer flagged at grading time only, no warning in the lab)."""

import nbformat
import pytest

from course_lib.classroom.precheck import main, report


def _assignment(tmp_path, answer):
    cells = [
        nbformat.v4.new_code_cell("import torch\nimport course_lib as cl"),
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
    assert "the grader's reading flags:\n  code cell 1" in capsys.readouterr().out


def test_an_honest_answer_with_a_local_named_like_the_shells_parts_is_clean(tmp_path, capsys):
    path = _assignment(tmp_path, "def f(rows):\n    for parent, token in rows:\n        kernel = parent\n    return 0")
    assert report(path) == [] and main([str(path)]) == 0
    assert capsys.readouterr().out.strip() == f"{path}: nothing the grader's reading flags"


def test_a_missing_notebook_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as raised:
        main([str(tmp_path / "none.ipynb")])
    assert raised.value.code == 2 and "none.ipynb: no such notebook" in capsys.readouterr().err
