"""A third lecturer's cheats on notebook 12 (tests/heldout/attacks_third_lecturer.py), graded at run time alone.

Each runs in a fresh Python as a kernel runs a notebook: the cells in one namespace that is ``__main__``'s, the
guard's run-time lines written in (the snapshot at the end of the first locked cell, its verification at the top of
the test cell: ``GuardSubmission._verify_before_tests``), the reading of the cells left out, so that what is tested
is what holds whatever the reading misses. With the course_lib of attacks_third_lecturer.BEFORE (exported by ``git
archive``) each cheat passes notebook 12's exercise 2 test cell (hidden tests included): a real cheat; with today's
the test cell raises "Not graded", which the class report flags. Honest answers that look at frames through a
library's own bookkeeping, or use the random generator, still pass."""

import collections
import json
import subprocess
import sys
import typing
import warnings
from functools import cache
from pathlib import Path

import nbformat
import pytest
import torch

import course_lib as cl
from course_lib.classroom.checks import check_function
from course_lib.classroom.guard import SNAPSHOT
from course_lib.classroom.notebook import find_exercises
from course_lib.classroom.snapshot import _NAME
from course_lib.classroom.watch import refuse_always
from course_lib.paths import NOTEBOOKS_DIR

from .attacks_third_lecturer import BEFORE, THIRD_LECTURER_12_ATTACKS
from .test_heldout import _flagged

ROOT = Path(__file__).resolve().parents[2]
# The locked cells before the answer: as in the course's notebooks, the imports come after a first cell (Colab's set-up)
SETUP = (
    "import sys\n",
    "import math\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\nimport course_lib as cl\n",
)
# A notebook run as a kernel runs it: cells in order in __main__'s namespace; prints the first error, as JSON
RUNNER = r"""
import json, sys, types, warnings
import nbformat
from course_lib.classroom.guard import GuardSubmission

warnings.simplefilter("ignore")
nb = nbformat.v4.new_notebook()
for source, meta in json.load(open(sys.argv[1])):
    nb.cells.append(nbformat.v4.new_code_cell(source))
    nb.cells[-1].metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, **meta}
GuardSubmission._verify_before_tests(nb)  # the guard's run-time lines, not its reading
main = types.ModuleType("__main__")
sys.modules["__main__"] = main
for i, cell in enumerate(nb.cells):
    try:
        exec(compile(cell.source, f"<cell {i}>", "exec"), main.__dict__)
    except Exception as err:
        print(json.dumps([i, f"{type(err).__name__}: {err}"]))
        break
else:
    print(json.dumps([None, None]))
"""


@cache
def _check_cell_12(label: str = "Exercise 2") -> str:
    nb = nbformat.read(next(NOTEBOOKS_DIR.glob("12_*.ipynb")), as_version=4)
    return next(nb.cells[ex.check_cell].source for ex in find_exercises(nb) if ex.label == label)


