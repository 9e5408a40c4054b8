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
- **What a reading misses.** The first locked code cell also takes a snapshot of the modules the checks rely on
  (:func:`course_lib.classroom.snapshot.snapshot`), and every graded test cell first verifies it: a module changed
  by a route no reading follows (handed on as an attribute chain, kept in a container, fetched by ``getattr``) fails
  the test cells from there on, with what changed. A student's cell that names the snapshot is tampering.
- **The check's own reference.** A by-hand answer that names a function its check names too (``J_ex1 =
  cl.softmax_jacobian(a_ex1)``: :func:`course_lib.classroom.calculator.reference_calls`) is the check's computation,
  not the student's: that exercise's check cell raises first thing, "Not graded", with what the answer named.
- **Identity.** The ``VARIANT`` cell is rewritten to hold the student's nbgrader id, so by-hand exercises are graded
  with the numbers of that student, whatever the submission typed there: answers copied from another student's
  numbers score 0.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool

from .calculator import reference_calls
from .evidence import RAN, KeepNotGraded, autograde_preprocessors
from .notebook import VARIANT_RE, without_hidden_tests
from .recheck import CLEAN, keep_released_answers
from .syntax import _names_bound, bound_names, check_names, free_reads, import_keys, parse
from .tampering import BUILTINS, tampering

SNAPSHOT = "_course_integrity"  # the name the guard binds the snapshot's check to, in the first locked cell
# What a lecturer reads beside that check in an autograded notebook (the feedback leaves it out: classroom.release)
VERIFIED = "  # the grader's own line: the course's functions and your answers were not replaced"

__all__ = ["GuardSubmission", "KeepNotGraded", "RestoreHiddenTests", "autograde_preprocessors", "bound_names",
           "SNAPSHOT", "VERIFIED", "findings", "sanitize_preprocessors", "tampering"]  # fmt: skip


def _editable(cell: NotebookNode) -> bool:
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and (meta.get("solution") or not meta.get("locked"))


class _Reading(NamedTuple):
    """What a locked cell binds (all, by ``import``), reads free, and what each of its names leads to."""

    names: set[str]
    modules: set[str]
    free: set[str]
    leads: dict[str, set[str]]
    defined: set[str]


def _read(source: str) -> _Reading:
    return _Reading(*bound_names(source), *free_reads(source))


def _reached(reads: set[str], locked: dict[int, _Reading], functions: set[str]) -> set[str]:
    """``reads`` and what they lead to through the locked cells: a function's or class's globals (read when it is
    called), and the functions and classes a value's statement read (which the value may hold and call)."""
    seen, todo = set(), set(reads)
    while todo:
        name = todo.pop()
        seen.add(name)
        for reading in locked.values():
            lead = reading.leads.get(name, set())
            todo |= (lead if name in reading.defined else lead & functions) - seen
    return seen


def _handed(source: str) -> set[str]:
    """The names a cell reads other than to call them: functions it hands on (a hook, a callback, kept in a list)."""
    tree = parse(source)
    nodes = list(ast.walk(tree)) if tree is not None else []
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    return {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in called}


def _same_imports(nb: NotebookNode) -> dict[str, str]:
    """The names the locked cells bind only by importing one same thing, and its path: importing it again under
    that name binds the same object (``import math`` where the setup cell did), which changes nothing."""
    keys: dict[str, str] = {}
    others: set[str] = set()
    for cell in nb.cells:
        tree = parse(cell.source) if cell.cell_type == "code" and not _editable(cell) else None
        for node in tree.body if tree is not None else []:
            found = import_keys(node)
            for name in _names_bound(node):
                if name in found and keys.setdefault(name, found[name]) == found[name]:
                    continue
                others.add(name)
    return {name: key for name, key in keys.items() if name not in others}


