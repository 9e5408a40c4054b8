"""Reading a cell's syntax, never running it: its tree, what it binds, and which of its names are the notebook's.

:func:`parse` turns IPython's magics into Python first; :func:`bound_names` and :func:`check_names` say what a locked
cell or a graded test cell gives the checks; :func:`global_uses` applies Python's scope rules. A name at a cell's top
level is a global of the notebook. Inside a function it is the function's own (a local) when the function binds it
anywhere in its body (assignment, ``for``, ``with ... as``, ``import``, ``def``, ``except ... as``, a parameter) and
does not declare it ``global``; else it is the enclosing function's, if that one binds it, and otherwise, again, the
notebook's global. A class body's names are not seen by the methods inside it, and a comprehension's loop variables
are its own. :mod:`course_lib.classroom.tampering` uses this to read a function's body: ``weights.add_(1)`` changes
the locked cell's ``weights`` unless the function has a ``weights`` of its own, and ``translator_mask(tgt, pad)``
inside an answer calls the check's function once the check cell has run.
"""

from __future__ import annotations

import ast

__all__ = ["bound_names", "check_names", "global_uses", "parse"]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def parse(source: str) -> ast.Module | None:
    """The syntax tree of a cell, IPython's magics turned into Python first; None if it does not parse."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        source = TransformerManager().transform_cell(source)
    except ImportError:  # without IPython a cell with magics does not parse, and is read as nothing
        pass
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _targets(node: ast.AST) -> list[ast.expr]:
    """The expressions a node binds or deletes (``a = b = ...``, ``a += ...``, ``for a in``, ``del a``, walrus)."""
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
        return [node.target]
    if isinstance(node, ast.Delete):
        return list(node.targets)
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    return []


def _flat(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [t for element in target.elts for t in _flat(element)]
    return [target.value] if isinstance(target, ast.Starred) else [target]


def _root(expr: ast.expr) -> ast.Name | None:
    """``cl.classroom.checks.check_answer`` -> the name ``cl``; ``x[0].y`` -> ``x``; None when it starts elsewhere."""
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr if isinstance(expr, ast.Name) else None


def _names_bound(node: ast.AST) -> list[str]:
    """The plain names a node binds in its scope (imports by the name they bind)."""
    names = [t.id for target in _targets(node) for t in _flat(target) if isinstance(t, ast.Name)]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names.append(node.name)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        names += [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
    elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        names.append(node.name)
    elif isinstance(node, ast.MatchMapping) and node.rest:
        names.append(node.rest)
    return names


def _outside_functions(tree: ast.AST) -> list[ast.AST]:
    """The nodes of ``tree`` not inside a function or lambda body (where names are the cell's globals)."""
    nodes, todo = [], [tree]
    while todo:
        node = todo.pop()
        nodes.append(node)
        if not isinstance(node, _FUNCTIONS) or node is tree:
            todo.extend(ast.iter_child_nodes(node))
        else:  # a def's own name, decorators and defaults are evaluated outside it
            todo.extend([*getattr(node, "decorator_list", []), *ast.iter_child_nodes(node.args)])
    return nodes


def bound_names(source: str) -> tuple[set[str], set[str]]:
    """(names the cell binds at its top level, names it binds by ``import``): what a locked cell gives the checks."""
    names, modules = set(), set()
    tree = parse(source)
    for node in tree.body if tree is not None else []:
        names |= set(_names_bound(node))
        if isinstance(node, ast.Import):
            modules |= set(_names_bound(node))
    return names, modules


def check_names(source: str) -> set[str]:
    """The names a graded test cell binds at its top level other than by importing: its reference, its inputs, its
    helpers and values (``translator_mask``, ``mask_inputs``, ``SEARCHES``)."""
    tree = parse(source)
    nodes = [n for n in (tree.body if tree is not None else []) if not isinstance(n, (ast.Import, ast.ImportFrom))]
    return {name for node in nodes for name in _names_bound(node)}


def _parameters(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.arg for a in every if a is not None}


def _bound(body: list[ast.AST]) -> tuple[set[str], set[str]]:
    """(names bound in this scope, names it declares global), not looking inside nested scopes."""
    bound, declared, todo = set(), set(), list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global):
            declared |= set(node.names)
        elif isinstance(node, ast.Nonlocal):
            bound |= set(node.names)  # the enclosing function's: not a global either
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):  # its decorators and defaults belong to this scope
            todo += [*getattr(node, "decorator_list", []), *getattr(node, "bases", [])]
            if not isinstance(node, ast.ClassDef):
                todo += [*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]]
        elif not isinstance(node, _COMPREHENSIONS):
            todo.extend(ast.iter_child_nodes(node))
    return bound - declared, declared


def global_uses(tree: ast.AST) -> set[int]:
    """The ids of the ``ast.Name`` nodes of ``tree`` (a cell) that name one of the notebook's globals."""
    found: set[int] = set()

    def visit(node: ast.AST, scopes: list[tuple[set[str], bool]]) -> None:
        if isinstance(node, _FUNCTIONS):
            outer = [*getattr(node, "decorator_list", []), *node.args.defaults]
            for child in outer + [d for d in node.args.kw_defaults if d is not None]:
                visit(child, scopes)
            body = node.body if isinstance(node.body, list) else [node.body]
            local, _ = _bound(body)
            inner = [s for s in scopes if not s[1]] + [(local | _parameters(node.args), False)]  # no class scope
            for child in body:
                visit(child, inner)
        elif isinstance(node, ast.ClassDef):
            for child in [*node.decorator_list, *node.bases, *node.keywords]:
                visit(child, scopes)
            inner = [*scopes, (_bound(node.body)[0], True)]
            for child in node.body:
                visit(child, inner)
        elif isinstance(node, _COMPREHENSIONS):
            targets = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
            for child in ast.iter_child_nodes(node):
                visit(child, [*scopes, (targets, False)])
        elif isinstance(node, ast.Name):
            if not any(node.id in names for names, _ in scopes):
                found.add(id(node))
        else:
            for child in ast.iter_child_nodes(node):
                visit(child, scopes)

    visit(tree, [])
    return found
