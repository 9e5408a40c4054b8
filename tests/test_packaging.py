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


def test_python_requirement_agrees():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.10"
    assert "  - python>=3.10" in (ROOT / "environment.yml").read_text().splitlines()
