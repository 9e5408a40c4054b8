"""nbgrader source versions of the notebooks, for lecturers (``python -m course_lib.classroom.student --nbgrader``).

The solutions stay; solution cells are tagged as nbgrader "autograded answer" cells and each exercise's check cell as
an "autograder tests" cell, whose hidden tests (``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS``) nbgrader
removes from the release and puts back to grade; prose that mentions nbgrader's markers is changed so that nbgrader
does not take it for a region (a no-break space between the two words). The exercises are found as in
:mod:`course_lib.classroom.notebook`.

Partial credit: a check cell that ends in hidden tests becomes two graded cells, the visible check and the hidden
tests, each worth half the exercise's points (nbgrader scores a test cell in full or not at all).

Written answers: an exercise's markdown cell tagged ``written-answer`` (a "why?" question, then its model answer and
how it is marked) becomes a "manually graded answer" cell worth the exercise's points: the question, then the model
answer and marking between nbgrader's solution markers, so that the release shows the question and a place to answer,
and the source version the lecturer grades from shows the marking.

Every other code cell is locked (read-only; nbgrader restores its source before grading), so that a submission cannot
change the inputs, references or helper functions that its checks rely on. The one exception is the ``VARIANT = ...``
line, moved into a cell of its own and left editable: in an nbgrader course every student receives the same release,
and a student who writes their student id there gets their own numbers (see the lecturer's guide).

Hidden tests' seeds are in the public repository (a table of their inputs' answers would pass them): given a
``secret``, every literal seed of a hidden region becomes one derived from it (:func:`salted_seed`). A week's share of
a notebook (``only``): the exercises not chosen stay for students to do, ungraded (:func:`_ungraded`).
"""

from __future__ import annotations

import ast
import copy
import hashlib
import re
import warnings
from collections.abc import Collection

import nbformat
from nbformat import NotebookNode

from .notebook import (
    HIDDEN_BEGIN,
    HIDDEN_END,
    VARIANT_RE,
    Exercise,
    clear_outputs,
    find_exercises,
    is_chinese,
    written_parts,
)
from .stubs import lines_of, solution_regions

__all__ = ["nbgrader_notebook", "salted_seed"]

_NBGRADER_WORDS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "BEGIN MARK SCHEME",
                   "END MARK SCHEME")  # fmt: skip


def _grade_id(stem: str, label: str, kind: str, used: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_-]+", "-", f"{stem}-{label}-{kind}").strip("-").lower()
    grade_id, k = base, 2
    while grade_id in used:
        grade_id, k = f"{base}-{k}", k + 1
    used.add(grade_id)
    return grade_id


def nbgrader_notebook(nb: NotebookNode, name: str, *, points: float = 1, secret: str | None = None,
                     only: Collection[int] | None = None) -> tuple[NotebookNode, list[Exercise]]:  # fmt: skip
    """A copy of ``nb`` ready for nbgrader's ``source/`` folder: solutions kept, cells tagged, outputs cleared.

    Solution cells become "autograded answer" cells (``solution: true``), each exercise's check cell an
    "autograder tests" cell (``grade: true``, ``points``); grade ids are ``<name>-exercise-<n>-answer|tests``.
    Words that nbgrader reads as region markers ("BEGIN SOLUTION", ...) outside the marker lines themselves get a
    no-break space, so prose about the markers is not taken for a solution region. ``secret``: the hidden tests'
    seeds derived from it (:func:`salted_seed`); ``None`` keeps the repository's. ``only``: the numbers of the
    exercises graded (a week's share of a notebook); the others stay for students to do, ungraded
    (:func:`_ungraded`). Returns the graded exercises.
    """
    nb = copy.deepcopy(nb)
    exercises, left = _chosen(nb, find_exercises(nb), only)
    clear_outputs(nb)
    checks = {ex.check_cell for ex in exercises}
    for i, cell in enumerate(nb.cells):
        lines = lines_of(cell.source)
        markers = set()
        if cell.cell_type == "code":
            markers = {n for begin, end, _ in solution_regions(cell.source) for n in (begin, end)}
        if i in checks:
            markers |= {n for n, line in enumerate(lines) if line.strip() in (HIDDEN_BEGIN, HIDDEN_END)}
        for n, line in enumerate(lines):
            if n not in markers:
                for words in _NBGRADER_WORDS:
                    line = line.replace(words, words.replace(" ", "\u00a0"))
                lines[n] = line
        cell.source = "\n".join(lines)
    used: set[str] = set()
    for ex in exercises + left:  # (an exercise left out: its answer editable, graded nowhere)
        nb.cells[ex.solution_cell].metadata["nbgrader"] = {
            "grade": False,
            "grade_id": _grade_id(name, ex.label, "answer", used),
            "locked": False,
            "schema_version": 3,
            "solution": True,
            "task": False,
        }
        if ex.check_cell is not None and ex not in left:
            nb.cells[ex.check_cell].metadata["nbgrader"] = {
                "grade": True,
                "grade_id": _grade_id(name, ex.label, "tests", used),
                "locked": True,
                "points": points,
                "schema_version": 3,
                "solution": False,
                "task": False,
            }
    for ex in exercises:
        if ex.written_cell is not None:
            _written_answer(nb.cells[ex.written_cell], _grade_id(name, ex.label, "written", used), points)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and "nbgrader" not in cell.metadata:
            cell.metadata["nbgrader"] = {
                "grade": False,
                "grade_id": _grade_id(name, f"cell {i}", "locked", used),
                "locked": True,
                "schema_version": 3,
                "solution": False,
                "task": False,
            }
    if secret is not None:
        _salt_hidden_seeds(nb, exercises, secret)
    _variant_cell_of_its_own(nb, exercises)
    _hidden_tests_of_their_own(nb, exercises, name, used)
    return nb, exercises


