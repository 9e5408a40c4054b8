"""Grade a whole class: nbgrader's autograde for every submission of one assignment, several at once, then a report
per exercise.

    cd my-course        # an nbgrader course: nbgrader_config.py, source/, release/, submitted/<student>/<assignment>/
    python -m course_lib.classroom.autograde a04 --jobs 8     # grade every submission of a04, then report
    python -m course_lib.classroom.autograde a04 --report     # only the report of what is graded already

Each submission is graded by its own ``nbgrader autograde ASSIGNMENT --student ID`` process, ``--jobs`` of them at a
time (default: one per CPU core; each executes one notebook on one core). The processes share nbgrader's gradebook,
one SQLite file: each waits up to 120 s for another's write instead of failing at once. A submission whose
process fails is reported with the end of its log, and the others are graded all the same.

The report (printed, and written to ``reports/ASSIGNMENT.md`` and ``reports/ASSIGNMENT.csv``): per exercise, in
exercise order, its points (those of its graded cells together: the visible check and the hidden tests, half each,
and a written answer), how many submissions scored full, partial (some of its points, not all) and zero marks, how
many written answers wait for a person to mark them (nbgrader's formgrader; an unchanged answer cell scores 0 at
once), and the mean of the marked ones (the CSV, the marks sheet, has a column per graded cell); then the
flagged submissions, read from the autograded notebooks: a test cell that says "Not graded" (the guard found a
changed checker, :mod:`course_lib.classroom.guard`), that refused a library shortcut (``ShortcutError``) or a call of
the check's own reference or helpers; and every cell the student wrote in which the guard's reading finds tampering,
read again here, so that no submission that tampers is listed as clean; every answer cell of a by-hand exercise
that computes with course_lib, torch or NumPy instead of writing its numbers down (:mod:`course_lib.classroom.
calculator`: flagged for a person to look at, not zeroed); and every file the submission wrote into its graded folder
while it ran; and a submitted notebook in which no cell carries nbgrader's metadata (:data:`NOT_THE_ASSIGNMENT`:
made from the student release rather than from the assignment's ``release/`` notebook, nbgrader grades nothing in
it). A test cell that refused NumPy (a tensor handed to NumPy where the exercise asks for
tensor operations only, as notebook 00 says) scores zero like any refusal, but is listed apart, under its own label
(:data:`USED_NUMPY`): an honest answer's slip, not a shortcut. (Where an answer also reached a shortcut, the check
reports the shortcut: :class:`course_lib.classroom.reach.Reaches`.)
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..validate import integer
from .flags import NOT_THE_ASSIGNMENT, USED_NUMPY, flagged
from .published import published_copies, report_sections, shared_answers

__all__ = ["NOT_THE_ASSIGNMENT", "USED_NUMPY", "ExerciseSummary", "Graded", "GradedCell", "autograde_class",
           "by_exercise", "class_report", "format_report", "main", "slow", "write_report"]  # fmt: skip

BUSY_TIMEOUT_S = 120
SOURCE_READABLE = "\n**source/ is in the course folder**: the submissions could read its solutions (see the guide)\n"


# A graded cell's id (classroom.nbgrader_source): NOTEBOOK-exercise-N-KIND, KIND tests, hidden-tests or written (a
# second cell of one label gets -2): its exercise is the id without KIND
_CELL_ID = re.compile(r"^(?P<exercise>.+?-exercise-[0-9a-z_]+?)-(?P<kind>tests|hidden-tests|written)(?:-\d+)?$")
_KINDS = ("tests", "hidden-tests", "written")  # an exercise's cells in this order: visible check, hidden tests, written


def _natural(text: str) -> tuple:
    """A sort key that orders the numbers in ``text`` as numbers: exercise-9 before exercise-10."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)


@dataclass
class GradedCell:
    """One graded cell of an assignment over the class (an exercise's visible check, its hidden tests, a written
    answer): its points and every student's score."""

    grade_id: str
    max_score: float
    scores: dict[str, float | None] = field(default_factory=dict)  # student -> score; None: not marked yet

    @property
    def exercise(self) -> str:
        """The exercise it belongs to: its grade id without the kind of cell (a grade id of another form: itself)."""
        found = _CELL_ID.match(self.grade_id)
        return found["exercise"] if found else self.grade_id

    def order(self) -> tuple:
        """Its place in the report: by exercise (numbers as numbers), then visible check, hidden tests, written."""
        found = _CELL_ID.match(self.grade_id)
        return _natural(self.exercise), _KINDS.index(found["kind"]) if found else 0, _natural(self.grade_id)


