r"""Truncated and efficient attention, each beside the plain reference it equals.

Full attention builds an :math:`L \times S` score matrix: :math:`O(n^2 d)` time and :math:`O(n^2)` memory for a
sequence of :math:`n` tokens. The functions here avoid that matrix in two different ways (a third, linear
attention, is a different model and lives in :mod:`course_lib.linear`):

- :func:`sliding_window_attention` (the band :math:`|i-j| \le W`, block by block, :math:`O(nW)` memory) equals
  :func:`sliding_window_attention_reference`, which masks a full :math:`n \times n` matrix;
- :func:`chunked_attention` (exact softmax attention over key chunks with an *online softmax*, :math:`O(n)` memory)
  equals :func:`chunked_attention_reference`, i.e. ``torch.nn.functional.scaled_dot_product_attention``.

The sparse patterns of Longformer and BigBird are boolean masks, in :mod:`course_lib.masks`.

Shape legend (every docstring and shape comment below uses it):

- ``...``  leading batch dimensions (batch ``B``, heads ``H``, ...); they broadcast between ``q``, ``k``, ``v``
- ``L``    number of queries     ``S``  number of keys (= values)     ``N``  sequence length when ``L = S``
- ``Dk``   query/key width       ``Dv`` value width
- ``W``    window: query ``i`` may attend to key ``j`` iff ``|i - j| <= W`` (``0 <= i - j <= W`` when causal)
- ``C``    chunk (block) size    ``nb`` number of blocks, ``ceil(N / C)``

Conventions are those of :mod:`course_lib.attention`: softmax over the key axis, ``scale`` defaults to
``1 / sqrt(Dk)``, masks are boolean with **True = may attend**, ``float16``/``bfloat16`` inputs are computed in
``float32`` and cast back, and every function follows the device of its inputs. ``causal=True`` means query
``i`` sees keys ``j <= i`` (for ``L != S`` in :func:`chunked_attention`: the top-left aligned triangle, as
``torch.nn.functional.scaled_dot_product_attention(..., is_causal=True)``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .attention import scaled_dot_product_attention
from .masks import causal_mask, window_mask
from .validate import attention_inputs, compute_dtype, flag, integer, same_length

__all__ = [
    "chunked_attention",
    "chunked_attention_reference",
    "sliding_window_attention",
    "sliding_window_attention_reference",
]


# ---------------------------------------------------------------------------------------------- sliding window


def _neighbour_spans(x: Tensor, nb: int, c: int, span: int) -> Tensor:
    """``x (..., (nb + span/C - 1) * C, D)`` padded by one block on the left → ``(..., nb, span, D)``: block ``b``
    followed by its ``span / C - 1`` right neighbours (block ``b`` of the result starts at query block ``b - 1``)."""
    blocks = x.reshape(*x.shape[:-2], -1, c, x.shape[-1])  # (..., nb + span/C - 1, C, D)
    return torch.cat([blocks[..., i : i + nb, :, :] for i in range(span // c)], dim=-2)  # (..., nb, span, D)


def sliding_window_attention_reference(
    q: Tensor, k: Tensor, v: Tensor, window: int, causal: bool = False, *, scale: float | None = None
) -> Tensor:
    """The plain band attention: mask a full ``(N, N)`` score matrix with :func:`course_lib.window_mask`.

    ``O(N^2)`` memory whatever the window; :func:`sliding_window_attention` gives the same result in ``O(N W)``.
    Shapes as in :func:`sliding_window_attention`.
    """
    attention_inputs(q, k, v, scale=scale)
    n = same_length(q, k, "sliding-window attention")
    integer("window", window, minimum=0)
    return scaled_dot_product_attention(q, k, v, window_mask(n, window, causal, device=q.device), scale=scale)


def sliding_window_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    *,
    scale: float | None = None,
    block_size: int | None = None,
) -> Tensor:
    """Attention restricted to the band ``|i - j| <= window``, in ``O(N * window)`` memory.

    Equals :func:`sliding_window_attention_reference` (a full ``(N, N)`` matrix masked with
    ``window_mask(N, window, causal)``) but never builds that matrix. The sequence is cut into ``nb`` blocks of
    ``C = block_size`` queries (default ``C = W``, at least 1). Because ``C >= W``, every key that a query
    of block ``b`` may see lies in blocks ``b - 1``, ``b`` or ``b + 1`` (only ``b - 1`` and ``b`` when causal),
    so each block of queries is scored against a span of ``3C`` (``2C``) keys: the padded key blocks concatenated
    with their neighbours (a copy of ``3 N Dk`` numbers, the size of the inputs). The scores have shape
    ``(..., nb, C, 3C)``: about ``3 N C`` numbers instead of ``N^2``. Positions outside the band (and padding)
    are masked inside each block.

    Args:
        q: queries ``(..., N, Dk)``.
        k: keys ``(..., N, Dk)``; self-attention needs ``L = S = N``.
        v: values ``(..., N, Dv)``.
        window: ``W >= 0``; query ``i`` sees keys ``j`` with ``|i - j| <= W`` (``0 <= i - j <= W`` if causal).
        causal: keep only the past half of the band.
        scale: factor on the scores, a number ``> 0``; default ``1 / sqrt(Dk)``.
        block_size: ``C >= max(min(W, N - 1), 1)`` (the default); larger blocks waste more of each span.

    Returns:
        ``(..., N, Dv)`` in ``q``'s dtype. Every query sees at least itself, so no row is ever empty.
    """
    batch = attention_inputs(q, k, v, scale=scale)
    n = same_length(q, k, "sliding-window attention")
    integer("window", window, minimum=0)
    flag("causal", causal)
    smallest_block = max(min(window, n - 1), 1)  # a window wider than the sequence is the whole sequence
    if block_size is None:
        block_size = smallest_block
    else:
        integer("block_size", block_size, minimum=smallest_block)
    dk, dv = q.shape[-1], v.shape[-1]
    if n == 0:
        return q.new_zeros(*batch, 0, dv)
    scale = 1.0 / math.sqrt(dk) if scale is None else scale
    dtype, compute = q.dtype, compute_dtype(q.dtype)
    c = block_size
    nb = -(-n // c)  # ceil(N / C)
    pad = nb * c - n
    span = 2 * c if causal else 3 * c  # keys of blocks b-1, b (and b+1 unless causal)

    q = q.to(compute).expand(*batch, n, dk)
    k = k.to(compute).expand(*batch, n, dk)
    v = v.to(compute).expand(*batch, n, dv)
    right = pad + (0 if causal else c)  # zeros: one block on the left, padding and (non-causal) one block right
    q_blocks = F.pad(q, (0, 0, 0, pad)).reshape(*batch, nb, c, dk)  # (..., nb, C, Dk)
    k_spans = _neighbour_spans(F.pad(k, (0, 0, c, right)), nb, c, span)  # (..., nb, span, Dk)
    v_spans = _neighbour_spans(F.pad(v, (0, 0, c, right)), nb, c, span)  # (..., nb, span, Dv)

    # Query a of block b sits at position i = b*C + a, key t of its span at j = (b-1)*C + t. Their distance
    # i - j = C + a - t does not depend on b, so one (C, span) band pattern serves every block.
    a = torch.arange(c, device=q.device)[:, None]
    t = torch.arange(span, device=q.device)[None, :]
    offset = c + a - t  # (C, span)
    band = (offset >= 0) & (offset <= window) if causal else offset.abs() <= window
    key_pos = (torch.arange(nb, device=q.device)[:, None] - 1) * c + t  # (nb, span) absolute key positions
    allowed = band & ((key_pos >= 0) & (key_pos < n))[:, None, :]  # (nb, C, span): in the band, not padding

    scores = torch.matmul(q_blocks, k_spans.transpose(-2, -1)) * scale  # (..., nb, C, span)
    scores = scores.masked_fill(~allowed, torch.finfo(compute).min)
    weights = torch.softmax(scores, dim=-1)  # (..., nb, C, span)
    out = torch.matmul(weights, v_spans)  # (..., nb, C, Dv)
    return out.reshape(*batch, nb * c, dv)[..., :n, :].to(dtype)  # (..., N, Dv)


# ---------------------------------------------------------------------------------------------- chunked (exact)


def chunked_attention_reference(
    q: Tensor, k: Tensor, v: Tensor, causal: bool = False, *, scale: float | None = None
) -> Tensor:
    """Full softmax attention with the whole ``(..., L, S)`` score matrix in memory: the result that
    :func:`chunked_attention` must reproduce. Equals ``F.scaled_dot_product_attention(q, k, v, is_causal=causal)``.
    """
    attention_inputs(q, k, v, scale=scale)
    mask = causal_mask(q.shape[-2], num_keys=k.shape[-2], device=q.device) if flag("causal", causal) else None
    return scaled_dot_product_attention(q, k, v, mask, scale=scale)


def chunked_attention(
    q: Tensor, k: Tensor, v: Tensor, chunk_size: int = 128, causal: bool = False, *, scale: float | None = None
) -> Tensor:
    r"""Exact softmax attention, reading the keys ``chunk_size`` at a time with an online softmax.

    For each query the function keeps three running quantities over the keys seen so far: the largest score
    :math:`m`, the sum :math:`\ell = \sum_j e^{s_j - m}` and the unnormalised output
    :math:`a = \sum_j e^{s_j - m} v_j`. A new chunk with scores :math:`s_{j}` updates them as

    .. math::  m' = \max(m, \max_j s_j), \quad
               \ell' = e^{m - m'} \ell + \sum_j e^{s_j - m'}, \quad
               a' = e^{m - m'} a + \sum_j e^{s_j - m'} v_j,

    and after the last chunk the output is :math:`a / \ell`, which is exactly
    :math:`\sum_j \operatorname{softmax}(s)_j v_j`. The score matrix never exists as a whole: at most
    ``(..., L, C)`` scores are alive at once, so the memory is ``O(L C + L Dv)`` instead of ``O(L S)``, while the
    arithmetic is the same as full attention. This is the idea behind FlashAttention (which also tiles the
    queries and fuses everything into one GPU kernel). Any ``chunk_size >= 1`` gives the same result, whether or
    not it divides ``S``. With ``causal=True`` a chunk that starts at key ``j0`` is scored only against queries
    ``i >= j0`` (the others cannot see it), and chunks past the last query are skipped.

    Equals :func:`chunked_attention_reference` and ``torch.nn.functional.scaled_dot_product_attention``.
    Gradients flow (the running maximum is treated as a constant, which changes nothing: the result does not
    depend on it).

    Args:
        q: queries ``(..., L, Dk)``.
        k: keys ``(..., S, Dk)``.
        v: values ``(..., S, Dv)``.
        chunk_size: ``C``, keys per step.
        causal: query ``i`` sees keys ``j <= i``.
        scale: factor on the scores, a number ``> 0``; default ``1 / sqrt(Dk)``.

    Returns:
        ``(..., L, Dv)`` in ``q``'s dtype (zeros if there are no keys at all, ``S = 0``).
    """
    batch = attention_inputs(q, k, v, scale=scale)
    integer("chunk_size", chunk_size, minimum=1)
    flag("causal", causal)
    l, s, dk, dv = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    dtype, compute = q.dtype, compute_dtype(q.dtype)
    scale = 1.0 / math.sqrt(dk) if scale is None else scale
    device = q.device
    q_scaled = q.to(compute) * scale  # (..., L, Dk): scale once, not every chunk
    m = torch.full((*batch, l, 1), -math.inf, dtype=compute, device=device)  # running max of the scores
    total = torch.zeros(*batch, l, 1, dtype=compute, device=device)  # running sum of exp(score - m)
    acc = torch.zeros(*batch, l, dv, dtype=compute, device=device)  # running sum of exp(score - m) * value
    if s == 0 or l == 0:
        return acc.to(dtype)
    for j0 in range(0, s, chunk_size):
        if causal and j0 >= l:
            break  # every remaining key lies in the future of every query
        r0 = j0 if causal else 0  # queries r < j0 see nothing of this chunk when causal
        k_chunk = k[..., j0 : j0 + chunk_size, :].to(compute)  # (..., C, Dk)
        v_chunk = v[..., j0 : j0 + chunk_size, :].to(compute)  # (..., C, Dv)
        scores = torch.matmul(q_scaled[..., r0:, :], k_chunk.transpose(-2, -1))  # (..., L - r0, C)
        if causal:  # row r (query r0 + r) sees column t (key j0 + t) iff t <= r: only the first C rows clip
            c = k_chunk.shape[-2]
            future = ~torch.ones(min(c, l - r0), c, dtype=torch.bool, device=device).tril()
            scores[..., : future.shape[0], :] = scores[..., : future.shape[0], :].masked_fill(future, -math.inf)
        m_old = m[..., r0:, :]
        m_new = torch.maximum(m_old, scores.detach().amax(dim=-1, keepdim=True))  # (..., L - r0, 1), finite
        p = scores.sub_(m_new).exp_()  # (..., L - r0, C), in place: exp(score - m')
        correction = torch.exp(m_old - m_new)  # e^{m - m'}; 0 on the first chunk (m = -inf)
        new_total = total[..., r0:, :] * correction + p.sum(dim=-1, keepdim=True)
        new_acc = acc[..., r0:, :] * correction + torch.matmul(p, v_chunk)  # (..., L - r0, Dv)
        if r0 == 0:
            m, total, acc = m_new, new_total, new_acc
        else:
            m[..., r0:, :] = m_new
            total[..., r0:, :] = new_total
            acc[..., r0:, :] = new_acc
    return (acc / total).to(dtype)  # (..., L, Dv)
