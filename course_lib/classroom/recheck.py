"""The grader's own run: every check decided again, in a kernel where no code of the submission runs.

:class:`Recheck` is an nbgrader autograde step after ``Execute`` (and :class:`~course_lib.classroom.evidence.
KeepNotGraded`). A test cell that passed in the submission's kernel passed in the word of a kernel that also ran the
submission's code, which could have changed what its checks say. So the grader runs the notebook again, in two fresh
kernels side by side, in empty folders:

- the **answers' kernel** runs the locked cells (as nbgrader put them back), the guard's ``VARIANT`` line, and the
  submission's own cells, answer cells and any it added, as written, but never a test cell: no check and no
  reference is defined there;
- the **checks' kernel** runs the locked cells, the ``VARIANT`` line and every test cell, but no cell of the
  submission's: an answer cell's place binds its implement-it answers to :class:`~course_lib.classroom.serve.Answer`
  (calling one runs the answer in the answers' kernel, on arguments sent as data), and a test cell first takes the
  values its by-hand answers have there now.

The two run cell by cell, in the notebook's order. A test cell that passed in the submission's kernel and fails in
the checks' kernel is "Not graded", with the checks' kernel's reason; the class report flags it. Code of the
submission can return anything from the answers' kernel, but it never runs where a check compares. A test cell that
hands an answer something that cannot be sent as data (:class:`~course_lib.classroom.serve.HandedOn`) keeps the
verdict of the submission's kernel and its evidence (:mod:`course_lib.classroom.evidence`). A refusal in the answers'
kernel ends it there and then (:mod:`course_lib.classroom.serve`), caught or not: every test cell after it fails.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import os
import shutil
import socket
import tempfile

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool, Integer

from .notebook import VARIANT_RE
from .serve import _WHY, GONE, Answer, HandedOn, connect, values
from .syntax import bound_names, parse

__all__ = ["CLEAN", "FAILED", "KEPT", "Recheck", "answers", "begin", "connect", "error_outputs", "function_answers",
           "keep_released_answers"]  # fmt: skip

CLEAN = "course_source"  # a cell's metadata: its source before the guard added its lines (classroom.guard)
KEPT = "course_recheck"  # a test cell's metadata after grading: why the submission's kernel's verdict was kept
_NAME = "_course_recheck"
_CONNECT = f"import course_lib.classroom.recheck as {_NAME}; {_NAME}.connect({{!r}}, {{}})  # the grader's own run"
_SERVE = "__import__('course_lib.classroom.serve').classroom.serve.serve({!r}, globals(), {!r})  # the grader's own run"
FAILED = ("Not graded: this check passed in the submission's kernel, but not in the grader's own run, where the "
          "answers run in a kernel of their own and the checks in another: {}")  # fmt: skip
_BUILTINS = frozenset(dir(builtins))  # never an answer's name in the grader's run (the reading flags hiding one)


# ---------------------------------------------------------------- in the checks' kernel


def answers(namespace: dict, functions: list[str]) -> None:
    """An answer cell's place: its implement-it answers bound to :class:`~course_lib.classroom.serve.Answer`."""
    for name in functions:
        namespace[name] = Answer(name)


def begin(namespace: dict, grade_id: str, names: list[str]) -> None:
    """A test cell's first line: its by-hand answers (``names``, the answer cells' and no others) bound to the values
    they have in the answers' kernel now."""
    namespace.update(values(names))


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


def _grader_cells(nb: NotebookNode, student: str) -> list[tuple[str | None, str | None]]:
    """The grader's run, cell by cell: what the answers' kernel runs (None: nothing) and what the checks' kernel runs.
    The checks' kernel binds values only to the answers' names (never a name of the notebook's own, such as a check's
    input or reference, nor a builtin's); it runs none of the submission's own code."""
    functions, cells = function_answers(nb), []
    answers = _answer_sources(nb)
    values = sorted(set().union(*(bound_names(a)[0] for a in answers)) - functions - _locked_names(nb) - _BUILTINS)
    for cell in nb.cells:
        meta, source = cell.metadata.get("nbgrader", {}), cell.metadata.get(CLEAN, cell.source)
        if cell.cell_type != "code":
            continue
        if meta.get("solution"):
            cells.append((cell.source, f"{_NAME}.answers(globals(), {sorted(functions & bound_names(source)[0])!r})"))
        elif _graded_id(cell):
            cells.append((None, f"{_NAME}.begin(globals(), {meta['grade_id']!r}, {values!r})\n{source}"))
        elif meta.get("locked"):
            cells.append((cell.source, source))  # (the answers' kernel: with the guard's snapshot, as the student's)
        elif "\n" not in source and VARIANT_RE.search(source) and source.startswith(f"VARIANT = {student!r}  #"):
            cells.append((source, source))  # (the guard's line: classroom.guard)
        else:
            cells.append((cell.source, None))  # a cell the submission added: the answers' kernel's alone
    return cells


