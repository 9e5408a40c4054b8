"""Masks, RoPE and the KV cache, with tests that a small slip fails (issue 43: mutation testing found such slips
passing): causal_mask with another number of keys than queries, BigBird's random keys, RoPE's base (in apply_rope and
in the layers that take it), and the KV cache refusing keys of another head width."""

import pytest
import torch
import torch.nn.functional as F

from course_lib import DecoderLM
from course_lib.grouped_query import GroupedQueryAttention, KVCache
from course_lib.masks import bigbird_mask, causal_mask, longformer_mask
from course_lib.positional import apply_rope

# ------------------------------------------------------------------------------------------------- causal_mask


@pytest.mark.parametrize(("n", "s"), [(3, 5), (5, 3), (1, 4), (4, 1), (0, 3), (3, 0)])
def test_causal_mask_with_another_number_of_keys_is_aligned_top_left(n, s):
    loop = torch.zeros(n, s, dtype=torch.bool)
    for i in range(n):
        for j in range(s):
            loop[i, j] = j <= i
    assert torch.equal(causal_mask(n, num_keys=s), loop)


def test_causal_mask_with_more_keys_equals_pytorchs_is_causal():
    q = torch.randn(2, 3, 4, dtype=torch.float64)  # (B, N, D): 3 queries
    k, v = torch.randn(2, 2, 6, 4, dtype=torch.float64).unbind(0)  # (B, S, D) each: 6 keys
    theirs = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    ours = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(3, num_keys=6))
    torch.testing.assert_close(ours, theirs)


# ----------------------------------------------------------------------------------------------------- BigBird


def test_bigbird_adds_num_random_new_keys_to_every_query_and_keeps_longformers():
    n, window, g = 12, 1, 1
    base = longformer_mask(n, window, g)
    free = (~base).sum(-1)  # keys the window and the global token leave to draw from, per query
    for r in (1, 3, 20):
        mask = bigbird_mask(n, window, g, num_random=r, seed=5)
        assert torch.all(mask[base])  # every key Longformer's pattern gives stays
        assert torch.equal((mask & ~base).sum(-1), free.clamp(max=r)), f"num_random={r}"
    assert torch.equal(bigbird_mask(n, window, g, num_random=0), base)


def test_bigbird_random_keys_come_from_the_seed_and_differ_between_queries():
    n, window = 12, 1
    base = longformer_mask(n, window, 1)
    mask = bigbird_mask(n, window, 1, num_random=2, seed=5)
    assert torch.equal(mask, bigbird_mask(n, window, 1, num_random=2, seed=5))  # the seed fixes them
    assert not torch.equal(mask, bigbird_mask(n, window, 1, num_random=2, seed=6))  # another seed, other keys
    extra = (mask & ~base)[1:]  # the random keys of the queries that are not global
    assert len({tuple(row.tolist()) for row in extra}) > n // 2  # not one choice copied to every query


def test_bigbird_draws_every_free_key_over_many_seeds():
    """Over 200 seeds, each query's one random key falls on every key its window leaves free, and never on another:
    the draw is among the free keys, not among the visible ones, nor always the same few."""
    n = 6
    base = longformer_mask(n, 0, 0)  # the window of width 0: each query sees itself only
    drawn = torch.zeros(n, n, dtype=torch.long)
    for seed in range(200):
        drawn += (bigbird_mask(n, 0, 0, num_random=1, seed=seed) & ~base).long()
    assert torch.equal(drawn > 0, ~base)
    assert torch.equal(drawn.sum(-1), torch.full((n,), 200))
    assert drawn[~base].min() >= 20  # 200 draws among 5 keys: about 40 each (a uniform draw)


# --------------------------------------------------------------------------------------------------- RoPE's base


def rope_by_complex_numbers(x, base):
    """Pair (x_2i, x_2i+1) at position m as the complex number x_2i + i x_2i+1, times e^(i m base^(-2i/D))."""
    L, D = x.shape[-2:]
    freqs = base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)  # (D/2,)
    turn = torch.polar(torch.ones(L, D // 2, dtype=torch.float64), torch.arange(L)[:, None] * freqs)
    z = torch.view_as_complex(x.double().reshape(*x.shape[:-1], D // 2, 2).contiguous()) * turn
    return torch.view_as_real(z).reshape(x.shape)


@pytest.mark.parametrize("base", [10.0, 100.0, 10000.0])
def test_apply_rope_uses_its_base(base):
    x = torch.randn(2, 7, 8, dtype=torch.float64)
    torch.testing.assert_close(apply_rope(x, base=base), rope_by_complex_numbers(x, base))


def attention_with_rope(layer, x, base):
    """Causal multi-head attention with RoPE of the given base, from the layer's own weights (H_kv = H)."""
    B, L, D = x.shape
    H = layer.num_heads

    def heads(t):
        return t.view(B, L, H, D // H).transpose(1, 2)  # (B, H, L, Dk)

    q = apply_rope(heads(layer.w_q(x)), base=base)
    k = apply_rope(heads(layer.w_k(x)), base=base)
    out = F.scaled_dot_product_attention(q, k, heads(layer.w_v(x)), is_causal=True)
    return layer.w_o(out.transpose(1, 2).reshape(B, L, D))


def test_grouped_query_attention_rotates_with_its_rope_base():
    torch.manual_seed(0)
    layer = GroupedQueryAttention(16, 2, rope=True, rope_base=50.0).double()
    x = torch.randn(2, 9, 16, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(layer(x), attention_with_rope(layer, x, 50.0))
        # with a cache, one token at a time: the new token's angle uses the same base
        cache = KVCache(1)
        steps = torch.cat([layer(x[:, i : i + 1], cache=cache) for i in range(9)], dim=1)
        torch.testing.assert_close(steps, attention_with_rope(layer, x, 50.0))


def test_a_decoders_rope_base_reaches_its_layers():
    torch.manual_seed(0)
    model = DecoderLM(9, 16, 2, 2, max_len=12, positions="rope", rope_base=50.0).double().eval()
    same = DecoderLM(9, 16, 2, 2, max_len=12, positions="rope", rope_base=50.0).double().eval()
    other = DecoderLM(9, 16, 2, 2, max_len=12, positions="rope").double().eval()  # base 10,000
    same.load_state_dict(model.state_dict())
    other.load_state_dict(model.state_dict())
    tokens = torch.randint(0, 9, (2, 8), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        torch.testing.assert_close(same(tokens), model(tokens))
        assert not torch.allclose(other(tokens), model(tokens), atol=1e-6)


# ------------------------------------------------------------------------------------------------------ KVCache


def test_kv_cache_refuses_keys_of_another_head_width_and_keeps_what_it_had():
    cache = KVCache(1)
    k, v = torch.randn(2, 1, 2, 3, 4).unbind(0)  # (B, H_kv, L, Dk) = (1, 2, 3, 4)
    cache.append(0, k, v)
    wider = torch.randn(1, 2, 1, 6)
    with pytest.raises(ValueError, match=r"does not continue .* Dk must agree"):
        cache.append(0, wider, wider)
    with pytest.raises(ValueError, match=r"does not continue"):
        cache.append(0, torch.randn(1, 3, 1, 4), torch.randn(1, 3, 1, 4))  # another number of heads
    assert cache.length == 3 and torch.equal(cache.keys[0], k) and torch.equal(cache.values[0], v)
