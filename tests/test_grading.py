"""Grading a class with nbgrader, end to end, as the lecturer's guide describes it.

For every notebook: an nbgrader course of its own (``python -m course_lib.classroom.student NN.ipynb --out source/aNN
--nbgrader``) with the course's autograde guard (:mod:`course_lib.classroom.guard`, as the lecturer's guide configures
it), ``nbgrader generate_assignment``, three submissions autograded, ``nbgrader generate_feedback``. The guard writes
each student's nbgrader id as ``VARIANT``, so every student below has numbers of their own:

- ``0`` (the reference): the release with every answer cell filled with the reference solution -> full marks. Its id
  gives it variant 0, the numbers of the text;
- ``unchanged``: the release as handed out -> zero for every exercise, and the notebook still runs to the end;
- ``shortcut`` (student id ``student-b``), graded after the other two: every implement-it exercise answered by a
  library call reached by another door where ``tests/shortcuts/nbNN.py`` has one in its ``ALIASES`` (an operator
  such as ``torch.ops.aten._softmax``, a function imported from its own module under another name), else by the
  plain call of its ``SHORTCUTS``; the answers of the first by-hand exercise that depends on the student's numbers
  copied, as literal numbers, from the graded reference (another student's numbers); the other
  by-hand exercises answered by the reference solution, for this student's own numbers; and the last answer cell
  returns the check's own reference where its check has one (issue 44) and ends by replacing the checkers through a
  ``getattr`` alias taken inside a function (tampering) -> zero for each shortcut, for the copied answers (which fail
  on their values, not on their type) and for the last exercise, whose test cell raises "Not graded" first thing
  (naming both); full marks for the rest; and the class report flags the submission.

Since the tampering leaves the last exercise's own check unrun, a shortcut of the last exercise is tried on its own
(the notebook up to that check, with the shortcut handed in: it must be refused).

Scores are read per exercise from nbgrader's gradebook. The same run scans for leaked answers: the by-hand answers of
the reference (the text's numbers) appear in no code of the release, in no prose, and in no output of the reference
submission outside the exercise's own cells.

Slow (each notebook is executed three times), so ``make test`` skips it and CI runs it with ``make test-grading``
(COURSE_GRADING=1, nbgrader from the ``grading`` extra). Each graded submission gets a kernel of its own, forked from
a server that imported torch (tools/warm_kernel.py, as strict nbval's): notebook 00's three are graded in kernels
started the lecturer's way (:func:`grading_environ`). The small unit tests at the end always run.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from test_recheck import HANDED_ON

from course_lib.classroom.autograde import autograde_class, class_report
from course_lib.classroom.flags import READ_AS_TAMPERING
from course_lib.classroom.notebook import HIDDEN_BEGIN, Exercise, find_exercises
from course_lib.classroom.recheck import KEPT
from course_lib.classroom.release import nbgrader_environ
from course_lib.classroom.syntax import check_names
from course_lib.paths import NOTEBOOKS_DIR
from tools import warm_kernel
from tools.exercise_check import (
    answer_strings,
    answers_cell,
    cell_errors,
    execute,
    find_leaks,
    function_names,
    load_shortcuts,
    output_text,
    read_answers,
    solution_code,
    value_answers,
    values_by_name,
)
from tools.nbval_env import nbval_environ

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
# The reference solutions are handed in as student "0": the guard writes that id as VARIANT, and variant 0 has the
# numbers of the text, whose answers the leak scan looks for.
REFERENCE = "0"
# The shortcut submission's id: the guard makes it the variant, and this one draws numbers other than the text's in
# every by-hand exercise of the course (some exercises choose from a few values, so not every id does).
SHORTCUT = "student-b"
STUDENTS = (REFERENCE, "unchanged", SHORTCUT)
CONFIG = """from course_lib.classroom.release import configure

c = get_config()
c.CourseDirectory.course_id = "self-attention"
configure(c)  # named stubs in the release, the guard in autograde, 600 s a cell
"""
# Tampering as issue 44 found it: a getattr alias taken inside a function replaces the checkers, and every later check
# would pass (answers of torch.zeros(1) scored 3/3, and the class report listed the submission as clean)
TAMPERING = """


def _quiet():
    g = getattr
    checkers = g(cl, "__di" + "ct__")
    checkers["check_answer"] = checkers["check_function"] = lambda *args, **kwargs: None


_quiet()
"""

needs_grading = pytest.mark.skipif(
    os.environ.get("COURSE_GRADING") != "1", reason="slow: set COURSE_GRADING=1 (make test-grading, run by CI)"
)

# The notebook graded in cold kernels, as a lecturer's nbgrader starts them; every other graded kernel is forked from a
# tools.warm_kernel server that imported torch (below)
COLD = "00_start_here.ipynb"
COLD_START = "warm_kernel: a cold start"  # what the launcher prints where the server cannot fork the kernel
_warm_server = None  # this process's server and the Jupyter data folder that names its launcher, once started


def grading_environ(cold: bool = False) -> dict:
    """The environment of nbgrader's processes here: `make test`'s strict one (nbval_environ: one thread, ...) with this
    Python's bin first on PATH (nbgrader_environ). Unless ``cold``, JUPYTER_PATH names a ``python3`` kernel that is
    tools.warm_kernel's launcher: each graded submission still gets a kernel process of its own in which nothing has
    run (tests/test_warm_kernel.py: it sees what a cold one sees), forked from a server that imported torch, NumPy
    and matplotlib once (about 4 s of CPU a kernel on CI's machine, some 90 kernels in make test-grading). Where the
    server cannot fork one (another environment) the kernel starts cold and says so (COLD_START), which the tests
    refuse. COURSE_WARM_KERNEL=0 grades every submission cold."""
    global _warm_server
    env = nbgrader_environ(nbval_environ(os.environ))
    if cold or os.environ.get(warm_kernel.SWITCH_ENV) == "0" or sys.platform != "linux":
        return env
    if _warm_server is None:
        folder = tempfile.mkdtemp(prefix="warm-kernelspec-")
        env["JUPYTER_PATH"] = os.pathsep.join([folder, *filter(None, [os.environ.get("JUPYTER_PATH")])])
        # nbgrader sets NBGRADER_EXECUTION for the kernels it starts to grade (a notebook may ask whether it is graded)
        process, path = warm_kernel.start_server({**env, "NBGRADER_EXECUTION": "autograde"})
        _warm_server = (process, path, warm_kernel.kernelspec(folder, path))
    env["JUPYTER_PATH"] = os.pathsep.join([_warm_server[2], *filter(None, [os.environ.get("JUPYTER_PATH")])])
    return env


@pytest.fixture(scope="session", autouse=True)
def _stop_the_warm_server():
    yield
    global _warm_server
    if _warm_server is not None:
        process, path, folder = _warm_server
        warm_kernel.stop_server(process, path)
        shutil.rmtree(folder, ignore_errors=True)
        _warm_server = None


def nbgrader(root: Path, *args: str, cold: bool = False) -> str:
    """Run an nbgrader command in the course ``root``; its log (nbgrader logs to stderr). Kernels as
    :func:`grading_environ` starts them."""
    env = grading_environ(cold=cold)
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--force"], cwd=root, env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def submit(root: Path, assignment: str, name: str, student: str, nb: nbformat.NotebookNode) -> None:
    (root / "submitted" / student / assignment).mkdir(parents=True)
    nbformat.write(nb, root / "submitted" / student / assignment / name)


def grades(root: Path, notebook: str, assignment: str) -> dict[str, dict[str, float]]:
    """student -> grade id -> score, from nbgrader's gradebook (None where a person has still to mark it)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {
            s: {
                g.name: None if g.needs_manual_grade else g.score  # None: a written answer not marked yet
                for g in gb.find_submission_notebook(notebook, assignment, s).grades
            }
            for s in STUDENTS
        }


