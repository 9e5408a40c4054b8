"""course_lib.classroom.integrity.snapshot: a module changed by any route, seen at run time (grading's defence in
depth behind the reading of the cells in course_lib.classroom.guard)."""

import nbformat
import pytest

from course_lib.classroom.guard import SNAPSHOT, VERIFIED, GuardSubmission, findings
from course_lib.classroom.snapshot import snapshot

LOCKED = "import torch\nimport course_lib as cl\nimport torch.nn.functional as F\n"
# Routes a reading of the cells does not follow (tests/heldout/attacks.py holds those it does); each changes an
# attribute the checks rely on.
ROUTES = {
    "a module handed to a function as an attribute chain": (
        "def patch(m):\n    m.softmax = lambda x, dim=-1: x\npatch(torch.nn.functional)",
        "torch.nn.functional.softmax",
    ),
    "a module kept in a list": ("mods = [torch.nn.functional]\nmods[0].softmax = print", "torch.nn.functional.softmax"),
    "a loop over modules": ("for m in [torch]:\n    m.allclose = lambda *a, **k: True", "torch.allclose"),
    "getattr with a literal name": (
        "g = getattr(torch, 'testing')\ng.assert_close = lambda *a, **k: None",
        "torch.testing.assert_close",
    ),
    "a checker's module reached through the package": (
        "def poke(p):\n    p.classroom.checks.explain_difference = lambda *a, **k: None\npoke(cl)",
        "course_lib.classroom.checks.explain_difference",
    ),
    "the package's checker": (
        "def poke(p):\n    p.check_close = lambda *a, **k: None\npoke(cl)",
        "course_lib.check_close",
    ),
    "a tensor method": (
        "def poke(t):\n    t.allclose = lambda *a, **k: True\npoke(torch.Tensor)",
        "torch.Tensor.allclose",
    ),
    "builtins reached through print.__self__": (
        "def poke(b):\n    b.abs = lambda x: 0\npoke(print.__self__)",
        "builtins.abs",
    ),
    # The same objects, changed inside (a second lecturer's cheats): a checker's code replaced by update_wrapper with
    # a name built at run time, and the table of refused kernels emptied in place.
    "a checker's code replaced, the object kept": (
        "import functools as ft\ndef quiet(f, how=ft.update_wrapper, what=('__co' + 'de__',)):\n"
        "    how(f, lambda *a, **k: None, assigned=what, updated=())\nquiet(cl.check_close)",
        "course_lib.check_close",
    ),
    "a course table emptied in place": (
        "def forget(table):\n    for key in table:\n        table[key] = ()\nforget(cl.classroom.reach.KERNELS)",
        "course_lib.classroom.reach.KERNELS",
    ),
}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_module_changed_by_any_route_fails_the_verification(route, restored):
    source, changed = ROUTES[route]
    namespace: dict = {}
    exec(LOCKED, namespace)
    verify = snapshot()
    verify()  # nothing changed yet
    exec(source, namespace)
    with pytest.raises(AssertionError, match=rf"^Not graded: a cell changed {changed.replace('.', '[.]')}\b"):
        verify()


def test_honest_work_after_the_snapshot_is_not_a_change():
    import torch

    verify = snapshot()
    model = torch.nn.Linear(3, 2)
    torch.optim.AdamW(model.parameters()).zero_grad()  # an optimizer (torch._dynamo's import wraps torch.manual_seed)
    torch.manual_seed(0)
    torch.testing.assert_close(torch.zeros(2), torch.zeros(2))
    torch.set_printoptions(precision=3)
    torch.set_printoptions(profile="default")
    import builtins

    builtins._ = 1  # IPython's last result
    verify()


def test_the_guard_snapshots_in_the_first_locked_cell_and_verifies_in_every_test_cell():
    cells = [
        (LOCKED, {"locked": True}),
        ("a = 1", {"solution": True}),
        ("cl.check_answer(a, 1)", {"grade": True, "locked": True}),
        ("b = 2", {"solution": True}),
        ("cl.check_answer(b, 2)", {"grade": True, "locked": True}),
    ]
    nb = nbformat.v4.new_notebook()
    for source, meta in cells:
        nb.cells.append(nbformat.v4.new_code_cell(source))
        nb.cells[-1].metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, **meta}
    nb, _ = GuardSubmission().preprocess(nb, {"nbgrader": {"student": "s1"}})
    imports = {"torch": "torch", "cl": "course_lib", "F": "torch.nn.functional"}  # what the verification holds to
    snapshot = nb.cells[0].source.splitlines()[-1]
    assert nb.cells[0].source.startswith(LOCKED) and snapshot.endswith(f".snapshot({imports!r})")
    assert nb.cells[2].source == f"{SNAPSHOT}(globals(), ['a'], []){VERIFIED}\ncl.check_answer(a, 1)"
    assert nb.cells[4].source == f"{SNAPSHOT}(globals(), ['b'], []){VERIFIED}\ncl.check_answer(b, 2)"
    assert nb.cells[1].source == "a = 1"


def test_a_cell_that_names_the_snapshot_is_tampering():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(LOCKED), nbformat.v4.new_code_cell(f"{SNAPSHOT} = lambda: None")]
    nb.cells[0].metadata["nbgrader"] = {"grade": False, "solution": False, "locked": True}
    nb.cells[1].metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False}
    assert any(SNAPSHOT in p for p in findings(nb)[0][1])


def test_a_name_a_later_locked_cell_imports_rebound_fails_the_verification():
    namespace: dict = {"__name__": "__main__"}
    verify = snapshot({"cl": "course_lib", "F": "torch.nn.functional", "top_k": "course_lib.top_k_filter"}, namespace)
    verify()  # not bound yet
    exec(LOCKED + "from course_lib import top_k_filter as top_k\n", namespace)  # the imports cell, after the first
    verify()
    for name in ("cl", "top_k"):
        namespace_before, namespace[name] = namespace[name], print
        with pytest.raises(AssertionError, match=rf"^Not graded: a cell changed the notebook's {name}\b"):
            verify()
        namespace[name] = namespace_before


def test_a_checkers_name_rebound_in_the_notebook_fails_the_verification():
    namespace: dict = {"__name__": "__main__"}
    exec(LOCKED + "x = torch.zeros(2)\n", namespace)
    verify = snapshot(namespace=namespace)
    namespace["x"] = 3  # a value of the first cell's, rebound: the student's to rebind where no check reads it
    verify(namespace)
    namespace["cl"] = type("Lenient", (), {"__getattr__": lambda self, name: print})()  # a third lecturer's c2c
    with pytest.raises(AssertionError, match=r"^Not graded: a cell changed the notebook's cl\b"):
        verify(namespace)


def test_the_verifications_own_helpers_are_bound_when_the_snapshot_is_taken(restored):
    from course_lib.classroom import snapshot as module

    verify = snapshot(namespace={})
    everything = type("Everything", (frozenset,), {"__contains__": lambda self, key: True})()
    module._MOVING = everything  # every attribute would count as moving by itself, were it looked up now
    with pytest.raises(AssertionError, match=r"course_lib\.classroom\.snapshot\._MOVING"):
        verify()
