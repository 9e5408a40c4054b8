r"""A vanilla (Elman) recurrent network written out step by step, and tools to measure how gradients travel
back through time.

.. math::  h_t = \tanh(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh}), \qquad t = 1, \dots, L

The LSTM helpers (:func:`lstm_gates`, :func:`cell_jacobian_norms`) unroll a ``torch.nn.LSTM`` step by step with its
own weights, to look inside it: its gates, and how the last cell state depends on earlier ones.

Shape legend: ``B`` batch, ``L`` sequence length, ``I`` input width, ``H`` hidden width.
Inputs are batch-first, ``(B, L, I)``, like ``nn.RNN(..., batch_first=True)``. The hidden state after reading
``x_t`` is ``h_t``; in a tensor of all states, ``h_t`` sits at index ``t - 1``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .validate import flag, instance, integer, shape_of, tensor

__all__ = [
    "VanillaRNN",
    "cell_jacobian_norms",
    "gradient_norms_through_time",
    "hidden_jacobians",
    "input_gradient_norms",
    "lstm_gates",
]

_ACTIVATIONS = {"tanh": torch.tanh, "relu": torch.relu}


def _matrix_norms(jac: Tensor, ord: int | str) -> Tensor:
    """``torch.linalg.matrix_norm`` over the last two dims; the SVD behind ``ord=2`` runs on the CPU for MPS tensors."""
    if jac.device.type == "mps":
        return torch.linalg.matrix_norm(jac.cpu(), ord=ord).to(jac.device)
    return torch.linalg.matrix_norm(jac, ord=ord)


class VanillaRNN(nn.Module):
    """One-layer recurrent network, ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``, computed with a
    Python loop over time. It equals ``torch.nn.RNN(input_size, hidden_size, batch_first=True)`` with the same
    weights (tested, values and gradients); :meth:`from_torch` copies them.

    Parameters carry PyTorch's names without the ``_l0`` suffix: ``weight_ih (H, I)``, ``weight_hh (H, H)``,
    ``bias_ih (H,)``, ``bias_hh (H,)``, initialised like ``nn.RNN``: uniform in ``[-1/sqrt(H), 1/sqrt(H)]``.

    Args:
        input_size: width ``I`` of each input vector.
        hidden_size: width ``H`` of the hidden state.
        bias: learn the two bias vectors (default True).
        nonlinearity: ``"tanh"`` (default) or ``"relu"``.
    """

    def __init__(self, input_size: int, hidden_size: int, *, bias: bool = True, nonlinearity: str = "tanh"):
        super().__init__()
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            integer(name, value, minimum=1)
        flag("bias", bias)
        if nonlinearity not in _ACTIVATIONS:
            raise ValueError(f"nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.input_size, self.hidden_size, self.nonlinearity = input_size, hidden_size, nonlinearity
        self.weight_ih = nn.Parameter(torch.empty(hidden_size, input_size))
        self.weight_hh = nn.Parameter(torch.empty(hidden_size, hidden_size))
        if bias:
            self.bias_ih = nn.Parameter(torch.empty(hidden_size))
            self.bias_hh = nn.Parameter(torch.empty(hidden_size))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    @classmethod
    def from_torch(cls, rnn: nn.RNN) -> VanillaRNN:
        """A :class:`VanillaRNN` holding copies of the weights of a one-layer, one-directional ``nn.RNN``
        (on the same device, with the same dtype). Our module is always batch-first, whatever ``rnn.batch_first``."""
        instance("rnn", rnn, nn.RNN, "a torch.nn.RNN")
        if rnn.num_layers != 1 or rnn.bidirectional:
            raise ValueError(
                f"only a one-layer, one-directional nn.RNN can be copied, got num_layers={rnn.num_layers}, "
                f"bidirectional={rnn.bidirectional}"
            )
        ours = cls(rnn.input_size, rnn.hidden_size, bias=rnn.bias, nonlinearity=rnn.nonlinearity)
        ours.to(device=rnn.weight_ih_l0.device, dtype=rnn.weight_ih_l0.dtype)
        with torch.no_grad():
            for name, p in ours.named_parameters():
                p.copy_(getattr(rnn, f"{name}_l0"))
        return ours

    def step(self, x_t: Tensor, h: Tensor) -> Tensor:
        """One time step: input ``(B, I)`` and previous state ``(B, H)`` → new state ``(B, H)``."""
        pre = x_t @ self.weight_ih.T + h @ self.weight_hh.T  # (B, H)
        if self.bias_ih is not None:
            pre = pre + self.bias_ih + self.bias_hh
        return _ACTIVATIONS[self.nonlinearity](pre)

    def _initial_state(self, x: Tensor, h0: Tensor | None) -> Tensor:
        _check_sequence(x, self.input_size, self.weight_ih.dtype)
        if h0 is not None:
            tensor("h0", h0)
        batch = x.shape[0]
        if h0 is None:
            return x.new_zeros(batch, self.hidden_size)
        if h0.dim() == 3 and h0.shape[0] == 1:  # nn.RNN's layout (num_layers=1, B, H)
            h0 = h0[0]
        if tuple(h0.shape) != (batch, self.hidden_size):
            raise ValueError(
                f"h0 must have shape (1, B, H) or (B, H) with B={batch}, H={self.hidden_size}, got {tuple(h0.shape)}"
            )
        return h0

    def hidden_states(self, x: Tensor, h0: Tensor | None = None) -> list[Tensor]:
        """The list ``[h_1, ..., h_L]`` of states ``(B, H)``, each computed from the previous one, so that autograd
        can differentiate any later state with respect to any earlier one."""
        h = self._initial_state(x, h0)
        states = []
        for t in range(x.shape[1]):  # the sequential chain: step t needs the result of step t - 1
            h = self.step(x[:, t], h)
            states.append(h)
        return states

    def forward(self, x: Tensor, h0: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """x ``(B, L, I)``, optional h0 ``(1, B, H)`` (or ``(B, H)``; zeros by default) → ``(output, h_n)`` with
        output ``(B, L, H)`` (every state) and h_n ``(1, B, H)`` (the last), exactly like ``nn.RNN``."""
        states = self.hidden_states(x, h0)
        if not states:
            raise ValueError("x must hold at least one time step, got L = 0")
        return torch.stack(states, dim=1), states[-1].unsqueeze(0)  # (B, L, H), (1, B, H)

    def extra_repr(self) -> str:
        bias = "" if self.bias_ih is not None else ", bias=False"
        return f"{self.input_size}, {self.hidden_size}, nonlinearity={self.nonlinearity!r}{bias}"


def _check_sequence(x: object, input_size: int | None = None, dtype: torch.dtype | None = None) -> None:
    """``x`` must be a floating tensor ``(B, L, I)`` (with ``I = input_size`` and the layer's ``dtype`` when given)."""
    tensor("x", x, floating=True, dtype=dtype)
    if x.dim() != 3 or (input_size is not None and x.shape[-1] != input_size):
        width = "I" if input_size is None else f"I={input_size}"
        raise ValueError(f"x must have shape (B, L, {width}), got {shape_of(x)}")


def _as_vanilla(rnn: VanillaRNN | nn.RNN) -> VanillaRNN:
    if isinstance(rnn, VanillaRNN):
        return rnn
    return VanillaRNN.from_torch(instance("rnn", rnn, nn.RNN, "a VanillaRNN or an nn.RNN"))


def hidden_jacobians(rnn: VanillaRNN | nn.RNN, x: Tensor, h0: Tensor | None = None) -> Tensor:
    r"""Jacobians of the last state with respect to every state, by autograd: ``(B, L, H, H)``.

    ``J[b, k]`` is :math:`\partial h_L / \partial h_{L-k}` for example ``b``, i.e. ordered by **distance**
    ``k = 0 .. L-1`` (``k = 0`` is the identity). Row ``i`` holds the gradient of the ``i``-th unit of ``h_L``.
    An ``nn.RNN`` is first copied into a :class:`VanillaRNN`.

    How: the batch is replicated ``H`` times and copy ``i`` back-propagates only unit ``i`` of its last state, so one
    backward pass yields all ``H`` rows (copies do not interact).
    """
    rnn = _as_vanilla(rnn)
    _check_sequence(x, rnn.input_size)
    hidden = rnn.hidden_size
    batch, length = x.shape[0], x.shape[1]
    h_init = rnn._initial_state(x, h0)
    with torch.enable_grad():
        x_rep = x.detach().repeat(hidden, 1, 1)  # (H*B, L, I): copy i = rows [i*B, (i+1)*B)
        h_rep = h_init.detach().repeat(hidden, 1).requires_grad_(True)  # (H*B, H), keeps the chain on the graph
        states = rnn.hidden_states(x_rep, h_rep)  # L tensors (H*B, H)
        select = torch.eye(hidden, dtype=x.dtype, device=x.device).repeat_interleave(batch, dim=0)  # (H*B, H)
        grads = torch.autograd.grad((states[-1] * select).sum(), states)  # L tensors (H*B, H)
    jac = torch.stack(grads, dim=1).reshape(hidden, batch, length, hidden)  # (H_out, B, L, H_in)
    return jac.permute(1, 2, 0, 3).flip(1)  # (B, L, H_out, H_in), distance k = 0 first


def gradient_norms_through_time(
    rnn: VanillaRNN | nn.RNN, x: Tensor, h0: Tensor | None = None, *, ord: int | str = 2
) -> Tensor:
    r"""Norms :math:`\lVert \partial h_L / \partial h_{L-k} \rVert` for ``k = 0 .. L-1``: ``(B, L)``.

    Column ``k`` is the distance (in steps) between the state differentiated and the last one. ``ord=2`` is the
    spectral norm (largest singular value: the most a unit change of :math:`h_{L-k}` can move :math:`h_L`);
    ``ord="fro"`` the Frobenius norm. Computed from :func:`hidden_jacobians`.
    """
    return _matrix_norms(hidden_jacobians(rnn, x, h0), ord)  # (B, L)


def input_gradient_norms(model: nn.Module, x: Tensor, *, ord: int | str = 2) -> Tensor:
    r"""Norms :math:`\lVert \partial h_L / \partial x_{L-k} \rVert` for ``k = 0 .. L-1``: ``(B, L)``.

    Works for any batch-first recurrent module whose output (or first output) is the states ``(B, L, H)``:
    ``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` (with ``batch_first=True``) and :class:`VanillaRNN`. It compares models whose
    states differ in kind (an LSTM also carries a cell state) on the same footing: how much the last output
    depends on the input ``k`` steps back. Same replication trick as :func:`hidden_jacobians`.
    """
    _check_sequence(x)
    batch, length = x.shape[0], x.shape[1]
    # cuDNN's recurrent kernels refuse to back-propagate in eval mode; the plain kernels compute the same thing.
    with torch.enable_grad(), torch.backends.cudnn.flags(enabled=False):
        probe = model(x[:1].detach())
        hidden = (probe[0] if isinstance(probe, tuple) else probe).shape[-1]
        x_rep = x.detach().repeat(hidden, 1, 1).requires_grad_(True)  # (H*B, L, I)
        out = model(x_rep)
        out = out[0] if isinstance(out, tuple) else out  # (H*B, L, H)
        select = torch.eye(hidden, dtype=out.dtype, device=out.device).repeat_interleave(batch, dim=0)
        (grad,) = torch.autograd.grad((out[:, -1] * select).sum(), x_rep)  # (H*B, L, I)
    jac = grad.reshape(hidden, batch, length, x.shape[-1]).permute(1, 2, 0, 3).flip(1)  # (B, L, H, I)
    return _matrix_norms(jac, ord)  # (B, L)


# ---------------------------------------------------------------- looking inside an nn.LSTM


def _check_lstm(lstm: nn.LSTM, x: Tensor) -> None:
    instance("lstm", lstm, nn.LSTM, "a torch.nn.LSTM")
    if lstm.num_layers != 1 or lstm.bidirectional or lstm.proj_size or not lstm.batch_first:
        raise ValueError(
            "lstm must be a one-layer, one-directional nn.LSTM with batch_first=True and no projection, got "
            f"num_layers={lstm.num_layers}, bidirectional={lstm.bidirectional}, proj_size={lstm.proj_size}, "
            f"batch_first={lstm.batch_first}"
        )
    _check_sequence(x, lstm.input_size, lstm.weight_ih_l0.dtype)


def _lstm_unrolled(lstm: nn.LSTM, x: Tensor, c0: Tensor) -> tuple[list[dict[str, Tensor]], list[Tensor]]:
    """Step-by-step LSTM from ``h_0 = 0`` and the given ``c_0`` ``(B, H)``: per step a dict of the gates and states
    (each ``(B, H)``), and the list ``[c_1, ..., c_L]`` of the tensors autograd can differentiate against."""
    w_ih, w_hh = lstm.weight_ih_l0, lstm.weight_hh_l0  # (4H, I), (4H, H); gate order i, f, g, o
    bias = lstm.bias_ih_l0 + lstm.bias_hh_l0 if lstm.bias else None
    h, c = torch.zeros_like(c0), c0
    steps, cells = [], []
    for t in range(x.shape[1]):
        pre = x[:, t] @ w_ih.T + h @ w_hh.T  # (B, 4H)
        if bias is not None:
            pre = pre + bias
        a_i, a_f, a_g, a_o = pre.chunk(4, dim=-1)  # each (B, H)
        i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
        c = f * c + i * g  # the additive cell update
        h = o * torch.tanh(c)
        steps.append({"i": i, "f": f, "g": g, "o": o, "c": c, "h": h})
        cells.append(c)
    return steps, cells


def lstm_gates(lstm: nn.LSTM, x: Tensor) -> dict[str, Tensor]:
    r"""Run a one-layer, batch-first ``nn.LSTM`` step by step from zero states and return what happens inside it.

    Returns a dict of ``(B, L, H)`` tensors (no gradients): the gates ``"i"`` (input), ``"f"`` (forget), ``"o"``
    (output) in (0, 1), the candidate ``"g"`` in (-1, 1), and the states ``"c"`` and ``"h"``, with

    .. math:: c_t = f_t \odot c_{t-1} + i_t \odot g_t, \qquad h_t = o_t \odot \tanh(c_t).

    ``"h"`` equals the output of ``lstm(x)`` (tested); PyTorch stacks the gates' weights in the order i, f, g, o.
    """
    _check_lstm(lstm, x)
    with torch.no_grad():
        c0 = x.new_zeros(x.shape[0], lstm.hidden_size)
        steps, _ = _lstm_unrolled(lstm, x, c0)
    return {name: torch.stack([s[name] for s in steps], dim=1) for name in ("i", "f", "g", "o", "c", "h")}


def cell_jacobian_norms(lstm: nn.LSTM, x: Tensor, *, ord: int | str = 2) -> Tensor:
    r"""Norms :math:`\lVert \partial c_L / \partial c_{L-k} \rVert` of an LSTM's cell, ``k = 0 .. L-1``: ``(B, L)``.

    The full Jacobian, by autograd: how :math:`c_L` moves when :math:`c_{L-k}` moves (and with it
    :math:`h_{L-k} = o_{L-k} \odot \tanh(c_{L-k})`), along the direct path :math:`c_{t-1} \to c_t` (factor
    :math:`\operatorname{diag}(f_t)`) and along every indirect path through :math:`h` and the gates. Compare it with
    the direct path alone, :math:`\prod_s \operatorname{diag}(f_s)`, from :func:`lstm_gates`. Column ``k = 0`` is the
    identity (norm 1). Same replication trick as :func:`hidden_jacobians`; states start at zero.
    """
    _check_lstm(lstm, x)
    hidden = lstm.hidden_size
    batch, length = x.shape[0], x.shape[1]
    with torch.enable_grad():
        x_rep = x.detach().repeat(hidden, 1, 1)  # (H*B, L, I): copy i back-propagates unit i of c_L
        c0 = x.new_zeros(hidden * batch, hidden).requires_grad_(True)  # keeps every c_t on the graph
        _, cells = _lstm_unrolled(lstm, x_rep, c0)  # L tensors (H*B, H)
        select = torch.eye(hidden, dtype=x.dtype, device=x.device).repeat_interleave(batch, dim=0)  # (H*B, H)
        grads = torch.autograd.grad((cells[-1] * select).sum(), cells)  # L tensors (H*B, H)
    jac = torch.stack(grads, dim=1).reshape(hidden, batch, length, hidden)  # (H_out, B, L, H_in)
    return _matrix_norms(jac.permute(1, 2, 0, 3).flip(1), ord)  # (B, L), distance k = 0 first
