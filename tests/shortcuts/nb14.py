"""Library-call answers to notebook 14's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    # the mask read off a cl.Translator's decoder weights, as the check's reference reads it (its check blocks
    # cl.Translator.forward, and with it decode and step_function)
    "Exercise 1": """def decoder_mask(tgt, pad):
    model = cl.Translator(2, 20, d_model=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, pad_index=pad)
    with torch.no_grad():
        _, weights = model(torch.full((len(tgt), 1), 1 - pad), tgt, return_weights=True)
    return weights["decoder"][0][:, 0] > 0""",
    # one step of cl.beam_search over the m * V extensions as one vocabulary: its second call sees the kept ones, best
    # first (agrees with the check's sorted_extensions on 200 of 200 of its inputs when nothing is blocked)
    "Exercise 2": """def beam_step(scores, log_probs, beam_width):
    totals = (scores[:, None] + log_probs).flatten()  # (m * V,): extension i * V + v
    seen = []

    def next_log_probs(tokens, source):
        seen.append(tokens[:, -1].clone())
        return torch.log_softmax(totals, dim=0).expand(len(tokens), -1)

    cl.beam_search(next_log_probs, 1, bos=0, eos=0, max_len=2, beam_width=beam_width)
    return torch.stack((seen[1] // log_probs.shape[1], seen[1] % log_probs.shape[1]), dim=1)""",
    "Exercise 3": """def char_ngram_precision(output, reference, n):
    out, ref = extract_all_char_ngrams(output, n, False)[-1], extract_all_char_ngrams(reference, n, False)[-1]
    return torch.tensor(sum((out & ref).values()) / max(sum(out.values()), 1), dtype=torch.float64)""",
}

# Exercises that write a function no library call replaces, and why.
NO_SHORTCUT = {}

# The same library work reached by other doors: the nbgrader test's shortcut student hands these in where they exist;
# each must score zero too.
ALIASES = {
    # Translator's unchecked twin (course_lib.classroom.delegates), called on a model made before the check runs
    "Exercise 1": """_model = cl.Translator(2, 20, d_model=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1)


def decoder_mask(tgt, pad):
    _model.pad_index = pad
    memory, valid = torch.zeros(len(tgt), 1, 8), torch.ones(len(tgt), 1, 1, 1, dtype=torch.bool)
    with torch.no_grad():
        return _model._decode(tgt, memory, valid)[1][0][:, 0] > 0""",
    # a door that passed the check until 2026-11-28: sacrebleu's one-n helper, not the all-n one it blocked
    "Exercise 3": """def char_ngram_precision(output, reference, n):
    from sacrebleu.metrics.helpers import extract_char_ngrams as grams
    out, ref = grams(output, n), grams(reference, n)
    return torch.tensor(sum((out & ref).values()) / max(sum(out.values()), 1), dtype=torch.float64)""",
}
