"""Library-call answers to notebook 13's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 2": """def merge(ids, pair, new_id):
    return cl.merge_pair(ids, pair, new_id)""",
    "Exercise 3": """def bpe_encode(text, merges):
    return cl.BytePairEncoder(merges, pattern=None).encode(text)""",
}

# Exercises that write a function no library call replaces, and why.
NO_SHORTCUT = {}

# The same library work reached by other doors (functions imported from their own module under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 2": """def merge(ids, pair, new_id):
    from course_lib.bpe import _merge as join_pair
    return join_pair(list(ids), tuple(pair), new_id)""",
    "Exercise 3": """def bpe_encode(text, merges):
    from course_lib.bpe import BytePairEncoder as Encoder
    return Encoder(merges, pattern=None).encode(text)""",
}
