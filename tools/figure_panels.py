"""A figure of several panels side by side, cut into its panels (for tools.slide_figures): where to cut (in the blank
columns between panels, never through a line of text), which narrow piece goes with which panel (a colour bar or a
legend with the panel beside it, an axis label with its axis), and what a panel cut out of its figure takes along so
that it still reads alone: the title over all the panels, wrapped to the panel's width, and the value axis of panels
that share one (``sharey=True`` draws its labels on the first panel only). Pixels only: the stored figure's, moved
about, never drawn again.
"""

from __future__ import annotations

import io

import numpy as np

MIN_GAP = 4  # blank columns between two panels, at least
MIN_PANEL = 0.2  # a piece narrower than this fraction of the figure (a colour bar, a label) goes with a neighbour
LINE = 0.12  # a band of ink rows no higher than this fraction of the figure's height may be a line of text
MARGIN = 4  # blank pixels left around a figure's ink when it is trimmed
FRAME = 0.4  # a piece with a column inked over this fraction of the figure's height has axes (or is a colour bar)
TALL = 0.6  # ... as has a piece MIN_PANEL wide whose ink reaches over this fraction of the height (not a legend)
BAR = 0.05  # a tall piece narrower than this fraction of the figure is a colour bar (it joins the panel before it)
CENTRED = 0.05  # a line of text whose middle is this close to the figure's (a fraction of its width) is centred
SAME_GAP = 2  # two gaps within this many pixels of each other count as equally wide
NARROWEST = 0.05  # a panel in a row of panels is at least this fraction of the figure's width
SPACE = 0.25  # a blank run in a line of text at least this fraction of the line's height apart is a word space


def ink(image) -> np.ndarray:
    """True where a pixel is not background (white or transparent)."""
    return ink_of(np.asarray(image.convert("RGBA")).astype(int))


