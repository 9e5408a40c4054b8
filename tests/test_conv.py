"""conv_as_attention against torch.nn.Conv2d, and its pieces against direct formulas written another way."""

import pytest
import torch
import torch.nn.functional as F
from conftest import float_dtypes
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from course_lib.conv import (
    conv_as_attention,
    grid_positions,
    kernel_shifts,
    positional_queries_keys,
    receptive_field,
    shift_attention_weights,
)


def make_conv(c_in, c_out, k, bias, dtype, device, seed=0):
    torch.manual_seed(seed)
    return nn.Conv2d(c_in, c_out, k, padding=k // 2, bias=bias).to(device=device, dtype=dtype)


def conv_by_shifts(x, weight, bias):
    """Second reference: y[q] = b + sum over kernel entries (u, v) of weight[:, :, u, v] @ x[q + (u - p, v - p)],
    written with explicit padding and slicing, in float64."""
    x, weight = x.double(), weight.double()
    k = weight.shape[-1]
    p = k // 2
    h, w = x.shape[-2:]
    xp = F.pad(x, (p, p, p, p))
    out = torch.zeros(x.shape[0], weight.shape[0], h, w, dtype=torch.float64, device=x.device)
    for u in range(k):
        for v in range(k):
            out += torch.einsum("oc,bchw->bohw", weight[:, :, u, v], xp[:, :, u : u + h, v : v + w])
    if bias is not None:
        out += bias.double()[None, :, None, None]
    return out


# ---------------------------------------------------------------- the exact construction


@pytest.mark.parametrize("k", [1, 3, 5])
@pytest.mark.parametrize("c_in,c_out", [(1, 1), (3, 5), (4, 2)])
@pytest.mark.parametrize("bias", [True, False])
def test_conv_as_attention_equals_conv2d(k, c_in, c_out, bias, device):
    for dtype in float_dtypes(device):
        conv = make_conv(c_in, c_out, k, bias, dtype, device)
        g = torch.Generator().manual_seed(1)
        x = torch.randn(2, c_in, 7, 6, generator=g, dtype=dtype).to(device)  # H != W on purpose
        out = conv_as_attention(x, conv)
        assert out.shape == (2, c_out, 7, 6) and out.dtype == dtype and out.device.type == device.type
        with torch.no_grad():
            torch.testing.assert_close(out, conv(x))
            torch.testing.assert_close(
                out.double().cpu(), conv_by_shifts(x, conv.weight, conv.bias).cpu(), atol=1e-5, rtol=1e-4
            )


def test_conv_as_attention_accepts_padding_same_and_tiny_images():
    torch.manual_seed(0)
    conv = nn.Conv2d(2, 3, 5, padding="same")
    x = torch.randn(1, 2, 2, 3)  # smaller than the kernel: most shifts land in the padding
    with torch.no_grad():
        torch.testing.assert_close(conv_as_attention(x, conv), conv(x))


def test_conv_as_attention_is_differentiable_like_the_conv():
    conv = make_conv(2, 3, 3, True, torch.float64, "cpu")
    x = torch.randn(2, 2, 5, 5, dtype=torch.float64, requires_grad=True)
    (gx,) = torch.autograd.grad(conv_as_attention(x, conv).square().sum(), x)
    (rx,) = torch.autograd.grad(conv(x).square().sum(), x)
    torch.testing.assert_close(gx, rx)


def test_hard_weights_are_one_hot_on_the_shifted_pixel():
    out, probs = conv_as_attention(
        torch.randn(1, 1, 4, 5), make_conv(1, 1, 3, True, torch.float32, "cpu"), return_weights=True
    )
    hp, wp = 6, 7
    assert probs.shape == (9, hp * wp, hp * wp)
    assert torch.all((probs == 0) | (probs == 1)) and torch.all(probs.sum(-1) == 1)
    shifts = kernel_shifts(3)
    for h, (di, dj) in enumerate(shifts.tolist()):
        for i in range(1, hp - 1):  # every query whose target lies on the padded grid
            for j in range(1, wp - 1):
                assert probs[h, i * wp + j, (i + di) * wp + (j + dj)] == 1


# ---------------------------------------------------------------- the soft version


def test_soft_version_converges_to_the_conv_as_alpha_grows():
    conv = make_conv(3, 4, 3, True, torch.float64, "cpu")
    x = torch.randn(2, 3, 6, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        target = conv(x)
        errors = [(conv_as_attention(x, conv, alpha=a) - target).abs().max().item() for a in (0.5, 1, 2, 5, 10, 20, 40)]
    assert all(b < a for a, b in zip(errors, errors[1:])), errors
    assert errors[0] > 0.1 and errors[-1] < 1e-12
    # the nearest wrong pixel is at squared distance 1 from the target: its weight is about e^(-alpha)
    bound = 4 * torch.exp(torch.tensor(-10.0)).item() * x.abs().max().item() * conv.weight.abs().sum().item()
    assert errors[4] < bound


def test_soft_weights_equal_the_distance_formula():
    """softmax of the positional q . k equals softmax(-alpha ||delta - Delta||^2), computed by loops in float64."""
    h, w, k, alpha = 3, 4, 3, 0.7
    probs = shift_attention_weights(h, w, k, alpha, dtype=torch.float64)
    q, keys = positional_queries_keys(h, w, k, alpha, dtype=torch.float64)
    torch.testing.assert_close(torch.softmax(q @ keys.T, dim=-1), probs)
    for head, (di, dj) in enumerate(kernel_shifts(k).tolist()):
        for qi in range(h * w):
            logits = torch.tensor(
                [-alpha * ((ki // w - qi // w - di) ** 2 + (ki % w - qi % w - dj) ** 2) for ki in range(h * w)],
                dtype=torch.float64,
            )
            torch.testing.assert_close(probs[head, qi], torch.softmax(logits, 0))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.sampled_from([1, 3, 5]), st.floats(0.01, 50.0))
def test_soft_weights_rows_sum_to_one_and_peak_at_the_target(h, w, k, alpha):
    probs = shift_attention_weights(h, w, k, alpha, dtype=torch.float64)
    torch.testing.assert_close(probs.sum(-1), torch.ones(k * k, h * w, dtype=torch.float64))
    hard = shift_attention_weights(h, w, k, None, dtype=torch.float64)
    assert torch.equal(probs.argmax(-1), hard.argmax(-1))  # the softmax peaks where the limit is one-hot


def test_positional_scores_depend_only_on_relative_position():
    q, keys = positional_queries_keys(5, 5, 3, 1.0, dtype=torch.float64)
    scores = q @ keys.T  # (9, 25, 25)
    centred = scores - scores.max(-1, keepdim=True).values  # drop the per-row constant
    # query (1, 1) -> key (2, 3) and query (2, 2) -> key (3, 4): the same offset (1, 2)
    torch.testing.assert_close(centred[:, 1 * 5 + 1, 2 * 5 + 3], centred[:, 2 * 5 + 2, 3 * 5 + 4])


# ---------------------------------------------------------------- helpers


def test_kernel_shifts_and_grid_positions():
    assert kernel_shifts(1).tolist() == [[0, 0]]
    assert kernel_shifts(3).tolist() == [[i, j] for i in (-1, 0, 1) for j in (-1, 0, 1)]
    assert grid_positions(2, 3).tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_receptive_field_of_a_conv_stack_grows_by_k_minus_1(depth):
    torch.manual_seed(0)
    stack = nn.Sequential(*[nn.Conv2d(2, 2, 3, padding=1) for _ in range(depth)]).double()
    field = receptive_field(stack, (2, 9, 9), (4, 4))
    expected = torch.zeros(9, 9, dtype=torch.bool)
    expected[4 - depth : 5 + depth, 4 - depth : 5 + depth] = True
    assert torch.equal(field, expected)
    corner = receptive_field(stack, (2, 9, 9), (0, 0))  # clipped by the border
    assert corner.sum() == (depth + 1) ** 2


def test_receptive_field_of_attention_is_everything():
    def attention_layer(x):  # content-dependent weights over all 16 pixels
        seq = x.flatten(2).transpose(1, 2)  # (1, 16, C)
        weights = torch.softmax(seq @ seq.transpose(1, 2), dim=-1)
        return (weights @ seq).transpose(1, 2).reshape(x.shape)

    assert receptive_field(attention_layer, (1, 4, 4), (0, 0)).all()


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "conv,words",
    [
        (nn.Conv2d(1, 1, 2, padding=1), "odd size"),
        (nn.Conv2d(1, 1, (3, 5), padding=(1, 2)), "square kernel"),
        (nn.Conv2d(1, 1, 3, padding=1, stride=2), "stride 1"),
        (nn.Conv2d(1, 1, 3, padding=2, dilation=2), "dilation 1"),
        (nn.Conv2d(2, 2, 3, padding=1, groups=2), "groups=1"),
        (nn.Conv2d(1, 1, 3, padding=1, padding_mode="circular"), "pad with zeros"),
        (nn.Conv2d(1, 1, 3, padding=0), "zero padding K // 2 = 1"),
    ],
)
def test_unsupported_convolutions_are_refused(conv, words):
    c_in = conv.in_channels
    with pytest.raises(ValueError, match=words):
        conv_as_attention(torch.randn(1, c_in, 5, 5), conv)


def test_bad_inputs_are_refused():
    conv = nn.Conv2d(3, 2, 3, padding=1)
    with pytest.raises(ValueError, match=r"C_in=2 channels .* in_channels=3"):
        conv_as_attention(torch.randn(1, 2, 5, 5), conv)
    with pytest.raises(ValueError, match=r"\(B, C_in, H, W\), got \(3, 5, 5\)"):
        conv_as_attention(torch.randn(3, 5, 5), conv)
    with pytest.raises(TypeError, match="nn.Conv2d"):
        conv_as_attention(torch.randn(1, 3, 5, 5), nn.Linear(3, 2))
    with pytest.raises(TypeError, match="floating dtype"):
        conv_as_attention(torch.ones(1, 3, 5, 5, dtype=torch.long), conv)
    with pytest.raises(ValueError, match="alpha must be > 0"):
        conv_as_attention(torch.randn(1, 3, 5, 5), conv, alpha=0.0)
    with pytest.raises(ValueError, match="kernel_size must be odd"):
        kernel_shifts(4)
    with pytest.raises(ValueError, match="outside the 4 x 4 image"):
        receptive_field(lambda x: x, (1, 4, 4), (4, 0))
