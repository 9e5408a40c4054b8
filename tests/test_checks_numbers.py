"""The checkers' arithmetic: NaN answers fail (and are called NaN), and ``rtol`` is honoured, relative to the expected
value, by every checker that takes it. Each test here fails on a small bug in that arithmetic (issue 43: mutation
testing found answers of NaN and tolerances that no test held)."""

import math

import pytest
import torch

from course_lib.classroom.checks import check_answer, check_close, check_function, explain_difference

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    "yours, expected",
    [
        ([NAN, 2.0], [1.0, 2.0]),  # one NaN
        ([NAN, NAN], [1.0, 2.0]),  # nothing but NaN: every comparison with NaN is False, so "no element is far" holds
        ([1.0, 2.0], [1.0, NAN]),  # a number where the reference says NaN
        ([INF, 2.0], [-INF, 2.0]),
    ],
)
def test_a_nan_or_an_infinity_that_differs_fails(yours, expected):
    with pytest.raises(AssertionError, match="elements differ"):
        check_close(torch.tensor(yours), torch.tensor(expected), "x")


def test_nan_where_the_reference_has_nan_agrees(capsys):
    check_close(torch.tensor([NAN, INF, 2.0]), torch.tensor([NAN, INF, 2.0]), "x")
    assert "✓ x is correct" in capsys.readouterr().out


def test_a_nan_answer_is_named_nan_and_a_nan_function_fails():
    assert "You have NaN at [0]" in explain_difference(torch.tensor([NAN, 2.0]), torch.tensor([1.0, 2.0]))
    with pytest.raises(AssertionError, match=r"yours, nan, is not a number \(NaN\)"):  # not "too small"
        check_answer(torch.tensor(NAN), torch.tensor(0.5), "p")
    with pytest.raises(AssertionError, match="f is wrong on trial 1"):
        check_function(lambda x: x / 0 * 0, lambda x: x, lambda g: (torch.rand(3, generator=g) + 1,), name="f")


def _off_by(relative):
    """An answer ``expected * (1 + relative)`` of 1000: 1000 is far from 1, so that ``rtol`` and ``atol`` differ."""
    return torch.tensor([1000.0 * (1 + relative)], dtype=torch.float64), torch.tensor([1000.0], dtype=torch.float64)


@pytest.mark.parametrize("checker", ["check_close", "check_answer", "check_function"])
def test_rtol_is_honoured_by_every_checker(checker, capsys):
    def run(actual, expected, **tolerances):
        if checker == "check_close":
            check_close(actual, expected, "x", **tolerances)
        elif checker == "check_answer":
            check_answer(actual, expected, "x", **tolerances)
        else:
            check_function(lambda _: actual, lambda _: expected, lambda g: (0,), name="x", **tolerances)

    run(*_off_by(0.009), atol=0, rtol=1e-2)  # 9 away from 1000: within 1 %
    with pytest.raises(AssertionError, match="x"):
        run(*_off_by(0.011), atol=0, rtol=1e-2)
    with pytest.raises(AssertionError, match="x"):  # atol and rtol are not the same thing: 9 > 0.01
        run(*_off_by(0.009), atol=1e-2, rtol=0)
    assert capsys.readouterr().out.count("✓") == 1


def test_rtol_is_relative_to_the_expected_value():
    """|yours - expected| <= atol + rtol * |expected|: 1.9 is 0.9 from 1, more than half of 1 (though less than half
    of 1.9), and 1 is 0.9 from 1.9, less than half of 1.9."""
    tolerance = dict(atol=0, rtol=0.5)
    assert explain_difference(torch.tensor([1.9]), torch.tensor([1.0]), **tolerance) is not None
    assert explain_difference(torch.tensor([1.0]), torch.tensor([1.9]), **tolerance) is None


@pytest.mark.parametrize("bad", [-1e-3, NAN, INF])
def test_a_tolerance_must_be_a_finite_number_at_least_0(bad):
    for name in ("atol", "rtol"):
        with pytest.raises(ValueError, match=name):
            explain_difference(torch.ones(1), torch.ones(1), **{name: bad})


def test_integers_and_booleans_are_compared_exactly_whatever_the_tolerance():
    assert explain_difference(torch.tensor([1000]), torch.tensor([1001]), atol=5, rtol=0.5) is not None
    assert explain_difference(torch.tensor([True]), torch.tensor([False]), atol=5, rtol=5) is not None


def test_a_by_hand_answer_rounded_to_4_decimals_passes_and_one_a_unit_further_off_fails():
    """A twenty-second trial: an honest PE(p_2) written as the course prints numbers, 0.0699 for sin(0.07) =
    0.069943, scored zero against the 1e-5 of the checks of code."""
    expected = torch.tensor([math.sin(0.07), math.cos(0.07), 0.5, -1.23456])
    check_answer([0.0699, 0.9976, 0.5, -1.2346], expected, "PE(p_2)")  # each rounded to 4 decimals
    check_answer([0.06994, 0.99755, 0.5, -1.23456], expected, "PE(p_2)")
    with pytest.raises(AssertionError, match="too large"):
        check_answer([0.0701, 0.9976, 0.5, -1.2346], expected, "PE(p_2)")
    with pytest.raises(AssertionError, match="too small"):
        check_answer([0.0699, 0.9976, 0.5, -1.2348], expected, "PE(p_2)")
