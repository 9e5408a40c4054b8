"""Check a notebook's exercises as a grader sees them, without nbgrader (the nbgrader run is tests/test_grading.py).

    python -m tools.exercise_check notebooks/08_efficient_attention.ipynb   # one or more notebooks
    python -m tools.exercise_check --aliases notebooks/04_*.ipynb          # shortcuts by other doors (ALIASES)

For each notebook, two executions in fresh kernels, and a scan of its student version
(python -m course_lib.classroom.student):

1. **Variant run.** The notebook with its reference solutions for another student (``VARIANT = 'student-b'``, as
   ``--variant-seed student-b`` writes it): every check, hidden tests included, must pass (the solutions are right for
   any numbers), and the numbers printed by the cells that call ``variant_numbers`` must differ from the notebook's.
2. **Shortcut run.** Variant 0; every implement-it exercise answered by a library call (``tests/shortcuts/nbNN.py``;
   with ``--aliases``, by the same call reached through another door where ``ALIASES`` has one),
   the others by the reference solution: each shortcut's check must fail with ``ShortcutError``, every other check
   must pass. Every exercise that writes a function needs a shortcut there, or a reason why none exists.
3. **Leaks.** The by-hand (value) answers of variant 0, printed by a cell added at the end of run 2, must appear in no
   code of the student version and in no output or prose of the notebook outside that exercise's own cells.

Exit status 0 when every notebook passes. The functions are shared with tests/test_grading.py.
"""

from __future__ import annotations

import ast
import copy
import json
import math
import os
import re
import runpy
import sys
import tempfile
from pathlib import Path

import nbformat

from course_lib.classroom.notebook import HIDDEN_BEGIN, find_exercises, set_variant
from course_lib.classroom.stubs import lines_of, solution_regions, stub_source
from course_lib.classroom.student import student_notebook
from course_lib.paths import ROOT
from tools.nbval_env import nbval_environ

ANSWERS_TAG = "EXERCISE-ANSWERS="


def solution_code(source: str) -> str:
    """A solution cell's code as a student would type it: the marker lines removed, everything else kept."""
    markers = {n for begin, end, _ in solution_regions(source) for n in (begin, end)}
    return "\n".join(line for n, line in enumerate(lines_of(source)) if n not in markers)


def function_names(source: str) -> set[str]:
    """Names of the functions (and classes) a solution cell defines at its top level."""
    try:
        tree = ast.parse(solution_code(source))
    except SyntaxError:
        return set()
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {node.name for node in tree.body if isinstance(node, kinds)}


def value_answers(source: str, label: str) -> list[str]:
    """The value answers (not functions) a solution cell asks for: the names its student stub leaves unanswered."""
    return [n for n in stub_source(source, label)[1] if n not in function_names(source)]


def load_shortcuts(nb_path: Path, aliases: bool = False) -> tuple[dict[str, str], dict[str, str]]:
    """``(SHORTCUTS, NO_SHORTCUT)`` of tests/shortcuts/NN.py: label -> answer-cell code, label -> reason. With
    ``aliases``, a shortcut of its ``ALIASES`` (the same work by another door) replaces the plain one."""
    path = ROOT / "tests" / "shortcuts" / f"nb{nb_path.name[:2]}.py"
    if not path.is_file():
        return {}, {}
    module = runpy.run_path(str(path))  # a data file of the tests, read as Python: its dicts
    shortcuts = {**module["SHORTCUTS"], **(module.get("ALIASES", {}) if aliases else {})}
    return shortcuts, dict(module.get("NO_SHORTCUT", {}))


def values_by_name(names: list[str], convert: str) -> str:
    """Code that sets ``_values`` to ``{name: convert(value)}`` for those of ``names`` that are defined, reading each
    by its name (not through ``globals()``, which the autograde guard flags in a cell it did not hand out)."""
    getters = ", ".join(f"({n!r}, lambda: {n})" for n in names)
    return (
        f"_values = {{}}\nfor _name, _get in [{getters}]:\n    try:\n        _values[_name] = {convert}(_get())\n"
        "    except NameError:\n        pass\n"
    )


def answers_cell(names: list[str]) -> nbformat.NotebookNode:
    """A code cell that prints the values of ``names`` as JSON (tensors as lists), after the tag ANSWERS_TAG."""
    code = (
        "import json as _json\n"
        "def _plain(v):\n"
        "    if hasattr(v, 'tolist'):\n"
        "        return v.tolist()\n"
        "    if isinstance(v, (list, tuple)):\n"
        "        return [_plain(x) for x in v]\n"
        "    return v if isinstance(v, (int, float, bool, str)) or v is None else repr(v)\n"
        + values_by_name(names, "_plain")
        + f"print({ANSWERS_TAG!r} + _json.dumps(_values))"
    )
    return nbformat.v4.new_code_cell(code)


