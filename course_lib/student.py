"""Student versions of the notebooks, and nbgrader source versions for lecturers.

Every exercise of the course keeps its reference solution between two lines of a code cell, exactly
``# BEGIN SOLUTION`` and ``# END SOLUTION`` (the markers nbgrader uses), and its auto-check in a later code cell.

Student version (``make student``, or ``python -m course_lib.student notebooks/ --out student/``): a copy of each
notebook with every solution region replaced by a stub and every output cleared. The stub depends on where the
region sits:

- inside a function body (the markers are indented): the ``def`` line stays and the region becomes
  ``raise NotImplementedError("Exercise N: write the body of f")`` at the same indentation, so the cell still
  defines ``f`` and the check after it fails with ``NotImplementedError``;
- at the top level: a ``def`` in the region keeps its header (and docstring) with the same ``raise`` as body; every
  other name the region assigns (a value answer such as ``q_2 = ...``) becomes
  ``q_2 = unanswered("Exercise N: q_2")``, a placeholder from :mod:`course_lib.checks` that raises
  ``NotImplementedError`` as soon as the check touches it (rather than a confusing ``NameError``).

Only code cells count: markdown that mentions the markers in prose is left alone.

nbgrader source version (``--nbgrader``): the solutions stay; solution cells are tagged as nbgrader "autograded
answer" cells and each exercise's check cell as an "autograder tests" cell worth ``--points`` points; prose that
mentions the markers is changed so that nbgrader does not take it for a solution region (a no-break space
between the two words). A lecturer copies these notebooks to ``source/<assignment>/`` of an nbgrader course and runs
``nbgrader generate_assignment``, ``nbgrader autograde`` and ``nbgrader generate_feedback`` as usual.
"""

from __future__ import annotations

import argparse
import ast
import copy
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode

__all__ = [
    "BEGIN",
    "END",
    "Exercise",
    "find_exercises",
    "solution_regions",
    "stub_source",
    "student_notebook",
    "nbgrader_notebook",
    "convert",
    "main",
]

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
_BEGIN_RE = re.compile(r"^(\s*)#+\s*BEGIN SOLUTION\s*$")
_END_RE = re.compile(r"^(\s*)#+\s*END SOLUTION\s*$")
# "### Exercise 3 ...", "**Exercise 3 — ...**" in markdown, "# Exercise 3: ..." in code
_EXERCISE_RE = re.compile(r"(?m)^\s*(?:#+|\*\*)\s*Exercise\s+(\w+)")
_CHECK_RE = re.compile(r"\bcheck_close\(|\bcheck_function\(|^\s*assert\b", re.MULTILINE)
_NBGRADER_WORDS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "BEGIN MARK SCHEME",
                   "END MARK SCHEME")  # fmt: skip
STUDENT_BANNER = (
    "> **Student version.** The reference solution of every exercise was replaced by a stub that raises\n"
    "> `NotImplementedError`, and all outputs were cleared. Write your code where the stub is, run the cell, then\n"
    "> run the check cell after it. The full notebook with solutions and outputs is in the course's `notebooks/`."
)


@dataclass
class Exercise:
    """One solution cell and its check: ``label`` is "Exercise 3" (or "Exercise #3" when the text names none)."""

    label: str
    solution_cell: int  # index in nb.cells
    check_cell: int | None  # index of the first code cell after it that calls a checker or asserts
    names: list[str] = field(default_factory=list)  # functions / values the student writes


def _lines(source: str | list[str]) -> list[str]:
    return ("".join(source) if isinstance(source, list) else source).split("\n")


def solution_regions(source: str) -> list[tuple[int, int, str]]:
    """``(begin, end, indent)`` of each solution region of a code cell's source: line numbers of the two markers.

    Raises ``ValueError`` for a marker without its partner or a region inside another.
    """
    regions, begin, indent = [], None, ""
    for i, line in enumerate(_lines(source)):
        if m := _BEGIN_RE.match(line):
            if begin is not None:
                raise ValueError(f"line {i + 1}: '{BEGIN}' inside the region opened on line {begin + 1}")
            begin, indent = i, m.group(1)
        elif _END_RE.match(line):
            if begin is None:
                raise ValueError(f"line {i + 1}: '{END}' without a '{BEGIN}' before it")
            regions.append((begin, i, indent))
            begin = None
    if begin is not None:
        raise ValueError(f"line {begin + 1}: '{BEGIN}' without an '{END}' after it")
    return regions


def _enclosing_def(lines: list[str], line_no: int, indent: str) -> str | None:
    """Name of the function whose body contains line ``line_no`` (indented by ``indent``), if any."""
    for line in reversed(lines[:line_no]):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        line_indent = line[: len(line) - len(stripped)]
        if len(line_indent) < len(indent):
            if m := re.match(r"(?:async\s+)?def\s+(\w+)", stripped):
                return m.group(1)
            if len(line_indent) == 0:
                return None
    return None


