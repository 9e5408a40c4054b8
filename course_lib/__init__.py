"""course_lib — the tested companion package of *Self-Attention from the Ground Up*.

Each module holds one topic of the course; the notebooks import from here instead of pasting code.
"""

from .attention import SelfAttention, attention_weights, scaled_dot_product_attention
from .checks import check_close, check_function, explain_difference
from .device import get_device, set_seed
from .masks import causal_mask, padding_mask, window_mask
from .paths import DATA_DIR, NOTEBOOKS_DIR, ROOT

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
]
