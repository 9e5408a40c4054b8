"""Library-call answers to notebook 04's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 2": """def softmax_backward(a, grad_a):
    return (cl.softmax_jacobian(a) @ grad_a[..., None])[..., 0]""",
    "Exercise 3": """def stable_log_softmax(s):
    return torch.log_softmax(s, dim=-1)""",
}

# Exercises that write a function no library call replaces, and why.
NO_SHORTCUT = {}

# The same library work reached by other doors (operators, functions imported under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 2": """def softmax_backward(a, grad_a):
    return torch.ops.aten._softmax_backward_data(grad_a, a, -1, a.dtype)""",
    "Exercise 3": """def stable_log_softmax(s):
    return torch.ops.aten._log_softmax(s, -1, False)""",
}
