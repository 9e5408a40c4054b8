"""Small data sets for the notebooks: generated from a seed, or shipped in ``data/`` and checked on loading.

- :func:`recall_task` — a long-range recall task whose dependency distance is a parameter;
- :func:`associative_recall` — recall the value of one of ``K`` key-value pairs: how much a model must keep;
- :func:`load_digits` — the 1,797 8 x 8 handwritten digits shipped as ``data/digits.npz`` (UCI, CC BY 4.0; see
  ``data/SOURCES.md``), verified against their SHA-256 checksum. Nothing is downloaded.
- :func:`date_splits` — English dates and their Chinese translations, a parallel task with reordering (notebook 14);
  :func:`date_pair` writes one date in one of the five English forms.

The toy corpus for word embeddings (notebook 01) is in :mod:`course_lib.corpus`.

Shape legend: ``N`` examples, ``L`` sequence length.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import random
import re
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from .paths import DATA_DIR
from .validate import integer, integer_or_range

__all__ = ["associative_recall", "recall_task", "recall_token_names"]


def recall_task(
    num_samples: int,
    distance: int | tuple[int, int],
    *,
    length: int | None = None,
    num_values: int = 8,
    num_distractors: int = 16,
    seed: int = 0,
) -> tuple[Tensor, Tensor]:
    """Find the one *value* token hidden among distractors, ``distance`` steps before the end.

    Each sequence has ``length`` tokens: random distractors, one value token at position ``length - 1 - distance``
    and a query token ``?`` at the last position. The target is the value. A model that reads the sequence from the
    left must carry the value ``distance`` steps; a model that can look back from ``?`` at every position at once
    need not.

    Token ids: values ``0 .. num_values - 1``, distractors ``num_values .. num_values + num_distractors - 1``,
    the query ``num_values + num_distractors``; so the vocabulary has ``num_values + num_distractors + 1`` tokens
    (see :func:`recall_token_names`). Chance accuracy is ``1 / num_values``.

    Args:
        num_samples: ``N``.
        distance: steps from the value to the query, an int ``>= 1`` or an inclusive range ``(low, high)`` from which
            each example draws its own distance uniformly.
        length: ``L``, default ``max distance + 1`` (the shortest that fits).
        num_values, num_distractors: sizes of the two token sets.
        seed: seeds the ``torch.Generator`` that draws everything.

    Returns:
        ``(tokens, targets)``: ``(N, L)`` and ``(N,)``, int64, on the CPU.
    """
    integer("num_samples", num_samples, minimum=1)
    integer("num_values", num_values, minimum=2)
    integer("num_distractors", num_distractors, minimum=1)
    low, high = integer_or_range("distance", distance, minimum=1)
    length = high + 1 if length is None else length
    integer("length", length, minimum=2)
    if length < high + 1:
        raise ValueError(f"length={length} is too short for distance {high}: it must be at least {high + 1}")

    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(num_values, num_values + num_distractors, (num_samples, length), generator=g)
    targets = torch.randint(0, num_values, (num_samples,), generator=g)
    distances = torch.randint(low, high + 1, (num_samples,), generator=g)
    rows = torch.arange(num_samples)
    tokens[rows, length - 1 - distances] = targets
    tokens[:, -1] = num_values + num_distractors  # the query token
    return tokens, targets


def recall_token_names(num_values: int = 8, num_distractors: int = 16) -> list[str]:
    """Readable names of the :func:`recall_task` tokens, index = id: ``v0 .. v7``, ``d0 .. d15``, ``?``."""
    integer("num_values", num_values, minimum=2)
    integer("num_distractors", num_distractors, minimum=1)
    return [f"v{i}" for i in range(num_values)] + [f"d{i}" for i in range(num_distractors)] + ["?"]


def associative_recall(
    num_samples: int,
    num_pairs: int | tuple[int, int],
    *,
    max_pairs: int | None = None,
    num_keys: int = 32,
    num_values: int = 8,
    seed: int = 0,
) -> tuple[Tensor, Tensor, Tensor]:
    """Show ``K`` (key, value) pairs, then one of the keys: the target is the value that came with it.

    Each position holds one pair, given as two aligned token sequences, ``keys`` and ``values``. The ``K`` pairs of
    an example sit at the end of its first ``max_pairs`` positions, after ``max_pairs - K`` padding pairs, and the
    last position holds the query: one of the example's keys, with the value slot marked as asked. Keys within an
    example are distinct. A model that reads from left to right must store all ``K`` pairs before it sees which one
    is asked; a model that can look back from the query at every position need not.

    Token ids: keys ``0 .. num_keys - 1`` and ``num_keys`` for padding (``num_keys + 1`` key tokens); values
    ``0 .. num_values - 1``, ``num_values`` for "asked" (the query's value slot) and ``num_values + 1`` for padding
    (``num_values + 2`` value tokens). Chance accuracy is ``1 / num_values``.

    Args:
        num_samples: ``N``.
        num_pairs: ``K``, an int ``>= 1`` or an inclusive range ``(low, high)`` from which each example draws its own.
        max_pairs: ``P``, positions before the query, default the largest ``K``; at most ``num_keys``.
        num_keys, num_values: sizes of the two token sets.
        seed: seeds the ``torch.Generator`` that draws everything.

    Returns:
        ``(keys, values, targets)``: ``(N, P + 1)``, ``(N, P + 1)`` and ``(N,)``, int64, on the CPU.
    """
    integer("num_samples", num_samples, minimum=1)
    integer("num_keys", num_keys, minimum=1)
    integer("num_values", num_values, minimum=2)
    low, high = integer_or_range("num_pairs", num_pairs, minimum=1)
    max_pairs = high if max_pairs is None else max_pairs
    integer("max_pairs", max_pairs, minimum=1)
    if not high <= max_pairs <= num_keys:
        raise ValueError(
            f"max_pairs={max_pairs} must be at least the largest num_pairs ({high}) and at most num_keys={num_keys} "
            "(the keys of an example are distinct)"
        )

    g = torch.Generator().manual_seed(seed)
    keys = torch.rand(num_samples, num_keys, generator=g).argsort(dim=1)[:, :max_pairs]  # distinct keys per row
    values = torch.randint(0, num_values, (num_samples, max_pairs), generator=g)
    counts = torch.randint(low, high + 1, (num_samples,), generator=g)  # K of each example
    asked = max_pairs - counts + (torch.rand(num_samples, generator=g) * counts).long()  # position of the asked pair
    rows = torch.arange(num_samples)
    query, targets = keys[rows, asked], values[rows, asked]
    padding = torch.arange(max_pairs)[None, :] < (max_pairs - counts)[:, None]  # (N, P): the first P - K positions
    keys = torch.cat([keys.masked_fill(padding, num_keys), query[:, None]], dim=1)  # (N, P + 1)
    values = torch.cat([values.masked_fill(padding, num_values + 1), torch.full_like(query[:, None], num_values)], 1)
    return keys, values, targets


# ---------------------------------------------------------------- shipped data: handwritten digits (notebooks 09, 10)

__all__ += ["DIGITS_SHA256", "DataFileError", "load_digits"]

#: SHA-256 of ``data/digits.npz`` as shipped (also listed in ``data/SOURCES.md``).
DIGITS_SHA256 = "6a6432310fd6e1be5ff3b45259efbbb2c8e76103c5f64f64b4d80f530315b5c6"


class DataFileError(ValueError):
    """A file in ``data/`` exists but is not the file the course shipped (its checksum or contents differ)."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def _shipped_file(path: str | Path | None, name: str, expected: str, what: str) -> Path:
    """``path`` (default ``data/<name>``) after checking that it exists and has the shipped SHA-256 ``expected``."""
    if path is not None and not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a str or a path, got {type(path).__name__} {path!r}")
    path = DATA_DIR / name if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"{what} {path} is missing; it ships with the course in data/{name} (restore it with "
            f"`git checkout data/{name}` in a clone, or reinstall course_lib; data/SOURCES.md says where it comes from)"
        )
    actual = _sha256(path)
    if actual != expected:
        raise DataFileError(
            f"{path} is not {what} the course ships: its SHA-256 is {actual}, expected {expected} "
            f"(the file was altered or truncated; restore it with `git checkout data/{name}` or reinstall course_lib)"
        )
    return path


