"""Library-call answers to notebook 06's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 2": """def split_heads(x, num_heads):
    return cl.split_heads(x, num_heads)


def merge_heads(x):
    return cl.merge_heads(x)""",
    "Exercise 3": """def multi_head_attention(x_q, x_kv, W_q, W_k, W_v, W_o, num_heads):
    layer = cl.MultiHeadAttention(x_q.shape[-1], num_heads, bias=False)
    with torch.no_grad():
        for lin, W in zip((layer.w_q, layer.w_k, layer.w_v, layer.w_o), (W_q, W_k, W_v, W_o)):
            lin.weight.copy_(W.T)
        return layer(x_q, x_kv)""",
}

# Exercises that write a function no library call replaces, and why.
NO_SHORTCUT = {
    "Exercise 4": "no library function composes two nn.Linear layers into one; it is two matrix products and a sum",
}

# The same library work reached by other doors (operators, functions imported under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 2": """def split_heads(x, num_heads):
    from course_lib.multihead import split_heads as split
    return split(x, num_heads)


def merge_heads(x):
    from course_lib.multihead import merge_heads as merge
    return merge(x)""",
}
