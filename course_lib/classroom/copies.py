"""What a check copies (:func:`course_lib.classroom.checks.check_function`): the inputs each function gets, the
reference's kept apart, and the answer's result as it returns.

- :func:`given`: the inputs as the answer gets them: each tensor cloned, so that a function that changes its arguments
  in place cannot change what the other one sees.
- :func:`kept`: the reference's copy, made before the answer runs, deep (an answer cannot change a model they share).
  Tensors, numbers, strings and the lists, tuples and dicts of them are copied by a routine of this module's own,
  which never looks a type up in ``copy``'s or ``copyreg``'s tables: a cell can add an entry there (``dict.update(
  copy._deepcopy_dispatch, {list: hook})``) whose function would run, unblocked, whenever a check copies its inputs.
  Anything else (a model) goes to ``copy.deepcopy``, and only while those tables and the two modules hold what they
  held when this module was imported (before any cell of a notebook ran; additions by an installed library's code
  aside): else "Not graded".
- :func:`settled`: the answer's result cloned as soon as its call returns, while the check's blocking is still on:
  what a finaliser (``__del__`` run by the garbage collector) or another thread writes into the returned tensor
  later, once the blocking is off, is not what is compared.
"""

from __future__ import annotations

import copy
import copyreg
import os
import sys
from collections.abc import Sequence

import numpy  # noqa: F401 (registers its copyreg entries now, not after the tables are remembered)
import torch
from torch import Tensor

from .watch import NOT_GRADED

__all__ = ["given", "kept", "settled"]

_ATOMS = (type(None), bool, int, float, complex, str, bytes, torch.dtype, torch.device, torch.layout, torch.Size,
          torch.memory_format)  # fmt: skip
_PLAIN = (Tensor, torch.nn.Parameter)
_TABLES = (copy._deepcopy_dispatch, copy._copy_dispatch, copyreg.dispatch_table, copyreg._extension_registry,
           copyreg._inverted_registry, copyreg._extension_cache)  # fmt: skip
_LIBRARIES = tuple({sys.prefix, sys.base_prefix})


def _entries() -> list[tuple[object, object]]:
    modules = [(key, value) for module in (copy, copyreg) for key, value in vars(module).items() if key[:2] != "__"]
    return modules + [pair for table in _TABLES for pair in table.items()]


_AT_IMPORT = tuple(_entries())


def _a_librarys(value: object) -> bool:
    code = getattr(value, "__code__", None)
    return code is not None and os.path.abspath(code.co_filename).startswith(_LIBRARIES)


def _untouched() -> bool:
    """Whether copy's and copyreg's tables and module entries are the objects they were at import (an entry added
    since by an installed library's function, numpy's say, aside)."""
    now, old = _entries(), _AT_IMPORT
    if len(now) < len(old):
        return False
    same = all(a is c and b is d for (a, b), (c, d) in zip(now, old, strict=False))
    return same and all(_a_librarys(value) for _, value in now[len(old) :])


def _tensor(t: Tensor) -> Tensor:
    """A leaf tensor's deep copy, as ``copy.deepcopy`` makes it: its values, type and ``requires_grad``."""
    copied = t.detach().clone().requires_grad_(t.requires_grad)
    return torch.nn.Parameter(copied, t.requires_grad) if type(t) is torch.nn.Parameter else copied


def _deep(value: object, memo: dict[int, object], depth: int) -> object:
    if id(value) in memo:
        return memo[id(value)]
    if type(value) in _ATOMS:
        return value
    if type(value) in _PLAIN and value.is_leaf:
        found = _tensor(value)
    elif type(value) in (list, tuple) and depth < 8:
        found = type(value)(_deep(item, memo, depth + 1) for item in value)
    elif type(value) is dict and depth < 8:
        found = {key: _deep(item, memo, depth + 1) for key, item in value.items()}
    else:
        if not _untouched():
            raise AssertionError(
                f"{NOT_GRADED}: a cell changed copy's or copyreg's tables, which a check copies its inputs with; "
                "restart the kernel and run the cells in order without that change"
            )
        found = copy.deepcopy(value, memo)
    memo[id(value)] = found
    return found


def kept(args: Sequence[object]) -> list[object]:
    """The reference's deep copy of ``args`` (see the module); as :func:`given` where a deep copy fails (a non-leaf
    tensor, a lock)."""
    try:
        memo: dict[int, object] = {}
        return [_deep(a, memo, 0) for a in args]
    except AssertionError:
        raise
    except Exception:
        return given(args)


def given(args: Sequence[object]) -> list[object]:
    """The inputs as the answer gets them: each tensor cloned."""
    return [a.clone() if isinstance(a, Tensor) else a for a in args]


def settled(result: object, depth: int = 0) -> object:
    """The answer's result as it returned: each plain tensor in it (in lists, tuples, dicts) cloned, detached; a
    tensor with rules of its own is left as it is (the check refuses it: :mod:`course_lib.classroom.integrity`)."""
    if type(result) in _PLAIN:
        return result.detach().clone()
    if type(result) in (list, tuple) and depth < 8:
        return type(result)(settled(item, depth + 1) for item in result)
    if type(result) is dict and depth < 8:
        return {key: settled(item, depth + 1) for key, item in result.items()}
    return result
