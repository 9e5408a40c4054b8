"""Boolean attention masks.

Convention used everywhere in the course (the same as ``torch.nn.functional.scaled_dot_product_attention``):
**True means "this query may attend to this key"**, False means the key is hidden from that query.

Shape legend: ``B`` batch, ``H`` heads, ``L`` query length, ``S`` key length, ``N`` sequence length when L = S.
A mask of shape ``(L, S)`` broadcasts over batch and head dimensions.

Every attention function and layer of the course checks its mask with :func:`expand_mask`, whose docstring is the
one table of the mask shapes they accept. Besides the masks of everyday use (causal, padding, a sliding window) the
module holds the sparse patterns of Longformer and BigBird, and :func:`mask_receptive_field`, which follows a mask
through several layers.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from .validate import broadcasts_to, flag, integer, shape_of, tensor

__all__ = [
    "bigbird_mask",
    "causal_mask",
    "expand_mask",
    "longformer_mask",
    "mask_receptive_field",
    "padding_mask",
    "window_mask",
]


def _boolean(mask: object, name: str = "mask") -> Tensor:
    """``mask`` if it is a boolean tensor; the one wording of the course for a mask of another type or dtype."""
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        got = f"dtype {mask.dtype}" if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(
            f"{name} must be a boolean tensor (True = may attend), got {got}; "
            "for an additive mask of 0 / -inf use `mask = additive == 0`"
        )
    return mask


def expand_mask(mask: object, scores: tuple[int, ...], *, heads: bool = False, name: str = "mask") -> Tensor:
    """Check an attention mask against the scores it will hide and return it ready to broadcast against them.

    The one rule of the course: a mask is a boolean tensor, **True = may attend**, and any dimension of size 1
    broadcasts. The shapes it may have:

    ==================  ==========================================================================================
    ``scores``          accepted masks
    ==================  ==========================================================================================
    ``(..., L, S)``     a function's scores (:func:`course_lib.attention.scaled_dot_product_attention`): any
                        shape that broadcasts to them, e.g. ``(L, S)``, a :func:`padding_mask` ``(B, 1, S)``
    ``(B, H, L, S)``    a layer's scores (``heads=True``): ``(L, S)`` the same for every sequence and head;
                        ``(B, L, S)`` one per sequence, shared by the heads (a :func:`padding_mask` ``(B, 1, S)`` is
                        one); ``(B, H, L, S)`` one per head
    ==================  ==========================================================================================

    Returns ``mask`` itself for a function's scores, and a view of it with four dimensions for a layer's:
    ``(1, 1, L, S)``, ``(B, 1, L, S)`` or ``(B, H, L, S)`` (sizes 1 kept). TypeError for a non-boolean mask,
    ValueError for a shape that does not fit; messages call the mask ``name`` (``"memory_mask"``, ...).
    """
    mask = _boolean(mask, name)
    if not heads:
        if not broadcasts_to(mask.shape, tuple(scores)):
            raise ValueError(
                f"{name} of shape {shape_of(mask)} does not broadcast to the scores (..., L, S) = {tuple(scores)}"
            )
        return mask
    given = shape_of(mask)
    if mask.dim() in (2, 3):
        mask = mask[None, None] if mask.dim() == 2 else mask[:, None]  # (1, 1, L, S) or (B, 1, L, S)
    if mask.dim() != 4 or not broadcasts_to(mask.shape, tuple(scores)):
        raise ValueError(
            f"{name} must have shape (L, S), (B, L, S) or (B, H, L, S) with (B, H, L, S) = {tuple(scores)} "
            f"(dimensions of size 1 broadcast), got {given}"
        )
    return mask


def causal_mask(n: int, *, num_keys: int | None = None, device: torch.device | str | None = None) -> Tensor:
    """Lower-triangular mask ``(N, S)``: query ``i`` may attend to keys ``j <= i`` (the past and itself).

    ``S = num_keys`` (default ``N``); for ``S != N`` the triangle is aligned top-left, as
    ``torch.nn.functional.scaled_dot_product_attention(..., is_causal=True)`` aligns it.
    """
    integer("n", n, minimum=0)
    num_keys = n if num_keys is None else integer("num_keys", num_keys, minimum=0)
    return torch.ones(n, num_keys, dtype=torch.bool, device=device).tril()


def padding_mask(lengths: Tensor | list[int], max_len: int) -> Tensor:
    """Key-padding mask ``(B, 1, S)``, ``S = max_len``: key ``j`` of sequence ``b`` is visible iff ``j < lengths[b]``.

    The middle dimension of size 1 lets the mask broadcast over every query of the sequence, so it can be
    passed straight to :func:`course_lib.attention.scaled_dot_product_attention` with inputs ``(B, L, D)``.
    For inputs with a head dimension ``(B, H, L, D)`` use ``padding_mask(...)[:, None]`` → ``(B, 1, 1, S)``.
    The device follows ``lengths`` when it is a tensor.
    """
    integer("max_len", max_len, minimum=0)
    lengths = tensor("lengths", torch.as_tensor(lengths), integral=True, shape=(None,), layout="(B,)")
    if lengths.numel() and (int(lengths.min()) < 0 or int(lengths.max()) > max_len):
        raise ValueError(f"lengths must lie in [0, max_len={max_len}], got {lengths.tolist()}")
    positions = torch.arange(max_len, device=lengths.device)  # (S,)
    return (positions[None, :] < lengths[:, None])[:, None, :]  # (B, 1, S)


def window_mask(n: int, window: int, causal: bool = False, *, device: torch.device | str | None = None) -> Tensor:
    """Band mask ``(N, N)``: query ``i`` may attend to key ``j`` iff ``|i - j| <= window``.

    With ``causal=True`` only the past half of the band is kept: ``0 <= i - j <= window``.
    ``window=0`` lets each position see only itself.
    """
    integer("n", n, minimum=0)
    integer("window", window, minimum=0)
    flag("causal", causal)
    # Entry (i, j) lies on diagonal j - i. triu(-W) keeps the diagonals j - i >= -W (keys at most W behind the
    # query), tril(W) those with j - i <= W (at most W ahead), tril(0) none ahead. Built in place on one boolean
    # (N, N) matrix: no (N, N) integer offsets (16 bytes an entry, 0.15 s of CPU at N = 4096).
    mask = torch.ones(n, n, dtype=torch.bool, device=device).triu_(-window)  # (N, N): i - j <= W
    return mask.tril_(0 if causal else window)  # and j <= i, or j - i <= W


# ---------------------------------------------------------------------------------------------- sparse patterns
# Longformer and BigBird as boolean masks: for pictures and for following information through layers, not for speed.


def _global_index(n: int, global_tokens: int | Sequence[int], device) -> Tensor:
    if isinstance(global_tokens, int):  # the first g tokens (a bool is refused by `integer`)
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
    if _boolean(mask).dim() != 2 or mask.shape[0] != mask.shape[1]:
        raise ValueError(f"mask must be square (N, N), got shape {shape_of(mask)}")
    integer("num_layers", num_layers, minimum=0)
    step = mask.to(torch.float32)
    reach = torch.eye(mask.shape[0], dtype=torch.float32, device=mask.device)
    for _ in range(num_layers):
        reach = (torch.matmul(step, reach) > 0).to(torch.float32)  # i reaches j if some allowed key of i does
    return reach.to(torch.bool)
