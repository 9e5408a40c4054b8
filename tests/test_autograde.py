"""course_lib.classroom.autograde: the class report (the parallel grading itself runs in tests/test_grading.py)."""

import nbformat
import numpy as np
import pytest
import torch

import course_lib as cl
import course_lib.classroom.autograde as autograde
from course_lib.classroom.autograde import ExerciseSummary, GradedCell, autograde_class, by_exercise, format_report
from course_lib.classroom.checks import check_function
from course_lib.classroom.flags import (
    BY_HAND_WITH_LIBRARY,
    MISSING,
    NOT_AUTOGRADED,
    NOT_THE_ASSIGNMENT,
    NOT_YET,
    READ_AS_TAMPERING,
    RECHECKED,
    RENAMED,
    USED_NUMPY,
    flagged,
)
from course_lib.classroom.recheck import FAILED
from course_lib.paths import NOTEBOOKS_DIR


def test_counts_split_full_partial_and_zero_marks_of_an_exercise():
    visible, hidden = {"ann": 1.0, "bob": 1.0, "cy": 0.0, "dee": 0.0}, {"ann": 1.0, "bob": 0.0, "cy": 0.0, "dee": 0.0}
    cells = [GradedCell("a04-exercise-2-tests", 1.0, visible), GradedCell("a04-exercise-2-hidden-tests", 1.0, hidden)]
    summary = ExerciseSummary("a04-exercise-2", cells)
    assert summary.max_score == 2.0 and summary.scores == {"ann": 2.0, "bob": 1.0, "cy": 0.0, "dee": 0.0}
    assert summary.counts() == (1, 1, 2)


def test_the_report_lists_each_exercise_and_each_flagged_submission():
    summaries = [GradedCell("x-exercise-1-tests", 1.0, {"ann": 1.0, "bob": 0.0}),
                 GradedCell("x-exercise-2-tests", 1.0, {"ann": 1.0, "bob": 1.0})]  # fmt: skip
    text = format_report("a00", summaries, {"bob": [("x-exercise-1-tests", "a library shortcut was refused")]})
    assert text.splitlines()[0] == "# a00: 2 submissions"
    assert "| x-exercise-1 | 1 | 1 | 0 | 1 | 0 | 0.50 |" in text
    assert "| x-exercise-2 | 1 | 2 | 0 | 0 | 0 | 1.00 |" in text
    assert "- bob: x-exercise-1-tests (a library shortcut was refused)" in text


def test_the_report_has_a_row_per_exercise_in_exercise_order_with_its_cells_points_together():
    """The eighteenth lecturer's trial: a row per graded cell, hidden tests first, and a "partial" column always 0
    (nbgrader scores a cell all or nothing). An exercise is its visible check and its hidden tests, half a point
    each: one row, in exercise order (10 after 9), partial where a student earned one half; the CSV keeps a column
    per cell, in the same order, visible check first."""
    stem = "12_decoder_that_writes"
    scores = {"ann": (0.5, 0.5), "bob": (0.5, 0.0), "cy": (0.0, 0.0)}
    cells = [GradedCell(f"{stem}-exercise-{n}-{kind}", 0.5, {s: v[k] for s, v in scores.items()})
             for n in (10, 2, 9, 1) for k, kind in ((1, "hidden-tests"), (0, "tests"))]  # fmt: skip
    text = format_report("a12", cells, {})
    rows = [line for line in text.splitlines() if line.startswith(f"| {stem}")]
    assert rows == [f"| {stem}-exercise-{n} | 1 | 1 | 1 | 1 | 0 | 0.50 |" for n in (1, 2, 9, 10)], text
    assert "| exercise | points | full | partial | zero | to mark | mean of the marked |" in text
    assert [s.name for s in by_exercise(cells)] == [f"{stem}-exercise-{n}" for n in (1, 2, 9, 10)]
    assert [c.grade_id for c in by_exercise(cells)[0].cells] == [
        f"{stem}-exercise-1-tests",
        f"{stem}-exercise-1-hidden-tests",
    ]


