"""What an exercise's slide shows of its task: the code the student writes, as the student release gives it.

An exercise's prose gives the setting and the task in sentences often too long for a slide, which keeps whole
sentences only (tools.slide_text): a lecturer's trial found exercise slides that showed the given numbers but not the
question, and some that showed only their title. The answer cell says what to produce in a few lines: the names of a
by-hand answer (``vocab_size_ex1 = ...``) or the signature of a function to write, with the comments that say what
goes in and what comes out. ``with_tasks(deck, nb)`` puts that code after each exercise's heading cell in the deck
where its slide does not already name what to write: the student release's stub (course_lib.classroom.stubs) with its
placeholders written ``...``. Never the solution.
"""

from __future__ import annotations

import re

import nbformat

from course_lib.classroom.notebook import _EXERCISE_RE as _HEADING  # an exercise's heading, read one way
from course_lib.classroom.notebook import find_exercises
from course_lib.classroom.stubs import stub_source
from tools import slide_code
from tools.slide_text import slide_pages

_DROPPED = re.compile(r"^\s*(# YOUR (CODE|ANSWER) HERE.*|from course_lib\.classroom\.exercises import unanswered)$")


def task_code(source: str, label: str) -> str:
    """The code an answer cell asks for (its source with solution regions), as the release shows it, placeholders
    written ``...``, without comments wider than a slide."""
    stub, _ = stub_source(source, label)
    lines = []
    for line in stub.splitlines():
        if _DROPPED.match(line) or (line.lstrip().startswith("#") and slide_code.width(line) > slide_code.COLUMNS):
            continue  # (a comment wider than a slide: the notes and the book keep it)
        line = re.sub(r"raise NotImplementedError\(.*\)$", "...", line)
        lines.append(re.sub(r"= unanswered\(.*\)$", "= ...", line))
    return "\n".join(lines).strip("\n")


def with_tasks(deck: dict, nb: dict, also: frozenset[str] = frozenset()) -> dict:
    """``deck`` (tools.sections.slides of ``nb``) with a code cell of each exercise's task after the deck's cell that
    heads the exercise (the last markdown cell of ``nb`` before the answer cell whose heading names it), where that
    cell is shown on a slide and what its slide shows of it (tools.slide_text) does not already name every function
    or value the answer writes ("Implement `merge(ids, pair, new_id)`: ..."; the slide's words are counted), or where
    the heading cell's id is in ``also`` (a translation: where its English deck shows the task)."""
    notebook = nbformat.from_dict(nb)
    tasks: dict[str, str] = {}
    for ex in find_exercises(notebook):
        number = ex.label.split()[-1]
        heading = next((c for c in reversed(notebook.cells[: ex.solution_cell]) if c.cell_type == "markdown"
                        and number in _HEADING.findall("".join(c.source))), None)  # fmt: skip
        if heading is None or not heading.get("id"):
            continue
        source = "".join(notebook.cells[ex.solution_cell].source)
        shown = slide_pages("".join(heading.source))[0]
        named = all(re.search(rf"`{re.escape(name)}\b", shown) for name in stub_source(source, ex.label)[1])
        if not named or heading["id"] in also:
            tasks[heading["id"]] = task_code(source, ex.label)
    cells = []
    for cell in deck["cells"]:
        cells.append(cell)
        kind = cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-")
        if (
            cell.get("id") in tasks
            and cell["cell_type"] == "markdown"
            and kind in ("slide", "subslide", "fragment", "-")
        ):
            task = nbformat.v4.new_code_cell(tasks[cell["id"]], id=f"{cell['id']}-task")
            task.metadata["slideshow"] = {"slide_type": "-"}
            cells.append(task)
    return {**deck, "cells": cells}
