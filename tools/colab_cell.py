"""Insert or update the Colab set-up cell as the first code cell of every notebook (idempotent).

In Google Colab a notebook opened from GitHub runs without the rest of the repository, so ``import course_lib``
fails. The cell this tool writes clones the repository (GITHUB_REPOSITORY and BRANCH below) and installs
``course_lib`` from the clone, so that ``course_lib.paths.DATA_DIR`` points at the cloned ``data/``. Outside Colab
it does nothing and prints nothing (strict nbval compares outputs), and the book and the slides drop it (tag
``remove-cell``).

    python -m tools.colab_cell                          # every notebooks/NN_*.ipynb
    python -m tools.colab_cell notebooks/04_*.ipynb     # some of them
    python -m tools.colab_cell --check                  # exit 1 if a notebook lacks the exact cell

A notebook that gets the cell for the first time must be re-executed top to bottom (``make execute``), since the
execution counts of the code cells after it shift by one. Updating the text of an existing cell (e.g. after a
change of ``GITHUB_REPOSITORY``) keeps its place and execution count: no re-execution needed.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

import nbformat

from course_lib.paths import NOTEBOOKS_DIR

# Where the course is published: one place for the Colab cell of every notebook (this tool), and the "Open in Colab" /
# Binder links of the README and the book (tools.build_book). When you publish the course, set GITHUB_REPOSITORY to
# "owner/name" on GitHub (and BRANCH if not main), run `python -m tools.colab_cell`, and update the links in README.md
# (tests/test_book.py checks that all of them agree with these two values).
GITHUB_REPOSITORY = "OWNER/self-attention-from-the-ground-up"
BRANCH = "main"
REPOSITORY_URL = f"https://github.com/{GITHUB_REPOSITORY}"

# What Colab's runtime already has: the cell installs course_lib with --no-deps, so as not to upgrade them (upgrading
# its Jupyter packages would break the runtime). Every other dependency in pyproject.toml, in COLAB_INSTALLS, is
# installed where it is missing (tests/test_packaging.py checks that the two lists cover pyproject.toml).
COLAB_HAS = ("torch", "numpy", "matplotlib", "tqdm", "ipywidgets", "jupyterlab", "ipykernel")
COLAB_INSTALLS = ("tokenizers>=0.20", "sacrebleu>=2.4")  # notebooks 13 and 14

CELL_ID = "colab-setup"
TITLE_LINE = "#@title Colab set-up: installs course_lib in Colab, does nothing anywhere else"
TAGS = ["remove-cell"]  # MyST-NB (the book) and the slides leave the cell out


def cell_source(repository: str = GITHUB_REPOSITORY, branch: str = BRANCH) -> str:
    """The exact source of the Colab cell for a GitHub repository "owner/name" and a branch."""
    name = repository.rsplit("/", 1)[-1]
    return f"""{TITLE_LINE}
import sys

if "google.colab" in sys.modules:
    import os
    import subprocess

    _course_dir = "/content/{name}"
    if not os.path.isdir(_course_dir):
        _repo = "https://github.com/{repository}"
        subprocess.run(["git", "clone", "-q", "--depth=1", "--branch={branch}", _repo, _course_dir], check=True)
    # --no-deps: Colab already has torch, numpy, matplotlib, seaborn, tqdm and ipywidgets, and upgrading its
    # Jupyter packages would break the Colab runtime. What it may lack is installed where it is missing.
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "-e", _course_dir], check=True)
    import importlib.util

    _missing = [p for p in {json.dumps(list(COLAB_INSTALLS))} if importlib.util.find_spec(p.split(">")[0]) is None]
    if _missing:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *_missing], check=True)
    sys.path.insert(0, _course_dir)  # importable at once, without restarting the runtime"""


def make_cell(source: str | None = None) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source=cell_source() if source is None else source)
    cell.id = CELL_ID
    cell.metadata = nbformat.from_dict({"cellView": "form", "tags": list(TAGS)})
    return cell


def is_colab_cell(cell) -> bool:
    if cell.get("cell_type") != "code":
        return False
    return cell.get("id") == CELL_ID or "".join(cell.get("source", "")).startswith(TITLE_LINE.split(":")[0])


def first_code_cell_index(nb) -> int | None:
    return next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), None)


def metadata_ok(cell) -> bool:
    """The keys this tool sets; others (nbconvert's execution timings, JupyterLab's view state) may be there too."""
    meta = cell.get("metadata", {})
    return meta.get("cellView") == "form" and all(tag in meta.get("tags", []) for tag in TAGS)


def apply(nb, source: str | None = None) -> tuple[nbformat.NotebookNode, str]:
    """Return (notebook, what happened): "unchanged", "updated", "moved" or "inserted". Does not modify `nb`."""
    nb = copy.deepcopy(nb)
    wanted = make_cell(source)
    found = [i for i, c in enumerate(nb.cells) if is_colab_cell(c)]
    first = first_code_cell_index(nb)
    if len(found) == 1 and found[0] == first:
        cell = nb.cells[first]
        if "".join(cell.source) == wanted.source and metadata_ok(cell) and cell.get("id") == CELL_ID:
            return nb, "unchanged"
        cell.source = wanted.source
        cell.metadata["cellView"] = "form"
        tags = cell.metadata.get("tags", [])
        cell.metadata["tags"] = [*tags, *(t for t in TAGS if t not in tags)]
        cell.id = CELL_ID
        return nb, "updated"
    kept = next((nb.cells[i] for i in found), None)
    nb.cells = [c for c in nb.cells if not is_colab_cell(c)]
    first = first_code_cell_index(nb)
    at = len(nb.cells) if first is None else first
    nb.cells.insert(at, wanted)
    return nb, "inserted" if kept is None else "moved"


def check(nb, source: str | None = None) -> list[str]:
    """Problems with the notebook's Colab cell ([] when it is exactly right)."""
    problems = []
    wanted = make_cell(source)
    found = [i for i, c in enumerate(nb.cells) if is_colab_cell(c)]
    first = first_code_cell_index(nb)
    if not found:
        problems.append("has no Colab cell")
    elif len(found) > 1:
        problems.append(f"has {len(found)} Colab cells")
    elif found[0] != first:
        problems.append("its Colab cell is not the first code cell")
    else:
        cell = nb.cells[first]
        if "".join(cell.source) != wanted.source:
            problems.append("its Colab cell's source differs from what tools.colab_cell writes (run it)")
        if not metadata_ok(cell) or cell.get("id") != CELL_ID:
            problems.append(f"its Colab cell must have id {CELL_ID!r}, cellView 'form' and the tags {TAGS}")
        if cell.get("outputs"):
            problems.append("its Colab cell has outputs: outside Colab it must print nothing")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.colab_cell", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/NN_*.ipynb")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a notebook is not right")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
    status = 0
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if args.check:
            for problem in check(nb):
                print(f"{path}: {problem}")
                status = 1
            continue
        new, what = apply(nb)
        if what != "unchanged":
            nbformat.write(new, path)
        hint = " -> re-execute it top to bottom (make execute)" if what in ("inserted", "moved") else ""
        print(f"{path}: {what}{hint}")
    return status


if __name__ == "__main__":
    sys.exit(main())
