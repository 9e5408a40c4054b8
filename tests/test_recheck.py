"""course_lib.classroom.claims, .serve and .recheck: each check decided again where no code of the submission runs.

Whatever the submission's kernel shows is its word (tests/test_evidence.py: the layer that makes it hard to lie).
Here the kernel's word is forged outright, after it ran, as code reading raw memory could forge it (the seventeenth
trial), down to handing over the reference's own results for junk answers (the eighteenth): the grader's own run, two
more real Jupyter kernels (the answers' runs the submission's cells and no test cell; the checks' runs the test cells
and none of the submission's), must still fail a wrong answer, and must pass an honest one.
"""

import copy
import math

import nbformat
import numpy as np
import pytest
import torch
from nbformat.v4 import new_code_cell, new_notebook, new_output

import course_lib as cl
from course_lib.classroom.claims import Unreadable, decode, encode
from course_lib.classroom.recheck import CLEAN, KEPT, Recheck, _grader_cells, function_answers

# the test cells that hand an answer what cannot cross as data (12's fed_calls: a model whose forward counts its calls)
HANDED_ON = {"12_decoder_that_writes-exercise-3-tests", "12_decoder_that_writes-exercise-3-hidden-tests"}
TAKE = "_course_integrity = __import__('course_lib.classroom.snapshot').classroom.snapshot.snapshot({})"


@pytest.mark.parametrize(
    "value",
    [None, True, 3, 2**70, -0.1, math.inf, "text", 1 + 2j, [1, [2.5, 3]], (1, 2), torch.Size([2, 3]), {"a": [1]},
     np.float32(0.25), np.arange(6, dtype=np.int16).reshape(2, 3), torch.float16, torch.device("cpu")],
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


def test_layers_of_torch_nn_and_course_lib_cross_with_their_settings_parameters_and_layers():
    torch.manual_seed(0)
    model = cl.DecoderLM(7, 16, 2, 2, max_len=10).eval()  # (12's exercise 3 hands one to the answer)
    layers = (torch.nn.Linear(3, 2), torch.nn.Linear(3, 2, bias=False), torch.nn.LayerNorm(4), model,
              torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU()))  # fmt: skip
    for layer in layers:
        back = decode(encode(layer))
        assert type(back) is type(layer) and repr(back) == repr(layer) and back.training == layer.training
        assert all(torch.equal(a, b) for a, b in zip(back.state_dict().values(), layer.state_dict().values()))
        assert [n for n, _ in back.named_parameters()] == [n for n, _ in layer.named_parameters()]
    prompt = torch.randint(0, 7, (2, 4))
    assert torch.equal(cl.generate(decode(encode(model)), prompt, 5), cl.generate(model, prompt, 5))
    assert isinstance(decode({"module": ["torch.nn.modules.module:Module", {}, {}, [], {}]}), torch.nn.Module)
    for forged in ("torch.nn.functional:softmax", "os:system", "__main__:Mine", "torch.nn.modules.module:Module.x"):
        assert isinstance(decode({"module": [forged, {}, {}, [], {}]}), Unreadable), forged
    forged = {"module": ["torch.nn.modules.linear:Linear", {"__dict__": {"dict": []}}, {}, [], {}]}
    assert isinstance(decode(forged), Unreadable), "a setting is a plain name, never one of Python's own"


def test_a_layer_the_submission_wrote_or_holding_a_function_is_not_data():
    class Mine(torch.nn.Linear):
        pass

    assert encode(Mine(2, 2)) == {"other": f"{__name__}.{Mine.__qualname__}"}
    layer = torch.nn.Linear(2, 2)
    layer.forward = lambda x: x  # (12's fed_calls counts the model's calls so)
    assert "other" in str(encode(layer))


def test_values_cross_while_a_check_blocks_torchs_own_classes():
    """03's exercise 4 blocks ``torch.nn.Module`` (building a layer to count its parameters): the values its test cell
    sends, and what comes back, still cross (torch's classes as they were when the course_lib module loaded)."""
    values = [torch.ones(2), torch.Size([2]), torch.float64, torch.nn.Identity()]
    with cl.blocked(("torch.nn.Module", "torch.nn.Linear", "torch.Size"), who="qkv_parameter_count"):
        back = decode(encode(values[:3]))
        sent = encode(values[3])  # (a layer is sent; none comes back: the answer could not build one either)
    assert torch.equal(back[0], torch.ones(2)) and back[1] == torch.Size([2]) and back[2] is torch.float64
    assert isinstance(decode(sent), torch.nn.Identity)
    assert isinstance(decode({"dtype": "load"}), Unreadable) and isinstance(decode({"device": "disk"}), Unreadable)


