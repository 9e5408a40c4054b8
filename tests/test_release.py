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
