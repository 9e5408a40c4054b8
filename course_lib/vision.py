r"""Images as sequences of patches: patchify, patch embedding, a tiny Vision Transformer and a tiny CNN.

The Vision Transformer (ViT) of Dosovitskiy et al. (ICLR 2021) reads an image as a sentence: cut it into
``P x P`` patches, flatten each patch into a vector, project every vector linearly to width ``D`` (the
*patch embedding*), put a learned *class token* in front, add learned position vectors and run Transformer
encoder blocks. The class token's final vector goes to a linear classifier.

Shape legend: ``B`` batch, ``C`` image channels, ``H`` x ``W`` image, ``P`` patch size,
``N = (H / P)(W / P)`` patches, ``D`` model width (``d_model``), ``Hd`` attention heads, ``K`` classes.

Patch order is row-major over the ``(H / P) x (W / P)`` grid of patches (patch ``n = r * (W / P) + c``), and
inside a patch the ``C * P * P`` numbers are ordered channel, row, column: the order of
``torch.nn.functional.unfold`` and of ``Conv2d.weight.reshape(D, -1)``. With this order the patch embedding
*is* a ``Conv2d(C, D, kernel_size=P, stride=P)`` (:meth:`PatchEmbedding.to_conv`, tested).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .masks import expand_mask
from .models import TransformerEncoderBlock
from .positional import LearnedPositionalEmbedding
from .validate import flag, integer, tensor

__all__ = ["PatchEmbedding", "TinyCNN", "TinyViT", "ViTBlock", "patchify", "unpatchify"]


def _check_images(images: object, patch_size: int) -> None:
    tensor("images", images, shape=(None,) * 4, layout="(B, C, H, W)")
    integer("patch_size", patch_size, minimum=1)
    h, w = images.shape[-2:]
    if h % patch_size or w % patch_size:
        raise ValueError(
            f"the image size H x W = {h} x {w} (images of shape {tuple(images.shape)}) is not divisible by "
            f"patch_size={patch_size}"
        )


def patchify(images: Tensor, patch_size: int) -> Tensor:
    """Cut images into non-overlapping ``P x P`` patches and flatten each one.

    Args:
        images: ``(B, C, H, W)``, ``H`` and ``W`` divisible by ``P``.
        patch_size: ``P``.

    Returns:
        ``(B, N, C * P * P)`` with ``N = (H / P)(W / P)``; patch ``n = r * (W / P) + c`` is the patch in grid row ``r``
        and column ``c``, flattened in (channel, row, column) order. Equals
        ``F.unfold(images, P, stride=P).transpose(1, 2)``; same dtype and device as ``images``.
    """
    _check_images(images, patch_size)
    return _patchify(images, patch_size)


def _patchify(images: Tensor, p: int) -> Tensor:
    """:func:`patchify` unchecked."""
    b, c, h, w = images.shape
    x = images.reshape(b, c, h // p, p, w // p, p)  # (B, C, H/P, P, W/P, P): split rows and columns
    x = x.permute(0, 2, 4, 1, 3, 5)  # (B, H/P, W/P, C, P, P): grid position first, patch content last
    return x.reshape(b, (h // p) * (w // p), c * p * p)  # (B, N, C*P*P)


def unpatchify(patches: Tensor, patch_size: int, height: int, width: int) -> Tensor:
    """Inverse of :func:`patchify`: ``(B, N, C * P * P)`` → images ``(B, C, H, W)``, ``H = height``, ``W = width``."""
    tensor("patches", patches)
    integer("patch_size", patch_size, minimum=1)
    integer("height", height, minimum=1)
    integer("width", width, minimum=1)
    p = patch_size
    if height % p or width % p:
        raise ValueError(f"height x width = {height} x {width} is not divisible by patch_size={p}")
    gh, gw = height // p, width // p
    if patches.dim() != 3 or patches.shape[1] != gh * gw or patches.shape[2] % (p * p):
        raise ValueError(
            f"patches must have shape (B, N={gh * gw}, C*{p}*{p}) for {height} x {width} images, "
            f"got {tuple(patches.shape)}"
        )
    b, c = patches.shape[0], patches.shape[2] // (p * p)
    x = patches.reshape(b, gh, gw, c, p, p).permute(0, 3, 1, 4, 2, 5)  # (B, C, H/P, P, W/P, P)
    return x.reshape(b, c, height, width)


class PatchEmbedding(nn.Module):
    """Linear projection of every flattened patch to width ``D``: ``patchify(images) @ W^T + b``.

    The same linear map applied to every patch, with a stride equal to its size, is a convolution:
    :meth:`to_conv` returns the ``Conv2d(C, D, kernel_size=P, stride=P)`` that computes the same numbers
    (``conv(images).flatten(2).transpose(1, 2)`` equals ``self(images)``; tested).

    Args:
        in_channels: ``C``.
        patch_size: ``P``.
        d_model: ``D``.
        bias: learn a bias ``b`` (default True).

    Forward:
        images ``(B, C, H, W)`` → tokens ``(B, N, D)``.
    """

    def __init__(self, in_channels: int, patch_size: int, d_model: int, *, bias: bool = True):
        super().__init__()
        for name, value in (("in_channels", in_channels), ("patch_size", patch_size), ("d_model", d_model)):
            integer(name, value, minimum=1)
        flag("bias", bias)
        self.in_channels, self.patch_size, self.d_model = in_channels, patch_size, d_model
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=bias)

    def forward(self, images: Tensor) -> Tensor:
        _check_images(images, self.patch_size)
        tensor("images", images, dtype=self.proj.weight.dtype)
        if images.shape[1] != self.in_channels:
            raise ValueError(f"images must have C={self.in_channels} channels, got shape {tuple(images.shape)}")
        return self._forward(images)

    def _forward(self, images: Tensor) -> Tensor:
        """:meth:`forward` on checked images."""
        return self.proj(_patchify(images, self.patch_size))  # (B, N, C*P*P) -> (B, N, D)

    def to_conv(self) -> nn.Conv2d:
        """A ``Conv2d(C, D, kernel_size=P, stride=P)`` with copies of this layer's weights (same device, dtype)."""
        c, p, d = self.in_channels, self.patch_size, self.d_model
        w = self.proj.weight
        conv = nn.Conv2d(c, d, kernel_size=p, stride=p, bias=self.proj.bias is not None)
        conv = conv.to(device=w.device, dtype=w.dtype)
        with torch.no_grad():
            conv.weight.copy_(w.reshape(d, c, p, p))  # row d of W is kernel d, in (channel, row, column) order
            if self.proj.bias is not None:
                conv.bias.copy_(self.proj.bias)
        return conv

    def extra_repr(self) -> str:
        return f"in_channels={self.in_channels}, patch_size={self.patch_size}, d_model={self.d_model}"


