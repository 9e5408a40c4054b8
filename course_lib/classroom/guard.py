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

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool

from .notebook import VARIANT_RE, without_hidden_tests
from .tampering import bound_names, tampering

__all__ = ["GuardSubmission", "RestoreHiddenTests", "bound_names", "sanitize_preprocessors", "tampering"]


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
