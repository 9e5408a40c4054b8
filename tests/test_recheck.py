"""course_lib.classroom.claims and .recheck: each check decided again outside the submission's kernel, on what that
kernel handed over as data.

Whatever the submission's kernel shows is its word (tests/test_evidence.py: the layer that makes it hard to lie).
Here the kernel's word is forged outright, after it ran, as code reading raw memory could forge it (the seventeenth
trial): the grader's own run, a second real Jupyter kernel that runs none of the submission's cells, must still fail
a wrong answer, and must pass an honest one.
"""

import copy
import math

import nbformat
import numpy as np
import pytest
import torch
from nbformat.v4 import new_code_cell, new_notebook, new_output

from course_lib.classroom.claims import MIME, Answer, Unreadable, decode, encode, involves_answer
from course_lib.classroom.recheck import (
    CLEAN,
    Recheck,
    _grader_cells,
    calls_handed_over,
    decided_outside,
    function_answers,
)

TAKE = (
    "_course_integrity = __import__('course_lib.classroom.snapshot').classroom.snapshot.snapshot({})\n"
    "_course_called = __import__('course_lib.classroom.claims').classroom.claims.called"
)


@pytest.mark.parametrize(
    "value",
    [None, True, 3, 2**70, -0.1, math.inf, "text", 1 + 2j, [1, [2.5, 3]], (1, 2), torch.Size([2, 3]), {"a": [1]},
     np.float32(0.25), np.arange(6, dtype=np.int16).reshape(2, 3)],
)  # fmt: skip
def test_values_cross_as_data_unchanged(value):
    back = decode(encode(value))
    assert type(back) is type(value) and (
        np.array_equal(back, value) if isinstance(value, np.ndarray) else back == value
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.bool,
                                   torch.int64, torch.uint8, torch.complex64])  # fmt: skip
@pytest.mark.parametrize("shape", [(), (0, 3), (2, 3, 4)])
def test_tensors_cross_bit_for_bit(dtype, shape):
    t = (torch.randn(shape) * 100).to(dtype) if shape else torch.tensor(-1.5).to(dtype)
    strided = t.transpose(0, -1) if t.dim() > 1 else t  # (not contiguous: its values, in its shape)
    back = decode(encode(strided))
    assert type(back) is torch.Tensor and back.dtype == dtype and back.shape == strided.shape
    assert torch.equal(back.view(torch.uint8) if dtype.itemsize == 1 else back, strided.contiguous())


def test_torch_nn_layers_cross_with_their_settings_and_parameters():
    for layer in (torch.nn.Linear(3, 2), torch.nn.Linear(3, 2, bias=False), torch.nn.LayerNorm(4)):
        back = decode(encode(layer))
        assert type(back) is type(layer) and repr(back) == repr(layer)
        assert all(torch.equal(a, b) for a, b in zip(back.state_dict().values(), layer.state_dict().values()))
        assert [n for n, _ in back.named_parameters()] == [n for n, _ in layer.named_parameters()]
    assert isinstance(decode(encode(torch.nn.Sequential(torch.nn.Linear(2, 2)))), Unreadable), "only single layers"
    assert isinstance(decode({"module": ["Module", {}, {}, []]}), torch.nn.Module)
    assert isinstance(decode({"module": ["functional", {}, {}, []]}), Unreadable), "torch.nn's classes only"


def test_what_is_not_data_comes_back_as_something_no_check_accepts():
    huge = decode({"tensor": ["float64", [10**6, 10**6], ""]})  # (a red team's: no bytes, a shape to fill memory)
    assert isinstance(huge, Unreadable) and "without bytes" in repr(huge)
    back = decode(encode(object()))
    assert isinstance(back, Unreadable) and "builtins.object" in repr(back)
    assert isinstance(decode(encode(np.array([object()]))), Unreadable)


def test_a_check_function_involves_an_answer_directly_by_a_global_by_a_closure_or_a_partial():
    import functools

    namespace = {"fn": Answer("fn")}
    exec(
        "def wrapper(x):\n    return fn(x) + 1\nlam = lambda x: [fn(y) for y in x]\ndef other(x):\n    return x",
        namespace,
    )

    def as_ids(f):
        return lambda *a: f(*a)

    assert involves_answer(namespace["fn"]) and involves_answer(namespace["wrapper"])
    assert involves_answer(namespace["lam"]), "a comprehension inside a lambda: its code's constants are read too"
    assert involves_answer(as_ids(namespace["fn"])) and involves_answer(functools.partial(namespace["wrapper"], 1))
    assert not involves_answer(namespace["other"]) and not involves_answer(torch.softmax)


