"""course_lib.positional against independent references: the sinusoidal formula evaluated element by element
with Python's math module, RoPE as complex multiplication (the form of Meta's LLaMA reference code) and as an
explicit rotation matrix, and the laws they must obey (shift by a fixed linear map, dependence on m - n only)."""

import math

import pytest
import torch
from conftest import float_dtypes
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import (
    LearnedPositionalEmbedding,
    apply_rope,
    rope_rotation_matrix,
    sinusoidal_encoding,
    sinusoidal_frequencies,
    sinusoidal_shift_matrix,
)


def formula_table(P, D, base=10000.0):
    """PE[pos, j] = sin(pos / base^(2*(j//2)/D)) for even j, cos(...) for odd j; plain Python floats."""
    rows = []
    for pos in range(P):
        row = []
        for j in range(D):
            angle = pos / base ** (2 * (j // 2) / D)
            row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float64)


# ---------------------------------------------------------------- sinusoidal encoding


@pytest.mark.parametrize("P,D,base", [(50, 16, 10000.0), (7, 6, 100.0), (3, 5, 10000.0), (1, 1, 10.0)])
def test_sinusoidal_matches_the_formula(P, D, base):
    ours = sinusoidal_encoding(P, D, base, dtype=torch.float64)
    assert ours.shape == (P, D)
    torch.testing.assert_close(ours, formula_table(P, D, base))


def test_even_dimensions_are_sines_odd_are_cosines():
    pe = sinusoidal_encoding(10, 8)
    torch.testing.assert_close(pe[0], torch.tensor([0.0, 1.0] * 4))  # sin 0 = 0, cos 0 = 1
    torch.testing.assert_close(pe[:, 0], torch.sin(torch.arange(10.0)))  # pair 0 turns one radian per position
    torch.testing.assert_close(pe[:, 1], torch.cos(torch.arange(10.0)))
    torch.testing.assert_close(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, torch.ones(10, 4))  # each pair on the unit circle


def test_frequencies_fall_from_one_towards_one_over_base():
    w = sinusoidal_frequencies(8, base=10000.0, dtype=torch.float64)
    torch.testing.assert_close(w, torch.tensor([1.0, 0.1, 0.01, 0.001], dtype=torch.float64))


def test_sinusoidal_device_and_dtype(device):
    dtype = float_dtypes(device)[-1]
    pe = sinusoidal_encoding(4, 6, device=device, dtype=dtype)
    assert pe.device.type == device.type and pe.dtype == dtype
    assert sinusoidal_encoding(4, 6).dtype == torch.float32


@pytest.mark.parametrize("D", [2, 8, 64])
def test_shift_matrix_maps_every_position_to_the_one_k_later(D):
    P = 300
    pe = sinusoidal_encoding(P, D, dtype=torch.float64)
    for k in (0, 1, 5, 37, -3):
        M = sinusoidal_shift_matrix(k, D)
        lo, hi = max(0, -k), min(P, P - k)
        torch.testing.assert_close(pe[lo:hi] @ M, pe[lo + k : hi + k])  # every pos at once, one matrix
        torch.testing.assert_close(M @ M.T, torch.eye(D, dtype=torch.float64))  # a rotation


def test_shift_matrices_compose_and_invert():
    M = {k: sinusoidal_shift_matrix(k, 10) for k in (3, 4, 7, -3)}
    torch.testing.assert_close(M[3] @ M[4], M[7])
    torch.testing.assert_close(M[3] @ M[-3], torch.eye(10, dtype=torch.float64))
    with pytest.raises(ValueError, match="must be even"):
        sinusoidal_shift_matrix(1, 5)


def test_sinusoidal_bad_arguments():
    with pytest.raises(ValueError, match="num_positions must be >= 1"):
        sinusoidal_encoding(0, 4)
    with pytest.raises(TypeError, match="d_model must be an int, got float 2.5"):
        sinusoidal_encoding(4, 2.5)
    with pytest.raises(ValueError, match="base must be > 0"):
        sinusoidal_encoding(4, 4, base=-1.0)


# ---------------------------------------------------------------- RoPE


def rope_complex(x, positions, base=10000.0):
    """Independent RoPE: pairs (x_2i, x_2i+1) as complex numbers, multiplied by exp(i * m * theta_i)."""
    x = x.detach().cpu().double()
    D = x.shape[-1]
    theta = 1.0 / base ** (torch.arange(0, D, 2, dtype=torch.float64) / D)  # (D/2,)
    angles = torch.as_tensor(positions, dtype=torch.float64)[..., None] * theta
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], D // 2, 2).contiguous())
    return torch.view_as_real(z * torch.polar(torch.ones_like(angles), angles)).flatten(-2)


