"""Library-call answers to notebook 14's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 3": """def char_ngram_precision(output, reference, n):
    out, ref = extract_all_char_ngrams(output, n, False)[-1], extract_all_char_ngrams(reference, n, False)[-1]
    return torch.tensor(sum((out & ref).values()) / max(sum(out.values()), 1), dtype=torch.float64)""",
}

# Exercises that write a function no library call replaces, and why.
NO_SHORTCUT = {
    "Exercise 1": "no library function builds the decoder's mask; cl.Translator builds it inline in decode",
    "Exercise 2": "the course's searches run whole searches, not one step; the check blocks them anyway",
}

# The same library work reached by other doors: the nbgrader test's shortcut student hands these in where they exist;
# each must score zero too.
ALIASES = {  # a door that passed the check until 2026-11-28: sacrebleu's one-n helper, not the all-n one it blocked
    "Exercise 3": """def char_ngram_precision(output, reference, n):
    from sacrebleu.metrics.helpers import extract_char_ngrams as grams
    out, ref = grams(output, n), grams(reference, n)
    return torch.tensor(sum((out & ref).values()) / max(sum(out.values()), 1), dtype=torch.float64)""",
}
