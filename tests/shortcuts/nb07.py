"""Library-call answers to notebook 07's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 3": """def sinusoidal_table(num_positions, d_model):
    return cl.sinusoidal_encoding(num_positions, d_model)""",
    "Exercise 4": """def shift_matrix(delta, d_model):
    return cl.sinusoidal_shift_matrix(delta, d_model)""",
    "Exercise 5": """def rope(x):
    return cl.apply_rope(x)""",
}

# Exercises that write a function no library call replaces, and why (none: every function here has a course twin).
NO_SHORTCUT = {}
