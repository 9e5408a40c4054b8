"""course_lib.classroom.guard (issue 44, a lecturer's grading of notebook 05): a student's cell may rebind a name a
locked cell binds unless a check after it reads that name; an answer is compared as a plain value; a builtin the
checks use may not be hidden."""

from functools import cache

import nbformat
import pytest

from course_lib.classroom.guard import VERIFIED, GuardSubmission, findings
from course_lib.classroom.nbgrader_source import nbgrader_notebook
from course_lib.classroom.snapshot import not_plain, snapshot
from course_lib.classroom.syntax import free_reads
from course_lib.paths import NOTEBOOKS_DIR

# Honest answers to notebook 05's exercise 1 that the lecturer's grading flagged (all 0/5 before): they rebind names
# the locked cells bind (math, visible, i, total) that no later check reads.
HONEST_05_EX1 = {
    "eve: import math again, a helper list named visible": (
        "import math\nvisible = [math.exp(s) for s, m in zip(scores_ex1, mask_ex1) if m]\n"
        "weights_ex1 = [math.exp(s) / sum(visible) if m else 0.0 for s, m in zip(scores_ex1, mask_ex1)]\n"
        "most_weight_without_mask = max(range(4), key=lambda j: scores_ex1[j])\n"
    ),
    "victor: a top-level for i loop": (
        "import math\ntotal = 0.0\nfor i in range(4):\n    if mask_ex1[i]:\n        total += math.exp(scores_ex1[i])\n"
        "weights_ex1 = [math.exp(scores_ex1[i]) / total if mask_ex1[i] else 0.0 for i in range(4)]\n"
        "most_weight_without_mask = scores_ex1.index(max(scores_ex1))\n"
    ),
    "eve2: names of its own": (
        "my_exps = [math.exp(s) for s, m in zip(scores_ex1, mask_ex1) if m]\n"
        "weights_ex1 = [math.exp(s) / sum(my_exps) if m else 0.0 for s, m in zip(scores_ex1, mask_ex1)]\n"
        "most_weight_without_mask = max(range(4), key=lambda j: scores_ex1[j])\n"
    ),
    "import torch and course_lib again, as the setup cell does": "import torch\nimport course_lib as cl\nx = 1\n",
}
# What a cell may not do in notebook 05: (exercise, answer cell, what the finding names)
TAMPERING_05 = {
    "trudy: int shadowed, the check's inputs come out empty": (
        3,
        "class int(int):\n    def __new__(cls, x=0, *args):\n        return 0\n\n\n"
        "def causal_padding_mask(lengths, n):\n    return torch.zeros(len(lengths), n, n, dtype=torch.bool)\n",
        "rebinds int",
    ),
    "the exercise's own numbers rebound": (
        1,
        "scores_ex1 = [0.0, 0.0, 0.0, 0.0]\nweights_ex1 = [0.25] * 4",
        "scores_ex1",
    ),
    "a check's tolerance, read through run_checks' helpers": (5, "TOL = dict(atol=1e9, rtol=1e9)", "rebinds TOL"),
    "a later check's inputs": (4, "masked_inputs = lambda g: (None,)", "rebinds masked_inputs"),
    "math imported as another module": (1, "import numpy as math", "rebinds math"),
    "a builtin a check calls": (2, "def enumerate(x):\n    return []", "rebinds enumerate"),
    "a locked value changed in place, read or not": (1, "EX1_NUMBERS[0].reverse()", "changes EX1_NUMBERS"),
}


@cache
def _notebook_05() -> nbformat.NotebookNode:
    path = next(NOTEBOOKS_DIR.glob("05_*.ipynb"))
    return nbgrader_notebook(nbformat.read(path, as_version=4), path.stem)[0]


def _with_answer(exercise: int, source: str) -> tuple[nbformat.NotebookNode, int]:
    nb = nbformat.from_dict(_notebook_05())
    ids = [c.metadata.get("nbgrader", {}).get("grade_id", "") for c in nb.cells]
    at = next(i for i, g in enumerate(ids) if g.endswith(f"exercise-{exercise}-answer"))
    nb.cells[at].source = source
    return nb, at


@pytest.mark.parametrize("case", sorted(HONEST_05_EX1))
def test_an_honest_answer_that_rebinds_a_locked_name_no_check_reads_is_not_flagged(case):
    nb, _ = _with_answer(1, HONEST_05_EX1[case])
    assert findings(nb) == []


@pytest.mark.parametrize("case", sorted(TAMPERING_05))
def test_a_rebinding_a_later_check_reads_is_flagged(case):
    exercise, source, what = TAMPERING_05[case]
    nb, at = _with_answer(exercise, source)
    found = dict(findings(nb))
    assert at in found and any(what in line for line in found[at]), found


