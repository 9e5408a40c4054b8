"""The fifth set of held-out attacks (tests/heldout/attacks_fifth.py), graded at run time alone.

Each runs in a fresh Python as a kernel runs a notebook under nbgrader: the cells in one namespace that is
``__main__``'s, the guard's run-time lines written in (``GuardSubmission._verify_before_tests``), every cell run even
after one raised, each cell's stdout and stderr kept apart (nbgrader scores a test cell by its error and gives no
points to one that wrote to stderr). The reading of the cells is left out: what is tested is what holds whatever it
misses. With the course_lib of attacks_fifth.BEFORE (``git archive``) each cheat passes notebook 12's exercise 2 test
cell (hidden tests included), and the honest answer that warns writes to stderr; with today's each cheat is "Not
graded", which the class report flags, and the warning is a note on stdout. Each run is a child of a fork server
(tests/heldout/test_third_lecturer.py's), which pays the imports once per course folder."""

import json
import select
import subprocess
import sys
from functools import cache
from pathlib import Path

import nbformat
import pytest

from course_lib.classroom.guard import findings

from .attacks_fifth import BEFORE, FIFTH_12_ATTACKS, HONEST_WARNING_05_EX2
from .test_fourth_lecturer import _check_cell, _graded
from .test_heldout import _flagged
from .test_third_lecturer import FORK_SERVER, SETUP, _student, course_lib_at

ROOT = Path(__file__).resolve().parents[2]
# A notebook run as nbgrader runs it: every cell in order in __main__'s namespace, warnings as Python leaves them;
# prints [error or None, stdout, stderr] of each cell, as JSON
RUNNER = r"""
import contextlib, io, json, os, sys, types
import nbformat
from course_lib.classroom.guard import GuardSubmission

nb = nbformat.v4.new_notebook()
for source, meta in json.load(open(sys.argv[1])):
    nb.cells.append(nbformat.v4.new_code_cell(source))
    nb.cells[-1].metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, **meta}
GuardSubmission._verify_before_tests(nb)  # the guard's run-time lines, not its reading
main = types.ModuleType("__main__")
sys.modules["__main__"] = main
results, real = [], sys.stdout
for i, cell in enumerate(nb.cells):
    out, err, error = io.StringIO(), io.StringIO(), None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exec(compile(cell.source, f"<cell {i}>", "exec"), main.__dict__)
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"
    results.append([error, out.getvalue(), err.getvalue()])
real.write(json.dumps(results) + "\n")
real.flush()
os._exit(0)  # (what is left to tear down is torch's: the results are written)
"""
# test_third_lecturer's fork server, which also imports before it forks what the snapshot imports (torch._dynamo and
# every module of course_lib: about 1.5 s of CPU a child otherwise), the audit hook with them (as at the first cell)
SERVER = FORK_SERVER.replace(
    "import nbformat, torch\n",
    "import nbformat, torch\nfrom course_lib.classroom.snapshot import _watched\n_watched()\n",
)
_SERVERS: dict[Path, subprocess.Popen] = {}


@pytest.fixture(autouse=True, scope="module")
def _fork_servers():
    yield
    for server in _SERVERS.values():
        server.stdin.close()
        server.wait(timeout=60)
    _SERVERS.clear()


def _run(answer: str, check: str, tmp_path: Path, course: Path = ROOT) -> list[list]:
    """[error, stdout, stderr] of each cell of the notebook set-up, ``answer``, ``check`` (the test cell), run with
    the course_lib found in ``course`` in a child of that folder's fork server."""
    cells = [(cell, {"locked": True}) for cell in SETUP] + [(answer, {"solution": True})]
    case = tmp_path / "cells.json"
    case.write_text(json.dumps([*cells, (check, {"grade": True, "locked": True})]))
    if course not in _SERVERS:
        _SERVERS[course] = subprocess.Popen([sys.executable, "-c", SERVER, RUNNER], cwd=course, text=True,
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
    server, out, err = _SERVERS[course], case.with_suffix(".out"), case.with_suffix(".err")
    out.write_text(""), err.write_text("")
    server.stdin.write(json.dumps([str(case), str(out), str(err)]) + "\n")
    server.stdin.flush()
    assert select.select([server.stdout], [], [], 600)[0], "the run took over 600 s"
    status = server.stdout.readline()
    assert status.strip() == "0", (status, err.read_text()[-3000:])
    return json.loads(out.read_text().strip().splitlines()[-1])


@cache
def _test_cell(number: str) -> str:
    return _check_cell(number, "ex2")


@pytest.fixture(scope="module")
def before(tmp_path_factory) -> Path:
    """The course_lib of attacks_fifth.BEFORE, in a folder of its own."""
    return course_lib_at(BEFORE, tmp_path_factory)


@pytest.mark.parametrize("name", sorted(FIFTH_12_ATTACKS), ids=_student)
def test_the_reading_flags_each_fifth_cheat(name):
    """The guard's reading of the cells flags the answer cell of each (t4's NumPy attribute since this set)."""
    cells = [(cell, {"locked": True}) for cell in SETUP] + [(FIFTH_12_ATTACKS[name], {"solution": True})]
    nb = nbformat.v4.new_notebook()
    for number, (source, meta) in enumerate([*cells, (_test_cell("12"), {"grade": True, "locked": True})]):
        nb.cells.append(nbformat.v4.new_code_cell(source))
        nb.cells[-1].metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, "points": 1,
                                             "grade_id": f"c{number}", **meta}  # fmt: skip
    assert [i for i, _ in findings(nb)] == [2], findings(nb)


