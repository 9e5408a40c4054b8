"""Values as data between two kernels: what an answer returned, and what a check hands it, as JSON.

The grader decides each check outside the student's kernel (:mod:`course_lib.classroom.recheck`): the answers run in
one kernel, the checks in another, and what crosses between them crosses as data, never as code
(:mod:`course_lib.classroom.serve`): numbers, strings, containers, complex numbers, tensors as their dtype, shape and
bytes, NumPy's arrays and scalars, and modules of ``torch.nn`` or ``course_lib`` (such as ``cl.DecoderLM``) as their
class, settings, tensors and layers. Anything else is ``{"other": its class}``, which the other side takes back as
:class:`Unreadable`, something no check accepts. No pickles: reading a value runs no code of the submission's.
"""

from __future__ import annotations

import base64
import sys
from types import SimpleNamespace

import numpy as np
import torch
from torch import Tensor

__all__ = ["Unreadable", "blocking", "decode", "encode"]

_DEPTH = 32
_state = SimpleNamespace(blocking=[])  # (not a table: the snapshot compares those item by item)
_MODULE_OWN = frozenset(vars(torch.nn.Module()))  # what nn.Module's __init__ sets: its tables, never a setting
_TRUSTED = ("torch.nn.", "course_lib.")  # the modules whose layers a value may name: never the submission's
# torch's names as they are now: a check may block some while values cross (03's exercise 4 blocks torch.nn.Module)
_TORCH = SimpleNamespace(Module=torch.nn.Module, Parameter=torch.nn.Parameter, Size=torch.Size, device=torch.device,
                         frombuffer=torch.frombuffer, empty=torch.empty)  # fmt: skip
_DTYPES = {str(d).removeprefix("torch."): d for d in vars(torch).values() if isinstance(d, torch.dtype)}


def blocking() -> list:
    """The library functions blocked now (:func:`course_lib.classroom.exercises.blocked` keeps this list: names and
    who), which an answer run in the other kernel is blocked from too."""
    return _state.blocking


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
    if kind in (list, tuple, _TORCH.Size):
        return {kind.__name__.lower(): [encode(item, depth + 1) for item in value]}  # type: ignore[attr-defined]
    if kind is dict:
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}  # type: ignore
    if kind in (torch.dtype, _TORCH.device):  # (05's to_additive is handed a dtype)
        return {kind.__name__: str(value).removeprefix("torch.")}
    if kind in (Tensor, _TORCH.Parameter):
        flat = value.detach().cpu().reshape(-1).contiguous()  # type: ignore[union-attr]
        at, size = flat.storage_offset() * flat.element_size(), flat.numel() * flat.element_size()
        raw = bytes(flat.untyped_storage())[at : at + size]  # (not Tensor.numpy, which a check refuses)
        return {"tensor": [str(flat.dtype).removeprefix("torch."), list(value.shape), _bytes(raw)]}  # type: ignore
    if isinstance(value, _TORCH.Module) and _class(kind.__module__, kind.__qualname__) is kind:
        return _module(value, depth)  # type: ignore[arg-type]
    if kind is np.ndarray or isinstance(value, np.generic) and kind.__module__ == "numpy":
        array = np.array(value, order="C")  # (a scalar: a 0-d array)
        if array.dtype.hasobject:
            return {"other": "a NumPy array of objects"}
        return {"ndarray": [array.dtype.str, list(array.shape), _bytes(array.tobytes()), kind is not np.ndarray]}
    return {"other": f"{kind.__module__}.{kind.__qualname__}"}


def _class(module: str, qualname: str) -> object:
    """The class a module's name and a qualified name lead to, when that module is torch.nn's or course_lib's."""
    if not module.startswith(_TRUSTED) or not all(part.isidentifier() for part in qualname.split(".")):
        return None
    found: object = sys.modules.get(module)  # (loaded already: a value names no module for this kernel to import)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found


def _module(module: torch.nn.Module, depth: int) -> object:
    """A layer of ``torch.nn`` or ``course_lib`` (``nn.Linear``, ``cl.DecoderLM``): its class, its settings (whatever
    it keeps besides nn.Module's own tables), its tensors and its layers, each as data."""
    kind = type(module)
    settings = {k: encode(v, depth + 1) for k, v in vars(module).items() if k not in _MODULE_OWN or k == "training"}
    tensors = {k: encode(v, depth + 1) for k, v in [*module._parameters.items(), *module._buffers.items()]}
    layers = {k: encode(v, depth + 1) for k, v in module._modules.items()}
    return {"module": [f"{kind.__module__}:{kind.__qualname__}", settings, tensors, list(module._parameters), layers]}


def _layer(name: str, settings: dict, tensors: dict, parameters: list, layers: dict) -> object:
    kind = _class(*str(name).rpartition(":")[::2])
    if not (isinstance(kind, type) and issubclass(kind, _TORCH.Module)):
        return Unreadable(f"a module of class {name!r}")
    plain = [str(key) for key in [*settings, *tensors, *layers]]  # (a ModuleList's layers are "0", "1", ...)
    if not all((key.isidentifier() or key.isdigit()) and not key.startswith("__") for key in plain):
        return Unreadable(f"a module of class {name!r} with a setting that is not a plain name")
    layer = kind.__new__(kind)
    _TORCH.Module.__init__(layer)
    for key, value in settings.items():
        setattr(layer, str(key), decode(value))
    for key, value in tensors.items():
        tensor = decode(value)
        if tensor is not None and not isinstance(tensor, Tensor):
            return Unreadable(f"a module whose {key!r} is not a tensor")
        if key in parameters:
            kept = tensor if tensor is None else _TORCH.Parameter(tensor, requires_grad=tensor.is_floating_point())
            layer.register_parameter(key, kept)  # type: ignore[arg-type]
        else:
            layer.register_buffer(key, tensor)
    for key, value in layers.items():
        child = decode(value)
        if child is not None and not isinstance(child, _TORCH.Module):
            return child if isinstance(child, Unreadable) else Unreadable(f"a module whose layer {key!r} is not one")
        layer.add_module(str(key), child)  # type: ignore[arg-type]
    return layer


def _device(name: str) -> object:
    try:
        return _TORCH.device(name)
    except (RuntimeError, ValueError):
        return Unreadable(f"a device {name!r}")


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
        return items if tag == "list" else tuple(items) if tag == "tuple" else _TORCH.Size(items)
    if tag == "dict":
        return {decode(k): decode(v) for k, v in body}
    if tag == "complex":
        return complex(*body)
    if tag in ("dtype", "device"):
        return _DTYPES.get(str(body), Unreadable(f"a dtype {body!r}")) if tag == "dtype" else _device(str(body))
    if tag == "tensor":
        dtype, shape, raw = _DTYPES.get(str(body[0])), body[1], base64.b64decode(body[2])
        if dtype is None:
            return Unreadable(f"a tensor of dtype {body[0]!r}")
        if not raw:  # (no bytes, so no elements: a shape that claims some is not a tensor's)
            return (
                _TORCH.empty(shape, dtype=dtype)
                if 0 in shape
                else Unreadable(f"a tensor of shape {shape} without bytes")
            )
        return _TORCH.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype).reshape(shape).clone()
    if tag == "module":
        return _layer(*body)
    if tag == "ndarray":
        array = np.frombuffer(base64.b64decode(body[2]), dtype=np.dtype(body[0])).reshape(body[1]).copy()
        return array[()] if body[3] else array
    return Unreadable(str(body))
