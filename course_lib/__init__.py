"""course_lib — the tested companion package of *Self-Attention from the Ground Up*.

Each module holds one topic of the course; the notebooks import from here instead of pasting code.
``course_lib.bench`` (the benchmark CLI), ``course_lib.student`` (student versions of the notebooks) and
``course_lib.kernels`` (the Triton kernel, needs triton) are imported on their own, not from here.

Names are imported lazily (PEP 562): ``import course_lib`` imports no submodule, and ``course_lib.fit`` imports
``course_lib.train`` the first time it is asked for. So ``import course_lib.masks`` costs only torch, and tqdm,
matplotlib and seaborn are loaded by the modules that draw or report (``train``, ``plot``), when they are used.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# module -> the public names it gives the package (every name is importable as ``from course_lib import name``)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "attention": ("SelfAttention", "attention_weights", "scaled_dot_product_attention", "softmax_jacobian"),
    "multihead": ("MultiHeadAttention", "merge_heads", "split_heads"),
    "checks": ("check_answer", "check_close", "check_function", "explain_difference"),
    "exercises": ("ATTENTION_FUNCTIONS", "SOFTMAX_FUNCTIONS", "blocked", "variant_generator", "variant_numbers"),
    "conv": ("conv_as_attention", "kernel_shifts", "receptive_field", "shift_attention_weights"),
    "data": ("associative_recall", "load_digits", "load_tang300", "recall_task", "recall_token_names"),
    "corpus": ("WORD_CATEGORIES", "skipgram_pairs", "toy_corpus"),
    "device": ("get_device", "set_seed"),
    "efficient": ("chunked_attention", "sliding_window_attention"),
    "linear": ("linear_attention", "linear_attention_weights"),
    "masks": ("bigbird_mask", "causal_mask", "longformer_mask", "mask_receptive_field", "padding_mask", "window_mask"),
    "models": ("TransformerEncoder", "TransformerEncoderBlock"),
    "classifiers": ("BagOfEmbeddings", "SequenceClassifier"),
    "grouped_query": ("GroupedQueryAttention", "KVCache"),
    "decoder": ("DecoderBlock", "DecoderLM"),
    "generation": ("generate", "sample_next_token", "top_k_filter", "top_p_filter"),
    "paths": ("DATA_DIR", "NOTEBOOKS_DIR", "ROOT"),
    "plot": ("plot_attention",),
    "diagrams": (
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
    "train": ("History", "accuracy", "cross_entropy", "evaluate", "fit", "progress_bar"),
    "vision": ("PatchEmbedding", "TinyCNN", "TinyViT", "ViTBlock", "patchify", "unpatchify"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
_SUBMODULES = (
    *_EXPORTS,
    "validate",
    "fonts",
    "bench",
    "student",
    "nbgrader_source",
    "kernels",
    "kernels_bench",
    "kernels_tuning",
)

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
