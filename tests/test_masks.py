"""Masks against loops written out element by element and against PyTorch's own causal masking."""

import pytest
import torch
import torch.nn.functional as F

from course_lib import causal_mask, padding_mask, scaled_dot_product_attention, window_mask


@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_causal_mask_matches_loop(n):
    expected = torch.tensor([[j <= i for j in range(n)] for i in range(n)], dtype=torch.bool).reshape(n, n)
    assert torch.equal(causal_mask(n), expected)


def test_causal_mask_equals_pytorch_is_causal(device):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 9, 8, device=device) for _ in range(3))
    ours = scaled_dot_product_attention(q, k, v, causal_mask(9, device=device))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(ours, ref)


def test_padding_mask_matches_loop():
    lengths = [3, 0, 5, 1]
    mask = padding_mask(lengths, 5)
    assert mask.shape == (4, 1, 5) and mask.dtype == torch.bool
    for b, n in enumerate(lengths):
        assert mask[b, 0].tolist() == [j < n for j in range(5)]


def test_padding_mask_follows_device_of_lengths(device):
    mask = padding_mask(torch.tensor([2, 4], device=device), 4)
    assert mask.device.type == device.type


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n,window", [(0, 2), (1, 0), (6, 0), (6, 1), (6, 2), (5, 10), (11, 3)])
def test_window_mask_matches_loop(n, window, causal):
    def allowed(i, j):
        return (0 <= i - j <= window) if causal else abs(i - j) <= window

    expected = torch.tensor([[allowed(i, j) for j in range(n)] for i in range(n)], dtype=torch.bool).reshape(n, n)
    assert torch.equal(window_mask(n, window, causal=causal), expected)


def test_window_mask_large_window_is_full_or_causal():
    assert window_mask(8, 7).all()
    assert torch.equal(window_mask(8, 7, causal=True), causal_mask(8))


@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda: causal_mask(-1), ValueError, "n must be >= 0"),
        (lambda: causal_mask(2.5), TypeError, "n must be an int"),
        (lambda: window_mask(4, -1), ValueError, "window must be >= 0"),
        (lambda: padding_mask([1, 6], 5), ValueError, "lengths must lie in [0, max_len=5]"),
        (lambda: padding_mask([[1, 2]], 5), ValueError, "lengths must have shape (B,), got (1, 2)"),
        (lambda: padding_mask([1.0, 2.0], 5), TypeError, "integers"),
    ],
)
def test_mask_errors_are_clear(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    assert words in str(info.value)
