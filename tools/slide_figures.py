"""Figures at slide scale: the stored figure, trimmed to its ink, and a figure of several panels side by side cut
into its panels, one slide each; each figure marked with the height of its smallest text.

A notebook's figure is drawn for a page: three panels of 14 x 3.6 inches, labels at 8 to 10 points. Shown whole on a
1280x720 slide it is scaled down until its labels are 9 px high. Cut at the blank columns between its panels (and
below a title that spans them, which each panel then carries, wrapped; tools.figure_panels), each panel fills a slide
of its own at 1.5 to 2 times its size. The pixels are the stored output's: nothing is drawn again and nothing is
re-executed.

The smallest text of a figure is ``SMALLEST_PT`` points (course_lib/figures draws nothing smaller; matplotlib's ticks
are 10 pt) unless the cell that drew it names a smaller font size (``fontsize=7``, ``labelsize=6``): its height in
the stored pixels (``pt / 72 * dpi``, the PNG's dpi, 100 when it has none) goes with the figure to the slide
(``data-text-px``), where the browser test multiplies it by the figure's scale on the slide.
"""

from __future__ import annotations

import base64
import io
import re

from tools.figure_panels import ink, pieces, title_rows, trimmed

WIDE = 960  # a figure wider than this many pixels (at its stored 100 dpi) is cut into panels when it can be
ALONE = (1272, 687)  # the room of a figure alone on a 1280x720 slide (book/_static/course-slides.css)
READABLE = 16.2  # px of figure text on a slide that a figure is cut into panels to reach (the browser test: 16)
SMALLEST_PT = 8.0  # the smallest text of a figure whose cell names no smaller font size
FONT_SIZE = re.compile(r"""\b(?:fontsize|labelsize|titlesize|size)["']?\s*[=:]\s*([\d.]+)""")
TEXT_CALL = re.compile(r"\b(?:text|annotate|set_\w*label|set_title|title|legend|tick_params|suptitle)\s*\(")


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
    used = ink(image)
    top, at = title_rows(used)
    if not at:
        return [png]
    out = []
    for piece in pieces(image, used, top, at):
        buffer = io.BytesIO()
        piece.save(buffer, format="PNG", dpi=image.info.get("dpi", (100, 100)))
        out += panels(trimmed(buffer.getvalue()), text_px, depth - 1)
    return out


def smallest_text_pt(source: str) -> float:
    """The smallest font size in points that the code of a cell names for text (``fontsize=7``, ``labelsize=6``,
    a ``size=`` inside a call that writes text), or SMALLEST_PT."""
    sizes = [float(m[1]) for m in FONT_SIZE.finditer(source) if not m[0].startswith("size")]
    for line in source.splitlines():
        if TEXT_CALL.search(line):
            sizes += [float(m[1]) for m in FONT_SIZE.finditer(line) if m[0].startswith("size")]
    return min([SMALLEST_PT, *sizes])


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
