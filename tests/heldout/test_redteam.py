"""A red-team's cheats on notebook 12's exercise 2 (tests/heldout/attacks_redteam.py): read, and graded at run time.

Each runs in a fresh Python as a kernel runs a notebook under nbgrader: the cells in one namespace that is
``__main__``'s, the guard's run-time lines written in (``GuardSubmission._verify_before_tests``), and a cell that
raises does not stop the cells after it (nbgrader scores a test cell by its own error). The guard's reading of the
cells (``guard.findings``) is computed in the same Python, on the cells as handed in. With the course_lib of
attacks_redteam.BEFORE (exported by ``git archive``) each cheat is read as nothing and passes the test cell (hidden
tests included): a real cheat; with today's the reading flags it and the test cell raises "Not graded", which the
class report flags."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .attacks_redteam import BEFORE, REDTEAM_12_ATTACKS, WRONG_AT_RUN_TIME
from .test_heldout import _flagged
from .test_third_lecturer import SETUP, _check_cell_12, _student, course_lib_at

ROOT = Path(__file__).resolve().parents[2]
# A notebook run as nbgrader runs it: every cell, in order, in __main__'s namespace; prints the reading's findings
# and each cell's error, as JSON
RUNNER = r"""
import json, sys, types, warnings
import nbformat
from course_lib.classroom.guard import GuardSubmission, findings

warnings.simplefilter("ignore")
nb = nbformat.v4.new_notebook()
for source, meta in json.load(open(sys.argv[1])):
    nb.cells.append(nbformat.v4.new_code_cell(source))
    nb.cells[-1].metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, **meta}
read = findings(nb)
GuardSubmission._verify_before_tests(nb)  # the guard's run-time lines
main = types.ModuleType("__main__")
sys.modules["__main__"] = main
errors = {}
for i, cell in enumerate(nb.cells):
    try:
        exec(compile(cell.source, f"<cell {i}>", "exec"), main.__dict__)
    except BaseException as err:
        errors[i] = f"{type(err).__name__}: {err}"
print(json.dumps([read, errors]))
sys.stdout.flush()
"""


def _run(answer: str, tmp_path: Path, course: Path = ROOT) -> tuple[list, dict[int, str]]:
    """(the reading's findings, each cell's error by index) of the notebook set-up, answer, exercise 2's test cell,
    run with the course_lib found in ``course``."""
    cells = [(cell, {"locked": True}) for cell in SETUP] + [(answer, {"solution": True})]
    cells.append((_check_cell_12(), {"grade": True, "locked": True}))
    case = tmp_path / "cells.json"
    case.write_text(json.dumps(cells))
    done = subprocess.run([sys.executable, "-c", RUNNER, str(case)], cwd=course, capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    read, errors = json.loads(done.stdout.strip().splitlines()[-1])
    return read, {int(i): error for i, error in errors.items()}


@pytest.fixture(scope="module")
def before(tmp_path_factory) -> Path:
    """The course_lib of attacks_redteam.BEFORE, in a folder of its own."""
    return course_lib_at(BEFORE, tmp_path_factory)


@pytest.mark.parametrize("name", sorted(REDTEAM_12_ATTACKS), ids=_student)
def test_a_redteam_cheat_was_read_as_nothing_and_passed_before(name, tmp_path, before):
    assert _run(REDTEAM_12_ATTACKS[name], tmp_path, before) == ([], {}), "not a real cheat"


@pytest.mark.parametrize("name", sorted(REDTEAM_12_ATTACKS), ids=_student)
def test_a_redteam_cheat_is_read_not_graded_and_flagged(name, tmp_path):
    """The reading flags the answer cell (the guard then fails every test cell after it, "Not graded"); the run-time
    defences alone fail the test cell too: "Not graded", flagged, or (the finaliser) a plain wrong answer."""
    read, errors = _run(REDTEAM_12_ATTACKS[name], tmp_path)
    assert [i for i, _ in read] == [2], read
    error = errors.get(3, "")
    if _student(name) in WRONG_AT_RUN_TIME:
        assert error.startswith("AssertionError: top_k is wrong on trial 1"), errors
        return
    assert error.startswith("AssertionError: Not graded: "), errors
    flags = _flagged(tmp_path, REDTEAM_12_ATTACKS[name], error.removeprefix("AssertionError: "))
    assert flags and flags[0][1].startswith("not graded"), flags
