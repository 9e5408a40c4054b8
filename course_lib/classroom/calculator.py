"""A by-hand answer uses Python as a calculator, not the library: what a reading of its answer cell finds.

A by-hand exercise (its heading says "(by hand)", "（手算）" in the Chinese edition) asks for numbers worked out with
pencil and paper; its answer cell may do the arithmetic (``math.exp(1) / (math.exp(1) + 1)``) and write the numbers
down as a tensor (``torch.tensor([...])``, ``np.array([...])``). Its check grades the numbers, whatever computed them:
an answer that calls the course's ``cl.attention_weights`` or ``torch.softmax`` on the exercise's inputs scores as
one worked out by hand. :func:`library_calls` reads the answer cells of a notebook's by-hand exercises and names what
they use of course_lib, torch, NumPy or another numerical library other than a tensor's constructor: the class report
(:mod:`course_lib.classroom.autograde`) flags the submission, for a person to look at (a calculator's arithmetic, or
an answer that only checks itself with the library, is allowed). An answer that names a function its check names too
(``cl.softmax_jacobian``, the check's reference, however imported: :func:`reference_calls`) is not graded: the guard
(:mod:`course_lib.classroom.guard`) fails that exercise's check cell, with the reason.

What a reading sees: the names the notebook's imports bind (``import course_lib as cl``, ``from torch import
softmax``, an import in the answer cell itself), used in the answer cell, in a cell the student added before the
check, or in a function, class or assignment of the student's cells that these name (followed transitively), and a
method called on a tensor such code constructs (``torch.tensor(s).softmax(0)``). A method called on a tensor that a
locked cell made is not seen.
"""

from __future__ import annotations

import ast
import importlib
import re

from nbformat import NotebookNode

__all__ = ["BY_HAND", "library_calls", "reference_calls"]

BY_HAND = re.compile(r"\bby hand\b|手算")  # in an exercise's heading
LIBRARIES = frozenset({"course_lib", "torch", "numpy", "scipy", "sklearn", "jax", "pandas", "sympy"})
# what writes numbers down as a tensor or an array, and computes nothing
CONSTRUCTORS = frozenset({"tensor", "as_tensor", "array", "asarray", "float16", "float32", "float64", "int32", "int64"})
PLACEHOLDER = "course_lib.classroom.exercises.unanswered"  # the student release's answer, before the student's
_HEADING = re.compile(r"(?m)^\s*(?:#+|\*\*)\s*(?:Exercise\b|练习).*$")
_MAGIC = re.compile(r"(?m)^\s*[%!].*$")
_TIMED = re.compile(r"(?m)^(\s*)%{1,2}time(?:it)?\b(?:\s+-[A-Za-z]+\s*\d*)*[ \t]*")  # %time's code is code


class _Literal(ast.NodeTransformer):
    """``getattr(cl, "softmax_jacobian")`` read as ``cl.softmax_jacobian``."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = node.args[1] if getattr(node.func, "id", None) == "getattr" and len(node.args) == 2 else None
        if isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value.isidentifier():
            return ast.copy_location(ast.Attribute(value=node.args[0], attr=name.value, ctx=ast.Load()), node)
        return node


def _tree(source: str) -> ast.Module | None:
    try:
        return _Literal().visit(ast.parse(_MAGIC.sub("", _TIMED.sub(r"\1", source))))
    except SyntaxError:
        return None


def _star(module: str) -> dict[str, str]:
    """The names ``from module import *`` binds, each to its dotted origin."""
    try:
        found = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - a module that fails to import binds nothing the reading can name
        return {}
    names = getattr(found, "__all__", None) or [name for name in vars(found) if not name.startswith("_")]
    return {name: f"{module}.{name}" for name in names}


def _bound(nb: NotebookNode) -> dict[str, str]:
    """Each name the notebook's imports bind to a numerical library or to something of one: name -> its dotted
    origin (``cl`` -> ``course_lib``, ``softmax`` -> ``torch.softmax``)."""
    bound = {}
    for cell in nb.cells:
        tree = _tree("".join(cell.source)) if cell.cell_type == "code" else None
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.Import):
                bound |= {a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0]
                          for a in node.names}  # fmt: skip
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                bound |= {a.asname or a.name: f"{node.module}.{a.name}" for a in node.names if a.name != "*"}
                if any(a.name == "*" for a in node.names) and node.module.split(".")[0] in LIBRARIES:
                    bound |= _star(node.module)
    libraries = {name: origin for name, origin in bound.items() if origin.split(".")[0] in LIBRARIES}
    return {name: origin for name, origin in libraries.items() if origin != PLACEHOLDER}


def _dotted(node: ast.AST) -> list[str] | None:
    """``cl.attention.weights`` as ["cl", "attention", "weights"]; None for anything but names and attributes."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def _made(node: ast.AST, bound: dict[str, str]) -> str | None:
    """``torch.tensor(s).masked_fill(...)`` as written (calls as ``(...)``) when ``node`` is calls and attributes
    on a name bound to a library and holds a call; None otherwise."""
    text, called = "", False
    while isinstance(node, ast.Call | ast.Attribute | ast.Subscript):
        if isinstance(node, ast.Call):
            text, called, node = "(...)" + text, True, node.func
        elif isinstance(node, ast.Attribute):
            text, node = f".{node.attr}{text}", node.value
        else:
            text, node = "[...]" + text, node.value
    return f"{node.id}{text}" if called and isinstance(node, ast.Name) and node.id in bound else None


