"""How long each notebook takes, from the JUnit report of a strict nbval run: the course's time budget, measured.

The budget (COURSE_DESIGN.md, the standards): each notebook at most 60 s and the whole course at most 5 minutes on one
core of a 2-core machine. `make test-notebooks` runs strict nbval with two workers, one notebook per worker, so each
notebook has one core to itself; its cells' times, summed per notebook, are that measurement (the kernel's start
aside, about two seconds). The run writes the report, and this tool prints a table:

    python -m tools.notebook_times build/nbval.xml            # the table, with the notebooks over budget marked
    python -m tools.notebook_times build/nbval.xml --check    # ... and exit 1 if the budget is exceeded

Times on a loaded machine are longer than on an idle one: `make test` prints the table without failing, so that a
slow CI runner does not turn red; `--check` is for a quiet machine.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

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
    parser.add_argument("junit", type=Path, help="the JUnit XML report of a strict nbval run")
    parser.add_argument("--check", action="store_true", help="exit 1 if a notebook or the course is over budget")
    args = parser.parse_args(argv)
    if not args.junit.is_file():
        parser.error(f"no report at {args.junit}: run strict nbval with --junitxml={args.junit}")
    totals = notebook_seconds(args.junit)
    if not totals:
        parser.error(f"{args.junit} holds no notebook cells")
    table, within = report(totals)
    print(table)
    return 1 if args.check and not within else 0


if __name__ == "__main__":
    sys.exit(main())