def submission(source, release, answer: Callable[[Exercise], str], written: str | None = None) -> nbformat.NotebookNode:
    """The release with each answer cell's source replaced by ``answer(exercise)``, and each written answer (a "why?"
    a person marks) by ``written`` (None: the model answer of the source version)."""
    exercises = find_exercises(source)
    by_answer_id = {source.cells[e.solution_cell].metadata["nbgrader"]["grade_id"]: e for e in exercises}
    by_written_id = {written_id(source, e): e for e in exercises if e.written_cell is not None}
    nb = nbformat.from_dict(nbformat.reads(nbformat.writes(release), as_version=4))
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            grade_id = cell.metadata["nbgrader"]["grade_id"]
            if grade_id in by_written_id:
                model = source.cells[by_written_id[grade_id].written_cell].source
                text = model.split("### BEGIN SOLUTION\n", 1)[1].split("\n### END SOLUTION", 1)[0]
                cell.source = cell.source.replace("YOUR ANSWER HERE", text if written is None else written)
            else:
                cell.source = answer(by_answer_id[grade_id])
    return nb


def written_id(source, ex: Exercise) -> str:
    return source.cells[ex.written_cell].metadata["nbgrader"]["grade_id"]


def points(source, grade_id: str) -> float:
    return next(c.metadata["nbgrader"]["points"] for c in source.cells if c.metadata.get("nbgrader", {}).get(
        "grade_id") == grade_id)  # fmt: skip


COPYABLE_TAG = "COPYABLE-ANSWERS="


def copyable_answers_cell(names: list[str]) -> nbformat.NotebookNode:
    """A cell that prints, for each name, Python code that rebuilds its value (a tensor with its dtype), as JSON."""
    return nbformat.v4.new_code_cell(
        "import json as _json\n"
        "def _code(v):\n"
        "    if isinstance(v, torch.Tensor):\n"
        "        return f'torch.tensor({v.tolist()!r}, dtype={v.dtype})'\n"
        "    return repr(v)\n" + values_by_name(names, "_code") + f"print({COPYABLE_TAG!r} + _json.dumps(_values))"
    )


def read_copyable(nb: nbformat.NotebookNode) -> dict[str, str]:
    text = "".join(o.get("text", "") for o in nb.cells[-1].get("outputs", []))
    return json.loads(text.split(COPYABLE_TAG, 1)[1].strip())


def reference_submission(source, release) -> nbformat.NotebookNode:
    """The reference solutions, then two cells that print the by-hand answers (for the leak scan, and to copy)."""
    exercises = find_exercises(source)
    nb = submission(source, release, lambda ex: solution_code(source.cells[ex.solution_cell].source))
    values = [v for ex in exercises for v in value_answers(source.cells[ex.solution_cell].source, ex.label)]
    nb.cells += [answers_cell(values), copyable_answers_cell(values)]
    return nb


def shortcut_submission(source, release, shortcuts: dict[str, str], copied: dict) -> nbformat.NotebookNode:
    """Library calls, another student's by-hand answers as literals, and in the last answer a call of the check's own
    reference where it has one (:func:`reference_call`) and tampering at the end."""
    last, copy = find_exercises(source)[-1], copied_exercise(source, shortcuts)

    def answer(ex: Exercise) -> str:
        reference = solution_code(source.cells[ex.solution_cell].source)
        values = value_answers(source.cells[ex.solution_cell].source, ex.label)
        code = shortcuts.get(ex.label, reference)
        if copy is not None and ex.label == copy.label:  # numbers worked out by someone else, typed in
            code = "\n".join(f"{name} = {copied[name]}" for name in values)
        if ex.label == last.label:
            code = reference_call(source, ex) or code
        return code + (TAMPERING if ex.label == last.label else "")

    return submission(source, release, answer, written="Because the code says so.")


def reference_call(source, ex: Exercise) -> str | None:
    """An answer that returns what the exercise's check compares it with: ``def f(*args): return reference(*args)``,
    where the check cell calls ``check_function(f, reference, ...)`` with a reference of its own (issue 44: notebook
    14's ``translator_mask`` and ``sorted_extensions`` scored full marks); None where it has none."""
    own = check_names(source.cells[ex.check_cell].source)
    calls = [n for n in ast.walk(ast.parse(source.cells[ex.check_cell].source)) if isinstance(n, ast.Call)
             and getattr(n.func, "attr", None) == "check_function" and len(n.args) > 1]  # fmt: skip
    for call in calls:
        fn, reference = (getattr(a, "id", None) for a in call.args[:2])
        if fn in function_names(source.cells[ex.solution_cell].source) and reference in own:
            return f"def {fn}(*args, **kwargs):\n    return {reference}(*args, **kwargs)\n"
    return None


