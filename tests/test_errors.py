"""The package's one rule for bad arguments, for every public name: a TypeError for a wrong type, a ValueError for a
wrong value, and a message that names the argument (course_lib/validate.py)."""

import datetime
import math

import pytest
import torch
from torch import Tensor, nn

import course_lib as cl
from course_lib import efficient

X = torch.randn(2, 5, 8)  # (B, L, D)
Q = torch.randn(2, 5, 4)  # (B, L, Dk)
LOGITS = torch.randn(2, 6)  # (B, V)
TOKENS = torch.zeros(1, 3, dtype=torch.long)  # (B, P)
STEP = lambda tokens, source: torch.full((len(tokens), 4), -math.log(4))  # noqa: E731  next_log_probs: uniform, V = 4

# name -> (a call with an argument of the wrong type, a call with a wrong value, the argument both calls get wrong)
CASES = {
    "BytePairEncoder": (
        lambda: cl.BytePairEncoder([(1, 2)], specials="<s>"),
        lambda: cl.BytePairEncoder([(1, 2)], specials=["<s>", "<s>"]),
        "specials",
    ),
    "BagOfEmbeddings": (lambda: cl.BagOfEmbeddings(10, 2.0), lambda: cl.BagOfEmbeddings(10, 0), "num_classes"),
    "DecoderBlock": (lambda: cl.DecoderBlock(8, 2, d_ff=3.5), lambda: cl.DecoderBlock(8, 2, d_ff=0), "d_ff"),
    "DecoderLM": (
        lambda: cl.DecoderLM(10, 8, 2, 1, max_len="8"),
        lambda: cl.DecoderLM(10, 8, 2, 1, max_len=0),
        "max_len",
    ),
    "GroupedQueryAttention": (
        lambda: cl.GroupedQueryAttention(8, 4, 2.0),
        lambda: cl.GroupedQueryAttention(8, 4, 3),
        "num_kv_heads",
    ),
    "KVCache": (lambda: cl.KVCache(2.0), lambda: cl.KVCache(0), "num_layers"),
    "LearnedPositionalEmbedding": (
        lambda: cl.LearnedPositionalEmbedding("8", 4),
        lambda: cl.LearnedPositionalEmbedding(0, 4),
        "max_len",
    ),
    "MultiHeadAttention": (lambda: cl.MultiHeadAttention(8, 2.0), lambda: cl.MultiHeadAttention(8, 0), "num_heads"),
    "PatchEmbedding": (lambda: cl.PatchEmbedding(1, 2.0, 8), lambda: cl.PatchEmbedding(1, 0, 8), "patch_size"),
    "SelfAttention": (lambda: cl.SelfAttention(8.0), lambda: cl.SelfAttention(-8), "d_model"),
    "SequenceClassifier": (
        lambda: cl.SequenceClassifier(10, 2, dropout="0.1"),
        lambda: cl.SequenceClassifier(10, 2, dropout=1.5),
        "dropout",
    ),
    "TinyCNN": (lambda: cl.TinyCNN(width=1.5), lambda: cl.TinyCNN(width=0), "width"),
    "TinyViT": (lambda: cl.TinyViT(depth=None), lambda: cl.TinyViT(depth=0), "depth"),
    "TransformerEncoder": (
        lambda: cl.TransformerEncoder(8, 2, num_layers=1.0),
        lambda: cl.TransformerEncoder(8, 2, num_layers=0),
        "num_layers",
    ),
    "TransformerEncoderBlock": (
        lambda: cl.TransformerEncoderBlock(8, 2, d_ff=3.5),
        lambda: cl.TransformerEncoderBlock(8, 2, d_ff=0),
        "d_ff",
    ),
    "VanillaRNN": (lambda: cl.VanillaRNN(4, True), lambda: cl.VanillaRNN(4, 0), "hidden_size"),
    "ViTBlock": (lambda: cl.ViTBlock(8, 2, mlp_ratio=1.5), lambda: cl.ViTBlock(8, 2, mlp_ratio=0), "mlp_ratio"),
    "Vocab": (lambda: cl.Vocab(["a"], unk_token=1), lambda: cl.Vocab(["a", "a"], unk_token=None), "token"),
    "accuracy": (lambda: cl.accuracy([1.0], torch.zeros(1)), lambda: cl.accuracy(X, torch.zeros(3)), "logits"),
    "apply_rope": (lambda: cl.apply_rope(X.tolist()), lambda: cl.apply_rope(torch.randn(2, 5, 7)), "x"),
    "associative_recall": (
        lambda: cl.associative_recall(10, 2, num_keys="32"),
        lambda: cl.associative_recall(10, 2, num_keys=0),
        "num_keys",
    ),
    "attention_weights": (
        lambda: cl.attention_weights(Q, Q.tolist()),
        lambda: cl.attention_weights(Q, Q[..., :3]),
        "k",
    ),
    "bigbird_mask": (
        lambda: cl.bigbird_mask(8, 1, num_random=1.0),
        lambda: cl.bigbird_mask(8, 1, num_random=-1),
        "num_random",
    ),
    "build_vocab": (lambda: cl.build_vocab("a b", min_freq=1.5), lambda: cl.build_vocab("a b", min_freq=0), "min_freq"),
    "causal_mask": (lambda: cl.causal_mask(4.0), lambda: cl.causal_mask(-1), "n"),
    "cell_jacobian_norms": (
        lambda: cl.cell_jacobian_norms(nn.RNN(3, 4), torch.randn(1, 5, 3)),
        lambda: cl.cell_jacobian_norms(nn.LSTM(3, 4, batch_first=False), torch.randn(1, 5, 3)),
        "lstm",
    ),
    "check_close": (lambda: cl.check_close(X, X, atol="0"), lambda: cl.check_close(X, X, atol=-1.0), "atol"),
    "check_answer": (
        lambda: cl.check_answer(torch.zeros(1), torch.zeros(1), atol="0"),
        lambda: cl.check_answer(torch.zeros(1), torch.zeros(1), atol=-1.0),
        "atol",
    ),
    "check_function": (
        lambda: cl.check_function(torch.relu, torch.relu, lambda g: (X,), trials=2.0),
        lambda: cl.check_function(torch.relu, torch.relu, lambda g: (X,), trials=0),
        "trials",
    ),
    "chunked_attention": (
        lambda: cl.chunked_attention(Q, Q, Q, chunk_size=2.5),
        lambda: cl.chunked_attention(Q, Q, Q, chunk_size=0),
        "chunk_size",
    ),
    "concat_window": (lambda: cl.concat_window(X, 1.0), lambda: cl.concat_window(X, -1), "radius"),
    "conv_as_attention": (
        lambda: cl.conv_as_attention(torch.randn(1, 3, 5, 5), nn.Conv2d(3, 2, 3, padding=1), alpha="1"),
        lambda: cl.conv_as_attention(torch.randn(1, 3, 5, 5), nn.Conv2d(3, 2, 3, padding=1), alpha=0.0),
        "alpha",
    ),
    "cross_entropy": (
        lambda: cl.cross_entropy([0.0], torch.zeros(1)),
        lambda: cl.cross_entropy(X, torch.zeros(7, dtype=torch.long)),
        "outputs",
    ),
    "evaluate": (
        lambda: cl.evaluate(nn.Identity(), (X, X), cl.accuracy, batch_size=1.5),
        lambda: cl.evaluate(nn.Identity(), (X, X), cl.accuracy, batch_size=0),
        "batch_size",
    ),
    "explain_difference": (
        lambda: cl.explain_difference(X, X, rtol=None),
        lambda: cl.explain_difference(X, X, rtol=-1e-4),
        "rtol",
    ),
    "blocked": (lambda: cl.blocked("torch.softmax").__enter__(), lambda: cl.blocked(["softmax"]).__enter__(), "name"),
    "variant_generator": (lambda: cl.variant_generator(1, 8), lambda: cl.variant_generator(1, ""), "exercise"),
    "variant_numbers": (
        lambda: cl.variant_numbers(1, 8, 0, lambda g: 1),
        lambda: cl.variant_numbers(1, "", 0, lambda g: 1),
        "exercise",
    ),
    "fit": (
        lambda: cl.fit(nn.Identity(), (X, X), epochs=1.0),
        lambda: cl.fit(nn.Identity(), (X, X), epochs=0),
        "epochs",
    ),
    "frame_signal": (
        lambda: cl.frame_signal(torch.zeros(800), 16000.0),
        lambda: cl.frame_signal(torch.zeros(800), 0),
        "sample_rate",
    ),
    "generate": (
        lambda: cl.generate(cl.DecoderLM(10, 8, 2, 1, max_len=8), TOKENS, 2, temperature="1"),
        lambda: cl.generate(cl.DecoderLM(10, 8, 2, 1, max_len=8), TOKENS, 2, temperature=0.0),
        "temperature",
    ),
    "get_device": (lambda: cl.get_device(3), lambda: cl.get_device("abacus"), "prefer"),
    "gradient_norms_through_time": (
        lambda: cl.gradient_norms_through_time(nn.RNN(3, 4), [[0.0]]),
        lambda: cl.gradient_norms_through_time(nn.RNN(3, 4, batch_first=True), torch.randn(1, 5, 2)),
        "x",
    ),
    "hidden_jacobians": (
        lambda: cl.hidden_jacobians(nn.RNN(3, 4), [[0.0]]),
        lambda: cl.hidden_jacobians(nn.RNN(3, 4, batch_first=True), torch.randn(1, 5, 2)),
        "x",
    ),
    "input_gradient_norms": (
        lambda: cl.input_gradient_norms(nn.Identity(), [[0.0]]),
        lambda: cl.input_gradient_norms(nn.Identity(), torch.randn(4)),
        "x",
    ),
    "kernel_shifts": (lambda: cl.kernel_shifts(3.0), lambda: cl.kernel_shifts(4), "kernel_size"),
    "linear_attention": (
        lambda: cl.linear_attention(Q, Q, Q, chunk_size=2.5),
        lambda: cl.linear_attention(Q, Q, Q, chunk_size=0),
        "chunk_size",
    ),
    "linear_attention_weights": (
        lambda: cl.linear_attention_weights(Q, Q, eps="1e-6"),
        lambda: cl.linear_attention_weights(Q, Q, eps=-1.0),
        "eps",
    ),
    "load_digits": (lambda: cl.load_digits(3), None, "path"),  # a missing file is a FileNotFoundError
    "load_tang300": (lambda: cl.load_tang300(3), None, "path"),
    "load_course_prose": (lambda: cl.load_course_prose(3), None, "path"),
    "merge_pair": (lambda: cl.merge_pair([1, 2], (1, 2), 2.0), lambda: cl.merge_pair([1, 2], (1, 2), -1), "new_id"),
    "longformer_mask": (lambda: cl.longformer_mask(8, 1.0), lambda: cl.longformer_mask(8, -1), "window"),
    "lstm_gates": (
        lambda: cl.lstm_gates(nn.RNN(3, 4), torch.randn(1, 5, 3)),
        lambda: cl.lstm_gates(nn.LSTM(3, 4, num_layers=2, batch_first=True), torch.randn(1, 5, 3)),
        "lstm",
    ),
    "mask_receptive_field": (
        lambda: cl.mask_receptive_field(cl.causal_mask(4), 1.0),
        lambda: cl.mask_receptive_field(cl.causal_mask(4), -1),
        "num_layers",
    ),
    "merge_heads": (lambda: cl.merge_heads(X.tolist()), lambda: cl.merge_heads(X), "x"),
    "num_frames": (lambda: cl.num_frames(10, 2.0, 1), lambda: cl.num_frames(10, 0, 1), "frame_len"),
    "one_hot": (
        lambda: cl.one_hot(torch.zeros(2, dtype=torch.long), 2.0),
        lambda: cl.one_hot(torch.zeros(2, dtype=torch.long), 0),
        "num_classes",
    ),
    "pad_sequences": (lambda: cl.pad_sequences([[1, 2]]), lambda: cl.pad_sequences([]), "sequences"),
    "padding_mask": (lambda: cl.padding_mask([2, 3], 4.0), lambda: cl.padding_mask([2, 3], -1), "max_len"),
    "patchify": (
        lambda: cl.patchify(torch.zeros(1, 1, 4, 4), 2.0),
        lambda: cl.patchify(torch.zeros(1, 1, 4, 4), 3),
        "patch_size",
    ),
    "progress_bar": (lambda: cl.progress_bar(total="8"), lambda: cl.progress_bar(total=-1), "total"),
    # notebook 15: the modern block and LoRA
    "RMSNorm": (lambda: cl.RMSNorm(8, eps="1e-6"), lambda: cl.RMSNorm(8, eps=-1.0), "eps"),
    "SwiGLU": (lambda: cl.SwiGLU(8, 2.5), lambda: cl.SwiGLU(8, 0), "d_ff"),
    "ModernDecoderBlock": (
        lambda: cl.ModernDecoderBlock(8, 2, d_ff=3.5),
        lambda: cl.ModernDecoderBlock(8, 2, d_ff=0),
        "d_ff",
    ),
    "ModernLM": (lambda: cl.ModernLM(10, 8, 2, 1, max_len="8"), lambda: cl.ModernLM(10, 8, 2, 1, max_len=0), "max_len"),
    "half_to_interleaved": (
        lambda: cl.half_to_interleaved([[1.0, 2.0]], 1),
        lambda: cl.half_to_interleaved(torch.randn(12, 4), 4),
        "weight",
    ),
    "load_llama_layer": (
        lambda: cl.load_llama_layer(cl.ModernDecoderBlock(8, 2), "state"),
        lambda: cl.load_llama_layer(cl.ModernDecoderBlock(8, 2), {}),
        "state",
    ),
    "LoRALinear": (
        lambda: cl.LoRALinear(torch.nn.Linear(4, 4), 1.5),
        lambda: cl.LoRALinear(torch.nn.Linear(4, 4), 0),
        "rank",
    ),
    "add_lora": (
        lambda: cl.add_lora(cl.ModernLM(10, 8, 2, 1, max_len=8), rank="2"),
        lambda: cl.add_lora(cl.ModernLM(10, 8, 2, 1, max_len=8), rank=0),
        "rank",
    ),
    "merge_lora": (lambda: cl.merge_lora("model"), None, "model"),
    "count_parameters": (lambda: cl.count_parameters([torch.zeros(2)]), None, "model"),
    "plot_attention": (
        lambda: cl.plot_attention("weights"),
        lambda: cl.plot_attention(torch.zeros(2, 2, 2, 2)),
        "weights",
    ),
    "recall_task": (lambda: cl.recall_task(10, 2.0), lambda: cl.recall_task(10, 0), "distance"),
    "recall_token_names": (lambda: cl.recall_token_names(8.0), lambda: cl.recall_token_names(1), "num_values"),
    "receptive_field": (
        lambda: cl.receptive_field(nn.Identity(), (1, 4, 4), (1.0, 1)),
        lambda: cl.receptive_field(nn.Identity(), (1, 4, 4), (9, 1)),
        "position",
    ),
    "rope_rotation_matrix": (lambda: cl.rope_rotation_matrix(1, 4.0), lambda: cl.rope_rotation_matrix(1, 3), "d_model"),
    "scaled_dot_product_attention": (
        lambda: cl.scaled_dot_product_attention(Q, Q, Q.tolist()),
        lambda: cl.scaled_dot_product_attention(Q, Q, Q[:, :3]),
        "v",
    ),
    "sample_next_token": (
        lambda: cl.sample_next_token(LOGITS, temperature=1.0, top_k=2.0),
        lambda: cl.sample_next_token(LOGITS, temperature=1.0, top_k=0),
        "top_k",
    ),
    "set_seed": (lambda: cl.set_seed(1.5), None, "seed"),  # every int is a seed
    "shift_attention_weights": (
        lambda: cl.shift_attention_weights(4, 4, 3.0),
        lambda: cl.shift_attention_weights(4, 4, 2),
        "kernel_size",
    ),
    "sinusoidal_encoding": (lambda: cl.sinusoidal_encoding(4, 2.5), lambda: cl.sinusoidal_encoding(4, 0), "d_model"),
    "sinusoidal_frequencies": (
        lambda: cl.sinusoidal_frequencies(4, base="1e4"),
        lambda: cl.sinusoidal_frequencies(4, base=0.0),
        "base",
    ),
    "sinusoidal_shift_matrix": (
        lambda: cl.sinusoidal_shift_matrix(1, 4.0),
        lambda: cl.sinusoidal_shift_matrix(1, 0),
        "d_model",
    ),
    "skipgram_pairs": (
        lambda: cl.skipgram_pairs([torch.arange(4)], 1.0),
        lambda: cl.skipgram_pairs([torch.arange(4)], 0),
        "window",
    ),
    "sliding_window_attention": (
        lambda: cl.sliding_window_attention(Q, Q, Q, 2.5),
        lambda: cl.sliding_window_attention(Q, Q, Q, -1),
        "window",
    ),
    "softmax_jacobian": (
        lambda: cl.softmax_jacobian([0.5, 0.5]),
        lambda: cl.softmax_jacobian(torch.tensor([2.0, 3.0])),
        "a",
    ),
    "split_heads": (lambda: cl.split_heads(X, 2.0), lambda: cl.split_heads(X, 3), "num_heads"),
    "tokenize": (lambda: cl.tokenize(3), None, "text"),
    "toy_corpus": (lambda: cl.toy_corpus(2.0), lambda: cl.toy_corpus(0), "num_sentences"),
    "top_k_filter": (lambda: cl.top_k_filter(LOGITS, 2.5), lambda: cl.top_k_filter(LOGITS, 0), "k"),
    "top_p_filter": (lambda: cl.top_p_filter(LOGITS, "0.9"), lambda: cl.top_p_filter(LOGITS, 1.5), "p"),
    "unpatchify": (
        lambda: cl.unpatchify(torch.zeros(1, 4, 4), 2.0, 4, 4),
        lambda: cl.unpatchify(torch.zeros(1, 4, 4), 0, 4, 4),
        "patch_size",
    ),
    "window_mask": (lambda: cl.window_mask(4, 1.0), lambda: cl.window_mask(4, -1), "window"),
    "qkv_diagram": (lambda: cl.qkv_diagram(n=4.0), lambda: cl.qkv_diagram(n=0), "n"),
    "multihead_diagram": (
        lambda: cl.multihead_diagram(num_heads="8"),
        lambda: cl.multihead_diagram(num_heads=3),
        "num_heads",
    ),
    "vit_diagram": (lambda: cl.vit_diagram(patch_size=2.0), lambda: cl.vit_diagram(patch_size=3), "patch_size"),
    # notebook 14
    "TransformerDecoderBlock": (
        lambda: cl.TransformerDecoderBlock(8, 2, d_ff=3.5),
        lambda: cl.TransformerDecoderBlock(8, 2, d_ff=0),
        "d_ff",
    ),
    "TransformerDecoder": (
        lambda: cl.TransformerDecoder(8, 2, 2.0),
        lambda: cl.TransformerDecoder(8, 2, 0),
        "num_layers",
    ),
    "EncoderDecoder": (
        lambda: cl.EncoderDecoder(8, 2, 1, 1, d_ff=3.5),
        lambda: cl.EncoderDecoder(8, 2, 1, 1, d_ff=0),
        "d_ff",
    ),
    "Translator": (lambda: cl.Translator(10, 10, max_len="8"), lambda: cl.Translator(10, 10, max_len=0), "max_len"),
    "beam_search": (
        lambda: cl.beam_search(STEP, 1, bos=1, eos=2, max_len=3, beam_width=2.0),
        lambda: cl.beam_search(STEP, 1, bos=1, eos=2, max_len=3, beam_width=0),
        "beam_width",
    ),
    "greedy_search": (
        lambda: cl.greedy_search(STEP, 1, bos=1, eos=2, max_len=2.0),
        lambda: cl.greedy_search(STEP, 1, bos=1, eos=2, max_len=0),
        "max_len",
    ),
    "exhaustive_search": (
        lambda: cl.exhaustive_search(STEP, 4.0, bos=1, eos=2, max_len=3),
        lambda: cl.exhaustive_search(STEP, 0, bos=1, eos=2, max_len=3),
        "vocab_size",
    ),
    "date_pair": (
        lambda: cl.date_pair(datetime.date(2024, 3, 5), 1.0),
        lambda: cl.date_pair(datetime.date(2024, 3, 5), 5),
        "form",
    ),
    "date_splits": (lambda: cl.date_splits((2.0,)), lambda: cl.date_splits((-1,)), "sizes"),
    "date_tokens": (lambda: cl.date_tokens(5), None, "english"),
}
# Names with no argument to get wrong, or only a data class.
NO_ARGUMENTS = {
    "DATA_DIR", "NOTEBOOKS_DIR", "ROOT", "WORD_CATEGORIES", "History", "encoder_block_diagram",
    "architecture_families_diagram",
    "ATTENTION_FUNCTIONS", "SOFTMAX_FUNCTIONS", "NORMALIZATIONS", "ROW_MEANS", "cjk_fonts",
}  # fmt: skip


