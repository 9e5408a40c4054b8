"""softmax_jacobian against independent references: torch.autograd.functional.jacobian, central finite
differences in float64, and autograd's backward pass (vector-Jacobian products); plus the laws J obeys."""

import pytest
import torch
from conftest import float_dtypes
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import softmax_jacobian


def autograd_jacobian(logits):
    """Jacobian of softmax over the last dim at `logits` (N,), by autograd: (N, N), J[i, j] = d a_i / d s_j."""
    return torch.autograd.functional.jacobian(lambda s: torch.softmax(s, dim=-1), logits)


@pytest.mark.parametrize("n", [1, 2, 5, 17])
def test_matches_autograd_jacobian(device, n):
    g = torch.Generator().manual_seed(n)
    for dtype in float_dtypes(device):
        logits = (3 * torch.randn(n, generator=g, dtype=dtype)).to(device)
        ours = softmax_jacobian(torch.softmax(logits, dim=-1))
        assert ours.shape == (n, n) and ours.dtype == dtype and ours.device.type == device.type
        torch.testing.assert_close(ours, autograd_jacobian(logits))


def test_batched_matches_a_loop_of_autograd_jacobians(device):
    dtype = float_dtypes(device)[-1]
    logits = torch.randn(2, 3, 6, generator=torch.Generator().manual_seed(0), dtype=dtype).to(device)
    ours = softmax_jacobian(torch.softmax(logits, dim=-1))
    assert ours.shape == (2, 3, 6, 6)
    for b in range(2):
        for i in range(3):
            torch.testing.assert_close(ours[b, i], autograd_jacobian(logits[b, i]))


def test_matches_central_finite_differences():
    logits = torch.randn(7, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    h = 1e-6
    columns = []
    for j in range(7):
        step = torch.zeros(7, dtype=torch.float64)
        step[j] = h
        columns.append((torch.softmax(logits + step, -1) - torch.softmax(logits - step, -1)) / (2 * h))
    numeric = torch.stack(columns, dim=1)  # column j = d a / d s_j
    torch.testing.assert_close(softmax_jacobian(torch.softmax(logits, -1)), numeric, atol=1e-9, rtol=1e-7)


def test_vector_jacobian_product_is_the_backward_pass(device):
    """J g = a * (g - a.g) is what autograd sends back through a softmax (J is symmetric, so J^T g = J g)."""
    dtype = float_dtypes(device)[-1]
    g = torch.Generator().manual_seed(2)
    logits = torch.randn(4, 9, generator=g, dtype=dtype).to(device).requires_grad_()
    upstream = torch.randn(4, 9, generator=g, dtype=dtype).to(device)
    a = torch.softmax(logits, dim=-1)
    (grad,) = torch.autograd.grad(a, logits, upstream)
    jac = softmax_jacobian(a.detach())
    torch.testing.assert_close((jac @ upstream[..., None])[..., 0], grad)
    a = a.detach()
    torch.testing.assert_close(a * (upstream - (a * upstream).sum(-1, keepdim=True)), grad)


def test_masked_row_matches_autograd_of_a_masked_softmax():
    """Hidden keys have weight 0, so their rows and columns of J are 0, as autograd says for -inf scores."""
    logits = torch.randn(6, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    visible = torch.tensor([True, False, True, True, False, True])

    def masked_softmax(s):
        return torch.softmax(s.masked_fill(~visible, float("-inf")), dim=-1)

    expected = torch.autograd.functional.jacobian(masked_softmax, logits)
    ours = softmax_jacobian(masked_softmax(logits))
    torch.testing.assert_close(ours, expected)
    assert torch.equal(ours[~visible], torch.zeros(2, 6, dtype=torch.float64))


def test_special_points():
    one_hot = torch.tensor([0.0, 1.0, 0.0, 0.0], dtype=torch.float64)
    assert torch.equal(softmax_jacobian(one_hot), torch.zeros(4, 4, dtype=torch.float64))  # saturated: J = 0
    n = 5
    uniform = torch.full((n,), 1 / n, dtype=torch.float64)
    expected = (torch.eye(n, dtype=torch.float64) - torch.ones(n, n, dtype=torch.float64) / n) / n
    torch.testing.assert_close(softmax_jacobian(uniform), expected)
    half_half = torch.tensor([0.5, 0.5, 0.0], dtype=torch.float64)  # the largest possible spectral norm, 1/2
    torch.testing.assert_close(torch.linalg.matrix_norm(softmax_jacobian(half_half), ord=2).item(), 0.5)


def test_fully_masked_row_of_zeros_gives_zero_jacobian():
    a = torch.zeros(2, 3)
    a[1] = torch.tensor([0.2, 0.3, 0.5])
    jac = softmax_jacobian(a)
    assert torch.equal(jac[0], torch.zeros(3, 3))
    torch.testing.assert_close(jac[1], torch.diag(a[1]) - torch.outer(a[1], a[1]))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_keeps_dtype_and_is_accurate(device, dtype):
    logits = torch.randn(3, 8, generator=torch.Generator().manual_seed(4)).to(device)
    a = torch.softmax(logits, dim=-1)
    ours = softmax_jacobian(a.to(dtype))
    assert ours.dtype == dtype
    torch.testing.assert_close(ours.float(), softmax_jacobian(a), atol=1e-2, rtol=0)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 12),
    batch=st.integers(1, 3),
    temperature=st.floats(0.01, 30.0),
    seed=st.integers(0, 2**31 - 1),
)
def test_laws_of_the_softmax_jacobian(n, batch, temperature, seed):
    """Symmetric; rows sum to 0; positive semi-definite; spectral norm <= 1/2; trace = 1 - |a|^2."""
    logits = temperature * torch.randn(batch, n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    a = torch.softmax(logits, dim=-1)
    jac = softmax_jacobian(a)
    torch.testing.assert_close(jac, jac.mT)
    torch.testing.assert_close(jac.sum(-1), torch.zeros(batch, n, dtype=torch.float64), atol=1e-12, rtol=0)
    eigenvalues = torch.linalg.eigvalsh(jac)
    assert (eigenvalues > -1e-12).all()
    assert (eigenvalues < 0.5 + 1e-12).all()
    torch.testing.assert_close(jac.diagonal(dim1=-2, dim2=-1).sum(-1), 1 - (a * a).sum(-1))


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(TypeError, match="torch.Tensor"):
        softmax_jacobian([0.5, 0.5])
    with pytest.raises(TypeError, match="floating"):
        softmax_jacobian(torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="at least 1 dimension"):
        softmax_jacobian(torch.tensor(1.0))
    logits = torch.tensor([[2.0, -1.0, 0.5], [0.1, 0.2, 0.3]])
    with pytest.raises(ValueError, match="not the scores"):
        softmax_jacobian(logits)  # logits instead of probabilities
    with pytest.raises(ValueError, match=r"shape \(2, 3\)"):
        softmax_jacobian(torch.softmax(logits, dim=0))  # softmax over the wrong dimension: rows do not sum to 1