def _used(tree: ast.Module, bound: dict[str, str]) -> list[str]:
    """What ``tree`` uses of the libraries, as written (``cl.attention_weights``, ``torch.tensor(...).softmax``)."""
    found, inside = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inside:
            parts = _dotted(node)
            if parts and parts[0] in bound:
                inside |= {id(n) for n in ast.walk(node)}
                if parts[-1] not in CONSTRUCTORS:
                    found.append(".".join(parts))
            elif (made := _made(node.value, bound)) is not None:
                found.append(f"{made}.{node.attr}")  # a method of a tensor the cell constructs
        elif isinstance(node, ast.Name) and id(node) not in inside and node.id in bound:
            if bound[node.id].split(".")[-1] not in CONSTRUCTORS or len(bound[node.id].split(".")) == 1:
                found.append(node.id)
    return list(dict.fromkeys(found))


def _editable(nb: NotebookNode, sources: list[str]) -> list[bool]:
    """Which cells are the student's: an answer cell (an nbgrader solution cell, or a cell with a solution region)
    and, in an nbgrader notebook, a code cell nbgrader neither locked nor grades (a cell the student added)."""
    metas = [cell.get("metadata", {}).get("nbgrader") or {} for cell in nb.cells]
    graded = any(metas)
    return [bool(meta.get("solution") or "BEGIN SOLUTION" in source
                 or (graded and cell.cell_type == "code" and not (meta.get("locked") or meta.get("grade"))))
            for cell, meta, source in zip(nb.cells, metas, sources, strict=True)]  # fmt: skip


def _root_name(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.Subscript | ast.Attribute):
        node = node.value
    return node


def _definitions(trees: list[ast.Module]) -> dict[str, list[ast.stmt]]:
    """Each name the student's cells bind at their top level (a function, a class, an assignment: ``helper =
    cl.softmax_jacobian``) -> the statements that bind it."""
    found: dict[str, list[ast.stmt]] = {}
    for tree in trees:
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names = {stmt.name}  # and the globals its body binds (`global helper`)
                names |= {name for n in ast.walk(stmt) if isinstance(n, ast.Global) for name in n.names}
            else:  # an assignment, a for loop's or a with's target, := or a match's capture anywhere in it
                names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                names |= {n.name for n in ast.walk(stmt) if isinstance(n, ast.MatchAs | ast.MatchStar) and n.name}
                targets = [n for n in ast.walk(stmt) if isinstance(n, ast.Subscript | ast.Attribute)
                           and isinstance(n.ctx, ast.Store)]  # fmt: skip
                names |= {root.id for n in targets if isinstance(root := _root_name(n), ast.Name)}  # tools["j"] = f
            for name in names:
                found.setdefault(name, []).append(stmt)
    return found


def _with_reached(body: list[ast.stmt], definitions: dict[str, list[ast.stmt]]) -> ast.Module:
    """``body`` and, transitively, the student's definitions it names (a helper in another cell that calls the
    check's reference, used in the answer: the twelfth trial's a1_othercell), as one syntax tree."""
    statements, seen, todo = list(body), set(), list(body)
    while todo:
        names = {n.id for n in ast.walk(todo.pop()) if isinstance(n, ast.Name)} - seen
        seen |= names
        for stmt in (s for name in names for s in definitions.get(name, ()) if s not in statements):
            statements.append(stmt)
            todo.append(stmt)
    return ast.Module(body=statements, type_ignores=[])


