"""Reading a cell for internals' names, and code, written in strings and handed to a module an answer may import.

:mod:`course_lib.classroom.tampering` flags the internals a cell names (``__code__``, ``__globals__``, ...) and
``getattr`` with a computed name; a string reaches them too where an allowed module looks the name up itself:

- ``functools.update_wrapper(wrapper, wrapped, assigned=..., updated=...)`` and ``functools.wraps(wrapped,
  assigned=...)`` copy the attributes named in ``assigned`` from one function to another: ``assigned=("__co" +
  "de__",)`` gives a checker the code of a function that says nothing is wrong, the object unchanged. Used plainly
  (``@functools.wraps(f)``, the default names) they are fine; with ``assigned=``/``updated=`` (or those positions), or
  taken as a value (``how=functools.update_wrapper``, a ``partial`` of it), they are flagged;
- ``string.Formatter`` (``get_field``, ``get_value``, ``format``, ``vformat``) and ``str.format``/``format_map`` follow
  the attribute and index fields of a format string: ``"{0.__globals__[expected]}"`` reads a check's expected values
  from a function's globals. ``string.Formatter`` and its lookup methods are flagged wherever named; a ``.format`` or
  ``.format_map`` whose format string is not a literal (nor built from literals, in the expression or by a name the
  cell binds once) is flagged, and so is a literal whose field reaches an internal (a part that starts with ``_``).
  ``"{:.3f}".format(x)`` and f-strings are fine;
- ``typing.get_type_hints`` (and ``functools.singledispatch``'s ``register``, which calls it) evaluates annotations
  written as strings: one that is code rather than a type's name (``def f(x: "exec(...) or int")``) is flagged, and so
  are ``get_type_hints``, ``ForwardRef``, ``__annotations__``, ``inspect.get_annotations`` and ``singledispatch``
  wherever named (an annotation can be a name bound to a string computed at run time, which no reading sees: the
  sixteenth trial's ``def f(x: precision)`` registered with ``singledispatch``).
"""

from __future__ import annotations

import _string
import ast
import string
from collections import Counter

from .syntax import _names_bound, _outside_functions

__all__ = ["dunder_strings"]

_WRAPPERS = {"update_wrapper": 2, "wraps": 1}  # name -> positional arguments before ``assigned``
_FORMATTER = {"Formatter", "get_field", "get_value", "vformat"}  # string.Formatter and its lookup methods
_FORMATS = {"format", "format_map"}


def _literals(tree: ast.AST) -> dict[str, tuple[str, int]]:
    """Name -> (the string, the line after which the name holds it) for the names the cell binds once, by a
    top-level assignment of a string built from literals (``fmt = "{:.3f}"``, then ``row = fmt * 3``)."""
    counts = Counter(name for node in ast.walk(tree) for name in _names_bound(node))
    counts.update(n.arg for n in ast.walk(tree) if isinstance(n, ast.arg))
    counts.update(n.name for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler) and n.name)
    found = {}
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            text = _folded(node.value, {name: text for name, (text, _) in found.items()})  # bound before it
            if counts[node.targets[0].id] == 1 and text is not None:
                found[node.targets[0].id] = (text, node.end_lineno or node.lineno)
    return found


def _folded(node: ast.AST | None, names: dict[str, str]) -> str | None:
    """The string ``node`` is, where it is built from literals by ``+`` and ``*`` (a count not written as a number
    taken as 1: the fields are the same), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _folded(node.left, names), _folded(node.right, names)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):  # "{:>6}" * n: its fields, once or more
        for text, count in ((node.left, node.right), (node.right, node.left)):
            folded = _folded(text, names)
            if folded is not None:
                times = count.value if isinstance(count, ast.Constant) and type(count.value) is int else 1
                return folded * min(max(times, 1), 8)
    return None


def _reaches_internals(text: str, depth: int = 0) -> bool:
    """Whether a field of the format string ``text`` (or of a format spec inside one) has a part that starts with
    ``_``: ``{0.__globals__}``, ``{f[__builtins__]}`` (a private name too: no honest format string reads one). A
    malformed string is left to fail when it runs."""
    try:
        for _, field, spec, _ in string.Formatter().parse(text):
            if field is not None:
                first, rest = _string.formatter_field_name_split(field)
                parts = [str(first), *(str(key) for _, key in rest)]
                if any(part.startswith("_") for part in parts):
                    return True
            if spec and depth < 2 and _reaches_internals(spec, depth + 1):
                return True
    except (ValueError, TypeError):
        return False
    return False


def _wrapper_aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> ``update_wrapper`` / ``wraps`` for ``from functools import ... [as ...]``."""
    return {
        alias.asname or alias.name: alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "functools"
        for alias in node.names
        if alias.name in _WRAPPERS
    }