def test_every_public_name_is_covered():
    assert set(cl.__all__) - NO_ARGUMENTS - set(CASES) == set()


@pytest.mark.parametrize("name", sorted(CASES))
def test_wrong_type_is_a_type_error_and_wrong_value_a_value_error(name):
    wrong_type, wrong_value, argument = CASES[name]
    assert argument, "name the argument the calls get wrong"
    with pytest.raises(TypeError, match=argument):
        wrong_type()
    if wrong_value is not None:
        with pytest.raises(ValueError, match=argument):
            wrong_value()


def test_batch_dimensions_that_do_not_broadcast_name_every_input():
    with pytest.raises(ValueError, match=r"batch dimensions of q, k do not broadcast: q has shape \(2, 5, 4\)"):
        cl.attention_weights(Q, torch.randn(3, 5, 4))
    with pytest.raises(ValueError, match=r"of q, k, v do not broadcast: .* v has shape \(3, 5, 4\)"):
        cl.scaled_dot_product_attention(Q, Q, torch.randn(3, 5, 4))


# ------------------------------------------------------------------ validate's helpers and the one mask rule


def test_validate_helpers_follow_the_rule():
    from course_lib import validate

    assert validate.flag("causal", True) is True
    with pytest.raises(TypeError, match="causal must be a bool, got int 1"):
        validate.flag("causal", 1)
    assert validate.integer_or_range("distance", 3, minimum=1) == (3, 3)
    assert validate.integer_or_range("distance", (2, 5), minimum=1) == (2, 5)
    with pytest.raises(TypeError, match=r"distance must be an int or a \(low, high\) pair, got list"):
        validate.integer_or_range("distance", [2, 5])
    with pytest.raises(TypeError, match=r"distance\[1\] must be an int, got float 5.0"):
        validate.integer_or_range("distance", (2, 5.0))
    with pytest.raises(ValueError, match=r"distance must be an int or a \(low, high\) pair, got \(1, 2, 3\)"):
        validate.integer_or_range("distance", (1, 2, 3))
    with pytest.raises(ValueError, match="distance range must have low <= high"):
        validate.integer_or_range("distance", (5, 2))
    with pytest.raises(ValueError, match=r"distance\[0\] must be >= 1, got 0"):
        validate.integer_or_range("distance", (0, 2), minimum=1)
    assert validate.instance("cache", None, cl.KVCache, "a KVCache", optional=True) is None
    with pytest.raises(TypeError, match="cache must be a KVCache or None, got int"):
        validate.instance("cache", 3, cl.KVCache, "a KVCache", optional=True)
    with pytest.raises(TypeError, match="indices must hold integers, got dtype torch.float32"):
        validate.tensor("indices", torch.zeros(2), integral=True)
    assert validate.tensor("x", X, shape=(None, None, 8)) is X
    assert validate.tensor("x", X, shape=(..., 5, 8)) is X and validate.tensor("x", X, shape=(..., 8)) is X
    for shape in ((None, 8), (2, 5, 7), (..., 4, 5, 8)):
        with pytest.raises(ValueError, match=r"x must have shape \(B, L, d_model=7\), got \(2, 5, 8\)"):
            validate.tensor("x", X, shape=shape, layout="(B, L, d_model=7)")


