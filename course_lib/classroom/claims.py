"""What a graded kernel hands over as data, and how the grader's own run takes it back: answers out of the kernel.

A graded notebook runs in the student's kernel, and whatever a test cell shows there is that kernel's word: code a
submission runs unread could make a failed check look passed (:mod:`course_lib.classroom.witness` says how far the
evidence goes). So the grader decides again, outside that kernel (:mod:`course_lib.classroom.recheck`): a second,
fresh kernel runs only the notebook's locked cells and its test cells, never a cell of the submission, and compares
there. What it needs of the submission crosses as data, never as code:

- **by-hand answers**: the values of the answers a test cell reads, as the guard's verification at the top of the
  cell found them (:func:`claim_values`: numbers, lists and tuples of them, NumPy's arrays and scalars, tensors);
- **implement-it answers**: what the answer returned on each trial of :func:`~course_lib.classroom.checks.
  check_function`, recorded there (:func:`hand_over`); the grader's run draws the same inputs itself and compares
  what was handed over with its own reference (:func:`replayed`).

A kernel can hand over anything; it cannot make the grader's reference agree with a wrong answer. Values cross as
JSON (tensors as their bytes, dtype and shape), never as pickles: reading them runs no code of the submission's.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable, Iterable, Mapping
from types import SimpleNamespace

import numpy as np
import torch
from torch import Tensor

__all__ = ["MIME", "Answer", "Unreadable", "called", "claim_values", "decode", "encode", "hand_over", "involves_answer",
           "load", "recording", "replayed", "replaying", "start_recording"]  # fmt: skip

MIME = "application/vnd.course-claims+json"  # the kernel's display output that carries them (the grader removes it)
_DEPTH = 32
_state = SimpleNamespace(
    recording=False, replay=None, pending=[]
)  # (not a table: the snapshot compares those item by item)


def _bytes(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def encode(value: object, depth: int = 0) -> object:
    """``value`` as JSON's data: a tagged tree of numbers, strings, containers and tensors' bytes; anything else is
    ``{"other": its class's name}``, which the grader's run takes back as something no check accepts."""
    if depth > _DEPTH:
        return {"other": "a structure nested too deep"}
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind is complex:
        return {"complex": [value.real, value.imag]}  # type: ignore[union-attr]
    if kind in (list, tuple, torch.Size):
        return {kind.__name__.lower(): [encode(item, depth + 1) for item in value]}  # type: ignore[attr-defined]
    if kind is dict:
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}  # type: ignore
    if kind in (Tensor, torch.nn.Parameter):
        flat = value.detach().cpu().reshape(-1).contiguous()  # type: ignore[union-attr]
        raw = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
        return {"tensor": [str(flat.dtype).removeprefix("torch."), list(value.shape), _bytes(raw)]}  # type: ignore
    if isinstance(value, torch.nn.Module) and getattr(torch.nn, kind.__name__, None) is kind:
        return _module(value, depth)  # type: ignore[arg-type]
    if kind is np.ndarray or isinstance(value, np.generic) and kind.__module__ == "numpy":
        array = np.array(value, order="C")  # (a scalar: a 0-d array)
        if array.dtype.hasobject:
            return {"other": "a NumPy array of objects"}
        return {"ndarray": [array.dtype.str, list(array.shape), _bytes(array.tobytes()), kind is not np.ndarray]}
    return {"other": f"{kind.__module__}.{kind.__qualname__}"}


def _module(module: torch.nn.Module, depth: int) -> object:
    """One of ``torch.nn``'s own layers (``nn.Linear``) without layers inside: its class, settings and tensors."""
    if next(module.children(), None) is not None:
        return {"other": f"a torch.nn.{type(module).__name__} with layers inside"}
    settings = {k: encode(v, depth + 1) for k, v in vars(module).items() if not k.startswith("_")}
    tensors = {k: encode(v, depth + 1) for k, v in [*module._parameters.items(), *module._buffers.items()]}
    return {"module": [type(module).__name__, settings, tensors, list(module._parameters)]}  # (None: no bias)


def _layer(name: str, settings: dict, tensors: dict, parameters: list) -> object:
    kind = getattr(torch.nn, str(name), None)
    if not (isinstance(kind, type) and issubclass(kind, torch.nn.Module)):
        return Unreadable(f"a module of class {name!r}")
    layer = kind.__new__(kind)
    torch.nn.Module.__init__(layer)
    for key, value in settings.items():
        setattr(layer, key, decode(value))
    for key, value in tensors.items():
        tensor = decode(value)
        if key in parameters:
            kept = tensor if tensor is None else torch.nn.Parameter(tensor, requires_grad=tensor.is_floating_point())
            layer.register_parameter(key, kept)  # type: ignore[arg-type]
        else:
            layer.register_buffer(key, tensor)
    return layer


class Unreadable:
    """An answer the kernel could not hand over as data: no check accepts it, and using it says why."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return f"<an answer the grader could not take out of the kernel: {self.what}>"


def decode(data: object) -> object:
    """The value :func:`encode` wrote (tensors and arrays rebuilt from their bytes, as plain ones)."""
    if not isinstance(data, dict):
        return data
    ((tag, body),) = data.items()
    if tag in ("list", "tuple", "size"):
        items = [decode(item) for item in body]
        return items if tag == "list" else tuple(items) if tag == "tuple" else torch.Size(items)
    if tag == "dict":
        return {decode(k): decode(v) for k, v in body}
    if tag == "complex":
        return complex(*body)
    if tag == "tensor":
        dtype, shape, raw = getattr(torch, str(body[0]), None), body[1], base64.b64decode(body[2])
        if not isinstance(dtype, torch.dtype):
            return Unreadable(f"a tensor of dtype {body[0]!r}")
        if not raw:  # (no bytes, so no elements: a shape that claims some is not a tensor's)
            return (
                torch.empty(shape, dtype=dtype)
                if 0 in shape
                else Unreadable(f"a tensor of shape {shape} without bytes")
            )
        return torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype).reshape(shape).clone()
    if tag == "module":
        return _layer(*body)
    if tag == "ndarray":
        array = np.frombuffer(base64.b64decode(body[2]), dtype=np.dtype(body[0])).reshape(body[1]).copy()
        return array[()] if body[3] else array
    return Unreadable(str(body))


def start_recording() -> None:
    """In a graded kernel (the guard's snapshot): checks hand over what they compare from now on."""
    _state.recording = True
    shell = getattr(__import__("IPython"), "get_ipython", lambda: None)()
    if shell is not None:
        shell.events.register("post_run_cell", _flush)


def recording() -> bool:
    return bool(_state.recording)


def _emit(claim: dict) -> None:
    from IPython.display import display

    display({MIME: claim}, raw=True)


def claim_values(namespace: Mapping, names: Iterable[str]) -> None:
    """Hand over the values of the answers ``names`` that are not functions (the guard's line of a test cell)."""
    if recording():
        values = {n: encode(namespace[n]) for n in names if n in namespace and not callable(namespace[n])}
        if values:
            _emit({"values": values})


def hand_over(name: str, outputs: list) -> None:
    """Hand over what an implement-it answer returned on each trial of a check named ``name`` (already encoded)."""
    if recording():
        _emit({"check": name, "outputs": outputs})


def called(name: str, fn: Callable) -> Callable:
    """``fn``, an implement-it answer a test cell calls itself, as the guard has the cell call it in a graded kernel
    (``count_frames(*c)`` becomes ``_course_called('count_frames', count_frames)(*c)``): what it returns is handed
    over, for the grader's own run, where :class:`Answer` gives it back at the same call. The random state is put back
    as it was before the call (as ``check_function`` puts it back before its reference): an answer that draws random
    numbers (``nn.Linear(...)``) must not change the inputs the cell draws after it, which the grader's run, where
    the answer does not run, draws too."""

    def handing_over(*args: object, **kwargs: object) -> object:
        states = torch.get_rng_state(), random.getstate(), np.random.get_state()
        try:
            result = fn(*args, **kwargs)
        finally:
            torch.set_rng_state(states[0])
            random.setstate(states[1])
            np.random.set_state(states[2])
        if recording():  # (encoded once the cell has run: inside a check's blocked library, NumPy is refused)
            _state.pending.append((name, _kept(result)))
        return result

    return handing_over


def _kept(value: object) -> object:
    """``value`` as it is now: tensors cloned, containers rebuilt, so that what the cell does next does not count."""
    if isinstance(value, Tensor):
        return value.detach().clone()
    if type(value) in (list, tuple):
        return type(value)(_kept(v) for v in value)  # type: ignore[call-arg]
    return value


def _flush(*_: object) -> None:
    """Hand over the results of the calls a cell made itself (IPython's ``post_run_cell``, after every cell)."""
    pending, _state.pending = _state.pending, []
    for name, result in pending:
        _emit({"call": name, "output": encode(result)})


def replaying(queue: list | None) -> None:
    """In the grader's own run (:mod:`course_lib.classroom.recheck`): the claims of the test cell now running, or
    None after it."""
    _state.replay = queue


class Answer:
    """In the grader's own run, an implement-it answer's name: the answer never runs there (a check that uses it
    takes what the kernel handed over instead), and calling it says so."""

    def __init__(self, name: str) -> None:
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args: object, **kwargs: object) -> object:
        """What the answer returned at this call of the test cell in the submission's kernel (:func:`called`)."""
        queue = _state.replay
        for at, claim in enumerate(queue or ()):
            if claim.get("call") == self.__name__:
                del queue[at]  # type: ignore[union-attr]
                return decode(claim.get("output"))
        raise AssertionError(f"the grader's own run does not run {self.__name__}, and the submission's kernel handed "
                             "over no result for this call of it")  # fmt: skip


def _names(code: object) -> set[str]:
    names = set(getattr(code, "co_names", ()))
    for const in getattr(code, "co_consts", ()):
        if hasattr(const, "co_names"):
            names |= _names(const)
    return names


def _closed_over(fn: object) -> list:
    values = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # (a cell not filled yet)
            continue
    return values


def involves_answer(fn: object, depth: int = 0) -> bool:
    """Whether ``fn``, a check's function, is an answer's :class:`Answer` or calls one: by a global name its code
    (or a function inside it) reads, through a closure (``as_ids(bpe_encode)``) or ``functools.partial``."""
    if isinstance(fn, Answer):
        return True
    if depth > 4 or fn is None:
        return False
    namespace = getattr(fn, "__globals__", {})
    if any(isinstance(namespace.get(n), Answer) for n in _names(getattr(fn, "__code__", None))):
        return True
    return any(involves_answer(c, depth + 1) for c in [*_closed_over(fn), getattr(fn, "func", None)])


def replayed(name: str, fn: object) -> list | None:
    """The results handed over for the next check named ``name`` of this test cell, in the grader's own run, when
    ``fn`` involves an answer (:func:`involves_answer`); None otherwise (the check then runs ``fn`` itself). A check
    with no such claim gets an empty list: the kernel handed nothing over, and its first trial fails."""
    queue = _state.replay
    if queue is None or not involves_answer(fn):
        return None
    for at, claim in enumerate(queue):  # type: ignore[arg-type]
        if claim.get("check") == name:
            del queue[at]  # type: ignore[attr-defined]
            return [decode(output) for output in claim.get("outputs", [])]
    return []


def load(text: str) -> dict[str, list]:
    """Claims the grader collected, per grade id (JSON)."""
    claims = json.loads(text)
    if not isinstance(claims, dict):
        raise ValueError("claims must be a JSON object of grade ids")
    return claims