def _name_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _wrappers(tree: ast.AST, calls: dict[int, ast.Call]) -> list[str]:
    aliases, found = _wrapper_aliases(tree), []
    for node in ast.walk(tree):
        name = _name_of(node)
        wrapper = aliases.get(name, name if isinstance(node, ast.Attribute) else None)
        if wrapper not in _WRAPPERS or (isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)):
            continue
        call = calls.get(id(node))
        if call is None:
            found.append(f"line {node.lineno}: takes functools.{wrapper} as a value, which can copy any attribute "
                         "(a function's __code__) onto another function")  # fmt: skip
        elif (
            len(call.args) > _WRAPPERS[wrapper]
            or any(isinstance(a, ast.Starred) for a in call.args)
            or {k.arg for k in call.keywords} & {"assigned", "updated", None}
        ):
            found.append(f"line {node.lineno}: functools.{wrapper} with assigned= or updated=, which can copy any "
                         "attribute (a function's __code__) onto another function")  # fmt: skip
    return found


def _formats(tree: ast.AST, calls: dict[int, ast.Call]) -> list[str]:
    """string.Formatter and its lookups, and str.format / format_map of a format string that is not a literal or
    reads an internal. A name holds its literal only after its assignment and outside function bodies (a function
    may run after another cell rebound it)."""
    literals, outside, found = _literals(tree), set(map(id, _outside_functions(tree))), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "string":
            names = [a.name for a in node.names if a.name in _FORMATTER or a.name == "*"]
            found += [
                f"line {node.lineno}: imports string.{n}, which reads attributes named in a string" for n in names
            ]
        name = _name_of(node)
        if isinstance(node, ast.Attribute) and name in _FORMATTER:
            found.append(
                f"line {node.lineno}: uses {name} (string.Formatter), which reads attributes named in a string"
            )
        if not (isinstance(node, ast.Attribute) and node.attr in _FORMATS):
            continue
        call, owner = calls.get(id(node)), node.value
        text_node = (call.args[0] if call and call.args else None) if _name_of(owner) == "str" else owner
        names = {n: t for n, (t, end) in literals.items() if id(node) in outside and node.lineno > end}
        text = _folded(text_node, names)
        if text is None:
            found.append(f"line {node.lineno}: str.{node.attr} of a format string that is not a literal, whose fields "
                         "could read any attribute (write an f-string, or the format string itself)")  # fmt: skip
        elif _reaches_internals(text):
            found.append(f"line {node.lineno}: a format string whose field reads an internal ({text[:40]!r})")
    return found


def _literal_lookups(tree: ast.AST) -> list[str]:
    """``getattr(x, "format")`` and the like: the methods above fetched by a literal name."""
    names = set(_WRAPPERS) | _FORMATTER | _FORMATS
    return [f"line {n.lineno}: getattr of {n.args[1].value}, which reads attributes named in a string"
            for n in ast.walk(tree) if isinstance(n, ast.Call) and _name_of(n.func) in ("getattr", "hasattr")
            and len(n.args) > 1 and isinstance(n.args[1], ast.Constant) and n.args[1].value in names]  # fmt: skip


def _plain_annotation(text: str) -> bool:
    """Whether an annotation written as a string names a type and does nothing else: names, public attributes,
    subscripts, ``|``, ``None`` (``"torch.Tensor"``, ``"list[int] | None"``)."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    kinds = (ast.Expression, ast.Name, ast.Load, ast.Attribute, ast.Subscript, ast.Tuple, ast.BinOp, ast.BitOr)
    return all(
        isinstance(n, kinds) or (isinstance(n, ast.Constant) and n.value is None) for n in ast.walk(tree)
    ) and not any(isinstance(n, ast.Attribute) and n.attr.startswith("_") for n in ast.walk(tree))


def _string_annotations(tree: ast.AST) -> list[str]:
    """Annotations written as strings that are code: ``typing.get_type_hints`` and ``functools.singledispatch``'s
    ``register`` evaluate them (``def f(x: "exec(...) or int")``); and the names that evaluate one."""
    notes = [n.annotation for n in ast.walk(tree) if isinstance(n, (ast.arg, ast.AnnAssign)) and n.annotation]
    notes += [n.returns for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns]
    found = [
        f"line {c.lineno}: an annotation written as a string that is code, which typing evaluates ({c.value[:40]!r})"
        for note in notes
        for c in ast.walk(note)
        if isinstance(c, ast.Constant) and isinstance(c.value, str) and not _plain_annotation(c.value)
    ]
    evaluating = {"get_type_hints", "ForwardRef", "_eval_type", "evaluate_forward_ref", "__annotations__",
                  "singledispatch", "singledispatchmethod", "get_annotations"}  # fmt: skip
    return found + [
        f"line {n.lineno}: uses {_name_of(n)}, through which typing evaluates annotations written as strings"
        for n in ast.walk(tree)
        if isinstance(n, (ast.Name, ast.Attribute)) and _name_of(n) in evaluating
    ]


def dunder_strings(tree: ast.AST) -> list[str]:
    """What in a cell's syntax tree hands an internal's name, written in a string, to a module that looks it up: one
    line per finding, naming the line of the cell."""
    calls = {id(n.func): n for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return _wrappers(tree, calls) + _formats(tree, calls) + _literal_lookups(tree) + _string_annotations(tree)
