"""Library-call answers to notebook 08's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 3": """def linear_attention_rnn(q, k, v):
    return cl.linear_attention(q, k, v, causal=True)""",
    "Exercise 4": """def layers_needed(distance, window):
    mask = cl.window_mask(distance + 1, window, causal=True)
    return next(l for l in range(1, distance + 1) if cl.mask_receptive_field(mask, l)[distance, 0])""",
}

# Exercises that write a function no library call replaces, and why.
NO_SHORTCUT = {
    "Exercise 2": "no library function merges two (m, l, a) summaries: cl.chunked_attention does it inside its loop, "
    "and a softmax or logsumexp needs the scores, which merge never sees",
}

# The same library work reached by other doors (operators, functions imported under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 3": """def linear_attention_rnn(q, k, v):
    from course_lib.linear import linear_attention as attend
    return attend(q, k, v, causal=True)""",
    "Exercise 4": """def layers_needed(distance, window):
    from course_lib.masks import mask_receptive_field as field
    mask = cl.window_mask(distance + 1, window, causal=True)
    return next(l for l in range(1, distance + 1) if field(mask, l)[distance, 0])""",
}
