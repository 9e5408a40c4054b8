"""A graded kernel keeps out of nbgrader's course folder (course_lib.classroom.unwatched): a twelfth lecturer's trial
appended a line to nbgrader_config.py that switched the guard off for every later submission, and set a manual score on
every grade with sqlite3 on gradebook.db. In a graded kernel (once the snapshot is taken) a file of the course folder
outside the submission's own folder is refused, read or written, through open, sqlite3, os.remove or a link; the
submission's own folder stays open to it, and outside nbgrader nothing changes."""

import os
import subprocess
import sys

from course_lib.classroom.unwatched import grading_folder, outside_own_folder

ATTEMPTS = [
    'open("../../../nbgrader_config.py", "a")',
    'open("../../../gradebook.db", "rb")',
    '__import__("sqlite3").connect("../../../gradebook.db")',
    '__import__("os").remove("../../../gradebook.db")',
    '__import__("os").symlink("../../../gradebook.db", "db"); open("db", "rb")',
    'open("../../other/a/answers.ipynb", "w")',
    'open("mine.txt", "w").write("ok")',
]
SCRIPT = """
import sys
import course_lib
from course_lib.classroom.watch import watch_cells
if sys.argv[1] == "graded":
    watch_cells("_marker", lambda: None)  # what the guard's snapshot line does in the first locked cell
for attempt in sys.argv[2:]:
    try:
        exec(attempt)
        print("allowed")
    except Exception as err:
        print(type(err).__name__, str(err).split(":")[0])
"""


def _course(tmp_path):
    home = tmp_path / "course" / "autograded" / "s1234567" / "a04"
    (tmp_path / "course" / "autograded" / "other" / "a").mkdir(parents=True)
    home.mkdir(parents=True)
    for name in ("nbgrader_config.py", "gradebook.db"):
        (tmp_path / "course" / name).write_text("")
    return home


def test_the_folders_are_found_from_the_kernels_working_directory(tmp_path):
    home = _course(tmp_path)
    folders = grading_folder(str(home))
    assert folders == (os.path.realpath(home), os.path.realpath(tmp_path / "course"))
    assert outside_own_folder(str(home / "../../../gradebook.db"), folders)
    assert outside_own_folder(os.fsencode(home / ".." / "x"), folders)
    assert not outside_own_folder(str(home / "data.csv"), folders) and not outside_own_folder(3, folders)
    assert not outside_own_folder("/etc/hostname", folders)  # outside the course folder: not this rule's
    assert grading_folder(str(tmp_path)) is None  # not below a course folder: nothing refused


def test_a_graded_kernel_is_refused_the_course_folder_and_keeps_its_own(tmp_path):
    home = _course(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    graded = subprocess.run([sys.executable, "-c", SCRIPT, "graded", *ATTEMPTS], cwd=home, env=env,
                            capture_output=True, text=True, check=True).stdout.splitlines()  # fmt: skip
    assert graded[0] == (
        "Refused asked for the file ../../../nbgrader_config.py (open), of the grader's course folder outside the "
        "submission's own in a graded notebook"
    )
    assert [line.split()[0] for line in graded] == ["Refused"] * 6 + ["allowed"], graded
    assert (tmp_path / "course" / "gradebook.db").exists() and (home / "mine.txt").read_text() == "ok"
    ungraded = subprocess.run([sys.executable, "-c", SCRIPT, "ungraded", ATTEMPTS[1], ATTEMPTS[-1]], cwd=home, env=env,
                              capture_output=True, text=True, check=True).stdout.splitlines()  # fmt: skip
    assert ungraded == ["allowed", "allowed"]


def test_a_notebook_outside_the_submissions_folder_is_refused_wherever_it_lies(tmp_path):
    """A twenty-third trial moved ``source/`` beside the course folder, as the checklist then said, and a submission
    read its solutions from there: full marks, unflagged. A notebook outside the submission's own folder is refused to
    a graded kernel, wherever it lies and through a link too; other files outside the course folder stay readable."""
    home = _course(tmp_path)
    moved = tmp_path / "private-source" / "a04"
    moved.mkdir(parents=True)
    (moved / "04.ipynb").write_text("{}")
    (home / "mine.ipynb").write_text("{}")
    (tmp_path / "notes.txt").write_text("x")
    os.symlink(moved / "04.ipynb", home / "link.txt")
    attempts = [f"open({str(moved / '04.ipynb')!r}).read()", "open('link.txt').read()",
                f"__import__('pathlib').Path({str(moved / '04.ipynb')!r}).read_bytes()",
                "open('mine.ipynb').read()", f"open({str(tmp_path / 'notes.txt')!r}).read()"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    graded = subprocess.run([sys.executable, "-c", SCRIPT, "graded", *attempts], cwd=home, env=env,
                            capture_output=True, text=True, check=True).stdout.splitlines()  # fmt: skip
    assert [line.split()[0] for line in graded] == ["Refused"] * 3 + ["allowed"] * 2, graded
    assert "outside the submission's own folder (the grader's solutions?)" in graded[0]
    ungraded = subprocess.run([sys.executable, "-c", SCRIPT, "ungraded", attempts[0]], cwd=home, env=env,
                              capture_output=True, text=True, check=True).stdout.splitlines()  # fmt: skip
    assert ungraded == ["allowed"]
