"""GroupedQueryAttention, KVCache, DecoderBlock and DecoderLM against independent references: nn.TransformerEncoderLayer
and nn.TransformerEncoder with a causal mask and copied weights, MultiHeadAttention with the K/V heads repeated, a
float64 loop over heads with RoPE written as rotation matrices, and the full recomputation for the cache."""

import math

import pytest
import torch
from conftest import float_dtypes
from torch import nn

from course_lib import (
    DecoderBlock,
    DecoderLM,
    GroupedQueryAttention,
    KVCache,
    MultiHeadAttention,
    TransformerEncoderBlock,
    causal_mask,
    padding_mask,
    rope_rotation_matrix,
)

F64 = dict(atol=1e-10, rtol=1e-10)
TOL = {torch.float32: dict(atol=2e-5, rtol=1e-4), torch.float64: F64}
D, H, L = 16, 4, 7


def randomise(module, seed=0):
    """Random values for every parameter (biases and LayerNorms included), so a mix-up of any of them shows."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.5)
    return module


def inputs(B=3, length=L, seed=1, dtype=torch.float64, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(B, length, D, generator=g, dtype=dtype).to(device)  # (B, L, D)


def tokens(B=2, length=9, vocab=13, seed=2, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (B, length), generator=g).to(device)  # (B, L)


def tiny_lm(positions="learned", num_kv_heads=None, dtype=torch.float64, device="cpu", **kwargs):
    torch.manual_seed(0)
    kwargs = dict(max_len=12, num_kv_heads=num_kv_heads, positions=positions, d_ff=24, **kwargs)
    return DecoderLM(13, D, H, 2, **kwargs).to(device=device, dtype=dtype).eval()


def copy_encoder_layer(layer: nn.TransformerEncoderLayer, block: DecoderBlock) -> None:
    """Copy PyTorch's stacked in_proj (W_Q; W_K; W_V) and the rest into our block, by hand."""
    attn, d = block.self_attn, layer.self_attn.embed_dim
    with torch.no_grad():
        for i, lin in enumerate((attn.w_q, attn.w_k, attn.w_v)):
            lin.weight.copy_(layer.self_attn.in_proj_weight[i * d : (i + 1) * d])
            lin.bias.copy_(layer.self_attn.in_proj_bias[i * d : (i + 1) * d])
        attn.w_o.weight.copy_(layer.self_attn.out_proj.weight)
        attn.w_o.bias.copy_(layer.self_attn.out_proj.bias)
        for name in ("linear1", "linear2", "norm1", "norm2"):
            for pname, p in getattr(layer, name).named_parameters():
                getattr(getattr(block, name), pname).copy_(p)


def torch_layer(activation):
    layer = nn.TransformerEncoderLayer(D, H, 24, dropout=0.0, activation=activation, batch_first=True, norm_first=True)
    return randomise(layer.double()).eval()


# ------------------------------------------------------------------------------------ the block against PyTorch


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_block_equals_torch_encoder_layer_with_a_causal_mask(activation):
    layer = torch_layer(activation)
    block = DecoderBlock(D, H, d_ff=24, activation=activation).double().eval()
    copy_encoder_layer(layer, block)
    x = inputs()
    with torch.no_grad():
        got = block(x)  # causal by construction
        torch.testing.assert_close(got, layer(x, src_mask=~causal_mask(L)), **F64)  # PyTorch: True = hidden
        float_mask = nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
        torch.testing.assert_close(got, layer(x, src_mask=float_mask, is_causal=True), **F64)
        assert not torch.allclose(got, layer(x), atol=1e-3)  # without the mask it differs: the test can fail


def test_model_equals_a_torch_assembly_with_learned_positions():
    model = randomise(tiny_lm(tie_embeddings=True))
    encoder = nn.TransformerEncoder(torch_layer("gelu"), 2, enable_nested_tensor=False).double().eval()
    for layer, block in zip(encoder.layers, model.blocks):
        copy_encoder_layer(layer, block)
    t = tokens()
    with torch.no_grad():
        x = model.token_embedding.weight[t] + model.position_embedding.weight[: t.shape[1]]  # (B, L, D)
        h = encoder(x, mask=~causal_mask(t.shape[1]))
        expected = (
            nn.functional.layer_norm(h, (D,), model.norm.weight, model.norm.bias) @ model.token_embedding.weight.T
        )
        torch.testing.assert_close(model(t), expected, **F64)