def read_answers(nb: nbformat.NotebookNode) -> dict:
    """The answers printed by :func:`answers_cell` in an executed notebook."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text = out.get("text", "")
            if ANSWERS_TAG in text:
                return json.loads(text.split(ANSWERS_TAG, 1)[1].strip())
    raise ValueError("no answers were printed")


def answer_strings(value) -> set[str]:
    """How a by-hand answer could be written in a notebook: integers of two or more digits, decimals to 2-4 places
    (values that round to 0, 1 or a round tenth are left out: they appear everywhere)."""
    if isinstance(value, list):
        return set().union(*(answer_strings(v) for v in value)) if value else set()
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return set()
    if float(value).is_integer():
        n = int(value)
        return {str(n), f"{n:,}"} if abs(n) >= 10 else set()
    found = set()
    for places in (4, 3):
        text = f"{value:.{places}f}"
        if text.rstrip("0")[-2:-1] != "." and float(text) not in (0.0, 1.0, -1.0):  # more than one decimal left
            found.add(text)
    return found


def find_leaks(answers: dict, texts: list[tuple[str, str]]) -> list[str]:
    """``where: name = value`` for every answer string found in ``texts`` (pairs of where, text)."""
    leaks = []
    for name, value in answers.items():
        for s in sorted(answer_strings(value)):
            pattern = re.compile(rf"(?<![\w.]){re.escape(s)}(?![\d])")
            leaks += [f"{where}: {name} = {s}" for where, text in texts if pattern.search(text)]
    return leaks


_PROGRESS_BAR = re.compile(r"^.*\d+%\|.*\|.*$", re.MULTILINE)  # a tqdm line: its percentages are not answers


def output_text(cell) -> str:
    """What a code cell printed or displayed as text, progress bars left out. A cell marked ``# NBVAL_IGNORE_OUTPUT``
    prints measurements that change from run to run (timings, memory): its numbers are not scanned."""
    if "NBVAL_IGNORE_OUTPUT" in cell.get("source", ""):
        return ""
    text = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) for o in cell.get("outputs", []))
    return _PROGRESS_BAR.sub("", text)


def cell_errors(cell) -> list[tuple[str, str]]:
    return [(o.ename, o.evalue) for o in cell.get("outputs", []) if o.output_type == "error"]


def execute(nb: nbformat.NotebookNode, workdir: str) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": workdir}})  # fmt: skip
    client.execute(env=nbval_environ(os.environ))  # the kernel computes as in `make test`'s strict run
    return nb


def check_notebook(nb_path: Path, aliases: bool = False) -> list[str]:
    """Problems with the exercises of one notebook (empty when all is well); see the module docstring. With
    ``aliases``, the shortcut run hands in the ``ALIASES`` of tests/shortcuts where they exist."""
    full = nbformat.read(nb_path, as_version=4)
    solutions = {ex.label: full.cells[ex.solution_cell].source for ex in find_exercises(full)}
    shortcuts, no_shortcut = load_shortcuts(nb_path, aliases)
    problems = []
    writes_function = {label for label, source in solutions.items() if function_names(source)}
    for label in sorted(writes_function - set(shortcuts) - set(no_shortcut)):
        problems.append(f"{label} writes a function: give it a library-call shortcut in tests/shortcuts, or a reason")
    for label in sorted(set(shortcuts) - writes_function):
        problems.append(f"tests/shortcuts names {label}, which writes no function")

    exercises = find_exercises(full)
    with tempfile.TemporaryDirectory() as workdir:
        variant = copy.deepcopy(full)  # hidden tests included: they must pass for any variant too
        set_variant(variant, "student-b")
        execute(variant, workdir)
        for i, cell in enumerate(variant.cells):
            if cell.cell_type == "code" and cell_errors(cell):
                problems.append(f"variant run, cell {i}: {cell_errors(cell)[0]}")
        checks = {ex.check_cell for ex in exercises}
        numbers = [i for i, c in enumerate(full.cells) if c.cell_type == "code" and i not in checks
                   and "variant_numbers(VARIANT" in c.source]  # fmt: skip
        for i in numbers:  # the cells that draw an exercise's numbers print them: another student, other numbers
            text = "".join(o.get("text", "") for o in full.cells[i].outputs)
            if text == "".join(o.get("text", "") for o in variant.cells[i].outputs):
                problems.append(f"variant run: cell {i} prints the same numbers for student-b: {text[:60]!r}")

        short = copy.deepcopy(full)
        values = []
        for ex in exercises:
            if ex.label in shortcuts:
                short.cells[ex.solution_cell].source = shortcuts[ex.label]
            values += value_answers(solutions[ex.label], ex.label)
        short.cells.append(answers_cell(values))
        execute(short, workdir)
        checks = {ex.check_cell: ex.label for ex in exercises}
        for i, cell in enumerate(short.cells):
            errors = cell_errors(cell) if cell.cell_type == "code" else []
            if checks.get(i) in shortcuts:
                if not any("ShortcutError" in f"{name} {value}" for name, value in errors):
                    problems.append(f"shortcut run: the check of {checks[i]} (cell {i}) did not refuse the shortcut")
            elif errors:
                problems.append(f"shortcut run, cell {i}: {errors[0]}")
        answers = read_answers(short)

    student, exercises = student_notebook(full, banner=False)  # the same cell indices as the full notebook
    own = {i for ex in exercises for i in (ex.solution_cell, ex.check_cell)}
    texts = [
        (f"student version, code cell {i}", c.source) for i, c in enumerate(student.cells) if c.cell_type == "code"
    ]
    for i, cell in enumerate(full.cells):
        if i in own:
            continue
        if cell.cell_type == "markdown":
            texts.append((f"prose, cell {i}", cell.source))
        elif cell.cell_type == "code":
            texts.append((f"output of cell {i}", output_text(cell)))
    problems += [f"leak: {leak}" for leak in find_leaks(answers, texts)]
    if any(HIDDEN_BEGIN in c.source for c in student.cells if c.cell_type == "code"):
        problems.append("the student version still holds hidden tests")
    return problems


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    aliases = "--aliases" in argv
    failed = 0
    for arg in [a for a in argv if a != "--aliases"]:
        problems = check_notebook(Path(arg), aliases)
        print(f"{Path(arg).name}: " + ("ok" if not problems else f"{len(problems)} problem(s)"))
        for p in problems:
            print("   ", p)
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
