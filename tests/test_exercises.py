"""course_lib.classroom.exercises: per-student numbers (variants), blocked library shortcuts, check_function's
without=."""

import importlib
import sys
from contextlib import contextmanager

import pytest
import torch
import torch.nn.functional as F

import course_lib as cl
import course_lib.efficient
import course_lib.multihead
from course_lib.classroom.exercises import ShortcutError, blocked, variant_generator, variant_numbers


@contextmanager
def refusing(names, **kwargs):
    """``blocked(names)`` for a test that catches refusals on purpose: a refusal fails the whole block even when the
    code inside caught it, so the block must end with ShortcutError (the first refusal)."""
    with pytest.raises(ShortcutError, match="is not available in this check"):
        with blocked(names, **kwargs):
            yield


def draw(g):
    return [int(x) for x in torch.randint(2, 1000, (3,), generator=g)]


@pytest.mark.parametrize("default_variant", [0, "0", None, ""])
def test_variant_0_keeps_the_numbers_of_the_text(default_variant):
    assert variant_numbers(default_variant, "08-1", (16384, 128), draw) == (16384, 128)


def test_variants_are_reproducible_and_differ_between_students_and_exercises():
    a = variant_numbers("s1234567", "08-1", None, draw)
    assert a == variant_numbers("s1234567", "08-1", None, draw)  # the same student gets the same numbers
    assert a != variant_numbers("s7654321", "08-1", None, draw)  # another student others
    assert a != variant_numbers("s1234567", "08-2", None, draw)  # another exercise others
    assert variant_numbers(7, "08-1", None, draw) == variant_numbers(7, "08-1", None, draw)


def test_variant_streams_are_fixed_across_python_processes():
    # SHA-256, not hash(): a fixed value that a change of PYTHONHASHSEED or of Python cannot move
    assert (
        torch.randint(0, 10**6, (1,), generator=variant_generator("student-a", "03-1")).item()
        == torch.randint(0, 10**6, (1,), generator=variant_generator("student-a", "03-1")).item()
    )
    with pytest.raises(TypeError, match="variant"):
        variant_generator(True, "03-1")


def test_blocked_functions_raise_and_come_back():
    x = torch.randn(3, 4)
    with refusing(["torch.softmax", "torch.Tensor.softmax", "torch.nn.functional.softmax"], who="my_softmax"):
        with pytest.raises(ShortcutError, match="torch.softmax is not available.*my_softmax"):
            torch.softmax(x, -1)
        with pytest.raises(ShortcutError, match="torch.Tensor.softmax"):
            x.softmax(-1)
        with pytest.raises(ShortcutError):
            F.softmax(x, -1)
        assert torch.exp(x).sum() > 0  # everything else works
    torch.testing.assert_close(torch.softmax(x, -1), x.softmax(-1))  # restored
    torch.testing.assert_close(F.softmax(x, -1), x.softmax(-1))


def test_blocked_reaches_the_defining_module_and_aliases_in_a_namespace():
    namespace = {"sh": cl.split_heads, "other": cl.merge_heads}
    with refusing(["course_lib.split_heads"], namespace=namespace):
        for call in (cl.split_heads, course_lib.multihead.split_heads, namespace["sh"]):
            with pytest.raises(ShortcutError):
                call(torch.zeros(1, 2, 4), 2)
        assert namespace["other"] is cl.merge_heads
    assert namespace["sh"] is course_lib.multihead.split_heads
    assert cl.split_heads(torch.zeros(1, 2, 4), 2).shape == (1, 2, 2, 2)
    assert cl.split_heads is course_lib.multihead.split_heads


def test_blocked_restores_a_name_that_was_not_loaded_yet():

    vars(course_lib).pop("merge_heads", None)  # as if never asked for: course_lib's __getattr__ would load it
    with refusing(["course_lib.merge_heads"]):
        with pytest.raises(ShortcutError):
            course_lib.merge_heads(torch.zeros(1, 2, 2, 2))
    assert course_lib.merge_heads is course_lib.multihead.merge_heads


def test_blocked_methods_of_classes_and_restoring_after_an_error():
    conv = torch.nn.Conv2d(1, 1, 3)
    with pytest.raises(KeyError):
        with refusing(["torch.nn.Conv2d.forward"]):
            with pytest.raises(ShortcutError):
                conv(torch.zeros(1, 1, 5, 5))
            raise KeyError("an error inside the block")
    assert conv(torch.zeros(1, 1, 5, 5)).shape == (1, 1, 3, 3)
    assert "forward" in vars(torch.nn.Conv2d)


