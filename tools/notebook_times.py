"""How long each notebook takes, from the JUnit report of a strict nbval run: the course's time budget, measured.

The budget (COURSE_DESIGN.md, the standards): each notebook at most 60 s and the whole course at most 5 minutes on one
core of a 2-core machine. `make test-notebooks` runs strict nbval with two workers, one notebook per worker, so each
notebook has one core to itself; its cells' times, summed per notebook, are that measurement (the kernel's start
aside, about two seconds). The run writes the report, and this tool prints a table:

    python -m tools.notebook_times build/nbval.xml            # the table, with the notebooks over budget marked
    python -m tools.notebook_times build/nbval.xml --check    # ... and exit 1 if the budget is exceeded

Times on a loaded machine are longer than on an idle one: `make test` prints the table without failing, so that a
slow CI runner does not turn red; `--check` is for a quiet machine.

Where the machine is shared (helpers, a browser test, another job), wall time measures the machine. `--cpu` runs each
notebook in a fresh kernel of its own, one after another (the environment of strict nbval: one thread, the CPU;
nothing is written back), and reports the CPU seconds the kernel used, user and system: what the notebook costs one
core, whatever else runs, plus the kernel's start (about a second):

    python -m tools.notebook_times --cpu notebooks/*.ipynb
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from tools.nbval_env import nbval_environ

NOTEBOOK_SECONDS = 60.0
COURSE_SECONDS = 300.0


def notebook_seconds(junit: Path) -> dict[str, float]:
    """Seconds per notebook (its cells' times summed), from nbval's JUnit report; the notebook's file name as key
    (with its folder, dots for slashes, outside ``notebooks/``).

    nbval names a cell's class after the notebook's path with dots for slashes
    (``notebooks.02_limits_of_rnns.ipynb``)."""
    totals: dict[str, float] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        classname = case.get("classname", "")
        if not classname.endswith(".ipynb"):
            continue
        name = classname.removeprefix("notebooks.")  # 02_limits_of_rnns.ipynb; a core path keeps its folder
        totals[name] = totals.get(name, 0.0) + float(case.get("time", 0.0))
    return dict(sorted(totals.items()))


def kernel_cpu_seconds(notebook: Path, timeout: int = 600) -> float:
    """CPU seconds (user + system) of a fresh kernel that runs every cell of ``notebook`` in strict nbval's
    environment; nothing is written back. The kernel is this process's child: its time is counted once it has exited
    (``RUSAGE_CHILDREN``)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(nbval_environ(saved))  # the kernel inherits it
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": str(notebook.parent)}})  # fmt: skip
        client.execute()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def report(totals: dict[str, float]) -> tuple[str, bool]:
    """The table and whether everything is within budget."""
    lines = [f"{'notebook':<44} {'seconds':>8}"]
    over = [name for name, seconds in totals.items() if seconds > NOTEBOOK_SECONDS]
    for name, seconds in totals.items():
        mark = f"  over the {NOTEBOOK_SECONDS:.0f} s budget" if name in over else ""
        lines.append(f"{name:<44} {seconds:8.1f}{mark}")
    course = sum(totals.values())
    course_mark = f"  over the {COURSE_SECONDS:.0f} s budget" if course > COURSE_SECONDS else ""
    lines.append(f"{f'the course ({len(totals)} notebooks)':<44} {course:8.1f}{course_mark}")
    return "\n".join(lines), not over and course <= COURSE_SECONDS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.notebook_times", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "paths", type=Path, nargs="+", help="a strict nbval run's JUnit XML report; with --cpu, notebooks"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if a notebook or the course is over budget")
    parser.add_argument("--cpu", action="store_true", help="run the notebooks, one kernel each, and report CPU seconds")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.paths if not p.is_file()]
    if missing:
        parser.error(f"no such file: {', '.join(missing)}" + ("" if args.cpu else " (run nbval with --junitxml=...)"))
    if args.cpu:
        print(f"load average at the start: {os.getloadavg()[0]:.1f}", flush=True)
        totals = {p.name: kernel_cpu_seconds(p) for p in sorted(args.paths)}
        print(f"load average at the end: {os.getloadavg()[0]:.1f}; CPU seconds of each notebook's kernel")
    elif len(args.paths) != 1:
        parser.error("one JUnit report, or notebooks with --cpu")
    else:
        totals = notebook_seconds(args.paths[0])
        if not totals:
            parser.error(f"{args.paths[0]} holds no notebook cells")
    table, within = report(totals)
    print(table)
    return 1 if args.check and not within else 0


if __name__ == "__main__":
    sys.exit(main())
