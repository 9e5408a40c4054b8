"""What a check verifies at run time before it compares, for what a reading of the cells cannot see.

:mod:`course_lib.classroom.tampering` reads a student's cells and never runs them; two things only show when they run:

- **a torch mode left on.** An answer cell can enter a ``TorchFunctionMode`` or ``TorchDispatchMode`` and never leave
  it; every later torch call, a check's own comparisons included, then goes through the student's code. A check
  refuses to grade while such a mode is on. Trusted are only PyTorch's and the course's own modes, known by what
  they are, not by what they say (a module name, a class attribute): a class its module names by its name, whose
  methods' code all lies in torch's or course_lib's files; and, in a graded kernel, the modes that were on when the
  snapshot was taken, before any student's cell ran (the grading machine's own). Outside a graded kernel a class
  marked ``course_profile`` (the rounding profile of ``tools/portability.py``) is trusted too.
- **an answer with rules of its own.** A ``torch.Tensor`` subclass with its own ``__torch_function__`` or
  ``__torch_dispatch__`` can answer the comparison itself (``torch.isclose`` says True for anything), and one with
  methods or properties of its own (``detach``, ``shape``) can hand the check the expected result it is compared with.
  An answer must be a plain tensor (an ``nn.Parameter`` is one): else "Not graded", which the class report flags.
"""

from __future__ import annotations

import inspect
import os
import sys
import types

import torch
from torch import Tensor

from .watch import NOT_GRADED, modes_at_snapshot

__all__ = ["NOT_GRADED", "foreign_modes", "modes_on", "named_by_its_module", "trusted_mode_codes", "untrusted"]

_OURS = tuple(os.path.dirname(os.path.abspath(path)) + os.sep for path in (torch.__file__, os.path.dirname(__file__)))
_RULES = ("__torch_function__", "__torch_dispatch__")
_BUILT_IN = (type, types.BuiltinFunctionType, types.WrapperDescriptorType, types.MethodDescriptorType,
             types.ClassMethodDescriptorType, types.MethodWrapperType)  # fmt: skip


def modes_on() -> list[object]:
    """The torch function and dispatch modes on now."""
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    return [*_get_current_function_mode_stack(), *_get_current_dispatch_mode_stack()]


def named_by_its_module(cls: type) -> bool:
    """Whether ``cls`` is what its module (``cls.__module__``, imported) names by its qualified name: a class made
    by ``type(...)`` with another module's name, or defined inside a function, is not."""
    found = sys.modules.get(cls.__module__)
    for part in cls.__qualname__.split("."):
        found = getattr(found, part, None)
    return found is cls


def _code(value: object) -> object:
    """The code of a function, a method, a classmethod or staticmethod, past wrappers (``functools.wraps``: torch
    wraps a mode's ``__torch_dispatch__`` so); None for what is not a function."""
    function = getattr(value, "__func__", value)
    if isinstance(function, types.FunctionType):
        function = inspect.unwrap(function)
    return getattr(function, "__code__", None)


def _ours(cls: type) -> bool:
    """Whether every function of ``cls`` and the classes it derives from lies in torch's or course_lib's files."""
    for klass in cls.__mro__:
        for value in vars(klass).values():
            code = _code(value)
            if code is not None and not os.path.abspath(code.co_filename).startswith(_OURS):
                return False
            if code is None and callable(getattr(value, "__func__", value)) and not isinstance(value, _BUILT_IN):
                return False  # a callable object of a cell's (a partial, an instance) as a mode's rules
    return True


def _trusted(mode: object, before: tuple[object, ...] | None) -> bool:
    cls = type(mode)
    if before is not None and any(mode is other for other in before):
        return True
    if named_by_its_module(cls) and _ours(cls):
        return True
    return before is None and bool(getattr(cls, "course_profile", False))


def foreign_modes() -> list[str]:
    """The class names of the torch function and dispatch modes on now that are not trusted (see the module)."""
    before = modes_at_snapshot()
    return [type(mode).__name__ for mode in modes_on() if not _trusted(mode, before)]


def trusted_mode_codes() -> set[object]:
    """The code of the ``__torch_function__`` / ``__torch_dispatch__`` of the trusted modes on now: what runs inside
    them is theirs, not an answer's (:class:`course_lib.classroom.reach.Reaches`)."""
    before = modes_at_snapshot()
    codes = {_code(getattr(type(mode), rule, None)) for mode in modes_on() if _trusted(mode, before) for rule in _RULES}
    return codes - {None}


def untrusted(actual: object) -> str | None:
    """Why a check cannot trust its comparison of ``actual`` now (a sentence), or None."""
    modes = foreign_modes()
    if modes:
        return (
            f"{NOT_GRADED}: a torch mode ({', '.join(modes)}) switched on by a cell is still on, and it could change "
            "what this check sees; restart the kernel and run the cells in order without it"
        )
    if isinstance(actual, Tensor) and type(actual) not in (Tensor, torch.nn.Parameter):
        return (
            f"{NOT_GRADED}: expected a plain torch.Tensor, got {type(actual).__name__}: an answer must be a plain "
            "tensor, not a subclass whose own rules or methods (detach, shape) could answer the comparison (return "
            "a plain tensor, e.g. with torch.Tensor.as_subclass(x, torch.Tensor))"
        )
    return None
