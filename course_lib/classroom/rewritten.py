"""Whether a graded test cell runs as nbgrader wrote it, from inside the kernel: IPython's transformers.

A cell can reach the kernel's shell and append a transformer (``input_transformers_post``, the transformer
manager's ``cleanup_transforms`` or ``line_transforms``, ``ast_transformers``): every later cell is then rewritten
before it runs, and a graded test cell rewritten to ``pass`` raises nothing (the twelfth lecturer's trial). The
guard's reading flags such a cell, and :class:`course_lib.classroom.guard.KeepNotGraded` scores the later test cells
zero after the notebook ran, outside the kernel. This is the kernel's own line of defence, for a route the reading
misses: :func:`cell_check`, made when the snapshot is taken (before any cell of the student's runs), gives the audit
hook (:mod:`course_lib.classroom.watch`) a test it runs before each statement a graded kernel executes. Where the
cell IPython runs (the last of the shell's history: the cell as sent, and the code IPython made of it, stored before
it runs; nbgrader's kernels keep history) is a graded test cell (it names the snapshot's marker), that code must be
what a transformer manager made at the snapshot makes of the cell, and the shell's AST transformers those it had
then. A cell's statement is known by its code's file name, one IPython's compiler gave a cell. (The stack does not
lead from the statement to the cell: ipykernel runs IPython's code in tasks of its own.)

And any cell's statement must be run by IPython (its ``run_code``, whose frame is the one that executes it) in the
notebook's globals: a cell's code run by hand in other globals (where ``cl`` is another object) would pass its checks
and count as run for :mod:`course_lib.classroom.witness`. Every statement of a graded test cell runs the snapshot's
verification first, not only its first line: something that swaps a checker before each statement and puts it back
after (a wrapper of ``run_code``, the fifteenth trial) is seen while it is swapped. And no module's code from a file
outside the installed libraries and course_lib runs in a graded kernel (a file a cell wrote, loaded as a matplotlib
backend by name, the fifteenth trial): refused, and every graded test cell after it says "Not graded".
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

__all__ = ["NOT_GRADED", "before_cell_code", "cell_check", "code_check"]

NOT_GRADED = "Not graded"  # the words the class report (classroom.autograde) flags a submission by

WHY = ("a cell changed how the kernel reads the cells after it ({}): the test cell that ran is not the one nbgrader "
       "wrote")  # fmt: skip
BY_HAND = "a cell's code was run other than by IPython in the notebook's globals"
FOREIGN = ("a cell loaded the module {}, from outside the installed libraries and course_lib: a graded notebook "
           "runs only the libraries' code and its own cells")  # fmt: skip


def _libraries() -> tuple[str, ...]:
    """The folders of the installed libraries (the standard library's, site-packages, the user's) and course_lib's."""
    import site
    import sysconfig

    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    found |= {sysconfig.get_paths()[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    found |= {*getattr(site, "getsitepackages", list)(), site.getusersitepackages()}
    return tuple(sorted({os.path.realpath(folder) + os.sep for folder in found if folder}))


def code_check(shell: object) -> Callable[[object, int], str | None]:
    """For ``shell``, as it is now: why a code object about to be executed may not run in a graded kernel, or None.
    A cell's statement must be run by IPython's ``run_code`` (the frame ``depth`` levels above the caller, past the
    audit hook's own) with the shell's namespaces of now; a module's code must come from a file of the libraries
    (:func:`_libraries`), not one a cell wrote."""
    cells, libraries, getframe = getattr(shell.compile, "_filename_map", {}), _libraries(), sys._getframe
    run_code, module, namespace = type(shell).run_code.__code__, shell.user_module, shell.user_ns

    def why(code: object, depth: int) -> str | None:
        name = getattr(code, "co_filename", None)
        if name in cells:
            frame = getframe(depth + 1)
            by_ipython = frame.f_code is run_code and frame.f_locals.get("self") is shell
            return None if by_ipython and shell.user_module is module and shell.user_ns is namespace else BY_HAND
        if getattr(code, "co_name", None) != "<module>" or not isinstance(name, str) or name.startswith("<"):
            return None
        return None if os.path.realpath(name).startswith(libraries) else FOREIGN.format(name)

    return why


def cell_check(verify: Callable[[], None] | None = None) -> Callable[[str, object], str | None] | None:
    """The test for this kernel's shell as it is now, or None outside IPython (a script, the course's tests); it
    runs ``verify``, the snapshot's verification, before each statement of a graded test cell."""
    shell_module = sys.modules.get("IPython.core.interactiveshell")
    if shell_module is None or not shell_module.InteractiveShell.initialized():
        return None
    from IPython.core.inputtransformer2 import TransformerManager

    shell = shell_module.InteractiveShell.instance()
    history, manager, cells = shell.history_manager, TransformerManager(), getattr(shell.compile, "_filename_map", {})
    ast_before, last = tuple(shell.ast_transformers), ["", ""]  # (a cell's statements share one reading of it)
    checked, foreign = code_check(shell), []

    def rewritten(marker: str, code: object) -> str | None:
        """Why ``code``, about to run, may not (:func:`code_check`: then every graded test cell after a module a
        cell wrote says so too), or is a statement of a graded test cell not run as written, or None."""
        why = checked(code, 3)  # (above: watch's running and hook, then the code that executes it)
        if why is not None:
            foreign.append(why)
            return why
        raw, ran = (history.input_hist_raw, history.input_hist_parsed) if history is not None else ((), ())
        if getattr(code, "co_filename", None) not in cells or not raw or not ran or marker not in raw[-1]:
            return None
        if foreign:
            return foreign[0]
        if raw[-1] is not last[0]:
            last[:] = raw[-1], manager.transform_cell(raw[-1]).rstrip()
        if ran[-1].rstrip() != last[1]:
            return WHY.format("an input transformer")
        if tuple(shell.ast_transformers) != ast_before:
            return WHY.format("an AST transformer")
        if verify is not None and marker not in getattr(code, "co_names", ()):  # (the first line's: watch runs it)
            verify()
        return None

    return rewritten


def before_cell_code(cells: list[tuple], busy: list[bool], verified: Callable[[], None],
                     error: Callable[[str], BaseException]) -> Callable[[object], None]:  # fmt: skip
    """What the audit hook (:mod:`course_lib.classroom.watch`) does before code a graded kernel runs: a graded test
    cell run other than as written is refused (:func:`cell_check`), and a statement that names the snapshot's marker
    runs the verification (``verified``) first."""

    def running(code: object) -> None:
        busy[0] = True
        try:
            why = cells[0][4] and cells[0][4](cells[0][0], code)
            if why:
                raise error(f"{NOT_GRADED}: {why}")
            if cells[0][0] in getattr(code, "co_names", ()):
                verified()
        finally:
            busy[0] = False

    return running
