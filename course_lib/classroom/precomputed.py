"""An answer cell that calls a function its notebook's checks block, outside the function a check calls.

A check blocks the library functions that would do an exercise's work only while it calls the student's function
(:func:`course_lib.classroom.exercises.blocked`). A twenty-second trial's answer cell called them when the cell ran,
before any check: ``_TABLES = {d: cl.sinusoidal_encoding(300, d) for d in range(2, 130, 2)}``, its function then only
looked the result up, and 07's exercises 3 to 5 scored in full, nothing refused or flagged. :func:`precomputed` reads
the code of each answer cell that runs when the cell runs (its top level, a function's default arguments and
decorators; not a function's body, which the check's blocking covers) for a call of a function that a check of the
notebook blocks: the dotted names of a tuple or list assigned to a name that a check hands to ``without=`` or
``blocked(...)``, or written there. The class report flags such a cell for a person (an answer may also call the
library to compare with it, which is honest): it does not refuse it.
"""

from __future__ import annotations

import ast

from nbformat import NotebookNode

from .calculator import _bound, _canonical, _dotted, _tree

__all__ = ["blocked_by_checks", "precomputed"]


def _strings(node: ast.AST | None) -> set[str]:
    """The dotted names in a literal tuple or list (or a sum of them)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _strings(node.left) | _strings(node.right)
    if isinstance(node, (ast.Tuple, ast.List)):
        return {
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str) and "." in e.value
        }
    return set()


def blocked_by_checks(nb: NotebookNode) -> set[str]:
    """Where every function the notebook's checks block is defined (``course_lib.positional.sinusoidal_encoding``)."""
    assigned: dict[str, set[str]] = {}
    handed: list[ast.AST] = []
    for cell in nb.cells:
        tree = _tree("".join(cell.source)) if cell.cell_type == "code" else None
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                assigned.setdefault(node.targets[0].id, set()).update(_strings(node.value))
            elif isinstance(node, ast.Call):
                handed += [k.value for k in node.keywords if k.arg == "without"]
                handed += node.args[:1] if getattr(node.func, "attr", getattr(node.func, "id", "")) == "blocked" else []
    names = set()
    for node in handed:
        names |= assigned.get(node.id, set()) if isinstance(node, ast.Name) else _strings(node)
    return {_canonical(name) for name in names if not name.endswith(".*")}


def _run_when_the_cell_runs(tree: ast.Module) -> list[ast.AST]:
    """The parts of a cell's code that run when it runs: its statements but functions' and classes' bodies, and
    functions' default arguments and decorators."""
    parts: list[ast.AST] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts += [*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d)]
        elif isinstance(node, ast.ClassDef):
            parts += [*node.decorator_list, *node.bases]
        else:
            parts.append(node)
    return parts


def precomputed(nb: NotebookNode) -> list[tuple[int, list[str]]]:
    """(cell index, the blocked functions it calls) for each answer cell (an nbgrader solution cell) whose code that
    runs when the cell runs calls a function the notebook's checks block."""
    blocked = blocked_by_checks(nb)
    bound = _bound(nb) if blocked else {}
    found = []
    for i, cell in enumerate(nb.cells):
        if not (blocked and cell.cell_type == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("solution")):
            continue
        tree = _tree("".join(cell.source))
        calls = [n for part in _run_when_the_cell_runs(tree) if tree for n in ast.walk(part) if isinstance(n, ast.Call)]
        used = set()
        for call in calls:
            parts = _dotted(call.func)
            if parts and parts[0] in bound and _canonical(".".join([bound[parts[0]], *parts[1:]])) in blocked:
                used.add(".".join(parts))
        if used:
            found.append((i, sorted(used)))
    return found