def test_the_csv_has_a_column_per_graded_cell_in_exercise_order(tmp_path, monkeypatch):
    cells = [GradedCell(f"x-exercise-{n}-{kind}", 0.5, {"ann": 0.5, "bob": 0.0})
             for n in (10, 2) for kind in ("hidden-tests", "tests")]  # fmt: skip
    monkeypatch.setattr(
        autograde, "class_report", lambda root, assignment: (cells, {"bob": [("x-exercise-2-tests", "why")]})
    )
    autograde.write_report(tmp_path, "a12")
    rows = (tmp_path / "reports" / "a12.csv").read_text().splitlines()
    assert rows == [
        "student,x-exercise-2-tests,x-exercise-2-hidden-tests,x-exercise-10-tests,x-exercise-10-hidden-tests,"
        "total so far,flagged,refused NumPy",
        "ann,0.5,0.5,0.5,0.5,2.0,0,0",
        "bob,0.0,0.0,0.0,0.0,0.0,1,0",
    ]


def test_written_answers_not_marked_yet_are_counted_apart():
    """nbgrader scores a changed written answer None until a person marks it (an unchanged one 0 at once): it is
    neither full, partial nor zero, and the mean is that of the marked answers."""
    summary = GradedCell("x-exercise-1-written", 1.0, {"ann": None, "bob": 0.0, "cy": 1.0})
    text = format_report("a00", [summary, GradedCell("x-exercise-2-written", 1.0, {"ann": None})], {})
    assert "| x-exercise-1 | 1 | 1 | 0 | 1 | 1 | 0.50 |" in text
    assert "| x-exercise-2 | 1 | 0 | 0 | 0 | 1 | - |" in text


def test_an_exercise_with_a_check_and_a_written_answer_is_marked_once_both_are():
    """An exercise whose check is graded and whose "why?" a person marks: its points are both cells', and a
    submission whose written answer waits counts under "to mark", not among the marked."""
    cells = [GradedCell("x-exercise-1-written", 1.0, {"ann": None, "bob": 1.0, "cy": 0.0}),
             GradedCell("x-exercise-1-tests", 1.0, {"ann": 1.0, "bob": 1.0, "cy": 1.0})]  # fmt: skip
    (summary,) = by_exercise(cells)
    assert [c.grade_id for c in summary.cells] == ["x-exercise-1-tests", "x-exercise-1-written"]
    assert summary.counts() == (1, 1, 0) and summary.to_mark() == 1
    assert "| x-exercise-1 | 2 | 1 | 1 | 0 | 1 | 1.50 |" in format_report("a00", cells, {})


def _graded_cell(grade_id, ename, evalue):
    cell = nbformat.v4.new_code_cell("check()", metadata={"nbgrader": {"grade_id": grade_id, "grade": True}})
    cell.outputs = [nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[])]
    return cell


def _hand_in_and_grade(submitted, nb, name):
    """The notebook as handed in and as autograded (here the same, but each test cell that passed says what its
    checks verified, as a check does: one that printed nothing is flagged, classroom.flags.SILENT)."""
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution") and not cell.get("outputs"):
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="✓ checked\n")]
    for folder in (submitted, submitted.parents[2] / "autograded" / submitted.parent.name / submitted.name):
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / name)


def test_flags_are_read_from_the_autograded_notebook(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _graded_cell("e1", "AssertionError", "my_softmax raised ShortcutError: aten::_softmax is not available"),
        _graded_cell("e2", "AssertionError", "Not graded: code cell 12 line 1: assigns to cl.check_answer"),
        _graded_cell("e3", "AssertionError", "my_softmax is wrong on trial 1"),  # wrong, not flagged
        _graded_cell("e4", "AssertionError", "Not graded: a cell asked for the file ../../../gradebook.db "
                     "(sqlite3.connect), refused in a graded notebook (another process or thread, ...)"),
        _graded_cell("e5", "Refused", "Not graded: a cell changed how the kernel reads the cells after it (an input "
                     "transformer): the test cell that ran is not the one nbgrader wrote"),
        _graded_cell("e6", "AssertionError", FAILED.format("AssertionError: x: yours, 3, must be a plain int")),
    ]  # fmt: skip
    _hand_in_and_grade(tmp_path / "submitted" / "bob" / "a04", nb, "04.ipynb")
    assert flagged(tmp_path, "a04", "bob") == [
        ("e1", "a library shortcut was refused"),
        ("e2", READ_AS_TAMPERING),  # the guard's line (a fourteenth trial: "a checker was changed" misled)
        ("e4", "not graded: a cell asked for the file ../../../gradebook.db (sqlite3.connect)"),
        ("e5", "not graded: a test cell did not run as written (a transformer)"),
        ("e6", RECHECKED),  # the grader's own run (classroom.recheck), whatever its reason says
    ]


