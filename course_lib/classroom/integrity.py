"""What a check verifies at run time before it compares, for what a reading of the cells cannot see.

:mod:`course_lib.classroom.tampering` reads a student's cells and never runs them; two things only show when they run:

- **a torch mode left on.** An answer cell can enter a ``TorchFunctionMode`` or ``TorchDispatchMode`` and never leave
  it; every later torch call, a check's own comparisons included, then goes through the student's code. A check
  refuses to grade while such a mode is on. PyTorch's own modes (``torch.set_default_device`` pushes one) and the
  grading machine's (a class attribute ``course_profile``, as the rounding profile of ``tools/portability.py`` has)
  are trusted.
- **an answer with rules of its own.** A ``torch.Tensor`` subclass with its own ``__torch_function__`` or
  ``__torch_dispatch__`` can answer the comparison itself (``torch.isclose`` says True for anything). An answer must be
  a plain tensor (an ``nn.Parameter`` is one: it has no rules of its own).
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["foreign_modes", "untrusted"]

NOT_GRADED = "Not graded"  # the words the class report (classroom.autograde) flags a submission by


def foreign_modes() -> list[str]:
    """The class names of the torch function and dispatch modes on now, other than PyTorch's and the grading
    machine's own."""
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    modes = [*_get_current_function_mode_stack(), *_get_current_dispatch_mode_stack()]
    trusted = ("torch.", "course_lib.")
    return [
        type(mode).__name__
        for mode in modes
        if not getattr(type(mode), "course_profile", False) and not type(mode).__module__.startswith(trusted)
    ]


def _has_own_rules(cls: type) -> bool:
    function = getattr(cls.__torch_function__, "__func__", cls.__torch_function__)
    plain_function = (Tensor.__torch_function__.__func__, torch._C._disabled_torch_function_impl)
    return function not in plain_function or cls.__torch_dispatch__ is not Tensor.__torch_dispatch__


def untrusted(actual: object) -> str | None:
    """Why a check cannot trust its comparison of ``actual`` now (a sentence), or None."""
    modes = foreign_modes()
    if modes:
        return (
            f"{NOT_GRADED}: a torch mode ({', '.join(modes)}) switched on by a cell is still on, and it could change "
            "what this check sees; restart the kernel and run the cells in order without it"
        )
    if isinstance(actual, Tensor) and _has_own_rules(type(actual)):
        return (
            f"expected a plain torch.Tensor, got {type(actual).__name__}, a subclass whose own rules could answer "
            "the comparison (return a plain tensor, e.g. with torch.Tensor.as_subclass(x, torch.Tensor))"
        )
    return None
