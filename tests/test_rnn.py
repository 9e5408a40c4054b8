"""The from-scratch RNN against torch.nn.RNN (values and gradients), and the gradient-through-time helpers against
an explicit Jacobian product, finite differences and torch.autograd.functional.jacobian."""

import math

import pytest
import torch
from conftest import float_dtypes
from torch import nn

from course_lib.rnn import (
    VanillaRNN,
    cell_jacobian_norms,
    gradient_norms_through_time,
    hidden_jacobians,
    input_gradient_norms,
    lstm_gates,
)


def pair(input_size=3, hidden_size=5, *, seed=0, device="cpu", dtype=torch.float32, **kwargs):
    torch.manual_seed(seed)
    ref = nn.RNN(input_size, hidden_size, batch_first=True, **kwargs).to(device=device, dtype=dtype)
    return VanillaRNN.from_torch(ref), ref


def values_and_gradients(ours, ref, device, dtype):
    """The outputs, last states and gradients (input, h0, every weight) of `ours` and of the nn.RNN `ref` on one
    batch: two lists of tensors, in the same order."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 7, 3, generator=g, dtype=dtype).to(device)
    h0 = torch.randn(1, 4, 5, generator=g, dtype=dtype).to(device)
    x1, h1 = x.clone().requires_grad_(), h0.clone().requires_grad_()
    x2, h2 = x.clone().requires_grad_(), h0.clone().requires_grad_()
    out1, hn1 = ours(x1, h1)
    out2, hn2 = ref(x2, h2)
    assert out1.shape == (4, 7, 5) and hn1.shape == (1, 4, 5)
    upstream = torch.randn(out1.shape, generator=g, dtype=dtype).to(device)
    names = [n for n, _ in ours.named_parameters()]
    grads1 = torch.autograd.grad((out1 * upstream).sum() + hn1.sum(), [x1, h1, *ours.parameters()])
    grads2 = torch.autograd.grad(
        (out2 * upstream).sum() + hn2.sum(), [x2, h2, *(getattr(ref, f"{n}_l0") for n in names)]
    )
    return [out1, hn1, *grads1], [out2, hn2, *grads2]


@pytest.mark.parametrize("kwargs", [{}, {"nonlinearity": "relu"}, {"bias": False}])
def test_equals_nn_rnn_values_and_gradients(device, kwargs):
    """The same arithmetic on both sides: nn.RNN with cuDNN off runs PyTorch's own kernels (matrix products and
    torch.tanh / relu, as ours), so the float32 and float64 default tolerances hold on every device."""
    for dtype in float_dtypes(device):
        ours, ref = pair(device=device, dtype=dtype, **kwargs)
        with torch.backends.cudnn.flags(enabled=False):
            got, expected = values_and_gradients(ours, ref, device, dtype)
        for a, b in zip(got, expected):
            torch.testing.assert_close(a, b)


# nn.RNN as users call it: on an NVIDIA GPU its forward and backward are cuDNN's fused RNN kernels (conftest turns
# TF32 off, so cuDNN's matrix products run in full float32: RNN.cpp passes allowTF32CuDNN(RNN) = False and
# cudnn/Descriptors.h then sets CUDNN_FMA_MATH). cuDNN's kernels are closed source, sum in their own order and publish
# no error bound; on an H100 (torch 2.11, CUDA 13.0) the tanh RNN differed from our float32 arithmetic by up to
# 3.8e-5, above assert_close's float32 atol of 1e-5 (the ReLU RNN stayed within it). PyTorch's own test suite
# compares cuDNN's RNNs with its native kernels at atol=5e-5, rtol=0 (test/test_nn.py, _test_RNN_cpu_vs_cudnn):
# that is the tolerance here where cuDNN runs, and the default where it does not (the CPU: the same kernels as the
# test above).
CUDNN_RNN_FLOAT32_TOL = dict(atol=5e-5, rtol=1.3e-6)


@pytest.mark.parametrize("kwargs", [{}, {"nonlinearity": "relu"}, {"bias": False}])
def test_equals_nn_rnn_as_called_in_float32(device, kwargs):
    ours, ref = pair(device=device, dtype=torch.float32, **kwargs)
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        got, expected = values_and_gradients(ours, ref, device, torch.float32)
        runs_cudnn = torch.backends.cudnn.is_acceptable(expected[0])
    tol = CUDNN_RNN_FLOAT32_TOL if runs_cudnn else {}
    for a, b in zip(got, expected):
        torch.testing.assert_close(a, b, **tol)


def test_default_state_is_zero_and_h0_layouts_agree():
    ours, ref = pair()
    x = torch.randn(2, 6, 3)
    torch.testing.assert_close(ours(x)[0], ref(x)[0])
    h0 = torch.randn(2, 5)
    torch.testing.assert_close(ours(x, h0)[0], ours(x, h0[None])[0])


def test_copies_a_sequence_first_rnn_too():
    torch.manual_seed(0)
    ref = nn.RNN(3, 4)  # batch_first=False: inputs (L, B, I)
    ours = VanillaRNN.from_torch(ref)
    x = torch.randn(2, 6, 3)
    torch.testing.assert_close(ours(x)[0], ref(x.transpose(0, 1))[0].transpose(0, 1))


def test_copy_is_independent_of_the_original():
    ours, ref = pair()
    with torch.no_grad():
        ref.weight_hh_l0.zero_()
    assert ours.weight_hh.abs().sum() > 0


def test_initialisation_range_matches_nn_rnn():
    torch.manual_seed(0)
    rnn = VanillaRNN(10, 64)
    bound = 1 / math.sqrt(64)
    for p in rnn.parameters():
        assert p.abs().max() <= bound
        assert p.abs().max() > 0.9 * bound  # really spread over the range
    assert {n: tuple(p.shape) for n, p in rnn.named_parameters()} == {
        "weight_ih": (64, 10),
        "weight_hh": (64, 64),
        "bias_ih": (64,),
        "bias_hh": (64,),
    }


@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda: VanillaRNN.from_torch(nn.LSTM(3, 4)), TypeError, "rnn must be a torch.nn.RNN, got LSTM"),
        (lambda: VanillaRNN.from_torch(nn.RNN(3, 4, num_layers=2)), ValueError, "num_layers=2"),
        (lambda: VanillaRNN.from_torch(nn.RNN(3, 4, bidirectional=True)), ValueError, "bidirectional=True"),
        (lambda: VanillaRNN(3, 0), ValueError, "hidden_size must be >= 1"),
        (lambda: VanillaRNN(3, 4, nonlinearity="sigmoid"), ValueError, "'tanh' or 'relu'"),
        (lambda: VanillaRNN(3, 4)(torch.zeros(2, 5, 2)), ValueError, r"\(B, L, I=3\), got \(2, 5, 2\)"),
        (lambda: VanillaRNN(3, 4)(torch.zeros(2, 5, 3), torch.zeros(3, 4)), ValueError, r"h0 must have shape"),
        (lambda: VanillaRNN(3, 4)(torch.zeros(2, 0, 3)), ValueError, "at least one time step"),
    ],
)
def test_errors_are_clear(call, exc, words):
    with pytest.raises(exc, match=words):
        call()


# ---------------------------------------------------------------- gradients through time


def explicit_jacobians(rnn, x):
    """dh_L/dh_t = prod_{s=t+1}^{L} diag(1 - h_s^2) W_hh, multiplied out one factor at a time (tanh RNN)."""
    out, _ = rnn(x)  # (B, L, H)
    batch, length, hidden = out.shape
    jac = torch.empty(batch, length, hidden, hidden, dtype=x.dtype)
    for b in range(batch):
        current = torch.eye(hidden, dtype=x.dtype)
        jac[b, 0] = current  # distance 0
        for k in range(1, length):
            s = length - k  # factor of step s (1-based) = index s in 0-based states
            current = current @ (torch.diag(1 - out[b, s] ** 2) @ rnn.weight_hh)
            jac[b, k] = current
    return jac


def test_hidden_jacobians_equal_the_explicit_product():
    torch.manual_seed(0)
    rnn = VanillaRNN(3, 6).double()
    x = torch.randn(2, 9, 3, dtype=torch.float64)
    with torch.no_grad():
        expected = explicit_jacobians(rnn, x)
    jac = hidden_jacobians(rnn, x)
    assert jac.shape == (2, 9, 6, 6)
    torch.testing.assert_close(jac, expected)


def test_gradient_norms_match_finite_differences():
    """Perturb h_{L-k} along each basis direction, run the remaining steps, and difference the last state."""
    torch.manual_seed(1)
    rnn = VanillaRNN(2, 4).double()
    x = torch.randn(1, 6, 2, dtype=torch.float64)
    norms = gradient_norms_through_time(rnn, x, ord="fro")
    with torch.no_grad():
        states = rnn.hidden_states(x)
        eps = 1e-6
        for k in range(6):
            t = 5 - k  # index of h_{L-k}
            columns = []
            for j in range(4):
                ends = []
                for sign in (1, -1):
                    h = states[t] + sign * eps * torch.eye(4, dtype=torch.float64)[j]
                    for s in range(t + 1, 6):
                        h = rnn.step(x[:, s], h)
                    ends.append(h)
                columns.append((ends[0] - ends[1]) / (2 * eps))
            fd = torch.stack(columns, dim=-1)  # (1, H, H)
            torch.testing.assert_close(norms[0, k], torch.linalg.matrix_norm(fd, ord="fro")[0], atol=1e-7, rtol=1e-6)


def test_spectral_norms_and_nn_rnn_input(device):
    torch.manual_seed(2)
    ref = nn.RNN(3, 5, batch_first=True).to(device)
    x = torch.randn(3, 8, 3, device=device)
    norms = gradient_norms_through_time(ref, x)
    assert norms.shape == (3, 8) and norms.device.type == device.type
    torch.testing.assert_close(norms[:, 0], torch.ones(3, device=device))  # the identity
    jac = hidden_jacobians(VanillaRNN.from_torch(ref), x)
    torch.testing.assert_close(norms, torch.linalg.svdvals(jac)[..., 0])


def test_gradient_shrinks_by_the_gain_per_step_in_the_linear_regime():
    """ReLU on positive states acts as the identity, so with W_hh = g I: ||dh_L/dh_{L-k}|| = g^k exactly."""
    rnn = VanillaRNN(1, 4, nonlinearity="relu", bias=False).double()
    for gain in (0.9, 1.1):
        with torch.no_grad():
            rnn.weight_hh.copy_(gain * torch.eye(4, dtype=torch.float64))
            rnn.weight_ih.fill_(1.0)
        x = torch.ones(1, 12, 1, dtype=torch.float64)  # keeps every state positive
        norms = gradient_norms_through_time(rnn, x)[0]
        torch.testing.assert_close(norms, gain ** torch.arange(12, dtype=torch.float64))


def test_input_gradient_norms_equal_autograd_jacobian(device):
    torch.manual_seed(4)
    for model in (nn.LSTM(3, 4, batch_first=True), nn.GRU(3, 4, batch_first=True), VanillaRNN(3, 4)):
        model = model.to(device)
        x = torch.randn(2, 5, 3, device=device)
        norms = input_gradient_norms(model, x)

        def last_state(inp, model=model):
            out = model(inp)
            return (out[0] if isinstance(out, tuple) else out)[:, -1]  # (B, H)

        with torch.backends.cudnn.flags(enabled=False):
            full = torch.autograd.functional.jacobian(last_state, x)  # (B, H, B, L, I)
        for b in range(2):
            for k in range(5):
                block = full[b, :, b, 4 - k]  # (H, I)
                torch.testing.assert_close(norms[b, k], torch.linalg.matrix_norm(block, ord=2))


# ---------------------------------------------------------------- inside an nn.LSTM


def test_lstm_gates_reproduce_nn_lstm_and_obey_the_cell_update(device):
    for dtype in float_dtypes(device):
        torch.manual_seed(5)
        lstm = nn.LSTM(3, 4, batch_first=True).to(device=device, dtype=dtype)
        x = torch.randn(2, 7, 3, device=device, dtype=dtype)
        gates = lstm_gates(lstm, x)
        out, (h_n, c_n) = lstm(x)
        assert set(gates) == {"i", "f", "g", "o", "c", "h"}
        assert all(t.shape == (2, 7, 4) and t.dtype == dtype and t.device.type == device.type for t in gates.values())
        torch.testing.assert_close(gates["h"], out)
        torch.testing.assert_close(gates["c"][:, -1], c_n[0])
        c_prev = torch.cat([torch.zeros_like(gates["c"][:, :1]), gates["c"][:, :-1]], dim=1)  # c_0 = 0
        torch.testing.assert_close(gates["c"], gates["f"] * c_prev + gates["i"] * gates["g"])
        torch.testing.assert_close(gates["h"], gates["o"] * torch.tanh(gates["c"]))
        for name in "ifo":
            assert bool(((gates[name] > 0) & (gates[name] < 1)).all())


def test_lstm_gates_see_the_forget_bias():
    torch.manual_seed(6)
    lstm = nn.LSTM(3, 4, batch_first=True)
    x = torch.randn(5, 6, 3)
    before = lstm_gates(lstm, x)
    with torch.no_grad():
        lstm.bias_ih_l0[4:8] += 3.0  # PyTorch's gate order i, f, g, o: rows H..2H are the forget gate
    after = lstm_gates(lstm, x)
    assert float(after["f"].mean()) > 0.9 > float(before["f"].mean())
    for name in "igo":  # at step 1 (h_0 = 0) only the forget gate sees the changed bias
        torch.testing.assert_close(after[name][:, 0], before[name][:, 0])


def test_cell_jacobian_norms_equal_autograd_through_nn_lstm(device):
    """Restart nn.LSTM at step L - k from (o_{L-k} * tanh(c), c) and differentiate c_L with respect to c."""
    torch.manual_seed(7)
    lstm = nn.LSTM(3, 4, batch_first=True).double().to(device)
    with torch.no_grad():
        lstm.bias_ih_l0[4:8] += 2.0
    x = torch.randn(2, 6, 3, dtype=torch.float64, device=device)
    norms = cell_jacobian_norms(lstm, x)
    assert norms.shape == (2, 6)
    torch.testing.assert_close(norms[:, 0], torch.ones(2, dtype=torch.float64, device=device))
    gates = lstm_gates(lstm, x)
    for b in range(2):
        for k in range(1, 6):
            t = 5 - k  # 0-based index of h_{L-k}, c_{L-k}

            def c_last(c, b=b, t=t):
                h = gates["o"][b, t] * torch.tanh(c)  # h_{L-k} moves with c_{L-k}; the gate o does not
                state = (h[None, None], c[None, None])  # (1, 1, H) each
                with torch.backends.cudnn.flags(enabled=False):
                    return lstm(x[b : b + 1, t + 1 :], state)[1][1][0, 0]  # c_L, (H,)

            jac = torch.autograd.functional.jacobian(c_last, gates["c"][b, t])  # (H, H)
            torch.testing.assert_close(norms[b, k], torch.linalg.matrix_norm(jac, ord=2))
    direct = gates["f"].flip(1).cumprod(1)  # (B, L, H): prod of the last k + 1 forget gates
    assert bool((norms[:, 1:] != direct[:, :-1].amax(-1)).any())  # the indirect paths count: not just prod f


@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda: lstm_gates(nn.GRU(3, 4, batch_first=True), torch.zeros(1, 2, 3)), TypeError, "got GRU"),
        (lambda: lstm_gates(nn.LSTM(3, 4), torch.zeros(1, 2, 3)), ValueError, "batch_first=False"),
        (lambda: lstm_gates(nn.LSTM(3, 4, 2, batch_first=True), torch.zeros(1, 2, 3)), ValueError, "num_layers=2"),
        (lambda: cell_jacobian_norms(nn.LSTM(3, 4, batch_first=True), torch.zeros(1, 2, 5)), ValueError, "I=3"),
    ],
)
def test_lstm_helpers_reject_bad_input(call, exc, words):
    with pytest.raises(exc, match=words):
        call()
