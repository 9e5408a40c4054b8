"""Figures at slide scale: the stored figure, trimmed to its ink, and a figure of several panels side by side cut
into its panels, one slide each; each figure marked with the height of its smallest text.

A notebook's figure is drawn for a page: three panels of 14 x 3.6 inches, labels at 8 to 10 points. Shown whole on a
1280x720 slide it is scaled down until its labels are 9 px high. Cut at the blank columns between its panels (and
below a title that spans them, which the slide's notes keep), each panel fills a slide of its own at 1.5 to 2 times
its size. The pixels are the stored output's: nothing is drawn again and nothing is re-executed.

The smallest text of a figure is ``SMALLEST_PT`` points (course_lib/figures draws nothing smaller; matplotlib's ticks
are 10 pt) unless the cell that drew it names a smaller font size (``fontsize=7``, ``labelsize=6``): its height in
the stored pixels (``pt / 72 * dpi``, the PNG's dpi, 100 when it has none) goes with the figure to the slide
(``data-text-px``), where the browser test multiplies it by the figure's scale on the slide.
"""

from __future__ import annotations

import base64
import io
import re

import numpy as np

MIN_GAP = 6  # blank columns between two panels, at least
MIN_PANEL = 0.2  # a piece narrower than this fraction of the figure (a colour bar, a legend) stays with its neighbour
WIDE = 960  # a figure wider than this many pixels (at its stored 100 dpi) is cut into panels when it can be
ALONE = (1272, 687)  # the room of a figure alone on a 1280x720 slide (book/_static/course-slides.css)
READABLE = 16.2  # px of figure text on a slide that a figure is cut into panels to reach (the browser test: 16)
SMALLEST_PT = 8.0  # the smallest text of a figure whose cell names no smaller font size
FONT_SIZE = re.compile(r"""\b(?:fontsize|labelsize|titlesize|size)["']?\s*[=:]\s*([\d.]+)""")
TEXT_CALL = re.compile(r"\b(?:text|annotate|set_\w*label|set_title|title|legend|tick_params|suptitle)\s*\(")
MARGIN = 4  # blank pixels left around a figure's ink when it is trimmed
LINE = 0.12  # a band of ink rows no higher than this fraction of the figure's height may be a line of text


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
    gaps = [(a, b) for a, b in _runs(~ink.any(axis=0))
            if a > left and b < right and b - a >= MIN_GAP
            and not any(_spans(line, (a + b) // 2, right - left) for line in _text_lines(ink, a, b))]  # fmt: skip
    cuts, last = [], left
    for a, b in gaps:
        middle = (a + b) // 2
        if middle - last >= MIN_PANEL * (right - left):
            cuts.append(middle)
            last = middle
    if cuts and right - cuts[-1] < MIN_PANEL * (right - left):
        cuts.pop()
    return cuts


def _text_lines(ink: np.ndarray, a: int, b: int) -> list[tuple[int, int, int, int]]:
    """(top, bottom, left, right) of each line of text that a cut in the blank columns [a, b) would pass through: a
    band of rows no higher than a line (LINE of the figure's height, blank rows above and below it near the gap) with
    ink on both sides of the gap, closer together than the band is high. Such a gap is a space between two words
    (notebook 09's title "an 8 x 8 digit; numbers = token index t = 8i + j" reaches over the gap between its two
    panels, with a word space above it); the space between two panels' own titles is wider than a line is high.
    left and right: where the line's ink starts and ends, words closer than the band's height counted as one line."""
    height = ink.shape[0]
    reach = int(LINE * height) + (b - a)  # columns each side of the gap that show where a line of text ends
    near = ink[:, max(a - reach, 0) : b + reach].any(axis=1)
    lines = []
    for top, bottom in _runs(near):
        if bottom - top > LINE * height:
            continue
        used = np.flatnonzero(ink[top:bottom].any(axis=0))
        before, after = used[used < a], used[used >= b]
        if not before.size or not after.size or after[0] - before[-1] - 1 >= bottom - top:
            continue
        breaks = np.flatnonzero(np.diff(used) - 1 >= bottom - top)  # gaps as wide as a line is high end a line
        starts, ends = used[np.concatenate([[0], breaks + 1])], used[np.concatenate([breaks, [used.size - 1]])] + 1
        k = int(np.searchsorted(starts, a, side="right")) - 1  # the line that holds the gap
        lines.append((int(top), int(bottom), int(starts[k]), int(ends[k])))
    return lines


def _spans(line: tuple[int, int, int, int], cut: int, width: int) -> bool:
    """Whether a line of text over a cut reaches MIN_PANEL of the figure's width into both sides: a title over two
    panels, which no cut gives to one of them."""
    return min(cut - line[2], line[3] - cut) >= MIN_PANEL * width


def _title_rows(ink: np.ndarray) -> int:
    """Rows of a title that spans the panels: the first band of ink when it is short and a blank band follows it."""
    rows = _runs(ink.any(axis=1))
    if len(rows) >= 2 and rows[0][1] - rows[0][0] < LINE * ink.shape[0]:
        return int(rows[1][0])
    return 0


def readable(size: tuple[int, int], text_px: float | None) -> bool:
    """Whether a figure of ``size`` pixels, shown alone on a slide, draws its smallest text at READABLE px."""
    if text_px is None:
        return size[0] <= WIDE
    return text_px * min(ALONE[0] / size[0], ALONE[1] / size[1]) >= READABLE


def panels(png: bytes, text_px: float | None = None, depth: int = 2) -> list[bytes]:
    """The panels of a PNG figure laid out side by side, each a PNG; [png] when it has one panel or when, shown
    alone on a slide, its smallest text (``text_px`` in its pixels) is large enough already. A piece that still has
    panels and small text is cut again (``depth`` times at most)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png))
    if readable(image.size, text_px) or depth == 0:
        return [png]
    ink = _ink(image)
    top, cuts = 0, _cuts(ink)
    if not cuts:
        top = _title_rows(ink)
        cuts = _cuts(ink[top:]) if top else []
    if not cuts:
        return [png]
    out = []
    for piece in _pieces(image, ink, top, cuts):
        buffer = io.BytesIO()
        piece.save(buffer, format="PNG", dpi=image.info.get("dpi", (100, 100)))
        out += panels(trimmed(buffer.getvalue()), text_px, depth - 1)
    return out


def _pieces(image, ink: np.ndarray, top: int, cuts: list[int]) -> list:
    """The figure below row ``top`` cut at the columns ``cuts``, one image each. A line of text that a cut passes
    through (a panel's title that reaches over the gap) goes whole to the piece that holds most of it, and the other
    piece leaves it out: pixels that a piece does not own are painted background."""
    from PIL import Image

    rgba = np.asarray(image.convert("RGBA"))
    bounds = list(zip([0, *cuts], [*cuts, image.width], strict=True))
    owner = np.zeros(ink.shape, dtype=int)  # the piece each pixel goes to
    for k, (a, b) in enumerate(bounds):
        owner[:, a:b] = k
    for k, cut in enumerate(cuts):
        blank = _runs(~ink[top:].any(axis=0))
        a, b = next((a, b) for a, b in blank if a <= cut < b)
        for line_top, line_bottom, left, right in _text_lines(ink[top:], a, b):
            side = k if cut - left >= right - cut else k + 1
            owner[top + line_top : top + line_bottom, left:right] = side
    pieces = []
    for k, (a, b) in enumerate(bounds):
        mine = owner == k
        cols = np.flatnonzero((mine & ink)[top:].any(axis=0))
        left, right = (int(cols[0]), int(cols[-1]) + 1) if cols.size else (a, b)
        pixels = rgba.copy()
        pixels[~mine] = (255, 255, 255, 0 if rgba[..., 3].min() < 255 else 255)
        pieces.append(Image.fromarray(pixels[top:, min(left, a) : max(right, b)], "RGBA").convert(image.mode))
    return pieces


def smallest_text_pt(source: str) -> float:
    """The smallest font size in points that the code of a cell names for text (``fontsize=7``, ``labelsize=6``,
    a ``size=`` inside a call that writes text), or SMALLEST_PT."""
    sizes = [float(m[1]) for m in FONT_SIZE.finditer(source) if not m[0].startswith("size")]
    for line in source.splitlines():
        if TEXT_CALL.search(line):
            sizes += [float(m[1]) for m in FONT_SIZE.finditer(line) if m[0].startswith("size")]
    return min([SMALLEST_PT, *sizes])


def trimmed(png: bytes) -> bytes:
    """The figure cropped to its ink and MARGIN pixels around it (the same pixels, less blank border)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png))
    ink = _ink(image)
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if rows.size == 0:
        return png
    box = (
        max(int(cols[0]) - MARGIN, 0),
        max(int(rows[0]) - MARGIN, 0),
        min(int(cols[-1]) + 1 + MARGIN, image.width),
        min(int(rows[-1]) + 1 + MARGIN, image.height),
    )
    if box == (0, 0, image.width, image.height):
        return png
    buffer = io.BytesIO()
    image.crop(box).save(buffer, format="PNG", dpi=image.info.get("dpi", (100, 100)))
    return buffer.getvalue()


def size(output: dict) -> tuple[int, int]:
    """The size in pixels of the PNG figure of an output."""
    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(output["data"]["image/png"]))).size


