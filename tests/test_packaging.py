"""pyproject.toml and environment.yml must list the same dependencies (conda names PyTorch 'pytorch')."""

import re

import pytest

from course_lib.paths import ROOT

tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python >= 3.11")

CONDA_TO_PYPI = {"pytorch": "torch"}


def split(requirement: str) -> tuple[str, str]:
    name, spec = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(.*)", requirement).groups()
    return name.lower().replace("_", "-"), spec.replace(" ", "")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pypi = dict(split(r) for r in project["dependencies"] + project["optional-dependencies"]["dev"])
    conda = {}
    text = (ROOT / "environment.yml").read_text()
    for line in text.split("\ndependencies:\n", 1)[1].splitlines():
        m = re.match(r"^  - ([^#\s].*?)\s*$", line)
        if m and not m.group(1).startswith(("python", "pip")):
            name, spec = split(m.group(1))
            conda[CONDA_TO_PYPI.get(name, name)] = spec
    assert conda == pypi


def pip_section(text: str) -> dict[str, str]:
    """The requirements under `  - pip:` in environment.yml (installed by pip inside the conda environment)."""
    pip, inside = {}, False
    for line in text.split("\ndependencies:\n", 1)[1].splitlines():
        if re.fullmatch(r"  - pip:\s*", line):
            inside = True
        elif inside and (m := re.match(r"^      - ([^#\s].*?)\s*$", line)):
            name, spec = split(m.group(1))
            pip[name] = spec
        elif inside and line.strip() and not line.lstrip().startswith("#"):
            inside = False
    return pip


def test_environment_yml_pip_section_matches_the_other_extras():
    """Every extra but dev (book, e2e, ...) is mirrored, with PyPI names, in environment.yml's pip section."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    others = dict(split(r) for name, reqs in extras.items() if name != "dev" for r in reqs)
    assert pip_section((ROOT / "environment.yml").read_text()) == others


def test_pip_section_parser_sees_drift():
    text = "name: x\ndependencies:\n  - pip\n  - numpy>=1\n  - pip:\n      - sphinx>=7.2\n      - playwright>=1\n"
    assert pip_section(text) == {"sphinx": ">=7.2", "playwright": ">=1"}
    assert pip_section(text.replace("      - playwright>=1\n", "")) != {"sphinx": ">=7.2", "playwright": ">=1"}


def test_python_requirement_agrees():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.10"
    assert "  - python>=3.10" in (ROOT / "environment.yml").read_text().splitlines()


def test_readme_lists_every_tested_floor():
    """The README's row for `make test-oldest` names the floor of every dependency and the oldest Python: a floor
    raised or lowered in pyproject.toml without testing it again shows up here."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| the oldest versions allowed |"))
    python_floor = re.match(r">=\s*([0-9.]+)", project["requires-python"]).group(1)
    assert re.search(rf"Python {re.escape(python_floor)}(\.\d+)*\b", row), python_floor
    for requirement in project["dependencies"] + project["optional-dependencies"]["dev"]:
        name, spec = split(requirement)
        floor = re.search(r">=([0-9.]+)", spec).group(1)
        assert re.search(rf"\b{re.escape(name)} {re.escape(floor)}(\.0)*\b", row), f"{name} {floor} not in the README"
