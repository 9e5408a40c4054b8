"""Library-call answers to notebook 01's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 2": """def one_hot_by_hand(indices, num_classes):
    return F.one_hot(indices, num_classes).float()""",
    "Exercise 3": """def count_frames(duration_s, sample_rate, frame_ms=25, hop_ms=10):
    n = round(duration_s * sample_rate)
    return cl.num_frames(n, round(sample_rate * frame_ms / 1000), round(sample_rate * hop_ms / 1000))""",
    "Exercise 4": """def cosine_matrix_by_hand(vectors):
    return F.cosine_similarity(vectors[:, None, :], vectors[None, :, :], dim=-1)""",
    "Exercise 5": """def window_first_layer_params(D, r, h):
    return sum(p.numel() for p in nn.Linear((2 * r + 1) * D, h).parameters())""",
}

# Every exercise of notebook 01 that writes a function has a library shortcut above.
NO_SHORTCUT = {}

# The same library work reached by other doors (operators, functions imported under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 2": """def one_hot_by_hand(indices, num_classes):
    return torch.ops.aten.one_hot(indices, num_classes).float()""",
    "Exercise 3": """def count_frames(duration_s, sample_rate, frame_ms=25, hop_ms=10):
    from course_lib.sequences import num_frames as frames
    n = round(duration_s * sample_rate)
    return frames(n, round(sample_rate * frame_ms / 1000), round(sample_rate * hop_ms / 1000))""",
    "Exercise 4": """def cosine_matrix_by_hand(vectors):
    return torch.ops.aten.cosine_similarity(vectors[:, None, :], vectors[None, :, :], -1)""",
    "Exercise 5": """def window_first_layer_params(D, r, h):
    from torch.nn.modules.linear import Linear as Dense
    return sum(p.numel() for p in Dense((2 * r + 1) * D, h).parameters())""",
}
