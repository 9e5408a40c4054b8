"""Reading a cell for IPython's shell reached by its attributes, and for code compiled from a string. Never run.

IPython's shell, and what of it rewrites or hides later cells, is reached through attributes with plain English names:
``InlineBackend.instance().parent`` is the shell (a thirteenth trial), ``exit._ip`` too, and from there
``.kernel``, ``.events``, ``.displayhook``, ``.history_manager``. So :func:`shell_reach` flags those names where
they name what a cell reaches:

- as an **attribute** (``x.parent``), except on ``self`` or ``cls`` (a class of the cell's own: ``self.parent``), and
  except the plain words (``parent``, ``kernel``, ``events``, ``instance``, ``shell``) where the cell gives its own
  objects a field of that name: a class body's name (a dataclass's or ``NamedTuple``'s field, a method), a
  ``self.x = ...``, a ``namedtuple``'s field (a second trial's honest answer read ``h.parent`` of its own
  ``Hypothesis``). A cell that declares such a field to reach the shell under it still meets the run-time checks
  (:mod:`course_lib.classroom.rewritten`, the evidence of :mod:`course_lib.classroom.witness`);
- as a **name** only where it reads one of the notebook's globals that the cell does not bind itself: IPython's own
  (``In``, ``Out``, ``exit``, ``quit``, ...). A function's local ``parent``, ``kernel`` or ``events`` is the
  student's value: a nineteenth trial's honest answer to notebook 14, whose rows are ``(parent, token)``, was
  refused for its local ``parent`` and lost every exercise after it;
- in ``from ... import`` and as a literal ``getattr`` (read by :mod:`course_lib.classroom.tampering`).

And code in a string, which no reading sees: TorchScript compiled from source (``torch.jit.CompilationUnit``, the
nineteenth trial: a notebook's solutions read as text and compiled so), and a package of code loaded from a file
(``torch.package``): flagged as ``exec`` is.
"""

from __future__ import annotations

import ast

__all__ = ["SHELL_WORDS", "names_read", "own_fields", "shell_reach"]

SHELL_WORDS = frozenset({
    "_ip", "input_transformer_manager", "input_transformers_cleanup", "input_transformers_post", "cleanup_transforms",
    "line_transforms", "token_transformers", "ast_transformers", "set_custom_exc", "custom_exceptions",
    "showtraceback", "user_ns", "user_global_ns", "run_cell", "instance", "parent", "shell", "kernel", "events",
    "displayhook", "display_pub", "transform_cell", "run_code", "run_ast_nodes", "run_cell_async", "history_manager",
    "InlineBackend", "In", "Out", "_ih", "_oh", "_dh", "transform_ast", "shell_handlers", "control_handlers",
    "kernelbase", "_import_dotted_name", "_instance", "_backend_mod", "exit", "quit",
})  # fmt: skip
_PLAIN = frozenset({"parent", "kernel", "events", "instance", "shell"})  # words an answer's own fields may use
# code from a string: TorchScript (a unit, a script module's define), torch.package, torch.fx's code generation
_FROM_STRINGS = frozenset({"CompilationUnit", "PackageImporter", "_jit_script_compile", "_import_ir_module",
                           "ScriptModule", "define", "fx", "CodeGen", "gen_fn_def"})  # fmt: skip


def own_fields(tree: ast.AST) -> set[str]:
    """The attribute names a cell gives its own objects: its classes' body names, ``self.x = ...``, and the field
    names of a ``namedtuple(name, fields)`` it makes."""
    fields = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                targets = (
                    statement.targets if isinstance(statement, ast.Assign) else [getattr(statement, "target", None)]
                )
                fields |= {t.id for t in targets if isinstance(t, ast.Name)}
                fields |= {statement.name} if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) else set()
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            fields |= {node.attr} if getattr(node.value, "id", None) == "self" else set()
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "namedtuple":
            names = node.args[1] if len(node.args) > 1 else None
            items = names.elts if isinstance(names, (ast.List, ast.Tuple)) else [names]
            for item in items:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    fields |= set(item.value.replace(",", " ").split())
    return fields


def names_read(tree: ast.AST) -> set[int]:
    """The ids of the ``__class__`` attributes in ``tree`` whose name is all that is read (``x.__class__.__name__``,
    as a ``__repr__`` writes it): no class is reached."""
    return {id(n.value) for n in ast.walk(tree) if getattr(n, "attr", None) in ("__name__", "__qualname__")
            and getattr(n.value, "attr", None) == "__class__"}  # fmt: skip


def shell_reach(tree: ast.AST, globals_: set[int], own: set[str]) -> list[str]:
    """Findings, one line each: the shell's words as attributes (not of ``self``/``cls``, nor a field the cell gives
    its own objects) or as globals the cell does not bind (``globals_``: ids of the Name nodes that are the notebook's;
    ``own``: the names the cell binds outside functions), and code compiled from a string."""
    found, fields = [], own_fields(tree) & _PLAIN
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [f"line {node.lineno}: imports {a.name}, which compiles code from a string that no reading sees"
                      for a in node.names if a.name in _FROM_STRINGS]  # fmt: skip
            continue
        if isinstance(node, ast.Attribute):
            name = node.attr
            mine = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls") or name in fields
            shell = f"line {node.lineno}: uses .{name}, an attribute by which a cell reaches IPython's shell"
        elif isinstance(node, ast.Name) and id(node) in globals_ and node.id not in own:
            name, mine = node.id, False
            shell = f"line {node.lineno}: uses {name}, which can change what the checks see"
        else:
            continue
        if name in SHELL_WORDS and not mine:
            found.append(shell)
        if name in _FROM_STRINGS:
            found.append(f"line {node.lineno}: uses {name}, which compiles code from a string that no reading sees")
    return found