@dataclass
class ExerciseSummary:
    """One exercise of an assignment over the class: its graded cells, scored together."""

    name: str
    cells: list[GradedCell]

    @property
    def max_score(self) -> float:
        return sum(cell.max_score for cell in self.cells)

    @property
    def scores(self) -> dict[str, float | None]:
        """Student -> the exercise's score, None while a cell of it waits for a person to mark it."""
        students = sorted({s for cell in self.cells for s in cell.scores})
        marks = {s: [cell.scores.get(s, 0.0) for cell in self.cells] for s in students}
        return {s: None if None in v else sum(v) for s, v in marks.items()}  # type: ignore[arg-type]

    def counts(self) -> tuple[int, int, int]:
        """(full, partial, zero) marks, of the marked submissions: partial is some of its points, not all."""
        values = [s for s in self.scores.values() if s is not None]
        full = sum(s >= self.max_score - 1e-9 for s in values)  # (points such as 0.1 add up to a hair under)
        zero = sum(s <= 0 for s in values)
        return full, len(values) - full - zero, zero

    def to_mark(self) -> int:
        """How many submissions a person has still to mark here (written answers)."""
        return sum(s is None for s in self.scores.values())


def by_exercise(cells: list[GradedCell]) -> list[ExerciseSummary]:
    """The graded cells grouped by exercise, in exercise order (1, 2, ..., 9, 10), each exercise's cells in order."""
    exercises: dict[str, list[GradedCell]] = {}
    for cell in sorted(cells, key=GradedCell.order):
        exercises.setdefault(cell.exercise, []).append(cell)
    return [ExerciseSummary(name, found) for name, found in exercises.items()]


def _students(root: Path, assignment: str) -> list[str]:
    submitted = root / "submitted"
    if not submitted.is_dir():
        raise FileNotFoundError(f"{submitted} does not exist: run this in an nbgrader course folder")
    return sorted(p.name for p in submitted.iterdir() if (p / assignment).is_dir())


@dataclass(frozen=True)
class Graded:
    """How one submission's ``nbgrader autograde`` went: its seconds, whether it succeeded, its log."""

    seconds: float
    ok: bool
    log: str


def _grade_one(root: Path, assignment: str, student: str, db_url: str, env: dict) -> tuple[str, Graded]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "autograde", assignment, "--student", student, "--force",
         f"--CourseDirectory.db_url={db_url}"],
        cwd=root, capture_output=True, text=True, env=env,
    )  # fmt: skip
    return student, Graded(time.perf_counter() - start, done.returncode == 0, done.stdout + done.stderr)


def autograde_class(root: str | Path, assignment: str, *, jobs: int | None = None, students: Sequence[str] = (),
                    progress: bool = True, env: dict | None = None) -> dict[str, Graded]:  # fmt: skip
    """Autograde ``students`` (default: every submission of ``assignment``), ``jobs`` processes at a time;
    student -> :class:`Graded`. Each process gets ``env`` (default: this one's), with one BLAS/OpenMP thread unless
    it sets another: ``jobs`` processes of several threads each would fight over the cores."""
    from ..progress import progress_bar

    root = Path(root).resolve()
    jobs = (os.cpu_count() or 1) if jobs is None else integer("jobs", jobs, minimum=1)
    students = list(students) or _students(root, assignment)
    db_url = f"sqlite:///{root / 'gradebook.db'}?timeout={BUSY_TIMEOUT_S}"
    env = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", **(os.environ if env is None else env)}
    results: dict[str, Graded] = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_grade_one, root, assignment, s, db_url, env) for s in students]
        bar = progress_bar(total=len(futures), desc=f"autograde {assignment}", disable=not progress)
        for future in futures:
            student, graded = future.result()
            results[student] = graded
            bar.update(1)
        bar.close()
    return results


def class_report(root: str | Path, assignment: str) -> tuple[list[GradedCell], dict[str, list[tuple[str, str]]]]:
    """Per graded cell, every student's score (from the gradebook), in exercise order (:meth:`GradedCell.order`);
    per student, the flagged cells."""
    from nbgrader.api import Gradebook

    root = Path(root).resolve()
    cells: dict[str, GradedCell] = {}
    ran: set[str] = set()  # the students nbgrader autograded (a failed one too: its submission stays in the gradebook)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}?timeout={BUSY_TIMEOUT_S}") as gb:
        for submission in gb.assignment_submissions(assignment):
            ran.add(submission.student_id)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.max_score:
                        cell = cells.setdefault(grade.name, GradedCell(grade.name, grade.max_score))
                        # nbgrader's score is 0.0 for a written answer nobody has marked yet: None says so; a test
                        # cell of a notebook nbgrader failed on is 0, not one to mark (a twenty-first trial)
                        waits = grade.needs_manual_grade and grade.cell.cell_type == "markdown"
                        cell.scores[submission.student_id] = None if waits else grade.score or 0.0
    students = sorted({s for cell in cells.values() for s in cell.scores} | set(_students(root, assignment)))
    flags = {s: f for s in students if (f := flagged(root, assignment, s, s in ran))}  # a failed one: no grades
    return sorted(cells.values(), key=GradedCell.order), flags


def _grouped(found: list[tuple[str, str]]) -> str:
    """A student's flags, the cells flagged for the same reason together: ``e2, e3 (not graded: ...)``."""
    cells: dict[str, list[str]] = {}
    for where, why in found:
        cells.setdefault(why, []).append(where)
    return "; ".join(f"{', '.join(where)} ({why})" for why, where in cells.items())


