"""The modules a check relies on, remembered before a submission runs and verified in every graded test cell: grading's
second line of defence, behind the reading of the cells (:mod:`course_lib.classroom.guard`).

The guard reads a student's cells and flags the routes to a module it can follow (an alias, ``getattr``, ``setattr``,
a module handed to a function by name). :func:`snapshot`, which the guard adds to the end of the first locked cell
(before any student's cell runs), remembers every attribute of the modules and classes the checks rely on:
``builtins``, ``math``, ``torch``, ``torch.nn.functional``, ``torch.testing``, ``torch.Tensor``, ``torch.nn.Module``
and every module of ``course_lib`` (its vocabulary and ``classroom``). The function it returns, which the guard calls
at the top of every graded test cell, raises ``AssertionError`` ("Not graded: ...", which the class report flags)
when one of them has become another object since, however it was reached: a module handed to a function as an
attribute chain, kept in a container, fetched by ``getattr`` with a literal name, ``print.__self__``...
"""

from __future__ import annotations

import builtins
import importlib
import math
import sys
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from .integrity import NOT_GRADED

__all__ = ["snapshot"]

# Entries that change by themselves: IPython's last results in builtins, the warnings filter's registry, and
# builtins.input, which ipykernel binds for every cell it runs (to forward the kernel's standard input).
_MOVING = frozenset({"_", "__", "___", "__warningregistry__", "input"})
# Classes gain no attribute in honest use: a new one (``torch.Tensor.allclose = ...`` shadows the C base's) is a change.
CLASSES = {"torch.Tensor": Tensor, "torch.nn.Module": torch.nn.Module}


def _watched() -> dict[str, object]:
    """The modules and classes a check's verdict rests on, by name: the ones named above and every module of
    course_lib's vocabulary and classroom (imported now, cheap once torch is), each name of the flat package bound."""
    import torch._dynamo  # noqa: F401 (wraps torch.manual_seed when imported, as the first optimizer would)

    import course_lib

    from . import checks  # noqa: F401 (imports every module a check calls)

    for module in course_lib._EXPORTS:
        importlib.import_module(f"course_lib.{module}")
    for name in course_lib.__all__:  # bound now: a later rebinding is then a change
        getattr(course_lib, name)
    fixed = {
        "builtins": builtins,
        "math": math,
        "torch": torch,
        "torch.nn.functional": F,
        "torch.testing": torch.testing,
    }
    ours = {
        name: module
        for name, module in sys.modules.items()
        if name.startswith("course_lib") and not name.startswith(("course_lib.bench", "course_lib.kernels"))
    }
    return fixed | CLASSES | ours


def snapshot() -> Callable[[], None]:
    """Remember, now, every attribute of the modules and classes the checks rely on; the function returned raises
    ``AssertionError`` ("Not graded: ...") when one of them has become another object since, naming up to three."""
    watched = _watched()
    kept = {label: dict(vars(obj)) for label, obj in watched.items()}

    def verify() -> None:
        changed = [
            f"{label}.{key}"
            for label, obj in watched.items()
            for key, value in vars(obj).items()
            if key not in _MOVING and kept[label].get(key, _MOVING if label in CLASSES else value) is not value
        ]
        changed += [
            f"{label}.{key}"
            for label, obj in watched.items()
            for key in kept[label].keys() - vars(obj).keys() - _MOVING
        ]
        if changed:
            raise AssertionError(
                f"{NOT_GRADED}: a cell changed {', '.join(changed[:3])}"
                + (f" (and {len(changed) - 3} more)" if len(changed) > 3 else "")
                + ", which the checks rely on; restart the kernel and run the cells in order without that change"
            )

    return verify
