"""What a graded kernel cannot watch, and so refuses: the audit hook's (:mod:`course_lib.classroom.watch`) tests.

A check watches the answer it runs from the answer's own thread (the profiler and torch's modes are the thread's)
and knows the functions it blocks by identity, by code and by module and name. Three routes run outside that watch,
and in a graded kernel a cell that takes one is refused, "Not graded" for good:

- **another thread**, started by a cell (or by a library for it, an executor), alive while an answer is checked:
  whatever it calls, the check cannot see. A thread the kernel had before the snapshot, and one that a library
  starts for itself (tqdm's monitor, the kernel's own), with no student's code on its stack, are not refused;
- **a process started through ``_posixsubprocess.fork_exec``** (``multiprocessing``'s spawn and forkserver
  contexts), which raises no audit event of its own: :func:`audit_fork_exec` makes it raise one, and keeps the real
  function nowhere a cell could find it (each call loads it afresh);
- **a second copy of a loaded module**: an extension module loaded again from its file (a fresh
  ``_posixsubprocess``, its ``fork_exec`` unwatched), the source or bytecode of a loaded module of course_lib read by
  a cell (to run a changed copy), or the code object of course_lib's functions or frames taken by a cell (to make a
  function of another name from it: ``code.replace``); IPython's help reading them for the text it prints is not.

Not refused (nothing sees it): NumPy's raw memory (``__array_interface__``, no event); the cells' reading stands there.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from _thread import get_ident
from collections.abc import Callable

__all__ = ["COURSE", "HANDING", "HANDING_MODULES", "asker", "audit_fork_exec", "beside_hook", "copying_hook",
           "course_code", "foreign_threads", "grading_folder", "handing", "loaded_course_file", "outside_own_folder",
           "threads_now", "who_decides"]  # fmt: skip

COURSE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # course_lib's folder
# Import machinery and the modules that read a file for their caller: who asked is the code that called them
_MACHINERY = ("importlib", "_frozen_importlib", "zipimport", "runpy", "pkgutil")
# Libraries whose threads are their own (a progress bar's monitor, the kernel's), unless a student's code runs there
_OWN_THREADS = ("tqdm", "ipykernel", "IPython", "zmq", "jupyter_client", "tornado", "traitlets", "debugpy")
# Modules whose functions hand frames (or what is in them) to their caller: who asked is the code that called them
HANDING = ("inspect", "traceback", "logging", "bdb", "pdb", "cgitb", "pydoc", "linecache", "dataclasses")
# ... and single modules of libraries whose helpers walk up from their own frame to a caller's caller (f_back, f_locals:
# no audit event on Python 3.11) and hand over its locals: torch's (TorchScript's name lookup), IPython's, pydantic's
HANDING_MODULES = ("torch._jit_internal", "torch._sources", "IPython.utils.frame", "IPython.core.debugger",
                   "pydantic._internal._typing_extra", "sympy.utilities.magic", "stack_data", "pure_eval")  # fmt: skip


def handing(module: str) -> bool:
    """Whether ``module`` (a name) is one whose functions hand frames, or what is in them, to their caller."""
    return module.split(".")[0] in HANDING or module.startswith(HANDING_MODULES)


def asker(frame: object) -> object:
    """The frame of the code that asked: past the modules that hand frames to their caller."""
    while frame is not None and handing(frame.f_globals.get("__name__") or ""):
        frame = frame.f_back
    return frame


# Events that open or change a file by its path, and the argument positions of their paths: in a graded kernel, a path
# inside nbgrader's course folder but outside the submission's own folder is refused (:func:`grading_folder`)
FILE_EVENTS = {"open": (0,), "sqlite3.connect": (0,), "os.remove": (0,), "os.rename": (0, 1), "os.truncate": (0,),
               "os.symlink": (0, 1), "os.link": (0, 1), "os.chmod": (0,), "shutil.rmtree": (0,)}  # fmt: skip


def grading_folder(start: str) -> tuple[str, str] | None:
    """(the submission's folder, the nbgrader course folder above it), real paths, where ``start`` (the graded kernel's
    working directory, ``autograded/<student>/<assignment>``) lies below a folder holding ``gradebook.db`` or
    ``nbgrader_config.py`` (at most four levels up); else None. A submission that opens or changes a file there, outside
    its own folder, could rewrite the grader's configuration, the gradebook (scores, hidden tests) or another
    student's work (a twelfth lecturer's trial: a line appended to nbgrader_config.py switched the guard off for every
    submission graded after it; sqlite3 on gradebook.db gave every grade a manual score)."""
    home = folder = os.path.realpath(start)
    for _ in range(4):
        folder = os.path.dirname(folder)
        if any(os.path.exists(os.path.join(folder, name)) for name in ("gradebook.db", "nbgrader_config.py")):
            return home, folder
    return None


def outside_own_folder(path: object, folders: tuple[str, str] | None) -> bool:
    """Whether ``path`` (str, bytes or a path-like; relative to the working directory) lies in the course folder of
    ``folders`` and not in the submission's own folder, once links are followed."""
    if folders is None or isinstance(path, int):
        return False
    try:
        real = os.path.realpath(os.fsdecode(os.fspath(path)))
    except (TypeError, ValueError):
        return False
    home, course = folders
    inside = lambda folder: real == folder or real.startswith(folder + os.sep)  # noqa: E731
    return inside(course) and not inside(home)


