"""What the grader watches from below the notebook's names: Python's audit hooks (``sys.addaudithook``).

Two things a check relies on could be reached by code the reading of the cells missed (an ``exec`` through a
library's own helper, such as ``dataclasses._create_fn`` or ``typing.get_type_hints`` of a string annotation):

- **the check's frames while the answer runs.** :func:`call_answer` makes the call of a graded answer
  (:func:`course_lib.classroom.checks.check_function`): while it runs, what hands out frames or other objects by
  reflection (``sys._getframe``, and through it ``inspect.stack``, ``traceback``, ``logging``; a traceback's or a
  generator's frame; ``gc.get_objects`` / ``get_referrers`` / ``get_referents``; ``sys._current_frames``) is
  refused when the answer asked for it, and so is switching the tracer or the profiler (which sees every frame, and
  is how a check refuses shortcuts). A library that looks at its own caller for its bookkeeping (``namedtuple``,
  ``typing``, torch's) is not refused. A refusal fails the check, "Not graded", even if the answer caught it.
- **the grader's verification, whatever a cell rebinds.** :func:`watch_cells` hands the hook the verification the
  guard's snapshot made (:mod:`course_lib.classroom.snapshot`): every statement run whose code names the snapshot
  (the first line the guard writes into every graded test cell) runs it first, so a cell that rebinds the
  notebook's name of the verification (or everything the test cell calls) does not switch it off.

- **another process, raw memory, what would run unwatched.** In a graded kernel (once the snapshot is taken), a
  cell that starts a process (``os.fork``, ``os.exec*``, ``os.posix_spawn``, ``os.system``, ``subprocess.Popen``;
  through ``multiprocessing``, ``concurrent.futures``, a ``DataLoader``'s workers), where nothing is blocked, reaches
  memory or C functions through ``ctypes``, runs a thread beside an answer's call, or makes a second copy of loaded
  code (:mod:`course_lib.classroom.unwatched`) is refused, and every check after it says "Not graded", even if the
  cell caught the refusal (the confinement's too: :func:`refused_outside`); so is a graded test cell IPython runs
  other than as written (:mod:`.rewritten`). A library's own process (matplotlib's ``fc-list``, ``course_lib.bench``'s
  child) is not refused. In the grader's answers' kernel every refusal ends the kernel too (:func:`end_on_refusal`).

A hook cannot be removed; outside a graded answer's call and those statements it does little but return. A check
run inside an answer's call keeps its own record of refusals above the outer call's, never clearing it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from .rewritten import NOT_GRADED, before_cell_code, cell_check
from .unwatched import FILE_EVENTS, audit_fork_exec, beside_hook, copying_hook, threads_now
from .unwatched import asker as _asker

__all__ = ["NOT_GRADED", "Refused", "call_answer", "end_on_refusal", "modes_at_snapshot", "refuse_always",
           "refused_outside", "verify_watched", "watch_cells"]  # fmt: skip


_FRAME_EVENTS = frozenset({"sys._getframe", "sys._getframemodulename", "sys._current_frames", "sys._current_exceptions",
                           "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.settrace", "sys.setprofile",
                           "sys.addaudithook"})  # fmt: skip
_FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back", "f_locals", "f_globals"})
# Starting a process (where nothing is blocked: a child could serve the reference's answers) and ctypes's raw memory
_PROCESS_EVENTS = frozenset({"os.fork", "os.forkpty", "os.exec", "os.posix_spawn", "os.system", "subprocess.Popen",
                             "_posixsubprocess.fork_exec",
                             "ctypes.addressof", "ctypes.call_function", "ctypes.cdata", "ctypes.cdata/buffer",
                             "ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.PyObj_FromPtr",
                             "ctypes.string_at", "ctypes.wstring_at"})  # fmt: skip
# Modules that start a process for their caller (and the wrapper that audits fork_exec): who asked is their caller
_SPAWNING = ("os", "posixpath", "subprocess", "multiprocessing", "concurrent", "pty", "asyncio", "ctypes",
             "torch.multiprocessing", "torch.utils.data", "course_lib.classroom.unwatched")  # fmt: skip
_SPAWNING_PARTS = tuple(f"{m}." for m in _SPAWNING)
# a second copy of loaded code, and a file of the grader's course folder outside the submission's (classroom.unwatched)
_COPY_EVENTS = frozenset({"import", "__code__", "f_code", *FILE_EVENTS})
_OWN = "course_lib.classroom"
_CHECKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checks.py")
_LIBRARIES = tuple({sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(os.path.abspath(__file__)))})


class Refused(RuntimeError):
    """Raised where a graded answer asks for the check's frames, or switches the tracer or profiler, while it runs."""


