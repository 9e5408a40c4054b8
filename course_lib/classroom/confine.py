"""Where a graded kernel may write and look: its submission's own folder, a temporary folder of its own, itself.

A submission runs as the account that grades it. A red team's cell (the twentieth try) wrote a file into IPython's
startup folder in that account's home (``~/.ipython/profile_default/startup``): it ran in every kernel started after
it, before the grader's first cell, and forged passes for some students and failures for others; another wrote
``~/.jupyter/nbgrader_config.py``, which every later nbgrader process runs. An earlier try's cell appended to
course_lib's checks, and reached the course folder through the grader's own ``/proc/<pid>/cwd``.

So from the grader's first cell of a graded kernel on (the student's kernel: :func:`course_lib.classroom.witness.take`;
the grader's answers' kernel: :func:`course_lib.classroom.serve.serve`), :func:`confine` lets it

- write only in the submission's own folder (the kernel's working folder then), a temporary folder made for the
  kernel (``tempfile``'s from then on, and ``TMPDIR``'s) and ``/dev/null``: a file opened for writing, removed,
  renamed, linked, truncated or its mode changed anywhere else, or an SQLite database opened anywhere (one can
  attach and write any file), raises ``PermissionError``, "Not graded", whoever asked (the student's code or a
  library on its behalf: ``numpy.savetxt`` writes any text). So does a folder opened elsewhere: a descriptor of it
  would let ``os.open(name, dir_fd=...)`` write where the audit event, which names only ``name``, cannot tell;
- look into no other process: nothing under another process's ``/proc`` folder is opened.

No bytecode is written (``sys.dont_write_bytecode``), and matplotlib's font cache is made, where it is missing, before
the hook. A refusal is added to ``refused`` (the student's kernel: no graded test cell after it gets its evidence,
:mod:`course_lib.classroom.witness`) and told to ``end`` (the answers' kernel, which ends there).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable

from .unwatched import FILE_EVENTS

__all__ = ["confine"]

_WRITING = frozenset(FILE_EVENTS) - {"open"}  # (every file event but open changes a file; open: by its mode)
_OPEN_FOR_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def confine(refused: list[str] | None = None, end: Callable[[str], None] | None = None) -> str:
    """Confine this process from now on (see the module's docstring); its temporary folder."""
    with contextlib.suppress(Exception):  # (a library's own write, made now, before the hook, if it must be made)
        import matplotlib.font_manager  # noqa: F401
    temp = os.path.realpath(tempfile.mkdtemp(prefix="course-graded-"))
    os.environ["TMPDIR"] = tempfile.tempdir = temp
    sys.dont_write_bytecode = True
    sys.addaudithook(_hook((os.path.realpath(os.getcwd()), temp), refused, end))
    return temp


def _writes(event: str, args: tuple) -> bool:
    if event != "open":
        return event in _WRITING
    mode, flags = (args[1], args[2]) if len(args) > 2 else (None, 0)
    return (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
        isinstance(flags, int) and bool(flags & _OPEN_FOR_WRITING)
    )


def _hook(allowed: tuple[str, ...], refused: list[str] | None, end: Callable[[str], None] | None) -> Callable:
    """The audit hook: see the module's docstring. ``allowed``: the folders it writes in (real paths)."""
    own, busy, places = f"/proc/{os.getpid()}/", [False], tuple(folder + os.sep for folder in allowed)
    abspath, realpath, isdir, fsdecode = os.path.abspath, os.path.realpath, os.path.isdir, os.fsdecode

    def why(event: str, args: tuple) -> str | None:
        writes = _writes(event, args)
        for index in FILE_EVENTS[event]:
            path = args[index] if index < len(args) else None
            if not isinstance(path, (str, bytes)):  # (a descriptor: opened by a path, which was seen then)
                continue
            text = fsdecode(path)
            if event == "sqlite3.connect":  # (any database, in memory too, can attach and write any file)
                return f"{event} of {text}"
            found = [abspath(text) + os.sep, realpath(text) + os.sep]  # (/proc/<pid>/cwd/... leads elsewhere)
            for place in found:
                if place.startswith("/proc/") and place.split("/")[2].isdigit() and not place.startswith(own):
                    return f"{event} of {place.rstrip(os.sep)}, another process's"
            inside = found[1].startswith(places) or found[1] == "/dev/null/"
            if not inside and (writes or (event == "open" and isdir(found[1]))):
                return f"{event} of {found[1].rstrip(os.sep)}, outside its own folder"
        return None

    def hook(event: str, args: tuple) -> None:
        if busy[0] or event not in FILE_EVENTS:
            return
        busy[0] = True
        try:
            found = why(event, args)
        finally:
            busy[0] = False
        if found:
            message = f"Not graded: {found} (a graded notebook writes only in its own folder)"
            if refused is not None:
                refused.append(message)
            if end is not None:
                end(message)
            raise PermissionError(message)

    return hook
