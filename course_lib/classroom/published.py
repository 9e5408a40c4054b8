"""Answers that are the course's published solution, verbatim: a section of the class report, not a flag.

The course's repository is public, and the notebooks in it hold every exercise's solution (the student release has
none, but the repository is a search away). A lecturer's trial handed in 13's reference answers copied as they stand:
full marks, nothing refused, nothing flagged, since the code is right and calls nothing it may not. No reading can
tell a copy from the same answer written independently, so :func:`published_copies` only lists, for the class report,
each answer cell whose code is the source version's cell as it stands, comments, blank lines and spacing aside (their
syntax trees are equal), where that cell holds at least :data:`AT_LEAST` statements: a short answer written the same
way by many honest students is left out. The lecturer opens the ones listed, as for a flag, and decides.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat

__all__ = ["AT_LEAST", "published_copies"]

AT_LEAST = 6  # statements in a solution cell (nested ones included) before an identical answer is listed


def _tree(source: str) -> str | None:
    """The syntax tree of a cell's code as text (comments and layout left out), or ``None`` if it does not parse
    (IPython's ``%`` lines included)."""
    try:
        return ast.dump(ast.parse(source))
    except (SyntaxError, ValueError):
        return None


def _statements(source: str) -> int:
    try:
        return sum(isinstance(node, ast.stmt) for node in ast.walk(ast.parse(source)))
    except (SyntaxError, ValueError):
        return 0


def _answers(path: Path) -> dict[str, str]:
    """{grade id: source} of a notebook's autograded answer cells (nbgrader's ``solution`` code cells)."""
    try:
        nb = nbformat.read(path, as_version=4)
    except (OSError, ValueError, nbformat.reader.NotJSONError):
        return {}
    found = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "code" and meta.get("solution") and meta.get("grade_id"):
            found[meta["grade_id"]] = cell.get("source", "")
    return found


def published_copies(root: str | Path, assignment: str, student: str) -> list[str]:
    """The grade ids of ``student``'s answer cells in ``assignment`` whose code is the source version's (the
    published solution) as it stands, where that holds at least :data:`AT_LEAST` statements."""
    root = Path(root)
    copies = []
    for path in sorted((root / "source" / assignment).glob("*.ipynb")):
        solutions = _answers(path)
        handed_in = _answers(root / "submitted" / student / assignment / path.name)
        for grade_id, solution in solutions.items():
            if _statements(solution) < AT_LEAST or grade_id not in handed_in:
                continue
            if _tree(handed_in[grade_id]) == _tree(solution) is not None:
                copies.append(grade_id)
    return copies
