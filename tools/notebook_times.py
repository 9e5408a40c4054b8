"""What the course costs to run, measured: each notebook's CPU and wall seconds in a strict nbval run, and the course's.

The budget (COURSE_DESIGN.md, issue 42): each notebook at most 30 s of CPU and the whole course at most 180 s of CPU,
strict nbval with one thread on CI's kind of machine (a 2-core AMD EPYC with AVX2). CPU seconds, not wall seconds:
on a shared machine wall time measures the machine, while the CPU a process uses barely moves with the load.

    python -m tools.notebook_times --run build/nbval -- pytest --nbval ... notebooks   # what `make test` runs

runs the strict nbval command (adding ``--junitxml`` and the warm kernels' ``--kernel-cpu-report``, see
tools/warm_kernel.py, to it), then prints a table: each notebook's kernel CPU seconds and its cells' wall seconds; what
the notebooks share (the warm-kernel servers' imports, the pytest processes); and the course: every CPU second the
command and all its descendants used (RUSAGE_CHILDREN), the number the budget is about. It exits with the command's
status; ``--check`` also fails a run over budget (for a quiet machine of CI's kind: a faster or slower CPU moves
the numbers, and the table names the CPU it ran on).

    python -m tools.notebook_times build/nbval/nbval.xml [--cpu-report build/nbval/kernels.jsonl]  # a past run
    python -m tools.notebook_times --cpu notebooks/*.ipynb    # each notebook alone, in a cold kernel of its own

``--cpu`` runs each notebook in a fresh, cold kernel, one after another (strict nbval's environment; nothing written
back) and reports the CPU seconds of that kernel, start-up and imports included: what one notebook costs on its own,
as a student's laptop runs it. To find a slow cell: the JUnit report's cell times (``--junitxml``), then
``%%prun`` or ``%%time`` in that cell (CONTRIBUTING.md, "Time").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from tools.nbval_env import nbval_environ

NOTEBOOK_CPU_SECONDS = 30.0
COURSE_CPU_SECONDS = 180.0
BUDGET_MACHINE = "CI's kind of machine: a 2-core AMD EPYC with AVX2"


def notebook_seconds(junit: Path) -> dict[str, float]:
    """Wall seconds per notebook (its cells' times summed), from nbval's JUnit report; the notebook's file name as key
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


def kernel_cpu(report: Path) -> tuple[dict[str, float], dict[str, float]]:
    """From a warm-kernel CPU report: CPU seconds per notebook (named as in ``notebook_seconds``) and per shared
    process (servers and pytest processes, summed by kind)."""
    notebooks: dict[str, float] = {}
    shared: dict[str, float] = {}
    for line in report.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if "notebook" in entry:
            name = entry["notebook"].replace(os.sep, ".").removeprefix("notebooks.")
            notebooks[name] = notebooks.get(name, 0.0) + entry["cpu"]
        else:
            kind = entry["process"].split(" gw")[0].removesuffix(" main")
            shared[kind] = shared.get(kind, 0.0) + entry["cpu"]
    return dict(sorted(notebooks.items())), shared


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
        before = _children_cpu()
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": str(notebook.parent)}})  # fmt: skip
        client.execute()
        return _children_cpu() - before
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_name() -> str:
    """The processor's name as the kernel reports it (Linux), for the table's header."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    except OSError:
        pass
    return f"{os.cpu_count()} cores"


def report(cpu: dict[str, float], wall: dict[str, float], shared: dict[str, float] | None = None,
           course_cpu: float | None = None) -> tuple[str, bool]:  # fmt: skip
    """The table and whether everything is within budget. ``cpu`` may be empty (a JUnit report alone: wall seconds
    only, which are not held against the budget); ``course_cpu`` is the whole run's CPU where it was measured."""
    names = sorted({*cpu, *wall})
    lines = [f"{'notebook':<44} {'CPU s':>7} {'wall s':>7}"]
    over = [name for name in names if cpu.get(name, 0.0) > NOTEBOOK_CPU_SECONDS]
    for name in names:
        mark = f"  over the {NOTEBOOK_CPU_SECONDS:.0f} s budget" if name in over else ""
        lines.append(f"{name:<44} {_cell(cpu.get(name))} {_cell(wall.get(name))}{mark}")
    for kind, seconds in sorted((shared or {}).items()):
        lines.append(f"{f'shared: {kind}':<44} {_cell(seconds)}")
    if course_cpu is not None:
        rest = course_cpu - sum(cpu.values()) - sum((shared or {}).values())
        lines.append(f"{'shared: the rest (pytest exiting, kernels left)':<44} {_cell(rest)}")
    course = course_cpu if course_cpu is not None else (sum(cpu.values()) + sum((shared or {}).values()) or None)
    course_over = course is not None and course > COURSE_CPU_SECONDS
    mark = f"  over the {COURSE_CPU_SECONDS:.0f} s budget" if course_over else ""
    lines.append(f"{f'the course ({len(names)} notebooks)':<44} {_cell(course)} {_cell(sum(wall.values()))}{mark}")
    lines.append(
        f"budget: {NOTEBOOK_CPU_SECONDS:.0f} s of CPU a notebook, {COURSE_CPU_SECONDS:.0f} s the course, on "
        f"{BUDGET_MACHINE}; measured on: {cpu_name()}"
    )
    return "\n".join(lines), not over and not course_over


def _cell(seconds: float | None) -> str:
    return f"{'-':>7}" if seconds is None else f"{seconds:7.1f}"


def run(out: Path, command: list[str]) -> tuple[int, float]:
    """Run the strict nbval ``command`` with a JUnit report and a kernel CPU report in ``out``: (its exit status, the
    CPU seconds it and all its descendants used)."""
    out.mkdir(parents=True, exist_ok=True)
    extra = [f"--junitxml={out / 'nbval.xml'}", f"--kernel-cpu-report={out / 'kernels.jsonl'}"]
    before = _children_cpu()
    status = subprocess.run([*command, *extra], check=False).returncode
    return status, _children_cpu() - before


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(prog="python -m tools.notebook_times", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "paths", type=Path, nargs="*", help="a strict nbval run's JUnit XML report; with --cpu, notebooks"
    )
    parser.add_argument("--run", type=Path, metavar="DIR", help="run the command after -- and keep its reports in DIR")
    parser.add_argument("--cpu-report", type=Path, help="the warm kernels' CPU report of the JUnit report's run")
    parser.add_argument("--cpu", action="store_true", help="run the notebooks, one cold kernel each, and report CPU")
    parser.add_argument("--check", action="store_true", help="exit 1 if a notebook or the course is over budget")
    args = parser.parse_args(argv)
    if args.run is not None:
        if not command:
            parser.error("--run DIR needs the command after --")
        status, course_cpu = run(args.run, command)
        junit, kernels = args.run / "nbval.xml", args.run / "kernels.jsonl"
        if not junit.is_file():
            print(f"notebook_times: the command wrote no report ({junit})", file=sys.stderr)
            return status or 1
        cpu, shared = kernel_cpu(kernels) if kernels.is_file() else ({}, {})
        table, within = report(cpu, notebook_seconds(junit), shared, course_cpu)
        print(table)
        return status or (1 if args.check and not within else 0)
    missing = [str(p) for p in args.paths if not p.is_file()]
    if missing or not args.paths:
        parser.error(
            f"no such file: {', '.join(missing)}" if missing else "a JUnit report, notebooks with --cpu, or --run"
        )
    if args.cpu:
        print(f"load average at the start: {os.getloadavg()[0]:.1f}", flush=True)
        cpu = {p.name: kernel_cpu_seconds(p) for p in sorted(args.paths)}
        print(f"load average at the end: {os.getloadavg()[0]:.1f}; CPU seconds of each notebook's cold kernel")
        table, within = report(cpu, {})
    elif len(args.paths) != 1:
        parser.error("one JUnit report, or notebooks with --cpu")
    else:
        wall = notebook_seconds(args.paths[0])
        if not wall:
            parser.error(f"{args.paths[0]} holds no notebook cells")
        cpu, shared = kernel_cpu(args.cpu_report) if args.cpu_report else ({}, {})
        table, within = report(cpu, wall, shared)
    print(table)
    return 1 if args.check and not within else 0


if __name__ == "__main__":
    sys.exit(main())
