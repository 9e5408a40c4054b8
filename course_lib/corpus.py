"""A toy corpus for learning word embeddings (notebook 01): sentences from a template grammar whose word categories
are known, and the (centre word, context word) pairs of a skip-gram model.

- :func:`toy_corpus` — English sentences from a template grammar with word categories (:data:`WORD_CATEGORIES`);
- :func:`skipgram_pairs` — (centre, context) index pairs within a window, for a skip-gram model;
- :func:`load_course_prose` — the course's own English prose, shipped in ``data/`` for notebook 13's tokenizers;
- :func:`load_arrays` — arrays shipped in ``data/`` for notebook 15: what Hugging Face's Llama layer and PEFT's LoRA
  compute on tiny seeded models, and a small language model pretrained on the course's prose.

Shape legend: ``N`` pairs, ``L`` sentence length. The toy corpus is generated from a seed: no download, no license.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from .data import _shipped_file
from .validate import integer, shape_of, tensor

__all__ = ["COURSE_PROSE_SHA256", "WORD_CATEGORIES", "load_course_prose", "skipgram_pairs", "toy_corpus"]


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
    integer("num_sentences", num_sentences, minimum=1)
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
    integer("window", window, minimum=1)
    centres, contexts = [], []
    for i, s in enumerate(sentences):
        if tensor(f"sentences[{i}]", s).dim() != 1:
            raise ValueError(f"sentences[{i}] must be a 1-D tensor of token indices (L,), got shape {shape_of(s)}")
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


# ---------------------------------------------------------------- shipped data: the course's own prose (notebook 13)

#: SHA-256 of ``data/course_prose.txt`` as shipped (also listed in ``data/SOURCES.md``).
COURSE_PROSE_SHA256 = "c13d29af57de182c1f572b1dd77622179f36a6ff5bf59ee5715a7e893471cec1"


def load_course_prose(path: str | Path | None = None) -> str:
    """The English prose of notebooks 00-12 as one plain text: the course's own words (CC BY 4.0).

    The file (``data/course_prose.txt``, made by ``tools/make_course_prose.py`` from the notebooks at a fixed commit;
    origin and license in ``data/SOURCES.md``) is checked against :data:`COURSE_PROSE_SHA256` before it is read, as
    :mod:`course_lib.data` checks every shipped file.

    Raises:
        FileNotFoundError: the file is missing (restore it: ``git checkout data/course_prose.txt``).
        DataFileError: its checksum differs from the shipped file's (it was altered or truncated).
    """
    path = _shipped_file(path, "course_prose.txt", COURSE_PROSE_SHA256, "the course prose file")
    return path.read_bytes().decode("utf-8")


# --------------------------------- shipped arrays: references and trained models (notebooks 12, 14 and 15)

__all__ += ["ARRAYS_SHA256", "load_arrays"]

#: SHA-256 of each shipped ``.npz`` of arrays (also listed in ``data/SOURCES.md`` with the script that writes it).
ARRAYS_SHA256 = {
    "hf_reference.npz": "180c7a6525fa63e3b90fc0a99320c0e06decf4112d03d02cc0077797a318dd1b",
    "pretrained_lm.npz": "686ce53c1c013de63a64e9a9f20cb39bb23221ff21d91a8a19de468bf0d5bf3b",
    "sorter.npz": "107ec5764d7b72650a51447fc34584c86d8e1027364b5a0e0bd5ba57dbe92d74",
    "translator.npz": "50a7a45021672338a00c1fe850dd5038dc05ad9cb589491512e89e8091dd8fcd",
}


def load_arrays(name: str, path: str | Path | None = None) -> dict[str, Tensor]:
    """The arrays of the shipped file ``data/<name>`` (a key of :data:`ARRAYS_SHA256`), checked against its SHA-256
    before it is read, as CPU tensors by their names in the file.

    Raises:
        ValueError: ``name`` is not a shipped array file.
        FileNotFoundError, DataFileError: as :func:`load_course_prose`.
    """
    if name not in ARRAYS_SHA256:
        raise ValueError(f"name must be one of {sorted(ARRAYS_SHA256)}, got {name!r}")
    path = _shipped_file(path, name, ARRAYS_SHA256[name], f"the array file {name}")
    with np.load(path, allow_pickle=False) as data:
        return {key: torch.from_numpy(data[key].copy()) for key in data.files}
