"""The course's progress bar: tqdm's text bar in one fixed format, for the training loop, the benchmark and the
autograder alike (a ground-floor module: it imports nothing of the course but ``validate``, so a tool that shows a
bar does not load the training loop).

The bar is tqdm's *text* bar (on stderr), also in Jupyter, where ``tqdm.auto`` would draw a widget. A widget's saved
text fallback is its state when it was first displayed ("0%| | 0/8"), so a notebook rendered without widget support
(GitHub, nbviewer, an exported page) showed a progress bar frozen at 0%. The text bar rewrites one line with carriage
returns; what a notebook stores and shows is its final line ("100%| 8/8 ..."). The format leaves out the rate (its
width varies from run to run) and fixes the bar at 10 characters, so that the final line differs between runs only
inside the brackets (time and loss), which the course's nbval sanitizer replaces; every update is drawn
(``mininterval=0``), so the final line is never followed by padding spaces.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from tqdm.std import tqdm

from .validate import flag, instance, integer

__all__ = ["progress_bar"]

_BAR_FORMAT = "{l_bar}{bar:10}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}{postfix}]"
_BAR_NCOLS = 200  # fixed, so the terminal width of whoever starts the kernel cannot trim the line


class _OrderedBar(tqdm):
    """tqdm's text bar whose output never changes places with the cell's prints.

    A Jupyter kernel sends stdout and stderr as separate streams, each flushed on its own timer, so a ``print`` just
    before a bar (or just after one) could be stored before or after the bar's lines depending on how busy the machine
    was, and strict nbval compares that order. The bar flushes stdout before its first line and stderr after its last.
    """

    def __init__(self, *args, **kwargs):
        if not kwargs.get("disable"):
            sys.stdout.flush()
        super().__init__(*args, **kwargs)

    def close(self):
        was_shown = not self.disable  # tqdm's close sets disable, so that a second close does nothing
        super().close()
        if was_shown:
            sys.stderr.flush()  # tqdm writes the final newline without flushing


def progress_bar(
    iterable: Iterable | None = None, *, total: int | None = None, desc: str | None = None, disable: bool = False
) -> tqdm:
    """The course's progress bar: tqdm's text bar in the fixed format described above.

    Use it like ``tqdm``: ``for x in progress_bar(items, desc="training"): ...``, or with ``total=`` and
    ``.update(n)``. What a notebook stores is the bar's final line (``100%|██████████| 8/8 [...]``), never a widget
    frozen at 0%. :func:`course_lib.train.fit` shows one; notebooks 08 and 12 use it in their own loops.
    """
    if total is not None:
        integer("total", total, minimum=0)
    instance("desc", desc, str, "a str", optional=True)
    flag("disable", disable)
    return _OrderedBar(
        iterable,
        total=total,
        desc=desc,
        disable=disable,
        bar_format=_BAR_FORMAT,
        ncols=_BAR_NCOLS,
        mininterval=0,
        miniters=1,
    )
