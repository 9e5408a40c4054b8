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
library function it belongs to. :data:`KERNELS` lists, per library function, the operators that do its work beyond
the operator of its own name (``F.one_hot`` is ``aten::one_hot``; ``nn.Conv2d`` is ``aten::convolution`` and five
backend kernels). A third watch, ``sys.setprofile``, sees the calls that leave the two doors' sight: a thread (the
modes belong to the thread that opened them), a tensor handed to NumPy, a Tensor subclass made by the answer (its
``__torch_function__`` could do the work later, when the checker reads the result), torch's Python copies of its
operators (``torch._refs``, ``torch._decomp``), and, where an autograd function is blocked, the autograd engine.
A refusal fails the check even when the answer catches the ``ShortcutError`` and carries on.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from .integrity import trusted_mode_codes

__all__ = ["AUTOGRAD_FUNCTIONS", "KERNELS", "Reaches", "ShortcutError", "blocks_autograd", "kernels_of"]


class ShortcutError(RuntimeError):
    """Raised when a checked function calls or reaches what an exercise's check made unavailable."""


_NUMPY = "Tensor.numpy (NumPy)"  # an honest slip more often than a shortcut: the refusal says the rule and why
NUMPY_REFUSED = ("NumPy is not available in this check: {who} handed a tensor to NumPy (Tensor.numpy, which "
                 "np.asarray or np.exp of a tensor call too). This exercise asks for PyTorch tensor operations only: "
                 "its check watches every PyTorch operation the answer runs, to refuse the library functions that "
                 "would do its work, and cannot see what NumPy computes. Keep your values as tensors and use torch's "
                 "functions (torch.exp, torch.where, .sum(dim=...), @) instead; notebook 00, section 6, lists the "
                 "exercises with this rule")  # fmt: skip
_SOFTMAX = ("softmax", "_softmax", "_safe_softmax", "special_softmax", "_softmax_backward_data", "_masked_softmax",
            "_masked_softmax_backward", "_sparse_softmax", "_sparse_softmax_backward_data")  # fmt: skip
_LOG_SOFTMAX = ("log_softmax", "_log_softmax", "special_log_softmax", "_log_softmax_backward_data",
                "_sparse_log_softmax", "_sparse_log_softmax_backward_data")  # fmt: skip
_LOGSUMEXP = ("logsumexp", "special_logsumexp", "logcumsumexp", "_logcumsumexp")
_SDPA = ("scaled_dot_product_attention", "_scaled_dot_product_attention_math",
         "_scaled_dot_product_attention_math_for_mps", "_scaled_dot_product_flash_attention",
         "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_efficient_attention",
         "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_fused_attention_overrideable", "_fused_sdp_choice",
         "_native_multi_head_attention", "_transformer_encoder_layer_fwd")  # fmt: skip
_CONV = ("conv2d", "convolution", "_convolution", "mkldnn_convolution", "_slow_conv2d_forward", "thnn_conv2d",
         "_nnpack_spatial_convolution", "cudnn_convolution", "_conv_depthwise2d", "slow_conv_dilated2d")  # fmt: skip
_LAYER_NORM = ("layer_norm", "native_layer_norm")
_FUSED_MHA = ("_native_multi_head_attention", "_transformer_encoder_layer_fwd")  # a whole layer (its heads: anyone's)
# What rearranges by an index map (a patchify run on torch.arange, a one-hot permutation matrix): not reshape/permute
_INDEXING = ("index", "index_put", "index_put_", "_index_put_impl_", "gather", "scatter", "scatter_", "scatter_add",
             "scatter_add_", "take", "index_select", "index_copy", "index_copy_", "index_add", "index_add_",
             "masked_scatter", "masked_scatter_", "put", "put_", "embedding", "one_hot")  # fmt: skip
# The last part (or two) of a blocked name -> the operators (aten names, without "aten::") that do its work, beyond
# the operator of the same name (:func:`kernels_of` adds that one by itself: torch.gru_cell -> aten::gru_cell).
_SOFTMAX_NAMES = ("softmax", "log_softmax", "softmin", "logsumexp", "Softmax.forward", "LogSoftmax.forward",
                  "Softmin.forward")  # fmt: skip