def _run(answer: str, tmp_path: Path, course: Path = ROOT) -> tuple[int | None, str | None]:
    """(index of the cell that raised, its error) of the notebook set-up, answer, exercise 2's test cell, run with
    the course_lib found in ``course``."""
    cells = [(cell, {"locked": True}) for cell in SETUP] + [(answer, {"solution": True})]
    cells.append((_check_cell_12(), {"grade": True, "locked": True}))
    case = tmp_path / "cells.json"
    case.write_text(json.dumps(cells))
    done = subprocess.run([sys.executable, "-c", RUNNER, str(case)], cwd=course, capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return tuple(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def before(tmp_path_factory) -> Path:
    """The course_lib of attacks_third_lecturer.BEFORE, in a folder of its own."""
    folder = tmp_path_factory.mktemp("before")
    archive = subprocess.run(["git", "archive", BEFORE, "course_lib"], cwd=ROOT, capture_output=True)
    if archive.returncode != 0:
        pytest.skip(f"git archive {BEFORE} failed: {archive.stderr[-300:]!r}")
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def _student(name: str) -> str:
    return name.split(":")[0]


def test_the_snapshots_name_is_the_guards():
    assert _NAME == SNAPSHOT


def test_an_honest_answer_passes_the_test_cell_run_so(tmp_path):
    honest = (
        "def top_k(logits, k):\n    k = min(k, logits.shape[-1])\n"
        "    kth = torch.topk(logits, k, dim=-1).values[..., -1:]\n"
        "    return logits.masked_fill(logits < kth, float('-inf'))\n"
    )
    assert _run(honest, tmp_path) == (None, None)


@pytest.mark.parametrize("name", sorted(THIRD_LECTURER_12_ATTACKS), ids=_student)
def test_a_third_lecturers_cheat_passed_before(name, tmp_path, before):
    assert _run(THIRD_LECTURER_12_ATTACKS[name], tmp_path, before) == (None, None), "not a real cheat"


@pytest.mark.parametrize("name", sorted(THIRD_LECTURER_12_ATTACKS), ids=_student)
def test_a_third_lecturers_cheat_is_not_graded_and_flagged(name, tmp_path):
    cell, error = _run(THIRD_LECTURER_12_ATTACKS[name], tmp_path)
    assert cell == 3 and error.startswith("AssertionError: Not graded: "), (cell, error)
    flags = _flagged(tmp_path, THIRD_LECTURER_12_ATTACKS[name], error.removeprefix("AssertionError: "))
    assert flags and flags[0][1].startswith("not graded"), flags


@pytest.fixture(autouse=True, scope="module")
def _refusing():
    refuse_always()  # as in a graded kernel (a snapshot taken in __main__'s namespace)


def _peeking(logits, k):
    """c1's answer, in this process: the check's ``expected`` from the caller's frame, if it finds one."""
    import dataclasses

    for info in dataclasses.inspect.stack(0)[2:5]:
        seen = dataclasses.inspect.getargvalues(info.frame)[3]
        if "expected" in seen and "reference" in seen:
            return seen["expected"].clone()
    return logits


def _logits(g):
    return torch.randn(3, 7, generator=g), 3


def test_asking_for_the_checks_frames_while_checked_is_not_graded():
    with pytest.raises(AssertionError, match=r"^Not graded: _peeking asked for sys\._getframe"):
        check_function(_peeking, cl.top_k_filter, _logits, trials=2)


def test_switching_the_profiler_off_while_checked_is_not_graded():
    def quiet(logits, k):
        torch.sys.setprofile(None)
        return cl.top_k_filter(logits, k)

    with pytest.raises(AssertionError, match=r"^Not graded: quiet asked for sys\.setprofile"):
        check_function(quiet, cl.top_k_filter, _logits, trials=2, without=("course_lib.top_k_filter",))


def test_a_refusal_the_answer_catches_is_still_not_graded():
    def caught(logits, k):
        try:
            torch.sys._getframe(1)
        except RuntimeError:
            pass
        kth = torch.topk(logits, k, dim=-1).values[..., -1:]
        return logits.masked_fill(logits < kth, float("-inf"))

    with pytest.raises(AssertionError, match=r"^Not graded: caught asked for sys\._getframe"):
        check_function(caught, cl.top_k_filter, _logits, trials=2)


def test_honest_answers_that_reach_frames_through_libraries_pass():
    def honest(logits, k):
        Pair = collections.namedtuple("Pair", "values indices")  # namedtuple reads its caller's module name
        T = typing.TypeVar("T")  # so does TypeVar
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.warn("a warning inside the answer", stacklevel=2)
        kth = Pair(*torch.topk(logits, k, dim=-1)).values[..., -1:]
        del T
        return logits.masked_fill(logits < kth, float("-inf"))

    check_function(honest, cl.top_k_filter, _logits, trials=3, atol=0, rtol=0, without=("course_lib.top_k_filter",))
    torch.sys._getframe(0)  # outside a check's call nothing is refused


def test_the_reference_runs_on_inputs_the_answer_could_not_change():
    def spoil(model, x):  # zeroes the weights of the model it is handed, then agrees with a zero model
        with torch.no_grad():
            for p in model.parameters():
                p.zero_()
        return model(x)

    def inputs(g):
        torch.manual_seed(int(torch.randint(0, 100, (1,), generator=g)))
        return torch.nn.Linear(4, 3), torch.randn(2, 4, generator=g)

    with pytest.raises(AssertionError, match="is wrong on trial 1"):
        check_function(spoil, lambda m, x: m(x), inputs, name="spoil", trials=2)


def test_an_answer_using_the_random_generator_leaves_the_reference_its_numbers():
    def noisy_reference(x):
        return x + torch.rand(x.shape)

    def noisy(x):  # the same draw, from the same state: the reference no longer runs first and moves it
        return x + torch.rand(x.shape)

    torch.manual_seed(0)
    check_function(noisy, noisy_reference, lambda g: (torch.randn(3, generator=g),), trials=3)


def test_a_thread_started_before_the_check_cannot_read_its_frames():
    """A thread a cell started polls every thread's frames (``sys._current_frames``) for the check's reference while
    the answer waits: refused, and the answer's check is not graded (where nothing refuses, as in a student's own
    kernel, it finds check_function's frame)."""
    import threading
    import time

    found, stop = [], threading.Event()

    def poll():
        while not stop.is_set():
            try:
                for frame in torch.sys._current_frames().values():
                    while frame is not None:  # each thread's stack, up from where it is now
                        found.extend([frame.f_code.co_name] if "reference" in frame.f_locals else [])
                        frame = frame.f_back
            except RuntimeError:
                found.append("refused")
            time.sleep(0.002)

    def waiting(logits, k):
        time.sleep(0.05)
        kth = torch.topk(logits, k, dim=-1).values[..., -1:]
        return logits.masked_fill(logits < kth, float("-inf"))

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        with pytest.raises(AssertionError, match=r"^Not graded: waiting asked for sys\._current_frames"):
            check_function(waiting, cl.top_k_filter, _logits, trials=2)
    finally:
        stop.set()
        thread.join()
    assert "refused" in found and not [f for f in found if f != "refused"]
