"""Student versions of the notebooks, and nbgrader source versions for lecturers.

Every exercise of the course keeps its reference solution between two lines of a code cell, exactly
``# BEGIN SOLUTION`` and ``# END SOLUTION`` (the markers nbgrader uses), and its auto-check in a later code cell.

Student version (``make student``, or ``python -m course_lib.classroom.student notebooks/ --out student/``): a copy of
each notebook with every solution region replaced by a stub and every output cleared. The stub depends on where the
region sits:

- inside a function body (the markers are indented): the ``def`` line stays and the region becomes
  ``raise NotImplementedError("Exercise N: write the body of f")`` at the same indentation, so the cell still
  defines ``f`` and the check after it fails with ``NotImplementedError``;
- at the top level: a ``def`` in the region keeps its header (and docstring) with the same ``raise`` as body; every
  other name the region assigns (a value answer such as ``q_2 = ...``) becomes
  ``q_2 = unanswered("Exercise N: q_2")``, a placeholder from :mod:`course_lib.classroom.exercises` that raises
  ``NotImplementedError`` as soon as the check touches it (rather than a confusing ``NameError``).

Only code cells count: markdown that mentions the markers in prose is left alone. A written answer (a markdown cell
tagged ``written-answer``: a "why?" question, then its model answer and marking) keeps its question and loses the
rest. A check cell may end with hidden
tests between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` (nbgrader's markers: other seeds, edge cases);
the student version leaves them out, as nbgrader's release does.

Variants (``--variant-seed``, e.g. a student id): a notebook whose by-hand exercises draw their numbers from
``VARIANT`` (:func:`course_lib.classroom.exercises.variant_numbers`) has one line ``VARIANT = 0`` in a code cell; the
tool writes the given seed there, so each student's copy has its own numbers and the checks recompute the answers
from them.

nbgrader source version (``--nbgrader``): see :mod:`course_lib.classroom.nbgrader_source`. How a solution region
becomes a stub: :mod:`course_lib.classroom.stubs`; how the exercises are found: :mod:`course_lib.classroom.notebook`.
"""

from __future__ import annotations

import argparse
import copy
import secrets
import sys
from collections.abc import Collection
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from .nbgrader_source import nbgrader_notebook
from .notebook import (
    Exercise,
    clear_outputs,
    find_exercises,
    is_chinese,
    set_variant,
    without_hidden_tests,
    written_parts,
)
from .stubs import stub_source

__all__ = ["STUDENT_BANNER", "WRITTEN_STUB", "convert", "main", "student_notebook"]

WRITTEN_STUB = "*Your answer (double-click to edit):* ..."
STUDENT_BANNER = (
    "> **Student version.** The reference solution of every exercise was replaced by a stub that begins\n"
    "> `# YOUR CODE HERE` (or `# YOUR ANSWER HERE` where the answer is a value), and all outputs were cleared. Write\n"
    "> your answer there, run the cell, then run the check cell after it. The full notebook with solutions and\n"
    "> outputs is in the course's `notebooks/`."
)
# The Chinese edition's (course_lib.classroom.notebook.is_chinese)
ZH = {
    "written": "*你的回答（双击即可编辑）：* ...",
    "banner": "> **学生版。** 每道练习的参考答案都换成了一段待填写的占位代码，它以 `# YOUR CODE HERE` 开头"
    "（答案是一个值时为 `# YOUR ANSWER HERE`），所有输出也都已清空。在那里写上你的答案，运行该单元格，"
    "再运行它后面的检查单元格。带参考答案和输出的完整笔记本在课程的 `notebooks/zh/` 中。",  # (one line: a line
}  # break between two Chinese characters would show as a space)


def student_notebook(
    nb: NotebookNode, *, banner: bool = True, variant_seed: int | str | None = None
) -> tuple[NotebookNode, list[Exercise]]:
    """A copy of ``nb`` with every solution region stubbed, hidden tests removed, outputs cleared; and its exercises.

    With ``banner`` a short markdown cell saying what this version is follows the first cell; the exercises'
    cell indices refer to the returned notebook. ``variant_seed`` is written over the notebook's ``VARIANT = 0``.
    """
    nb = copy.deepcopy(nb)
    exercises, lang = find_exercises(nb), "zh" if is_chinese(nb) else "en"
    for ex in exercises:
        cell = nb.cells[ex.solution_cell]
        cell.source, ex.names = stub_source("".join(cell.source), ex.label, lang)
        if ex.written_cell is not None:  # the question stays, the model answer and its marking go
            question, _ = written_parts("".join(nb.cells[ex.written_cell].source))
            stub = ZH["written"] if lang == "zh" else WRITTEN_STUB
            nb.cells[ex.written_cell].source = f"{question}\n\n{stub}"
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = without_hidden_tests("".join(cell.source))
    if variant_seed is not None:
        set_variant(nb, variant_seed)
    clear_outputs(nb)
    if banner:
        note = ZH["banner"] if lang == "zh" else STUDENT_BANNER
        nb.cells.insert(1, nbformat.v4.new_markdown_cell(note, id="student-version-note"))
        for ex in exercises:
            ex.solution_cell += 1
            ex.check_cell = None if ex.check_cell is None else ex.check_cell + 1
            ex.written_cell = None if ex.written_cell is None else ex.written_cell + 1
    return nb, exercises