MASK_USERS = {  # every function and layer that takes an attention mask
    "attention_weights": lambda mask: cl.attention_weights(Q, Q, mask),
    "scaled_dot_product_attention": lambda mask: cl.scaled_dot_product_attention(Q, Q, Q, mask),
    "SelfAttention": lambda mask: cl.SelfAttention(8)(X, mask),
    "MultiHeadAttention": lambda mask: cl.MultiHeadAttention(8, 2)(X, mask=mask),
    "GroupedQueryAttention": lambda mask: cl.GroupedQueryAttention(8, 2, 1)(X, mask),
    "TransformerEncoderBlock": lambda mask: cl.TransformerEncoderBlock(8, 2)(X, mask),
    "DecoderBlock": lambda mask: cl.DecoderBlock(8, 2)(X, mask),
    "SequenceClassifier": lambda mask: cl.SequenceClassifier(10, 2, d_model=8, pooling="mean")(TOKENS, mask),
    "mask_receptive_field": lambda mask: cl.mask_receptive_field(mask, 1),
}


@pytest.mark.parametrize("name", sorted(MASK_USERS))
@pytest.mark.parametrize("mask", [torch.ones(5, 5), torch.ones(5, 5, dtype=torch.long), [[True]]])
def test_one_wording_for_a_mask_that_is_not_boolean(name, mask):
    if name == "SequenceClassifier" and isinstance(mask, Tensor):
        mask = mask[:3, :3]
    with pytest.raises(TypeError, match=r"^mask must be a boolean tensor \(True = may attend\), got "):
        MASK_USERS[name](mask)


