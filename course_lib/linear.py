r"""Linear attention: a positive feature map and re-associated products, :math:`O(n)` time and memory.

Softmax attention weighs key :math:`j` for query :math:`i` by :math:`e^{q_i \cdot k_j / \sqrt{d}}`. Linear attention
(Katharopoulos et al., 2020) replaces that exponential by a product of features, :math:`\phi(q_i) \cdot \phi(k_j)`
with a positive :math:`\phi`, so that :math:`\sum_j \phi(q_i)\cdot\phi(k_j)\, v_j = \phi(q_i)^\top \sum_j \phi(k_j)
v_j^\top`: the sum over keys is computed once, not once per query. It is a *different* model from softmax attention,
not an approximation that becomes exact:

- :func:`linear_attention` (:math:`O(n)`, causal by a running sum over chunks) equals
  :func:`linear_attention_reference`, its own quadratic form, and :func:`linear_attention_weights` shows its weights.

Shape legend: ``...`` leading batch dimensions (they broadcast between ``q``, ``k``, ``v``), ``L`` queries, ``S``
keys (= values), ``N`` sequence length when ``L = S``, ``Dk`` query/key width, ``Dv`` value width, ``F`` feature
width, ``C`` chunk size, ``nc`` number of chunks. Conventions are those of :mod:`course_lib.attention`:
``float16``/``bfloat16`` inputs are computed in ``float32`` and cast back, and the device follows the inputs.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from .masks import causal_mask
from .validate import attention_inputs, compute_dtype, flag, instance, integer, number, same_length, shape_of

__all__ = ["elu_feature_map", "linear_attention", "linear_attention_reference", "linear_attention_weights"]


def elu_feature_map(x: Tensor) -> Tensor:
    """``phi(x) = elu(x) + 1``, a positive feature map (Katharopoulos et al., 2020); ``(..., Dk) -> (..., Dk)``."""
    return F.elu(x) + 1.0


def _check(q: object, k: object, v: object | None, causal: object, feature_map: object, eps: object) -> tuple:
    """The edge of every function here: the inputs, ``causal`` (``L = S`` then), ``feature_map`` and ``eps``."""
    batch = attention_inputs(q, k, v)
    if flag("causal", causal):
        same_length(q, k, "causal linear attention")
    instance("feature_map", feature_map, Callable, "a function (..., n, Dk) -> (..., n, F)")
    number("eps", eps, minimum=0)
    return batch


def _features(q: Tensor, k: Tensor, feature_map: Callable[[Tensor], Tensor]) -> tuple[Tensor, Tensor]:
    fq, fk = feature_map(q), feature_map(k)
    if fq.shape[:-1] != q.shape[:-1] or fk.shape[:-1] != k.shape[:-1] or fq.shape[-1] != fk.shape[-1]:
        raise ValueError(
            f"feature_map must map (..., n, Dk) to (..., n, F) with the same F for q and k: got q {shape_of(q)} -> "
            f"{shape_of(fq)} and k {shape_of(k)} -> {shape_of(fk)}"
        )
    return fq, fk


def linear_attention_weights(
    q: Tensor,
    k: Tensor,
    causal: bool = False,
    *,
    feature_map: Callable[[Tensor], Tensor] = elu_feature_map,
    eps: float = 1e-6,
) -> Tensor:
    r"""The ``(..., L, S)`` weights that linear attention uses implicitly:
    :math:`a_{ij} = \phi(q_i)\cdot\phi(k_j) / (\sum_{j'} \phi(q_i)\cdot\phi(k_{j'}) + \epsilon)`.

    Compare with softmax attention's :math:`e^{q_i \cdot k_j/\sqrt{d}} / \sum_{j'} e^{q_i \cdot k_{j'}/\sqrt{d}}`:
    the similarity :math:`\phi(q)\cdot\phi(k)` is not an exponential, so these weights are different (usually much
    flatter). Causal: :math:`j \le i` only (needs ``L = S``). Computed in float32 for half inputs.
    """
    _check(q, k, None, causal, feature_map, eps)
    return _weights(q, k, causal, feature_map, eps)


def _weights(q: Tensor, k: Tensor, causal: bool, feature_map: Callable[[Tensor], Tensor], eps: float) -> Tensor:
    """:func:`linear_attention_weights`, unchecked."""
    compute = compute_dtype(q.dtype)
    fq, fk = _features(q.to(compute), k.to(compute), feature_map)
    sim = torch.matmul(fq, fk.transpose(-2, -1))  # (..., L, S) phi(q_i) . phi(k_j)
    if causal:
        sim = sim * causal_mask(q.shape[-2], num_keys=k.shape[-2], device=q.device)
    return (sim / (sim.sum(dim=-1, keepdim=True) + eps)).to(q.dtype)


def linear_attention_reference(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    causal: bool = False,
    *,
    feature_map: Callable[[Tensor], Tensor] = elu_feature_map,
    eps: float = 1e-6,
) -> Tensor:
    """Linear attention the quadratic way: build :func:`linear_attention_weights` ``(..., L, S)``, multiply by ``v``.

    ``O(L S)`` time and memory; :func:`linear_attention` computes the same in ``O(L + S)``.
    """
    _check(q, k, v, causal, feature_map, eps)
    compute = compute_dtype(q.dtype)
    weights = _weights(q.to(compute), k.to(compute), causal, feature_map, eps)  # (..., L, S)
    return torch.matmul(weights, v.to(compute)).to(q.dtype)  # (..., L, Dv)


def linear_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    causal: bool = False,
    *,
    feature_map: Callable[[Tensor], Tensor] = elu_feature_map,
    eps: float = 1e-6,
    chunk_size: int = 64,
) -> Tensor:
    r"""Kernelised ("linear") attention in ``O(N)`` time and memory (Katharopoulos et al., 2020).

    With a positive feature map :math:`\phi` the output of query :math:`i` is

    .. math::  o_i = \frac{\sum_j \phi(q_i)\cdot\phi(k_j)\, v_j}{\sum_j \phi(q_i)\cdot\phi(k_j)}
                   = \frac{\phi(q_i)^\top \big(\sum_j \phi(k_j) v_j^\top\big)}{\phi(q_i)^\top \sum_j \phi(k_j)} ,

    and the bracket, a ``(F, Dv)`` matrix, is computed once for all queries. That is the whole trick: the
    product is re-associated as ``phi(Q) (phi(K)^T V)`` instead of ``(phi(Q) phi(K)^T) V``, so no ``(L, S)``
    matrix appears. This is **not** softmax attention: the similarity ``phi(q).phi(k)`` replaces
    ``exp(q.k / sqrt(Dk))`` (see :func:`linear_attention_weights`).

    Causal: query ``i`` needs the prefix sums :math:`S_i = \sum_{j \le i} \phi(k_j) v_j^\top` and
    :math:`z_i = \sum_{j \le i} \phi(k_j)` (a recurrent state, updated once per token). They are computed per
    chunk of ``C = chunk_size`` tokens: an exclusive prefix sum (``torch.cumsum``) of the chunks' ``(F, Dv)``
    summaries carries everything before the chunk, and a small masked ``(C, C)`` product handles the tokens
    inside it. Memory ``O(N (C + F Dv / C))``, time ``O(N (C + F) Dv)``.

    Equals :func:`linear_attention_reference` (tested).

    Args:
        q: queries ``(..., L, Dk)``.
        k: keys ``(..., S, Dk)`` (``S = L`` when causal).
        v: values ``(..., S, Dv)``.
        causal: query ``i`` sees keys ``j <= i``.
        feature_map: ``phi``, maps ``(..., n, Dk)`` to nonnegative ``(..., n, F)``; default ``elu(x) + 1``.
        eps: added to the denominator.
        chunk_size: ``C`` for the causal computation.

    Returns:
        ``(..., L, Dv)`` in ``q``'s dtype.
    """
    batch = _check(q, k, v, causal, feature_map, eps)
    integer("chunk_size", chunk_size, minimum=1)
    dtype, compute = q.dtype, compute_dtype(q.dtype)
    fq, fk = _features(q.to(compute), k.to(compute), feature_map)  # (..., L, F), (..., S, F)
    v = v.to(compute)
    if not causal:
        kv = torch.matmul(fk.transpose(-2, -1), v)  # (..., F, Dv)  sum_j phi(k_j) v_j^T
        z = fk.sum(dim=-2, keepdim=True)  # (..., 1, F)     sum_j phi(k_j)
        numerator = torch.matmul(fq, kv)  # (..., L, Dv)
        denominator = (fq * z).sum(dim=-1, keepdim=True)  # (..., L, 1)
        return (numerator / (denominator + eps)).to(dtype)

    n, f, dv = q.shape[-2], fq.shape[-1], v.shape[-1]
    c = chunk_size
    nc = max(-(-n // c), 1)
    pad = nc * c - n
    fq = F.pad(fq.expand(*batch, n, f), (0, 0, 0, pad)).reshape(*batch, nc, c, f)  # (..., nc, C, F)
    fk = F.pad(fk.expand(*batch, n, f), (0, 0, 0, pad)).reshape(*batch, nc, c, f)  # zeros: padding adds nothing
    v = F.pad(v.expand(*batch, n, dv), (0, 0, 0, pad)).reshape(*batch, nc, c, dv)  # (..., nc, C, Dv)
    # Everything strictly before each chunk: exclusive prefix sums of the chunk summaries.
    kv_chunks = torch.matmul(fk.transpose(-2, -1), v)  # (..., nc, F, Dv)
    z_chunks = fk.sum(dim=-2)  # (..., nc, F)
    kv_before = F.pad(kv_chunks.cumsum(dim=-3), (0, 0, 0, 0, 1, 0))[..., :-1, :, :]  # (..., nc, F, Dv)
    z_before = F.pad(z_chunks.cumsum(dim=-2), (0, 0, 1, 0))[..., :-1, :]  # (..., nc, F)
    # Inside each chunk: the masked quadratic form on C x C.
    inside = torch.matmul(fq, fk.transpose(-2, -1)) * causal_mask(c, device=q.device)  # (..., nc, C, C)
    numerator = torch.matmul(fq, kv_before) + torch.matmul(inside, v)  # (..., nc, C, Dv)
    denominator = (fq * z_before[..., None, :]).sum(dim=-1, keepdim=True) + inside.sum(dim=-1, keepdim=True)
    out = numerator / (denominator + eps)  # (..., nc, C, Dv)
    return out.reshape(*batch, nc * c, dv)[..., :n, :].to(dtype)  # (..., N, Dv)
