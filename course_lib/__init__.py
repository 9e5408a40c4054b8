"""course_lib — the tested companion package of *Self-Attention from the Ground Up*.

Each module holds one topic of the course; the notebooks import from here instead of pasting code.
``course_lib.bench`` (the benchmark CLI), ``course_lib.student`` (student versions of the notebooks) and
``course_lib.kernels`` (the Triton kernel, needs triton) are imported on their own, not from here.
"""

from .attention import (
    MultiHeadAttention,
    SelfAttention,
    attention_weights,
    merge_heads,
    scaled_dot_product_attention,
    softmax_jacobian,
    split_heads,
)
from .checks import check_close, check_function, explain_difference
from .conv import conv_as_attention, kernel_shifts, receptive_field, shift_attention_weights
from .data import (
    WORD_CATEGORIES,
    associative_recall,
    load_digits,
    recall_task,
    recall_token_names,
    skipgram_pairs,
    toy_corpus,
)
from .device import get_device, set_seed
from .efficient import (
    bigbird_mask,
    chunked_attention,
    linear_attention,
    linear_attention_weights,
    longformer_mask,
    mask_receptive_field,
    sliding_window_attention,
)
from .masks import causal_mask, padding_mask, window_mask
from .models import (
    BagOfEmbeddings,
    SequenceClassifier,
    TransformerEncoder,
    TransformerEncoderBlock,
)
from .paths import DATA_DIR, NOTEBOOKS_DIR, ROOT
from .plot import plot_attention
from .positional import (
    LearnedPositionalEmbedding,
    apply_rope,
    rope_rotation_matrix,
    sinusoidal_encoding,
    sinusoidal_frequencies,
    sinusoidal_shift_matrix,
)
from .rnn import (
    VanillaRNN,
    cell_jacobian_norms,
    gradient_norms_through_time,
    hidden_jacobians,
    input_gradient_norms,
    lstm_gates,
)
from .sequences import Vocab, build_vocab, concat_window, frame_signal, num_frames, one_hot, pad_sequences, tokenize
from .train import History, accuracy, cross_entropy, evaluate, fit, progress_bar
from .vision import PatchEmbedding, TinyCNN, TinyViT, ViTBlock, patchify, unpatchify

__version__ = "0.1.0"

__all__ = [
    "BagOfEmbeddings",
    "DATA_DIR",
    "History",
    "LearnedPositionalEmbedding",
    "MultiHeadAttention",
    "NOTEBOOKS_DIR",
    "PatchEmbedding",
    "ROOT",
    "SelfAttention",
    "SequenceClassifier",
    "TinyCNN",
    "TinyViT",
    "TransformerEncoder",
    "TransformerEncoderBlock",
    "VanillaRNN",
    "ViTBlock",
    "Vocab",
    "WORD_CATEGORIES",
    "accuracy",
    "apply_rope",
    "associative_recall",
    "attention_weights",
    "bigbird_mask",
    "build_vocab",
    "causal_mask",
    "cell_jacobian_norms",
    "check_close",
    "check_function",
    "chunked_attention",
    "concat_window",
    "conv_as_attention",
    "cross_entropy",
    "evaluate",
    "explain_difference",
    "fit",
    "frame_signal",
    "get_device",
    "gradient_norms_through_time",
    "hidden_jacobians",
    "input_gradient_norms",
    "kernel_shifts",
    "linear_attention",
    "linear_attention_weights",
    "load_digits",
    "longformer_mask",
    "lstm_gates",
    "mask_receptive_field",
    "merge_heads",
    "num_frames",
    "one_hot",
    "pad_sequences",
    "padding_mask",
    "patchify",
    "plot_attention",
    "progress_bar",
    "recall_task",
    "recall_token_names",
    "receptive_field",
    "rope_rotation_matrix",
    "scaled_dot_product_attention",
    "set_seed",
    "shift_attention_weights",
    "sinusoidal_encoding",
    "sinusoidal_frequencies",
    "sinusoidal_shift_matrix",
    "skipgram_pairs",
    "sliding_window_attention",
    "softmax_jacobian",
    "split_heads",
    "tokenize",
    "toy_corpus",
    "unpatchify",
    "window_mask",
]