def test_the_mask_shapes_a_layer_accepts():
    from course_lib.masks import expand_mask

    B, H, L, S = 2, 4, 3, 5
    m = torch.rand(B, H, L, S) > 0.5
    assert expand_mask(m[0, 0], (B, H, L, S), heads=True).shape == (1, 1, L, S)  # (L, S): every sequence and head
    assert torch.equal(expand_mask(m[:, 0], (B, H, L, S), heads=True)[:, 0], m[:, 0])  # (B, L, S): per sequence
    assert expand_mask(m[:, :1, :1], (B, H, L, S), heads=True).shape == (B, 1, 1, S)  # a padding mask (B, 1, S)
    assert expand_mask(m, (B, H, L, S), heads=True) is m  # (B, H, L, S): per head
    assert torch.equal(expand_mask(m[:, 0], (B, L, S)), m[:, 0])  # a function's scores: any broadcasting shape
    for bad in (m[0, 0, 0], m[..., :2], m[:, None]):
        with pytest.raises(ValueError, match=r"mask must have shape \(L, S\), \(B, L, S\) or \(B, H, L, S\) with"):
            expand_mask(bad, (B, H, L, S), heads=True)
    with pytest.raises(ValueError, match=r"does not broadcast to the scores \(\.\.\., L, S\) = \(2, 3, 5\)"):
        expand_mask(m[:, 0, :2], (B, L, S))


