"""Reading a cell for what it reaches through another module's attributes, or names in a string. Never run.

:mod:`course_lib.classroom.tampering` flags importing a module made for reaching into other code (``import os``,
``import ctypes``); a module that imported one hands it on as an attribute: ``torch.os.fork()``, ``torch.ctypes``,
``torch.cuda.graphs.gc``, ``torch.sys``, ``np.sys``. :func:`reached_through` flags, one line per finding:

- such a module reached as an attribute of anything, or by ``getattr`` with its name as a literal;
- the modules where torch keeps its modes (``torch.utils._python_dispatch``, ``torch.overrides``), by any path;
- the tables ``copy`` and ``copyreg`` look a type up in (``copy._deepcopy_dispatch``, ``copyreg.dispatch_table``):
  an entry added there runs a cell's function whenever a check copies its inputs;
- a string that names a tensor's or a mode's own rules (``"__torch_" + "dispatch__"``, handed to ``type(...)``),
  written as it is or built from literals by ``+`` and ``*``;
- NumPy's protocols and helpers for an array over any address (``__array_interface__``, ``__array_struct__``,
  ``stride_tricks.as_strided``, ``byte_bounds``), as an attribute, an import or in such a string: raw memory
  without ctypes, which no event at run time shows (only this reading stands there; torch's ``as_strided`` is
  flagged too, by its name);
- a loader of pickles imported by its name (``from numpy import load``; ``np.load`` and ``torch.load`` are flagged
  as attributes by :mod:`.tampering`): a file it loads can run any code (the sixteenth trial: a ``.npy`` file whose
  object array ran a string of code).

The run-time side behind it: :mod:`course_lib.classroom.watch` (a process, ctypes), :mod:`.integrity` (a mode),
:mod:`.snapshot` (the tables, torch's classes).
"""

from __future__ import annotations

import ast

from .dunders import _folded

__all__ = ["reached_through"]

# Modules made for reaching into other code, or for starting another process, where nothing is blocked
_REACHING = {"os", "sys", "ctypes", "ctypeslib", "gc", "importlib", "threading", "_thread", "subprocess",
             "_posixsubprocess", "multiprocessing", "concurrent", "builtins", "inspect", "pickle", "marshal",
             "runpy", "copyreg", "pty", "signal", "mmap", "atexit", "weakref"}  # fmt: skip
_MODES = {"_python_dispatch", "overrides", "_mode_utils"}  # where torch keeps its modes' stacks and classes
_TABLES = {"_deepcopy_dispatch", "_copy_dispatch", "dispatch_table", "_extension_registry", "_inverted_registry",
           "_extension_cache", "_deepcopy_atomic", "_reconstruct"}  # fmt: skip
_RULES = ("__torch_", "torch_function", "torch_dispatch")  # pieces of a tensor's or a mode's own rules
# NumPy's protocols and helpers for an array over any address (as_strided past its array's end): no event says so
_RAW = ("array_interface", "array_struct", "stride_tricks", "as_strided", "byte_bounds")
_LOADERS = {"load", "loads", "read_pickle", "hub", "load_state_dict_from_url", "read_array", "open_memmap"}
_LOADING = {"numpy", "torch", "pandas", "joblib", "scipy", "dill", "cloudpickle", "pickle", "shelve"}


def _named(node: ast.AST) -> str | None:
    """The attribute ``node`` reads: ``x.name``, or ``getattr(x, "name")`` / ``hasattr`` with a literal name."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("getattr", "hasattr") and len(node.args) > 1:
        name = node.args[1]
        return name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else None
    return None


def _rules_in_strings(tree: ast.AST) -> list[str]:
    """Strings (a literal, or one built from literals: the outermost ``+`` only) naming a tensor's own rules."""
    inner = {id(side) for n in ast.walk(tree) if isinstance(n, ast.BinOp) for side in (n.left, n.right)}
    found = []
    for node in ast.walk(tree):
        if id(node) in inner or not isinstance(node, (ast.Constant, ast.BinOp)):
            continue
        text = _folded(node, {})
        if text is not None and any(piece in text for piece in _RULES):
            found.append(f"line {node.lineno}: a string naming a tensor's or a mode's own rules ({text[:40]!r})")
        elif text is not None and any(piece in text for piece in _RAW):
            found.append(f"line {node.lineno}: a string naming NumPy's array over raw memory ({text[:40]!r})")
    return found


def reached_through(tree: ast.AST) -> list[str]:
    """What ``tree`` (a cell) reaches through another module's attributes or names in a string: one line per
    finding, naming the line of the cell."""
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    found = [f"line {node.lineno}: imports {alias.name} from {node.module}, a loader of pickles: what it loads can "
             "run any code" for node in imports if (node.module or "").split(".")[0] in _LOADING
             for alias in node.names if alias.name in _LOADERS]  # fmt: skip
    found += [f"line {node.lineno}: imports {alias.name} from {node.module}, NumPy's array over any address (raw "
              "memory)" for node in imports for alias in node.names
              if any(piece in f"{node.module}.{alias.name}" for piece in _RAW)]  # fmt: skip
    for node in ast.walk(tree):
        name = _named(node)
        if name in _REACHING:
            found.append(f"line {node.lineno}: reaches {name} through another module, made for reaching into other "
                         "code or starting a process")  # fmt: skip
        elif name in _MODES:
            found.append(f"line {node.lineno}: reaches {name}, where torch keeps the modes that rewrite what the "
                         "checks see")  # fmt: skip
        elif name in _TABLES:
            found.append(f"line {node.lineno}: uses {name}, a table copy or pickle looks types up in: an entry there "
                         "runs when a check copies its inputs")  # fmt: skip
        elif name is not None and any(piece in name for piece in _RAW):
            found.append(f"line {node.lineno}: uses {name}, NumPy's array over any address (raw memory), which "
                         "can rewrite what the checks see and which nothing at run time sees")  # fmt: skip
    return found + _rules_in_strings(tree)
