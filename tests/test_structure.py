"""The shape of course_lib itself: the module map of CONTRIBUTING.md, module and function sizes, light imports."""

import ast
import re

import pytest
from conftest import run_after_importing_torch

from course_lib.paths import ROOT

PACKAGE = ROOT / "course_lib"
MAX_MODULE_LINES = 300
MAX_FUNCTION_LINES = 60

# Modules still over the limits (issue 21, in progress), with their size today: they may shrink, not grow.
# Remove an entry when its module is split; the test below fails when an entry is no longer needed.
OVERSIZED_MODULES = {}
LONG_FUNCTIONS = {}


def module_files():
    """(name, path) for every module: its dotted path inside course_lib (``attention``, ``classroom.student``); a
    subpackage's ``__init__.py`` is the subpackage itself (``bench``). The package's lazy ``__init__`` is left out."""
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if parts:
            yield ".".join(parts), path


MODULES = dict(module_files())


def module_map() -> dict[str, set[str]]:
    """CONTRIBUTING.md's table: module -> the course_lib modules it imports."""
    rules = {}
    for line in (ROOT / "CONTRIBUTING.md").read_text().splitlines():
        match = re.fullmatch(r"\| `([\w.]+)` \| [^|]+ \| ([^|]+) \|", line.strip())
        if match:
            rules[match.group(1)] = set(re.findall(r"`([\w.]+)`", match.group(2)))
    return rules


def _module_or_package(dotted: str, name: str, modules) -> str:
    """``from dotted import name``: the module ``dotted.name`` if it is one, else the module ``dotted``."""
    inner = f"{dotted}.{name}" if dotted else name
    return inner if inner in modules else dotted


def imported_modules(path, modules=None, root=PACKAGE) -> set[str]:
    """The course_lib modules a file imports, at the top or inside functions (``from .x import``, ``from ..x``,
    ``course_lib.x.y``), as dotted names inside course_lib (a package's lazy ``__init__``, "", is left out)."""
    modules = MODULES if modules is None else modules
    package = list(path.parent.relative_to(root).parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                dotted = ".".join([*base, *(node.module.split(".") if node.module else [])])
            elif node.module and (node.module + ".").startswith("course_lib."):
                dotted = node.module.removeprefix("course_lib").lstrip(".")
            else:
                continue
            found.update(_module_or_package(dotted, alias.name, modules) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("course_lib.") for a in node.names if a.name.startswith("course_lib."))
        elif _is_relative_import_module(node):  # importlib.import_module(".launch", __name__): a lazy import
            found.add(".".join([*package, node.args[0].value.lstrip(".")]))
    return found - {""}


def _is_relative_import_module(node) -> bool:
    return (
        isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and str(node.args[0].value).startswith(".")
    )


def import_graph() -> dict[str, set[str]]:
    return {name: imported_modules(path) - {name} for name, path in MODULES.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` as a path ``[a, b, ..., a]``, or ``[]`` if there is none (depth-first search)."""
    state, stack = {}, []  # state: 1 = on the current path, 2 = finished

    def visit(node):
        state[node], _ = 1, stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node], _ = 2, stack.pop()
        return []

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return []


def test_every_module_is_in_the_module_map():
    rules = module_map()
    assert "attention" in rules and "validate" in rules, "the table of CONTRIBUTING.md was not found"
    assert set(MODULES) - set(rules) == set(), "add these modules to CONTRIBUTING.md's module map"
    assert set(rules) - set(MODULES) == set(), "CONTRIBUTING.md names modules that do not exist"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_each_row_of_the_module_map_is_what_the_module_imports(name):
    imported, row = imported_modules(MODULES[name]) - {name}, module_map()[name]
    assert imported - row == set(), f"{name} imports modules that its row of CONTRIBUTING.md does not name"
    assert row - imported == set(), f"{name}'s row of CONTRIBUTING.md names modules that {name} never imports"


def test_no_import_cycle():
    assert find_cycle(import_graph()) == [], "an import cycle (lazy imports inside functions count too)"


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"a2"}, "a2": set(), "x": {"y"}, "y": {"x"}}) == ["x", "y", "x"]


def test_the_layering_check_sees_imports_inside_functions_and_subpackages(tmp_path):
    inner = tmp_path / "pkg" / "m.py"
    inner.parent.mkdir()
    inner.write_text(
        "def f():\n    from ..train import fit\n    import course_lib.figures.plot\n"
        "from . import helper\nfrom .helper import g\nfrom course_lib.kernels import launch\n"
        "importlib.import_module('.lazy', __name__)\n"
    )
    modules = {"train", "figures.plot", "pkg", "pkg.helper", "pkg.lazy", "pkg.m", "kernels", "kernels.launch"}
    found = imported_modules(inner, modules, root=tmp_path)
    assert found == {"train", "figures.plot", "pkg.helper", "pkg.lazy", "kernels.launch"}


def test_the_course_vocabulary_stays_a_short_flat_list():
    flat = [p for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    # 25 since issue 43 (item 7): `progress`, the bar notebooks call as cl.progress_bar, on the ground floor; 27 since
    # issue 45: `modern` and `lora`, what notebook 15 teaches (the course's vocabulary, not its periphery)
    assert len(flat) <= 27, "at most 27 modules directly under course_lib/: put the periphery in a subpackage"


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
    "figures.fonts",
    "figures.plot",
    "figures.diagrams",
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
    "classroom.checks",
    "classroom.exercises",
    "device",
    "validate",
    "paths",
]


CORE_IMPORTS = ["course_lib", *(f"course_lib.{m}" for m in CORE)]
HEAVY = ("tqdm", "matplotlib", "seaborn", "ipywidgets")


def probe(module: str) -> str:
    """Python that imports ``module`` and prints which of HEAVY that import loaded, beyond what was loaded before."""
    return (
        f"import sys; before = {{m for m in {HEAVY} if m in sys.modules}}; import {module}; "
        f"print(','.join(sorted({{m for m in {HEAVY} if m in sys.modules}} - before)))"
    )


@pytest.fixture(scope="module")
def loaded_by_import():
    """{module: (returncode, stdout, stderr) of probe(module)}, each probe the first thing after `import torch` in a
    fresh interpreter, compared with what `import torch` alone loads (torch 2.13 itself imports tqdm). conftest's
    run_after_importing_torch: one interpreter imports torch once, and a child forked from it runs each probe."""
    controls = ["matplotlib", "course_lib.no_such_module"]
    return run_after_importing_torch({module: probe(module) for module in [*CORE_IMPORTS, *controls]}, cwd=ROOT)


def test_the_import_probe_sees_a_heavy_import_and_a_failed_one(loaded_by_import):
    returncode, stdout, stderr = loaded_by_import["matplotlib"]
    assert (returncode, stdout.strip()) == (0, "matplotlib"), stderr
    returncode, stdout, stderr = loaded_by_import["course_lib.no_such_module"]
    assert returncode != 0 and stdout == "" and "ModuleNotFoundError" in stderr, (returncode, stderr)


@pytest.mark.parametrize("module", CORE_IMPORTS)
def test_core_modules_do_not_import_progress_bars_or_plotting(module, loaded_by_import):
    returncode, stdout, stderr = loaded_by_import[module]
    assert returncode == 0, stderr
    assert stdout.strip() == "", f"import {module} loads {stdout.strip()}"


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
