"""tools.notebook_times: each notebook's time from a strict nbval run's JUnit report, against the course's budget."""

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


def test_cells_are_summed_per_notebook_and_the_budget_is_marked(tmp_path, capsys):
    junit = tmp_path / "nbval.xml"
    junit.write_text(REPORT)
    totals = notebook_times.notebook_seconds(junit)
    assert totals == {  # a unit test is no cell; a core path is another notebook
        "02_limits_of_rnns.ipynb": 71.75,
        "03_query_key_value.ipynb": 2.0,
        "build.core-paths.03_query_key_value.ipynb": 4.0,
    }
    table, within = notebook_times.report(totals)
    assert not within and "02_limits_of_rnns.ipynb" in table and "over the 60 s budget" in table
    assert notebook_times.main([str(junit)]) == 0, "a table, not a failure, unless --check"
    assert notebook_times.main([str(junit), "--check"]) == 1
    assert "the course (3 notebooks)" in capsys.readouterr().out


def test_a_course_within_budget_passes_the_check(tmp_path):
    junit = tmp_path / "nbval.xml"
    junit.write_text(REPORT.replace('time="70.25"', 'time="50"'))
    assert notebook_times.main([str(junit), "--check"]) == 0


def test_cpu_mode_runs_each_notebook_in_a_kernel_and_counts_its_cpu_time(tmp_path, capsys):
    import nbformat

    nb = nbformat.v4.new_notebook()
    burn = "import time\nstart = time.process_time()\nwhile time.process_time() - start < 0.5:\n    pass"
    nb.cells = [nbformat.v4.new_code_cell(burn), nbformat.v4.new_code_cell("time.sleep(4.0)")]  # sleeping is free
    path = tmp_path / "burn.ipynb"
    nbformat.write(nb, path)
    seconds = notebook_times.kernel_cpu_seconds(path)
    # the burnt half second and the kernel's start (about 0.8 s here), not the 4 s it slept
    assert 0.5 <= seconds < 0.5 + 3.0, seconds
    assert nbformat.read(path, as_version=4).cells[0].outputs == [], "nothing is written back"
    assert notebook_times.main(["--cpu", str(path)]) == 0
    out = capsys.readouterr().out
    assert "burn.ipynb" in out and "load average" in out
