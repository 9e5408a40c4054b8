"""Where a graded kernel may write and look: its submission's own folder, a temporary folder of its own, itself.

A submission runs as the account that grades it. A red team's cell (the twentieth try) wrote a file into IPython's
startup folder in that account's home (``~/.ipython/profile_default/startup``): it ran in every kernel started after
it, before the grader's first cell, and forged passes for some students and failures for others; another wrote
``~/.jupyter/nbgrader_config.py``, which every later nbgrader process runs. An earlier try's cell appended to
course_lib's checks, and reached the course folder through the grader's own ``/proc/<pid>/cwd``.

So from the grader's first cell of a graded kernel on (the student's kernel: :func:`course_lib.classroom.witness.take`;
the grader's answers' kernel: :func:`course_lib.classroom.serve.serve`), :func:`confine` lets it

- write only in the submission's own folder (the kernel's working folder then), a temporary folder made for the
  kernel (``tempfile``'s from then on, and ``TMPDIR``'s), its own ``/proc`` folder and ``/dev/null``: a file
  opened for writing, removed, renamed, linked, truncated or its mode changed anywhere else, or an SQLite database
  opened anywhere (one can attach and write any file), raises ``PermissionError``, "Not graded", whoever asked (the
  student's code or a library on its behalf: ``numpy.savetxt`` writes any text). So does a folder opened
  elsewhere: a descriptor of it would let ``os.open(name, dir_fd=...)`` write where the audit event, which names
  only ``name``, cannot tell;
- look into no other process: nothing under another process's ``/proc`` folder is opened.

- read nothing of the course's own files but course_lib and its data: the clone course_lib runs from (its notebooks
  hold the solutions, and its tests, history and book hold them too) and nbgrader's course folder (the source version,
  the gradebook, other students' work) are refused to it, bar course_lib, ``data/``, the Python environment and its
  own folder (:func:`hidden_places`). A nineteenth trial's answer read notebook 14 from ``cl.__file__``'s clone and
  compiled its solutions as TorchScript: full marks, unflagged.

No bytecode is written (``sys.dont_write_bytecode``), and matplotlib's font cache is made, where it is missing, before
the hook. A refusal is added to ``refused`` (the student's kernel: no graded test cell after it gets its evidence,
:mod:`course_lib.classroom.witness`) and told to ``end`` (the answers' kernel, which ends there).

An audit hook sees what Python does, not what C code does: the red team's next try wrote its startup file with
``torch.from_file`` (C++ writes the bytes, no event). So where Linux has Landlock (5.13 and later), the operating
system refuses the same writes to the whole process and its children, C code included (:func:`_landlock`): a file or
folder created, written, removed or renamed only in those two folders, ``/dev/null`` and ``/proc`` (where a process
writes its own settings), no TCP port connected to (another kernel's, whose key lies in a readable file), and no file
read in the hidden places (``torch.from_file`` reads without an event too).
IPython's history, a database in the home folder, is kept in memory from then on.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import struct
import sys
import tempfile
from collections.abc import Callable

from .unwatched import FILE_EVENTS

__all__ = ["confine", "landlock_version"]

_WRITING = frozenset(FILE_EVENTS) - {"open"}  # (every file event but open changes a file; open: by its mode)
_OPEN_FOR_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def confine(refused: list[str] | None = None, end: Callable[[str], None] | None = None) -> str:
    """Confine this process from now on (see the module's docstring); its temporary folder."""
    with contextlib.suppress(Exception):  # (a library's own write, made now, before the hook, if it must be made)
        import matplotlib.font_manager  # noqa: F401
    temp = os.path.realpath(tempfile.mkdtemp(prefix="course-graded-"))
    atexit.register(shutil.rmtree, temp, ignore_errors=True)
    os.environ["TMPDIR"] = tempfile.tempdir = temp
    sys.dont_write_bytecode = True
    own = os.path.realpath(os.getcwd())
    hidden, kept = hidden_places(own)
    _history_in_memory()
    _landlock((own, temp, "/proc"), ("/dev/null",), _readable(hidden, (*kept, temp)))
    sys.addaudithook(_hook((own, temp), refused, end, hidden, kept))
    return temp


def hidden_places(own: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the folders a graded kernel may not read, those inside them it may), real paths: the clone course_lib runs
    from, where it is one (its ``notebooks/`` beside it), and nbgrader's course folder above ``own``, where there is
    one; course_lib, the clone's ``data/``, the Python environment and ``own`` stay readable."""
    from .unwatched import grading_folder

    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    root = os.path.dirname(package)
    hidden = [root] if os.path.isdir(os.path.join(root, "notebooks")) else []
    hidden += [grading_folder(own)[1]] if grading_folder(own) else []
    environment = {os.path.realpath(p) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix)}
    return tuple(hidden), (own, package, os.path.join(root, "data"), *sorted(environment))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _readable(hidden: tuple[str, ...], kept: tuple[str, ...]) -> list[str]:
    """The paths beneath which reading stays allowed so that everything is readable but ``hidden``, bar ``kept``:
    each entry beside the way down from ``/`` to a hidden folder, and the kept folders inside one. An entry that is
    a link to a hidden folder, or to one above it, is left out (a rule holds for what the link leads to)."""
    if not hidden:
        return []
    grants = [k for k in kept if any(_inside(k, h) for h in hidden)]

    def walk(folder: str) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            real = os.path.realpath(entry.path)
            if any(_inside(real, h) for h in hidden):
                continue
            if any(_inside(h, real) for h in hidden):
                if not entry.is_symlink():
                    walk(entry.path)
            else:
                grants.append(entry.path)

    walk(os.sep)
    return grants


