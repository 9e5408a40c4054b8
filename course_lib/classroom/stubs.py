"""How a solution region of a code cell becomes a stub in the student version (see :mod:`course_lib.classroom.student`).

A region lies between two lines that are exactly ``# BEGIN SOLUTION`` and ``# END SOLUTION`` (nbgrader's markers).
Inside a function body the region becomes ``raise NotImplementedError("Exercise N: write the body of f")``; at the top
level a ``def`` keeps its header and docstring with that ``raise`` as body, and every other name the region assigns
becomes ``unanswered("Exercise N: name")``, a placeholder from :mod:`course_lib.classroom.exercises` that raises as
soon as a check touches it.
"""

from __future__ import annotations

import ast
import re
import textwrap

__all__ = ["BEGIN", "END", "lines_of", "solution_regions", "stub_source"]

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
_BEGIN_RE = re.compile(r"^(\s*)#+\s*BEGIN SOLUTION\s*$")
_END_RE = re.compile(r"^(\s*)#+\s*END SOLUTION\s*$")


def lines_of(source: str | list[str]) -> list[str]:
    """The lines of a cell source, which nbformat stores as one string or as a list of strings."""
    return ("".join(source) if isinstance(source, list) else source).split("\n")


def solution_regions(source: str) -> list[tuple[int, int, str]]:
    """``(begin, end, indent)`` of each solution region of a code cell's source: line numbers of the two markers.

    Raises ``ValueError`` for a marker without its partner or a region inside another.
    """
    regions, begin, indent = [], None, ""
    for i, line in enumerate(lines_of(source)):
        if m := _BEGIN_RE.match(line):
            if begin is not None:
                raise ValueError(f"line {i + 1}: '{BEGIN}' inside the region opened on line {begin + 1}")
            begin, indent = i, m.group(1)
        elif _END_RE.match(line):
            if begin is None:
                raise ValueError(f"line {i + 1}: '{END}' without a '{BEGIN}' before it")
            regions.append((begin, i, indent))
            begin = None
    if begin is not None:
        raise ValueError(f"line {begin + 1}: '{BEGIN}' without an '{END}' after it")
    return regions


def _enclosing_def(lines: list[str], line_no: int, indent: str) -> str | None:
    """Name of the function whose body contains line ``line_no`` (indented by ``indent``), if any."""
    for line in reversed(lines[:line_no]):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        line_indent = line[: len(line) - len(stripped)]
        if len(line_indent) < len(indent):
            if m := re.match(r"(?:async\s+)?def\s+(\w+)", stripped):
                return m.group(1)
            if len(line_indent) == 0:
                return None
    return None


def _bound_names(statements: list[ast.stmt]) -> list[str]:
    """Names that top-level statements bind, in order (not looking inside functions, classes or comprehensions)."""
    names: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in names:
            names.append(node.id)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda | ast.comprehension):
            return
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    for statement in statements:
        if isinstance(statement, ast.ClassDef):
            if statement.name not in names:
                names.append(statement.name)
        elif not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            visit(statement)
    return names


# What a stub says, in English and in the Chinese edition ({label}: "Exercise 2" or "练习 2"; {name}: a function's or
# a value's name); "# YOUR CODE HERE" and "# YOUR ANSWER HERE" stay in both, the words the notebooks' text quotes
SAYS = {
    "en": {"body": "{label}: write the body of {name}", "value": "{label}: {name}",
           "answer": "# YOUR ANSWER HERE: replace each unanswered(...) by your answer"},
    "zh": {"body": "{label}：写出 {name} 的函数体", "value": "{label}：{name}",
           "answer": "# YOUR ANSWER HERE：把每个 unanswered(...) 换成你的答案"},
}  # fmt: skip


def _label(label: str, lang: str) -> str:
    return label.replace("Exercise ", "练习 ", 1) if lang == "zh" else label


def _top_level_stub(region: list[str], label: str, lang: str = "en") -> tuple[list[str], list[str]]:
    """Stub lines for a solution region at the top level of a cell, and the names the student must write."""
    code = "\n".join(region)
    says, label = SAYS[lang], _label(label, lang)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return [f'raise NotImplementedError("{label}")'], []
    out: list[str] = []
    defs = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            body = node.body
            has_doc = isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
            header_end = (body[0].end_lineno if has_doc else body[0].lineno - 1) or node.lineno
            body_indent = " " * body[0].col_offset
            out += region[first - 1 : header_end]
            out += [f'{body_indent}raise NotImplementedError("{says["body"].format(label=label, name=node.name)}")', ""]
            defs.append(node.name)
    names = _bound_names(tree.body)
    if names:
        out = [says["answer"], *out]
        out.append("from course_lib.classroom.exercises import unanswered")
        out += [f'{name} = unanswered("{says["value"].format(label=label, name=name)}")' for name in names]
    elif defs:
        out = ["# YOUR CODE HERE", *out]
    else:
        out = ["# YOUR CODE HERE", f'raise NotImplementedError("{label}")']
    while out and not out[-1].strip():
        out.pop()
    return out, defs + names


def stub_source(source: str, label: str = "Exercise", lang: str = "en") -> tuple[str, list[str]]:
    """Replace every solution region of a code cell by its stub; return the new source and the names to write.

    See the module docstring for the kinds of stub. The result always parses when the input did. ``lang``: ``zh``
    for a notebook of the Chinese edition (its stubs' messages in Chinese, :data:`SAYS`).
    """
    lines = lines_of(source)
    regions = solution_regions(source)
    if not regions:
        return "\n".join(lines), []
    out: list[str] = []
    names: list[str] = []
    previous = 0
    for begin, end, indent in regions:
        out += lines[previous:begin]
        if indent:
            fn = _enclosing_def(lines, begin, indent)
            what = SAYS[lang]["body"].format(label=_label(label, lang), name=fn) if fn else _label(label, lang)
            out += [f"{indent}# YOUR CODE HERE", f'{indent}raise NotImplementedError("{what}")']
            names += [fn] if fn else []
        else:
            stub, written = _top_level_stub(textwrap.dedent("\n".join(lines[begin + 1 : end])).split("\n"), label, lang)
            out += stub
            names += written
        previous = end + 1
    out += lines[previous:]
    return "\n".join(out), names