class ViTBlock(TransformerEncoderBlock):
    r"""The pre-norm Transformer encoder block of ViT: attention and an MLP, each inside a residual connection.

    .. math::  x \leftarrow x + \operatorname{MHA}(\operatorname{LN}(x)), \qquad
               x \leftarrow x + \operatorname{MLP}(\operatorname{LN}(x)),

    that is :class:`course_lib.models.TransformerEncoderBlock` with ``norm_first=True``, GELU, no dropout and
    ``MLP = Linear(D, mlp_ratio * D) → GELU → Linear(mlp_ratio * D, D)`` (``linear1``, ``linear2``); the attention
    is its ``self_attn``, a :class:`course_lib.MultiHeadAttention`.

    Forward (inherited): ``x`` ``(B, L, D)`` → ``(B, L, D)``; with ``return_weights=True`` also the attention weights
    ``(B, Hd, L, L)``.
    """

    def __init__(self, d_model: int, num_heads: int, mlp_ratio: int = 2):
        integer("mlp_ratio", mlp_ratio, minimum=1)
        d_ff = mlp_ratio * d_model
        super().__init__(d_model, num_heads, d_ff=d_ff, dropout=0.0, activation="gelu", norm_first=True)

    def _forward_first(self, x: Tensor, mask: Tensor | None) -> Tensor:
        """The block's output at position 0 alone: ``x (B, L, D)`` → ``(B, 1, D)``, equal to ``_forward(x, mask)[0][:,
        :1]`` up to rounding. Only the first token is a query (the keys and values still come from all ``L`` tokens),
        and only its vector goes through the MLP: for a last block whose other outputs nobody reads (a ViT's head
        reads the class token alone). ``mask`` as for :meth:`_forward`, ``(B, H, L, L)``; its row 0 is used."""
        h = self.norm1(x)  # (B, L, D): every token is a key and a value
        rows = None if mask is None else mask[..., :1, :]  # (B, H, 1, L)
        attended, _ = self.self_attn._forward(h[:, :1], h, h, rows)  # (B, 1, D)
        y = x[:, :1] + self.dropout1(attended)
        return y + self.dropout2(self.feed_forward(self.norm2(y)))  # (B, 1, D)


