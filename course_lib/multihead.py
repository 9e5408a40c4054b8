r"""Multi-head attention (notebook 06): ``H`` attention heads side by side, each on its own slice of the width.

Built from :func:`course_lib.attention.attend` (scaled dot-product attention without its checks: the layer checks its
inputs once, at its edge); :class:`MultiHeadAttention` equals
``torch.nn.MultiheadAttention`` with copied weights (:meth:`MultiHeadAttention.from_torch`).

Shape legend: ``B`` batch, ``H`` heads, ``L`` query length, ``S`` key length, ``D`` model width (``d_model``),
``Dk = D / H`` width of one head.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .attention import attend
from .masks import expand_mask
from .validate import flag, instance, integer, shape_of, tensor

__all__ = ["MultiHeadAttention", "merge_heads", "split_heads"]


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """Cut the last dimension into ``num_heads`` equal slices and move the heads forward.

    ``(B, L, D)`` → ``(B, H, L, Dk)`` with ``Dk = D / H``: head ``h`` gets columns ``h*Dk : (h+1)*Dk``.
    """
    integer("num_heads", num_heads, minimum=1)
    tensor("x", x, shape=(None,) * 3, layout="(B, L, D)")
    if x.shape[-1] % num_heads:
        raise ValueError(f"the width D={x.shape[-1]} of x {shape_of(x)} is not divisible by num_heads={num_heads}")
    return _split(x, num_heads)


def merge_heads(x: Tensor) -> Tensor:
    """Inverse of :func:`split_heads`: concatenate the heads side by side, ``(B, H, L, Dk)`` → ``(B, L, H*Dk)``."""
    tensor("x", x, shape=(None,) * 4, layout="(B, H, L, Dk)")
    return _merge(x)


def _split(x: Tensor, num_heads: int) -> Tensor:
    """:func:`split_heads` unchecked, for layers that checked ``x`` at their edge."""
    B, L, D = x.shape
    return x.view(B, L, num_heads, D // num_heads).transpose(1, 2)  # (B, L, H, Dk) -> (B, H, L, Dk)


def _merge(x: Tensor) -> Tensor:
    """:func:`merge_heads` unchecked."""
    B, H, L, Dk = x.shape
    return x.transpose(1, 2).reshape(B, L, H * Dk)  # (B, L, H, Dk) -> (B, L, D)


class MultiHeadAttention(nn.Module):
    r"""Multi-head attention built from :func:`scaled_dot_product_attention`, equal to ``nn.MultiheadAttention``.

    .. math::  \operatorname{MHA}(X_q, X_{kv}) = \operatorname{Concat}(\text{head}_1, \dots, \text{head}_H)\, W_o,
               \qquad \text{head}_h = \operatorname{Attention}(X_q W_q^{(h)},\; X_{kv} W_k^{(h)},\; X_{kv} W_v^{(h)})

    The ``H`` per-head projections ``W_q^{(h)}`` (``(D, d_k)`` each) are stored side by side as one
    ``nn.Linear(D, D)`` (``w_q``; likewise ``w_k``, ``w_v``): head ``h`` uses output columns ``h*Dk:(h+1)*Dk``,
    so one matrix product followed by a reshape (:func:`split_heads`) computes every head at once.
    ``w_o`` is the output projection ``W_o`` that mixes the concatenated heads.

    Args:
        d_model: model width ``D`` of queries, keys and values (and of the output).
        num_heads: number of heads ``H``; ``d_model`` must be divisible by it (else ``ValueError``).
        bias: add a bias to the four projections (default True, as ``nn.MultiheadAttention``).

    Forward ``(query, key=None, value=None, mask=None, return_weights=False)``:
        - ``query`` ``(B, L, D)``; ``key`` ``(B, S, D)``; ``value`` ``(B, S, D)``. Inputs are batch first.
        - self-attention when ``key`` and ``value`` are omitted (both default to ``query``);
          cross-attention when ``key`` is given (``value`` defaults to ``key``); ``S`` may differ from ``L``.
        - ``mask``: boolean, **True = may attend**, in a shape :func:`course_lib.masks.expand_mask` accepts for a
          layer (``(L, S)``, ``(B, L, S)`` or ``(B, H, L, S)``). A query whose keys are all masked gets a zero
          attention output (then only ``w_o``'s bias remains).
        - returns ``output`` ``(B, L, D)``, and with ``return_weights=True`` also the per-head attention weights
          ``(B, H, L, S)`` (not averaged over heads).
    """

    def __init__(self, d_model: int, num_heads: int, bias: bool = True):
        super().__init__()
        for name, value in (("d_model", d_model), ("num_heads", num_heads)):
            integer(name, value, minimum=1)
        flag("bias", bias)
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.d_model, self.num_heads, self.d_head = d_model, num_heads, d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model, bias=bias)  # the H matrices W_q^(h) side by side
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)  # mixes the concatenated heads

    def _check(
        self, query: Tensor, key: Tensor | None, value: Tensor | None, mask: Tensor | None
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """The edge of :meth:`forward`: ``key`` and ``value`` (defaulting to ``query``), their shapes, and the mask
        as ``(B or 1, H or 1, L, S)``."""
        if key is None and value is not None:
            raise ValueError("value was given without key: pass key too (or neither, for self-attention)")
        key = query if key is None else key
        value = key if value is None else value
        layout, dtype = f"(B, length, d_model={self.d_model})", self.w_q.weight.dtype
        for name, t in (("query", query), ("key", key), ("value", value)):
            tensor(name, t, shape=(None, None, self.d_model), layout=layout, dtype=dtype)
        (B, L, _), S = query.shape, key.shape[1]
        if key.shape[0] != B or value.shape[:2] != key.shape[:2]:
            raise ValueError(
                f"query (B, L, D), key (B, S, D) and value (B, S, D) must agree on B and S: "
                f"got query {shape_of(query)}, key {shape_of(key)}, value {shape_of(value)}"
            )
        if mask is not None:
            mask = expand_mask(mask, (B, self.num_heads, L, S), heads=True)
        return key, value, mask

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        return_weights: bool = False,
    ) -> Tensor | tuple[Tensor, Tensor]:
        key, value, mask = self._check(query, key, value, mask)  # the edge: every check, once
        flag("return_weights", return_weights)
        out, weights = self._forward(query, key, value, mask)  # (B, L, D), (B, H, L, S)
        return (out, weights) if return_weights else out

    def _forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None) -> tuple[Tensor, Tensor]:
        """The arithmetic of :meth:`forward`, unchecked: for blocks that checked the inputs (and expanded the mask
        with :func:`course_lib.masks.expand_mask`) at their own edge. Returns ``(output, weights)``."""
        q = _split(self.w_q(query), self.num_heads)  # (B, H, L, Dk)
        k = _split(self.w_k(key), self.num_heads)  # (B, H, S, Dk)
        v = _split(self.w_v(value), self.num_heads)  # (B, H, S, Dk)
        heads, weights = attend(q, k, v, mask)  # (B, H, L, Dk), (B, H, L, S)
        return self.w_o(_merge(heads)), weights  # (B, L, D), (B, H, L, S)

    @classmethod
    def from_torch(cls, m: nn.MultiheadAttention) -> MultiHeadAttention:
        """A copy of ``m``'s weights in this class (same device and dtype), so the outputs match ``m``'s.

        ``nn.MultiheadAttention`` stores ``W_q, W_k, W_v`` stacked in ``in_proj_weight`` ``(3D, D)`` and
        ``W_o`` in ``out_proj``. Its boolean ``attn_mask`` means the opposite of ours (True = *not* allowed):
        pass ``~mask`` to it. The weights do not depend on ``batch_first``; our inputs are always batch first.
        Outputs match when ``m`` has ``dropout=0`` or is in eval mode. Modules with ``kdim``/``vdim`` different
        from ``embed_dim``, ``add_bias_kv`` or ``add_zero_attn`` have no counterpart here (``ValueError``).
        """
        instance("m", m, nn.MultiheadAttention, "a torch.nn.MultiheadAttention")
        if not m._qkv_same_embed_dim:
            raise ValueError(f"kdim={m.kdim} / vdim={m.vdim} differ from embed_dim={m.embed_dim}: not supported")
        if m.bias_k is not None or m.add_zero_attn:
            raise ValueError("add_bias_kv and add_zero_attn are not supported")
        bias = m.in_proj_bias is not None
        weight = m.in_proj_weight
        new = cls(m.embed_dim, m.num_heads, bias=bias).to(device=weight.device, dtype=weight.dtype)
        D = m.embed_dim
        with torch.no_grad():
            for i, lin in enumerate((new.w_q, new.w_k, new.w_v)):
                lin.weight.copy_(weight[i * D : (i + 1) * D])
                if bias:
                    lin.bias.copy_(m.in_proj_bias[i * D : (i + 1) * D])
            new.w_o.weight.copy_(m.out_proj.weight)
            if bias:
                new.w_o.bias.copy_(m.out_proj.bias)
        return new

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, num_heads={self.num_heads}, d_head={self.d_head}"
