"""The grader's own run: each check decided again outside the submission's kernel, on what that kernel handed over.

:class:`Recheck` is an nbgrader autograde step after ``Execute`` (and :class:`~course_lib.classroom.evidence.
KeepNotGraded`). A test cell that passed in the submission's kernel passed in the word of a kernel that also ran the
submission's code. So a second, fresh kernel runs the notebook again, in an empty folder, with none of the
submission's cells: the locked cells as nbgrader put them back, the ``VARIANT`` line the guard wrote, and every test
cell, first handed what the submission's kernel handed over for it (:mod:`course_lib.classroom.claims`): the values
of its by-hand answers, and what each implement-it answer returned on each trial of ``check_function``, which there
takes those results instead of running the answer and compares them with its own reference on inputs it drew itself.
A test cell that passed in the submission's kernel and fails here is "Not graded", with this run's reason.

A test cell that calls an answer itself (not through ``check_function``: ``count_frames(*c)``, a model fed through
the answer whose calls are counted) cannot be decided from results handed over: :func:`decided_outside` tells which
are, and the others keep the kernel's verdict and its evidence (:mod:`course_lib.classroom.evidence`).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import tempfile

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool, Integer

from .claims import MIME, Answer, load, replaying
from .notebook import VARIANT_RE

__all__ = ["CLEAN", "FAILED", "Recheck", "answers", "begin", "decided_outside", "error_outputs", "function_answers",
           "take"]  # fmt: skip

CLEAN = "course_source"  # a cell's metadata: its source before the guard added its lines (classroom.guard)
_NAME = "_course_recheck"
_TAKE = f"import course_lib.classroom.recheck as {_NAME}; {_NAME}.take({{!r}}, globals())  # the grader's own run"
FAILED = ("Not graded: this check passed in the submission's kernel, but not in the grader's own run outside it, on "
          "the answers that kernel handed over: {}")  # fmt: skip
_claims: dict[str, list] = {}


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


def begin(namespace: dict, grade_id: str) -> None:
    """A test cell's first line: its by-hand answers bound to the values handed over, its checks' results queued."""
    from .claims import decode

    claims = _claims.get(grade_id, [])
    for claim in claims:
        namespace.update({name: decode(value) for name, value in claim.get("values", {}).items()})
    replaying([claim for claim in claims if "check" in claim])


# ---------------------------------------------------------------- which test cells


def function_answers(nb: NotebookNode) -> set[str]:
    """The names that the answer cells bind with ``def`` or ``class``: implement-it answers."""
    names: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue
            names |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    return names


def decided_outside(source: str, functions: set[str]) -> bool:
    """Whether a test cell can be decided from what the kernel hands over: every implement-it answer it names is in
    the first argument of a ``check_function`` call (``check_function(fn, ...)``, ``check_function(lambda x: fn(x),
    ...)``), never called by the cell itself."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    inside: set[int] = set()
    for node in ast.walk(tree):
        call = node if isinstance(node, ast.Call) else None
        if call and call.args and getattr(call.func, "attr", getattr(call.func, "id", None)) == "check_function":
            inside |= {id(n) for n in ast.walk(call.args[0])}
    return all(id(n) in inside for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in functions)


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
    its implement-it answers, each test cell after its claims; none of the submission's own code."""
    functions, sources = function_answers(nb), []
    for cell in nb.cells:
        meta, source = cell.metadata.get("nbgrader", {}), cell.metadata.get(CLEAN, cell.source)
        if cell.cell_type != "code":
            continue
        if meta.get("solution"):
            names = sorted(functions & {n.name for n in ast.parse(source).body if hasattr(n, "name")})
            sources.append(f"{_NAME}.answers(globals(), {names!r})")
        elif _graded_id(cell):
            sources.append(f"{_NAME}.begin(globals(), {meta['grade_id']!r})\n{source}")
        elif meta.get("locked"):
            sources.append(source)
        elif VARIANT_RE.search(source) and source.startswith(f"VARIANT = {student!r}  #"):
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
            try:
                client.execute()
            except Exception as err:  # (the kernel died, or a cell ran out of time: what ran still counts)
                self.log.warning("the grader's own run stopped: %s", err)
            verdicts: dict[str, str | None] = {}
            for cell in run.cells:
                if cell.source.startswith(f"{_NAME}.begin(") and cell.get("execution_count"):
                    gid = ast.literal_eval(cell.source.split("\n", 1)[0].split(", ", 1)[1].rstrip(")"))
                    errors = [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.get("output_type") == "error"]
                    verdicts[gid] = errors[0] if errors else None
            return verdicts
        finally:
            shutil.rmtree(folder, ignore_errors=True)
