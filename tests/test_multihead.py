"""MultiHeadAttention / split_heads / merge_heads against independent references: torch.nn.MultiheadAttention
with copied weights (outputs, per-head weights, gradients of inputs and parameters, every mask shape) and a
float64 loop over heads that slices the projection matrices by hand."""

import math

import pytest
import torch
from conftest import float_dtypes
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from course_lib import MultiHeadAttention, SelfAttention, causal_mask, merge_heads, padding_mask, split_heads


def torch_mha(d_model, num_heads, bias, dtype, device, seed=0):
    torch.manual_seed(seed)
    m = nn.MultiheadAttention(d_model, num_heads, bias=bias, batch_first=True).to(device=device, dtype=dtype)
    if bias:  # PyTorch initialises the biases to zero; random ones make the test able to fail on a bias mix-up
        with torch.no_grad():
            m.in_proj_bias.normal_()
            m.out_proj.bias.normal_()
    return m


def random_mask(shape, g, p=0.6):
    """Random boolean mask in which every query row keeps at least one visible key (PyTorch gives NaN otherwise)."""
    mask = torch.rand(shape, generator=g) < p
    mask[..., 0] |= ~mask.any(-1)
    return mask


def masks_for(kind, B, H, L, S, g, device):
    """(our mask, kwargs for nn.MultiheadAttention) — PyTorch's boolean masks mean True = NOT allowed."""
    if kind == "none":
        return None, {}
    if kind == "LS":
        m = random_mask((L, S), g).to(device)
        return m, {"attn_mask": ~m}
    if kind == "causal":
        m = causal_mask(max(L, S), device=device)[:L, :S]
        return m, {"attn_mask": ~m}
    if kind == "BLS":
        m = random_mask((B, L, S), g).to(device)
        return m, {"attn_mask": ~m.repeat_interleave(H, dim=0)}  # PyTorch wants (B*H, L, S), batch-major
    if kind == "BHLS":
        m = random_mask((B, H, L, S), g).to(device)
        return m, {"attn_mask": ~m.reshape(B * H, L, S)}
    if kind == "padding":
        lengths = torch.randint(1, S + 1, (B,), generator=g)
        m = padding_mask(lengths, S).to(device)  # (B, 1, S)
        return m, {"key_padding_mask": ~m[:, 0]}
    raise AssertionError(kind)


MASK_KINDS = ["none", "LS", "causal", "BLS", "BHLS", "padding"]


@pytest.mark.parametrize("mask_kind", MASK_KINDS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("L,S", [(5, 5), (4, 7)])
def test_matches_torch_multihead_values_weights_gradients(device, mask_kind, bias, L, S):
    B, D, H = 3, 12, 3
    for dtype in float_dtypes(device):
        g = torch.Generator().manual_seed(1)
        ref = torch_mha(D, H, bias, dtype, device)
        ours = MultiHeadAttention.from_torch(ref)
        query = torch.randn(B, L, D, generator=g, dtype=dtype).to(device)
        kv = torch.randn(B, S, D, generator=g, dtype=dtype).to(device) if S != L else query
        mask, kwargs = masks_for(mask_kind, B, H, L, S, g, device)

        q1, kv1 = query.clone().requires_grad_(), kv.clone().requires_grad_()
        q2, kv2 = query.clone().requires_grad_(), kv.clone().requires_grad_()
        out, w = ours(q1, kv1, kv1, mask=mask, return_weights=True)
        out_ref, w_ref = ref(q2, kv2, kv2, need_weights=True, average_attn_weights=False, **kwargs)
        assert out.shape == (B, L, D) and w.shape == (B, H, L, S)
        torch.testing.assert_close(out, out_ref)
        torch.testing.assert_close(w, w_ref)

        upstream = torch.randn(out.shape, generator=g, dtype=dtype).to(device)
        out.backward(upstream)
        out_ref.backward(upstream)
        torch.testing.assert_close(q1.grad, q2.grad)
        torch.testing.assert_close(kv1.grad, kv2.grad)
        ours_w = torch.cat([ours.w_q.weight.grad, ours.w_k.weight.grad, ours.w_v.weight.grad])
        torch.testing.assert_close(ours_w, ref.in_proj_weight.grad)
        torch.testing.assert_close(ours.w_o.weight.grad, ref.out_proj.weight.grad)
        if bias:
            ours_b = torch.cat([ours.w_q.bias.grad, ours.w_k.bias.grad, ours.w_v.bias.grad])
            torch.testing.assert_close(ours_b, ref.in_proj_bias.grad)
            torch.testing.assert_close(ours.w_o.bias.grad, ref.out_proj.bias.grad)


def test_self_attention_default_equals_passing_query_three_times(device):
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2).to(device)
    x = torch.randn(2, 5, 8, device=device)
    torch.testing.assert_close(mha(x), mha(x, x, x))
    y = torch.randn(2, 3, 8, device=device)
    torch.testing.assert_close(mha(x, y), mha(x, y, y))  # value defaults to key


