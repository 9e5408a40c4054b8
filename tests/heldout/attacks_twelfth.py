"""Held-out attacks: the twelfth lecturer's trial (2026-12-04), on notebook 12's exercise 2 (``top_k``), each appended
to the reference answer; tests/test_grading.py grades them with nbgrader. Each reaches past the notebook's names to
the kernel's shell or the grader's course folder:

- x1_transform: an IPython input transformer (the shell reached through ``exit._ip``) rewrites every later cell to
  ``pass``: the guard's "Not graded" lines never ran, and nbgrader gave every later test cell full points;
- x2_transform_marked: the same, only for the cells that name the grader's line (the rest still run);
- x3_cleanup: the input transformer manager's cleanup transforms, the shell found by ``hasattr``, never named;
- x4_config: a line appended to the course folder's ``nbgrader_config.py`` (three folders up from where nbgrader runs a
  submission) that switches the guard off for every submission graded after it;
- x5_gradebook: the gradebook opened with sqlite3 (the grades of every student are in it).

The reading flags the first three (the shell reached, its transformer lists); the last two are refused at run time
(a file of the course folder outside the submission's own: :mod:`course_lib.classroom.unwatched`).
"""

TWELFTH_12_ATTACKS = {
    "x1_transform: an input transformer rewrites every later cell to pass": """
exit._ip.input_transformers_post.append(lambda lines: ["pass\\n"])
""",
    "x2_transform_marked: only the cells that name the grader's line": """
def _quiet(lines):
    marked = any("_course_integrity" in line or "Not graded" in line for line in lines)
    return ["pass\\n"] if marked else lines


exit._ip.input_transformers_post.append(_quiet)
""",
    "x3_cleanup: the transformer manager's cleanup transforms, the shell found by hasattr": """
_shell = [v for v in (exit, quit) if hasattr(v, "_ip")][0]._ip
_shell.input_transformer_manager.cleanup_transforms.append(
    lambda lines: ["pass\\n"] if any("_course_" in line or "Not graded" in line for line in lines) else lines
)
""",
    "x4_config: a line appended to the course folder's nbgrader_config.py": """
with open("../../../nbgrader_config.py", "a") as _config:
    _config.write("\\nc.Autograde.sanitize_preprocessors = []\\n")
""",
    "x5_gradebook: the gradebook opened with sqlite3": """
import sqlite3

_gradebook = sqlite3.connect("../../../gradebook.db")
_gradebook.execute("select count(*) from grade").fetchall()
""",
}
