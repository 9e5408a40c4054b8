"""generate, sample_next_token, top_k_filter and top_p_filter against independent references: the full recomputation
at every step, a greedy loop written here, the softmax probabilities (sampling frequencies) and hand-worked examples."""

import math

import pytest
import torch
from conftest import float_dtypes
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import DecoderLM, generate, sample_next_token, top_k_filter, top_p_filter

V, MAX_LEN = 13, 12
INF = math.inf


def tiny_lm(positions="learned", num_kv_heads=None, dtype=torch.float64, device="cpu"):
    torch.manual_seed(0)
    model = DecoderLM(V, 16, 4, 2, max_len=MAX_LEN, num_kv_heads=num_kv_heads, positions=positions, d_ff=24)
    return model.to(device=device, dtype=dtype).eval()


def prompt(B=2, P=3, seed=2, device="cpu"):
    return torch.randint(0, V, (B, P), generator=torch.Generator().manual_seed(seed)).to(device)  # (B, P)


def seeded(seed, device="cpu"):
    return torch.Generator(device=device).manual_seed(seed)


# --------------------------------------------------------------------------- cached = recomputed from scratch


@pytest.mark.parametrize("positions", ["learned", "rope"])
@pytest.mark.parametrize("num_kv_heads", [4, 2, 1])
@pytest.mark.parametrize("temperature", [None, 1.5], ids=["greedy", "sampled"])
def test_cached_generation_equals_recomputing_the_prefix(positions, num_kv_heads, temperature, device):
    for dtype in float_dtypes(device):
        model = tiny_lm(positions, num_kv_heads, dtype, device)
        p, n = prompt(device=device), MAX_LEN - 3 + 1  # up to the context: P + N - 1 = max_len
        kwargs = dict(temperature=temperature, return_logits=True)
        cached, cached_logits = generate(model, p, n, use_cache=True, generator=seeded(7, device), **kwargs)
        full, full_logits = generate(model, p, n, use_cache=False, generator=seeded(7, device), **kwargs)
        assert cached.shape == (2, n) and cached.dtype == torch.int64 and cached_logits.shape == (2, n, V)
        assert torch.equal(cached, full)  # token for token
        tol = dict(atol=1e-10, rtol=1e-10) if dtype == torch.float64 else dict(atol=2e-5, rtol=1e-4)
        torch.testing.assert_close(cached_logits, full_logits, **tol)  # logit for logit


@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_generation_equals_a_plain_argmax_loop(use_cache):
    model, sequence = tiny_lm("rope", 2), prompt()
    new, logits = generate(model, sequence, 6, use_cache=use_cache, return_logits=True)
    with torch.no_grad():
        for step in range(6):
            expected_logits = model(sequence)[:, -1]  # (B, V): the whole sequence, every step
            torch.testing.assert_close(logits[:, step], expected_logits, atol=1e-10, rtol=1e-10)
            sequence = torch.cat((sequence, expected_logits.argmax(-1, keepdim=True)), dim=1)
    assert torch.equal(new, sequence[:, 3:])


def test_seeded_sampling_is_reproducible():
    model, p = tiny_lm(), prompt()
    kwargs = dict(temperature=2.0, top_k=8, top_p=0.95)
    first = generate(model, p, 10, generator=seeded(0), **kwargs)
    assert torch.equal(first, generate(model, p, 10, generator=seeded(0), **kwargs))
    assert not torch.equal(first, generate(model, p, 10, generator=seeded(1), **kwargs))


def test_the_context_limit_is_a_hard_limit():
    model = tiny_lm()
    assert generate(model, prompt(P=MAX_LEN), 1).shape == (2, 1)  # the new token is returned, never read
    assert generate(model, prompt(P=3), 0).shape == (2, 0)
    for use_cache in (True, False):
        with pytest.raises(ValueError, match="max_new_tokens=11 .* max_len=12"):
            generate(model, prompt(P=3), 11, use_cache=use_cache)
    with pytest.raises(ValueError, match="prompt of length P=13 is longer than the context max_len=12"):
        generate(model, prompt(P=13), 1)


def test_generation_leaves_the_model_and_the_prompt_alone():
    model, p = tiny_lm(), prompt()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    original = p.clone()
    generate(model, p, 4, temperature=1.0, generator=seeded(0))
    assert torch.equal(p, original) and not model.training
    assert all(torch.equal(v, state[k]) for k, v in model.state_dict().items())


# ----------------------------------------------------------------------------------------------- sampling


@pytest.mark.parametrize("temperature", [0.5, 2.0])
def test_sampling_frequencies_match_softmax_of_logits_over_temperature(temperature):
    logits = torch.tensor([[1.0, 0.0, -1.0, 2.0, 0.5]]).expand(20_000, 5)  # the same row 20,000 times
    draws = sample_next_token(logits, temperature=temperature, generator=seeded(0))
    frequencies = torch.bincount(draws, minlength=5).double() / len(draws)
    expected = torch.softmax(logits[0].double() / temperature, dim=0)
    torch.testing.assert_close(frequencies, expected, atol=0.015, rtol=0)  # about 4 standard errors


def test_filtered_sampling_stays_inside_the_filter():
    logits = torch.randn(500, 10, generator=seeded(3))
    top3 = logits.topk(3, dim=-1).indices
    draws = sample_next_token(logits, temperature=5.0, top_k=3, generator=seeded(0))
    assert (draws[:, None] == top3).any(-1).all()
    tiny_p = sample_next_token(logits, temperature=5.0, top_p=1e-6, generator=seeded(0))
    assert torch.equal(tiny_p, logits.argmax(-1))  # only the most likely token is left
    assert torch.equal(sample_next_token(logits), logits.argmax(-1))  # greedy


