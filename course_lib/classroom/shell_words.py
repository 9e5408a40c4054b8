"""Reading a cell for IPython's shell reached by its attributes, and for code compiled from a string. Never run.

IPython's shell, and what of it rewrites or hides later cells, is reached through attributes with plain English names:
``InlineBackend.instance().parent`` is the shell (a thirteenth trial), ``exit._ip`` too, and from there
``.kernel``, ``.events``, ``.displayhook``, ``.history_manager``. So :func:`shell_reach` flags those names where
they name what a cell reaches:

- as an **attribute** (``x.parent``), except on ``self`` or ``cls`` (a class of the cell's own: ``self.parent``);
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

__all__ = ["SHELL_WORDS", "shell_reach"]

SHELL_WORDS = frozenset({
    "_ip", "input_transformer_manager", "input_transformers_cleanup", "input_transformers_post", "cleanup_transforms",
    "line_transforms", "token_transformers", "ast_transformers", "set_custom_exc", "custom_exceptions",
    "showtraceback", "user_ns", "user_global_ns", "run_cell", "instance", "parent", "shell", "kernel", "events",
    "displayhook", "display_pub", "transform_cell", "run_code", "run_ast_nodes", "run_cell_async", "history_manager",
    "InlineBackend", "In", "Out", "_ih", "_oh", "_dh", "transform_ast", "shell_handlers", "control_handlers",
    "kernelbase", "_import_dotted_name", "_instance", "_backend_mod", "exit", "quit",
})  # fmt: skip
_FROM_STRINGS = frozenset({"CompilationUnit", "PackageImporter", "_jit_script_compile", "_import_ir_module"})


def shell_reach(tree: ast.AST, globals_: set[int], own: set[str]) -> list[str]:
    """Findings, one line each: the shell's words as attributes (not of ``self``/``cls``) or as globals the cell does
    not bind (``globals_``: ids of the Name nodes that are the notebook's; ``own``: the names the cell binds outside
    functions), and code compiled from a string."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name = node.attr
            mine = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if name in SHELL_WORDS and not mine:
                found.append(f"line {node.lineno}: uses .{name}, an attribute by which a cell reaches IPython's shell")
        elif isinstance(node, ast.Name):
            name = node.id
            if name in SHELL_WORDS and id(node) in globals_ and name not in own:
                found.append(f"line {node.lineno}: uses {name}, which can change what the checks see")
        elif isinstance(node, ast.ImportFrom):
            found += [f"line {node.lineno}: imports {a.name}, which compiles code from a string that no reading sees"
                      for a in node.names if a.name in _FROM_STRINGS]  # fmt: skip
            continue
        else:
            continue
        if name in _FROM_STRINGS:
            found.append(f"line {node.lineno}: uses {name}, which compiles code from a string that no reading sees")
    return found
