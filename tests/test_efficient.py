"""course_lib.efficient against independent references: PyTorch's fused attention with a band or causal mask,
float64 math written another way (a token-by-token recurrence for causal linear attention), and a dispatch-mode
probe that records the largest tensor each function creates (so "never builds an N x N matrix" is tested)."""

import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICES
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

import course_lib as cl
from course_lib.efficient import (
    chunked_attention,
    chunked_attention_reference,
    sliding_window_attention,
    sliding_window_attention_reference,
)
from course_lib.linear import (
    elu_feature_map,
    linear_attention,
    linear_attention_reference,
    linear_attention_weights,
)
from course_lib.masks import bigbird_mask, longformer_mask, mask_receptive_field


def qkv(*shape_q, s=None, dv=None, dtype=torch.float64, device="cpu", seed=0):
    """q (..., L, Dk), k (..., S, Dk), v (..., S, Dv) from a seeded generator."""
    g = torch.Generator().manual_seed(seed)
    *batch, l, dk = shape_q
    s = l if s is None else s
    dv = dk if dv is None else dv
    q = torch.randn(*batch, l, dk, generator=g, dtype=torch.float64)
    k = torch.randn(*batch, s, dk, generator=g, dtype=torch.float64)
    v = torch.randn(*batch, s, dv, generator=g, dtype=torch.float64)
    return [t.to(device=device, dtype=dtype) for t in (q, k, v)]


class LargestTensor(TorchDispatchMode):
    """Records the number of elements of the largest tensor any ATen operation returns while active."""

    def __init__(self):
        super().__init__()
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self.largest = max(self.largest, t.numel())
        return out


def largest_tensor(fn, *args):
    with LargestTensor() as probe:
        fn(*args)
    return probe.largest


# ---------------------------------------------------------------------------------------------- sliding window


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n,window", [(1, 0), (1, 3), (2, 1), (7, 0), (7, 2), (16, 4), (33, 5), (40, 39), (20, 100)])
def test_sliding_window_equals_masked_pytorch_attention(n, window, causal, device):
    dtype = torch.float32 if device.type == "mps" else torch.float64
    q, k, v = qkv(2, 3, n, 8, dv=5, dtype=dtype, device=device)
    mask = cl.window_mask(n, window, causal, device=device)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(sliding_window_attention(q, k, v, window, causal), expected)
    torch.testing.assert_close(sliding_window_attention_reference(q, k, v, window, causal), expected)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 40),
    window=st.integers(0, 45),
    extra=st.integers(0, 9),
    causal=st.booleans(),
    seed=st.integers(0, 999),
)
def test_sliding_window_any_valid_block_size(n, window, extra, causal, seed):
    q, k, v = qkv(n, 4, dv=3, seed=seed)
    block = max(min(window, n - 1), 1) + extra
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=cl.window_mask(n, window, causal))
    torch.testing.assert_close(sliding_window_attention(q, k, v, window, causal, block_size=block), expected)


def test_sliding_window_custom_scale_and_broadcast_batch():
    q, _, _ = qkv(2, 3, 12, 8)
    _, k, v = qkv(1, 3, 12, 8, dv=6, seed=1)  # keys and values shared by the batch
    mask = cl.window_mask(12, 3)
    expected = F.scaled_dot_product_attention(
        q, k.expand(2, 3, 12, 8), v.expand(2, 3, 12, 6), attn_mask=mask, scale=0.3
    )
    torch.testing.assert_close(sliding_window_attention(q, k, v, 3, scale=0.3), expected)


def test_sliding_window_never_builds_an_n_by_n_matrix():
    n, window, d = 1024, 8, 16
    q, k, v = qkv(n, d, dtype=torch.float32)
    ours = largest_tensor(sliding_window_attention, q, k, v, window)
    reference = largest_tensor(sliding_window_attention_reference, q, k, v, window)
    assert reference >= n * n  # the probe sees the masked reference's N x N scores ...
    assert ours <= 3 * n * max(window, d)  # ... and only O(N W) tensors in the blocked version


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_sliding_window_half_precision(dtype, device):
    q, k, v = qkv(2, 50, 16, dtype=torch.float32, device=device)
    out = sliding_window_attention(q.to(dtype), k.to(dtype), v.to(dtype), 6, True)
    assert out.dtype == dtype and out.device.type == device.type
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=cl.window_mask(50, 6, True, device=device))
    torch.testing.assert_close(out.float(), expected, atol=2e-2, rtol=2e-2)


