"""Warnings raised while a check runs an answer or its reference: noted on stdout, never left for stderr.

nbgrader gives no points to a graded cell that wrote anything to stderr, and a warning goes there: an honest answer
that starts ``lengths = torch.tensor(lengths)`` (PyTorch warns about copying a tensor so) would lose its marks, with
nothing in the message of the check to say why. :func:`noted` records the warnings of the calls it wraps (with the
filters as they are: a warning a filter ignores or makes an error stays so) and prints each kind once per check, as a
short note the student still sees: ``note: causal_padding_mask warned: UserWarning: To copy construct ...``.
A test cell may call an answer outside a check too (``cl.check_close(to_additive(mask), ...)``): in a graded kernel
:func:`notes_everywhere` makes every warning shown from then on such a note (``note: UserWarning: ...``).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["notes_everywhere", "noted"]

_LONGEST = 200  # characters of a warning's message in a note


@contextmanager
def noted(who: str, seen: set[tuple[str, str]]) -> Iterator[None]:
    """Record the warnings raised inside; then print a note on stdout for each not in ``seen`` (the check's
    notes so far), naming ``who`` raised it."""
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            yield
    finally:  # (an answer that raised is told what it warned too)
        for category, message in dict.fromkeys((w.category.__name__, str(w.message)) for w in caught):
            if (category, message) not in seen:
                seen.add((category, message))
                print(f"note: {who} warned: {category}: {_short(message)}")


def _short(message: str) -> str:
    short = " ".join(message.split())
    return short if len(short) <= _LONGEST else short[: _LONGEST - 3] + "..."


def _show(message, category, filename, lineno, file=None, line=None) -> None:  # warnings.showwarning's signature
    print(f"note: {category.__name__}: {_short(str(message))}", file=sys.stdout)


def notes_everywhere() -> None:
    """Show every warning from now on as a note on stdout (a graded kernel's: nbgrader gives no points to a test cell
    that wrote to stderr), with the filters as they are (what they ignore stays ignored)."""
    warnings.showwarning = _show
