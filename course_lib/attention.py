r"""Scaled dot-product attention, written out plainly.

.. math::  \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V

Shape legend (used in every docstring and shape comment below):

- ``...``  any number of leading batch dimensions (batch ``B``, heads ``H``, ...); they broadcast
- ``L``    number of queries            ``S``  number of keys (= number of values)
- ``Dk``   width of a query / key       ``Dv`` width of a value
- ``D``    model width (``d_model``) of the input to :class:`SelfAttention`

Multi-head attention, built from these functions, is in :mod:`course_lib.multihead`.

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

from .masks import expand_mask
from .validate import HALF_DTYPES, attention_inputs, compute_dtype, flag, integer, shape_of, tensor

__all__ = ["SelfAttention", "attend", "attention_weights", "scaled_dot_product_attention", "softmax_jacobian"]


def _scores_shape(q: Tensor, k: Tensor) -> tuple[int, ...]:
    """``(..., L, S)``: the shape of the scores of ``q (..., L, Dk)`` and ``k (..., S, Dk)``."""
    return (*torch.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q.shape[-2], k.shape[-2])


def _weights(q: Tensor, k: Tensor, mask: Tensor | None, scale: float | None) -> Tensor:
    """The arithmetic of :func:`attention_weights`, unchecked."""
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    compute = compute_dtype(q.dtype)
    scores = torch.matmul(q.to(compute), k.to(compute).transpose(-2, -1)) * scale  # (..., L, S)
    if mask is None:
        return torch.softmax(scores, dim=-1).to(q.dtype)
    # Fill hidden scores with the most negative finite number (not -inf): exp() of it is exactly 0 next to
    # any visible key, and a row with no visible key stays finite (uniform), so no NaN reaches the gradient.
    scores = scores.masked_fill(~mask, torch.finfo(compute).min)
    weights = torch.softmax(scores, dim=-1) * mask  # zeroes the rows whose keys are all hidden
    return weights.to(q.dtype)


def attention_weights(q: Tensor, k: Tensor, mask: Tensor | None = None, *, scale: float | None = None) -> Tensor:
    """Attention weights ``softmax(q k^T * scale)`` over the key axis.

    Args:
        q: queries ``(..., L, Dk)``.
        k: keys ``(..., S, Dk)``; leading dimensions broadcast against ``q``'s.
        mask: optional boolean ``(..., L, S)`` (broadcastable), True = may attend; see
            :func:`course_lib.masks.expand_mask`.
        scale: factor applied to the scores, a number ``> 0``; default ``1 / sqrt(Dk)``.

    Returns:
        weights ``(..., L, S)`` in the dtype of ``q``. Each row sums to 1, except rows whose keys are all
        masked, which are all zeros.
    """
    attention_inputs(q, k, scale=scale)
    if mask is not None:
        mask = expand_mask(mask, _scores_shape(q, k))
    return _weights(q, k, mask, scale)


def attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, *, scale: float | None = None):
    """The arithmetic of :func:`scaled_dot_product_attention`, unchecked: ``(output, weights)``, both in ``q``'s dtype.

    For layers, which check their inputs once at their edge (the mask with :func:`course_lib.masks.expand_mask`)
    and then compute; shapes as in :func:`scaled_dot_product_attention`. Call that function, not this one, on
    inputs nobody has checked.
    """
    compute = compute_dtype(q.dtype)
    weights = _weights(q.to(compute), k.to(compute), mask, scale)  # (..., L, S)
    out = torch.matmul(weights, v.to(compute))  # (..., L, Dv)
    return out.to(q.dtype), weights.to(q.dtype)


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
        mask: optional boolean ``(..., L, S)`` (broadcastable), True = may attend; see
            :func:`course_lib.masks.expand_mask`.
        scale: factor applied to the scores, a number ``> 0``; default ``1 / sqrt(Dk)``.
        return_weights: also return the attention weights.

    Returns:
        output ``(..., L, Dv)``, and the weights ``(..., L, S)`` if ``return_weights``; both in ``q``'s dtype.
    """
    attention_inputs(q, k, v, scale=scale)
    flag("return_weights", return_weights)
    if mask is not None:
        mask = expand_mask(mask, _scores_shape(q, k))
    out, weights = attend(q, k, v, mask, scale=scale)  # (..., L, Dv), (..., L, S)
    return (out, weights) if return_weights else out


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
            integer(name, value, minimum=1)
        flag("bias", bias)
        self.d_model, self.d_k, self.d_v = d_model, d_k, d_v
        self.w_q = nn.Linear(d_model, d_k, bias=bias)
        self.w_k = nn.Linear(d_model, d_k, bias=bias)
        self.w_v = nn.Linear(d_model, d_v, bias=bias)

    def forward(
        self, x: Tensor, mask: Tensor | None = None, return_weights: bool = False
    ) -> Tensor | tuple[Tensor, Tensor]:
        """``x (..., L, D)`` → output ``(..., L, Dv)`` (and the weights ``(..., L, L)`` with ``return_weights``)."""
        layout, dtype = f"(..., L, d_model={self.d_model})", self.w_q.weight.dtype
        tensor("x", x, shape=(..., None, self.d_model), layout=layout, dtype=dtype)
        flag("return_weights", return_weights)
        if mask is not None:
            mask = expand_mask(mask, (*x.shape[:-1], x.shape[-2]))  # scores (..., L, L)
        q, k, v = self.w_q(x), self.w_k(x), self.w_v(x)  # (..., L, Dk), (..., L, Dk), (..., L, Dv)
        out, weights = attend(q, k, v, mask)  # (..., L, Dv), (..., L, L)
        return (out, weights) if return_weights else out

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, d_k={self.d_k}, d_v={self.d_v}"


