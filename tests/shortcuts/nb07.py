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

# The same library work reached by other doors (operators, functions imported under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 3": """def sinusoidal_table(num_positions, d_model):
    from course_lib.positional import sinusoidal_encoding as table
    return table(num_positions, d_model)""",
    "Exercise 5": """def rope(x):
    from course_lib.positional import apply_rope as rotate
    return rotate(x)""",
}
