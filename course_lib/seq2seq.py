r"""An encoder–decoder Transformer from the course's parts (notebook 14): decoder blocks with cross-attention.

A decoder block has three sublayers, each with a residual connection and a LayerNorm: causal self-attention over the
target so far, **cross-attention** (交叉注意力) whose queries come from the target and whose keys and values come from
the encoder's output ``memory``, and the feed-forward network:

.. math::  \text{post-LN:}\quad h_1 = \operatorname{LN}_1(x + \operatorname{SA}(x)),\;
           h_2 = \operatorname{LN}_2(h_1 + \operatorname{CA}(h_1, m)),\;
           y = \operatorname{LN}_3(h_2 + \operatorname{FFN}(h_2))

(pre-LN: ``x + SA(LN_1(x))``, and so on). :class:`EncoderDecoder` equals ``torch.nn.Transformer(batch_first=True)``
with copied weights in evaluation mode (tested, both LayerNorm placements, all three masks); :class:`Translator` adds
token embeddings, sinusoidal positions and an output layer.

Shape legend: ``B`` batch, ``S`` source length, ``L`` target length, ``D`` model width, ``H`` heads, ``V`` target
vocabulary size. Masks are boolean, **True = may attend** (PyTorch's ``*_key_padding_mask`` and boolean ``*_mask``
mean the opposite): ``src_mask`` ``(B, 1, S)`` or ``(S, S)``, ``tgt_mask`` ``(L, L)`` or ``(B, L, L)``, ``memory_mask``
``(B, 1, S)`` or ``(B, L, S)``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from .masks import expand_mask
from .models import TransformerEncoder, TransformerEncoderBlock, _activation_name
from .multihead import MultiHeadAttention
from .positional import sinusoidal_encoding
from .validate import flag, instance, integer, shape_of, tensor, token_ids

__all__ = ["EncoderDecoder", "TransformerDecoder", "TransformerDecoderBlock", "Translator"]


def _copy(pairs: tuple[tuple[nn.Module, nn.Module], ...]) -> None:
    """Copy every parameter of each ``theirs`` into the same-named parameter of ``mine``."""
    with torch.no_grad():
        for mine, theirs in pairs:
            for name, param in theirs.named_parameters():
                getattr(mine, name).copy_(param)


class TransformerDecoderBlock(TransformerEncoderBlock):
    """The encoder block (:class:`course_lib.models.TransformerEncoderBlock`, same arguments) plus cross-attention.

    Adds ``cross_attn`` (a :class:`MultiHeadAttention`; PyTorch calls it ``multihead_attn``), ``norm3`` and
    ``dropout3``. Forward ``(x, memory, mask=None, memory_mask=None, return_weights=False)``: ``x`` ``(B, L, D)``,
    ``memory`` ``(B, S, D)``; returns ``(B, L, D)``, and with ``return_weights`` also the self-attention weights
    ``(B, H, L, L)`` and the cross-attention weights ``(B, H, L, S)``. Taught in notebook 14.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int | None = None, dropout: float = 0.1,
                 activation: str = "relu", norm_first: bool = False, layer_norm_eps: float = 1e-5,
                 bias: bool = True):  # fmt: skip
        super().__init__(d_model, num_heads, d_ff, dropout, activation, norm_first, layer_norm_eps, bias)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, bias=bias)
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout3 = nn.Dropout(dropout)

    def forward(self, x: Tensor, memory: Tensor, mask: Tensor | None = None, memory_mask: Tensor | None = None,
                return_weights: bool = False) -> Tensor | tuple[Tensor, Tensor, Tensor]:  # fmt: skip
        mask, memory_mask = self._check_pair(x, memory, mask, memory_mask)  # the edge: every check, once
        flag("return_weights", return_weights)
        x, self_weights, cross_weights = self._forward(x, memory, mask, memory_mask)
        return (x, self_weights, cross_weights) if return_weights else x

    def _check_pair(self, x: object, memory: object, mask: object, memory_mask: object,
                    names: tuple[str, ...] = ("x", "memory", "mask", "memory_mask")) -> tuple:  # fmt: skip
        """The edge of a decoder block (and of a decoder): ``x`` ``(B, L, D)``, ``memory`` ``(B, S, D)`` and the two
        masks expanded for ``(B, H, L, L)`` and ``(B, H, L, S)``; messages call the four arguments ``names``."""
        mask = self._check(x, mask, names[0], names[2])
        layout, dtype = f"(B, S, d_model={self.d_model})", self.linear1.weight.dtype
        tensor(names[1], memory, shape=(None, None, self.d_model), layout=layout, dtype=dtype)
        (B, L, _), (b, S, _) = x.shape, memory.shape
        if b != B:
            raise ValueError(f"{names[0]} and {names[1]} must have the same batch size B, got {names[0]} "
                             f"{shape_of(x)} and {names[1]} {shape_of(memory)}")  # fmt: skip
        if memory_mask is not None:
            memory_mask = expand_mask(memory_mask, (B, self.num_heads, L, S), heads=True, name=names[3])
        return mask, memory_mask

    def _forward(self, x: Tensor, memory: Tensor, mask: Tensor | None, memory_mask: Tensor | None):
        """The arithmetic of :meth:`forward` on checked inputs: ``(B, L, D)``, ``(B, H, L, L)``, ``(B, H, L, S)``."""
        if self.norm_first:  # pre-LN: x + f(LN(x)) for each sublayer
            h = self.norm1(x)
            attended, self_weights = self.self_attn._forward(h, h, h, mask)  # (B, L, D), (B, H, L, L)
            x = x + self.dropout1(attended)
            read, cross_weights = self.cross_attn._forward(self.norm2(x), memory, memory, memory_mask)
            x = x + self.dropout2(read)  # (B, L, D): what the target read from the source
            x = x + self.dropout3(self.feed_forward(self.norm3(x)))
        else:  # post-LN: LN(x + f(x))
            attended, self_weights = self.self_attn._forward(x, x, x, mask)
            x = self.norm1(x + self.dropout1(attended))
            read, cross_weights = self.cross_attn._forward(x, memory, memory, memory_mask)  # (B, L, D), (B, H, L, S)
            x = self.norm2(x + self.dropout2(read))
            x = self.norm3(x + self.dropout3(self.feed_forward(x)))
        return x, self_weights, cross_weights

    @classmethod
    def from_torch(cls, layer: nn.TransformerDecoderLayer) -> TransformerDecoderBlock:
        """A block holding a copy of ``layer``'s weights (same device and dtype): equal outputs in eval mode."""
        instance("layer", layer, nn.TransformerDecoderLayer, "a torch.nn.TransformerDecoderLayer")
        weight = layer.linear1.weight
        new = cls(layer.self_attn.embed_dim, layer.self_attn.num_heads, d_ff=layer.linear1.out_features,
                  dropout=layer.dropout.p, activation=_activation_name(layer.activation), norm_first=layer.norm_first,
                  layer_norm_eps=layer.norm1.eps, bias=layer.linear1.bias is not None,
                  ).to(device=weight.device, dtype=weight.dtype)  # fmt: skip
        new.self_attn = MultiHeadAttention.from_torch(layer.self_attn)
        new.cross_attn = MultiHeadAttention.from_torch(layer.multihead_attn)
        _copy(((new.linear1, layer.linear1), (new.linear2, layer.linear2), (new.norm1, layer.norm1),
               (new.norm2, layer.norm2), (new.norm3, layer.norm3)))  # fmt: skip
        return new