@pytest.mark.parametrize("shape", [(5, 4), (2, 7, 8), (2, 3, 6, 16)])
def test_rope_matches_complex_multiplication(device, shape):
    for dtype in float_dtypes(device):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(shape, generator=g, dtype=dtype).to(device)
        out = apply_rope(x)
        assert out.shape == x.shape and out.dtype == dtype and out.device.type == device.type
        tol = {} if dtype == torch.float64 else {"atol": 1e-5, "rtol": 1e-5}
        torch.testing.assert_close(out.cpu().double(), rope_complex(x, torch.arange(shape[-2])), **tol)


def test_rope_equals_its_rotation_matrix_and_custom_positions():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 6, generator=g, dtype=torch.float64)
    positions = torch.tensor([3, 0, 11, 250])
    out = apply_rope(x, positions)
    for i, m in enumerate(positions.tolist()):
        R = rope_rotation_matrix(m, 6)
        torch.testing.assert_close(out[i], x[i] @ R)
        torch.testing.assert_close(R @ R.T, torch.eye(6, dtype=torch.float64))
    torch.testing.assert_close(out, rope_complex(x, positions))
    # float positions work too (e.g. interpolated positions)
    torch.testing.assert_close(apply_rope(x, positions.double() / 2), rope_complex(x, positions / 2))


@pytest.mark.parametrize("m", [0, 1, 5, -7, 123])
def test_rope_rotation_turns_the_other_way_from_the_shift_matrix(m):
    """PE stores a pair as (sin, cos), RoPE rotates (x_2i, x_2i+1): the same angle, opposite directions."""
    torch.testing.assert_close(rope_rotation_matrix(m, 10), sinusoidal_shift_matrix(-m, 10))
    torch.testing.assert_close(rope_rotation_matrix(m, 10), sinusoidal_shift_matrix(m, 10).T)
    if m:
        assert not torch.allclose(rope_rotation_matrix(m, 10), sinusoidal_shift_matrix(m, 10))


def test_rope_2d_score_by_hand():
    """D = 2: q R_m (k R_n)^T = (q.k) cos(m - n) + (q0 k1 - q1 k0) sin(m - n), notebook 07's by-hand exercise."""
    q, k = torch.tensor([[1.0, 2.0]], dtype=torch.float64), torch.tensor([[3.0, -1.0]], dtype=torch.float64)
    for m, n in [(5, 3), (3, 5), (40, 0)]:
        score = (apply_rope(q, torch.tensor([m])) @ apply_rope(k, torch.tensor([n])).T).item()
        d = m - n
        assert math.isclose(score, 1.0 * math.cos(d) + (1.0 * -1.0 - 2.0 * 3.0) * math.sin(d), abs_tol=1e-12)


def test_rope_positions_broadcast_over_batch_and_heads():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(2, 3, 5, 8, generator=g, dtype=torch.float64)  # (B, H, L, Dk)
    positions = torch.tensor([[0, 1, 2, 3, 4], [10, 11, 12, 13, 14]])[:, None]  # (B, 1, L): per sequence
    out = apply_rope(x, positions)
    torch.testing.assert_close(out[0], apply_rope(x[0]))
    torch.testing.assert_close(out[1], rope_complex(x[1], torch.arange(10, 15)))
    with pytest.raises(ValueError, match=r"do not broadcast to x.shape\[:-1\]"):
        apply_rope(x, torch.arange(4))