# ------------------------------------------------------------------ issue 43: the API's last open edges


SCALE_USERS = {  # every public function that takes `scale`
    "attention_weights": lambda scale: cl.attention_weights(Q, Q, scale=scale),
    "scaled_dot_product_attention": lambda scale: cl.scaled_dot_product_attention(Q, Q, Q, scale=scale),
    "chunked_attention": lambda scale: cl.chunked_attention(Q, Q, Q, 2, scale=scale),
    "chunked_attention_reference": lambda scale: efficient.chunked_attention_reference(Q, Q, Q, scale=scale),
    "sliding_window_attention": lambda scale: cl.sliding_window_attention(Q, Q, Q, 1, scale=scale),
    "sliding_window_attention_reference": lambda scale: efficient.sliding_window_attention_reference(
        Q, Q, Q, 1, scale=scale
    ),
}
BAD_SCALES = [  # (scale, the error): a bool is not a number; NaN, inf, 0, negatives and 1e308 (inf in float32) are
    (True, TypeError),  # not scales: before issue 43 every one of them was accepted, and the last four gave NaN
    ("0.5", TypeError),
    (torch.tensor(0.5), TypeError),
    (math.nan, ValueError),
    (math.inf, ValueError),
    (0.0, ValueError),
    (-1.0, ValueError),
    (1e308, ValueError),
]


@pytest.mark.parametrize("name", sorted(SCALE_USERS))
@pytest.mark.parametrize(("scale", "error"), BAD_SCALES, ids=[repr(s) for s, _ in BAD_SCALES])
def test_scale_is_checked_at_the_edge(name, scale, error):
    with pytest.raises(error, match=r"^scale must be "):
        SCALE_USERS[name](scale)


def test_the_largest_scale_is_that_of_the_dtype_the_scores_are_computed_in():
    q64 = torch.full((1, 2, 3), 1e-20, dtype=torch.float64)  # scores 3e-40: times 1e39 they stay finite
    assert torch.isfinite(cl.scaled_dot_product_attention(q64, q64, q64, scale=1e39)).all()
    for q in (q64.float(), q64.half()):  # float16 is computed in float32, whose largest number is 3.4e38
        with pytest.raises(ValueError, match=r"^scale must be at most 3\.403e\+38, the largest torch\.float32"):
            cl.scaled_dot_product_attention(q, q, q, scale=1e39)


