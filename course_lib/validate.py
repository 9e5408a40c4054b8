"""Argument checks shared by every module of ``course_lib``: one rule, one wording.

The rule: a **TypeError** when an argument has the wrong type (``2.5`` where an int is needed, a list where a tensor
is), a **ValueError** when its type is right but its value is not (``-1`` heads, a probability of ``1.5``, a tensor
with too few dimensions). Every message names the argument, what was expected and what was given::

    >>> integer("num_heads", 2.5, minimum=1)
    TypeError: num_heads must be an int, got float 2.5
    >>> integer("num_heads", 0, minimum=1)
    ValueError: num_heads must be >= 1, got 0

Each function returns the checked value (converted where that is harmless: an int passed as a number becomes a
float), so a caller writes ``d_model = integer("d_model", d_model, minimum=1)``. ``bool`` is never accepted as a
number: ``True`` heads is a bug, not 1.

Shape legend of the course: ``B`` batch, ``H`` heads, ``L`` query length, ``S`` key length, ``D`` model width,
``Dk``/``Dv`` head widths.
"""

from __future__ import annotations

import math
from collections.abc import Collection

import torch
from torch import Tensor

__all__ = [
    "HALF_DTYPES",
    "attention_inputs",
    "broadcasts_to",
    "choice",
    "compute_dtype",
    "flag",
    "integer",
    "instance",
    "integer_or_range",
    "number",
    "probability",
    "same_length",
    "shape_of",
    "tensor",
    "text",
    "token_ids",
]

HALF_DTYPES = (torch.float16, torch.bfloat16)


def shape_of(t: Tensor) -> tuple[int, ...]:
    """``t.shape`` as a plain tuple, for messages: ``(2, 5, 7)`` rather than ``torch.Size([2, 5, 7])``."""
    return tuple(t.shape)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype to compute a softmax or a running sum in: float32 for float16/bfloat16 inputs, else ``dtype``."""
    return torch.float32 if dtype in HALF_DTYPES else dtype


def _describe(value: object) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text}" if len(text) <= 40 else type(value).__name__


def integer(name: str, value: object, *, minimum: int | None = None) -> int:
    """``value`` as an int; TypeError if it is not an int (bools refused), ValueError if it is below ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {_describe(value)}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def integer_or_range(name: str, value: object, *, minimum: int | None = None) -> tuple[int, int]:
    """An int ``n`` as the range ``(n, n)``, or an inclusive range ``(low, high)`` with ``low <= high``.

    TypeError if ``value`` is neither an int nor a tuple; ValueError for a tuple that is not a pair, ``low > high``
    or an end below ``minimum`` (each end is checked as :func:`integer` checks an int, as ``name[0]``, ``name[1]``).
    """
    if not isinstance(value, tuple):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int or a (low, high) pair, got {_describe(value)}")
        value = integer(name, value, minimum=minimum)
        return value, value
    if len(value) != 2:
        raise ValueError(f"{name} must be an int or a (low, high) pair, got {value!r}")
    low, high = (integer(f"{name}[{i}]", end, minimum=minimum) for i, end in enumerate(value))
    if low > high:
        raise ValueError(f"{name} range must have low <= high, got {value!r}")
    return low, high