def test_what_is_not_data_comes_back_as_something_no_check_accepts():
    huge = decode({"tensor": ["float64", [10**6, 10**6], ""]})  # (a red team's: no bytes, a shape to fill memory)
    assert isinstance(huge, Unreadable) and "without bytes" in repr(huge)
    back = decode(encode(object()))
    assert isinstance(back, Unreadable) and "builtins.object" in repr(back)
    assert isinstance(decode(encode(np.array([object()]))), Unreadable)


def _cell(source: str, clean: str | None = None, **meta) -> nbformat.NotebookNode:
    cell = new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": True, **meta}
    if clean is not None:
        cell.metadata[CLEAN] = clean
    return cell


def _test(grade_id: str, answers: list[str], body: str) -> nbformat.NotebookNode:
    """A graded test cell as the guard writes it: the verification first, handed the answers the cell reads."""
    return _cell(f"_course_integrity(globals(), {answers!r}, [])\n{body}", body, grade=True, grade_id=grade_id,
                 points=1)  # fmt: skip


SETUP = "import torch\nimport course_lib as cl\n\nfour = torch.tensor(4.0)\n\n\ndef apply(f, x):\n    return f(x)"
ANSWERS = (
    "x_ans = 3.0\ndef double(t):\n    torch.rand(1)  # (it draws)\n    return 2 * t\n"
    "def soft(t):\n    return torch.softmax(t, 0)\ndef apply_twice(f, x):\n    return f(f(x))"
)
INPUTS = "lambda g: (torch.randn(3, generator=g),)"
FUNCTION = f"def reference_double(t):\n    return 2*t\ncl.check_function(double, reference_double, {INPUTS}, name='d')"
BLOCKED = f"cl.check_function(soft, lambda t: t.exp() / t.exp().sum(), {INPUTS}, name='s', without=('torch.softmax',))"
CELLS = [
    ("value", ("x_ans",), "cl.check_answer(x_ans, torch.tensor(3.0), 'x')"),
    ("function", (), FUNCTION),
    (  # calls inside a blocked library, inputs drawn after them
        "direct",
        (),
        "torch.manual_seed(0)\nfor _ in range(2):\n    x = torch.randn(2)\n"
        "    with cl.blocked(('torch.softmax',), who='double', namespace=globals()):\n        twice = double(x)\n"
        "    cl.check_close(twice, 2 * x, 'double of x')",
    ),
    ("wrong", ("x_ans",), "cl.check_answer(x_ans, four, 'x against 4')"),
    ("handed", (), "cl.check_close(apply(double, torch.ones(2)), torch.full((2,), 2.0), 'double, handed on')"),
    ("blocked", (), BLOCKED),
    ("kept", (), "cl.check_close(apply_twice(lambda t: t + 1, torch.zeros(1)), torch.full((1,), 2.0), 'twice')"),
]


def _submission(answers: str = ANSWERS) -> nbformat.NotebookNode:
    cells = [_cell(f"{SETUP}\n{TAKE}", SETUP), new_code_cell("VARIANT = 's1'  # written by the grader: this student's")]
    cells.append(_cell(answers, grade=False, solution=True, locked=False, grade_id="answer"))
    cells += [_test(gid, list(answers), body) for gid, answers, body in CELLS]
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


def _rechecked(nb: nbformat.NotebookNode) -> tuple[dict[str, list[str]], nbformat.NotebookNode]:
    nb, _ = Recheck(timeout=60).preprocess(copy.deepcopy(nb), {"nbgrader": {"student": "s1"}})
    assert not any(CLEAN in c.metadata for c in nb.cells), "the clean sources are taken out"
    graded = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    return {c.metadata["nbgrader"]["grade_id"]: [o.evalue for o in c.outputs if o.output_type == "error"]
            for c in graded}, nb  # fmt: skip


