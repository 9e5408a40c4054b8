"""Reading a student's cell for tampering: what, in its code, could change what the checks see. Never run.

:func:`tampering` reads a cell as a syntax tree (IPython's magics turned into Python first) and reports, one line per
finding, each of these:

- **rebinding** a name the locked cells bind, or a checker's name (``cl``, ``check_answer``, ``torch``,
  ``VARIANT``), anywhere outside a function body: assignment, ``for``, ``with ... as``, ``import ... as``, ``def``,
  ``class``, a walrus, a ``match`` pattern; and ``global``/``nonlocal`` of such a name inside a function;
- **changing** an attribute or item of an imported module (the locked cells' imports and the cell's own), of an
  expression that is not a plain name (``[cl][0].check_answer = ...``), or of a value a locked cell made
  (``weights[0] = ...``, ``weights.reverse()``, ``x.add_(1)``), at the top level or inside a function that has no
  value of that name of its own (:mod:`course_lib.classroom.scopes`);
- **the tools of indirection**: ``setattr``, ``globals()``, ``exec``, ``__import__``, ``get_ipython`` (IPython's
  shell by its attributes, and code compiled from strings: :mod:`.shell_words`), a ``getattr`` whose attribute is
  not a literal, ``getattr`` taken as a value (anywhere), the frame and object internals (``__dict__``,
  ``f_globals``, ...; ``x.__class__.__name__`` is read), and importing modules made for reaching into others
  (``sys``, ``importlib``, ``inspect``, ``ctypes``, ...; ``from operator import itemgetter`` reaches nothing);
- **a module handed on as a value** (``patch(F)``, ``[cl]``, ``G, H = F, np``): a module is used through its
  attributes, or under another name by a plain ``G = F`` or ``checks = cl.classroom.checks`` (read as the module);
  a function that receives it could change it unseen;
- **the check's own names**: reading a name that only the graded test cells bind (their reference, inputs and
  helpers, such as notebook 14's ``translator_mask``): an answer may not call what the check uses to decide;
- **what switches the checks' watch off or rewrites it**: torch's modes (``TorchFunctionMode``, ...), the switches
  that turn them off (``torch._C._DisableTorchDispatch``, ...), a class with its own ``__torch_function__``, a kernel
  registered over PyTorch's (``torch.library``), and importing a module an answer does not need (one written to a
  file at run time, ``os``, ``subprocess``, ...: only ``_ALLOWED_MODULES`` and their submodules pass);
- internals named in strings that an allowed module looks up (``functools.wraps(assigned=...)``, a ``str.format``
  whose format string is not a literal: :mod:`.dunders`); what a cell reaches through another module's attributes
  (``torch.os``, ``copy._deepcopy_dispatch``) or names in a string built from pieces: :mod:`.reaching`;
- a library's internals (``torch._utils.x``), ``sys``'s tables, ``torch.load``; ``%time``'s code too.

A reading finds what is written, not every effect code can have: what shows when the code runs is checked at run
time too (:mod:`course_lib.classroom.integrity`).
"""

from __future__ import annotations

import ast
import builtins

from .dunders import dunder_strings
from .harmless import SYS_PLAIN, harmless_import, is_module, mode_switches, printed, shown
from .magics import HARMLESS_MAGICS, harmless_magic_call, magic_code
from .reaching import reached_through
from .shell_words import SHELL_WORDS, names_read, shell_reach
from .syntax import (
    _flat,
    _names_bound,
    _outside_functions,
    _root,
    _targets,
    bound_names,
    check_names,
    global_uses,
    import_keys,
    parse,
)

__all__ = ["BUILTINS", "bound_names", "check_names", "tampering"]

BUILTINS = frozenset(dir(builtins))  # a cell's global of one of these names hides the builtin from later cells

CHECKERS = {"cl", "course_lib", "check_answer", "check_close", "check_function", "explain_difference", "torch",
            "VARIANT"}  # fmt: skip
_INDIRECTION = {"setattr", "delattr", "globals", "vars", "locals", "exec", "eval", "compile", "__import__",
                "get_ipython", "__builtins__", "breakpoint"}  # fmt: skip
