"""The exercise checkers catch the classic wrong answers, explain them in words, and pass right answers.

Each wrong answer below is a mistake students make in the course's exercises: a missing or wrong scale, the
softmax over the wrong axis, a mask ignored or inverted, the wrong dtype or shape. The checker must reject it
with a message that says what differs (where, by how much) and, where the pattern gives the cause away, a hint.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from course_lib import attention_weights, causal_mask, padding_mask, scaled_dot_product_attention
from course_lib.classroom.checks import check_close, check_function, explain_difference
from course_lib.classroom.exercises import Unanswered, unanswered

B, L, S, DK, DV = 2, 4, 5, 8, 3


def qkv(g):
    return [torch.randn(B, L, DK, generator=g), torch.randn(B, S, DK, generator=g), torch.randn(B, S, DV, generator=g)]


def qk(g):
    return qkv(g)[:2]


def self_qkv_causal(g):
    """Self-attention inputs (L = S) with a causal mask, True = may attend."""
    x = torch.randn(B, L, DK, generator=g)
    return [x, x.clone(), torch.randn(B, L, DV, generator=g), causal_mask(L)]


def qkv_padded(g):
    lengths = torch.randint(1, S, (B,), generator=g)  # every sequence has at least one padded key
    return [*qkv(g), padding_mask(lengths, S)]


def scores_reference(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def message_of(fn, reference, make_inputs, **kwargs):
    """The AssertionError message that check_function gives for a wrong `fn` (the test fails if it passes)."""
    with pytest.raises(AssertionError) as info:
        check_function(fn, reference, make_inputs, name="answer", **kwargs)
    message = str(info.value)
    assert message.startswith("answer is wrong on trial") or message.startswith("answer raised"), message
    return message


# ---------------------------------------------------------------- right answers pass


def loops_attention(q, k, v):
    out = torch.empty(*q.shape[:-1], v.shape[-1])
    for b in range(q.shape[0]):
        for i in range(q.shape[1]):
            scores = torch.stack([q[b, i] @ k[b, j] for j in range(k.shape[1])]) / math.sqrt(q.shape[-1])
            w = scores.exp() / scores.exp().sum()
            out[b, i] = sum(w[j] * v[b, j] for j in range(k.shape[1]))
    return out


def in_place_attention(q, k, v):
    q /= math.sqrt(q.shape[-1])  # modifies its input: the reference must not see the change
    return torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v


@pytest.mark.parametrize(
    "right",
    [
        lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v,
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
        lambda q, k, v: torch.einsum("bls,bsd->bld", torch.einsum("bld,bsd->bls", q, k).div(DK**0.5).softmax(-1), v),
        loops_attention,
        in_place_attention,
    ],
    ids=["matrix", "torch-fused", "einsum", "loops", "modifies-input"],
)
def test_right_attention_passes(right, capsys):
    check_function(right, scaled_dot_product_attention, qkv, name="attention")
    assert "✓ attention agrees with the reference on 5 random inputs" in capsys.readouterr().out


def test_right_masked_answers_pass(capsys):
    def masked(q, k, v, mask):
        scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~mask, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v

    check_function(masked, scaled_dot_product_attention, self_qkv_causal, name="causal")
    check_function(masked, scaled_dot_product_attention, qkv_padded, name="padded")
    out = capsys.readouterr().out
    assert "✓ causal agrees" in out and "✓ padded agrees" in out


def test_right_values_pass_within_tolerance(capsys):
    expected = torch.tensor([0.1, 0.2, 0.3])
    check_close(expected + 1e-7, expected, "w")
    check_close(torch.tensor(3), torch.tensor(3), "n")
    assert capsys.readouterr().out == "✓ w is correct\n✓ n is correct\n"


# ---------------------------------------------------------------- wrong scale


def test_missing_scale_is_caught_and_named():
    message = message_of(lambda q, k: q @ k.transpose(-2, -1), scores_reference, qk)
    assert "elements differ; the first is at [0, 0, 0]" in message
    assert "times the expected one" in message and "(= √8)" in message and "1/√d_k" in message


def test_dividing_by_d_k_instead_of_its_root_is_caught():
    message = message_of(lambda q, k: q @ k.transpose(-2, -1) / q.shape[-1], scores_reference, qk)
    assert "(= 1/√8) times the expected one" in message


def test_missing_scale_inside_the_softmax_is_caught():
    message = message_of(
        lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v, scaled_dot_product_attention, qkv
    )
    assert "elements differ" in message and "largest absolute difference" in message


# ---------------------------------------------------------------- wrong softmax axis


def test_softmax_over_the_queries_is_caught_on_weights():
    message = message_of(lambda q, k: torch.softmax(scores_reference(q, k), dim=-2), attention_weights, qk)
    assert "sum to 1 over the last axis (the keys) but yours do not, while your columns do" in message
    assert "dim=-1" in message


def test_softmax_over_the_queries_is_caught_on_outputs():
    message = message_of(
        lambda q, k, v: torch.softmax(scores_reference(q, k), dim=-2) @ v, scaled_dot_product_attention, qkv
    )
    assert "elements differ; the first is at" in message


def test_unnormalised_weights_are_caught():
    message = message_of(lambda q, k: scores_reference(q, k).exp(), attention_weights, qk)
    assert (
        "The expected rows sum to 1 over the last axis (the keys) but yours do not (your first row sums to" in message
    )


def test_transposed_scores_are_caught():
    def k_qt(q, k):  # K Q^T instead of Q K^T, on square inputs so that the shapes agree
        return k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])

    message = message_of(k_qt, scores_reference, lambda g: [torch.randn(B, L, DK, generator=g) for _ in range(2)])
    assert "equals the expected result transposed" in message


# ---------------------------------------------------------------- wrong mask


def test_ignored_causal_mask_is_caught_on_weights():
    message = message_of(
        lambda q, k, v, mask: attention_weights(q, k),
        lambda q, k, v, mask: attention_weights(q, k, mask),
        self_qkv_causal,
    )
    assert "The expected value is exactly 0 at [0, 0, 1] but yours is not" in message  # query 0 saw key 1, its future
    assert "masked out" in message


def test_inverted_mask_is_caught_on_weights():
    message = message_of(
        lambda q, k, v, mask: attention_weights(q, k, ~mask),
        lambda q, k, v, mask: attention_weights(q, k, mask),
        self_qkv_causal,
    )
    assert "the first is at [0, 0, 0]: got 0, expected 1" in message
    assert (
        "Yours is 0 where the expected value is not (first at [0, 0, 0]) and nonzero where it is exactly 0" in message
    )
    assert "a mask inverted?" in message


def test_inverted_mask_with_minus_infinity_gives_nan_and_is_caught():
    def inverted(q, k, v, mask):  # hides the allowed keys: the last query sees nothing -> softmax of all -inf
        scores = scores_reference(q, k).masked_fill(mask, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v

    message = message_of(inverted, scaled_dot_product_attention, self_qkv_causal)
    assert "You have NaN at [0, 3, 0] where the expected result is finite" in message  # the last query sees no key


def test_ignored_padding_mask_is_caught_on_outputs():
    message = message_of(lambda q, k, v, mask: attention_weights(q, k) @ v, scaled_dot_product_attention, qkv_padded)
    assert "elements differ; the first is at [" in message


def test_additive_mask_added_the_wrong_way_is_caught():
    def plus_mask(q, k, v, mask):  # adds a huge number where keys are *visible*
        return torch.softmax(scores_reference(q, k) + mask.float() * -1e9, dim=-1) @ v

    assert "elements differ" in message_of(plus_mask, scaled_dot_product_attention, self_qkv_causal)


# ---------------------------------------------------------------- wrong dtype, wrong shape, wrong kind


def test_wrong_dtype_is_caught():
    message = message_of(
        lambda q, k, v: F.scaled_dot_product_attention(q.double(), k.double(), v.double()),
        scaled_dot_product_attention,
        qkv,
    )
    assert "dtype is torch.float64, expected torch.float32" in message


def test_integers_instead_of_floats_are_caught_with_a_hint():
    message = explain_difference(torch.tensor([2, 2, 3]), torch.tensor([2.0, 2.0, 3.0]))
    assert message.startswith("dtype is torch.int64, expected torch.float32") and "2.0 rather than 2" in message


def test_weights_instead_of_outputs_are_caught():
    message = message_of(lambda q, k, v: attention_weights(q, k), scaled_dot_product_attention, qkv)
    assert "shape is (2, 4, 5), expected (2, 4, 3)" in message


def test_transposed_shape_is_caught():
    message = message_of(lambda q, k: scores_reference(q, k).transpose(-2, -1), scores_reference, qk)
    assert "shape is (2, 5, 4), expected (2, 4, 5) (its last two dimensions look swapped" in message


def test_extra_dimension_is_caught():
    message = message_of(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v)[:, None], scaled_dot_product_attention, qkv
    )
    assert "shape is (2, 1, 4, 3), expected (2, 4, 3)" in message and "unsqueeze/squeeze" in message


def test_reshape_in_the_wrong_order_is_caught():
    message = explain_difference(torch.zeros(3, 4), torch.zeros(4, 3).reshape(2, 6))
    assert "shape is (3, 4), expected (2, 6)" in message and "reshape or view in the wrong order" in message


def test_returning_a_tuple_is_caught():
    message = message_of(
        lambda q, k, v: (attention_weights(q, k) @ v, attention_weights(q, k)), scaled_dot_product_attention, qkv
    )
    assert "expected a torch.Tensor, got tuple of 2 items (return one tensor, not several)" in message


def test_an_error_inside_the_answer_is_reported_with_the_input_shapes():
    message = message_of(lambda q, k, v: q @ k @ v, scaled_dot_product_attention, qkv)
    assert "answer raised RuntimeError" in message and "(2, 4, 8), (2, 5, 8), (2, 5, 3)" in message


def test_a_module_among_the_inputs_is_named_by_its_class():
    def inputs(g):
        return [torch.randn(2, 3, generator=g), torch.nn.Linear(3, 3)]

    message = message_of(lambda x, layer: 2 * layer(x), lambda x, layer: layer(x), inputs)
    assert "(inputs: [(2, 3), Linear])" in message


def test_an_answer_that_only_fits_one_example_is_caught():
    first = qkv(torch.Generator().manual_seed(0))
    memorised = scaled_dot_product_attention(*first)
    message = message_of(lambda q, k, v: memorised, scaled_dot_product_attention, qkv)
    assert message.startswith("answer is wrong on trial 2")


def test_all_zeros_is_named():
    message = explain_difference(torch.zeros(2, 3), torch.ones(2, 3))
    assert "all zeros" in message


def test_no_hint_when_the_pattern_says_nothing():
    g = torch.Generator().manual_seed(1)
    message = explain_difference(torch.randn(3, 5, generator=g), torch.randn(3, 5, generator=g))
    assert message.endswith(")") and "?" not in message  # the plain explanation, no guessed cause


# ---------------------------------------------------------------- the check's own reference, inputs and helpers


def _cells(answer: str, check: str) -> dict:
    """A notebook's namespace after an answer cell and a check cell, each compiled as a cell of its own (a file of
    its own, as IPython names them)."""
    namespace = {"torch": torch, "math": math, "__name__": "__main__"}
    exec(compile(answer, "<answer cell>", "exec"), namespace)
    exec(compile(check, "<check cell>", "exec"), namespace)
    return namespace


CHECK_CELL = """
def masked_inputs(g):
    return [torch.randn(2, 3, 4, generator=g), torch.randn(2, 3, 4, generator=g), _visible(3)]


