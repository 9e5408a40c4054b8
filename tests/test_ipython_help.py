"""IPython's help in a graded kernel (course_lib.classroom.unwatched.helping): a twenty-third trial's honest scratch
cell ``cl.padding_mask?`` read the function's ``__code__`` (IPython's inspector does, for the text it prints), was
refused as "a copy of the course's code", and every later exercise scored zero. The help is now the inspector's own
reading; a cell that takes the code object itself is still refused. Run in a real kernel, as nbgrader runs one."""

import os
import queue

import pytest

SETUP = (
    "import course_lib as cl\nfrom course_lib.classroom.watch import watch_cells\nwatch_cells('_marker', lambda: None)"
)
HELP = ["cl.padding_mask?", "cl.padding_mask??", "%pdoc cl.causal_mask", "cl.*mask*?"]


def _outcomes(*cells: str) -> list[str]:
    """For each cell, run in one fresh kernel after the guard's snapshot line: "OK", or the error's first words; then
    a graded test cell's line (naming the marker), which a refusal before it makes "Not graded"."""
    manager = pytest.importorskip("jupyter_client.manager")
    km, kc = manager.start_new_kernel(kernel_name="python3", env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        out = []
        for cell in (SETUP, *cells, "_marker = 1"):
            reply = kc.execute_interactive(cell, timeout=60, output_hook=lambda msg: None)
            content = reply["content"]
            out.append("OK" if content["status"] == "ok" else f"{content['ename']}: {content['evalue'][:60]}")
        return out[1:]
    except queue.Empty:  # pragma: no cover - a kernel that hangs
        pytest.fail("the kernel did not answer")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_ipython_help_on_a_course_function_is_not_refused_in_a_graded_kernel():
    assert _outcomes(*HELP) == ["OK"] * (len(HELP) + 1)


def test_the_code_object_taken_by_a_cell_is_refused_and_the_next_test_cell_not_graded():
    taken, graded = _outcomes("code = cl.padding_mask.__code__")
    assert taken.startswith("Refused") and "Not graded" in graded, (taken, graded)