_REACHING_MODULES = {"builtins", "sys", "importlib", "gc", "inspect", "ctypes", "pickle", "marshal", "runpy", "code",
                     "unittest", "timeit", "operator", "threading", "types", "dill", "cloudpickle"}  # fmt: skip
_INTERNALS = {"__dict__", "__code__", "__globals__", "__closure__", "__defaults__", "__kwdefaults__", "__class__",
              "__self__", "__func__", "__wrapped__", "__subclasses__", "__bases__", "__mro__", "__setattr__",
              "__delattr__", "__setitem__", "__delitem__", "__getattribute__", "__init_subclass__", "__builtins__",
              "__loader__", "__spec__", "f_globals", "f_locals", "f_back", "f_builtins", "currentframe",
              "_getframe", "__import__"}  # fmt: skip
# (IPython's shell, reached by attributes with plain names, is read in .shell_words: a local "parent" is no shell)
_MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort", "update", "setdefault",
             "popitem", "add", "discard", "copy_", "fill_", "zero_", "__setitem__"}  # fmt: skip
_COMPARING = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"}  # a value's own ==: a check's verdict
# What switches off or rewrites what the checks see at run time: torch's modes and the switches that turn them off,
# a tensor's own rules, a kernel registered over PyTorch's (torch.library)
_SWITCHING = {"TorchFunctionMode", "TorchDispatchMode", "_DisableTorchDispatch", "DisableTorchFunction",
              "DisableTorchFunctionSubclass", "_disabled_torch_function_impl", "_disabled_torch_dispatch_impl",
              "__torch_function__", "__torch_dispatch__", "_push_mode", "_pop_mode", "library", "Library"}  # fmt: skip
_SWITCHING_MODULES = ("torch.library", "torch.overrides", "torch.utils._python_dispatch", "torch._C")
# The modules an answer may import (and their submodules): a module written at run time and imported, or one that
# reaches the file system or other processes, is not among them
_ALLOWED_MODULES = {"torch", "numpy", "math", "cmath", "course_lib", "functools", "itertools", "collections", "heapq",
                    "bisect", "copy", "dataclasses", "typing", "string", "re", "statistics", "random", "time", "json",
                    "unicodedata", "warnings", "abc", "enum", "fractions", "decimal", "textwrap", "matplotlib",
                    "pprint", "seaborn", "tqdm", "sacrebleu", "tokenizers", "einops"}  # fmt: skip


def _rebindings(nodes: list[ast.AST], tree: ast.AST, watched: set[str], imports: dict[str, str]) -> list[str]:
    found = []
    for node in nodes:
        same = {name for name, key in import_keys(node).items() if imports.get(name) == key}  # import math again
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            reaching = {a.name.split(".")[0] for a in node.names} | {(getattr(node, "module", "") or "").split(".")[0]}
            harmless = harmless_import(
                node, tree
            )  # (from operator import itemgetter; from IPython.display import HTML)
            found += [f"line {node.lineno}: imports {m}, made for reaching into other code"
                      for m in sorted(set() if harmless else reaching & _REACHING_MODULES)]  # fmt: skip
            found += [] if harmless else _unusual_imports(node)
        found += [f"line {getattr(node, 'lineno', '?')}: rebinds {name}, which the checks use"
                  for name in _names_bound(node) if name in watched - same]  # fmt: skip
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            found += [f"line {node.lineno}: declares {name} global, which the checks use"
                      for name in node.names if name in watched]  # fmt: skip
    return found


