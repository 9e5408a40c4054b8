"""Held-out attacks: a red team's twentieth try (2026-12-05), on notebook 12's exercise 2 (``top_k``), each appended to
the reference answer; tests/test_grading.py grades them with nbgrader. The try wrote into the grading account's home
(IPython's startup folder, whose files every later kernel runs before the grader's first cell; ``~/.jupyter``'s
nbgrader config, which every later nbgrader process runs), and caught a refusal to probe the grader unflagged. Here
each writes outside the course folder (next to it, not into a real home: the test must not leave a startup file
behind if the refusal failed):

- y1_startup_by_numpy: Python text written by ``numpy.savetxt`` (a library on the cell's behalf, which the course
  folder's rule, made for the student's own calls, did not refuse);
- y2_caught: a file opened for writing with ``open``, the refusal caught and the cell carrying on.

Refused at run time, whoever asks (:mod:`course_lib.classroom.confine`): no later graded test cell gets its evidence.
"""

OUTSIDE = "../../../../outside-{}.py"  # (autograded/<student>/<assignment>/ in the course folder: the folder beside it)

TWENTIETH_12_ATTACKS = {
    "y1_startup_by_numpy: Python text written outside the course folder by numpy.savetxt": f"""
import numpy as _np

_np.savetxt({OUTSIDE.format("y1")!r}, [], header="print('ran in every later kernel')", comments="")
""",
    "y2_caught: a file opened for writing outside the course folder, the refusal caught": f"""
try:
    with open({OUTSIDE.format("y2")!r}, "w") as _f:
        _f.write("print('ran in every later kernel')\\n")
except OSError:
    pass
""",
}
