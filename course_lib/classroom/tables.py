"""Reading an answer cell for a table of literal values: answers looked up rather than computed, for a person to see.

A twentieth lecturer's trial answered notebook 13's exercises 2 and 3 from a dictionary of the checks' inputs and
expected outputs (8 kB of literals), worked out at home with the course's own functions from the public repository's
checks, whose random inputs come from fixed seeds: full marks, nothing refused, since the answer's code calls nothing
it may not. No reading can tell such an answer from an honest one in general, but a table that large in an answer
cell is unlike any honest one (the course's reference answers hold at most 4 literal values, and no text literal
longer than 18 characters): the class report flags it, for a teaching assistant to open (:mod:`.flags`).
"""

from __future__ import annotations

import ast

from .syntax import parse

__all__ = ["TABLE_VALUES", "TEXT_CHARACTERS", "literal_table"]

TABLE_VALUES = 64  # literal values in lists, tuples, sets and dictionaries of one cell
TEXT_CHARACTERS = 400  # characters of one string or bytes literal (a docstring excepted)


def _docstrings(tree: ast.AST) -> set[int]:
    bodies = [
        tree,
        *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))),
    ]
    firsts = [b.body[0] for b in bodies if getattr(b, "body", None)]
    return {id(s.value) for s in firsts if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)}


def _is_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) or isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant)


def literal_table(source: str) -> str | None:
    """What makes ``source`` (an answer cell) look like a table of answers, or None: at least ``TABLE_VALUES`` literal
    values in its containers, or a string or bytes literal of at least ``TEXT_CHARACTERS`` characters."""
    tree = parse(source)
    if tree is None:
        return None
    values, docstrings = 0, _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            values += sum(_is_literal(e) for e in [*node.keys, *node.values] if e is not None)
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            values += sum(_is_literal(e) for e in node.elts)
        elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and id(node) not in docstrings:
            if len(node.value) >= TEXT_CHARACTERS:
                return f"line {node.lineno}: a literal of {len(node.value)} characters"
    return f"{values} literal values in tables" if values >= TABLE_VALUES else None