def _visible(n):
    return torch.ones(n, n, dtype=torch.bool).tril()


def reference(q, k, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), -1)
"""


@pytest.mark.parametrize(
    "answer",
    [
        "def weights(q, k, mask):\n    return reference(q, k, mask)",  # notebook 14's translator_mask
        "def weights(q, k, mask):\n    f = reference\n    return f(q, k, mask)",
        "def weights(q, k, mask):\n    return [reference][0](q, k, mask)",
        "import functools\ndef weights(q, k, mask):\n    return functools.partial(reference, q)(k, mask)",
        "def weights(q, k, mask):\n    return reference.__wrapped__(q, k, mask) if 0 else reference(q, k, mask)",
        "def weights(q, k, mask):\n    return torch.softmax(q @ k.transpose(-2, -1) / 2, -1) * _visible(3)",  # a helper
        "def weights(q, k, mask):\n    masked_inputs(torch.Generator())\n    return reference(q, k, mask)",  # inputs
    ],
)
def test_an_answer_that_calls_what_the_check_decides_with_is_refused(answer):
    namespace = _cells(answer, CHECK_CELL)
    with pytest.raises(AssertionError, match=r"raised ShortcutError: \w+ \((the check's|a function of the check)"):
        check_function(namespace["weights"], namespace["reference"], namespace["masked_inputs"], name="weights")


def test_a_library_reference_is_the_checks_own_too():
    """A check against ``cl.attention_weights`` refuses an answer that returns ``cl.attention_weights``, by any name."""
    import course_lib.attention as module

    with pytest.raises(AssertionError, match=r"raised ShortcutError: attention_weights \(the check's reference\)"):
        check_function(lambda q, k: module.attention_weights(q, k) + 0, attention_weights, qk, name="weights")


def test_a_check_cells_own_wrapper_may_run_its_helpers(capsys):
    """Notebook 13 checks ``as_ids(merge)`` against ``as_ids(cl.merge_pair)``: the wrapper, a function of the check
    cell, is the function under test; the answer inside it is the student's."""
    wrapper = "\ndef as_ids(fn):\n    return lambda *args: torch.tensor(fn(*args), dtype=torch.long)\n"
    answer = "def merge(ids):\n    return [i + 1 for i in ids]"
    namespace = _cells(answer, wrapper + "def ids(g):\n    return (torch.randint(0, 5, (4,), generator=g).tolist(),)")
    reference = namespace["as_ids"](lambda ids: [i + 1 for i in ids])
    check_function(namespace["as_ids"](namespace["merge"]), reference, namespace["ids"], name="merge", atol=0, rtol=0)
    assert "✓ merge agrees" in capsys.readouterr().out


