"""What a check keeps for itself while an answer runs, sealed: a fingerprint that changes with anything in it.

:func:`course_lib.classroom.checks.check_function` runs the reference after the answer, on a copy of the inputs made
before it. That copy sits in the check's frame while the answer runs, and a frame can be reached by code the audit
hook (:mod:`course_lib.classroom.watch`) does not see walk to it: on Python 3.11 reading ``f_back`` or ``f_locals``
raises no audit event, so a library helper that walks up from its own frame (``torch._jit_internal``'s
``createResolutionCallbackFromFrame``) hands out the check's locals. An answer that zeroed the copy in place would
get the reference's result on zeros, a trivial one. :func:`fingerprint` digests the copy before the answer runs and
again once it has returned: a digest (``bytes``, which nothing changes in place) of every tensor's type, dtype,
shape, strides and values, every list, tuple and dict, and every module's or object's attributes (a parameter
zeroed, an attribute rebound, a hook added), with identities where an object cannot be read without running its
code (a function by its code, defaults and closure). No code of the objects' own runs while it digests: attributes
are read through the C descriptor of ``__dict__`` only, and torch's modes and subclasses are off.
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = ["fingerprint"]

_ATOMS = (type(None), bool, int, float, complex, str, bytes, torch.dtype, torch.device, torch.layout, torch.Size,
          torch.memory_format)  # fmt: skip
_PLAIN = (Tensor, torch.nn.Parameter)
_DICT_OF_CLASS = type.__dict__["__dict__"]  # a class's own attributes, whatever its metaclass says
# torch's switches, as they are at import (before any cell of a notebook ran): no mode nor subclass runs inside
_QUIET = (torch._C.DisableTorchFunction, torch._C._DisableTorchDispatch)
_MOST = 100_000  # objects digested at most (a model's parameters are a few dozen)


def _instance_dict(value: object) -> dict | None:
    """``value.__dict__`` read through the C descriptor that holds it, or None (no ``__dict__``, or one of a class's
    own making, whose code would run)."""
    for klass in type(value).__mro__:
        found = _DICT_OF_CLASS.__get__(klass).get("__dict__")
        if found is not None:
            return found.__get__(value) if type(found) is types.GetSetDescriptorType else None
    return None


def _tensor(t: Tensor, update) -> None:
    update(repr((t.dtype, tuple(t.shape), t.stride(), t.storage_offset(), t.requires_grad, t.layout)).encode())
    if t.layout is torch.strided and t.device.type != "meta":
        update(t.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())


def _walk(value: object, update, seen: dict[int, tuple[int, object]], depth: int) -> None:
    if id(value) in seen and seen[id(value)][0] < 0:  # an object the answer holds too: by its identity alone
        update(b"#%d" % id(value))
        return
    if id(value) in seen:
        update(b"@%d" % seen[id(value)][0])  # shared, or a cycle: where it was first met
        return
    kind = type(value)
    update(f"<{kind.__module__}.{kind.__qualname__} {id(kind)}>".encode())
    if kind in _ATOMS:
        update(repr(value).encode())
        return
    seen[id(value)] = len(seen), value  # (kept alive: no later object gets its id)
    if len(seen) > _MOST or depth > 12:
        update(b"#%d" % id(value))
    elif kind in _PLAIN:
        _tensor(value, update)
        _walk(_instance_dict(value) or {}, update, seen, depth + 1)  # (a tensor's own attributes, if any)
    elif kind in (list, tuple) or (isinstance(value, dict) and kind.__module__ in ("builtins", "collections")):
        items = [x for pair in dict.items(value) for x in pair] if isinstance(value, dict) else value
        update(b"[%d" % len(items))
        for item in items:
            _walk(item, update, seen, depth + 1)
    elif kind is types.FunctionType:  # its code and defaults, and what its closure holds by identity (a reference's
        cells = b",".join(b"%d" % id(c.cell_contents) for c in value.__closure__ or ())  # model may be the answer's)
        update(b"#%d(%s)" % (id(value.__code__), cells))
        _walk([value.__defaults__, value.__kwdefaults__], update, seen, depth + 1)
    else:  # a module, a cache, any object: its attributes; else (no plain __dict__) its identity alone
        attributes = _instance_dict(value)
        update(b"#%d" % id(value) if attributes is None else b"{")
        if attributes is not None:
            _walk(attributes, update, seen, depth + 1)


def fingerprint(*values: object, handed: Sequence[object] = ()) -> bytes:
    """A digest of ``values`` that any change in them, however deep, changes (see the module); what ``handed`` (the
    answer's arguments) holds at its top level is digested by identity alone: the answer may change it."""
    digest = hashlib.blake2b(digest_size=32)
    seen: dict[int, tuple[int, object]] = {id(x): (-1, x) for x in handed if type(x) not in _ATOMS}
    with _QUIET[0](), _QUIET[1]():
        _walk(list(values), digest.update, seen, 0)
    return digest.digest()
