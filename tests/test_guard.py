"""course_lib.classroom.guard: tampering read from the cells a student edits, before a submission runs, and the
student's own numbers written as VARIANT."""

import nbformat
import pytest

from course_lib.classroom.evidence import RAN
from course_lib.classroom.evidence import not_graded_line as _not_graded
from course_lib.classroom.guard import (
    SNAPSHOT,
    VERIFIED,
    GuardSubmission,
    KeepNotGraded,
    RestoreHiddenTests,
    bound_names,
    findings,
    tampering,
)
from course_lib.classroom.nbgrader_source import nbgrader_notebook
from course_lib.classroom.recheck import CLEAN
from course_lib.classroom.syntax import check_names
from course_lib.paths import NOTEBOOKS_DIR

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
LOCKED = "import torch\nimport course_lib as cl\nimport torch.nn.functional as F\nweights = [0.4, 0.6]\n"
PROTECTED, MODULES = bound_names(LOCKED)

TAMPERING = {
    "a checker rebound": "check_answer = lambda *args, **kwargs: None",
    "the package rebound": "cl = None",
    "a checker replaced in the package": "cl.check_function = lambda *args, **kwargs: None",
    "deep in the package": "cl.classroom.checks.check_close = print",
    "deleted from the package": "del cl.check_close",
    "torch patched": "torch.allclose = lambda *args, **kwargs: True",
    "a module alias patched": "F.softmax = lambda x, dim: x",
    "setattr": "setattr(cl, 'check_answer', print)",
    "globals()": "globals()['check_answer'] = print",
    "sys.modules": "import sys\nsys.modules['course_lib'] = None",
    "builtins": "import builtins\nbuiltins.abs = lambda x: 0",
    "exec": "exec('cl.check_answer = print')",
    "__import__": "__import__('course_lib').check_answer = print",
    "a function's code swapped": "def f():\n    pass\ncl.check_answer.__code__ = f.__code__",
    "an import under a checker's name": "from math import sqrt as check_answer",
    "a loop variable named like a checker": "for check_close in [print]:\n    pass",
    "a locked cell's input changed in place": "weights[0] = 0.5",
    "inside a function": "def answer():\n    cl.check_answer = print\n    return 1\nx = answer()",
    "get_ipython": "get_ipython().run_cell('cl = None')",
    "a magic that runs code": "%run other.py",
    "VARIANT rebound (another student's numbers)": "VARIANT = 's7654321'",
    # issue 44: getattr and other aliases, wherever they are taken
    "getattr taken inside a function (issue 44)": (
        "def decoder_mask(tgt, pad):\n    g = getattr\n    g(cl, '__di' + 'ct__')['check_function'] = print\n"
        "    return torch.zeros(1)"
    ),
    "getattr taken at the top level": "g = getattr",
    "getattr bound into a partial": "import functools\ng = functools.partial(getattr, cl)",
    "getattr kept in a tuple": "tools = (getattr, print)",
    "getattr with a computed name": "getattr(weights, 'app' + 'end')(0.5)",
    "getattr with a name held in a variable": "name = '__glob' + 'als__'\nd = getattr(check_close, name)",
    "a module handed to a function that patches it": "def patch(m):\n    m.softmax = print\npatch(F)",
    "a module aliased by unpacking": "G, H = F, 1\nG.softmax = print",
    "a module kept in a list": "mods = [cl]",
    "a module imported by from-import, handed on": "from course_lib.classroom import checks\npatch(checks)",
    "a locked module alias patched inside a function": "def f():\n    F.softmax = lambda x, dim: x\n    return 1",
    "a locked value changed in place inside a function": "def f(x):\n    weights.reverse()\n    return x",
    "a locked value's item set inside a function": "def f(x):\n    weights[0] = 0.5\n    return x",
    "a tensor method in place on a locked value": "weights.add_(1)",
    "code inside %timeit": "%timeit cl.check_answer = print",
    "code inside a %%timeit cell": "%%timeit -n1 -r1\nsetattr(cl, 'check_answer', print)",
    "a class with its own __torch_dispatch__": (
        "class T(torch.Tensor):\n    @classmethod\n"
        "    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):\n"
        "        return func(*args, **(kwargs or {}))"
    ),
    # a second lecturer's 05 (issue 44): internals named in strings that functools or string.Formatter look up
    "update_wrapper copies a built name": "import functools\ndef f():\n    pass\n"
    "functools.update_wrapper(cl.check_close, f, assigned=('__co' + 'de__',))",
    "update_wrapper, the names by position": "from functools import update_wrapper as uw\nuw(print, len, ['x'], [])",
    "update_wrapper taken as a value": "import functools as ft\ndef quiet(f, how=ft.update_wrapper):\n    return f",
    "wraps with assigned=": "import functools\nw = functools.wraps(len, assigned=names)",
    "wraps with **options": "from functools import wraps\nw = wraps(len, **options)",
    "string.Formatter().get_field": "import string\nv = string.Formatter().get_field('0.x', (len,), {})",
    "Formatter imported from string": "from string import Formatter",
    "a format string that reads __globals__": "text = '{0.__globals__[weights]}'.format(len)",
    "a format string built from pieces": "text = ('{0.__glo' + 'bals__}').format(len)",
    "a format string held in a name, then rebound": "fmt = '{}'\nfor fmt in names:\n    print(fmt.format(len))",
    "a format string read inside a function": "fmt = '{:.3f}'\ndef show(x):\n    return fmt.format(x)",
    "str.format with a computed format string": "text = str.format(chr(123) + '0}', len)",
    "format_map of a variable": "text = template.format_map({'a': 1})",
    "a private attribute in a format string's spec": "text = '{0:{1._x}}'.format(1.0, len)",
    "getattr of format": "f = getattr('{0.__globals__}', 'format')",
    "an annotation string that is code, evaluated by singledispatch": (
        "import functools\n@functools.singledispatch\ndef f(x):\n    return x\n"
        "@f.register\ndef _(x: 'exec(\"cl.check_answer = print\") or int'):\n    return x"
    ),
    "typing.get_type_hints": "import typing\nhints = typing.get_type_hints(answer)",
    "a function's __annotations__ rewritten": "def f(x):\n    return x\nf.__annotations__['x'] = 'int'",
    # a twelfth lecturer's trial: IPython's shell, reached through exit or quit, empties every later graded cell
    "exit._ip's input transformers": "exit._ip.input_transformers_post.append(lambda lines: ['pass\\n'])",
    "quit, found by hasattr, then its shell's cleanup transforms": (
        "sh = [v for v in (exit, quit) if hasattr(v, '_ip')][0]._ip\n"
        "sh.input_transformer_manager.cleanup_transforms.append(lambda lines: lines)"
    ),
    "the shell's exception handler": "exit._ip.set_custom_exc((AssertionError,), lambda *a: None)",
    "the shell's showtraceback": "e = exit\ne._ip.showtraceback = lambda *a, **k: None",
    # a thirteenth lecturer's trial: the shell by other ways, and a magic's code hidden behind its options
    "%timeit's options before the shell": "%timeit -n1 -r1 exit._ip.input_transformers_post.append(lambda l: l)",
    "the shell as a configurable's parent": "sh = InlineBackend.instance().parent\nsh.transform_cell = lambda c: c",
    "torch's import by name, a library's internals": "sh = torch._utils._import_dotted_name('IPython.get_ipython')()",
    "the shell's events": "def before(info=None):\n    pass\nsomething.events.register('pre_run_cell', before)",
    "%env other than the checks' language": "%env PYTHONPATH=/tmp\ny = 2",
    # help on more than a dotted name: code IPython would evaluate, or the shell reached through the help's name
    "help on an internal": "cl.__dict__?",
    "psearch with code": "%psearch cl.* ; setattr(cl, 'check_answer', print)",
    # a fourteenth lecturer's trial: the kernel's message handlers, an AST transform, sys's table, a pickle
    "torch's import by name, imported": "from torch.serialization import _import_dotted_name as find\nh = find('x')",
    "sys's table of modules": "loaded = sys.modules\nh = loaded['ipykernel.kernelbase'].Kernel",
    "a private name gone through": "p = plt\nsh = p._backend_mod.InteractiveShell",
    "the shell's AST transform": "sh.transform_ast = lambda node: node",
    "a pickle loaded by torch": "handlers = torch.load(tape, weights_only=False)",
    # a nineteenth lecturer's trial: a notebook's solutions compiled from its text by TorchScript
    "TorchScript compiled from a string": "unit = torch.jit.CompilationUnit(text)\nf = unit.decoder_mask",
    "TorchScript's compiler imported by name": "from torch.jit import CompilationUnit as C\nf = C(text).beam_step",
    "a package of code loaded from a file": "imp = torch.package.PackageImporter('mine.pt')",
    "IPython's history of outputs": "shown = Out[3]",
    "TorchScript's script module defining code from a string": "m = torch.jit.ScriptModule()\nm.define(text)",
    "torch.fx's code generation": "class G(torch.fx.CodeGen):\n    def gen_fn_def(self, *a):\n        return text",
}
# What the twentieth trial's honest lines pass by, still flagged where the same words reach further
STILL_FLAGGED = {
    "operator's attrgetter": "import operator\nf = operator.attrgetter('x')",
    "operator handed on": "import operator\nops = [operator]",
    "sys's tables": "import sys\nprint(sys.modules)",
    "a module given to a reading builtin the cell rebinds": "def print(*a):\n    a[0].check_answer = None\nprint(cl)",
    "a module given to two-argument type": "T = type('T', (), {})\nS = type(cl, (), {})",
    "vars changed, not printed": "print(vars(cl).update(check_answer=None))",
    "vars kept": "table = vars(cl)\nprint(table)",
    "eval with an argument, on an object": "x = cl\nx.eval('1 + 1')",
    "a model's eval kept, not called": "switch = model.eval\nswitch()",
    "IPython's shell from its display module": "from IPython.display import display, get_ipython",
    "IPython whole": "import IPython\nIPython.display.display(1)",
}
HONEST = {
    "a value": "J_ex1 = [[0.24, -0.14], [-0.14, 0.24]]",
    "a function using the library": "def attend(q, k, v):\n    w = torch.softmax(q @ k.T, -1)\n    return w @ v",
    "local names that shadow locked ones": "def f(weights):\n    table = list(weights)\n    table[0] = 1\n    return 0",
    "a tensor's attribute": "x = torch.zeros(2)\nx.requires_grad = True\nx.grad = None",
    "a magic": "%timeit 1 + 1\ny = 2",
    "a magic with options": "%timeit -n1 -r1 sum(range(3))\n%time y = 2",
    "the checks' language, as the guide tells a class in Colab": "%env COURSE_LANGUAGE=zh\ny = 2",
    # a twenty-third trial's honest scratch cell, read as tampering ("uses get_ipython"): IPython's help
    "IPython's help": "cl.padding_mask?\ncl.padding_mask??\n?torch.softmax\n%pdoc cl.causal_mask\ncl.*mask*?\ny = 2",
    "a class's own private attributes": "class A:\n    def __init__(self):\n        self._cache = {}\n\n"
    "    def f(self):\n        return self._cache.get(1)",
    "a syntax error (it fails when run)": "def broken(:\n",
    "getattr with a literal name": "def f(x):\n    return getattr(x, 'shape'), getattr(torch, 'int8'), hasattr(x, 'T')",
    "a parameter named like a module": "def window_params(D, r, F):\n    return (2 * r + 1) * D * F + F",
    "a function's own list changed in place": "def f(x):\n    weights = list(x)\n    weights.reverse()\n    return 1",
    "a from-imported function handed on": "import functools\nfrom torch.nn.functional import softmax\n"
    "sm = functools.partial(softmax, dim=-1)",
    "a module under another plain name": "import numpy as np\nnumpy_module = np\nx = numpy_module.zeros(2)",
    "an f-string": "x = 0.25\nprint(f'{x:.3f} {x!r:>10} {[x][0]}')",
    "a literal format string": "x = 0.25\nprint('{:.3f}'.format(x), '{} of {}'.format(1, 2), '{0[1]}'.format([1, 2]))",
    "a format string by name, a field by key": "text = '{a:>{w}}'.format(a=1, w=6)\n"
    "labels = '{name}'.format_map({'name': 'q'})",
    "a format string bound once, used after": "fmt = '{:>8.3f}'\nrow = fmt * 3\n"
    "print(fmt.format(0.5), row.format(1, 2, 3))",
    "a row format repeated n times": "n = 3\nprint(('{:>6}' * n).format(*range(n)))",
    "annotations, as strings too": "def f(x: 'torch.Tensor', n: int = 2) -> 'list[int] | None':\n    return None\n"
    "y: 'dict[str, torch.Tensor]' = {}",
    # a nineteenth trial: notebook 14's rows are (parent, token); a local "parent" lost every exercise after it
    "locals named like the shell's parts": "def beam(rows):\n    for parent, token in rows:\n"
    "        kernel, events, instance, shell, Out, quit = 1, 2, 3, 4, 5, 6\n    return parent",
    "a class's own attribute named so": "class Node:\n    def __init__(self, parent):\n        self.parent = parent\n\n"
    "    def up(self):\n        return self.parent",
    "the cell's own globals named so": "kernel = torch.ones(3)\nevents = kernel * 2\nprint(events)",
    "a field of its own named so, read from outside": "from typing import NamedTuple\nclass Hyp(NamedTuple):\n"
    "    score: float\n    parent: int\n\ndef rows(best):\n    return [(h.parent, h.score) for h in best]",
    "a namedtuple's field named so": "import collections\nBeam = collections.namedtuple('Beam', 'score parent token')\n"
    "def up(b):\n    return b.parent",
    "harmless names from operator and types": "from operator import itemgetter\nfrom types import SimpleNamespace\n"
    "def f(rows):\n    return sorted(rows, key=itemgetter(0)), SimpleNamespace(a=1)",
    "a class's name in its repr": "class A:\n    def __repr__(self):\n        return self.__class__.__name__",
    # a twenty-second trial: precheck flagged a scratch cell's display of a table
    "IPython's display functions": "from IPython.display import HTML, display\ndisplay(HTML('<b>done</b>'))",
    # a twenty-first trial: a model put in evaluation mode before looking at it zeroed every exercise after it
    "a model's evaluation mode": "final_vit.eval()  # evaluation mode before looking at it\natt.eval()",
    # a twentieth trial: each of these zeroed every exercise after it
    "operator imported whole, for harmless functions": "import operator as op\nimport operator\n"
    "def f(rows):\n    return sorted(rows, key=operator.itemgetter(1)), op.add(1, 2)",
    "sys for the size of an object": "import sys\ndef size(x):\n    return sys.getsizeof(x)\nprint(sys.version_info)",
    "pprint for a table": "from pprint import pprint\npprint({'a': 1})",
    "what a module or an object is, printed": "print(type(cl), cl)\nprint(dir(torch)[:3], id(cl), repr(torch))\n"
    "class Node:\n    pass\nprint(vars(Node()))",
    "functools.wraps as a decorator": (
        "import functools\ndef logged(f):\n    @functools.wraps(f)\n    def inner(*a):\n        return f(*a)\n"
        "    return inner\nw = functools.update_wrapper(lambda: 1, len)"
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_tampering_is_found(case):
    assert tampering(TAMPERING[case], PROTECTED, MODULES), case


@pytest.mark.parametrize("case", sorted(STILL_FLAGGED))
def test_what_reaches_further_than_an_honest_line_is_still_flagged(case):
    assert tampering(STILL_FLAGGED[case], PROTECTED, MODULES), case


@pytest.mark.parametrize("case", sorted(HONEST))
def test_honest_answers_are_not_flagged(case):
    assert tampering(HONEST[case], PROTECTED, MODULES) == []


CHECK = "def reference(x):\n    return helper(x) * 2\n\n\ndef helper(x):\n    return x + 1\n\n\nSEARCHES = ('a',)\n"
CHECK_NAMES = check_names(CHECK + "import math\ncl.check_function(f, reference, lambda g: (1,))")


@pytest.mark.parametrize(
    "answer",
    [
        "def f(x):\n    return reference(x)",  # the check's reference (notebook 14's translator_mask)
        "def f(x):\n    return 2 * helper(x)",  # a helper the reference calls
        "def f(x):\n    return len(SEARCHES) * x",  # a value the check decides with
        "class Answer:\n    def f(self, x):\n        return reference(x)",
        "f = lambda x: reference(x)",
    ],
)
def test_an_answer_may_not_use_what_the_check_defines(answer):
    assert CHECK_NAMES == {"reference", "helper", "SEARCHES"}  # not what the test cell imports
    found = tampering(answer, PROTECTED, MODULES, CHECK_NAMES)
    assert found and "which a check defines to decide" in found[0], found


def test_a_local_of_the_same_name_is_the_answers_own():
    answer = "def f(x, reference=None):\n    helper = 2\n    return [SEARCHES for SEARCHES in range(helper)]"
    assert tampering(answer, PROTECTED, MODULES, CHECK_NAMES) == []


def _graded_cell(source, **meta):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, **meta}
    return cell


def test_a_flagged_cell_fails_every_test_after_it_and_says_why():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _graded_cell(LOCKED, locked=True),
        _graded_cell("VARIANT = 'someone-else'"),
        _graded_cell("a = 1", solution=True),
        _graded_cell("cl.check_answer(a, 1)", grade=True, locked=True),
        _graded_cell("cl.check_answer = print", solution=True),
        _graded_cell("cl.check_answer(b, 2)", grade=True, locked=True),
        _graded_cell("cl.check_answer(c, 3)", grade=True, locked=True),
    ]
    nb, _ = GuardSubmission()(nb, {"nbgrader": {"student": "s1234567"}})  # as nbconvert calls it: enabled
    assert nb.cells[1].source.startswith("VARIANT = 's1234567'")  # the grader's id, not what was typed
    assert nb.cells[3].source == f"{SNAPSHOT}(globals(), ['a'], []){VERIFIED}\ncl.check_answer(a, 1)"  # graded as usual
    for cell in nb.cells[5:]:
        first = cell.source.splitlines()[0]
        assert first.startswith("raise AssertionError('Not graded: code cell 4 line 1: changes cl.check_answer")


