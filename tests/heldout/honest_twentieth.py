"""Held-out answers from a twentieth lecturer's trial (2026-12-05) on notebook 13; tests/test_grading.py grades them
with nbgrader.

Honest, each appended to the reference answer of exercise 2 (``merge``), each of which zeroed every exercise after it,
flagged as tampering (:mod:`course_lib.classroom.harmless` now reads them as what they are):

- h4_operator: ``import operator`` for ``operator.itemgetter`` (the whole module, only harmless attributes of it);
- h7_debug: ``from pprint import pprint`` and ``print(type(cl))``, a student's scratch lines.

Wrong, in place of exercise 3's answer (``bpe_encode``), scoring 3 of 3 unflagged before its check tried fixed cases:

- w1_most_frequent: merges the most frequent known pair first, not the one learned first.

A lookup table, appended to exercise 2's reference answer: the trial's c2 answered from a dictionary of the checks'
inputs and outputs (full marks, unflagged); its points cannot be refused, but the class report now flags the table
(:mod:`course_lib.classroom.tables`):

- c2_table: a dictionary of 120 literal values beside the answer.

A library's own implementation, in place of exercise 3's answer: the trial's c1 built Hugging Face's ``tokenizers``
BPE from the merges (the notebook's locked cells import it; the check blocked the course's BPE and torch only), full
marks and unflagged. The check now blocks every function of ``tokenizers`` (``"tokenizers.*"``: its Rust methods by
sys.setprofile's ``c_call`` events, :mod:`course_lib.classroom.reach`):

- c1_tokenizers: ``Tokenizer(models.BPE(vocab, merges)).encode(...)`` over one character per byte.
"""

HONEST_13_EXERCISE_2 = {
    "h4_operator": """
import operator


def _by_count(counts):
    return sorted(counts.items(), key=operator.itemgetter(1), reverse=True)
""",
    "h7_debug": """
from pprint import pprint

print(type(cl))
pprint({"merge": merge([1, 2, 1, 2], (1, 2), 300)})
""",
}

WRONG_13_EXERCISE_3 = {
    "w1_most_frequent": """
import collections


def bpe_encode(text, merges):
    rank = {tuple(pair): i for i, pair in enumerate(merges)}
    ids = list(text.encode("utf-8"))
    while True:
        known = collections.Counter(pair for pair in zip(ids, ids[1:]) if pair in rank)
        if not known:
            return ids
        pair = known.most_common(1)[0][0]
        ids = merge(ids, pair, 256 + rank[pair])
""",
}

TABLE_13_EXERCISE_2 = {
    "c2_table": "ANSWERS = {" + ", ".join(f"({i}, {i + 1}): [{i}, {i + 2}]" for i in range(30)) + "}\n",
}

LIBRARY_13_EXERCISE_3 = {
    "c1_tokenizers": """
def bpe_encode(text, merges):
    from tokenizers import Tokenizer, models

    symbol = {b: chr(0x100 + b) for b in range(256)}  # one character per byte, as byte-level BPE does
    vocab = {symbol[b]: b for b in range(256)}
    pairs = []
    for k, (a, b) in enumerate(merges):
        symbol[256 + k] = symbol[a] + symbol[b]
        vocab[symbol[256 + k]] = 256 + k
        pairs.append((symbol[a], symbol[b]))
    return Tokenizer(models.BPE(vocab, pairs)).encode("".join(symbol[b] for b in text.encode("utf-8"))).ids
""",
}
