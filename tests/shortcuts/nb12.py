"""Library-call answers to notebook 12's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 2": """def top_k(logits, k):
    return cl.top_k_filter(logits, k)""",
    "Exercise 3": """@torch.no_grad()
def greedy_with_cache(model, prompt, n):
    return cl.generate(model, prompt, n)""",
}

# Exercises that write a function no library call replaces, and why.
NO_SHORTCUT = {}

# The same library work reached by other doors (operators, functions imported under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 2": """def top_k(logits, k):
    from course_lib.generation import top_k_filter as keep_top
    return keep_top(logits, k)""",
    "Exercise 3": """@torch.no_grad()
def greedy_with_cache(model, prompt, n):
    from course_lib.generation import generate as continue_text
    return continue_text(model, prompt, n)""",
}
