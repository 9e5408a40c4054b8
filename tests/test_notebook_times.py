"""tools.notebook_times: each notebook's time from a strict nbval run's JUnit report, against the course's budget."""

import sys

from tools import notebook_times

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="5">
<testcase classname="notebooks.02_limits_of_rnns.ipynb" name="Cell 0" time="1.5"/>
<testcase classname="notebooks.02_limits_of_rnns.ipynb" name="Cell 1" time="70.25"/>
<testcase classname="build.core-paths.03_query_key_value.ipynb" name="Cell 0" time="4.0"/>
<testcase classname="notebooks.03_query_key_value.ipynb" name="Cell 0" time="2.0"/>
<testcase classname="tests.test_x" name="test_y" time="9.0"/>
</testsuite></testsuites>
"""


CPU_REPORT = """{"notebook": "notebooks/02_limits_of_rnns.ipynb", "cpu": 31.5, "wall": 40.0}
{"notebook": "build/core-paths/03_query_key_value.ipynb", "cpu": 2.5, "wall": 4.0}
{"notebook": "notebooks/03_query_key_value.ipynb", "cpu": 1.5, "wall": 2.0}
{"process": "warm-kernel server (the shared imports)", "cpu": 2.0}
{"process": "warm-kernel server (the shared imports)", "cpu": 2.25}
{"process": "pytest gw0", "cpu": 3.0}
{"process": "pytest main", "cpu": 2.0}
"""


def test_cells_are_summed_per_notebook_and_cpu_is_read_per_notebook_and_process(tmp_path, capsys):
    junit, kernels = tmp_path / "nbval.xml", tmp_path / "kernels.jsonl"
    junit.write_text(REPORT)
    kernels.write_text(CPU_REPORT)
    wall = notebook_times.notebook_seconds(junit)
    assert wall == {  # a unit test is no cell; a core path is another notebook
        "02_limits_of_rnns.ipynb": 71.75,
        "03_query_key_value.ipynb": 2.0,
        "build.core-paths.03_query_key_value.ipynb": 4.0,
    }
    cpu, shared = notebook_times.kernel_cpu(kernels)
    assert cpu == {"02_limits_of_rnns.ipynb": 31.5, "03_query_key_value.ipynb": 1.5,
                   "build.core-paths.03_query_key_value.ipynb": 2.5}  # fmt: skip
    assert shared == {"warm-kernel server (the shared imports)": 4.25, "pytest": 5.0}, "summed by kind"
    table, within = notebook_times.report(cpu, wall, shared, course_cpu=50.0)
    assert not within and "over the 30 s budget" in table.splitlines()[1], "02's 31.5 s of CPU, not its wall time"
    assert "the rest" in table and "50.0" in table.splitlines()[-2] and "measured on:" in table
    assert notebook_times.main([str(junit), "--cpu-report", str(kernels)]) == 0, "a table, not a failure"
    assert notebook_times.main([str(junit), "--cpu-report", str(kernels), "--check"]) == 1
    assert "the course (3 notebooks)" in capsys.readouterr().out


def test_the_course_is_held_to_its_cpu_budget_and_wall_time_to_none(tmp_path):
    junit, kernels = tmp_path / "nbval.xml", tmp_path / "kernels.jsonl"
    junit.write_text(REPORT)  # 71.75 s of wall time: a loaded machine, never a failure
    kernels.write_text(CPU_REPORT.replace('"cpu": 31.5', '"cpu": 25.0'))
    assert notebook_times.main([str(junit), "--cpu-report", str(kernels), "--check"]) == 0
    cpu = {f"{n:02d}.ipynb": 13.0 for n in range(15)}  # each within 30 s, 195 s together
    table, within = notebook_times.report(cpu, {})
    assert not within and "over the 180 s budget" in table


def test_run_mode_runs_the_command_and_counts_the_cpu_of_all_it_started(tmp_path, capsys):
    """--run: the command gets the two report options; the course's CPU is every descendant's (here a child that
    burns half a second and writes a one-cell JUnit report)."""
    script = tmp_path / "fake_pytest.py"
    script.write_text(
        "import subprocess, sys\n"
        "args = dict(a.split('=', 1) for a in sys.argv[1:] if a.startswith('--'))\n"
        "burn = 'import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.5: pass'\n"
        "subprocess.run([sys.executable, '-c', burn], check=True)\n"
        f"open(args['--junitxml'], 'w').write({REPORT!r})\n"
        "open(args['--kernel-cpu-report'], 'w').write('')\n"
        "sys.exit(3)\n"
    )
    status = notebook_times.main(["--run", str(tmp_path / "out"), "--", sys.executable, str(script)])
    out = capsys.readouterr().out
    assert status == 3, "the command's exit status"
    course = [line for line in out.splitlines() if line.startswith("the course")][0]
    assert float(course.split()[-2]) >= 0.5, out


def test_cpu_mode_runs_each_notebook_in_a_kernel_and_counts_its_cpu_time(tmp_path, capsys, monkeypatch):
    import nbformat

    nb = nbformat.v4.new_notebook()
    burn = "import time\nstart = time.process_time()\nwhile time.process_time() - start < 0.5:\n    pass"
    slept = 3.0  # as long as the margin below: a wall clock would count at least 0.5 + 3.0 s and fail
    nb.cells = [nbformat.v4.new_code_cell(burn), nbformat.v4.new_code_cell(f"time.sleep({slept})")]  # sleep is free
    path = tmp_path / "burn.ipynb"
    nbformat.write(nb, path)
    measured = []  # the notebook runs once, in a kernel started by main --cpu: what kernel_cpu_seconds returned there
    kernel_cpu_seconds = notebook_times.kernel_cpu_seconds
    monkeypatch.setattr(notebook_times, "kernel_cpu_seconds", lambda p: measured.append(kernel_cpu_seconds(p))
                        or measured[-1])  # fmt: skip
    assert notebook_times.main(["--cpu", str(path)]) == 0
    (seconds,) = measured
    # the burnt half second and the kernel's start (about 0.8 s here), not the seconds it slept
    assert 0.5 <= seconds < 0.5 + slept, seconds
    assert nbformat.read(path, as_version=4).cells[0].outputs == [], "nothing is written back"
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("burn.ipynb"))
    assert "load average" in out and float(row.split()[1]) == round(seconds, 1), out
