"""Time the grading of a whole class: one notebook as an nbgrader assignment, N submissions, graded in parallel.

The lecturer's guide promises a measured time for a class of 150 (issue 30). This tool builds that class in a fresh
nbgrader course folder (the course's ``nbgrader_config.py``, the assignment generated from the notebook, N copies of
the reference solutions under student ids s001, s002, ...), grades it with
``course_lib.classroom.autograde`` (``--jobs`` processes at a time, one thread each) and prints the time, per
submission and in all, with the machine it ran on:

    python -m tools.class_bench notebooks/09_attention_vs_convolution.ipynb --students 150 --jobs 2
    python -m tools.class_bench notebooks/09_*.ipynb --students 3 --no-grade --out /tmp/class   # build only

Every submission is the reference solution, so every one should score full marks: the run fails otherwise (a class
that grades fast but wrong measures nothing).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from course_lib.classroom.autograde import autograde_class, class_report
from tools.exercise_check import solution_code

CONFIG = """from course_lib.classroom.release import configure

c = get_config()
c.CourseDirectory.course_id = "class-bench"
configure(c)
"""


def _environment() -> dict[str, str]:
    """This environment, with this Python's scripts first on PATH (nbgrader runs ``alembic`` from there)."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def _nbgrader(root: Path, *args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--force"], cwd=root, capture_output=True,
                          text=True, env=_environment())  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


def build_class(notebook: Path, root: Path, students: int) -> tuple[str, list[str]]:
    """An nbgrader course in ``root`` with ``notebook`` as an assignment and ``students`` reference submissions;
    (assignment, student ids)."""
    assignment = f"a{notebook.name[:2]}"
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(CONFIG)
    command = [sys.executable, "-m", "course_lib.classroom.student", str(notebook), "--out"]
    done = subprocess.run([*command, str(root / "source" / assignment), "--nbgrader"], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    _nbgrader(root, "generate_assignment", assignment)
    source = nbformat.read(root / "source" / assignment / notebook.name, as_version=4)
    answers = {
        c.metadata["nbgrader"]["grade_id"]: solution_code(c.source)
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    release = nbformat.read(root / "release" / assignment / notebook.name, as_version=4)
    for cell in release.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = answers[cell.metadata["nbgrader"]["grade_id"]]
    ids = [f"s{i:03d}" for i in range(1, students + 1)]
    for student in ids:
        folder = root / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(release, folder / notebook.name)
    return assignment, ids


def _children_cpu() -> float:
    """User + system CPU seconds of this process's finished children (and theirs: each grading's kernel)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.class_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--students", type=int, default=150)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, help="the course folder (default: a temporary one, removed afterwards)")
    parser.add_argument("--no-grade", action="store_true", help="build the class only")
    args = parser.parse_args(argv)
    if args.students < 1 or args.jobs < 1:
        parser.error("--students and --jobs must be at least 1")
    root = args.out or Path(tempfile.mkdtemp(prefix="class-bench-")) / "course"
    try:
        assignment, ids = build_class(args.notebook.resolve(), root, args.students)
        print(f"class-bench: {len(ids)} submissions of {args.notebook.name} in {root}", flush=True)
        if args.no_grade:
            return 0
        load_before, cpu_before = os.getloadavg()[0], _children_cpu()
        start = time.perf_counter()
        graded = autograde_class(root, assignment, jobs=args.jobs, env=_environment())
        seconds = time.perf_counter() - start
        cpu_seconds = _children_cpu() - cpu_before
        failed = [s for s, g in graded.items() if not g.ok]
        summaries, _ = class_report(root, assignment)
        short = [s.grade_id for s in summaries if any(v < s.max_score for v in s.scores.values())]
        cpu = platform.processor() or platform.machine()
        print(f"class-bench: {len(ids)} submissions, {args.jobs} at a time, on {os.cpu_count()} cores ({cpu}): "
              f"{seconds:.0f} s in all, {seconds / len(ids):.1f} s per submission; "
              f"{len(failed)} failed, {len(short)} graded cells short of full marks")  # fmt: skip
        # Wall time depends on whatever else the machine runs; CPU time hardly does. On idle cores the class takes
        # about cpu_seconds / jobs (each grading runs one thread), which is what the lecturer's guide quotes.
        print(f"class-bench: CPU time {cpu_seconds:.0f} s in all, {cpu_seconds / len(ids):.1f} s per submission; "
              f"on {args.jobs} idle cores about {cpu_seconds / args.jobs / 60:.1f} min for the class "
              f"(load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after)")  # fmt: skip
        return 1 if failed or short else 0
    finally:
        if args.out is None:
            shutil.rmtree(root.parent, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