@pytest.mark.parametrize("name", sorted(FIFTH_12_ATTACKS), ids=_student)
def test_a_fifth_cheat_passed_before(name, tmp_path, before):
    *_, (error, stdout, _) = _run(FIFTH_12_ATTACKS[name], _test_cell("12"), tmp_path, before)
    assert error is None and stdout.count("✓ top_k") == 3, f"not a real cheat: {error} {stdout}"


# What each cheat is refused for (in the test cell's message)
REFUSED_FOR = {
    "t1_thread": "a thread",
    "t2_spawn": "fork_exec",
    "t3_code": "course_lib's code",
    "t3_gc": "gc's objects",
    "t3_source": "course_lib/generation.py",
    "t4_numpy": "NumPy",
    "t5_nested": "sys._getframe",
}


# NumPy's array over any address raises no event, and nothing a kernel runs can see it: run time does not refuse t4
# (the reading of the cells flags it: test_the_reading_flags_each_fifth_cheat)
_UNSEEN = pytest.mark.xfail(strict=True, reason="no audit event or hook sees NumPy's __array_interface__ at run time")


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=_UNSEEN) if n.startswith("t4") else n for n in sorted(FIFTH_12_ATTACKS)],
    ids=_student,
)
def test_a_fifth_cheat_is_not_graded_and_flagged(name, tmp_path):
    *_, (error, _, _) = _run(FIFTH_12_ATTACKS[name], _test_cell("12"), tmp_path)
    assert error is not None and error.startswith("AssertionError: Not graded: "), error
    assert REFUSED_FOR[_student(name)] in error, error
    flags = _flagged(tmp_path, FIFTH_12_ATTACKS[name], error.removeprefix("AssertionError: "))
    assert flags and flags[0][1].startswith("not graded"), flags


def test_a_warning_where_the_test_cell_calls_the_answer_cost_its_points_before(tmp_path, before):
    *_, (error, stdout, stderr) = _run(HONEST_WARNING_05_EX2, _test_cell("05"), tmp_path, before)
    assert error is None and "To copy construct from a tensor" in stderr, (error, stderr)
    assert _graded(stdout, stderr) == 0


def test_a_warning_where_the_test_cell_calls_the_answer_is_a_note_on_stdout(tmp_path):
    *_, (error, stdout, stderr) = _run(HONEST_WARNING_05_EX2, _test_cell("05"), tmp_path)
    assert error is None and not stderr, (error, stderr)
    assert "note: UserWarning: To copy construct from a tensor" in stdout, stdout
    assert _graded(stdout, stderr) == 1


HONEST_TOP_K = """
def top_k(logits, k):
    kth = torch.topk(logits, min(k, logits.shape[-1]), dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
"""
# Honest answer cells that start what the defences above look at: a library's own thread (the course's progress bar,
# tqdm's monitor), a module of course_lib loaded for the first time (its files opened), another process started by
# a library for itself (none here: matplotlib's font cache is built before any cell), a warning in the answer cell
HONEST_12 = {
    "a progress bar": "for _ in cl.progress_bar(range(3), desc='warm-up'):\n    pass\n",
    "a module of course_lib loaded for the first time": "import course_lib.bench\n",
    "a function's name and docstring": "print(cl.top_k_filter.__name__, cl.top_k_filter.__doc__[:10])\n",
    "a warning in the answer cell": "import warnings\nwarnings.warn('a warning of my own')\n",
    # torch.manual_seed formats the stack (traceback reads each frame's code, the check's too) while CUDA is not
    # initialised: a library's own walk, made inside the answer's call (and in many checks' inputs)
    "a library's walk of the stack": HONEST_TOP_K.replace("    kth", "    torch.manual_seed(0)\n    kth"),
}


@pytest.mark.parametrize("name", sorted(HONEST_12))
def test_an_honest_answer_keeps_its_marks(name, tmp_path):
    *_, (answer, _, answer_err), (error, stdout, stderr) = _run(
        HONEST_12[name] + ("" if "def top_k" in HONEST_12[name] else HONEST_TOP_K), _test_cell("12"), tmp_path
    )
    assert answer is None and error is None and stdout.count("✓ top_k") == 3 and not stderr, (answer, error, stderr)
    assert not answer_err or "warm-up" in answer_err, answer_err  # (the bar is drawn on stderr, as tqdm draws it)
