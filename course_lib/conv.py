r"""Self-attention that *is* a convolution: the construction of Cordonnier, Loukas & Jaggi (ICLR 2020).

A ``K x K`` convolution with stride 1 and zero padding ``K // 2`` computes, at every pixel ``q``,

.. math::  y_q = b + \sum_{\Delta} x_{q + \Delta}\, W_\Delta, \qquad \Delta \in \{-p, \dots, p\}^2,\ p = K // 2,

one matrix ``W_Delta`` (``C_in x C_out``, a slice of the kernel) per shift. Multi-head self-attention with
``N_h = K^2`` heads computes

.. math::  \operatorname{MHSA}(X)_q = b_{out} + \sum_h \sum_k A^{(h)}_{qk}\, x_k\, W^{(h)}_{val} W^{(h)}_{out}.

If head ``h`` puts all its attention on the single key ``k = q + Delta_h`` (a one-hot row of ``A^(h)``) and
``W_val^(h) W_out^(h) = W_{Delta_h}``, the two are equal. The one-hot rows come from a *relative positional*
attention score that ignores the pixels' content: ``-alpha * ||delta - Delta_h||^2`` with ``delta = k - q``,
whose softmax tends to the one-hot row as ``alpha`` grows. The score is a dot product of positional features,

.. math::  -\alpha\|p_k - p_q - \Delta_h\|^2 = \underbrace{\alpha\,(-1,\ 2(p_q + \Delta_h))}_{\text{query of } q}
           \cdot \underbrace{(\|p_k\|^2,\ p_k)}_{\text{key of } k} \;-\; \alpha\|p_q + \Delta_h\|^2,

and the last term is the same for every key, so the softmax ignores it: this is ordinary dot-product attention
with 3-dimensional queries and keys built from positions. Zero padding is reproduced by attending over the
zero-padded image (padding pixels are tokens whose value is zero) and keeping the outputs of the real pixels.

Shape legend: ``B`` batch, ``C_in`` / ``C_out`` channels, ``H`` x ``W`` image, ``K`` kernel size (odd),
``p = K // 2``, ``N_h = K^2`` heads, ``L`` positions of a grid (row-major, ``L = height * width``),
``L_p = (H + 2p)(W + 2p)`` positions of the padded grid.

Reference beside construction: :func:`conv_as_attention` equals ``conv(x)`` (``torch.nn.Conv2d``), tested for
``K`` = 1, 3, 5, with and without bias, several channel counts, ``float32`` and ``float64``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import scaled_dot_product_attention
from .validate import flag, instance, integer, number, tensor

__all__ = [
    "conv_as_attention",
    "grid_positions",
    "kernel_shifts",
    "positional_queries_keys",
    "receptive_field",
    "shift_attention_weights",
]


def _check_kernel_size(kernel_size: object) -> None:
    integer("kernel_size", kernel_size, minimum=1)
    if kernel_size % 2 == 0:
        raise ValueError(f"kernel_size must be odd (a centre pixel and p = K // 2 on each side), got {kernel_size}")


def _check_alpha(alpha: object) -> None:
    if alpha is None:
        return
    number("alpha", alpha, minimum=0, strict_minimum=True)  # None (checked above) is the limit alpha -> infinity


def kernel_shifts(kernel_size: int, *, device: torch.device | str | None = None) -> Tensor:
    """The ``K^2`` shifts ``Delta_h = (u - p, v - p)``, one per kernel entry ``(u, v)``, in row-major order.

    Head ``h = u * K + v`` looks at the pixel ``Delta_h`` away from the query, which is the pixel that the kernel
    entry ``weight[:, :, u, v]`` multiplies in ``torch.nn.Conv2d`` (a cross-correlation, not a flipped kernel).

    Returns:
        ``(K^2, 2)`` int64: rows ``(d_row, d_col)`` with entries in ``-p .. p``.
    """
    _check_kernel_size(kernel_size)
    p = kernel_size // 2
    offsets = torch.arange(-p, p + 1, device=device)
    rows, cols = torch.meshgrid(offsets, offsets, indexing="ij")
    return torch.stack([rows.reshape(-1), cols.reshape(-1)], dim=-1)  # (K^2, 2)


def grid_positions(height: int, width: int, *, device: torch.device | str | None = None) -> Tensor:
    """Pixel coordinates ``(row, col)`` of a ``height x width`` grid in row-major order: position ``i * width + j``.

    Returns:
        ``(L, 2)`` int64 with ``L = height * width``.
    """
    integer("height", height, minimum=1)
    integer("width", width, minimum=1)
    rows, cols = torch.meshgrid(torch.arange(height, device=device), torch.arange(width, device=device), indexing="ij")
    return torch.stack([rows.reshape(-1), cols.reshape(-1)], dim=-1)  # (L, 2)


def positional_queries_keys(
    height: int,
    width: int,
    kernel_size: int,
    alpha: float,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[Tensor, Tensor]:
    """Content-free queries and keys whose dot products are ``-alpha ||p_k - p_q - Delta_h||^2`` (+ a row constant).

    Query of position ``q`` in head ``h``: ``alpha * (-1, 2 (p_q + Delta_h))``; key of position ``k``:
    ``(||p_k||^2, p_k)``. Their dot product is ``-alpha ||p_k - p_q - Delta_h||^2 + alpha ||p_q + Delta_h||^2``; the
    second term does not depend on ``k``, so the softmax over keys (with scale 1) is that of
    ``-alpha ||delta - Delta_h||^2``, ``delta = p_k - p_q``.

    Returns:
        queries ``(K^2, L, 3)`` and keys ``(L, 3)`` in ``dtype`` on ``device``, ``L = height * width``.
    """
    _check_kernel_size(kernel_size)
    if alpha is None:
        raise ValueError("alpha must be a positive finite number here (the limit has no finite queries)")
    _check_alpha(alpha)
    pos = grid_positions(height, width, device=device).to(dtype)  # (L, 2)
    shifts = kernel_shifts(kernel_size, device=device).to(dtype)  # (K^2, 2)
    target = pos[None, :, :] + shifts[:, None, :]  # (K^2, L, 2): the pixel each head wants to see
    queries = alpha * torch.cat([-torch.ones_like(target[..., :1]), 2 * target], dim=-1)  # (K^2, L, 3)
    keys = torch.cat([(pos**2).sum(-1, keepdim=True), pos], dim=-1)  # (L, 3)
    return queries, keys


def shift_attention_weights(
    height: int,
    width: int,
    kernel_size: int,
    alpha: float | None = None,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    """Attention probabilities of the ``K^2`` positional heads on a ``height x width`` grid.

    ``weights[h, q, k] = softmax_k(-alpha ||p_k - p_q - Delta_h||^2)``. With ``alpha=None`` (the limit
    ``alpha -> infinity``) each row is one-hot on the key nearest to ``p_q + Delta_h``: exactly that pixel when it lies
    on the grid, else the border pixel closest to it (the convolution construction never uses such rows: it
    pads the grid and keeps only the queries whose target lies on it).

    Returns:
        ``(K^2, L, L)``, rows sum to 1, in ``dtype`` on ``device``.
    """
    _check_kernel_size(kernel_size)
    _check_alpha(alpha)
    pos = grid_positions(height, width, device=device).to(dtype)  # (L, 2)
    shifts = kernel_shifts(kernel_size, device=device).to(dtype)  # (K^2, 2)
    delta = pos[None, :, :] - pos[:, None, :]  # (L, L, 2): delta[q, k] = p_k - p_q
    dist2 = ((delta[None] - shifts[:, None, None, :]) ** 2).sum(-1)  # (K^2, L, L) = ||delta - Delta_h||^2
    if alpha is None:
        nearest = dist2 == dist2.min(dim=-1, keepdim=True).values  # the limit of the softmax: its argmax set
        return nearest.to(dtype) / nearest.sum(-1, keepdim=True).to(dtype)
    return torch.softmax(-alpha * dist2, dim=-1)


def _check_conv(x: object, conv: object) -> tuple[int, int]:
    instance("conv", conv, nn.Conv2d, "a torch.nn.Conv2d")
    tensor("x", x, floating=True, shape=(None,) * 4, layout="(B, C_in, H, W)")
    kh, kw = conv.kernel_size
    if kh != kw or kh % 2 == 0:
        raise ValueError(f"conv must have a square kernel of odd size K, got kernel_size={conv.kernel_size}")
    k = kh
    if conv.stride != (1, 1):
        raise ValueError(f"conv must have stride 1, got stride={conv.stride}")
    if conv.dilation != (1, 1):
        raise ValueError(f"conv must have dilation 1, got dilation={conv.dilation}")
    if conv.groups != 1:
        raise ValueError(f"conv must have groups=1, got groups={conv.groups}")
    if conv.padding_mode != "zeros":
        raise ValueError(f"conv must pad with zeros, got padding_mode={conv.padding_mode!r}")
    if conv.padding != "same" and tuple(conv.padding) != (k // 2, k // 2):
        raise ValueError(
            f"conv must have zero padding K // 2 = {k // 2} (output size = input size), got padding={conv.padding}"
        )
    if x.shape[1] != conv.in_channels:
        raise ValueError(
            f"x has C_in={x.shape[1]} channels (shape {tuple(x.shape)}) but conv expects in_channels={conv.in_channels}"
        )
    return k, k // 2


def conv_as_attention(
    x: Tensor, conv: nn.Conv2d, *, alpha: float | None = None, return_weights: bool = False
) -> Tensor | tuple[Tensor, Tensor]:
    """``conv(x)`` computed as multi-head self-attention with ``K^2`` positional heads (Cordonnier et al., 2020).

    Steps (shapes for one batch):

    1. pad ``x`` with ``p = K // 2`` zeros on each side and read it as a sequence of ``L_p`` pixel vectors;
    2. head ``h`` (shift ``Delta_h``, see :func:`kernel_shifts`) has value projection
       ``W_val^(h) = weight[:, :, u, v].T`` (``C_in x C_out``); its attention probabilities come from
       :func:`positional_queries_keys` through :func:`course_lib.scaled_dot_product_attention` with scale 1
       (finite ``alpha``), or are the one-hot limit ``alpha -> infinity`` (``alpha=None``, the exact construction);
    3. concatenate the ``K^2`` head outputs and apply ``W_out`` = ``K^2`` stacked ``C_out x C_out`` identities
       plus ``b_out = conv.bias``, i.e. sum the heads;
    4. keep the outputs of the ``H x W`` real pixels.

    Args:
        x: images ``(B, C_in, H, W)``.
        conv: ``torch.nn.Conv2d`` with odd square kernel ``K``, stride 1, dilation 1, groups 1, zero padding ``K // 2``.
        alpha: sharpness of the attention; ``None`` (default) is the limit, which reproduces ``conv(x)`` exactly.
        return_weights: also return the attention probabilities on the padded grid.

    Returns:
        ``(B, C_out, H, W)`` in ``x``'s dtype on ``x``'s device (equal to ``conv(x)`` when ``alpha`` is ``None``), and
        with ``return_weights`` the probabilities ``(K^2, L_p, L_p)`` (the same for every image).
    """
    k, p = _check_conv(x, conv)
    _check_alpha(alpha)
    flag("return_weights", return_weights)
    b, c_in, h, w = x.shape
    c_out = conv.out_channels
    heads = k * k
    hp, wp = h + 2 * p, w + 2 * p

    seq = F.pad(x, (p, p, p, p)).flatten(2).transpose(1, 2)  # (B, L_p, C_in): padded pixels as a sequence
    weight = conv.weight.to(dtype=x.dtype)  # (C_out, C_in, K, K)
    w_val = weight.permute(2, 3, 1, 0).reshape(heads, c_in, c_out)  # (N_h, C_in, C_out): head h = u * K + v
    values = torch.einsum("blc,hcd->bhld", seq, w_val)  # (B, N_h, L_p, C_out)

    if alpha is None:
        probs = shift_attention_weights(hp, wp, k, None, device=x.device, dtype=x.dtype)  # (N_h, L_p, L_p)
        heads_out = torch.matmul(probs, values)  # (B, N_h, L_p, C_out)
    else:
        queries, keys = positional_queries_keys(hp, wp, k, alpha, device=x.device, dtype=x.dtype)
        heads_out, probs = scaled_dot_product_attention(
            queries[None], keys[None, None], values, scale=1.0, return_weights=True
        )  # (B, N_h, L_p, C_out), (B, N_h, L_p, L_p)
        probs = probs[0]  # content-free: the same for every image

    concat = heads_out.transpose(1, 2).reshape(b, hp * wp, heads * c_out)  # (B, L_p, N_h * C_out)
    w_out = torch.eye(c_out, device=x.device, dtype=x.dtype).repeat(heads, 1)  # (N_h * C_out, C_out)
    out = concat @ w_out  # (B, L_p, C_out): the sum of the heads
    if conv.bias is not None:
        out = out + conv.bias.to(dtype=x.dtype)
    out = out.transpose(1, 2).reshape(b, c_out, hp, wp)[:, :, p : p + h, p : p + w]  # (B, C_out, H, W)
    return (out, probs) if return_weights else out


def receptive_field(
    model: Callable[[Tensor], Tensor], input_shape: tuple[int, int, int], position: tuple[int, int]
) -> Tensor:
    """Which input pixels can change the output at ``position``: a boolean ``(H, W)`` map, found by autograd.

    The gradient of ``model(x)[0, :, i, j].sum()`` with respect to ``x`` is taken at one random input (in the dtype of
    the model's parameters, float64 for a function); a pixel is in the receptive field when the gradient at any of
    its channels is non-zero. For layers that are linear in ``x`` (convolution, attention with content-free weights)
    this is exact; after a ReLU it is the dependence at this input (a pixel feeding only inactive units is missed).
    The model must map ``(1, C, H, W)`` to ``(1, C', H, W)``.

    Args:
        model: a function or module ``(1, C, H, W) -> (1, C', H, W)``.
        input_shape: ``(C, H, W)``.
        position: ``(i, j)``, the output pixel.

    Returns:
        ``(H, W)`` bool on the CPU.
    """
    if len(input_shape) != 3:
        raise ValueError(f"input_shape must be (C, H, W), got {input_shape!r}")
    c, h, w = (integer(f"input_shape[{n}]", size, minimum=1) for n, size in enumerate(input_shape))
    if len(position) != 2:
        raise ValueError(f"position must be (i, j), got {position!r}")
    i, j = (integer(f"position[{n}]", index) for n, index in enumerate(position))
    if not (0 <= i < h and 0 <= j < w):
        raise ValueError(f"position {position!r} lies outside the {h} x {w} image")
    params = list(model.parameters()) if isinstance(model, nn.Module) else []
    device = params[0].device if params else torch.device("cpu")
    dtype = params[0].dtype if params and params[0].dtype.is_floating_point else torch.float64
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, c, h, w, generator=g, dtype=torch.float64).to(device=device, dtype=dtype).requires_grad_(True)
    y = model(x)
    if y.dim() != 4 or y.shape[-2:] != (h, w):
        raise ValueError(f"model must map (1, C, H, W) to (1, C', H, W) with H, W = {h}, {w}; got {tuple(y.shape)}")
    (grad,) = torch.autograd.grad(y[0, :, i, j].sum(), x)
    return (grad[0] != 0).any(dim=0).cpu()  # (H, W)