KERNELS: dict[str, tuple[str, ...]] = {
    # log_softmax(x).exp() is softmax, s - logsumexp(s) is log_softmax, softmin(x) is softmax(-x), and fused attention
    # with identity keys and values is a softmax: closing one door closes them all, whichever name was blocked
    **dict.fromkeys(_SOFTMAX_NAMES, _SOFTMAX + _LOG_SOFTMAX + _LOGSUMEXP + _SDPA),
    "scaled_dot_product_attention": _SDPA,
    **dict.fromkeys(("multi_head_attention_forward", "MultiheadAttention.forward"), _FUSED_MHA),
    "TransformerEncoderLayer.forward": _SDPA,
    "unpatchify": _INDEXING,
    "embedding_bag": ("_embedding_bag", "_embedding_bag_forward_only"),  # a mean of rows (11's masked_mean)
    **dict.fromkeys(("conv2d", "convolution", "Conv2d.forward"), _CONV),
    **dict.fromkeys(("gru_cell", "GRUCell.forward"), ("gru_cell", "_thnn_fused_gru_cell")),
    "GRU.forward": ("gru", "gru_cell", "_thnn_fused_gru_cell"),
    **dict.fromkeys(("lstm_cell", "LSTMCell.forward"), ("lstm_cell", "_thnn_fused_lstm_cell")),
    "LSTM.forward": ("lstm", "lstm_cell", "_thnn_fused_lstm_cell"),
    **dict.fromkeys(("layer_norm", "LayerNorm.forward"), _LAYER_NORM),
    "group_norm": ("group_norm", "native_group_norm"),
    **dict.fromkeys(("fold", "Fold.forward"), ("col2im",)),
    "PixelShuffle.forward": ("pixel_shuffle",),
    "CosineSimilarity.forward": ("cosine_similarity",),
}
# Where a blocked function's name is also the name of the operator that does its work (torch.nn.functional.one_hot
# and aten::one_hot): functions of these modules. (torch.masked.mean is not aten::mean, which any answer may use.)
_SAME_NAME_OWNERS = ("torch", "torch.Tensor", "torch.nn.functional", "torch.special", "torch._VF", "torch._C._nn",
                     "torch._C._VariableFunctions")  # fmt: skip


def kernels_of(names: Iterable[str]) -> dict[str, str]:
    """Operator name -> the blocked name whose work it does, for every name in ``names``: the operators that
    :data:`KERNELS` lists for it (by its last part, or its last two for a method such as
    ``torch.nn.MultiheadAttention.forward``), and for a function of torch's own modules the operator of its name."""
    found: dict[str, str] = {}
    for dotted in sorted(names, key=lambda name: not name.startswith("torch.")):  # messages name torch's function
        owner, _, last = dotted.rpartition(".")
        ops = KERNELS.get(".".join(dotted.split(".")[-2:]), KERNELS.get(last, ()))
        if owner in _SAME_NAME_OWNERS and hasattr(torch.ops.aten, last):
            ops = (last, *ops)
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
    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # else torch wraps __torch_dispatch__ in _disable_dynamo, whose first call imports torch._dynamo (1.5 s of CPU)
        return False

    def __init__(self, reaches: Reaches):
        super().__init__()
        self.reaches = reaches

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.reaches.check(func)
        return func(*args, **(kwargs or {}))


# Blocking any of these blocks the autograd engine itself (every backward pass runs through its run_backward):
# torch.autograd.backward, torch.func.vjp and a hand-made Jacobian reach it as Tensor.backward does.
AUTOGRAD_FUNCTIONS = ("torch.autograd.grad", "torch.autograd.backward", "torch.Tensor.backward",
                      "torch.autograd.functional.jacobian", "torch.func.vjp", "torch.func.grad",
                      "torch.func.jacrev")  # fmt: skip
_ENGINE = "_EngineBase.run_backward"
_THREADS = ("start_new_thread", "start_joinable_thread", "start_new")  # _thread's ways to start a thread
# A Tensor subclass of the answer's own could do the work later, in its __torch_function__, when the checker reads it
_SUBCLASSES = frozenset({"Tensor.as_subclass", "TensorBase.as_subclass", "Tensor._make_subclass",
                         "TensorBase._make_subclass", "Tensor._make_wrapper_subclass",
                         "TensorBase._make_wrapper_subclass"})  # fmt: skip