def loop_reference(mha, query, key, value, mask=None):
    """float64, one head at a time: slice W_Q, W_K, W_V column blocks by hand, attend, concatenate, apply W_O.
    mask (B, H, L, S) or None; fully masked rows give a zero head output."""
    p = {n: t.detach().double().cpu() for n, t in mha.state_dict().items()}
    query, key, value = (t.detach().double().cpu() for t in (query, key, value))
    H, Dk = mha.num_heads, mha.d_head

    def proj(name, x, h):
        W = p[f"{name}.weight"].T[:, h * Dk : (h + 1) * Dk]  # (D, Dk): the columns that belong to head h
        b = p[f"{name}.bias"][h * Dk : (h + 1) * Dk] if f"{name}.bias" in p else 0.0
        return x @ W + b

    heads = []
    for h in range(H):
        qh, kh, vh = proj("w_q", query, h), proj("w_k", key, h), proj("w_v", value, h)
        scores = qh @ kh.transpose(-2, -1) / math.sqrt(Dk)  # (B, L, S)
        if mask is not None:
            scores = scores.masked_fill(~mask[:, h].cpu(), -math.inf)
        w = torch.softmax(scores, -1).nan_to_num(0.0)
        heads.append(w @ vh)
    concat = torch.cat(heads, -1)  # (B, L, D)
    out = concat @ p["w_o.weight"].T
    return out + p["w_o.bias"] if "w_o.bias" in p else out


@pytest.mark.parametrize("H", [1, 2, 4, 8])
def test_matches_float64_loop_over_heads(device, H):
    torch.manual_seed(H)
    dtype = float_dtypes(device)[-1]
    mha = MultiHeadAttention(16, H).to(device=device, dtype=dtype)
    g = torch.Generator().manual_seed(2)
    query = torch.randn(2, 3, 16, generator=g, dtype=dtype).to(device)
    key = torch.randn(2, 6, 16, generator=g, dtype=dtype).to(device)
    value = torch.randn(2, 6, 16, generator=g, dtype=dtype).to(device)
    mask = random_mask((2, H, 3, 6), g).to(device)
    tol = {} if dtype == torch.float64 else {"atol": 1e-5, "rtol": 1e-5}
    torch.testing.assert_close(
        mha(query, key, value, mask).cpu().double(), loop_reference(mha, query, key, value, mask), **tol
    )
    torch.testing.assert_close(mha(query, key, value).cpu().double(), loop_reference(mha, query, key, value), **tol)


def test_one_head_is_self_attention_followed_by_w_o():
    torch.manual_seed(3)
    mha = MultiHeadAttention(6, 1, bias=False)
    single = SelfAttention(6)
    single.load_state_dict({f"w_{n}.weight": getattr(mha, f"w_{n}").weight for n in "qkv"})
    x = torch.randn(2, 4, 6)
    torch.testing.assert_close(mha(x), mha.w_o(single(x)))


