"""By-hand answers written with NumPy (or as tensors, lists of them): graded like any other, without a warning.
nbgrader scores a graded cell that writes to stderr as failed, and ``torch.tensor`` of a list of NumPy arrays warns
there ("Creating a tensor from a list of numpy.ndarrays is extremely slow"), as it does of a tensor ("To copy construct
from a tensor"); ``check_answer`` converts an answer once, through ``answer_tensor``."""

import warnings

import numpy as np
import pytest
import torch
from conftest import run_after_importing_torch

from course_lib.classroom.checks import answer_tensor, check_answer

EXPECTED = torch.tensor([[0.2, 0.8], [0.5, 0.5]], dtype=torch.float64)
ANSWERS = {
    "a list of arrays": [np.array([0.2, 0.8]), np.array([0.5, 0.5])],
    "a tuple of arrays": (np.array([0.2, 0.8]), np.array([0.5, 0.5])),
    "an array": np.array([[0.2, 0.8], [0.5, 0.5]], dtype=np.float32),
    "lists of NumPy scalars": [[np.float64(0.2), np.float64(0.8)], [np.float32(0.5), 0.5]],
    "lists of 0-d arrays": [[np.array(0.2), np.array(0.8)], [np.array(0.5), np.array(0.5)]],
    "plain nested lists": [[0.2, 0.8], [0.5, 0.5]],
    "a tensor": torch.tensor([[0.2, 0.8], [0.5, 0.5]]),
    "a list of tensors": [torch.tensor([0.2, 0.8]), torch.tensor([0.5, 0.5], requires_grad=True)],
    "tensors and arrays": [torch.tensor([0.2, 0.8]), np.array([0.5, 0.5])],
}


@pytest.mark.parametrize("form", sorted(ANSWERS))
def test_a_numpy_answer_passes_its_check_without_a_warning(form, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_answer(ANSWERS[form], EXPECTED, "weights")
    assert capsys.readouterr().out == "✓ weights is correct\n"


def test_a_wrong_numpy_answer_still_fails_without_giving_the_value_away():
    with pytest.raises(AssertionError, match=r"weights: 1 of 4 elements differ; .* yours, 0.7, is too small"):
        check_answer([np.array([0.2, 0.7]), np.array([0.5, 0.5])], EXPECTED, "weights")


def test_answer_tensor_keeps_what_torch_tensor_gives():
    assert answer_tensor([np.int64(2), 3]).dtype == torch.int64 and answer_tensor(2.5).dtype == torch.float32
    assert answer_tensor([np.array([1.0])], torch.float64).shape == (1, 1)
    with pytest.raises(AssertionError, match="n: dtype is torch.float32, expected torch.int64"):
        check_answer(3.0, torch.tensor(3), "n")  # an integer answer is not converted to the expected's dtype
    with pytest.raises(AssertionError, match="cannot be read as numbers"):
        check_answer([[0.2], [0.8, 0.5]], EXPECTED, "ragged")


def test_in_a_fresh_interpreter_torch_warns_and_the_check_does_not():
    """torch warns once per process, so a test run in this one may have used up the warning: a fresh one each, where
    warnings are errors. The check passes, and torch.tensor of the same rows after it still raises the warning (the
    check did not use it up)."""
    rows = "import numpy as np\nimport torch\nrows = [np.array([0.2, 0.8])] * 2\n"
    done = run_after_importing_torch(
        {
            "torch.tensor": rows + "torch.tensor(rows, dtype=torch.float64)",
            "check_answer": rows + "import course_lib as cl\n"
            "cl.check_answer(rows, torch.tensor([[0.2, 0.8]] * 2, dtype=torch.float64), 'w')\n"
            "torch.tensor(rows, dtype=torch.float64)",
        },
        preamble="import warnings\nwarnings.simplefilter('error')",
    )
    slow = "list of numpy.ndarrays is extremely slow"
    assert done["torch.tensor"][0] == 1 and slow in done["torch.tensor"][2], done["torch.tensor"]
    assert done["check_answer"][:2] == (1, "✓ w is correct\n") and slow in done["check_answer"][2], done["check_answer"]


class _OwnRules(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return torch.ones(2, 2, dtype=torch.float64)  # "agrees" with anything it is converted or compared to


def test_a_tensor_with_rules_of_its_own_is_not_converted_by_its_rules():
    odd = torch.zeros(2, 2).as_subclass(_OwnRules)
    with pytest.raises(AssertionError, match="expected a plain torch.Tensor, got _OwnRules"):
        check_answer(odd, EXPECTED, "weights")
    with pytest.raises(AssertionError, match="cannot be read as numbers .*_OwnRules, a tensor with rules of its own"):
        check_answer([odd], EXPECTED[None], "weights")