def _by_hand_answers(nb: NotebookNode):
    """(answer cell, its check cell, the answer's syntax tree, the notebook's library names) for each answer cell of
    a by-hand exercise checked as numbers (the next code cell that is not the student's calls ``check_answer``). The
    tree holds the answer cell, the cells the student added before the check, and the student's definitions these
    name, transitively: what computed the answer, wherever it was written."""
    bound, by_hand = _bound(nb), False
    sources = ["".join(cell.source) if cell.cell_type == "code" else "" for cell in nb.cells]
    editable = _editable(nb, sources)
    trees = {i: _tree(source) for i, source in enumerate(sources) if editable[i] and source.strip()}
    definitions = _definitions([tree for tree in trees.values() if tree])
    answers = [cell.get("metadata", {}).get("nbgrader", {}).get("solution") or "BEGIN SOLUTION" in source
               for cell, source in zip(nb.cells, sources, strict=True)]  # fmt: skip
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            headings = _HEADING.findall("".join(cell.source))
            by_hand = bool(BY_HAND.search(headings[-1])) if headings else by_hand
            continue
        if not (answers[i] and by_hand and cell.cell_type == "code" and trees.get(i)):
            continue
        j = next((j for j in range(i + 1, len(nb.cells)) if sources[j].strip() and not editable[j]), None)
        if j is not None and "check_answer(" in sources[j]:
            body = [stmt for k in range(i, j) if trees.get(k) for stmt in trees[k].body]
            yield i, j, _with_reached(body, definitions), bound


def library_calls(nb: NotebookNode) -> list[tuple[int, list[str]]]:
    """(cell index, what it uses) for each answer cell of a by-hand exercise that uses a numerical library other
    than to write numbers down. An answer cell: an nbgrader solution cell, or a cell with a solution region; a
    by-hand exercise's: under a heading that says so, and checked as numbers (the next code cell calls
    ``check_answer``; "one-hot by hand", a function written without the library's, is checked as a function)."""
    return [(i, used) for i, _, tree, bound in _by_hand_answers(nb) if (used := _used(tree, bound))]


def _origins(tree: ast.Module | None, bound: dict[str, str]) -> dict[str, str]:
    """The library functions a cell names, each by where it is defined, with the name as written: both
    ``cl.softmax_jacobian`` and a name imported by ``from course_lib import softmax_jacobian`` as
    ``course_lib.attention.softmax_jacobian`` (not a bare module, not a method of what a call returns)."""
    found = {}
    for name in _used(tree, bound) if tree else ():
        head, _, rest = name.partition(".")
        origin = bound[head] + (f".{rest}" if rest else "") if "(" not in name else ""
        if "." in origin:
            found.setdefault(_canonical(origin), name)
    return found


def _canonical(origin: str) -> str:
    """Where the object a dotted origin names is defined (``course_lib.attention.softmax_jacobian`` for
    ``course_lib.softmax_jacobian``, which re-exports it), or the origin itself when it cannot be found."""
    parts = origin.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # noqa: BLE001 - not a module (ImportError), or one that fails to import: read as written
            continue
        for part in parts[cut:]:
            found = getattr(found, part, None)
        module, name = getattr(found, "__module__", None), getattr(found, "__qualname__", None)
        return f"{module}.{name}" if isinstance(module, str) and isinstance(name, str) else origin
    return origin


def reference_calls(nb: NotebookNode) -> list[tuple[int, int, list[str]]]:
    """(answer cell, check cell, what both name) for each by-hand answer that names a library function its check
    cell names too: the reference the check compares with (``cl.check_answer(J_ex1, cl.softmax_jacobian(a))``), or
    another function the check decides with. Such an answer is the check's own computation, not the student's."""
    found = []
    for i, j, tree, bound in _by_hand_answers(nb):
        mine = _origins(tree, bound)
        check = _origins(_tree("".join(nb.cells[j].source)), bound) if mine else {}
        shared = {check[name] for name in mine.keys() & check.keys()}  # as the check names them
        shared = {name for name in shared if not name.endswith(".check_answer")}  # comparing: a self-check is allowed
        if shared:
            found.append((i, j, sorted(shared)))
    return found
