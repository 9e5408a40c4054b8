"""What a function reaches while it is checked: the operations below every name it could call them by.

Blocking a library function by its name (:func:`course_lib.classroom.exercises.blocked`) closes the doors that have
names: ``torch.softmax``, ``F.softmax``, ``x.softmax``, a default argument or a closure holding one. PyTorch has
more doors: ``torch.ops.aten._softmax``, ``torch._C._VariableFunctions.softmax``, an operator's overload
(``torch.ops.aten._softmax.default``), a backward kernel called forward (``_softmax_backward_data``). They all end in
the same few operators of PyTorch's dispatcher. :class:`Reaches` watches two levels while a student's function runs:

- **functions** (a ``TorchFunctionMode``): every torch function, tensor method and operator call, with its object and
  name, however it was reached; a blocked function by identity, an operator by its name;
- **kernels** (a ``TorchDispatchMode``): every operator that runs below them, after PyTorch's own decompositions, so
  that ``nn.Softmax`` or a fused attention kernel is seen whatever Python path led to it.

The first operator that does the exercise's work raises :class:`ShortcutError`, naming what was reached and the
library function it belongs to. :data:`KERNELS` lists, per library function, the operators that do its work.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["KERNELS", "Reaches", "ShortcutError", "kernels_of"]


class ShortcutError(RuntimeError):
    """Raised when a checked function calls or reaches what an exercise's check made unavailable."""


_SOFTMAX = ("softmax", "_softmax", "_safe_softmax", "special_softmax", "_softmax_backward_data", "_masked_softmax",
            "_masked_softmax_backward", "_sparse_softmax", "_sparse_softmax_backward_data")  # fmt: skip
_LOG_SOFTMAX = ("log_softmax", "_log_softmax", "special_log_softmax", "_log_softmax_backward_data",
                "_sparse_log_softmax", "_sparse_log_softmax_backward_data")  # fmt: skip
_LOGSUMEXP = ("logsumexp", "special_logsumexp", "logcumsumexp", "_logcumsumexp")
_SDPA = (
    "scaled_dot_product_attention",
    "_scaled_dot_product_attention_math",
    "_scaled_dot_product_attention_math_for_mps",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_fused_attention_overrideable",
    "_fused_sdp_choice",
    "_native_multi_head_attention",
    "_transformer_encoder_layer_fwd",
)
# The last part of a blocked name -> the operators (aten names, without "aten::") that do its work.
KERNELS: dict[str, tuple[str, ...]] = {
    # log_softmax(x).exp() is softmax, s - logsumexp(s) is log_softmax, and fused attention with identity keys and
    # values is a softmax: closing one door closes them all
    "softmax": _SOFTMAX + _LOG_SOFTMAX + _LOGSUMEXP + _SDPA,
    "log_softmax": _SOFTMAX + _LOG_SOFTMAX + _LOGSUMEXP + _SDPA,
    "logsumexp": _LOGSUMEXP,
    "scaled_dot_product_attention": _SDPA,
    "multi_head_attention_forward": _SDPA,
    "MultiheadAttention.forward": _SDPA,
}


def kernels_of(names: Iterable[str]) -> dict[str, str]:
    """Operator name -> the blocked name whose work it does, for every name in ``names`` that :data:`KERNELS` knows
    (by its last part, or its last two for a method such as ``torch.nn.MultiheadAttention.forward``)."""
    found: dict[str, str] = {}
    for dotted in sorted(names, key=lambda name: not name.startswith("torch.")):  # messages name torch's function
        parts = dotted.split(".")
        ops = KERNELS.get(".".join(parts[-2:]), KERNELS.get(parts[-1], ()))
        for op in ops:
            found.setdefault(op, dotted)
    return found


def _operator_name(func: Any) -> str | None:
    """``aten::_softmax`` -> ``"_softmax"`` for an operator or its overload packet; None for anything else."""
    schema = getattr(func, "_schema", None)
    qualified = schema.name if schema is not None else getattr(func, "_qualified_op_name", None)
    if not isinstance(qualified, str) or "::" not in qualified:
        return None
    return qualified.split("::", 1)[1]


class _FunctionDoor(TorchFunctionMode):
    def __init__(self, reaches: Reaches):
        super().__init__()
        self.reaches = reaches

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.reaches.check(func)
        return func(*args, **(kwargs or {}))


class _KernelDoor(TorchDispatchMode):
    def __init__(self, reaches: Reaches):
        super().__init__()
        self.reaches = reaches

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.reaches.check(func)
        return func(*args, **(kwargs or {}))


class Reaches:
    """``with Reaches(originals, kernels, who):`` raises :class:`ShortcutError` when the code inside calls one of
    ``originals`` (id of a function object -> its dotted name) or reaches an operator of ``kernels``
    (:func:`kernels_of`), by any name. Nothing is recorded outside the ``with`` block."""

    def __init__(self, originals: dict[int, str], kernels: dict[str, str], who: str = "you", codes=None):
        self.originals, self.kernels, self.who = originals, kernels, who
        self.codes = codes or {}  # code object -> dotted name: the blocked Python functions, however referenced
        self._doors = (_FunctionDoor(self), _KernelDoor(self))
        self._profile = None

    def check(self, func: Any) -> None:
        dotted = self.originals.get(id(func))
        if dotted is not None:
            raise ShortcutError(self._message(dotted, dotted))
        op = _operator_name(func)
        if op is not None and op in self.kernels:
            raise ShortcutError(self._message(f"aten::{op}", self.kernels[op]))

    def _message(self, reached: str, blocked_name: str) -> str:
        what = reached if reached == blocked_name else f"{reached} (the work of {blocked_name})"
        return f"{what} is not available in this check: the exercise asks {self.who} to do its work without it"

    def _calls(self, frame: Any, event: str, arg: Any) -> None:
        """sys.setprofile's hook: a call of a blocked Python function's code, whatever held the function."""
        if event == "call" and frame.f_code in self.codes:
            dotted = self.codes[frame.f_code]
            raise ShortcutError(self._message(dotted, dotted))

    def __enter__(self) -> Reaches:
        if self.originals or self.kernels:
            for door in self._doors:
                door.__enter__()
        if self.codes:
            self._profile = sys.getprofile()
            sys.setprofile(self._calls)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.codes:
            sys.setprofile(self._profile)  # (a raise in the hook has already removed it)
        if self.originals or self.kernels:
            for door in reversed(self._doors):
                door.__exit__(*exc)
