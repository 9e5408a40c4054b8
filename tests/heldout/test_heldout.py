"""Held-out attacks on issue 30's guards (tests/heldout/attacks.py), without nbgrader.

Every attack in CAUGHT must be caught: a shortcut raises ShortcutError under ``blocked(...)`` (and still computes the
right answer without the block, so it is a real shortcut), a tampering cell is flagged by ``guard.tampering``. The
others are holes, marked strict xfail: the suite stays green today and fails the day a hole is closed, which says
to move that attack into CAUGHT. A shortcut through a course function's unchecked twin, and a notebook shortcut
(NOTEBOOK_SHORTCUTS, against notebook 14's own check cell), must also score zero in the notebook's real check and be
flagged by the class report (:func:`course_lib.classroom.autograde.class_report`'s reading of the graded cells).
"""

import ast
import math
import warnings
from functools import cache

import nbformat
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import course_lib as cl
from course_lib.classroom.checks import check_function, explain_difference
from course_lib.classroom.exercises import ShortcutError, blocked
from course_lib.classroom.flags import flagged
from course_lib.classroom.guard import bound_names, findings, tampering
from course_lib.classroom.notebook import find_exercises
from course_lib.classroom.snapshot import snapshot
from course_lib.classroom.syntax import check_names
from course_lib.paths import NOTEBOOKS_DIR

from .attacks import (
    CAUGHT,
    HOLES,
    LECTURER_05_ATTACKS,
    NOTEBOOK_SHORTCUTS,
    READ_05,
    READ_HOLES,
    REFERENCE_ATTACKS,
    RUNTIME_ATTACKS,
    SHORTCUT_ATTACKS,
    TAMPERING_ATTACKS,
)

LOCKED = "import torch\nimport course_lib as cl\nimport torch.nn.functional as F\nimport math\nweights = [0.4, 0.6]\n"
PROTECTED, MODULES = bound_names(LOCKED)
# A graded test cell after the attack, reading what the locked cell binds and builtins: what the guard protects
CHECK = (
    "assert int(len(weights)) == 2 and answer_value == 3\n"
    "cl.check_answer(torch.tensor(weights), F.softmax(torch.tensor([0.0, math.log(1.5)]), -1))\n"
)


def _mha_reference(x_q, x_kv, W_q, W_k, W_v, W_o, num_heads):  # notebook 06's mha_reference
    layer = cl.MultiHeadAttention(x_q.shape[-1], num_heads, bias=False)
    with torch.no_grad():
        for lin, W in zip((layer.w_q, layer.w_k, layer.w_v, layer.w_o), (W_q, W_k, W_v, W_o)):
            lin.weight.copy_(W.T)
        return layer(x_q, x_kv)


def _softmax_inputs(g):
    return (torch.randn(2, 3, 5, generator=g),)


def _attention_inputs(g):
    return torch.randn(4, 3, generator=g), torch.randn(6, 3, generator=g), torch.randn(6, 2, generator=g)


def _mha_inputs(g):
    mats = [torch.randn(6, 6, generator=g) / math.sqrt(6) for _ in range(4)]
    return (torch.randn(2, 3, 6, generator=g), torch.randn(2, 4, 6, generator=g), *mats, 2)


def _backward_inputs(g):
    a = torch.softmax(3 * torch.randn(2, 3, 5, generator=g, dtype=torch.float64), dim=-1)
    return a, torch.randn(2, 3, 5, generator=g, dtype=torch.float64)


@cache
def _notebook(number: str) -> nbformat.NotebookNode:
    return nbformat.read(next(NOTEBOOKS_DIR.glob(f"{number}_*.ipynb")), as_version=4)


@cache
def _blocked_in(number: str, constant: str) -> tuple[str, ...]:
    """The names a notebook's check cells block, read from the notebook: ``SPLIT_MERGE = (...)`` of notebook 06."""
    for cell in _notebook(number).cells:
        for node in ast.parse(cell.source).body if cell.cell_type == "code" and constant in cell.source else ():
            if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [constant]:
                return ast.literal_eval(node.value)
    raise LookupError(f"notebook {number} binds no {constant}")


def _split_inputs(g):
    return torch.randn(2, 3, 6, generator=g), 3


def _logits_and(value):
    return lambda g: (torch.randn(3, 7, generator=g), value)