def _above(handed: object, frame: object, code: object) -> bool:
    """Whether ``handed``, a frame ``sys._getframe`` hands out to ``frame``'s code, is the frame of an answer's call
    (``code``'s, :func:`call_answer`) or one of its callers', the check's, while ``frame`` runs inside that call:
    refused whoever asks (a library's helper handing out a frame as many levels up as it is told)."""
    if handed is None:
        return False
    while frame is not None and frame.f_code is not code:
        frame = frame.f_back
    while frame is not None and frame is not handed:
        frame = frame.f_back
    return frame is not None


def _spawner(frame: object) -> object:
    """The frame of the code that asked for a process: past the modules that start one for their caller."""
    while frame is not None:
        name = frame.f_globals.get("__name__") or ""
        if name not in _SPAWNING and not name.startswith(_SPAWNING_PARTS):
            return frame
        frame = frame.f_back
    return frame


def _is_answer(frame: object) -> bool:
    """Whether ``frame`` runs a student's code: neither the course's own nor an installed library's, nor one of the
    frames that ran when this module was imported (:data:`_RUNNING`)."""
    if frame is None or _RUNNING.get(id(frame)) is frame:
        return False
    if (frame.f_globals.get("__name__") or "").startswith(_OWN):
        return False
    return not os.path.abspath(frame.f_code.co_filename).startswith(_LIBRARIES)


def _under(frame: object, code: object) -> bool:
    """Whether ``frame`` runs inside a call of ``code``'s (an answer's call, :func:`call_answer`), or, for ``code``
    None, inside a check (:func:`course_lib.classroom.checks.check_function`, known by its file and name)."""
    while frame is not None:
        found = frame.f_code
        if found is code or (code is None and found.co_name == "check_function" and found.co_filename == _CHECKS):
            return True
        frame = frame.f_back
    return False


def _refusing(frame: object, code: object, frames: dict, graded_gc: list[str] | None = None) -> bool:
    """Whether a frame asked for from ``frame`` is refused: inside an answer's call; or in another thread than a
    check's while the check runs (a thread a cell started could read the check's frames while the answer waits); or,
    in a graded kernel, anywhere for gc's (``graded_gc``: "Not graded" for good), which hands out any object (the
    code of course_lib's functions, a closure's contents) and is no answer's business."""
    if graded_gc is not None:
        graded_gc.append("gc's objects (any object: the code of course_lib's functions too)")
        return True
    if _under(frame, code):
        return True
    return not _under(frame, None) and any(_under(f, None) for f in frames.values())


def _unsetting(event: str) -> bool:
    """Whether Python is unsetting a profiler that raised: the check's own, refusing a shortcut (classroom.reach)."""
    return event == "sys.setprofile" and bool(getattr(getattr(sys.getprofile(), "__self__", None), "refused", None))


