"""Chinese labels in matplotlib figures: the course's CJK font subset and a fallback font list.

matplotlib's default font, DejaVu Sans, has no CJK glyphs, so a label such as 猫 renders as an empty box and
matplotlib warns "Glyph ... missing from font(s) DejaVu Sans". The course ships a small subset of the open Noto Sans
CJK SC font (``data/fonts/``, SIL Open Font License 1.1: every GB 2312 character, i.e. the 6,763 common simplified
hanzi, plus CJK punctuation). :func:`font_family` registers it with matplotlib's font manager the first time it is
needed (nothing happens at import) and returns a fallback list: your default font first, so Latin text looks as
everywhere else, then the shipped subset, then any full CJK font installed on the machine, for characters outside
the subset. matplotlib (>= 3.6) draws each character with the first font in the list that has it. For your own
titles and annotations use ``fontfamily=cl.fonts.font_family()`` or ``with cl.fonts.cjk_fonts(): ...``.

Nothing here changes ``rcParams`` outside a ``with`` block.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from pathlib import Path

from ..paths import DATA_DIR

__all__ = ["FONT_FAMILY", "FONT_SHA256", "cjk_fonts", "font_family", "font_path", "register_cjk_font"]

FONT_FAMILY = "Noto Sans SC Course Subset"  #: family name of the shipped CJK subset
_FONT_FILE = "fonts/NotoSansSC-CourseSubset.otf"
#: SHA-256 of the shipped font file; the same value is listed in data/SOURCES.md (a test checks both).
FONT_SHA256 = "92b3c6adcde2cc84ea2a2a49f6dcc954a5b09dbf61cf75e48aa92a6adca2bc82"

# Full CJK fonts that may be installed on a machine; those found are used after the shipped subset, for
# characters it lacks (rare hanzi, traditional forms). Names not installed are skipped, so matplotlib never
# logs "font family not found".
_SYSTEM_CJK_FAMILIES = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "Noto Sans SC",
    "PingFang SC",
    "Hiragino Sans GB",
    "Microsoft YaHei",
    "SimHei",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Noto Sans CJK TC",
    "Noto Sans CJK JP",
    "Arial Unicode MS",
)


def font_path() -> Path:
    """Path of the shipped CJK font subset (``data/fonts/NotoSansSC-CourseSubset.otf``)."""
    return DATA_DIR / _FONT_FILE


@functools.cache
def _verified_font_path() -> Path:
    path = font_path()
    if not path.is_file():
        raise FileNotFoundError(f"the course's CJK font is missing: {path} (see data/SOURCES.md)")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != FONT_SHA256:
        raise ValueError(f"{path} has SHA-256 {digest}, expected {FONT_SHA256} (see data/SOURCES.md)")
    return path


def register_cjk_font() -> str:
    """Make the shipped CJK subset known to matplotlib's font manager (once) and return its family name.

    Idempotent and cheap after the first call. Verifies the file's SHA-256 against :data:`FONT_SHA256` first.
    """
    from matplotlib import font_manager

    path = _verified_font_path()
    manager = font_manager.fontManager
    if not any(Path(entry.fname) == path for entry in manager.ttflist):
        manager.addfont(path)  # also clears the manager's lookup cache
    return FONT_FAMILY


def font_family() -> list[str]:
    """Fallback font list for text that may contain Chinese: ``rcParams["font.family"]``, the shipped subset,
    then the full CJK fonts installed here (if any). Pass it as ``fontfamily=`` to any matplotlib text."""
    import matplotlib as mpl
    from matplotlib import font_manager

    subset = register_cjk_font()
    installed = {entry.name for entry in font_manager.fontManager.ttflist}
    families = [f for f in mpl.rcParams["font.family"] if f != subset]
    families.append(subset)
    families += [f for f in _SYSTEM_CJK_FAMILIES if f in installed and f not in families]
    return families


def cjk_fonts() -> contextlib.AbstractContextManager:
    """Context manager: every text created inside it may contain Chinese (``font.family`` = :func:`font_family`).

    Example::

        with cl.fonts.cjk_fonts():
            fig, ax = plt.subplots()
            ax.set_title("注意力权重 (attention weights)")
    """
    import matplotlib.pyplot as plt

    return plt.rc_context({"font.family": font_family()})
