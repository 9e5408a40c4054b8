"""Answers run in one kernel, checks in another: the grader's own run (:mod:`course_lib.classroom.recheck`).

The answers' kernel runs the submission's cells and never a test cell, so no check's reference is defined there.
:func:`serve` answers, from a thread of that kernel, what the checks' kernel asks of it, over a Unix socket:

- ``values``: the values the named by-hand answers have now;
- ``call``: an implement-it answer called on the arguments sent, with the random state the caller had and the
  library functions the caller's check blocks (:func:`course_lib.classroom.claims.blocking`) blocked here too.

In the checks' kernel an implement-it answer's name is an :class:`Answer`: calling it asks the answers' kernel and
gives back what the answer returned, or raises what it raised. Everything crosses as data
(:mod:`course_lib.classroom.claims`). The answers' kernel can send back anything; it cannot change what the checks'
kernel compares with. An argument the checks' kernel cannot send as data (a model whose ``forward`` a test cell
replaced to count its calls) raises :class:`HandedOn`: that test cell cannot be decided here, and keeps the verdict of
the kernel that ran the whole submission.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import random
import socket
import struct
import sys
import threading
from collections.abc import Callable, Iterator, MutableMapping
from types import SimpleNamespace
from typing import TypeVar

import numpy as np
import torch
from torch.utils._python_dispatch import _disable_current_modes

from .claims import blocking, decode, encode
from .exercises import _resolve, blocked
from .reach import ShortcutError

__all__ = ["GONE", "REFUSED", "Answer", "HandedOn", "connect", "serve", "values"]

T = TypeVar("T")
_LIMIT = 1 << 30  # bytes a message may have (a reply larger than this is no answer)
_UNREADABLE = "course_lib.classroom.claims.Unreadable"
_WHY, REFUSED = 4096, 86  # a refusal in the answers' kernel: the bytes of why it writes to the grader; its exit status
GONE = "the answers' kernel did not answer"
_state = SimpleNamespace(path=None, timeout=600.0)  # (the checks' kernel: where the answers' kernel listens)


class HandedOn(BaseException):
    """Raised in the checks' kernel when a test cell hands an answer something that cannot cross as data: the cell
    keeps the verdict of the submission's kernel. A ``BaseException``: no check's ``except Exception`` takes it."""


def _send(sock: socket.socket, data: bytes) -> None:
    sock.sendall(struct.pack("!Q", len(data)) + data)


def _receive(sock: socket.socket) -> object:
    def exactly(n: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < n:
            chunk = sock.recv(min(n - len(chunks), 1 << 20))
            if not chunk:
                raise ConnectionError("the other kernel closed the connection")
            chunks += chunk
        return bytes(chunks)

    (size,) = struct.unpack("!Q", exactly(8))
    if size > _LIMIT:
        raise ConnectionError(f"a message of {size} bytes")
    return json.loads(exactly(size))


# ---------------------------------------------------------------- the answers' kernel


def serve(path: str, namespace: MutableMapping, report: str | None = None) -> None:
    """Answer the checks' kernel's requests on the Unix socket ``path``, from a thread, with ``namespace`` (the
    notebook's globals). The grader's first cell of the answers' kernel, before any of the submission's: it also
    refuses, from then on, what the evidence's hook refuses in the student's kernel (another process's memory, a
    pickle, code a cell wrote: :mod:`course_lib.classroom.witness`) and a write outside the submission's folder or a
    look into another process (:mod:`course_lib.classroom.confine`); the snapshot the guard put into the first
    locked cell, which this kernel runs too, refuses the rest as there (the course folder, starting a process, raw
    memory). Each of these refusals ends this kernel (:func:`_ending`), after telling the grader why on ``report``."""
    from IPython import get_ipython

    from .confine import confine
    from .watch import end_on_refusal
    from .witness import _refuser

    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)  # (before the confinement: the socket is a file, in the grader's folder)
    server.listen()
    end = _ending(report)
    end_on_refusal(end)
    confine(end=end)
    sys.addaudithook(_refuser(get_ipython(), end))  # (last: it refuses another hook)
    threading.Thread(target=_loop, args=(server, namespace), daemon=True, name="course-serve").start()


def _loop(server: socket.socket, namespace: MutableMapping) -> None:
    while True:
        connection, _ = server.accept()
        with connection:
            try:
                reply = _reply(_receive(connection), namespace)
            except Exception as err:  # (a request it could not read; nothing the checks' kernel sent is code)
                reply = {"raised": ["RuntimeError", f"the answers' kernel could not answer: {err}"]}
            with contextlib.suppress(OSError):
                _send(connection, json.dumps(reply).encode())


def _reply(request: dict, namespace: MutableMapping) -> dict:
    if request.get("op") == "values":
        names = [n for n in request["names"] if n in namespace and not callable(namespace[n])]
        return {"values": {n: encode(namespace[n]) for n in names}}
    name = str(request["name"])
    fn = namespace.get(name)
    if not callable(fn):
        return {"raised": ["NameError", f"name {name!r} is not defined (or not a function) in the submission"]}
    args, kwargs = decode(request["args"]), decode(request["kwargs"])
    torch.set_rng_state(decode(request["torch"]))  # type: ignore[arg-type]
    random.setstate(decode(request["random"]))  # type: ignore[arg-type]
    np.random.set_state(decode(request["numpy"]))  # type: ignore[arg-type]
    try:
        with _blocked(request.get("without", []), str(request.get("who", name)), namespace, fn):
            result = fn(*args, **kwargs)  # type: ignore[operator]
    except BaseException as err:  # (whatever it raised, the checks' kernel raises it there)
        return {"raised": [type(err).__name__, str(err)]}
    return {"value": encode(result)}


def _ending(report: str | None) -> Callable[[str], None]:
    """What a refusal does in the answers' kernel: write why to the grader, on a line opened before any cell of the
    submission ran, and end the kernel there and then (``os._exit``). A refusal raised as an error would be an error
    the submission's cell could catch and carry on after, unflagged; an ended kernel answers no check after it."""
    line = -1
    if report:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(report)
            line = sock.detach()
    write, leave = os.write, os._exit  # (taken now: a cell that rebinds os's names does not reach them)

    def end(why: str) -> None:
        try:
            write(line, why.encode("utf-8", "replace")[:_WHY])
        except OSError:
            pass
        leave(REFUSED)

    return end


@contextlib.contextmanager
def _blocked(names: list, who: str, namespace: MutableMapping, fn: object) -> Iterator[None]:
    """The names the caller's check blocks, blocked here; a name this kernel cannot find (a function of the checks'
    kernel) is skipped: nothing here can call it by that name either."""
    here = []
    for name in dict.fromkeys(str(n) for n in names):
        with contextlib.suppress(Exception):
            _resolve(name)
            here.append(name)
    if not here:
        yield
        return
    with blocked(here, who=who, namespace=namespace, functions=(fn,)):  # type: ignore[arg-type]
        yield


# ---------------------------------------------------------------- the checks' kernel


def connect(path: str, timeout: float) -> None:
    """Where the answers' kernel listens, and how long a request may wait (the checks' kernel's first cell)."""
    _state.path, _state.timeout = path, float(timeout)


def _ask(request: dict) -> dict:
    if _state.path is None:
        raise AssertionError("the grader's own run has no answers' kernel to ask")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(_state.timeout)
        try:
            sock.connect(_state.path)
            _send(sock, json.dumps(request).encode())
            reply = _receive(sock)
        except (OSError, ValueError) as err:
            raise AssertionError(f"{GONE}: {err}") from None
    return reply if isinstance(reply, dict) else {}


def values(names: list[str]) -> dict:
    """The by-hand answers ``names``, as the answers' kernel has them now (those it has)."""
    found = _ask({"op": "values", "names": list(names)}).get("values", {})
    return {n: decode(found[n]) for n in names if isinstance(found, dict) and n in found}


def _others(data: object) -> Iterator[str]:
    """What an encoded value could not carry (``{"other": ...}``), anywhere in it."""
    if isinstance(data, dict):
        if set(data) == {"other"}:
            yield str(data["other"])
        for item in data.values():
            yield from _others(item)
    elif isinstance(data, list):
        for item in data:
            yield from _others(item)


def _raised(kind: str, message: str) -> BaseException:
    """The exception the answer raised, as this kernel can raise it: a builtin one as itself, ``ShortcutError`` as
    the course's, any other under its own name (never one that stops the kernel)."""
    found = getattr(builtins, kind, None) if kind.isidentifier() else None
    if kind == "ShortcutError":
        return ShortcutError(message)
    if kind == HandedOn.__name__:  # (a red team's answer raised one of its own, to keep a forged pass)
        return AssertionError(f"the answer raised an exception named {kind}, the grader's own name: {message}")
    if isinstance(found, type) and issubclass(found, Exception):
        return found(message)
    return type(kind if kind.isidentifier() else "AnswerError", (Exception,), {})(message)


class Answer:
    """In the checks' kernel, an implement-it answer's name: calling it calls the answer in the answers' kernel."""

    def __init__(self, name: str) -> None:
        self.__name__ = self.__qualname__ = name

    def __repr__(self) -> str:
        return f"<the answer {self.__name__}, run in the answers' kernel>"

    def __call__(self, *args: object, **kwargs: object) -> object:
        sent = _unwatched(lambda: {"args": encode(list(args)), "kwargs": encode(dict(kwargs))})
        others = list(_others(sent))
        if any(other == _UNREADABLE for other in others):
            raise AssertionError(f"{self.__name__} was handed back something the submission's kernel could not send")
        if others:
            raise HandedOn(f"{self.__name__} is handed {others[0]}, which cannot be sent to the answers' kernel")
        names = [name for names, _ in blocking() for name in names]
        who = blocking()[-1][1] if blocking() else self.__name__
        states = _unwatched(lambda: {"torch": encode(torch.get_rng_state()), "random": encode(random.getstate()),
                                     "numpy": encode(np.random.get_state())})  # fmt: skip
        reply = _ask({"op": "call", "name": self.__name__, **sent, **states, "without": names, "who": who})
        if "raised" in reply:
            kind, message = (list(reply["raised"]) + ["", ""])[:2]
            raise _raised(str(kind), str(message))
        if "value" not in reply:
            raise AssertionError(f"the answers' kernel sent no result for {self.__name__}")
        return _unwatched(lambda: decode(reply["value"]))


def _unwatched(fn: Callable[[], T]) -> T:
    """``fn()``, the grader's own work in the checks' kernel, with torch's modes off: a check watches every
    tensor operation the answer's call makes (:mod:`course_lib.classroom.reach`), and sending a model as data under
    that watch took 60 times as long (no answer runs here: what it watches for runs in the answers' kernel)."""
    with torch._C.DisableTorchFunction(), _disable_current_modes():
        return fn()
