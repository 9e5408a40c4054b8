"""The student-version tool: stubs that keep notebooks runnable, checks that then fail, nbgrader-ready exports.

The slow part executes the student versions of notebooks 00, 01 and 03 (set COURSE_STUDENT_EXECUTE=all to execute
every notebook's student version, or a comma-separated list of numbers such as 04,05); `make test-grading` runs every
notebook's release through nbgrader.
"""

import ast
import os
import re
import sys
import textwrap

import nbformat
import pytest

from course_lib.classroom import student
from course_lib.classroom.exercises import Unanswered
from course_lib.classroom.nbgrader_source import YOUR_VARIANT, nbgrader_notebook
from course_lib.classroom.notebook import HIDDEN_BEGIN, find_exercises, set_variant, without_hidden_tests, written_parts
from course_lib.classroom.stubs import solution_regions, stub_source
from course_lib.classroom.student import WRITTEN_STUB, student_notebook
from course_lib.paths import NOTEBOOKS_DIR, ROOT
from tools import nbval_env, warm_kernel

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
IDS = [nb.name for nb in NOTEBOOKS]


def run(source: str) -> dict:
    """Execute a stubbed cell's source in a fresh namespace and return it."""
    namespace: dict = {}
    exec(compile(source, "<cell>", "exec"), namespace)
    return namespace


def python_lines(source: str) -> str:
    """Drop IPython-only lines (!shell, %magic) so that ast can parse a cell."""
    return "\n".join("pass" if line.lstrip().startswith(("!", "%")) else line for line in source.split("\n"))


# ---------------------------------------------------------------- stubbing one cell


def test_indented_region_keeps_the_def_and_its_indentation():
    source = textwrap.dedent(
        """\
        def attend_one(q, K, V):
            # shapes: q (d_k,), K (n, d_k)
            # BEGIN SOLUTION
            scores = K @ q
            return scores.softmax(-1) @ V
            # END SOLUTION


        print("defined")"""
    )
    stub, names = stub_source(source, "Exercise 2")
    assert names == ["attend_one"]
    assert "def attend_one(q, K, V):\n    # shapes: q (d_k,), K (n, d_k)\n    # YOUR CODE HERE\n" in stub
    assert '    raise NotImplementedError("Exercise 2: write the body of attend_one")' in stub
    assert "scores" not in stub and "BEGIN SOLUTION" not in stub and stub.endswith('print("defined")')
    namespace = run(stub)  # the cell still runs and defines the function
    with pytest.raises(NotImplementedError, match="Exercise 2: write the body of attend_one"):
        namespace["attend_one"](1, 2, 3)


def test_region_in_a_method_names_the_method():
    source = textwrap.dedent(
        """\
        class Block:
            def forward(self, x):
                if x is None:
                    return x
                # BEGIN SOLUTION
                return 2 * x
                # END SOLUTION"""
    )
    stub, names = stub_source(source, "Exercise 3")
    assert names == ["forward"]
    with pytest.raises(NotImplementedError, match="Exercise 3: write the body of forward"):
        run(stub)["Block"]().forward(1)


def test_value_answers_become_placeholders_whose_check_fails_with_not_implemented_error():
    source = textwrap.dedent(
        """\
        # Exercise 1: by hand
        # BEGIN SOLUTION
        q_2 = [1.2, 2.5]
        score, (a, *rest) = 3.93, [1, 2, 3]
        for i in range(2):
            total = i
        squares = [j * j for j in range(3)]
        # END SOLUTION"""
    )
    stub, names = stub_source(source, "Exercise 1")
    assert names == ["q_2", "score", "a", "rest", "i", "total", "squares"]  # not j: it lives in the comprehension
    assert stub.startswith("# Exercise 1: by hand\n# YOUR ANSWER HERE")
    namespace = run(stub)  # the exercise cell runs
    assert all(isinstance(namespace[name], Unanswered) for name in names)
    check = "import torch\nfrom course_lib import check_close\ncheck_close(torch.tensor(q_2), torch.tensor([1.2, 2.5]))"
    with pytest.raises(NotImplementedError, match="Exercise 1: q_2 is not answered yet"):
        exec(check, namespace)  # the check cell fails with NotImplementedError, not NameError
    with pytest.raises(NotImplementedError, match="Exercise 1: score"):
        exec("assert score == 3.93", namespace)