TOKENS_3 = torch.ones(1, 3, dtype=torch.long)
RETURN_WEIGHTS_USERS = {  # every public function and forward that takes `return_weights`
    "scaled_dot_product_attention": lambda flag: cl.scaled_dot_product_attention(Q, Q, Q, return_weights=flag),
    "conv_as_attention": lambda flag: cl.conv_as_attention(
        torch.randn(1, 3, 5, 5), nn.Conv2d(3, 2, 3, padding=1), return_weights=flag
    ),
    "SelfAttention": lambda flag: cl.SelfAttention(8)(X, return_weights=flag),
    "MultiHeadAttention": lambda flag: cl.MultiHeadAttention(8, 2)(X, return_weights=flag),
    "GroupedQueryAttention": lambda flag: cl.GroupedQueryAttention(8, 2)(X, return_weights=flag),
    "TransformerEncoderBlock": lambda flag: cl.TransformerEncoderBlock(8, 2)(X, return_weights=flag),
    "TransformerEncoder": lambda flag: cl.TransformerEncoder(8, 2, 1)(X, return_weights=flag),
    "DecoderBlock": lambda flag: cl.DecoderBlock(8, 2)(X, return_weights=flag),
    "DecoderLM": lambda flag: cl.DecoderLM(10, 8, 2, 1, max_len=8)(TOKENS_3, return_weights=flag),
    "TransformerDecoderBlock": lambda flag: cl.TransformerDecoderBlock(8, 2)(X, X, return_weights=flag),
    "TransformerDecoder": lambda flag: cl.TransformerDecoder(8, 2, 1)(X, X, return_weights=flag),
    "EncoderDecoder": lambda flag: cl.EncoderDecoder(8, 2, 1, 1, d_ff=16)(X, X, return_weights=flag),
    "Translator": lambda flag: cl.Translator(10, 10, d_model=8, num_heads=2)(TOKENS_3, TOKENS_3, return_weights=flag),
    "Translator.decode": lambda flag: _decode(return_weights=flag),
    "TinyViT": lambda flag: cl.TinyViT(d_model=8, num_heads=2)(torch.randn(1, 1, 8, 8), return_weights=flag),
    "SequenceClassifier": lambda flag: cl.SequenceClassifier(10, 2, d_model=8)(TOKENS_3, return_weights=flag),
}


def _decode(memory=None, valid=None, **kwargs):
    translator = cl.Translator(10, 10, d_model=8, num_heads=2)
    encoded = translator.encode(TOKENS_3)
    memory, valid = (encoded[0] if memory is None else memory), (encoded[1] if valid is None else valid)
    return translator.decode(TOKENS_3, memory, valid, **kwargs)


@pytest.mark.parametrize("name", sorted(RETURN_WEIGHTS_USERS))
@pytest.mark.parametrize("flag", [1, None, "yes"])
def test_return_weights_is_checked_as_a_flag(name, flag):
    with pytest.raises(TypeError, match=r"^return_weights must be a bool, got "):
        RETURN_WEIGHTS_USERS[name](flag)


V4 = 4


def _log_probs(rows):
    return torch.log_softmax(torch.randn(rows, V4, generator=torch.Generator().manual_seed(rows)), dim=-1)


SEARCH_STEPS = {  # a step function of the wrong kind -> what it returns for N prefixes
    "one row for every prefix": lambda tokens, source: _log_probs(1),  # broadcast before: every row got row 0's
    "probabilities": lambda tokens, source: _log_probs(len(tokens)).exp(),
    "logits": lambda tokens, source: _log_probs(len(tokens)) + 1.0,
    "token ids": lambda tokens, source: torch.zeros(len(tokens), dtype=torch.long),
    "NaN": lambda tokens, source: torch.full((len(tokens), V4), math.nan),
    "a list": lambda tokens, source: _log_probs(len(tokens)).tolist(),
}
SEARCH_ERRORS = {
    "one row for every prefix": (ValueError, r"^next_log_probs's output must have shape \(N=3, V\)"),
    "probabilities": (ValueError, r"^next_log_probs's output must hold log-probabilities"),
    "logits": (ValueError, r"^next_log_probs's output must hold log-probabilities"),
    "token ids": (TypeError, r"^next_log_probs's output must have a floating dtype, got torch.int64"),
    "NaN": (ValueError, r"^next_log_probs's output must hold log-probabilities"),
    "a list": (TypeError, r"^next_log_probs's output must be a torch.Tensor, got list"),
}
SEARCHES = {
    "greedy_search": lambda step, **kw: cl.greedy_search(step, 3, max_len=3, **{"bos": 1, "eos": 2, **kw}),
    "beam_search": lambda step, **kw: cl.beam_search(step, 1, beam_width=3, max_len=3, **{"bos": 1, "eos": 2, **kw}),
}


@pytest.mark.parametrize("search", sorted(SEARCHES))
@pytest.mark.parametrize("kind", sorted(SEARCH_STEPS))
def test_a_search_refuses_a_step_function_of_the_wrong_kind(search, kind):
    error, message = SEARCH_ERRORS[kind]  # greedy: 3 sources; beam: one source, K = 3 beams; N = 3 rows either way
    with pytest.raises(error, match=message):
        SEARCHES[search](SEARCH_STEPS[kind])


def test_a_search_names_eos_beyond_the_vocabulary():
    good = lambda tokens, source: _log_probs(len(tokens))  # noqa: E731
    for search in SEARCHES.values():  # IndexError deep inside (beam) or a silent eos that never comes (greedy)
        with pytest.raises(ValueError, match=r"^eos=9 must be a token id below V=4, the width of next_log_probs"):
            search(good, eos=9)
    with pytest.raises(ValueError, match=r"^eos=9 must be a token id below vocab_size=4"):
        cl.exhaustive_search(good, 4, bos=1, eos=9, max_len=2)
    with pytest.raises(ValueError, match=r"^next_log_probs's output must have shape \(N=\d+, V=3\)"):
        cl.exhaustive_search(good, 3, bos=1, eos=2, max_len=2)  # a step with V = 4, told 3


