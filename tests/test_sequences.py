"""Vocabularies, one-hot vectors, speech frames and fixed windows against PyTorch built-ins and plain loops."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.sequences import (
    Vocab,
    build_vocab,
    concat_window,
    frame_signal,
    num_frames,
    one_hot,
    pad_sequences,
    tokenize,
)

# ---------------------------------------------------------------- vocabulary


def test_vocab_orders_specials_then_frequency_then_first_appearance():
    vocab = build_vocab("b a c a b a d")
    assert vocab.itos == ["<pad>", "<unk>", "a", "b", "c", "d"]
    assert vocab.pad_index == 0 and vocab.unk_index == 1
    assert len(vocab) == 6 and "c" in vocab and "z" not in vocab


def test_vocab_accepts_strings_token_lists_and_sentences_alike():
    as_text = build_vocab("the cat sat on the mat")
    as_tokens = build_vocab(["the", "cat", "sat", "on", "the", "mat"])
    as_sentences = build_vocab(["the cat sat", ["on", "the", "mat"]])
    assert as_text.itos == as_tokens.itos == as_sentences.itos


def test_encode_decode_round_trip_in_english_and_chinese():
    for text in ("the cat sat on the mat", "猫 坐在 垫子 上"):
        vocab = build_vocab(text)
        ids = vocab.encode(text)
        assert ids.dtype == torch.long and ids.shape == (len(text.split()),)
        assert vocab.decode(ids) == tokenize(text)
        assert vocab.decode(ids.tolist()) == tokenize(text)
    vocab = build_vocab("猫 坐在 垫子 上")
    assert vocab.encode("猫 坐在 垫子 上").tolist() == [2, 3, 4, 5]


def test_unknown_tokens_map_to_unk_or_raise_without_it():
    vocab = build_vocab("a b b")
    assert vocab.encode("a zebra b").tolist() == [3, 1, 2]
    assert vocab.decode(vocab.encode("zebra")) == ["<unk>"]
    strict = build_vocab("a b b", specials=())
    assert strict.unk_index is None and strict.pad_index is None
    with pytest.raises(KeyError, match="'zebra' is not in the vocabulary"):
        strict.encode("zebra")


def test_min_freq_drops_rare_tokens():
    vocab = build_vocab("a a b c c c", min_freq=2)
    assert vocab.itos == ["<pad>", "<unk>", "c", "a"]
    assert vocab.encode("b").tolist() == [vocab.unk_index]


@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda: build_vocab("a").decode([5]), ValueError, "index 5 is out of range for a vocabulary of size 3"),
        (
            lambda: build_vocab("a").decode(torch.zeros(2, 2, dtype=torch.long)),
            ValueError,
            "indices must have shape (L,), got (2, 2)",
        ),
        (lambda: build_vocab("a").decode(torch.zeros(2)), TypeError, "integers"),
        (lambda: build_vocab("a").encode([1, 2]), TypeError, "tokens must be strings"),
        (lambda: build_vocab("a", min_freq=0), ValueError, "min_freq must be >= 1"),
        (lambda: Vocab(["a", "a"]), ValueError, "duplicates ['a']"),
        (lambda: Vocab(["a", "b"]), ValueError, "unk_token='<unk>' is not in the vocabulary"),
        (lambda: tokenize(3), TypeError, "text must be a str"),
    ],
)
def test_vocab_errors_are_clear(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    assert words in str(info.value)


# ---------------------------------------------------------------- one-hot


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), (0,)])
def test_one_hot_equals_pytorch(device, shape):
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(0, 6, shape, generator=g).to(device)
    ours = one_hot(idx, 6)
    assert ours.dtype == torch.float32 and ours.device.type == device.type
    torch.testing.assert_close(ours, F.one_hot(idx, 6).float())
    torch.testing.assert_close(one_hot(idx, 6, dtype=torch.long), F.one_hot(idx, 6))


@settings(max_examples=50, deadline=None)
@given(v=st.integers(1, 40), n=st.integers(1, 30), seed=st.integers(0, 2**16))
def test_one_hot_rows_are_orthonormal_and_recover_indices(v, n, seed):
    idx = torch.randint(0, v, (n,), generator=torch.Generator().manual_seed(seed))
    x = one_hot(idx, v, dtype=torch.float64)
    assert torch.equal(x.argmax(-1), idx)
    torch.testing.assert_close(x @ x.T, (idx[:, None] == idx[None, :]).double())  # 1 if same token, else 0


def test_one_hot_times_matrix_is_an_embedding_lookup(device):
    torch.manual_seed(0)
    emb = torch.nn.Embedding(10, 4).to(device)
    idx = torch.tensor([[3, 0, 9], [1, 1, 2]], device=device)
    torch.testing.assert_close(one_hot(idx, 10) @ emb.weight, emb(idx))


@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda: one_hot(torch.tensor([0, 5]), 5), ValueError, "indices must lie in [0, num_classes=5)"),
        (lambda: one_hot(torch.tensor([-1]), 5), ValueError, "values from -1"),
        (lambda: one_hot(torch.tensor([0.0]), 5), TypeError, "indices must hold integers"),
        (lambda: one_hot(torch.tensor([0]), 0), ValueError, "num_classes must be >= 1"),
        (lambda: one_hot([0, 1], 3), TypeError, "indices must be a torch.Tensor"),
    ],
)
def test_one_hot_errors_are_clear(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    assert words in str(info.value)


# ---------------------------------------------------------------- speech frames


def frames_by_loop(signal, frame_len, hop):
    starts = range(0, len(signal) - frame_len + 1, hop)
    return torch.stack([signal[s : s + frame_len] for s in starts])


@pytest.mark.parametrize("sample_rate", [8000, 16000, 22050])
def test_one_second_gives_98_frames_of_25_ms(sample_rate):
    signal = torch.randn(sample_rate)
    frames = frame_signal(signal, sample_rate)
    frame_len = round(0.025 * sample_rate)
    assert frames.shape == (98, frame_len)
    torch.testing.assert_close(frames, frames_by_loop(signal, frame_len, round(0.010 * sample_rate)))


def test_sixteen_khz_frames_are_400_samples_every_160(device):
    signal = torch.arange(16000.0, device=device)
    frames = frame_signal(signal, 16000)
    assert frames.shape == (98, 400) and frames.device.type == device.type
    assert frames[1, 0].item() == 160 and frames[-1, -1].item() == 97 * 160 + 399


def test_frame_count_matches_stft_without_centering():
    """An independent count: torch.stft with center=False frames the signal the same way."""
    for total in (400, 401, 559, 560, 16000, 12345):
        signal = torch.randn(total)
        spec = torch.stft(signal, n_fft=400, hop_length=160, center=False, return_complex=True, window=torch.ones(400))
        assert frame_signal(signal, 16000).shape[0] == spec.shape[-1] == num_frames(total, 400, 160)


def test_frames_keep_leading_dimensions_and_custom_sizes():
    signal = torch.randn(2, 3, 1000)
    frames = frame_signal(signal, 1000, frame_ms=50, hop_ms=50)  # non-overlapping frames of 50 samples
    assert frames.shape == (2, 3, 20, 50)
    torch.testing.assert_close(frames.reshape(2, 3, 1000), signal)


@settings(max_examples=60, deadline=None)
@given(total=st.integers(0, 3000), frame_len=st.integers(1, 500), hop=st.integers(1, 300))
def test_num_frames_counts_whole_frames(total, frame_len, hop):
    expected = len(range(0, total - frame_len + 1, hop)) if total >= frame_len else 0
    assert num_frames(total, frame_len, hop) == expected


@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda: frame_signal(torch.zeros(399), 16000), ValueError, "signal has 399 samples (24.9375 ms at 16000 Hz)"),
        (lambda: frame_signal(torch.zeros(800), 0), ValueError, "sample_rate must be >= 1"),
        (lambda: frame_signal(torch.zeros(800), 16000.0), TypeError, "sample_rate must be an int, got float 16000.0"),
        (lambda: frame_signal(torch.zeros(800), 16000, frame_ms=0), ValueError, "frame_ms must be > 0"),
        (lambda: frame_signal(torch.zeros(800), 16000, hop_ms=-10), ValueError, "hop_ms must be > 0"),
        (lambda: frame_signal(torch.zeros(800), 16000, hop_ms=0.01), ValueError, "shorter than one sample"),
        (lambda: frame_signal(torch.tensor(1.0), 16000), ValueError, "at least 1 dimension (..., T)"),
        (lambda: frame_signal([0.0] * 800, 16000), TypeError, "signal must be a torch.Tensor"),
        (lambda: num_frames(10, 0, 1), ValueError, "frame_len must be >= 1"),
    ],
)
def test_frame_errors_are_clear(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    assert words in str(info.value)


# ---------------------------------------------------------------- fixed windows


@pytest.mark.parametrize("radius", [0, 1, 3])
def test_concat_window_matches_loop(device, radius):
    x = torch.randn(2, 5, 3, device=device)
    out = concat_window(x, radius)
    assert out.shape == (2, 5, (2 * radius + 1) * 3)
    for i in range(5):
        for j in range(2 * radius + 1):
            src = i - radius + j
            expected = x[:, src] if 0 <= src < 5 else torch.zeros(2, 3, device=device)
            torch.testing.assert_close(out[:, i, 3 * j : 3 * (j + 1)], expected)


def test_concat_window_errors():
    with pytest.raises(ValueError, match=r"x must have shape \(B, L, D\), got \(5, 3\)"):
        concat_window(torch.zeros(5, 3), 1)
    with pytest.raises(ValueError, match="radius must be >= 0"):
        concat_window(torch.zeros(1, 5, 3), -1)
    with pytest.raises(TypeError, match="x must be a torch.Tensor, got list"):
        concat_window([[[0.0]]], 1)


# ---------------------------------------------------------------- padding


def test_pad_sequences_equals_pytorch(device):
    seqs = [
        torch.tensor([3, 1, 4], device=device),
        torch.tensor([1], device=device),
        torch.tensor([5, 9], device=device),
    ]
    padded, lengths = pad_sequences(seqs, padding_value=-100)
    ref = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=-100)
    assert torch.equal(padded, ref) and padded.device.type == device.type
    assert lengths.tolist() == [3, 1, 2]


def test_pad_sequences_errors():
    with pytest.raises(ValueError, match="empty"):
        pad_sequences([])
    with pytest.raises(ValueError, match=r"sequences\[1\] must have shape \(L,\)"):
        pad_sequences([torch.zeros(2), torch.zeros(2, 2)])