class TinyViT(nn.Module):
    """A small Vision Transformer: patch embedding, class token, learned positions, ``depth`` encoder blocks.

    ``images (B, C, H, W)`` → ``patchify`` + linear ``(B, N, D)`` → prepend the class token ``(B, 1 + N, D)`` →
    add the learned positions (a :class:`~course_lib.positional.LearnedPositionalEmbedding` of ``1 + N`` rows) →
    ``depth`` × :class:`ViTBlock` → LayerNorm → linear classifier on the class token's vector → logits ``(B, K)``.
    Position 0 is the class token, position ``1 + n`` patch ``n``.

    Args:
        image_size: ``H = W`` (square images).
        patch_size: ``P``, dividing ``image_size``.
        in_channels: ``C``.
        num_classes: ``K``.
        d_model: ``D``; divisible by ``num_heads``.
        depth: number of encoder blocks.
        num_heads: heads per block.
        mlp_ratio: hidden width of each block's MLP, in multiples of ``D``.

    Forward:
        ``images (B, C, H, W)`` → logits ``(B, K)``; with ``return_weights=True`` also a list of ``depth``
        attention-weight tensors ``(B, Hd, 1 + N, 1 + N)``, one per block (row 0: what the class token attends to).

    Without ``return_weights`` the last block is computed for the class token alone (:meth:`ViTBlock._forward_first`:
    it is the only query, every token still a key and a value, and only its vector goes through the MLP), since the
    head reads nothing else: the same logits up to rounding (tested), for less work, in training above all.
    """

    def __init__(
        self,
        *,
        image_size: int = 8,
        patch_size: int = 2,
        in_channels: int = 1,
        num_classes: int = 10,
        d_model: int = 32,
        depth: int = 2,
        num_heads: int = 4,
        mlp_ratio: int = 2,
    ):
        super().__init__()
        for name, value in (("image_size", image_size), ("num_classes", num_classes), ("depth", depth)):
            integer(name, value, minimum=1)
        integer("patch_size", patch_size, minimum=1)
        if image_size % patch_size:
            raise ValueError(f"image_size={image_size} is not divisible by patch_size={patch_size}")
        self.image_size, self.patch_size, self.in_channels = image_size, patch_size, in_channels
        self.num_patches = (image_size // patch_size) ** 2
        self.patch_embedding = PatchEmbedding(in_channels, patch_size, d_model)
        self.class_token = nn.Parameter(torch.zeros(1, 1, d_model))  # learned; the same for every image
        self.positions = LearnedPositionalEmbedding(1 + self.num_patches, d_model, init_std=0.02)  # one per token
        self.blocks = nn.ModuleList(ViTBlock(d_model, num_heads, mlp_ratio) for _ in range(depth))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, num_classes)

    def forward(
        self, x: Tensor, mask: Tensor | None = None, return_weights: bool = False
    ) -> Tensor | tuple[Tensor, list[Tensor]]:
        """Images ``x (B, C, H, W)`` → logits ``(B, K)`` (and one ``(B, Hd, 1 + N, 1 + N)`` per block with
        ``return_weights``). ``mask``: optional boolean ``(1 + N, 1 + N)`` or ``(B, 1 + N, 1 + N)`` over the tokens
        (class token first), True = may attend."""
        expected, dtype = (self.in_channels, self.image_size, self.image_size), self.class_token.dtype
        tensor("x", x, shape=(None, *expected), layout=f"(B, {', '.join(map(str, expected))})", dtype=dtype)
        B, T = x.shape[0], 1 + self.num_patches  # T tokens: the class token and the patches
        if mask is not None:  # checked once for every block
            mask = expand_mask(mask, (B, self.blocks[0].num_heads, T, T), heads=True)
        flag("return_weights", return_weights)
        tokens = self.patch_embedding._forward(x)  # (B, N, D)
        cls = self.class_token.expand(B, -1, -1)  # (B, 1, D)
        x = torch.cat([cls, tokens], dim=1) + self.positions.weight.to(x.dtype)  # plus the learned positions (B, T, D)
        weights, last = [], len(self.blocks) - 1
        for i, block in enumerate(self.blocks):
            if i == last and not return_weights:  # the head reads only the class token: compute only its vector
                x = block._forward_first(x, mask)  # (B, 1, D)
            else:
                x, w = block._forward(x, mask)  # (B, T, D), (B, Hd, T, T)
                weights.append(w)
        logits = self.head(self.norm(x[:, 0]))  # the class token's vector -> (B, K)
        return (logits, weights) if return_weights else logits


class TinyCNN(nn.Module):
    """A small convolutional classifier for comparison with :class:`TinyViT`.

    ``conv3x3(C → w) → ReLU → conv3x3(w → 2w) → ReLU → max-pool 2 → conv3x3(2w → 2w) → ReLU → global average
    pool → linear(2w → K)``, every convolution with zero padding 1. Locality (3 x 3 windows) and weight sharing
    (the same kernel at every position) are built in; the global average pool makes the class scores depend little
    on where in the image a pattern sits.

    Args:
        in_channels: ``C``.
        num_classes: ``K``.
        width: ``w``, the channels of the first layer.

    Forward:
        ``images (B, C, H, W)`` with even ``H``, ``W`` → logits ``(B, K)``.
    """

    def __init__(self, *, in_channels: int = 1, num_classes: int = 10, width: int = 16):
        super().__init__()
        for name, value in (("in_channels", in_channels), ("num_classes", num_classes), ("width", width)):
            integer(name, value, minimum=1)
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, width, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 2 * width, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(2 * width, num_classes)

    def forward(self, images: Tensor) -> Tensor:
        tensor("images", images, shape=(None,) * 4, layout="(B, C, H, W)", dtype=self.head.weight.dtype)
        return self.head(self.features(images).flatten(1))  # (B, 2w, 1, 1) -> (B, 2w) -> (B, K)
