"""Cross-references computed from the notebooks (tools/crossrefs.py, issue 31): notebook 00's course map and its
branch text follow the notebooks' own Prerequisites sections, and the glossary's "explained in" points at a notebook
that uses the term, never before its first use."""

import json
import re

import pytest

from tools import crossrefs


def test_the_course_map_of_notebook_00_follows_the_prerequisites():
    problems = crossrefs.check_map()
    assert not problems, "run `python -m tools.crossrefs --write`, then re-execute notebook 00:\n" + "\n".join(problems)


def test_the_glossarys_explained_in_is_consistent_with_the_notebooks():
    problems = crossrefs.check_glossary()
    assert not problems, "\n".join(problems)


def _notebook(tmp_path, name, prerequisites):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "## Prerequisites\n\n" + prerequisites}]
    path = tmp_path / name
    path.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    return path


def test_prerequisites_are_read_from_bullets_and_helpful_reads_are_not_prerequisites(tmp_path):
    path = _notebook(tmp_path, "09_x.ipynb", "- **Notebook 03** (qkv) and **notebook 06** (heads).\n"
                     "- Training with `cl.fit` (notebooks 01 and 02).\n- [07 · Positions](07_x.ipynb): RoPE.\n"
                     "- Helpful, not required: **Notebook 08** (windows).\n- Used from notebook 12 on.\n")  # fmt: skip
    assert crossrefs.prerequisites(path) == {"01", "02", "03", "06", "07"}


@pytest.mark.parametrize(
    ("graph", "edges"),
    [
        ({"01": {"00"}, "02": {"00", "01"}}, [("00", "01"), ("01", "02")]),  # 00 -> 02 is implied by 00 -> 01 -> 02
        ({"01": {"00"}, "02": {"00"}, "03": {"01", "02"}}, [("00", "01"), ("00", "02"), ("01", "03"), ("02", "03")]),
    ],
)
def test_the_map_draws_the_transitive_reduction(graph, edges):
    assert crossrefs.map_edges(graph) == edges


def test_the_branch_text_names_the_forks_and_the_parts():
    edges = [("00", "01"), ("01", "02"), ("01", "03"), ("03", "04")]
    parts = {"00": "Start", "01": "Start", "02": "Efficiency", "03": "Vision", "04": "Vision"}
    text = crossrefs.map_paragraph(edges, parts, 5)
    assert text == (
        "Five notebooks in three parts. An arrow from A to B means *read A before B*. The main line runs "
        "from 00 to 01; after notebook 01 you can branch to 02 (efficiency) or 03 → 04 (vision)."
    )


def test_every_file_of_the_package_the_text_names_exists():
    """A path such as `course_lib/kernels/flash.py` in a notebook or a page must name a file of the clone (08 pointed
    at `course_lib/flash_kernel.py` for a while after the kernel moved)."""
    from course_lib.paths import NOTEBOOKS_DIR, ROOT

    texts = [*NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"), *(ROOT / "docs").glob("*.md"), ROOT / "README.md"]
    texts.append(ROOT / "CONTRIBUTING.md")
    named = {(t.name, m) for t in texts for m in re.findall(r"course_lib/[\w/]+\.py", t.read_text(encoding="utf-8"))}
    missing = sorted(f"{where}: {path}" for where, path in named if not (ROOT / path).is_file())
    assert not missing, "\n".join(missing)
