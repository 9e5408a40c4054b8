r"""Truncated and efficient attention, each beside the plain reference it equals.

Full attention builds an :math:`L \times S` score matrix: :math:`O(n^2 d)` time and :math:`O(n^2)` memory for a
sequence of :math:`n` tokens. The functions here avoid that matrix in three different ways:

- :func:`sliding_window_attention` (the band :math:`|i-j| \le W`, block by block, :math:`O(nW)` memory) equals
  :func:`sliding_window_attention_reference`, which masks a full :math:`n \times n` matrix;
- :func:`chunked_attention` (exact softmax attention over key chunks with an *online softmax*, :math:`O(n)` memory)
  equals :func:`chunked_attention_reference`, i.e. ``torch.nn.functional.scaled_dot_product_attention``;
- :func:`linear_attention` (a positive feature map and re-associated products, :math:`O(n)` time and memory)
  equals :func:`linear_attention_reference`, its own quadratic form. It is a *different* model from softmax
  attention, not an approximation that becomes exact.

It also holds the sparse patterns of Longformer and BigBird as boolean masks (for pictures, not for speed) and
:func:`mask_receptive_field`, which follows a mask through several layers.

Shape legend (every docstring and shape comment below uses it):

- ``...``  leading batch dimensions (batch ``B``, heads ``H``, ...); they broadcast between ``q``, ``k``, ``v``
- ``L``    number of queries     ``S``  number of keys (= values)     ``N``  sequence length when ``L = S``
- ``Dk``   query/key width       ``Dv`` value width                   ``F``  feature width of linear attention
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
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from .attention import scaled_dot_product_attention
from .masks import window_mask
from .validate import compute_dtype, integer, shape_of, tensor

__all__ = [
    "bigbird_mask",
    "chunked_attention",
    "chunked_attention_reference",
    "elu_feature_map",
    "linear_attention",
    "linear_attention_reference",
    "linear_attention_weights",
    "longformer_mask",
    "mask_receptive_field",
    "sliding_window_attention",
    "sliding_window_attention_reference",
]



# ---------------------------------------------------------------------------------------------- input checks


def _check_qkv(q: object, k: object, v: object) -> tuple[int, ...]:
    """Validate ``q (..., L, Dk)``, ``k (..., S, Dk)``, ``v (..., S, Dv)``; return the broadcast batch shape."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        tensor(name, t, min_dim=2, floating=True, layout="(..., length, width)")
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"q, k and v must share one dtype, got q {q.dtype}, k {k.dtype}, v {v.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have the same last dimension d_k: q has shape {shape_of(q)} (d_k={q.shape[-1]}) "
            f"but k has shape {shape_of(k)} (d_k={k.shape[-1]})"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same length S: k has shape {shape_of(k)} (S={k.shape[-2]}) "
            f"but v has shape {shape_of(v)} (S={v.shape[-2]})"
        )
    try:
        return tuple(torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]))
    except RuntimeError:
        raise ValueError(
            f"the batch dimensions of q, k and v do not broadcast: q {shape_of(q)}, k {shape_of(k)}, v {shape_of(v)}"
        ) from None


def _same_length(q: Tensor, k: Tensor, what: str) -> int:
    if q.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"{what} needs as many queries as keys (L = S): q has shape {shape_of(q)} (L={q.shape[-2]}) "
            f"but k has shape {shape_of(k)} (S={k.shape[-2]})"
        )
    return q.shape[-2]


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
    _check_qkv(q, k, v)
    n = _same_length(q, k, "sliding-window attention")
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
        scale: factor on the scores, default ``1 / sqrt(Dk)``.
        block_size: ``C >= max(min(W, N - 1), 1)`` (the default); larger blocks waste more of each span.

    Returns:
        ``(..., N, Dv)`` in ``q``'s dtype. Every query sees at least itself, so no row is ever empty.
    """
    batch = _check_qkv(q, k, v)
    n = _same_length(q, k, "sliding-window attention")
    integer("window", window, minimum=0)
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


def _causal_keep(l: int, s: int, device: torch.device) -> Tensor:
    """``(L, S)`` top-left aligned triangle: query ``i`` may attend to key ``j`` iff ``j <= i``."""
    return torch.ones(l, s, dtype=torch.bool, device=device).tril()


def chunked_attention_reference(
    q: Tensor, k: Tensor, v: Tensor, causal: bool = False, *, scale: float | None = None
) -> Tensor:
    """Full softmax attention with the whole ``(..., L, S)`` score matrix in memory: the result that
    :func:`chunked_attention` must reproduce. Equals ``F.scaled_dot_product_attention(q, k, v, is_causal=causal)``.
    """
    _check_qkv(q, k, v)
    mask = _causal_keep(q.shape[-2], k.shape[-2], q.device) if causal else None
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
        scale: factor on the scores, default ``1 / sqrt(Dk)``.

    Returns:
        ``(..., L, Dv)`` in ``q``'s dtype (zeros if there are no keys at all, ``S = 0``).
    """
    batch = _check_qkv(q, k, v)
    integer("chunk_size", chunk_size, minimum=1)
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


# ---------------------------------------------------------------------------------------------- linear attention


