"""course_lib.modern: RMSNorm, SwiGLU and the Llama-style block, against Hugging Face transformers' Llama (a test
dependency: the dev extra) with copied weights, and against their definitions."""

from __future__ import annotations

import pytest
import torch

from course_lib import modern
from course_lib.grouped_query import KVCache

D, H, H_KV, F_WIDTH, V = 32, 4, 2, 48, 40
# Against a definition, float64 end to end: the sums are ordered differently, and float64's rounding (about 1e-16
# relative per operation, a few hundred operations deep) stays far below 1e-10.
TOL = dict(rtol=1e-10, atol=1e-10)
# Against Hugging Face: its LlamaRMSNorm computes in float32 and its rotary embedding's cos and sin are float32 whatever
# the input's dtype, so its float64 run rounds to float32 (unit roundoff 2**-24, about 6e-8) in every norm (two per
# block, one at the end) and every rotation. Allowed: 200 of those roundings, 1.2e-5, relative and absolute (the
# values compared are of order 1); seen here: at most 2.2e-5 relative on logits near zero, 2.1e-7 absolute.
HF_TOL = dict(rtol=200 * 2**-24, atol=200 * 2**-24)


@pytest.fixture(scope="module")
def llama():
    """transformers' Llama (modeling_llama), imported by the first test that asks for it: imported at collection, it
    cost every pytest-xdist worker about 3 s of CPU, the one that runs no test here too."""
    pytest.importorskip("transformers")
    from transformers.models.llama import modeling_llama

    return modeling_llama


def config(llama, **changes):
    settings = dict(
        hidden_size=D, intermediate_size=F_WIDTH, num_attention_heads=H, num_key_value_heads=H_KV, head_dim=D // H,
        vocab_size=V, rms_norm_eps=1e-6, rope_theta=10000.0, max_position_embeddings=64, num_hidden_layers=2,
        attention_bias=False, mlp_bias=False, tie_word_embeddings=False,
    )  # fmt: skip
    settings.update(changes)
    cfg = llama.LlamaConfig(**settings)
    cfg._attn_implementation = "eager"
    return cfg


