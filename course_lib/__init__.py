"""course_lib — the tested companion package of *Self-Attention from the Ground Up*.

Each module holds one topic of the course; the notebooks import from here instead of pasting code.
"""

from .attention import SelfAttention, attention_weights, scaled_dot_product_attention
from .checks import check_close, check_function, explain_difference
from .data import WORD_CATEGORIES, recall_task, recall_token_names, skipgram_pairs, toy_corpus
from .device import get_device, set_seed
from .masks import causal_mask, padding_mask, window_mask
from .paths import DATA_DIR, NOTEBOOKS_DIR, ROOT
from .rnn import VanillaRNN, gradient_norms_through_time, hidden_jacobians, input_gradient_norms
from .sequences import (
    Vocab,
    build_vocab,
    concat_window,
    frame_signal,
    num_frames,
    one_hot,
    pad_sequences,
    tokenize,
)
from .train import History, accuracy, cross_entropy, evaluate, fit

__version__ = "0.1.0"

__all__ = [
    "DATA_DIR",
    "NOTEBOOKS_DIR",
    "ROOT",
    "SelfAttention",
    "attention_weights",
    "check_close",
    "check_function",
    "explain_difference",
    "causal_mask",
    "get_device",
    "padding_mask",
    "scaled_dot_product_attention",
    "set_seed",
    "window_mask",
    # sequences, rnn, data, train (issue 3)
    "History",
    "Vocab",
    "VanillaRNN",
    "WORD_CATEGORIES",
    "accuracy",
    "build_vocab",
    "concat_window",
    "cross_entropy",
    "evaluate",
    "fit",
    "frame_signal",
    "gradient_norms_through_time",
    "hidden_jacobians",
    "input_gradient_norms",
    "num_frames",
    "one_hot",
    "pad_sequences",
    "recall_task",
    "recall_token_names",
    "skipgram_pairs",
    "tokenize",
    "toy_corpus",
]