def test_blocked_refuses_names_it_cannot_find():
    with pytest.raises(ValueError, match="names nothing"):
        blocked(["torch.no_such_function"]).__enter__()
    with pytest.raises(TypeError, match="not one string"):
        blocked("torch.softmax").__enter__()


def test_check_function_without_fails_a_library_call_and_says_so(capsys):
    def inputs(g):
        return (torch.randn(2, 5, generator=g),)

    def by_library(s):
        return torch.softmax(s, dim=-1)

    def by_hand(s):
        e = (s - s.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)

    banned = ("torch.softmax", "torch.Tensor.softmax", "torch.nn.functional.softmax")
    with pytest.raises(AssertionError, match="by_library raised ShortcutError: torch.softmax is not available"):
        cl.check_function(by_library, lambda s: torch.softmax(s, -1), inputs, without=banned)
    cl.check_function(by_hand, lambda s: torch.softmax(s, -1), inputs, without=banned)  # the reference may use it
    out = " ".join(capsys.readouterr().out.split())  # the message is folded at the width of a slide
    assert "without calling torch.softmax, torch.Tensor.softmax, torch.nn.functional.softmax" in out
    cl.check_function(by_hand, lambda s: torch.softmax(s, -1), inputs, without=cl.SOFTMAX_FUNCTIONS)
    assert f"torch.logsumexp and {len(cl.SOFTMAX_FUNCTIONS) - 3} more" in " ".join(capsys.readouterr().out.split())
    cl.check_function(by_library, lambda s: torch.softmax(s, -1), inputs)  # nothing banned: it passes


def test_the_shared_name_lists_name_real_functions_and_block_them():
    x = torch.randn(2, 3)
    with refusing(cl.SOFTMAX_FUNCTIONS + cl.ATTENTION_FUNCTIONS):  # every name resolves
        for call in (
            lambda: x.softmax(-1),
            lambda: torch.special.log_softmax(x, -1),
            lambda: torch.nn.Softmax(-1)(x),
            lambda: F.scaled_dot_product_attention(x[None], x[None], x[None]),
            lambda: x.logsumexp(-1),
        ):
            with pytest.raises(ShortcutError):
                call()


_X = torch.randn(2, 3, 4)
_SOFTMAX_DOORS = {  # every way to PyTorch's softmax kernels that a list of names cannot close
    "torch.ops.aten._softmax": lambda: torch.ops.aten._softmax(_X, -1, False),
    "its overload .default": lambda: torch.ops.aten._softmax.default(_X, -1, False),
    "torch._C._VariableFunctions.softmax": lambda: torch._C._VariableFunctions.softmax(_X, -1),
    "torch._C.TensorBase.softmax": lambda: torch._C.TensorBase.softmax(_X, -1),
    "_log_softmax, then exp": lambda: torch.ops.aten._log_softmax(_X, -1, False).exp(),
    "the backward kernel called forward": lambda: torch.ops.aten._softmax_backward_data(_X, _X, -1, torch.float32),
    "aten.logsumexp": lambda: _X - torch.ops.aten.logsumexp(_X, [-1], True),
    "an alias taken before the check": (lambda sm=F.softmax: lambda: sm(_X, -1))(),
}
_ATTENTION_DOORS = {
    "torch.ops.aten.scaled_dot_product_attention": lambda: torch.ops.aten.scaled_dot_product_attention(_X, _X, _X),
    "torch._C._nn.scaled_dot_product_attention": lambda: torch._C._nn.scaled_dot_product_attention(_X, _X, _X),
    "the CPU flash kernel": lambda: torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        _X[None], _X[None], _X[None]
    ),
    "the math kernel": lambda: torch.ops.aten._scaled_dot_product_attention_math(_X, _X, _X),
    "nn.MultiheadAttention": lambda: torch.nn.MultiheadAttention(4, 1, batch_first=True)(_X, _X, _X),
}


@pytest.mark.parametrize("door", sorted(_SOFTMAX_DOORS))
def test_softmax_reached_by_any_door_is_blocked(door):
    with refusing(cl.SOFTMAX_FUNCTIONS), pytest.raises(ShortcutError, match="is not available in this check"):
        _SOFTMAX_DOORS[door]()
    _SOFTMAX_DOORS[door]()  # and works again after the check


@pytest.mark.parametrize("door", sorted(_ATTENTION_DOORS))
def test_fused_attention_reached_by_any_door_is_blocked(door):
    with refusing(cl.ATTENTION_FUNCTIONS), pytest.raises(ShortcutError, match="is not available in this check"):
        _ATTENTION_DOORS[door]()


