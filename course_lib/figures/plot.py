"""Figures of the course: attention heatmaps with readable token labels, Chinese included.

Shape legend: ``L`` number of queries (rows of a heatmap), ``S`` number of keys (columns).

**Chinese labels.** :func:`plot_attention` draws every label with :func:`course_lib.figures.fonts.font_family`, a
fallback list that ends with the course's CJK font subset, so a label such as 猫 is drawn, not an empty box.

No function here prints, shows a figure or changes ``rcParams`` outside a ``with`` block.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .fonts import font_family

__all__ = ["plot_attention"]


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


def _label_ticks(ax, query_labels, key_labels, num_queries: int, num_keys: int, family: list[str]) -> None:
    """Tick labels at the cell centres (every k-th beyond 40), key labels upright when long or crowded."""
    x_ticks = _tick_positions(num_keys)
    y_ticks = _tick_positions(num_queries)
    x_labels = [key_labels[i] if key_labels else str(i) for i in x_ticks]
    y_labels = [query_labels[i] if query_labels else str(i) for i in y_ticks]
    longest = max((len(label) for label in x_labels), default=0)
    vertical = longest > 4 or (len(x_ticks) > 16 and longest > 2)  # long or crowded key labels stand upright
    ax.set_xticks([i + 0.5 for i in x_ticks], x_labels, fontfamily=family, rotation=90 if vertical else 0)
    ax.set_yticks([i + 0.5 for i in y_ticks], y_labels, fontfamily=family, rotation=0)


def _annotate(ax, mesh, array: np.ndarray, fmt: str) -> None:
    """Each finite weight written in its cell, dark on light colours and white on dark ones (by the colour's
    relative luminance, the WCAG formula)."""
    rgb = mesh.cmap(mesh.norm(array))[..., :3]
    linear = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    luminance = linear @ np.array([0.2126, 0.7152, 0.0722])
    for (i, j), value in np.ndenumerate(array):
        if np.isfinite(value):
            colour = "#262626" if luminance[i, j] > 0.408 else "white"
            ax.text(j + 0.5, i + 0.5, format(value, fmt), ha="center", va="center", fontsize=8, color=colour)


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
    """Heatmap of attention weights ``(L, S)``: row ``i`` = query ``i``, column ``j`` = key ``j`` (``pcolormesh``).

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
        mesh = ax.pcolormesh(np.ma.masked_invalid(array), cmap=cmap, vmin=vmin, vmax=vmax)  # NaN: an empty cell
        ax.set(xlim=(0, num_keys), ylim=(num_queries, 0))  # row 0 at the top, as the matrix is written
        for spine in ax.spines.values():
            spine.set_visible(False)
        if annot:
            _annotate(ax, mesh, array, fmt)
        if colorbar:
            ax.figure.colorbar(mesh, ax=ax, label="attention weight").outline.set_visible(False)
    _label_ticks(ax, query_labels, key_labels, num_queries, num_keys, family)
    ax.set_xlabel(xlabel, fontfamily=family)
    ax.set_ylabel(ylabel, fontfamily=family)
    if title is not None:
        ax.set_title(title, fontfamily=family)
    if created:
        ax.figure.tight_layout()
    return ax.figure
