"""Reading a cell for what looks like reaching into other code but only reads: honest lines a trial saw flagged.

- **A whole module imported for harmless attributes** (``import operator`` then ``operator.itemgetter(1)``, ``import
  sys`` then ``sys.getsizeof(x)``): a module made for reaching (:data:`HARMLESS_ATTRS`' keys) passes where the cell
  uses it only through those attributes, never as a value or another attribute (``operator.attrgetter``,
  ``sys.modules``); ``from operator import add`` passes by the same list.
- **A module's evaluation mode** (``vit.eval()``): ``.eval`` called with no arguments is ``nn.Module.eval``, never
  the builtin ``eval``, which needs the code it runs as an argument (:func:`mode_switches`).
- **A module or an object shown** (``print(type(cl))``, ``print(vars(node))``): the builtins of
  :data:`READING_BUILTINS` hand their arguments to nothing but ``repr``/``str``, and ``vars(x)`` printed is a
  dictionary printed. Only where the cell binds none of those names itself (a local ``print`` could be anything).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import os

__all__ = [
    "HARMLESS_ATTRS",
    "READING_BUILTINS",
    "SYS_PLAIN",
    "harmless_import",
    "is_module",
    "mode_switches",
    "printed",
    "shown",
]

SYS_PLAIN = {"float_info", "int_info", "maxsize", "version", "version_info", "platform", "stdout", "stderr",
             "getsizeof", "getrecursionlimit"}  # fmt: skip
# A module made for reaching into other code, and what of it reaches nothing
_OPERATOR = {"itemgetter", "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "pos", "abs", "matmul",
             "eq", "ne", "lt", "le", "gt", "ge", "and_", "or_", "xor", "not_", "invert", "index", "truth", "contains",
             "concat"}  # fmt: skip
# IPython's display functions (a twenty-second trial: `from IPython.display import HTML, display`, flagged)
_DISPLAY = {"display", "HTML", "Markdown", "Latex", "Math", "Image", "SVG", "JSON", "Pretty"}
HARMLESS_ATTRS = {"types": {"SimpleNamespace"}, "operator": _OPERATOR, "sys": SYS_PLAIN, "IPython.display": _DISPLAY}
READING_BUILTINS = {"print", "type", "id", "repr", "str", "dir", "hash", "len"}  # they only read what they are given


def harmless_import(node: ast.Import | ast.ImportFrom, tree: ast.AST) -> bool:
    """``from M import a, b`` of harmless names, or ``import M`` (``as N``) used only through harmless attributes."""
    if isinstance(node, ast.ImportFrom):
        return {a.name for a in node.names} <= HARMLESS_ATTRS.get(node.module, set())
    names = {a.asname or a.name: a.name for a in node.names}
    if any(module not in HARMLESS_ATTRS for module in names.values()):
        return False
    attributes = {id(n.value): n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in names]
    return all(attributes.get(id(n)) in HARMLESS_ATTRS[names[n.id]] for n in uses)


def mode_switches(tree: ast.AST) -> set[int]:
    """The ids of the ``x.eval`` in each ``x.eval()`` called with no arguments: a model put in evaluation mode, which
    a twenty-first trial's honest ``final_vit.eval()`` was flagged for (the builtin ``eval`` needs an argument)."""
    return {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "eval" and not n.args and not n.keywords}  # fmt: skip


def _binds(tree: ast.AST) -> set[str]:
    """Every name the cell binds anywhere (assignments, parameters, definitions, imports)."""
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    bound |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler) and n.name}
    imports = (n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return bound | {(a.asname or a.name).split(".")[0] for n in imports for a in n.names}


def _calls_of(tree: ast.AST, names: set[str]) -> list[ast.Call]:
    unbound = names - _binds(tree)
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) in unbound]


def shown(tree: ast.AST) -> set[int]:
    """The ids of the plain names that a reading builtin is given (``type(cl)``, ``print(cl)``): read, not handed on."""
    calls = _calls_of(tree, READING_BUILTINS)
    return {id(a) for c in calls for a in c.args
            if isinstance(a, ast.Name) and (c.func.id == "print" or len(c.args) == 1)}  # fmt: skip


def printed(tree: ast.AST) -> set[int]:
    """The ids of ``vars`` in ``print(vars(x))``: a dictionary printed, not changed."""
    calls = _calls_of(tree, {"print", "vars"})
    return {id(a.func) for c in calls if c.func.id == "print" for a in c.args
            if isinstance(a, ast.Call) and a in calls and a.func.id == "vars" and len(a.args) == 1}  # fmt: skip


@functools.lru_cache(maxsize=256)
def is_module(dotted: str) -> bool:
    """Whether ``dotted`` names an installed module or package (looked up on disk, nothing imported)."""
    top, *rest = dotted.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    paths = list(spec.submodule_search_locations or []) if spec is not None else []
    for part in rest[:-1]:
        paths = [os.path.join(p, part) for p in paths if os.path.isdir(os.path.join(p, part))]
    if spec is None or not rest:
        return spec is not None
    return any(name == rest[-1] or name.startswith(rest[-1] + ".") for p in paths for name in os.listdir(p))
