"""A graded test cell's evidence, from inside the kernel, that it ran as nbgrader wrote it: a line signed with a key
that only the grader's first cell had.

What a kernel says about a cell is the kernel's word. A submission that reached the kernel's shell by a route no
reading finds could have it run a graded test cell as ``pass``, and nbgrader gives a test cell that shows no error
its full marks (the fourteenth lecturer's trial). So each graded test cell must show evidence that it ran
(:mod:`course_lib.classroom.evidence` gives the key and checks the evidence, outside the kernel):

1. before the notebook runs, the grader writes a random key and the graded test cells' sources, as it will send
   them, to a file in the submission's folder, and puts a cell of its own before all the others: :func:`take` reads
   the file, deletes it, works out the code IPython will make of each test cell (:func:`statements`), and adds two
   audit hooks;
2. the guard's last line in each graded test cell, ``_course_integrity.ran(<grade id>)``, calls :func:`ran`, which
   prints ``course-evidence: <HMAC-SHA256 of the grade id>``: signed only where the statements Python executed for
   that cell, from its first on, are the code of that cell's source, in order, the last one calling :func:`ran` from
   IPython's ``run_code`` in the notebook's globals, with no tracer or profiler on (a statement of a cell that
   IPython did not run, or ran in other globals, is refused before it runs: :mod:`course_lib.classroom.rewritten`);
3. after the run, a graded test cell without its evidence scores 0, "Not graded".

The key is kept only as HMAC's two hash states (:func:`_pads`), in one closure, the signer's, an audit hook: nothing
in Python hands a hook out, and while a hook runs no tracer or profiler sees its frames. The signer calls no code a
cell could replace (builtins, module functions, a method of an object a cell made), raises nothing and sets off no
audit event, so no frame of it ever reaches a cell's code. The refuser, the other hook, holds no key: from the
first cell on it refuses gc's lists of objects (the signer among them), another audit hook or a monitoring
callback (``sys.monitoring``, Python 3.12 and later: it sees every line run, as a tracer does), the process's memory
through /proc, a module's code from a file outside the installed libraries (one a cell wrote), any unpickling (a
pickle in a data file runs what it names: the seventeenth trial), and, to a cell's code, ctypes and other processes.
The kernel is confined first (:mod:`course_lib.classroom.confine`): after a refusal there, nothing is signed.

What it cannot promise: code that reads the kernel's raw memory by a route nothing refuses (NumPy's
``__array_interface__`` or ``as_strided`` over any address, which the guard's reading flags in a cell) can follow
the interpreter's pointers to the signer's hash states and sign anything (the seventeenth trial did); and the
evidence says that the cell's statements ran, in order, with the checks' modules verified before each
(classroom.rewritten), not that nothing a check calls changed anything while it ran.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import types
from collections.abc import Callable

from .confine import confine
from .watch import refused_outside

__all__ = ["EVENT", "KEY_BYTES", "MARK", "cell_files", "ran", "statements", "take"]

EVENT = "course_lib.classroom.witness.ran"
KEY_BYTES = 32  # the key file: the key's bytes, then the graded test cells' sources as JSON (grade id: source)
MARK = "course-evidence:"
# A process's memory under /proc, and where it lies (maps: the address ranges a raw read of memory needs)
_MEMORY = ("/mem", "/environ", "/pagemap", "/map_files", "/maps", "/smaps", "/smaps_rollup", "/numa_maps", "/auxv",
           "/stat", "/syscall", "/stack")  # fmt: skip
_TAKEN: list[bool] = []


def statements(shell: object, source: str) -> list[types.CodeType]:
    """The code objects IPython makes of a cell's ``source`` and runs one after another: the cell transformed and
    parsed as the shell does, one code object a top-level statement, the last expression compiled to display its
    value (``run_ast_nodes``, with the shell's ``ast_node_interactivity``)."""
    import ast

    tree = shell.transform_ast(shell.compile.ast_parse(shell.transform_cell(source)))
    nodes, how = list(tree.body), shell.ast_node_interactivity
    if how == "last_expr_or_assign" and nodes and isinstance(nodes[-1], (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        last = nodes[-1]
        one = isinstance(last, ast.Assign) and len(last.targets) == 1
        target = last.targets[0] if one else getattr(last, "target", None)
        if isinstance(target, ast.Name):
            nodes.append(ast.fix_missing_locations(ast.Expr(ast.Name(target.id, ast.Load()))))
    if how in ("last_expr", "last_expr_or_assign"):
        how = "last" if nodes and isinstance(nodes[-1], ast.Expr) else "none"
    single = {"none": 0, "last": 1, "all": len(nodes)}[how]
    flags = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0) if shell.autoawait else 0
    codes = []
    for i, node in enumerate(nodes):
        interactive = i >= len(nodes) - single
        mod = ast.Interactive([node]) if interactive else ast.Module([node], [])
        with shell.compile.extra_flags(flags):
            codes.append(shell.compile(mod, "<evidence>", "single" if interactive else "exec"))
    return codes


def _fingerprinter() -> object:
    """A function giving the SHA-256 of code objects (their bytecode, names and constants, not their file or lines),
    or None where one holds anything but Python's own constants (a code object made by hand could hold an object of
    a cell's class, whose ``repr`` would run the cell's code). Built from objects bound now: it calls nothing a cell
    could replace."""
    kind, text, sha, plain = type, repr, hashlib.sha256, (str, bytes, int, float, complex, bool, type(None), type(...))
    code_type, tuple_type, frozen, bytes_type = types.CodeType, tuple, frozenset, bytes
    listing, joined = sorted, b"|".join

    def part(value: object, out: list) -> bool:
        k = kind(value)
        if k is code_type:
            for inner in (value.co_code, value.co_names, value.co_varnames, value.co_consts):
                if not part(inner, out):
                    return False
            return True
        if k is tuple_type or k is frozen:
            inner: list = []
            for item in value:
                if not part(item, inner):
                    return False
            out.append(joined(listing(inner) if k is frozen else inner))
            return True
        for p in plain:
            if k is p:
                out.append(value if k is bytes_type else text(value).encode())
                return True
        return False

    def fingerprint(codes: list) -> str | None:
        out: list = []
        for code in codes:
            if kind(code) is not code_type or not part(code, out):
                return None
            out.append(b"#")
        return sha(joined(out)).hexdigest()

    return fingerprint


def _pads(key: bytearray) -> tuple[object, object]:
    """HMAC-SHA256's two hash states for ``key`` (32 bytes): SHA-256 fed the key padded and XORed with 0x36, and with
    0x5C. Worked out in place in a buffer then zeroed, as ``key`` is: no copy of the key, nor a block of the padding
    one could search memory for, stays in the process; only the states, inside the hash objects."""
    pad = bytearray(64)
    pad[: len(key)] = key
    for i in range(64):
        pad[i] ^= 0x36
    inner = hashlib.sha256(pad)
    for i in range(64):
        pad[i] ^= 0x36 ^ 0x5C
    outer = hashlib.sha256(pad)
    pad[:] = bytes(64)
    key[:] = bytes(len(key))
    return inner, outer


def _signer(pads: tuple, expected: dict, shell: object, cells: tuple[str, ...], refused: list) -> object:
    """The audit hook that holds the key (see the module's docstring): it records the statements of each cell as they
    are executed (a cell's file name starts with ``cells``, compared as Python's own string: a cell's dictionary could
    hold a key whose ``==`` is a cell's), and answers :data:`EVENT` with the evidence, or why none (``refused``, a
    refusal of the confinement's), in the list it is handed."""
    kind, frame_type, list_type, str_type, code_type = type, types.FrameType, list, str, types.CodeType
    append, gettrace, getprofile, size = list.append, sys.gettrace, sys.getprofile, len
    fingerprint, error = _fingerprinter(), BaseException
    inner, outer = pads[0].copy, pads[1].copy  # (bound methods of the hash objects: a copy of each state per use)
    del pads
    here_globals, main = globals(), shell.user_module.__dict__
    shell_globals = sys.modules[type(shell).run_code.__module__].__dict__
    current: list = [None, [], None]  # the cell's file, its statements executed, why no evidence

    def why(gid: object, here: object) -> str | None:
        if kind(gid) is not str_type or gid not in expected:
            return "no graded test cell has that id"
        if kind(here) is not frame_type or here.f_globals is not here_globals:
            return "ran was not called by the grader's line"
        statement = here.f_back
        runner = statement.f_back if statement is not None else None
        if statement is None or statement.f_globals is not main or runner is None:
            return "the grader's line did not run in the notebook's globals"
        local = runner.f_locals
        if runner.f_globals is not shell_globals or local.get("self") is not shell or not current[1]:
            return "the grader's line was not run by IPython"
        if local.get("code_obj") is not current[1][-1]:
            return "the grader's line was not the last statement run"
        if current[2] is not None or refused:
            return current[2] or f"a cell was refused: {refused[0]}"
        if gettrace() is not None or getprofile() is not None:
            return "a tracer or profiler was on"
        if fingerprint(current[1]) != expected[gid]:
            return "the statements that ran are not the test cell's"
        return None

    def hook(event: str, args: tuple) -> None:
        try:
            if event == "exec":
                code = args[0]
                name = code.co_filename if kind(code) is code_type else None
                if kind(name) is str_type and name.startswith(cells):
                    if name != current[0]:
                        current[:] = [name, [], None]
                    append(current[1], code)
                    if gettrace() is not None or getprofile() is not None:
                        current[2] = "a tracer or profiler was on while it ran"
            elif event == "sys.settrace" and current[0] is not None:
                current[2] = "a tracer was switched while it ran"
            elif event == EVENT and size(args) == 3 and kind(args[2]) is list_type:
                reason = why(args[0], args[1])
                digest = None
                if reason is None:
                    inside, outside = inner(), outer()
                    inside.update(args[0].encode())
                    outside.update(inside.digest())
                    digest = outside.hexdigest()
                append(args[2], digest)
                append(args[2], reason)
        except error:  # (never raise: a traceback would hold this frame)
            return

    return hook


def _refuser(shell: object, end: Callable[[str], None] | None = None) -> object:
    """The audit hook without a key that refuses what would reach the signer (see the module's docstring), and, from
    the first cell on, code a cell wrote or runs by hand (:func:`course_lib.classroom.rewritten.code_check`). A
    refusal calls ``end`` with why first, if given (the grader's answers' kernel: classroom.serve)."""
    from .rewritten import code_check
    from .unwatched import asker
    from .watch import _PROCESS_EVENTS, _is_answer, _spawner

    getframe, busy, checked = sys._getframe, [False], code_check(shell)

    def no(why: str) -> RuntimeError:
        if end is not None:
            end(why)
        return RuntimeError(why)

    def hook(event: str, args: tuple) -> None:
        if busy[0]:
            return
        if event == "exec":
            busy[0] = True
            try:
                why = checked(args[0], 1)
            finally:
                busy[0] = False
            if why:
                raise no(f"Not graded: {why}")
            return
        if event.startswith("gc.get_") or event in ("sys.addaudithook", "sys.monitoring.register_callback"):
            raise no(f"Not graded: asked for {event} in a graded notebook (the grader's evidence is private)")
        if event == "pickle.find_class":  # (nothing in a graded notebook unpickles: torch.load's weights never ask)
            raise no(f"Not graded: a pickle asked for {args[0]}.{args[1]}: a pickle can run any code")
        if event == "open" and isinstance(args[0], (str, bytes)):
            busy[0] = True
            try:
                path = os.path.realpath(os.fsdecode(args[0]))  # (//proc/self/mem is /proc/<pid>/mem)
            finally:
                busy[0] = False
            if path.startswith("/proc/") and path.endswith(_MEMORY):
                raise no(f"Not graded: asked for {path} in a graded notebook (the kernel's memory)")
        if event in _PROCESS_EVENTS:
            busy[0] = True
            try:
                student = _is_answer(asker(_spawner(getframe(1))))
            finally:
                busy[0] = False
            if student:
                raise no(f"Not graded: asked for {event} in a graded notebook")

    return hook


def take(path: str) -> None:
    """The grader's first cell: read the key and the graded test cells' sources from ``path`` (:data:`KEY_BYTES`),
    delete it, confine the kernel and add the two hooks. Once a process; only in IPython."""
    if _TAKEN:
        raise RuntimeError("the grader's evidence was taken once in this kernel already")
    _TAKEN.append(True)
    try:  # (unbuffered, into buffers of its own: no copy of the key is left to search memory for)
        with open(path, "rb", buffering=0) as file:
            key, cells = bytearray(KEY_BYTES), bytearray(max(os.fstat(file.fileno()).st_size - KEY_BYTES, 0))
            if file.readinto(key) != len(key) or file.readinto(cells) != len(cells):
                raise RuntimeError("the grader's key file is short")
    finally:
        os.remove(path)
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    fingerprint = _fingerprinter()
    expected = {gid: fingerprint(statements(shell, src)) for gid, src in json.loads(cells.decode("utf-8")).items()}
    confine(refused := [], refused_outside)  # (a write outside its folder: no test cell after it is graded)
    sys.addaudithook(_signer(_pads(key), expected, shell, cell_files(shell), refused))
    sys.addaudithook(_refuser(shell))  # (after: it refuses another hook)


def cell_files(shell: object) -> tuple[str, ...]:
    """What the file names IPython gives a cell's code begin with: the shell's compiler's (ipykernel's folder of
    cells), and IPython's own ``<ipython-input-`` (a cell run without history gets a compiler of IPython's)."""
    name = shell.compile.get_code_name("", "", 0)
    return (os.path.dirname(name) + os.sep if os.sep in name else name.split("-0-")[0], "<ipython-input-")


def ran(grade_id: str) -> None:
    """The guard's last line of a graded test cell: print the cell's evidence, or raise why there is none (outside a
    graded kernel, where no key was taken, it does nothing)."""
    if not _TAKEN:
        return
    answer: list = []
    sys.audit(EVENT, grade_id, sys._getframe(), answer)
    if len(answer) != 2 or answer[1] is not None:
        why = answer[1] if len(answer) == 2 else "the grader's evidence was not given"
        raise AssertionError(f"Not graded: no evidence that this test cell ran as nbgrader wrote it ({why})")
    sys.stdout.write(f"{MARK} {answer[0]}\n")  # (one write: a kernel may send each write as an output of its own)
