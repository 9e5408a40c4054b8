"""Library-call answers to notebook 05's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 2": """def to_additive(mask, dtype=torch.float32):
    return F._canonical_mask(~mask, "mask", None, "", dtype)""",
    "Exercise 3": """def causal_padding_mask(lengths, n):
    return cl.causal_mask(n) & cl.padding_mask(lengths, n)""",
    "Exercise 4": """def masked_mean(x, lengths):
    real = cl.padding_mask(lengths, x.shape[1])[:, 0, :, None].expand_as(x)
    return torch.masked.mean(x, 1, mask=real)""",
    "Exercise 5": """def fixed_attention(q, k, v, mask=None):
    return cl.scaled_dot_product_attention(q, k, v, mask, return_weights=True)""",
}

# Exercises that write a function no library call replaces, and why.
NO_SHORTCUT = {}

# The same library work reached by other doors (operators, functions imported under other names, a function of the
# notebook that does it): the nbgrader test's shortcut student hands these in where they exist; each must score zero
# too.
ALIASES = {
    "Exercise 2": """def to_additive(mask, dtype=torch.float32):
    from torch.nn.functional import _canonical_mask as additive
    return additive(~mask, "mask", None, "", dtype)""",
    "Exercise 3": """def causal_padding_mask(lengths, n):
    from course_lib.masks import causal_mask as causal, padding_mask as padding
    return causal(n) & padding(lengths, n)""",
    "Exercise 4": """def masked_mean(x, lengths):
    real = cl.padding_mask(lengths, x.shape[1])[:, 0, :, None].expand_as(x)
    from torch.masked import mean as masked_average
    return masked_average(x, 1, mask=real)""",
    # section 5's correct attention, a locked cell of the notebook that the exercise asks to write (a lecturer's
    # class handed it in; nbgrader gave full marks). notebooks 00 and 03 try the course's attention imported under
    # another name, as this entry did before
    "Exercise 5": """def fixed_attention(q, k, v, mask=None):
    return attention_correct(q, k, v, mask)""",
}