# exercise prefix -> (reference, inputs, the names its check blocks: a tuple, or (notebook, constant) read from it)
EXERCISES = {
    "split": (cl.split_heads, _split_inputs, ("06", "SPLIT_MERGE")),
    "merge": (cl.merge_heads, lambda g: (torch.randn(2, 3, 4, 2, generator=g),), ("06", "SPLIT_MERGE")),
    "rope": (cl.apply_rope, lambda g: (torch.randn(5, 6, generator=g),), ("07", "POSITION_FUNCTIONS")),
    "top_k": (cl.top_k_filter, _logits_and(3), ("12", "SAMPLING_FUNCTIONS")),
    "top_p": (cl.top_p_filter, _logits_and(0.8), ("12", "SAMPLING_FUNCTIONS")),
    "sdpa": (cl.scaled_dot_product_attention, _attention_inputs, ("course_lib.scaled_dot_product_attention",)),
    "softmax": (lambda s: torch.softmax(s, -1), _softmax_inputs, cl.SOFTMAX_FUNCTIONS),
    "attention": (cl.scaled_dot_product_attention, _attention_inputs, cl.ATTENTION_FUNCTIONS),
    "mha": (_mha_reference, _mha_inputs, ("06", "MHA_LAYERS")),
    "backward": (
        lambda a, g: a * (g - (a * g).sum(-1, keepdim=True)),
        _backward_inputs,
        cl.SOFTMAX_FUNCTIONS
        + (
            "course_lib.softmax_jacobian",
            "torch._softmax_backward_data",
            "torch.autograd.grad",
            "torch.autograd.functional.jacobian",
            "torch.Tensor.backward",
        ),
    ),  # fmt: skip
}


def _marked(names):
    def hole(name):
        return pytest.mark.xfail(strict=True, reason=f"hole: {HOLES[name][0]}")

    return [name if name in CAUGHT else pytest.param(name, marks=hole(name)) for name in names]


def _answer(name):
    """The attack's ``answer`` defined in a namespace like a notebook's, with its exercise's reference, inputs
    and blocked names."""
    reference, make_inputs, names = EXERCISES[name.split(":")[0]]
    names = _blocked_in(*names) if names and names[0].isdigit() else names
    namespace = {"torch": torch, "F": F, "nn": nn, "np": np, "cl": cl, "math": math, "__name__": "__main__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(SHORTCUT_ATTACKS[name], namespace)
    return namespace["answer"], namespace, reference, make_inputs(torch.Generator().manual_seed(0)), names


def test_every_attack_is_either_caught_or_a_documented_hole():
    assert not set(NOTEBOOK_SHORTCUTS) & (set(SHORTCUT_ATTACKS) | set(TAMPERING_ATTACKS) | set(REFERENCE_ATTACKS))
    attacks = set(SHORTCUT_ATTACKS) | set(TAMPERING_ATTACKS)
    assert CAUGHT <= attacks and not set(SHORTCUT_ATTACKS) & set(TAMPERING_ATTACKS)
    assert set(HOLES) == attacks - CAUGHT
    assert all(name.split(":")[0] in EXERCISES for name in SHORTCUT_ATTACKS)


@pytest.mark.parametrize("name", sorted(SHORTCUT_ATTACKS))
def test_the_shortcut_computes_the_right_answer(name):
    fn, _, reference, args, _ = _answer(name)
    assert explain_difference(fn(*args), reference(*args)) is None


@pytest.mark.parametrize("name", _marked(sorted(SHORTCUT_ATTACKS)))
def test_the_shortcut_is_caught(name):
    fn, namespace, _, args, names = _answer(name)
    # ShortcutError; TorchScript turns it into a RuntimeError of its own, without the message (a fail all the same)
    with pytest.raises(RuntimeError, match="is not available in this check|TorchScript interpreter"):
        with blocked(names, namespace=namespace, functions=(fn,)):
            fn(*args)


def _graded(*cells: tuple[str, dict]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    for source, meta in cells:
        nb.cells.append(nbformat.v4.new_code_cell(source))
        nb.cells[-1].metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, **meta}
    return nb


@pytest.mark.parametrize("name", _marked(sorted(TAMPERING_ATTACKS)))
def test_the_tampering_is_flagged(name):
    """Flagged as the guard reads a submission: the attack in an answer cell between the locked cell and a check."""
    nb = _graded((LOCKED, {"locked": True}), (TAMPERING_ATTACKS[name], {"solution": True}), (CHECK, {"grade": True,
                 "locked": True}))  # fmt: skip
    assert findings(nb) and [i for i, _ in findings(nb)] == [1]


@pytest.mark.parametrize("name", sorted(RUNTIME_ATTACKS))
def test_an_answer_that_compares_in_its_own_way_scores_zero_and_is_flagged(name, tmp_path):
    verify = snapshot()
    namespace = {"torch": torch, "cl": cl, "__name__": "__main__"}
    exec(compile(RUNTIME_ATTACKS[name], "<answer cell>", "exec"), namespace)
    assert namespace["answer_value"] == 999 or namespace["answer_value"][1] == 999  # it would pass a check's ==
    with pytest.raises(AssertionError, match="Not graded: answer_value must be a plain (int|float)") as err:
        verify(namespace, ["answer_value"], ["int", "len"])
    flags = _flagged(tmp_path, RUNTIME_ATTACKS[name], str(err.value))
    assert flags[0] == ("test", "not graded: an answer that compares in its own way")  # (and its reading, if any)


def _flagged(tmp_path, solution: str, error: str) -> list[tuple[str, str]]:
    """What the class report flags in an autograded notebook of one answer cell and one test cell that raised
    ``error`` (an ``AssertionError`` message, as the check printed it)."""
    nb = nbformat.v4.new_notebook()
    answer, test = nbformat.v4.new_code_cell(solution), nbformat.v4.new_code_cell("...")
    answer.metadata["nbgrader"] = {"solution": True, "grade": False, "locked": False, "grade_id": "answer"}
    test.metadata["nbgrader"] = {"solution": False, "grade": True, "locked": True, "grade_id": "test", "points": 1}
    test.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue=error, traceback=[])]
    nb.cells = [answer, test]
    for where in ("submitted", "autograded"):  # handed in, then graded: the notebook is not a file the answer wrote
        folder = tmp_path / where / "student" / "a"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "nn.ipynb")
    return flagged(tmp_path, "a", "student")