def test_what_an_exercise_allows_still_runs_under_the_kernel_watch():
    with blocked(cl.SOFTMAX_FUNCTIONS):  # softmax by hand: exp, sum, division
        e = (_X - _X.amax(-1, keepdim=True)).exp()
        by_hand = e / e.sum(-1, keepdim=True)
    torch.testing.assert_close(by_hand, torch.softmax(_X, -1))
    with blocked(cl.ATTENTION_FUNCTIONS):  # attention by hand may use softmax, and autograd runs inside
        q = _X.clone().requires_grad_()
        (torch.softmax(q @ _X.transpose(-2, -1) / 2, -1) @ _X).sum().backward()
    assert q.grad is not None


def test_each_refusal_names_its_own_function():
    with refusing(cl.SOFTMAX_FUNCTIONS):
        for name, call in (("torch.log_softmax", lambda: torch.log_softmax(_X, -1)),
                           ("torch.nn.functional.softmax", lambda: F.softmax(_X, -1))):  # fmt: skip
            with pytest.raises(ShortcutError, match=f"^{name} is not available"):
                call()


def test_a_blocked_decorated_function_blocks_its_own_code_not_its_decorators():
    @torch.no_grad()
    def allowed(x):
        return x + 1

    with blocked(["course_lib.generate"]):  # cl.generate is wrapped by torch.no_grad() too
        assert torch.equal(allowed(torch.zeros(1)), torch.ones(1))


def test_check_function_fails_an_operator_shortcut_and_names_it():
    def by_operator(s):
        return torch.ops.aten._softmax(s, -1, False)

    with pytest.raises(AssertionError, match=r"aten::_softmax \(the work of torch.softmax\) is not available"):
        cl.check_function(by_operator, lambda s: torch.softmax(s, -1), lambda g: (torch.randn(2, 5, generator=g),),
                          without=cl.SOFTMAX_FUNCTIONS)  # fmt: skip


def test_blocked_reaches_copies_imported_by_other_course_modules():
    assert course_lib.efficient.scaled_dot_product_attention is cl.scaled_dot_product_attention  # imported by name
    with refusing(["course_lib.scaled_dot_product_attention"]):
        with pytest.raises(ShortcutError):
            course_lib.efficient.scaled_dot_product_attention(torch.zeros(2, 4), torch.zeros(2, 4), torch.zeros(2, 4))
    assert course_lib.efficient.scaled_dot_product_attention is course_lib.attention.scaled_dot_product_attention


def _captures_in_a_default(x, f=cl.split_heads):  # a shortcut that no module or namespace shows
    return f(x, 2)


def _captures_in_a_closure():
    f = cl.split_heads

    def split(x):
        return f(x, 2)

    return split


@pytest.mark.parametrize("shortcut", [_captures_in_a_default, _captures_in_a_closure()], ids=["default", "closure"])
def test_a_shortcut_held_in_a_default_or_a_closure_is_blocked_and_restored(shortcut):
    x = torch.randn(1, 3, 4)
    mask_default = torch.ones(2, 2)  # a tensor default must not be compared elementwise

    def innocent(x, mask=mask_default, *, scale=2.0):
        return x * scale

    with refusing(["course_lib.split_heads"], functions=(shortcut, innocent)):
        with pytest.raises(ShortcutError, match="course_lib.split_heads is not available"):
            shortcut(x)
        assert torch.equal(innocent(x), x * 2) and innocent.__defaults__[0] is mask_default
    torch.testing.assert_close(shortcut(x), cl.split_heads(x, 2))  # restored
    with pytest.raises(AssertionError, match="split raised ShortcutError: course_lib.split_heads is not available"):
        cl.check_function(shortcut, lambda x: cl.split_heads(x, 2), lambda g: (torch.randn(1, 3, 4, generator=g),),
                          name="split", without=("course_lib.split_heads",))  # fmt: skip


def test_check_answer_never_shows_the_expected_value():
    with pytest.raises(AssertionError) as wrong:
        cl.check_answer(torch.tensor([1.9, 0.5]), torch.tensor([1.9, 0.6]), "q_x")
    message = str(wrong.value)
    assert "[1]" in message and "0.5" in message and "too small" in message
    assert "0.6" not in message and "0.1" not in message  # neither the value nor the difference
    with pytest.raises(AssertionError, match="too large"):
        cl.check_answer(torch.tensor(3.0), torch.tensor(2.0))
    with pytest.raises(AssertionError, match="is not the expected value"):
        cl.check_answer(torch.tensor([True]), torch.tensor([False]))
    with pytest.raises(AssertionError, match="expected 0.6"):  # check_close, for comparison, tells
        cl.check_close(torch.tensor([1.9, 0.5]), torch.tensor([1.9, 0.6]), "q_x")
    cl.check_answer(torch.tensor(2.0), torch.tensor(2.0 + 1e-7))


