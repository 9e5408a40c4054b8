"""IPython's magics in a cell, as :func:`course_lib.classroom.syntax.parse` turns them into Python
(``get_ipython().run_line_magic('timeit', '-n1 code')``): which an answer may use, and the code they run.

``%time`` and ``%timeit`` run code, which the guard reads as any other (their options aside); ``%matplotlib`` and
``%env COURSE_LANGUAGE=...`` change nothing the checks see; IPython's help (``x?``, ``x??``, ``%pdoc x``, ``%pdef x``;
``cl.*mask*?``: ``%psearch``) reads a dotted name, which the guard reads as code too (a twenty-third trial's honest
``cl.padding_mask?`` was read as tampering: "uses get_ipython", and the notebook's later exercises scored zero).
Anything else, or help on more than a dotted name, is not harmless.
"""

from __future__ import annotations

import ast
import re

__all__ = ["HARMLESS_MAGICS", "harmless_magic_call", "magic_code"]

HARMLESS_MAGICS = {"time", "timeit", "matplotlib", "env", "pinfo", "pinfo2", "pdoc", "pdef", "psearch"}
_DOTTED = re.compile(r"\s*[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\s*")
_PATTERN = re.compile(r"\s*(?:-\w+\s+)*[\w.*?]+(?:\s+\w+)*\s*")
_OPTIONS = re.compile(r"^\s*(?:-[A-Za-z]+\s*\d*\s+)*")
_ENV = re.compile(r"\s*COURSE_LANGUAGE\s*[= ]\s*\w*\s*")


def magic_code(node: ast.AST) -> tuple[str, str] | None:
    """``(magic, code)`` of ``get_ipython().run_line_magic('timeit', '-n1 code')`` (or a cell magic), the code
    without the magic's options; a ``%env`` that sets anything but ``COURSE_LANGUAGE`` as the magic ``env=``; None
    for anything else."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    if node.func.attr not in ("run_line_magic", "run_cell_magic") or len(node.args) < 2:
        return None
    inner = node.func.value
    if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "get_ipython"):
        return None
    args = [a.value if isinstance(a, ast.Constant) else None for a in node.args]
    code = args[-1] if node.func.attr == "run_cell_magic" else args[1]
    if not (isinstance(args[0], str) and isinstance(code, str)):
        return None
    if args[0] == "env":
        return ("env", "") if _ENV.fullmatch(code) else ("env=", code)
    if args[0] in ("pinfo", "pinfo2", "pdoc", "pdef", "psearch"):  # its name read as code; anything else: not harmless
        shape = _PATTERN if args[0] == "psearch" else _DOTTED
        return (args[0], "" if args[0] == "psearch" else code) if shape.fullmatch(code) else (f"{args[0]}=", code)
    return args[0], _OPTIONS.sub("", code) if args[0] in ("time", "timeit") else code


def harmless_magic_call(tree: ast.AST, name_node: ast.AST) -> bool:
    """Whether ``name_node`` (a ``get_ipython`` name) is the shell of a harmless magic's call in ``tree``."""
    for node in ast.walk(tree):
        magic = magic_code(node)
        if magic is not None and magic[0] in HARMLESS_MAGICS and node.func.value.func is name_node:
            return True
    return False
