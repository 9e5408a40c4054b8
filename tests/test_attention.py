"""scaled_dot_product_attention / attention_weights / SelfAttention against independent references:
PyTorch's fused F.scaled_dot_product_attention (values and gradients) and a float64 NumPy loop."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICES, float_dtypes
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import (
    SelfAttention,
    attention_weights,
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
)


def numpy_reference(q, k, v, mask=None, scale=None):
    """One query at a time in float64 NumPy, softmax written with an explicit max shift: a second,
    independent way to compute attention. Inputs (B, L, Dk), (B, S, Dk), (B, S, Dv), mask (B, L, S)."""
    q, k, v = (t.detach().cpu().double().numpy() for t in (q, k, v))
    B, L, dk = q.shape
    S, dv = v.shape[1], v.shape[2]
    scale = 1 / math.sqrt(dk) if scale is None else scale
    m = np.ones((B, L, S), bool) if mask is None else np.broadcast_to(mask.cpu().numpy(), (B, L, S))
    out, weights = np.zeros((B, L, dv)), np.zeros((B, L, S))
    for b in range(B):
        for i in range(L):
            visible = np.flatnonzero(m[b, i])
            if visible.size == 0:
                continue  # fully masked query: zero weights, zero output
            s = np.array([q[b, i] @ k[b, j] * scale for j in visible])
            e = np.exp(s - s.max())
            weights[b, i, visible] = e / e.sum()
            out[b, i] = sum(w * v[b, j] for w, j in zip(weights[b, i, visible], visible))
    return torch.from_numpy(out), torch.from_numpy(weights)


def random_mask(shape, device, generator, p=0.6):
    """Random boolean mask in which every query row keeps at least one visible key."""
    mask = torch.rand(shape, generator=generator) < p
    mask[..., 0] |= ~mask.any(-1)
    return mask.to(device)


def make_qkv(b, l, s, dk, dv, dtype, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, l, dk, generator=g, dtype=dtype).to(device)
    k = torch.randn(b, s, dk, generator=g, dtype=dtype).to(device)
    v = torch.randn(b, s, dv, generator=g, dtype=dtype).to(device)
    return q, k, v, g


MASKS = ["none", "causal", "padding", "random"]


def build_mask(kind, b, l, s, device, g):
    if kind == "none":
        return None
    if kind == "causal":
        return causal_mask(max(l, s), device=device)[:l, :s]
    if kind == "padding":
        lengths = torch.randint(1, s + 1, (b,), generator=g)
        return padding_mask(lengths, s).to(device)
    return random_mask((b, l, s), device, g)


@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("l,s,dk,dv", [(5, 5, 8, 8), (3, 7, 4, 6), (6, 2, 16, 3)])
def test_matches_pytorch_values_and_gradients(device, mask_kind, l, s, dk, dv):
    for dtype in float_dtypes(device):
        q, k, v, g = make_qkv(2, l, s, dk, dv, dtype, device)
        mask = build_mask(mask_kind, 2, l, s, device, g)
        q1, k1, v1 = (t.clone().requires_grad_() for t in (q, k, v))
        q2, k2, v2 = (t.clone().requires_grad_() for t in (q, k, v))
        ours = scaled_dot_product_attention(q1, k1, v1, mask)
        ref = F.scaled_dot_product_attention(q2, k2, v2, attn_mask=mask)
        torch.testing.assert_close(ours, ref)
        upstream = torch.randn(ours.shape, generator=g, dtype=dtype).to(device)
        grads_ours = torch.autograd.grad(ours, (q1, k1, v1), upstream)
        grads_ref = torch.autograd.grad(ref, (q2, k2, v2), upstream)
        for a, b in zip(grads_ours, grads_ref):
            torch.testing.assert_close(a, b)


@pytest.mark.parametrize("mask_kind", MASKS)
def test_matches_float64_numpy_loop(device, mask_kind):
    dtype = float_dtypes(device)[-1]
    q, k, v, g = make_qkv(3, 4, 6, 5, 7, dtype, device, seed=1)
    mask = build_mask(mask_kind, 3, 4, 6, device, g)
    out, weights = scaled_dot_product_attention(q, k, v, mask, return_weights=True)
    ref_out, ref_w = numpy_reference(q, k, v, mask)
    tol = {} if dtype == torch.float64 else {"atol": 1e-5, "rtol": 1e-5}
    torch.testing.assert_close(out.cpu().double(), ref_out, **tol)
    torch.testing.assert_close(weights.cpu().double(), ref_w, **tol)


def test_custom_scale_matches_pytorch(device):
    q, k, v, _ = make_qkv(2, 4, 5, 8, 8, torch.float32, device)
    for scale in (1e-30, 0.1, 1.0, 3.0):  # any number > 0 (0 and below are refused: tests/test_errors.py)
        ours = scaled_dot_product_attention(q, k, v, scale=scale)
        torch.testing.assert_close(ours, F.scaled_dot_product_attention(q, k, v, scale=scale))


def test_default_scale_is_one_over_sqrt_dk(device):
    q, k, v, _ = make_qkv(1, 3, 4, 16, 2, torch.float32, device)
    torch.testing.assert_close(scaled_dot_product_attention(q, k, v), scaled_dot_product_attention(q, k, v, scale=0.25))


def test_weights_returned_equal_attention_weights_and_output(device):
    q, k, v, g = make_qkv(2, 4, 6, 8, 3, torch.float32, device)
    mask = random_mask((2, 4, 6), device, g)
    out, w = scaled_dot_product_attention(q, k, v, mask, return_weights=True)
    torch.testing.assert_close(w, attention_weights(q, k, mask))
    torch.testing.assert_close(out, w @ v)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 4, device=device))


def test_fully_masked_rows_give_zeros_not_nan(device):
    q, k, v, _ = make_qkv(2, 3, 4, 8, 5, torch.float32, device)
    q.requires_grad_()
    mask = torch.ones(2, 3, 4, dtype=torch.bool, device=device)
    mask[0, 1] = False  # query 1 of batch 0 sees no key at all
    out, w = scaled_dot_product_attention(q, k, v, mask, return_weights=True)
    assert torch.equal(out[0, 1], torch.zeros(5, device=device))
    assert torch.equal(w[0, 1], torch.zeros(4, device=device))
    (grad,) = torch.autograd.grad(out.sum(), q)
    assert torch.isfinite(grad).all()
    assert torch.equal(grad[0, 1], torch.zeros(8, device=device))
    # every other row is ordinary attention
    keep = torch.ones(2, 3, dtype=torch.bool)
    keep[0, 1] = False
    ref = F.scaled_dot_product_attention(q.detach(), k, v, attn_mask=mask)
    torch.testing.assert_close(out.detach()[keep], ref[keep])


def test_all_keys_masked_everywhere_gives_all_zeros(device):
    q, k, v, _ = make_qkv(1, 2, 3, 4, 4, torch.float32, device)
    out = scaled_dot_product_attention(q, k, v, torch.zeros(2, 3, dtype=torch.bool, device=device))
    assert torch.equal(out, torch.zeros_like(out))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_keeps_dtype_and_is_accurate(device, dtype):
    q, k, v, g = make_qkv(2, 16, 16, 64, 32, torch.float32, device, seed=3)
    q, k, v = q * 4, k * 4, v  # large scores: a float16 softmax without care would lose accuracy
    mask = random_mask((2, 16, 16), device, g)
    out, w = scaled_dot_product_attention(q.to(dtype), k.to(dtype), v.to(dtype), mask, return_weights=True)
    assert out.dtype == dtype and w.dtype == dtype
    assert torch.isfinite(out).all()
    # reference: the same (rounded) inputs in float64
    ref = scaled_dot_product_attention(*(t.to(dtype).double() for t in (q, k, v)), mask).to(out.device)
    tol = 1e-2 if dtype == torch.float16 else 2e-2
    torch.testing.assert_close(out.double(), ref, atol=tol, rtol=tol)


def test_float16_scores_that_overflow_float16_stay_finite(device):
    # q.k = 64 * 40 * 40 = 102400 > 65504 (float16 max): computed in float16 the score would be inf.
    q = torch.full((1, 2, 64), 40.0, dtype=torch.float16, device=device)
    k = torch.full((1, 3, 64), 40.0, dtype=torch.float16, device=device)
    v = torch.arange(6, dtype=torch.float16, device=device).reshape(1, 3, 2)
    out = scaled_dot_product_attention(q, k, v, scale=1.0)
    expected = v.float().mean(1, keepdim=True).expand(1, 2, 2)  # equal scores: uniform weights
    torch.testing.assert_close(out.float(), expected)


def test_attention_weights_computes_float16_scores_in_float32(device):
    # attention_weights is public and upcasts on its own (not only when called by scaled_dot_product_attention):
    # q.k = 64 * 40 * 40 = 102400 overflows float16, yet the weights are finite and uniform.
    q = torch.full((1, 2, 64), 40.0, dtype=torch.float16, device=device)
    k = torch.full((1, 3, 64), 40.0, dtype=torch.float16, device=device)
    w = attention_weights(q, k, scale=1.0)
    assert w.dtype == torch.float16
    torch.testing.assert_close(w.float(), torch.full((1, 2, 3), 1 / 3, device=device), atol=1e-3, rtol=0)


def test_float64_stays_float64():
    q, k, v, _ = make_qkv(1, 3, 3, 4, 4, torch.float64, "cpu")
    out, w = scaled_dot_product_attention(q, k, v, return_weights=True)
    assert out.dtype == torch.float64 and w.dtype == torch.float64


def test_leading_dimensions_broadcast(device):
    g = torch.Generator().manual_seed(4)
    q = torch.randn(2, 3, 5, 8, generator=g).to(device)  # (B, H, L, Dk)
    k = torch.randn(6, 8, generator=g).to(device)  # (S, Dk), shared by every batch and head
    v = torch.randn(1, 3, 6, 4, generator=g).to(device)  # (1, H, S, Dv)
    mask = random_mask((5, 6), device, g)  # (L, S)
    ours = scaled_dot_product_attention(q, k, v, mask)
    assert ours.shape == (2, 3, 5, 4)
    ke, ve = k.expand(2, 3, 6, 8), v.expand(2, 3, 6, 4)
    torch.testing.assert_close(ours, F.scaled_dot_product_attention(q, ke, ve, attn_mask=mask))


def test_device_follows_inputs(device):
    q, k, v, _ = make_qkv(1, 2, 2, 4, 4, torch.float32, device)
    out, w = scaled_dot_product_attention(q, k, v, return_weights=True)
    assert out.device.type == device.type and w.device.type == device.type


def test_inputs_are_not_modified():
    q, k, v, g = make_qkv(1, 3, 3, 4, 4, torch.float32, "cpu")
    mask = random_mask((3, 3), "cpu", g)
    copies = [t.clone() for t in (q, k, v, mask)]
    scaled_dot_product_attention(q, k, v, mask)
    for t, c in zip((q, k, v, mask), copies):
        assert torch.equal(t, c)


@pytest.mark.parametrize(
    "shapes,words",
    [
        (((2, 4, 8), (2, 5, 6), (2, 5, 3)), ["(2, 4, 8)", "(2, 5, 6)", "d_k"]),
        (((2, 4, 8), (2, 5, 8), (2, 6, 3)), ["(2, 5, 8)", "(2, 6, 3)", "length S"]),
        (((2, 4, 8), (3, 5, 8), (3, 5, 3)), ["(2, 4, 8)", "(3, 5, 8)", "broadcast"]),
        (((8,), (5, 8), (5, 3)), ["at least 2 dimensions", "(8,)"]),
    ],
)
def test_bad_shapes_raise_value_error_naming_both(shapes, words):
    q, k, v = (torch.randn(s) for s in shapes)
    with pytest.raises(ValueError) as info:
        scaled_dot_product_attention(q, k, v)
    for w in words:
        assert w in str(info.value)


def test_bad_mask_shape_names_mask_and_scores():
    q, k, v = torch.randn(2, 4, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 3)
    with pytest.raises(ValueError) as info:
        scaled_dot_product_attention(q, k, v, torch.ones(5, 4, dtype=torch.bool))
    assert "(5, 4)" in str(info.value) and "(2, 4, 5)" in str(info.value)


@pytest.mark.parametrize(
    "args,exc,words",
    [
        ((torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 4), torch.ones(3, 3)), TypeError, "boolean"),
        ((torch.randn(3, 4), torch.randn(3, 4).double(), torch.randn(3, 4)), TypeError, "same dtype"),
        ((torch.ones(3, 4, dtype=torch.long),) * 3, TypeError, "floating dtype"),
        (([[1.0]], torch.randn(1, 1), torch.randn(1, 1)), TypeError, "torch.Tensor"),
    ],
)
def test_bad_types_raise_type_error(args, exc, words):
    with pytest.raises(exc, match=words):
        scaled_dot_product_attention(*args)


# ---------------------------------------------------------------- properties (hypothesis)

dims = st.integers(min_value=1, max_value=6)


@settings(max_examples=40, deadline=None)
@given(l=dims, s=dims, dk=dims, seed=st.integers(0, 2**16))
def test_rows_sum_to_one_and_masked_keys_get_zero(l, s, dk, seed):
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(l, dk, generator=g, dtype=torch.float64), torch.randn(s, dk, generator=g, dtype=torch.float64)
    mask = torch.rand(l, s, generator=g) < 0.5
    w = attention_weights(q, k, mask)
    has_key = mask.any(-1)
    torch.testing.assert_close(w.sum(-1)[has_key], torch.ones(int(has_key.sum()), dtype=torch.float64))
    assert torch.all(w[~mask] == 0)
    assert torch.all(w >= 0)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 7), d=dims, seed=st.integers(0, 2**16))
def test_self_attention_is_permutation_equivariant(n, d, seed):
    """Without positions, permuting the input tokens permutes the outputs the same way."""
    torch.manual_seed(seed)
    layer = SelfAttention(d).double()
    x = torch.randn(n, d, dtype=torch.float64)
    perm = torch.randperm(n)
    torch.testing.assert_close(layer(x[perm]), layer(x)[perm])


@settings(max_examples=40, deadline=None)
@given(l=dims, s=dims, seed=st.integers(0, 2**16))
def test_permuting_keys_with_values_changes_nothing(l, s, seed):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(n, 3, generator=g, dtype=torch.float64) for n in (l, s, s))
    mask = random_mask((l, s), "cpu", g)
    perm = torch.randperm(s, generator=g)
    torch.testing.assert_close(
        scaled_dot_product_attention(q, k[perm], v[perm], mask[:, perm]), scaled_dot_product_attention(q, k, v, mask)
    )


# ---------------------------------------------------------------- SelfAttention


def test_self_attention_equals_formula_with_its_matrices(device):
    torch.manual_seed(0)
    layer = SelfAttention(6, d_k=4, d_v=3).to(device)
    x = torch.randn(2, 5, 6, device=device)
    Wq, Wk, Wv = layer.w_q.weight.T, layer.w_k.weight.T, layer.w_v.weight.T  # (D, Dk), (D, Dk), (D, Dv)
    Q, K, V = x @ Wq, x @ Wk, x @ Wv
    ref = torch.softmax(Q @ K.transpose(-2, -1) / 2.0, dim=-1) @ V  # sqrt(d_k) = 2
    out, w = layer(x, return_weights=True)
    assert out.shape == (2, 5, 3) and w.shape == (2, 5, 5)
    torch.testing.assert_close(out, ref)


def test_self_attention_learns_only_three_matrices():
    layer = SelfAttention(300, d_k=100)
    shapes = {name: tuple(p.shape) for name, p in layer.named_parameters()}
    assert shapes == {"w_q.weight": (100, 300), "w_k.weight": (100, 300), "w_v.weight": (100, 300)}


def test_self_attention_with_causal_mask_matches_pytorch(device):
    torch.manual_seed(1)
    layer = SelfAttention(8, bias=True).to(device)
    x = torch.randn(3, 6, 8, device=device)
    ref = F.scaled_dot_product_attention(layer.w_q(x), layer.w_k(x), layer.w_v(x), is_causal=True)
    torch.testing.assert_close(layer(x, causal_mask(6, device=device)), ref)


def test_self_attention_rejects_wrong_width():
    with pytest.raises(ValueError, match=r"d_model=8.*\(2, 3, 5\)"):
        SelfAttention(8)(torch.randn(2, 3, 5))
    with pytest.raises(ValueError, match="d_k must be >= 1"):
        SelfAttention(8, d_k=0)


@pytest.mark.skipif(len(DEVICES) < 2, reason="needs an accelerator to compare against the CPU")
def test_accelerator_agrees_with_cpu():
    q, k, v, g = make_qkv(2, 7, 9, 16, 8, torch.float32, "cpu")
    mask = random_mask((2, 7, 9), "cpu", g)
    ref = scaled_dot_product_attention(q, k, v, mask)
    for dev in DEVICES[1:]:
        out = scaled_dot_product_attention(q.to(dev), k.to(dev), v.to(dev), mask.to(dev))
        torch.testing.assert_close(out.cpu(), ref, atol=1e-4, rtol=1e-4)