def test_a_graded_cell_deleted_from_the_submission_is_flagged(tmp_path):
    """A twenty-third trial deleted an exercise's two test cells: nbgrader does not put them back, the exercise
    scored 0, and nothing was flagged. A cell the release has and the autograded notebook lacks is now."""
    released = nbformat.v4.new_notebook()
    released.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {"grade_id": gid, **meta}})
                      for gid, meta in (("e1-answer", {"solution": True}), ("e1-tests", {"grade": True}),
                                        ("setup", {"locked": True}), ("e2-tests", {"grade": True}))]  # fmt: skip
    (tmp_path / "release" / "a04").mkdir(parents=True)
    nbformat.write(released, tmp_path / "release" / "a04" / "04.ipynb")
    handed_in = nbformat.from_dict(released)
    del handed_in.cells[3]  # e2's tests; the locked set-up cell is nbgrader's to put back, not a graded cell
    del handed_in.cells[2]
    _hand_in_and_grade(tmp_path / "submitted" / "bob" / "a04", handed_in, "04.ipynb")
    assert flagged(tmp_path, "a04", "bob") == [("e2-tests", MISSING)]
    _hand_in_and_grade(tmp_path / "submitted" / "ann" / "a04", nbformat.from_dict(released), "04.ipynb")
    assert flagged(tmp_path, "a04", "ann") == []


def test_a_submission_that_tampers_is_flagged_even_when_every_check_passed(tmp_path):
    """Issue 44: a getattr alias replaced check_function, every check passed, and the class report listed the
    submission as clean. The report reads the student's cells again with the guard's reading."""
    locked = nbformat.v4.new_code_cell("import torch\nimport course_lib as cl", metadata={"nbgrader": {"locked": True}})
    answer = nbformat.v4.new_code_cell(
        "def decoder_mask(tgt, pad):\n    g = getattr\n    g(cl, '__di' + 'ct__')['check_function'] = print\n"
        "    return torch.zeros(1)",
        metadata={"nbgrader": {"solution": True, "grade_id": "a1"}},
    )
    check = _graded_cell("e1", "", "")
    check.outputs = []  # it passed
    refused = _graded_cell("e2", "AssertionError", "f raised ShortcutError: translator_mask (the check's reference) is")
    nb = nbformat.v4.new_notebook(cells=[locked, answer, check, refused])
    _hand_in_and_grade(tmp_path / "submitted" / "cy" / "a14", nb, "14.ipynb")
    assert flagged(tmp_path, "a14", "cy") == [
        ("e2", "the check's own reference or helper was called"),
        ("14, code cell 1", "tampering: line 2: takes getattr as a value, an alias that could read any attribute"),
    ]


def _by_hand_notebook(
    answer: str, heading: str = "### Exercise 1 (by hand): a masked softmax"
) -> nbformat.NotebookNode:
    locked = "import math\nimport torch\nimport numpy as np\nimport course_lib as cl\nfrom torch import tensor"
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(locked, metadata={"nbgrader": {"locked": True}}),
        nbformat.v4.new_markdown_cell(heading + "\n\nWork out the weights by hand (not with `cl.attention_weights`)."),
        nbformat.v4.new_code_cell(answer, metadata={"nbgrader": {"solution": True, "grade_id": "a1"}}),
        nbformat.v4.new_code_cell("cl.check_answer('w', w, cl.attention_weights(s, m))", metadata={"nbgrader": {
            "grade": True, "grade_id": "e1", "locked": True}}),
    ])  # fmt: skip


@pytest.mark.parametrize(
    "answer, used",
    [
        ("w = cl.attention_weights(s, m)", ["cl.attention_weights"]),  # the fifth lecturer's find (notebook 05)
        (
            "w = torch.tensor(s).masked_fill(~m, -1e9).softmax(0)",
            ["torch.tensor(...).masked_fill(...).softmax", "torch.tensor(...).masked_fill"],
        ),
        ("import torch.nn.functional as G\nw = G.softmax(torch.tensor(s), 0)", ["G.softmax"]),
        ("f = getattr(np, 'exp')\nw = [x / 2 for x in f(s)]", ["np.exp"]),
        ("w = [math.exp(1) / 11.1073, 0.0, 1 / 11.1073]", []),  # a calculator's arithmetic
        ("w = torch.tensor([0.2447, 0.0, 0.0900, 0.6652])", []),  # numbers written down as a tensor
        ("w = tensor([0.2447, 0.0, 0.0900, 0.6652], dtype=torch.float64)", []),
        ('from course_lib.classroom.exercises import unanswered\nw = unanswered("Exercise 1: w")', []),  # the release
    ],
)
def test_a_by_hand_answer_that_computes_with_the_library_is_named(answer, used):
    from course_lib.classroom.calculator import library_calls

    assert library_calls(_by_hand_notebook(answer)) == ([(2, used)] if used else [])
    assert library_calls(_by_hand_notebook(answer, "### Exercise 2: write masked_softmax")) == [], "not by hand"
    assert library_calls(_by_hand_notebook(answer, "### 练习 1（手算）：带掩码的 softmax")) == (
        [(2, used)] if used else []
    )