def _number(ex: Exercise) -> int | None:
    found = re.search(r"(\d+)$", ex.label)
    return int(found[1]) if found else None


def _chosen(nb: NotebookNode, exercises: list[Exercise], only: Collection[int] | None) -> tuple[list, list]:
    """(the exercises graded, the others), the others made ungraded in place (:func:`_ungraded`); a warning where a
    graded exercise's cells use a name an ungraded one's answer defines (students must still write it)."""
    if only is None:
        return exercises, []
    numbers = [_number(ex) for ex in exercises]
    if missing := sorted(set(only) - set(numbers)):
        raise ValueError(f"no exercise {missing} in this notebook: it has exercises {numbers}")
    kept = [ex for ex, n in zip(exercises, numbers, strict=True) if n in only]
    left = [ex for ex, n in zip(exercises, numbers, strict=True) if n not in only]
    for ex in left:
        _ungraded(nb, ex)
    defined = {name: ex.label for ex in left for name in _defines(nb.cells[ex.solution_cell].source)}
    for ex in kept:
        cells = [nb.cells[i].source for i in (ex.solution_cell, ex.check_cell) if i is not None]
        needs = sorted({f"{n} ({defined[n]})" for n in defined if any(re.search(rf"\b{n}\b", c) for c in cells)})
        if needs:
            warnings.warn(f"{ex.label} is graded and uses {', '.join(needs)}, not graded: students must still write "
                          "it, or the graded exercise fails", stacklevel=3)  # fmt: skip
    return kept, left


