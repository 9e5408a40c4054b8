"""Guessing the cause of a wrong answer from the pattern of its difference, for the checkers' messages.

:func:`hint_at_cause` adds a sentence to a check's description of a difference (:mod:`course_lib.classroom.checks`)
only where the pattern points to one cause: a constant multiple of the expected result over several different values
(a wrong scale factor), the expected result transposed, NaN where the expected result is finite, all zeros, and for
attention weights (rows over the keys that sum to 1, spread over several keys) the softmax's axis or a mask. A single
wrong number is a "constant multiple" of the right one, and exact zeros in a table of positions or in a ReLU's output
say nothing about masks: such answers get the plain description, no guess (issue 44: a beam-index bug was told "a
wrong scale factor (such as 1/√d_k)?"). A filter that set to -inf values tied with ones it kept is told of ties.

:func:`difference_size` says how far apart the differing elements are: the largest absolute difference of the finite
ones, and how many are infinite or NaN on one side only, in words (the difference of an infinity is inf or NaN, which
says nothing: a lecturer's top_k that broke ties was told "largest absolute difference nan", issue 44).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["difference_size", "hint_at_cause"]

VALUES = ("a finite value", "inf", "-inf", "NaN")  # the kinds of a value, as difference_size names them


def _sqrt_name(c: float) -> str:
    """``' (= √4)'`` when ``c`` is the square root (or its inverse) of a small integer that is not a square."""
    for value, prefix in ((c, "√"), (1.0 / c if c else 0.0, "1/√")):
        square = value * value
        n = round(square)
        if 2 <= n <= 4096 and math.isclose(square, n, rel_tol=1e-4) and math.isqrt(n) ** 2 != n:
            return f" (= {prefix}{n})"
    return ""


def _rows_sum_to_one(t: Tensor, dim: int) -> Tensor:
    s = t.sum(dim=dim)
    return ((s - 1).abs() < 1e-3) | (s.abs() < 1e-6)  # a row whose keys are all masked sums to 0


def _first(where: Tensor) -> str:
    return "[" + ", ".join(str(int(i)) for i in where.nonzero()[0]) + "]"


def _kinds(t: Tensor) -> Tensor:
    """The index in VALUES of each element's kind: finite, inf, -inf or NaN."""
    return torch.isposinf(t) * 1 + torch.isneginf(t) * 2 + torch.isnan(t) * 3


def difference_size(a: Tensor, e: Tensor, wrong: Tensor) -> str:
    """How far apart float tensors ``a`` (an answer) and ``e`` (the expected result) are where ``wrong``: the largest
    absolute difference between finite values, then how many elements are infinite or NaN on one side only (or
    infinite of the other sign), by kind: ``largest absolute difference 0.5; 3 are -inf in yours where the reference
    has a finite value``."""
    a, e = a.double(), e.double()
    finite = wrong & torch.isfinite(a) & torch.isfinite(e)
    parts = [f"largest absolute difference {(a - e)[finite].abs().max().item():.3g}"] if finite.any() else []
    other = wrong & ~finite
    pairs = torch.stack((_kinds(a)[other], _kinds(e)[other]), dim=-1).tolist()  # (n, 2): the kinds of yours, its
    for mine, theirs in sorted({tuple(pair) for pair in pairs}):
        n = pairs.count([mine, theirs])
        verb = "is" if n == 1 else "are"
        parts.append(f"{n} {verb} {VALUES[mine]} in yours where the reference has {VALUES[theirs]}")
    return "; ".join(parts)


def _ties_dropped(a: Tensor, e: Tensor, atol: float, rtol: float) -> str:
    """A filter's broken ties: every difference is -inf in ``a`` where ``e`` keeps a value that equals one ``a`` kept
    in the same row (the last axis)."""
    dropped = torch.isneginf(a) & torch.isfinite(e)
    wrong = ~torch.isclose(a, e, atol=atol, rtol=rtol, equal_nan=True)
    if a.dim() == 0 or not dropped.any() or (wrong & ~dropped).any():
        return ""
    kept = torch.where(torch.isfinite(a), a, torch.nan)  # (..., V): the values yours kept, NaN elsewhere
    tied = (e.unsqueeze(-1) == kept.unsqueeze(-2)).any(dim=-1)  # (..., V): equal to a value kept in its row
    if not tied[dropped].all():
        return ""
    return (
        f" Yours is -inf at {_first(dropped)} where the reference keeps the value, and each value you set to -inf "
        "there equals one you kept in the same row: ties broken, where the reference keeps every tied value?"
    )