def test_a_test_cell_is_decided_outside_when_its_answers_run_through_check_function_or_its_own_calls():
    functions = {"f", "g"}
    assert decided_outside("cl.check_answer(x, ref)", functions)
    assert decided_outside("cl.check_function(f, ref, inputs)\ncl.check_function(lambda a: g(f(a)), ref, inputs)",
                           functions)  # fmt: skip
    assert decided_outside("check_function(as_ids(f), ref, inputs, name='f')", functions)
    assert decided_outside("cl.check_close(f(torch.ones(2)), ref, 'f')\nys = [g(c) for c in cases]", functions)
    assert decided_outside("def both(x):\n    return g(f(x))\ncl.check_function(both, ref, inputs)", functions)
    assert not decided_outside("def both(x):\n    return g(f(x))\nboth(1)", functions), "run where no check runs"
    assert not decided_outside("new, calls = fed_calls(f, model, prompt, 5)", functions), "handed on as a value"
    assert not decided_outside("cl.check_function(f, ref, inputs", functions), "unreadable: the kernel's verdict"


def test_the_calls_a_test_cell_makes_itself_are_made_through_the_grader_who_hands_their_results_over():
    source = "with cl.blocked(B, who='f'):\n    b_猫 = f(Q['猫'], g (K))  # 猫\ncl.check_function(f, ref, inputs)\n"
    rewritten = calls_handed_over(source, {"f", "g"})
    assert rewritten == (
        "with cl.blocked(B, who='f'):\n"
        "    b_猫 = _course_called('f', f)(Q['猫'], _course_called('g', g) (K))  # 猫\n"
        "cl.check_function(f, ref, inputs)\n"
    ), "offsets are UTF-8 bytes: a Chinese name before a call does not shift it; the check's argument stays"
    assert calls_handed_over("def h(x):\n    return f(x)\n", {"f"}) == "def h(x):\n    return f(x)\n"


def _cell(source: str, clean: str | None = None, **meta) -> nbformat.NotebookNode:
    cell = new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": True, **meta}
    if clean is not None:
        cell.metadata[CLEAN] = clean
    return cell


def _test(grade_id: str, answers: list[str], body: str) -> nbformat.NotebookNode:
    """A graded test cell as the guard writes it: the verification first, handed the answers the cell reads."""
    written = calls_handed_over(body, {"double"})
    return _cell(f"_course_integrity(globals(), {answers!r}, [])\n{written}", body, grade=True, grade_id=grade_id,
                 points=1)  # fmt: skip


SETUP = "import torch\nimport course_lib as cl\n\nfour = torch.tensor(4.0)\n\n\ndef apply(f, x):\n    return f(x)"
CELLS = [
    (SETUP, None),
    ("VARIANT = 's1'  # written by the grader: this student's numbers", None),
    (
        "x_ans = 3.0\ndef double(t):\n    torch.rand(1)  # (it draws)\n    return 2 * t\n"
        "def apply(f, x):  # (flagged)\n    return f(x)",
        "solution",
    ),
    ("value", ("x_ans",), "cl.check_answer(x_ans, torch.tensor(3.0), 'x')"),
    ("function", (), "cl.check_function(double, lambda t: 2 * t, lambda g: (torch.randn(3, generator=g),), name='d')"),
    (  # calls inside a blocked library (NumPy refused there: handed over after the cell), inputs drawn after them
        "direct",
        (),
        "torch.manual_seed(0)\nfor _ in range(2):\n    x = torch.randn(2)\n"
        "    with cl.blocked(('torch.softmax',), who='double', namespace=globals()):\n        twice = double(x)\n"
        "    cl.check_close(twice, 2 * x, 'double of x')",
    ),
    ("wrong", ("x_ans",), "cl.check_answer(x_ans, four, 'x against 4')"),
    ("handed", (), "cl.check_close(apply(double, torch.ones(2)), torch.full((2,), 2.0), 'double, handed on')"),
]


