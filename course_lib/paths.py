"""Where the course's files live, independent of the current working directory.

(Where the course is published, its GitHub repository and branch, is a setting of the tools that write the links:
``tools/colab_cell.py``.)
"""

from pathlib import Path

__all__ = ["DATA_DIR", "NOTEBOOKS_DIR", "ROOT"]

ROOT = Path(__file__).resolve().parent.parent  #: the repository root (for an editable install)
DATA_DIR = ROOT / "data"  #: shipped data sets, see data/SOURCES.md
NOTEBOOKS_DIR = ROOT / "notebooks"
