"""Exercise checkers: compare a student's answer with a reference and explain the first difference in words.

A failed check raises ``AssertionError`` whose message says *what* is wrong (shape, dtype, which element,
by how much) instead of only that something is, and, where the pattern of the difference gives it away, adds a
hint at the likely cause (:mod:`course_lib.classroom.hints`): a wrong scale, a softmax over the wrong axis, a mask
not applied or inverted, a transposed result, NaN. Notebooks call these right after each exercise cell.

The student version of a notebook (``python -m course_lib.classroom.student``) replaces a solution by a stub: a function
body by ``raise NotImplementedError(...)``, a value answer ``x = ...`` by ``x = unanswered("Exercise N: x")``,
a placeholder (:mod:`course_lib.classroom.exercises`) that raises ``NotImplementedError`` as soon as a check touches it.
An implement-it exercise is checked ``without=`` the library functions that would do its work.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from ..validate import integer, number
from .byhand import answer_tensor
from .copies import given, kept, settled
from .exercises import Unanswered, blocked
from .hints import difference_size, hint_at_cause
from .integrity import NOT_GRADED, untrusted
from .messages import say
from .noted import noted
from .own import own_functions
from .sealed import fingerprint
from .watch import Refused, call_answer, verify_watched

WIDTH = 88  # a check's message at most this wide: the columns of a slide's code and output (tools/slide_code.py)

__all__ = ["answer_tensor", "explain_difference", "check_answer", "check_close", "check_function"]


def _raise_if_unanswered(*values: object) -> None:
    for value in values:
        if isinstance(value, Unanswered):
            value._fail()


# ---------------------------------------------------------------- explaining a difference


def _own(x: float) -> str:
    """A student's own value, with the digits that set it apart from a near one: a whole number in full (4294967297,
    not 4.295e+09, which also reads 4294967296), anything else to 6 significant digits."""
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 2**53):
        return str(int(x))
    return f"{x:.6g}"


def _apart(x: float, y: float) -> tuple[str, str]:
    """Two values as a message shows them: 4 significant digits, more where 4 would write both alike (-0.5013 and
    -0.50134, not -0.5013 twice)."""
    for digits in range(4, 18):
        shown = f"{x:.{digits}g}", f"{y:.{digits}g}"
        if shown[0] != shown[1]:
            break
    return shown


def _shape_problem(actual: Tensor, expected: Tensor) -> str:
    hint = ""
    a_shape, e_shape = tuple(actual.shape), tuple(expected.shape)
    if len(a_shape) == len(e_shape) >= 2 and a_shape[:-2] == e_shape[:-2] and a_shape[-2:] == e_shape[-2:][::-1]:
        hint = " (its last two dimensions look swapped: a transpose?)"
    elif actual.numel() == expected.numel() and actual.squeeze().shape == expected.squeeze().shape:
        hint = " (the same numbers of elements up to dimensions of size 1: a missing or extra unsqueeze/squeeze?)"
    elif actual.numel() == expected.numel():
        hint = " (the same number of elements in another arrangement: a reshape or view in the wrong order?)"
    return f"shape is {a_shape}, expected {e_shape}{hint}"


def explain_difference(
    actual: object,
    expected: Tensor,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    hints: bool = True,
    reveal: bool = True,
) -> str | None:
    """Return a sentence describing the first way ``actual`` differs from ``expected``, or None if they agree.

    ``hints=False`` leaves out the guess at a cause that follows a difference in values (a scale factor, the softmax
    axis, a mask, a transpose: written for attention exercises), for exercises where such a guess would mislead;
    the description of the difference itself (shape, dtype, where, by how much) stays. ``reveal=False`` (by-hand
    answers) says which element is wrong and whether it is too large or too small, never the expected value.

    Raises ``NotImplementedError`` if ``actual`` is an :class:`Unanswered` placeholder.
    """
    number("atol", atol, minimum=0)
    number("rtol", rtol, minimum=0)
    _raise_if_unanswered(actual)
    if not isinstance(actual, Tensor):
        extra = ""
        if isinstance(actual, tuple | list):
            extra = f" of {len(actual)} items"
            if actual and isinstance(actual[0], Tensor):
                extra += " (return one tensor, not several)"
        return f"expected a torch.Tensor, got {type(actual).__name__}{extra}"
    if actual.shape != expected.shape:
        return _shape_problem(actual, expected)
    if actual.dtype != expected.dtype:
        hint = ""
        if expected.dtype.is_floating_point and not actual.dtype.is_floating_point:
            hint = " (integers where floats are expected: write 2.0 rather than 2, or convert with .float())"
        return f"dtype is {actual.dtype}, expected {expected.dtype}{hint}"
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
    at = ", ".join(map(str, index))
    head = f"{count} of {wrong.numel()} elements differ; the first is at [{at}]: " if index else ""  # (not one number)
    if not reveal:
        mine, theirs = a[index].item(), e[index].item()
        verdict = f"is too {'large' if mine > theirs else 'small'}"
        if a.dtype == torch.bool or mine != mine or theirs != theirs:  # (NaN is neither larger nor smaller)
            verdict = "is not a number (NaN)" if mine != mine else "is not the expected value"
        return f"{head}yours, {_own(mine)}, {verdict}"
    got, wanted = _apart(a[index].item(), e[index].item())
    message = f"{head}got {got}, expected {wanted}"
    if a.dtype.is_floating_point:
        message += f" ({difference_size(a, e, wrong)})"
        hint = hint_at_cause(a, e, atol, rtol) if hints else ""
        if hint:
            message += "." + hint
    return message


def check_close(
    actual: object,
    expected: Tensor,
    name: str = "your answer",
    *,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    hints: bool = True,
    reveal: bool = True,
) -> None:
    """Raise ``AssertionError`` explaining how ``actual`` differs from ``expected``; print a short OK otherwise.

    An :class:`Unanswered` placeholder (the student version's stub) raises ``NotImplementedError`` instead.
    ``reveal=False`` keeps the expected value out of the message (see :func:`check_answer`). What a check verifies
    before it compares (no torch mode left on, a plain tensor): :mod:`course_lib.classroom.integrity`.
    """
    _raise_if_unanswered(actual)
    verify_watched()  # the grader's verification, if a snapshot was taken (classroom.watch)
    options = dict(atol=atol, rtol=rtol, hints=hints, reveal=reveal)
    problem = untrusted(actual) or explain_difference(actual, expected, **options)
    if problem is not None:
        raise AssertionError(say(f"{name}: {problem}"))
    print(say(f"✓ {name} is correct"))


# A by-hand number rounded to 4 decimals is off by at most half a unit of the 4th (5e-5); float32 stores the answer
# and the expected value each to about 1e-7 relative (1e-6: room for by-hand numbers up to about 8): a twenty-second
# trial's honest 0.0699 for sin(0.07) = 0.069943 failed the 1e-5 of the checks of code.
BY_HAND_ATOL = 5e-5 + 1e-6


def check_answer(actual: object, expected: Tensor, name: str = "your answer", *, atol: float = BY_HAND_ATOL,
                 rtol: float = 1e-4) -> None:  # fmt: skip
    """:func:`check_close` for a by-hand answer: a wrong answer is told which element is wrong and whether it is too
    large or too small, never the expected value, which would give the answer away. Numbers rounded to 4 decimals,
    as the course prints them, pass (:data:`BY_HAND_ATOL`). The answer (a number, a list,
    NumPy's arrays and scalars, a tensor: nothing else, :mod:`course_lib.classroom.byhand`) is converted by
    :func:`answer_tensor`, to ``expected``'s dtype where that is a floating-point one (a by-hand answer's numbers are
    graded, not its dtype)."""
    _raise_if_unanswered(actual)
    try:
        actual = answer_tensor(actual, expected.dtype if expected.dtype.is_floating_point else None)
    except NotImplementedError:  # an unanswered placeholder inside a list: the stub's own message
        raise
    except AssertionError as err:  # an object of a class of the notebook's own: "Not graded" (classroom.byhand)
        raise AssertionError(f"{NOT_GRADED}: {name}: {str(err).removeprefix(NOT_GRADED + ': ')}") from None
    except (TypeError, ValueError, RuntimeError) as err:
        raise AssertionError(say(f"{name}: cannot be read as numbers ({type(err).__name__}: {err})")) from err
    check_close(actual, expected, name, atol=atol, rtol=rtol, hints=False, reveal=False)


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
    hints: bool = True,
    without: Sequence[str] = (),
) -> None:
    """Run ``fn`` and ``reference`` on ``trials`` fresh random inputs and explain the first disagreement.

    ``make_inputs(generator)`` returns the positional arguments of one trial, drawn from a generator seeded from
    ``seed`` (another ``seed``: other inputs, as hidden tests draw). Each function gets its own copy of the inputs.
    ``NotImplementedError`` (the student version's stub) passes through. ``hints=False``: as in
    :func:`explain_difference`. ``without`` names library functions ``fn`` may not call, e.g. ``("torch.softmax",
    "course_lib.split_heads")`` (:func:`course_lib.classroom.exercises.blocked`; the reference may): a call raises
    inside ``fn`` and the check says why. Nor may ``fn`` call the check's ``reference``, ``make_inputs`` or the
    functions defined beside them (:mod:`course_lib.classroom.own`). The reference runs after the answer, on a copy
    of the inputs and random state made before it; while the answer runs, the check's frames are out of its reach
    (:func:`course_lib.classroom.watch.call_answer`): asking for them is "Not graded". In the grader's own run ``fn``
    runs in another kernel, the answers' (:mod:`course_lib.classroom.serve`).
    """
    _raise_if_unanswered(fn)
    name = name or getattr(fn, "__name__", "your function")
    integer("trials", trials, minimum=1)
    generator = torch.Generator().manual_seed(integer("seed", seed))
    sizes, notes = [], set()  # (the warnings noted so far: classroom.noted)
    explain, distrust = explain_difference, untrusted  # as they are before any answer runs (verified: classroom.watch)
    for trial in range(trials):
        args = make_inputs(generator)
        shapes = [_describe(a) for a in args]
        apart, state = kept(args), torch.get_rng_state()  # the reference's inputs and random state, kept apart
        own = own_functions(fn, reference, make_inputs, args)  # the check's reference, inputs and helpers
        actual = _answer(fn, args, name, shapes, (apart, state, reference), dict(without=without, own=own), notes)
        torch.set_rng_state(state)
        with noted("the reference", notes):
            expected = reference(*apart)  # only now, when the answer has returned: never in a frame it could read
        sizes.append(expected.numel() if isinstance(expected, Tensor) else 1)
        problem = distrust(actual) or explain(actual, expected, atol=atol, rtol=rtol, hints=hints)
        if problem is not None and problem.startswith(NOT_GRADED):  # a mode left on: the words the report flags first
            raise AssertionError(f"{NOT_GRADED}: {name} on trial {trial + 1}: {problem.removeprefix(NOT_GRADED)[2:]}")
        if problem is not None:
            raise AssertionError(say(f"{name} is wrong on trial {trial + 1} (inputs: {shapes}): {problem}"))
    verify_watched()  # nothing the answer's calls changed
    if trials > 1 and not any(sizes):  # nothing compared: the inputs came out empty (a builtin they use hidden?)
        raise AssertionError(f"{NOT_GRADED}: {name}: every expected result of the {trials} trials was empty")
    without = tuple(dict.fromkeys(without))
    shown = ", ".join(without[:3]) + (f" and {len(without) - 3} more" if len(without) > 3 else "")
    blocked_names = f", without calling {shown}" if without else ""
    print(success_line(say(f"✓ {name} agrees with the reference on {trials} random inputs{blocked_names}")))


def success_line(text: str) -> str:
    """A check's message folded between words at WIDTH, later lines indented: the names a check blocked made it a line
    of up to 200 characters, which a notebook wraps anywhere and a slide folded (a lecturer's trial)."""
    return "\n".join(textwrap.wrap(text, WIDTH, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False))


def _answer(fn: Callable, args: Sequence[object], name: str, shapes: list, theirs: tuple, blocking: dict,
            notes: set) -> object:  # fmt: skip
    """``fn`` called on its own copy of ``args`` (the check's frames out of its reach: classroom.watch), blocked, its
    warnings noted (classroom.noted); "Not graded" if it asked for the check's frames, or if ``theirs`` (the check's
    copy of the inputs, random state and reference) changed while it ran (classroom.sealed)."""
    handed = given(args)
    seal = fingerprint(*theirs, handed=handed)
    try:
        with noted(name, notes), blocked(blocking["without"], who=name, namespace=getattr(fn, "__globals__", None),
                                         functions=(fn,), own=blocking["own"]):  # fmt: skip
            actual = settled(call_answer(fn, handed))  # cloned now: nothing written into it later counts
    except NotImplementedError:
        raise
    except Refused as err:
        raise AssertionError(f"{NOT_GRADED}: {name} {err}") from None
    except Exception as err:  # report the student's error together with the inputs' shapes
        raise AssertionError(say(f"{name} raised {type(err).__name__}: {err} (inputs: {shapes})")) from err
    if fingerprint(*theirs, handed=handed) != seal:
        raise AssertionError(
            f"{NOT_GRADED}: {name} changed the check's own copy of the inputs (or its random state or reference), "
            "on which the reference runs once the answer has returned: the check's frames are not the answer's"
        )
    return actual


def _describe(arg: object) -> object:
    """How an input appears in a message: a tensor by its shape, a module by its class name, anything else as is."""
    if isinstance(arg, Tensor):
        return tuple(arg.shape)
    if isinstance(arg, torch.nn.Module):
        return _Name(type(arg).__name__)
    if type(arg) in (list, tuple):  # e.g. a list of per-layer weight tensors: describe each item, not dump them
        described = [_describe(a) for a in arg]
        return described if isinstance(arg, list) else tuple(described)
    return arg


class _Name(str):
    def __repr__(self) -> str:
        return str(self)
