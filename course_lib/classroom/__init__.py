"""The classroom around the notebooks: exercises, their checks, and the student and nbgrader versions.

Read in this order:

- :mod:`~course_lib.classroom.exercises` — per-student numbers (variants), blocked library shortcuts (with what does
  their work: :mod:`~course_lib.classroom.delegates` for a course function's unchecked twins,
  :mod:`~course_lib.classroom.reach` for PyTorch's operators), and the ``unanswered`` placeholder of the student
  version.
- :mod:`~course_lib.classroom.checks` — ``check_answer``, ``check_close``, ``check_function``: checkers that explain
  the first difference from the reference (notebooks reach them as ``cl.check_answer`` ...), after
  :mod:`~course_lib.classroom.integrity` has made sure that nothing left on by a cell could answer for them
  (:mod:`~course_lib.classroom.hints` guesses a cause; :mod:`~course_lib.classroom.own` keeps the check's own
  reference and helpers out of the answer's reach; :mod:`~course_lib.classroom.messages` says it in Chinese for the
  Chinese edition).
- :mod:`~course_lib.classroom.guard` — nbgrader's autograde step that reads a submission for tampering
  (:mod:`~course_lib.classroom.tampering`, on :mod:`~course_lib.classroom.syntax`'s reading of a cell) before it runs.
- :mod:`~course_lib.classroom.recheck` — nbgrader's autograde step after the run: the grader's own run decides each
  test cell again in a kernel with none of the submission's cells, the answers running in a kernel of their own
  (:mod:`~course_lib.classroom.serve`); values cross between them as data (:mod:`~course_lib.classroom.claims`).
- :mod:`~course_lib.classroom.stubs` — how a solution region becomes a stub;
  :mod:`~course_lib.classroom.notebook` — a notebook's exercises, check cells, hidden tests and ``VARIANT`` line.
- :mod:`~course_lib.classroom.student` — ``python -m course_lib.classroom.student``: student versions, or with
  ``--nbgrader`` the source versions of :mod:`~course_lib.classroom.nbgrader_source` for an nbgrader course;
  :mod:`~course_lib.classroom.carry` — ``python -m course_lib.classroom.carry``: a student's answers from the
  notebook they worked in into the assignment's notebook they hand in.
"""
