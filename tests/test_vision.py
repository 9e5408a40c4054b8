"""patchify / PatchEmbedding / TinyViT / TinyCNN against independent references (F.unfold, Conv2d, loops)."""

import pytest
import torch
import torch.nn.functional as F
from conftest import float_dtypes
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from course_lib import MultiHeadAttention, TransformerEncoderBlock
from course_lib.vision import PatchEmbedding, TinyCNN, TinyViT, ViTBlock, patchify, unpatchify


def patchify_by_loops(images, p):
    """The definition: visit the grid of patches row by row and flatten each patch (channel, row, column)."""
    b, c, h, w = images.shape
    rows = []
    for i in range(0, h, p):
        for j in range(0, w, p):
            rows.append(images[:, :, i : i + p, j : j + p].reshape(b, -1))
    return torch.stack(rows, dim=1)


# ---------------------------------------------------------------- patchify


@pytest.mark.parametrize("shape,p", [((2, 1, 8, 8), 2), ((2, 3, 8, 12), 4), ((1, 2, 6, 6), 1), ((3, 1, 4, 4), 4)])
def test_patchify_equals_unfold_and_loops(shape, p, device):
    for dtype in float_dtypes(device):
        images = torch.randn(shape, generator=torch.Generator().manual_seed(0), dtype=dtype).to(device)
        patches = patchify(images, p)
        b, c, h, w = shape
        assert patches.shape == (b, (h // p) * (w // p), c * p * p)
        assert patches.dtype == dtype and patches.device.type == device.type
        torch.testing.assert_close(patches, F.unfold(images, p, stride=p).transpose(1, 2))
        torch.testing.assert_close(patches, patchify_by_loops(images, p))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3))
def test_unpatchify_inverts_patchify(b, c, gh, gw, p):
    images = torch.randn(b, c, gh * p, gw * p)
    assert torch.equal(unpatchify(patchify(images, p), p, gh * p, gw * p), images)


def test_patch_order_is_row_major():
    images = torch.arange(16.0).reshape(1, 1, 4, 4)
    patches = patchify(images, 2)
    assert patches[0].tolist() == [[0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15]]


def test_patchify_errors():
    with pytest.raises(ValueError, match=r"H x W = 8 x 6 .* not divisible by patch_size=4"):
        patchify(torch.zeros(1, 1, 8, 6), 4)
    with pytest.raises(ValueError, match=r"\(B, C, H, W\), got \(8, 8\)"):
        patchify(torch.zeros(8, 8), 2)
    with pytest.raises(ValueError, match="patch_size must be >= 1"):
        patchify(torch.zeros(1, 1, 8, 8), 0)
    with pytest.raises(TypeError, match="torch.Tensor"):
        patchify([[1.0]], 1)
    with pytest.raises(ValueError, match=r"N=4"):
        unpatchify(torch.zeros(1, 3, 4), 2, 4, 4)


# ---------------------------------------------------------------- patch embedding


@pytest.mark.parametrize("c,p,d,bias", [(1, 2, 8, True), (3, 4, 5, False), (2, 1, 3, True)])
def test_patch_embedding_equals_strided_conv(c, p, d, bias, device):
    for dtype in float_dtypes(device):
        torch.manual_seed(0)
        embed = PatchEmbedding(c, p, d, bias=bias).to(device=device, dtype=dtype)
        images = torch.randn(2, c, 4 * p, 2 * p, dtype=dtype).to(device)
        conv = embed.to_conv()
        assert (conv.kernel_size, conv.stride) == ((p, p), (p, p))
        with torch.no_grad():
            tokens = embed(images)
            assert tokens.shape == (2, 8, d)
            torch.testing.assert_close(tokens, conv(images).flatten(2).transpose(1, 2))
            # and an independently built conv with the weights copied the other way round
            ref = nn.Conv2d(c, d, p, stride=p, bias=bias).to(device=device, dtype=dtype)
            ref.weight.copy_(embed.proj.weight.reshape(d, c, p, p))
            if bias:
                ref.bias.copy_(embed.proj.bias)
            torch.testing.assert_close(tokens, ref(images).flatten(2).transpose(1, 2))