def test_a_not_graded_line_scores_zero_even_where_the_kernel_did_not_raise_it():
    """The twelfth trial: an answer cell appended an IPython input transformer that rewrote every later cell to
    ``pass``; the guard's "Not graded" lines never ran and nbgrader gave their cells full points. After the notebook
    ran, a test cell that begins with such a line and shows no error gets the line's error; others are left alone."""
    from nbformat.v4 import new_output

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _graded_cell(LOCKED, locked=True),
        _graded_cell("exit._ip.input_transformers_post.append(lambda lines: ['pass\\n'])", solution=True),
        _graded_cell("cl.check_answer(b, 2)", grade=True, locked=True),
        _graded_cell("cl.check_answer(c, 3)", grade=True, locked=True),
        _graded_cell("pass", solution=True),
    ]
    nb, _ = GuardSubmission()(nb, {"nbgrader": {"student": "s1"}})
    assert all(_not_graded(c.source).startswith("Not graded: code cell 1") for c in nb.cells[2:4])
    line = _not_graded(nb.cells[3].source)
    half = new_output("execute_result", data={"text/plain": "0.5"}, execution_count=1)  # a share of the points
    nb.cells[2].outputs = [half]  # the thirteenth trial: a number written first, then the error
    nb.cells[3].outputs = [half, new_output("error", ename="AssertionError", evalue=line, traceback=[])]  # it ran
    nb.cells[0].outputs = [new_output("stream", name="stdout", text="set up\n")]
    nb, _ = KeepNotGraded()(nb, {})
    (error,) = nb.cells[2].outputs
    assert error.output_type == "error" and error.evalue.startswith("Not graded: code cell 1 line 1: ")
    assert error.evalue.endswith(
        "(the cell ran without raising it: a cell before it changed how the kernel runs cells)"
    )
    assert [(o.output_type, o.evalue) for o in nb.cells[3].outputs] == [("error", line)]
    assert nb.cells[0].outputs[0].text == "set up\n" and not nb.cells[4].outputs


