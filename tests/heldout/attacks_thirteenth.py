"""Held-out attacks: the thirteenth lecturer's trial (2026-12-04), on notebook 04's exercise 1 (``J_ex1``, by hand),
each appended to the reference answer; tests/test_grading.py grades them with nbgrader. With junk answers in the
other exercises, each of the first eight scored full marks before, and all but one unflagged; the last four computed
the by-hand answer with the check's own reference, unflagged or flagged as "library use" only.

Reaching the kernel's shell and changing how later cells run or score (each stays: every later test cell zero):

- n01_timeit: an input transformer installed from inside ``%timeit``'s code, behind its options (``-n1 -r1``),
  which the reading of a magic's code did not parse;
- n03_parent: the shell as ``InlineBackend.instance().parent`` (no flagged name), its ``transform_cell`` replaced;
- n04_displayhook: a ``pre_run_cell`` hook that writes the number 0.5 as each cell's first result, which nbgrader
  reads as a share of the points before it looks for an error;
- n05_displayhook_flagged: the same through ``exit._ip``: flagged, "Not graded" lines written, and still full marks
  (nbgrader read the number first);
- n09_dotted: course_lib's function fetched by ``torch._utils._import_dotted_name`` (a library's internals);
- n10_run_code: the shell fetched the same way, its ``run_code`` replaced by a coroutine that runs nothing;
- n12_clear: a ``post_run_cell`` hook that clears each cell's outputs.

The check's reference in disguise (exercise 1 only):

- n06_time: inside ``%time``, whose line the reading of by-hand answers dropped;
- n07_getattr: ``getattr(cl, 'softmax_jacobian')`` with a literal name;
- n08_star: ``from course_lib.attention import *``;
- n13_for: bound by a ``for`` loop (in the trial, in a cell added before the answer).
"""

_J = "(torch.tensor(weights_ex1, dtype=torch.float64)).tolist()"
_SHELL = "InlineBackend.instance().parent"

_FIRST = """
sh = SHELL


def before(info=None):
    try:
        sh.displayhook(0.5)
    except Exception:
        pass


sh.events.register("pre_run_cell", before)
"""

THIRTEENTH_04_SHELL = {
    "n01_timeit: a transformer from inside %timeit, behind its options": (
        "%timeit -n1 -r1 exit._ip.input_transformers_post.append(lambda lines: ['pass\\n'])\n"
    ),
    "n03_parent: the shell as a configurable's parent, transform_cell replaced": (
        f"sh = {_SHELL}\nsh.transform_cell = lambda raw_cell: 'pass\\n'\n"
    ),
    "n04_displayhook: a number written first in every cell": _FIRST.replace("SHELL", _SHELL),
    "n05_displayhook_flagged: the same through exit._ip": _FIRST.replace("SHELL", "exit._ip"),
    "n09_dotted: the reference fetched by torch's import by name": (
        f"J_ex1 = torch._utils._import_dotted_name('course_lib.softmax_jacobian'){_J}\n"
    ),
    "n10_run_code: the shell fetched so, its run_code running nothing": """
sh = torch._utils._import_dotted_name('IPython.get_ipython')()


async def nothing(*args, **kwargs):
    return False


sh.run_code = nothing
""",
    "n12_clear: each cell's outputs cleared after it ran": f"""
sh = {_SHELL}


def after(result=None):
    sh.display_pub.clear_output(wait=False)


sh.events.register("post_run_cell", after)
""",
}
THIRTEENTH_04_REFERENCE = {
    "n06_time: the reference inside %time": f"%time J_ex1 = cl.softmax_jacobian{_J}\n",
    "n07_getattr: a literal getattr": f"J_ex1 = getattr(cl, 'softmax_jacobian'){_J}\n",
    "n08_star: a star import": f"from course_lib.attention import *\n\nJ_ex1 = softmax_jacobian{_J}\n",
    "n13_for: bound by a for loop": f"for helper in (cl.softmax_jacobian,):\n    pass\nJ_ex1 = helper{_J}\n",
}