# ---------------------------------------------------------------- the student version's stubs


def test_a_stubbed_function_fails_with_not_implemented_error():
    def stub(q, k, v):
        raise NotImplementedError("Exercise 2: write the body of stub")

    with pytest.raises(NotImplementedError, match="Exercise 2"):
        check_function(stub, scaled_dot_product_attention, qkv)


@pytest.mark.parametrize(
    "use",
    [
        lambda x: check_close(x, torch.ones(3)),
        lambda x: explain_difference(x, torch.ones(3)),
        lambda x: check_function(x, scaled_dot_product_attention, qkv),
        lambda x: torch.tensor(x, dtype=torch.float64),
        lambda x: torch.allclose(x, torch.ones(3)),
        lambda x: torch.ones(3) * x,
        lambda x: math.isclose(x, 2.0),
        lambda x: x == True,  # noqa: E712 - a check comparing a True/False answer
        lambda x: f"{x:.4f}",
        lambda x: float(x),
        lambda x: [y for y in x],
        lambda x: x(1),
    ],
)
def test_an_unanswered_value_fails_with_not_implemented_error(use):
    with pytest.raises(NotImplementedError, match=r"Exercise 1: q_2 is not answered yet: replace `unanswered\(...\)`"):
        use(unanswered("Exercise 1: q_2"))


def test_an_unanswered_value_can_be_displayed():
    placeholder = unanswered("Exercise 3: k")
    assert isinstance(placeholder, Unanswered) and repr(placeholder) == "unanswered('Exercise 3: k')"
    assert {placeholder: 1}[placeholder] == 1  # hashable by identity