def _calling(refused: list[str], beside: Callable[[], str | None]) -> Callable:
    """The function that calls a graded answer: it raises ``Refused`` after the call if the hook refused the answer
    something (``refused``), even if the answer caught the refusal, and before it if a thread a cell started runs
    beside it (``beside``: it could do the answer's work unwatched). A check run inside the answer keeps its own
    record above the outer one's, and leaves the outer one's as it was."""
    error = Refused  # bound now, as the hook's names are

    def call(fn: Callable, args: Sequence[object]) -> object:
        thread, mark = beside(), len(refused)
        if thread:
            raise error(f"ran beside {thread}, which a cell started: another thread is outside the check's watch")
        try:
            return fn(*args)
        finally:
            why = refused[mark : mark + 1]
            del refused[mark:]
            if why:  # refused, even if the answer caught it
                raise error(f"asked for {why[0]} while it was checked: the check's own frames are not the answer's")

    return call


def _refusal(ending: list[Callable[[str], None]]) -> Callable[[str], Refused]:
    """The hook's refusal, ``Refused(why)``, made after ``ending``'s function, if it has one, was told why (the
    grader's answers' kernel, which ends there: :func:`end_on_refusal`)."""

    def refused(why: str) -> Refused:
        for end in ending:
            end(why if why.startswith(NOT_GRADED) else f"{NOT_GRADED}: {why}")
        return Refused(why)

    return refused


def _verifying(cells: list[tuple], spawned: list[str]) -> Callable[[], None]:
    """The verification a graded test cell runs first: "Not graded" for good once a cell was refused a process or
    ctypes (``spawned``), else the snapshot's (``cells``), if one was taken."""

    def verified() -> None:
        if spawned:
            raise AssertionError(
                f"{NOT_GRADED}: a cell asked for {spawned[0]}, refused in a graded notebook (another process or "
                "thread, raw memory through ctypes, a second copy of the course's code, a file outside its folder); "
                "restart the kernel and run the cells without it"
            )
        if cells:
            cells[0][1]()

    return verified


def _install() -> tuple[Callable, Callable]:
    """Add the one audit hook of this process; return its switches (closures: nothing a cell rebinds reaches them).
    An answer's call is known by the code of the function that makes it on the stack, not by a state it could reset."""
    # refused; the hook running; (marker, verify, modes, threads): the snapshot's; refusing outside grading; what a
    # cell was refused in a graded kernel outside a check (a process, ctypes, a thread, a copy): every later check fails
    refused, busy, cells, strict, spawned, ending = [], [False], [], [False], [], []
    getframe, frames, asker, is_answer, spawner = sys._getframe, sys._current_frames, _asker, _is_answer, _spawner
    unsetting, refusing, above, Error = _unsetting, _refusing, _above, _refusal(ending)
    events, attributes, processes, copies = _FRAME_EVENTS, _FRAME_ATTRIBUTES, _PROCESS_EVENTS, _COPY_EVENTS
    copying, beside = copying_hook(cells, spawned, busy, is_answer, Error), beside_hook(cells, spawned, busy, is_answer)
    call, verified = _calling(refused, beside), _verifying(cells, spawned)
    code, running = call.__code__, before_cell_code(cells, busy, verified, Error)

    def hook(event: str, args: tuple) -> None:
        if event == "object.__getattr__":  # the most frequent (a profiler reading frame.f_code): first
            if args[1] in copies:  # (reading the code of course_lib's functions: a copy to be)
                return copying(event, args)
            if args[1] not in attributes or busy[0]:
                return
        elif event == "exec":  # (copying: a module's code run, classroom.unwatched; returns None)
            return None if copying(event, args) or not cells or busy[0] else running(args[0])
        elif event == "object.__setattr__":
            if args[0] is call:
                raise Error("the function that calls a graded answer cannot be changed")
            return
        elif event in copies:
            return copying(event, args)
        elif event in processes:
            if cells and not busy[0] and is_answer(spawner(getframe(1))):  # (a graded kernel's: not refuse_always)
                spawned.append(event)
                raise Error(f"asked for {event} in a graded notebook: no other process, nor raw memory through ctypes")
            return
        elif event not in events or busy[0]:
            return
        if not (cells or strict[0]) or unsetting(event):
            return
        busy[0] = True
        try:
            frame, handed = getframe(1), args[0] if event == "sys._getframe" and args else None
            graded_gc = spawned if cells and event[:3] == "gc." else None  # (gc in a graded kernel: refused anywhere)
            if (is_answer(asker(frame)) and refusing(frame, code, frames(), graded_gc)) or above(handed, frame, code):
                refused.append(event if event in events else f"a frame's {args[1]}")
                raise Error(
                    f"asked for {refused[-1]} while it was checked: the check's own frames are not the answer's"
                )
        finally:
            busy[0] = False

    def watch(marker: str | None = None, verify: Callable[[], None] | None = None, modes: tuple = (),
              end: Callable[[str], None] | None = None, outside: str = "") -> tuple:  # fmt: skip
        ending.extend([end] if end is not None and not ending else [])  # (once: the first, the grader's)
        spawned.extend([outside] if outside else [])  # (classroom.confine's refusals: "Not graded" for good too)
        if marker and not cells:  # the first snapshot of a kernel stays, with the threads it had and its shell's
            cells.append((marker, verify, modes, threads_now(), cell_check(verified)))
        strict[0] = strict[0] or marker == ""  # (switched on for good: refusing more is nothing to gain by)
        return (verified if cells else None), (cells[0][2] if cells else None)

    sys.addaudithook(hook)
    return call, watch