def _bound_names(statements: list[ast.stmt]) -> list[str]:
    """Names that top-level statements bind, in order (not looking inside functions, classes or comprehensions)."""
    names: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in names:
            names.append(node.id)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda | ast.comprehension):
            return
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    for statement in statements:
        if isinstance(statement, ast.ClassDef):
            if statement.name not in names:
                names.append(statement.name)
        elif not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            visit(statement)
    return names


def _top_level_stub(region: list[str], label: str) -> tuple[list[str], list[str]]:
    """Stub lines for a solution region at the top level of a cell, and the names the student must write."""
    code = "\n".join(region)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return [f'raise NotImplementedError("{label}")'], []
    out: list[str] = []
    defs = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            body = node.body
            has_doc = isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
            header_end = (body[0].end_lineno if has_doc else body[0].lineno - 1) or node.lineno
            body_indent = " " * body[0].col_offset
            out += region[first - 1 : header_end]
            out += [f'{body_indent}raise NotImplementedError("{label}: write the body of {node.name}")', ""]
            defs.append(node.name)
    names = _bound_names(tree.body)
    if names:
        out = ["# YOUR ANSWER HERE: replace each unanswered(...) by your answer", *out]
        out.append("from course_lib.checks import unanswered")
        out += [f'{name} = unanswered("{label}: {name}")' for name in names]
    elif defs:
        out = ["# YOUR CODE HERE", *out]
    else:
        out = ["# YOUR CODE HERE", f'raise NotImplementedError("{label}")']
    while out and not out[-1].strip():
        out.pop()
    return out, defs + names


def stub_source(source: str, label: str = "Exercise") -> tuple[str, list[str]]:
    """Replace every solution region of a code cell by its stub; return the new source and the names to write.

    See the module docstring for the kinds of stub. The result always parses when the input did.
    """
    lines = _lines(source)
    regions = solution_regions(source)
    if not regions:
        return "\n".join(lines), []
    out: list[str] = []
    names: list[str] = []
    previous = 0
    for begin, end, indent in regions:
        out += lines[previous:begin]
        if indent:
            fn = _enclosing_def(lines, begin, indent)
            what = f"{label}: write the body of {fn}" if fn else label
            out += [f"{indent}# YOUR CODE HERE", f'{indent}raise NotImplementedError("{what}")']
            names += [fn] if fn else []
        else:
            stub, written = _top_level_stub(textwrap.dedent("\n".join(lines[begin + 1 : end])).split("\n"), label)
            out += stub
            names += written
        previous = end + 1
    out += lines[previous:]
    return "\n".join(out), names