def _cell_of(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _forged(nb: nbformat.NotebookNode, answers: str | None = None) -> nbformat.NotebookNode:
    """The kernel's word forged after it ran: every test cell passed; ``answers``, the answer cell's code."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.outputs = [new_output("stream", name="stdout", text="✓ forged\n")]
        if answers is not None and cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = answers
    return nb


def test_the_answers_kernel_runs_the_submissions_cells_and_the_checks_kernel_the_test_cells():
    cells = _grader_cells(_submission(), "s1")
    assert cells[0] == (f"{SETUP}\n{TAKE}", SETUP), "the answers' kernel takes the guard's snapshot, as the student's"
    assert cells[1][0] == cells[1][1] and cells[1][1].startswith("VARIANT = 's1'")
    assert cells[2] == (ANSWERS, "_course_recheck.answers(globals(), ['apply_twice', 'double', 'soft'])")
    assert cells[3][0] is None and cells[3][1].startswith("_course_recheck.begin(globals(), 'value', ['x_ans'])\ncl.")
    assert all(a is None for a, _ in cells[3:-1]), "no test cell in the answers' kernel: no check's reference there"
    assert cells[-1] == ("x_ans = 99.0  # a cell of the student's own, after the answers", None)
    assert function_answers(_submission()) == {"apply_twice", "double", "soft"}


def test_an_honest_submission_keeps_every_verdict_in_the_graders_own_run(executed):
    errors, nb = _rechecked(executed)
    assert errors == {"value": [], "function": [], "direct": [], "handed": [], "kept": [],
                      "wrong": [_cell_of(executed, "wrong").outputs[-1].evalue],
                      "blocked": [_cell_of(executed, "blocked").outputs[-1].evalue]}  # fmt: skip
    assert "too small" in errors["wrong"][0] and "torch.softmax" in errors["blocked"][0], "the kernel's own failures"
    assert "apply_twice is handed" in _cell_of(nb, "kept").metadata[KEPT], "a function cannot be sent as data"
    assert not any(KEPT in _cell_of(nb, gid).metadata for gid in ("value", "function", "direct", "handed"))


@pytest.mark.parametrize(
    ("grade_id", "answers", "reason"),
    [
        ("wrong", ANSWERS, "x against 4: yours, 3, is too small"),
        ("value", "x_ans = 2.0\n" + ANSWERS.split("\n", 1)[1], "yours, 2, is too small"),
        ("value", ANSWERS.split("\n", 1)[1], "name 'x_ans' is not defined"),
        ("function", "def double(t):\n    return torch.zeros_like(t)", "d is wrong on trial 1"),
        ("function", "def double(t):\n    return reference_double(t)", "name 'reference_double' is not defined"),
        ("function", "def double(t):\n    return object()", "expected a torch.Tensor, got Unreadable"),
        ("direct", "def double(t):\n    return torch.ones(2)", "double of x: 2 of 2 elements differ"),
        ("handed", "double = 3", "'int' object is not callable"),
        ("blocked", ANSWERS, "torch.softmax is not available in this check"),
        ("function", "import os\nos._exit(1)", "the answers' kernel did not answer"),
        (  # (a red team's: an exception named as the grader's own, to keep the student kernel's forged verdict)
            "direct",
            "class HandedOn(Exception):\n    pass\ndef double(t):\n    raise HandedOn('kept')",
            "the answer raised an exception named HandedOn",
        ),
        (
            "value",
            ANSWERS + "\nimport os\nopen(f'/proc/{os.getppid()}/status').read()",
            "the answers' kernel refused a cell, and ended there: Not graded: open of /proc/",
        ),  # (honest answers)
        *[  # (honest answers; the refusal caught: it ended the answers' kernel all the same)
            (
                "value",
                f"{ANSWERS}\ntry:\n    {reach}\nexcept BaseException:\n    pass",
                f"and ended there: Not graded: {why}",
            )
            for reach, why in [
                ("import os; open(f'/proc/{os.getppid()}/status').read()", "open of /proc/"),
                ("import subprocess; subprocess.run(['true'])", "asked for subprocess.Popen in a graded notebook"),
                ("import gc; gc.get_referrers(x_ans)", "asked for gc.get_referrers"),
            ]
        ],
        (  # (a refusal caught inside the answer, while the checks' kernel called it)
            "function",
            "def double(t):\n    try:\n        open('/proc/1/status')\n    except OSError:\n        pass\n"
            "    return 2 * t",
            "and ended there: Not graded: open of /proc/1/status",
        ),
    ],
)
def test_a_forged_pass_fails_in_the_graders_own_run_and_is_not_graded(executed, grade_id, answers, reason):
    """Every test cell's pass forged, whatever the answers are (the eighteenth trial's junk, with the reference's own
    results handed over, is such a forgery: nothing the submission's kernel hands over is read any more)."""
    errors = _rechecked(_forged(executed, answers))[0][grade_id]
    assert len(errors) == 1 and errors[0].startswith("Not graded: this check passed in the submission's kernel")
    assert reason in errors[0], errors[0]


def test_a_test_cell_that_hands_its_answer_what_cannot_be_sent_keeps_the_kernels_verdict(executed):
    """The limit, stated: ``apply_twice(lambda ...)`` hands the answer a function, which cannot cross as data (as 12's
    ``fed_calls(greedy_with_cache, ...)`` hands it a model whose calls it counts), so a forged pass there stands (the
    evidence of tests/test_evidence.py is what answers for it), and the cell says so in its metadata."""
    errors, nb = _rechecked(_forged(executed, "def apply_twice(f, x):\n    return x"))
    assert errors["kept"] == [] and KEPT in _cell_of(nb, "kept").metadata


def test_no_name_of_the_notebooks_own_nor_a_builtin_is_an_answers_in_the_graders_run():
    """Whatever the submission's cells bind, the checks' kernel binds answers' values only to answers' names: not to
    a builtin (``range``), a locked name (``apply``) or a name of the guard's; and of the student's own cells it runs
    the guard's ``VARIANT`` line alone, never a cell that only starts like it."""
    nb = _submission(ANSWERS + "\nrange = 3\ndef zip(*a):\n    return a")
    nb.cells.insert(2, new_code_cell("VARIANT = 's1'  # written by the grader\nimport os"))
    cells = _grader_cells(nb, "s1")
    assert function_answers(nb) == {"apply_twice", "double", "soft"}
    assert cells[2][1] is None, "the student's cell: the answers' kernel's alone"
    assert cells[3][1] == "_course_recheck.answers(globals(), ['apply_twice', 'double', 'soft'])"
    assert cells[4][1].startswith("_course_recheck.begin(globals(), 'value', ['x_ans'])")


def test_which_answers_are_functions_is_read_from_the_assignment_not_from_the_submission():
    """A red team's: ``def J_ex1(): pass`` before a junk value made a by-hand answer read as a function. The guard
    keeps each answer cell as the gradebook holds it (CLEAN), and the grader reads the answers' kinds there; an answer
    bound without ``def`` (``softmax_backward = _sb``) is still the assignment's function."""
    nb = _submission("def x_ans():\n    pass\nx_ans = 2.0\ndef _d(t):\n    return 2 * t\ndouble = _d")
    next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")).metadata[CLEAN] = ANSWERS
    cells = _grader_cells(nb, "s1")
    assert function_answers(nb) == {"apply_twice", "double", "soft"}
    assert cells[2][1] == "_course_recheck.answers(globals(), ['apply_twice', 'double', 'soft'])"
    assert cells[3][1].startswith("_course_recheck.begin(globals(), 'value', ['x_ans'])")


def test_a_test_cell_in_which_the_graders_own_run_stopped_fails():
    """A red team's: the checks' kernel dying inside a test cell left no error there, which read as a pass. The cell
    it stopped in fails, and the cells after it were never reached."""
    pytest.importorskip("nbclient")
    cells = [(SETUP, SETUP), (None, "_course_recheck.begin(globals(), 'a', [])\nx = 1"),
             (None, "_course_recheck.begin(globals(), 'b', [])\nimport os\nos._exit(1)"),
             (None, "_course_recheck.begin(globals(), 'c', [])\nx = 2")]  # fmt: skip
    verdicts = Recheck(timeout=60)._run(cells, {})
    assert verdicts["a"] is None and "stopped in this cell" in verdicts["b"] and "c" not in verdicts, verdicts


def test_the_guide_says_how_many_graded_test_cells_are_decided_outside_the_students_kernel():
    """The numbers of the lecturer's guide: the graded test cells, counted from the nbgrader source versions of the
    notebooks, less those that hand an answer what cannot cross as data (tests/test_grading.py finds exactly these
    kept when it grades each notebook's reference solution)."""
    from course_lib.classroom.nbgrader_source import nbgrader_notebook
    from course_lib.paths import NOTEBOOKS_DIR, ROOT

    cells = set()
    for path in sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")):
        source, _ = nbgrader_notebook(nbformat.read(path, as_version=4), path.stem)
        for cell in source.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                cells.add(meta["grade_id"])
    assert HANDED_ON <= cells
    guide = " ".join((ROOT / "docs" / "lecturers_guide.md").read_text(encoding="utf-8").split())
    said = f"The checks' kernel decides {len(cells) - len(HANDED_ON)} of the {len(cells)} graded test cells"
    assert said in guide, said
