"""Warnings raised while a check runs an answer or its reference: noted on stdout, never left for stderr.

nbgrader gives no points to a graded cell that wrote anything to stderr, and a warning goes there: an honest answer
that starts ``lengths = torch.tensor(lengths)`` (PyTorch warns about copying a tensor so) would lose its marks, with
nothing in the message of the check to say why. :func:`noted` records the warnings of the calls it wraps (with the
filters as they are: a warning a filter ignores or makes an error stays so) and prints each kind once per check, as a
short note the student still sees: ``note: causal_padding_mask warned: UserWarning: To copy construct ...``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["noted"]

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
                short = " ".join(message.split())
                short = short if len(short) <= _LONGEST else short[: _LONGEST - 3] + "..."
                print(f"note: {who} warned: {category}: {short}")
