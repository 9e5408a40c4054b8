"""Figures of the course: attention heatmaps with readable token labels, Chinese included.

Shape legend: ``L`` number of queries (rows of a heatmap), ``S`` number of keys (columns).

**Chinese labels.** matplotlib's default font, DejaVu Sans, has no CJK glyphs, so a label such as 猫 renders
as an empty box and matplotlib warns "Glyph ... missing from font(s) DejaVu Sans". The course ships a small
subset of the open Noto Sans CJK SC font (``data/fonts/``, SIL Open Font License 1.1: every GB 2312 character,
i.e. the 6,763 common simplified hanzi, plus CJK punctuation). :func:`font_family` registers it with matplotlib's
font manager the first time it is needed (nothing happens at import) and returns a fallback list: your default
font first, so Latin text looks as everywhere else, then the shipped subset, then any full CJK font installed
on the machine, for characters outside the subset. matplotlib (>= 3.6) draws each character with the first
font in the list that has it. :func:`plot_attention` uses that list for every label it draws; for your own
titles and annotations use ``fontfamily=cl.plot.font_family()`` or ``with cl.plot.cjk_fonts(): ...``.

No function here prints, shows a figure or changes ``rcParams`` outside a ``with`` block.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from .paths import DATA_DIR

__all__ = ["FONT_FAMILY", "cjk_fonts", "font_family", "font_path", "plot_attention", "register_cjk_font"]

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

        with cl.plot.cjk_fonts():
            fig, ax = plt.subplots()
            ax.set_title("注意力权重 (attention weights)")
    """
    import matplotlib.pyplot as plt

    return plt.rc_context({"font.family": font_family()})


def _to_numpy_2d(weights: object) -> np.ndarray:
    if isinstance(weights, torch.Tensor):
        if not (weights.dtype.is_floating_point or weights.dtype == torch.bool):
            raise TypeError(f"weights must be a floating tensor, got dtype {weights.dtype}")
        array = weights.detach().to("cpu", torch.float64).numpy()  # any device, any float dtype (bf16 included)
    else:
        try:
            array = np.asarray(weights, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(f"weights must be a tensor or an array of numbers, got {type(weights).__name__}") from err
    if array.ndim != 2:
        hint = " (pick one sequence and one head first, e.g. weights[0] or weights[0, h])" if array.ndim > 2 else ""
        raise ValueError(f"weights must have shape (L, S), got shape {tuple(array.shape)}{hint}")
    if 0 in array.shape:
        raise ValueError(f"weights must have at least one query and one key, got shape {tuple(array.shape)}")
    return array


def _check_labels(name: str, labels: Sequence[object] | None, expected: int, axis: str) -> list[str] | None:
    """``axis`` is "query" or "key"; labels become strings."""
    if labels is None:
        return None
    if isinstance(labels, str):
        raise TypeError(f"{name} must be a sequence of labels (one per {axis}), got a single string {labels!r}")
    labels = [str(label) for label in labels]
    if len(labels) != expected:
        plural = "queries" if axis == "query" else "keys"
        raise ValueError(
            f"{name} has {len(labels)} labels but weights has {expected} {plural} (one label per {axis} expected)"
        )
    return labels


def _tick_positions(n: int, most: int = 40) -> list[int]:
    """Every position when there are at most ``most``, else every k-th one (labels would overlap)."""
    step = max(1, -(-n // most))
    return list(range(0, n, step))


def plot_attention(
    weights: torch.Tensor | np.ndarray,
    query_labels: Sequence[object] | None = None,
    key_labels: Sequence[object] | None = None,
    ax=None,
    *,
    title: str | None = None,
    annot: bool | None = None,
    fmt: str = ".2f",
    cmap: str = "viridis",
    vmin: float | None = 0.0,
    vmax: float | None = None,
    colorbar: bool = True,
    xlabel: str = "key (attended to)",
    ylabel: str = "query (attending)",
):
    """Heatmap of attention weights ``(L, S)``: row ``i`` = query ``i``, column ``j`` = key ``j`` (seaborn).

    Args:
        weights: ``(L, S)`` tensor on any device and of any float dtype (detached and copied to the CPU here),
            or a NumPy array; a boolean mask is drawn as 0 / 1. For a batch or several heads pick one first,
            e.g. ``weights[0, h]``.
            NaN entries (e.g. a fully masked row computed with ``-inf``) are drawn as empty cells.
        query_labels: ``L`` labels for the rows (tokens; Chinese works), or None for ``0 .. L-1``.
        key_labels: ``S`` labels for the columns, or None for ``0 .. S-1``. Beyond 40 rows or columns only
            every k-th label is written, so that they do not overlap.
        ax: matplotlib ``Axes`` to draw into; by default a new figure sized to the matrix.
        title: optional title (may contain Chinese).
        annot: write each weight in its cell; default: only when the matrix has at most 12 x 12 cells.
        fmt: number format of the annotations.
        cmap, vmin, vmax: colour map and its range (default from 0 to the largest weight).
        colorbar: draw a colour bar labelled "attention weight".
        xlabel, ylabel: axis labels.

    Returns:
        the ``matplotlib.figure.Figure`` that holds the heatmap (not shown: end the cell with ``plt.show()``).
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    array = _to_numpy_2d(weights)
    num_queries, num_keys = array.shape
    query_labels = _check_labels("query_labels", query_labels, num_queries, "query")
    key_labels = _check_labels("key_labels", key_labels, num_keys, "key")
    if annot is None:
        annot = num_queries <= 12 and num_keys <= 12
    family = font_family()
    created = ax is None
    if created:
        width = min(14.0, max(3.8, 0.55 * num_keys + 2.2))
        height = min(12.0, max(3.0, 0.45 * num_queries + 1.4))
        _, ax = plt.subplots(figsize=(width, height))

    with plt.rc_context({"font.family": family}):  # texts created here (annotations, colour bar) use it too
        sns.heatmap(
            array,
            ax=ax,
            cmap=cmap,
            vmin=vmin,
            vmax=vmax,
            annot=annot,
            fmt=fmt,
            annot_kws={"fontsize": 8},
            cbar=colorbar,
            cbar_kws={"label": "attention weight"} if colorbar else None,
            xticklabels=False,  # the labels are set below, with the fallback fonts, before anything is drawn
            yticklabels=False,
        )
    x_ticks = _tick_positions(num_keys)
    y_ticks = _tick_positions(num_queries)
    x_labels = [key_labels[i] if key_labels else str(i) for i in x_ticks]
    y_labels = [query_labels[i] if query_labels else str(i) for i in y_ticks]
    longest = max((len(label) for label in x_labels), default=0)
    vertical = longest > 4 or (len(x_ticks) > 16 and longest > 2)  # long or crowded key labels stand upright
    ax.set_xticks([i + 0.5 for i in x_ticks], x_labels, fontfamily=family, rotation=90 if vertical else 0)
    ax.set_yticks([i + 0.5 for i in y_ticks], y_labels, fontfamily=family, rotation=0)
    ax.set_xlabel(xlabel, fontfamily=family)
    ax.set_ylabel(ylabel, fontfamily=family)
    if title is not None:
        ax.set_title(title, fontfamily=family)
    if created:
        ax.figure.tight_layout()
    return ax.figure