_TWIN_PREFIXES = ("split:", "merge:", "rope:", "top_k:", "top_p:", "sdpa:", "mha: the layer's unchecked")


@pytest.mark.parametrize("name", sorted(n for n in SHORTCUT_ATTACKS if n.startswith(_TWIN_PREFIXES)))
def test_a_twin_shortcut_scores_zero_in_the_real_check_and_is_flagged(name, tmp_path):
    fn, namespace, reference, _, names = _answer(name)
    make_inputs = EXERCISES[name.split(":")[0]][1]
    with pytest.raises(AssertionError, match=r"raised ShortcutError: course_lib\.\S+ \(the work of course_lib") as err:
        check_function(fn, reference, make_inputs, name="answer", trials=2, without=names)
    _refused_and_read(_flagged(tmp_path, SHORTCUT_ATTACKS[name], str(err.value)))


def _refused_and_read(flags: list[tuple[str, str]]) -> None:
    """The test refused the shortcut (a private function called is a shortcut, not tampering: classroom.tampering)."""
    assert flags == [("test", "a library shortcut was refused")], flags


def _decoder_mask_is_right(ns, g):
    args = ns["mask_inputs"](g)
    return explain_difference(ns["decoder_mask"](*args), ns["translator_mask"](*args)) is None


def _causal_padding_mask_is_right(ns, g):
    lengths, n = ns["lengths_inputs"](g)
    return (
        explain_difference(ns["causal_padding_mask"](lengths, n), cl.causal_mask(n) & cl.padding_mask(lengths, n))
        is None
    )


def _parameter_count_is_right(ns, g):
    return all(
        ns["qkv_parameter_count"](*s, bias=b) == ns["parameters_of_layer"](*s, b)
        for s in ns["sizes"]
        for b in (False, True)
    )


# notebook -> (what its check's refusal names, whether the shortcut's answer is right: f(namespace, generator))
_NOTEBOOK_SHORTCUT_CHECKS = {
    "14": (r"raised ShortcutError: course_lib\.(\S+ \(the work of course_lib\.)?Translator", _decoder_mask_is_right),
    "05": (
        r"raised ShortcutError: torch\.nn\.(modules\.transformer\._|Transformer\.)generate_square_subsequent_mask",
        _causal_padding_mask_is_right,
    ),
    # raised as it is: the check cell calls the answer itself, not through check_function
    "03": (r"torch\.nn\.Module is not available in this check", _parameter_count_is_right),
}


