"""What a check decides with, which the answer it checks may not call: its reference, its inputs and their helpers.

An answer that returns the check's own reference agrees with it on every input: notebook 14's ``decoder_mask``
answered ``return translator_mask(tgt, pad)`` and scored full marks (issue 44). :func:`own_functions` collects, for
:func:`~course_lib.classroom.checks.check_function`, the code of

- the reference and the input maker, whatever they are (for a library function, calling it is the shortcut itself);
- every function defined where they were, when that is the answer's own namespace (a notebook, whose cells share
  one): in the same file, which in a notebook is the same cell, the check cell. Their nested functions too;

leaving out the function under test, the functions it names (a check cell's wrapper, such as notebook 13's
``as_ids(merge)``, runs helpers of its own), and the callables among the inputs (the answer is handed them). While
the answer runs, a call of any of these codes raises ``ShortcutError``, however the function was reached
(:class:`~course_lib.classroom.reach.Reaches`). The guard reads the same rule in a submission's cells before it runs
(:func:`~course_lib.classroom.syntax.check_names`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from types import CodeType
from typing import Any

__all__ = ["own_functions"]


def _function(f: Any) -> Any:
    """The plain function behind ``f``: a bound method's, a partial's, a decorator's inner one."""
    for _ in range(8):
        f = getattr(f, "__func__", f)
        f = f.func if isinstance(f, functools.partial) else f
    return inspect.unwrap(f) if callable(f) else f


def _code(f: Any) -> CodeType | None:
    code = getattr(_function(f), "__code__", None)
    return code if isinstance(code, CodeType) else None


def _name(code: CodeType) -> str:
    return getattr(code, "co_qualname", code.co_name)  # (Python 3.11)


def _nested(code: CodeType) -> Iterator[CodeType]:
    """``code`` and the code of every function (lambda, comprehension) defined inside it."""
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _nested(const)


def _defined_in(namespace: dict, files: set[str]) -> Iterator[tuple[CodeType, str]]:
    """(code, name) of the functions of ``namespace`` defined in ``files``, methods of its own classes included."""
    for value in list(namespace.values()):
        own_class = isinstance(value, type) and value.__module__ == namespace.get("__name__")
        for member in (value, *vars(value).values()) if own_class else (value,):
            code = _code(member) if callable(member) or isinstance(member, (staticmethod, classmethod)) else None
            if code is not None and code.co_filename in files:
                yield code, _name(code)


def _used_by(codes: Sequence[CodeType], namespace: dict | None, files: set[str]) -> set[CodeType]:
    """The codes ``codes`` run on their own: themselves, their nested functions, and, for those defined in ``files``
    (a check cell's wrapper), the functions of ``files`` that they name in ``namespace``, and so on."""
    seen: set[CodeType] = set()
    todo = list(codes)
    while todo:
        for code in _nested(todo.pop()):
            if code in seen:
                continue
            seen.add(code)
            if code.co_filename not in files:  # an answer's own code: what it names is not the check's to run
                continue
            named = [(namespace or {}).get(name) for name in code.co_names]
            todo += [c for f in named if f is not None and (c := _code(f)) is not None and c.co_filename in files]
    return seen


def own_functions(
    fn: Callable[..., Any], reference: Callable[..., Any], make_inputs: Callable[..., Any], args: Sequence[object] = ()
) -> dict[CodeType, str]:
    """Code -> how a refusal names it, for what ``fn`` may not call while it is checked (see the module)."""
    namespace = getattr(_function(fn), "__globals__", None)
    found: dict[CodeType, str] = {}
    files: set[str] = set()
    for f, role in ((reference, "reference"), (make_inputs, "inputs")):
        code = _code(f)
        if code is None:
            continue
        for inner in _nested(code):
            found.setdefault(inner, f"{_name(code)} (the check's {role})")
        if namespace is not None and getattr(_function(f), "__globals__", None) is namespace:
            files.add(code.co_filename)
    if files:
        for code, name in _defined_in(namespace, files):
            for inner in _nested(code):
                found.setdefault(inner, f"{name} (a function of the check)")
    allowed = [c for f in (fn, *[a for a in args if callable(a)]) if (c := _code(f)) is not None]
    for code in _used_by(allowed, namespace, files):
        found.pop(code, None)
    return found
