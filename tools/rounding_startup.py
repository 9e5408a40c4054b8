"""IPython start-up file of the ``rounding`` profiles of tools/portability.py: one machine rounds like many.

Why: two machines that run the same notebook compute the same mathematics with other kernels: another order of the
additions in a matrix product or a sum, another polynomial for ``exp`` or ``tanh``, a fused multiply-add here and
none there. Each result then differs in its last bits, and a long training run can turn that into another second
decimal. Switches that pick other kernels (the CPU profiles) only reach the machines this one can imitate; this file
imitates the *effect* on every machine at once: after every floating-point compute operation (matrix products,
reductions, softmax, ``exp``/``log``/``tanh`` and the like, norms, convolutions, fused attention, random normal
draws; forward and backward, since a dispatch mode sees the operations below autograd), every rounded entry of the
result moves by a few units in the last place (ulp).

The move is a fixed function of the entry's bits and a salt (``COURSE_ROUNDING_SALT``, an int): the same inputs give
the same outputs, as on real hardware, so a notebook that recomputes something and checks equality still passes;
another salt is another machine. What is left alone, because every machine computes it the same:
- operations that only move, select or compare values (views, copies, indexing, ``cat``, ``where``, ``max``,
  ``sort``, ``relu``...), and the single IEEE operations ``+ - * /`` and ``sqrt`` of two tensors, which the standard
  rounds correctly everywhere;
- entries whose low mantissa bits are all zero (8 bits in float32): zeros, small integers, halves and quarters, the
  values that exact arithmetic on counts and one-hot vectors produces. A rounded result has such bits with
  probability 1/256;
- entries equal to the same entry of one of the operation's inputs: ``w + 0 * g`` is ``w`` on every machine;
- half precision: CPU kernels compute it in float32 and round once, so machines agree unless a float32 difference
  straddles a half-precision rounding boundary.

Its own work is left out of ``time.perf_counter`` (see ``_perf_counter``), so that timing claims still time the
arithmetic. ``time.process_time`` is left as it is (measuring this module's own CPU time per operation would cost more
than the operations): a claim timed with it includes this profile's work, which grows with the arithmetic it moves.

It also checks the *form* of what is printed, and writes a warning to stderr (which strict nbval reports as a
difference) for a float tensor whose entries all lie within a few ulp of integers, but not all on them: it prints as
``tensor([1.0000, 1.0000])`` here and as ``tensor([1., 1.])`` on a machine where they land exactly (a softmax's row
sums, say); and for a number taken out of a tensor (``.item()``, ``.tolist()``) and formatted with a precision right at
a rounding boundary, where 4 ulp of its dtype would change the printed digits. Print such values with an explicit
format, fewer digits, or print the check they support.
"""

import math
import os
import sys
import time

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

_SALT = int(os.environ.get("COURSE_ROUNDING_SALT", "1"))
_STEPS = np.array([-3, -2, -1, 0, 1, 1, 2, 3])  # ulp; seven in eight of the rounded entries move
# The dtypes that move, with the integer type of their bits and how many low mantissa bits must be zero for an entry
# to count as exact. Half precision does not move: CPU kernels compute it in float32 and round once, so two machines
# give the same half-precision result unless a float32 difference happens to straddle a rounding boundary.
_BITS = {torch.float32: (np.int32, 8), torch.float64: (np.int64, 20)}

