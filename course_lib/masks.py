"""Boolean attention masks.

Convention used everywhere in the course (the same as ``torch.nn.functional.scaled_dot_product_attention``):
**True means "this query may attend to this key"**, False means the key is hidden from that query.

Shape legend: ``B`` batch, ``L`` query length, ``S`` key length, ``N`` sequence length when L = S.
A mask of shape ``(L, S)`` broadcasts over batch and head dimensions.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .validate import integer

__all__ = ["causal_mask", "padding_mask", "window_mask"]


def causal_mask(n: int, *, device: torch.device | str | None = None) -> Tensor:
    """Lower-triangular mask ``(N, N)``: query ``i`` may attend to keys ``j <= i`` (the past and itself)."""
    integer("n", n, minimum=0)
    return torch.ones(n, n, dtype=torch.bool, device=device).tril()


def padding_mask(lengths: Tensor | list[int], max_len: int) -> Tensor:
    """Key-padding mask ``(B, 1, S)``, ``S = max_len``: key ``j`` of sequence ``b`` is visible iff ``j < lengths[b]``.

    The middle dimension of size 1 lets the mask broadcast over every query of the sequence, so it can be
    passed straight to :func:`course_lib.attention.scaled_dot_product_attention` with inputs ``(B, L, D)``.
    For inputs with a head dimension ``(B, H, L, D)`` use ``padding_mask(...)[:, None]`` → ``(B, 1, 1, S)``.
    The device follows ``lengths`` when it is a tensor.
    """
    integer("max_len", max_len, minimum=0)
    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1:
        raise ValueError(f"lengths must be 1-D (B,), got shape {tuple(lengths.shape)}")
    if lengths.dtype.is_floating_point or lengths.dtype == torch.bool:
        raise TypeError(f"lengths must hold integers, got dtype {lengths.dtype}")
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
    i = torch.arange(n, device=device)[:, None]
    j = torch.arange(n, device=device)[None, :]
    offset = i - j  # (N, N), how far key j lies behind query i
    if causal:
        return (offset >= 0) & (offset <= window)
    return offset.abs() <= window