def _submission() -> nbformat.NotebookNode:
    cells = [_cell(f"{SETUP}\n{TAKE}", SETUP), new_code_cell(CELLS[1][0])]
    cells.append(_cell(CELLS[2][0], grade=False, solution=True, locked=False, grade_id="answer"))
    cells += [_test(gid, list(answers), body) for gid, answers, body in CELLS[3:]]
    cells.append(new_code_cell("x_ans = 99.0  # a cell of the student's own, after the answers"))
    return new_notebook(cells=cells)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The submission as the student's kernel ran it (before the grader's own run)."""
    nbclient = pytest.importorskip("nbclient")
    nb = _submission()
    folder = tmp_path_factory.mktemp("graded")
    nbclient.NotebookClient(nb, timeout=120, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}}).execute()  # fmt: skip
    return nb


def _rechecked(nb: nbformat.NotebookNode) -> dict[str, list[str]]:
    nb, _ = Recheck().preprocess(copy.deepcopy(nb), {"nbgrader": {"student": "s1"}})
    assert not any(CLEAN in c.metadata for c in nb.cells), "the clean sources are taken out"
    assert not any(MIME in o.get("data", {}) for c in nb.cells for o in c.get("outputs", [])), "claims taken out"
    graded = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    return {c.metadata["nbgrader"]["grade_id"]: [o.evalue for o in c.outputs if o.output_type == "error"]
            for c in graded}  # fmt: skip


def _cell_of(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def test_the_grader_runs_the_locked_cells_and_the_test_cells_never_the_submissions():
    sources = _grader_cells(_submission(), "s1")
    assert sources[0] == SETUP and sources[1].startswith("VARIANT = 's1'") and "x_ans = 99" not in "".join(sources)
    assert sources[2] == "_course_recheck.answers(globals(), ['double'])", "the answer cell: its functions' names"
    assert function_answers(_submission()) == {"double"}
    assert sources[3].startswith("_course_recheck.begin(globals(), 'value', ['x_ans'])\ncl.check_answer"), "no guard's"


def test_an_honest_submission_keeps_every_verdict_in_the_graders_own_run(executed):
    claims = [o for c in executed.cells for o in c.get("outputs", []) if MIME in o.get("data", {})]
    assert len(claims) >= 3, "the kernel handed over the by-hand values and the check's results"
    assert _rechecked(executed) == {"value": [], "function": [], "direct": [], "handed": [],
                                    "wrong": [_cell_of(executed, "wrong").outputs[-1].evalue]}  # fmt: skip
    assert "too small" in _cell_of(executed, "wrong").outputs[-1].evalue, "the kernel's own failure stays"


def _forged(nb: nbformat.NotebookNode, grade_id: str, claim: dict | None) -> nbformat.NotebookNode:
    """The kernel's word forged after it ran: the test cell passed, with ``claim`` as what it handed over."""
    nb = copy.deepcopy(nb)
    cell = _cell_of(nb, grade_id)
    data = [new_output("display_data", data={MIME: claim})] if claim is not None else []
    cell.outputs = [*data, new_output("stream", name="stdout", text="✓ forged\n")]
    return nb


@pytest.mark.parametrize(
    ("grade_id", "claim", "reason"),
    [
        ("wrong", {"values": {"x_ans": 3.0}}, "x against 4: yours, 3, is too small"),
        ("wrong", {"values": {"x_ans": 3.0, "four": 3.0}}, "yours, 3, is too small"),  # (a reference: no answer's)
        ("wrong", {"values": {"x_ans": {"tensor": ["load", [], ""]}}}, "not a Unreadable"),
        ("value", {"values": {"x_ans": 2.0}}, "yours, 2, is too small"),
        ("value", None, "name 'x_ans' is not defined"),
        ("function", {"check": "d", "outputs": [encode(torch.zeros(3))] * 5}, "d is wrong on trial 1"),
        ("function", {"check": "d", "outputs": []}, "handed over no result for trial 1"),
        ("function", {"check": "another", "outputs": [encode(torch.zeros(3))] * 5}, "no result for trial 1"),
        ("function", {"values": {"x_ans": 3.0}}, "no result for trial 1"),
        ("direct", {"call": "double", "output": encode(torch.ones(2))}, "double of x: 2 of 2 elements differ"),
        ("direct", None, "handed over no result for this call of it"),
    ],
)
def test_a_forged_pass_fails_in_the_graders_own_run_and_is_not_graded(executed, grade_id, claim, reason):
    errors = _rechecked(_forged(executed, grade_id, claim))[grade_id]
    assert len(errors) == 1 and errors[0].startswith("Not graded: this check passed in the submission's kernel")
    assert reason in errors[0], errors[0]


