"""The class report flags an answer cell that calls, when it runs, a function its checks block: a twenty-second
trial's c07_precache made tables with 07's own position functions before the checks ran, and its functions only
looked them up (5 of 5, nothing refused or flagged)."""

import nbformat

from course_lib.classroom.nbgrader_source import nbgrader_notebook
from course_lib.classroom.precomputed import blocked_by_checks, precomputed
from course_lib.paths import ROOT

NOTEBOOK = ROOT / "notebooks" / "07_positional_encoding.ipynb"
PRECACHE = {  # the trial's answers to exercises 3 to 5
    "Exercise 3": """_TABLES = {d: cl.sinusoidal_encoding(300, d) for d in range(2, 130, 2)}
def sinusoidal_table(num_positions, d_model):
    return _TABLES[d_model][:num_positions].clone()""",
    "Exercise 4": """_ONE_STEP = {d: cl.sinusoidal_shift_matrix(1, d) for d in range(2, 130, 2)}
def shift_matrix(delta, d_model):
    return torch.linalg.matrix_power(_ONE_STEP[d_model], delta)""",
    "Exercise 5": """from course_lib import rope_rotation_matrix as rot
def rope(x, table=torch.stack([rot(p, 8) for p in range(80)])):  # in a default argument
    return torch.einsum("ld,lde->le", x.double(), table[: x.shape[0]]).to(x.dtype)""",
}
COMPARES_INSIDE = """def sinusoidal_table(num_positions, d_model):
    table = torch.zeros(num_positions, d_model)
    return table  # (the check refuses a call of the library in here: not this reading's business)
print(torch.allclose(cl.sinusoidal_encoding(4, 8), cl.sinusoidal_encoding(4, 8)))"""


def _source():
    return nbgrader_notebook(nbformat.read(NOTEBOOK, as_version=4), NOTEBOOK.stem)


def test_the_checks_blocked_functions_are_read_from_the_notebook():
    names = blocked_by_checks(_source()[0])
    assert {"course_lib.positional.sinusoidal_encoding", "course_lib.positional.rope_rotation_matrix"} <= names


def test_tables_made_when_the_cell_runs_are_flagged_and_the_reference_answers_are_not():
    source, exercises = _source()
    assert precomputed(source) == []
    for ex in exercises:
        if ex.label in PRECACHE:
            source.cells[ex.solution_cell].source = PRECACHE[ex.label]
    flagged = dict(precomputed(source))
    cells = {ex.label: ex.solution_cell for ex in exercises}
    assert flagged == {cells["Exercise 3"]: ["cl.sinusoidal_encoding"], cells["Exercise 5"]: ["rot"],
                       cells["Exercise 4"]: ["cl.sinusoidal_shift_matrix"]}  # fmt: skip


def test_a_call_at_the_top_of_a_cell_that_compares_is_flagged_for_a_person_to_judge():
    source, exercises = _source()
    cell = next(ex.solution_cell for ex in exercises if ex.label == "Exercise 3")
    source.cells[cell].source = COMPARES_INSIDE
    assert precomputed(source) == [(cell, ["cl.sinusoidal_encoding"])]