class TransformerDecoder(nn.Module):
    """A stack of :class:`TransformerDecoderBlock` s and a final LayerNorm (``final_norm``, as ``nn.Transformer``).

    Forward ``(x, memory, mask=None, memory_mask=None, return_weights=False)``: ``(B, L, D)`` → ``(B, L, D)``, and with
    ``return_weights`` also two lists, one ``(B, H, L, L)`` self-attention and one ``(B, H, L, S)`` cross-attention
    weight tensor per block.
    """

    def __init__(self, d_model: int, num_heads: int, num_layers: int, d_ff: int | None = None, dropout: float = 0.1,
                 activation: str = "relu", norm_first: bool = False, final_norm: bool = True,
                 layer_norm_eps: float = 1e-5):  # fmt: skip
        super().__init__()
        integer("num_layers", num_layers, minimum=1)
        self.layers = nn.ModuleList(
            TransformerDecoderBlock(d_model, num_heads, d_ff, dropout, activation, norm_first, layer_norm_eps)
            for _ in range(num_layers)
        )
        self.norm = nn.LayerNorm(d_model, eps=layer_norm_eps) if flag("final_norm", final_norm) else None

    def forward(self, x: Tensor, memory: Tensor, mask: Tensor | None = None, memory_mask: Tensor | None = None,
                return_weights: bool = False) -> Tensor | tuple[Tensor, list[Tensor], list[Tensor]]:  # fmt: skip
        mask, memory_mask = self.layers[0]._check_pair(x, memory, mask, memory_mask)  # the edge, once for all blocks
        flag("return_weights", return_weights)
        x, self_weights, cross_weights = self._forward(x, memory, mask, memory_mask)
        return (x, self_weights, cross_weights) if return_weights else x

    def _forward(self, x: Tensor, memory: Tensor, mask: Tensor | None, memory_mask: Tensor | None):
        """The arithmetic of :meth:`forward` on checked inputs: ``(B, L, D)`` and the two lists of weights."""
        self_weights, cross_weights = [], []
        for layer in self.layers:
            x, sw, cw = layer._forward(x, memory, mask, memory_mask)  # sw (B, H, L, L), cw (B, H, L, S)
            self_weights.append(sw)
            cross_weights.append(cw)
        if self.norm is not None:
            x = self.norm(x)
        return x, self_weights, cross_weights


