"""What the class report flags in a student's graded submission (:mod:`course_lib.classroom.autograde`): the test
cells that were not graded or refused something, read from the autograded notebooks; the cells in which the guard's
reading finds tampering (:func:`course_lib.classroom.guard.findings`, read again here, so that no submission that
tampers is listed as clean); a by-hand answer computed with the library (:mod:`course_lib.classroom.calculator`);
an answer cell holding a table of literal values (:mod:`course_lib.classroom.tables`); the files a submission wrote
while it was graded; a graded cell of the assignment that the submission lacks; a notebook nbgrader could not grade,
and why."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from .messages import NUMPY_ZH_START
from .tables import literal_table

__all__ = [
    "BY_HAND_WITH_LIBRARY",
    "LOOKED_UP",
    "MISSING",
    "RECHECKED",
    "SILENT",
    "NOT_AUTOGRADED",
    "NOT_THE_ASSIGNMENT",
    "NOT_YET",
    "READ_AS_TAMPERING",
    "RENAMED",
    "USED_NUMPY",
    "flagged",
]

# The label of a test cell that refused NumPy (classroom.reach's message begins with _NUMPY_REFUSAL): not a flag
USED_NUMPY = "used NumPy (refused: the exercise asks for tensor operations only, see notebook 00)"
_NUMPY_REFUSAL = "ShortcutError: NumPy is not available in this check"
_ASKED = re.compile(r"Not graded: a cell asked for (.+?), refused in a graded notebook")  # classroom.watch
# a refusal of the check's own reference or helper, in English and in the Chinese edition (classroom.messages)
_THE_CHECKS = ("(the check's", "(a function of the check)", "（检查的参考实现）", "（检查所用的函数）")
NOT_AUTOGRADED = "not autograded: nbgrader failed on this notebook (its log ends autograde's output), every score 0"
READ_AS_TAMPERING = "not graded: the reading found tampering in a cell before it (its line says what)"
SILENT = "a test cell passed and printed nothing (its checks print what they verified): open it"
RECHECKED = "not graded: passed in the submission's kernel, failed in the grader's own run (a forged pass?)"
NOT_YET = "not autograded yet: this student has no autograded folder (grade the class, then write the report)"
RENAMED = ("not autograded: handed in as {name}, which is not a notebook of the assignment ({names}); nbgrader "
           "grades a notebook by its name: rename it and grade again")  # fmt: skip
BY_HAND_WITH_LIBRARY = "a by-hand answer computed with the library (the check grades its numbers: look at it)"
LOOKED_UP = "an answer cell holding a table of literal values (answers looked up, not computed?): look at it"
PRECOMPUTED = "an answer cell that calls, when it runs, what its checks block (results computed before the check?)"
MISSING = "a graded cell of the assignment is missing from the submission (deleted?): nbgrader scored it 0"
NOT_THE_ASSIGNMENT = (
    "not the assignment's notebook: no cell has nbgrader's metadata (a copy from the student release "
    "or an export?), so nbgrader graded nothing: ask for the answers in release/ASSIGNMENT/"
)


def _why_not_autograded(root: Path, assignment: str, name: str, ran: bool) -> str:
    """Why a submitted notebook has no autograded notebook: not graded yet (``ran``: nbgrader never ran for the
    student, as in a report written after grading some students only), a name that is not the assignment's, or
    nbgrader failed (it then removes the student's autograded folder, and keeps the submission in its gradebook)."""
    if not ran:
        return NOT_YET
    names = sorted(p.name for p in (root / "release" / assignment).glob("*.ipynb"))
    if names and name not in names:
        return RENAMED.format(name=name, names=", ".join(names))
    return NOT_AUTOGRADED


def flagged(root: Path, assignment: str, student: str, ran: bool = True) -> list[tuple[str, str]]:
    """(where, why) for each test cell of a student's autograded notebooks that was not graded or refused, and for
    each cell the student wrote in which the guard's reading finds tampering (:func:`guard.findings`): a submission
    that tampers is flagged even where grading ran without the guard, or where the tampering left every check
    passing. ``ran``: whether nbgrader autograded the student (a submission in its gradebook)."""
    from .calculator import library_calls
    from .guard import findings
    from .precomputed import precomputed

    found, unmarked = [], _unmarked(root, assignment, student)
    for path in sorted((root / "submitted" / student / assignment).glob("*.ipynb")):  # the eleventh trial: silent
        if path.stem not in unmarked and not (root / "autograded" / student / assignment / path.name).is_file():
            found.append((path.stem, _why_not_autograded(root, assignment, path.name, ran)))
    for path in sorted((root / "autograded" / student / assignment).glob("*.ipynb")):
        if path.stem in unmarked:  # every cell of it would read as the student's: flagged once, below
            continue
        try:
            nb = nbformat.read(path, as_version=4)
        except (nbformat.reader.NotJSONError, ValueError):  # no notebook nbgrader wrote: flagged below, as written
            continue
        present = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in nb.cells}
        found += [(grade_id, MISSING) for grade_id in _graded_ids(root / "release" / assignment / path.name) - present]
        for cell in nb.cells:
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if grade_id and _silent(cell):
                found.append((grade_id, SILENT))
            for out in cell.get("outputs", []) if grade_id else ():
                text = f"{out.get('ename', '')}: {out.get('evalue', '')}" if out.get("output_type") == "error" else ""
                found += [(grade_id, why)] if (why := _why_refused(text)) else []
        for i, problems in findings(nb):
            found.append((f"{path.stem}, code cell {i}", f"tampering: {problems[0]}"))
        for i, used in library_calls(nb):
            found.append((f"{path.stem}, code cell {i}", f"{BY_HAND_WITH_LIBRARY}: {', '.join(used)}"))
        for i, used in precomputed(nb):  # (a table of the blocked functions' results, made before the check ran)
            found.append((f"{path.stem}, code cell {i}", f"{PRECOMPUTED}: {', '.join(used)}"))
        answers = [(i, c) for i, c in enumerate(nb.cells) if c.get("metadata", {}).get("nbgrader", {}).get("solution")]
        for i, why in ((i, literal_table("".join(c.source))) for i, c in answers if c.cell_type == "code"):
            found += [(f"{path.stem}, code cell {i}", f"{LOOKED_UP}: {why}")] if why else []
    found += [(name, "a file the submission wrote while it was graded") for name in _written(root, assignment, student)]
    found += [(name, NOT_THE_ASSIGNMENT.replace("ASSIGNMENT", assignment)) for name in unmarked]
    return found


