"""Submissions graded on what they are: tampering found before a notebook runs, and each student's own numbers.

:class:`GuardSubmission` is a preprocessor for nbgrader's autograde, listed after nbgrader's own sanitizing steps
(``c.Autograde.sanitize_preprocessors``, see the lecturer's guide). It runs after nbgrader has put back the locked
cells and the hidden tests and before the notebook executes: outside the student's kernel, so nothing a submission
runs can change what it sees.

- **Tampering.** Every cell a student could edit or add (answer cells, the ``VARIANT`` cell, new cells) is read as a
  syntax tree, never run, by :func:`tampering`. Found: binding a name that a locked cell binds (``cl``,
  ``check_answer``, the check's inputs and references), assigning to or deleting an attribute of an imported module
  (``cl.check_answer = ...``, ``torch.allclose = ...``), and the tools of indirection (``setattr``, ``globals()``,
  ``vars()``, ``__dict__``, ``sys.modules``, ``builtins``, ``exec``, ``eval``, ``compile``, ``__import__``,
  ``importlib``, ``get_ipython``). Every test cell after such a cell then raises first thing, with a line that says
  what was found and where: 0 points for those exercises, and the reason in the feedback.
- **Identity.** The ``VARIANT`` cell is rewritten to hold the student's nbgrader id, so by-hand exercises are graded
  with the numbers of that student, whatever the submission typed there: answers copied from another student's
  numbers score 0.
"""

from __future__ import annotations

import ast

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool

from .notebook import VARIANT_RE, without_hidden_tests

__all__ = ["GuardSubmission", "RestoreHiddenTests", "bound_names", "sanitize_preprocessors", "tampering"]

_INDIRECTION = {"setattr", "delattr", "globals", "vars", "locals", "exec", "eval", "compile", "__import__",
                "get_ipython", "__builtins__", "builtins", "importlib", "sys"}  # fmt: skip
_DUNDERS = {"__dict__", "__code__", "__globals__", "__closure__", "__defaults__", "__kwdefaults__", "__class__"}
_CHECKERS = {
    "cl",
    "course_lib",
    "check_answer",
    "check_close",
    "check_function",
    "explain_difference",
    "torch",
    "VARIANT",
}


def _targets(node: ast.AST) -> list[ast.expr]:
    """The expressions a statement binds or deletes (``a = b = ...``, ``a += ...``, ``for a in``, ``del a``)."""
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [node.target]
    if isinstance(node, ast.Delete):
        return list(node.targets)
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    if isinstance(node, ast.NamedExpr):
        return [node.target]
    return []