def find_exercises(nb: NotebookNode) -> list[Exercise]:
    """The exercises of a notebook: every code cell with a solution region, its label and its check cell.

    The label comes from the last heading-like "Exercise N" before the region (a markdown heading, a bold
    "**Exercise N**", or a "# Exercise N" comment in the code above the marker); the check cell is the first code
    cell after the solution that calls ``check_close`` / ``check_function`` or asserts, before the next solution.
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
        found = _EXERCISE_RE.findall("\n".join(_lines(source)[: regions[0][0]]))
        current = found[-1] if found else current
        label = f"Exercise {current}" if current else f"Exercise #{len(exercises) + 1}"
        exercises.append(Exercise(label, i, None))
    for n, ex in enumerate(exercises):
        stop = exercises[n + 1].solution_cell if n + 1 < len(exercises) else len(cells)
        for j in range(ex.solution_cell + 1, stop):
            if cells[j].cell_type == "code" and _CHECK_RE.search("".join(cells[j].source)):
                ex.check_cell = j
                break
    return exercises


def _clear_outputs(nb: NotebookNode) -> None:
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)


def student_notebook(nb: NotebookNode, *, banner: bool = True) -> tuple[NotebookNode, list[Exercise]]:
    """A copy of ``nb`` with every solution region stubbed and all outputs cleared, and its exercises.

    With ``banner`` a short markdown cell saying what this version is follows the first cell; the exercises'
    cell indices refer to the returned notebook.
    """
    nb = copy.deepcopy(nb)
    exercises = find_exercises(nb)
    for ex in exercises:
        cell = nb.cells[ex.solution_cell]
        cell.source, ex.names = stub_source("".join(cell.source), ex.label)
    _clear_outputs(nb)
    if banner:
        nb.cells.insert(1, nbformat.v4.new_markdown_cell(STUDENT_BANNER, id="student-version-note"))
        for ex in exercises:
            ex.solution_cell += 1
            ex.check_cell = None if ex.check_cell is None else ex.check_cell + 1
    return nb, exercises


def _grade_id(stem: str, label: str, kind: str, used: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_-]+", "-", f"{stem}-{label}-{kind}").strip("-").lower()
    grade_id, k = base, 2
    while grade_id in used:
        grade_id, k = f"{base}-{k}", k + 1
    used.add(grade_id)
    return grade_id


def nbgrader_notebook(nb: NotebookNode, name: str, *, points: float = 1) -> tuple[NotebookNode, list[Exercise]]:
    """A copy of ``nb`` ready for nbgrader's ``source/`` folder: solutions kept, cells tagged, outputs cleared.

    Solution cells become "autograded answer" cells (``solution: true``), each exercise's check cell an
    "autograder tests" cell (``grade: true``, ``points``); grade ids are ``<name>-exercise-<n>-answer|tests``.
    Words that nbgrader reads as region markers ("BEGIN SOLUTION", ...) outside the marker lines themselves get a
    no-break space, so prose about the markers is not taken for a solution region.
    """
    nb = copy.deepcopy(nb)
    exercises = find_exercises(nb)
    _clear_outputs(nb)
    for cell in nb.cells:
        lines = _lines(cell.source)
        markers = set()
        if cell.cell_type == "code":
            markers = {n for begin, end, _ in solution_regions(cell.source) for n in (begin, end)}
        for n, line in enumerate(lines):
            if n not in markers:
                for words in _NBGRADER_WORDS:
                    line = line.replace(words, words.replace(" ", "\u00a0"))
                lines[n] = line
        cell.source = "\n".join(lines)
    used: set[str] = set()
    for ex in exercises:
        nb.cells[ex.solution_cell].metadata["nbgrader"] = {
            "grade": False,
            "grade_id": _grade_id(name, ex.label, "answer", used),
            "locked": False,
            "schema_version": 3,
            "solution": True,
            "task": False,
        }
        if ex.check_cell is not None:
            nb.cells[ex.check_cell].metadata["nbgrader"] = {
                "grade": True,
                "grade_id": _grade_id(name, ex.label, "tests", used),
                "locked": True,
                "points": points,
                "schema_version": 3,
                "solution": False,
                "task": False,
            }
    return nb, exercises


def convert(source: Path | str, out: Path | str, *, nbgrader: bool = False, points: float = 1) -> list[Path]:
    """Write the student (or, with ``nbgrader``, the nbgrader source) version of a notebook or a folder of them.

    ``source`` is one ``.ipynb`` or a folder whose ``NN_*.ipynb`` notebooks are converted; ``out`` is a folder,
    created if needed, that must not be the source folder. Returns the paths written.
    """
    source, out = Path(source), Path(out)
    notebooks = [source] if source.is_file() else sorted(source.glob("[0-9][0-9]_*.ipynb"))
    if not notebooks:
        raise FileNotFoundError(f"no notebooks NN_*.ipynb in {source}")
    if any(nb_path.parent.resolve() == out.resolve() for nb_path in notebooks):
        raise ValueError(f"--out {out} is the folder of the notebooks themselves: it would overwrite them")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for nb_path in notebooks:
        nb = nbformat.read(nb_path, as_version=4)
        try:
            if nbgrader:
                new, exercises = nbgrader_notebook(nb, nb_path.stem, points=points)
            else:
                new, exercises = student_notebook(nb)
        except ValueError as err:
            raise ValueError(f"{nb_path.name}: {err}") from None
        for ex in exercises:
            if ex.check_cell is None:
                print(f"warning: {nb_path.name}: {ex.label} (cell {ex.solution_cell}) has no check cell after it",
                      file=sys.stderr)  # fmt: skip
        nbformat.write(new, out / nb_path.name)
        written.append(out / nb_path.name)
        print(f"{nb_path.name}: {len(exercises)} exercise(s) -> {out / nb_path.name}")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.student",
        description="Write student versions of the course notebooks (solutions replaced by stubs, outputs cleared), "
        "or with --nbgrader the source versions for an nbgrader course.",
    )
    parser.add_argument("source", type=Path, help="a notebook, or a folder of NN_*.ipynb notebooks")
    parser.add_argument("--out", type=Path, required=True, help="output folder (not the source folder)")
    parser.add_argument("--nbgrader", action="store_true", help="write nbgrader source notebooks (solutions kept)")
    parser.add_argument("--points", type=float, default=1, help="points per exercise check with --nbgrader")
    args = parser.parse_args(argv)
    try:
        convert(args.source, args.out, nbgrader=args.nbgrader, points=args.points)
    except (ValueError, FileNotFoundError) as err:
        parser.error(str(err))
    return 0


if __name__ == "__main__":
    sys.exit(main())