def test_the_reference_answers_of_the_by_hand_exercises_use_the_library_only_to_write_numbers_down():
    from course_lib.classroom.calculator import library_calls

    paths = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
    assert {p.name: library_calls(nbformat.read(p, as_version=4)) for p in paths} == {p.name: [] for p in paths}


def test_the_student_release_handed_in_unchanged_is_not_flagged_as_computed_with_the_library():
    """Its answer cells import the placeholder ``unanswered`` from course_lib: a release, not a calculation."""
    from course_lib.classroom.calculator import library_calls
    from course_lib.classroom.student import student_notebook

    found = {}
    for path in sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")):
        release, exercises = student_notebook(nbformat.read(path, as_version=4))
        for ex in exercises:
            release.cells[ex.solution_cell].metadata["nbgrader"] = {"solution": True, "grade_id": ex.label}
        found[path.name] = library_calls(release)
    assert found == dict.fromkeys(found, [])


def test_a_by_hand_answer_computed_with_the_library_is_flagged_not_zeroed(tmp_path):
    nb = _by_hand_notebook("w = torch.tensor(s).masked_fill(~m, -1e9).softmax(0)")  # not the check's function
    nb.cells[3].metadata["nbgrader"] = {"grade_id": "e1", "grade": True}  # it passed: the numbers are right
    _hand_in_and_grade(tmp_path / "submitted" / "eve" / "a05", nb, "05.ipynb")
    used = "torch.tensor(...).masked_fill(...).softmax, torch.tensor(...).masked_fill"
    assert flagged(tmp_path, "a05", "eve") == [("05, code cell 2", f"{BY_HAND_WITH_LIBRARY}: {used}")]


@pytest.mark.parametrize(
    "answer, named",
    [
        ("w = cl.attention_weights(s, m)", ["cl.attention_weights"]),  # the tenth lecturer's cl.softmax_jacobian
        ("from course_lib import attention_weights as aw\nw = aw(s, m).tolist()", ["cl.attention_weights"]),
        ("f = cl.attention_weights\nw = [float(x) for x in f(s, m)]", ["cl.attention_weights"]),
        ("%time w = cl.attention_weights(s, m)", ["cl.attention_weights"]),  # a thirteenth trial's n06
        ("%%time\nw = cl.attention_weights(s, m)", ["cl.attention_weights"]),
        ("w = getattr(cl, 'attention_weights')(s, m)", ["cl.attention_weights"]),  # n07
        ("from course_lib import *\nw = attention_weights(s, m)", ["cl.attention_weights"]),  # n08
        ("w = torch.softmax(torch.tensor(s), 0)", []),  # the library, not the check's function: flagged only
        ("w = np.exp(s) / np.exp(s).sum()", []),
        ("w = [0.2447, 0.0, 0.0900, 0.6652]\ncl.check_answer('w', w, [0.24, 0.0, 0.09, 0.67])", []),  # a self-check
    ],
)
def test_a_by_hand_answer_that_calls_its_checks_reference_is_named(answer, named):
    from course_lib.classroom.calculator import reference_calls

    assert reference_calls(_by_hand_notebook(answer)) == ([(2, 3, named)] if named else [])
    assert reference_calls(_by_hand_notebook(answer, "### Exercise 2: write masked_softmax")) == [], "not by hand"


