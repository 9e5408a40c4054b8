"""Where the course's files live, independent of the current working directory."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  #: the repository root (for an editable install)
DATA_DIR = ROOT / "data"  #: shipped data sets, see data/SOURCES.md
NOTEBOOKS_DIR = ROOT / "notebooks"
