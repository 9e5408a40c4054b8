r"""A Transformer encoder assembled from the course's parts (notebook 11); the classifiers built on it are in
:mod:`course_lib.classifiers`.

One encoder block is two sublayers, each wrapped in a residual connection and a LayerNorm:

.. math::  \text{post-LN (Vaswani et al., 2017):}\quad
           h = \operatorname{LN}_1(x + \operatorname{MHA}(x)), \qquad y = \operatorname{LN}_2(h + \operatorname{FFN}(h))

.. math::  \text{pre-LN (Wang et al., 2019; GPT-2, Radford et al., 2019; analysed by Xiong et al., 2020):}\quad
           h = x + \operatorname{MHA}(\operatorname{LN}_1(x)), \qquad y = h + \operatorname{FFN}(\operatorname{LN}_2(h))

with :math:`\operatorname{FFN}(h) = \sigma(h W_1 + b_1) W_2 + b_2` applied to every position separately
(``sigma`` ReLU or GELU) and dropout on each sublayer's output before it is added to the residual stream.
The attention is :class:`course_lib.multihead.MultiHeadAttention`; with copied weights a block equals
``torch.nn.TransformerEncoderLayer(batch_first=True)`` in evaluation mode (tested, both ``norm_first`` settings,
ReLU and GELU, with a padding mask). In training mode the two differ in one place: PyTorch also applies dropout to
the attention weights, this block does not.

Shape legend: ``B`` batch, ``L`` sequence length, ``D`` model width (``d_model``), ``H`` heads, ``F`` width of
the feed-forward layer (``d_ff``).

Masks are boolean, **True = may attend** (the course's convention; ``nn.TransformerEncoderLayer``'s
``src_key_padding_mask`` means the opposite: True = padding).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .masks import expand_mask
from .multihead import MultiHeadAttention
from .validate import choice, flag, instance, integer, number, probability, tensor

__all__ = ["TransformerEncoder", "TransformerEncoderBlock"]

_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def _activation_name(activation: object) -> str:
    """'relu' or 'gelu' for the activation of an ``nn.TransformerEncoderLayer`` (a function or a module)."""
    if activation is F.relu or isinstance(activation, nn.ReLU):
        return "relu"
    if activation is F.gelu or (isinstance(activation, nn.GELU) and activation.approximate == "none"):
        return "gelu"
    return choice("activation", activation, tuple(_ACTIVATIONS))  # raises the one message for a bad activation


class TransformerEncoderBlock(nn.Module):
    """One Transformer encoder block: self-attention and a feed-forward network, each with residual and LayerNorm.

    Args:
        d_model: width ``D`` of the input and output vectors.
        num_heads: number of attention heads ``H`` (``d_model`` must be divisible by it).
        d_ff: width ``F`` of the feed-forward hidden layer (default ``4 * d_model``, as in the original).
        dropout: dropout probability on each sublayer's output and inside the feed-forward network.
        activation: ``"relu"`` (the original) or ``"gelu"`` (BERT, GPT, ViT).
        norm_first: ``False`` for post-LN (LayerNorm after each residual addition, the original),
            ``True`` for pre-LN (LayerNorm at the start of each sublayer's branch, most models since 2019).
        layer_norm_eps: the ``eps`` of both LayerNorms.
        bias: biases in the attention projections and the feed-forward layers.
        attention: the self-attention sublayer ``self_attn``, default ``MultiHeadAttention(d_model, num_heads,
            bias=bias)``; a subclass passes its own and overrides :meth:`_forward`, which calls it (in
            :class:`course_lib.decoder.DecoderBlock` a causal :class:`course_lib.grouped_query.GroupedQueryAttention`).

    Forward ``(x, mask=None, return_weights=False)``:
        ``x`` ``(B, L, D)``; ``mask`` boolean, True = may attend, in a shape :func:`course_lib.masks.expand_mask`
        accepts for a layer (a padding mask ``(B, 1, L)`` among them). Returns ``(B, L, D)``, and with
        ``return_weights`` also the attention weights ``(B, H, L, L)``.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int | None = None,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = False,
        layer_norm_eps: float = 1e-5,
        bias: bool = True,
        *,
        attention: nn.Module | None = None,
    ):
        super().__init__()
        d_ff = 4 * d_model if d_ff is None else d_ff
        for name, value in (("d_model", d_model), ("num_heads", num_heads), ("d_ff", d_ff)):
            integer(name, value, minimum=1)
        probability("dropout", dropout)
        number("layer_norm_eps", layer_norm_eps, minimum=0.0, strict_minimum=True)
        flag("bias", bias)
        self.activation = choice("activation", activation, tuple(_ACTIVATIONS))
        self.d_model, self.num_heads, self.d_ff = d_model, num_heads, d_ff
        self.norm_first = flag("norm_first", norm_first)
        instance("attention", attention, nn.Module, "a torch.nn.Module", optional=True)
        self.self_attn = MultiHeadAttention(d_model, num_heads, bias=bias) if attention is None else attention
        self.linear1 = nn.Linear(d_model, d_ff, bias=bias)  # W_1: D -> F
        self.linear2 = nn.Linear(d_ff, d_model, bias=bias)  # W_2: F -> D
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout = nn.Dropout(dropout)  # inside the feed-forward network
        self.dropout1 = nn.Dropout(dropout)  # on the attention branch
        self.dropout2 = nn.Dropout(dropout)  # on the feed-forward branch

    def feed_forward(self, x: Tensor) -> Tensor:
        """The position-wise MLP ``sigma(x W_1 + b_1) W_2 + b_2``: ``(B, L, D)`` → ``(B, L, F)`` → ``(B, L, D)``."""
        return self.linear2(self.dropout(_ACTIVATIONS[self.activation](self.linear1(x))))

    def _check(self, x: object, mask: object, name: str = "x", mask_name: str = "mask") -> Tensor | None:
        """The edge of a block (and of a stack of them): ``x`` ``(B, L, D)`` with this block's ``D`` and dtype, and
        the mask expanded for the scores ``(B, H, L, L)``; messages call them ``name`` and ``mask_name``."""
        layout, dtype = f"(B, L, d_model={self.d_model})", self.linear1.weight.dtype
        tensor(name, x, shape=(None, None, self.d_model), layout=layout, dtype=dtype)
        B, L, _ = x.shape
        return None if mask is None else expand_mask(mask, (B, self.num_heads, L, L), heads=True, name=mask_name)

    def forward(
        self, x: Tensor, mask: Tensor | None = None, return_weights: bool = False
    ) -> Tensor | tuple[Tensor, Tensor]:
        """``x (B, L, D)`` → ``(B, L, D)`` (and the weights ``(B, H, L, L)`` with ``return_weights``)."""
        mask = self._check(x, mask)  # the edge: every check, once
        flag("return_weights", return_weights)
        x, weights = self._forward(x, mask)
        return (x, weights) if return_weights else x

    def _forward(self, x: Tensor, mask: Tensor | None) -> tuple[Tensor, Tensor]:
        """The arithmetic of :meth:`forward` on checked inputs (``mask`` as :meth:`_check` returns it)."""
        if self.norm_first:  # pre-LN: x + f(LN(x))
            h = self.norm1(x)
            attended, weights = self.self_attn._forward(h, h, h, mask)  # (B, L, D), (B, H, L, L)
            x = x + self.dropout1(attended)
            x = x + self.dropout2(self.feed_forward(self.norm2(x)))
        else:  # post-LN: LN(x + f(x))
            attended, weights = self.self_attn._forward(x, x, x, mask)
            x = self.norm1(x + self.dropout1(attended))
            x = self.norm2(x + self.dropout2(self.feed_forward(x)))
        return x, weights

    @classmethod
    def from_torch(cls, layer: nn.TransformerEncoderLayer) -> TransformerEncoderBlock:
        """A block holding a copy of ``layer``'s weights (same device and dtype): equal outputs in eval mode.

        Pass masks to ``layer`` the PyTorch way: ``src_key_padding_mask = ~valid`` (True = padding), and to this
        block the course's way: ``mask = valid[:, None, :]`` (True = may attend).
        """
        instance("layer", layer, nn.TransformerEncoderLayer, "a torch.nn.TransformerEncoderLayer")
        weight = layer.linear1.weight
        new = cls(
            layer.self_attn.embed_dim,
            layer.self_attn.num_heads,
            d_ff=layer.linear1.out_features,
            dropout=layer.dropout.p,
            activation=_activation_name(layer.activation),
            norm_first=layer.norm_first,
            layer_norm_eps=layer.norm1.eps,
            bias=layer.linear1.bias is not None,
        ).to(device=weight.device, dtype=weight.dtype)
        new.self_attn = MultiHeadAttention.from_torch(layer.self_attn)
        with torch.no_grad():
            for mine, theirs in (
                (new.linear1, layer.linear1),
                (new.linear2, layer.linear2),
                (new.norm1, layer.norm1),
                (new.norm2, layer.norm2),
            ):
                for name, param in theirs.named_parameters():
                    getattr(mine, name).copy_(param)
        return new

    def extra_repr(self) -> str:
        return f"activation={self.activation!r}, norm_first={self.norm_first}"