def test_top_level_def_keeps_header_decorator_and_docstring():
    source = textwrap.dedent(
        '''\
        import functools
        # BEGIN SOLUTION
        @functools.lru_cache
        def count(n,
                  k=2):
            """How many."""
            return n * k

        answer = count(3)
        # END SOLUTION'''
    )
    stub, names = stub_source(source, "Exercise 4")
    assert names == ["count", "answer"]
    assert '@functools.lru_cache\ndef count(n,\n          k=2):\n    """How many."""\n' in stub
    namespace = run(stub)
    with pytest.raises(NotImplementedError, match="Exercise 4: write the body of count"):
        namespace["count"](1)
    with pytest.raises(NotImplementedError, match="Exercise 4: answer"):
        float(namespace["answer"])


def test_a_class_to_write_becomes_a_placeholder_that_fails_when_called():
    stub, names = stub_source("# BEGIN SOLUTION\nclass Net:\n    pass\n# END SOLUTION", "Exercise 5")
    assert names == ["Net"]
    with pytest.raises(NotImplementedError, match="Exercise 5: Net"):
        run(stub)["Net"]()


def test_several_regions_and_marker_spellings():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n\n\n"
    source += "# BEGIN SOLUTION\ny = 1\n# END SOLUTION\n"
    stub, names = stub_source(source, "Exercise 6")
    assert names == ["f", "y"]
    assert "return x" not in stub and "y = 1" not in stub
    ast.parse(stub)


def test_region_without_statements_or_unparsable_still_raises():
    for region in ("print('hi')", "x = (1,"):
        stub, names = stub_source(f"# BEGIN SOLUTION\n{region}\n# END SOLUTION", "Exercise 7")
        assert names == []
        with pytest.raises(NotImplementedError, match="Exercise 7"):
            run(stub)


def test_cells_without_markers_are_unchanged():
    source = "x = 1  # mentions BEGIN SOLUTION in a comment, not as a marker line\n"
    assert stub_source(source) == (source, [])


