"""The course installed as the README says, into a fresh virtual environment, finds every data set it ships.

`pip install -e .` (make, conda, Colab) reads data/ in the clone; a plain `pip install .` reads the copy that
pyproject.toml ships as the package data of course_lib._data (course_lib.paths.DATA_DIR). Each test copies what
pyproject.toml builds from (course_lib/, data/, pyproject.toml, README.md, LICENSE) into a temporary folder, so a file
that only the clone has cannot hide a missing one, and installs it with `--no-deps`; where this interpreter has the
build backend pyproject.toml asks for (setuptools >= 77), also `--no-index --no-build-isolation`: nothing is
downloaded. Where it has not (a venv of Python 3.11 comes with setuptools 65), pip builds as `make setup` did just
before, in an isolated environment with the backend from its index or cache. The new environment sees this
interpreter's packages (torch, numpy, setuptools, pip) through a .pth file, which does not run the .pth files inside
them, so this environment's own editable course_lib stays out. The plain install loads every data set (about 4.5 s of
CPU: the build and torch's import); the editable one checks where course_lib and its data are (about 2 s).
"""

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from course_lib.paths import ROOT

pytestmark = pytest.mark.slow  # two environments and two builds: `make test` runs them all the same

# Run inside the new environment, from a folder that holds no course_lib. WHERE imports no torch.
WHERE = """
import json
import course_lib
from course_lib.paths import DATA_DIR

print(json.dumps({
    "course_lib": course_lib.__file__,
    "data_dir": str(DATA_DIR),
    "files": sorted(p.relative_to(DATA_DIR).as_posix() for p in DATA_DIR.rglob("*") if p.is_file()),
}))
"""
LOAD_EVERYTHING = """
import json
from course_lib.corpus import load_course_prose
from course_lib.data import load_digits, load_tang300
from course_lib.figures.fonts import register_cjk_font

images, labels = load_digits()  # each loader checks its file's SHA-256
print(json.dumps({
    "digits": list(images.shape), "labels": int(labels.shape[0]), "poems": len(load_tang300()),
    "prose": len(load_course_prose()), "font": register_cjk_font(),
}))
"""


def backend_here() -> bool:
    """Whether this interpreter has every package of pyproject.toml's build-system.requires, in a version it allows."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return False
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    try:
        return all(version(r.name) in r.specifier for r in map(Requirement, requires))
    except PackageNotFoundError:
        return False


def built_from(folder: Path) -> Path:
    """A copy of what `pip install .` reads from the clone."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("course_lib", "data"):
        shutil.copytree(ROOT / name, folder / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, folder / name)
    return folder


def fresh_environment(folder: Path) -> Path:
    """A virtual environment without pip that sees this interpreter's packages; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    scheme = "nt" if os.name == "nt" else "posix_prefix"
    purelib = Path(sysconfig.get_path("purelib", scheme, vars={"base": str(folder), "platbase": str(folder)}))
    purelib.mkdir(parents=True, exist_ok=True)
    (purelib / "_this_interpreters_packages.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return python


@pytest.mark.parametrize("editable", [False, True], ids=["pip-install", "pip-install-editable"])
def test_installed_course_loads_every_data_set(tmp_path, editable):
    source = built_from(tmp_path / "clone")
    python = fresh_environment(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    install = [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--ignore-installed"]  # not this venv
    install += ["--no-index", "--no-build-isolation"] if backend_here() else []
    install += [*(["-e"] if editable else []), str(source)]
    subprocess.run(install, check=True, env=env, cwd=tmp_path)

    def run(script: str) -> dict:
        done = subprocess.run([str(python), "-c", script], check=True, env=env, cwd=tmp_path, capture_output=True)
        return json.loads(done.stdout.decode().splitlines()[-1])

    found = run(WHERE)
    package = Path(found["course_lib"]).parent
    if editable:  # the clone's files: its course_lib and its data/
        assert package == source / "course_lib" and Path(found["data_dir"]) == source / "data"
    else:  # copies inside the new environment, none in the clone
        assert package.is_relative_to(tmp_path / "venv") and Path(found["data_dir"]) == package / "_data"
    shipped = sorted(p.relative_to(source / "data").as_posix() for p in (source / "data").rglob("*") if p.is_file())
    assert found["files"] == shipped and "SOURCES.md" in shipped  # every file, with its sources and licenses
    if editable:
        return  # the loaders reading the clone's data/ from an editable install: what every other test runs
    loaded = run(LOAD_EVERYTHING)
    assert loaded["digits"] == [1797, 1, 8, 8] and loaded["labels"] == 1797 and loaded["poems"] == 313
    assert loaded["prose"] > 300_000 and loaded["font"] == "Noto Sans SC Course Subset"