def _defines(source: str) -> set[str]:
    """The names a cell's top level defines (functions, classes, assigned names); none if it does not parse."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return set()
    names = {node.name for node in body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    targets = [t for node in body if isinstance(node, (ast.Assign, ast.AnnAssign)) for t in
               (node.targets if isinstance(node, ast.Assign) else [node.target])]  # fmt: skip
    return names | {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _ungraded(nb: NotebookNode, ex: Exercise) -> None:
    """An exercise left out of an assignment, in place: its check keeps its visible part (a student who does it sees
    whether it works), without hidden tests; a written answer keeps its question, without the model answer."""
    if ex.check_cell is not None:
        cell = nb.cells[ex.check_cell]
        lines, inside, kept = cell.source.split("\n"), False, []
        for line in lines:
            if line.strip() in (HIDDEN_BEGIN, HIDDEN_END):
                inside = line.strip() == HIDDEN_BEGIN
            elif not inside:
                kept.append(line)
        cell.source = "\n".join(kept).rstrip()
    if ex.written_cell is not None:
        nb.cells[ex.written_cell].source = written_parts(nb.cells[ex.written_cell].source)[0]
        nb.cells[ex.written_cell].metadata.get("tags", []).clear()  # no longer a written answer to mark


# A literal seed in a hidden test: a keyword ``seed=1`` (check_function's), ``manual_seed(1)`` or ``set_seed(1)``.
_SEED = re.compile(r"(\bseed=|\bmanual_seed\(|\bset_seed\()(\d+)(?=\s*[,)])")


def salted_seed(secret: str, where: str, seed: int) -> int:
    """The seed a hidden test in cell ``where`` (its grade id) draws from instead of ``seed``, given the course's
    ``secret``: 31 bits of SHA-256 of the three (not Python's ``hash``, which changes between runs), so the same
    secret gives the same inputs on every machine and another secret other inputs."""
    digest = hashlib.sha256(f"{secret}/{where}/{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "little") >> 1


def _salt_hidden_seeds(nb: NotebookNode, exercises: list[Exercise], secret: str) -> None:
    """Every literal seed in the hidden regions of the check cells replaced by its :func:`salted_seed`, in place."""
    for ex in exercises:
        if ex.check_cell is None:
            continue
        cell, hidden = nb.cells[ex.check_cell], False
        where = cell.metadata["nbgrader"]["grade_id"]
        lines = cell.source.split("\n")
        for n, line in enumerate(lines):
            if line.strip() in (HIDDEN_BEGIN, HIDDEN_END):
                hidden = line.strip() == HIDDEN_BEGIN
            elif hidden:
                lines[n] = _SEED.sub(lambda m, at=where: f"{m[1]}{salted_seed(secret, at, int(m[2]))}", line)
        cell.source = "\n".join(lines)


def _written_answer(cell: NotebookNode, grade_id: str, points: float) -> None:
    """A written-answer cell as nbgrader's manually graded answer, in place: the question, then the model answer and
    its marking as the solution region (the release replaces it with a place to write)."""
    question, answer = written_parts(cell.source)
    cell.source = f"{question}\n\n### BEGIN SOLUTION\n{answer}\n### END SOLUTION"
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "locked": False, "points": points,
                                 "schema_version": 3, "solution": True, "task": False}  # fmt: skip


def _hidden_tests_of_their_own(nb: NotebookNode, exercises: list[Exercise], name: str, used: set[str]) -> None:
    """Partial credit: a check cell that ends in hidden tests becomes two graded cells, in place, the visible check
    and the hidden tests (other inputs, edge cases), each worth half the exercise's points. nbgrader scores a test cell
    in full or not at all, so an answer that passes the check a student saw and fails an edge case earns half."""
    chinese = is_chinese(nb)
    for ex in sorted((e for e in exercises if e.check_cell is not None), key=lambda e: -e.check_cell):
        cell = nb.cells[ex.check_cell]
        lines = cell.source.split("\n")
        begin = next((n for n, line in enumerate(lines) if line.strip() == HIDDEN_BEGIN), None)
        end = next((n for n, line in enumerate(lines) if line.strip() == HIDDEN_END), None)
        if begin is None or end is None or any(line.strip() for line in lines[end + 1 :]):
            continue  # no hidden tests, or code after them: one cell, as written
        if not "\n".join(lines[:begin]).strip():
            continue  # nothing visible
        cell.source = "\n".join(lines[:begin]).rstrip()
        half = cell.metadata["nbgrader"]["points"] / 2
        cell.metadata["nbgrader"]["points"] = half
        note = f"# {ex.label}: its hidden tests (other inputs, edge cases) run here when your work is graded."
        if chinese:
            label = ex.label.replace("Exercise", "练习")
            note = f"# {label}：它的隐藏测试（其他输入、边界情况）在你的作业评分时在这里运行。"
        hidden = nbformat.v4.new_code_cell(f"{note}\n" + "\n".join(lines[begin : end + 1]))
        hidden.id = f"{cell.get('id', 'cell')}-hidden"[:64]
        hidden.metadata = copy.deepcopy(cell.metadata)
        hidden.metadata["nbgrader"]["grade_id"] = _grade_id(name, ex.label, "hidden tests", used)
        nb.cells.insert(ex.check_cell + 1, hidden)
        for other in exercises:  # the cells after the new one move down by one
            other.solution_cell += other.solution_cell > ex.check_cell
            if other.check_cell is not None and other.check_cell > ex.check_cell:
                other.check_cell += 1
            if other.hidden_cell is not None and other.hidden_cell > ex.check_cell:
                other.hidden_cell += 1
            if other.written_cell is not None and other.written_cell > ex.check_cell:
                other.written_cell += 1
        ex.hidden_cell = ex.check_cell + 1


# What the editable VARIANT cell tells a student (a twentieth trial: answers for the text's numbers scored zero)
YOUR_VARIANT = {
    "en": '# Your numbers: write your nbgrader user name in quotes, e.g. VARIANT = "s1234567", and run the notebook\n'
    "# again. The grader sets VARIANT to your user name: answers for the text's numbers (VARIANT = 0) score zero.\n"
    "# Before you hand in: python -m course_lib.classroom.precheck <this notebook> shows what the grader refuses.\n",
    "zh": '# 你的题目数字：在引号中写上你的 nbgrader 用户名，例如 VARIANT = "s1234567"，然后重新运行笔记本。\n'
    "# 评分程序会把 VARIANT 设为你的用户名：按正文中的数字（VARIANT = 0）作答会得零分。\n"
    "# 交作业之前运行 python -m course_lib.classroom.precheck <这个笔记本>，看看评分程序会拒绝什么。\n",
}


def _variant_cell_of_its_own(nb: NotebookNode, exercises: list[Exercise]) -> None:
    """Move the ``VARIANT = ...`` line out of its (locked) cell into an editable cell just before it, in place, with
    a note on what to write there."""
    note = YOUR_VARIANT["zh" if is_chinese(nb) else "en"]
    for i, cell in enumerate(nb.cells):
        found = VARIANT_RE.search(cell.source) if cell.cell_type == "code" else None
        if found is None:
            continue
        rest = (cell.source[: found.start()] + cell.source[found.end() :]).strip("\n")
        if not rest.strip():  # the line is the whole cell: it only needs unlocking
            del cell.metadata["nbgrader"]
            cell.source = note + found.group(0)
            return
        cell.source = rest
        variant = nbformat.v4.new_code_cell(note + found.group(0), id=f"{cell.get('id', 'cell')}-variant"[:64])
        nb.cells.insert(i, variant)
        for ex in exercises:
            ex.solution_cell += ex.solution_cell >= i
            ex.check_cell = None if ex.check_cell is None else ex.check_cell + (ex.check_cell >= i)
            ex.written_cell = None if ex.written_cell is None else ex.written_cell + (ex.written_cell >= i)
        return
