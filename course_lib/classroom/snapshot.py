"""The modules a check relies on, remembered before a submission runs and verified in every graded test cell: grading's
second line of defence, behind the reading of the cells (:mod:`course_lib.classroom.guard`).

The guard reads a student's cells and flags the routes to a module it can follow (an alias, ``getattr``, ``setattr``,
a module handed to a function by name). :func:`snapshot`, which the guard adds to the end of the first locked cell
(before any student's cell runs), remembers every attribute of the modules and classes the checks rely on:
``builtins``, ``math``, ``torch``, ``torch.nn.functional``, ``torch.testing``, ``torch.Tensor`` and the C class that
holds its methods (``torch._C.TensorBase``), ``torch.Generator``, ``torch.nn.Module``, ``copy`` and ``copyreg`` (their
tables item by item: a check copies its inputs) and every module of ``course_lib`` (its vocabulary and
``classroom``). The function it returns, which the guard calls
at the top of every graded test cell, raises ``AssertionError`` ("Not graded: ...", which the class report flags)
when one of them has become another object since, however it was reached: a module handed to a function as an
attribute chain, kept in a container, fetched by ``getattr`` with a literal name, ``print.__self__``...

The guard also hands it, per test cell, the notebook's globals, the answers the cell reads and the builtins it uses.
An answer must be a plain value: an ``int`` is an ``int``, not a subclass of one (``class Index(int)`` whose ``==``
says True to anything), and no value of a class with comparisons of its own written in the notebook; else the test
cell raises ("Not graded: ... must be a plain int"). And a builtin the cell uses may not be hidden by a global of
the notebook (``class int(int)`` in an answer cell, by any route). Whatever this kernel's checks say, the grader
decides each one again outside it (:mod:`course_lib.classroom.recheck`).
"""

from __future__ import annotations

import builtins
import copy
import copyreg
import importlib
import math
import os
import sys
import types
from collections.abc import Callable, Iterable, Mapping, Sequence, Set

import torch
import torch.nn.functional as F
from torch import Tensor

from .integrity import NOT_GRADED, modes_on, named_by_its_module
from .noted import notes_everywhere
from .watch import watch_cells
from .witness import ran

__all__ = ["not_plain", "snapshot"]

# Entries that change by themselves: IPython's last results in builtins, the warnings filter's registry,
# builtins.input, which ipykernel binds for every cell it runs (to forward the kernel's standard input), and a class's
# __slotnames__, copyreg's cache, which pickling sets (torch.save of a tensor: a red team's honest answer was flagged).
_MOVING = frozenset({"_", "__", "___", "__warningregistry__", "input", "__slotnames__"})
# Classes gain no attribute in honest use: a new one (``torch.Tensor.allclose = ...`` shadows the C base's) is a change.
# TensorBase, torch's C class, holds a tensor's methods (``any``, ``eq``): immutable, unless ctypes clears its flag.
CLASSES = {"torch.Tensor": Tensor, "torch._C.TensorBase": torch._C.TensorBase, "torch._C.Generator": torch.Generator,
           "torch.nn.Module": torch.nn.Module}  # fmt: skip
_TABLED = ("course_lib", "copy")  # modules whose tables (dicts, lists, sets) are compared item by item: copy, copyreg


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
        "copy": copy,  # and its tables, which a check's copy of its inputs could consult (classroom.copies)
        "copyreg": copyreg,
    }
    ours = {
        name: module
        for name, module in sys.modules.items()
        if name.startswith("course_lib") and not name.startswith(("course_lib.bench", "course_lib.kernels"))
    }
    return fixed | CLASSES | ours


_PLAIN = (bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset)  # bool first: an int subclass
_COMPARING = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__index__", "__int__",
              "__float__")  # fmt: skip
_TRUSTED = tuple({sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(os.path.abspath(__file__)))})
_LIBRARIES = ("course_lib", "torch")  # whose functions and classes, bound to a notebook's name, reach the checks
_NAME = "_course_integrity"  # the notebook's name of the verification (classroom.guard's SNAPSHOT)
_IPYTHON_OWN = frozenset({"exit", "quit", "get_ipython", "open"})  # globals IPython's namespace itself may hold


