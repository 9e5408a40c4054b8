"""Turning raw sequences into tensors: token vocabularies, one-hot vectors, speech frames, fixed windows.

Shape legend: ``B`` batch, ``L`` sequence length, ``V`` vocabulary size, ``D`` vector width,
``T`` number of samples of a signal, ``F`` number of frames, ``W`` frame length in samples.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import torch
from torch import Tensor

from .validate import integer, number, tensor

__all__ = [
    "Vocab",
    "build_vocab",
    "concat_window",
    "frame_signal",
    "num_frames",
    "one_hot",
    "pad_sequences",
    "tokenize",
]

PAD, UNK = "<pad>", "<unk>"


def tokenize(text: str) -> list[str]:
    """Split ``text`` on whitespace: ``"the cat sat"`` → ``["the", "cat", "sat"]``, ``"猫 坐在 垫子 上"`` →
    ``["猫", "坐在", "垫子", "上"]``. (Chinese is not written with spaces; the course's examples are already
    segmented into words, which is the job of a word segmenter in a real pipeline.)"""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return text.split()


def _as_tokens(tokens: str | Iterable[str]) -> list[str]:
    if isinstance(tokens, str):
        return tokenize(tokens)
    tokens = list(tokens)
    for t in tokens:
        if not isinstance(t, str):
            raise TypeError(f"tokens must be strings, got {type(t).__name__} ({t!r})")
    return tokens


class Vocab:
    """A fixed map between tokens and integer indices ``0 .. V-1``.

    Build it with :func:`build_vocab`. The special tokens come first: ``<pad>`` (index 0, for padding) and
    ``<unk>`` (index 1), which stands for every token that was not in the vocabulary when it was built.

    Attributes:
        itos: list of tokens, ``itos[i]`` is the token with index ``i``.
        stoi: dict from token to index.
    """

    def __init__(self, itos: Sequence[str], *, unk_token: str | None = UNK, pad_token: str | None = PAD):
        itos = list(itos)
        if len(set(itos)) != len(itos):
            duplicates = sorted({t for t in itos if itos.count(t) > 1})
            raise ValueError(f"a vocabulary cannot list a token twice, got duplicates {duplicates}")
        for name, special in (("unk_token", unk_token), ("pad_token", pad_token)):
            if special is not None and not isinstance(special, str):
                raise TypeError(f"{name} must be a str or None, got {type(special).__name__} {special!r}")
            if special is not None and special not in itos:
                raise ValueError(f"{name}={special!r} is not in the vocabulary")
        self.itos = itos
        self.stoi = {t: i for i, t in enumerate(itos)}
        self.unk_token, self.pad_token = unk_token, pad_token

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: object) -> bool:
        return token in self.stoi

    def __repr__(self) -> str:
        head = ", ".join(repr(t) for t in self.itos[:6])
        return f"Vocab(size={len(self)}, tokens=[{head}{', ...' if len(self) > 6 else ''}])"

    @property
    def unk_index(self) -> int | None:
        """Index of ``<unk>`` (None if the vocabulary has no unknown token)."""
        return None if self.unk_token is None else self.stoi[self.unk_token]

    @property
    def pad_index(self) -> int | None:
        """Index of ``<pad>`` (None if the vocabulary has no padding token)."""
        return None if self.pad_token is None else self.stoi[self.pad_token]

    def encode(self, tokens: str | Iterable[str]) -> Tensor:
        """Indices ``(L,)`` (int64) of ``tokens``; a string is split on whitespace first.

        Tokens missing from the vocabulary map to ``<unk>``; without an unknown token they raise ``KeyError``.
        """
        tokens = _as_tokens(tokens)
        indices = []
        for t in tokens:
            if t in self.stoi:
                indices.append(self.stoi[t])
            elif self.unk_token is not None:
                indices.append(self.stoi[self.unk_token])
            else:
                raise KeyError(f"token {t!r} is not in the vocabulary and the vocabulary has no unknown token")
        return torch.tensor(indices, dtype=torch.long)

    def decode(self, indices: Tensor | Iterable[int]) -> list[str]:
        """Tokens of a 1-D sequence of indices (the inverse of :meth:`encode` for known tokens)."""
        if isinstance(indices, Tensor):
            indices = tensor("indices", indices, integral=True, shape=(None,), layout="(L,)").tolist()
        out = []
        for n, i in enumerate(indices):
            if not 0 <= integer(f"indices[{n}]", i) < len(self):
                raise ValueError(f"index {i} is out of range for a vocabulary of size {len(self)}")
            out.append(self.itos[i])
        return out


def build_vocab(
    tokens: str | Iterable[str] | Iterable[Iterable[str]],
    *,
    min_freq: int = 1,
    specials: Sequence[str] = (PAD, UNK),
) -> Vocab:
    """Build a :class:`Vocab` from a corpus.

    Args:
        tokens: a whitespace-separated string, a list of tokens, or a list of sentences (each a string or a list
            of tokens). Works the same for English words and (pre-segmented) Chinese words.
        min_freq: tokens seen fewer times are left out (they will encode as ``<unk>``).
        specials: tokens placed first, in this order; include ``"<unk>"`` / ``"<pad>"`` to get those roles.

    The other tokens follow by decreasing frequency; ties keep the order of first appearance, so the same corpus
    always gives the same indices.
    """
    integer("min_freq", min_freq, minimum=1)
    if isinstance(tokens, str):
        flat = tokenize(tokens)
    else:
        flat = []
        for item in tokens:
            if isinstance(item, str):
                flat.extend(tokenize(item))  # a token has no whitespace, so this keeps single tokens intact
            else:
                flat.extend(_as_tokens(item))
    counts = Counter(flat)
    first_seen = {}
    for i, t in enumerate(flat):
        first_seen.setdefault(t, i)
    ordered = sorted((t for t in counts if t not in specials), key=lambda t: (-counts[t], first_seen[t]))
    itos = list(specials) + [t for t in ordered if counts[t] >= min_freq]
    return Vocab(
        itos,
        unk_token=UNK if UNK in specials else None,
        pad_token=PAD if PAD in specials else None,
    )


def one_hot(indices: Tensor, num_classes: int, *, dtype: torch.dtype = torch.float32) -> Tensor:
    """One-hot vectors ``(..., V)`` with ``V = num_classes``: ``out[..., i] = 1`` where ``i = indices[...]``.

    Equals ``torch.nn.functional.one_hot(indices, num_classes).to(dtype)`` (tested). The default dtype is
    ``float32`` rather than PyTorch's ``int64``, because the course multiplies one-hot vectors by weight
    matrices. The device follows ``indices``.
    """
    tensor("indices", indices, integral=True)
    integer("num_classes", num_classes, minimum=1)
    if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= num_classes):
        raise ValueError(
            f"indices must lie in [0, num_classes={num_classes}), got values from {int(indices.min())} "
            f"to {int(indices.max())}"
        )
    out = torch.zeros(*indices.shape, num_classes, dtype=dtype, device=indices.device)  # (..., V)
    return out.scatter_(-1, indices.long().unsqueeze(-1), 1)


def pad_sequences(sequences: Sequence[Tensor], padding_value: int | float = 0) -> tuple[Tensor, Tensor]:
    """Stack 1-D sequences of different lengths into one ``(B, L_max)`` tensor, padding at the end.

    Returns ``(padded, lengths)``: ``padded[b, :lengths[b]]`` is sequence ``b`` and the rest is ``padding_value``
    (use the vocabulary's ``pad_index`` for tokens, ``-100`` for targets the loss should skip). Equals
    ``torch.nn.utils.rnn.pad_sequence(sequences, batch_first=True, padding_value=...)`` plus the lengths.
    """
    if len(sequences) == 0:
        raise ValueError("sequences is empty: nothing to pad")
    for i, s in enumerate(sequences):
        tensor(f"sequences[{i}]", s, shape=(None,), layout="(L,)")
    first = sequences[0]
    lengths = torch.tensor([len(s) for s in sequences], dtype=torch.long)
    padded = torch.full((len(sequences), int(lengths.max())), padding_value, dtype=first.dtype, device=first.device)
    for b, s in enumerate(sequences):
        padded[b, : len(s)] = s
    return padded, lengths


def _samples(name: str, ms: float, sample_rate: int) -> int:
    number(name, ms, minimum=0, strict_minimum=True)  # milliseconds
    n = round(sample_rate * ms / 1000)
    if n < 1:
        raise ValueError(f"{name}={ms} ms is shorter than one sample at sample_rate={sample_rate} Hz")
    return n


def num_frames(num_samples: int, frame_len: int, hop_len: int) -> int:
    """How many whole frames of ``frame_len`` samples, started every ``hop_len`` samples, fit in ``num_samples``:
    ``1 + (num_samples - frame_len) // hop_len`` (0 if not even one fits). No padding at either end."""
    integer("num_samples", num_samples, minimum=0)
    integer("frame_len", frame_len, minimum=1)
    integer("hop_len", hop_len, minimum=1)
    if num_samples < frame_len:
        return 0
    return 1 + (num_samples - frame_len) // hop_len


def frame_signal(signal: Tensor, sample_rate: int, frame_ms: float = 25, hop_ms: float = 10) -> Tensor:
    """Cut a signal into overlapping frames: ``(..., T)`` → ``(..., F, W)``.

    A frame holds ``W = round(sample_rate * frame_ms / 1000)`` samples and a new frame starts every
    ``round(sample_rate * hop_ms / 1000)`` samples. Only whole frames are kept (no padding), so
    ``F = 1 + (T - W) // hop``: one second at 16 kHz with 25 ms frames every 10 ms gives 98 frames of 400 samples.
    The result is a view of ``signal`` (no copy); device and dtype follow it.
    """
    tensor("signal", signal, min_dim=1, layout="(..., T)")
    integer("sample_rate", sample_rate, minimum=1)  # samples per second
    frame_len = _samples("frame_ms", frame_ms, sample_rate)
    hop_len = _samples("hop_ms", hop_ms, sample_rate)
    total = signal.shape[-1]
    if total < frame_len:
        raise ValueError(
            f"signal has {total} samples ({1000 * total / sample_rate:g} ms at {sample_rate} Hz), fewer than one "
            f"frame of {frame_len} samples ({frame_ms} ms)"
        )
    return signal.unfold(-1, frame_len, hop_len)  # (..., F, W)


def concat_window(x: Tensor, radius: int) -> Tensor:
    """Fixed-window context: for every position, the vectors of the ``radius`` positions before it, itself and the
    ``radius`` positions after it, concatenated: ``(B, L, D)`` → ``(B, L, (2 * radius + 1) * D)``.

    Positions outside the sequence are zero vectors. Block ``j`` (``j = 0 .. 2r``) of output position ``i`` holds
    ``x[:, i - radius + j]``. This is the classic way to give a per-position classifier some context, and its
    limit: it sees exactly ``2 * radius + 1`` positions, however long the sequence.
    """
    tensor("x", x, shape=(None,) * 3, layout="(B, L, D)")
    integer("radius", radius, minimum=0)
    length = x.shape[1]
    padded = torch.nn.functional.pad(x, (0, 0, radius, radius))  # (B, L + 2r, D)
    blocks = [padded[:, j : j + length] for j in range(2 * radius + 1)]  # each (B, L, D)
    return torch.cat(blocks, dim=-1)  # (B, L, (2r + 1) D)