_OPERATOR_DOORS = {  # (names an exercise blocks, a call that reaches their operator under another name)
    "aten::one_hot for F.one_hot": (("torch.nn.functional.one_hot",),
                                    lambda: torch.ops.aten.one_hot(torch.tensor([0, 2]), 3)),
    "aten::gru_cell for nn.GRUCell": (("torch.nn.GRUCell.forward",), lambda: torch.ops.aten.gru_cell(
        torch.randn(1, 2), torch.randn(1, 3), torch.randn(9, 2), torch.randn(9, 3))),
    "aten::convolution for F.conv2d": (("torch.nn.functional.conv2d",), lambda: torch.ops.aten.convolution(
        torch.randn(1, 1, 4, 4), torch.randn(1, 1, 3, 3), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)),
    "aten::native_layer_norm for F.layer_norm": (("torch.nn.functional.layer_norm",),
                                                 lambda: torch.ops.aten.native_layer_norm(_X, [4], None, None, 1e-5)),
    "aten::col2im for F.fold": (("torch.nn.functional.fold",), lambda: torch.ops.aten.col2im(
        torch.randn(1, 4, 4), [3, 3], [2, 2], [1, 1], [0, 0], [1, 1])),
}  # fmt: skip


@pytest.mark.parametrize("door", sorted(_OPERATOR_DOORS))
def test_a_library_function_reached_through_its_operator_is_blocked(door):
    names, call = _OPERATOR_DOORS[door]
    with refusing(names), pytest.raises(ShortcutError, match=r"^aten::\w+ .*is not available in this check"):
        call()
    call()  # and works again after the check


def test_an_operator_is_blocked_by_name_only_for_torchs_own_functions():
    with blocked(("torch.masked.mean",)):  # torch.masked.mean is not aten::mean, which a by-hand answer may use
        assert torch.equal(torch.ones(2, 2).mean(0), torch.ones(2))


@pytest.mark.parametrize("escape", ["thread", "numpy", "refs"])
def test_calls_out_of_the_doors_sight_are_refused(escape):
    import threading

    def in_a_thread():
        out = []
        worker = threading.Thread(target=lambda: out.append(torch.softmax(_X, -1)))
        worker.start()
        worker.join()
        return out[0]

    call = {"thread": in_a_thread,
            "numpy": lambda: torch.from_numpy(_X.numpy().copy()),
            "refs": lambda: torch._refs.softmax(_X, -1)}[escape]  # fmt: skip
    if escape == "refs":
        importlib.import_module("torch._refs")  # imported outside the check (an import inside would be torch's own)
    with refusing(cl.SOFTMAX_FUNCTIONS), pytest.raises(ShortcutError, match="is not available in this check"):
        call()
    call()  # allowed again outside


def test_blocking_an_autograd_function_blocks_every_backward_pass():
    x = _X.clone().requires_grad_()
    with refusing(("torch.autograd.grad",)):
        with pytest.raises(ShortcutError, match="^the autograd engine"):
            torch.autograd.backward((x * x).sum())
        with pytest.raises(ShortcutError, match="^the autograd engine"):
            (x * x).sum().backward()  # Tensor.backward is not blocked by name here: the engine is
    with blocked(cl.SOFTMAX_FUNCTIONS):  # softmax exercises may still use autograd
        (x * x).sum().backward()
    assert x.grad is not None


def test_a_refusal_caught_by_the_answer_still_fails_the_check():
    def sly(s):
        for door in (lambda: torch.softmax(s, -1), lambda: torch.ops.aten._softmax(s, -1, False)):
            try:
                return door()
            except Exception:  # refused: try the next door, then give up quietly
                pass
        return torch.zeros_like(s)

    with pytest.raises(ShortcutError, match="^torch.softmax is not available"):
        with blocked(cl.SOFTMAX_FUNCTIONS):
            sly(_X)


def test_a_blocked_class_is_refused_under_any_name():
    from torch.nn.modules.linear import Linear as Dense  # the same class from its own module

    with refusing(("torch.nn.Linear",)):
        Dense(2, 3)


