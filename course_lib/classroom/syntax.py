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

__all__ = ["bound_names", "check_names", "free_reads", "global_uses", "import_keys", "parse"]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_TRY_STAR = (ast.TryStar,) if hasattr(ast, "TryStar") else ()


def parse(source: str) -> ast.Module | None:
    """The syntax tree of a cell, IPython's magics turned into Python first; None if it does not parse (its cell
    raises when it runs, as any cell that does not parse: that exercise scores nothing, the others are graded)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        source = TransformerManager().transform_cell(source)
    except ImportError:  # without IPython a cell with magics does not parse, and is read as nothing
        pass
    except SyntaxError:  # IPython's tokenizer raises for a bad indentation (an IndentationError) before ast would
        return None
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


def _loads(nodes: list[ast.AST], globals_: set[int]) -> set[str]:
    """The notebook's globals that ``nodes`` read where they run, not inside the functions they define (an augmented
    assignment's target is read too)."""
    found = set()
    for node in (n for root in nodes for n in _outside_functions(root)):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) in globals_:
            found.add(node.id)
    return found


def _branches(stmt: ast.stmt) -> tuple[list[ast.AST], list[list[ast.stmt]]]:
    """(the expressions a compound statement reads first, its bodies: any of which may not run)."""
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test], [stmt.body, stmt.orelse]
    if isinstance(stmt, ast.Match):
        heads = [stmt.subject, *(c.pattern for c in stmt.cases), *(c.guard for c in stmt.cases if c.guard)]
        return heads, [c.body for c in stmt.cases]
    handlers = getattr(stmt, "handlers", [])
    heads = [h.type for h in handlers if h.type is not None]
    return heads, [stmt.body, *(h.body for h in handlers), stmt.orelse, stmt.finalbody]


def _read_before_bound(body: list[ast.stmt], bound: set[str], globals_: set[int]) -> set[str]:
    """The globals ``body`` (statements run in order) reads before it binds them itself, outside function bodies. A
    binding counts only where it surely happened: not inside ``if``, ``while``, ``try``, ``match`` or a loop's body
    (which may not run); a ``with``'s body does run."""
    free: set[str] = set()
    for stmt in body:
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            free |= _loads([stmt.iter], globals_) - bound
            inner = bound | {t.id for t in ast.walk(stmt.target) if isinstance(t, ast.Name)}
            free |= _read_before_bound(stmt.body, set(inner), globals_)
            free |= _read_before_bound(stmt.orelse, set(inner), globals_)
        elif isinstance(stmt, (ast.If, ast.While, ast.Match, ast.Try, *_TRY_STAR)):
            heads, bodies = _branches(stmt)
            free |= _loads(heads, globals_) - bound
            for part in bodies:
                free |= _read_before_bound(part, set(bound), globals_)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            free |= _loads([item.context_expr for item in stmt.items], globals_) - bound
            bound |= {t.id for item in stmt.items if item.optional_vars for t in ast.walk(item.optional_vars)
                      if isinstance(t, ast.Name)}  # fmt: skip
            free |= _read_before_bound(stmt.body, bound, globals_)
        else:  # a simple statement, a def or a class: what it reads, then what it binds
            free |= _loads([stmt], globals_) - bound
            bound |= set(_names_bound(stmt)) | {n.target.id for n in ast.walk(stmt) if isinstance(n, ast.NamedExpr)}
    return free


def free_reads(source: str) -> tuple[set[str], dict[str, set[str]], set[str]]:
    """What a cell reads from the notebook's globals or the builtins when it runs: (the names it reads at its top
    level before it binds them itself, or inside any function or lambda it defines, whose body reads them when it is
    called; per name the cell binds at its top level, the globals its statement reads: for a function or class, what
    a later call reads; the names it defines by ``def`` or ``class``)."""
    tree = parse(source)
    if tree is None:
        return set(), {}, set()
    globals_ = global_uses(tree)
    outside = {id(n) for n in _outside_functions(tree)}
    inside = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
              and id(n) in globals_ and id(n) not in outside}  # fmt: skip
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    leads: dict[str, set[str]] = {}
    for stmt in tree.body:
        reads = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                 and id(n) in globals_}  # fmt: skip
        for name in _names_bound(stmt):
            leads[name] = leads.get(name, set()) | reads
    return _read_before_bound(tree.body, set(), globals_) | inside, leads, defined


def import_keys(node: ast.AST) -> dict[str, str]:
    """The names an import binds and, for each, the dotted path of what it binds (``import torch.nn.functional as F``:
    ``F`` -> ``torch.nn.functional``; ``import os.path``: ``os`` -> ``os``; ``from torch import nn``: ``nn`` ->
    ``torch.nn``): two imports of one path bind one object. A relative import has no path, nor does ``*``."""
    if isinstance(node, ast.Import):
        return {(a.asname or a.name).split(".")[0]: a.name if a.asname else a.name.split(".")[0] for a in node.names}
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return {a.asname or a.name: f"{node.module}.{a.name}" for a in node.names if a.name != "*"}
    return {}
