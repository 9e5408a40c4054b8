"""By-hand answers as numbers: what :func:`course_lib.classroom.checks.check_answer` accepts, and its one conversion.

A by-hand answer is numbers: Python's ``int``, ``float``, ``bool`` and ``complex``, lists and tuples of them (nested;
a ``torch.Size`` too), NumPy's arrays of numbers and its scalars, and plain tensors (``torch.Tensor``,
``nn.Parameter``), each known by its exact class, never by what a class says of itself (``__module__``). Anything
else is refused before it is converted: converting an object runs its own code (``__array__``, ``__float__``,
``__len__``) inside the check, where the check's expected answer is at hand, and an object of a class of the
notebook's own could look it up there. A value of a library's class (a string, ``None``, a ``Fraction``) is told it
cannot be read as numbers; an object of a class of the notebook's is "Not graded", which the class report flags.
Placeholders of the student version (:class:`course_lib.classroom.exercises.Unanswered`) raise their own message.
"""

from __future__ import annotations

import builtins
import os
import sys
from functools import cache

import numpy as np
import torch
from torch import Tensor

from .exercises import Unanswered
from .watch import NOT_GRADED

__all__ = ["answer_tensor", "not_numbers"]

_NUMBERS = (int, float, bool, complex)
_PLAIN_TENSORS = (Tensor, torch.nn.Parameter)
_CONTAINERS = (list, tuple, torch.Size)
_LIBRARIES = tuple({sys.prefix, sys.base_prefix})
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: every class a class statement or type(...) makes has it


@cache
def _numpy_numbers() -> frozenset[type]:
    """NumPy's scalar classes of numbers and truth values (``np.float64``, ``np.int32``, ``np.bool_``...)."""
    return frozenset(t for t in set(np.sctypeDict.values()) if issubclass(t, (np.number, np.bool_)))


def _first_other(value: object, depth: int = 0) -> object:
    """The first thing in ``value`` that is not numbers (see the module), or ``_NUMBERS`` where all is numbers."""
    kind = type(value)
    if kind is Unanswered:
        value._fail()
    if kind in _NUMBERS or kind in _numpy_numbers() or isinstance(value, Tensor):  # (a subclass: classroom.integrity)
        return _NUMBERS
    if kind is np.ndarray:
        return _NUMBERS if value.dtype.kind in "biufc" else value
    if kind in _CONTAINERS and depth < 8:
        return next((x for item in value if (x := _first_other(item, depth + 1)) is not _NUMBERS), _NUMBERS)
    return value


def _a_librarys(kind: type) -> bool:
    """Whether ``kind`` is a class of C's making (``NoneType``), or what a module of Python's or an installed library's
    names by its name."""
    if not kind.__flags__ & _HEAP_TYPE:
        return True
    module = sys.modules.get(kind.__module__)
    found = module
    for part in kind.__qualname__.split("."):
        found = getattr(found, part, None)
    where = os.path.abspath(getattr(module, "__file__", None) or "")
    return found is kind and (module is builtins or where.startswith(_LIBRARIES))


def not_numbers(value: object) -> str | None:
    """Why ``value`` is not a by-hand answer (a sentence, "Not graded: ..." for an object of a class of the
    notebook's own), or None; raises ``NotImplementedError`` for an unanswered placeholder inside it."""
    found = _first_other(value)
    if found is _NUMBERS:
        return None
    kind = type(found)
    if kind is np.ndarray:
        return f"cannot be read as numbers (a NumPy array of {found.dtype})"
    inside = found.data if isinstance(getattr(found, "data", None), list) and kind.__module__ == "collections" else ()
    if _a_librarys(kind) and all(_a_librarys(type(item)) for item in inside):  # (a UserList: what it holds too)
        return f"cannot be read as numbers (a {kind.__name__})"
    kind = next((type(item) for item in inside if not _a_librarys(type(item))), kind)
    return (
        f"{NOT_GRADED}: a by-hand answer must be a plain number, a list or tuple of numbers, a NumPy array or a "
        f"tensor, not a {kind.__name__} (a class of its own, whose code would run when the check reads it)"
    )


def _arrays(value: object, depth: int = 0) -> object:
    """``value`` with every tensor inside its lists and tuples made a NumPy array, or None where it holds neither
    a tensor nor anything of NumPy's (then torch.tensor reads it as it is)."""
    if isinstance(value, Tensor):
        if type(value) not in _PLAIN_TENSORS:  # converting it would run its own rules
            raise TypeError(f"a {type(value).__name__}, a tensor with rules of its own")
        return value.detach().cpu().numpy()
    if type(value) is np.ndarray or type(value) in _numpy_numbers():
        return value
    if type(value) in _CONTAINERS and depth < 8:
        items = [_arrays(v, depth + 1) for v in value]
        return (
            None
            if all(x is None for x in items)
            else [v if x is None else x for v, x in zip(value, items, strict=True)]
        )
    return None


def _converted(value: object, dtype: torch.dtype | None) -> Tensor:
    if isinstance(value, Tensor) and type(value) not in _PLAIN_TENSORS:
        return value  # as it is: the check refuses a tensor with rules of its own (integrity.untrusted)
    if isinstance(value, Tensor):
        return value.detach().clone() if dtype is None else value.detach().to(dtype)
    arrays = _arrays(value)
    if arrays is not None:
        value = np.asarray(arrays)
    return torch.tensor(value, dtype=dtype)


def answer_tensor(value: object, dtype: torch.dtype | None = None) -> Tensor:
    """A by-hand answer as a tensor, the one conversion the checks share: ``torch.tensor(value, dtype=dtype)``, except
    that a tensor is converted without a copy's warning, and an answer holding tensors or NumPy's arrays and scalars
    (``[np.array([0.2, 0.8])]``, ``[torch.softmax(s, -1)]``, 0-d arrays) becomes one NumPy array first. torch.tensor
    would warn about a list of arrays ("Creating a tensor from a list of numpy.ndarrays is extremely slow") and about
    a tensor ("To copy construct from a tensor, ..."), on stderr, which nbgrader scores as a failed cell, and refuses
    a list of 0-d arrays or of tensors of more than one element: an honest answer is graded like any other.

    Only numbers are converted (:func:`not_numbers`; ``TypeError`` for anything else, ``AssertionError`` "Not
    graded" for an object of a class of the notebook's own): no code of the answer's own runs while it converts."""
    problem = not_numbers(value)
    if problem is not None and problem.startswith(NOT_GRADED):
        raise AssertionError(problem)
    if problem is not None:
        raise TypeError(problem.removeprefix("cannot be read as numbers (").removesuffix(")"))
    return _converted(value, dtype)