def format_report(assignment: str, cells: list[GradedCell], flags: dict[str, list[tuple[str, str]]],
                  copies: dict[str, list[str]] | None = None, shared: list | None = None) -> str:  # fmt: skip
    """The report as Markdown: a row per exercise (its graded cells' points together), then the flags per cell,
    then the answers that are the published solution (``copies``: per student, the answer cells) and those several
    students handed in alike (``shared``: grade id, students)."""
    n = max((len(cell.scores) for cell in cells), default=0)
    lines = [f"# {assignment}: {n} submissions", "",
             "| exercise | points | full | partial | zero | to mark | mean of the marked |",
             "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for s in by_exercise(cells):
        full, partial, zero = s.counts()
        marked = [v for v in s.scores.values() if v is not None]
        mean = f"{sum(marked) / len(marked):.2f}" if marked else "-"
        lines.append(f"| {s.name} | {s.max_score:g} | {full} | {partial} | {zero} | {s.to_mark()} | {mean} |")
    flagged = {s: [f for f in found if f[1] != USED_NUMPY] for s, found in flags.items()}
    flagged = {s: found for s, found in flagged.items() if found}
    lines += ["", f"## Flagged submissions: {len(flagged)}", ""]
    lines += [f"- {student}: {_grouped(found)}" for student, found in flagged.items()]
    numpy = {s: [g for g, why in found if why == USED_NUMPY] for s, found in flags.items()}
    numpy = {s: where for s, where in numpy.items() if where}
    if numpy:
        lines += ["", f"## Refused NumPy, not flagged: {len(numpy)}", "",
                  "A tensor handed to NumPy where the exercise asks for tensor operations only (notebook 00, section "
                  "6, lists these exercises): zero for that test, as for any refusal, but an honest slip, not a "
                  "shortcut.", ""]  # fmt: skip
        lines += [f"- {student}: " + ", ".join(where) for student, where in numpy.items()]
    lines += report_sections(copies or {}, shared or [])
    return "\n".join(lines) + "\n"


def write_report(root: str | Path, assignment: str) -> str:
    """Write ``reports/ASSIGNMENT.md`` and ``.csv`` (student x graded cell scores, in exercise order, visible check
    before hidden tests) under ``root``; return the Markdown."""
    root = Path(root)
    cells, flags = class_report(root, assignment)
    cells = sorted(cells, key=GradedCell.order)
    copies = {s: published_copies(root, assignment, s) for s in sorted({s for c in cells for s in c.scores})}
    text = format_report(assignment, cells, flags, copies, shared_answers(root, assignment))
    text += SOURCE_READABLE if (root / "source").is_dir() else ""
    (root / "reports").mkdir(exist_ok=True)
    (root / "reports" / f"{assignment}.md").write_text(text, encoding="utf-8")
    students = sorted({s for cell in cells for s in cell.scores} | set(flags))  # (not graded: zeros)
    with open(root / "reports" / f"{assignment}.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", *(cell.grade_id for cell in cells), "total so far", "flagged", "refused NumPy"])
        for student in students:  # an empty field: a written answer not marked yet
            scores = [cell.scores.get(student, 0.0) for cell in cells]
            total = sum(v for v in scores if v is not None)
            whys = [why for _, why in flags.get(student, [])]
            numpy = whys.count(USED_NUMPY)
            writer.writerow([student, *("" if v is None else v for v in scores), total, len(whys) - numpy, numpy])
    return text


def slow(seconds: dict[str, float]) -> dict[str, float]:
    """The submissions that took more than three times the class's median and over two minutes to grade: a
    twenty-third trial's three cells of ``time.sleep(100)`` took 10 minutes 37 s, with full marks."""
    middle = statistics.median(seconds.values()) if seconds else 0.0
    return {s: t for s, t in sorted(seconds.items()) if t > max(3 * middle, 120)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment")
    parser.add_argument("--jobs", type=int, default=None, help="processes at once (default: the CPU cores)")
    parser.add_argument("--report", action="store_true", help="only write the report of what is graded")
    parser.add_argument("--root", default=".", help="the nbgrader course folder (default: here)")
    parser.add_argument("--students", nargs="+", default=(), help="grade only these (default: every submission)")
    args = parser.parse_args(argv)
    failed = {}
    if not args.report:
        start = time.perf_counter()
        results = autograde_class(args.root, args.assignment, jobs=args.jobs, students=args.students)
        wall = time.perf_counter() - start
        failed = {s: graded.log[-2000:] for s, graded in results.items() if not graded.ok}
        busy = sum(graded.seconds for graded in results.values())
        print(f"graded {len(results)} submissions in {wall:.0f} s ({busy / max(len(results), 1):.0f} s each, "
              f"{args.jobs or os.cpu_count()} at a time)")  # fmt: skip
        for student, log in failed.items():
            print(f"nbgrader failed for {student}:\n{log}", file=sys.stderr)
        for student, seconds in slow({s: graded.seconds for s, graded in results.items()}).items():
            print(f"slow: {student} took {seconds:.0f} s (a cell that waits, such as time.sleep?): open it")
    print(write_report(args.root, args.assignment))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
