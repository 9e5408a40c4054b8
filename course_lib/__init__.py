"""course_lib — the tested companion package of *Self-Attention from the Ground Up*.

The course's vocabulary lives flat in this package, one module per idea; notebooks write ``cl.name``
(``import course_lib as cl``) or ``from course_lib.data import ...``. A reading order for the attention path:

1. :mod:`~course_lib.attention` — scaled dot-product attention, its softmax Jacobian, a self-attention layer;
2. :mod:`~course_lib.multihead` — splitting into heads, attending, merging;
3. :mod:`~course_lib.masks` — boolean masks (True = may attend) and the one rule every layer checks a mask by;
4. :mod:`~course_lib.grouped_query` — grouped-query attention and its KV cache;
5. :mod:`~course_lib.decoder` — a decoder-only language model built from those blocks;
6. :mod:`~course_lib.generation` — generating tokens from it.

Around that path: :mod:`~course_lib.validate` (every argument check, the lowest layer), :mod:`~course_lib.positional`,
:mod:`~course_lib.models` (encoder blocks), :mod:`~course_lib.classifiers`, :mod:`~course_lib.vision`,
:mod:`~course_lib.efficient` and :mod:`~course_lib.linear`, :mod:`~course_lib.conv`, :mod:`~course_lib.rnn`,
:mod:`~course_lib.sequences`, :mod:`~course_lib.bpe`, :mod:`~course_lib.modern` (the block of 2026's open models) and
:mod:`~course_lib.lora` (low-rank fine-tuning), :mod:`~course_lib.data` and :mod:`~course_lib.corpus`,
:mod:`~course_lib.train` (its progress bar in :mod:`~course_lib.progress`), :mod:`~course_lib.device`,
:mod:`~course_lib.paths`.

The periphery sits in subpackages named for what they are, each with a reading order in its docstring:
:mod:`course_lib.classroom` (exercises, checks, student and nbgrader versions: ``python -m
course_lib.classroom.student``), :mod:`course_lib.figures` (plots, diagrams, the CJK font), :mod:`course_lib.kernels`
(the Triton kernel and its benchmark ``python -m course_lib.kernels.bench``; needs triton) and
:mod:`course_lib.bench` (``python -m course_lib.bench``: attention methods timed against each other). The module map
of CONTRIBUTING.md says which module may import which; there is no import cycle (a test checks both).

Names are imported lazily (PEP 562): ``import course_lib`` imports no submodule, and ``course_lib.fit`` imports
``course_lib.train`` the first time it is asked for. So ``import course_lib.masks`` costs only torch, and tqdm
and matplotlib are loaded by the modules that draw or report (``progress``, ``figures.plot``), when they are
used.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# module -> the public names it gives the package (every name is importable as ``from course_lib import name``)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "attention": ("SelfAttention", "attention_weights", "scaled_dot_product_attention", "softmax_jacobian"),
    "multihead": ("MultiHeadAttention", "merge_heads", "split_heads"),
    "classroom.checks": ("check_answer", "check_close", "check_function", "explain_difference"),
    "classroom.exercises": (
        "ATTENTION_FUNCTIONS",
        "SOFTMAX_FUNCTIONS",
        "blocked",
        "variant_generator",
        "variant_numbers",
    ),
    "classroom.shortcuts": ("NORMALIZATIONS", "ROW_MEANS"),
    "conv": ("conv_as_attention", "kernel_shifts", "receptive_field", "shift_attention_weights"),
    "data": (
        "associative_recall",
        "date_pair",
        "date_splits",
        "date_tokens",
        "load_digits",
        "load_tang300",
        "recall_task",
        "recall_token_names",
    ),
    "corpus": ("WORD_CATEGORIES", "load_course_prose", "skipgram_pairs", "toy_corpus"),
    "bpe": ("BytePairEncoder", "merge_pair"),
    "device": ("get_device", "set_seed"),
    "efficient": ("chunked_attention", "sliding_window_attention"),
    "linear": ("linear_attention", "linear_attention_weights"),
    "masks": ("bigbird_mask", "causal_mask", "longformer_mask", "mask_receptive_field", "padding_mask", "window_mask"),
    "models": ("TransformerEncoder", "TransformerEncoderBlock"),
    "classifiers": ("BagOfEmbeddings", "SequenceClassifier"),
    "grouped_query": ("GroupedQueryAttention", "KVCache"),
    "decoder": ("DecoderBlock", "DecoderLM"),
    "modern": ("ModernDecoderBlock", "ModernLM", "RMSNorm", "SwiGLU", "half_to_interleaved", "load_llama_layer"),
    "lora": ("LoRALinear", "add_lora", "count_parameters", "merge_lora"),
    "generation": (
        "beam_search",
        "exhaustive_search",
        "generate",
        "greedy_search",
        "sample_next_token",
        "top_k_filter",
        "top_p_filter",
    ),
    "seq2seq": ("EncoderDecoder", "TransformerDecoder", "TransformerDecoderBlock", "Translator"),
    "paths": ("DATA_DIR", "NOTEBOOKS_DIR", "ROOT"),
    "figures.fonts": ("cjk_fonts",),
    "figures.plot": ("plot_attention",),
    "figures.diagrams": (
        "architecture_families_diagram",
        "encoder_block_diagram",
        "multihead_diagram",
        "qkv_diagram",
        "vit_diagram",
    ),
    "positional": (
        "LearnedPositionalEmbedding",
        "apply_rope",
        "rope_rotation_matrix",
        "sinusoidal_encoding",
        "sinusoidal_frequencies",
        "sinusoidal_shift_matrix",
    ),
    "rnn": (
        "VanillaRNN",
        "cell_jacobian_norms",
        "gradient_norms_through_time",
        "hidden_jacobians",
        "input_gradient_norms",
        "lstm_gates",
    ),
    "sequences": (
        "Vocab",
        "build_vocab",
        "concat_window",
        "frame_signal",
        "num_frames",
        "one_hot",
        "pad_sequences",
        "tokenize",
    ),
    "progress": ("progress_bar",),
    "train": ("History", "accuracy", "cross_entropy", "evaluate", "fit"),
    "vision": ("PatchEmbedding", "TinyCNN", "TinyViT", "ViTBlock", "patchify", "unpatchify"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
_SUBMODULES = (*(m for m in _EXPORTS if "." not in m), "validate", "bench", "classroom", "figures", "kernels")

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    """Import a public name (or a submodule) on first use and keep it in the package's namespace."""
    if name in _MODULE_OF:
        value = getattr(importlib.import_module(f".{_MODULE_OF[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