class TransformerEncoder(nn.Module):
    """A stack of ``num_layers`` :class:`TransformerEncoderBlock` s, with a final LayerNorm for pre-LN stacks.

    In a pre-LN stack the residual stream itself is never normalised, so a last LayerNorm after the final block
    is standard (GPT-2, ViT); ``final_norm`` defaults to ``norm_first``. The other arguments are those of
    :class:`TransformerEncoderBlock`.

    Forward ``(x, mask=None, return_weights=False)``: ``x`` ``(B, L, D)`` → ``(B, L, D)``, and with
    ``return_weights`` also a list with one ``(B, H, L, L)`` weight tensor per block.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        num_layers: int,
        d_ff: int | None = None,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = False,
        final_norm: bool | None = None,
        layer_norm_eps: float = 1e-5,
    ):
        super().__init__()
        integer("num_layers", num_layers, minimum=1)
        self.layers = nn.ModuleList(
            TransformerEncoderBlock(d_model, num_heads, d_ff, dropout, activation, norm_first, layer_norm_eps)
            for _ in range(num_layers)
        )
        final_norm = norm_first if final_norm is None else flag("final_norm", final_norm)
        self.norm = nn.LayerNorm(d_model, eps=layer_norm_eps) if final_norm else None

    def forward(
        self, x: Tensor, mask: Tensor | None = None, return_weights: bool = False
    ) -> Tensor | tuple[Tensor, list[Tensor]]:
        """``x (B, L, D)`` → ``(B, L, D)`` (and per layer weights ``(B, H, L, L)`` with ``return_weights``)."""
        mask = self.layers[0]._check(x, mask)  # the edge: every block shares D, H and the dtype
        flag("return_weights", return_weights)
        x, all_weights = self._forward(x, mask)
        return (x, all_weights) if return_weights else x

    def _forward(self, x: Tensor, mask: Tensor | None) -> tuple[Tensor, list[Tensor]]:
        """The arithmetic of :meth:`forward` on checked inputs: ``(B, L, D)`` and one ``(B, H, L, L)`` per block."""
        all_weights = []
        for layer in self.layers:
            x, weights = layer._forward(x, mask)  # (B, L, D), (B, H, L, L)
            all_weights.append(weights)
        if self.norm is not None:
            x = self.norm(x)
        return x, all_weights

    @classmethod
    def from_torch(cls, encoder: nn.TransformerEncoder) -> TransformerEncoder:
        """A copy of an ``nn.TransformerEncoder`` (its layers and its optional final ``norm``)."""
        instance("encoder", encoder, nn.TransformerEncoder, "a torch.nn.TransformerEncoder")
        first = encoder.layers[0]
        new = cls(
            first.self_attn.embed_dim,
            first.self_attn.num_heads,
            len(encoder.layers),
            d_ff=first.linear1.out_features,
            dropout=first.dropout.p,
            activation=_activation_name(first.activation),
            norm_first=first.norm_first,
            final_norm=encoder.norm is not None,
            layer_norm_eps=first.norm1.eps,
        ).to(device=first.linear1.weight.device, dtype=first.linear1.weight.dtype)
        new.layers = nn.ModuleList(TransformerEncoderBlock.from_torch(layer) for layer in encoder.layers)
        if encoder.norm is not None:
            with torch.no_grad():
                new.norm.weight.copy_(encoder.norm.weight)
                new.norm.bias.copy_(encoder.norm.bias)
        return new