TRANSLATOR = cl.Translator(10, 10, d_model=8, num_heads=2)
NEWER_API = {  # a bad input to notebook 14's API -> (the error, its message): each names the argument
    "TransformerDecoderBlock without memory": (  # before: self-attention instead of cross-attention, silently
        lambda: cl.TransformerDecoderBlock(8, 2)(X, None),
        TypeError,
        r"^memory must be a torch.Tensor, got NoneType",
    ),
    "TransformerDecoder without memory": (
        lambda: cl.TransformerDecoder(8, 2, 1)(X, None),
        TypeError,
        r"^memory must be a torch.Tensor",
    ),
    "Translator.decode without memory": (lambda: _decode(memory=torch.tensor(0.0)), ValueError, r"^memory must have"),
    "decoder block, memory of another width": (
        lambda: cl.TransformerDecoderBlock(8, 2)(X, torch.randn(2, 3, 6)),
        ValueError,
        r"^memory must have shape \(B, S, d_model=8\), got \(2, 3, 6\)",  # before: 'key must have shape'
    ),
    "decoder block, memory of another batch": (
        lambda: cl.TransformerDecoderBlock(8, 2)(X, torch.randn(3, 4, 8)),
        ValueError,
        r"^x and memory must have the same batch size B, got x \(2, 5, 8\) and memory \(3, 4, 8\)",
    ),
    "decoder block, memory_mask": (
        lambda: cl.TransformerDecoderBlock(8, 2)(X, X, memory_mask=torch.ones(5, 4, dtype=torch.bool)),
        ValueError,
        r"^memory_mask must have shape",
    ),
    "EncoderDecoder, src": (  # before: 'x must have shape'
        lambda: cl.EncoderDecoder(8, 2, 1, 1, d_ff=16)(torch.randn(2, 3, 6), X),
        ValueError,
        r"^src must have shape \(B, L, d_model=8\), got \(2, 3, 6\)",
    ),
    "EncoderDecoder, tgt": (
        lambda: cl.EncoderDecoder(8, 2, 1, 1, d_ff=16)(X, torch.randn(2, 3, 6)),
        ValueError,
        r"^tgt must have shape \(B, L, d_model=8\), got \(2, 3, 6\)",
    ),
    "EncoderDecoder, batch": (  # before: 'query (B, L, D), key (B, S, D) and value ... must agree'
        lambda: cl.EncoderDecoder(8, 2, 1, 1, d_ff=16)(X, torch.randn(3, 4, 8)),
        ValueError,
        r"^tgt and src must have the same batch size B",
    ),
    "EncoderDecoder, tgt_mask": (
        lambda: cl.EncoderDecoder(8, 2, 1, 1, d_ff=16)(X, X, tgt_mask=torch.ones(3, 3, dtype=torch.bool)),
        ValueError,
        r"^tgt_mask must have shape",
    ),
    "EncoderDecoder, src_mask": (
        lambda: cl.EncoderDecoder(8, 2, 1, 1, d_ff=16)(X, X, src_mask=torch.ones(5, 5)),
        TypeError,
        r"^src_mask must be a boolean tensor",
    ),
    "Translator, d_model": (lambda: cl.Translator(10, 10, d_model=2.5), TypeError, r"^d_model must be an int"),
    "Translator, pad_index": (
        lambda: cl.Translator(10, 8, pad_index=8),  # padding that no target can hold: never masked
        ValueError,
        r"^pad_index must be an id of both vocabularies \(< 8\), got 8",
    ),
    "Translator, batch": (
        lambda: TRANSLATOR(torch.ones(2, 3, dtype=torch.long), TOKENS_3),
        ValueError,
        r"^src and tgt must have the same batch size B",
    ),
    "Translator.step_function, source": (  # before: IndexError
        lambda: TRANSLATOR.step_function(TOKENS_3)(TOKENS_3, torch.tensor([1])),
        ValueError,
        r"^source must hold indices of the B=1 sources, got \[1\]",
    ),
    "Translator.step_function, tokens": (
        lambda: TRANSLATOR.step_function(TOKENS_3)(torch.full((1, 2), 12), torch.tensor([0])),
        ValueError,
        r"^tokens must hold ids in \[0, vocab_size=10\)",
    ),
    "SequenceClassifier, an id >= vocab_size": (  # before: IndexError from the embedding
        lambda: cl.SequenceClassifier(10, 2, d_model=8)(torch.tensor([[1, 10]])),
        ValueError,
        r"^tokens must hold ids in \[0, vocab_size=10\), got ids from 1 to 10",
    ),
    "BagOfEmbeddings, a negative id": (  # before: IndexError from the embedding
        lambda: cl.BagOfEmbeddings(10, 2)(torch.tensor([[-1, 3]])),
        ValueError,
        r"^tokens must hold ids in \[0, vocab_size=10\), got ids from -1 to 3",
    ),
    "linear_attention, feature_map": (
        lambda: cl.linear_attention(Q, Q, Q, feature_map=3),
        TypeError,
        r"^feature_map must be a function",
    ),
    "fit, loss_fn": (lambda: cl.fit(nn.Linear(8, 2), (X, X), loss_fn=3), TypeError, r"^loss_fn must be a function"),
    "fit, seed": (lambda: cl.fit(nn.Linear(8, 2), (X, X), seed=1.5), TypeError, r"^seed must be an int"),
    "fit, progress": (lambda: cl.fit(nn.Linear(8, 2), (X, X), progress=1), TypeError, r"^progress must be a bool"),
    "fit, model": (lambda: cl.fit(lambda x: x, (X, X)), TypeError, r"^model must be a torch.nn.Module, got function"),
    "evaluate, metric": (lambda: cl.evaluate(nn.Linear(8, 2), (X, X), 3), TypeError, r"^metric must be a function"),
    "cross_entropy, targets": (
        lambda: cl.cross_entropy(LOGITS, torch.zeros(2)),
        TypeError,
        r"^targets must hold integers, got dtype torch.float32",
    ),
    "TransformerEncoderBlock, layer_norm_eps": (
        lambda: cl.TransformerEncoderBlock(8, 2, layer_norm_eps=math.nan),
        ValueError,
        r"^layer_norm_eps must be a finite number",
    ),
    "TransformerDecoder, final_norm": (
        lambda: cl.TransformerDecoder(8, 2, 1, final_norm=1),
        TypeError,
        r"^final_norm must be a bool",
    ),
    "GroupedQueryAttention, bias": (lambda: cl.GroupedQueryAttention(8, 2, bias=1), TypeError, r"^bias must be a"),
}


@pytest.mark.parametrize("case", sorted(NEWER_API))
def test_bad_input_to_the_newer_api_is_named(case):
    call, error, message = NEWER_API[case]
    with pytest.raises(error, match=message):
        call()


