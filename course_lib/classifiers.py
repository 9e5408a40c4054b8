r"""Two sequence classifiers (notebook 11): a Transformer encoder with a class token, and an order-blind baseline.

:class:`SequenceClassifier` embeds tokens, adds positions (sinusoidal, learned or none), runs a
:class:`course_lib.models.TransformerEncoder` and classifies the class token's output (or the mean of the real
tokens' outputs). :class:`BagOfEmbeddings` averages the embeddings, so no reordering of a sequence can change its
answer: on a task decided by order it stays at chance.

Shape legend: ``B`` batch, ``L`` sequence length (``L' = L + 1`` with a class token), ``D`` model width, ``H``
heads, ``V`` vocabulary size, ``C`` number of classes. Masks are boolean, **True = may attend**.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .masks import expand_mask
from .models import TransformerEncoder
from .positional import LearnedPositionalEmbedding, sinusoidal_encoding
from .validate import flag, integer, token_ids

__all__ = ["BagOfEmbeddings", "SequenceClassifier"]


def _token_mask(tokens: Tensor, pad_index: int, vocab_size: int) -> Tensor:
    token_ids("tokens", tokens, vocab_size)  # (B, L) integer ids in [0, V): an id >= V names no embedding row
    return tokens != pad_index  # (B, L), True = a real token


class SequenceClassifier(nn.Module):
    """Tokens → embeddings (+ positions) → :class:`TransformerEncoder` → one vector per sequence → class logits.

    Args:
        vocab_size: number of token ids ``V``; id ``pad_index`` marks padding (masked out of attention and pooling).
        num_classes: number of classes ``C``.
        d_model, num_heads, num_layers, d_ff, dropout, activation, norm_first: those of :class:`TransformerEncoder`.
        max_len: longest sequence (needed by learned positions; the sinusoidal table is built this long).
        positions: ``"sinusoidal"`` (fixed table added to the embeddings), ``"learned"``
            (:class:`course_lib.positional.LearnedPositionalEmbedding`) or ``None`` (no positions: the model is
            then blind to order, as a bag of embeddings is).
        pooling: ``"cls"`` (a learned class token in front; its output is classified, as in BERT and ViT) or
            ``"mean"`` (the mean of the real tokens' outputs).
        pad_index: the id of the padding token.

    Forward ``(x, mask=None, return_weights=False)``: tokens ``x`` ``(B, L)`` integer → logits
    ``(B, C)``, and with ``return_weights`` the list of per-block attention weights ``(B, H, L', L')``
    (``L' = L + 1`` with ``"cls"``: position 0 is the class token). See :meth:`forward` for ``mask``.
    """

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        d_model: int = 32,
        num_heads: int = 2,
        num_layers: int = 2,
        d_ff: int | None = None,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = True,
        max_len: int = 64,
        positions: str | None = "sinusoidal",
        pooling: str = "cls",
        pad_index: int = 0,
    ):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("num_classes", num_classes), ("max_len", max_len)):
            integer(name, value, minimum=1)
        if positions not in ("sinusoidal", "learned", None):
            raise ValueError(f"positions must be 'sinusoidal', 'learned' or None, got {positions!r}")
        if pooling not in ("cls", "mean"):
            raise ValueError(f"pooling must be 'cls' or 'mean', got {pooling!r}")
        self.positions, self.pooling, self.pad_index = positions, pooling, pad_index
        self.max_len = max_len
        self.embedding = nn.Embedding(vocab_size, d_model)
        n_positions = max_len + (pooling == "cls")
        if positions == "sinusoidal":  # a fixed table, not a parameter: a non-persistent buffer follows .to(device)
            self.register_buffer("position_table", sinusoidal_encoding(n_positions, d_model), persistent=False)
        elif positions == "learned":
            self.position_embedding = LearnedPositionalEmbedding(n_positions, d_model)
        self.cls_token = nn.Parameter(torch.randn(1, 1, d_model)) if pooling == "cls" else None
        self.encoder = TransformerEncoder(d_model, num_heads, num_layers, d_ff, dropout, activation, norm_first)
        self.head = nn.Linear(d_model, num_classes)

    def embed(self, tokens: Tensor) -> tuple[Tensor, Tensor]:
        """The encoder's input ``(B, L', D)`` (class token first with ``"cls"``, positions added) and ``valid``
        ``(B, L')``, True at real positions. ``L' = L + 1`` with ``"cls"``, else ``L``."""
        valid = _token_mask(tokens, self.pad_index, self.embedding.num_embeddings)  # (B, L)
        B, L = tokens.shape
        if L > self.max_len:
            raise ValueError(f"tokens has length L={L} > max_len={self.max_len} (tokens shape {tuple(tokens.shape)})")
        x = self.embedding(tokens)  # (B, L, D)
        if self.cls_token is not None:  # the class token goes first and is always valid
            x = torch.cat([self.cls_token.expand(B, 1, -1), x], dim=1)  # (B, L + 1, D)
            valid = torch.cat([valid.new_ones(B, 1), valid], dim=1)  # (B, L + 1)
        if self.positions == "sinusoidal":
            x = x + self.position_table[: x.shape[1]].to(x.dtype)
        elif self.positions == "learned":
            x = self.position_embedding(x)
        return x, valid

    def forward(
        self, x: Tensor, mask: Tensor | None = None, return_weights: bool = False
    ) -> Tensor | tuple[Tensor, list[Tensor]]:
        """Tokens ``x (B, L)`` → logits ``(B, C)`` (and the per-block weights with ``return_weights``).

        ``mask``: optional boolean ``(B, L', L')`` or ``(L', L')``, True = may attend, combined with the padding
        mask (both must allow a pair); e.g. to hide some tokens from the class token in an experiment.
        """
        h, valid = self.embed(x)  # (B, L', D), (B, L')
        allowed = valid[:, None, :]  # (B, 1, L'): the padding mask, the same for every query
        if mask is not None:
            allowed = allowed & expand_mask(mask, (h.shape[0], h.shape[1], h.shape[1]))  # (B, L', L')
        flag("return_weights", return_weights)
        h, weights = self.encoder._forward(h, allowed[:, None])  # (B, L', D); the mask (B, 1, L' or 1, L') per head
        if self.pooling == "cls":
            pooled = h[:, 0]  # (B, D): the class token's output
        else:
            w = valid[..., None].to(h.dtype)  # (B, L, 1)
            pooled = (h * w).sum(1) / w.sum(1).clamp_min(1)  # (B, D): mean over the real tokens
        logits = self.head(pooled)  # (B, C)
        return (logits, weights) if return_weights else logits


class BagOfEmbeddings(nn.Module):
    """The order-blind baseline: the mean of the real tokens' embeddings, then a small MLP.

    Any reordering of a sequence's tokens gives the same logits, so on a task decided by order it cannot beat
    chance. Forward: ``tokens`` ``(B, L)`` integer (``pad_index`` = padding) → logits ``(B, C)``.
    """

    def __init__(self, vocab_size: int, num_classes: int, d_model: int = 32, hidden: int = 64, pad_index: int = 0):
        super().__init__()
        for name, value in (
            ("vocab_size", vocab_size),
            ("num_classes", num_classes),
            ("d_model", d_model),
            ("hidden", hidden),
        ):
            integer(name, value, minimum=1)
        self.pad_index = integer("pad_index", pad_index, minimum=0)
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, hidden), nn.ReLU(), nn.Linear(hidden, num_classes))

    def forward(self, tokens: Tensor) -> Tensor:
        valid = _token_mask(tokens, self.pad_index, self.embedding.num_embeddings)[..., None].float()  # (B, L, 1)
        mean = (self.embedding(tokens) * valid).sum(1) / valid.sum(1).clamp_min(1)  # (B, D)
        return self.mlp(mean)  # (B, C)