# ------------------------------------------------------------------------- grouped-query attention


def repeated_mha(gqa: GroupedQueryAttention) -> MultiHeadAttention:
    """An ordinary multi-head layer whose K/V projections repeat each of gqa's K/V heads G times."""
    H_kv, Dk, G = gqa.num_kv_heads, gqa.d_head, gqa.num_heads // gqa.num_kv_heads
    mha = MultiHeadAttention(gqa.d_model, gqa.num_heads).double()

    def repeat(w):  # (H_kv * Dk, ...) -> (H * Dk, ...): K/V head j becomes query-head slots j*G .. j*G + G - 1
        return w.unflatten(0, (H_kv, Dk)).repeat_interleave(G, dim=0).flatten(0, 1)

    with torch.no_grad():
        for ours, full in ((gqa.w_q, mha.w_q), (gqa.w_o, mha.w_o)):
            full.weight.copy_(ours.weight)
            full.bias.copy_(ours.bias)
        for ours, full in ((gqa.w_k, mha.w_k), (gqa.w_v, mha.w_v)):
            full.weight.copy_(repeat(ours.weight))
            full.bias.copy_(repeat(ours.bias))
    return mha


@pytest.mark.parametrize("num_kv_heads", [1, 2, H])
def test_grouped_query_attention_equals_mha_with_repeated_kv_heads(num_kv_heads):
    gqa = randomise(GroupedQueryAttention(D, H, num_kv_heads).double())
    assert gqa.w_k.out_features == num_kv_heads * (D // H)
    mha = repeated_mha(gqa)
    x = inputs()
    out, weights = gqa(x, return_weights=True)
    expected, expected_weights = mha(x, mask=causal_mask(L), return_weights=True)
    torch.testing.assert_close(out, expected, **F64)
    torch.testing.assert_close(weights, expected_weights, **F64)
    pad = padding_mask(torch.tensor([L, 4, 1]), L)  # (B, 1, S): an extra mask, ANDed with the causal one
    torch.testing.assert_close(gqa(x, mask=pad), mha(x, mask=pad & causal_mask(L)), **F64)
    per_head = torch.rand(3, H, L, L, generator=torch.Generator().manual_seed(3)) < 0.7
    per_head[..., 0] = True  # every query keeps key 0
    torch.testing.assert_close(gqa(x, mask=per_head), mha(x, mask=per_head & causal_mask(L)), **F64)


def rope_reference(gqa: GroupedQueryAttention, x):
    """Causal GQA with RoPE, one head at a time, RoPE as the rotation matrices R_m (x @ R_m), float64."""
    B, n, _ = x.shape
    H, H_kv, Dk = gqa.num_heads, gqa.num_kv_heads, gqa.d_head
    q = (x @ gqa.w_q.weight.T + gqa.w_q.bias).view(B, n, H, Dk)
    k = (x @ gqa.w_k.weight.T + gqa.w_k.bias).view(B, n, H_kv, Dk)
    v = (x @ gqa.w_v.weight.T + gqa.w_v.bias).view(B, n, H_kv, Dk)
    R = torch.stack([rope_rotation_matrix(m, Dk) for m in range(n)])  # (L, Dk, Dk)
    later = torch.ones(n, n, dtype=torch.bool).triu(1)
    heads = []
    for h in range(H):
        j = h // (H // H_kv)  # the K/V head of query head h
        qh = torch.einsum("bld,lde->ble", q[:, :, h], R)
        kh = torch.einsum("bld,lde->ble", k[:, :, j], R)
        scores = (qh @ kh.transpose(1, 2) / math.sqrt(Dk)).masked_fill(later, -math.inf)
        heads.append(torch.softmax(scores, dim=-1) @ v[:, :, j])  # (B, L, Dk)
    return torch.cat(heads, dim=-1) @ gqa.w_o.weight.T + gqa.w_o.bias


@pytest.mark.parametrize("num_kv_heads", [1, 2, H])
def test_grouped_query_attention_with_rope_equals_a_loop_over_heads(num_kv_heads):
    gqa = randomise(GroupedQueryAttention(D, H, num_kv_heads, rope=True).double())
    x = inputs()
    with torch.no_grad():
        torch.testing.assert_close(gqa(x), rope_reference(gqa, x), **F64)
        gqa.rope = False
        assert not torch.allclose(gqa(x), rope_reference(gqa, x), atol=1e-3)  # the rotation matters


def test_grouped_query_attention_keeps_half_precision():
    gqa = GroupedQueryAttention(D, H, 2, rope=True).to(torch.bfloat16)
    out = gqa(inputs(dtype=torch.bfloat16))
    assert out.dtype == torch.bfloat16 and out.shape == (3, L, D) and torch.isfinite(out).all()


# ----------------------------------------------------------------------------------------------- the KV cache


@pytest.mark.parametrize("positions", ["learned", "rope"])
@pytest.mark.parametrize("num_kv_heads", [H, 2, 1])
def test_feeding_pieces_through_the_cache_equals_the_full_forward(positions, num_kv_heads, device):
    for dtype in float_dtypes(device):
        model = tiny_lm(positions, num_kv_heads, dtype=dtype, device=device)
        t = tokens(device=device)
        with torch.no_grad():
            full, full_weights = model(t, return_weights=True)  # (B, 9, V)
            cache = KVCache(model.num_layers)
            pieces, weights = [], []
            for start, stop in ((0, 3), (3, 5), (5, 6), (6, 9)):  # a prompt, then pieces of 2, 1 and 3 tokens
                logits, w = model(t[:, start:stop], cache=cache, return_weights=True)
                pieces.append(logits)
                weights.append(w[-1])  # (B, H, L, S) of the last layer
                assert cache.length == stop
        torch.testing.assert_close(torch.cat(pieces, dim=1), full, **TOL[dtype])
        torch.testing.assert_close(weights[-1], full_weights[-1][:, :, 6:], **TOL[dtype])


def test_kv_cache_nbytes_follows_the_formula():
    layers, B, T = 2, 2, 9
    for num_kv_heads in (H, 2, 1):
        model = tiny_lm(num_kv_heads=num_kv_heads)
        cache = KVCache(layers)
        assert cache.nbytes == 0 and cache.length == 0
        with torch.no_grad():
            model(tokens(B=B, length=T), cache=cache)
        Dk, bytes_per_element = D // H, 8  # float64
        assert cache.nbytes == 2 * B * layers * num_kv_heads * Dk * T * bytes_per_element
        actual = sum(t.untyped_storage().nbytes() for t in (*cache.keys, *cache.values))
        assert cache.nbytes == actual
        assert cache.keys[1].shape == (B, num_kv_heads, T, Dk)
        cache.reset()
        assert cache.nbytes == 0 and cache.keys == [None, None]


def test_kv_cache_append_concatenates_along_the_positions():
    cache = KVCache(1)
    k1, v1, k2, v2 = torch.randn(4, 2, 3, 5, 4).unbind(0)  # each (B, H_kv, L, Dk)
    cache.append(0, k1, v1)
    keys, values = cache.append(0, k2[:, :, :2], v2[:, :, :2])
    torch.testing.assert_close(keys, torch.cat((k1, k2[:, :, :2]), dim=2))
    torch.testing.assert_close(values, torch.cat((v1, v2[:, :, :2]), dim=2))
    assert cache.length == 7
    with pytest.raises(ValueError, match="does not continue"):
        cache.append(0, k1[:1], v1[:1])  # another batch size
    with pytest.raises(ValueError, match="layer"):
        cache.append(1, k1, v1)


# --------------------------------------------------------------------------------- the model as a whole


@pytest.mark.parametrize("positions", ["learned", "rope"])
def test_logits_up_to_t_ignore_the_tokens_after_t(positions):
    model = tiny_lm(positions, num_kv_heads=2)
    t = tokens()
    changed = t.clone()
    changed[:, 5:] = (t[:, 5:] + 1) % 13  # change every token after position 4
    with torch.no_grad():
        before, after = model(t), model(changed)
    torch.testing.assert_close(after[:, :5], before[:, :5], **F64)
    assert (after[:, 5:] - before[:, 5:]).abs().amax(dim=-1).min() > 1e-6  # position 5 onwards does change


def test_attention_weights_are_causal_rows_that_sum_to_one():
    model = tiny_lm("rope", num_kv_heads=1)
    with torch.no_grad():
        _, weights = model(tokens(), return_weights=True)
    for w in weights:  # (B, H, L, L)
        assert w.shape == (2, H, 9, 9)
        assert (w.triu(1) == 0).all()
        torch.testing.assert_close(w.sum(-1), torch.ones_like(w.sum(-1)))


def parameter_count(V, D, H, H_kv, F, layers, max_len, learned, tied):
    Dk = D // H
    attention = (D * D + D) * 2 + (D * H_kv * Dk + H_kv * Dk) * 2  # w_q, w_o; w_k, w_v
    block = attention + (D * F + F) + (F * D + D) + 2 * 2 * D  # two linears, two LayerNorms
    return V * D + learned * max_len * D + layers * block + 2 * D + (not tied) * V * D


@pytest.mark.parametrize("positions", ["learned", "rope"])
@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("num_kv_heads", [H, 1])
def test_parameter_count_and_tied_embeddings(positions, tied, num_kv_heads):
    model = tiny_lm(positions, num_kv_heads, tie_embeddings=tied)
    count = sum(p.numel() for p in model.parameters())
    assert count == parameter_count(13, D, H, num_kv_heads, 24, 2, 12, positions == "learned", tied)
    assert (model.lm_head.weight is model.token_embedding.weight) == tied
    if tied:  # one parameter: a gradient through the head and the embedding lands in the same tensor
        model(tokens()).sum().backward()
        assert model.token_embedding.weight.grad is model.lm_head.weight.grad


def test_bad_arguments_name_what_is_wrong():
    with pytest.raises(ValueError, match="num_heads=4 is not divisible by num_kv_heads=3"):
        GroupedQueryAttention(D, H, 3)
    with pytest.raises(ValueError, match="rope"):
        GroupedQueryAttention(6, 2, rope=True)  # head width 3 is odd
    with pytest.raises(ValueError, match="positions"):
        DecoderLM(13, D, H, 2, max_len=8, positions="sinusoidal")
    model = tiny_lm()
    with pytest.raises(ValueError, match="max_len=12"):
        model(tokens(length=13))
    cache = KVCache(2)
    model(tokens(length=10), cache=cache)
    with pytest.raises(ValueError, match="after 10 cached positions"):
        model(tokens(length=3), cache=cache)
    with pytest.raises(ValueError, match="num_layers=2"):
        model(tokens(), cache=KVCache(3))
    with pytest.raises(TypeError, match="tokens must hold integer"):
        model(tokens().float())
    with pytest.raises(ValueError, match="vocab_size=13"):
        model(tokens() + 13)
    with pytest.raises(ValueError, match=r"tokens must have shape \(B, L\)"):
        model(tokens()[0])
    with pytest.raises(TypeError, match="mask must be a boolean"):
        model(tokens(), mask=torch.ones(9, 9))
    with pytest.raises(ValueError, match="mask must have shape"):
        model(tokens(), mask=torch.ones(9, 8, dtype=torch.bool))


def test_the_decoder_block_is_the_encoder_block_with_causal_attention():
    block = DecoderBlock(8, 4, 2, d_ff=16)
    assert isinstance(block, TransformerEncoderBlock) and block.norm_first
    assert isinstance(block.self_attn, GroupedQueryAttention)
    assert list(block.state_dict()) == [  # PyTorch's names, as before the block shared the encoder's code
        *(f"self_attn.{w}.{p}" for w in ("w_q", "w_k", "w_v", "w_o") for p in ("weight", "bias")),
        *(f"{m}.{p}" for m in ("linear1", "linear2", "norm1", "norm2") for p in ("weight", "bias")),
    ]
    for make in (
        lambda: DecoderBlock(8, 4, activation="tanh"),
        lambda: TransformerEncoderBlock(8, 4, activation="tanh"),
    ):
        with pytest.raises(ValueError, match="activation must be one of 'relu', 'gelu'; got 'tanh'"):
            make()
