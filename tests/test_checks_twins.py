"""Blocking a course function blocks what does its work unchecked (course_lib.classroom.delegates).

The layers and functions of course_lib check their inputs at their public edge and call an unchecked twin
(``split_heads`` -> ``_split``, ``forward`` -> ``_forward``). These tests read every module of course_lib: a function
documented as another's unchecked twin, or a ``_forward`` beside a ``forward``, that blocking the public name would
leave open fails here, so a twin added later is covered or named.
"""

import importlib
import inspect
import pkgutil
import re
import sys
import textwrap

import pytest
import torch

import course_lib as cl
from course_lib.classroom import delegates
from course_lib.classroom.delegates import EXTRA, EXTRA_BY_NAME, dotted_name, twins, work_of
from course_lib.classroom.exercises import ShortcutError, blocked

_SKIP = ("course_lib.kernels.flash", "course_lib.kernels.launch", "course_lib.kernels.measure")  # need triton


def _modules():
    for info in pkgutil.walk_packages(cl.__path__, "course_lib."):
        if not info.name.startswith(_SKIP) and "bench" not in info.name:
            yield importlib.import_module(info.name)


def _functions():
    """(function, owner class or None) for every function and method defined in course_lib."""
    for module in _modules():
        for value in vars(module).values():
            if inspect.isfunction(value) and value.__module__ == module.__name__:
                yield value, None
            elif inspect.isclass(value) and value.__module__ == module.__name__:
                for member in vars(value).values():
                    member = getattr(member, "__func__", member)
                    if inspect.isfunction(member):
                        yield member, value


_TWIN_DOC = re.compile(r":(func|meth):`~?([\w.]+)`,? unchecked")


def _documented_twins():
    """(public function, its owner, the twin) for every function whose docstring calls itself another's twin:
    "The arithmetic of :func:`attention_weights`, unchecked", ":meth:`forward` unchecked"."""
    for function, owner in _functions():
        found = _TWIN_DOC.search((function.__doc__ or "").split("\n\n")[0])
        if found:
            home = owner if found[1] == "meth" else sys.modules[function.__module__]
            yield getattr(home, found[2]), owner if found[1] == "meth" else None, function


def test_every_documented_twin_is_blocked_with_its_public_function():
    pairs = list(_documented_twins())
    assert len(pairs) >= 10  # split/merge heads, rope, top-k/top-p, sampling, attention, the layers' _forward ...
    for public, owner, twin in pairs:
        assert twin in work_of(public, owner), f"{dotted_name(twin)} does {dotted_name(public)}'s work unchecked"


def test_every_forward_blocks_the_forward_beside_it():
    classes = [owner for function, owner in _functions() if owner is not None and function.__name__ == "_forward"]
    assert len(set(classes)) >= 8
    for owner in set(classes):
        assert vars(owner)["_forward"] in work_of(vars(owner)["forward"], owner), owner.__name__


_X = torch.randn(2, 3, 4)
_MHA = cl.MultiHeadAttention(4, 2)
_TRANSLATOR = cl.Translator(5, 5, d_model=4, num_heads=2)
_IDS = torch.ones(2, 3, dtype=torch.long)
TWIN_CALLS = {  # public name -> (its twin, a call of the twin)
    "course_lib.split_heads": ("course_lib.multihead._split", lambda: cl.multihead._split(_X, 2)),
    "course_lib.merge_heads": ("course_lib.multihead._merge", lambda: cl.multihead._merge(_X[None])),
    "course_lib.apply_rope": ("course_lib.positional._rope", lambda: cl.positional._rope(_X, torch.arange(3), 1e4)),
    "course_lib.top_k_filter": ("course_lib.generation._top_k", lambda: cl.generation._top_k(_X, 2)),
    "course_lib.top_p_filter": ("course_lib.generation._top_p", lambda: cl.generation._top_p(_X, 0.5)),
    "course_lib.sample_next_token": (
        "course_lib.generation._choose",
        lambda: cl.generation._choose(_X[0], None, None, None, None),
    ),
    "course_lib.scaled_dot_product_attention": ("course_lib.attention.attend", lambda: cl.attention.attend(_X, _X, _X)),
    "course_lib.attention_weights": (
        "course_lib.attention._weights",
        lambda: cl.attention._weights(_X, _X, None, None),
    ),
    "course_lib.MultiHeadAttention.forward": (
        "course_lib.multihead.MultiHeadAttention._forward",
        lambda: _MHA._forward(_X, _X, _X, None),
    ),
    "course_lib.Translator.forward": (
        "course_lib.seq2seq.Translator._decode",
        lambda: _TRANSLATOR._decode(_IDS, torch.zeros(2, 3, 4), torch.ones(2, 1, 1, 3, dtype=torch.bool)),
    ),
}


