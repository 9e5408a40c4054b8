"""pyproject.toml and environment.yml must list the same dependencies (conda names PyTorch 'pytorch')."""

import ast
import re

import pytest
import yaml
from packaging.requirements import Requirement

from course_lib.paths import ROOT

tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python >= 3.11")

CONDA_TO_PYPI = {"pytorch": "torch"}


def split(requirement: str) -> tuple[str, str]:
    """(normalised name, specifier) of a requirement such as ``"nbval >= 0.11"``."""
    parsed = Requirement(requirement)
    return parsed.name.lower().replace("_", "-"), str(parsed.specifier)


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def environment(text: str | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """environment.yml's conda packages (PyPI names, without python and pip) and its pip section."""
    dependencies = yaml.safe_load(text if text is not None else (ROOT / "environment.yml").read_text())["dependencies"]
    conda, pip = {}, {}
    for item in dependencies:
        if isinstance(item, dict):  # {"pip": [...]}
            pip.update(split(r) for r in item.get("pip", []))
            continue
        name, spec = split(item)
        if name not in ("python", "pip"):
            conda[CONDA_TO_PYPI.get(name, name)] = spec
    return conda, pip


def test_environment_yml_matches_pyproject():
    pypi = dict(split(r) for r in project()["dependencies"] + project()["optional-dependencies"]["dev"])
    assert environment()[0] == pypi


def test_environment_yml_pip_section_matches_the_other_extras():
    """Every extra but dev (book, e2e, ...) is mirrored, with PyPI names, in environment.yml's pip section."""
    extras = project()["optional-dependencies"]
    others = dict(split(r) for name, reqs in extras.items() if name != "dev" for r in reqs)
    assert environment()[1] == others


def test_environment_parser_sees_drift():
    text = "name: x\ndependencies:\n  - pip\n  - numpy>=1\n  - pip:\n      - sphinx>=7.2\n      - playwright>=1\n"
    assert environment(text) == ({"numpy": ">=1"}, {"sphinx": ">=7.2", "playwright": ">=1"})
    assert environment(text.replace("      - playwright>=1\n", ""))[1] == {"sphinx": ">=7.2"}


def test_python_requirement_agrees():
    assert project()["requires-python"] == ">=3.10"
    assert "python>=3.10" in yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]


def floor(specifier: str) -> str:
    """The version of the ``>=`` clause of a specifier such as ``">=3.0,<4"``."""
    (version,) = [s.version for s in Requirement(f"x{specifier}").specifier if s.operator == ">="]
    return version


def test_readme_lists_every_tested_floor():
    """The README's row for `make test-oldest` names the floor of every dependency and the oldest Python: a floor
    raised or lowered in pyproject.toml without testing it again shows up here."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| the oldest versions allowed |"))
    python_floor = floor(project()["requires-python"])
    assert re.search(rf"Python {re.escape(python_floor)}(\.\d+)*\b", row), python_floor
    for requirement in project()["dependencies"] + project()["optional-dependencies"]["dev"]:
        name, spec = split(requirement)
        version = floor(spec)
        assert re.search(rf"\b{re.escape(name)} {re.escape(version)}(\.0)*\b", row), (
            f"{name} {version} not in the README"
        )


def test_every_subpackage_is_installed():
    """`pip install .` (not only an editable install) ships every subpackage of course_lib, and data/ as the package
    data of course_lib._data (its subfolders too)."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "course_lib").rglob("__init__.py")}
    folders = [ROOT / "data", *(p for p in (ROOT / "data").rglob("*") if p.is_dir())]
    data = {".".join(("course_lib", "_data", *folder.relative_to(ROOT / "data").parts)) for folder in folders}
    assert set(setuptools["packages"]) == on_disk | data
    assert {"course_lib.classroom", "course_lib.kernels", "course_lib.bench"} <= on_disk
    assert setuptools["package-dir"] == {"course_lib._data": "data"}
    assert setuptools["package-data"] == dict.fromkeys(data, ["*"])


def test_the_colab_cell_installs_what_colab_lacks_of_the_dependencies():
    """The Colab cell installs course_lib with --no-deps: every dependency is either one Colab has (COLAB_HAS) or one
    the cell installs where it is missing, with pyproject's floor (COLAB_INSTALLS)."""
    from tools.colab_cell import COLAB_HAS, COLAB_INSTALLS

    dependencies = dict(split(r) for r in project()["dependencies"])
    installs = dict(split(r) for r in COLAB_INSTALLS)
    assert set(dependencies) == set(COLAB_HAS) | set(installs), "a dependency the Colab cell does not account for"
    assert not set(COLAB_HAS) & set(installs)
    assert installs == {name: dependencies[name] for name in installs}, "the Colab cell's floors differ from pyproject"


def test_no_module_make_test_imports_needs_another_extra_at_its_top():
    """`make test` runs with the dev extra only (CI installs no other before it): a test, tool or course_lib module that
    imports nbgrader, Sphinx or Playwright at its top fails to import there, and pytest's collection error turns the
    whole run red (CI failed so once: tests/heldout/test_fourth_lecturer.py and nbgrader). Such imports go inside the
    function that needs them, behind pytest.importorskip in a test."""
    others = {name for extra, requirements in project()["optional-dependencies"].items() if extra != "dev"
              for name in (split(r)[0].replace("-", "_") for r in requirements)}  # fmt: skip
    assert {"nbgrader", "sphinx", "playwright"} <= others  # the import names these distributions install
    found = []
    for folder in ("tests", "course_lib", "tools"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                else:
                    names = [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
                found += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names
                          if n.split(".")[0] in others]  # fmt: skip
    assert not found, "\n".join(found)