@pytest.mark.parametrize(
    "answer, added",
    [
        ("def helper(s, m):\n    return cl.attention_weights(s, m)", "w = helper(s, m).tolist()"),  # a1_othercell
        ("w = weights(s, m)", "def weights(s, m):\n    return inner(s, m)\n\n\ninner = cl.attention_weights"),
        ("w = helper(s, m)", "helper = lambda s, m: [float(x) for x in cl.attention_weights(s, m)]"),
        ("w = helper(s, m)", "for helper in (cl.attention_weights,):\n    pass"),  # a thirteenth trial's n13
        ("w = tools['j'](s, m)", "tools = {}\ntools['j'] = cl.attention_weights"),  # a fourteenth trial's s05
        ("w = helper(s, m)", "match cl.attention_weights:\n    case helper:\n        pass"),  # s06
        ("w = helper(s, m)", "def setup():\n    global helper\n    helper = cl.attention_weights\n\n\nsetup()"),
        ("w = Box.j(s, m)", "class Box:\n    pass\n\n\nBox.j = cl.attention_weights"),  # s08
    ],
)
def test_a_helper_the_student_wrote_elsewhere_that_calls_the_checks_reference_is_named(answer, added):
    """The twelfth trial's a1_othercell: a helper in one cell that calls the check's reference, used in a cell the
    student added before the check, scored full marks unflagged. The reading follows the student's own cells and
    definitions, transitively, wherever they are (the added cell is before the answer or after it)."""
    from course_lib.classroom.calculator import library_calls, reference_calls

    for at in (2, 3):  # the added cell (no nbgrader metadata) before the answer cell, then after it
        nb = _by_hand_notebook(answer)
        nb.cells.insert(at, nbformat.v4.new_code_cell(added))
        answer_cell, check_cell = (3, 4) if at == 2 else (2, 4)
        assert reference_calls(nb) == [(answer_cell, check_cell, ["cl.attention_weights"])], at
        assert library_calls(nb) == [(answer_cell, ["cl.attention_weights"])], at
    nb = _by_hand_notebook("w = [0.24, 0.0, 0.09, 0.67]")
    nb.cells.append(nbformat.v4.new_code_cell("def unused(s, m):\n    return cl.attention_weights(s, m)"))
    assert reference_calls(nb) == [], "a definition the answer does not use is not the answer's"


def test_the_tenth_lecturers_jacobian_from_the_library_is_read_in_notebook_04():
    """The trial's answer to 04's exercise 1 (by hand: a Jacobian) in the real notebook: its check cell's reference."""
    from course_lib.classroom.calculator import reference_calls

    nb = nbformat.read(NOTEBOOKS_DIR / "04_scaling_and_softmax_gradient.ipynb", as_version=4)
    assert reference_calls(nb) == [], "the reference answers are written down"
    at = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "BEGIN SOLUTION" in c.source
              and "J_ex1 =" in c.source)  # fmt: skip
    nb.cells[at].source = "# BEGIN SOLUTION\nJ_ex1 = cl.softmax_jacobian(a_ex1).tolist()\n# END SOLUTION"
    assert [(i, names) for i, _, names in reference_calls(nb)] == [(at, ["cl.softmax_jacobian"])]


def test_a_by_hand_answer_that_calls_its_checks_reference_is_not_graded_and_flagged(tmp_path):
    """Issue 44 (the tenth trial): ``J_ex1 = cl.softmax_jacobian(a_ex1).tolist()`` scored full marks, flagged only. The
    guard makes that exercise's check raise first thing, with the reason; the report lists it as the check's
    reference called. Another exercise's check is left alone."""
    from course_lib.classroom.guard import GuardSubmission

    nb = _by_hand_notebook("w = cl.attention_weights(s, m)")
    nb.cells[3].metadata["nbgrader"] = {"grade_id": "e1", "grade": True, "locked": True}
    graded = {"grade": True, "locked": True}
    nb.cells += [  # its hidden tests (the eleventh trial: they still gave half the points), then the next exercise
        nbformat.v4.new_code_cell("cl.check_answer('w', w, cl.attention_weights(s2, m2))", metadata={"nbgrader": {
            "grade_id": "e1-hidden", **graded}}),
        nbformat.v4.new_markdown_cell("### Exercise 2: something else"),
        nbformat.v4.new_code_cell("cl.check_answer('x', 1, 1)", metadata={"nbgrader": {"grade_id": "e2", **graded}}),
    ]  # fmt: skip
    guarded, _ = GuardSubmission().preprocess(nb, {"nbgrader": {"student": "eve"}})
    first = guarded.cells[3].source.splitlines()[0]
    assert first.startswith("raise AssertionError(") and "cl.attention_weights" in first, first
    assert guarded.cells[4].source.splitlines()[0] == first, "the exercise's hidden tests too"
    with pytest.raises(AssertionError, match="Not graded: code cell 2 computes its by-hand answer with cl.attention"):
        exec(first, {})
    assert not guarded.cells[6].source.startswith("raise"), "only the exercise whose check it is"
    guarded.cells[3].outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue=first[22:-2])]
    _hand_in_and_grade(tmp_path / "submitted" / "eve" / "a05", guarded, "05.ipynb")
    assert flagged(tmp_path, "a05", "eve") == [
        ("e1", "the check's own reference or helper was called"),
        ("05, code cell 2", f"{BY_HAND_WITH_LIBRARY}: cl.attention_weights"),
    ]