def copied_exercise(source, shortcuts: dict[str, str]) -> Exercise | None:
    """The by-hand exercise whose answers the shortcut submission copies: the first that depends on the student's
    numbers, not the last (which tampers). The other by-hand exercises keep the reference solution, graded for the
    shortcut student's own numbers."""
    exercises = find_exercises(source)[:-1]
    copyable = [ex for ex in exercises if ex.label not in shortcuts and depends_on_the_student(source, ex)
                and value_answers(source.cells[ex.solution_cell].source, ex.label)]  # fmt: skip
    return copyable[0] if copyable else None


def depends_on_the_student(source, ex: Exercise) -> bool:
    """Whether the exercise's hidden tests recompute its answers from the student's numbers."""
    return any("VARIANT" in source.cells[i].source for i in graded_cells(source, ex))


def graded_cells(source, ex: Exercise) -> list[int]:
    """The exercise's graded cells in the nbgrader source: its check, and its hidden tests where they are a cell of
    their own (partial credit: each is worth half the exercise)."""
    after = ex.check_cell + 1
    hidden = after < len(source.cells) and source.cells[after].metadata.get("nbgrader", {}).get("grade_id", "")
    return [ex.check_cell, after] if hidden and hidden.endswith("-hidden-tests") else [ex.check_cell]


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
    answers = [c.source for c in release.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert all("Exercise" in a and "NotImplementedError()" not in a for a in answers), "stubs say what to write"
    shortcuts, _ = load_shortcuts(nb_path, aliases=True)  # library calls by other doors where there are any
    submit(root, assignment, nb_path.name, REFERENCE, reference_submission(source, release))
    submit(root, assignment, nb_path.name, "unchanged", release)
    cold = nb_path.name == COLD  # one notebook graded in kernels started as a lecturer's nbgrader starts them
    env = grading_environ(cold=cold)
    graded_now = autograde_class(root, assignment, jobs=2, progress=False, env=env)  # two at once
    assert sorted(graded_now) == [REFERENCE, "unchanged"] and all(g.ok for g in graded_now.values()), graded_now
    log = "".join(g.log for g in graded_now.values())
    copied = read_copyable(nbformat.read(root / "autograded" / REFERENCE / assignment / nb_path.name, as_version=4))
    submit(root, assignment, nb_path.name, SHORTCUT, shortcut_submission(source, release, shortcuts, copied))
    log += nbgrader(root, "autograde", assignment, "--student", SHORTCUT, cold=cold)
    assert "has changed" not in log, "no submission changed a locked cell: nbgrader should not warn"
    assert COLD_START not in log, "every kernel forked as asked: " + log[log.find(COLD_START) :][:300]
    nbgrader(root, "generate_feedback", assignment)

    exercises, copy = find_exercises(source), copied_exercise(source, shortcuts)
    ids = {e.label: [source.cells[i].metadata["nbgrader"]["grade_id"] for i in graded_cells(source, e)]
           for e in exercises}  # fmt: skip
    tests_id = {label: found[0] for label, found in ids.items()}  # the visible check's
    scores = grades(root, stem, assignment)
    max_points = {
        source.cells[i].metadata["nbgrader"]["grade_id"]: source.cells[i].metadata["nbgrader"]["points"]
        for e in exercises
        for i in graded_cells(source, e)
    }
    written = {written_id(source, e) for e in exercises if e.written_cell is not None}
    max_points |= {grade_id: points(source, grade_id) for grade_id in written}
    assert set(scores[REFERENCE]) == set(max_points), "every exercise is graded, its hidden tests on their own"
    for grade_id in written:  # a changed written answer waits for a person (None); an unchanged one scores 0 at once
        assert (scores[REFERENCE][grade_id], scores["unchanged"][grade_id], scores[SHORTCUT][grade_id]) == (
            None, 0, None), grade_id  # fmt: skip
    assert any(len(found) == 2 for found in ids.values()), "partial credit: hidden tests in a cell of their own"
    for ex in exercises:
        label = ex.label
        cheated = label in shortcuts or ex is exercises[-1] or (copy is not None and label == copy.label)
        for grade_id in ids[label]:
            assert scores[REFERENCE][grade_id] == max_points[grade_id], f"reference solution: {grade_id} lost points"
            assert scores["unchanged"][grade_id] == 0, f"unchanged release: {grade_id} scored"
            expected = 0 if cheated else max_points[grade_id]
            assert scores[SHORTCUT][grade_id] == expected, f"shortcut submission: {grade_id}"
    graded_shortcut = nbformat.read(root / "autograded" / SHORTCUT / assignment / nb_path.name, as_version=4)
    for ex in [copy] if copy is not None else []:  # copied numbers fail on their values, not on their type or shape
        errors = " ".join(f"{name}: {value}" for name, value in cell_errors(graded_shortcut.cells[ex.check_cell]))
        assert not re.search(r"expected a torch.Tensor|dtype is|shape", errors), f"{ex.label}: {errors}"
    last_test = graded_shortcut.cells[exercises[-1].check_cell].source
    assert last_test.startswith("raise AssertionError('Not graded: code cell"), "tampering not flagged"
    assert "getattr as a value" in last_test.splitlines()[0], "the flag says what was found"
    called = reference_call(source, exercises[-1])
    if called is not None:  # the check's own reference, called by name: read as such
        assert "which a check defines to decide" in last_test.splitlines()[0], last_test.splitlines()[0]
    for student in STUDENTS:
        feedback = (root / "feedback" / student / assignment / f"{stem}.html").read_text(encoding="utf-8")
        assert "HIDDEN TESTS" not in feedback, f"the feedback of {student} shows the hidden tests (code or traceback)"
        assert "_course_integrity" not in feedback, f"the feedback of {student} shows the grader's own lines"
        assert re.search(r"<script src=\"https://[^\"]*mathjax", feedback), "formulas: MathJax, loaded online"
    summaries, flags = class_report(root, assignment)  # the lecturer's report: the gradebook's scores, the flags
    assert {s.grade_id: s.scores for s in summaries} == {g: {s: scores[s][g] for s in STUDENTS} for g in max_points}
    flagged = dict(flags.get(SHORTCUT, []))
    assert flagged.get(tests_id[exercises[-1].label]) == READ_AS_TAMPERING, flags
    for label in set(shortcuts) - {exercises[-1].label}:
        assert flagged.get(tests_id[label]) == "a library shortcut was refused", (label, flags)
    assert REFERENCE not in flags and "unchanged" not in flags, flags
    assert any(why.startswith("tampering: ") for _, why in flags[SHORTCUT]), "the report names what the guard read"

    graded = {s: nbformat.read(root / "autograded" / s / assignment / nb_path.name, as_version=4) for s in STUDENTS}
    kept = {c.metadata["nbgrader"]["grade_id"] for c in graded[REFERENCE].cells if KEPT in c.metadata}
    assert kept == {g for g in HANDED_ON if g.startswith(f"{stem}-")}, "all decided outside the student's kernel but"
    own = {i for e in exercises for i in (e.solution_cell, *graded_cells(source, e))}
    unchanged = graded["unchanged"]
    assert sum(HIDDEN_BEGIN in c.source for c in unchanged.cells) == len(exercises), "hidden tests restored to grade"
    for i, cell in enumerate(unchanged.cells):
        if cell.cell_type == "code" and i not in own:
            assert not cell_errors(cell), f"unchanged release, cell {i} (not an exercise) failed: {cell_errors(cell)}"
    last = [c for c in unchanged.cells if c.cell_type == "code"][-1]
    assert last.execution_count is not None, "the unchanged release did not run to its end"

    numbers = [i for i, c in enumerate(source.cells) if c.cell_type == "code" and i not in own
               and "variant_numbers(VARIANT" in c.source]  # fmt: skip
    for i in numbers:  # two students are given different numbers
        printed = {s: "".join(o.get("text", "") for o in graded[s].cells[i].outputs) for s in (REFERENCE, SHORTCUT)}
        assert printed[REFERENCE] != printed[SHORTCUT], f"cell {i}: the same numbers for two variants"

    answers = read_answers(graded[REFERENCE])
    texts = [(f"release, code cell {i}", c.source) for i, c in enumerate(release.cells) if c.cell_type == "code"]
    texts += [(f"prose, cell {i}", c.source) for i, c in enumerate(release.cells) if c.cell_type == "markdown"]
    texts += [
        (f"output of cell {i}", output_text(c))
        for i, c in enumerate(graded[REFERENCE].cells[:-2])  # the last two cells print the answers
        if c.cell_type == "code" and i not in own
    ]
    assert not find_leaks(answers, texts), "\n".join(find_leaks(answers, texts))


def released(tmp_path: Path, prefix: str) -> tuple[Path, str, Path, nbformat.NotebookNode, nbformat.NotebookNode]:
    """A course folder holding notebook ``prefix``'s nbgrader source and release, made as the guide makes them:
    (the folder, the assignment, the notebook's path, the source, the release)."""
    nb_path = next(p for p in NOTEBOOKS if p.name.startswith(prefix))
    root, assignment = tmp_path / "course", f"a{prefix}"
    root.mkdir()
    (root / "nbgrader_config.py").write_text(CONFIG)
    command = [sys.executable, "-m", "course_lib.classroom.student", str(nb_path), "--out"]
    command += [str(root / "source" / assignment), "--nbgrader", "--secret", "test_grading"]  # the same hidden inputs
    done = subprocess.run(command, capture_output=True, text=True)  # in every run (the guide's makes new ones)
    assert done.returncode == 0, done.stderr
    nbgrader(root, "generate_assignment", assignment)
    source = nbformat.read(root / "source" / assignment / nb_path.name, as_version=4)
    release = nbformat.read(root / "release" / assignment / nb_path.name, as_version=4)
    return root, assignment, nb_path, source, release


def assert_cheats_refused(root: Path, assignment: str, nb_path: Path, source, cheats: dict[str, tuple[int, bool]]):
    """Grade the class and hold each cheating student ({student: (the attacked exercise's index, whether the change
    lasts)}) to: the test cells before the attacked exercise keep their points; its test cells, and every later one
    where the change lasts (a checker or the notebook's cl changed), score zero, refused ("Not graded"); a later one
    otherwise scores or is refused; and the class report flags the student."""
    env = grading_environ()
    graded = autograde_class(root, assignment, jobs=2, progress=False, env=env)
    assert sorted(graded) == sorted(cheats) and all(g.ok for g in graded.values()), graded
    assert not any(COLD_START in g.log for g in graded.values()), "every graded kernel forked from the warm server"
    summaries, flags = class_report(root, assignment)
    scores = {s.grade_id: s.scores for s in summaries}
    for student, (attacked, lasting) in cheats.items():
        out = nbformat.read(root / "autograded" / student / assignment / nb_path.name, as_version=4)
        for i, ex in enumerate(find_exercises(source)):
            for cell in graded_cells(source, ex):
                grade_id, errors = source.cells[cell].metadata["nbgrader"]["grade_id"], cell_errors(out.cells[cell])
                full, refused = source.cells[cell].metadata["nbgrader"]["points"], "Not graded" in str(errors)
                if i < attacked:
                    assert scores[grade_id][student] == full, (student, grade_id, errors)
                elif i == attacked or lasting:
                    assert scores[grade_id][student] == 0 and refused, (student, grade_id, errors)
                else:  # an answer refused where it is read: the later ones score unless the reading flagged the cell
                    assert scores[grade_id][student] == full or refused, (student, grade_id, errors)
        assert any(why.startswith(("not graded", "tampering", "the check's own")) for _, why in flags[student]), flags


def hand_in(root, assignment, nb_path, source, release, student, label, attack):
    """``student`` hands in the reference solution of every exercise, with ``attack`` after exercise ``label``'s."""

    def answer(ex: Exercise) -> str:
        reference = solution_code(source.cells[ex.solution_cell].source)
        return f"{reference}\n{attack}" if ex.label == label else reference

    submit(root, assignment, nb_path.name, student, submission(source, release, answer, written="Because."))


def grade_attacks(tmp_path: Path, prefix: str, label: str, attacks: dict[str, tuple[str, bool]]) -> Path:
    """Notebook ``prefix`` released; each attack ({name: (code, whether its change lasts)}) handed in after the
    reference answer of exercise ``label``, as its own student; the class graded and held to
    :func:`assert_cheats_refused`. Returns the course folder."""
    root, assignment, nb_path, source, release = released(tmp_path, prefix)
    attacked = [e.label for e in find_exercises(source)].index(label)
    cheats = {}
    for number, (name, (attack, lasting)) in enumerate(sorted(attacks.items())):
        student = f"{name.split(':')[0].replace('_', '-')}-{number}"
        cheats[student] = (attacked, lasting)
        hand_in(root, assignment, nb_path, source, release, student, label, attack)
    assert_cheats_refused(root, assignment, nb_path, source, cheats)
    return root


# The second lecturer's cheats on notebook 05 (tests/heldout/attacks.py), each handed in, in the answer cell of the
# exercise it cheats on, with the reference solution of every exercise (ned's by-hand answer keeps its second name)
LECTURER_05_EXERCISE = {"max": "Exercise 1", "olga": "Exercise 1", "kim2": "Exercise 5", "ned": "Exercise 1"}


@needs_grading
def test_the_second_lecturers_cheats_on_05_score_zero_and_are_flagged(tmp_path):
    """Each of tests/heldout's LECTURER_05_ATTACKS graded by nbgrader with the guard, as its own student: its
    exercise's test cells score zero, refused ("Not graded"), every later one too where a checker was changed (max,
    olga), and the class report flags it; the test cells before keep their points, and a later one loses them only by
    a refusal."""
    from tests.heldout.attacks import LECTURER_05_ATTACKS

    root, assignment, nb_path, source, release = released(tmp_path, "05")
    labels = [e.label for e in find_exercises(source)]
    cheats = {}
    for number, (name, (attack, _)) in enumerate(sorted(LECTURER_05_ATTACKS.items())):
        who = name.split(":")[0]
        student, label = f"{who}-{number}", LECTURER_05_EXERCISE[who]
        cheats[student] = (labels.index(label), who in ("max", "olga"))
        hand_in(root, assignment, nb_path, source, release, student, label, attack)
    assert_cheats_refused(root, assignment, nb_path, source, cheats)


@needs_grading
def test_the_third_lecturers_cheats_on_12_score_zero_and_are_flagged(tmp_path):
    """Each of tests/heldout's THIRD_LECTURER_12_ATTACKS (c1 reads the check's frame; c2c swaps the notebook's cl;
    c3 and c7 switch the verification and two checks' helpers off by an exec the reading may miss) handed in after
    the reference solution of exercise 2 (whose top_k it replaces), graded by nbgrader with the guard, as its own
    student: exercise 1 keeps its points, exercise 2's test cells score zero, refused ("Not graded"), exercise 3's
    too where the notebook's cl or a check was changed (the others keep theirs unless refused), and the class
    report flags each."""
    from tests.heldout.attacks_third_lecturer import THIRD_LECTURER_12_ATTACKS

    lasting = {name: (a, not name.startswith("c1")) for name, a in THIRD_LECTURER_12_ATTACKS.items()}  # c1: no change
    grade_attacks(tmp_path, "12", "Exercise 2", lasting)


@needs_grading
def test_a_redteams_cheats_on_12_score_zero_and_are_flagged(tmp_path):
    """Each of tests/heldout's REDTEAM_12_ATTACKS (a forked child serving the reference, a disguised dispatch mode, a
    finaliser filling the answer late, copy's table rewired, ctypes on TensorBase) handed in after the reference
    solution of exercise 2, graded by nbgrader with the guard, as its own student: exercise 1 keeps its points,
    exercise 2's test cells and every later one score zero, refused ("Not graded": the reading flags each answer
    cell), and the class report flags each."""
    from tests.heldout.attacks_redteam import REDTEAM_12_ATTACKS

    grade_attacks(tmp_path, "12", "Exercise 2", {name: (a, True) for name, a in REDTEAM_12_ATTACKS.items()})


@needs_grading
def test_the_fifth_attacks_on_12_score_zero_and_are_flagged(tmp_path):
    """Each of tests/heldout's FIFTH_12_ATTACKS (a thread serving the check's own function, a child spawned through
    fork_exec, course_lib's code or source copied under another name, NumPy's raw memory, a nested call clearing the
    record of a refusal) handed in after the reference solution of exercise 2, graded by nbgrader with the guard, as
    its own student: exercise 1 keeps its points, exercise 2's test cells and every later one score zero, refused
    ("Not graded": the reading flags each answer cell; at run time all but NumPy's are refused too), and the class
    report flags each."""
    from tests.heldout.attacks_fifth import FIFTH_12_ATTACKS

    grade_attacks(tmp_path, "12", "Exercise 2", {name: (a, True) for name, a in FIFTH_12_ATTACKS.items()})


@needs_grading
def test_the_twelfth_trials_cheats_on_12_score_zero_and_are_flagged(tmp_path):
    """Each of tests/heldout's TWELFTH_12_ATTACKS (IPython input transformers that rewrite the graded cells to
    ``pass``; the course folder's nbgrader_config.py and gradebook reached from a submission) handed in after the
    reference solution of exercise 2, graded by nbgrader with the guard, as its own student: exercise 1 keeps its
    points, exercise 2's test cells and every later one score zero, "Not graded" (a transformer keeps the line from
    raising: classroom.guard.KeepNotGraded puts its error in after the run), and the class report flags each. The
    config line, had it been written, would have switched the guard off for the students graded after it."""
    from tests.heldout.attacks_twelfth import TWELFTH_12_ATTACKS

    config = CONFIG  # what released() writes
    root = grade_attacks(tmp_path, "12", "Exercise 2", {name: (a, True) for name, a in TWELFTH_12_ATTACKS.items()})
    assert (root / "nbgrader_config.py").read_text() == config, "the course folder's config was written"


@needs_grading
def test_the_twentieth_trys_writes_outside_the_course_folder_score_zero_and_are_flagged(tmp_path):
    """Each of tests/heldout's TWENTIETH_12_ATTACKS (a file written outside the submission's folder, as a red team
    wrote IPython's startup files and an nbgrader config into the grading account's home: by NumPy on the cell's
    behalf; with the refusal caught) handed in after the reference solution of exercise 2, graded by nbgrader with the
    guard, as its own student: exercise 1 keeps its points, exercise 2's test cells and every later one score zero,
    "Not graded" (no evidence after the refusal), the class report flags each, and no file was written."""
    from tests.heldout.attacks_twentieth import TWENTIETH_12_ATTACKS

    grade_attacks(tmp_path, "12", "Exercise 2", {name: (a, True) for name, a in TWENTIETH_12_ATTACKS.items()})
    assert not list(tmp_path.glob("outside-*")), "a file was written beside the course folder (attacks' OUTSIDE)"


@needs_grading
def test_the_nineteenth_trials_reads_of_the_clone_and_torchscript_score_zero_and_are_flagged(tmp_path):
    """Each of tests/heldout's NINETEENTH_12_ATTACKS (a notebook of the clone course_lib runs from opened for its
    solutions, the refusal caught or not; code compiled from a string by TorchScript) handed in after the reference
    solution of exercise 2, graded by nbgrader with the guard, as its own student: exercise 1 keeps its points,
    exercise 2's test cells and every later one score zero, "Not graded", and the class report flags each."""
    from tests.heldout.attacks_nineteenth import NINETEENTH_12_ATTACKS

    grade_attacks(tmp_path, "12", "Exercise 2", {name: (a, True) for name, a in NINETEENTH_12_ATTACKS.items()})


@needs_grading
def test_the_twentieth_trials_honest_lines_keep_their_points_and_its_wrong_order_loses_them(tmp_path):
    """Notebook 13 graded by nbgrader with the guard, two students (each graded notebook costs CI about 35 s of CPU):
    one hands in tests/heldout's HONEST_13_EXERCISE_2 (``import operator``, a scratch ``print(type(cl))``) after
    exercise 2's reference answer, and keeps every point, unflagged (each line zeroed every exercise after it); the
    other hands in TABLE_13_EXERCISE_2 (a table of literal values beside exercise 2's right answer, as the trial's
    lookup answers held), which keeps its points and is flagged, and WRONG_13_EXERCISE_3 (the most frequent pair
    merged first, 3 of 3 in the trial), which loses exercise 3's check and hidden tests (fixed cases in both)."""
    from course_lib.classroom.flags import LOOKED_UP
    from tests.heldout.honest_twentieth import HONEST_13_EXERCISE_2, TABLE_13_EXERCISE_2, WRONG_13_EXERCISE_3

    root, assignment, nb_path, source, release = released(tmp_path, "13")
    extra = {"honest": {"Exercise 2": "\n".join(HONEST_13_EXERCISE_2.values())},
             "table-wrong": {"Exercise 2": "\n".join(TABLE_13_EXERCISE_2.values())}}  # fmt: skip
    wrong = "\n".join(WRONG_13_EXERCISE_3.values())

    def answers(student: str):
        def answer(ex: Exercise) -> str:
            reference = solution_code(source.cells[ex.solution_cell].source)
            if student == "table-wrong" and ex.label == "Exercise 3":
                return wrong
            return f"{reference}\n{extra[student][ex.label]}" if ex.label in extra[student] else reference

        return answer

    for student in extra:
        submit(root, assignment, nb_path.name, student, submission(source, release, answers(student)))
    graded = autograde_class(root, assignment, jobs=2, progress=False, env=grading_environ())
    assert sorted(graded) == sorted(extra) and all(g.ok for g in graded.values()), graded
    summaries, flags = class_report(root, assignment)
    assert list(flags) == ["table-wrong"] and all(LOOKED_UP in why for _, why in flags["table-wrong"]), flags
    scores = {s.grade_id: s.scores for s in summaries}
    for ex in find_exercises(source):
        for cell in graded_cells(source, ex):
            grade_id, points = (source.cells[cell].metadata["nbgrader"][key] for key in ("grade_id", "points"))
            assert scores[grade_id]["honest"] == points, grade_id
            assert scores[grade_id]["table-wrong"] == (0 if ex.label == "Exercise 3" else points), grade_id


@needs_grading
def test_the_thirteenth_trials_cheats_on_04_score_zero_and_are_flagged(tmp_path):
    """Each of tests/heldout's THIRTEENTH_04, FOURTEENTH_04 and FIFTEENTH_04 attacks handed in after the reference
    answer of exercise 1 (by hand), graded by nbgrader with the guard, as its own student: the kernel or its shell
    reached (and later cells rewritten, emptied, cleared, or scored by a number written first), or code a cell wrote
    or hid in a file or a string, costs exercise 1 and every later one, "Not graded"; the check's reference in
    disguise costs exercise 1 only; the class report flags each."""
    from tests.heldout.attacks_fifteenth import FIFTEENTH_04
    from tests.heldout.attacks_fourteenth import FOURTEENTH_04_KERNEL, FOURTEENTH_04_REFERENCE
    from tests.heldout.attacks_thirteenth import THIRTEENTH_04_REFERENCE, THIRTEENTH_04_SHELL

    kernel = {**THIRTEENTH_04_SHELL, **FOURTEENTH_04_KERNEL, **FIFTEENTH_04}
    lasting = {name: (a, True) for name, a in kernel.items()}
    once = {name: (a, False) for name, a in {**THIRTEENTH_04_REFERENCE, **FOURTEENTH_04_REFERENCE}.items()}
    grade_attacks(tmp_path, "04", "Exercise 1", {**lasting, **once})


@needs_grading
def test_an_honest_answer_that_warns_where_a_test_cell_calls_it_keeps_its_points(tmp_path):
    """05's exercise 2 answered honestly, with a warning (tests/heldout's HONEST_WARNING_05_EX2: PyTorch's about
    torch.tensor of a tensor), which its test cell meets outside check_function (cl.check_close(to_additive(...))):
    graded by nbgrader with the guard, the warning is a note on stdout and every test cell keeps its points; nothing
    is flagged (it went to stderr before, and that test cell scored zero)."""
    from tests.heldout.attacks_fifth import HONEST_WARNING_05_EX2

    root, assignment, nb_path, source, release = released(tmp_path, "05")

    def answer(ex: Exercise) -> str:
        reference = solution_code(source.cells[ex.solution_cell].source)
        return HONEST_WARNING_05_EX2 if ex.label == "Exercise 2" else reference

    submit(root, assignment, nb_path.name, "warns", submission(source, release, answer, written="Because."))
    env = grading_environ()
    graded = autograde_class(root, assignment, jobs=1, progress=False, env=env)
    assert list(graded) == ["warns"] and graded["warns"].ok, graded
    assert not any(COLD_START in g.log for g in graded.values()), "the graded kernel forked from the warm server"
    summaries, flags = class_report(root, assignment)
    out = nbformat.read(root / "autograded" / "warns" / assignment / nb_path.name, as_version=4)
    scores = {s.grade_id: s.scores["warns"] for s in summaries}
    for ex in find_exercises(source):
        for cell in graded_cells(source, ex):
            grade_id, points = (source.cells[cell].metadata["nbgrader"][key] for key in ("grade_id", "points"))
            assert scores[grade_id] == points, (grade_id, cell_errors(out.cells[cell]))
    assert not flags, flags
    notes = [o.get("text", "") for c in out.cells for o in c.get("outputs", []) if o.get("name") == "stdout"]
    assert any("note: UserWarning: To copy construct from a tensor" in text for text in notes), notes


@needs_grading
def test_the_student_releases_notebook_handed_in_scores_zero_and_is_flagged_as_not_the_assignment(tmp_path):
    """An eighth lecturer's try: every reference answer written into the student release's notebook (what the clone
    and the Colab links open: no nbgrader metadata) and handed in scored zero, every cell waiting for manual grading,
    and nothing said why. It still scores no point (nbgrader cannot tell its answers from its tests), and the report
    now says it is not the assignment's notebook; the guide says to hand out release/<assignment>/."""
    from course_lib.classroom.autograde import NOT_THE_ASSIGNMENT
    from course_lib.classroom.student import student_notebook

    root, assignment, nb_path, source, release = released(tmp_path, "00")
    full = nbformat.read(nb_path, as_version=4)
    copy, exercises = student_notebook(full)
    for ex, original in zip(exercises, find_exercises(full), strict=True):
        copy.cells[ex.solution_cell].source = solution_code(full.cells[original.solution_cell].source)
    assert not any("nbgrader" in cell.metadata for cell in copy.cells)
    submit(root, assignment, nb_path.name, "colab", copy)
    graded = autograde_class(root, assignment, jobs=1, progress=False, env=grading_environ(cold=True))
    assert list(graded) == ["colab"], graded
    summaries, flags = class_report(root, assignment)
    assert summaries and all(not s.scores.get("colab") for s in summaries), summaries  # 0, or None: not graded
    assert flags["colab"] == [(nb_path.stem, NOT_THE_ASSIGNMENT.replace("ASSIGNMENT", assignment))], flags


@needs_grading
def test_the_third_lecturers_wrong_answer_on_12_fails_exercise_3s_check_unflagged(tmp_path):
    """The lecturer's answer to exercise 3 that feeds the last token where the context has room (tests/heldout's
    P2_SHAPES_12_EXERCISE_3, which exercise 3's check passed until it recorded the calls in a case with room), handed
    in with the reference solution of every other exercise, graded by nbgrader with the guard: exercise 3's visible
    check scores zero, failing on what was fed (graded, not refused); so do its hidden tests, which record the calls
    on another prompt with room (P = 3, N = 5; they compared the tokens only until issue 44); every other exercise
    keeps its points; the class report flags nothing (a wrong answer, not a cheat)."""
    from tests.heldout.attacks_third_lecturer import P2_SHAPES_12_EXERCISE_3

    root, assignment, nb_path, source, release = released(tmp_path, "12")
    student = "p2-shapes"

    def answer(ex: Exercise) -> str:
        reference = solution_code(source.cells[ex.solution_cell].source)
        return P2_SHAPES_12_EXERCISE_3 if ex.label == "Exercise 3" else reference

    submit(root, assignment, nb_path.name, student, submission(source, release, answer, written="Because."))
    env = grading_environ()
    graded = autograde_class(root, assignment, jobs=1, progress=False, env=env)
    assert list(graded) == [student] and graded[student].ok, graded
    assert not any(COLD_START in g.log for g in graded.values()), "the graded kernel forked from the warm server"
    summaries, flags = class_report(root, assignment)
    scores = {s.grade_id: s.scores[student] for s in summaries}
    out = nbformat.read(root / "autograded" / student / assignment / nb_path.name, as_version=4)
    for ex in find_exercises(source):
        for cell in graded_cells(source, ex):
            grade_id, errors = source.cells[cell].metadata["nbgrader"]["grade_id"], str(cell_errors(out.cells[cell]))
            if ex.label == "Exercise 3":  # the visible check, and the hidden tests on another prompt
                fed = "feeding [2, 1, 1, 1] tokens" if cell == ex.check_cell else "P = 3 tokens and N = 5 new ones"
                assert scores[grade_id] == 0, (grade_id, scores[grade_id])
                assert fed in errors and "Not graded" not in errors, errors
            else:
                assert scores[grade_id] == source.cells[cell].metadata["nbgrader"]["points"], (grade_id, errors)
    assert not flags, flags


@needs_grading
def test_a_red_teams_answers_to_12s_exercise_3_that_recompute_the_prefix_fail_its_check(tmp_path):
    """tests/heldout's RECOMPUTED_12_EXERCISE_3 (a red team's, issue 44: the model called with a cache as the check
    records it, the tokens taken from the whole prefix recomputed by type(model).forward, model._forward or a copy of
    the model; 3 of 3 scored, unflagged; and the lead's r4, the decoder's arithmetic by hand beside a cache fed
    zeros), each handed in as its own student with the reference solution of every other exercise, graded by nbgrader
    with the guard: exercise 3's visible check and its hidden tests score zero, failing on what was computed (the
    caches passed, the positions computed, the tokens fed: graded, not refused); every other exercise keeps its
    points."""
    from tests.heldout.attacks_recomputed import RECOMPUTED_12_EXERCISE_3

    root, assignment, nb_path, source, release = released(tmp_path, "12")
    students = {f"{name.split('_')[0]}-recomputed": answer for name, answer in RECOMPUTED_12_EXERCISE_3.items()}
    for student, attack in students.items():

        def answer(ex: Exercise, attack=attack) -> str:
            return attack if ex.label == "Exercise 3" else solution_code(source.cells[ex.solution_cell].source)

        submit(root, assignment, nb_path.name, student, submission(source, release, answer, written="Because."))
    graded = autograde_class(root, assignment, jobs=2, progress=False, env=grading_environ())
    assert sorted(graded) == sorted(students) and all(g.ok for g in graded.values()), graded
    summaries, flags = class_report(root, assignment)
    for student in students:
        scores = {s.grade_id: s.scores[student] for s in summaries}
        out = nbformat.read(root / "autograded" / student / assignment / nb_path.name, as_version=4)
        for ex in find_exercises(source):
            for cell in graded_cells(source, ex):
                grade_id = source.cells[cell].metadata["nbgrader"]["grade_id"]
                errors = str(cell_errors(out.cells[cell]))
                if ex.label == "Exercise 3":
                    assert scores[grade_id] == 0 and "Not graded" not in errors, (student, grade_id, errors)
                    said = ("different KVCache objects", "recomputed positions", "fed the model other tokens")
                    assert any(words in errors for words in said), (student, errors)
                else:
                    assert scores[grade_id] == source.cells[cell].metadata["nbgrader"]["points"], (student, grade_id)
    assert not flags, flags


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


def last_exercise_shortcut(nb_path: Path) -> str | None:
    """The shortcut (by another door where there is one) of the notebook's last exercise, if it has one."""
    exercises = find_exercises(nbformat.read(nb_path, as_version=4))
    return load_shortcuts(nb_path, aliases=True)[0].get(exercises[-1].label) if exercises else None


@needs_grading
@pytest.mark.parametrize("nb_path", [p for p in NOTEBOOKS if last_exercise_shortcut(p)], ids=lambda p: p.name)
def test_the_last_exercises_shortcut_is_refused(nb_path, tmp_path):
    """The nbgrader test's shortcut student tampers in the last answer cell, so there the last exercise's check never
    runs (the guard fails it first): its shortcut is tried here instead, in the notebook up to that check."""
    nb = nbformat.read(nb_path, as_version=4)
    last = find_exercises(nb)[-1]
    nb.cells = nb.cells[: last.check_cell + 1]
    nb.cells[last.solution_cell].source = last_exercise_shortcut(nb_path)
    execute(nb, str(tmp_path))
    before = [(i, cell_errors(c)) for i, c in enumerate(nb.cells[: last.solution_cell]) if c.cell_type == "code"]
    assert not [(i, e) for i, e in before if e], f"cells before the last exercise failed: {before}"
    errors = cell_errors(nb.cells[last.check_cell])
    assert any("ShortcutError" in f"{name} {value}" for name, value in errors), f"{last.label}: not refused: {errors}"


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


PARTIAL_CREDIT = [
    nbformat.v4.new_code_cell("import torch\n\nimport course_lib as cl"),
    nbformat.v4.new_markdown_cell("**Exercise 1 — double it.** Write `double(x)`, which returns `2 * x`."),
    nbformat.v4.new_code_cell("def double(x):\n    # BEGIN SOLUTION\n    return 2 * x\n    # END SOLUTION"),
    nbformat.v4.new_code_cell(
        "cl.check_function(double, lambda x: 2 * x, lambda g: (torch.rand(3, generator=g),), name='double')\n"
        f"{HIDDEN_BEGIN}\n"
        "cl.check_function(double, lambda x: 2 * x, lambda g: (-torch.rand(3, generator=g),), name='double, x < 0')\n"
        "### END HIDDEN TESTS"
    ),
]


@needs_grading
def test_an_answer_that_fails_only_the_hidden_tests_earns_half_the_points(tmp_path):
    """Partial credit, end to end in nbgrader: the visible check and the hidden tests are graded cells of their own."""
    root, assignment, name = tmp_path / "course", "a99", "99_partial.ipynb"
    root.mkdir()
    (root / "nbgrader_config.py").write_text(CONFIG)
    nbformat.write(nbformat.v4.new_notebook(cells=PARTIAL_CREDIT), tmp_path / name)
    command = [sys.executable, "-m", "course_lib.classroom.student", str(tmp_path / name), "--out"]
    command += [str(root / "source" / assignment), "--nbgrader", "--secret", "test_grading"]  # the same hidden inputs
    done = subprocess.run(command, capture_output=True, text=True)  # in every run (the guide's makes new ones)
    assert done.returncode == 0, done.stderr
    nbgrader(root, "generate_assignment", assignment)
    source = nbformat.read(root / "source" / assignment / name, as_version=4)
    release = nbformat.read(root / "release" / assignment / name, as_version=4)
    right, positive_only = "def double(x):\n    return 2 * x", "def double(x):\n    return 2 * x.abs()"
    answers = {REFERENCE: right, "unchanged": None, SHORTCUT: positive_only}  # x > 0: the inputs the check shows
    for student, answer in answers.items():
        handed_in = release if answer is None else submission(source, release, lambda ex, answer=answer: answer)
        submit(root, assignment, name, student, handed_in)
        nbgrader(root, "autograde", assignment, "--student", student)
    scores = grades(root, "99_partial", assignment)
    visible, hidden = "99_partial-exercise-1-tests", "99_partial-exercise-1-hidden-tests"
    assert scores[REFERENCE] == {visible: 0.5, hidden: 0.5}
    assert scores["unchanged"] == {visible: 0, hidden: 0}
    assert scores[SHORTCUT] == {visible: 0.5, hidden: 0}, "the edge case costs half, not everything"


@needs_grading
def test_the_class_bench_builds_a_class_of_reference_submissions(tmp_path):
    from tools import class_bench

    notebook = NOTEBOOKS[0]
    assignment, ids = class_bench.build_class(notebook, tmp_path / "course", 2)
    assert assignment == "a00" and ids == ["s001", "s002"]
    handed_in = nbformat.read(tmp_path / "course" / "submitted" / "s002" / "a00" / notebook.name, as_version=4)
    answers = [c.source for c in handed_in.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert answers and not any("unanswered(" in a or "NotImplementedError" in a for a in answers)
    assert not any("BEGIN SOLUTION" in a for a in answers), "answers as a student types them"