def findings(nb: NotebookNode) -> list[tuple[int, list[str]]]:
    """(cell index, what was found) for every cell a student could edit or add (not the ``VARIANT`` cell) in which
    :func:`tampering` finds something. A cell may not rebind a name that a locked or graded test cell after it reads
    free (before binding it, or in a function's body, read when called), directly or through the functions of the
    locked cells it calls or hands on (a hook may call those at any time), where a locked cell binds the name or it is
    a builtin (``int``): the rebinding could change what a check sees. Any other name is the student's to rebind
    (``i``, ``visible``; ``math`` imported again). Values the locked cells made may not be changed; nor may a cell use
    the names only the graded test cells bind (their references, inputs and helpers:
    :func:`~course_lib.classroom.syntax.check_names`)."""
    locked = {i: _read(c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code" and not _editable(c)}
    made = set().union(*(r.names for r in locked.values()))
    modules = set().union(*(r.modules for r in locked.values()))
    functions = set().union(*(r.defined for r in locked.values()))
    tests = {i for i in locked if nb.cells[i].metadata.get("nbgrader", {}).get("grade")}
    in_tests = set().union(*(check_names(nb.cells[i].source) for i in tests))
    decided = in_tests - set().union(*(r.names for i, r in locked.items() if i not in tests))
    imports = _same_imports(nb)
    handed = functions & set().union(*(_handed(nb.cells[i].source) for i in locked))  # a hook may call them any time
    found = []
    for i, cell in enumerate(nb.cells):
        if _editable(cell) and not (
            VARIANT_RE.search(cell.source) and not cell.metadata.get("nbgrader", {}).get("solution")
        ):
            later = handed.union(*(r.free for j, r in locked.items() if j > i))
            protected = _reached(later, locked, functions) & (made | BUILTINS)
            problems = tampering(cell.source, protected, modules, decided, made=made, imports=imports)
            problems += [f"uses {SNAPSHOT}, the grader's own"] if SNAPSHOT in cell.source else []
            if problems:
                found.append((i, problems))
    return found


class GuardSubmission(Preprocessor):
    """nbgrader autograde step: flag tampering before the notebook runs, and write the student's id as VARIANT."""

    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        student = str(resources.get("nbgrader", {}).get("student", ""))
        for cell in nb.cells:  # (a submission's own: the grader's run would take it for a cell's clean source)
            cell.metadata.pop(CLEAN, None)
        keep_released_answers(nb, resources)  # which answers are functions: the assignment's word (classroom.recheck)
        found = findings(nb)
        for cell in nb.cells:
            if student and _editable(cell) and VARIANT_RE.search(cell.source):
                if not cell.metadata.get("nbgrader", {}).get("solution"):
                    cell.source = f"VARIANT = {student!r}  # written by the grader: this student's numbers"
        self._verify_before_tests(nb)
        if found:
            self._fail_tests_after(nb, *found[0])
        for answer, check, names in reference_calls(nb):
            what = f"Not graded: code cell {answer} computes its by-hand answer with {', '.join(names)}, "
            what += "which this exercise's check uses to decide (work it out on paper)"
            for cell in self._exercise_tests(nb, check):
                cell.source = f"raise AssertionError({what!r})\n{cell.source}"
        return nb, resources

    @staticmethod
    def _exercise_tests(nb: NotebookNode, start: int) -> list[NotebookNode]:
        """The graded test cells from ``start`` to the exercise's end (the next answer cell or heading): its visible
        check and its hidden tests, each worth its own points."""
        tests = []
        for cell in nb.cells[start:]:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("solution") or (cell.cell_type == "markdown" and cell.source.lstrip().startswith("#")):
                break
            if cell.cell_type == "code" and meta.get("grade"):
                tests.append(cell)
        return tests

    @staticmethod
    def _verify_before_tests(nb: NotebookNode) -> None:
        """The snapshot at the end of the first locked code cell (handed the names the locked cells import from
        torch and course_lib, which must stay those objects), its verification at the top of every test cell, handed
        the answers the cell reads (to be plain values) and the builtins it uses (not to be hidden), and the cell's
        evidence that it ran as its last line (:data:`RAN`)."""
        code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
        locked = {i: _read(nb.cells[i].source) for i in code if not _editable(nb.cells[i])}
        if not locked:
            return
        made = set().union(*(r.names for r in locked.values()))
        functions = set().union(*(r.defined for r in locked.values()))
        answers: set[str] = set()
        for i in code:
            cell = nb.cells[i]
            if i not in locked:
                answers |= bound_names(cell.source)[0] - made
            elif i != min(locked) and cell.metadata.get("nbgrader", {}).get("grade"):
                reads = _reached(locked[i].free, locked, functions)
                hidden = (reads & BUILTINS) - made
                check = f"{SNAPSHOT}(globals(), {sorted(reads & answers)!r}, {sorted(hidden)!r}){VERIFIED}"
                grade_id = cell.metadata["nbgrader"].get("grade_id")
                cell.metadata[CLEAN] = cell.source  # (for the grader's own run: classroom.recheck)
                cell.source = f"{check}\n{cell.source}" + (f"\n{RAN.format(grade_id)}" if grade_id else "")
        imports = {n: path for n, path in _same_imports(nb).items() if path.split(".")[0] in ("torch", "course_lib")}
        take = f"{SNAPSHOT} = __import__('course_lib.classroom.snapshot').classroom.snapshot.snapshot({imports!r})"
        nb.cells[min(locked)].metadata[CLEAN] = nb.cells[min(locked)].source
        nb.cells[min(locked)].source += f"\n{take}"

    @staticmethod
    def _fail_tests_after(nb: NotebookNode, index: int, problems: list[str]) -> None:
        what = "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "")
        line = f"raise AssertionError({f'Not graded: code cell {index} ' + what!r})"
        for cell in nb.cells[index:]:
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade"):
                cell.source = f"{line}\n{cell.source}"


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