def test_sliding_window_gradients_match_reference():
    q, k, v = (t.requires_grad_() for t in qkv(2, 29, 6, dv=4))
    for causal in (False, True):
        ours = torch.autograd.grad(sliding_window_attention(q, k, v, 5, causal).square().sum(), (q, k, v))
        ref = torch.autograd.grad(sliding_window_attention_reference(q, k, v, 5, causal).square().sum(), (q, k, v))
        for a, b in zip(ours, ref):
            torch.testing.assert_close(a, b)


@pytest.mark.parametrize("block_size", [7, 12, 29])
@pytest.mark.parametrize("causal", [False, True])
def test_sliding_window_gradients_with_blocks_larger_than_the_window(block_size, causal):
    # Blocks wider than the window hold whole rows of keys outside it; masking them with -inf instead of a large
    # finite number gives NaN gradients there (a bug that the default block size, = window, does not show).
    q, k, v = (t.requires_grad_() for t in qkv(2, 29, 6, dv=4))
    ours = torch.autograd.grad(
        sliding_window_attention(q, k, v, 3, causal, block_size=block_size).square().sum(), (q, k, v)
    )
    ref = torch.autograd.grad(sliding_window_attention_reference(q, k, v, 3, causal).square().sum(), (q, k, v))
    for a, b in zip(ours, ref):
        assert torch.isfinite(a).all()
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda q, k, v: sliding_window_attention(q, k[:, :5], v[:, :5], 2), ValueError, ["L = S", "(2, 5, 4)"]),
        (lambda q, k, v: sliding_window_attention(q, k, v, -1), ValueError, ["window", "-1"]),
        (lambda q, k, v: sliding_window_attention(q, k, v, 2.5), TypeError, ["window", "float"]),
        (lambda q, k, v: sliding_window_attention(q, k, v, 4, block_size=3), ValueError, ["block_size", ">= 4"]),
        (lambda q, k, v: sliding_window_attention(q, k, v[..., :3, :], 1), ValueError, ["length S", "(2, 3, 4)"]),
        (lambda q, k, v: sliding_window_attention(q, k.float(), v, 1), TypeError, ["dtype"]),
        (lambda q, k, v: sliding_window_attention(q, k[..., :3], v, 1), ValueError, ["d_k", "(2, 8, 3)"]),
    ],
)
def test_sliding_window_bad_input(call, exc, words):
    q, k, v = qkv(2, 8, 4)
    with pytest.raises(exc) as info:
        call(q, k, v)
    for w in words:
        assert w in str(info.value)


# ---------------------------------------------------------------------------------------------- chunked


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("l,s", [(1, 1), (16, 16), (37, 37), (10, 23), (23, 10)])
@pytest.mark.parametrize("chunk", [1, 4, 7, 16, 64])
def test_chunked_equals_pytorch_attention(l, s, chunk, causal, device):
    dtype = torch.float32 if device.type == "mps" else torch.float64
    q, k, v = qkv(2, 3, l, 8, s=s, dv=5, dtype=dtype, device=device)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(chunked_attention(q, k, v, chunk, causal), expected)
    torch.testing.assert_close(chunked_attention_reference(q, k, v, causal), expected)


@settings(max_examples=50, deadline=None)
@given(
    l=st.integers(1, 30), s=st.integers(1, 30), chunk=st.integers(1, 35), causal=st.booleans(), seed=st.integers(0, 999)
)
def test_chunked_any_chunk_size(l, s, chunk, causal, seed):
    q, k, v = qkv(l, 4, s=s, dv=3, seed=seed)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(chunked_attention(q, k, v, chunk, causal), expected)


def test_chunked_is_exact_even_with_huge_scores():
    # scores of +-1000: exp() overflows float32 without the running maximum
    q, k, v = qkv(1, 20, 4, dtype=torch.float32)
    out = chunked_attention(q * 100, k * 100, v, 3)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q * 100, k * 100, v))
    assert torch.isfinite(out).all()