class EncoderDecoder(nn.Module):
    """An encoder (:class:`course_lib.models.TransformerEncoder`) and a :class:`TransformerDecoder`, each ending in a
    LayerNorm: the layout of ``nn.Transformer``, which :meth:`from_torch` copies. Arguments as ``nn.Transformer``.

    Forward ``(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, return_weights=False)``: ``src`` ``(B, S, D)``
    and ``tgt`` ``(B, L, D)`` (vectors, not token ids) → ``(B, L, D)``; with ``return_weights`` also a dict of weight
    lists ``"encoder"`` ``(B, H, S, S)``, ``"decoder"`` ``(B, H, L, L)`` and ``"cross"`` ``(B, H, L, S)``, one per
    block. Masks as in the module's docstring (True = may attend); ``tgt_mask`` is not made causal for you.
    """

    def __init__(self, d_model: int = 512, num_heads: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, d_ff: int | None = 2048, dropout: float = 0.1, activation: str = "relu",
                 norm_first: bool = False, layer_norm_eps: float = 1e-5):  # fmt: skip
        super().__init__()
        settings = dict(d_ff=d_ff, dropout=dropout, activation=activation, norm_first=norm_first,
                        layer_norm_eps=layer_norm_eps)  # fmt: skip
        self.encoder = TransformerEncoder(d_model, num_heads, num_encoder_layers, final_norm=True, **settings)
        self.decoder = TransformerDecoder(d_model, num_heads, num_decoder_layers, final_norm=True, **settings)

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        return_weights: bool = False,
    ) -> Tensor | tuple[Tensor, dict]:
        src_mask = self.encoder.layers[0]._check(src, src_mask, "src", "src_mask")  # the edge: every check, once
        names = ("tgt", "src", "tgt_mask", "memory_mask")  # the memory has src's shape (B, S, D)
        tgt_mask, memory_mask = self.decoder.layers[0]._check_pair(tgt, src, tgt_mask, memory_mask, names)
        flag("return_weights", return_weights)
        memory, encoder_weights = self.encoder._forward(src, src_mask)  # (B, S, D)
        out, decoder_weights, cross_weights = self.decoder._forward(tgt, memory, tgt_mask, memory_mask)
        weights = {"encoder": encoder_weights, "decoder": decoder_weights, "cross": cross_weights}
        return (out, weights) if return_weights else out

    @classmethod
    def from_torch(cls, model: nn.Transformer) -> EncoderDecoder:
        """A copy of ``model``'s weights. Pass masks to ``model`` the PyTorch way (``src_key_padding_mask=~valid``,
        ``tgt_mask=~causal``, ...) and to the copy the course's way; in eval mode the outputs are equal."""
        instance("model", model, nn.Transformer, "a torch.nn.Transformer")
        first = model.encoder.layers[0]
        new = cls(first.self_attn.embed_dim, first.self_attn.num_heads, len(model.encoder.layers),
                  len(model.decoder.layers), first.linear1.out_features, first.dropout.p,
                  _activation_name(first.activation), first.norm_first, first.norm1.eps,
                  ).to(device=first.linear1.weight.device, dtype=first.linear1.weight.dtype)  # fmt: skip
        new.encoder = TransformerEncoder.from_torch(model.encoder)
        new.decoder.layers = nn.ModuleList(TransformerDecoderBlock.from_torch(layer) for layer in model.decoder.layers)
        _copy(((new.decoder.norm, model.decoder.norm),))
        return new


