"""Where the course's files live, independent of the current working directory."""

from pathlib import Path

__all__ = ["BRANCH", "DATA_DIR", "GITHUB_REPOSITORY", "NOTEBOOKS_DIR", "REPOSITORY_URL", "ROOT"]

ROOT = Path(__file__).resolve().parent.parent  #: the repository root (for an editable install)
DATA_DIR = ROOT / "data"  #: shipped data sets, see data/SOURCES.md
NOTEBOOKS_DIR = ROOT / "notebooks"

# Where the course is published: one place for the Colab cell of every notebook (tools/colab_cell.py), the
# "Open in Colab" / Binder links of the README and the book (tools/build_book.py). When you publish the course,
# set GITHUB_REPOSITORY to "owner/name" on GitHub (and BRANCH if not main), run `python tools/colab_cell.py`, and
# update the links in README.md (tests/test_book.py checks that all of them agree with these two values).
GITHUB_REPOSITORY = "OWNER/self-attention-from-the-ground-up"
BRANCH = "main"
REPOSITORY_URL = f"https://github.com/{GITHUB_REPOSITORY}"
