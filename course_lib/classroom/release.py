"""An nbgrader course set up the course's way: named stubs in the release, the guard in autograde, one call.

nbgrader's release replaces every solution region by a bare ``raise NotImplementedError()``, so a student would have
to read a locked cell to learn what to define. Two steps around nbgrader's ``ClearSolutions`` give the release the
stubs of the course's student version instead (:func:`course_lib.classroom.stubs.stub_source`), and the feedback
leaves the hidden tests' code and the grader's own lines out (:func:`feedback_preprocessors`):
``J_ex1 = unanswered("Exercise 1: J_ex1")``, ``raise NotImplementedError("Exercise 2: write the body of
softmax_backward")``. :func:`configure` sets them up in an ``nbgrader_config.py`` together with the autograde guard
(:mod:`course_lib.classroom.guard`), a cell timeout long enough for the training cells, and the Python's own
``bin`` first on the nbgrader process's PATH (:func:`nbgrader_environ`: nbgrader starts ``alembic`` by name, which a
virtual environment that was never activated does not put on PATH)::

    from course_lib.classroom.release import configure

    configure(get_config())
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from nbconvert.preprocessors import Preprocessor
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbformat import NotebookNode
from traitlets import Any as AnyTrait
from traitlets import Bool, List

from .evidence import RAN, not_graded_line
from .guard import SNAPSHOT, VERIFIED, autograde_preprocessors, sanitize_preprocessors
from .notebook import find_exercises, is_chinese
from .stubs import stub_source

__all__ = [
    "NamedStubs",
    "ShortTracebacks",
    "StashStubs",
    "WithoutGradersLines",
    "configure",
    "feedback_preprocessors",
    "generate_preprocessors",
]

_KEY = "course_named_stubs"  # where the stubs wait in nbconvert's resources, by cell id, while nbgrader clears


class StashStubs(Preprocessor):
    """Before ``ClearSolutions``: work out each answer cell's named stub while the solution is still there."""

    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        stubs, lang = resources.setdefault(_KEY, {}), "zh" if is_chinese(nb) else "en"
        for ex in find_exercises(nb):
            cell = nb.cells[ex.solution_cell]
            if cell.get("id") and cell.metadata.get("nbgrader", {}).get("solution"):
                stubs[cell["id"]] = stub_source(cell.source, ex.label, lang)[0]
        return nb, resources


class NamedStubs(Preprocessor):
    """After ``ClearSolutions``: each answer cell gets the named stub :class:`StashStubs` worked out."""

    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        stubs = resources.get(_KEY, {})
        for cell in nb.cells:
            if cell.get("id") in stubs:
                cell.source = stubs[cell["id"]]
        return nb, resources


def generate_preprocessors() -> list:
    """nbgrader's steps of ``generate_assignment`` with :class:`StashStubs` and :class:`NamedStubs` around
    ``ClearSolutions`` (before the checksums are computed, so the release's checksums are those of its stubs)."""
    from nbgrader.converters.generate_assignment import GenerateAssignment
    from nbgrader.preprocessors import ClearSolutions

    steps = list(GenerateAssignment.class_traits()["preprocessors"].default())
    at = steps.index(ClearSolutions)
    return [*steps[:at], StashStubs, ClearSolutions, NamedStubs, *steps[at + 1 :]]


