"""Answers carried from the notebook a student worked in into the assignment's notebook they hand in.

    python -m course_lib.classroom.carry LAB.ipynb ASSIGNMENT.ipynb

A student does the exercises in the lab, in their copy of the student release's notebook; the homework is the same
exercises in the assignment's notebook (nbgrader's release), the only file nbgrader grades. Both are made from the
same notebook of the course, so each answer cell has the same cell id in both. This writes the source of each answer
cell of the lab (nbgrader's solution cells: code answers and written answers) into the assignment's cell of the same
id, and nothing else: the assignment's locked cells, checks and metadata stay as released. It leaves a cell as it is
when the lab's still holds the stub (not answered there), and when the assignment's holds an answer of its own (the
student began there; ``--force`` replaces it). It says what it did for each exercise, and warns when the lab's
``VARIANT`` differs from the assignment's: by-hand answers worked from the lab's numbers are then wrong (the grader
writes the student's id there). Copying cells by hand lost an answer, or pasted it into a locked cell (an eighteenth
lecturer's trial)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from .notebook import VARIANT_RE
from .student import WRITTEN_STUB

__all__ = ["carry", "main"]

STUB = re.compile(r'raise NotImplementedError\("|\bunanswered\("')  # a code answer's stub (classroom.stubs)
NOT_WRITTEN = (WRITTEN_STUB, "YOUR ANSWER HERE")  # a written answer's place, in the student version and nbgrader's


def _unanswered(source: str) -> bool:
    return bool(STUB.search(source)) or any(stub in source for stub in NOT_WRITTEN)


def _label(cell: NotebookNode) -> str:
    """``12_decoder_that_writes-exercise-2-answer`` -> ``Exercise 2``; ``...-exercise-1-written`` -> ``Exercise 1,
    written answer``."""
    grade_id = cell.metadata["nbgrader"].get("grade_id", "")
    found = re.search(r"-exercise-(\w+?)-(answer|written)", grade_id)
    if not found:
        return grade_id or f"cell {cell.get('id')}"
    return f"Exercise {found[1]}" + (", written answer" if found[2] == "written" else "")


def _variant(nb: NotebookNode) -> str | None:
    for cell in nb.cells:
        if cell.cell_type == "code" and (found := VARIANT_RE.search(cell.source)):
            return found.group(0).split("=", 1)[1].split("#", 1)[0].strip()
    return None


def carry(lab: NotebookNode, assignment: NotebookNode, force: bool = False) -> list[str]:
    """Write each answer of ``lab`` into ``assignment``'s cell of the same id, in place; one line per answer cell of
    the assignment saying what was done, then a warning if the two ``VARIANT`` values differ. Raises ValueError when
    ``assignment`` has no answer cells (not an assignment's notebook) or shares none with ``lab`` (another
    notebook)."""
    answers = [c for c in assignment.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution")]
    if not answers:
        raise ValueError("the second notebook has no answer cells: give the assignment's notebook (nbgrader's "
                         "release, the file you hand in) second")  # fmt: skip
    by_id = {c.get("id"): c for c in lab.cells}
    if not any(c.get("id") in by_id for c in answers):
        raise ValueError("the two notebooks share no answer cell: are they the same notebook of the course?")
    said = []
    for cell in answers:
        mine, label = by_id.get(cell.get("id")), _label(cell)
        if mine is None or mine.cell_type != cell.cell_type:
            said.append(f"{label}: not in the lab notebook (left as released)")
        elif mine.source == cell.source:
            said.append(f"{label}: " + ("not answered in either" if _unanswered(mine.source) else "the same in both"))
        elif _unanswered(mine.source) and not _unanswered(cell.source):
            said.append(f"{label}: not answered in the lab notebook; the assignment's answer kept")
        elif _unanswered(mine.source):
            said.append(f"{label}: not answered in the lab notebook (left as released)")
        elif not _unanswered(cell.source) and not force:
            said.append(f"{label}: the assignment holds another answer, left as it is (--force replaces it)")
        else:
            cell.source = mine.source
            said.append(f"{label}: carried")
    lab_variant, variant = _variant(lab), _variant(assignment)
    if lab_variant is not None and variant is not None and lab_variant != variant:
        said.append(f"warning: the lab notebook has VARIANT = {lab_variant}, the assignment VARIANT = {variant}: "
                    "by-hand answers worked from the lab's numbers are wrong there; work them again")  # fmt: skip
    return said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.classroom.carry",
        description="Carry your answers from the notebook you worked in into the assignment's notebook you hand in.",
    )
    parser.add_argument("lab", type=Path, help="the notebook you did the exercises in")
    parser.add_argument("assignment", type=Path, help="the assignment's notebook (written in place)")
    parser.add_argument("--force", action="store_true", help="replace answers the assignment already holds")
    args = parser.parse_args(argv)
    if args.lab.resolve() == args.assignment.resolve():
        parser.error("the lab notebook and the assignment's are the same file")
    try:
        lab, assignment = (nbformat.read(p, as_version=4) for p in (args.lab, args.assignment))
        said = carry(lab, assignment, force=args.force)
    except (ValueError, FileNotFoundError, nbformat.reader.NotJSONError) as err:
        parser.error(str(err))
    nbformat.write(assignment, args.assignment)
    print("\n".join(said))
    print(f"{sum(line.endswith(': carried') for line in said)} answer(s) carried into {args.assignment}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