def _numpy_scalars() -> frozenset[type]:
    import numpy as np

    return frozenset(np.sctypeDict.values())


def _installed(cls: type) -> bool:
    """Whether ``cls`` is what its module, a file of the installed libraries or course_lib, names by its name."""
    module = sys.modules.get(cls.__module__)
    where = getattr(module, "__file__", None) or ""
    return named_by_its_module(cls) and (module is builtins or os.path.abspath(where).startswith(_TRUSTED))


def _own_comparisons(kind: type) -> bool:
    """Whether ``kind`` or a class it derives from has comparisons (or truth, conversions) of its own written in the
    notebook: neither built in nor a class of the installed libraries or course_lib."""
    for cls in kind.__mro__:
        for name in _COMPARING:
            method = cls.__dict__.get(name)
            if method is None or isinstance(method, (types.BuiltinFunctionType, types.WrapperDescriptorType,
                                                     types.MethodDescriptorType)):  # fmt: skip
                continue
            code = getattr(getattr(method, "__func__", method), "__code__", None)
            if not _installed(cls) and (code is None or not os.path.abspath(code.co_filename).startswith(_TRUSTED)):
                return True
    return False


def not_plain(value: object, depth: int = 0) -> str | None:
    """Why ``value``, an answer, cannot be compared as it is (a sentence), or None: a subclass of a builtin value type
    (other than NumPy's scalars), or a value whose class compares in its own way; inside containers too."""
    kind = type(value)
    base = next((t for t in _PLAIN if isinstance(value, t)), None)
    if base is not None and kind is not base and kind not in _numpy_scalars():
        return f"must be a plain {base.__name__}, not {kind.__name__} (a subclass of {base.__name__})"
    if base is None and not isinstance(value, type) and _own_comparisons(kind):
        return f"must be a plain value, not a {kind.__name__}, whose comparisons are its own"
    container = isinstance(value, (Sequence, Set, Mapping)) and not isinstance(value, (str, bytes))
    if (kind in (tuple, list, set, frozenset, dict) or (base is None and container)) and depth < 4:  # UserList too
        items = [*value.items()] if isinstance(value, Mapping) else value
        for item in list(items)[:10_000]:
            problem = not_plain(item, depth + 1)
            if problem is not None:
                return problem
    return None


def _answers_and_builtins(namespace: Mapping, answers: Iterable[str], hidden: Iterable[str]) -> list[str]:
    """What is wrong with the answers a test cell reads, and which builtins it uses are hidden by a global."""
    found = []
    for name in answers:
        problem = not_plain(namespace[name]) if name in namespace else None
        found += [f"{name} {problem}: its own comparisons could answer the check"] if problem else []
    shadowed = [n for n in hidden if n in namespace and n not in _IPYTHON_OWN and not n.startswith("_")]
    return found + [f"a cell binds {n}, which hides the builtin the checks use" for n in shadowed]


def _inside(label: str, value: object) -> object:
    """What can change inside ``value`` while it stays the same object: a function's code and defaults (replaced by
    ``functools.update_wrapper(..., assigned=("__code__",))``), and the items of course_lib's own tables (a dict
    emptied in place); None for the rest. Compared item by item, by identity."""
    if isinstance(value, types.FunctionType):
        return (value.__code__, value.__defaults__, *(value.__kwdefaults__ or {}).values())
    if label.startswith(_TABLED) and type(value) in (dict, list, set):  # a module's __builtins__ is left out
        return tuple(x for pair in value.items() for x in pair) if type(value) is dict else tuple(value)
    return None


def _insides(label: str, obj: object) -> dict[str, tuple]:
    """What can change inside each attribute of ``obj`` (:func:`_inside`), for those that have an inside."""
    found = {key: _inside(label, value) for key, value in vars(obj).items() if not key.startswith("__")}
    return {key: inside for key, inside in found.items() if inside is not None}


def _same(before: object, after: object) -> bool:
    return before is None or (len(before) == len(after) and all(a is b for a, b in zip(before, after, strict=True)))