_aten = torch.ops.aten
# Operations that compute the same bits on every machine: they move, select or compare values, or are one correctly
# rounded IEEE operation per entry. Everything else that returns floating-point numbers is moved.
_EXACT = {
    getattr(_aten, name)
    for name in """
    add sub rsub mul div neg abs sqrt reciprocal relu relu_ threshold threshold_backward hardtanh clamp clamp_min
    clamp_max maximum minimum max min amax amin argmax argmin sort topk kthvalue median where masked_fill
    masked_fill_ masked_scatter masked_select index index_put index_put_ index_select index_add gather scatter
    scatter_ embedding embedding_dense_backward take cat stack split split_with_sizes chunk unbind narrow slice
    select clone copy copy_ _to_copy to detach lift_fresh alias contiguous _unsafe_view view reshape expand permute
    transpose t unsqueeze squeeze flatten unflatten flip roll repeat tile tril triu diag_embed diagonal zeros zeros_like
    ones ones_like full full_like empty empty_like empty_strided new_zeros new_ones new_full new_empty fill fill_
    zero_ arange linspace eye scalar_tensor _local_scalar_dense sign floor ceil round trunc frac eq ne lt le gt ge
    logical_not logical_and logical_or isnan isinf isfinite nan_to_num constant_pad_nd pad _reshape_alias
    as_strided unfold col2im im2col resize_ set_ rand rand_like uniform_ bernoulli bernoulli_ randint randperm
    multinomial dropout native_dropout native_dropout_backward _unsafe_index sum_to_size
    """.split()
    if hasattr(_aten, name)
}
_KIND = {}  # operation -> ("exact" | "new" | "inplace", positions of the arguments it writes), decided once


def _kind(func):
    if func not in _KIND:
        schema = func._schema
        written = tuple(i for i, a in enumerate(schema.arguments) if a.alias_info and a.alias_info.is_write)
        if func.overloadpacket in _EXACT or any(r.alias_info and not r.alias_info.is_write for r in schema.returns):
            _KIND[func] = ("exact", ())  # a view returns (an alias of) its input: moving it would move the input
        elif written:
            _KIND[func] = ("inplace", written)  # in place, out= and foreach_ operations: move what they write
        else:
            _KIND[func] = ("new", ())
    return _KIND[func]


def _floats(tree):
    """The strided CPU float32/float64 tensors in an argument or result (a tensor, or a list or tuple of them)."""
    items = tree if isinstance(tree, (list, tuple)) else (tree,)
    return [
        t
        for t in items
        if isinstance(t, torch.Tensor) and t.dtype in _BITS and t.device.type == "cpu" and t.layout == torch.strided
    ]


def _nudge(t, before=()):
    """Move the rounded entries of ``t`` by a few ulp, in place (see the module doc). An entry stays where it equals
    the entry at the same place of a same-shaped tensor in ``before`` (the operation's inputs): ``w + 0 * g`` is ``w``
    on every machine."""
    if t.numel() == 0:
        return
    int_type, low = _BITS[t.dtype]
    values = t.detach().numpy()
    raw = values.view(int_type)
    key = raw.astype(np.uint32) if int_type is np.int64 else raw.view(np.uint32)  # the low 32 bits
    pick = ((key + np.uint32(_SALT)) * np.uint32(2654435761)) >> np.uint32(29)  # 0..7, from the value and the salt
    moved = raw + _STEPS[pick].astype(int_type)
    keep = (raw & ((1 << low) - 1)) == 0  # zeros, small integers, halves: what exact arithmetic gives
    keep |= ~np.isfinite(moved.view(values.dtype)) | (np.signbit(moved.view(values.dtype)) != np.signbit(values))
    for other in before:
        if other.shape == t.shape and other.dtype == t.dtype:
            keep |= other.detach().numpy() == values
    np.copyto(raw, moved, where=~keep)


class RoundLikeAnotherMachine(TorchDispatchMode):
    """Every floating-point result of a compute operation moves by a few ulp, deterministically (see the module)."""

    course_profile = True  # the machine's own mode: the exercise checks trust it (course_lib.classroom.integrity)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        global _own_seconds
        start = _clock()
        kwargs = kwargs or {}
        kind, written = _kind(func)
        if kind == "exact":
            return func(*args, **kwargs)
        inputs = [t for a in (*args, *kwargs.values()) for t in _floats(a)]
        if kind == "inplace":  # what it writes: the arguments marked (a!) in its schema, positional or by name
            names = [func._schema.arguments[i].name for i in written]
            targets = [t for i in written if i < len(args) for t in _floats(args[i])]
            targets += [t for name in names if name in kwargs for t in _floats(kwargs[name])]
            written_ids = {id(t) for t in targets}
            inputs = [t.clone() if id(t) in written_ids else t for t in inputs]  # as they were before the write
        before = _clock()
        out = func(*args, **kwargs)
        after = _clock()
        if kind == "new":
            targets = _floats(out if isinstance(out, (list, tuple)) else [out])
        with np.errstate(over="ignore"):  # the hash multiplies with wrap-around
            for t in targets:
                _nudge(t, inputs)
        _own_seconds += (before - start) + (_clock() - after)
        return out


