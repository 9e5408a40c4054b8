"""Figures at slide scale: a figure of several panels side by side, cut into its panels, one slide each.

A notebook's figure is drawn for a page: three panels of 14 x 3.6 inches, labels at 8 to 10 points. Shown whole on a
1280x720 slide it is scaled down until its labels are 9 px high. Cut at the blank columns between its panels (and
below a title that spans them, which the slide's notes keep), each panel fills a slide of its own at 1.5 to 2 times
its size. The pixels are the stored output's: nothing is drawn again and nothing is re-executed.
"""

from __future__ import annotations

import base64
import io

import numpy as np

MIN_GAP = 6  # blank columns between two panels, at least
MIN_PANEL = 0.2  # a piece narrower than this fraction of the figure (a colour bar, a legend) stays with its neighbour
WIDE = 960  # a figure wider than this many pixels (at its stored 100 dpi) is cut into panels when it can be


def _ink(image) -> np.ndarray:
    """True where a pixel is not background (white or transparent)."""
    rgba = np.asarray(image.convert("RGBA")).astype(int)
    return (rgba[..., 3] > 16) & (rgba[..., :3].min(axis=2) < 240)


def _runs(blank: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of each run of True in a 1-D array."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], blank.astype(int), [0]])))
    return list(zip(edges[::2], edges[1::2], strict=True))


def _cuts(ink: np.ndarray) -> list[int]:
    """Columns at which the figure splits into panels (empty: it does not)."""
    used = np.flatnonzero(ink.any(axis=0))
    if used.size == 0:
        return []
    left, right = used[0], used[-1] + 1
    gaps = [(a, b) for a, b in _runs(~ink.any(axis=0)) if a > left and b < right and b - a >= MIN_GAP]
    cuts, last = [], left
    for a, b in gaps:
        middle = (a + b) // 2
        if middle - last >= MIN_PANEL * (right - left):
            cuts.append(middle)
            last = middle
    if cuts and right - cuts[-1] < MIN_PANEL * (right - left):
        cuts.pop()
    return cuts


def _title_rows(ink: np.ndarray) -> int:
    """Rows of a title that spans the panels: the first band of ink when it is short and a blank band follows it."""
    rows = _runs(ink.any(axis=1))
    if len(rows) >= 2 and rows[0][1] - rows[0][0] < 0.12 * ink.shape[0]:
        return int(rows[1][0])
    return 0


def panels(png: bytes) -> list[bytes]:
    """The panels of a PNG figure laid out side by side, each a PNG; [png] when it has one panel or is narrow."""
    from PIL import Image

    image = Image.open(io.BytesIO(png))
    if image.width <= WIDE:
        return [png]
    ink = _ink(image)
    top, cuts = 0, _cuts(ink)
    if not cuts:
        top = _title_rows(ink)
        cuts = _cuts(ink[top:]) if top else []
    if not cuts:
        return [png]
    out = []
    for a, b in zip([0, *cuts], [*cuts, image.width], strict=True):
        buffer = io.BytesIO()
        image.crop((a, top, b, image.height)).save(buffer, format="PNG", dpi=image.info.get("dpi", (100, 100)))
        out.append(buffer.getvalue())
    return out


def split_outputs(outputs: list[dict]) -> list[list[dict]]:
    """The outputs of a code cell, as groups that each belong on a slide: a figure of several panels becomes one
    group per panel; everything else stays in the first group."""
    groups: list[list[dict]] = [[]]
    for output in outputs:
        data = output.get("data", {})
        pieces = panels(base64.b64decode(data["image/png"])) if "image/png" in data else []
        if len(pieces) < 2:
            groups[-1].append(output)
            continue
        for k, piece in enumerate(pieces):
            image = {**output, "data": {"image/png": base64.b64encode(piece).decode("ascii")}, "metadata": {}}
            if k == 0:
                groups[-1].append(image)
            else:
                groups.append([image])
    return groups