def text_px(png: bytes, pt: float) -> float:
    """The height in the PNG's pixels of text of ``pt`` points (at the PNG's dpi, 100 when it does not say)."""
    from PIL import Image

    dpi = Image.open(io.BytesIO(png)).info.get("dpi", (100, 100))[0] or 100
    return round(pt / 72 * float(dpi), 2)


def for_slides(outputs: list[dict], source: str) -> list[dict]:
    """The outputs of a code cell with each PNG figure trimmed and marked (``metadata["course"]["text_px"]``) with
    the height in pixels of its smallest text."""
    pt = smallest_text_pt(source)
    out = []
    for output in outputs:
        data = output.get("data", {})
        if "image/png" not in data:
            out.append(output)
            continue
        png = trimmed(base64.b64decode(data["image/png"]))
        data = {**data, "image/png": base64.b64encode(png).decode("ascii")}
        out.append({**output, "data": data, "metadata": {"course": {"text_px": text_px(png, pt)}}})
    return out


def split_outputs(outputs: list[dict]) -> list[list[dict]]:
    """The outputs of a code cell, as groups that each belong on a slide: a figure of several panels becomes one
    group per panel; everything else stays in the first group."""
    groups: list[list[dict]] = [[]]
    for output in outputs:
        data = output.get("data", {})
        text = output.get("metadata", {}).get("course", {}).get("text_px")
        pieces = panels(base64.b64decode(data["image/png"]), text) if "image/png" in data else []
        if len(pieces) < 2:
            groups[0 if "image/png" not in data else -1].append(output)
            continue
        for k, piece in enumerate(pieces):
            image = {**output, "data": {"image/png": base64.b64encode(piece).decode("ascii")}}
            if k == 0:
                groups[-1].append(image)
            else:
                groups.append([image])
    return groups
