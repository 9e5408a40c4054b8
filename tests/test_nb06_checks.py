"""Notebook 06's exercise 3 blocks the layers that would do all of it, not the attention inside each head.

A twenty-first lecturer's trial: an honest ``multi_head_attention`` that computed its heads with PyTorch's
``F.scaled_dot_product_attention`` (the exercise allows the course's, which notebooks 00, 03 and 05 show equal to
PyTorch's) was refused, "the work of torch.nn.MultiheadAttention.forward": blocking that layer blocked every fused
attention kernel. It now blocks the layer's own fused kernels. The cells are taken from the notebook itself."""

import json
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import course_lib as cl
from course_lib.paths import ROOT
from tests.heldout.attacks import SHORTCUT_ATTACKS

WITH_SDPA = """
def multi_head_attention(x_q, x_kv, W_q, W_k, W_v, W_o, num_heads):
    q, k, v = (split_heads(x @ W, num_heads) for x, W in ((x_q, W_q), (x_kv, W_k), (x_kv, W_v)))
    return merge_heads(F.scaled_dot_product_attention(q, k, v)) @ W_o
"""
# PyTorch's layer with the exercise's weights (the held-out attack set's): a shortcut
WITH_THE_LAYER = SHORTCUT_ATTACKS["mha: nn.MultiheadAttention with the weights packed"].replace(
    "def answer(", "def multi_head_attention("
)
WITH_THE_FUSED_KERNEL = """
def multi_head_attention(x_q, x_kv, W_q, W_k, W_v, W_o, num_heads):  # the layer's fused kernel, called by its name
    D = x_q.shape[-1]
    zeros = torch.zeros(3 * D)
    return torch._native_multi_head_attention(x_q, x_kv, x_kv, D, num_heads, torch.cat([W_q.T, W_k.T, W_v.T]),
                                              zeros, W_o.T, torch.zeros(D), need_weights=False)[0]
"""


def _cell(marker: str) -> str:
    cells = json.loads((ROOT / "notebooks" / "06_multi_head_attention.ipynb").read_text())["cells"]
    (source,) = ["".join(c["source"]) for c in cells if c["cell_type"] == "code" and marker in "".join(c["source"])]
    return source


def _run(answer: str | None = None) -> None:
    namespace = {"cl": cl, "torch": torch, "math": math, "F": F, "nn": nn}
    cells = [_cell("def split_heads(x, num_heads):"), answer or _cell("def multi_head_attention(x_q"),
             _cell("def mha_inputs(g):")]  # fmt: skip
    for i, source in enumerate(cells):  # each cell a file of its own, as in a kernel
        exec(compile(source, f"<cell {i}>", "exec"), namespace)


def test_the_reference_and_pytorchs_attention_per_head_pass():
    _run()
    _run(WITH_SDPA)


@pytest.mark.parametrize("answer", [WITH_THE_LAYER, WITH_THE_FUSED_KERNEL], ids=["layer", "fused kernel"])
def test_the_layer_that_does_all_of_it_is_still_refused(answer):
    with pytest.raises(AssertionError, match=r"raised ShortcutError: .*(MultiheadAttention|multi_head_attention)"):
        _run(answer)