def test_a_notebook_nbgrader_failed_on_is_flagged_not_left_silent(tmp_path):
    """The eleventh trial: nbgrader failed on two submissions (the guard raised on a bad indentation); the marks
    sheet showed them with zeros and the report neither named them nor flagged them. A submitted notebook with no
    autograded notebook is flagged; one that was graded is not."""
    nb = _by_hand_notebook("w = [0.2447, 0.0, 0.0900, 0.6652]")
    _hand_in_and_grade(tmp_path / "submitted" / "amy" / "a05", nb, "05.ipynb")
    (tmp_path / "submitted" / "ali" / "a05").mkdir(parents=True)
    nbformat.write(nb, tmp_path / "submitted" / "ali" / "a05" / "05.ipynb")  # handed in; nbgrader wrote nothing
    assert flagged(tmp_path, "a05", "ali") == [("05", NOT_AUTOGRADED)] and flagged(tmp_path, "a05", "amy") == []


def test_a_notebook_not_autograded_says_why_a_renamed_one_names_its_name_and_one_not_graded_yet_is_not_failed(
    tmp_path,
):
    """The twelfth trial: a notebook handed in under another name was reported as "nbgrader failed", and a report
    written after grading one student listed every other as failed. (nbgrader removes a failed student's autograded
    folder; its gradebook keeps the submission: class_report hands flagged whether nbgrader ran.)"""
    nb = _by_hand_notebook("w = [0.2447, 0.0, 0.0900, 0.6652]")
    (tmp_path / "release" / "a05").mkdir(parents=True)
    nbformat.write(nb, tmp_path / "release" / "a05" / "05.ipynb")
    _hand_in_and_grade(tmp_path / "submitted" / "amy" / "a05", nb, "05.ipynb")
    for student, name in (("ben", "05 (1).ipynb"), ("cat", "05.ipynb")):  # renamed, then not graded yet
        (tmp_path / "submitted" / student / "a05").mkdir(parents=True)
        nbformat.write(nb, tmp_path / "submitted" / student / "a05" / name)
    renamed = RENAMED.format(name="05 (1).ipynb", names="05.ipynb")  # nbgrader ran for ben, and failed
    assert flagged(tmp_path, "a05", "ben", ran=True) == [("05 (1)", renamed)] and "handed in as 05 (1).ipynb" in renamed
    assert flagged(tmp_path, "a05", "cat", ran=False) == [("05", NOT_YET)] and "not autograded yet" in NOT_YET
    assert flagged(tmp_path, "a05", "cat", ran=True) == [("05", NOT_AUTOGRADED)], "graded, nothing written: failed"


def test_a_students_cells_flagged_for_one_reason_are_one_entry_of_the_report():
    """The twelfth trial: the report repeated a long reason once per test cell."""
    why = "not graded: a checker was changed"
    text = format_report(
        "a00", [], {"bob": [("e1", why), ("e2", why), ("05, code cell 4", "tampering: x"), ("e3", why)]}
    )
    assert f"- bob: e1, e2, e3 ({why}); 05, code cell 4 (tampering: x)" in text


def test_a_file_written_while_graded_is_flagged_and_files_nbgrader_copied_are_not(tmp_path):
    """A fourth lecturer's try: a cell wrote the source notebook's reference into hubconf.py and loaded it with
    torch.hub.load, which the reading does not follow; the file it left behind is flagged."""
    graded = tmp_path / "autograded" / "dee" / "a05"
    written = ("hubconf.py", "__pycache__/hubconf.cpython-311.pyc", "code.ipynb")  # code.ipynb: runpy runs any file
    copied = ("05.ipynb", "timestamp.txt", "helper.py", "__pycache__/helper.cpython-311.pyc", "data/extra.csv")
    for name in written + copied:
        (graded / name).parent.mkdir(parents=True, exist_ok=True)
        (graded / name).write_text("")
    nbformat.write(nbformat.v4.new_notebook(), graded / "05.ipynb")
    for folder, name in (("submitted/dee/a05", "05.ipynb"), ("submitted/dee/a05", "timestamp.txt"),
                         ("submitted/dee/a05", "helper.py"), ("source/a05", "data/extra.csv")):  # fmt: skip
        (tmp_path / folder / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / name).write_text("")
    why = "a file the submission wrote while it was graded"
    assert flagged(tmp_path, "a05", "dee") == [(name, why) for name in sorted(written)]