def test_a_test_cell_that_hands_its_answer_on_as_a_value_keeps_the_kernels_verdict(executed):
    """The limit, stated: ``apply(double, ...)`` runs the answer where no check hands over what it returned (as 12's
    ``fed_calls(greedy_with_cache, ...)`` counts the model's calls), so a forged pass there stands (the evidence of
    tests/test_evidence.py is what answers for it)."""
    assert _rechecked(_forged(executed, "handed", None))["handed"] == []


def test_the_guide_says_how_many_graded_test_cells_are_decided_outside_the_kernel():
    """The numbers of the lecturer's guide, counted from the nbgrader source versions of the notebooks."""
    from course_lib.classroom.nbgrader_source import nbgrader_notebook
    from course_lib.paths import NOTEBOOKS_DIR, ROOT

    cells = outside = exercises = whole = 0
    for path in sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")):
        source, _ = nbgrader_notebook(nbformat.read(path, as_version=4), path.stem)
        functions, by_exercise = function_answers(source), {}
        for cell in source.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                label = meta["grade_id"].split("-exercise-")[1].split("-")[0]
                by_exercise.setdefault(label, []).append(decided_outside(cell.source, functions))
        decided = [d for found in by_exercise.values() for d in found]
        cells, outside = cells + len(decided), outside + sum(decided)
        exercises, whole = exercises + len(by_exercise), whole + sum(all(f) for f in by_exercise.values())
    guide = " ".join((ROOT / "docs" / "lecturers_guide.md").read_text(encoding="utf-8").split())
    said = f"run decides {outside} of the {cells} graded test cells ({whole} of the {exercises} exercises whole)"
    assert said in guide and f"the other {cells - outside} hand the answer on" in guide, said


def test_no_name_of_the_notebooks_own_nor_a_builtin_is_an_answers_in_the_graders_run():
    """Whatever the submission's cells bind, the grader's run binds what the kernel handed over only to answers: not
    to a builtin (``range``), a locked name (``apply``) or a name of the guard's; and of the student's own cells it runs
    the guard's ``VARIANT`` line alone, never a cell that only starts like it."""
    nb = _submission()
    answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    answer.source += "\nrange = 3\ndef zip(*a):\n    return a"
    nb.cells.insert(2, new_code_cell("VARIANT = 's1'  # written by the grader\nimport os"))
    sources = _grader_cells(nb, "s1")
    assert function_answers(nb) == {"double"} and "import os" not in "".join(sources)
    assert sources[2] == "_course_recheck.answers(globals(), ['double'])"
    assert sources[3].startswith("_course_recheck.begin(globals(), 'value', ['x_ans'])")


def test_which_answers_are_functions_is_read_from_the_assignment_not_from_the_submission():
    """A red team's: ``def J_ex1(): pass`` before a junk value made a by-hand answer read as a function, so that its
    test cells were left to the kernel's word. The guard keeps each answer cell as the gradebook holds it (CLEAN), and
    the grader reads the answers' kinds there; an answer bound without ``def`` (``softmax_backward = _sb``) is still
    the assignment's function."""
    nb = _submission()
    answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    released = answer.source
    answer.source = "def x_ans():\n    pass\nx_ans = 2.0\ndef _d(t):\n    return 2 * t\ndouble = _d"
    answer.metadata[CLEAN] = released
    sources = _grader_cells(nb, "s1")
    assert function_answers(nb) == {"double"} and sources[2] == "_course_recheck.answers(globals(), ['double'])"
    assert sources[3].startswith("_course_recheck.begin(globals(), 'value', ['x_ans'])")
    assert decided_outside("cl.check_answer(x_ans, torch.tensor(3.0), 'x')", function_answers(nb))


def test_a_test_cell_in_which_the_graders_own_run_stopped_fails(tmp_path):
    """A red team's: the kernel of the grader's run dying inside a test cell left no error there, which read as a
    pass. The cell it stopped in fails, and the cells after it were never reached."""
    pytest.importorskip("nbclient")
    sources = [SETUP, "_course_recheck.begin(globals(), 'a', [])\nx = 1",
               "_course_recheck.begin(globals(), 'b', [])\nimport os\nos._exit(1)",
               "_course_recheck.begin(globals(), 'c', [])\nx = 2"]  # fmt: skip
    verdicts = Recheck(timeout=60)._run(new_notebook(), sources, {})
    assert verdicts["a"] is None and "stopped in this cell" in verdicts["b"] and "c" not in verdicts, verdicts
