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
and count as run for :mod:`course_lib.classroom.witness`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

__all__ = ["cell_check"]

WHY = ("a cell changed how the kernel reads the cells after it ({}): the test cell that ran is not the one nbgrader "
       "wrote")  # fmt: skip
BY_HAND = "a cell's code was run other than by IPython in the notebook's globals"


def cell_check() -> Callable[[str, object], str | None] | None:
    """The test for this kernel's shell as it is now, or None outside IPython (a script, the course's tests)."""
    shell_module = sys.modules.get("IPython.core.interactiveshell")
    if shell_module is None or not shell_module.InteractiveShell.initialized():
        return None
    from IPython.core.inputtransformer2 import TransformerManager

    shell = shell_module.InteractiveShell.instance()
    history, manager, cells = shell.history_manager, TransformerManager(), getattr(shell.compile, "_filename_map", {})
    ast_before, last = tuple(shell.ast_transformers), ["", ""]  # (a cell's statements share one reading of it)
    run_code, module, namespace = type(shell).run_code.__code__, shell.user_module, shell.user_ns
    getframe = sys._getframe
    ours = (__name__, __name__.rsplit(".", 1)[0] + ".watch")

    def by_ipython() -> bool:
        frame = getframe(2)
        while frame is not None and frame.f_globals.get("__name__") in ours:  # (past the audit hook's frames)
            frame = frame.f_back
        return (frame is not None and frame.f_code is run_code and frame.f_locals.get("self") is shell
                and shell.user_module is module and shell.user_ns is namespace)  # fmt: skip

    def rewritten(marker: str, code: object) -> str | None:
        """Why ``code``, about to run, is a statement of a graded test cell not run as written, or None (a module
        imported, a library's exec: not a cell's code; a cell that is not a graded test cell, or run as written)."""
        raw, ran = (history.input_hist_raw, history.input_hist_parsed) if history is not None else ((), ())
        if getattr(code, "co_filename", None) not in cells:
            return None
        if not by_ipython():
            return BY_HAND
        if not raw or not ran or marker not in raw[-1]:
            return None
        if raw[-1] is not last[0]:
            last[:] = raw[-1], manager.transform_cell(raw[-1]).rstrip()
        if ran[-1].rstrip() != last[1]:
            return WHY.format("an input transformer")
        if tuple(shell.ast_transformers) != ast_before:
            return WHY.format("an AST transformer")
        return None

    return rewritten
