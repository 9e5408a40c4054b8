"""Library-call answers to notebook 00's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 3": """def my_softmax(scores):
    return torch.softmax(scores, dim=-1)""",
    "Exercise 5": """def my_attention(q, k, v):
    return cl.scaled_dot_product_attention(q, k, v)""",
}

# Exercises that write a function no library call replaces, and why.
NO_SHORTCUT = {
    "Exercise 2": "no library function returns the scaled scores Q K^T / sqrt(d_k); they are one matmul and a division",
}

# The same library work reached by other doors (operators, functions imported under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 3": """def my_softmax(scores):
    return torch.ops.aten._softmax(scores, -1, False)""",
    "Exercise 5": """def my_attention(q, k, v):
    from course_lib.attention import scaled_dot_product_attention as attend
    return attend(q, k, v)""",
}