def test_no_graded_test_cell_keeps_a_result_that_nbgrader_would_read_as_partial_credit():
    from nbformat.v4 import new_output

    nb = nbformat.v4.new_notebook()
    nb.cells = [_graded_cell("cl.check_answer(b, 2)", grade=True, locked=True), _graded_cell("0.5", solution=True)]
    printed = new_output("stream", name="stdout", text="✓ b is correct\n")
    for cell in nb.cells:
        cell.outputs = [new_output("execute_result", data={"text/plain": "0.5"}, execution_count=1), printed]
    nb, _ = KeepNotGraded()(nb, {})
    assert nb.cells[0].outputs == [printed] and len(nb.cells[1].outputs) == 2, "an answer cell keeps its outputs"


def test_a_cell_with_a_bad_indentation_costs_its_exercise_not_the_submission():
    """The eleventh trial: an IndentationError in one answer cell made IPython's tokenizer raise inside the guard, and
    nbgrader graded none of the notebook. The guard reads such a cell as nothing; the other checks are graded."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _graded_cell(LOCKED, locked=True),
        _graded_cell("def f(a):\n        x = 1\n    return a", solution=True),  # unindent matches no outer level
        _graded_cell("cl.check_answer(f(1), 1)", grade=True, locked=True),
        _graded_cell("b = 2", solution=True),
        _graded_cell("cl.check_answer(b, 2)", grade=True, locked=True),
    ]
    nb, _ = GuardSubmission()(nb, {"nbgrader": {"student": "alice"}})
    assert findings(nb) == []
    assert nb.cells[4].source == f"{SNAPSHOT}(globals(), ['b'], []){VERIFIED}\ncl.check_answer(b, 2)"


def test_a_name_a_check_shares_with_a_locked_cell_may_be_used_and_one_of_its_own_may_not():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _graded_cell(LOCKED + "def shared(x):\n    return x\n", locked=True),
        _graded_cell("def f(x):\n    return shared(x)", solution=True),  # the notebook's shared(): allowed
        _graded_cell(
            "def shared(x):\n    return x\n" + CHECK + "cl.check_function(f, reference, int)", grade=True, locked=True
        ),  # fmt: skip
        _graded_cell("def g(x):\n    return reference(x)", solution=True),  # the check's: not allowed
        _graded_cell("cl.check_function(g, reference, int)", grade=True, locked=True),
    ]
    assert [(i, p[0].split(",")[0]) for i, p in findings(nb)] == [(3, "line 2: uses reference")]
    nb, _ = GuardSubmission().preprocess(nb, {"nbgrader": {"student": "s1"}})
    assert nb.cells[2].source.startswith(f"{SNAPSHOT}(globals(), ['f'], ['int']){VERIFIED}\ndef shared")
    assert nb.cells[4].source.startswith("raise AssertionError(")


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_reference_answer_of_the_course_is_flagged(nb_path):
    nb, exercises = nbgrader_notebook(nbformat.read(nb_path, as_version=4), nb_path.stem)
    sources = [c.source for c in nb.cells]
    nb, _ = GuardSubmission().preprocess(nb, {"nbgrader": {"student": "s1"}})
    changed = [i for i, c in enumerate(nb.cells) if c.source != sources[i]]
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.metadata["nbgrader"].get("locked"))
    meta = [c.metadata.get("nbgrader", {}) for c in nb.cells]
    tests = [i for i, m in enumerate(meta) if m.get("grade") and m.get("locked") and i != first]
    variant = [i for i in changed if nb.cells[i].source.startswith("VARIANT = 's1'")]
    assert len(variant) == any("VARIANT = " in s for s in sources) and tests, "the VARIANT cell, if any"
    assert sorted([first, *tests, *variant]) == changed, "and the snapshot's cells: nothing flagged"
    snapshot = nb.cells[first].source.splitlines()[-1]  # the snapshot, handed the names the locked cells import
    assert nb.cells[first].source.startswith(sources[first]) and ".snapshot({" in snapshot
    verified = [nb.cells[i].source.split("\n", 1) for i in tests]
    ran = [RAN.format(nb.cells[i].metadata["nbgrader"]["grade_id"]) for i in tests]  # the evidence line, last
    assert all(
        top.startswith(f"{SNAPSHOT}(globals(), [") and rest == f"{sources[i]}\n{line}"
        for (top, rest), i, line in zip(verified, tests, ran, strict=True)
    )
    assert all(nb.cells[i].metadata[CLEAN] == sources[i] for i in [first, *tests]), "kept for the grader's own run"


def test_the_guard_runs_right_after_nbgrader_puts_the_locked_cells_back():
    pytest.importorskip("nbgrader")
    from nbgrader.preprocessors import CheckCellMetadata, OverwriteCells

    from course_lib.classroom.guard import sanitize_preprocessors

    steps = sanitize_preprocessors()
    at = steps.index(OverwriteCells)
    assert steps[at - 1] is RestoreHiddenTests and steps[at + 1] is GuardSubmission and steps[-1] is CheckCellMetadata


def test_a_not_graded_line_is_enforced_after_the_notebook_runs_and_before_the_grades_are_saved():
    pytest.importorskip("nbgrader")
    from nbgrader.preprocessors import Execute, SaveAutoGrades

    from course_lib.classroom.evidence import GiveKey
    from course_lib.classroom.guard import autograde_preprocessors

    steps = autograde_preprocessors()
    assert steps.index(GiveKey) + 1 == steps.index(Execute) == steps.index(KeepNotGraded) - 1
    assert steps.index(KeepNotGraded) < steps.index(SaveAutoGrades)


RUNNING_AT_IMPORT = """
import sys


