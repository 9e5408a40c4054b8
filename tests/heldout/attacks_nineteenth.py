"""Held-out attacks: a nineteenth lecturer's trial (2026-12-05), on notebook 12's exercise 2 (``top_k``), each appended
to the reference answer; tests/test_grading.py grades them with nbgrader. The trial's answer to notebook 14 read the
full notebook from the clone that course_lib runs from (``cl.__file__``), took the reference solutions out of its
text and compiled them with TorchScript (``torch.jit.CompilationUnit``): full marks, unflagged. Here:

- z1_read_the_clone: a notebook of the clone opened and read (its solutions are in it);
- z2_read_caught: the same with the refusal caught, the cell carrying on;
- z3_torchscript: code compiled from a string by TorchScript, which no reading of the cell sees;
- z4_caught_and_broken (a second trial's c3): the read caught, and the answer then failing on its own (a NameError),
  so that no test cell reached the point where it asks for its evidence: zero, but unflagged. A refusal of the
  confinement now makes every later graded test cell "Not graded" first thing (``watch.refused_outside``).

z1 and z2 are refused at run time, whoever asks (:mod:`course_lib.classroom.confine`: the clone and nbgrader's course
folder are read only for course_lib, the data and the kernel's own folder; Landlock refuses C code's reads there,
such as ``torch.from_file``'s, tests/test_confine.py); z3 is found by the reading (:mod:`.shell_words`).
"""

CLONE_NOTEBOOK = 'cl.__file__.rsplit("/", 2)[0] + "/notebooks/12_decoder_that_writes.ipynb"'

NINETEENTH_12_ATTACKS = {
    "z1_read_the_clone: a notebook of the clone course_lib runs from, read for its solutions": f"""
_solutions = open({CLONE_NOTEBOOK}, encoding="utf-8").read()
""",
    "z2_read_caught: the clone's notebook opened, the refusal caught": f"""
try:
    _solutions = open({CLONE_NOTEBOOK}, encoding="utf-8").read()
except OSError:
    _solutions = ""
""",
    "z4_caught_and_broken: the clone's notebook opened, the refusal caught, the answer failing on its own": f"""
try:
    _solutions = open({CLONE_NOTEBOOK}, encoding="utf-8").read()
except OSError:
    pass


def top_k(logits, k):
    return logits_kept  # (a NameError when a check calls it)
""",
    "z3_torchscript: code compiled from a string by TorchScript": """
_unit = torch.jit.CompilationUnit("def top_k_again(x: int) -> int:\\n    return x\\n")
""",
}
