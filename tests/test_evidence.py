"""course_lib.classroom.evidence and .witness: a graded test cell scores only with evidence, signed in the kernel
with the grader's key, that it ran as nbgrader wrote it.

The attacks below reach the kernel directly (the fourteenth lecturer's trial reached it by routes the reading of the
cells now flags): this is the layer under the reading, tested alone, in a real Jupyter kernel as nbgrader runs one.
"""

import copy
import json
import os
import sys
import textwrap

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from course_lib.classroom.evidence import RAN, GiveKey, KeepNotGraded, evidence_line
from course_lib.classroom.witness import MARK

SETUP = (
    "import course_lib as cl\nok = 0\n"
    "_course_integrity = __import__('course_lib.classroom.snapshot').classroom.snapshot.snapshot({})"
)


def _graded(grade_id: str, body: str) -> nbformat.NotebookNode:
    """A graded test cell as the guard writes it: the verification first, the evidence line last."""
    cell = new_code_cell(f"_course_integrity(globals(), [], [])\n{body}\n{RAN.format(grade_id)}")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "points": 1, "locked": True, "solution": False}
    return cell


def _errors(cell: nbformat.NotebookNode) -> list[str]:
    return [out.get("evalue", "") for out in cell.outputs if out.get("output_type") == "error"]


def _run(attack: str, folder) -> tuple[list, list]:
    """Set-up, a passing test cell, ``attack``, a test cell that fails unless the attack helps (``ok`` is 0) and a
    passing one, run as nbgrader runs them between GiveKey and KeepNotGraded: (outputs as the kernel wrote them,
    as they count)."""
    nbclient = pytest.importorskip("nbclient")
    cells = [new_code_cell(SETUP), _graded("t1", "assert 1 + 1 == 2"), new_code_cell(attack),
             _graded("t2", "cl.check_answer(ok, 1)"), _graded("t3", "print('checked')")]  # fmt: skip
    resources = {"metadata": {"path": str(folder)}}
    nb, resources = GiveKey().preprocess(new_notebook(cells=cells), resources)
    assert nb.cells[0].metadata["course_evidence"] and len(os.listdir(folder)) == 1  # the key file, for the kernel
    nbclient.NotebookClient(nb, timeout=120, allow_errors=True, kernel_name="python3", resources=resources).execute()
    assert not [name for name in os.listdir(folder) if name.startswith(".course-key")], "the grader's cell deleted it"
    ran = copy.deepcopy(nb)
    nb, _ = KeepNotGraded().preprocess(nb, resources)
    assert len(nb.cells) == 5 and "course_evidence" not in nb.cells[0].metadata, "the grader's cell taken out"
    return ran.cells[1:], nb.cells


def test_an_honest_run_shows_its_evidence_which_the_grader_checks_and_takes_out(tmp_path):
    ran, kept = _run("x = 1", tmp_path)
    (failed,) = _errors(ran[3])  # the checker's own message: ok is 0, not 1
    assert [o.text.split()[0] for o in ran[1].outputs] == [MARK.rstrip()] and not failed.startswith("Not graded")
    assert kept[1].outputs == [] and _errors(kept[3]) == [failed] and [o.text for o in kept[4].outputs] == ["checked\n"]


KERNEL = """
kernel = get_ipython().kernel
before = kernel.do_execute

async def do_execute(code, *args, **kwargs):
    if "_course_" in code:
        code = {}
    return await before(code, *args, **kwargs)

kernel.do_execute = do_execute
"""
FAKE = (
    "'fake = dict(globals(), ok=1)\\nexec(compile(' + repr(code.rsplit(chr(10), 1)[0]) + ', '"
    "'get_ipython().compile.get_code_name(' + repr(code) + ', None, 0), \"exec\"), fake)\\n' "
    "+ code.rsplit(chr(10), 1)[1]"
)
ATTACKS = {  # the kernel made to run each test cell as something else (the fourteenth trial's s01, and sharper)
    "pass": KERNEL.format("'pass'"),
    "the evidence line alone": KERNEL.format("code.rsplit(chr(10), 1)[1]"),
    "the check taken out": KERNEL.format("code.replace('cl.check_answer(ok, 1)', 'pass')"),
    "the cell's own code in other globals": KERNEL.format(FAKE),
    "its statements one by one, the failing one skipped": KERNEL.format(
        "'\\n'.join(line for line in code.splitlines() if 'check_answer' not in line)"
    ),
}


SWAP = """
import course_lib as cl

shell, real, kept = get_ipython(), get_ipython().run_code, cl.check_answer

async def run_code(code, *args, **kwargs):  # the checker a no-op while a statement that names it runs
    if "check_answer" not in code.co_names:
        return await real(code, *args, **kwargs)
    cl.check_answer = lambda *args, **kwargs: None
    try:
        return await real(code, *args, **kwargs)
    finally:
        cl.check_answer = kept

shell.run_code = run_code
"""
ATTACKS["a checker swapped only while a statement runs"] = SWAP
MODULE = "import sys\nsys.modules['course_lib'].check_answer = lambda *args, **kwargs: None\n"
ATTACKS["a module the cell wrote, loaded by name (the fifteenth trial's a02)"] = (
    f"with open('figure_style.py', 'w') as file:\n    file.write({MODULE!r})\n"
    "import matplotlib.pyplot as plt\n"
    "try:\n    plt.switch_backend('module://figure_style')\nexcept Exception as error:\n    print(error)"
)


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_test_cell_the_kernel_ran_as_something_else_is_not_graded(name, tmp_path):
    ran, kept = _run(ATTACKS[name], tmp_path)
    assert kept[1].outputs == [], "the test cell before the attack keeps its points"
    for cell in kept[3:]:
        (error,) = _errors(cell)
        assert error.startswith("Not graded"), (name, error, ran)
    if "module" in name:  # refused as it loaded: the loading cell says why
        assert "from outside the installed libraries" in json.dumps(ran[2].outputs), ran[2].outputs


