"""Grading a class with nbgrader, end to end, as the lecturer's guide describes it.

For every notebook: an nbgrader course of its own (``python -m course_lib.classroom.student NN.ipynb --out source/aNN
--nbgrader``), ``nbgrader generate_assignment``, three submissions autograded, ``nbgrader generate_feedback``:

- ``reference``: the release with every answer cell filled with the reference solution -> full marks;
- ``unchanged``: the release as handed out -> zero for every exercise, and the notebook still runs to the end;
- ``shortcut``: every implement-it exercise answered by a library call (``tests/shortcuts/nbNN.py``), the other
  exercises by the reference solution, for another student's numbers (``VARIANT = 'student-b'``) -> zero for each
  shortcut, full marks for the rest: the variant's numbers differ and its answers grade as correct.

Scores are read per exercise from nbgrader's gradebook. The same run scans for leaked answers: the by-hand answers of
the reference submission appear in no code of the release, in no prose, and in no output of the unchanged
submission outside the exercise's own cells.

Slow (each notebook is executed three times), so ``make test`` skips it and CI runs it with ``make test-grading``
(COURSE_GRADING=1, nbgrader from the ``grading`` extra). The small unit tests at the end always run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.classroom.notebook import HIDDEN_BEGIN, find_exercises, set_variant
from course_lib.paths import NOTEBOOKS_DIR
from tools.exercise_check import (
    answer_strings,
    answers_cell,
    cell_errors,
    find_leaks,
    function_names,
    load_shortcuts,
    output_text,
    read_answers,
    solution_code,
    value_answers,
)
from tools.nbval_env import nbval_environ

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
STUDENTS = ("reference", "unchanged", "shortcut")
CONFIG = """c = get_config()
c.CourseDirectory.course_id = "self-attention"
c.Execute.timeout = 600  # nbgrader's default is 30 s a cell; the course's training cells take up to about 40 s
"""

needs_grading = pytest.mark.skipif(
    os.environ.get("COURSE_GRADING") != "1", reason="slow: set COURSE_GRADING=1 (make test-grading, run by CI)"
)


def nbgrader(root: Path, *args: str) -> None:
    env = {**nbval_environ(os.environ), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--force"], cwd=root, env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def grades(root: Path, notebook: str, assignment: str) -> dict[str, dict[str, float]]:
    """student -> grade id -> score, from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {
            s: {g.name: g.score for g in gb.find_submission_notebook(notebook, assignment, s).grades} for s in STUDENTS
        }


def submissions(source: nbformat.NotebookNode, release: nbformat.NotebookNode, shortcuts: dict[str, str]):
    """The three submitted notebooks: student -> notebook, from the nbgrader source and its release."""
    exercises = find_exercises(source)
    by_answer_id = {source.cells[e.solution_cell].metadata["nbgrader"]["grade_id"]: e for e in exercises}
    made = {name: nbformat.from_dict(nbformat.reads(nbformat.writes(release), as_version=4)) for name in STUDENTS}
    values = []
    for name, nb in made.items():
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if not meta.get("solution") or name == "unchanged":
                continue
            ex = by_answer_id[meta["grade_id"]]
            reference = solution_code(source.cells[ex.solution_cell].source)
            cell.source = shortcuts[ex.label] if name == "shortcut" and ex.label in shortcuts else reference
    for ex in exercises:
        values += value_answers(source.cells[ex.solution_cell].source, ex.label)
    made["reference"].cells.append(answers_cell(values))
    set_variant(made["shortcut"], "student-b")
    return made


