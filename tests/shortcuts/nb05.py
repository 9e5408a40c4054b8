"""Library-call answers to notebook 05's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 3": """def causal_padding_mask(lengths, n):
    return cl.causal_mask(n) & cl.padding_mask(lengths, n)""",
    "Exercise 4": """def masked_mean(x, lengths):
    real = cl.padding_mask(lengths, x.shape[1])[:, 0, :, None].expand_as(x)
    return torch.masked.mean(x, 1, mask=real)""",
    "Exercise 5": """def fixed_attention(q, k, v, mask=None):
    return cl.scaled_dot_product_attention(q, k, v, mask, return_weights=True)""",
}

# Exercises that write a function no library call replaces, and why.
NO_SHORTCUT = {
    "Exercise 2": "no public PyTorch or course function turns a boolean mask into an additive one; it is one "
    "masked_fill (or torch.where) of zeros with -inf",
}

# The same library work reached by other doors (operators, functions imported under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 3": """def causal_padding_mask(lengths, n):
    from course_lib.masks import causal_mask as causal, padding_mask as padding
    return causal(n) & padding(lengths, n)""",
    "Exercise 4": """def masked_mean(x, lengths):
    real = cl.padding_mask(lengths, x.shape[1])[:, 0, :, None].expand_as(x)
    from torch.masked import mean as masked_average
    return masked_average(x, 1, mask=real)""",
    "Exercise 5": """def fixed_attention(q, k, v, mask=None):
    from course_lib.attention import scaled_dot_product_attention as attend
    return attend(q, k, v, mask, return_weights=True)""",
}
