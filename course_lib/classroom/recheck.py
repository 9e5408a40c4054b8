"""The grader's own run: each check decided again outside the submission's kernel, on what that kernel handed over.

:class:`Recheck` is an nbgrader autograde step after ``Execute`` (and :class:`~course_lib.classroom.evidence.
KeepNotGraded`). A test cell that passed in the submission's kernel passed in the word of a kernel that also ran the
submission's code. So a second, fresh kernel runs the notebook again, in an empty folder, with none of the
submission's cells: the locked cells as nbgrader put them back, the ``VARIANT`` line the guard wrote, and every test
cell, first handed what the submission's kernel handed over for it (:mod:`course_lib.classroom.claims`): the values
of its by-hand answers, what each implement-it answer returned on each trial of ``check_function`` (which there
takes those results instead of running the answer and compares them with its own reference on inputs it drew
itself), and what it returned each time the cell called it itself (:func:`calls_handed_over`). A test cell that
passed in the submission's kernel and fails here is "Not graded", with this run's reason.

A test cell that hands an answer on to code that runs it where nothing hands its results over (a model fed through
the answer, whose calls are counted) cannot be decided here: :func:`decided_outside` tells which can, and the others
keep the kernel's verdict and its evidence (:mod:`course_lib.classroom.evidence`). This run checks numbers, not who
computed them: a kernel made to lie could hand over the results of the check's own reference, which runs there too.
"""

from __future__ import annotations

import ast
import builtins
import json
import os
import shutil
import tempfile

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool, Integer

from .claims import MIME, Answer, decode, load, replaying
from .notebook import VARIANT_RE
from .syntax import bound_names, parse

__all__ = ["CALLED", "CLEAN", "FAILED", "Recheck", "answers", "begin", "calls_handed_over", "decided_outside",
           "error_outputs", "function_answers", "keep_released_answers", "take"]  # fmt: skip

CLEAN = "course_source"  # a cell's metadata: its source before the guard added its lines (classroom.guard)
_NAME = "_course_recheck"
CALLED = "_course_called"  # the name a graded kernel calls an answer through (the guard binds it: classroom.guard)
_TAKE = f"import course_lib.classroom.recheck as {_NAME}; {_NAME}.take({{!r}}, globals())  # the grader's own run"
FAILED = ("Not graded: this check passed in the submission's kernel, but not in the grader's own run outside it, on "
          "the answers that kernel handed over: {}")  # fmt: skip
_claims: dict[str, list] = {}
_BUILTINS = frozenset(dir(builtins))  # never an answer's name in the grader's run (the reading flags hiding one)


# ---------------------------------------------------------------- in the grader's kernel


def take(path: str, namespace: dict) -> None:
    """The first cell of the grader's run: the claims the submission's kernel handed over, per grade id."""
    with open(path, encoding="utf-8") as file:
        _claims.clear()
        _claims.update(load(file.read()))
    shell = getattr(__import__("IPython"), "get_ipython", lambda: None)()
    if shell is not None:  # no check replays outside a test cell, whichever way the last one ended
        shell.events.register("pre_run_cell", lambda *_: replaying(None))


def answers(namespace: dict, functions: list[str]) -> None:
    """An answer cell's place: its implement-it answers bound to :class:`~course_lib.classroom.claims.Answer`."""
    for name in functions:
        namespace[name] = Answer(name)


def begin(namespace: dict, grade_id: str, names: list[str]) -> None:
    """A test cell's first line: its by-hand answers (``names``, the answer cells' and no others) bound to the values
    handed over, its checks' and calls' results queued."""
    claims = _claims.get(grade_id, [])
    for claim in claims:
        values = claim.get("values", {})
        namespace.update({name: decode(values[name]) for name in names if name in values})
    replaying([claim for claim in claims if "check" in claim or "call" in claim])


# ---------------------------------------------------------------- which test cells


def _locked(cell: NotebookNode) -> bool:
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and not meta.get("solution") and bool(meta.get("locked") or meta.get("grade"))


def _locked_names(nb: NotebookNode) -> set[str]:
    """The names the locked cells (test cells too) bind: the notebook's own, never an answer's."""
    return set().union(*(bound_names(c.metadata.get(CLEAN, c.source))[0] for c in nb.cells if _locked(c)))


