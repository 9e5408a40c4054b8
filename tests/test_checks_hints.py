"""Hints at a cause: given only where the pattern of a difference points to it (issue 44: a wrong single number was
"a wrong scale factor (such as 1/√d_k)?"), and ``hints=False`` in the exercise checkers, which leaves the guesses out
and keeps the description of the difference. Notebook 07 uses it for exercises about positional encodings, where
"K Qᵀ instead of Q Kᵀ?" would send a student the wrong way."""

import math

import pytest
import torch

from course_lib import (
    attention_weights,
    causal_mask,
    check_close,
    check_function,
    explain_difference,
    sinusoidal_encoding,
    sinusoidal_shift_matrix,
    top_k_filter,
)

HINT_WORDS = ("scale factor", "transposed", "mask", "softmax", "True = may attend", "K Qᵀ")


def interleaved_vs_concatenated():
    """A sinusoidal table written as [sin | cos] blocks instead of interleaved sin, cos: a classic student mistake."""
    expected = sinusoidal_encoding(6, 4)
    angles = torch.arange(6.0)[:, None] * torch.tensor([1.0, 0.01])
    return torch.cat([angles.sin(), angles.cos()], dim=-1), expected


def inverted_mask():
    q, k = torch.randn(2, 4, 3, generator=torch.Generator().manual_seed(0)).unbind(0)
    return attention_weights(q, k, ~causal_mask(4) | torch.eye(4, dtype=torch.bool)), attention_weights(
        q, k, causal_mask(4)
    )


CASES = {
    "a constant multiple": (2 * torch.arange(1.0, 7.0), torch.arange(1.0, 7.0), "scale factor"),
    "a transposed shift matrix": (sinusoidal_shift_matrix(3, 6).T, sinusoidal_shift_matrix(3, 6), "transposed"),
    "an inverted mask on attention weights": (*inverted_mask(), "mask"),
}

# Wrong answers whose pattern points to no one cause: the difference is described, and no cause is guessed
NO_CAUSE = {
    "one wrong number": (torch.tensor(0.5, dtype=torch.float64), torch.tensor(0.75, dtype=torch.float64)),
    "one wrong number of a pair (a beam's parent and token)": (torch.tensor([0.0, 6.0]), torch.tensor([0.0, 3.0])),
    "a multiple of equal values": (torch.full((3,), 2.0), torch.ones(3)),
    "one zero": (torch.zeros(1), torch.ones(1)),
    "sin and cos in blocks (exact zeros that are no mask)": interleaved_vs_concatenated(),
    "one-hot rows (a choice, not attention weights)": (torch.eye(3)[[1, 0, 2]], torch.eye(3)),
}


@pytest.mark.parametrize("case", list(NO_CAUSE), ids=list(NO_CAUSE))
def test_no_cause_is_guessed_where_the_pattern_points_to_none(case):
    message = explain_difference(*NO_CAUSE[case])
    described = "elements differ" in message or message.startswith("got 0.5, expected 0.75")  # (one number: no index)
    assert described and "?" not in message and not any(w in message for w in HINT_WORDS), message


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_default_adds_a_hint_and_hints_false_leaves_it_out(case):
    actual, expected, hint_word = CASES[case]
    with_hint = explain_difference(actual, expected)
    without = explain_difference(actual, expected, hints=False)
    assert hint_word in with_hint  # the default is unchanged (backward compatible)
    assert without is not None and "elements differ" in without and "largest absolute difference" in without
    assert with_hint.startswith(without)  # the description is the same, only the guess is cut
    assert not any(word in without for word in HINT_WORDS), without


def test_hints_false_changes_nothing_when_the_answer_is_right(capsys):
    assert explain_difference(torch.ones(3), torch.ones(3), hints=False) is None
    check_close(torch.ones(3), torch.ones(3), "ones", hints=False)
    assert "✓ ones is correct" in capsys.readouterr().out


