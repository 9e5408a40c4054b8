"""The shape of course_lib itself: the module map of CONTRIBUTING.md, module and function sizes, light imports."""

import ast
import re
import subprocess
import sys

import pytest

from course_lib.paths import ROOT

PACKAGE = ROOT / "course_lib"
MAX_MODULE_LINES = 300
MAX_FUNCTION_LINES = 60

# Modules still over the limits (issue 21, in progress), with their size today: they may shrink, not grow.
# Remove an entry when its module is split; the test below fails when an entry is no longer needed.
OVERSIZED_MODULES = {}
LONG_FUNCTIONS = {}


def module_files():
    """(module name, path) for every module; a subpackage's files count as the subpackage (``bench``)."""
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        yield (relative.parts[0].removesuffix(".py"), path)


def module_map() -> dict[str, set[str]]:
    """CONTRIBUTING.md's table: module -> the course_lib modules it may import."""
    rules = {}
    for line in (ROOT / "CONTRIBUTING.md").read_text().splitlines():
        match = re.fullmatch(r"\| `(\w+)` \| [^|]+ \| ([^|]+) \|", line.strip())
        if match:
            rules[match.group(1)] = set(re.findall(r"`(\w+)`", match.group(2)))
    return rules


def imported_modules(path) -> set[str]:
    """The course_lib modules a file imports, at the top or inside functions (``from .x import``, ``course_lib.x``)."""
    tree = ast.parse(path.read_text())
    found = set()
    inside_subpackage = path.parent.parent == PACKAGE  # course_lib/bench/x.py: `from . import` is bench itself
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and inside_subpackage:
                found.add(path.parent.name)
            elif node.level >= 1 and node.module:
                found.add(node.module.split(".")[0])
            elif node.level >= 1:  # from . import x
                found.update(alias.name for alias in node.names)
            elif node.module and node.module.startswith("course_lib."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("course_lib."))
    return found


def test_every_module_is_in_the_module_map():
    rules = module_map()
    assert "attention" in rules and "validate" in rules, "the table of CONTRIBUTING.md was not found"
    modules = {name for name, _ in module_files()} - {"__init__"}
    assert modules - set(rules) == set(), "add these modules to CONTRIBUTING.md's module map"
    assert set(rules) - modules == set(), "CONTRIBUTING.md names modules that do not exist"


@pytest.mark.parametrize("name, path", [m for m in module_files() if m[0] != "__init__"], ids=lambda x: str(x))
def test_imports_follow_the_module_map(name, path):
    allowed = module_map()[name] | {name}
    assert imported_modules(path) - allowed == set(), f"{path.name} imports outside its row of CONTRIBUTING.md"


def test_the_layering_check_sees_imports_inside_functions(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n    from .train import fit\n    import course_lib.plot\n")
    assert imported_modules(tmp_path / "m.py") == {"train", "plot"}


def code_lines(node) -> int:
    """Lines of a function without its docstring."""
    lines = node.end_lineno - node.lineno + 1
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        lines -= body[0].end_lineno - body[0].lineno + 1
    return lines


def sizes():
    modules, functions = {}, {}
    for name, path in module_files():
        text = path.read_text()
        if path.parent == PACKAGE:
            modules[name] = len(text.splitlines())
        else:  # a subpackage: each file on its own
            modules[f"{name}/{path.name}"] = len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions[f"{name}.{node.name}"] = max(functions.get(f"{name}.{node.name}", 0), code_lines(node))
    return modules, functions


def test_modules_and_functions_stay_small():
    modules, functions = sizes()
    too_long = {m: n for m, n in modules.items() if n > OVERSIZED_MODULES.get(m, MAX_MODULE_LINES)}
    assert too_long == {}, f"modules over {MAX_MODULE_LINES} lines (or longer than their recorded size)"
    too_long = {f: n for f, n in functions.items() if n > LONG_FUNCTIONS.get(f, MAX_FUNCTION_LINES)}
    assert too_long == {}, f"functions over {MAX_FUNCTION_LINES} lines of code"


def test_the_list_of_exceptions_only_shrinks():
    modules, functions = sizes()
    fixed = [m for m in OVERSIZED_MODULES if modules.get(m, 0) <= MAX_MODULE_LINES]
    fixed += [f for f in LONG_FUNCTIONS if functions.get(f, 0) <= MAX_FUNCTION_LINES]
    assert fixed == [], "these are within the limits now: remove them from the exceptions above"


CORE = [
    "fonts",
    "plot",
    "attention",
    "multihead",
    "classifiers",
    "linear",
    "masks",
    "positional",
    "efficient",
    "models",
    "vision",
    "rnn",
    "conv",
    "sequences",
    "data",
    "corpus",
    "checks",
    "device",
    "validate",
    "paths",
]


@pytest.mark.parametrize("module", ["course_lib", *(f"course_lib.{m}" for m in CORE)])
def test_core_modules_do_not_import_progress_bars_or_plotting(module):
    # Compared with what `import torch` alone loads (torch 2.13 itself imports tqdm).
    heavy = "('tqdm', 'matplotlib', 'seaborn', 'ipywidgets')"
    code = (
        f"import sys, torch; before = {{m for m in {heavy} if m in sys.modules}}; import {module}; "
        f"print(','.join(sorted({{m for m in {heavy} if m in sys.modules}} - before)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "", f"import {module} loads {done.stdout.strip()}"


def test_lazy_names_are_the_same_objects_as_in_their_modules():
    import course_lib
    import course_lib.train

    assert course_lib.fit is course_lib.train.fit
    assert set(course_lib.__all__) <= set(dir(course_lib))
    with pytest.raises(AttributeError, match="no_such_name"):
        course_lib.no_such_name  # noqa: B018


def test_the_package_exports_only_what_each_module_declares_public():
    # course_lib/__init__.py lists its names per module so that it can import them lazily; that list must stay a
    # part of each module's own __all__ (a name renamed or dropped there fails here, not in a notebook).
    import importlib

    import course_lib

    for module, names in course_lib._EXPORTS.items():
        declared = set(importlib.import_module(f"course_lib.{module}").__all__)
        assert set(names) <= declared, f"course_lib.{module}.__all__ lacks {sorted(set(names) - declared)}"