class Translator(nn.Module):
    """A sequence-to-sequence model: token embeddings plus sinusoidal positions (not scaled by ``sqrt(D)`` as in Vaswani
    et al.: in a narrow model that would drown the positions, which copying digits in order needs), an
    :class:`EncoderDecoder`, and a linear layer to ``V`` target logits. Token ``pad_index`` is padding on both sides.

    ``forward(src, tgt, return_weights=False)``: source ids ``(B, S)`` and target ids ``(B, L)`` (the target so far,
    starting with a start token) → logits ``(B, L, V)`` for the next target token at every position, computed with the
    causal mask and both padding masks built here. :meth:`encode` and :meth:`step_function` serve decoding (taught in
    notebook 14).
    """

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, d_model: int = 64, num_heads: int = 4,
                 num_encoder_layers: int = 2, num_decoder_layers: int = 2, d_ff: int | None = None,
                 dropout: float = 0.0, norm_first: bool = True, pad_index: int = 0, max_len: int = 64):  # fmt: skip
        super().__init__()
        sizes = {"src_vocab_size": src_vocab_size, "tgt_vocab_size": tgt_vocab_size, "d_model": d_model}
        for name, value in (*sizes.items(), ("max_len", max_len)):
            integer(name, value, minimum=1)
        if integer("pad_index", pad_index, minimum=0) >= min(src_vocab_size, tgt_vocab_size):
            raise ValueError(f"pad_index must be an id of both vocabularies (< {min(src_vocab_size, tgt_vocab_size)}), "
                             f"got {pad_index}")  # fmt: skip
        self.src_vocab_size, self.tgt_vocab_size = src_vocab_size, tgt_vocab_size
        self.pad_index, self.max_len, self.d_model = pad_index, max_len, d_model
        self.src_embed = nn.Embedding(src_vocab_size, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, d_model)
        self.register_buffer("positions", sinusoidal_encoding(max_len, d_model), persistent=False)  # fixed: (P, D)
        d_ff = 4 * d_model if d_ff is None else d_ff
        layers = (num_encoder_layers, num_decoder_layers)
        self.transformer = EncoderDecoder(d_model, num_heads, *layers, d_ff, dropout, norm_first=norm_first)
        self.out = nn.Linear(d_model, tgt_vocab_size)

    def _ids(self, name: str, ids: object, vocab_size: int) -> Tensor:
        """The edge of every method: token ids ``(B, length)`` in ``[0, vocab_size)``, at most ``max_len`` of them."""
        if token_ids(name, ids, vocab_size).shape[1] > self.max_len:
            raise ValueError(f"{name} of {ids.shape[1]} tokens is longer than max_len={self.max_len}")
        return ids

    def _embed(self, ids: Tensor, table: nn.Embedding) -> Tensor:
        return table(ids) + self.positions[: ids.shape[1]].to(table.weight.dtype)

    def _encode(self, src: Tensor) -> tuple[Tensor, Tensor, list[Tensor]]:
        """Checked ``src`` → memory ``(B, S, D)``, the encoder's weights, the padding mask ``(B, 1, 1, S)``."""
        valid = (src != self.pad_index)[:, None, None, :]  # (B, 1, 1, S): real source tokens, for every query, head
        return *self.transformer.encoder._forward(self._embed(src, self.src_embed), valid), valid

    def _decode(self, tgt: Tensor, memory: Tensor, valid: Tensor) -> tuple[Tensor, list[Tensor], list[Tensor]]:
        """Checked ``tgt``, ``memory`` and mask ``(B, 1, 1, S)`` → logits ``(B, L, V)`` and the decoder's weights."""
        L = tgt.shape[1]  # the causal mask (L, L) and the target's padding mask (B, 1, 1, L): (B, 1, L, L)
        mask = torch.ones(L, L, dtype=torch.bool, device=tgt.device).tril() & (tgt != self.pad_index)[:, None, None, :]
        x, self_w, cross_w = self.transformer.decoder._forward(self._embed(tgt, self.tgt_embed), memory, mask, valid)
        return self.out(x), self_w, cross_w

    def encode(self, src: Tensor) -> tuple[Tensor, Tensor]:
        """Source ids ``(B, S)`` → ``(memory (B, S, D), valid (B, 1, S))``, ``valid`` True at real source tokens."""
        memory, _, valid = self._encode(self._ids("src", src, self.src_vocab_size))
        return memory, valid[:, 0]

    def decode(self, tgt: Tensor, memory: Tensor, valid: Tensor, return_weights: bool = False):
        """Target ids ``(B, L)`` read against an encoded source → logits ``(B, L, V)`` (and the decoder's weights)."""
        x = self._embed(self._ids("tgt", tgt, self.tgt_vocab_size), self.tgt_embed)  # checks memory and valid below
        names = ("tgt", "memory", "mask", "valid")
        _, valid = self.transformer.decoder.layers[0]._check_pair(x, memory, None, valid, names)
        logits, self_w, cross_w = self._decode(tgt, memory, valid)
        return (logits, {"decoder": self_w, "cross": cross_w}) if flag("return_weights", return_weights) else logits

    def forward(self, src: Tensor, tgt: Tensor, return_weights: bool = False):
        self._ids("src", src, self.src_vocab_size), self._ids("tgt", tgt, self.tgt_vocab_size)
        if src.shape[0] != tgt.shape[0]:
            raise ValueError(f"src and tgt must have the same batch size B, got {shape_of(src)} and {shape_of(tgt)}")
        flag("return_weights", return_weights)
        memory, encoder_weights, valid = self._encode(src)
        logits, self_w, cross_w = self._decode(tgt, memory, valid)
        return (logits, {"encoder": encoder_weights, "decoder": self_w, "cross": cross_w}) if return_weights else logits

    def step_function(self, src: Tensor) -> Callable[[Tensor, Tensor], Tensor]:
        """Encode ``src`` ``(B, S)`` once; return ``next_log_probs(tokens (N, t), source (N,)) -> (N, V)``, the
        log-probabilities of the next target token after each prefix, row ``i`` read against source ``source[i]``:
        what :func:`course_lib.generation.beam_search` and its relatives call."""
        memory, _, valid = self._encode(self._ids("src", src, self.src_vocab_size))

        def next_log_probs(tokens: Tensor, source: Tensor) -> Tensor:
            self._ids("tokens", tokens, self.tgt_vocab_size)
            tensor("source", source, integral=True, shape=(len(tokens),), layout=f"(N={len(tokens)},)")
            if source.numel() and not 0 <= int(source.min()) <= int(source.max()) < len(memory):
                raise ValueError(f"source must hold indices of the B={len(memory)} sources, got {source.tolist()}")
            logits = self._decode(tokens, memory[source], valid[source])[0][:, -1]  # (N, V)
            return torch.log_softmax(logits.float(), dim=-1)

        return next_log_probs