def test_autograde_class_needs_a_course_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="nbgrader course folder"):
        autograde_class(tmp_path, "a04", progress=False)
    with pytest.raises(ValueError, match="jobs must be >= 1, got 0"):
        autograde_class(tmp_path, "a04", jobs=0, progress=False)


def _numpy_refusal() -> str:
    """What a check prints for an honest answer computed in NumPy (course_lib.classroom.reach's message, as raised)."""

    def my_softmax(s):
        e = np.exp(s.numpy())
        return torch.from_numpy(e / e.sum(-1, keepdims=True))

    def scores(g):
        return (torch.randn(2, 3, generator=g),)

    with pytest.raises(AssertionError) as err:
        check_function(my_softmax, lambda s: s.softmax(-1), scores, trials=1, without=cl.SOFTMAX_FUNCTIONS)
    return str(err.value)


def test_the_chinese_editions_refusals_are_read_as_the_english(tmp_path, monkeypatch):
    """In a Chinese assignment's kernel a check's message is Chinese (classroom.messages): the report still tells a
    refused NumPy from a call of the check's own reference, as in English."""
    from course_lib.classroom import messages

    monkeypatch.setattr(messages, "LANGUAGE", "zh")
    refused = _numpy_refusal()

    def top_k(g):
        return torch.randn(3, 7, generator=g), 3

    with pytest.raises(AssertionError) as err:
        check_function(lambda logits, k: cl.top_k_filter(logits, k), cl.top_k_filter, top_k, name="top_k")
    assert "这次检查中不能用 NumPy" in refused and "（检查的参考实现）" in str(err.value)
    nb = nbformat.v4.new_notebook()
    nb.cells = [_graded_cell("e1", "AssertionError", refused), _graded_cell("e2", "AssertionError", str(err.value))]
    _hand_in_and_grade(tmp_path / "submitted" / "ann" / "a04zh", nb, "04.ipynb")
    assert flagged(tmp_path, "a04zh", "ann") == [
        ("e1", USED_NUMPY),
        ("e2", "the check's own reference or helper was called"),
    ]


def test_an_honest_numpy_refusal_is_listed_apart_from_shortcuts(tmp_path):
    """Issue 44: a student who honestly used NumPy in an exercise about tensor operations scores zero for that test,
    as for any refusal, but the report says so in its own words (see notebook 00), not as a shortcut, and does not
    count it among the flagged submissions."""
    refused = _numpy_refusal()
    assert "ShortcutError: NumPy is not available in this check" in refused  # (the message, tests/test_numpy_rule.py)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _graded_cell("e1", "AssertionError", refused),  # check_function's feedback
        _graded_cell("e2", "ShortcutError", refused.split("ShortcutError: ", 1)[1]),  # a cell's own cl.blocked
        _graded_cell("e3", "AssertionError", "my_softmax raised ShortcutError: aten::_softmax is not available"),
    ]
    _hand_in_and_grade(tmp_path / "submitted" / "ann" / "a04", nb, "04.ipynb")
    found = flagged(tmp_path, "a04", "ann")
    assert found == [("e1", USED_NUMPY), ("e2", USED_NUMPY), ("e3", "a library shortcut was refused")]
    summaries = [GradedCell(g, 1.0, {"ann": 0.0, "bob": 0.0, "cy": 1.0}) for g in ("e1", "e2", "e3")]
    text = format_report("a04", summaries, {"ann": found[:2], "bob": found})
    assert "## Flagged submissions: 1\n\n- bob: e3 (a library shortcut was refused)\n" in text
    assert "## Refused NumPy, not flagged: 2" in text and "- ann: e1, e2\n- bob: e1, e2\n" in text
    assert "| e1 | 1 | 1 | 0 | 2 | 0 | 0.33 |" in text  # zero for that test all the same