def _history_in_memory() -> None:
    """IPython's history from now on in a database in memory (its file, in the home folder, is no longer written)."""
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    history = getattr(shell, "history_manager", None)
    if history is None:
        return
    with contextlib.suppress(Exception):
        if history.save_thread is not None:
            history.save_thread.stop()
        history.save_thread = None
    history.hist_file = ":memory:"
    history.init_db()


# Landlock's rights on files and folders (linux/landlock.h): those that change something; on a file, only writing
_WRITE_FILE, _READ_FILE, _READ_DIR, _REFER, _TRUNCATE = 1 << 1, 1 << 2, 1 << 3, 1 << 13, 1 << 14
_CHANGES = _WRITE_FILE | sum(1 << bit for bit in range(4, 13))  # remove a folder/file, make char/dir/reg/sock/fifo/...
_TCP, _SCOPES = 0b11, 0b11  # bind and connect a TCP port; an abstract Unix socket and a signal outside the domain
_TSYNC = 1 << 3  # landlock_restrict_self's flag (version 8): every thread of the process, not only the caller


def landlock_version() -> int:
    """The version of Linux's Landlock this system has, 0 where it has none."""
    import ctypes

    if not sys.platform.startswith("linux"):  # (444 is Landlock's system call number on Linux only)
        return 0
    try:
        found = ctypes.CDLL(None).syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(int(found), 0)


def _landlock(folders: tuple[str, ...], files: tuple[str, ...], readable: list[str]) -> bool:
    """Have Linux refuse this process, and every process it starts, any change to a file or folder outside
    ``folders`` (and any write to a file but ``files``), and where ``readable`` is given any read outside it and
    ``folders``: Landlock, which needs no privilege. False where it is not there (another system, an older kernel):
    the audit hook alone stands."""
    import ctypes

    abi = landlock_version()
    if abi < 1:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    call = libc.syscall
    reading = _READ_FILE | _READ_DIR if readable else 0
    handled = _CHANGES | reading | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    # no TCP port bound or connected to (version 4: another kernel's key read, its ports reached), and no signal
    # nor abstract Unix socket outside (version 6); the kernel's own ports were bound when it started
    fields = [handled, *([_TCP] if abi >= 4 else []), *([_SCOPES] if abi >= 6 else [])]
    attr = ctypes.create_string_buffer(struct.pack(f"={len(fields)}Q", *fields))
    ruleset = call(ctypes.c_long(444), attr, ctypes.c_size_t(8 * len(fields)), ctypes.c_uint32(0))
    if ruleset < 0:
        return False
    try:
        rules = [
            *((f, handled) for f in folders),
            *((f, handled & (_WRITE_FILE | _TRUNCATE | _READ_FILE)) for f in files),
        ]
        if not all(_rule(call, ruleset, path, allowed) for path, allowed in rules):
            return False
        for path in readable:  # (an entry gone, or one Landlock takes no rule for, stays unreadable)
            _rule(call, ruleset, path, reading if os.path.isdir(path) else _READ_FILE)

        def restrict(flags: int = 0) -> bool:  # (this thread, and with TSYNC every thread of the process)
            if libc.prctl(38, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)):
                return False  # (PR_SET_NO_NEW_PRIVS: Landlock's condition)
            return call(ctypes.c_long(446), ctypes.c_int(ruleset), ctypes.c_uint32(flags)) == 0

        if abi >= 8:  # LANDLOCK_RESTRICT_SELF_TSYNC (Linux 7.0): the threads already running too
            return restrict(_TSYNC)
        return restrict() and _in_loop_threads(restrict)
    finally:
        os.close(ruleset)