def elu_feature_map(x: Tensor) -> Tensor:
    """``phi(x) = elu(x) + 1``, a positive feature map (Katharopoulos et al., 2020); ``(..., Dk) -> (..., Dk)``."""
    return F.elu(x) + 1.0


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
    if causal:
        _same_length(q, k, "causal linear attention")
    compute = compute_dtype(q.dtype)
    fq, fk = _features(q.to(compute), k.to(compute), feature_map)
    sim = torch.matmul(fq, fk.transpose(-2, -1))  # (..., L, S) phi(q_i) . phi(k_j)
    if causal:
        sim = sim * _causal_keep(q.shape[-2], k.shape[-2], q.device)
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
    _check_qkv(q, k, v)
    compute = compute_dtype(q.dtype)
    weights = linear_attention_weights(q.to(compute), k.to(compute), causal, feature_map=feature_map, eps=eps)
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
    batch = _check_qkv(q, k, v)
    integer("chunk_size", chunk_size, minimum=1)
    if causal:
        _same_length(q, k, "causal linear attention")
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
    inside = torch.matmul(fq, fk.transpose(-2, -1)) * _causal_keep(c, c, q.device)  # (..., nc, C, C)
    numerator = torch.matmul(fq, kv_before) + torch.matmul(inside, v)  # (..., nc, C, Dv)
    denominator = (fq * z_before[..., None, :]).sum(dim=-1, keepdim=True) + inside.sum(dim=-1, keepdim=True)
    out = numerator / (denominator + eps)  # (..., nc, C, Dv)
    return out.reshape(*batch, nc * c, dv)[..., :n, :].to(dtype)  # (..., N, Dv)


# ---------------------------------------------------------------------------------------------- sparse patterns


def _global_index(n: int, global_tokens: int | Sequence[int], device) -> Tensor:
    if isinstance(global_tokens, bool):
        raise TypeError("global_tokens must be an int (the first g tokens) or a sequence of positions, got bool")
    if isinstance(global_tokens, int):
        integer("global_tokens", global_tokens, minimum=0)
        if global_tokens > n:
            raise ValueError(f"global_tokens={global_tokens} is more than the n={n} tokens")
        return torch.arange(global_tokens, device=device)
    index = torch.as_tensor(list(global_tokens), dtype=torch.long, device=device)
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= n):
        raise ValueError(f"global token positions must lie in [0, n={n}), got {index.tolist()}")
    return index


def longformer_mask(
    n: int, window: int, global_tokens: int | Sequence[int] = 1, *, device: torch.device | str | None = None
) -> Tensor:
    """Longformer's pattern ``(N, N)``: a sliding window plus a few *global* tokens.

    Query ``i`` may attend to key ``j`` iff ``|i - j| <= window``, or ``i`` is global (it sees everything), or
    ``j`` is global (everyone sees it). ``global_tokens`` is a count ``g`` (the first ``g`` positions, e.g. a
    ``[CLS]`` token) or a list of positions. Beltagy, Peters and Cohan (2020).
    """
    mask = window_mask(n, window, device=device)  # validates n and window
    index = _global_index(n, global_tokens, mask.device)
    mask[index, :] = True  # global queries see every key
    mask[:, index] = True  # every query sees the global keys
    return mask


def bigbird_mask(
    n: int,
    window: int,
    global_tokens: int | Sequence[int] = 1,
    num_random: int = 2,
    *,
    seed: int = 0,
    device: torch.device | str | None = None,
) -> Tensor:
    """BigBird's pattern ``(N, N)``: Longformer's window and global tokens plus ``num_random`` random keys per query.

    The random keys of each query are drawn (with a ``torch.Generator`` seeded by ``seed``) among the keys its
    window and the global tokens do not already give it, so each query gains exactly ``num_random`` keys (fewer
    only when fewer remain). Zaheer et al. (2020) draw random *blocks* of keys for speed; this token-level
    version shows the same pattern at a glance.
    """
    integer("num_random", num_random, minimum=0)
    mask = longformer_mask(n, window, global_tokens, device="cpu")
    if num_random and n:
        g = torch.Generator().manual_seed(seed)
        draw = torch.rand(n, n, generator=g).masked_fill(mask, -1.0)  # keys already visible never win
        value, index = draw.topk(min(num_random, n), dim=-1)  # (N, r)
        rows = torch.arange(n)[:, None].expand_as(index)
        mask[rows[value >= 0], index[value >= 0]] = True
    return mask.to(device) if device is not None else mask


def mask_receptive_field(mask: Tensor, num_layers: int) -> Tensor:
    """Which inputs can reach which outputs through ``num_layers`` stacked attention layers with pattern ``mask``.

    Returns a boolean ``(N, N)`` matrix ``R`` with ``R[i, j]`` True iff output ``i`` of the last layer depends
    (through some chain of allowed query→key links) on input ``j``: ``R_0 = I`` and ``R_{l+1} = mask ∘ R_l``
    (a boolean matrix product). With ``window_mask(n, w)`` the field after ``l`` layers is the band of half-width
    ``l * w``: it grows linearly with depth.
    """
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        raise TypeError(f"mask must be a boolean torch.Tensor, got {getattr(mask, 'dtype', type(mask).__name__)}")
    if mask.dim() != 2 or mask.shape[0] != mask.shape[1]:
        raise ValueError(f"mask must be square (N, N), got shape {shape_of(mask)}")
    integer("num_layers", num_layers, minimum=0)
    step = mask.to(torch.float32)
    reach = torch.eye(mask.shape[0], dtype=torch.float32, device=mask.device)
    for _ in range(num_layers):
        reach = (torch.matmul(step, reach) > 0).to(torch.float32)  # i reaches j if some allowed key of i does
    return reach.to(torch.bool)