def runs(blank: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of each run of True in a 1-D array."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], blank.astype(int), [0]])))
    return list(zip(edges[::2], edges[1::2], strict=True))


def trimmed(png: bytes) -> bytes:
    """The figure cropped to its ink and MARGIN pixels around it (the same pixels, less blank border)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png))
    used = ink(image)
    rows, cols = np.flatnonzero(used.any(axis=1)), np.flatnonzero(used.any(axis=0))
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


def cuts(used: np.ndarray) -> list[int]:
    """Columns at which the figure (its ink, ``used``) splits into panels; empty: it does not. The figure falls into
    pieces at its blank gaps (MIN_GAP columns at least, none through a line of text). A colour bar (a tall piece
    narrower than BAR of the figure: matplotlib draws it right of its axes, often nearer the next panel's label)
    joins the piece before it. A piece without axes (no column inked over FRAME of the height, and not a wide piece
    over TALL of it: an axis label, tick labels, a legend), narrowest first, joins the neighbour across the narrower
    gap (a label sits nearer its axis than the panel before; a colour bar's label nearer its bar than the next
    panel's), the one on the right when the gaps are about as wide (matplotlib draws an axis label left of its axis).
    Then the cuts, widest gap first (a grid's spacing between groups of panels before the spacing inside a group),
    wherever both sides keep MIN_PANEL of the figure's width."""
    columns = np.flatnonzero(used.any(axis=0))
    if columns.size == 0:
        return []
    left, right = int(columns[0]), int(columns[-1]) + 1
    gaps = [(int(a), int(b)) for a, b in runs(~used.any(axis=0))
            if a > left and b < right and b - a >= MIN_GAP
            and not any(_spans(line, (a + b) // 2, right - left) for line in _text_lines(used, a, b))]  # fmt: skip
    pieces = list(zip([left, *(b for _, b in gaps)], [*(a for a, _ in gaps), right], strict=True))
    tall = used.sum(axis=0) > FRAME * used.shape[0]
    rows = [np.flatnonzero(used[:, a:b].any(axis=1)) for a, b in pieces]
    framed = [bool(tall[a:b].any()) or (b - a >= MIN_PANEL * (right - left) and r[-1] - r[0] >= TALL * used.shape[0])
              for (a, b), r in zip(pieces, rows, strict=True)]  # fmt: skip
    if not any(framed):
        return []

    def join(a: int, b: int) -> None:  # pieces a and b = a + 1 become one
        pieces[a : b + 1], framed[a : b + 1] = [(pieces[a][0], pieces[b][1])], [framed[a] or framed[b]]

    for k in range(len(pieces) - 1, 0, -1):
        if framed[k] and pieces[k][1] - pieces[k][0] < BAR * (right - left):
            join(k - 1, k)
    while not all(framed):
        k = min((k for k in range(len(pieces)) if not framed[k]), key=lambda k: pieces[k][1] - pieces[k][0])
        sides = [j for j in (k - 1, k + 1) if 0 <= j < len(pieces)]
        gap = {j: max(pieces[k][0] - pieces[j][1], pieces[j][0] - pieces[k][1]) for j in sides}
        near = min(gap.values())
        j = max(j for j in sides if gap[j] <= near + SAME_GAP)  # a tie: the axis on the right, whose label it is
        join(min(j, k), max(j, k))
    chosen: list[int] = []  # cut after piece i
    for i in sorted(range(len(pieces) - 1), key=lambda i: pieces[i][1] - pieces[i + 1][0]):
        start = pieces[max([j for j in chosen if j < i], default=-1) + 1][0]
        end = pieces[min([j for j in chosen if j > i], default=len(pieces) - 1)][1]
        if min(pieces[i][1] - start, end - pieces[i + 1][0]) >= MIN_PANEL * (right - left):
            chosen.append(i)
    return [cut for cut in sorted((pieces[i][1] + pieces[i + 1][0]) // 2 for i in chosen) if _aligned(used, cut)]


def _aligned(used: np.ndarray, cut: int) -> bool:
    """Whether a cut leaves as many panels on its left in every row of panels (a band of ink rows taller than a line of
    text; a panel: a run of inked columns at least half as wide as the band's widest and NARROWEST of the figure's
    width, which a column of tick labels or a rotated label is not). An eighth lecturer's find: 10's
    six digits over their six attention maps, the maps narrowed by a colour bar, were cut after the fourth digit and
    the fifth map, so that the maps stood under the wrong digits."""
    counts = set()
    for top, bottom in runs(used.any(axis=1)):
        if bottom - top <= LINE * used.shape[0]:
            continue
        merged: list[list[int]] = []
        for a, b in runs(used[top:bottom].any(axis=0)):  # gaps narrower than MIN_GAP are inside a panel
            if merged and a - merged[-1][1] < MIN_GAP:
                merged[-1][1] = b
            else:
                merged.append([a, b])
        least = max(max(b - a for a, b in merged) / 2, NARROWEST * used.shape[1])
        panels = [(a, b) for a, b in merged if b - a >= least]
        if panels:  # not a band of tick labels or text, each narrower than NARROWEST of the figure
            counts.add(sum(1 for a, b in panels if b <= cut))
    return len(counts) <= 1


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
    for top, bottom in runs(near):
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


def title_rows(ink: np.ndarray) -> tuple[int, list[int]]:
    """Where a figure with a title over its panels is cut: the rows of that title (the first band of ink, when it is
    short, a blank band follows it, and a line of its text is centred over the figure, as matplotlib's suptitle is, and
    reaches over a cut of the rest) and the cuts of the rest;
    (0, cuts of the whole figure) when it has no such title. The blank columns between the panels run up to the
    title, not through it."""
    rows = runs(ink.any(axis=1))
    whole = cuts(ink)
    if len(rows) < 2 or rows[0][1] - rows[0][0] >= LINE * ink.shape[0]:
        return 0, whole
    top = int(rows[1][0])
    below = cuts(ink[top:])
    band = ink[: rows[0][1]].any(axis=0)
    height = rows[0][1] - rows[0][0]
    used = np.flatnonzero(band)
    breaks = np.flatnonzero(np.diff(used) - 1 >= height)  # a space as wide as the line is high ends a line of text
    lines = zip(used[np.concatenate([[0], breaks + 1])], used[np.concatenate([breaks, [used.size - 1]])], strict=True)
    columns = np.flatnonzero(ink.any(axis=0))
    centre, width = (columns[0] + columns[-1]) / 2, columns[-1] - columns[0]
    if any(a < cut < b and abs((a + b) / 2 - centre) < CENTRED * width for a, b in lines for cut in below):
        return top, below
    return 0, whole


def pieces(image, used: np.ndarray, top: int, at: list[int]) -> list:
    """The figure below row ``top`` cut at the columns ``at``, one RGBA image each. A line of text that a cut passes
    through (a panel's title that reaches over the gap) goes whole to the piece that holds most of it, and the other
    piece leaves it out: pixels that a piece does not own are painted background. Each piece takes along the title
    above row ``top`` (wrapped to its width), when it has lost its value axis to the first piece (panels that share
    it) the first piece's, and when the figure's one colour bar went with the last piece, that bar."""
    from PIL import Image

    rgba = np.asarray(image.convert("RGBA"))
    background = (255, 255, 255, 0 if rgba[..., 3].min() < 255 else 255)
    bounds = list(zip([0, *at], [*at, image.width], strict=True))
    owner = np.zeros(used.shape, dtype=int)  # the piece each pixel goes to
    for k, (a, b) in enumerate(bounds):
        owner[:, a:b] = k
    for k, cut in enumerate(at):
        blank = runs(~used[top:].any(axis=0))
        a, b = next((a, b) for a, b in blank if a <= cut < b)
        for line_top, line_bottom, left, right in _text_lines(used[top:], a, b):
            side = k if cut - left >= right - cut else k + 1
            owner[top + line_top : top + line_bottom, left:right] = side
    out = []
    for k, (a, b) in enumerate(bounds):
        mine = owner == k
        cols = np.flatnonzero((mine & used)[top:].any(axis=0))
        left, right = (int(cols[0]), int(cols[-1]) + 1) if cols.size else (a, b)
        pixels = rgba.copy()
        pixels[~mine] = background
        out.append(pixels[top:, min(left, a) : max(right, b)])
    out = [out[0], *(_with_axis(piece, out[0], background) for piece in out[1:])]
    out = [*(_with_bar(piece, out[-1], background, image.width) for piece in out[:-1]), out[-1]]
    title = rgba[:top]
    return [Image.fromarray(_with_title(piece, title, background), "RGBA").convert(image.mode) for piece in out]


def _axis_column(pixels: np.ndarray) -> int | None:
    """The first column of a piece's axes (its left spine, or the left edge of an image drawn without one): the
    first column inked over half the piece's height."""
    tall = np.flatnonzero(ink_of(pixels).sum(axis=0) > 0.5 * pixels.shape[0])
    return int(tall[0]) if tall.size else None


def _with_axis(piece: np.ndarray, first: np.ndarray, background) -> np.ndarray:
    """``piece`` with the first piece's value axis (what lies left of its axes: tick labels, axis label) in place of
    its own when its own holds under a third of that ink and the two axes start and end on the same rows: panels
    that share their value axis, whose labels only the first one draws."""
    here, there = _axis_column(piece), _axis_column(first)
    if not here or not there:
        return piece
    mine, theirs = ink_of(piece[:, :here]), ink_of(first[:, :there])
    span = [np.flatnonzero(ink_of(p[:, c])) for p, c in ((piece, here), (first, there))]
    same_rows = abs(span[0][0] - span[1][0]) <= 2 and abs(span[0][-1] - span[1][-1]) <= 2
    if not same_rows or mine.sum() >= theirs.sum() / 3:
        return piece
    return np.concatenate([first[:, :there], piece[:, here:]], axis=1)


def _bars(pixels: np.ndarray, width: int) -> list[tuple[int, int]]:
    """The columns of each colour bar of a piece: a run of columns inked over half its height, narrower than BAR of
    the figure's ``width``."""
    tall = ink_of(pixels).sum(axis=0) > 0.5 * pixels.shape[0]
    return [(int(a), int(b)) for a, b in runs(tall) if b - a < BAR * width]


def _with_bar(piece: np.ndarray, last: np.ndarray, background, width: int) -> np.ndarray:
    """``piece`` with the last piece's colour bar (and its ticks and label) on its right, when the figure drew one
    bar, right of its last panel, for panels that have none: their scale. (One bar for several panels says they
    share one scale; the course's figures hold to it, tests/test_notebooks.py.)"""
    bars, tall = _bars(last, width), np.flatnonzero(ink_of(last).sum(axis=0) > 0.5 * last.shape[0])
    if len(bars) != 1 or _bars(piece, width) or tall[tall < bars[0][0]].size == 0:
        return piece
    gap = bars[0][0] - int(tall[tall < bars[0][0]][-1]) - 1  # between the last panel and its bar
    block = last[:, bars[0][0] - gap // 2 :]
    inked = np.flatnonzero(ink_of(piece).any(axis=0))
    kept = piece[:, : int(inked[-1]) + 1 + gap // 2] if inked.size else piece
    return np.concatenate([kept, block], axis=1)


def _with_title(piece: np.ndarray, title: np.ndarray, background) -> np.ndarray:
    """``piece`` under the figure's title (rows ``title``, none when empty), the title's words wrapped into as few
    lines as fit the panel's ink, as even as those lines can be, and centred over it (the piece left as it is when one
    word is wider)."""
    rows = np.flatnonzero(ink_of(title).any(axis=1))
    if rows.size == 0:
        return piece
    line = title[rows[0] : rows[-1] + 1]
    used = ink_of(line).any(axis=0)
    height = line.shape[0]
    words = [(a, b) for a, b in runs(used)]
    spaces = [(a, b) for a, b in runs(~used) if a > words[0][0] and b < words[-1][1] and b - a >= SPACE * height]
    words = list(zip([words[0][0], *(b for _, b in spaces)], [*(a for a, _ in spaces), words[-1][1]], strict=True))
    inked = np.flatnonzero(ink_of(piece).any(axis=0))
    if inked.size == 0:
        return piece
    left, width = int(inked[0]), int(inked[-1]) + 1 - int(inked[0])  # the panel's own width, not its share of gaps
    if max(b - a for a, b in words) > width:
        return piece
    fewest = len(_wrapped(words, width))  # as few lines as the width allows, then as even as they can be (06's title
    low, high = max(b - a for a, b in words), width  # left "j)" alone on its last line)
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if len(_wrapped(words, middle)) == fewest else (middle + 1, high)
    lines = _wrapped(words, low)
    blank = np.empty((height // 2, piece.shape[1], 4), dtype=piece.dtype)
    blank[:] = background
    stacked = []
    for a, b in lines:
        row = blank[:1].repeat(height, axis=0).copy()
        offset = left + (width - (b - a)) // 2
        row[:, offset : offset + b - a] = line[:, a:b]
        stacked += [row, blank]
    return np.concatenate([*stacked, piece], axis=0)


def _wrapped(words: list[tuple[int, int]], width: int) -> list[tuple[int, int]]:
    """Words (column spans of one line of text) wrapped greedily into lines no wider than ``width``."""
    lines, start = [], words[0]
    for word, before in zip(words[1:], words, strict=False):
        if word[1] - start[0] > width:
            lines.append((start[0], before[1]))
            start = word
    lines.append((start[0], words[-1][1]))
    return lines


def ink_of(pixels: np.ndarray) -> np.ndarray:
    """``ink`` of an RGBA array."""
    return (pixels[..., 3] > 16) & (pixels[..., :3].min(axis=-1) < 240)
