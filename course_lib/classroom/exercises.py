"""What graded exercises need besides the checkers: per-student numbers, blocked shortcuts, unanswered placeholders.

Three tools, each for one way a grade could be wrong:

- **Variants** (:func:`variant_numbers`). A by-hand exercise takes its numbers from the notebook's ``VARIANT``
  (``0`` in the course's notebooks: the numbers the text states). The student tool's ``--variant-seed`` writes another
  value there (a student id, say), and every by-hand exercise then draws its own numbers from it, so two students
  do not share answers. Checks recompute the expected answers from the numbers, never hold them as literals.
- **Blocked shortcuts** (:func:`blocked`). An exercise whose point is to implement something is checked with the
  course's and PyTorch's functions that would do the work made unavailable: calling one, by its name or by any other
  door to the same operators of PyTorch's dispatcher, raises :class:`ShortcutError`.
  :func:`course_lib.classroom.checks.check_function` does this with its ``without=`` argument.
- **Unanswered placeholders** (:func:`unanswered`). The student version replaces a value answer ``x = ...`` by
  ``x = unanswered("Exercise N: x")``, which raises ``NotImplementedError`` as soon as a check touches it.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from ..validate import text
from .claims import blocking
from .delegates import EXTRA_BY_NAME, dotted_name, work_of
from .messages import say
from .reach import Reaches, ShortcutError, blocks_autograd, kernels_of

__all__ = ["ATTENTION_FUNCTIONS", "SOFTMAX_FUNCTIONS", "ShortcutError", "Unanswered", "blocked", "unanswered",
           "variant_generator", "variant_numbers"]  # fmt: skip

# Names for check_function(without=...) that several exercises share: every spelling of a softmax in PyTorch ...
SOFTMAX_FUNCTIONS = tuple(
    f"{owner}.{fn}"
    for owner in ("torch", "torch.Tensor", "torch.special", "torch.nn.functional")
    for fn in ("softmax", "log_softmax", "logsumexp")
    if (owner, fn) != ("torch.nn.functional", "logsumexp")  # torch.nn.functional has no logsumexp
) + ("torch.nn.Softmax.forward", "torch.nn.LogSoftmax.forward", "course_lib.attention_weights")
# ... and every function that computes attention in one call
ATTENTION_FUNCTIONS = ("course_lib.scaled_dot_product_attention", "course_lib.attention_weights",
                       "course_lib.chunked_attention", "course_lib.sliding_window_attention",
                       "torch.nn.functional.scaled_dot_product_attention",
                       "torch.nn.functional.multi_head_attention_forward",
                       "torch.nn.MultiheadAttention.forward")  # fmt: skip


# ---------------------------------------------------------------- variants: per-student numbers


def _is_default(variant: object) -> bool:
    return variant is None or (not isinstance(variant, bool) and variant in (0, "0", ""))


def variant_generator(variant: int | str, exercise: str) -> torch.Generator:
    """A CPU ``torch.Generator`` seeded from ``(variant, exercise)``: the same on every machine and Python.

    The seed is a SHA-256 of ``f"{variant}/{exercise}"`` (not Python's ``hash``, which changes between runs), so
    ``variant="s1234567"`` gives every exercise of every notebook its own stream, and the same stream each time.
    """
    if not isinstance(variant, int | str) or isinstance(variant, bool):
        raise TypeError(f"variant must be an int or a str (a student id, say), got {type(variant).__name__}")
    text("exercise", exercise)
    digest = hashlib.sha256(f"{variant}/{exercise}".encode()).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") >> 1)


def variant_numbers(variant: int | str | None, exercise: str, default: Any, draw: Callable[[torch.Generator], Any]):
    """The numbers of one by-hand exercise: ``default`` for variant 0, else ``draw(generator)``.

    Args:
        variant: the notebook's ``VARIANT``; ``0`` (or ``None``, ``"0"``) keeps the numbers the text states.
        exercise: a name unique in the course, e.g. ``"08-1"`` (notebook 08, exercise 1): other exercises draw
            other numbers from the same variant.
        default: what to return for variant 0.
        draw: ``draw(generator) -> numbers``, called with :func:`variant_generator` ``(variant, exercise)``; it
            should draw numbers of the same kind as ``default`` (the same structure, sizes a person can work with).
    """
    text("exercise", exercise)
    if _is_default(variant):
        return default
    return draw(variant_generator(variant, exercise))


# ---------------------------------------------------------------- blocked shortcuts


def _resolve(dotted: str) -> tuple[object, str]:
    """``"torch.nn.functional.softmax"`` -> (the module ``torch.nn.functional``, ``"softmax"``); also classes:
    ``"torch.nn.Conv2d.forward"`` -> (the class ``Conv2d``, ``"forward"``)."""
    parts = text("name", dotted).split(".")
    if parts[-1] == "*" and len(parts) > 1:  # every function of a package: (the package, "*")
        return importlib.import_module(".".join(parts[:-1])), "*"
    if len(parts) < 2:
        raise ValueError(f"name must be dotted, like 'torch.softmax', got {dotted!r}")
    for cut in range(len(parts) - 1, 0, -1):  # the longest importable module prefix
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:-1]:
            owner = getattr(owner, attr)
        if not hasattr(owner, parts[-1]):
            raise ValueError(f"{dotted!r} names nothing: {'.'.join(parts[:-1])} has no attribute {parts[-1]!r}")
        return owner, parts[-1]
    raise ValueError(f"{dotted!r}: no importable module at its start")


def _refusal(dotted: str, reaches: Reaches) -> Callable[..., Any]:
    def refuse(*args, **kwargs):
        reaches.refuse(dotted, dotted)

    refuse.__name__ = refuse.__qualname__ = dotted.rsplit(".", 1)[-1]
    return refuse


def _captured(functions: Sequence[Callable[..., Any]]) -> list[tuple[Any, str, Any]]:
    """Where ``functions`` hold objects of their own: (function, "__defaults__" or "__kwdefaults__", the value) and
    (closure cell, "cell_contents", the value). A default argument ``f=cl.generate`` or a closure over it is a
    reference that no module or namespace shows."""
    found = []
    for fn in functions:
        fn = getattr(fn, "__func__", fn)  # a bound method's function
        for attr in ("__defaults__", "__kwdefaults__"):
            if getattr(fn, attr, None):
                found.append((fn, attr, getattr(fn, attr)))
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                found.append((cell, "cell_contents", cell.cell_contents))
            except ValueError:  # an empty cell
                pass
    return found


def _replaced(value: Any, originals: dict[int, str], reaches: Reaches) -> Any:
    """``value`` with every blocked original in it (itself, or an item of a defaults tuple or dict) refused."""
    if isinstance(value, tuple):
        return tuple(_replaced(v, originals, reaches) for v in value)
    if isinstance(value, dict):
        return {k: _replaced(v, originals, reaches) for k, v in value.items()}
    return _refusal(originals[id(value)], reaches) if id(value) in originals else value


def _codes(names: Sequence[str]) -> dict[Any, str]:
    """Code object -> how a refusal names it, for every blocked Python function and what does its work besides it
    (its unchecked twins, :func:`course_lib.classroom.delegates.work_of`): a call of that code is refused however the
    function was held (a list, a staticmethod, a subclass's method)."""
    codes: dict[Any, str] = {}
    for dotted in names:
        owner, attr = _resolve(dotted)
        function = inspect.unwrap(getattr(owner, attr))  # a decorator's wrapper code is shared by many
        if isinstance(function, type):  # a blocked class (torch.nn.Linear): its own __init__, by any name
            owner, function = function, vars(function).get("__init__")
        function = getattr(function, "__func__", function)
        twins = work_of(function, owner if isinstance(owner, type) else None) if function is not None else {}
        for code, name in [(getattr(function, "__code__", None), dotted)] + [
            (twin.__code__, f"{twin_name} (the work of {dotted})") for twin, twin_name in twins.items()
        ]:
            if code is not None:
                codes.setdefault(code, name)
    return codes


def _by_name(names: Sequence[str]) -> dict[str, str]:
    """Qualified name of code that runs -> blocked name, for the functions :data:`delegates.EXTRA_BY_NAME` lists
    (in modules a check must not import)."""
    found = {}
    for dotted in names:
        function = getattr(*_resolve(dotted))
        course = str(getattr(function, "__module__", "")).startswith("course_lib.")
        for inner in EXTRA_BY_NAME.get(dotted_name(function), ()) if course else ():
            found[inner] = f"{inner} (the work of {dotted})"
    return found


@contextmanager
def blocked(names: Sequence[str], *, who: str = "you", namespace: Mapping[str, Any] | None = None,
            functions: Sequence[Callable[..., Any]] = (), own: Mapping[Any, str] | None = None,
            ) -> Iterator[tuple[str, ...]]:  # fmt: skip
    """Within the ``with`` block, every function named in ``names`` raises :class:`ShortcutError`.

    Args:
        names: dotted names, e.g. ``("torch.softmax", "torch.Tensor.softmax", "course_lib.split_heads",
            "torch.nn.Conv2d.forward")``; ``"tokenizers.*"``: every function of an installed library.
        who: how the message names the one who may not use them ("split_heads", "you").
        namespace: a dict of globals (a notebook's, where ``from course_lib import split_heads`` may have bound
            the same function to another name); names in it that are bound to a blocked object are blocked too.
        functions: the functions under test: a blocked object held in their default arguments
            (``def f(x, g=cl.split_heads)``) or their closures is blocked there too.
        own: code object -> name, the check's own functions (:func:`course_lib.classroom.own.own_functions`),
            refused by their code.

    Also blocked: the same object under any name in a module of ``course_lib`` (the module that defines it, and
    modules that imported it, such as ``course_lib.multihead.split_heads`` for ``course_lib.split_heads``), and,
    while the block runs, the object called by any other name and the operators that do its work, reached by any
    path (``torch.ops.aten._softmax`` for ``torch.softmax``; :mod:`course_lib.classroom.reach`), and, by their code,
    the functions that do a course function's work unchecked (``course_lib.multihead._split`` for
    ``course_lib.split_heads``, ``MultiHeadAttention._forward`` for its ``forward``; :mod:`.delegates`).
    Everything is restored on exit, also after an error. Yields the names blocked (each once).
    """
    if isinstance(names, str):
        raise TypeError("names must be a sequence of dotted names, not one string: write ('torch.softmax',)")
    names = tuple(dict.fromkeys(names))
    named = [n for n in names if not n.endswith(".*")]
    packages = tuple(_resolve(n)[0].__name__ for n in names if n.endswith(".*"))  # an installed library, whole
    modules = [m for key, m in list(sys.modules.items()) if key.split(".")[0] == "course_lib" and m is not None]
    targets: list[tuple[Any, str, str]] = []  # (owner, attribute, the dotted name shown in messages)
    originals: dict[int, str] = {}
    for dotted in named:
        owner, attr = _resolve(dotted)
        original = getattr(owner, attr)
        originals[id(original)] = dotted
        targets.append((owner, attr, dotted))
        for module in modules:
            targets += [(module, key, dotted) for key, value in list(vars(module).items())
                        if value is original and (module, key) != (owner, attr)]  # fmt: skip
        if namespace is not None:
            targets += [(namespace, key, dotted) for key, value in namespace.items() if value is original]
    codes = {**(own or {}), **_codes(named)}  # before anything is replaced: the originals' code
    # the doors without a name (classroom.reach); it also remembers every refusal, caught by the answer or not
    reaches = Reaches(originals, kernels_of(named), who, codes, blocks_autograd(named), _by_name(named), packages)
    saved = []
    blocking().append((names, who))  # an answer run in another kernel is blocked from them too (classroom.serve)
    try:
        for owner, attr, dotted in targets:
            if isinstance(owner, dict):
                saved.append((owner, attr, True, owner[attr]))
                owner[attr] = _refusal(dotted, reaches)
            else:
                saved.append((owner, attr, attr in vars(owner), getattr(owner, attr)))
                setattr(owner, attr, _refusal(dotted, reaches))
        for holder, attr, value in _captured(functions):
            items = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else (value,)
            if any(id(v) in originals for v in items):  # by identity: == on tensors is elementwise
                saved.append((holder, attr, True, value))
                setattr(holder, attr, _replaced(value, originals, reaches))
        with reaches:
            yield tuple(names)
    finally:
        blocking().pop()
        for owner, attr, was_own, original in reversed(saved):
            if isinstance(owner, dict):
                owner[attr] = original
            elif was_own:
                setattr(owner, attr, original)
            else:  # it came from a class above, or from a module's lazy __getattr__: remove the override
                delattr(owner, attr)


# ---------------------------------------------------------------- placeholder for unanswered value exercises


class Unanswered:
    """Stands where the student version of a notebook expects a value answer; any use raises NotImplementedError.

    ``q_2 = unanswered("Exercise 1: q_2")`` lets the exercise cell run, and the check after it then fails with
    ``NotImplementedError: Exercise 1: q_2 is not answered yet ...`` instead of a confusing ``NameError``.
    Converting it (``torch.tensor(x)``, ``float(x)``), comparing it, doing arithmetic with it or calling it
    all raise; only ``repr`` works, so that it can be displayed.
    """

    __slots__ = ("what",)

    def __init__(self, what: str = "this exercise"):
        self.what = what

    def _fail(self, *args, **kwargs):
        raise NotImplementedError(
            say(f"{self.what} is not answered yet: replace `unanswered(...)` in the exercise cell with your answer")
        )

    for _name in (
        "__bool__ __float__ __int__ __index__ __complex__ __len__ __iter__ __getitem__ __contains__ __call__ "
        "__eq__ __ne__ __lt__ __le__ __gt__ __ge__ __neg__ __pos__ __abs__ __invert__ __round__ __format__ "
        "__array__ __add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__ "
        "__rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __matmul__ __rmatmul__ __and__ __rand__ __or__ __ror__"
    ).split():
        locals()[_name] = _fail
    del _name
    __hash__ = object.__hash__

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):  # torch.allclose(x, ...), torch.stack([x]) ...
        found = [a for a in (*args, *(kwargs or {}).values()) if isinstance(a, Unanswered)]
        (found[0] if found else cls())._fail()

    def __repr__(self) -> str:
        return f"unanswered({self.what!r})"


def unanswered(what: str = "this exercise") -> Unanswered:
    """The placeholder the student version puts where a value answer goes (see :class:`Unanswered`)."""
    return Unanswered(what)