def _unusual_imports(node: ast.Import | ast.ImportFrom) -> list[str]:
    """Imports of a module outside _ALLOWED_MODULES, or of one that switches the checks' watch off."""
    imported = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    full = imported + ([f"{node.module}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom) else [])
    found = [f"line {node.lineno}: imports {m}, which can switch off or rewrite what the checks see"
             for m in full if m.startswith(_SWITCHING_MODULES)]  # fmt: skip
    top = {m.split(".")[0] for m in imported if m} - _ALLOWED_MODULES - _REACHING_MODULES
    return found + [f"line {node.lineno}: imports {m}, not a module an answer needs" for m in sorted(top)]


def _internals(node: ast.AST, libraries: set[str]) -> list[str]:
    """A private name gone through (``torch._utils.x``; not ``self._x.y``; a private function called is a shortcut,
    refused as it runs), an import of the internals, ``sys``'s tables, a loader of pickles (``torch.load``)."""
    inner = node.value if isinstance(node, ast.Attribute | ast.Subscript) else None
    private = isinstance(inner, ast.Attribute) and inner.attr[:1] == "_" != inner.attr[1:2]
    if private and getattr(_root(inner), "id", None) not in ("self", "cls"):
        return [f"line {node.lineno}: uses {inner.attr}, the internals of a library"]
    root = getattr(_root(node), "id", None) if isinstance(node, ast.Attribute) else None
    if isinstance(node, ast.ImportFrom) and any(a.name in _INTERNALS | SHELL_WORDS for a in node.names):
        return [f"line {node.lineno}: imports a name of {node.module} that reaches other code"]
    if root == "sys" and node.attr not in SYS_PLAIN or root in libraries and node.attr in ("load", "hub"):
        return [f"line {node.lineno}: uses {root}.{node.attr}, which reaches other code"]
    return []


def _module_aliases(tree: ast.AST, modules: set[str]) -> set[str]:
    """Names bound to a module or a part of one by a plain attribute chain (``checks = cl.classroom.checks``), which
    the cell can then change as it could the module itself."""
    aliases, grown = set(modules) | CHECKERS, True
    while grown:
        grown = False
        for node in ast.walk(tree):
            chain = node.value if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) else None
            while isinstance(chain, ast.Attribute):
                chain = chain.value
            if isinstance(chain, ast.Name) and chain.id in aliases:
                new = {t.id for target in _targets(node) for t in _flat(target) if isinstance(t, ast.Name)} - aliases
                aliases, grown = aliases | new, grown or bool(new)
    return aliases - CHECKERS


def _changes(tree: ast.AST, globals_: set[int], protected: set[str], modules: set[str]) -> list[str]:
    """Changes of a module, or of a value a locked cell made (``globals_``: the names that are the notebook's)."""
    found = []
    for node in ast.walk(tree):
        for t in (t for target in _targets(node) for t in _flat(target)):
            if not isinstance(t, (ast.Attribute, ast.Subscript)):
                continue
            root = _root(t)
            if root is None or root.id in modules | CHECKERS | _INDIRECTION | _REACHING_MODULES:
                found.append(f"line {node.lineno}: changes {ast.unparse(t)}, part of a module")
            elif root.id in protected and id(root) in globals_:
                found.append(f"line {node.lineno}: changes {ast.unparse(t)}, which a locked cell made")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method, root = node.func.attr, _root(node.func.value)
            in_place = method in _MUTATORS or (method.endswith("_") and not method.startswith("_"))
            if in_place and root is not None and id(root) in globals_ and root.id in protected - modules - CHECKERS:
                found.append(f"line {node.lineno}: changes {root.id} in place ({method}), which a locked cell made")
    return found


def _handed_on(tree: ast.AST, globals_: set[int], modules: set[str]) -> list[str]:
    """``getattr`` taken as a value, and a module handed on as a value: aliases no reading can follow."""
    used = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}  # called, or read an attribute of
    used |= {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    used |= {id(n.args[0]) for n in ast.walk(tree) if _literal_getattr(n)}  # getattr(torch, "float64")
    used |= shown(tree)  # print(type(cl)): read, not handed on
    followed = {id(n.value) for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr))
                and n.value is not None and all(isinstance(t, ast.Name) for t in _targets(n))}  # fmt: skip
    imported = {a.asname or a.name: f"{n.module}.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and n.module and not n.level for a in n.names}  # fmt: skip
    modules = modules | {"cl", "course_lib", "torch"} | {name for name, dotted in imported.items() if is_module(dotted)}
    grown = True
    while grown:  # G = F: G is the module too
        new = {t.id for n in ast.walk(tree) if id(getattr(n, "value", None)) in followed
               and getattr(n.value, "id", None) in modules for t in _targets(n)} - modules  # fmt: skip
        modules, grown = modules | new, bool(new)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
            continue
        if id(node) in used or id(node) not in globals_:  # used as it should be, or a local of that name
            continue
        if node.id == "getattr":
            found.append(f"line {node.lineno}: takes getattr as a value, an alias that could read any attribute")
        elif node.id in modules and id(node) not in followed:
            found.append(f"line {node.lineno}: hands the module {node.id} on as a value, where no reading follows it")
    return found


def _literal_getattr(node: ast.AST) -> bool:
    """``getattr(x, "name")`` or ``hasattr(x, "name")``: a literal attribute, not one of the internals."""
    if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("getattr", "hasattr")):
        return False
    attr = node.args[1] if len(node.args) > 1 else None
    literal = isinstance(attr, ast.Constant) and isinstance(attr.value, str)
    return literal and attr.value not in _INTERNALS | SHELL_WORDS


