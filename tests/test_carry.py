"""python -m course_lib.classroom.carry: a student's answers from the notebook they worked in (the student release's
copy) into the assignment's notebook (nbgrader's release), matched by cell id; nothing else of the assignment
changes (an eighteenth lecturer's trial: students copied answers by hand, cell by cell)."""

import copy

import nbformat
import pytest

from course_lib.classroom import carry
from course_lib.classroom.nbgrader_source import nbgrader_notebook
from course_lib.classroom.notebook import set_variant
from course_lib.classroom.student import student_notebook
from course_lib.paths import NOTEBOOKS_DIR

NOTEBOOK = NOTEBOOKS_DIR / "04_scaling_and_softmax_gradient.ipynb"  # code answers, by-hand answers, a written one


def _made():
    """(full notebook, lab: the student version, assignment: nbgrader's source with the student version's stubs,
    which is what nbgrader's release holds: test_release checks the two are equal)."""
    full = nbformat.read(NOTEBOOK, as_version=4)
    lab, _ = student_notebook(full, banner=False)
    assignment, _ = nbgrader_notebook(copy.deepcopy(full), NOTEBOOK.stem)
    stubs = {c.get("id"): c.source for c in lab.cells}
    for cell in assignment.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            cell.source = stubs[cell.id] if cell.cell_type == "code" else cell.source.split("**Model answer")[0]
            if cell.cell_type == "markdown":
                cell.source += "YOUR ANSWER HERE"
    return full, lab, assignment


def _answers(nb):
    return {c.id: c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")}


def test_every_answer_of_the_lab_is_carried_and_nothing_else_changes():
    full, lab, assignment = _made()
    solutions = {c.id: c.source for c in full.cells}
    answered = [c for c in lab.cells if c.id in _answers(assignment)]
    for cell in answered:  # the student answers every exercise in the lab: the reference's code, their own words
        cell.source = solutions[cell.id] if cell.cell_type == "code" else cell.source.replace(
            "*Your answer (double-click to edit):* ...", "Each row of J sums to zero because ...")  # fmt: skip
    before = copy.deepcopy(assignment)
    said = carry.carry(lab, assignment)
    assert len(said) == len(answered) and all(line.endswith(": carried") for line in said), said
    for old, new in zip(before.cells, assignment.cells, strict=True):
        if old.id in _answers(before):
            assert new.source == next(c.source for c in lab.cells if c.id == old.id)
        else:
            assert new == old, "a cell other than an answer changed"
        assert new.metadata == old.metadata
    assert any(line.startswith("Exercise 1, written answer") for line in said) or not any(
        c.cell_type == "markdown" for c in answered)  # fmt: skip


def test_a_stub_in_the_lab_and_an_answer_begun_in_the_assignment_are_left_alone():
    full, lab, assignment = _made()
    ids = [c.id for c in assignment.cells if c.cell_type == "code" and c.id in _answers(assignment)]
    mine = next(c for c in assignment.cells if c.id == ids[1])
    mine.source = "def softmax_backward(p, g):\n    return g  # begun in the assignment"
    said = carry.carry(lab, assignment)
    assert "not answered in either" in said[0] and mine.source.endswith("begun in the assignment")
    lab_cell = next(c for c in lab.cells if c.id == ids[1])
    lab_cell.source = "def softmax_backward(p, g):\n    return p * g  # from the lab"
    said = carry.carry(lab, assignment)
    assert any("another answer, left as it is" in line for line in said) and mine.source.endswith("assignment")
    carry.carry(lab, assignment, force=True)
    assert mine.source.endswith("from the lab")


def test_a_different_variant_is_warned_and_wrong_notebooks_are_refused():
    _, lab, assignment = _made()
    set_variant(lab, "s1234567")
    assert carry.carry(lab, assignment)[-1].startswith("warning: the lab notebook has VARIANT = 's1234567'")
    with pytest.raises(ValueError, match="no answer cells"):
        carry.carry(assignment, lab)
    other = nbformat.read(NOTEBOOKS_DIR / "03_query_key_value.ipynb", as_version=4)
    with pytest.raises(ValueError, match="share no answer cell"):
        carry.carry(other, assignment)


def test_the_command_writes_the_assignment_in_place(tmp_path, capsys):
    full, lab, assignment = _made()
    first = next(c for c in lab.cells if c.id in _answers(assignment) and c.cell_type == "code")
    first.source = next(c.source for c in full.cells if c.id == first.id)
    paths = tmp_path / "lab.ipynb", tmp_path / "a04.ipynb"
    nbformat.write(lab, paths[0])
    nbformat.write(assignment, paths[1])
    assert carry.main([str(p) for p in paths]) == 0
    assert "1 answer(s) carried" in capsys.readouterr().out
    assert next(c.source for c in nbformat.read(paths[1], as_version=4).cells if c.id == first.id) == first.source
    with pytest.raises(SystemExit):
        carry.main([str(paths[1]), str(paths[1])])
