"""Library-call answers to notebook 02's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 2": """def gru_step(x_t, h, W_ih, W_hh, b_ih, b_hh):
    return torch.gru_cell(x_t, h, W_ih, W_hh, b_ih, b_hh)""",
    "Exercise 3": """def lstm_step(x_t, h, c, W_ih, W_hh, b_ih, b_hh):
    cell = nn.LSTMCell(W_ih.shape[1], W_hh.shape[1])
    with torch.no_grad():
        for p, value in zip((cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), (W_ih, W_hh, b_ih, b_hh)):
            p.copy_(value)
    return torch.stack(cell(x_t, (h, c))).detach()""",
    # autograd through the recurrence rebuilt from the states: a_s = atanh(h_s), the inputs perturbed by dx around 0
    "Exercise 4": """def input_jacobians(states, W_ih, W_hh):
    pre = torch.atanh(states)  # (L, H): the pre-activations a_s

    def last_state(dx):  # dx: (L, I), a change of every input
        change = torch.zeros_like(states[0])  # how much h_{s-1} moved
        for s in range(states.shape[0]):
            h = torch.tanh(pre[s] + dx[s] @ W_ih.T + change @ W_hh.T)
            change = h - states[s]
        return h

    dx = torch.zeros(states.shape[0], W_ih.shape[1], dtype=states.dtype)
    return torch.autograd.functional.jacobian(last_state, dx).permute(1, 0, 2).flip(0)  # (L, H, I), by distance""",
    "Exercise 5": """def conv_layers_needed(n, k):
    x = torch.randn(1, 1, n, requires_grad=True)
    y, layers = x, 0
    while True:  # add causal convolutions until the last output depends on the first input
        layers += 1
        y = nn.Conv1d(1, 1, kernel_size=k)(F.pad(y, (k - 1, 0)))
        (grad,) = torch.autograd.grad(y[0, 0, -1], x, retain_graph=True)
        if grad[0, 0, 0] != 0:
            return layers""",
}

# Every exercise of notebook 02 that writes a function has a library shortcut above.
NO_SHORTCUT = {}

# The same library work reached by other doors (operators, functions imported under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 2": """def gru_step(x_t, h, W_ih, W_hh, b_ih, b_hh):
    return torch.ops.aten.gru_cell(x_t, h, W_ih, W_hh, b_ih, b_hh)""",
    "Exercise 3": """def lstm_step(x_t, h, c, W_ih, W_hh, b_ih, b_hh):
    return torch.stack(torch.ops.aten.lstm_cell(x_t, [h, c], W_ih, W_hh, b_ih, b_hh))""",
    "Exercise 5": """def conv_layers_needed(n, k):
    x = torch.randn(1, 1, n, requires_grad=True)
    y, layers = x, 0
    while True:  # add causal convolutions until the last output depends on the first input
        layers += 1
        y = nn.Conv1d(1, 1, kernel_size=k)(F.pad(y, (k - 1, 0)))
        x.grad = None
        torch.autograd.backward(y[0, 0, -1], retain_graph=True)  # the engine, without autograd.grad's name
        if x.grad[0, 0, 0] != 0:
            return layers""",
}