def test_mask_shapes_broadcast_the_same_way(device):
    """(L, S), (B, L, S) and (B, H, L, S) holding the same pattern give the same result."""
    torch.manual_seed(0)
    B, H, L, S, D = 2, 4, 3, 5, 8
    mha = MultiHeadAttention(D, H).to(device)
    g = torch.Generator().manual_seed(5)
    x, y = torch.randn(B, L, D, device=device), torch.randn(B, S, D, device=device)
    m = random_mask((L, S), g).to(device)
    ref = mha(x, y, mask=m)
    for same in (m[None], m.expand(B, L, S), m[None, None], m.expand(B, H, L, S), m.expand(B, 1, L, S)):
        torch.testing.assert_close(mha(x, y, mask=same), ref)
    # a key-padding mask (B, 1, S) is a (B, L, S) mask broadcast over queries
    pad = padding_mask(torch.tensor([2, 5]), S).to(device)
    torch.testing.assert_close(mha(x, y, mask=pad), mha(x, y, mask=pad.expand(B, L, S)))


def test_fully_masked_query_gets_only_the_output_bias(device):
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2).to(device)
    x = torch.randn(1, 3, 8, device=device, requires_grad=True)
    mask = torch.ones(3, 3, dtype=torch.bool, device=device)
    mask[1] = False  # query 1 sees nothing
    out, w = mha(x, mask=mask, return_weights=True)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out[0, 1], mha.w_o.bias)
    assert torch.equal(w[0, :, 1], torch.zeros(2, 3, device=device))
    out.sum().backward()
    assert torch.isfinite(x.grad).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision(device, dtype):
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).to(device)
    x = torch.randn(2, 6, 16, device=device)
    ref = mha(x)
    out = mha.to(dtype)(x.to(dtype))
    assert out.dtype == dtype
    torch.testing.assert_close(out.float(), ref, atol=5e-2, rtol=5e-2)


def test_split_and_merge_heads():
    x = torch.arange(2 * 3 * 6.0).reshape(2, 3, 6)
    s = split_heads(x, 3)
    assert s.shape == (2, 3, 3, 2)
    torch.testing.assert_close(s[:, 1], x[:, :, 2:4])  # head 1 owns columns 2:4
    torch.testing.assert_close(merge_heads(s), x)
    with pytest.raises(ValueError, match="not divisible by num_heads=4"):
        split_heads(x, 4)
    with pytest.raises(ValueError, match=r"\(B, H, L, Dk\)"):
        merge_heads(x)


def test_parameter_count_is_four_d_squared_whatever_the_heads():
    for H in (1, 2, 4, 8):
        mha = MultiHeadAttention(64, H)
        assert sum(p.numel() for p in mha.parameters()) == 4 * 64 * 64 + 4 * 64
        assert sum(p.numel() for p in MultiHeadAttention(64, H, bias=False).parameters()) == 4 * 64 * 64


def test_indivisible_and_bad_arguments_raise():
    with pytest.raises(ValueError, match="d_model=10 is not divisible by num_heads=3"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="num_heads must be >= 1"):
        MultiHeadAttention(8, 0)
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 3, 8)
    with pytest.raises(ValueError, match=r"query must have shape \(B, length, d_model=8\), got \(2, 3, 6\)"):
        mha(torch.randn(2, 3, 6))
    with pytest.raises(ValueError, match="value was given without key"):
        mha(x, value=x)
    with pytest.raises(ValueError, match="must agree on B and S"):
        mha(x, torch.randn(2, 4, 8), torch.randn(2, 5, 8))
    with pytest.raises(ValueError, match=r"\(2, 2, 3, 3\)"):
        mha(x, mask=torch.ones(3, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"\(L, S\), \(B, L, S\) or \(B, H, L, S\)"):
        mha(x, mask=torch.ones(3, dtype=torch.bool))
    with pytest.raises(TypeError, match="boolean"):
        mha(x, mask=torch.ones(3, 3))


def test_from_torch_copies_device_dtype_and_rejects_what_it_cannot_copy():
    m = nn.MultiheadAttention(8, 2, batch_first=True).double()
    ours = MultiHeadAttention.from_torch(m)
    assert ours.w_q.weight.dtype == torch.float64
    assert ours.w_q.weight.data_ptr() != m.in_proj_weight.data_ptr()  # a copy, not a view
    with pytest.raises(ValueError, match="kdim"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, kdim=4, vdim=4))
    with pytest.raises(ValueError, match="add_bias_kv"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, add_bias_kv=True))
    with pytest.raises(TypeError, match="MultiheadAttention"):
        MultiHeadAttention.from_torch(nn.Linear(8, 8))