def test_torchs_own_tensor_subclasses_are_made_inside_a_check():
    with blocked(cl.SOFTMAX_FUNCTIONS):  # nn.Parameter is a Tensor subclass that torch makes
        layer = torch.nn.Linear(3, 2)
    assert isinstance(layer.weight, torch.nn.Parameter)
    with refusing(cl.SOFTMAX_FUNCTIONS):  # one the answer makes is refused
        _X.as_subclass(type("Later", (torch.Tensor,), {}))


def test_a_torch_mode_on_before_the_check_may_use_numpy():
    """The machine's own mode (marked course_profile, as tools/rounding_startup.py's is; outside a graded kernel) may
    use NumPy inside a check; an unmarked one is a cell's and is not trusted (course_lib.classroom.integrity)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class ThroughNumPy(TorchDispatchMode):  # like tools/portability.py's rounding profiles
        course_profile = True

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if isinstance(out, torch.Tensor) and out.dtype == torch.float32:
                out.detach().numpy()  # the machine's own mode, not the answer
            return out

    with ThroughNumPy():
        with blocked(cl.SOFTMAX_FUNCTIONS):
            e = (_X - _X.amax(-1, keepdim=True)).exp()
        with refusing(cl.SOFTMAX_FUNCTIONS):  # the answer itself may not
            _X.numpy()
    assert e.shape == _X.shape

    class CellsMode(ThroughNumPy):  # the same rules, unmarked: a cell's mode
        course_profile = False

    with CellsMode(), pytest.raises(ShortcutError, match="NumPy"):
        with blocked(cl.SOFTMAX_FUNCTIONS):
            (_X - _X.amax(-1, keepdim=True)).exp()


def _defined(path, *names):
    """The source of the top-level functions ``names`` as the notebook at ``path`` defines them (solution markers
    and all: a reference answer is what its solution cell holds)."""
    import ast

    import nbformat

    found = {}
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        tree = ast.parse(cell.source)
        found |= {n.name: ast.get_source_segment(cell.source, n) for n in tree.body if isinstance(n, ast.FunctionDef)}
    return "\n\n".join(found[name] for name in names)


def test_notebook_05s_exercise_5_is_not_solved_by_copying_section_5s_attention():
    """A fifth lecturer: section 5's attention_correct (a locked cell), copied into fixed_attention, passed exercise
    5. The exercise's function follows course_lib's rules, and its check asks for zeros where a query sees no key,
    which attention_correct's -inf makes nan."""
    import math

    from course_lib.paths import NOTEBOOKS_DIR

    path = NOTEBOOKS_DIR / "05_masks_and_attention_maps.ipynb"
    namespace = {"torch": torch, "math": math, "cl": cl, "F": F}
    exec(_defined(path, "masked_inputs", "blind_query_inputs", "attention_correct", "fixed_attention"), namespace)
    for answer, passes in ((namespace["fixed_attention"], True), (namespace["attention_correct"], False)):

        def first(q, k, v, m, answer=answer):
            return answer(q, k, v, m)[0]

        if passes:
            cl.check_function(first, cl.scaled_dot_product_attention, namespace["blind_query_inputs"], name="a")
        else:
            with pytest.raises(AssertionError, match="nan"):
                cl.check_function(first, cl.scaled_dot_product_attention, namespace["blind_query_inputs"], name="a")
        cl.check_function(first, cl.scaled_dot_product_attention, namespace["masked_inputs"], name="both pass here")


def test_a_check_runs_under_cprofile_and_gives_the_profiler_back():
    """CONTRIBUTING.md's way to find a slow cell, %%prun, ran a check that blocks functions into a TypeError: the
    check put back cProfile's profiler with sys.setprofile, which takes a function."""
    import cProfile
    import pstats

    def after_the_check():
        return torch.zeros(1)

    profiler = cProfile.Profile()
    with profiler:
        before = sys.getprofile()  # the profiler itself up to Python 3.11; None from 3.12 on (it uses sys.monitoring)
        cl.check_function(lambda x: x.exp(), torch.exp, lambda g: (torch.randn(3, generator=g),), name="exp",
                          without=["torch.softmax"])  # fmt: skip
        assert sys.getprofile() is before, "the check leaves the profile hook it found"
        after_the_check()
    assert sys.getprofile() is None
    counted = {name for (_, _, name) in pstats.Stats(profiler).stats}  # type: ignore[attr-defined]
    assert "after_the_check" in counted, "profiling goes on after the check"