# ---------------------------------------------------------------- the softmax Jacobian (notebook 04)


def softmax_jacobian(a: Tensor) -> Tensor:
    r"""Jacobian of the softmax at the point where its output is ``a``: ``J = diag(a) - a a^T``.

    If ``a = softmax(s)`` over the last dimension, then ``J[..., i, j] = ∂a_i / ∂s_j = a_i (δ_ij - a_j)``.
    ``J`` is symmetric, each of its rows sums to 0 (adding a constant to every score changes nothing) and it is
    positive semi-definite. The backward pass never builds it: ``∂L/∂s = J g = a * (g - (a · g))`` for the
    upstream gradient ``g = ∂L/∂a``.

    Args:
        a: softmax outputs ``(..., N)``: entries in ``[0, 1]``, each row summing to 1, e.g. attention weights
            ``(..., L, S)`` (then ``N = S``). A row of zeros (a query that sees no key, see
            :func:`attention_weights`) is accepted and gives ``J = 0``, the derivative of a constant output.

    Returns:
        ``J`` of shape ``(..., N, N)``, in ``a``'s dtype and on its device (half precision is computed in float32).

    Raises:
        TypeError: ``a`` is not a floating tensor.
        ValueError: ``a`` is 0-d, has negative entries or a row whose sum is neither 1 nor 0 (logits instead of
            probabilities, or the softmax taken over another dimension).
    """
    tensor("a", a, min_dim=1, floating=True, layout="(..., N)")
    compute = compute_dtype(a.dtype)
    p = a.to(compute)
    if p.numel():
        tol = 1e-2 if a.dtype in HALF_DTYPES else (1e-4 if compute == torch.float32 else 1e-10) * max(1, a.shape[-1])
        sums = p.sum(dim=-1)  # (...,)
        bad_sum = ((sums - 1).abs() > tol) & (sums.abs() > tol)
        if bool((p < -tol).any()) or bool(bad_sum.any()):
            raise ValueError(
                f"a of shape {shape_of(a)} must hold probabilities along its last dimension (entries >= 0, each row "
                f"summing to 1, or all zeros); got row sums in [{sums.min().item():.4g}, {sums.max().item():.4g}] "
                f"and smallest entry {p.min().item():.4g}. Pass softmax(scores, dim=-1), not the scores."
            )
    jac = torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., N, N): diag(a) - a a^T
    return jac.to(a.dtype)