def test_chunked_custom_scale_and_no_keys():
    q, k, v = qkv(3, 9, 8, s=11, dv=2)
    torch.testing.assert_close(
        chunked_attention(q, k, v, 4, scale=0.1), F.scaled_dot_product_attention(q, k, v, scale=0.1)
    )
    empty = chunked_attention(q, k[:, :0], v[:, :0], 4)  # no key at all: zeros, as for a fully masked row
    assert empty.shape == (3, 9, 2) and torch.all(empty == 0)


def test_chunked_keeps_memory_linear_in_length():
    n, chunk, d = 1024, 32, 16
    q, k, v = qkv(n, d, dtype=torch.float32)
    assert largest_tensor(chunked_attention_reference, q, k, v) >= n * n
    assert largest_tensor(chunked_attention, q, k, v, chunk) <= n * max(chunk, d)
    assert largest_tensor(chunked_attention, q, k, v, chunk, True) <= n * max(chunk, d)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_chunked_half_precision(dtype, device):
    q, k, v = qkv(2, 2, 40, 16, dtype=torch.float32, device=device)
    out = chunked_attention(q.to(dtype), k.to(dtype), v.to(dtype), 7, True)
    assert out.dtype == dtype and out.device.type == device.type
    torch.testing.assert_close(
        out.float(), F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=2e-2, rtol=2e-2
    )


@pytest.mark.parametrize("causal", [False, True])
def test_chunked_gradients_match_reference(causal):
    q, k, v = (t.requires_grad_() for t in qkv(2, 21, 6, s=21, dv=4))
    ours = torch.autograd.grad(chunked_attention(q, k, v, 5, causal).square().sum(), (q, k, v))
    ref = torch.autograd.grad(chunked_attention_reference(q, k, v, causal).square().sum(), (q, k, v))
    for a, b in zip(ours, ref):
        torch.testing.assert_close(a, b)


def test_chunked_does_not_modify_inputs():
    q, k, v = qkv(2, 10, 4)
    copies = [t.clone() for t in (q, k, v)]
    chunked_attention(q, k, v, 3, True)
    sliding_window_attention(q, k, v, 2)
    linear_attention(q, k, v, True, chunk_size=3)
    for t, c in zip((q, k, v), copies):
        assert torch.equal(t, c)


@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda q, k, v: chunked_attention(q, k, v, 0), ValueError, ["chunk_size", ">= 1"]),
        (lambda q, k, v: chunked_attention(q, k, v, True), TypeError, ["chunk_size"]),
        (lambda q, k, v: chunked_attention(q.long(), k, v), TypeError, ["floating"]),
        (lambda q, k, v: chunked_attention(q[0, 0], k, v), ValueError, ["at least 2", "(4,)"]),
        (lambda q, k, v: chunked_attention(q, k[:2], v), ValueError, ["broadcast"]),
        (lambda q, k, v: chunked_attention([[1.0]], k, v), TypeError, ["torch.Tensor"]),
    ],
)
def test_chunked_bad_input(call, exc, words):
    q, k, v = qkv(3, 6, 4)
    with pytest.raises(exc) as info:
        call(q, k, v)
    for w in words:
        assert w in str(info.value)


# ---------------------------------------------------------------------------------------------- linear attention


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n", [1, 5, 64, 100])
@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_linear_equals_its_quadratic_form(n, chunk, causal, device):
    dtype = torch.float32 if device.type == "mps" else torch.float64
    q, k, v = qkv(2, 2, n, 8, dv=3, dtype=dtype, device=device)
    torch.testing.assert_close(
        linear_attention(q, k, v, causal, chunk_size=chunk), linear_attention_reference(q, k, v, causal)
    )


def test_linear_equals_explicit_formula_written_another_way():
    """Non-causal: o_i = sum_j phi(q_i).phi(k_j) v_j / sum_j phi(q_i).phi(k_j), by explicit loops (float64)."""
    q, k, v = qkv(6, 3, s=9, dv=2)
    phi = lambda x: torch.where(x > 0, x + 1, torch.exp(x))  # noqa: E731  elu(x) + 1 written out
    expected = torch.zeros(6, 2, dtype=torch.float64)
    for i in range(6):
        sims = [float(phi(q[i]) @ phi(k[j])) for j in range(9)]
        expected[i] = sum(s * v[j] for j, s in enumerate(sims)) / (sum(sims) + 1e-6)
    torch.testing.assert_close(linear_attention(q, k, v), expected)


