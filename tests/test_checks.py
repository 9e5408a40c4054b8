"""The exercise checkers must pass right answers and explain wrong ones precisely."""

import math

import pytest
import torch

from course_lib import check_close, check_function, explain_difference, scaled_dot_product_attention


def test_agreeing_tensors_pass(capsys):
    check_close(torch.ones(2, 3), torch.ones(2, 3), "ones")
    assert "✓ ones is correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    "actual,expected,words",
    [
        (torch.ones(3, 2), torch.ones(2, 3), "shape is (3, 2), expected (2, 3) (its last two dimensions look swapped"),
        (
            torch.ones(4, 3, 2),
            torch.ones(4, 2, 3),
            "(4, 3, 2), expected (4, 2, 3) (its last two dimensions look swapped",
        ),
        (torch.ones(2, 3, dtype=torch.float64), torch.ones(2, 3), "dtype is torch.float64"),
        (torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.5, 3.0]), "first is at [1]: got 2, expected 2.5"),
        ([1.0, 2.0], torch.tensor([1.0, 2.0]), "expected a torch.Tensor, got list"),
        (torch.tensor([True, False]), torch.tensor([True, True]), "1 of 2 elements differ"),
    ],
)
def test_differences_are_explained(actual, expected, words):
    assert words in explain_difference(actual, expected)
    with pytest.raises(AssertionError, match="x: "):
        check_close(actual, expected, "x")


def test_a_difference_shows_values_that_differ():
    """Two values 4 significant digits would write alike get the digits that tell them apart (a message that read
    "got -0.5013, expected -0.5013" said nothing); values that differ in 4 digits keep 4."""
    message = explain_difference(torch.tensor([-0.50126, 1.0]), torch.tensor([-0.50134, 1.0]), atol=0, rtol=0)
    assert "got -0.50126, expected -0.50134" in message
    assert "got 2, expected 2.5" in explain_difference(torch.tensor([2.0]), torch.tensor([2.5]))
    far = explain_difference(torch.tensor([1.0000001], dtype=torch.float64), torch.tensor([1.0], dtype=torch.float64),
                             atol=0, rtol=0)  # fmt: skip
    assert "got 1.0000001, expected 1 " in far


@pytest.mark.parametrize(
    "yours,expected,shown",
    [
        (4294967297, 4294967296, "yours, 4294967297, is too large"),  # .4g would print 4.295e+09 for both
        (4294967295.0, 4294967296.0, "yours, 4294967295, is too small"),
        (1.00001, 1.0, "yours, 1.00001, is too large"),
        (0.5, 0.25, "yours, 0.5, is too large"),
    ],
)
def test_a_by_hand_answer_shows_its_own_value_with_the_digits_that_differ(yours, expected, shown):
    dtype = torch.int64 if isinstance(yours, int) else torch.float64
    message = explain_difference(torch.tensor(yours, dtype=dtype), torch.tensor(expected, dtype=dtype), atol=0, rtol=0,
                                 reveal=False)  # fmt: skip
    assert shown in message and str(expected) not in message.replace(str(yours), "")


def qkv(g):
    return [torch.randn(2, 4, 8, generator=g), torch.randn(2, 5, 8, generator=g), torch.randn(2, 5, 3, generator=g)]


def test_check_function_passes_a_right_answer(capsys):
    def mine(q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v

    check_function(mine, scaled_dot_product_attention, qkv)
    assert "agrees with the reference on 5 random inputs" in capsys.readouterr().out


def test_a_long_success_message_is_folded_between_words_within_a_slides_width():
    """The names a check blocked made its message a line of up to 200 characters (a lecturer's trial: 93 slide lines
    folded by the build); it is folded at WIDTH between words, later lines indented, nothing lost."""
    import json

    from course_lib.classroom.checks import WIDTH, success_line
    from course_lib.paths import NOTEBOOKS_DIR

    text = "✓ f agrees with the reference on 5 random inputs, without calling " + ", ".join(
        f"course_lib.module_{i}.function_{i}" for i in range(3)
    )
    rows = success_line(text).split("\n")
    assert len(rows) == 3 and all(len(r) <= WIDTH for r in rows) and rows[1].startswith("  course_lib.module_0")
    assert " ".join(r.strip() for r in rows) == text and success_line("✓ f is short") == "✓ f is short"
    for nb in sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")):  # what every notebook stored, as it prints now
        outputs = [o for c in json.loads(nb.read_text(encoding="utf-8"))["cells"] for o in c.get("outputs", [])]
        lines = "".join("".join(o.get("text", "")) for o in outputs).splitlines()
        wide = [line for line in lines if "agrees with the reference on" in line and len(line) > WIDTH]
        assert not wide, f"{nb.name}: {wide}"


@pytest.mark.parametrize(
    "wrong,words",
    [
        (lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v, "elements differ"),  # no scale
        (lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) / 8**0.5, dim=-2) @ v, "elements differ"),  # axis
        (lambda q, k, v: (q @ k.transpose(-2, -1)).softmax(-1), "shape is (2, 4, 5), expected (2, 4, 3)"),
        (lambda q, k, v: q @ k, "raised RuntimeError"),
    ],
)
def test_check_function_catches_wrong_answers(wrong, words):
    with pytest.raises(AssertionError) as info:
        check_function(wrong, scaled_dot_product_attention, qkv, name="attention")
    assert words in str(info.value)
    assert "attention" in str(info.value)


# ---------------------------------------------------------------- what a check verifies before it compares


class _Agreeable(torch.Tensor):  # a tensor whose own rules answer every comparison with "equal"
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs)
        return out.as_subclass(torch.Tensor) | True if func is torch.isclose else out


def test_an_answer_with_rules_of_its_own_is_refused_and_a_parameter_is_not(capsys):
    with pytest.raises(AssertionError, match="a plain torch.Tensor, got _Agreeable"):
        check_close(torch.tensor([9.0, 9.0]).as_subclass(_Agreeable), torch.ones(2), "answer")
    check_close(torch.nn.Parameter(torch.ones(2)), torch.ones(2), "parameter")  # no rules of its own
    assert "✓ parameter is correct" in capsys.readouterr().out
    made_before = torch.full((2,), 9.0).as_subclass(_Agreeable)  # (made inside the function, it is refused already)
    with pytest.raises(AssertionError, match="_Agreeable"):
        check_function(lambda x: made_before, lambda x: x, lambda g: (torch.ones(2),), name="f")


def test_a_mode_left_on_stops_the_checks_and_torchs_own_modes_do_not():
    from torch.overrides import TorchFunctionMode

    class Agree(TorchFunctionMode):  # what an answer cell could enter and never leave
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out | True if func is torch.isclose else out

    class Profile(Agree):  # the grading machine's own (tools/rounding_startup.py marks its mode so)
        course_profile = True

    with Agree(), pytest.raises(AssertionError, match="Not graded: a torch mode \\(Agree\\)"):
        check_close(torch.ones(2), torch.ones(2), "answer")
    with Profile():
        check_close(torch.ones(2), torch.ones(2), "answer")
    with torch.device("cpu"):  # PyTorch's own mode (torch.set_default_device pushes the same)
        check_close(torch.ones(2), torch.ones(2), "answer")