def keep_released_answers(nb: NotebookNode, resources: dict) -> None:
    """The guard's step: each answer cell's source as nbgrader's gradebook holds it, kept in the cell's metadata, so
    that which answers are functions and which are values is read from the assignment, never from what a submission
    wrote in its place (a ``def J_ex1`` before a junk value would make a by-hand answer a function: a red team's)."""
    info = resources.get("nbgrader", {})
    if not info.get("db_url"):
        return
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(info["db_url"]) as gradebook:
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("solution") and meta.get("grade_id"):
                try:
                    found = gradebook.find_source_cell(meta["grade_id"], info["notebook"], info["assignment"])
                except MissingEntry:
                    continue
                cell.metadata[CLEAN] = found.source


def _answer_sources(nb: NotebookNode) -> list[str]:
    """The answer cells as released (:func:`keep_released_answers`; as written where no gradebook said)."""
    solution = [c for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]
    return [c.metadata.get(CLEAN, c.source) for c in solution]


def function_answers(nb: NotebookNode) -> set[str]:
    """The names that the answer cells bind with ``def`` or ``class`` and no locked cell binds: implement-it answers."""
    names: set[str] = set()
    for source in _answer_sources(nb):
        tree = parse(source)
        names |= {n.name for n in getattr(tree, "body", []) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    return names - _locked_names(nb) - _BUILTINS


def _is_check_function(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "check_function"


def _calls(tree: ast.AST, functions: set[str]) -> tuple[list[ast.Name], set[int]]:
    """The names of implement-it answers that a cell calls itself, at its own level (not inside a ``def`` or a
    ``lambda``, not in ``check_function``'s first argument), and the ids of every name that is accounted for: those,
    all in ``check_function``'s first argument (the check hands over what it returned), and all in a function the
    cell defines and uses only there."""
    direct: list[ast.Name] = []
    checked = [n for c in ast.walk(tree) if _is_check_function(c) and c.args for n in ast.walk(c.args[0])]  # type: ignore
    handled, loads = {id(n) for n in checked}, [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    only_checked = {n.id for n in loads} - {n.id for n in loads if id(n) not in handled}  # (a function only checked)

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
            direct.append(node.func)
            handled.add(id(node.func))
        if isinstance(node, ast.FunctionDef) and node.name in only_checked:  # (split_then_merge: the check's to run)
            handled.update(id(n) for n in ast.walk(node))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            return
        for child in ast.iter_child_nodes(node):
            if id(child) not in handled:
                visit(child)

    visit(tree)
    return direct, handled


def decided_outside(source: str, functions: set[str]) -> bool:
    """Whether a test cell can be decided from what the kernel hands over: every implement-it answer it names is in
    the first argument of a ``check_function`` call (``check_function(fn, ...)``, ``check_function(lambda x: fn(x),
    ...)``) or called by the cell itself at its own level (``count_frames(*c)``: :func:`calls_handed_over`); never
    handed on as a value (``fed_calls(greedy_with_cache, ...)``) or called inside a function the cell defines."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    _, handled = _calls(tree, functions)
    return all(id(n) in handled for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in functions)


def calls_handed_over(source: str, functions: set[str], through: str = CALLED) -> str:
    """``source`` with each call of an implement-it answer at the cell's own level made through ``through``, which
    hands over what it returned (:func:`course_lib.classroom.claims.called`): ``count_frames(*c)`` becomes
    ``_course_called('count_frames', count_frames)(*c)``. The guard writes a graded test cell so."""
    try:
        direct, _ = _calls(ast.parse(source), functions)
    except SyntaxError:
        return source
    lines = source.splitlines(keepends=True)
    for name in sorted(direct, key=lambda n: (n.lineno, n.col_offset), reverse=True):  # (offsets: UTF-8 bytes)
        raw = lines[name.lineno - 1].encode("utf-8")
        replaced = f"{through}({name.id!r}, {name.id})".encode()
        lines[name.lineno - 1] = (raw[: name.col_offset] + replaced + raw[name.end_col_offset :]).decode("utf-8")
    return "".join(lines)


# ---------------------------------------------------------------- the autograde step


def error_outputs(why: str) -> list:
    """A graded cell's outputs as an ``AssertionError`` that says ``why`` (nbgrader: 0 points)."""
    from nbformat.v4 import new_output

    return [new_output("error", ename="AssertionError", evalue=why, traceback=[f"AssertionError: {why}"])]


def _graded_id(cell: NotebookNode) -> str | None:
    meta = cell.metadata.get("nbgrader", {})
    if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
        return meta.get("grade_id")
    return None


def _grader_cells(nb: NotebookNode, student: str) -> list[str]:
    """The grader's run, cell by cell: the locked cells, the guard's ``VARIANT`` line, each answer cell as the names of
    its implement-it answers, each test cell after its claims (only of the answers' names: never a name of the
    notebook's own, such as a check's input or reference); none of the submission's own code."""
    functions, sources = function_answers(nb), []
    answers = _answer_sources(nb)
    values = sorted(set().union(*(bound_names(a)[0] for a in answers)) - functions - _locked_names(nb) - _BUILTINS)
    for cell in nb.cells:
        meta, source = cell.metadata.get("nbgrader", {}), cell.metadata.get(CLEAN, cell.source)
        if cell.cell_type != "code":
            continue
        if meta.get("solution"):
            sources.append(f"{_NAME}.answers(globals(), {sorted(functions & bound_names(source)[0])!r})")
        elif _graded_id(cell):
            sources.append(f"{_NAME}.begin(globals(), {meta['grade_id']!r}, {values!r})\n{source}")
        elif meta.get("locked"):
            sources.append(source)
        elif "\n" not in source and VARIANT_RE.search(source) and source.startswith(f"VARIANT = {student!r}  #"):
            sources.append(source)  # (the guard's line: classroom.guard)
    return sources


def _claims_of(cell: NotebookNode) -> list:
    """The claims a cell's outputs carry, taken out of them."""
    found = [out for out in cell.get("outputs", []) if MIME in out.get("data", {})]
    cell.outputs = [out for out in cell.get("outputs", []) if not any(out is f for f in found)]
    return [out["data"][MIME] for out in found if isinstance(out["data"][MIME], dict)]


class Recheck(Preprocessor):
    """nbgrader autograde step after ``Execute`` and ``KeepNotGraded``: see the module's docstring."""

    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled").tag(config=True)
    timeout = Integer(600, help="seconds a cell of the grader's own run may take").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        claims = {gid: _claims_of(cell) for cell in nb.cells if (gid := _graded_id(cell))}
        for cell in nb.cells:
            if cell.cell_type == "code":
                _claims_of(cell)  # (a claim outside a test cell counts for nothing)
        functions = function_answers(nb)
        passed = {
            gid: cell
            for cell in nb.cells
            if (gid := _graded_id(cell))
            and not any(out.get("output_type") == "error" for out in cell.get("outputs", []))
            and decided_outside(cell.metadata.get(CLEAN, cell.source), functions)
        }
        if passed:
            student = str(resources.get("nbgrader", {}).get("student", ""))
            verdicts = self._run(nb, _grader_cells(nb, student), claims)
            for gid, cell in passed.items():
                why = verdicts.get(gid, "the grader's own run did not reach this test cell")
                if why is not None:
                    cell.outputs = error_outputs(FAILED.format(why))
        for cell in nb.cells:
            cell.metadata.pop(CLEAN, None)
        return nb, resources

    def _run(self, nb: NotebookNode, sources: list[str], claims: dict) -> dict[str, str | None]:
        """Each test cell's error in the grader's own run (None: it passed), by grade id."""
        from nbclient import NotebookClient
        from nbformat.v4 import new_code_cell, new_notebook

        folder = tempfile.mkdtemp(prefix="course-recheck-")
        try:
            path = os.path.join(folder, ".claims.json")
            with open(path, "w", encoding="utf-8") as file:
                json.dump(claims, file)
            run = new_notebook(cells=[new_code_cell(s) for s in [_TAKE.format(path), *sources]], metadata=nb.metadata)
            client = NotebookClient(
                run, timeout=self.timeout, allow_errors=True, resources={"metadata": {"path": folder}}
            )
            stopped, verdicts = 0, {}  # (the cell the run stopped in, if it did: at first, starting the kernel)
            try:
                client.reset_execution_trackers()
                with client.setup_kernel():
                    for index, cell in enumerate(run.cells):
                        stopped = index
                        client.execute_cell(cell, index)
                stopped = None
            except Exception as err:  # (the kernel died, or a cell ran out of time: the cell it was in fails)
                self.log.warning("the grader's own run stopped: %s", err)
            for index, cell in enumerate(run.cells[: None if stopped is None else stopped + 1]):
                if cell.source.startswith(f"{_NAME}.begin("):
                    gid = ast.parse(cell.source.split("\n", 1)[0]).body[0].value.args[1].value  # type: ignore
                    errors = [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.get("output_type") == "error"]
                    why = "the grader's own run stopped in this cell" if index == stopped else None
                    verdicts[gid] = errors[0] if errors else why
            return verdicts
        finally:
            shutil.rmtree(folder, ignore_errors=True)
