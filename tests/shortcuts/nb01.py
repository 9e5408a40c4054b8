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