def test_top_k_filter_on_hand_worked_examples():
    logits = torch.tensor([1.0, 3.0, 2.0, 0.5])
    torch.testing.assert_close(top_k_filter(logits, 2), torch.tensor([-INF, 3.0, 2.0, -INF]))
    torch.testing.assert_close(top_k_filter(logits, 1), torch.tensor([-INF, 3.0, -INF, -INF]))
    torch.testing.assert_close(top_k_filter(logits, 10), logits)  # k >= V keeps all
    ties = torch.tensor([1.0, 2.0, 2.0, 0.0])
    torch.testing.assert_close(top_k_filter(ties, 1), torch.tensor([-INF, 2.0, 2.0, -INF]))  # ties kept
    assert torch.equal(logits, torch.tensor([1.0, 3.0, 2.0, 0.5]))  # the input is not modified


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(0, 10_000))
def test_top_k_filter_keeps_exactly_the_k_largest(k, seed):
    logits = torch.randn(3, 12, generator=seeded(seed), dtype=torch.float64)  # no ties
    kept = torch.isfinite(top_k_filter(logits, k))
    assert (kept.sum(-1) == k).all()
    smallest_kept = logits.masked_fill(~kept, INF).amin(-1)
    largest_dropped = logits.masked_fill(kept, -INF).amax(-1)
    assert (smallest_kept > largest_dropped).all()


def test_top_p_filter_on_a_hand_worked_example():
    probs = torch.tensor([0.05, 0.5, 0.15, 0.3])  # sorted: 0.5, 0.3, 0.15, 0.05; running sums 0.5, 0.8, 0.95, 1
    logits = probs.log()
    for p, kept in (
        (0.1, [1]),
        (0.45, [1]),
        (0.6, [1, 3]),
        (0.9, [1, 2, 3]),
        (0.97, [0, 1, 2, 3]),
        (1.0, [0, 1, 2, 3]),
    ):
        expected = torch.full((4,), -INF)
        expected[kept] = logits[kept]
        torch.testing.assert_close(top_p_filter(logits, p), expected, msg=f"p={p}")
    uniform = torch.zeros(4)  # probabilities 1/4 exactly: p = 1/2 is reached by two tokens, not three
    for p, count in ((0.25, 1), (0.5, 2), (0.75, 3), (0.8, 4)):
        assert torch.isfinite(top_p_filter(uniform, p)).sum() == count, f"p={p}"


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-3, 1.0), st.integers(0, 10_000))
def test_top_p_filter_keeps_the_smallest_set_reaching_p(p, seed):
    logits = torch.randn(4, 9, generator=seeded(seed), dtype=torch.float64) * 2
    probs = torch.softmax(logits, dim=-1)
    kept = torch.isfinite(top_p_filter(logits, p))
    assert (kept.sum(-1) >= 1).all()  # never empty
    mass = (probs * kept).sum(-1)
    assert (mass >= p - 1e-12).all()  # reaches p ...
    smallest_kept = probs.masked_fill(~kept, INF).amin(-1)
    assert (mass - smallest_kept < p + 1e-12).all()  # ... and would not without its least likely token
    assert (smallest_kept >= probs.masked_fill(kept, -INF).amax(-1)).all()  # the most likely tokens are the ones kept


def test_filters_keep_shape_dtype_and_half_precision():
    logits = torch.randn(2, 3, 7, generator=seeded(0)).to(torch.bfloat16)  # (..., V)
    for out in (top_k_filter(logits, 2), top_p_filter(logits, 0.5)):
        assert out.shape == logits.shape and out.dtype == torch.bfloat16
        assert torch.isfinite(out).any(-1).all()


# ------------------------------------------------------------------------------------------------- errors


def test_bad_arguments_name_what_is_wrong():
    model, p = tiny_lm(), prompt()
    cases = [
        (TypeError, "prompt must hold integer token ids", lambda: generate(model, p.double(), 2)),
        (ValueError, r"prompt must have shape \(B, L\)", lambda: generate(model, p[0], 2)),
        (ValueError, "prompt must hold ids in", lambda: generate(model, p + V, 2)),
        (TypeError, "model must be a course_lib DecoderLM", lambda: generate(torch.nn.Identity(), p, 2)),
        (TypeError, "max_new_tokens must be an int", lambda: generate(model, p, 2.0)),
        (ValueError, "temperature must be > 0", lambda: generate(model, p, 2, temperature=0.0)),
        (ValueError, "temperature must be > 0", lambda: generate(model, p, 2, temperature=-1.0)),
        (ValueError, "top_k must be >= 1", lambda: generate(model, p, 2, temperature=1.0, top_k=0)),
        (ValueError, "top_p must be > 0", lambda: generate(model, p, 2, temperature=1.0, top_p=0.0)),
        (ValueError, "top_p must be <= 1", lambda: generate(model, p, 2, temperature=1.0, top_p=1.5)),
        (ValueError, "top_k filters sampling", lambda: generate(model, p, 2, top_k=3)),
        (TypeError, "generator must be a torch.Generator", lambda: generate(model, p, 2, temperature=1.0, generator=0)),
        (TypeError, "use_cache must be a bool", lambda: generate(model, p, 2, use_cache="yes")),
        (ValueError, r"logits must have shape \(B, V\)", lambda: sample_next_token(torch.zeros(5))),
        (TypeError, "logits must have a floating dtype", lambda: top_k_filter(torch.zeros(5, dtype=torch.long), 2)),
    ]
    for error, message, call in cases:
        with pytest.raises(error, match=message):
            call()