_C_WATCHED = frozenset({"Tensor.numpy", "TensorBase.numpy", _ENGINE, *_THREADS, *_SUBCLASSES})
# Python copies of PyTorch's operators (primTorch references, decompositions): they do an operator's work with
# other operators, so an exercise that blocks an operator blocks them.
_PYTHON_OPERATORS = ("torch._refs", "torch._decomp", "torch._prims")
# torch._C's context managers that switch the two doors off (the modes are skipped inside them): refused while the
# doors are open, unless torch or the course calls them
_SWITCHES = ("_DisableTorchDispatch", "DisableTorchFunction")


def _called_from_outside(frame: Any) -> bool:
    """Whether the function of ``frame`` was called by code outside torch and importlib (an answer), not by torch
    itself (which imports and registers its decompositions lazily)."""
    caller = frame.f_back.f_globals.get("__name__") or "" if frame.f_back is not None else ""
    return not caller.startswith(("torch", "importlib"))


def _module_of(function: Any) -> str:
    """The module of a C function or method (a Rust library's: ``Tokenizer.encode``'s is its instance's type's)."""
    owner = getattr(function, "__self__", None)
    return getattr(function, "__module__", None) or getattr(type(owner), "__module__", None) or ""


def blocks_autograd(names: Iterable[str]) -> bool:
    """Whether blocking ``names`` blocks the autograd engine: one of them is in :data:`AUTOGRAD_FUNCTIONS`."""
    return not set(AUTOGRAD_FUNCTIONS).isdisjoint(names)