def _refused(cells: list) -> tuple[int, str] | None:
    """The first cell in which the answers' kernel refused something (a "Not graded" error: only the grader's refusals
    say so there, no test cell runs in it), and what; None if none. Honest code meets none: a refusal is code that
    reached for the course folder, another process, raw memory or a library's files (a red team's cell did only where
    it found itself in the answers' kernel)."""
    for index, cell in enumerate(cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error" and str(out.get("evalue", "")).startswith("Not graded"):
                return index, f"the answers' kernel refused a cell before this one: {out['evalue']}"
    return None


def _why_ended(listener: socket.socket) -> str | None:
    """Why the answers' kernel ended on a refusal, as it wrote before it ended on the line it opened to ``listener``
    before the submission's first cell (:func:`course_lib.classroom.serve._ending`); None if it wrote nothing."""
    listener.settimeout(0)
    try:
        line, _ = listener.accept()
    except OSError:
        return None
    with line:
        line.settimeout(0)  # (what is there now: a kernel still running wrote nothing, and may write on shutdown)
        data = bytearray()
        with contextlib.suppress(OSError):
            while len(data) < _WHY and (chunk := line.recv(_WHY - len(data))):
                data += chunk
    why = data.decode("utf-8", "replace")
    return f"the answers' kernel refused a cell, and ended there: {why}" if why else None


class Recheck(Preprocessor):
    """nbgrader autograde step after ``Execute`` and ``KeepNotGraded``: see the module's docstring."""

    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled").tag(config=True)
    timeout = Integer(600, help="seconds a cell of the grader's own run may take").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        passed = {
            gid: cell
            for cell in nb.cells
            if (gid := _graded_id(cell)) and not any(o.get("output_type") == "error" for o in cell.get("outputs", []))
        }
        if passed:
            student = str(resources.get("nbgrader", {}).get("student", ""))
            own = resources.get("metadata", {}).get("path")  # (the submission's folder, where its kernel ran)
            verdicts = self._run(_grader_cells(nb, student), nb.metadata, own)
            for gid, cell in passed.items():
                why = verdicts.get(gid, "the grader's own run did not reach this test cell")
                if why is not None and why.startswith(f"{HandedOn.__name__}: "):
                    cell.metadata[KEPT] = why.split(": ", 1)[1]  # (its evidence stands: classroom.evidence)
                elif why is not None:
                    cell.outputs = error_outputs(FAILED.format(why))
        for cell in nb.cells:
            cell.metadata.pop(CLEAN, None)
        return nb, resources

    def _run(self, cells: list[tuple[str | None, str | None]], metadata: dict, own: str | None = None
             ) -> dict[str, str | None]:  # fmt: skip
        """Each test cell's first error in the checks' kernel (None: it passed), by grade id. The answers' kernel runs
        in ``own``, the submission's folder (its files; the course folder around it refused as in the student's
        kernel), or a folder of its own; the checks' kernel in an empty one."""
        from nbclient import NotebookClient
        from nbformat.v4 import new_code_cell, new_notebook

        folder = tempfile.mkdtemp(prefix="course-recheck-")
        try:
            socket_path, report, folders = os.path.join(folder, "answers.sock"), os.path.join(folder, "why.sock"), []
            for name in ("answers", "checks"):
                folders.append(os.path.join(folder, name))
                os.mkdir(folders[-1])
            folders[0] = own if own and os.path.isdir(own) else folders[0]
            pairs = [(_SERVE.format(socket_path, report), _CONNECT.format(socket_path, self.timeout)), *cells]
            runs = [new_notebook(cells=[new_code_cell(p[k] or "") for p in pairs], metadata=metadata) for k in (0, 1)]
            clients = [NotebookClient(run, timeout=self.timeout, allow_errors=True, resources={"metadata": {"path": f}})
                       for run, f in zip(runs, folders, strict=True)]  # fmt: skip
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
                listener.bind(report)
                listener.listen(1)
                stopped, ended, why = self._lockstep(clients, runs, pairs, listener)
            # (a refusal there: every check after it fails, as in the student's kernel; caught or not, it ended it)
            refused = (ended if ended is not None else len(pairs), why) if why else _refused(runs[0].cells)
            verdicts: dict[str, str | None] = {}
            for index, cell in enumerate(runs[1].cells[: None if stopped is None else stopped + 1]):
                if cell.source.startswith(f"{_NAME}.begin("):
                    gid = ast.parse(cell.source.split("\n", 1)[0]).body[0].value.args[1].value  # type: ignore
                    errors = [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.get("output_type") == "error"]
                    why = "the grader's own run stopped in this cell" if index == stopped else None
                    lost = refused and (refused[0] < index or (errors and GONE in errors[0]))  # (ended by a call)
                    verdicts[gid] = refused[1] if lost else errors[0] if errors else why
            return verdicts
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _lockstep(self, clients: list, runs: list, pairs: list, listener: socket.socket
                  ) -> tuple[int | None, int | None, str | None]:  # fmt: skip
        """Run the two kernels cell by cell (the answers' first); the index of the cell the checks' kernel stopped in,
        if it did (0: it never started), else None; the index of the cell the answers' kernel stopped in, if it did
        (its stopping only stops its cells); and why it ended on a refusal, read before the kernels are shut down
        (ipykernel's shutdown reads its own /proc/<pid>/stat, which the answers' kernel refuses)."""
        stopped, answering, ended, why = 0, True, None, [None]
        try:
            with contextlib.ExitStack() as stack:
                for client in clients:
                    client.reset_execution_trackers()
                    stack.enter_context(client.setup_kernel())
                stack.callback(lambda: why.__setitem__(0, _why_ended(listener)))  # (first out: before the shutdowns)
                with contextlib.suppress(OSError):  # its key: for the grader alone, not for code in the other kernel
                    os.remove(clients[1].km.connection_file)
                for index, pair in enumerate(pairs):
                    if pair[0] is not None and answering:
                        try:
                            clients[0].execute_cell(runs[0].cells[index], index)
                        except Exception as err:  # (the answers' kernel ended or ran out of time: its calls fail)
                            self.log.warning("the grader's answers' kernel stopped: %s", err)
                            answering, ended = False, index
                    if pair[1] is not None:
                        stopped = index
                        clients[1].execute_cell(runs[1].cells[index], index)
            return None, ended, why[0]
        except Exception as err:  # (the checks' kernel died, or a cell ran out of time: the cell it was in fails)
            self.log.warning("the grader's own run stopped: %s", err)
            return stopped, ended, why[0]