def _checkers(namespace: Mapping, imports: Mapping[str, str]) -> dict[str, object]:
    """What the notebook's names that reach the checks must stay: those bound now to a module (``cl``, ``torch``) or
    to a function or class of course_lib's or torch's, and those ``imports`` names (a later locked cell's ``import
    course_lib as cl``: name -> dotted path), resolved now, before any cell of a student's runs."""
    kinds = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
    bound = {
        name: value
        for name, value in namespace.items()
        if not name.startswith("_")
        and isinstance(value, kinds)
        and (isinstance(value, types.ModuleType) or str(getattr(value, "__module__", "")).startswith(_LIBRARIES))
    }
    for name, path in imports.items():
        try:
            bound[name] = importlib.import_module(path)
        except ImportError:
            owner, _, attr = path.rpartition(".")
            found = getattr(importlib.import_module(owner), attr, bound) if owner else bound
            if found is not bound:
                bound[name] = found
    return bound


def _changed(watched: Mapping, kept: Mapping, inside: Mapping, moving: frozenset) -> list[str]:
    """The attributes of ``watched`` that are no longer what ``kept`` and ``inside`` remembered."""
    changed = [
        f"{label}.{key}"
        for label, obj in watched.items()
        for key, value in vars(obj).items()
        if key not in moving and kept[label].get(key, moving if label in CLASSES else value) is not value
    ]
    changed += [
        f"{label}.{key}" for label, obj in watched.items() for key in kept[label].keys() - vars(obj).keys() - moving
    ]
    changed += [
        f"{label}.{key}"
        for label, obj in watched.items()
        for key, before in inside[label].items()  # (only what has an inside: functions, course_lib's and copy's tables)
        if key not in moving
        and kept[label].get(key) is vars(obj).get(key, moving)
        and not _same(before, _inside(label, vars(obj)[key]))
    ]
    return changed


def snapshot(imports: Mapping[str, str] | None = None, namespace: Mapping | None = None) -> Callable[..., None]:
    """Remember, now, every attribute of the modules and classes the checks rely on, and the names of ``namespace``
    (the notebook's globals; the caller's if not given) that reach the checks, ``imports`` too (:func:`_checkers`):
    the function returned raises ``AssertionError`` ("Not graded: ...") when one of them has become another object
    since (a name not bound yet is not verified), naming up to three. Taken in a notebook's own namespace (the
    guard's line in the first locked cell), the verification is also handed to
    :func:`course_lib.classroom.watch.watch_cells`: it then runs before every graded test cell and in every check,
    whatever a cell rebinds, and the notebook's ``_course_integrity`` must stay bound to it."""
    namespace = sys._getframe(1).f_globals if namespace is None else namespace
    main = namespace is getattr(sys.modules.get("__main__"), "__dict__", None)
    watched = _watched()
    kept = {label: dict(vars(obj)) for label, obj in watched.items()}
    inside = {label: _insides(label, obj) for label, obj in watched.items()}
    bound = _checkers(namespace, imports or {})
    # bound now: what a cell could rebind later (a module's names, a builtin) is not looked up when verifying
    changes, answers_and_builtins, moving, fail, join = (
        _changed,
        _answers_and_builtins,
        _MOVING,
        AssertionError,
        ", ".join,
    )

    def verify(answers_in: Mapping | None = None, answers: Iterable[str] = (), hidden: Iterable[str] = ()) -> None:
        problems = answers_and_builtins(answers_in or {}, answers, hidden)
        if problems:
            raise fail(f"{NOT_GRADED}: " + "; ".join(problems))
        changed = changes(watched, kept, inside, moving)
        changed += [f"the notebook's {n}" for n, value in bound.items() if namespace.get(n, value) is not value]
        if main and namespace.get(_NAME) is not verify:
            changed.append(f"the notebook's {_NAME} (the grader's verification)")
        if changed:
            raise fail(
                f"{NOT_GRADED}: a cell changed {join(changed[:3])}"
                + (f" (and {len(changed) - 3} more)" if len(changed) > 3 else "")
                + ", which the checks rely on; restart the kernel and run the cells in order without that change"
            )

    verify.ran = ran  # type: ignore[attr-defined]  (the guard's last line of a test cell: classroom.witness)
    if main:
        watch_cells(_NAME, verify, modes_on())  # the modes on now are the grading machine's (classroom.integrity)
        notes_everywhere()  # a warning on stderr would cost a test cell its points (classroom.noted)
    return verify