def test_from_torch_copies_every_parameter_to_its_own_slice():
    """Compared directly, because an output or gradient comparison cannot see the key bias (next test)."""
    m = torch_mha(12, 3, True, torch.float32, "cpu", seed=5)
    ours = MultiHeadAttention.from_torch(m)
    for i, lin in enumerate((ours.w_q, ours.w_k, ours.w_v)):
        assert torch.equal(lin.weight, m.in_proj_weight[i * 12 : (i + 1) * 12])
        assert torch.equal(lin.bias, m.in_proj_bias[i * 12 : (i + 1) * 12])
    assert torch.equal(ours.w_o.weight, m.out_proj.weight) and torch.equal(ours.w_o.bias, m.out_proj.bias)


def test_the_key_bias_changes_neither_outputs_nor_gradients():
    """q (k + b_K)^T adds q b_K^T to a whole row of scores, and the softmax over the keys ignores it."""
    torch.manual_seed(6)
    mha = MultiHeadAttention(8, 2).double()
    x, y = torch.randn(2, 3, 8, dtype=torch.float64), torch.randn(2, 5, 8, dtype=torch.float64)
    mask = torch.rand(2, 3, 5) < 0.7
    mask[..., 0] = True
    out, w = mha(x, y, mask=mask, return_weights=True)
    out.sum().backward()
    torch.testing.assert_close(mha.w_k.bias.grad, torch.zeros(8, dtype=torch.float64))
    with torch.no_grad():
        mha.w_k.bias.add_(10 * torch.randn(8, dtype=torch.float64))
        out2, w2 = mha(x, y, mask=mask, return_weights=True)
    torch.testing.assert_close(out2, out)
    torch.testing.assert_close(w2, w)
    with torch.no_grad():  # while the query bias does matter: the test can tell a bias that counts
        mha.w_q.bias.add_(10 * torch.randn(8, dtype=torch.float64))
        assert not torch.allclose(mha(x, y, mask=mask), out)


# ---------------------------------------------------------------- properties (hypothesis)


@settings(max_examples=30, deadline=None)
@given(H=st.sampled_from([1, 2, 4]), L=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_self_attention_is_permutation_equivariant(H, L, seed):
    torch.manual_seed(seed)
    mha = MultiHeadAttention(8, H).double()
    x = torch.randn(2, L, 8, dtype=torch.float64)
    perm = torch.randperm(L)
    torch.testing.assert_close(mha(x[:, perm]), mha(x)[:, perm])


@settings(max_examples=30, deadline=None)
@given(L=st.integers(1, 5), S=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_cross_attention_ignores_the_order_of_key_value_pairs(L, S, seed):
    torch.manual_seed(seed)
    mha = MultiHeadAttention(8, 2).double()
    x, y = torch.randn(1, L, 8, dtype=torch.float64), torch.randn(1, S, 8, dtype=torch.float64)
    perm = torch.randperm(S)
    out, w = mha(x, y, return_weights=True)
    out_p, w_p = mha(x, y[:, perm], return_weights=True)
    torch.testing.assert_close(out_p, out)
    torch.testing.assert_close(w_p, w[..., perm])
    torch.testing.assert_close(w.sum(-1), torch.ones(1, 2, L, dtype=torch.float64))
