"""course_lib.bpe against independent references: Hugging Face ``tokenizers``' BPE trainer and tokenizer on the same
text and settings (the same merges, in the same order, and the same token ids), a naive trainer that recounts every
pair at every merge, round trips on arbitrary Unicode (hypothesis), edge cases and clear errors. Also the shipped
English text of notebook 13 (course_lib.corpus.load_course_prose)."""

import hashlib
import json
import shutil
from collections import Counter

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

from course_lib.bpe import SPLIT_PATTERN, BytePairEncoder, merge_pair
from course_lib.corpus import COURSE_PROSE_SHA256, load_course_prose
from course_lib.data import DataFileError, load_tang300
from course_lib.paths import DATA_DIR

PROSE = load_course_prose()
POEMS = "".join(text for _, _, text in load_tang300())
MIXED = "Attention (注意力) costs O(n²) — 2024年3月5日, 3.14159 and 12,345 apples; naïve café ☕ 😀\n" * 20


def hf_train(text: str, num_merges: int, pattern: str | None) -> Tokenizer:
    """tokenizers' BPE on the text's bytes read as Latin-1 characters (character b stands for byte b, so the
    alphabet sorts in byte order and new tokens are numbered 256, 257, ... as ours are); chunks split by the same
    pattern, but by tokenizers' own regular-expression engine."""
    tok = Tokenizer(models.BPE())
    if pattern is not None:
        tok.pre_tokenizer = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    trainer = trainers.BpeTrainer(vocab_size=256 + num_merges, min_frequency=0, show_progress=False,
                                  initial_alphabet=[chr(b) for b in range(256)], special_tokens=[])  # fmt: skip
    tok.train_from_iterator([text.encode("utf-8").decode("latin-1")], trainer)
    return tok


def hf_merges(tok: Tokenizer) -> list[tuple[bytes, bytes]]:
    merges = json.loads(tok.to_str())["model"]["merges"]
    return [tuple(part.encode("latin-1") for part in (m if isinstance(m, list) else m.split(" "))) for m in merges]


def our_merges(enc: BytePairEncoder) -> list[tuple[bytes, bytes]]:
    return [(enc.token_bytes(a), enc.token_bytes(b)) for a, b in enc.merges]


@pytest.mark.parametrize(
    ("name", "num_merges", "pattern"),
    [
        ("prose", 400, SPLIT_PATTERN),
        ("poems", 400, SPLIT_PATTERN),
        ("mixed", 60, SPLIT_PATTERN),
        ("mixed", 60, None),
        ("poems[:300]", 80, None),
    ],  # fmt: skip
)
def test_the_same_merges_and_ids_as_hugging_face_tokenizers(name, num_merges, pattern):
    text = {"prose": PROSE, "poems": POEMS, "mixed": MIXED, "poems[:300]": POEMS[:300]}[name]
    ours = BytePairEncoder.train(text, num_merges, pattern=pattern)
    theirs = hf_train(text, num_merges, pattern)
    tokens = [ours.token_bytes(i) for i in range(ours.vocab_size)]
    assert len(set(tokens)) == len(tokens), "two merges made the same string: tokenizers would number them apart"
    assert our_merges(ours) == hf_merges(theirs) and len(ours.merges) == num_merges
    sample = text[:20_000]
    assert ours.encode(sample) == theirs.encode(sample.encode("utf-8").decode("latin-1")).ids


def naive_train(text: str, num_merges: int, pattern: str | None) -> list[tuple[int, int]]:
    """Recount every pair of every chunk occurrence at every merge: slow, obviously right."""
    import re

    words = [list(c.encode("utf-8")) for c in (re.findall(pattern, text) if pattern else [text])]
    merges = []
    for _ in range(num_merges):
        counts = Counter(p for w in words for p in zip(w, w[1:]))
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))  # the largest count, then the smallest pair
        merges.append(best)
        words = [merge_pair(w, best, 256 + len(merges) - 1) for w in words]
    return merges


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab c\n1é注意"), max_size=60), st.integers(0, 12), st.booleans())
def test_incremental_counts_give_the_merges_of_recounting(text, num_merges, split):
    pattern = SPLIT_PATTERN if split else None
    assert BytePairEncoder.train(text, num_merges, pattern=pattern).merges == naive_train(text, num_merges, pattern)


def naive_encode(merges: list[tuple[int, int]], text: str) -> list[int]:
    """One chunk: merge the earliest-learned pair among the adjacent ones, everywhere, until none has a merge."""
    rank = {pair: i for i, pair in enumerate(merges)}
    ids = list(text.encode("utf-8"))
    while known := [pair for pair in zip(ids, ids[1:]) if pair in rank]:
        first = min(known, key=rank.get)
        ids = merge_pair(ids, first, 256 + rank[first])
    return ids


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab c注意"), max_size=60), st.text(alphabet=st.sampled_from("ab c注意x"),
       max_size=40), st.integers(0, 15))  # fmt: skip
