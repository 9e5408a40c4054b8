r"""Scaled dot-product attention, written out plainly.

.. math::  \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V

Shape legend (used in every docstring and shape comment below):

- ``...``  any number of leading batch dimensions (batch ``B``, heads ``H``, ...); they broadcast
- ``L``    number of queries            ``S``  number of keys (= number of values)
- ``Dk``   width of a query / key       ``Dv`` width of a value
- ``D``    model width (``d_model``) of the input to :class:`SelfAttention`

Semantics fixed for the whole course:

- the softmax runs over the **key** axis (the last one of the score matrix), so each query's weights sum to 1;
- ``scale`` defaults to ``1 / sqrt(Dk)``;
- masks are boolean, **True = may attend** (as in ``torch.nn.functional.scaled_dot_product_attention``);
- a query whose keys are *all* masked gets all-zero weights and a zero output, never NaN;
- ``float16`` / ``bfloat16`` inputs are computed in ``float32`` and the result is cast back to the input dtype;
  ``float32`` and ``float64`` are computed in their own precision.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

__all__ = ["attention_weights", "scaled_dot_product_attention", "SelfAttention"]

_HALF = (torch.float16, torch.bfloat16)


def _shape(t: Tensor) -> tuple[int, ...]:
    return tuple(t.shape)


def _check_tensor(name: str, t: object) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if not t.dtype.is_floating_point:
        raise TypeError(f"{name} must have a floating dtype, got {t.dtype}")
    if t.dim() < 2:
        raise ValueError(f"{name} must have at least 2 dimensions (..., length, width), got shape {_shape(t)}")


def _check_qk(q: Tensor, k: Tensor) -> None:
    _check_tensor("q", q)
    _check_tensor("k", k)
    if q.dtype != k.dtype:
        raise TypeError(f"q and k must have the same dtype, got q {q.dtype} and k {k.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have the same last dimension d_k: q has shape {_shape(q)} (d_k={q.shape[-1]}) "
            f"but k has shape {_shape(k)} (d_k={k.shape[-1]})"
        )
    try:
        torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the batch dimensions of q and k do not broadcast: q has shape {_shape(q)}, k has shape {_shape(k)}"
        ) from None


def _check_mask(mask: Tensor, q: Tensor, k: Tensor) -> None:
    if not isinstance(mask, Tensor):
        raise TypeError(f"mask must be a boolean torch.Tensor, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"mask must be boolean (True = may attend), got dtype {mask.dtype}; "
            "for an additive mask of 0 / -inf use `mask = additive == 0`"
        )
    target = (*torch.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q.shape[-2], k.shape[-2])
    try:
        ok = torch.broadcast_shapes(mask.shape, target) == target
    except RuntimeError:
        ok = False
    if not ok:
        raise ValueError(
            f"mask of shape {_shape(mask)} does not broadcast to the score shape {target} "
            f"(q has shape {_shape(q)}, k has shape {_shape(k)}; expected (..., L={q.shape[-2]}, S={k.shape[-2]}))"
        )


def attention_weights(q: Tensor, k: Tensor, mask: Tensor | None = None, *, scale: float | None = None) -> Tensor:
    """Attention weights ``softmax(q k^T * scale)`` over the key axis.

    Args:
        q: queries ``(..., L, Dk)``.
        k: keys ``(..., S, Dk)``; leading dimensions broadcast against ``q``'s.
        mask: optional boolean ``(..., L, S)`` (broadcastable), True = may attend.
        scale: factor applied to the scores; default ``1 / sqrt(Dk)``.

    Returns:
        weights ``(..., L, S)`` in the dtype of ``q``. Each row sums to 1, except rows whose keys are all
        masked, which are all zeros.
    """
    _check_qk(q, k)
    if mask is not None:
        _check_mask(mask, q, k)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    compute = torch.float32 if q.dtype in _HALF else q.dtype
    scores = torch.matmul(q.to(compute), k.to(compute).transpose(-2, -1)) * scale  # (..., L, S)
    if mask is None:
        return torch.softmax(scores, dim=-1).to(q.dtype)
    # Fill hidden scores with the most negative finite number (not -inf): exp() of it is exactly 0 next to
    # any visible key, and a row with no visible key stays finite (uniform), so no NaN reaches the gradient.
    scores = scores.masked_fill(~mask, torch.finfo(compute).min)
    weights = torch.softmax(scores, dim=-1) * mask  # zeroes the rows whose keys are all hidden
    return weights.to(q.dtype)


def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    *,
    scale: float | None = None,
    return_weights: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Scaled dot-product attention ``softmax(q k^T * scale) v``, the plain reference of the course.

    Equals ``torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)`` on every
    query that can see at least one key (tested); where a query sees no key at all, this function returns
    zeros while PyTorch's may return NaN.

    Args:
        q: queries ``(..., L, Dk)``.
        k: keys ``(..., S, Dk)``.
        v: values ``(..., S, Dv)``; ``Dv`` may differ from ``Dk``.
        mask: optional boolean ``(..., L, S)`` (broadcastable), True = may attend.
        scale: factor applied to the scores; default ``1 / sqrt(Dk)``.
        return_weights: also return the attention weights.

    Returns:
        output ``(..., L, Dv)``, and the weights ``(..., L, S)`` if ``return_weights``; both in ``q``'s dtype.
    """
    _check_qk(q, k)
    _check_tensor("v", v)
    if v.dtype != q.dtype:
        raise TypeError(f"v must have the same dtype as q, got q {q.dtype} and v {v.dtype}")
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"k and v must have the same length S: k has shape {_shape(k)} (S={k.shape[-2]}) "
            f"but v has shape {_shape(v)} (S={v.shape[-2]})"
        )
    try:
        torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the batch dimensions of q, k and v do not broadcast: q {_shape(q)}, k {_shape(k)}, v {_shape(v)}"
        ) from None
    compute = torch.float32 if q.dtype in _HALF else q.dtype
    weights = attention_weights(q.to(compute), k.to(compute), mask, scale=scale)  # (..., L, S)
    out = torch.matmul(weights, v.to(compute))  # (..., L, Dv)
    if return_weights:
        return out.to(q.dtype), weights.to(q.dtype)
    return out.to(q.dtype)