def _why_refused(text: str) -> str | None:
    """Why a graded test cell's error ``text`` (``ename: evalue``) says it was not graded or refused something; None
    for an answer that is just wrong."""
    if "Not graded" in text and "but not in the grader's own run" in text:  # classroom.recheck
        return RECHECKED
    if "Not graded" in text and "must be a plain" in text:
        return "not graded: an answer that compares in its own way"
    if "Not graded" in text and "this exercise's check uses to decide" in text:  # classroom.guard
        return "the check's own reference or helper was called"
    if "Not graded" in text and "hides the builtin" in text:
        return "not graded: a builtin the checks use was hidden"
    if "Not graded" in text and (asked := _ASKED.search(text)):  # a process, a course-folder file
        return f"not graded: a cell asked for {asked[1]}"
    if "Not graded" in text and "changed how the kernel reads the cells" in text:  # classroom.rewritten
        return "not graded: a test cell did not run as written (a transformer)"
    if "Not graded: no evidence that this test cell ran" in text:  # classroom.evidence
        return "not graded: no evidence that the test cell ran as written"
    if "Not graded" in text and "from outside the installed libraries" in text:  # classroom.rewritten
        return "not graded: a cell loaded code it wrote (a module from its own file)"
    if "Not graded: code cell " in text:  # the guard's line: its reading found tampering
        return READ_AS_TAMPERING
    if "Not graded" in text:  # the snapshot's verification, at run time
        return "not graded: a checker was changed"
    if "ShortcutError" in text and any(mark in text for mark in _THE_CHECKS):
        return "the check's own reference or helper was called"
    if _NUMPY_REFUSAL in text or f"ShortcutError：{NUMPY_ZH_START}" in text:
        return USED_NUMPY
    if "ShortcutError" in text:
        return "a library shortcut was refused"
    return None


def _graded_ids(release: Path) -> set[str]:
    """The grade ids of the released notebook's graded cells (answers and tests): a twenty-third trial deleted an
    exercise's two test cells, which nbgrader does not put back: that exercise scored 0, and nothing was flagged."""
    try:
        cells = nbformat.read(release, as_version=4).cells
    except (nbformat.reader.NotJSONError, ValueError, OSError):
        return set()
    meta = [cell.get("metadata", {}).get("nbgrader", {}) for cell in cells]
    return {m["grade_id"] for m in meta if m.get("grade_id") and (m.get("grade") or m.get("solution"))}


def _silent(cell: dict) -> bool:
    """Whether a graded test cell that calls a check passed and printed nothing: a check prints what it verified
    ("✓ ..."), so such a cell that shows no output did not run its checks as written (the seventeenth trial's forged
    cells)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if cell.get("cell_type") != "code" or not meta.get("grade") or meta.get("solution"):
        return False
    if "check_" not in "".join(cell.get("source", "")):  # (a hidden test of bare asserts prints nothing)
        return False
    return not any(out.get("output_type") in ("stream", "error") for out in cell.get("outputs", []))


def _unmarked(root: Path, assignment: str, student: str) -> list[str]:
    """The submitted notebooks in which no cell carries nbgrader's metadata: nbgrader cannot tell its answers and
    tests apart (an eighth lecturer's try: the reference answers handed in in the student release's notebook scored
    zero, every cell "needs manual grading"); the assignment's notebook is release/ASSIGNMENT/'s."""
    out = []
    for path in sorted((root / "submitted" / student / assignment).glob("*.ipynb")):
        try:
            cells = nbformat.read(path, as_version=4).cells
        except (nbformat.reader.NotJSONError, ValueError, OSError):
            continue
        if cells and not any("nbgrader" in cell.get("metadata", {}) for cell in cells):
            out.append(path.stem)
    return out


def _written(root: Path, assignment: str, student: str) -> list[str]:
    """The files in a student's autograded folder that came from neither the submission nor the source folder
    (nbgrader copies both there), other than Python's cache of a module that came from them: what the code wrote while
    it was graded, a place for code that no reading of the cells finds (a fourth lecturer's try: a ``hubconf.py``
    loaded with ``torch.hub.load``)."""
    graded = root / "autograded" / student / assignment
    kept = (root / "submitted" / student / assignment, root / "source" / assignment)

    def came(path: Path) -> bool:
        if path.parent.name == "__pycache__" and path.suffix == ".pyc":  # helper.cpython-311.pyc of a kept helper.py
            path = path.parent.parent / (path.name.split(".")[0] + ".py")
        return any((k / path).is_file() for k in kept)

    paths = (p.relative_to(graded) for p in sorted(graded.rglob("*")) if p.is_file())
    return [p.as_posix() for p in paths if not came(p)]
