"""Reading a course notebook as the classroom tools see it: its exercises, their check cells, hidden tests, VARIANT.

The lowest module of :mod:`course_lib.classroom` besides :mod:`~course_lib.classroom.stubs`: both the student version
(:mod:`~course_lib.classroom.student`) and the nbgrader source version (:mod:`~course_lib.classroom.nbgrader_source`)
build on it, and neither imports the other's internals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nbconvert.preprocessors import ClearOutputPreprocessor
from nbformat import NotebookNode

from .stubs import lines_of, solution_regions

__all__ = [
    "HIDDEN_BEGIN",
    "HIDDEN_END",
    "VARIANT_RE",
    "WRITTEN_TAG",
    "Exercise",
    "clear_outputs",
    "find_exercises",
    "is_chinese",
    "set_variant",
    "without_hidden_tests",
    "written_parts",
]

# "### Exercise 3 ...", "**Exercise 3 — ...**" in markdown, "# Exercise 3: ..." in code; in a Chinese twin
# (notebooks/zh/) "### 练习 3：...", "**练习 3，用文字回答**": the label is "Exercise 3" in both.
_EXERCISE_RE = re.compile(r"(?m)^\s*(?:#+|\*\*)\s*(?:Exercise\s+|练习\s*)([0-9A-Za-z]\w*)")
VARIANT_RE = re.compile(r"^VARIANT = [^#\n]*?(\s*#.*)?$", re.MULTILINE)  # the value, then a comment kept
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
_CHECK_RE = re.compile(r"\bcheck_(?:answer|close|function)\(|^\s*assert\b", re.MULTILINE)
# A written answer (a "why?" that a person marks): a markdown cell with this tag after the exercise's solution, its
# question first, then a paragraph that begins "**Model answer" with the answer and how it is marked.
WRITTEN_TAG = "written-answer"
_MODEL_ANSWER_RE = re.compile(r"(?m)^\*\*(?:Model answer|参考答案)")  # "参考答案": a Chinese twin's


def is_chinese(nb: NotebookNode) -> bool:
    """Whether ``nb`` is a notebook of the Chinese edition: its exercises are headed "练习 N"."""
    return any(
        cell.cell_type == "markdown" and re.search(r"(?m)^\s*(?:#+|\*\*)\s*练习", "".join(cell.source))
        for cell in nb.cells
    )


@dataclass
class Exercise:
    """One solution cell and its check: ``label`` is "Exercise 3" (or "Exercise #3" when the text names none)."""

    label: str
    solution_cell: int  # index in nb.cells
    check_cell: int | None  # index of the first code cell after it that calls a checker or asserts
    names: list[str] = field(default_factory=list)  # functions / values the student writes
    hidden_cell: int | None = None  # nbgrader source versions: the check's hidden tests, graded on their own
    written_cell: int | None = None  # a markdown cell tagged WRITTEN_TAG: a question a person marks


def find_exercises(nb: NotebookNode) -> list[Exercise]:
    """The exercises of a notebook: every code cell with a solution region, its label and its check cell.

    The label comes from the last heading-like "Exercise N" before the region (a markdown heading, a bold
    "**Exercise N**", or a "# Exercise N" comment in the code above the marker); the check cell is the first code
    cell after the solution that calls ``check_answer`` / ``check_close`` / ``check_function`` or asserts, before the
    next solution.
    """
    exercises: list[Exercise] = []
    current = None
    cells = nb.cells
    for i, cell in enumerate(cells):
        source = "".join(cell.source)
        if cell.cell_type == "markdown":
            found = _EXERCISE_RE.findall(source)
            current = found[-1] if found else current
            continue
        if cell.cell_type != "code":
            continue
        try:
            regions = solution_regions(source)
        except ValueError as err:
            raise ValueError(f"code cell {i}: {err}") from None
        if not regions:
            continue
        found = _EXERCISE_RE.findall("\n".join(lines_of(source)[: regions[0][0]]))
        current = found[-1] if found else current
        label = f"Exercise {current}" if current else f"Exercise #{len(exercises) + 1}"
        exercises.append(Exercise(label, i, None))
    for n, ex in enumerate(exercises):
        stop = exercises[n + 1].solution_cell if n + 1 < len(exercises) else len(cells)
        for j in range(ex.solution_cell + 1, stop):
            if cells[j].cell_type == "code" and _CHECK_RE.search("".join(cells[j].source)):
                ex.check_cell = j
                break
        written = (j for j in range(ex.solution_cell + 1, stop) if WRITTEN_TAG in cells[j].metadata.get("tags", []))
        ex.written_cell = next(written, None)
    return exercises


def written_parts(source: str) -> tuple[str, str]:
    """(question, model answer and marking) of a written-answer cell; ValueError where no "**Model answer" begins a
    line, or where the question before it is empty."""
    found = _MODEL_ANSWER_RE.search(source)
    if found is None or not source[: found.start()].strip():
        raise ValueError('a written-answer cell holds its question, then a line that begins "**Model answer"')
    return source[: found.start()].rstrip(), source[found.start() :].strip()


def clear_outputs(nb: NotebookNode) -> None:
    """Remove every output, execution count and execution timing of ``nb``, in place (nbconvert's preprocessor)."""
    ClearOutputPreprocessor(remove_metadata_fields={"collapsed", "scrolled", "execution"}).preprocess(nb, {})


def without_hidden_tests(source: str) -> str:
    """``source`` without its hidden-test regions (the marker lines included), as nbgrader releases a tests cell.

    Raises ``ValueError`` for a region without its end marker or one inside another.
    """
    out, inside = [], False
    for n, line in enumerate(lines_of(source), start=1):
        if line.strip() == HIDDEN_BEGIN:
            if inside:
                raise ValueError(f"line {n}: '{HIDDEN_BEGIN}' inside a hidden-test region")
            inside = True
        elif line.strip() == HIDDEN_END:
            if not inside:
                raise ValueError(f"line {n}: '{HIDDEN_END}' without a '{HIDDEN_BEGIN}' before it")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"'{HIDDEN_BEGIN}' without an '{HIDDEN_END}' after it")
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


def set_variant(nb: NotebookNode, seed: int | str) -> bool:
    """Write ``VARIANT = <seed>`` over the value of the notebook's ``VARIANT = ...`` line, in place (a comment after
    it stays); False if the notebook has no such line.

    A seed that reads as an int (``"7"``) is written as one, anything else (a student id) as a string.
    """
    value = int(seed) if isinstance(seed, str) and re.fullmatch(r"-?\d+", seed) else seed
    found = False
    for cell in nb.cells:
        if cell.cell_type == "code" and VARIANT_RE.search("".join(cell.source)):
            cell.source = VARIANT_RE.sub(lambda m: f"VARIANT = {value!r}{m.group(1) or ''}", "".join(cell.source), 1)
            found = True
    return found
