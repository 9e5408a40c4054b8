"""Where the course's files live, independent of the current working directory.

In a clone of the repository (and an editable install of it, ``pip install -e .``, which ``make`` does) everything is
in the clone: :data:`ROOT`, ``notebooks/`` and ``data/``. A plain ``pip install .`` copies ``data/`` into the installed
package as ``course_lib/_data`` (pyproject.toml, ``[tool.setuptools.package-dir]``), so :data:`DATA_DIR` and the
loaders that read it work there too; the notebooks and the tools are not installed and need the clone.

(Where the course is published, its GitHub repository and branch, is a setting of the tools that write the links:
``tools/colab_cell.py``.)
"""

from pathlib import Path

__all__ = ["DATA_DIR", "NOTEBOOKS_DIR", "ROOT"]

ROOT = Path(__file__).resolve().parent.parent  #: the repository root (in a clone or an editable install)
NOTEBOOKS_DIR = ROOT / "notebooks"
_INSTALLED_DATA = Path(__file__).resolve().parent / "_data"  # data/ as a plain `pip install .` ships it
#: the shipped data sets (data/SOURCES.md): the installed copy where there is one, else the clone's ``data/``
DATA_DIR = _INSTALLED_DATA if _INSTALLED_DATA.is_dir() else ROOT / "data"
