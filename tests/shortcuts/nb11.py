"""Library-call answers to notebook 11's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 2": """def layer_norm(x, weight, bias, eps=1e-5):
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps=eps)""",
    "Exercise 3": """def post_ln_block(x, mask, block):
    return block(x, mask)""",
    "Exercise 4": """def masked_mean(h, valid):
    return h.masked_fill(~valid[..., None], float("nan")).nanmean(dim=1)""",
}

# Exercises that write a function no library call replaces, and why.
NO_SHORTCUT = {}
