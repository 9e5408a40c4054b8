"""Blocking one library function blocks its relatives, and what a check verifies about an answer tensor: each test
here fails on a bug that mutation testing of the graders planted without any test noticing (issue 43, item 8)."""

import pytest
import torch
import torch.nn.functional as F

from course_lib.classroom.checks import check_close, check_function
from course_lib.classroom.exercises import ShortcutError, blocked

_X = torch.randn(2, 5, generator=torch.Generator().manual_seed(0))
# Every way to a softmax that a student could write, with the names of the library functions it goes through
RELATIVES = {
    "torch.softmax": lambda: torch.softmax(_X, -1),
    "F.softmax": lambda: F.softmax(_X, -1),
    "Tensor.softmax": lambda: _X.softmax(-1),
    "torch.special.softmax": lambda: torch.special.softmax(_X, -1),
    "F.log_softmax, then exp": lambda: F.log_softmax(_X, -1).exp(),
    "torch.special.log_softmax, then exp": lambda: torch.special.log_softmax(_X, -1).exp(),
    "F.softmin of the negated scores": lambda: F.softmin(-_X, -1),
    "nn.Softmax": lambda: torch.nn.Softmax(-1)(_X),
    "nn.Softmin": lambda: torch.nn.Softmin(-1)(-_X),
    "nn.LogSoftmax, then exp": lambda: torch.nn.LogSoftmax(-1)(_X).exp(),
    "logsumexp as the normaliser": lambda: (_X - _X.logsumexp(-1, keepdim=True)).exp(),
    "torch._softmax": lambda: torch._softmax(_X, -1, False),
    "F.gumbel_softmax": lambda: F.gumbel_softmax(_X, tau=1.0),
    "torch.sparse.softmax": lambda: torch.sparse.softmax(_X.to_sparse(), -1).to_dense(),
}
# Any one of these blocked alone closes every relative (an exercise need not list them all)
ONE_NAME = [
    "torch.softmax",
    "torch.nn.functional.softmax",
    "torch.Tensor.softmax",
    "torch.special.softmax",
    "torch.nn.functional.log_softmax",
    "torch.nn.functional.softmin",
    "torch.logsumexp",
    "torch.nn.Softmax.forward",
    "torch.nn.LogSoftmax.forward",
    "torch.nn.Softmin.forward",
]


@pytest.mark.parametrize("name", ONE_NAME)
def test_blocking_one_softmax_name_closes_its_relatives(name):
    opened = []
    for relative, call in RELATIVES.items():
        try:
            with blocked((name,)):
                call()
            opened.append(relative)
        except ShortcutError:
            pass
    assert opened == [], f"blocking {name} leaves open: {opened}"
    RELATIVES["F.softmax"]()  # and everything works again after the check


def test_softmax_by_hand_still_runs_when_every_relative_is_closed():
    with blocked(ONE_NAME):
        e = (_X - _X.amax(-1, keepdim=True)).exp()
        by_hand = e / e.sum(-1, keepdim=True)
    torch.testing.assert_close(by_hand, torch.softmax(_X, -1))


class _Dispatching(torch.Tensor):
    """A tensor with its own dispatch rules: every comparison says "equal" (torch.isclose goes through aten)."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        plain = [a.as_subclass(torch.Tensor) if isinstance(a, cls) else a for a in args]
        out = func(*plain, **(kwargs or {}))
        return torch.ones_like(out) if func.overloadpacket is torch.ops.aten.isclose else out


def test_an_answer_with_its_own_dispatch_is_refused():
    liar = torch.Tensor._make_subclass(_Dispatching, torch.full((2,), 9.0))
    with pytest.raises(AssertionError, match="expected a plain torch.Tensor, got _Dispatching"):
        check_close(liar, torch.ones(2), "answer")
    with pytest.raises(AssertionError, match="_Dispatching"):
        check_function(lambda x: liar, lambda x: x, lambda g: (torch.ones(2),), name="f")


def test_a_whole_library_is_blocked_by_a_name_ending_in_dot_star_its_python_and_its_c_functions():
    """``"tokenizers.*"`` (13's BPE exercises: a trial's answer used Hugging Face's Rust BPE): every call into the
    library, whether its code is Python (a ``call`` event in one of its modules) or C (a ``c_call`` event of a function
    of its modules, or a method of one of its types); the rest runs."""
    import json
    import math

    with pytest.raises(ShortcutError, match=r"json \(json.dumps\) is not available"):
        with blocked(("json.*",), who="f"):
            json.dumps([1])
    with pytest.raises(ShortcutError, match=r"math \(sqrt\) is not available"):
        with blocked(("math.*",), who="f"):
            math.sqrt(2.0)
    with blocked(("json.*", "math.*"), who="f") as names:
        assert sorted([2, 1]) == [1, 2] and names == ("json.*", "math.*")
    assert json.dumps([1]) == "[1]" and math.sqrt(4.0) == 2.0
    with pytest.raises(ModuleNotFoundError):
        with blocked(("no_such_library.*",)):
            pass