def test_encode_merges_the_earliest_learned_pair_first(train_text, text, num_merges):
    # merge 0 included (a rank that is falsy), pairs of no merge, characters the training text never had
    merges = BytePairEncoder.train(train_text, num_merges, pattern=None).merges
    assert BytePairEncoder(merges, pattern=None).encode(text) == naive_encode(merges, text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab c注意"), max_size=30), min_size=1, max_size=4))
def test_an_encoder_that_encoded_other_texts_encodes_as_a_fresh_one(texts):
    # an encoder remembers the chunks it encoded (for the next texts): the ids never depend on what it, or another
    # encoder with other merges, encoded before (each text twice, by two encoders, against the naive encoder)
    merges = [BytePairEncoder.train(t, 12, pattern=None).merges for t in ("ab ab abc 注意 注意力", "ba ba cab 意注")]
    used = [BytePairEncoder(m, pattern=None) for m in merges]
    for text in texts + texts:
        for m, encoder in zip(merges, used, strict=True):
            assert encoder.encode(text) == naive_encode(m, text)


ENCODER = BytePairEncoder.train(PROSE[:50_000], 300, specials=["<|endoftext|>"])


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_decode_of_encode_is_the_text_for_any_unicode(text):
    ids = ENCODER.encode(text)
    assert ENCODER.decode(ids) == text
    assert all(0 <= i < ENCODER.vocab_size for i in ids)
    assert len(ids) <= len(text.encode("utf-8"))  # a merge only ever shortens


@pytest.mark.parametrize("name", ["prose", "poems", "mixed"])
def test_round_trip_on_every_shipped_text(name):
    text = {"prose": PROSE, "poems": POEMS, "mixed": MIXED}[name]
    assert ENCODER.decode(ENCODER.encode(text)) == text


def test_edge_cases_empty_one_character_and_unseen_characters():
    assert ENCODER.encode("") == [] and ENCODER.decode([]) == ""
    assert BytePairEncoder.train("", 10).merges == [] and BytePairEncoder.train("x", 10).merges == []
    assert ENCODER.encode("a") == [ord("a")]
    emoji = "🦜"  # four UTF-8 bytes that no merge of English prose covers: byte fallback
    assert ENCODER.encode(emoji) == list(emoji.encode("utf-8")) and ENCODER.decode(ENCODER.encode(emoji)) == emoji
    assert len(BytePairEncoder.train("abababab", 100, pattern=None).merges) < 100  # it runs out of pairs
    assert merge_pair([7, 7, 7], (7, 7), 9) == [9, 7] and merge_pair([7, 7, 7, 7], (7, 7), 9) == [9, 9]
    assert ENCODER.decode([0xE6]) == "\ufffd"  # half a character: the replacement character
    token_id = type("TokenId", (int,), {})  # a subclass of int is an int (only bool is refused)
    assert ENCODER.decode((token_id(65), 66)) == "AB"


def test_vocabulary_is_bytes_plus_merges_plus_specials_and_specials_are_one_token():
    assert ENCODER.vocab_size == 256 + 300 + 1
    ids = ENCODER.encode("the end<|endoftext|>the start")
    assert ids.count(256 + 300) == 1 and ENCODER.decode(ids) == "the end<|endoftext|>the start"
    assert ENCODER.token_text(256 + 300) == "<|endoftext|>"
    assert ENCODER.decode(torch.tensor(ids)) == ENCODER.decode(ids)


def test_save_and_load_give_the_same_encoder(tmp_path):
    ENCODER.save(tmp_path / "bpe.json")
    again = BytePairEncoder.load(tmp_path / "bpe.json")
    assert again.merges == ENCODER.merges and again.specials == ENCODER.specials and again.pattern == ENCODER.pattern
    assert again.encode(MIXED) == ENCODER.encode(MIXED)
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(ValueError, match="not a file written by BytePairEncoder.save"):
        BytePairEncoder.load(tmp_path / "other.json")


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: BytePairEncoder.train(b"bytes", 3), TypeError, "text must be a str"),
        (lambda: BytePairEncoder.train("text", -1), ValueError, "num_merges must be >= 0"),
        (lambda: BytePairEncoder.train("text", 2.0), TypeError, "num_merges must be an int"),
        (lambda: BytePairEncoder([(300, 1)]), ValueError, r"merges\[0\] = \(300, 1\) joins an id"),
        (lambda: BytePairEncoder([(1, 2, 3)]), TypeError, r"merges\[0\] must be a pair"),
        (lambda: BytePairEncoder(specials=["x", "x"]), ValueError, "specials must be distinct"),
        (lambda: BytePairEncoder(specials=[""]), ValueError, r"specials\[0\] must not be empty"),
        (lambda: ENCODER.encode(3), TypeError, "text must be a str"),
        (lambda: ENCODER.decode([1, ENCODER.vocab_size]), ValueError, r"ids\[1\] must be < vocab_size"),
        (lambda: ENCODER.decode([1.0]), TypeError, r"ids\[0\] must be an int"),
        (lambda: ENCODER.decode([65] * 1000 + [True]), TypeError, r"ids\[1000\] must be an int, got bool"),
        (lambda: ENCODER.decode([65, 66, -1, 67]), ValueError, r"ids\[2\] must be >= 0"),
        (lambda: ENCODER.decode(torch.zeros(2, 2, dtype=torch.long)), TypeError, "1-D integer tensor"),
        (lambda: ENCODER.token_bytes(-1), ValueError, "token must be >= 0"),
    ],
)
def test_bad_input_is_refused_in_words(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_the_shipped_prose_matches_its_checksum_and_sources_row(tmp_path):
    digest = hashlib.sha256((DATA_DIR / "course_prose.txt").read_bytes()).hexdigest()
    assert digest == COURSE_PROSE_SHA256
    sources = (DATA_DIR / "SOURCES.md").read_text(encoding="utf-8")
    assert "course_prose.txt" in sources and COURSE_PROSE_SHA256 in sources and "CC BY 4.0" in sources
    assert PROSE.startswith("# 00 · Start here") and len(PROSE) == 365_002
    copy = tmp_path / "course_prose.txt"
    shutil.copy(DATA_DIR / "course_prose.txt", copy)
    assert load_course_prose(copy) == PROSE
    copy.write_bytes(copy.read_bytes()[:-1])
    with pytest.raises(DataFileError, match="SHA-256"):
        load_course_prose(copy)
    with pytest.raises(FileNotFoundError, match="git checkout data/course_prose.txt"):
        load_course_prose(tmp_path / "missing.txt")


# ------------------------------------- special tokens in training, and the incremental counts on hand-picked texts


def merged_bytes(encoder: BytePairEncoder) -> list[bytes]:
    return [encoder.token_bytes(256 + i) for i in range(len(encoder.merges))]


@pytest.mark.parametrize("pattern", [SPLIT_PATTERN, None], ids=["chunks", "one-chunk"])
@pytest.mark.parametrize("specials", [["<|e", "<|e|>"], ["<|e|>", "<|e"]], ids=["shorter-first", "longer-first"])
def test_training_cuts_out_specials_the_longest_first_and_never_merges_across_them(specials, pattern):
    """'<|e' is the start of '<|e|>': cut at the shorter one, '<|e|>' would leave '|>' in the text to train on (as
    encode, which cuts the longest first, never would). No byte of a special occurs elsewhere in the text, so no merge
    may hold one; and with chunks, the merges are those of the text with every special a line break (a one-byte chunk
    of its own: no pair)."""
    parts = ["ab", "<|e|>", "ab", "<|e|>", "abc", "<|e", "cab", "<|e|>", "ba", "<|e|>", "ab"]
    text = "".join(parts)
    encoder = BytePairEncoder.train(text, 20, pattern=pattern, specials=specials)
    assert encoder.merges and not any(set(b"<|e>") & set(token) for token in merged_bytes(encoder))
    if pattern is not None:
        plain = "".join("\n" if part.startswith("<") else part for part in parts)
        assert encoder.merges == BytePairEncoder.train(plain, 20).merges == naive_train(plain, 20, SPLIT_PATTERN)
    assert encoder.decode(encoder.encode(text)) == text
    assert [encoder.token_text(i) for i in encoder.encode("<|e|><|e")] == ["<|e|>", "<|e"]  # each one token


@pytest.mark.parametrize(
    "text",
    [
        "abcabcabc",  # (a, b) and (b, c) tie; merging ab leaves (b, c) no occurrence: its count must fall to 0
        "aaaaaaa aaaa aaa",  # overlapping pairs: a run of n a's holds n - 1 pairs (a, a) but only n // 2 merge
        "abababab babab abab",
        "xyzxyzxy zyxzyx xyzzy",
        "the cat sat on the mat; the hat that sat on the cat",
        "注意力注意注意力，力注意。",
    ],
)
@pytest.mark.parametrize("pattern", [SPLIT_PATTERN, None], ids=["chunks", "one-chunk"])
def test_incremental_counts_give_the_merges_of_recounting_on_hand_picked_texts(text, pattern):
    """Texts whose merges make other pairs' counts fall (a stale count in the heap, too high, must not win) and rise
    (a new pair's count), to the last merge the text allows."""
    assert BytePairEncoder.train(text, 60, pattern=pattern).merges == naive_train(text, 60, pattern)
