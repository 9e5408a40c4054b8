"""The seeded generators: structure of every example, determinism for a seed, and clear errors."""

import pytest
import torch

from course_lib.corpus import WORD_CATEGORIES, skipgram_pairs, toy_corpus
from course_lib.data import associative_recall, recall_task, recall_token_names
from course_lib.sequences import build_vocab

# ---------------------------------------------------------------- associative recall


@pytest.mark.parametrize("num_pairs,max_pairs", [(1, None), (4, None), (3, 8), ((1, 6), 6), ((2, 5), 7)])
def test_associative_recall_asks_for_the_value_of_one_shown_key(num_pairs, max_pairs):
    keys, values, targets = associative_recall(300, num_pairs, max_pairs=max_pairs, num_keys=10, num_values=5, seed=2)
    low, high = num_pairs if isinstance(num_pairs, tuple) else (num_pairs, num_pairs)
    positions = high if max_pairs is None else max_pairs
    assert keys.shape == values.shape == (300, positions + 1) and targets.shape == (300,)
    assert keys.dtype == values.dtype == targets.dtype == torch.long
    assert torch.all(values[:, -1] == 5)  # the query's value slot is "asked"
    counts = []
    for k_row, v_row, target in zip(keys.tolist(), values.tolist(), targets.tolist()):
        shown = [(k, v) for k, v in zip(k_row[:-1], v_row[:-1]) if k != 10]  # 10 = padding key
        pads = positions - len(shown)
        assert k_row[:pads] == [10] * pads and v_row[:pads] == [6] * pads  # padding first, value id 6
        assert all(k < 10 and v < 5 for k, v in shown)
        assert len({k for k, _ in shown}) == len(shown)  # distinct keys
        assert dict(shown)[k_row[-1]] == target  # the target is the value that came with the asked key
        counts.append(len(shown))
    assert set(counts) == set(range(low, high + 1))


def test_associative_recall_asks_every_position_and_is_deterministic():
    keys, values, targets = associative_recall(2000, 4, num_keys=6, num_values=3, seed=0)
    asked = (keys[:, :-1] == keys[:, -1:]).float().argmax(1)
    assert set(asked.tolist()) == {0, 1, 2, 3} and set(targets.tolist()) == {0, 1, 2}
    again = associative_recall(2000, 4, num_keys=6, num_values=3, seed=0)
    other = associative_recall(2000, 4, num_keys=6, num_values=3, seed=1)
    assert all(torch.equal(a, b) for a, b in zip((keys, values, targets), again))
    assert not torch.equal(keys, other[0])


@pytest.mark.parametrize(
    "kwargs,words",
    [
        ({"num_pairs": 0}, "num_pairs must be >= 1"),
        ({"num_pairs": (4, 2)}, "low <= high"),
        ({"num_pairs": (1, 2, 3)}, "an int or a"),
        ({"num_pairs": 5, "max_pairs": 4}, "max_pairs=4 must be at least the largest num_pairs"),
        ({"num_pairs": 3, "num_keys": 2}, "at most num_keys=2"),
        ({"num_pairs": 2, "num_values": 1}, "num_values must be >= 2"),
    ],
)
def test_associative_recall_errors_are_clear(kwargs, words):
    with pytest.raises(ValueError, match=words):
        associative_recall(10, **kwargs)


# ---------------------------------------------------------------- recall task


@pytest.mark.parametrize("distance,length", [(1, None), (5, None), (5, 20), (30, 31)])
def test_recall_examples_hide_one_value_at_the_given_distance(distance, length):
    tokens, targets = recall_task(200, distance, length=length, num_values=4, num_distractors=6, seed=3)
    length = distance + 1 if length is None else length
    assert tokens.shape == (200, length) and targets.shape == (200,)
    assert tokens.dtype == targets.dtype == torch.long
    assert torch.all(tokens[:, -1] == 10)  # the query token
    is_value = tokens < 4
    assert torch.all(is_value.sum(1) == 1)  # exactly one value per sequence
    positions = is_value.float().argmax(1)
    assert torch.all(positions == length - 1 - distance)
    assert torch.equal(tokens[torch.arange(200), positions], targets)
    body = tokens[:, :-1][~is_value[:, :-1]]
    assert torch.all((body >= 4) & (body < 10))  # everything else is a distractor