LAYERS = {  # a float32 layer and the name of its input
    "SelfAttention": (lambda x: cl.SelfAttention(8)(x), "x"),
    "MultiHeadAttention": (lambda x: cl.MultiHeadAttention(8, 2)(x), "query"),
    "GroupedQueryAttention": (lambda x: cl.GroupedQueryAttention(8, 2)(x), "x"),
    "TransformerEncoderBlock": (lambda x: cl.TransformerEncoderBlock(8, 2)(x), "x"),
    "TransformerEncoder": (lambda x: cl.TransformerEncoder(8, 2, 1)(x), "x"),
    "DecoderBlock": (lambda x: cl.DecoderBlock(8, 2)(x), "x"),
    "ViTBlock": (lambda x: cl.ViTBlock(8, 2)(x), "x"),
    "TransformerDecoderBlock": (lambda x: cl.TransformerDecoderBlock(8, 2)(x, x), "x"),
    "TransformerDecoderBlock memory": (lambda x: cl.TransformerDecoderBlock(8, 2)(X, x), "memory"),
    "EncoderDecoder": (lambda x: cl.EncoderDecoder(8, 2, 1, 1, d_ff=16)(x, X), "src"),
    "EncoderDecoder tgt": (lambda x: cl.EncoderDecoder(8, 2, 1, 1, d_ff=16)(X, x), "tgt"),
    "TinyViT": (lambda x: cl.TinyViT(image_size=4, d_model=8, num_heads=2)(x.reshape(2, 1, 4, 10)[..., :4]), "x"),
    "PatchEmbedding": (lambda x: cl.PatchEmbedding(1, 2, 8)(x.reshape(2, 1, 4, 10)[..., :4]), "images"),
    "TinyCNN": (lambda x: cl.TinyCNN(width=2)(x.reshape(2, 1, 4, 10)), "images"),
    "VanillaRNN": (lambda x: cl.VanillaRNN(8, 4)(x), "x"),
    "lstm_gates": (lambda x: cl.lstm_gates(nn.LSTM(8, 4, batch_first=True), x), "x"),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("dtype", [torch.float16, torch.float64, torch.int64], ids=str)
def test_a_layer_names_an_input_of_another_dtype_and_the_fix(name, dtype):
    # before: PyTorch's "mat1 and mat2 must have the same dtype" from deep inside (or "mixed dtype (CPU)")
    call, argument = LAYERS[name]
    fix = rf"pass {argument}\.to\(torch\.float32\)" + (", or convert the layer" if dtype.is_floating_point else "$")
    with pytest.raises(TypeError, match=rf"^{argument} must have the dtype of the layer's parameters, torch\.float32, "
                       rf"got {dtype}: {fix}"):  # fmt: skip
        call(X.to(dtype))


def test_a_layer_under_autocast_takes_another_floating_dtype():
    with torch.autocast("cpu", dtype=torch.bfloat16):  # autocast casts for the layer: no refusal
        assert cl.MultiHeadAttention(8, 2)(X.bfloat16()).shape == X.shape


def test_cross_entropy_of_half_precision_logits_is_computed_in_float32():
    # In float16 the loss of logits near 1e4 is infinite (PyTorch's F.cross_entropy here returns inf for all three);
    # computed in float32 from the same float16 logits it equals float64's to float32's rounding.
    cases = [
        (torch.tensor([[1e4, -1e4]] * 4), torch.tensor([1] * 4)),  # loss 2e4 each: their sum overflows float16
        (torch.tensor([[4e4, -4e4]]), torch.tensor([1])),  # a loss of 8e4 > 65504, float16's largest
        (torch.tensor([[1e4, 1e4, -1e4]] * 64), torch.tensor([2] * 64)),
    ]
    for logits, targets in cases:
        for half in (torch.float16, torch.bfloat16):
            exact = nn.functional.cross_entropy(logits.to(half).double(), targets)
            loss = cl.cross_entropy(logits.to(half), targets)
            assert loss.dtype == torch.float32
            torch.testing.assert_close(loss, exact.float())  # float32's default tolerance: one rounding of each step


def validation_calls(run) -> int:
    """How many times ``run()`` enters a check of course_lib.validate (compute_dtype, arithmetic, aside) or the mask
    rule, expand_mask, nested calls included."""
    import sys

    from course_lib import masks, validate

    codes = {f.__code__ for f in vars(validate).values() if getattr(f, "__module__", None) == validate.__name__}
    codes = (codes - {validate.compute_dtype.__code__}) | {masks.expand_mask.__code__}
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        count += event == "call" and frame.f_code in codes

    old = sys.getprofile()
    sys.setprofile(profile)
    try:
        with torch.no_grad():
            run()
    finally:
        sys.setprofile(old)
    return count


def test_layers_check_at_their_edge_not_at_every_layer_and_token():
    # Issue 43 measured 54 checks per generated token of a 2-layer model (72 with RoPE), 87 per step of a greedy
    # search with a 2 + 2-layer translator, and 25 (1 block) to 91 (4 blocks) per call of an encoder: the blocks and
    # their attention checked again what their caller had checked. Now generate checks once, whatever the length.
    lm = cl.DecoderLM(10, 16, 2, 2, max_len=32, positions="rope").eval()
    prompt = torch.zeros(1, 1, dtype=torch.long)
    assert validation_calls(lambda: cl.generate(lm, prompt, 12)) == validation_calls(lambda: cl.generate(lm, prompt, 2))
    encoders = [cl.TransformerEncoder(16, 2, n) for n in (1, 4)]
    x, mask = torch.randn(2, 7, 16), cl.padding_mask([7, 5], 7)
    assert validation_calls(lambda: encoders[0](x, mask)) == validation_calls(lambda: encoders[1](x, mask)) <= 10
    step = cl.Translator(12, 12, d_model=16, num_heads=2).eval().step_function(torch.randint(1, 12, (2, 6)))
    greedy = [validation_calls(lambda n=n: cl.greedy_search(step, 2, bos=1, eos=2, max_len=n)) for n in (2, 6)]
    assert (greedy[1] - greedy[0]) / 4 <= 6  # per step: the step function's tokens and sources, the search's log-probs