def test_hints_false_keeps_shape_and_dtype_messages():
    assert "shape is (3, 2), expected (2, 3)" in explain_difference(torch.ones(3, 2), torch.ones(2, 3), hints=False)
    assert "dtype is torch.float64" in explain_difference(
        torch.ones(2, dtype=torch.float64), torch.ones(2), hints=False
    )


def test_check_close_and_check_function_pass_hints_through():
    actual, expected, _ = CASES["a transposed shift matrix"]
    with pytest.raises(AssertionError, match="transposed"):
        check_close(actual, expected, "M")
    with pytest.raises(AssertionError) as info:
        check_close(actual, expected, "M", hints=False)
    assert "elements differ" in str(info.value) and "transposed" not in str(info.value)

    def make_inputs(g):
        return (int(torch.randint(1, 9, (1,), generator=g)), 6)

    def wrong(delta, d_model):  # the rotation the other way round: M_delta transposed (M_-delta)
        return sinusoidal_shift_matrix_by_hand(-delta, d_model)

    with pytest.raises(AssertionError, match="transposed"):
        check_function(wrong, sinusoidal_shift_matrix, make_inputs, name="shift")
    with pytest.raises(AssertionError) as info:
        check_function(wrong, sinusoidal_shift_matrix, make_inputs, name="shift", hints=False)
    message = str(info.value)
    assert "shift is wrong on trial 1" in message and not any(word in message for word in HINT_WORDS), message


def sinusoidal_shift_matrix_by_hand(delta, d_model):
    """The rotation that moves a sinusoidal encoding by ``delta`` positions (blocks of (sin, cos) pairs)."""
    angles = delta * sinusoidal_frequencies(d_model)
    m = torch.zeros(d_model, d_model, dtype=torch.float64)
    for i, a in enumerate(angles.tolist()):
        c, s = math.cos(a), math.sin(a)
        m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = torch.tensor([[c, -s], [s, c]])
    return m


def sinusoidal_frequencies(d_model):
    return 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


def _top_k_keeping_exactly_k(logits, k):  # a lecturer's partial answer to 12's exercise 2: ties broken
    index = torch.topk(logits, min(k, logits.shape[-1]), dim=-1).indices
    return torch.full_like(logits, float("-inf")).scatter(-1, index, logits.gather(-1, index))


def test_infinities_are_counted_in_words_never_a_nan_difference():
    """Issue 44: a top_k that broke ties was told "largest absolute difference nan" (-inf minus -inf). The size of
    a difference is the largest between finite values, then the infinite or NaN ones counted, by kind."""
    logits = torch.tensor([[2.0, 1.0, 1.0, 0.0], [3.0, 3.0, 3.0, -1.0]])
    message = explain_difference(_top_k_keeping_exactly_k(logits, 2), top_k_filter(logits, 2))
    assert "nan" not in message.lower() and "inf in yours" in message, message
    assert "(2 are -inf in yours where the reference has a finite value)" in message, message
    assert "ties broken, where the reference keeps every tied value?" in message, message
    mixed = explain_difference(torch.tensor([1.0, math.inf, 0.5, -math.inf]), torch.tensor([1.5, 2.0, -math.inf, 0.0]))
    assert (
        "(largest absolute difference 0.5; 1 is a finite value in yours where the reference has -inf; 1 is inf in "
        "yours where the reference has a finite value; 1 is -inf in yours where the reference has a finite value)"
    ) in mixed, mixed
    assert "ties" not in mixed, mixed  # -inf where the reference keeps 0.0, which nothing of yours equals


def test_a_filter_that_drops_a_value_without_a_tie_is_told_no_tie():
    logits = torch.tensor([[2.0, 1.0, 0.5, 0.0]])
    keeps_one = torch.tensor([[2.0, -math.inf, -math.inf, -math.inf]])  # k = 2 asked, one kept: no tie about it
    message = explain_difference(keeps_one, top_k_filter(logits, 2))
    assert "1 is -inf in yours where the reference has a finite value" in message and "ties" not in message, message
