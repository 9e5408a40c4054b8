"""``python -m course_lib.classroom.precheck NOTEBOOK...``: what the grader's reading would flag, before a hand-in.

The guard reads every cell a student can edit when nbgrader grades a submission (:func:`course_lib.classroom.guard.
findings`), and a cell it flags makes every graded test cell after it "Not graded": zero for those exercises. The
checks a student runs in the lab do not read cells, so nothing warned before. This command reads an assignment's
notebook (the released one, with nbgrader's cell metadata) as the guard will, and prints each finding with its cell
and line, or that there is none; its exit status is 1 if something was found. A student runs it before handing in;
a teaching assistant runs it on a flagged submission to see the lines at once (the guide's grading checklist: how a
flag the assistant judges a false alarm is overruled). It also says so where the ``VARIANT`` cell still holds ``0``:
the grader writes the student's user name there, and answers for the text's numbers then score zero.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import nbformat

from .guard import findings
from .notebook import VARIANT_RE

__all__ = ["VARIANT_LEFT", "WHAT_TO_DO", "main", "report", "variant_left"]

WHAT_TO_DO = (
    "What this means: when the grader reads a flagged line, every graded check after it is 'Not graded' (zero for\n"
    "those exercises) and the class report lists the notebook for a teaching assistant. Write each flagged line\n"
    "another way (most are imports or tools an answer does not need), run this again until it flags nothing, then\n"
    "hand in. If you cannot, tell your teaching assistant which line and why."
)
VARIANT_LEFT = (
    "warning: the VARIANT cell still says VARIANT = 0. The grader sets VARIANT to your nbgrader user name and checks\n"
    "  the by-hand answers against that name's numbers, so answers for the text's numbers score zero: write\n"
    '  VARIANT = "<your user name>", run the notebook again and answer for the numbers it prints.'
)


def report(path: Path) -> list[str]:
    """The guard's findings in the notebook at ``path``, one line each, with the cell's index and first line."""
    nb = nbformat.read(path, as_version=4)
    lines = []
    for index, problems in findings(nb):
        first = next((line.strip() for line in nb.cells[index].source.splitlines() if line.strip()), "")
        lines += [f"code cell {index} ({first[:60]!r}): {problem}" for problem in problems]
    return lines


def variant_left(path: Path) -> bool:
    """Whether the assignment notebook at ``path`` still has ``VARIANT = 0`` (the course's own notebooks, with no
    nbgrader cell, say 0, as they should)."""
    nb = nbformat.read(path, as_version=4)
    variants = [VARIANT_RE.search(c.source) for c in nb.cells if c.cell_type == "code"]
    values = [m.group(0).split("=", 1)[1].split("#")[0].strip() for m in variants if m]
    return any("nbgrader" in c.metadata for c in nb.cells) and values[:1] == ["0"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path, help="assignment notebooks (.ipynb), as handed in")
    args = parser.parse_args(argv)
    flagged = warned = False
    for path in args.notebooks:
        if not path.is_file():
            parser.error(f"{path}: no such notebook")
        lines, left = report(path), variant_left(path)
        flagged, warned = flagged or bool(lines), warned or left
        print(f"{path}: " + ("the grader's reading flags:" if lines else "nothing the grader's reading flags"))
        for line in lines:
            print(f"  {line}")
        if left:
            print(f"  {VARIANT_LEFT}")
    if flagged:
        print(WHAT_TO_DO)
    return 1 if flagged or warned else 0


if __name__ == "__main__":
    sys.exit(main())
