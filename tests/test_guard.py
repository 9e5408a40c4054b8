"""course_lib.classroom.guard: tampering read from the cells a student edits, before a submission runs, and the
student's own numbers written as VARIANT."""

import nbformat
import pytest

from course_lib.classroom.guard import GuardSubmission, RestoreHiddenTests, bound_names, tampering
from course_lib.classroom.nbgrader_source import nbgrader_notebook
from course_lib.paths import NOTEBOOKS_DIR

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
LOCKED = "import torch\nimport course_lib as cl\nimport torch.nn.functional as F\nweights = [0.4, 0.6]\n"
PROTECTED, MODULES = bound_names(LOCKED)

TAMPERING = {
    "a checker rebound": "check_answer = lambda *args, **kwargs: None",
    "the package rebound": "cl = None",
    "a checker replaced in the package": "cl.check_function = lambda *args, **kwargs: None",
    "deep in the package": "cl.classroom.checks.check_close = print",
    "deleted from the package": "del cl.check_close",
    "torch patched": "torch.allclose = lambda *args, **kwargs: True",
    "a module alias patched": "F.softmax = lambda x, dim: x",
    "setattr": "setattr(cl, 'check_answer', print)",
    "globals()": "globals()['check_answer'] = print",
    "sys.modules": "import sys\nsys.modules['course_lib'] = None",
    "builtins": "import builtins\nbuiltins.abs = lambda x: 0",
    "exec": "exec('cl.check_answer = print')",
    "__import__": "__import__('course_lib').check_answer = print",
    "a function's code swapped": "def f():\n    pass\ncl.check_answer.__code__ = f.__code__",
    "an import under a checker's name": "from math import sqrt as check_answer",
    "a loop variable named like a checker": "for check_close in [print]:\n    pass",
    "a locked cell's input changed in place": "weights[0] = 0.5",
    "inside a function": "def answer():\n    cl.check_answer = print\n    return 1\nx = answer()",
    "get_ipython": "get_ipython().run_cell('cl = None')",
    "a magic that runs code": "%run other.py",
    "VARIANT rebound (another student's numbers)": "VARIANT = 's7654321'",
}
HONEST = {
    "a value": "J_ex1 = [[0.24, -0.14], [-0.14, 0.24]]",
    "a function using the library": "def attend(q, k, v):\n    w = torch.softmax(q @ k.T, -1)\n    return w @ v",
    "local names that shadow locked ones": "def f(weights):\n    table = list(weights)\n    table[0] = 1\n    return 0",
    "a tensor's attribute": "x = torch.zeros(2)\nx.requires_grad = True\nx.grad = None",
    "a magic": "%timeit 1 + 1\ny = 2",
    "a syntax error (it fails when run)": "def broken(:\n",
}


@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_tampering_is_found(case):
    assert tampering(TAMPERING[case], PROTECTED, MODULES), case


@pytest.mark.parametrize("case", sorted(HONEST))
def test_honest_answers_are_not_flagged(case):
    assert tampering(HONEST[case], PROTECTED, MODULES) == []


def _graded_cell(source, **meta):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, **meta}
    return cell


def test_a_flagged_cell_fails_every_test_after_it_and_says_why():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _graded_cell(LOCKED, locked=True),
        _graded_cell("VARIANT = 'someone-else'"),
        _graded_cell("a = 1", solution=True),
        _graded_cell("cl.check_answer(a, 1)", grade=True, locked=True),
        _graded_cell("cl.check_answer = print", solution=True),
        _graded_cell("cl.check_answer(b, 2)", grade=True, locked=True),
        _graded_cell("cl.check_answer(c, 3)", grade=True, locked=True),
    ]
    nb, _ = GuardSubmission()(nb, {"nbgrader": {"student": "s1234567"}})  # as nbconvert calls it: enabled
    assert nb.cells[1].source.startswith("VARIANT = 's1234567'")  # the grader's id, not what was typed
    assert nb.cells[3].source == "cl.check_answer(a, 1)"  # before the tampering: graded as usual
    for cell in nb.cells[5:]:
        first = cell.source.splitlines()[0]
        assert first.startswith("raise AssertionError('Not graded: code cell 4 line 1: changes cl.check_answer")


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_reference_answer_of_the_course_is_flagged(nb_path):
    nb, exercises = nbgrader_notebook(nbformat.read(nb_path, as_version=4), nb_path.stem)
    sources = [c.source for c in nb.cells]
    nb, _ = GuardSubmission().preprocess(nb, {"nbgrader": {"student": "s1"}})
    changed = [i for i, c in enumerate(nb.cells) if c.source != sources[i]]
    assert all(nb.cells[i].source.startswith("VARIANT = 's1'") for i in changed), "only the VARIANT cell changes"
    assert len(changed) == any("VARIANT = " in s for s in sources)


def test_the_guard_runs_right_after_nbgrader_puts_the_locked_cells_back():
    pytest.importorskip("nbgrader")
    from nbgrader.preprocessors import CheckCellMetadata, OverwriteCells

    from course_lib.classroom.guard import sanitize_preprocessors

    steps = sanitize_preprocessors()
    at = steps.index(OverwriteCells)
    assert steps[at - 1] is RestoreHiddenTests and steps[at + 1] is GuardSubmission and steps[-1] is CheckCellMetadata
