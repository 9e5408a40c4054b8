"""Exercise checkers: compare a student's answer with a reference and explain the first difference in words.

A failed check raises ``AssertionError`` whose message says *what* is wrong (shape, dtype, which element,
by how much) instead of only that something is. Notebooks call these right after each exercise cell.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

__all__ = ["explain_difference", "check_close", "check_function"]


def explain_difference(actual: object, expected: Tensor, *, atol: float = 1e-5, rtol: float = 1e-4) -> str | None:
    """Return a sentence describing the first way ``actual`` differs from ``expected``, or None if they agree."""
    if not isinstance(actual, Tensor):
        return f"expected a torch.Tensor, got {type(actual).__name__}"
    if actual.shape != expected.shape:
        hint = ""
        a_shape, e_shape = tuple(actual.shape), tuple(expected.shape)
        if len(a_shape) == len(e_shape) >= 2 and a_shape[:-2] == e_shape[:-2] and a_shape[-2:] == e_shape[-2:][::-1]:
            hint = " (its last two dimensions look swapped: a transpose?)"
        return f"shape is {tuple(actual.shape)}, expected {tuple(expected.shape)}{hint}"
    if actual.dtype != expected.dtype:
        return f"dtype is {actual.dtype}, expected {expected.dtype}"
    a, e = actual.detach().cpu(), expected.detach().cpu()
    if a.dtype == torch.bool or not a.dtype.is_floating_point:
        wrong = a != e
    else:
        a64, e64 = a.double(), e.double()
        wrong = ~torch.isclose(a64, e64, atol=atol, rtol=rtol, equal_nan=True)
    if not wrong.any():
        return None
    index = tuple(int(i) for i in wrong.nonzero()[0])
    count = int(wrong.sum())
    where = f"[{', '.join(map(str, index))}]" if index else ""
    message = (
        f"{count} of {wrong.numel()} elements differ; the first is at {where}: "
        f"got {a[index].item():.4g}, expected {e[index].item():.4g}"
    )
    if a.dtype.is_floating_point:
        diff = (a.double() - e.double()).abs().max().item()
        message += f" (largest absolute difference {diff:.3g})"
    return message


def check_close(
    actual: object, expected: Tensor, name: str = "your answer", *, atol: float = 1e-5, rtol: float = 1e-4
) -> None:
    """Raise ``AssertionError`` explaining how ``actual`` differs from ``expected``; print a short OK otherwise."""
    problem = explain_difference(actual, expected, atol=atol, rtol=rtol)
    if problem is not None:
        raise AssertionError(f"{name}: {problem}")
    print(f"✓ {name} is correct")


def check_function(
    fn: Callable[..., Tensor],
    reference: Callable[..., Tensor],
    make_inputs: Callable[[torch.Generator], Sequence[object]],
    *,
    name: str | None = None,
    trials: int = 5,
    seed: int = 0,
    atol: float = 1e-5,
    rtol: float = 1e-4,
) -> None:
    """Run ``fn`` and ``reference`` on ``trials`` fresh random inputs and explain the first disagreement.

    ``make_inputs(generator)`` returns the positional arguments of one trial; it is called with a generator
    seeded from ``seed`` so every run of the check draws the same inputs.
    """
    name = name or getattr(fn, "__name__", "your function")
    generator = torch.Generator().manual_seed(seed)
    for trial in range(trials):
        args = make_inputs(generator)
        expected = reference(*args)
        try:
            actual = fn(*args)
        except NotImplementedError:
            raise
        except Exception as err:  # report the student's error together with the inputs' shapes
            shapes = [tuple(a.shape) if isinstance(a, Tensor) else a for a in args]
            raise AssertionError(f"{name} raised {type(err).__name__}: {err} (inputs: {shapes})") from err
        problem = explain_difference(actual, expected, atol=atol, rtol=rtol)
        if problem is not None:
            shapes = [tuple(a.shape) if isinstance(a, Tensor) else a for a in args]
            raise AssertionError(f"{name} is wrong on trial {trial + 1} (inputs: {shapes}): {problem}")
    print(f"✓ {name} agrees with the reference on {trials} random inputs")