def _rule(call: Callable, ruleset: int, path: str, allowed: int) -> bool:
    """Add Landlock's rule "``allowed`` beneath ``path``" to ``ruleset``; whether it was added."""
    import ctypes

    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        rule = ctypes.create_string_buffer(struct.pack("=Qi", allowed, fd))
        return call(ctypes.c_long(445), ctypes.c_int(ruleset), ctypes.c_int(1), rule, ctypes.c_uint32(0)) == 0
    finally:
        os.close(fd)


def _in_loop_threads(restrict: Callable[[], bool], wait: float = 5.0) -> bool:
    """Before Landlock's version 8, ``restrict`` confines only the thread that calls it and those it starts later,
    not ipykernel's threads already running (an eighteenth trial's helper had the Control thread's event loop run C
    code that wrote outside). Each thread's event loop that a cell can reach (``io_loop``: Control, Shell channel,
    IOPub) runs ``restrict`` in its own thread; whether all of them did. Threads without a loop stay unconfined (the
    guide says: a container, or an account of its own)."""
    import threading

    loops = [getattr(t, "io_loop", None) for t in threading.enumerate() if t is not threading.current_thread()]
    kernel = sys.modules.get("ipykernel.kernelbase")
    if kernel is not None and kernel.Kernel.initialized():
        loops.append(getattr(getattr(kernel.Kernel.instance(), "iopub_thread", None), "io_loop", None))
    done = []
    for loop in {id(loop): loop for loop in loops if hasattr(loop, "add_callback")}.values():
        ran = threading.Event()
        loop.add_callback(lambda ran=ran: (done.append(restrict()), ran.set()))
        done.append(ran.wait(wait))
    return all(done)


def _writes(event: str, args: tuple) -> bool:
    if event != "open":
        return event in _WRITING
    mode, flags = (args[1], args[2]) if len(args) > 2 else (None, 0)
    return (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
        isinstance(flags, int) and bool(flags & _OPEN_FOR_WRITING)
    )


def _hook(allowed: tuple[str, ...], refused: list[str] | None, end: Callable[[str], None] | None,
          hidden: tuple[str, ...] = (), kept: tuple[str, ...] = ()) -> Callable:  # fmt: skip
    """The audit hook: see the module's docstring. ``allowed``: the folders it writes in; ``hidden``: those it reads
    nothing in but ``kept`` (real paths)."""
    busy, places = [False], tuple(folder + os.sep for folder in allowed)
    secret, open_ = tuple(h + os.sep for h in hidden), tuple(k + os.sep for k in kept)
    abspath, realpath, isdir, fsdecode, getpid = (
        os.path.abspath,
        os.path.realpath,
        os.path.isdir,
        os.fsdecode,
        os.getpid,
    )

    def why(event: str, args: tuple) -> str | None:
        writes = _writes(event, args)
        for index in FILE_EVENTS[event]:
            path = args[index] if index < len(args) else None
            if not isinstance(path, (str, bytes)):  # (a descriptor: opened by a path, which was seen then)
                continue
            text = fsdecode(path)
            if event == "sqlite3.connect":  # (any database, in memory too, can attach and write any file)
                return f"{event} of {text}"
            own, found = f"/proc/{getpid()}/", [abspath(text) + os.sep]  # (own: now, a child forked has its own)
            try:
                found.append(realpath(text) + os.sep)  # (/proc/<pid>/cwd/... leads elsewhere)
            except OSError:  # (Landlock keeps another process's links from being read)
                found.append(found[0])
            for place in found:
                if place.startswith("/proc/") and place.split("/")[2].isdigit() and not place.startswith(own):
                    return f"{event} of {place.rstrip(os.sep)}, another process's"
            inside = found[1].startswith((*places, own)) or found[1] == "/dev/null/"  # (own: its settings, clear_refs)
            if not inside and (writes or (event == "open" and isdir(found[1]))):
                return f"{event} of {found[1].rstrip(os.sep)}, outside its own folder"
            if event == "open" and found[1].startswith(secret) and not found[1].startswith(open_):
                return f"{event} of {found[1].rstrip(os.sep)}, one of the course's own files (with its solutions)"
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