def test_recall_distance_range_covers_every_distance():
    tokens, targets = recall_task(2000, (3, 9), num_values=8, seed=0)
    assert tokens.shape == (2000, 10)
    positions = (tokens < 8).float().argmax(1)
    distances = 9 - positions
    assert set(distances.tolist()) == set(range(3, 10))
    assert set(targets.tolist()) == set(range(8))


def test_recall_is_deterministic_for_a_seed():
    a = recall_task(50, 7, seed=11)
    b = recall_task(50, 7, seed=11)
    c = recall_task(50, 7, seed=12)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(a[0], c[0])


def test_recall_token_names_line_up_with_ids():
    names = recall_token_names(3, 2)
    assert names == ["v0", "v1", "v2", "d0", "d1", "?"]
    tokens, targets = recall_task(1, 2, num_values=3, num_distractors=2)
    assert names[tokens[0, -1]] == "?" and names[targets[0]].startswith("v")


@pytest.mark.parametrize(
    "kwargs,words",
    [
        ({"distance": 0}, "distance must be >= 1"),
        ({"distance": (5, 2)}, "low <= high"),
        ({"distance": (1, 2, 3)}, "(low, high) pair"),
        ({"distance": 5, "length": 5}, "length=5 is too short for distance 5: it must be at least 6"),
        ({"distance": 2, "num_values": 1}, "num_values must be >= 2"),
    ],
)
def test_recall_errors_are_clear(kwargs, words):
    with pytest.raises(ValueError) as info:
        recall_task(10, **kwargs)
    assert words in str(info.value)


# ---------------------------------------------------------------- corpus


def test_corpus_is_deterministic_and_uses_only_known_words():
    a, b, c = toy_corpus(300, seed=0), toy_corpus(300, seed=0), toy_corpus(300, seed=1)
    assert a == b and a != c and len(a) == 300
    known = {w for words in WORD_CATEGORIES.values() for w in words} | {"the", "in", "is", "at", "to", "goes", "works"}
    known |= {"drives"}
    used = {w for s in a for w in s.split()}
    assert used <= known
    content = {w for words in WORD_CATEGORIES.values() for w in words}
    assert content <= used  # 300 sentences use every content word


def test_every_content_word_belongs_to_exactly_one_category():
    words = [w for ws in WORD_CATEGORIES.values() for w in ws]
    assert len(words) == len(set(words))


def test_corpus_does_not_depend_on_global_random_state():
    import random

    random.seed(1)
    a = toy_corpus(20, seed=5)
    random.seed(2)
    assert toy_corpus(20, seed=5) == a


# ---------------------------------------------------------------- skip-gram pairs


def test_skipgram_pairs_equal_a_loop():
    sentences = [s for s in toy_corpus(30, seed=2)] + ["the cat", "dog"]
    vocab = build_vocab(sentences)
    encoded = [vocab.encode(s) for s in sentences]
    for window in (1, 2, 4):
        centres, contexts = skipgram_pairs(encoded, window)
        expected = sorted(
            (s[i].item(), s[j].item())
            for s in encoded
            for i in range(len(s))
            for j in range(len(s))
            if 0 < abs(i - j) <= window
        )
        assert sorted(zip(centres.tolist(), contexts.tolist())) == expected


def test_skipgram_pairs_edge_cases():
    centres, contexts = skipgram_pairs([torch.tensor([4])])
    assert centres.shape == contexts.shape == (0,)
    with pytest.raises(ValueError, match="window must be >= 1"):
        skipgram_pairs([torch.tensor([1, 2])], window=0)
    with pytest.raises(ValueError, match="1-D tensor"):
        skipgram_pairs([torch.tensor([[1, 2]])])
    with pytest.raises(TypeError, match=r"sentences\[0\] must be a torch.Tensor, got list"):
        skipgram_pairs([[1, 2]])
