"""Library-call answers to notebook 09's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 3": """def conv_by_shifts(x, weight, bias):
    return F.conv2d(x, weight, bias, padding=weight.shape[-1] // 2)""",
    "Exercise 4": """def relative_logits(height, width, shift, alpha):
    p = max(abs(shift[0]), abs(shift[1]))
    k = 2 * p + 1
    queries, keys = positional_queries_keys(height, width, k, alpha)  # (k^2, L, 3), (L, 3)
    target = grid_positions(height, width).float() + torch.tensor(shift, dtype=torch.float32)
    return queries[(shift[0] + p) * k + shift[1] + p] @ keys.T - alpha * (target**2).sum(-1, keepdim=True)""",
    "Exercise 5": """def dilated_conv_as_attention(x, conv):
    return conv(x)""",
}

# Every exercise of notebook 09 that writes a function has a shortcut above.
NO_SHORTCUT = {}

# The same library work reached by other doors (operators, functions imported under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 3": """def conv_by_shifts(x, weight, bias):
    p = weight.shape[-1] // 2
    return torch.ops.aten.convolution(x, weight, bias, [1, 1], [p, p], [1, 1], False, [0, 0], 1)""",
    "Exercise 5": """def dilated_conv_as_attention(x, conv):
    return torch.ops.aten.convolution(x, conv.weight, conv.bias, list(conv.stride), list(conv.padding),
                                      list(conv.dilation), False, [0, 0], conv.groups)""",
}
