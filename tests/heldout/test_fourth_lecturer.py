"""A fourth lecturer's cheats and one honest answer (tests/heldout/attacks_fourth_lecturer.py), run on the notebooks'
own test cells (hidden tests included) as a graded kernel runs them (the check's frames refused to answers:
``refuse_always``), the reading of the cells left out.

With the course_lib of attacks_fourth_lecturer.BEFORE (exported by ``git archive``, every case in ONE fresh Python)
each cheat passes its test cell, unflagged: a real cheat; and the honest answer passes, writing PyTorch's warning to
stderr, which nbgrader scores as no points. With today's (in this process) each cheat is "Not graded", which the
class report flags, and the honest answer gets its points: the warning is a note on stdout."""

import contextlib
import io
import json
import re
import subprocess
import sys
import warnings
from functools import cache
from pathlib import Path

import nbformat
import pytest
import torch

import course_lib as cl
from course_lib.classroom.notebook import find_exercises
from course_lib.classroom.watch import refuse_always
from course_lib.paths import NOTEBOOKS_DIR

from .attacks_fourth_lecturer import (
    BEFORE,
    HONEST_WARNING_05_EX3,
    LAZY_BY_HAND,
    OWN_METHODS_12_EX2,
    ZERO_KEPT_ATTACKS,
)
from .test_heldout import _flagged

ROOT = Path(__file__).resolve().parents[2]
# A by-hand check as 05's exercise 1 makes it: the answer in a list, compared with a (1, 4) row of weights
BY_HAND_CHECK = """
expected_ex1 = torch.softmax(torch.tensor([[1.0, 3.0, 0.0, 2.0]], dtype=torch.float64), dim=-1)
cl.check_answer([weights_ex1], expected_ex1, "masked weights", atol=5e-5)
"""
# Every case in one namespace of its own, as a kernel runs its cells: (error or None, stdout, stderr) by name
RUNNER = r"""
import contextlib, io, json, math, sys
import torch
import course_lib as cl
from course_lib.classroom.watch import refuse_always

refuse_always()
results = {}
for name, answer, check in json.load(open(sys.argv[1])):
    namespace = {"__name__": "__main__", "torch": torch, "cl": cl, "math": math}
    out, err, error = io.StringIO(), io.StringIO(), None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exec(compile(answer, "<answer>", "exec"), namespace)
            exec(compile(check, "<test cell>", "exec"), namespace)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
    results[name] = [error, out.getvalue(), err.getvalue()]
print(json.dumps(results))
"""


@cache
def _check_cell(number: str, exercise: str) -> str:
    """The test cell of ``exercise`` ("ex3") of notebook ``number``, hidden tests included."""
    nb = nbformat.read(next(NOTEBOOKS_DIR.glob(f"{number}_*.ipynb")), as_version=4)
    label = f"Exercise {exercise.removeprefix('ex')}"
    return next(nb.cells[ex.check_cell].source for ex in find_exercises(nb) if ex.label == label)


def _cases() -> list[tuple[str, str, str]]:
    cases = [(name, answer, _check_cell(number, ex)) for name, (number, ex, answer) in ZERO_KEPT_ATTACKS.items()]
    cases.append(("lazy_by_hand", LAZY_BY_HAND, BY_HAND_CHECK))
    cases.append(("own_methods 12 ex2", OWN_METHODS_12_EX2, _check_cell("12", "ex2")))
    return [*cases, ("honest_warning 05 ex3", HONEST_WARNING_05_EX3, _check_cell("05", "ex3"))]


@pytest.fixture(scope="module")
def before(tmp_path_factory) -> dict[str, list]:
    """Every case run with the course_lib of attacks_fourth_lecturer.BEFORE, in one fresh Python."""
    folder = tmp_path_factory.mktemp("before")
    archive = subprocess.run(["git", "archive", BEFORE, "course_lib"], cwd=ROOT, capture_output=True)
    if archive.returncode != 0:
        pytest.skip(f"git archive {BEFORE} failed: {archive.stderr[-300:]!r}")
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    # today's check cells name families that course_lib gained since (cl.ROW_MEANS): the old library gets their names
    literal = {f"cl.{name}": repr(getattr(cl, name)) for name in ("ROW_MEANS", "NORMALIZATIONS")}
    cases = [(name, answer, re.sub(r"cl\.(?:ROW_MEANS|NORMALIZATIONS)\b", lambda m: literal[m[0]], check))
             for name, answer, check in _cases()]  # fmt: skip
    (folder / "cases.json").write_text(json.dumps(cases))
    done = subprocess.run([sys.executable, "-c", RUNNER, "cases.json"], cwd=folder, capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(autouse=True, scope="module")
def _refusing():
    refuse_always()  # as in a graded kernel


def _run(answer: str, check: str) -> tuple[str | None, str, list[warnings.WarningMessage]]:
    """(error or None, stdout, the warnings that left the test cell) of ``answer`` then ``check``, in this process."""
    namespace = {"__name__": "__main__", "torch": torch, "cl": cl, "math": __import__("math")}
    out, error = io.StringIO(), None
    with warnings.catch_warnings(record=True) as leaked, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            exec(compile(answer, "<answer>", "exec"), namespace)
            exec(compile(check, "<test cell>", "exec"), namespace)
        except AssertionError as exc:
            error = f"AssertionError: {exc}"
    return error, out.getvalue(), leaked


def _graded(stdout: str, stderr: str) -> float:
    """The points nbgrader gives (of 1) to a test cell that printed ``stdout`` and ``stderr`` and raised nothing.
    nbgrader is the grading extra's: the two tests that ask it skip without it (``make test`` runs without it)."""
    determine_grade = pytest.importorskip("nbgrader.utils").determine_grade
    cell = nbformat.v4.new_code_cell("...")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "grade_id": "t", "points": 1}
    cell.outputs = [nbformat.v4.new_output("stream", name=name, text=text)
                    for name, text in (("stdout", stdout), ("stderr", stderr)) if text]  # fmt: skip
    return determine_grade(cell)[0]


