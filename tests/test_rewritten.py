"""course_lib.classroom.rewritten, in an IPython shell as a graded kernel runs it (a subprocess: the audit hook stays
for a process's life): a graded test cell that a transformer rewrote is refused, "Not graded"; one run as written
is graded as usual, and a cell that is not a graded test is left alone."""

import json
import subprocess
import sys
import textwrap

import pytest

from course_lib.classroom import rewritten

pytest.importorskip("IPython")

SHELL = textwrap.dedent(
    """
    import json, sys
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    def run(source):
        result = shell.run_cell(source, store_history=True)  # as a kernel runs a notebook's cells
        error = result.error_in_exec or result.error_before_exec
        return None if error is None else f"{type(error).__name__}: {error}"

    print(json.dumps([run(source) for source in json.loads(sys.argv[1])]))
    """
)
SETUP = (  # the guard's line at the end of the first locked cell
    "import course_lib as cl\n"
    "_course_integrity = __import__('course_lib.classroom.snapshot').classroom.snapshot.snapshot({})"
)
GRADED = "_course_integrity(globals(), [], [])\nassert 1 + 1 == 2\n"


def _run(*cells: str) -> list[str | None]:
    done = subprocess.run([sys.executable, "-c", SHELL, json.dumps([SETUP, *cells])], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])[1:]


def test_a_graded_cell_rewritten_by_a_transformer_is_not_graded_and_an_unrewritten_one_is():
    """The twelfth trial's b_transform and b_transform3: the shell's post transformers, the manager's cleanup ones."""
    post = (
        "get_ipython().input_transformers_post.append(lambda lines: ['pass\\n'] if '_course_' in ''.join(lines) "
        "else lines)"
    )
    cleanup = "get_ipython().input_transformer_manager.cleanup_transforms.append(lambda lines: ['pass\\n'])"
    for attack in (post, cleanup):
        before, installed, graded, plain = _run(GRADED, attack, GRADED, "x = 1")
        assert before is None and installed is None and plain is None, (before, installed, plain)
        assert graded.startswith("Refused: Not graded: a cell changed how the kernel reads the cells after it (an "
                                 "input transformer)"), graded  # fmt: skip


def test_an_ast_transformer_added_after_the_snapshot_is_refused_where_a_graded_cell_runs():
    strip = textwrap.dedent(
        """
        import ast

        class Quiet(ast.NodeTransformer):
            def visit_Assert(self, node):
                return ast.Pass()

        get_ipython().ast_transformers.append(Quiet())
        """
    )
    installed, graded = _run(strip, GRADED.replace("1 + 1 == 2", "1 + 1 == 3"))
    assert installed is None and graded.startswith("Refused: Not graded: ") and "an AST transformer" in graded, graded


def test_a_graded_cell_with_ipython_syntax_is_read_as_ipython_reads_it():
    """A magic in a test cell is IPython's own transformation, not a rewriting."""
    (graded,) = _run(GRADED + "%time y = 2\n")
    assert graded is None


def test_in_a_jupyter_kernel_the_rewritten_graded_cell_is_refused_and_the_others_run():
    """ipykernel runs IPython's code in tasks of its own (the stack does not lead from a statement to its cell): the
    same refusal where nbgrader runs a notebook, and a module imported while a graded cell runs is not refused."""
    nbclient = pytest.importorskip("nbclient")
    import nbformat

    quiet = (
        "exit._ip.input_transformers_post.append(lambda lines: ['pass\\n'] if '_course_' in ''.join(lines) else lines)"
    )
    cells = [SETUP, GRADED + "import colorsys\n", quiet, GRADED.replace("== 2", "== 3"), "x = 1\nprint(x)"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    nbclient.NotebookClient(nb, timeout=120, allow_errors=True, kernel_name="python3").execute()
    errors = [[f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error"] for cell in nb.cells]
    assert errors[:3] == [[], [], []] and errors[4] == [] and nb.cells[4].outputs[0].text == "1\n", errors
    assert errors[3] == [f"Refused: Not graded: {rewritten.WHY.format('an input transformer')}"], errors
