"""course_lib.classroom.release: nbgrader's release carries the student version's named stubs."""

import nbformat
import pytest

from course_lib.classroom.nbgrader_source import nbgrader_notebook
from course_lib.classroom.release import NamedStubs, StashStubs, configure, generate_preprocessors
from course_lib.classroom.student import student_notebook
from course_lib.paths import NOTEBOOKS_DIR

nbgrader = pytest.importorskip("nbgrader", reason="the grading extra: pip install -e '.[grading]'")
from nbgrader.preprocessors import ClearSolutions, ComputeChecksums  # noqa: E402

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_release_answer_cells_are_the_student_versions_stubs(nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    source, exercises = nbgrader_notebook(nb, nb_path.stem)
    resources = {"language": "python"}
    for step in (StashStubs(), ClearSolutions(), NamedStubs()):
        source, resources = step(source, resources)
    student, student_exercises = student_notebook(nb, banner=False)
    for ex, mine in zip(exercises, student_exercises, strict=True):
        released = source.cells[ex.solution_cell].source
        assert released == student.cells[mine.solution_cell].source, ex.label
        assert "NotImplementedError()" not in released and ex.label in released  # named, not bare


def test_the_steps_sit_around_clear_solutions_before_the_checksums():
    steps = generate_preprocessors()
    at = steps.index(ClearSolutions)
    assert steps[at - 1] is StashStubs and steps[at + 1] is NamedStubs
    assert at + 1 < steps.index(ComputeChecksums)


def test_configure_sets_up_a_course():
    from traitlets.config import Config

    c = Config()
    configure(c)
    assert NamedStubs in c.GenerateAssignment.preprocessors and c.Execute.timeout == 600
    assert any(step.__name__ == "GuardSubmission" for step in c.Autograde.sanitize_preprocessors)


def test_the_feedback_leaves_the_hidden_tests_out_after_reading_the_grades():
    from nbgrader.preprocessors import ClearHiddenTests, GetGrades

    from course_lib.classroom.notebook import HIDDEN_BEGIN
    from course_lib.classroom.release import feedback_preprocessors

    steps = feedback_preprocessors()
    assert steps.index(GetGrades) < steps.index(ClearHiddenTests)  # the grades are read from the full notebook
    source, exercises = nbgrader_notebook(nbformat.read(NOTEBOOKS[0], as_version=4), NOTEBOOKS[0].stem)
    hidden = source.cells[exercises[0].hidden_cell]
    assert HIDDEN_BEGIN in hidden.source
    cleared, _ = ClearHiddenTests()(source, {})
    assert HIDDEN_BEGIN not in cleared.cells[exercises[0].hidden_cell].source


def test_the_feedback_shows_a_failed_checks_message_not_its_traceback():
    from course_lib.classroom.release import ShortTracebacks

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("check()", metadata={"nbgrader": {"grade": True, "grade_id": "t"}})
    quoted = "\x1b[0;32m      7\x1b[0m ### BEGIN HIDDEN TESTS\n      8 check(hidden_inputs)"
    cell.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue="f is wrong on trial 2",
                                           traceback=["Traceback ...", quoted])]  # fmt: skip
    nb.cells = [cell]
    nb, _ = ShortTracebacks()(nb, {})
    assert nb.cells[0].outputs[0]["traceback"] == ["AssertionError: f is wrong on trial 2"]