def randomised(module: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Every parameter drawn at random (the norms' gains too, which start at one), so that no part is tested at a
    value that hides it."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=generator, dtype=p.dtype) * 0.3)
    return module


def test_rmsnorm_is_its_definition_and_hugging_faces(llama):
    x = torch.randn(2, 5, D, dtype=torch.float64)
    norm = randomised(modern.RMSNorm(D).double(), 0)
    expected = x / torch.sqrt((x**2).mean(-1, keepdim=True) + 1e-6) * norm.weight
    torch.testing.assert_close(norm(x), expected, **TOL)
    theirs = llama.LlamaRMSNorm(D, eps=1e-6).double()
    theirs.weight.data.copy_(norm.weight)
    torch.testing.assert_close(norm(x), theirs(x), **HF_TOL)


def test_rmsnorm_of_float16_is_computed_in_float32():
    x = torch.full((1, D), 300.0, dtype=torch.float16)  # x**2 = 90,000 overflows float16 (largest 65,504)
    out = modern.RMSNorm(D).half()(x)
    assert out.dtype == torch.float16 and torch.isfinite(out).all() and torch.allclose(out.float(), torch.ones(1, D))


def test_swiglu_is_its_definition_and_matches_a_4d_mlp_in_parameters():
    mlp = modern.SwiGLU(D, F_WIDTH).double()
    x = torch.randn(3, D, dtype=torch.float64)
    gate, up = x @ mlp.w_gate.weight.T, x @ mlp.w_up.weight.T
    torch.testing.assert_close(mlp(x), (gate * torch.sigmoid(gate) * up) @ mlp.w_down.weight.T, **TOL)
    block = modern.ModernDecoderBlock(48, 4)
    assert block.mlp.w_up.out_features == 128  # 8 * 48 / 3
    assert sum(p.numel() for p in block.mlp.parameters()) == 2 * 48 * (4 * 48)  # a 4 D MLP's weights, no biases


def test_half_to_interleaved_turns_rotate_half_into_the_courses_rope(llama):
    """The reordered rows give queries whose course RoPE equals the reordered HF-rotated queries."""
    w = torch.randn(H * 8, D, dtype=torch.float64)
    x = torch.randn(1, 6, D, dtype=torch.float64)
    rotary = llama.LlamaRotaryEmbedding(config(llama, head_dim=8))
    cos, sin = rotary(x, torch.arange(6)[None])
    q_hf = (x @ w.T).view(1, 6, H, 8).transpose(1, 2)  # (B, H, L, Dk)
    q_hf, _ = llama.apply_rotary_pos_emb(q_hf, q_hf, cos.double(), sin.double())
    ours = modern.half_to_interleaved(w, H)
    from course_lib.positional import apply_rope

    q_ours = apply_rope((x @ ours.T).view(1, 6, H, 8).transpose(1, 2))
    scores_hf, scores_ours = q_hf @ q_hf.transpose(-1, -2), q_ours @ q_ours.transpose(-1, -2)
    torch.testing.assert_close(scores_ours, scores_hf, **HF_TOL)  # the same scores: the reorder changes no dot product
    with pytest.raises(ValueError, match="even width"):
        modern.half_to_interleaved(torch.randn(12, D), 4)


def test_block_equals_hugging_faces_llama_decoder_layer_with_copied_weights(llama):
    theirs = randomised(llama.LlamaDecoderLayer(config(llama), layer_idx=0).double().eval(), 1)
    block = modern.ModernDecoderBlock(D, H, H_KV, d_ff=F_WIDTH).double().eval()
    modern.load_llama_layer(block, theirs.state_dict())
    x = torch.randn(2, 7, D, dtype=torch.float64)
    positions = torch.arange(7)[None]
    cos, sin = llama.LlamaRotaryEmbedding(config(llama))(x, positions)
    causal = torch.full((7, 7), float("-inf"), dtype=torch.float64).triu(1)[None, None]  # additive, (1, 1, L, L)
    expected = theirs(x, attention_mask=causal, position_ids=positions, position_embeddings=(cos, sin))
    expected = expected[0] if isinstance(expected, tuple) else expected
    torch.testing.assert_close(block(x), expected, **HF_TOL)


def test_model_equals_llama_for_causal_lm_and_its_cache_gives_the_same_logits(llama):
    theirs = randomised(llama.LlamaForCausalLM(config(llama)).double().eval(), 2)
    ours = modern.ModernLM(V, D, H, 2, max_len=64, num_kv_heads=H_KV, d_ff=F_WIDTH).double().eval()
    with torch.no_grad():
        ours.token_embedding.weight.copy_(theirs.model.embed_tokens.weight)
        ours.norm.weight.copy_(theirs.model.norm.weight)
        ours.lm_head.weight.copy_(theirs.lm_head.weight)
    state = theirs.model.state_dict()
    for i, block in enumerate(ours.blocks):
        prefix = f"layers.{i}."
        modern.load_llama_layer(block, {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)})
    tokens = torch.randint(0, V, (2, 9), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        torch.testing.assert_close(ours(tokens), theirs(tokens).logits, **HF_TOL)
        cache = KVCache(2)
        pieces = torch.cat([ours(tokens[:, :5], cache=cache), ours(tokens[:, 5:], cache=cache)], dim=1)
    torch.testing.assert_close(pieces, ours(tokens), **TOL)


def test_load_llama_layer_names_what_is_missing_or_misshapen(llama):
    block = modern.ModernDecoderBlock(D, H, H_KV, d_ff=F_WIDTH)
    with pytest.raises(ValueError, match="state lacks"):
        modern.load_llama_layer(block, {})
    wrong = llama.LlamaDecoderLayer(config(llama, intermediate_size=64), layer_idx=0).state_dict()
    with pytest.raises(ValueError, match="mlp.w_gate.weight"):
        modern.load_llama_layer(block, wrong)
    with pytest.raises(TypeError, match="ModernDecoderBlock"):
        modern.load_llama_layer(torch.nn.Linear(2, 2), wrong)