class SelfAttention(nn.Module):
    """Single-head self-attention: ``Q = X W_q``, ``K = X W_k``, ``V = X W_v``, then attention.

    The only learned parameters are the three projections (plus their biases if ``bias=True``).
    ``nn.Linear`` stores its weight as ``(out_features, in_features)``, so ``self.w_q.weight`` is ``W_q^T``:
    the matrix that multiplies a row vector from the right is ``self.w_q.weight.T`` with shape ``(D, Dk)``.

    Args:
        d_model: width ``D`` of each input vector.
        d_k: width of queries and keys (default ``d_model``).
        d_v: width of values and of the output (default ``d_k``).
        bias: add a bias to each projection (default False, as in the textbook formula).

    Forward:
        x ``(..., L, D)``, optional boolean mask ``(..., L, L)`` → output ``(..., L, Dv)``
        (and weights ``(..., L, L)`` when ``return_weights=True``).
    """

    def __init__(self, d_model: int, d_k: int | None = None, d_v: int | None = None, *, bias: bool = False):
        super().__init__()
        d_k = d_model if d_k is None else d_k
        d_v = d_k if d_v is None else d_v
        for name, value in (("d_model", d_model), ("d_k", d_k), ("d_v", d_v)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        self.d_model, self.d_k, self.d_v = d_model, d_k, d_v
        self.w_q = nn.Linear(d_model, d_k, bias=bias)
        self.w_k = nn.Linear(d_model, d_k, bias=bias)
        self.w_v = nn.Linear(d_model, d_v, bias=bias)

    def forward(self, x: Tensor, mask: Tensor | None = None, return_weights: bool = False):
        if x.dim() < 2 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must have shape (..., L, d_model={self.d_model}), got {_shape(x)}")
        q, k, v = self.w_q(x), self.w_k(x), self.w_v(x)  # (..., L, Dk), (..., L, Dk), (..., L, Dv)
        return scaled_dot_product_attention(q, k, v, mask, return_weights=return_weights)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, d_k={self.d_k}, d_v={self.d_v}"