class ShortTracebacks(Preprocessor):
    """For the feedback: a test cell's error shows only its message (``AssertionError: my_softmax is wrong on trial
    2 ...``), not the traceback, whose context lines would show the hidden tests' code around the failing line."""

    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        for cell in nb.cells:
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade"):
                for out in cell.get("outputs", []):
                    if out.get("output_type") == "error":
                        out["traceback"] = [f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"]
        return nb, resources


class PlainHTML(SanitizeHTML):
    """For the feedback: the HTML of every markdown cell and of every cell's output cleaned (bleach, as nbconvert's
    :class:`SanitizeHTML`) of scripts, event handlers (``onerror=``) and styles: a twenty-first trial's written answer
    held ``<script>`` and ``<img onerror=...>``, which ran when the feedback page was opened. Unlike nbconvert's
    defaults, the tags the course's own prose uses (paragraphs, headings, tables, ``span class=...``) stay tags.
    A markdown link to a file of the repository (the glossary's) becomes its text: the page is read on its own."""

    tags = List(default_value=["a", "abbr", "b", "blockquote", "br", "code", "div", "em", "h1", "h2", "h3", "h4", "h5",
                               "h6", "hr", "i", "img", "li", "ol", "p", "pre", "span", "strong", "sub", "sup", "table",
                               "tbody", "td", "th", "thead", "tr", "ul"]).tag(config=True)  # fmt: skip
    attributes = AnyTrait(default_value={"a": ["href", "title"], "img": ["src", "alt", "width", "height"],
                                         "span": ["class"], "div": ["class"], "td": ["align"],
                                         "th": ["align"]}).tag(config=True)  # fmt: skip
    strip = Bool(True).tag(config=True)  # a tag refused is dropped, its text kept
    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled").tag(config=True)

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int) -> tuple[NotebookNode, dict]:
        cell, resources = super().preprocess_cell(cell, resources, index)
        if cell.cell_type == "markdown":  # "a < b" as written ("&lt;" before a letter, "/", "!" or "?": no tag)
            cell.source = re.sub(r"&lt;(?![A-Za-z/!?])", "<", cell.source).replace("&gt;", ">")
            cell.source = _RELATIVE_LINK.sub(r"\1", cell.source)
            if _runs_code(cell.source):  # shown as the text it is, in a fence longer than any run of its backticks
                fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", cell.source)), default=0))
                cell.source = f"{fence}\n{cell.source}\n{fence}"
        return cell, resources


def _runs_code(markdown: str) -> bool:
    """Whether ``markdown``, rendered as nbconvert renders it, holds a link whose address runs code when followed
    (``javascript:``, however written: ``&#106;avascript:``, an autolink, a reference): a twenty-third trial's
    ``[link](javascript:alert(1))`` stayed live in its feedback page, since bleach cleans HTML, not Markdown."""
    from html.parser import HTMLParser

    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    addresses: list[tuple[str, str]] = []

    class Addresses(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list) -> None:
            addresses.extend((name, value or "") for name, value in attrs if name in _ADDRESSES)

    Addresses().feed(markdown2html_mistune(markdown))
    for name, value in addresses:
        scheme = re.match(r"([A-Za-z][\w+.-]*):", re.sub(r"[\x00-\x20]", "", value))  # as a browser reads it
        if scheme and scheme[1].lower() not in (_SAFE_SCHEMES | ({"data"} if name == "src" else set())):
            return True
    return False


_ADDRESSES = ("href", "src", "action", "formaction", "xlink:href", "poster")
_SAFE_SCHEMES = {"http", "https", "mailto"}