class Reaches:
    """``with Reaches(originals, kernels, who):`` raises :class:`ShortcutError` when the code inside calls one of
    ``originals`` (id of a function object -> its dotted name) or reaches an operator of ``kernels``
    (:func:`kernels_of`), by any name. Nothing is recorded outside the ``with`` block.

    Also refused inside: switching the doors off (``torch._C._DisableTorchDispatch``, ``DisableTorchFunction``);
    starting a thread (the doors watch the thread they were opened in); with ``kernels``, a
    Python copy of an operator (``torch._refs``, ``torch._decomp``) and a tensor handed to NumPy; with
    ``autograd``, the autograd engine (every backward pass)."""

    def __init__(self, originals: dict[int, str], kernels: dict[str, str], who: str = "you", codes=None,
                 autograd: bool = False, by_name=None, packages: tuple[str, ...] = ()):  # fmt: skip
        self.originals, self.kernels, self.who, self.autograd = originals, kernels, who, autograd
        self.packages = tuple(f"{p}." for p in packages)  # every call into them, Python or C (a Rust library's)
        self.codes = codes or {}  # code object -> dotted name: the blocked Python functions, however referenced
        self.by_name = by_name or {}  # "module.function" of code that runs -> dotted name (modules not imported)
        self._doors = (_FunctionDoor(self), _KernelDoor(self))
        self._profile = None
        self._switches: dict[str, Any] = {}  # torch._C's switches, replaced while the doors are open
        self._hook = self._calls  # one bound method, to recognise it
        self._trusted: set[Any] = set()  # the code of the torch modes that were on before the check began
        self.refused: str | None = None  # the first refusal: it fails the block even if the answer caught it

    def check(self, func: Any) -> None:
        if sys.getprofile() is not self._hook:  # a refusal raised in the hook removed it: put it back
            sys.setprofile(self._hook)
        dotted = self.originals.get(id(func))
        if dotted is not None:
            self.refuse(dotted, dotted)
        op = _operator_name(func)
        if op is not None and op in self.kernels:
            self.refuse(f"aten::{op}", self.kernels[op])

    def refuse(self, reached: str, blocked_name: str) -> None:
        """Raise :class:`ShortcutError` for ``reached`` (the work of ``blocked_name``), and remember it."""
        what = reached if reached == blocked_name else f"{reached} (the work of {blocked_name})"
        message = f"{what} is not available in this check: the exercise asks {self.who} to do its work without it"
        numpy = NUMPY_REFUSED.format(who=self.who)  # (notebook 00's list: tests/test_numpy_rule.py)
        message = numpy if reached == _NUMPY else message
        self.refused = message if self.refused in (None, numpy) else self.refused  # a shortcut outranks NumPy
        raise ShortcutError(message)

    def _calls(self, frame: Any, event: str, arg: Any) -> None:
        """sys.setprofile's hook: a call of a blocked Python function's code, whatever held the function, and the
        calls that leave the doors' sight (a thread, NumPy, a Python copy of an operator, the autograd engine)."""
        if event == "call":
            dotted = self.codes.get(frame.f_code)
            module = frame.f_globals.get("__name__") or ""
            if dotted is None and self.by_name:
                dotted = self.by_name.get(f"{module}.{frame.f_code.co_name}")
            if dotted is None and self.kernels and module.startswith(_PYTHON_OPERATORS) and _called_from_outside(frame):
                dotted = f"{module}.{frame.f_code.co_name}"
            if dotted is None and f"{module}.".startswith(self.packages or ("\0",)):
                dotted = f"{module.split('.')[0]} ({module}.{frame.f_code.co_name})"  # its Python code
        elif event == "c_call":
            name = getattr(arg, "__qualname__", None)
            if self.packages and f"{_module_of(arg)}.".startswith(self.packages):  # (refuse raises)
                self.refuse(*[f"{_module_of(arg).split('.')[0]} ({name})"] * 2)
            if name not in _C_WATCHED:
                return
            dotted = _NUMPY if self.kernels and name in ("Tensor.numpy", "TensorBase.numpy") else None
            if name == _ENGINE and self.autograd:
                dotted = "the autograd engine (any backward pass)"
            if name in _THREADS and getattr(arg, "__module__", None) == "_thread":
                dotted = "starting a thread"
            elif name in _SUBCLASSES and not (frame.f_globals.get("__name__") or "").startswith("torch"):
                dotted = "making a Tensor subclass"  # (torch's own, nn.Parameter, are made by torch's code)
            if dotted is not None and self._in_a_mode_from_before(frame):
                return
        else:
            return
        if dotted is not None:
            self.refuse(dotted, dotted)

    def _guarded(self, name: str, original: Any) -> Any:
        def switch(*args: Any, **kwargs: Any) -> Any:
            if not (sys._getframe(1).f_globals.get("__name__") or "").startswith(("torch", "course_lib")):
                self.refuse(f"torch._C.{name}", f"torch._C.{name}")  # it switches off what the check watches
            return original(*args, **kwargs)

        return switch

    def _in_a_mode_from_before(self, frame: Any) -> bool:
        """Whether ``frame`` runs inside a torch mode that was on before the check began (the grading machine's own,
        such as a profile of tools/portability.py that rounds like another machine): its calls are not the answer's."""
        while frame is not None and self._trusted:
            if frame.f_code in self._trusted:
                return True
            frame = frame.f_back
        return False

    def __enter__(self) -> Reaches:
        self._trusted = trusted_mode_codes()  # the grading machine's and torch's own: not a cell's, however disguised
        if self.originals or self.kernels:
            for door in self._doors:
                door.__enter__()
            self._switches = {name: getattr(torch._C, name) for name in _SWITCHES}
            for name, original in self._switches.items():
                setattr(torch._C, name, self._guarded(name, original))
        self._profile = sys.getprofile()
        sys.setprofile(self._hook)
        return self

    def __exit__(self, exc_type: Any, *exc: object) -> None:
        # (a raise in the hook has already removed it) cProfile's profiler (%%prun): its own enable() puts it back
        (self._profile.enable if hasattr(self._profile, "enable") else lambda: sys.setprofile(self._profile))()
        if self.originals or self.kernels:
            for name, original in self._switches.items():
                setattr(torch._C, name, original)
            for door in reversed(self._doors):
                door.__exit__(exc_type, *exc)
        if self.refused is not None and (exc_type is None or exc_type is ShortcutError and str(exc[0]) != self.refused):
            raise ShortcutError(self.refused)  # refused and caught (still refused), or a shortcut caught before NumPy