@pytest.mark.parametrize("name", [case[0] for case in _cases() if not case[0].startswith("honest")])
def test_a_fourth_lecturers_cheat_passed_before(name, before):
    error, stdout, _ = before[name]
    assert error is None and "✓" in stdout, f"not a real cheat: {before[name]}"


@pytest.mark.parametrize("name", sorted(ZERO_KEPT_ATTACKS))
def test_zeroing_the_references_inputs_is_not_graded_and_flagged(name, tmp_path):
    number, exercise, answer = ZERO_KEPT_ATTACKS[name]
    error, _, _ = _run(answer, _check_cell(number, exercise))
    assert error is not None and error.startswith("AssertionError: Not graded: "), error
    flags = _flagged(tmp_path, answer, error.removeprefix("AssertionError: "))
    assert flags and flags[0][1].startswith("not graded"), flags


def test_a_lazy_by_hand_answer_is_not_graded_and_flagged(tmp_path):
    error, _, _ = _run(LAZY_BY_HAND, BY_HAND_CHECK)
    assert error is not None and "Not graded" in error and "_Later" in error, error
    flags = _flagged(tmp_path, LAZY_BY_HAND, error.removeprefix("AssertionError: "))
    assert flags and flags[0][1].startswith("not graded"), flags


def test_a_tensor_with_methods_of_its_own_is_not_graded_and_flagged(tmp_path):
    error, _, _ = _run(OWN_METHODS_12_EX2, _check_cell("12", "ex2"))
    assert error is not None and error.startswith("AssertionError: Not graded: top_k on trial 1"), error
    assert "got _Agrees" in error, error
    flags = _flagged(tmp_path, OWN_METHODS_12_EX2, error.removeprefix("AssertionError: "))
    assert flags and flags[0][1].startswith("not graded"), flags


def test_an_answers_warning_cost_its_points_before(before):
    error, stdout, stderr = before["honest_warning 05 ex3"]
    assert error is None and "To copy construct from a tensor" in stderr, before["honest_warning 05 ex3"]
    assert _graded(stdout, stderr) == 0


def test_an_answers_warning_is_a_note_on_stdout_and_keeps_its_points():
    error, stdout, leaked = _run(HONEST_WARNING_05_EX3, _check_cell("05", "ex3"))
    assert error is None, error
    assert "note: causal_padding_mask warned: UserWarning: To copy construct from a tensor" in stdout, stdout
    assert not leaked, [str(w.message) for w in leaked]  # nothing left the test cell for stderr
    assert _graded(stdout, "") == 1


# ---------------------------------------------------------------- each defence on its own


def _top_k_inputs(g):
    return torch.randn(3, 7, generator=g), 3


def test_the_checks_copy_changed_through_a_helper_nothing_refuses_is_not_graded(monkeypatch):
    """The seal alone (classroom.sealed): with torch's helper not counted as handing frames (as a library's helper
    the hook does not know would not be), zeroing the reference's copy is found once the answer returns."""
    import course_lib.classroom.unwatched as unwatched

    monkeypatch.setattr(unwatched, "HANDING_MODULES", ())
    namespace = {"torch": torch}
    exec(ZERO_KEPT_ATTACKS["zero_any_name 12 ex2"][2], namespace)
    with pytest.raises(AssertionError, match=r"^Not graded: top_k changed the check's own copy of the inputs"):
        cl.check_function(namespace["top_k"], cl.top_k_filter, _top_k_inputs, name="top_k", trials=2)


def test_a_library_handing_out_the_checks_frame_is_refused_whoever_asks():
    """The hook alone (classroom.watch): a library function that hands out a frame as many levels up as it is told
    (torch's get_source: sys._getframe(stacklevel)) may not hand out the check's, even though a library asks. (The
    trial's typing._caller did so up to Python 3.11; from 3.12 on it asks sys._getframemodulename, a name only.)"""
    from torch._library.utils import get_source

    def reaching(logits, k):
        for depth in range(1, 8):
            get_source(depth)  # (a file and line; the frame they came from is what is refused)
        return cl.top_k_filter(logits, k)

    with pytest.raises(AssertionError, match=r"^Not graded: reaching asked for sys\._getframe"):
        cl.check_function(reaching, cl.top_k_filter, _top_k_inputs, name="reaching", trials=2)


HONEST_BY_HAND = {
    "numbers": (0.5, 0.5),
    "nested lists and a tuple": [[0.5], (0.5,)],
    "NumPy's scalars": [__import__("numpy").float32(0.5), __import__("numpy").int64(0)],
    "a torch.Size": torch.Size([1, 2]),
    "a parameter": torch.nn.Parameter(torch.ones(2)),
}


@pytest.mark.parametrize("form", sorted(HONEST_BY_HAND))
def test_by_hand_answers_of_numbers_are_read(form):
    from course_lib.classroom.byhand import not_numbers

    assert not_numbers(HONEST_BY_HAND[form]) is None


def test_by_hand_answers_of_other_values_cannot_be_read_and_a_placeholder_says_so():
    from course_lib.classroom.exercises import unanswered

    with pytest.raises(AssertionError, match=r"^x: cannot be read as numbers \(TypeError: a str\)"):
        cl.check_answer(["0.5"], torch.tensor([0.5]), "x")
    with pytest.raises(NotImplementedError, match="Exercise 1: x is not answered yet"):
        cl.check_answer([1.0, unanswered("Exercise 1: x")], torch.tensor([1.0, 2.0]), "x")
