"""`hints=False` in the exercise checkers: the attention-specific guesses at a cause are left out, the description of
the difference stays, and the default (hints on) is unchanged. Notebook 07 uses it for exercises about positional
encodings, where "a mask inverted?" or "K Qᵀ instead of Q Kᵀ?" would send a student the wrong way."""

import pytest
import torch

from course_lib import check_close, check_function, explain_difference, sinusoidal_encoding, sinusoidal_shift_matrix

HINT_WORDS = ("scale factor", "transposed", "mask", "softmax", "True = may attend", "K Qᵀ")


def interleaved_vs_concatenated():
    """A sinusoidal table written as [sin | cos] blocks instead of interleaved sin, cos: a classic student mistake."""
    expected = sinusoidal_encoding(6, 4)
    angles = torch.arange(6.0)[:, None] * torch.tensor([1.0, 0.01])
    return torch.cat([angles.sin(), angles.cos()], dim=-1), expected


CASES = {
    "a constant multiple": (2 * torch.arange(1.0, 7.0), torch.arange(1.0, 7.0), "scale factor"),
    "a transposed shift matrix": (sinusoidal_shift_matrix(3, 6).T, sinusoidal_shift_matrix(3, 6), "transposed"),
    "sin and cos in blocks": (*interleaved_vs_concatenated(), "mask"),
}


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

    def wrong(delta, d_model):  # the rotation the other way round: M_delta transposed
        return sinusoidal_shift_matrix(delta, d_model).T

    with pytest.raises(AssertionError, match="transposed"):
        check_function(wrong, sinusoidal_shift_matrix, make_inputs, name="shift")
    with pytest.raises(AssertionError) as info:
        check_function(wrong, sinusoidal_shift_matrix, make_inputs, name="shift", hints=False)
    message = str(info.value)
    assert "shift is wrong on trial 1" in message and not any(word in message for word in HINT_WORDS), message