# Moving results costs time that no real machine spends (a pass over every result): the notebooks' clock leaves it
# out, so that a claim about time still measures the arithmetic. (Python's cost of calling this mode at all, a few
# microseconds per operation, cannot be left out.)
_clock = time.perf_counter
_own_seconds = 0.0


def _perf_counter() -> float:
    return _clock() - _own_seconds


time.perf_counter = _perf_counter


_mode = RoundLikeAnotherMachine()
_mode.__enter__()  # the kernel's main thread, where the cells run (autograd's backward inherits the mode)

# The form checks. First, a float tensor printed in a form that another machine's last bits would change.
_repr = torch.Tensor.__repr__


def _near_integers_but_not_on_them(t) -> bool:
    if not t.is_floating_point() or t.numel() == 0 or t.is_complex():
        return False
    with torch.no_grad():
        values = t.detach().to("cpu", torch.float64)
        finite = values[torch.isfinite(values)]
        if finite.numel() == 0:
            return False
        nearest = finite.round()
        ulp = torch.finfo(t.dtype).eps * nearest.abs().clamp_min(1.0)
        close = (finite - nearest).abs() <= 4 * ulp
        return bool(close.all()) and not bool((finite == nearest).all())


def _checked_repr(self, *args, **kwargs):
    text = _repr(self, *args, **kwargs)
    if _near_integers_but_not_on_them(self):
        print(
            "rounding profile: this tensor prints as "
            f"{text.splitlines()[0][:60]!r}, and as integers ('1.') where its entries land exactly on them: "
            "print it with an explicit format or print the check",
            file=sys.stderr,
        )
    return text


torch.Tensor.__repr__ = _checked_repr


# Second, a number printed right at a rounding boundary: a float taken out of a tensor (.item(), .tolist()) remembers
# its dtype's precision, and formatting it with a precision (f"{x:.2f}") warns when moving it by 4 units in the last
# place of that dtype would change the text (0.12500001 and 0.12499999 print as 0.13 and 0.12). Values that exact
# arithmetic gives (the low mantissa bits all zero, as above) are left alone: every machine prints them alike.
class _CheckedFloat(float):
    __slots__ = ("_ulp",)

    def __format__(self, spec):
        text = float.__format__(self, spec)
        if spec and spec[-1:] in "eEfFgG%" and "." in spec:
            value, step = float(self), 4 * self._ulp
            if {float.__format__(value - step, spec), float.__format__(value + step, spec)} != {text}:
                print(
                    f"rounding profile: {value!r} prints as {text!r} with {spec!r}, and otherwise if it moves by "
                    "4 units in its last place: print fewer digits, or the check it supports",
                    file=sys.stderr,
                )
        return text


def _checked_float(value, dtype):
    if type(value) is not float or dtype not in _BITS or not math.isfinite(value) or value == 0.0:
        return value
    int_type, low = _BITS[dtype]
    raw = np.array(value, dtype=np.float32 if dtype == torch.float32 else np.float64).view(int_type)
    if int(raw) & ((1 << low) - 1) == 0:  # exact-looking
        return value
    checked = _CheckedFloat(value)
    checked._ulp = math.ldexp(1.0, math.frexp(value)[1] - 24) if dtype == torch.float32 else math.ulp(value)
    return checked


_item, _tolist = torch.Tensor.item, torch.Tensor.tolist


def _checked_item(self):
    return _checked_float(_item(self), self.dtype)


def _checked_tolist(self):
    def walk(x):
        return [walk(v) for v in x] if isinstance(x, list) else _checked_float(x, self.dtype)

    return walk(_tolist(self))


torch.Tensor.item, torch.Tensor.tolist = _checked_item, _checked_tolist