def test_a_tracer_left_on_costs_the_evidence_of_every_later_test_cell(tmp_path):
    ran, kept = _run("import sys\nsys.settrace(lambda *args: None)", tmp_path)
    why = "a tracer or profiler was on while it ran"
    assert _errors(ran[4]) == [f"Not graded: no evidence that this test cell ran as nbgrader wrote it ({why})"]
    assert _errors(kept[4]) == _errors(ran[4])


def test_what_would_reach_the_signer_is_refused(tmp_path):
    """gc's lists of objects hold the signing hook (asked for, every later check says "Not graded", even if the cell
    caught the refusal: classroom.watch); another audit hook would see every event; /proc's memory holds the key, and
    its maps say where memory lies (the fifteenth trial read it as //proc/self/mem); a pickle runs what it names (the
    seventeenth trial's, in a data file)."""
    attack = textwrap.dedent(
        """
        import gc, sys
        for ask in (gc.get_objects, lambda: open(f"/proc/{__import__('os').getpid()}/mem", "rb"),
                    lambda: open("//proc/self/maps")):
            try:
                ask()
                print("given")
            except Exception as error:
                print("refused", str(error)[:40])
        import io, pickle
        try:
            pickle.loads(pickle.dumps(print))
            print("given")
        except Exception as error:
            print("refused", str(error)[:40])
        if hasattr(sys, "monitoring"):  # Python 3.12 and later: a tool's callback sees every line, as a tracer does
            try:
                sys.monitoring.use_tool_id(4, "cell")
                sys.monitoring.register_callback(4, sys.monitoring.events.LINE, lambda *args: None)
                print("given")
            except Exception as error:
                print("refused", str(error)[:40])
        sys.addaudithook(lambda *args: print("seen"))  # refused, silently: no hook added
        ok = 1
        """
    )
    ran, kept = _run(attack, tmp_path)
    printed = "".join(o.text for o in ran[2].outputs if o.output_type == "stream").splitlines()
    assert len(printed) == 4 + hasattr(sys, "monitoring") and all(line.startswith("refused") for line in printed), (
        printed
    )
    assert "seen" not in json.dumps(ran[3].outputs), "no hook of the cell's was added"
    assert all(_errors(c)[0].startswith("Not graded: a cell asked for gc's objects") for c in kept[3:]), "for good"


def test_a_test_cell_without_its_evidence_scores_zero_and_one_that_failed_keeps_its_error():
    key = b"k" * 32
    nb = new_notebook(cells=[_graded("a", "pass"), _graded("b", "pass"), _graded("c", "pass"), _graded("d", "pass")])
    nb.cells[0].outputs = [new_output("stream", name="stdout", text=f"checked\n{evidence_line(key, 'a')}\n")]
    nb.cells[1].outputs = [new_output("stream", name="stdout", text=f"{evidence_line(key, 'a')}\n")]  # a's, not b's
    nb.cells[2].outputs = [new_output("error", ename="AssertionError", evalue="wrong", traceback=[])]
    nb.cells[3].outputs = [new_output("stream", name="stdout", text=f"{MARK} {'0' * 64}\n")]  # made up
    nb, _ = KeepNotGraded().preprocess(nb, {"course_evidence": (key, None)})
    assert [o.text for o in nb.cells[0].outputs] == ["checked\n"]
    assert [_errors(c) for c in nb.cells[1:]] == [
        ["Not graded: no evidence that this test cell ran as nbgrader wrote it"],
        ["wrong"],
        ["Not graded: no evidence that this test cell ran as nbgrader wrote it"],
    ]


def test_the_key_is_zeroed_once_its_two_hash_states_are_made():
    import hmac

    from course_lib.classroom.witness import _pads

    key = bytearray(range(32))
    inner, outer = _pads(key)
    inside = inner.copy()
    inside.update(b"t1")
    outside = outer.copy()
    outside.update(inside.digest())
    assert key == bytearray(32), "no copy of the key is left in the buffer it came in"
    assert outside.hexdigest() == hmac.new(bytes(range(32)), b"t1", "sha256").hexdigest(), "HMAC-SHA256 as standard"


def test_a_graded_test_cell_that_passed_and_printed_nothing_is_flagged():
    from course_lib.classroom.flags import _silent

    passed = _graded("t1", "cl.check_answer(a, 1)")
    passed.outputs = [new_output("stream", name="stdout", text="✓ a is correct\n")]
    silent, asserts = _graded("t2", "cl.check_answer(a, 1)"), _graded("t4", "assert a == 1")  # (bare asserts: silent)
    failed = _graded("t3", "cl.check_answer(a, 1)")
    failed.outputs = [new_output("error", ename="AssertionError", evalue="wrong", traceback=[])]
    answer = new_code_cell("a = 1")
    answer.metadata["nbgrader"] = {"grade": True, "solution": True, "grade_id": "a"}
    assert [_silent(cell) for cell in (passed, silent, failed, answer, asserts)] == [False, True, False, False, False]