def load_digits(path: str | Path | None = None, *, scale: bool = True) -> tuple[Tensor, Tensor]:
    """The 1,797 handwritten digits of the UCI "Optical Recognition of Handwritten Digits" data (8 x 8 pixels).

    Each pixel counts the ink in a 4 x 4 block of a 32 x 32 bitmap, so it is an integer ``0 .. 16``
    (Alpaydin & Kaynak, 1998; the file holds the 1,797 images of the UCI test set, the copy scikit-learn ships).
    The file is checked against :data:`DIGITS_SHA256` before it is read.

    Args:
        path: the ``.npz`` file; default ``data/digits.npz`` of the course (``course_lib.paths.DATA_DIR``).
        scale: divide the pixels by 16 and return float32 in ``[0, 1]`` (default); ``False`` returns the raw uint8
            counts ``0 .. 16``.

    Returns:
        ``(images, labels)``: ``(N, 1, 8, 8)`` (float32 in [0, 1], or uint8) and ``(N,)`` int64 digits ``0 .. 9``,
        ``N = 1797``, on the CPU, in the file's order.

    Raises:
        FileNotFoundError: the file is missing (restore it: ``git checkout data/digits.npz``).
        DataFileError: the file's checksum or contents differ from the shipped file (it was altered or truncated).
    """
    path = _shipped_file(path, "digits.npz", DIGITS_SHA256, "the digits data file")
    with np.load(path, allow_pickle=False) as data:
        images, labels = data["images"], data["labels"]
    if images.shape != (1797, 8, 8) or labels.shape != (1797,) or images.dtype != np.uint8:
        raise DataFileError(f"{path} holds images {images.shape} {images.dtype} and labels {labels.shape}")
    images = torch.from_numpy(images.copy())[:, None]  # (N, 1, 8, 8) uint8: one channel
    labels = torch.from_numpy(labels.astype(np.int64))  # (N,)
    if scale:
        images = images.float() / 16.0
    return images, labels