def _flat(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [t for element in target.elts for t in _flat(element)]
    return [target.value] if isinstance(target, ast.Starred) else [target]


def _root(expr: ast.expr) -> str | None:
    """``cl.classroom.checks.check_answer`` -> ``"cl"``; ``x[0].y`` -> ``"x"``."""
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def bound_names(source: str) -> tuple[set[str], set[str]]:
    """(names the cell binds at its top level, names it binds by ``import``): what a locked cell gives the checks."""
    names, modules = set(), set()
    tree = _parse(source)
    for node in tree.body if tree is not None else []:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found = {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
            names |= found
            modules |= found if isinstance(node, ast.Import) else set()
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        for target in _targets(node):
            names |= {t.id for t in _flat(target) if isinstance(t, ast.Name)}
    return names, modules


def tampering(source: str, protected: set[str], modules: set[str]) -> list[str]:
    """What in ``source`` (a cell a student wrote) could change what the checks see, one line per finding.

    ``protected``: names the locked cells bind (rebinding one at the top level is tampering); ``modules``: names bound
    to imported modules (an attribute of one may not be assigned or deleted, at any depth of the code).
    """
    tree = _parse(source)
    if tree is None:
        return []  # it fails when it runs, and its exercise with it: not a matter of tampering
    found = []
    for node in tree.body:  # top-level bindings: function bodies have their own names
        defined = (
            [ast.Name(node.name)] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else []
        )
        for target in _targets(node) + defined:
            for t in _flat(target):
                if isinstance(t, ast.Name) and t.id in protected | _CHECKERS:
                    found.append(f"line {getattr(node, 'lineno', '?')}: rebinds {t.id}, which the checks use")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            clash = {(a.asname or a.name).split(".")[0] for a in node.names} & (protected | _CHECKERS)
            found += [f"line {node.lineno}: import rebinds {name}, which the checks use" for name in sorted(clash)]
    outside_functions = set(map(id, _outside_functions(tree)))
    harmless = _harmless_magics(tree)
    for node in ast.walk(tree):
        for target in _targets(node):
            for t in _flat(target):
                root = _root(t)
                if isinstance(t, (ast.Attribute, ast.Subscript)) and root in modules | _CHECKERS | _INDIRECTION:
                    found.append(f"line {node.lineno}: changes {ast.unparse(t)}, part of a module")
                elif (
                    isinstance(t, (ast.Attribute, ast.Subscript))
                    and root in protected
                    and id(node) in outside_functions
                ):
                    found.append(f"line {node.lineno}: changes {ast.unparse(t)}, which a locked cell made")
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if (name in _INDIRECTION or name in _DUNDERS) and id(node) not in harmless:
            found.append(f"line {node.lineno}: uses {name}, which can change what the checks see")
    return list(dict.fromkeys(found))


class GuardSubmission(Preprocessor):
    """nbgrader autograde step: flag tampering before the notebook runs, and write the student's id as VARIANT."""

    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        student = str(resources.get("nbgrader", {}).get("student", ""))
        protected: set[str] = set()
        modules: set[str] = set()
        editable = []
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("locked") and not meta.get("solution"):
                names, imported = bound_names(cell.source)
                protected |= names
                modules |= imported
            elif student and VARIANT_RE.search(cell.source) and not meta.get("solution"):
                cell.source = f"VARIANT = {student!r}  # written by the grader: this student's numbers"
            else:
                editable.append(i)
        first_flag = None
        for i in editable:
            problems = tampering(nb.cells[i].source, protected, modules)
            if problems and first_flag is None:
                first_flag = (i, problems)
        if first_flag is not None:
            self._fail_tests_after(nb, *first_flag)
        return nb, resources

    @staticmethod
    def _fail_tests_after(nb: NotebookNode, index: int, problems: list[str]) -> None:
        what = "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "")
        line = f"raise AssertionError({f'Not graded: code cell {index} ' + what!r})"
        for cell in nb.cells[index:]:
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade"):
                cell.source = f"{line}\n{cell.source}"


_HARMLESS_MAGICS = {"time", "timeit", "matplotlib"}


def sanitize_preprocessors() -> list:
    """nbgrader's sanitizing steps of autograde with :class:`GuardSubmission` after ``OverwriteCells`` (which puts
    back the locked cells and hidden tests); for ``nbgrader_config.py``::

        from course_lib.classroom.guard import sanitize_preprocessors
        c.Autograde.sanitize_preprocessors = sanitize_preprocessors()
    """
    from nbgrader.converters.autograde import Autograde
    from nbgrader.preprocessors import OverwriteCells

    steps = list(Autograde.class_traits()["sanitize_preprocessors"].default())
    at = steps.index(OverwriteCells)
    return [*steps[:at], RestoreHiddenTests, OverwriteCells, GuardSubmission, *steps[at + 1 :]]


class RestoreHiddenTests(Preprocessor):
    """nbgrader autograde step before ``OverwriteCells``: a test cell handed in exactly as released (its hidden tests
    removed) gets its hidden tests back here, silently. ``OverwriteCells`` would put them back too, but with a
    "checksum has changed!" warning for every test cell of every submission: noise that would hide the one warning
    that matters, a locked cell a student really changed (still reported)."""

    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        from nbgrader.api import Gradebook, MissingEntry

        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gradebook:
            for cell in nb.cells:
                meta = cell.metadata.get("nbgrader", {})
                if cell.cell_type != "code" or not (meta.get("grade") and meta.get("locked")):
                    continue
                try:
                    source = gradebook.find_source_cell(meta["grade_id"], info["notebook"], info["assignment"]).source
                except MissingEntry:
                    continue
                if without_hidden_tests(source) == cell.source:
                    cell.source = source
        return nb, resources


def _harmless_magics(tree: ast.AST) -> set[int]:
    """ids of the ``get_ipython`` names in ``get_ipython().run_line_magic('timeit', ...)`` (what ``%timeit`` becomes)
    and the like: measuring time or choosing a plot backend changes nothing the checks see."""
    found = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("run_line_magic", "run_cell_magic")
            and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in _HARMLESS_MAGICS
        ):
            found.add(id(node.func.value.func))
    return found


def _outside_functions(tree: ast.AST) -> list[ast.AST]:
    """The nodes of ``tree`` not inside a function, lambda or class body (where names are the cell's globals)."""
    nodes, todo = [], [tree]
    while todo:
        node = todo.pop()
        nodes.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return nodes


def _parse(source: str) -> ast.Module | None:
    """The syntax tree of a cell, IPython's magics (``%timeit``, ``!pip``) turned into Python first; None if it does
    not parse."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        source = TransformerManager().transform_cell(source)
    except ImportError:  # without IPython a cell with magics does not parse, and is read as nothing
        pass
    try:
        return ast.parse(source)
    except SyntaxError:
        return None