def test_free_reads_follow_the_order_of_a_cell_and_read_function_bodies_at_call_time():
    free, leads, defined = free_reads(
        "x = 1\ny = x + z\nfor i in range(3):\n    print(i)\ndef f(a):\n    return a + x + helper(a)\n"
        "if c:\n    w = 1\nprint(w)\nbox = [f]\n"
    )
    assert free == {"z", "range", "print", "x", "helper", "c", "w"}  # x: read by f when it is called
    assert defined == {"f"} and leads["f"] == {"x", "helper"} and leads["box"] == {"f"}


def _cell(source, **meta):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, **meta}
    return cell


def _flagged(later: str, locked: str = "import torch\nLIMIT = 1\ndef helper():\n    return LIMIT\n") -> list:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _cell(locked, locked=True),
        _cell("LIMIT = 10**9\ni = 3", solution=True),
        _cell(later, grade=True, locked=True),
    ]
    return findings(nb)


def test_a_name_is_protected_through_the_functions_a_later_cell_reaches():
    assert _flagged("assert helper() == 1") and _flagged("assert LIMIT")
    assert _flagged("assert 1 == 1") == [] and _flagged("for i in range(2):\n    print(i)") == []
    assert _flagged("LIMIT = 1\nassert LIMIT == 1") == []  # bound again before it is read
    handed = "import torch\nLIMIT = 1\ndef helper():\n    return LIMIT\ntools = [helper]\n"
    assert _flagged("assert tools[0]() == 1", handed) and _flagged("assert 1 == 1", handed)  # kept: called any time


class _Index(int):  # trudy's answer to exercise 1
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


@pytest.mark.parametrize(
    "value",
    [
        _Index(3),
        [0.5, _Index(1)],
        {"a": (_Index(2),)},
        type("Any", (), {"__eq__": lambda s, o: True})(),
        __import__("collections").UserList([type("Late", (), {"__float__": lambda s: 0.25})()]),  # a lazy float inside
    ],
)
def test_an_answer_with_comparisons_of_its_own_is_refused(value):
    problem = not_plain(value)
    assert problem and "must be a plain" in problem


@pytest.mark.parametrize("value", [3, True, 0.25, "a", [0.1, 0.9], (1, 2), None, print, _Index, {"k": [1]}])
def test_a_plain_answer_passes(value):
    import numpy as np
    import torch

    assert not_plain(value) is None and not_plain(np.float64(0.5)) is None and not_plain(torch.zeros(2)) is None


def test_the_test_cell_refuses_an_answer_that_is_not_plain_and_a_hidden_builtin():
    verify = snapshot()
    verify({"answer": 3, "print": print}, ["answer"], ["int"])
    with pytest.raises(AssertionError, match=r"Not graded: answer must be a plain int, not _Index"):
        verify({"answer": _Index(3)}, ["answer"], [])
    with pytest.raises(AssertionError, match="Not graded: a cell binds int, which hides the builtin"):
        verify({"int": lambda x=0: 0}, [], ["int"])


def test_the_guard_hands_each_test_cell_the_answers_it_reads():
    nb, _ = _with_answer(1, HONEST_05_EX1["eve2: names of its own"])
    nb, _ = GuardSubmission().preprocess(nb, {"nbgrader": {"student": "s1"}})
    first = [c.source.splitlines()[0] for c in nb.cells if "exercise-1-tests" in str(c.metadata)]
    assert first == [
        "_course_integrity(globals(), ['most_weight_without_mask', 'weights_ex1'], ['int', 'print', 'range'])"
        + VERIFIED
    ]


def test_a_check_whose_inputs_all_come_out_empty_does_not_pass():
    import torch

    import course_lib as cl

    def empty(g):  # what trudy's int(...) -> 0 made of notebook 05's lengths_inputs
        return torch.randint(0, 1, (3,), generator=g), 0

    def reference(lengths, n):
        return cl.causal_mask(n) & cl.padding_mask(lengths, n)

    with pytest.raises(AssertionError, match="Not graded: .*every expected result of the 10 trials was empty"):
        cl.check_function(lambda lengths, n: torch.zeros(3, n, n, dtype=torch.bool), reference, empty, trials=10)


def test_a_function_handed_on_by_a_locked_cell_keeps_its_globals_protected():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _cell("import torch\nseen = []\ndef hook(*args):\n    seen.append(1)\nhooks = cl.register(hook)", locked=True),
        _cell("seen = [1, 2, 3]", solution=True),  # a hook the check runs through course_lib may read seen
        _cell("assert cl.run_hooks() == 1", grade=True, locked=True),
    ]
    assert [i for i, _ in findings(nb)] == [1]
