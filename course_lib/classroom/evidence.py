"""A graded test cell scores only with evidence that it ran: nbgrader's autograde steps around ``Execute``.

nbgrader scores a test cell by the outputs the kernel made: an error scores 0, no error full marks, a number as its
first result that share of the points. The kernel runs the submission's code too, so what it shows is its word
(:mod:`course_lib.classroom.witness` says how a cell could make it lie, and what answers for it):

- :class:`GiveKey`, before ``Execute``: a random key for this run of this notebook, written with the graded test
  cells' sources to a file in the submission's folder, and a first cell of the grader's own that takes it
  (:func:`course_lib.classroom.witness.take`) before any cell of the submission runs;
- :class:`KeepNotGraded`, after ``Execute``: a test cell the guard made raise "Not graded" gets exactly that error as
  its outputs, whatever the kernel wrote; a graded test cell that shows no error must show its evidence, the HMAC of
  its grade id with the key (``course-evidence: ...``, which it then loses), else it gets "Not graded: no evidence
  that this test cell ran"; no test cell keeps a result (``execute_result``): the course's tests give their points
  by passing, never by a value. The grader's first cell is taken out again, and the key file deleted.
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import json
import os
import secrets
import tempfile
import uuid

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool

from .recheck import Recheck, error_outputs
from .witness import KEY_BYTES, MARK

__all__ = ["RAN", "GiveKey", "KeepNotGraded", "autograde_preprocessors", "evidence_line", "not_graded_line"]

_KEY = "course_evidence"  # where the key, the file and the grader's cell wait in nbconvert's resources
_TAKE = "__import__('course_lib.classroom.witness').classroom.witness.take({!r})  # the grader's key"
# The guard's last line of a graded test cell (classroom.guard's SNAPSHOT), and what a student reads beside it
RAN = "_course_integrity.ran({!r})  # the grader's own line: this cell's evidence that it ran"
NO_EVIDENCE = "Not graded: no evidence that this test cell ran as nbgrader wrote it"


def not_graded_line(source: str) -> str | None:
    """The message of the "Not graded" line the guard wrote first in a test cell, or None."""
    first = source.split("\n", 1)[0]
    if not first.startswith("raise AssertionError("):
        return None
    message = ast.parse(first).body[0].exc.args[0]  # type: ignore[attr-defined]
    return message.value if isinstance(message, ast.Constant) and str(message.value).startswith("Not graded") else None


def evidence_line(key: bytes, grade_id: str) -> str:
    """The line a graded test cell with ``grade_id`` prints when it ran as written, with ``key``."""
    return f"{MARK} {hmac.new(key, grade_id.encode(), hashlib.sha256).hexdigest()}"


def _graded(cell: NotebookNode) -> bool:
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def _witnessed(cell: NotebookNode) -> str | None:
    """The grade id of a graded test cell whose last line is the guard's evidence line, or None."""
    grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
    return grade_id if _graded(cell) and grade_id and cell.source.endswith(RAN.format(grade_id)) else None


class GiveKey(Preprocessor):
    """nbgrader autograde step before ``Execute``: the key, its file in the submission's folder (the kernel's working
    directory) and the grader's first cell, which reads and deletes it."""

    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        from nbformat.v4 import new_code_cell

        cells = {gid: cell.source for cell in nb.cells if (gid := _witnessed(cell))}
        if not cells:
            return nb, resources
        key = secrets.token_bytes(KEY_BYTES)
        folder = resources.get("metadata", {}).get("path") or tempfile.gettempdir()
        handle, path = tempfile.mkstemp(prefix=".course-key-", dir=folder)
        with os.fdopen(handle, "wb") as file:  # (mkstemp: readable by this user only; the layout: witness.KEY_BYTES)
            file.write(key + json.dumps(cells).encode("utf-8"))
        cell = new_code_cell(_TAKE.format(os.path.abspath(path)))
        cell["id"], cell.metadata["course_evidence"] = f"course-evidence-{uuid.uuid4().hex[:8]}", True
        nb.cells.insert(0, cell)
        resources[_KEY] = (key, path)
        return nb, resources


class KeepNotGraded(Preprocessor):
    """nbgrader autograde step after ``Execute``, on each graded test cell (see the module's docstring): a cell can
    keep the guard's line from raising, an input transformer rewrite later cells to ``pass``, a cell write a number
    first (the twelfth and thirteenth trials), or the kernel run a test cell as something else (the fourteenth)."""

    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        key, path = resources.pop(_KEY, (None, None))
        if path and os.path.exists(path):
            os.remove(path)  # (the grader's cell did not run)
        first = nb.cells[0] if nb.cells and nb.cells[0].metadata.get("course_evidence") else None
        if first is not None:
            nb.cells.remove(first)
        failed = [out.get("evalue", "") for out in (first or {}).get("outputs", []) if out.get("ename")]
        taken = "; ".join(failed)
        for cell in nb.cells:
            if _graded(cell):
                cell.outputs = _kept(cell, key, taken)
        return nb, resources


def _kept(cell: NotebookNode, key: bytes | None, taken: str) -> list:
    """A graded test cell's outputs as they count: the guard's "Not graded" line's error, or its evidence checked and
    taken out, without results."""
    outputs = [out for out in cell.get("outputs", []) if out.get("output_type") != "execute_result"]
    why = not_graded_line(cell.source)
    if why:
        if not any(out.get("output_type") == "error" and why in out.get("evalue", "") for out in outputs):
            why += " (the cell ran without raising it: a cell before it changed how the kernel runs cells)"
        return error_outputs(why)
    grade_id = _witnessed(cell) if key is not None else None
    if grade_id is None:
        return outputs
    stdout = [out for out in outputs if out.get("output_type") == "stream" and out.get("name") == "stdout"]
    lines = "".join(out.get("text", "") for out in stdout).splitlines(keepends=True)  # (a line may come in parts)
    line, shown, parts, kept = evidence_line(key, grade_id), False, [], []
    for text in lines:  # (the evidence may follow on a line the cell's print left open: "x" then "course-evidence")
        at = text.find(MARK)
        shown = shown or (at >= 0 and text[at:].rstrip("\n") == line)
        parts.append(text if at < 0 else text[:at])
    rest = "".join(parts)
    for out in outputs:
        if any(out is printed for printed in stdout):
            if out is stdout[0] and rest:
                out["text"] = rest  # what the cell printed, in one output where the first one was
                kept.append(out)
            continue
        kept.append(out)
    if shown or any(out.get("output_type") == "error" for out in kept):
        return kept
    return error_outputs(NO_EVIDENCE + (f" (the grader's first cell failed: {taken})" if taken else ""))


def autograde_preprocessors() -> list:
    """nbgrader's steps of autograde after sanitizing, with :class:`GiveKey` before ``Execute`` and
    :class:`KeepNotGraded` and :class:`~course_lib.classroom.recheck.Recheck` after it (before the grades are saved);
    for ``nbgrader_config.py``
    (:func:`course_lib.classroom.release.configure` sets it)::

        c.Autograde.autograde_preprocessors = autograde_preprocessors()
    """
    from nbgrader.converters.autograde import Autograde
    from nbgrader.preprocessors import Execute

    steps = list(Autograde.class_traits()["autograde_preprocessors"].default())
    at = steps.index(Execute)
    return [*steps[:at], GiveKey, Execute, KeepNotGraded, Recheck, *steps[at + 1 :]]