def test_rope_position_zero_is_identity_and_norms_are_kept():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(6, 10, generator=g)
    torch.testing.assert_close(apply_rope(x, torch.zeros(6)), x)
    torch.testing.assert_close(apply_rope(x).norm(dim=-1), x.norm(dim=-1))


@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(-500, 500),
    n=st.integers(-500, 500),
    shift=st.integers(-1000, 1000),
    half_d=st.integers(1, 16),
    seed=st.integers(0, 2**16),
)
def test_rope_score_depends_only_on_the_offset(m, n, shift, half_d, seed):
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, 1, 2 * half_d, generator=g, dtype=torch.float64)
    score = (apply_rope(q, torch.tensor([m])) * apply_rope(k, torch.tensor([n]))).sum()
    moved = (apply_rope(q, torch.tensor([m + shift])) * apply_rope(k, torch.tensor([n + shift]))).sum()
    torch.testing.assert_close(moved, score)
    # and equals q R_{m-n} k^T
    torch.testing.assert_close(score, (q @ rope_rotation_matrix(m - n, 2 * half_d) @ k.T).squeeze())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_rope_half_precision(dtype):
    x = torch.randn(3, 9, 16)
    out = apply_rope(x.to(dtype))
    assert out.dtype == dtype
    torch.testing.assert_close(out.float(), apply_rope(x), atol=2e-2, rtol=2e-2)


def test_rope_bad_inputs():
    with pytest.raises(ValueError, match="must be even, got 5"):
        apply_rope(torch.randn(3, 5))
    with pytest.raises(TypeError, match="floating dtype"):
        apply_rope(torch.ones(3, 4, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\(\.\.\., L, D\)"):
        apply_rope(torch.randn(4))
    with pytest.raises(ValueError, match="must be even"):
        rope_rotation_matrix(1, 3)


def test_rope_does_not_modify_its_input():
    x = torch.randn(2, 4, 6)
    copy = x.clone()
    apply_rope(x)
    assert torch.equal(x, copy)


# ---------------------------------------------------------------- learned positions


def test_learned_embedding_adds_the_first_rows_of_its_table(device):
    torch.manual_seed(0)
    layer = LearnedPositionalEmbedding(10, 4).to(device)
    x = torch.randn(3, 6, 4, device=device)
    torch.testing.assert_close(layer(x), x + layer.weight[:6])
    positions = torch.tensor([9, 0, 4], device=device)
    torch.testing.assert_close(layer(x[:, :3], positions), x[:, :3] + layer.weight[positions])
    assert layer.weight.shape == (10, 4)
    assert 0.7 < layer.weight.std().item() < 1.3  # init_std = 1.0, as nn.Embedding
    assert 0.01 < LearnedPositionalEmbedding(100, 8, init_std=0.02).weight.std().item() < 0.03


def test_learned_embedding_trains_only_the_rows_it_used():
    torch.manual_seed(0)
    layer = LearnedPositionalEmbedding(8, 3)
    layer(torch.randn(2, 5, 3)).sum().backward()
    grad = layer.weight.grad
    torch.testing.assert_close(grad[:5], torch.full((5, 3), 2.0))  # each used row gets d(sum)/dP = batch size
    assert torch.equal(grad[5:], torch.zeros(3, 3))  # positions 5..7 never seen: no gradient, never learned


def test_learned_embedding_length_limit():
    layer = LearnedPositionalEmbedding(8, 3)
    with pytest.raises(ValueError, match=r"length L=9 but this table holds only max_len=8"):
        layer(torch.randn(1, 9, 3))
    with pytest.raises(ValueError, match=r"positions must lie in \[0, max_len=8\)"):
        layer(torch.randn(1, 2, 3), torch.tensor([0, 8]))
    with pytest.raises(ValueError, match="d_model=3"):
        layer(torch.randn(1, 2, 4))
    with pytest.raises(ValueError, match="max_len must be >= 1"):
        LearnedPositionalEmbedding(0, 3)