# The frames running when this module is imported (before any answer: the set-up cell imports course_lib), held so
# that no later frame takes one's id: the kernel's own, which run for its whole life below every cell, whatever file
# they come from (a kernel started by a site's launcher script, or forked from the course tests' warm server in tools/,
# has frames outside the libraries' folders at the bottom of its stack), and the set-up cell's, which end with it.
def _running() -> dict[int, object]:
    frames, frame = {}, sys._getframe(1)
    while frame is not None:
        frames[id(frame)] = frame
        frame = frame.f_back
    return frames


_RUNNING = _running()
_SWITCHES = _install()  # at import: before any cell of a notebook runs
audit_fork_exec()


def call_answer(fn: Callable, args: Sequence[object]) -> object:
    """``fn(*args)``, a graded answer's call, with the check's frames out of its reach: raises ``Refused`` if it asked
    for them (even if it caught the refusal) or switched the tracer or profiler."""
    return _SWITCHES[0](fn, args)


def watch_cells(marker: str, verify: Callable[[], None], modes: Sequence[object] = ()) -> None:
    """Run ``verify`` before every statement whose code names ``marker`` (the guard's line in each graded test cell),
    however the notebook's names were rebound, and remember ``modes``, the torch modes on when the snapshot was taken
    (the grading machine's own). Only the first call of a process counts (a kernel grades one submission; a later
    snapshot, taken after a cell changed something, would not know the change)."""
    _SWITCHES[1](marker, verify, tuple(modes))


def end_on_refusal(end: Callable[[str], None]) -> None:
    """Every refusal from now on calls ``end`` with why first; the first call counts (:func:`.serve.serve`'s)."""
    _SWITCHES[1](end=end)


def refused_outside(why: str) -> None:
    """A refusal of the kernel's confinement (:mod:`.confine`): every later graded test cell "Not graded" for good."""
    _SWITCHES[1](outside=why.removeprefix(f"{NOT_GRADED}: "))


def refuse_always() -> None:
    """Refuse the check's frames to the answers it runs from now on in this process, not only in a graded kernel (a
    student's own kernel is left alone: a ``breakpoint()`` in an answer while it is checked there is no cheat)."""
    _SWITCHES[1]("")


def verify_watched() -> None:
    """Run the verification :func:`watch_cells` was handed, if any (a check runs it before and after it compares)."""
    verify = _SWITCHES[1]()[0]
    if verify is not None:
        verify()


def modes_at_snapshot() -> tuple[object, ...] | None:
    """The torch modes that were on when a graded kernel's snapshot was taken, or None outside a graded kernel."""
    return _SWITCHES[1]()[1]