def hint_at_cause(a: Tensor, e: Tensor, atol: float, rtol: float) -> str:
    """A sentence guessing the cause of the difference between float tensors ``a`` and ``e`` (same shape), or '':
    only where the pattern of the difference points to that cause, not to any other as well (one wrong number is a
    constant multiple of the right one, and zeros where a ReLU's output has them say nothing about masks)."""
    a, e = a.double(), e.double()
    nan = torch.isnan(a) & ~torch.isnan(e)
    if nan.any():
        return (
            f" You have NaN at {_first(nan)} where the expected result is finite: a softmax over a row whose scores "
            "are all -inf (every key masked), or a division by zero?"
        )
    if not torch.isfinite(a).all() or not torch.isfinite(e).all() or a.numel() < 2:
        return _ties_dropped(a, e, atol, rtol)
    if (a == 0).all():
        return " Your result is all zeros: did the function return before computing anything?"
    # a constant multiple of the expected result, over at least two different values: a wrong scale factor
    big = e.abs() > 1e-6 * max(e.abs().max().item(), 1e-30)
    if big.sum() >= 2 and not torch.allclose(e[big], e[big][0].expand(int(big.sum())), rtol=1e-3, atol=0):
        c = (a[big] / e[big]).median().item()
        if c != 0 and not math.isclose(c, 1.0, rel_tol=1e-3) and torch.allclose(a, c * e, atol=atol, rtol=1e-3):
            return (
                f" Every element of yours is {c:.4g}{_sqrt_name(c)} times the expected one: "
                "a missing, extra or wrong scale factor (such as 1/√d_k)?"
            )
    if a.dim() >= 2 and a.shape[-1] == a.shape[-2] and torch.allclose(a, e.transpose(-2, -1), atol=atol, rtol=rtol):
        return " Yours equals the expected result transposed: rows and columns swapped (K Qᵀ instead of Q Kᵀ?)."
    # attention weights (rows over the keys that sum to 1, some spread over several keys): the softmax's axis, a mask
    if not (a.dim() >= 2 and (e >= 0).all() and _rows_sum_to_one(e, -1).all() and ((e > 0).sum(-1) >= 2).any()):
        return ""
    if not _rows_sum_to_one(a, -1).all():
        if (a >= 0).all() and _rows_sum_to_one(a, -2).all():
            return (
                " The expected rows sum to 1 over the last axis (the keys) but yours do not, while your columns do: "
                "a softmax over the wrong axis? Normalise over dim=-1."
            )
        return (
            " The expected rows sum to 1 over the last axis (the keys) but yours do not "
            f"(your first row sums to {a.reshape(-1, a.shape[-1])[0].sum().item():.4g})."
        )
    wrong = ~torch.isclose(a, e, atol=atol, rtol=rtol)
    leaked = wrong & (e == 0) & (a != 0)  # weight where the expected result has exactly none
    blocked = wrong & (a == 0) & (e != 0)  # no weight where the expected result has some
    if leaked.any() and blocked.any():
        return (
            f" Yours is 0 where the expected value is not (first at {_first(blocked)}) and nonzero where it is exactly "
            f"0 (first at {_first(leaked)}): a mask inverted? Remember True = may attend."
        )
    if leaked.any():
        return (
            f" The expected value is exactly 0 at {_first(leaked)} but yours is not: a position that should be masked "
            "out (padding, or a future token) is visible? Remember True = may attend."
        )
    if blocked.any():
        return (
            f" Yours is exactly 0 at {_first(blocked)} where the expected value is not: a position hidden that "
            "should be visible (a mask inverted? True = may attend)?"
        )
    return ""
