"""Held-out attacks: the fourteenth lecturer's trial (2026-12-04), on notebook 04's exercise 1 (``J_ex1``, by hand),
each appended to the reference answer; tests/test_grading.py grades them with nbgrader. With junk answers elsewhere
each scored full marks before, unflagged (in the trial each sat in a cell added before the answer).

The kernel reached, every later test cell then run as ``pass`` or emptied (each stays):

- s01_handlers: the kernel's ``shell_handlers['execute_request']`` wrapped to swap a test cell's code for ``pass``
  before IPython sees it, reached through ``from torch.serialization import _import_dotted_name`` and a dotted path;
- s03_sys_modules: the same handlers reached through the set-up cell's ``sys.modules`` and ``Kernel._instance``;
- s04_transform_ast: the shell as pyplot's backend module's ``InteractiveShell._instance`` (``plt`` aliased), its
  ``transform_ast`` emptying every later cell.

(The trial's s02 reached the same handlers by unpickling a stream of bytes through ``torch.load``: read as tampering
by its ``torch.load``; tests/test_guard.py holds the reading.)

The check's reference bound where the by-hand reading did not look (exercise 1 only):

- s05_item: a dict's item; s06_match: a ``match`` capture; s07_global: a ``global`` set in a function;
  s08_class: a class attribute set later.
"""

_QUIET = """
run = handlers['execute_request']


def quiet(stream, ident, msg):
    if '_course_' + 'integrity' in msg['content']['code']:
        msg['content']['code'] = 'pass'
    return run(stream, ident, msg)


handlers['execute_request'] = quiet
"""
_J = "(torch.tensor(weights_ex1, dtype=torch.float64)).tolist()"

FOURTEENTH_04_KERNEL = {
    "s01_handlers: the kernel's message handler, through an import of the internals": (
        "from torch.serialization import _import_dotted_name as find\n\n"
        "handlers = find('IPython.core.interactiveshell.InteractiveShell._instance.kernel.shell_handlers')\n" + _QUIET
    ),
    "s03_sys_modules: the same through sys.modules": (
        "loaded = sys.modules\nhandlers = loaded['ipykernel.kernelbase'].Kernel._instance.shell_handlers\n" + _QUIET
    ),
    "s04_transform_ast: the shell's AST transform, through pyplot's backend": (
        "p = plt\nsh = [p._backend_mod.InteractiveShell._instance][0]\n"
        "sh.transform_ast = lambda node: node.body.clear() or node\n"
    ),
}
FOURTEENTH_04_REFERENCE = {
    "s05_item: a dict's item": f"tools = {{}}\ntools['j'] = cl.softmax_jacobian\nJ_ex1 = tools['j']{_J}\n",
    "s06_match: a match capture": (f"match cl.softmax_jacobian:\n    case helper:\n        pass\nJ_ex1 = helper{_J}\n"),
    "s07_global: a global set in a function": (
        f"def setup():\n    global helper\n    helper = cl.softmax_jacobian\n\n\nsetup()\nJ_ex1 = helper{_J}\n"
    ),
    "s08_class: a class attribute set later": (
        f"class Box:\n    pass\n\n\nBox.j = cl.softmax_jacobian\nJ_ex1 = Box.j{_J}\n"
    ),
}
