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

# The same library work reached by other doors (operators, functions imported under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 2": """def layer_norm(x, weight, bias, eps=1e-5):
    return torch.ops.aten.native_layer_norm(x, [x.shape[-1]], weight, bias, eps)[0]""",
    "Exercise 3": """def post_ln_block(x, mask, block):
    return nn.Module.__call__(block, x, mask)""",
    "Exercise 4": """def masked_mean(h, valid):
    return torch.ops.aten.nanmean(h.masked_fill(~valid[..., None], float("nan")), [1])""",
}