def test_patch_embedding_errors():
    embed = PatchEmbedding(3, 2, 4)
    with pytest.raises(ValueError, match=r"C=3 channels, got shape \(1, 1, 4, 4\)"):
        embed(torch.zeros(1, 1, 4, 4))
    with pytest.raises(ValueError, match="d_model must be >= 1"):
        PatchEmbedding(3, 2, 0)


# ---------------------------------------------------------------- ViT


def test_vit_block_equals_its_formula():
    torch.manual_seed(0)
    block = ViTBlock(16, 4).double()
    x = torch.randn(3, 5, 16, dtype=torch.float64)
    assert isinstance(block.self_attn, MultiHeadAttention) and block.norm_first
    h = x + block.self_attn(block.norm1(x))
    expected = h + block.linear2(F.gelu(block.linear1(block.norm2(h))))
    out, weights = block(x, return_weights=True)
    torch.testing.assert_close(out, expected)
    assert weights.shape == (3, 4, 5, 5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, 5, dtype=torch.float64))


def test_vit_block_is_the_encoder_block_with_vit_settings():
    # Same random draws in the same order: the same weights, and the same outputs, as the course's encoder block.
    torch.manual_seed(0)
    vit_block = ViTBlock(32, 4, mlp_ratio=2)
    torch.manual_seed(0)
    block = TransformerEncoderBlock(32, 4, d_ff=64, dropout=0.0, activation="gelu", norm_first=True)
    x = torch.randn(2, 7, 32)
    torch.testing.assert_close(vit_block(x), block(x), rtol=0, atol=0)


def test_vit_forward_by_hand(device):
    """Rebuild the ViT forward pass from its parts and nn.MultiheadAttention copies: an independent path."""
    torch.manual_seed(0)
    vit = TinyViT(image_size=8, patch_size=4, in_channels=2, num_classes=3, d_model=8, depth=2, num_heads=2).double()
    vit = vit.to(device)
    images = torch.randn(5, 2, 8, 8, dtype=torch.float64).to(device)
    # patch embedding through the equivalent strided conv, class token, positions
    x = vit.patch_embedding.to_conv()(images).flatten(2).transpose(1, 2)
    x = torch.cat([vit.class_token.expand(5, 1, 8), x], 1) + vit.positions.weight
    for block in vit.blocks:
        torch_mha = nn.MultiheadAttention(8, 2, batch_first=True).double().to(device)
        with torch.no_grad():
            a = block.self_attn
            torch_mha.in_proj_weight.copy_(torch.cat([a.w_q.weight, a.w_k.weight, a.w_v.weight]))
            torch_mha.in_proj_bias.copy_(torch.cat([a.w_q.bias, a.w_k.bias, a.w_v.bias]))
            torch_mha.out_proj.weight.copy_(a.w_o.weight)
            torch_mha.out_proj.bias.copy_(a.w_o.bias)
        n = block.norm1(x)
        x = x + torch_mha(n, n, n, need_weights=False)[0]
        x = x + block.linear2(F.gelu(block.linear1(block.norm2(x))))
    expected = vit.head(vit.norm(x[:, 0]))
    logits, weights = vit(images, return_weights=True)
    assert logits.shape == (5, 3) and len(weights) == 2 and weights[0].shape == (5, 2, 5, 5)
    torch.testing.assert_close(logits, expected)
    torch.testing.assert_close(vit(images), logits)