@pytest.mark.parametrize("name", sorted(NOTEBOOK_SHORTCUTS))
def test_a_notebook_shortcut_is_right_yet_refused_by_its_check_and_flagged(name, tmp_path):
    number, label = name.split(":")[0].split(" ", 1)
    refused, is_right = _NOTEBOOK_SHORTCUT_CHECKS[number]
    namespace = {"torch": torch, "cl": cl, "__name__": "__main__"}  # a notebook's cells share one namespace
    exec(compile(NOTEBOOK_SHORTCUTS[name], "<answer cell>", "exec"), namespace)
    with pytest.raises((AssertionError, ShortcutError), match=refused) as err:
        exec(compile(_check_cells(number)[label], "<check cell>", "exec"), namespace)
    assert is_right(namespace, torch.Generator().manual_seed(3))  # (what it reads was bound before the refusal)
    shown = f"{err.type.__name__}: {err.value}" if err.type is not AssertionError else str(err.value)
    _refused_and_read(_flagged(tmp_path, NOTEBOOK_SHORTCUTS[name], shown))


@cache
def _check_cells(number: str) -> dict[str, str]:
    """A notebook's check cells by exercise label, hidden tests included."""
    nb = _notebook(number)
    return {ex.label: nb.cells[ex.check_cell].source for ex in find_exercises(nb)}


@pytest.mark.parametrize("name", sorted(REFERENCE_ATTACKS))
def test_an_answer_calling_what_the_check_decides_with_is_refused_and_flagged(name):
    check = _check_cells("14")[name.split(":")[0].removeprefix("14 ")]
    assert tampering(REFERENCE_ATTACKS[name], PROTECTED, MODULES, check_names(check)), "the guard's reading"
    namespace = {"torch": torch, "cl": cl, "__name__": "__main__"}  # a notebook's cells share one namespace
    exec(compile(REFERENCE_ATTACKS[name], "<answer cell>", "exec"), namespace)
    with pytest.raises(AssertionError, match=r"raised ShortcutError: \S+ \((the check's|a function of the check)"):
        exec(compile(check, "<check cell>", "exec"), namespace)


# By-hand answers of objects of the cell's own classes, which the check itself no longer reads (issue 44, a fourth
# lecturer's lazy by-hand answer): "Not graded" before the verification is asked
REFUSED_BY_THE_CHECK = {"ned"}


def _student(name: str) -> str:
    return name.split(":")[0]


@pytest.mark.parametrize("name", sorted(LECTURER_05_ATTACKS), ids=_student)
def test_a_second_lecturers_cheat_passes_its_check_yet_is_not_graded_and_flagged(name, restored, tmp_path):
    """The grading path of a test cell: the snapshot taken in the first locked cell, the answer cell, then the test
    cell's verification (handed the answers it reads) before its check."""
    answer, check = LECTURER_05_ATTACKS[name]
    namespace = {"torch": torch, "cl": cl, "F": F, "math": math, "__name__": "__main__"}
    verify = snapshot()
    exec(compile(answer, "<answer cell>", "exec"), namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if _student(name) in REFUSED_BY_THE_CHECK:  # a by-hand answer of objects is not read (classroom.byhand)
            with pytest.raises(AssertionError, match=r"^Not graded: ") as err:
                exec(compile(check, "<check cell>", "exec"), namespace)
        else:
            exec(compile(check, "<check cell>", "exec"), namespace)  # passes: without the verification, full marks
            with pytest.raises(AssertionError, match=r"^Not graded: ") as err:
                verify(namespace, sorted(bound_names(answer)[0] & {"weights_ex1", "fixed_attention"}), ["float", "len"])
    flags = _flagged(tmp_path, answer, str(err.value))
    assert flags[0][1] in ("not graded: a checker was changed", "not graded: an answer that compares in its own way")


@pytest.mark.parametrize(
    "name",
    [n if n in READ_05 else pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=f"hole: {READ_HOLES[n]}"))
     for n in sorted(LECTURER_05_ATTACKS)],
    ids=_student,
)  # fmt: skip
def test_a_second_lecturers_cheat_is_read_as_tampering(name):
    answer, check = LECTURER_05_ATTACKS[name]
    nb = _graded((LOCKED, {"locked": True}), (answer, {"solution": True}), (check, {"grade": True, "locked": True}))
    assert [i for i, _ in findings(nb)] == [1]


def test_every_second_lecturers_cheat_is_read_or_a_documented_hole():
    assert READ_05 <= set(LECTURER_05_ATTACKS) and set(READ_HOLES) == set(LECTURER_05_ATTACKS) - READ_05