def later():
    from course_lib.classroom import watch

    return watch._is_answer(sys._getframe())


def first():
    from course_lib.classroom import watch  # imported here: this frame and the script's run now

    return watch._is_answer(sys._getframe()), watch._is_answer(sys._getframe(1))


print(first(), later())
"""


def test_the_frames_running_when_the_watch_is_imported_are_no_answers(tmp_path):
    """A kernel's own frames run below every cell for its whole life, wherever its launcher lies (a site's wrapper
    script, the course tests' warm server in tools/): frames that ran when course_lib's watch was imported (by the
    set-up cell, before any answer) are no student's; a frame of the same file that starts later is one."""
    import subprocess
    import sys

    script = tmp_path / "launcher.py"  # outside every library's folder, like a student's cell
    script.write_text(RUNNING_AT_IMPORT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "(False, False) True"


def test_a_bare_annotation_in_an_answer_is_read_as_nothing():
    """The fifteenth trial: ``c: torch.Tensor`` (an annotation that binds nothing) made the reading raise, and
    nbgrader failed the whole notebook of an honest student."""
    source = "def f(s):\n    c: torch.Tensor\n    c = s.max()\n    return s - c\nx: int\n"
    assert tampering(source, set(), set(), set()) == []
    assert tampering("g: object = getattr\n", set(), set(), set()) == [
        "line 1: takes getattr as a value, an alias that could read any attribute"
    ]


def test_a_loader_of_pickles_or_an_array_over_any_address_imported_by_name_is_tampering():
    """The sixteenth and seventeenth trials: ``from numpy import load``, ``from numpy.lib.format import read_array``
    (a pickle in a data file), ``as_strided`` (raw memory without the name of NumPy's protocol)."""
    for source in ("from numpy import load as read_cache", "from numpy.lib.format import read_array",
                   "from numpy.lib.stride_tricks import as_strided", "from numpy.lib import stride_tricks",
                   "view = np.lib.stride_tricks.as_strided(x, (8,), (1,))"):  # fmt: skip
        assert tampering(source, set(), set(), set()), source
    assert tampering("from numpy import linspace, zeros", set(), set(), set()) == []
