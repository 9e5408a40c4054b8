"""Issue 44: the exercises whose checks refuse NumPy say so, where a student meets the rule.

A check refuses a tensor handed to NumPy wherever it watches operators (:class:`course_lib.classroom.reach.Reaches`
with kernels: the exercise blocks a library function that an operator does the work of). Notebook 00, section 6, lists
those exercises in one paragraph ("00 (exercises 3 and 5), 01 (2–4), ..."), and its Chinese twin the same numbers.
Here the list is recomputed from the notebooks' own check cells: the names each graded check blocks (``without=`` of
``check_function``, the first argument of ``cl.blocked``), read from the cell and the notebook's constants, and the
refusal itself run on them. The message of the refusal says what the rule is and why, and points to notebook 00; the
class report lists it apart from a shortcut (tests/test_autograde.py).
"""

from __future__ import annotations

import ast
import math
import re
from functools import cache

import nbformat
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import course_lib as cl
from course_lib.classroom.checks import check_function
from course_lib.classroom.exercises import ShortcutError, blocked
from course_lib.classroom.notebook import find_exercises
from course_lib.classroom.reach import Reaches, kernels_of
from course_lib.paths import NOTEBOOKS_DIR

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
START_HERE = NOTEBOOKS_DIR / "00_start_here.ipynb"
ZH_START_HERE = NOTEBOOKS_DIR / "zh" / "00_start_here.ipynb"
# "01 (2–4)", "00 (exercises 3 and 5)", in the Chinese twin "01（练习 2–4）" too
_ITEM = re.compile(r"\b(\d\d)\s*[(（]([^)）]*)[)）]")


def _constants(nb) -> dict:
    """The notebook's upper-case names bound at the top of a code cell to what can be computed without running it
    (tuples of dotted names, built from course_lib's, torch's and each other)."""
    namespace = {"cl": cl, "torch": torch, "F": F, "nn": torch.nn, "np": np, "math": math}
    for cell in nb.cells:
        try:
            body = ast.parse(cell.source).body if cell.cell_type == "code" else []
        except SyntaxError:  # a cell of IPython's own syntax (%env)
            continue
        for node in body:
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            if isinstance(target, ast.Name) and target.id.isupper():
                try:
                    namespace[target.id] = eval(compile(ast.Expression(node.value), "cell", "eval"), namespace)
                except Exception:  # noqa: BLE001 (a constant of other things: a check that needs it fails below)
                    pass
    return namespace


def _blocked_names(check_source: str, namespace: dict) -> list[tuple[str, ...]]:
    """The names each checker call of a check cell blocks: ``without=`` of ``check_function``, the first argument of
    ``blocked`` (a name of the notebook, an attribute of ``cl`` or a literal)."""
    found = []
    for node in ast.walk(ast.parse(check_source)):
        if not isinstance(node, ast.Call):
            continue
        called = getattr(node.func, "attr", getattr(node.func, "id", None))
        if called == "check_function":
            given = [k.value for k in node.keywords if k.arg == "without"]
        elif called == "blocked":
            given = node.args[:1]
        else:
            continue
        if given:
            found.append(tuple(eval(compile(ast.Expression(given[0]), "check", "eval"), namespace)))
    return found


def _refuses_numpy(names: tuple[str, ...]) -> bool:
    """Whether a check that blocks ``names`` refuses a tensor handed to NumPy (run, not read: ``np.asarray`` of a
    tensor inside the doors the check opens)."""
    try:
        with Reaches({}, kernels_of(names), "answer"):
            np.asarray(torch.zeros(2))
    except ShortcutError:
        return True
    return False


@cache
def refusing_exercises() -> dict[str, tuple[int, ...]]:
    """Notebook number -> the exercises whose graded check refuses NumPy, from the checks themselves."""
    found = {}
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        namespace = _constants(nb)
        numbers = []
        for ex in find_exercises(nb):
            if ex.check_cell is None:
                continue
            if any(_refuses_numpy(names) for names in _blocked_names(nb.cells[ex.check_cell].source, namespace)):
                numbers.append(int(ex.label.split()[-1]))
        if numbers:
            found[path.name[:2]] = tuple(numbers)
    return found