# A Markdown link to a file of the course's repository (``[key](../docs/glossary.md#key)``): the feedback page is
# opened alone, far from the repository, where such a link leads nowhere; its text stays, as plain text.
_RELATIVE_LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\((?![A-Za-z][\w+.-]*:|#)[^)\s]*(?:\s+\"[^\"]*\")?\)")


_TAKEN = f"{SNAPSHOT} = __import__('course_lib.classroom.snapshot')"  # the guard's last line of the first locked cell


class WithoutGradersLines(Preprocessor):
    """For the feedback: the notebook as the student handed it in, its outputs as graded, without what the grader
    added to run it (:mod:`course_lib.classroom.guard`, :mod:`course_lib.classroom.evidence`): a cell of the grader's
    own, and in a locked cell the snapshot taken at the end of the first, each graded test cell's verification first
    and its evidence line last, and a "Not graded" line the guard wrote first (its message stays, as the cell's
    error). A cell the student can edit keeps every line, ``VARIANT = '<id>'  # written by the grader`` too: it says
    which numbers were graded."""

    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        nb.cells = [cell for cell in nb.cells if not cell.metadata.get("course_evidence")]
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and (meta.get("locked") or (meta.get("grade") and not meta.get("solution"))):
                cell.source = _without_graders_lines(cell.source, meta.get("grade_id"))
        return nb, resources


def _without_graders_lines(source: str, grade_id: str | None) -> str:
    """A locked cell's ``source`` without the lines the guard wrote first and last (:class:`WithoutGradersLines`)."""
    lines = source.split("\n")
    while lines and _guards_first(lines[0]):
        lines.pop(0)
    while lines and (lines[-1].startswith(_TAKEN) or (grade_id and lines[-1] == RAN.format(grade_id))):
        lines.pop()
    return "\n".join(lines)


def _guards_first(line: str) -> bool:
    """Whether ``line`` is one the guard writes first in a graded test cell: its verification, or "Not graded"."""
    if line.startswith(f"{SNAPSHOT}(") and line.endswith(VERIFIED):
        return True
    try:
        return not_graded_line(line) is not None
    except SyntaxError:  # (a line of the course's own that opens a statement it ends later)
        return False


def feedback_preprocessors() -> list:
    """nbgrader's steps of ``generate_feedback`` with the grader's own lines (:class:`WithoutGradersLines`) and the
    hidden tests taken out of the feedback after the grades are read (nbgrader's feedback shows the autograded
    notebook, hidden tests put back): their code (``ClearHiddenTests``) and the tracebacks that would quote it
    (:class:`ShortTracebacks`). What a failed check says stays: its message names what went wrong, not the hidden
    inputs or expected values."""
    from nbgrader.converters.generate_feedback import GenerateFeedback
    from nbgrader.preprocessors import ClearHiddenTests, GetGrades

    steps = list(GenerateFeedback.class_traits()["preprocessors"].default())
    at = steps.index(GetGrades) + 1
    return [*steps[:at], WithoutGradersLines, ClearHiddenTests, ShortTracebacks, PlainHTML, *steps[at:]]


def configure(c: Any, *, timeout: int = 600) -> None:
    """Set an nbgrader config ``c`` up for the course: named stubs in the release, the guard in autograde (before the
    notebook runs, and after it: a "Not graded" line scores 0 even if a cell kept it from raising, and a graded test
    cell scores only with its evidence that it ran, :mod:`course_lib.classroom.evidence`, and is decided again in
    the grader's own run, :mod:`course_lib.classroom.recheck`), no hidden tests in the feedback, no script of a
    submission's in its feedback page (:class:`PlainHTML`), a cell timeout of
    ``timeout`` seconds in both runs (nbgrader's default of 30 s is too short for the training cells), and
    single-threaded kernels where the environment does not choose (OMP/MKL_NUM_THREADS)."""
    c.GenerateAssignment.preprocessors = generate_preprocessors()
    c.Autograde.sanitize_preprocessors = sanitize_preprocessors()
    c.Autograde.autograde_preprocessors = autograde_preprocessors()
    c.GenerateFeedback.preprocessors = feedback_preprocessors()
    c.Execute.timeout = c.Recheck.timeout = timeout
    os.environ["PATH"] = nbgrader_environ()["PATH"]  # nbgrader reads its config before it starts alembic
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # kernels inherit nbgrader's environment: one thread each, as
        os.environ.setdefault(name, "1")  # the class tool's jobs (threads spinning for a busy core stall grading)


def nbgrader_environ(environ: dict | None = None) -> dict:
    """``environ`` (default: this process's) with this Python's directory first on PATH: nbgrader runs ``alembic``
    by name, and a virtual environment's ``bin`` is on PATH only once activated."""
    environ = dict(os.environ if environ is None else environ)
    here = str(Path(sys.executable).parent)
    environ["PATH"] = os.pathsep.join([here, *(p for p in environ.get("PATH", "").split(os.pathsep) if p != here)])
    return environ