# ---------------------------------------------------------------- shipped data: Three Hundred Tang Poems (notebook 12)

__all__ += ["TANG300_SHA256", "load_tang300"]

#: SHA-256 of ``data/tang300.txt`` as shipped (also listed in ``data/SOURCES.md``).
TANG300_SHA256 = "86b3c96bfe5d3056d90d14b4faf6099bb4338a6d7c0f50968fb8373503d7831b"


def load_tang300(path: str | Path | None = None) -> list[tuple[str, str, str]]:
    """The 313 poems of *Three Hundred Tang Poems* (唐诗三百首), in simplified characters.

    The file (``data/tang300.txt``, made by ``tools/make_tang300.py``; origin and license in ``data/SOURCES.md``)
    holds one poem a paragraph: ``《title》``, the author, then the poem's lines. It is checked against
    :data:`TANG300_SHA256` before it is read.

    Returns:
        ``[(title, author, text), ...]`` in the file's order: the title with its 《》 brackets, the author, and the
        poem's lines each ending in ``"\\n"`` (``"兰叶春葳蕤，桂华秋皎洁。\\n..."``).

    Raises:
        FileNotFoundError, DataFileError: as :func:`load_digits`.
    """
    path = _shipped_file(path, "tang300.txt", TANG300_SHA256, "the Tang poems file")
    poems = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        title, author, *lines = block.strip("\n").split("\n")
        poems.append((title, author, "".join(line + "\n" for line in lines)))
    return poems