@needs_grading
@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_nbgrader_grades_three_submissions_per_exercise(nb_path, tmp_path):
    stem, assignment = nb_path.stem, f"a{nb_path.name[:2]}"
    root = tmp_path / "course"
    root.mkdir()
    (root / "nbgrader_config.py").write_text(CONFIG)
    command = [
        sys.executable,
        "-m",
        "course_lib.classroom.student",
        str(nb_path),
        "--out",
        str(root / "source" / assignment),
    ]
    done = subprocess.run([*command, "--nbgrader"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    nbgrader(root, "generate_assignment", assignment)
    source = nbformat.read(root / "source" / assignment / nb_path.name, as_version=4)
    release = nbformat.read(root / "release" / assignment / nb_path.name, as_version=4)
    assert not any(HIDDEN_BEGIN in c.source or "BEGIN SOLUTION" in c.source for c in release.cells), "release leaks"
    shortcuts, _ = load_shortcuts(nb_path)
    for student, nb in submissions(source, release, shortcuts).items():
        (root / "submitted" / student / assignment).mkdir(parents=True)
        nbformat.write(nb, root / "submitted" / student / assignment / nb_path.name)
    nbgrader(root, "autograde", assignment)
    nbgrader(root, "generate_feedback", assignment)

    exercises = find_exercises(source)
    tests_id = {e.label: source.cells[e.check_cell].metadata["nbgrader"]["grade_id"] for e in exercises}
    scores = grades(root, stem, assignment)
    max_points = {
        i: source.cells[e.check_cell].metadata["nbgrader"]["points"] for e in exercises for i in [tests_id[e.label]]
    }
    assert set(scores["reference"]) == set(tests_id.values()), "every exercise is graded"
    for label, grade_id in tests_id.items():
        assert scores["reference"][grade_id] == max_points[grade_id], f"reference solution: {label} lost points"
        assert scores["unchanged"][grade_id] == 0, f"unchanged release: {label} scored"
        expected = 0 if label in shortcuts else max_points[grade_id]
        assert scores["shortcut"][grade_id] == expected, f"shortcut submission (student-b): {label}"
    for student in STUDENTS:
        assert (root / "feedback" / student / assignment / f"{stem}.html").is_file(), f"no feedback for {student}"

    graded = {s: nbformat.read(root / "autograded" / s / assignment / nb_path.name, as_version=4) for s in STUDENTS}
    own = {i for e in exercises for i in (e.solution_cell, e.check_cell)}
    unchanged = graded["unchanged"]
    assert sum(HIDDEN_BEGIN in c.source for c in unchanged.cells) == len(exercises), "hidden tests restored to grade"
    for i, cell in enumerate(unchanged.cells):
        if cell.cell_type == "code" and i not in own:
            assert not cell_errors(cell), f"unchanged release, cell {i} (not an exercise) failed: {cell_errors(cell)}"
    last = [c for c in unchanged.cells if c.cell_type == "code"][-1]
    assert last.execution_count is not None, "the unchanged release did not run to its end"

    numbers = [i for i, c in enumerate(source.cells) if c.cell_type == "code" and i not in own
               and "variant_numbers(VARIANT" in c.source]  # fmt: skip
    for i in numbers:  # variant 0 and student-b are given different numbers, and both graded their own as right
        printed = {s: "".join(o.get("text", "") for o in graded[s].cells[i].outputs) for s in ("reference", "shortcut")}
        assert printed["reference"] != printed["shortcut"], f"cell {i}: the same numbers for two variants"

    answers = read_answers(graded["reference"])
    texts = [(f"release, code cell {i}", c.source) for i, c in enumerate(release.cells) if c.cell_type == "code"]
    texts += [(f"prose, cell {i}", c.source) for i, c in enumerate(release.cells) if c.cell_type == "markdown"]
    texts += [(f"output of cell {i}", output_text(c)) for i, c in enumerate(unchanged.cells)
              if c.cell_type == "code" and i not in own]  # fmt: skip
    assert not find_leaks(answers, texts), "\n".join(find_leaks(answers, texts))


# ---------------------------------------------------------------- the leak scan itself (fast, always run)


def test_answer_strings_are_distinctive_forms_of_a_number():
    assert answer_strings(1024.0) == {"1024", "1,024"}
    assert answer_strings(0.7311) == {"0.7311", "0.731"}
    assert answer_strings([3, 2.5, True, "recurrent"]) == set()  # small, round, bool, text: too common to scan
    assert answer_strings(0.125) == {"0.1250", "0.125"}


def test_progress_bars_are_not_scanned():
    cell = {"outputs": [{"text": "training: 40%|████      | 4/10 [00:01<00:02, loss=0.4000]\nresult 40\n"}]}
    assert output_text(cell).strip() == "result 40"
    assert output_text({**cell, "source": "# NBVAL_IGNORE_OUTPUT\nprint(table)"}) == ""  # timings: not answers


def test_find_leaks_finds_whole_numbers_only():
    texts = [("cell 3", "full matrix: 1024.0 MiB"), ("cell 4", "10240 and 0.73115 and x1024"), ("cell 5", "0.7311")]
    assert find_leaks({"full_mib": 1024.0, "w": 0.7311}, texts) == ["cell 3: full_mib = 1024", "cell 5: w = 0.7311"]


def test_every_function_exercise_has_a_shortcut_or_a_reason():
    for nb_path in NOTEBOOKS:
        nb = nbformat.read(nb_path, as_version=4)
        shortcuts, reasons = load_shortcuts(nb_path)
        writes = {e.label for e in find_exercises(nb) if function_names(nb.cells[e.solution_cell].source)}
        assert writes <= set(shortcuts) | set(reasons), (
            f"{nb_path.name}: {sorted(writes - set(shortcuts) - set(reasons))}"
        )
        assert set(shortcuts) <= writes, f"{nb_path.name}: shortcuts for exercises that write no function"


def test_by_hand_checks_never_show_the_expected_value():
    """A wrong by-hand answer must not be told the right one: those checks use check_answer, not check_close."""
    for nb_path in NOTEBOOKS:
        nb = nbformat.read(nb_path, as_version=4)
        for e in find_exercises(nb):
            if value_answers(nb.cells[e.solution_cell].source, e.label):
                check = nb.cells[e.check_cell].source
                assert "check_close(" not in check, f"{nb_path.name}: {e.label}'s check shows expected values"