@pytest.mark.parametrize("public", sorted(TWIN_CALLS))
def test_blocking_a_public_name_refuses_its_twin_and_names_both(public):
    twin, call = TWIN_CALLS[public]
    call()  # a real call, allowed outside a check
    with pytest.raises(ShortcutError, match=rf"^{re.escape(twin)} \(the work of {re.escape(public)}\) is not"):
        with blocked((public,)):
            call()


def test_an_answer_may_still_use_what_another_exercise_writes():
    # notebook 06's multi-head attention calls cl.scaled_dot_product_attention and may call cl.split_heads; notebook
    # 09's dilated convolution calls cl.shift_attention_weights, which conv_as_attention (blocked there) calls too
    x = torch.randn(1, 3, 4)
    with blocked(("course_lib.MultiHeadAttention.forward",)):
        cl.merge_heads(cl.scaled_dot_product_attention(*(cl.split_heads(x, 2),) * 3))
    public = {twin.__name__ for twin in work_of(cl.conv_as_attention)}
    assert "shift_attention_weights" not in public
    assert all(twin.__name__.startswith("_") for f, o in _functions() for twin in twins(f, o))


def test_the_extra_table_names_real_functions_and_nothing_outside_course_lib_is_read():
    for table in (EXTRA, EXTRA_BY_NAME):
        for public, inner in table.items():
            module, _, name = public.rpartition(".")
            assert dotted_name(getattr(importlib.import_module(module), name)) == public
            assert all(dotted.startswith("course_lib.") for dotted in inner)
    for dotted in (p for p, _ in EXTRA.items()):
        for inner in EXTRA[dotted]:
            module, _, name = inner.rpartition(".")
            assert callable(getattr(importlib.import_module(module), name))
    assert work_of(torch.nn.functional.softmax) == {} and work_of(torch.softmax) == {}


def test_a_twin_added_later_is_found_by_reading_its_source(tmp_path, monkeypatch):
    source = textwrap.dedent('''
        import torch

        def _check(x):
            return x

        def _twin(x):
            return x.flip(0)

        def public(x):
            """A future public function: checks, then its twin's result, transformed and returned by name."""
            _check(x)
            result = {"out": _twin(_check(x))}
            return result["out"].contiguous()

        class Layer(torch.nn.Module):
            def forward(self, x):
                return torch.relu(self._forward(x))  # an argument of torch's function: found by its name only

            def _forward(self, x):
                return x
    ''')
    path = tmp_path / "probe_twin.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("course_lib.probe_twin", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "course_lib.probe_twin", module)
    spec.loader.exec_module(module)
    delegates.work_of.cache_clear()
    assert list(work_of(module.public).values()) == ["course_lib.probe_twin._twin"]  # not _check, an argument
    with pytest.raises(ShortcutError, match=r"course_lib\.probe_twin\._twin \(the work of course_lib\.probe_twin"):
        with blocked(("course_lib.probe_twin.public",)):
            module._twin(torch.ones(2))
    layer = module.Layer
    assert list(work_of(layer.forward, layer).values()) == ["course_lib.probe_twin.Layer._forward"]
