"""What a course function hands its work to: the unchecked twins that blocking it must block too.

The course's functions check their inputs once, at their public edge, and then call a private twin that does the work
unchecked (``split_heads`` returns ``_split(x, num_heads)``; ``MultiHeadAttention.forward`` returns what
``self._forward`` computed). An exercise that blocks the public name (:func:`course_lib.classroom.exercises.blocked`)
must block the twin too, or ``cl.multihead._split`` would be an open door. :func:`work_of` finds the twins by reading
the function's source, never running it:

- the **result** of a function is what its ``return`` statements give: a call there, or a name assigned from a call
  (``out, weights = self._forward(...)``; ``return out``), or the value a method is called on (``out.to(dtype)``),
  through conditional expressions, tuples, dicts, subscripts and attributes (a call's arguments are its inputs, not
  its result);
- a **twin** is a private function of ``course_lib`` (its name starts with ``_``; not one of ``validate``'s checks)
  whose call gives the result, or a method of the same class called on ``self``; and, by name, ``_forward`` for
  ``forward`` (``_f`` for ``f``) beside it. A twin of the same module is read in turn (``sample_next_token`` ->
  ``_choose``), never a public function: that is the work of another name, which an answer may be allowed (notebook
  06's multi-head attention calls ``cl.scaled_dot_product_attention``; notebook 09's dilated convolution
  ``cl.shift_attention_weights``, which ``conv_as_attention`` calls);
- :data:`EXTRA`, the one table: what reading cannot find, a public twin (``attention.attend``, documented as
  ``scaled_dot_product_attention`` unchecked) or a reference that does the same work another way; and
  :data:`EXTRA_BY_NAME`, those in modules a check must not import (``course_lib.kernels.launch`` needs triton).

``tests/test_checks_twins.py`` fails when a function documented as another's unchecked twin (":func:`f`
unchecked"), or a ``_forward`` beside a ``forward``, is not found: a twin added later is covered, or named there.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import textwrap
from collections.abc import Iterator
from typing import Any

__all__ = ["EXTRA", "EXTRA_BY_NAME", "dotted_name", "twins", "work_of"]

# blocked name -> functions that do its work which reading its source does not find (each is read in turn)
EXTRA: dict[str, tuple[str, ...]] = {  # (keys and values: where each function is defined)
    "course_lib.attention.scaled_dot_product_attention": ("course_lib.attention.attend",),
    "course_lib.efficient.chunked_attention": ("course_lib.efficient.chunked_attention_reference",),
    "course_lib.efficient.sliding_window_attention": ("course_lib.efficient.sliding_window_attention_reference",),
}
# ... and those in modules a check must not import: blocked by the qualified name of the code that runs, if imported
EXTRA_BY_NAME: dict[str, tuple[str, ...]] = {
    "course_lib.attention.scaled_dot_product_attention": ("course_lib.kernels.launch.attention_reference",),
}
_NOT_WORK = ("course_lib.validate", "course_lib.classroom")  # checks that return their argument, the checkers


def dotted_name(function: Any) -> str:
    """``course_lib.multihead._split``, ``course_lib.multihead.MultiHeadAttention._forward``."""
    return f"{function.__module__}.{function.__qualname__}"


def _function(value: Any) -> Any:
    value = getattr(value, "__func__", value)  # a bound method, a staticmethod or classmethod
    return inspect.unwrap(value) if inspect.isfunction(inspect.unwrap(value)) else None


def _definition(function: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):  # no source (made at run time, or a builtin)
        return None
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not those of the functions and classes defined inside it."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            yield from _own_nodes(child)


def _result_calls(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
    """The calls whose value the function returns (see the module's docstring)."""
    assigned: dict[str, list[ast.expr]] = {}
    returned: list[ast.expr] = []
    for node in _own_nodes(definition):
        if isinstance(node, ast.Return) and node.value is not None:
            returned.append(node.value)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        assigned.setdefault(name.id, []).append(node.value)
    calls, seen, todo = [], set(), list(returned)
    while todo:
        expr = todo.pop()
        if id(expr) in seen:
            continue
        seen.add(id(expr))
        if isinstance(expr, ast.Call):
            calls.append(expr)
            if isinstance(expr.func, ast.Attribute):  # out.to(dtype): the value it is called on
                todo.append(expr.func.value)
        elif isinstance(expr, ast.Name):
            todo += assigned.get(expr.id, [])
        elif isinstance(expr, ast.IfExp):
            todo += [expr.body, expr.orelse]
        elif isinstance(expr, ast.Tuple | ast.List):
            todo += [e.value if isinstance(e, ast.Starred) else e for e in expr.elts]
        elif isinstance(expr, ast.Dict):
            todo += expr.values
        elif isinstance(expr, ast.Subscript | ast.Attribute | ast.Starred):
            todo.append(expr.value)
    return calls


def _resolve(call: ast.Call, function: Any, owner: type | None) -> Any:
    """The function a call names: a global of ``function``'s module (or an attribute chain from one), or a method of
    ``owner`` called on ``self``; None for anything else (a value's method, an instance's layer)."""
    chain, parts = call.func, []
    while isinstance(chain, ast.Attribute):
        parts.insert(0, chain.attr)
        chain = chain.value
    if not isinstance(chain, ast.Name):
        return None
    if chain.id == "self" and owner is not None and len(parts) == 1:
        value = inspect.getattr_static(owner, parts[0], None)
    else:
        value = function.__globals__.get(chain.id)
        for part in parts:
            value = getattr(value, part, None)
    return _function(value)


def _private(function: Any) -> bool:
    return function.__name__.startswith("_") and not function.__name__.startswith("__")


def _by_name(function: Any, owner: type | None) -> Any:
    """``_f`` beside ``f``: in ``owner`` (``MultiHeadAttention._forward``) or in ``f``'s module."""
    twin = f"_{function.__name__}"
    value = inspect.getattr_static(owner, twin, None) if owner is not None else function.__globals__.get(twin)
    return _function(value)


def twins(function: Any, owner: type | None = None) -> dict[Any, str]:
    """Function -> its dotted name, for every private twin of ``function`` (a method of ``owner`` if given), read from
    the source (see the module's docstring); ``function`` itself is not among them."""
    function = _function(function)
    found: dict[Any, str] = {}
    todo = [function]
    while todo:
        current = todo.pop()
        definition = _definition(current)
        callees = [_resolve(call, current, owner) for call in _result_calls(definition)] if definition else []
        for callee in [_by_name(current, owner), *callees]:
            module = getattr(callee, "__module__", "") or ""
            if callee is None or callee is function or callee in found or not _private(callee):
                continue
            if module.startswith("course_lib.") and not module.startswith(_NOT_WORK):
                found[callee] = dotted_name(callee)
                if module == function.__module__:
                    todo.append(callee)
    return found


def _named(dotted: str) -> Any:
    module, _, name = dotted.rpartition(".")
    return _function(getattr(importlib.import_module(module), name))


@functools.cache
def work_of(function: Any, owner: type | None = None) -> dict[Any, str]:
    """Function -> dotted name, for everything that does the work of ``function``, a function of ``course_lib``,
    besides itself: its :func:`twins` and the functions :data:`EXTRA` lists for it, with their own twins (nothing for
    a function of another package)."""
    function = _function(function)
    if function is None or not (function.__module__ or "").startswith("course_lib."):
        return {}
    found = twins(function, owner)
    for extra in EXTRA.get(dotted_name(function), ()):
        inner = _named(extra)
        found = {**found, inner: dotted_name(inner), **twins(inner)}
    found.pop(function, None)
    return found
