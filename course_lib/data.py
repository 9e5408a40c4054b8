"""Small data sets for the notebooks, generated from a seed (nothing is downloaded, nothing is licensed).

- :func:`recall_task` — a long-range recall task whose dependency distance is a parameter;
- :func:`toy_corpus` — English sentences from a template grammar with word categories, for learning embeddings;
- :func:`skipgram_pairs` — (centre word, context word) pairs for a skip-gram model.

Shape legend: ``N`` examples, ``L`` sequence length.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = ["WORD_CATEGORIES", "recall_task", "recall_token_names", "skipgram_pairs", "toy_corpus"]


def _positive_int(name: str, value: object, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


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
    _positive_int("num_samples", num_samples)
    _positive_int("num_values", num_values, 2)
    _positive_int("num_distractors", num_distractors)
    if isinstance(distance, tuple):
        if len(distance) != 2:
            raise ValueError(f"distance must be an int or a (low, high) pair, got {distance!r}")
        low, high = distance
        _positive_int("distance[0]", low)
        _positive_int("distance[1]", high)
        if low > high:
            raise ValueError(f"distance range must have low <= high, got {distance!r}")
    else:
        _positive_int("distance", distance)
        low = high = distance
    length = high + 1 if length is None else length
    _positive_int("length", length, 2)
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
    _positive_int("num_values", num_values, 2)
    _positive_int("num_distractors", num_distractors)
    return [f"v{i}" for i in range(num_values)] + [f"d{i}" for i in range(num_distractors)] + ["?"]


#: The word categories of :func:`toy_corpus` (every content word belongs to exactly one).
WORD_CATEGORIES: dict[str, list[str]] = {
    "animal": ["cat", "dog", "horse", "cow", "sheep", "rabbit"],
    "person": ["teacher", "doctor", "farmer", "student", "cook"],
    "food": ["apple", "bread", "cheese", "rice", "soup", "cake"],
    "place": ["kitchen", "garden", "park", "school", "market"],
    "colour": ["red", "green", "blue", "yellow", "white"],
    "vehicle": ["car", "bus", "truck", "bike"],
    "animal_verb": ["runs", "sleeps", "jumps", "plays"],
    "eat_verb": ["eats", "buys", "cooks"],
    "care_verb": ["feeds", "washes", "walks"],
}

# Each template is a sequence of literal words and {category} slots, drawn with equal probability.
_TEMPLATES = [
    "the {animal} {animal_verb} in the {place}",
    "the {person} {eat_verb} the {colour} {food}",
    "the {animal} eats the {food}",
    "the {person} {care_verb} the {animal}",
    "the {food} is {colour}",
    "the {person} works at the {place}",
    "the {colour} {vehicle} goes to the {place}",
    "the {person} drives the {vehicle}",
]


def toy_corpus(num_sentences: int, *, seed: int = 0) -> list[str]:
    """``num_sentences`` English sentences drawn from a small template grammar (see ``_TEMPLATES``).

    Words of one category (``WORD_CATEGORIES``) fill the same slots, so they occur in the same contexts — the
    distributional signal an embedding model can pick up. Generated here from ``seed`` with Python's ``random``
    (a private ``random.Random``), so it needs no file and no license. Tokens are separated by single spaces.
    """
    _positive_int("num_sentences", num_sentences)
    rng = random.Random(seed)
    sentences = []
    for _ in range(num_sentences):
        template = rng.choice(_TEMPLATES)
        words = []
        for part in template.split():
            if part.startswith("{"):
                words.append(rng.choice(WORD_CATEGORIES[part[1:-1]]))
            else:
                words.append(part)
        sentences.append(" ".join(words))
    return sentences


def skipgram_pairs(sentences: Sequence[Tensor], window: int = 2) -> tuple[Tensor, Tensor]:
    """All (centre, context) index pairs with ``0 < |offset| <= window`` inside each sentence.

    Args:
        sentences: encoded sentences, each a 1-D int64 tensor (e.g. from ``Vocab.encode``).
        window: how many words on each side count as context.

    Returns:
        ``(centres, contexts)``, both ``(N,)`` int64: the input and the target of a skip-gram model
        (Mikolov et al., 2013), grouped by sentence, then by offset ``-window .. window``.
    """
    _positive_int("window", window)
    centres, contexts = [], []
    for s in sentences:
        if not isinstance(s, Tensor) or s.dim() != 1:
            raise ValueError("each sentence must be a 1-D tensor of token indices")
        n = len(s)
        for offset in range(-window, window + 1):
            if offset == 0 or abs(offset) >= n:
                continue
            lo, hi = max(0, -offset), min(n, n - offset)  # centre positions whose context position is inside
            centres.append(s[lo:hi])
            contexts.append(s[lo + offset : hi + offset])
    if not centres:
        return torch.zeros(0, dtype=torch.long), torch.zeros(0, dtype=torch.long)
    return torch.cat(centres), torch.cat(contexts)
