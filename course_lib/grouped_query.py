r"""Grouped-query causal self-attention and its KV cache: what a decoder needs to generate one token at a time.

Causal attention never changes what it computed for earlier positions, so a decoder generating token ``t + 1`` can
keep the keys and values of positions ``0 .. t`` (:class:`KVCache`) and compute only the new token's.

Grouped-query attention (GQA; Ainslie et al., "GQA: Training Generalized Multi-Query Transformer Models from
Multi-Head Checkpoints", EMNLP 2023) gives the ``H`` query heads only ``H_kv`` key/value heads: query head ``h`` uses
key/value head ``h // (H / H_kv)``. ``H_kv = H`` is ordinary multi-head attention, ``H_kv = 1`` multi-query attention
(Shazeer, "Fast Transformer Decoding: One Write-Head is All You Need", 2019). It equals multi-head attention whose
K/V projections repeat each K/V head ``H / H_kv`` times (tested); fewer K/V heads make the KV cache smaller.

Shape legend: ``B`` batch, ``L`` new tokens in this call, ``T`` positions already in the cache, ``S = T + L`` keys,
``D`` model width, ``H`` query heads, ``H_kv`` key/value heads, ``G = H / H_kv`` query heads per K/V head,
``Dk = D / H`` head width.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .attention import attend
from .masks import expand_mask
from .multihead import _merge, _split
from .positional import _rope
from .validate import flag, instance, integer, number, shape_of, tensor

__all__ = ["GroupedQueryAttention", "KVCache"]


class KVCache:
    r"""The keys and values every layer has computed so far, so that a new token needs only its own K and V.

    Causal attention never changes what it computed for earlier positions, so when generating token ``t + 1`` the
    keys and values of positions ``0 .. t`` can be kept instead of recomputed. Layer ``i`` stores
    ``keys[i]`` and ``values[i]``, each ``(B, H_kv, S, Dk)`` (keys after RoPE, when the model uses it), or ``None``
    while empty. :meth:`append` concatenates along ``S`` (a copy per step: plain, not fast; serving systems
    preallocate). Memory, the reason for grouped-query attention:

    .. math::  \text{nbytes} = 2 \cdot B \cdot \text{layers} \cdot H_{kv} \cdot d_k \cdot S
               \cdot \text{bytes per element}

    (the 2 counts keys and values). Start a new cache (or :meth:`reset`) for every new batch of prompts.
    """

    def __init__(self, num_layers: int):
        self.num_layers = integer("num_layers", num_layers, minimum=1)
        self.reset()

    def reset(self) -> None:
        """Forget every stored key and value."""
        self.keys: list[Tensor | None] = [None] * self.num_layers
        self.values: list[Tensor | None] = [None] * self.num_layers

    def layer_length(self, layer: int) -> int:
        """``T`` of layer ``layer``: the number of positions it holds."""
        integer("layer", layer, minimum=0)
        if layer >= self.num_layers:
            raise ValueError(f"layer must be < num_layers={self.num_layers}, got {layer}")
        return self._length(layer)

    def _length(self, layer: int) -> int:
        """:meth:`layer_length` unchecked."""
        stored = self.keys[layer]
        return 0 if stored is None else stored.shape[-2]

    @property
    def length(self) -> int:
        """``T``: positions held (between two forward passes every layer holds the same number)."""
        return self.layer_length(0)

    @property
    def nbytes(self) -> int:
        """Bytes held by all stored keys and values."""
        return sum(t.numel() * t.element_size() for t in (*self.keys, *self.values) if t is not None)

    def append(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add ``k`` and ``v`` ``(B, H_kv, L, Dk)`` to layer ``layer``.

        Returns all the keys and values of that layer, ``(B, H_kv, S, Dk)`` each, ``S = T + L``.
        """
        self.layer_length(layer)  # checks layer
        for name, t in (("k", k), ("v", v)):
            tensor(name, t, floating=True, shape=(None,) * 4, layout="(B, H_kv, L, Dk)")
        if k.shape != v.shape:
            raise ValueError(f"k and v must have the same shape, got k {shape_of(k)} and v {shape_of(v)}")
        return self._append(layer, k, v)

    def _append(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """:meth:`append` for a layer that computed ``k`` and ``v`` itself; refuses a cache filled by another model."""
        old_k, old_v = self.keys[layer], self.values[layer]
        if old_k is not None:
            if old_k.shape[:2] != k.shape[:2] or old_k.shape[-1] != k.shape[-1]:
                raise ValueError(
                    f"k of shape {shape_of(k)} does not continue the cached keys of shape {shape_of(old_k)} "
                    "(B, H_kv and Dk must agree)"
                )
            k, v = torch.cat((old_k, k), dim=-2), torch.cat((old_v, v), dim=-2)  # (B, H_kv, S, Dk)
        self.keys[layer], self.values[layer] = k, v
        return k, v

    def __repr__(self) -> str:
        return f"KVCache(num_layers={self.num_layers}, length={self.length}, nbytes={self.nbytes})"


def _grouped_mask(mask: Tensor | None, H: int, H_kv: int, L: int, S: int, device: torch.device) -> Tensor:
    """The causal mask of ``L`` new queries at positions ``T .. S - 1`` (the bottom rows of an ``S x S`` triangle),
    AND ``mask`` if given (as :func:`course_lib.masks.expand_mask` returns it for ``(B, H, L, S)``); shaped ``(L, S)``
    or ``(B or 1, H_kv or 1, G or 1, L, S)`` for the grouped heads."""
    causal = torch.ones(L, S, dtype=torch.bool, device=device).tril(S - L)  # (L, S): query T + i sees keys 0 .. T + i
    if mask is None:
        return causal
    mask = mask & causal  # (B or 1, H or 1, L, S)
    b, h = mask.shape[:2]
    return mask[:, :, None] if h == 1 else mask.reshape(b, H_kv, H // H_kv, L, S)  # head h = kv * G + g


class GroupedQueryAttention(nn.Module):
    """Causal multi-head self-attention with ``num_kv_heads`` key/value heads shared by groups of query heads.

    ``w_q`` and ``w_o`` are ``(D, D)`` as in :class:`course_lib.multihead.MultiHeadAttention`; ``w_k`` and ``w_v``
    map ``D`` to ``H_kv * Dk`` only. The ``G = H / H_kv`` query heads ``kv * G .. kv * G + G - 1`` share key/value
    head ``kv``: computed by broadcasting (queries ``(B, H_kv, G, L, Dk)`` against keys ``(B, H_kv, 1, S, Dk)``),
    equal to repeating each K/V head ``G`` times (``repeat_interleave``) and running ordinary multi-head attention.

    Args:
        d_model: width ``D``; divisible by ``num_heads``.
        num_heads: query heads ``H``.
        num_kv_heads: key/value heads ``H_kv``, dividing ``num_heads``; ``None`` means ``H`` (multi-head
            attention), ``1`` is multi-query attention.
        bias: biases in the four projections.
        rope: rotate queries and keys with :func:`course_lib.positional.apply_rope` (``Dk`` must be even).
        rope_base: the base of the RoPE frequencies.

    Forward ``(x, mask=None, return_weights=False, *, cache=None, layer=0)``:
        ``x`` ``(B, L, D)``. Always causal; ``mask`` (boolean, True = may attend, in a shape
        :func:`course_lib.masks.expand_mask` accepts for a layer) is an extra restriction ANDed with the causal mask,
        e.g. a padding mask ``(B, 1, S)``.
        With a :class:`KVCache`, ``x`` holds the ``L`` tokens that follow the ``T`` already cached: they sit at
        positions ``T .. T + L - 1`` (their RoPE angles), their keys and values are appended to ``cache`` layer
        ``layer``, and they attend to all ``S = T + L`` keys. Returns ``(B, L, D)``, and with ``return_weights``
        also the weights ``(B, H, L, S)``.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        num_kv_heads: int | None = None,
        *,
        bias: bool = True,
        rope: bool = False,
        rope_base: float = 10000.0,
    ):
        super().__init__()
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        for name, value in (("d_model", d_model), ("num_heads", num_heads), ("num_kv_heads", num_kv_heads)):
            integer(name, value, minimum=1)
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        if num_heads % num_kv_heads:
            raise ValueError(f"num_heads={num_heads} is not divisible by num_kv_heads={num_kv_heads}")
        d_head = d_model // num_heads
        if rope and d_head % 2:
            raise ValueError(f"rope rotates pairs of dimensions: the head width d_model / num_heads = {d_head} is odd")
        self.rope_base = number("rope_base", rope_base, minimum=0, strict_minimum=True)
        self.d_model, self.num_heads, self.num_kv_heads, self.d_head = d_model, num_heads, num_kv_heads, d_head
        self.rope = flag("rope", rope)
        flag("bias", bias)
        self.w_q = nn.Linear(d_model, d_model, bias=bias)  # H query heads side by side
        self.w_k = nn.Linear(d_model, num_kv_heads * d_head, bias=bias)  # only H_kv key heads
        self.w_v = nn.Linear(d_model, num_kv_heads * d_head, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None = None,
        return_weights: bool = False,
        *,
        cache: KVCache | None = None,
        layer: int = 0,
    ) -> Tensor | tuple[Tensor, Tensor]:
        mask = self._check(x, mask, cache, layer)  # the edge: every check, before anything is cached
        flag("return_weights", return_weights)
        out, weights = self._forward(x, mask, cache, layer)  # (B, L, D), (B, H, L, S)
        return (out, weights) if return_weights else out

    def _check(self, x: object, mask: object, cache: object, layer: object) -> Tensor | None:
        """The edge of :meth:`forward` (and of a block's): ``x``, ``cache`` and ``layer``; the mask expanded for
        ``(B, H, L, S)``."""
        layout = f"(B, L, d_model={self.d_model})"
        tensor("x", x, shape=(None, None, self.d_model), layout=layout, dtype=self.w_q.weight.dtype)
        past = 0 if instance("cache", cache, KVCache, "a KVCache", optional=True) is None else cache.layer_length(layer)
        B, L, _ = x.shape
        return None if mask is None else expand_mask(mask, (B, self.num_heads, L, past + L), heads=True)

    def _forward(self, x: Tensor, mask: Tensor | None, cache: KVCache | None, layer: int) -> tuple[Tensor, Tensor]:
        """The arithmetic of :meth:`forward` on checked inputs (``mask`` as :meth:`_check` returns it): ``(out, weights
        (B, H, L, S))``."""
        B, L, _ = x.shape
        H, H_kv, Dk = self.num_heads, self.num_kv_heads, self.d_head
        past = 0 if cache is None else cache._length(layer)  # T
        S = past + L
        mask = _grouped_mask(mask, H, H_kv, L, S, x.device)
        q = _split(self.w_q(x), H)  # (B, H, L, Dk)
        k = _split(self.w_k(x), H_kv)  # (B, H_kv, L, Dk)
        v = _split(self.w_v(x), H_kv)  # (B, H_kv, L, Dk)
        if self.rope:  # the new tokens sit at positions T .. T + L - 1; cached keys were rotated when computed
            positions = torch.arange(past, past + L, device=x.device)
            q, k = _rope(q, positions, self.rope_base), _rope(k, positions, self.rope_base)
        if cache is not None:
            k, v = cache._append(layer, k, v)  # (B, H_kv, S, Dk)
        q = q.view(B, H_kv, H // H_kv, L, Dk)  # (B, H_kv, G, L, Dk): query head h = kv * G + g
        out, weights = attend(q, k[:, :, None], v[:, :, None], mask)  # (B, H_kv, G, L, Dk), (B, H_kv, G, L, S)
        out = self.w_o(_merge(out.reshape(B, H, L, Dk)))  # (B, H_kv, G, L, Dk) -> (B, H, L, Dk) -> (B, L, D)
        return out, weights.reshape(B, H, L, S)

    def extra_repr(self) -> str:
        rope = f", rope_base={self.rope_base}" if self.rope else ""
        return f"d_model={self.d_model}, num_heads={self.num_heads}, num_kv_heads={self.num_kv_heads}{rope}"
