"""Library-call answers to notebook 03's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 2": """def attend_one(q, K, V):
    return F.scaled_dot_product_attention(q[None, :], K, V)[0]""",
    "Exercise 3": """def self_attention(X, W_q, W_k, W_v):
    return cl.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)""",
    "Exercise 4": """def qkv_parameter_count(d_model, d_k, d_v, bias=False):
    return sum(p.numel() for p in cl.SelfAttention(d_model, d_k, d_v, bias=bias).parameters())""",
}

# Exercises that write a function no library call replaces, and why (every one of this notebook has a shortcut above).
NO_SHORTCUT = {}

# The same library work reached by other doors (operators, functions imported under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 2": """def attend_one(q, K, V):
    return torch.ops.aten.scaled_dot_product_attention(q[None, :], K, V)[0]""",
    "Exercise 3": """def self_attention(X, W_q, W_k, W_v):
    from course_lib.attention import scaled_dot_product_attention as attend
    return attend(X @ W_q, X @ W_k, X @ W_v)""",
    # a layer the check does not name, whose parameters are the same numbers (a fourth lecturer's, issue 44): the
    # check refuses building any torch.nn.Module
    "Exercise 4": """def qkv_parameter_count(d_model, d_k, d_v, bias=False):
    return sum(p.numel() for w in (d_k, d_k, d_v) for p in torch.nn.Conv1d(d_model, w, 1, bias=bias).parameters())""",
}