def notebook_elsewhere(path: object, home: str) -> bool:
    """Whether ``path``, links followed, is a notebook outside the submission's folder ``home`` (a twenty-third trial
    read the source version moved beside the course folder: full marks, unflagged)."""
    if isinstance(path, int):
        return False
    try:
        real = os.path.realpath(os.fsdecode(os.fspath(path)))
    except (TypeError, ValueError):
        return False
    return real.endswith(".ipynb") and not real.startswith(home + os.sep)


def loaded_course_file(path: object, executed: set[str]) -> bool:
    """Whether ``path`` is the source or cached bytecode of a module of course_lib whose code has run (``executed``:
    their source files): not while its first import reads it."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str) or not os.path.abspath(path).startswith(COURSE):
        return False
    folder, name = os.path.split(os.path.abspath(path))
    if os.path.basename(folder) == "__pycache__":  # name.cpython-311.pyc: the bytecode of name.py
        folder, name = os.path.dirname(folder), name.split(".")[0] + ".py"
    return os.path.join(folder, name) in executed


def course_code(obj: object) -> bool:
    """Whether ``obj``, a function or a frame, holds code of course_lib's."""
    code = getattr(obj, "f_code", None) or getattr(obj, "__code__", None)
    return str(getattr(code, "co_filename", "")).startswith(COURSE)  # (a module's code has its absolute path)


def who_decides(frame: object, is_answer: Callable[[object], bool]) -> bool:
    """Whether the code on whose behalf ``frame`` runs is a student's: up the stack, past libraries and the import
    machinery, the first frame that is course_lib's (no) or a student's (yes)."""
    while frame is not None:
        name = frame.f_globals.get("__name__") or ""
        if name == "course_lib" or name.startswith("course_lib."):
            return False
        machinery = name.startswith(_MACHINERY) or frame.f_code.co_filename.startswith("<frozen")
        if not machinery and is_answer(frame):
            return True
        frame = frame.f_back
    return False


def _bottom(frame: object) -> object:
    while frame.f_back is not None:
        frame = frame.f_back
    return frame


def threads_now() -> dict[int, object]:
    """Each thread's identity -> the first frame of its stack (the same object while the thread lives)."""
    return {ident: _bottom(frame) for ident, frame in sys._current_frames().items()}


def _stack(frame: object) -> list[object]:
    """A thread's frames, from the one running now down to the first."""
    found = []
    while frame is not None:
        found.append(frame)
        frame = frame.f_back
    return found


def _entry(stack: list[object]) -> str:
    """Where a thread's work comes from: the first function of its stack past ``threading``'s own, "module.name"."""
    for frame in reversed(stack):
        module = frame.f_globals.get("__name__") or ""
        if module != "threading":
            return f"{module}.{frame.f_code.co_name}"
    return "threading"


def foreign_threads(alive: dict[int, object], is_answer: Callable[[object], bool]) -> list[str]:
    """The threads running now, other than the caller's, that ``alive`` (:func:`threads_now` at the snapshot) did not
    have and that are not a library's own (see the module): "a thread running module.function", one each."""
    found, me = [], get_ident()
    for ident, frame in sys._current_frames().items():
        stack = _stack(frame)
        if ident == me or alive.get(ident) is stack[-1]:
            continue
        entry = _entry(stack)
        if entry.split(".")[0] in _OWN_THREADS and not any(is_answer(f) for f in stack):
            continue
        found.append(f"a thread running {entry}")
    return found


def helping(frame: object, is_answer: Callable[[object], bool]) -> bool:
    """Whether IPython's help (``x?``, ``x??``: :mod:`IPython.core.oinspect`) asks, no student's frame between (a
    twenty-third trial's honest ``cl.padding_mask?`` read its ``__code__``, was refused, and lost 3 of 5)."""
    while frame is not None:
        if is_answer(frame):
            return False
        if frame.f_globals.get("__name__") == "IPython.core.oinspect":
            return True
        frame = frame.f_back
    return False