def flag(name: str, value: object) -> bool:
    """``value`` if it is a bool; TypeError otherwise (``1`` or ``None`` is not a flag)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {_describe(value)}")
    return value


def instance(name: str, value: object, kind: type | tuple[type, ...], what: str, *, optional: bool = False) -> object:
    """``value`` if it is an instance of ``kind`` (or ``None`` when ``optional``); TypeError naming ``what`` otherwise.

    ``what`` says what is expected in words: ``instance("conv", conv, nn.Conv2d, "a torch.nn.Conv2d")``.
    """
    if not (isinstance(value, kind) or (optional and value is None)):
        raise TypeError(f"{name} must be {what}{' or None' if optional else ''}, got {type(value).__name__}")
    return value


def number(
    name: str,
    value: object,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_minimum: bool = False,
    strict_maximum: bool = False,
) -> float:
    """``value`` as a finite float within ``[minimum, maximum]`` (ends excluded when ``strict_*``).

    TypeError if it is not a real number (bools refused); ValueError if it is NaN, infinite or out of range.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {_describe(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    if minimum is not None and (value <= minimum if strict_minimum else value < minimum):
        raise ValueError(f"{name} must be {'>' if strict_minimum else '>='} {minimum}, got {value}")
    if maximum is not None and (value >= maximum if strict_maximum else value > maximum):
        raise ValueError(f"{name} must be {'<' if strict_maximum else '<='} {maximum}, got {value}")
    return value


def probability(name: str, value: object) -> float:
    """A probability that may be 0 but not 1, such as a dropout rate: ``0 <= p < 1``."""
    return number(name, value, minimum=0.0, maximum=1.0, strict_maximum=True)


def choice(name: str, value: object, choices: Collection[object]) -> object:
    """``value`` if it is one of ``choices``; ValueError naming the choices otherwise."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def text(name: str, value: object) -> str:
    """``value`` if it is a non-empty str; TypeError for another type, ValueError for ``""``."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {_describe(value)}")
    if not value:
        raise ValueError(f"{name} must not be empty")
    return value


def tensor(
    name: str,
    value: object,
    *,
    min_dim: int = 0,
    floating: bool = False,
    integral: bool = False,
    shape: tuple[object, ...] | None = None,
    layout: str = "",
    dtype: torch.dtype | None = None,
) -> Tensor:
    """``value`` if it is a tensor with at least ``min_dim`` dimensions, of a floating dtype when ``floating``, of
    an integer dtype when ``integral``, of ``shape`` when given, and of ``dtype`` when given.

    ``shape`` lists the sizes, ``None`` for a free one, and may start with ``...`` for any leading dimensions:
    ``(None, None, 8)`` is ``(B, L, 8)``, ``(..., None, 8)`` is ``(..., L, 8)``. TypeError for a non-tensor or a wrong
    kind of dtype; ValueError for too few dimensions or another shape. ``layout`` names the dimensions in the
    message, e.g. ``"(..., length, width)"`` or ``"(B, L, d_model=8)"``. ``dtype`` is that of a layer's parameters
    (a TypeError that names the fix instead of PyTorch's "mat1 and mat2 must have the same dtype"); under
    ``torch.autocast`` on the tensor's device any floating dtype passes, since autocast casts for the layer.
    """
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if dtype is not None and value.dtype != dtype:
        _layer_dtype(name, value, dtype)
    if floating and not value.dtype.is_floating_point:
        raise TypeError(f"{name} must have a floating dtype, got {value.dtype}")
    if integral and (value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool):
        raise TypeError(f"{name} must hold integers, got dtype {value.dtype}")
    if value.dim() < min_dim:
        where = f" {layout}" if layout else ""
        plural = "s" if min_dim != 1 else ""
        raise ValueError(f"{name} must have at least {min_dim} dimension{plural}{where}, got shape {shape_of(value)}")
    if shape is not None and not _has_shape(value, shape):
        raise ValueError(f"{name} must have shape {layout or shape}, got {shape_of(value)}")
    return value


def _layer_dtype(name: str, value: Tensor, dtype: torch.dtype) -> None:
    """The dtype check of :func:`tensor`: TypeError naming ``name``, the layer's ``dtype`` and the fix."""
    if value.dtype.is_floating_point and torch.is_autocast_enabled(value.device.type):
        return
    fix = f"pass {name}.to({dtype})"
    if value.dtype.is_floating_point:
        fix += f", or convert the layer with layer.to({value.dtype})"
    raise TypeError(f"{name} must have the dtype of the layer's parameters, {dtype}, got {value.dtype}: {fix}")


def _has_shape(value: Tensor, shape: tuple[object, ...]) -> bool:
    leading = bool(shape) and shape[0] is Ellipsis
    sizes = shape[1:] if leading else shape
    if value.dim() < len(sizes) or (not leading and value.dim() != len(sizes)):
        return False
    actual = value.shape[value.dim() - len(sizes) :]
    return all(want is None or want == got for want, got in zip(sizes, actual, strict=True))


def token_ids(name: str, value: object, vocab_size: int) -> Tensor:
    """``value`` if it is an integer tensor ``(B, L)``, ``L >= 1``, of token ids in ``[0, vocab_size)``.

    TypeError for a non-tensor or a floating, complex or boolean dtype; ValueError for another shape or an id out of
    range.
    """
    tensor(name, value)
    if value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer token ids, got dtype {value.dtype}")
    if value.dim() != 2 or value.shape[1] == 0:
        raise ValueError(f"{name} must have shape (B, L) with L >= 1, got {shape_of(value)} (one sequence: add [None])")
    low, high = (int(value.min()), int(value.max())) if value.numel() else (0, 0)
    if low < 0 or high >= vocab_size:
        raise ValueError(f"{name} must hold ids in [0, vocab_size={vocab_size}), got ids from {low} to {high}")
    return value


def attention_inputs(q: object, k: object, v: object | None = None, *, scale: object = None) -> tuple[int, ...]:
    """Check ``q (..., L, Dk)``, ``k (..., S, Dk)``, if given ``v (..., S, Dv)``, and ``scale``; return the broadcast
    batch.

    TypeError for a non-tensor, a non-floating or a mismatched dtype, or a ``scale`` that is not a number (a bool
    is not); ValueError for too few dimensions, a ``Dk`` or ``S`` that disagree, batch dimensions that do not
    broadcast, or a ``scale`` that is NaN, infinite, ``<= 0`` or too large for the dtype the scores are computed in
    (``1e308`` is infinite in float32). ``scale=None`` is the default ``1 / sqrt(Dk)``. The one check of every
    attention function.
    """
    for name, t in (("q", q), ("k", k)):
        tensor(name, t, min_dim=2, floating=True, layout="(..., length, width)")
    if q.dtype != k.dtype:
        raise TypeError(f"q and k must have the same dtype, got q {q.dtype} and k {k.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have the same last dimension d_k: q has shape {shape_of(q)} (d_k={q.shape[-1]}) "
            f"but k has shape {shape_of(k)} (d_k={k.shape[-1]})"
        )
    if scale is not None:
        _scale(scale, compute_dtype(q.dtype))
    named = {"q": q, "k": k}
    if v is not None:
        tensor("v", v, min_dim=2, floating=True, layout="(..., length, width)")
        if v.dtype != q.dtype:
            raise TypeError(f"v must have the same dtype as q, got q {q.dtype} and v {v.dtype}")
        if v.shape[-2] != k.shape[-2]:
            raise ValueError(
                f"k and v must have the same length S: k has shape {shape_of(k)} (S={k.shape[-2]}) "
                f"but v has shape {shape_of(v)} (S={v.shape[-2]})"
            )
        named["v"] = v
    try:
        return tuple(torch.broadcast_shapes(*(t.shape[:-2] for t in named.values())))
    except RuntimeError:
        shapes = ", ".join(f"{name} has shape {shape_of(t)}" for name, t in named.items())
        raise ValueError(f"the batch dimensions of {', '.join(named)} do not broadcast: {shapes}") from None


def _scale(scale: object, compute: torch.dtype) -> float:
    """``scale`` as a float > 0 that ``compute``, the dtype of the scores, can hold."""
    scale = number("scale", scale, minimum=0.0, strict_minimum=True)
    largest = torch.finfo(compute).max
    if scale > largest:
        raise ValueError(
            f"scale must be at most {largest:.4g}, the largest {compute} (the dtype the scores are computed in), "
            f"got {scale:g}"
        )
    return scale


def same_length(q: Tensor, k: Tensor, what: str) -> int:
    """``L`` when ``q (..., L, Dk)`` and ``k (..., S, Dk)`` have ``L = S``; else a ValueError: ``what`` needs it."""
    if q.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"{what} needs as many queries as keys (L = S): q has shape {shape_of(q)} (L={q.shape[-2]}) "
            f"but k has shape {shape_of(k)} (S={k.shape[-2]})"
        )
    return q.shape[-2]


def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """True if a tensor of ``shape`` broadcasts to exactly ``target`` (it may not enlarge it)."""
    try:
        return torch.broadcast_shapes(shape, target) == target
    except RuntimeError:
        return False