def convert(
    source: Path | str,
    out: Path | str,
    *,
    nbgrader: bool = False,
    points: float = 1,
    variant_seed: int | str | None = None,
    secret: str | None = None,
    only: Collection[int] | None = None,
) -> list[Path]:
    """Write the student (or, with ``nbgrader``, the nbgrader source) version of a notebook or a folder of them.

    ``source`` is one ``.ipynb`` or a folder whose ``NN_*.ipynb`` notebooks are converted; ``out`` is a folder,
    created if needed, that must not be the source folder. ``variant_seed`` gives the by-hand exercises their own
    numbers (see :func:`set_variant`). ``secret`` (``nbgrader`` only): what the hidden tests' seeds are derived from
    (:func:`~course_lib.classroom.nbgrader_source.salted_seed`); ``None``, a new random one, so that no table of the
    repository's hidden inputs passes them. ``only`` (``nbgrader`` only): the numbers of the exercises graded, the
    others left to do ungraded. Returns the paths written.
    """
    source, out = Path(source), Path(out)
    notebooks = [source] if source.is_file() else sorted(source.glob("[0-9][0-9]_*.ipynb"))
    if not notebooks:
        raise FileNotFoundError(f"no notebooks NN_*.ipynb in {source}")
    if any(nb_path.parent.resolve() == out.resolve() for nb_path in notebooks):
        raise ValueError(f"--out {out} is the folder of the notebooks themselves: it would overwrite them")
    if (secret is not None or only is not None) and not nbgrader:
        raise ValueError("a secret, or a choice of exercises, is for nbgrader source versions (--nbgrader)")
    secret = secrets.token_hex(16) if nbgrader and secret is None else secret
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for nb_path in notebooks:
        nb = nbformat.read(nb_path, as_version=4)
        try:
            if nbgrader:
                new, exercises = nbgrader_notebook(nb, nb_path.stem, points=points, secret=secret, only=only)
                if variant_seed is not None:
                    set_variant(new, variant_seed)
            else:
                new, exercises = student_notebook(nb, variant_seed=variant_seed)
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


def exercise_numbers(text: str) -> list[int]:
    """``"1,2,3"`` -> ``[1, 2, 3]`` (the command line's ``--exercises``)."""
    try:
        numbers = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(f"exercise numbers separated by commas, such as 1,2,3: not {text!r}") from None
    if not numbers:
        raise argparse.ArgumentTypeError("no exercise numbers")
    return numbers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.classroom.student",
        description="Write student versions of the course notebooks (solutions replaced by stubs, outputs cleared), "
        "or with --nbgrader the source versions for an nbgrader course.",
    )
    parser.add_argument("source", type=Path, help="a notebook, or a folder of NN_*.ipynb notebooks")
    parser.add_argument("--out", type=Path, required=True, help="output folder (not the source folder)")
    parser.add_argument("--nbgrader", action="store_true", help="write nbgrader source notebooks (solutions kept)")
    parser.add_argument("--points", type=float, default=1, help="points per exercise, --nbgrader (half: hidden tests)")
    parser.add_argument(
        "--variant-seed",
        help="give the by-hand exercises this student's own numbers (any text, e.g. a student id; 0 = the text's)",
    )
    parser.add_argument(
        "--secret",
        help="--nbgrader: derive the hidden tests' seeds from this text (default: a new random one each run; the "
        "repository's seeds are public)",
    )
    parser.add_argument("--exercises", type=exercise_numbers, help="--nbgrader: grade only these, e.g. 1,2,3 (a week's "
                        "share of a notebook); the others stay for students to do, ungraded")  # fmt: skip
    args = parser.parse_args(argv)
    try:
        convert(args.source, args.out, nbgrader=args.nbgrader, points=args.points, variant_seed=args.variant_seed,
                secret=args.secret, only=args.exercises)  # fmt: skip
    except (ValueError, FileNotFoundError) as err:
        parser.error(str(err))
    return 0


if __name__ == "__main__":
    sys.exit(main())