def listed(path) -> dict[str, tuple[int, ...]]:
    """The list of notebook 00's paragraph on NumPy (in either language): notebook -> exercises."""
    nb = nbformat.read(path, as_version=4)
    paragraphs = [p for c in nb.cells if c.cell_type == "markdown" for p in c.source.split("\n\n")]
    lists = [p for p in paragraphs if "NumPy" in p and len(_ITEM.findall(p)) >= 3]
    assert len(lists) == 1, f"{path.name}: one paragraph lists the exercises that refuse NumPy, found {len(lists)}"
    out = {}
    for notebook, inside in _ITEM.findall(lists[0]):
        numbers = []
        for first, last in re.findall(r"(\d+)(?:\s*[–-]\s*(\d+))?", inside):
            numbers += range(int(first), int(last or first) + 1)
        out[notebook] = tuple(numbers)
    return out


def test_the_exercises_that_refuse_numpy_are_found():
    """The notebooks' checks, read: the softmax exercise of 00 refuses NumPy, the by-hand ones and 12-14 do not."""
    found = refusing_exercises()
    assert 3 in found["00"] and 2 not in found["00"], found
    assert not {"07", "08", "12", "13", "14"} & set(found), found


@pytest.mark.parametrize("path", [START_HERE, ZH_START_HERE], ids=["en", "zh"])
def test_notebook_00_lists_exactly_the_exercises_that_refuse_numpy(path):
    assert listed(path) == refusing_exercises()


def test_the_refusal_says_the_rule_why_and_the_fix_and_points_to_00():
    def my_softmax(s):  # an honest answer, computed in NumPy
        e = np.exp(np.asarray(s) - np.asarray(s).max(-1, keepdims=True))
        return torch.from_numpy(e / e.sum(-1, keepdims=True))

    def scores(g):
        return (torch.randn(3, 5, generator=g, dtype=torch.float64),)

    with pytest.raises(AssertionError) as err:
        check_function(my_softmax, lambda s: torch.softmax(s, -1), scores, without=cl.SOFTMAX_FUNCTIONS)
    message = str(err.value)
    assert message.startswith("my_softmax raised ShortcutError: NumPy is not available in this check: my_softmax "
                              "handed a tensor to NumPy"), message  # fmt: skip
    for said in ("PyTorch tensor operations only", "cannot see what NumPy computes", "Keep your values as tensors",
                 "torch.exp", "notebook 00, section 6"):  # fmt: skip
        assert said in message, said
    cells = nbformat.read(START_HERE, as_version=4).cells
    six = next(i for i, c in enumerate(cells) if c.source.startswith("## 6 · How exercises and checks work"))
    seven = next(i for i, c in enumerate(cells) if c.source.startswith("## 7 "))
    assert any("Tensors, not NumPy" in c.source for c in cells[six:seven]), "section 6 holds the list"


def _refusal(*steps: str) -> str:
    """The message of the refusal that fails a check whose answer runs ``steps`` ("softmax", "numpy"; "caught ..."
    catches the refusal and carries on)."""
    x = torch.randn(3, 5)
    with pytest.raises(ShortcutError) as err:
        with blocked(cl.SOFTMAX_FUNCTIONS, who="sly"):
            for step in steps:
                call = (lambda: torch.softmax(x, -1)) if step.endswith("softmax") else x.numpy
                try:
                    call()
                except ShortcutError:
                    if not step.startswith("caught"):
                        raise
    return str(err.value)


@pytest.mark.parametrize("steps", [("caught softmax", "numpy"), ("caught softmax", "caught numpy"),
                                   ("caught numpy", "caught softmax"), ("caught numpy", "softmax")])  # fmt: skip
def test_a_shortcut_is_reported_as_such_whatever_numpy_did_around_it(steps):
    """An answer that tries the library's softmax and falls back on NumPy (or the reverse), catching the refusals, is
    refused for the shortcut, not for NumPy: the class report must flag it (course_lib.classroom.autograde)."""
    assert _refusal(*steps).startswith("torch.softmax is not available in this check")


def test_numpy_alone_is_reported_as_numpy():
    assert _refusal("numpy").startswith("NumPy is not available in this check: sly handed a tensor to NumPy")
    assert _refusal("caught numpy").startswith("NumPy is not available in this check: sly handed a tensor to NumPy")