def test_causal_linear_attention_equals_a_recurrence():
    """Causal linear attention is an RNN: state S_i = S_{i-1} + phi(k_i) v_i^T, z_i = z_{i-1} + phi(k_i)."""
    q, k, v = qkv(2, 30, 4, dv=3)
    fq, fk = elu_feature_map(q), elu_feature_map(k)
    state = torch.zeros(2, 4, 3, dtype=torch.float64)
    z = torch.zeros(2, 4, dtype=torch.float64)
    outs = []
    for i in range(30):
        state = state + fk[:, i, :, None] * v[:, i, None, :]
        z = z + fk[:, i]
        outs.append((fq[:, i, None, :] @ state)[:, 0] / ((fq[:, i] * z).sum(-1, keepdim=True) + 1e-6))
    torch.testing.assert_close(linear_attention(q, k, v, True, chunk_size=8), torch.stack(outs, dim=1))


def test_linear_attention_is_not_softmax_attention():
    q, k, v = qkv(2, 64, 16, seed=3)
    weights = linear_attention_weights(q, k)
    softmax = cl.attention_weights(q, k)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 64, dtype=torch.float64), atol=1e-5, rtol=0)
    assert torch.all(weights > 0)
    assert (weights - softmax).abs().max() > 0.05  # a different model, not a rounding difference
    assert weights.amax(-1).mean() < softmax.amax(-1).mean()  # and typically a flatter one


def test_linear_attention_causal_weights_are_lower_triangular():
    q, k, _ = qkv(10, 4)
    w = linear_attention_weights(q, k, causal=True)
    assert torch.all(w.triu(1) == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(10, dtype=torch.float64), atol=1e-5, rtol=0)


def test_linear_custom_feature_map_changes_the_width():
    q, k, v = qkv(2, 12, 4, dv=3)
    phi = lambda x: torch.cat([F.relu(x), F.relu(-x)], dim=-1) + 0.1  # noqa: E731  F = 2 Dk
    for causal in (False, True):
        torch.testing.assert_close(
            linear_attention(q, k, v, causal, feature_map=phi, chunk_size=5),
            linear_attention_reference(q, k, v, causal, feature_map=phi),
        )


def test_linear_attention_memory_is_linear():
    n, d = 2048, 16
    q, k, v = qkv(n, d, dtype=torch.float32)
    assert largest_tensor(linear_attention_reference, q, k, v) >= n * n
    assert largest_tensor(linear_attention, q, k, v) <= n * d
    assert largest_tensor(linear_attention, q, k, v, True) <= n * 64  # chunks of C = 64 and F Dv / C per token


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_linear_half_precision(dtype, device):
    q, k, v = qkv(2, 33, 8, dtype=torch.float32, device=device)
    out = linear_attention(q.to(dtype), k.to(dtype), v.to(dtype), True)
    assert out.dtype == dtype
    torch.testing.assert_close(out.float(), linear_attention_reference(q, k, v, True), atol=2e-2, rtol=2e-2)


def test_linear_gradients_match_reference():
    q, k, v = (t.requires_grad_() for t in qkv(2, 19, 4, dv=3))
    for causal in (False, True):
        ours = torch.autograd.grad(linear_attention(q, k, v, causal, chunk_size=4).square().sum(), (q, k, v))
        ref = torch.autograd.grad(linear_attention_reference(q, k, v, causal).square().sum(), (q, k, v))
        for a, b in zip(ours, ref):
            torch.testing.assert_close(a, b)


def test_linear_bad_input():
    q, k, v = qkv(2, 6, 4)
    with pytest.raises(ValueError, match=r"L = S.*\(2, 6, 4\).*\(2, 5, 4\)"):
        linear_attention(q, k[:, :5], v[:, :5], causal=True)
    with pytest.raises(ValueError, match="feature_map"):
        linear_attention(q, k, v, feature_map=lambda x: x.sum(-1))
    with pytest.raises(ValueError, match="chunk_size"):
        linear_attention(q, k, v, True, chunk_size=0)