def test_the_csv_counts_numpy_refusals_apart(tmp_path, monkeypatch):
    summaries = [
        GradedCell("e1", 1.0, {"ann": 0.0, "bob": 0.0}),
        GradedCell("e2", 1.0, {"ann": 1.0, "bob": 0.0}),
    ]
    flags = {"ann": [("e1", USED_NUMPY)], "bob": [("e1", USED_NUMPY), ("e2", "a library shortcut was refused")],
             "cy": [("04", NOT_YET)]}  # fmt: skip
    monkeypatch.setattr(autograde, "class_report", lambda root, assignment: (summaries, flags))
    autograde.write_report(tmp_path, "a04")
    rows = (tmp_path / "reports" / "a04.csv").read_text().splitlines()
    assert rows == ["student,e1,e2,total so far,flagged,refused NumPy", "ann,0.0,1.0,1.0,0,1", "bob,0.0,0.0,0.0,1,1",
                    "cy,0.0,0.0,0.0,1,0"], "a student not graded yet is on the sheet (a thirteenth trial)"  # fmt: skip
    # the eleventh trial read a solution from source/ for full marks: the report says when source/ was readable
    assert autograde.SOURCE_READABLE not in autograde.write_report(tmp_path, "a04")
    (tmp_path / "source" / "a04").mkdir(parents=True)
    assert autograde.write_report(tmp_path, "a04").endswith(autograde.SOURCE_READABLE)


def test_a_notebook_from_the_student_release_is_flagged_as_not_the_assignment(tmp_path):
    """An eighth lecturer's try: the reference answers handed in in the student release's notebook (no nbgrader
    metadata: what the clone and the Colab links open) scored zero with every cell waiting for manual grading, and the
    report did not say why. The release's own notebook (release/aNN/) carries the metadata and is not flagged."""
    from course_lib.classroom.student import student_notebook

    source = nbformat.read(NOTEBOOKS_DIR / "00_start_here.ipynb", as_version=4)
    release, _ = student_notebook(source)
    assert not any("nbgrader" in cell.metadata for cell in release.cells), "the student release has no nbgrader cells"
    _hand_in_and_grade(tmp_path / "submitted" / "ann" / "a00", release, "00_start_here.ipynb")
    assert flagged(tmp_path, "a00", "ann") == [("00_start_here", NOT_THE_ASSIGNMENT.replace("ASSIGNMENT", "a00"))]
    nb = _by_hand_notebook("w = [0.2447, 0.0, 0.0900, 0.6652]")
    _hand_in_and_grade(tmp_path / "submitted" / "bo" / "a05", nb, "05.ipynb")
    assert flagged(tmp_path, "a05", "bo") == []


def test_a_test_cell_of_a_notebook_nbgrader_failed_on_is_zero_and_a_written_answer_waits(tmp_path, monkeypatch):
    """A twenty-first trial: the report's "to mark" counted a submission nbgrader could not grade (its test cells
    wait for a manual grade in the gradebook) as if a person had a written answer to mark."""
    pytest.importorskip("nbgrader")
    from nbgrader.api import Gradebook

    from course_lib.classroom.release import nbgrader_environ

    monkeypatch.setenv("PATH", nbgrader_environ()["PATH"])  # the gradebook runs alembic by name
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        gb.add_assignment("a06")
        gb.add_notebook("x", "a06")
        gb.add_grade_cell("x-exercise-1-tests", "x", "a06", max_score=1, cell_type="code")
        gb.add_grade_cell("x-exercise-2-written", "x", "a06", max_score=1, cell_type="markdown")
        gb.add_student("failed")
        gb.add_submission("a06", "failed")
        for grade in gb.find_submission("a06", "failed").notebooks[0].grades:
            grade.needs_manual_grade = True  # as nbgrader leaves a notebook it failed on
        gb.db.commit()
    monkeypatch.setattr(autograde, "flagged", lambda *args: [])
    (tmp_path / "submitted" / "failed" / "a06").mkdir(parents=True)
    cells, _ = autograde.class_report(tmp_path, "a06")
    scores = {cell.grade_id: cell.scores["failed"] for cell in cells}
    assert scores == {"x-exercise-1-tests": 0.0, "x-exercise-2-written": None}


def test_a_submission_that_takes_far_longer_than_the_class_is_named():
    """A twenty-third trial's ``time.sleep`` cells took 10 min 37 s to grade, with full marks and nothing said."""
    from course_lib.classroom.autograde import slow

    assert slow({"ann": 30.0, "bob": 41.0, "cat": 637.0, "dan": 35.0}) == {"cat": 637.0}
    assert slow({"ann": 30.0, "bob": 100.0}) == {} and slow({}) == {}  # under two minutes: a slow machine, not a wait