@pytest.mark.parametrize(
    "source,words",
    [
        ("# BEGIN SOLUTION\nx = 1\n", "line 1: '# BEGIN SOLUTION' without an '# END SOLUTION'"),
        ("x = 1\n# END SOLUTION\n", "line 2: '# END SOLUTION' without a '# BEGIN SOLUTION'"),
        ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION\n", "line 2: '# BEGIN SOLUTION' inside the region"),
    ],
)
def test_broken_markers_are_reported_with_their_line(source, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        solution_regions(source)


# ---------------------------------------------------------------- whole notebooks


def toy_notebook():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    cells = [
        md("# Toy\n\nSolutions sit between `# BEGIN SOLUTION` and `# END SOLUTION` (prose, not markers)."),
        code("import torch\nimport course_lib as cl", execution_count=1),
        md("### Exercise 1 — a value\n\nType it in."),
        code("# BEGIN SOLUTION\nanswer = torch.tensor(2.0)\n# END SOLUTION", execution_count=2),
        md("The check:"),
        code("cl.check_close(answer, torch.tensor(2.0), 'answer')", execution_count=3),
        md("**Exercise 2 — a function.**"),
        code("def double(x):\n    # BEGIN SOLUTION\n    return 2 * x\n    # END SOLUTION", execution_count=4),
        code("print('not a check')", execution_count=5),
        code("assert double(3) == 6", execution_count=6),
        code("# Exercise 3: no heading above\n# BEGIN SOLUTION\nthree = 3\n# END SOLUTION", execution_count=7),
        code("assert three == 3", execution_count=8),
        md("## Summary"),
    ]
    for cell in cells[1:]:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", text="out\n")]
            cell.metadata["execution"] = {"iopub.status.idle": "2026-01-01T00:00:00Z"}
    kernelspec = {"name": "python3", "display_name": "Python 3"}
    return nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": kernelspec})


def test_find_exercises_labels_and_check_cells():
    exercises = find_exercises(toy_notebook())
    assert [(e.label, e.solution_cell, e.check_cell) for e in exercises] == [
        ("Exercise 1", 3, 5),
        ("Exercise 2", 7, 9),
        ("Exercise 3", 10, 11),
    ]


def test_student_notebook_stubs_clears_and_keeps_the_rest():
    nb = toy_notebook()
    new, exercises = student_notebook(nb)
    assert "BEGIN SOLUTION" in "".join(nb.cells[3].source)  # the input is not modified
    assert new.cells[1].id == "student-version-note" and "Student version" in new.cells[1].source
    assert len(new.cells) == len(nb.cells) + 1
    assert new.cells[0].source == nb.cells[0].source  # markdown that mentions the markers is left alone
    assert [e.names for e in exercises] == [["answer"], ["double"], ["three"]]
    for e in exercises:
        assert "BEGIN SOLUTION" not in new.cells[e.solution_cell].source
        assert new.cells[e.check_cell].source == nb.cells[e.check_cell - 1].source  # checks are kept as they are
    for cell in new.cells:
        assert "execution" not in cell.metadata
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    nbformat.validate(new)


HIDDEN = (
    "cl.check_close(answer, torch.tensor(2.0), 'answer')\n"
    "### BEGIN HIDDEN TESTS\nassert float(answer) == 2.0\n### END HIDDEN TESTS"
)


def test_hidden_tests_leave_the_student_version_and_stay_in_the_nbgrader_source():
    nb = toy_notebook()
    nb.cells[5].source = HIDDEN
    new, exercises = student_notebook(nb)
    assert new.cells[exercises[0].check_cell].source == "cl.check_close(answer, torch.tensor(2.0), 'answer')"
    source, exercises = nbgrader_notebook(nb, "00_toy", points=2)
    visible, hidden = source.cells[5], source.cells[6]  # partial credit: the hidden tests are graded on their own
    assert (exercises[0].check_cell, exercises[0].hidden_cell) == (5, 6)
    assert visible.source == "cl.check_close(answer, torch.tensor(2.0), 'answer')"
    assert hidden.source.splitlines()[1:] == HIDDEN.splitlines()[1:]  # nbgrader's own markers, to hide and restore
    assert hidden.source.startswith("# Exercise 1: its hidden tests") and hidden.id != visible.id
    assert visible.metadata.nbgrader.points == hidden.metadata.nbgrader.points == 1  # half of 2 each
    assert hidden.metadata.nbgrader.grade_id == "00_toy-exercise-1-hidden-tests" and hidden.metadata.nbgrader.grade
    assert all(source.cells[e.solution_cell].metadata.nbgrader.solution for e in exercises)  # indices follow


@pytest.mark.parametrize(
    "text, words",
    [
        ("x\n### BEGIN HIDDEN TESTS\ny", "without an"),
        ("x\n### END HIDDEN TESTS", "without a"),
        ("### BEGIN HIDDEN TESTS\n### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS", "inside a hidden-test region"),
    ],
)
def test_broken_hidden_test_markers_are_reported(text, words):
    with pytest.raises(ValueError, match=words):
        without_hidden_tests(text)


def test_variant_seed_is_written_over_the_variant_line():
    nb = toy_notebook()
    nb.cells[1].source += "\nVARIANT = 0  # your own numbers"
    for seed, written in (("s1234567", "VARIANT = 's1234567'"), ("42", "VARIANT = 42"), (7, "VARIANT = 7")):
        new, _ = student_notebook(nb, variant_seed=seed)
        assert new.cells[2].source.endswith(written + "  # your own numbers") and "VARIANT = 0" in nb.cells[1].source
    assert not set_variant(toy_notebook(), "s1")  # a notebook without the line is left alone


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_every_check_cell_has_hidden_tests_and_only_check_cells_do(nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    exercises = find_exercises(nb)
    checks = {e.check_cell for e in exercises}
    for i, cell in enumerate(nb.cells):
        has_hidden = cell.cell_type == "code" and HIDDEN_BEGIN in cell.source
        if i in checks:
            label = next(e.label for e in exercises if e.check_cell == i)
            assert has_hidden, f"{nb_path.name}: the check of {label} (cell {i}) has no hidden tests"
            assert without_hidden_tests(cell.source).strip(), f"{nb_path.name}: cell {i}: nothing visible"
        else:
            assert not has_hidden, f"{nb_path.name}: cell {i} has hidden tests but is no exercise's check cell"


def test_by_hand_exercises_draw_their_numbers_from_the_variant():
    for nb_path in NOTEBOOKS:
        nb = nbformat.read(nb_path, as_version=4)
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        lines = re.findall(r"(?m)^VARIANT = .*$", code)
        uses = "variant_numbers(VARIANT" in code
        assert len(lines) == (1 if uses else 0), (
            f"{nb_path.name}: {len(lines)} VARIANT lines, variant_numbers used: {uses}"
        )
        assert not lines or lines[0].startswith("VARIANT = 0"), f"{nb_path.name}: {lines[0]} (the course's is 0)"


def test_nbgrader_notebook_tags_cells_and_hides_prose_markers():
    nb, exercises = nbgrader_notebook(toy_notebook(), "00_toy", points=2)
    assert [nb.cells[e.solution_cell].metadata["nbgrader"]["grade_id"] for e in exercises] == [
        "00_toy-exercise-1-answer",
        "00_toy-exercise-2-answer",
        "00_toy-exercise-3-answer",
    ]
    solution, tests = nb.cells[3].metadata["nbgrader"], nb.cells[5].metadata["nbgrader"]
    assert solution == {"grade": False, "grade_id": "00_toy-exercise-1-answer", "locked": False,
                        "schema_version": 3, "solution": True, "task": False}  # fmt: skip
    assert tests["grade"] and tests["locked"] and tests["points"] == 2 and not tests["solution"]
    assert "BEGIN SOLUTION" not in nb.cells[0].source and "BEGIN\u00a0SOLUTION" in nb.cells[0].source
    assert nb.cells[3].source == "# BEGIN SOLUTION\nanswer = torch.tensor(2.0)\n# END SOLUTION"  # solutions stay
    assert nb.cells[8].metadata["nbgrader"]["locked"]  # an ordinary code cell: locked, restored before grading
    assert not nb.cells[8].metadata["nbgrader"]["grade"] and not nb.cells[8].metadata["nbgrader"]["solution"]
    assert all(c.outputs == [] for c in nb.cells if c.cell_type == "code")


def test_nbgrader_source_leaves_only_the_variant_line_editable():
    nb = toy_notebook()
    nb.cells[1].source += "\nVARIANT = 0  # your own numbers\nnumbers = cl.variant_numbers(VARIANT, 'x', 1, int)"
    source, exercises = nbgrader_notebook(nb, "00_toy")
    note = YOUR_VARIANT["en"]  # what to write there, and why (a twentieth trial: the text's numbers scored zero)
    assert source.cells[1].source == note + "VARIANT = 0  # your own numbers"
    assert "nbgrader" not in source.cells[1].metadata and "nbgrader user name" in note
    assert "VARIANT = 0" not in source.cells[2].source and source.cells[2].metadata["nbgrader"]["locked"]
    assert [(e.solution_cell, e.check_cell) for e in exercises] == [(4, 6), (8, 10), (11, 12)]  # moved down by one
    for e in exercises:
        assert source.cells[e.solution_cell].metadata["nbgrader"]["solution"]
        assert source.cells[e.check_cell].metadata["nbgrader"]["grade"]
    alone = toy_notebook()
    alone.cells.insert(2, nbformat.v4.new_code_cell("VARIANT = 0"))
    source, _ = nbgrader_notebook(alone, "00_toy")
    assert source.cells[2].source == note + "VARIANT = 0" and "nbgrader" not in source.cells[2].metadata


def test_nbgrader_accepts_the_export():
    """With nbgrader installed, its own solution clearing and metadata check accept the export."""
    pytest.importorskip("nbgrader")
    from nbgrader.preprocessors import CheckCellMetadata, ClearSolutions

    nb, _ = nbgrader_notebook(nbformat.read(NOTEBOOKS[0], as_version=4), NOTEBOOKS[0].stem)
    nb, _ = CheckCellMetadata().preprocess(nb, {})
    released, _ = ClearSolutions().preprocess(nb, {})
    assert "BEGIN SOLUTION" not in "".join(c.source for c in released.cells)


WRITTEN = "**Exercise 1, in words.** Why 2?\n\n**Model answer.** Twice one.\n\n**Marking (1 point).** 1: says twice."


def with_a_written_answer():
    nb = toy_notebook()
    nb.cells.insert(6, nbformat.v4.new_markdown_cell(WRITTEN, metadata={"tags": ["written-answer"]}))
    return nb


def test_a_written_answer_keeps_its_question_for_students_and_its_marking_for_the_grader():
    nb = with_a_written_answer()
    assert [(e.check_cell, e.written_cell) for e in find_exercises(nb)] == [(5, 6), (10, None), (12, None)]
    assert written_parts(WRITTEN) == ("**Exercise 1, in words.** Why 2?", WRITTEN[WRITTEN.index("**Model") :])
    student, exercises = student_notebook(nb)
    assert student.cells[exercises[0].written_cell].source == f"**Exercise 1, in words.** Why 2?\n\n{WRITTEN_STUB}"
    nb.cells[1].source += "\nVARIANT = 0"  # the VARIANT cell of its own and the hidden tests move cells down
    nb.cells[5].source += f"\n{HIDDEN_BEGIN}\ncl.check_close(answer, torch.tensor(2.0), 'answer')\n### END HIDDEN TESTS"
    source, exercises = nbgrader_notebook(nb, "00_toy", points=2)
    cell = source.cells[exercises[0].written_cell]
    assert (exercises[0].check_cell, exercises[0].hidden_cell, exercises[0].written_cell) == (6, 7, 8)
    assert cell.metadata["nbgrader"] == {"grade": True, "grade_id": "00_toy-exercise-1-written", "locked": False,
                                         "points": 2, "schema_version": 3, "solution": True, "task": False}  # fmt: skip
    assert cell.source.split("\n")[:3] == ["**Exercise 1, in words.** Why 2?", "", "### BEGIN SOLUTION"]
    assert cell.source.endswith("says twice.\n### END SOLUTION")
    with pytest.raises(ValueError, match="Model answer"):
        written_parts("Why 2? Because.")


def test_nbgrader_releases_a_written_answer_as_its_question_and_a_place_to_write():
    pytest.importorskip("nbgrader")
    from nbgrader.preprocessors import CheckCellMetadata, ClearSolutions

    nb, exercises = nbgrader_notebook(with_a_written_answer(), "00_toy")
    nb, _ = CheckCellMetadata().preprocess(nb, {})
    released, _ = ClearSolutions().preprocess(nb, {})
    text = released.cells[exercises[0].written_cell].source
    assert text.startswith("**Exercise 1, in words.** Why 2?") and "Model answer" not in text and "Marking" not in text


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_every_notebook_has_three_checked_exercises_and_a_runnable_student_version(nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    exercises = find_exercises(nb)
    assert len(exercises) >= 3, f"{nb_path.name}: {len(exercises)} exercise(s), the course asks for at least 3"
    new, stubbed = student_notebook(nb)
    for e in stubbed:
        assert e.check_cell is not None, f"{nb_path.name}: {e.label} (cell {e.solution_cell}) has no check after it"
        assert e.names, f"{nb_path.name}: {e.label}: the stub names nothing for the student to write"
        stub = new.cells[e.solution_cell].source
        ast.parse(python_lines(stub))
        original = nb.cells[e.solution_cell - 1].source.split("\n")
        solution_lines = {
            line.strip()
            for begin, end, _ in solution_regions(nb.cells[e.solution_cell - 1].source)
            for line in original[begin + 1 : end]
            if line.strip() and not line.strip().startswith("#")
        }
        leaked = [line for line in solution_lines if line in stub.split("\n") or f"    {line}" in stub]
        assert not leaked, f"{nb_path.name}: {e.label}: solution lines left in the student version: {leaked}"
    for cell in new.cells:
        if cell.cell_type == "code":
            assert not solution_regions(cell.source)
            ast.parse(python_lines(cell.source))


def notebooks_to_execute():
    choice = os.environ.get("COURSE_STUDENT_EXECUTE", "00,01,03")
    if choice == "all":
        return NOTEBOOKS
    numbers = {n.strip() for n in choice.split(",") if n.strip()}
    return [nb for nb in NOTEBOOKS if nb.name[:2] in numbers]


EXECUTED = notebooks_to_execute()
ONE_THREAD = {name: value for name, value in nbval_env.SET.items() if name.endswith("_NUM_THREADS")}


@pytest.fixture(scope="module")
def kernel_server():
    """tools.warm_kernel's server, started with the kernels' environment (one BLAS thread), or None where it does not
    fork: each notebook's kernel is still a process of its own in which nothing has run, forked from the server as
    nbval's are (tests/test_warm_kernel.py: it sees what a cold one sees), and the imports under the kernel, torch's
    among them, are paid once for the notebooks executed here instead of once each."""
    if sys.platform != "linux" or os.environ.get(warm_kernel.SWITCH_ENV) == "0":
        yield None
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(warm_kernel, "_server", None)
        for name, value in ONE_THREAD.items():
            patch.setenv(name, value)
        path = warm_kernel._start_server()
        process = warm_kernel._server[0]
    yield path
    process.stdin.close()  # the server's signal to stop
    process.wait(timeout=60)
    process.stdout.close()
    os.unlink(path)
    os.rmdir(os.path.dirname(path))


def warm_kernel_manager():
    """nbclient's kernel manager, its ipykernel command line turned into tools.warm_kernel's launcher (which starts
    the kernel cold, saying so, where the server cannot fork it)."""
    from jupyter_client import AsyncKernelManager

    class WarmKernelManager(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            command = super().format_kernel_cmd(extra_arguments)
            if command[:3] == [sys.executable, "-m", "ipykernel_launcher"]:
                command = [sys.executable, os.path.abspath(warm_kernel.__file__), "launch", *command[3:]]
            return command

    return WarmKernelManager


@pytest.mark.parametrize("nb_path", EXECUTED, ids=[nb.name for nb in EXECUTED])
def test_student_version_runs_and_every_check_fails_with_not_implemented_error(nb_path, tmp_path, kernel_server):
    from nbclient import NotebookClient

    new, exercises = student_notebook(nbformat.read(nb_path, as_version=4))
    # One BLAS/OpenMP thread, as in strict nbval: the notebook's tensors are small, and threads that spin while waiting
    # for a core (two pytest workers on two cores) cost 01 here 80 s of CPU instead of 11.
    env, warm = {**os.environ, **ONE_THREAD}, {}
    if kernel_server:
        env[warm_kernel.SOCKET_ENV], warm["kernel_manager_class"] = kernel_server, warm_kernel_manager()
    client = NotebookClient(new, timeout=600, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}}, **warm)  # fmt: skip
    client.execute(env=env)
    checks = {e.check_cell: e for e in exercises}
    solutions = {e.solution_cell for e in exercises}
    for i, cell in enumerate(new.cells):
        if cell.cell_type != "code":
            continue
        errors = [(o.ename, o.evalue) for o in cell.outputs if o.output_type == "error"]
        if i in checks:
            assert errors, f"{nb_path.name}: the check of {checks[i].label} (cell {i}) passed without an answer"
            assert errors[0][0] == "NotImplementedError", f"{nb_path.name}: cell {i} failed with {errors}"
            assert checks[i].label in errors[0][1], errors
        elif i in solutions:  # a solution cell may call its own function (then it raises too), nothing else
            assert all(name == "NotImplementedError" for name, _ in errors), f"{nb_path.name}: cell {i}: {errors}"
        else:
            assert not errors, f"{nb_path.name}: cell {i} is neither solution nor check but failed: {errors}"


# ---------------------------------------------------------------- the command line and make student


def test_command_line_writes_every_notebook(tmp_path, capsys):
    assert student.main([str(NOTEBOOKS_DIR), "--out", str(tmp_path / "student")]) == 0
    written = sorted(p.name for p in (tmp_path / "student").glob("*.ipynb"))
    assert written == sorted(p.name for p in NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
    assert "exercise(s) ->" in capsys.readouterr().out
    assert student.main([str(NOTEBOOKS[0]), "--out", str(tmp_path / "nbg"), "--nbgrader"]) == 0
    exported = nbformat.read(tmp_path / "nbg" / NOTEBOOKS[0].name, as_version=4)
    assert any("nbgrader" in c.metadata for c in exported.cells)


def test_command_line_refuses_to_overwrite_the_notebooks(capsys):
    with pytest.raises(SystemExit):
        student.main([str(NOTEBOOKS_DIR), "--out", str(NOTEBOOKS_DIR)])
    assert "would overwrite them" in capsys.readouterr().err


def test_make_student_target_and_gitignore():
    makefile = (ROOT / "Makefile").read_text()
    assert (
        re.search(r"^student:", makefile, re.MULTILINE)
        and "course_lib.classroom.student notebooks --out student" in makefile
    )
    assert "student/" in (ROOT / ".gitignore").read_text().split()


def test_a_chinese_notebooks_student_version_speaks_chinese_and_an_english_one_english():
    """The twelfth trial: the Chinese edition's stubs, their placeholders' messages and the banner were English.
    "# YOUR CODE HERE" and "# YOUR ANSWER HERE" stay in both: the notebooks' text quotes them."""
    name = "04_scaling_and_softmax_gradient.ipynb"
    zh, zh_exercises = student_notebook(nbformat.read(NOTEBOOKS_DIR / "zh" / name, as_version=4))
    en, en_exercises = student_notebook(nbformat.read(NOTEBOOKS_DIR / name, as_version=4))
    zh_stubs = [zh.cells[ex.solution_cell].source for ex in zh_exercises]
    en_stubs = [en.cells[ex.solution_cell].source for ex in en_exercises]
    assert zh.cells[1].source.startswith("> **学生版。**") and en.cells[1].source.startswith("> **Student version.**")
    assert zh_stubs[0].startswith("# YOUR ANSWER HERE：") and 'J_ex1 = unanswered("练习 1：J_ex1")' in zh_stubs[0]
    assert 'raise NotImplementedError("练习 2：写出 softmax_backward 的函数体")' in zh_stubs[1]
    assert (
        'J_ex1 = unanswered("Exercise 1: J_ex1")' in en_stubs[0] and "write the body of softmax_backward" in en_stubs[1]
    )
    graded, _ = nbgrader_notebook(nbformat.read(NOTEBOOKS_DIR / "zh" / name, as_version=4), "a04zh")
    notes = [c.source.splitlines()[0] for c in graded.cells if c.get("id", "").endswith("-hidden")]
    assert notes and all(n.startswith("# 练习 ") and "隐藏测试" in n for n in notes), notes
    for path in sorted((NOTEBOOKS_DIR / "zh").glob("[0-9][0-9]_*.ipynb")):  # no stub of the edition in English
        release, exercises = student_notebook(nbformat.read(path, as_version=4))
        for ex in exercises:
            said = [line for line in release.cells[ex.solution_cell].source.splitlines()
                    if re.search(r'unanswered\("|NotImplementedError\("|YOUR ANSWER HERE', line)]  # fmt: skip
            assert said and not re.search(r"Exercise|write the body|replace each", "\n".join(said)), (path.name, said)