def _check_reads(tree: ast.AST, globals_: set[int], decided: set[str]) -> list[str]:
    """Reading a name that only the graded test cells bind: the check's reference, inputs or helpers."""
    return [f"line {n.lineno}: uses {n.id}, which a check defines to decide (its reference, inputs or a helper)"
            for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in decided and id(n) in globals_
            and isinstance(n.ctx, ast.Load)]  # fmt: skip


def _indirection(tree: ast.AST, protected: set[str], modules: set[str], libraries: set[str], **read_as) -> list[str]:
    found = []
    named = names_read(tree) | printed(tree) | mode_switches(tree)  # (x.__class__.__name__; print(vars(x)); x.eval())
    for node in ast.walk(tree):
        magic = magic_code(node)
        if magic is not None and magic[0] in HARMLESS_MAGICS:
            if magic[1] and parse(magic[1]) is None:
                found.append(f"line {node.lineno}: %{magic[0]} with code that cannot be read")
            found += [f"in %{magic[0]}: {line}" for line in tampering(magic[1], protected, modules, **read_as)]
            continue
        found += _internals(node, libraries)
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        name = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else name
        if name in _SWITCHING:
            found.append(f"line {node.lineno}: uses {name}, which can switch off or rewrite what the checks see")
        if name in _COMPARING:
            found.append(f"line {node.lineno}: defines or uses {name}: a value's own comparison could answer a check")
        if (name in _INDIRECTION or name in _INTERNALS) and id(node) not in named:
            if not (name == "get_ipython" and harmless_magic_call(tree, node)):
                found.append(f"line {node.lineno}: uses {name}, which can change what the checks see")
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("getattr", "hasattr"):
            if not _literal_getattr(node):
                found.append(f"line {node.lineno}: getattr with a computed or internal name")
    return found


def tampering(source: str, protected: set[str], modules: set[str], decided: set[str] = frozenset(), *,
              made: set[str] | None = None, imports: dict[str, str] | None = None) -> list[str]:  # fmt: skip
    """What in ``source`` (a cell a student wrote) could change what the checks see, or answer for them, one line per
    finding.

    ``protected``: names the cell may not rebind (:func:`course_lib.classroom.guard.findings`: those a later check
    reads); ``modules``: names the locked cells bind to imported modules (the cell's own imports are added);
    ``decided``: names only the graded test cells bind (:func:`check_names`), which an answer may not use; ``made``:
    the names whose values the locked cells made, which the cell may not change in place (``protected`` if not
    given); ``imports``: names the locked cells bind by importing, and what: importing the same again is no
    rebinding. A cell that does not parse finds nothing: it fails when it runs, and its exercise with it.
    """
    tree = parse(source)
    if tree is None:
        return []
    outside, globals_ = _outside_functions(tree), global_uses(tree)
    imported = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    found = _rebindings(outside, tree, protected | CHECKERS, imports or {})
    found += _handed_on(tree, globals_, modules | {n for node in imported if isinstance(node, ast.Import)
                                         for n in _names_bound(node)})  # fmt: skip
    libraries = modules | {n for node in imported for n in _names_bound(node)}
    modules = _module_aliases(tree, libraries)
    found += _changes(tree, globals_, protected if made is None else made, modules)
    found += _indirection(tree, protected, modules, libraries, made=made, imports=imports)
    found += _check_reads(tree, globals_, set(decided))
    found += shell_reach(tree, globals_, {name for node in outside for name in _names_bound(node)})
    found += dunder_strings(tree)  # internals named in strings that functools or string.Formatter look up
    found += reached_through(tree)  # torch.os, torch.ctypes, copy's tables, "__torch_" + "dispatch__"
    return list(dict.fromkeys(found))