# ---------------------------------------------------------------------------------------------- sparse patterns


def test_longformer_mask_is_window_plus_global_rows_and_columns():
    n, w = 12, 2
    mask = longformer_mask(n, w, global_tokens=[0, 7])
    band = cl.window_mask(n, w)
    for i in range(n):
        for j in range(n):
            assert bool(mask[i, j]) == (bool(band[i, j]) or i in (0, 7) or j in (0, 7))
    assert torch.equal(mask, mask.T)
    assert torch.equal(longformer_mask(n, w, global_tokens=2), longformer_mask(n, w, global_tokens=[0, 1]))
    assert torch.equal(longformer_mask(n, w, global_tokens=0), band)


def test_bigbird_mask_adds_exactly_r_random_keys_per_query():
    n, w, r = 40, 2, 3
    base = longformer_mask(n, w, global_tokens=1)
    mask = bigbird_mask(n, w, global_tokens=1, num_random=r, seed=5)
    assert torch.all(mask >= base)  # keeps the window and the global tokens
    extra = (mask & ~base).sum(-1)
    assert extra[0] == 0  # the global query already sees everything
    assert torch.all(extra[1:] == r)
    assert torch.equal(mask, bigbird_mask(n, w, 1, r, seed=5))  # seeded
    assert not torch.equal(mask, bigbird_mask(n, w, 1, r, seed=6))
    assert torch.equal(bigbird_mask(n, w, 1, 0), base)


def test_sparse_masks_bad_input():
    with pytest.raises(ValueError, match="global token positions"):
        longformer_mask(5, 1, [5])
    with pytest.raises(ValueError, match="more than the n=5"):
        longformer_mask(5, 1, 6)
    with pytest.raises(ValueError, match="num_random"):
        bigbird_mask(5, 1, 1, -1)


@pytest.mark.parametrize("window,layers", [(1, 0), (1, 3), (2, 2), (3, 5), (4, 10)])
def test_receptive_field_of_a_window_grows_linearly_with_depth(window, layers):
    n = 30
    reach = mask_receptive_field(cl.window_mask(n, window), layers)
    assert torch.equal(reach, cl.window_mask(n, min(window * layers, n)))
    causal = mask_receptive_field(cl.window_mask(n, window, causal=True), layers)
    assert torch.equal(causal, cl.window_mask(n, min(window * layers, n), causal=True))


def test_receptive_field_with_a_global_token_is_everything_after_two_layers():
    mask = longformer_mask(50, 1, global_tokens=1)
    assert not mask_receptive_field(mask, 1).all()
    assert mask_receptive_field(mask, 2).all()  # i -> global token -> j


def test_receptive_field_bad_input():
    with pytest.raises(TypeError, match="boolean"):
        mask_receptive_field(torch.ones(3, 3), 1)
    with pytest.raises(ValueError, match=r"square.*\(3, 4\)"):
        mask_receptive_field(torch.ones(3, 4, dtype=torch.bool), 1)


def test_exported_from_course_lib():
    for module, name in (
        (cl.efficient, "sliding_window_attention"),
        (cl.efficient, "chunked_attention"),
        (cl.linear, "linear_attention"),
        (cl.masks, "longformer_mask"),
    ):
        assert getattr(cl, name) is getattr(module, name)


@pytest.mark.skipif(len(DEVICES) < 2, reason="needs an accelerator to compare against the CPU")
def test_accelerator_agrees_with_cpu():
    q, k, v = qkv(2, 4, 300, 32, dtype=torch.float32)
    for dev in DEVICES[1:]:
        qd, kd, vd = q.to(dev), k.to(dev), v.to(dev)
        for fn in (
            lambda a, b, c: sliding_window_attention(a, b, c, 17, True),
            lambda a, b, c: chunked_attention(a, b, c, 64, True),
            lambda a, b, c: linear_attention(a, b, c, True),
        ):
            torch.testing.assert_close(fn(qd, kd, vd).cpu(), fn(q, k, v), atol=1e-4, rtol=1e-4)