def copying_hook(cells: list[tuple], spawned: list[str], busy: list[bool], is_answer: Callable[[object], bool],
                 Error: Callable[[str], BaseException]) -> Callable[[str, tuple], None]:  # fmt: skip
    """The audit hook's part (:mod:`course_lib.classroom.watch`) for a second copy of loaded code, in a graded kernel
    (``cells``, the snapshot's): an extension module's file loaded again (event ``import``), a loaded course_lib
    module's file opened (``open``; loaded: its code ran, event ``exec``), course_lib's code objects taken
    (``object.__getattr__`` of ``__code__`` or ``f_code``), each on a student's behalf: raises ``Error``, and
    ``spawned`` says "Not graded" for good. ``busy`` is the hook's flag: the events this part causes return at once.

    A frame's code, or a course file's lines, read by a module that walks the stack for its caller (``traceback``,
    ``inspect``, ``linecache``: :func:`asker` steps past them) are on that caller's behalf: a library's walk
    is its own (``torch.manual_seed`` formats the stack, and a check's inputs call it), a student's is refused."""
    getframe, decides = sys._getframe, who_decides

    def stack_walk(frame: object) -> bool:  # a library's, through a module that hands frames to its caller
        while frame is not None and asker(frame) is frame:  # up to that module (past the libraries it calls)
            if is_answer(frame):
                return False
            frame = frame.f_back
        return frame is not None and not is_answer(asker(frame))

    folders = grading_folder(os.getcwd())  # (the notebook's folder when course_lib is imported: its set-up cell)
    executed = {os.path.abspath(m.__file__) for n, m in list(sys.modules.items())
                if n.split(".")[0] == "course_lib" and getattr(m, "__file__", None)}  # fmt: skip
    extensions = {getattr(m, "__file__", None) for m in list(sys.modules.values())} - {None}

    def copying(event: str, args: tuple) -> None:
        if event == "exec":  # a module's code run: from now on its files are a copy's to be
            code = args[0]
            if getattr(code, "co_name", None) == "<module>" and str(code.co_filename).startswith(COURSE):
                executed.add(os.path.abspath(code.co_filename))
            return
        if busy[0] or (event == "import" and args[1] is None) or (event != "import" and not cells):
            return
        busy[0] = True
        try:
            if event == "import":  # (a path only where an extension module's file is loaded)
                what = f"a second copy of {args[1]}" if args[1] in extensions else None
                extensions.add(args[1])
            elif any(outside_own_folder(args[i], folders) for i in FILE_EVENTS.get(event, ()) if i < len(args)):
                what = f"the file {args[0]} ({event}), of the grader's course folder outside the submission's own"
            elif event == "open" and folders and notebook_elsewhere(args[0], folders[0]):
                what = f"the notebook {args[0]} (open), outside the submission's own folder (the grader's solutions?)"
            elif event == "open":
                what = (
                    f"the file {args[0]}, of a loaded module of course_lib"
                    if loaded_course_file(args[0], executed)
                    and not stack_walk(getframe(2))
                    and not helping(getframe(2), is_answer)
                    else None
                )
            elif event in FILE_EVENTS:
                what = None
            else:
                what = f"course_lib's code ({args[1]})" if course_code(args[0]) else None
                lent = (args[1] == "f_code" and stack_walk(getframe(2))) or helping(getframe(2), is_answer)
                what = None if what and lent else what
            asked = what is not None and bool(cells) and decides(getframe(2), is_answer)
        finally:
            busy[0] = False
        if asked:
            spawned.append(what)
            why = (
                "it reads and writes its own folder only"
                if event in FILE_EVENTS and "grader's" in what
                else ("a copy of the course's code runs unwatched")
            )
            raise Error(f"asked for {what} in a graded notebook: {why}")

    return copying


def beside_hook(cells: list[tuple], spawned: list[str], busy: list[bool],
                is_answer: Callable[[object], bool]) -> Callable[[], str | None]:  # fmt: skip
    """The audit hook's test (:mod:`course_lib.classroom.watch`) before each answer's call, in a graded kernel
    (``cells``: the snapshot's, its last item :func:`threads_now` then): a thread running that the kernel did not have
    then and that no library runs for itself (:func:`foreign_threads`), described; ``spawned`` then says "Not graded"
    for good."""

    def beside() -> str | None:
        if not cells or busy[0]:
            return None
        busy[0] = True
        try:
            found = foreign_threads(cells[0][3], is_answer)
        finally:
            busy[0] = False
        spawned.extend(f"{found[0]} beside a check" for _ in found[:1])
        return found[0] if found else None

    return beside


def audit_fork_exec() -> None:
    """Make ``_posixsubprocess.fork_exec`` raise the audit event ``_posixsubprocess.fork_exec`` first (``subprocess``
    and ``multiprocessing`` call it through the module); the real one is loaded afresh for each call, held nowhere."""
    try:
        import _posixsubprocess
    except ImportError:  # (not a POSIX system)
        return
    spec, audit = _posixsubprocess.__spec__, sys.audit

    def fork_exec(*args: object) -> object:
        audit("_posixsubprocess.fork_exec", args[1] if len(args) > 1 else None)
        return importlib.util.module_from_spec(spec).fork_exec(*args)

    fork_exec.__module__ = __name__
    _posixsubprocess.fork_exec = fork_exec
