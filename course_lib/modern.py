r"""The decoder block of 2026's open models (Llama, Mistral, Qwen): notebook 12's block with three parts swapped.

Notebook 12's :class:`course_lib.decoder.DecoderBlock` is pre-LN with causal grouped-query attention and, when asked,
RoPE. The block of today's open models keeps all of that and swaps three parts:

1. **RMSNorm** (Zhang & Sennrich, "Root Mean Square Layer Normalization", NeurIPS 2019) for LayerNorm: no mean is
   subtracted and no bias added, only a division by the root mean square and a learned gain ``g``:

   .. math::  \operatorname{RMSNorm}(x) = \frac{x}{\sqrt{\tfrac{1}{D}\sum_i x_i^2 + \epsilon}} \odot g

2. **SwiGLU** (Shazeer, "GLU Variants Improve Transformer", 2020) for the ReLU/GELU MLP: a gate
   ``SiLU(x W_gate)`` multiplies ``x W_up`` element by element before ``W_down``; three matrices instead of two, so
   ``F = 8 D / 3`` matches the parameters of a ``4 D`` MLP.

   .. math::  \operatorname{SwiGLU}(x) = \big(\operatorname{SiLU}(x W_\text{gate}) \odot x W_\text{up}\big)
              W_\text{down}, \qquad \operatorname{SiLU}(z) = z\,\sigma(z)

3. **No biases** anywhere, RoPE in every attention layer, and usually fewer key/value heads than query heads.

With weights copied by :func:`load_llama_layer` a :class:`ModernDecoderBlock` equals Hugging Face's
``LlamaDecoderLayer`` (tested in tests/test_modern.py; ``transformers`` is a test dependency, never imported here).
Hugging Face rotates dimension ``j`` of a head with dimension ``j + Dk/2`` ("rotate half"), the course (like the
RoFormer paper and Meta's original code) dimension ``2j`` with ``2j + 1``: copying ``W_q`` and ``W_k`` therefore
reorders their rows within each head (:func:`half_to_interleaved`), which changes no score.

Shape legend: ``B`` batch, ``L`` tokens, ``D`` model width, ``F`` feed-forward width, ``H`` query heads, ``H_kv``
key/value heads, ``Dk = D / H`` head width.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .decoder import DecoderBlock, DecoderLM
from .validate import compute_dtype, instance, integer, number, tensor

__all__ = ["ModernDecoderBlock", "ModernLM", "RMSNorm", "SwiGLU", "half_to_interleaved", "load_llama_layer"]


class RMSNorm(nn.Module):
    """Root-mean-square normalisation over the last dimension, with a learned gain ``weight`` ``(D,)`` (ones at
    start). Computed in float32 for half-precision inputs (as attention's softmax is), returned in the input's dtype.
    """

    def __init__(self, d_model: int, eps: float = 1e-6):
        super().__init__()
        self.d_model = integer("d_model", d_model, minimum=1)
        self.eps = number("eps", eps, minimum=0.0, strict_minimum=True)
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x: Tensor) -> Tensor:
        tensor("x", x, floating=True, shape=(..., self.d_model), layout=f"(..., d_model={self.d_model})")
        return self._forward(x)

    def _forward(self, x: Tensor) -> Tensor:
        """:meth:`forward` unchecked: ``(..., D)`` → ``(..., D)``."""
        h = x.to(compute_dtype(x.dtype))
        h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)  # x / RMS(x)
        return self.weight * h.to(x.dtype)

    def extra_repr(self) -> str:
        return f"{self.d_model}, eps={self.eps}"


class SwiGLU(nn.Module):
    """The gated feed-forward network ``(SiLU(x W_gate) * x W_up) W_down``: ``(..., D)`` → ``(..., F)`` → ``(..., D)``,
    without biases (``w_gate``, ``w_up``: ``D -> F``; ``w_down``: ``F -> D``)."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        integer("d_model", d_model, minimum=1)
        integer("d_ff", d_ff, minimum=1)
        self.w_gate = nn.Linear(d_model, d_ff, bias=False)
        self.w_up = nn.Linear(d_model, d_ff, bias=False)
        self.w_down = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class ModernDecoderBlock(DecoderBlock):
    """A Llama-style block: ``h = x + Attn(RMSNorm_1(x))``, then ``h + SwiGLU(RMSNorm_2(h))``; causal grouped-query
    attention with RoPE and no biases.

    It is :class:`course_lib.decoder.DecoderBlock` (its forward, KV cache and mask handling unchanged) whose two
    norms are :class:`RMSNorm` and whose feed-forward network is a :class:`SwiGLU` ``mlp``.

    Args:
        d_model, num_heads, num_kv_heads, rope_base: as in :class:`course_lib.grouped_query.GroupedQueryAttention`.
        d_ff: the SwiGLU's width ``F`` (default ``8 * d_model // 3``, the parameters of a ``4 * d_model`` MLP).
        eps: the ``eps`` of both norms.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        num_kv_heads: int | None = None,
        *,
        d_ff: int | None = None,
        rope_base: float = 10000.0,
        eps: float = 1e-6,
    ):
        d_ff = 8 * d_model // 3 if d_ff is None else d_ff
        super().__init__(d_model, num_heads, num_kv_heads, d_ff=d_ff, rope=True, rope_base=rope_base, bias=False)
        del self.linear1, self.linear2  # the MLP of notebook 11 ...
        self.mlp = SwiGLU(d_model, d_ff)  # ... becomes the gated one
        self.norm1, self.norm2 = RMSNorm(d_model, eps), RMSNorm(d_model, eps)

    def feed_forward(self, x: Tensor) -> Tensor:
        return self.mlp(x)


class ModernLM(DecoderLM):
    """A decoder-only language model of :class:`ModernDecoderBlock` s: token embedding, the blocks (RoPE, so nothing
    is added for positions), a final :class:`RMSNorm` and a linear head, as in Llama. Arguments, forward, KV cache
    and :func:`course_lib.generation.generate` as for :class:`course_lib.decoder.DecoderLM`, with ``eps`` for the
    norms; no dropout."""

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        num_heads: int,
        num_layers: int,
        *,
        max_len: int,
        num_kv_heads: int | None = None,
        d_ff: int | None = None,
        tie_embeddings: bool = False,
        rope_base: float = 10000.0,
        eps: float = 1e-6,
    ):
        settings = dict(max_len=max_len, num_kv_heads=num_kv_heads, tie_embeddings=tie_embeddings, rope_base=rope_base)
        super().__init__(vocab_size, d_model, num_heads, num_layers, positions="rope", **settings)
        block = dict(d_ff=d_ff, rope_base=rope_base, eps=eps)
        self.blocks = nn.ModuleList(
            ModernDecoderBlock(d_model, num_heads, num_kv_heads, **block) for _ in range(num_layers)
        )
        self.norm = RMSNorm(d_model, eps)


def half_to_interleaved(weight: Tensor, num_heads: int) -> Tensor:
    """Rows of a query or key projection ``(num_heads * Dk, D)`` reordered from Hugging Face's RoPE layout (pairs
    ``j, j + Dk/2`` of each head) to the course's (pairs ``2j, 2j + 1``): row ``h Dk + 2j`` takes row ``h Dk + j``,
    row ``h Dk + 2j + 1`` takes row ``h Dk + Dk/2 + j``."""
    tensor("weight", weight, floating=True, shape=(None, None), layout="(num_heads * Dk, D)")
    integer("num_heads", num_heads, minimum=1)
    rows = weight.shape[0]
    if rows % num_heads or (rows // num_heads) % 2:
        raise ValueError(f"weight has {rows} rows: not num_heads={num_heads} heads of an even width")
    d_head = rows // num_heads
    halves = weight.reshape(num_heads, 2, d_head // 2, -1)  # (H, first/second half, j, D)
    return halves.transpose(1, 2).reshape(rows, -1)  # (H, j, half, D): 2j from the first half, 2j + 1 the second


_LLAMA_NAMES = {  # Hugging Face LlamaDecoderLayer's parameter -> the course block's
    "self_attn.q_proj.weight": "self_attn.w_q.weight",
    "self_attn.k_proj.weight": "self_attn.w_k.weight",
    "self_attn.v_proj.weight": "self_attn.w_v.weight",
    "self_attn.o_proj.weight": "self_attn.w_o.weight",
    "mlp.gate_proj.weight": "mlp.w_gate.weight",
    "mlp.up_proj.weight": "mlp.w_up.weight",
    "mlp.down_proj.weight": "mlp.w_down.weight",
    "input_layernorm.weight": "norm1.weight",
    "post_attention_layernorm.weight": "norm2.weight",
}


def load_llama_layer(block: ModernDecoderBlock, state: dict[str, Tensor]) -> ModernDecoderBlock:
    """Copy the weights of a Hugging Face ``LlamaDecoderLayer`` (its ``state_dict()``, names as in ``_LLAMA_NAMES``)
    into ``block``, reordering the query and key rows for the course's RoPE; returns ``block``."""
    instance("block", block, ModernDecoderBlock, "a course_lib ModernDecoderBlock")
    instance("state", state, dict, "a dict of tensors (a LlamaDecoderLayer's state_dict())")
    missing = sorted(set(_LLAMA_NAMES) - set(state))
    if missing:
        raise ValueError(f"state lacks {missing}: pass a LlamaDecoderLayer's state_dict() (without a prefix)")
    heads = {"self_attn.q_proj.weight": block.num_heads, "self_attn.k_proj.weight": block.self_attn.num_kv_heads}
    ours = {
        mine: half_to_interleaved(state[theirs], heads[theirs]) if theirs in heads else state[theirs]
        for theirs, mine in _LLAMA_NAMES.items()
    }
    with torch.no_grad():
        for name, value in block.named_parameters():
            if value.shape != ours[name].shape:
                theirs = tuple(ours[name].shape)
                raise ValueError(f"{name}: the block has {tuple(value.shape)}, the Llama layer {theirs}")
            value.copy_(ours[name])
    return block