__all__ += ["date_pair", "date_splits", "date_tokens"]

_MONTHS = "January February March April May June July August September October November December".split()
_WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()  # date.weekday(): Monday = 0


def date_pair(date: datetime.date, form: int) -> tuple[str, str]:
    """``(english, chinese)`` for ``date`` in English form ``form``: 0 "March 5, 2024", 1 "5 March 2024", 2 "the 5th
    of March, 2024", 3 "Tuesday, March 5, 2024", 4 "Tuesday 5 March 2024"; the Chinese ends with the weekday (星期二)
    in forms 3 and 4, the two that name it. Taught in notebook 14."""
    if not isinstance(date, datetime.date):
        raise TypeError(f"date must be a datetime.date, got {type(date).__name__}")
    if integer("form", form, minimum=0) > 4:
        raise ValueError(f"form must be 0 .. 4, got {form}")
    month, weekday, day = _MONTHS[date.month - 1], _WEEKDAYS[date.weekday()], date.day
    nth = f"{day}{'th' if day in (11, 12, 13) else {1: 'st', 2: 'nd', 3: 'rd'}.get(day % 10, 'th')}"
    forms = (f"{month} {day}, {date.year}", f"{day} {month} {date.year}", f"the {nth} of {month}, {date.year}",
             f"{weekday}, {month} {day}, {date.year}", f"{weekday} {day} {month} {date.year}")  # fmt: skip
    chinese = f"{date.year}年{date.month}月{day}日" + ("星期" + "一二三四五六日"[date.weekday()] if form >= 3 else "")
    return forms[form], chinese


def date_splits(sizes: tuple[int, ...] | list[int], seed: int = 0) -> list[list[tuple[str, str]]]:
    """English dates and their Chinese translations (notebook 14), in disjoint lists of the given ``sizes``.

    "Tuesday, March 5, 2024" → "2024年3月5日星期二": the year moves from the end to the front, the weekday from the
    front to the end, the month's name becomes a number. Each pair takes one of five English forms ("March 5, 2024",
    "5 March 2024", "the 5th of March, 2024", "Tuesday, March 5, 2024", "Tuesday 5 March 2024"); the weekday comes from
    the calendar, so every pair is right. The dates are drawn without replacement from 1900-01-01 .. 2099-12-31 by
    ``random.Random(seed)``: no date occurs in two lists, in any form, and a seed gives the same lists everywhere.

    Returns one list of ``(english, chinese)`` pairs per entry of ``sizes`` (e.g. training, validation, test).
    """
    if not isinstance(sizes, (tuple, list)) or not sizes:
        raise TypeError(f"sizes must be a non-empty tuple of ints, got {sizes!r}")
    for i, size in enumerate(sizes):
        integer(f"sizes[{i}]", size, minimum=0)
    integer("seed", seed)
    first, days = datetime.date(1900, 1, 1), 200 * 365 + 49  # 1900-2099: 49 leap years (1900 is not one)
    if sum(sizes) > days:
        raise ValueError(f"sizes ask for {sum(sizes)} distinct dates; 1900-2099 has {days}")
    rng = random.Random(seed)
    offsets = rng.sample(range(days), sum(sizes))
    pairs = [date_pair(first + datetime.timedelta(days=o), rng.randrange(5)) for o in offsets]
    ends = [sum(sizes[: i + 1]) for i in range(len(sizes))]
    return [pairs[end - size : end] for size, end in zip(sizes, ends, strict=True)]


def date_tokens(english: str) -> list[str]:
    """An English date as tokens: words, single digits and punctuation ("the 5th of March," → the 5 th of March ,)."""
    if not isinstance(english, str):
        raise TypeError(f"english must be a str, got {type(english).__name__}")
    return re.findall(r"[A-Za-z]+|\d|[^\sA-Za-z\d]", english)