@pytest.mark.parametrize("depth", [1, 3])
@pytest.mark.parametrize("masked", [False, True])
def test_vit_last_block_for_the_class_token_alone(depth, masked):
    """Without return_weights the last block runs for the class token alone (ViTBlock._forward_first): the same
    logits, and the same gradients for every parameter, as the full blocks (float64), with a mask too."""
    torch.manual_seed(0)
    vit = TinyViT(image_size=8, patch_size=2, d_model=8, depth=depth, num_heads=2, num_classes=3).double()
    images = torch.randn(4, 1, 8, 8, dtype=torch.float64)
    mask = None
    if masked:  # a different pattern per image; every token may attend to the class token
        mask = torch.rand(4, 17, 17, generator=torch.Generator().manual_seed(1)) > 0.4
        mask[..., 0] = True
    fast = vit(images, mask)
    full, weights = vit(images, mask, return_weights=True)
    assert len(weights) == depth and weights[-1].shape == (4, 2, 17, 17)
    torch.testing.assert_close(fast, full)
    params = list(vit.parameters())
    grads_fast = torch.autograd.grad(fast.square().sum(), params)
    grads_full = torch.autograd.grad(full.square().sum(), params)
    for g_fast, g_full in zip(grads_fast, grads_full, strict=True):
        torch.testing.assert_close(g_fast, g_full)
    # the block itself: its output at position 0 only
    block, x = vit.blocks[-1], torch.randn(4, 17, 8, dtype=torch.float64)
    expanded = None if mask is None else mask[:, None].expand(4, 2, 17, 17)
    torch.testing.assert_close(block._forward_first(x, expanded), block._forward(x, expanded)[0][:, :1])


def test_vit_class_token_reads_every_patch_and_positions_matter():
    torch.manual_seed(0)
    vit = TinyViT(image_size=4, patch_size=2, d_model=8, depth=1, num_heads=2).double()
    images = torch.randn(1, 1, 4, 4, dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad(vit(images).sum(), images)
    assert (grad != 0).all()  # one block: the class token already sees every pixel
    # swapping two patches changes the output only because of the learned positions
    swapped = images.detach().clone()
    swapped[..., :2, :2], swapped[..., :2, 2:] = images[..., :2, 2:].detach(), images[..., :2, :2].detach()
    with torch.no_grad():
        assert not torch.allclose(vit(swapped), vit(images))
        vit.positions.weight.zero_()
        torch.testing.assert_close(vit(swapped), vit(images))  # without positions: permutation invariant


def test_vit_parameter_count():
    d, n, k, depth, r = 32, 16, 10, 2, 2
    block = 2 * 2 * d + 4 * (d * d + d) + (d * r * d + r * d) + (r * d * d + d)
    expected = (4 * d + d) + d + (1 + n) * d + depth * block + 2 * d + (d * k + k)
    assert sum(p.numel() for p in TinyViT().parameters()) == expected


def test_vit_errors():
    with pytest.raises(ValueError, match="image_size=8 is not divisible by patch_size=3"):
        TinyViT(patch_size=3)
    with pytest.raises(ValueError, match=r"\(B, 1, 8, 8\), got \(2, 1, 7, 7\)"):
        TinyViT()(torch.zeros(2, 1, 7, 7))
    with pytest.raises(ValueError, match="not divisible by num_heads"):
        TinyViT(d_model=30, num_heads=4)


# ---------------------------------------------------------------- CNN


def test_tiny_cnn_shapes_parameters_and_locality():
    torch.manual_seed(0)
    cnn = TinyCNN(in_channels=1, num_classes=10, width=16)
    assert cnn(torch.randn(4, 1, 8, 8)).shape == (4, 10)
    convs = [(1, 16), (16, 32), (32, 32)]
    assert sum(p.numel() for p in cnn.parameters()) == sum(9 * a * b + b for a, b in convs) + 32 * 10 + 10
    # before the pooling, one feature pixel sees a 5 x 5 window: two 3 x 3 convolutions
    x = torch.randn(1, 1, 8, 8, requires_grad=True)
    (grad,) = torch.autograd.grad(cnn.features[:3](x)[0, :, 4, 4].sum(), x)
    assert (grad[0, 0] != 0).sum() <= 25 and (grad[0, 0, :2] == 0).all()
    with pytest.raises(ValueError, match=r"\(B, C, H, W\)"):
        cnn(torch.zeros(8, 8))
