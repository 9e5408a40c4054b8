"""Notebook 11's exercises 2 and 4 refuse the library routes a twenty-second lecturer's trial took for full marks.

``layer_norm`` as the course's own ``cl.RMSNorm`` of centred inputs (a LayerNorm without its affine part), and
``masked_mean`` as ``F.embedding_bag`` or ``torch.segment_reduce`` (each averages rows by itself): 4 of 4, unflagged.
The cells are taken from the notebook itself, after the answer under test or the reference answer."""

import json
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import course_lib as cl
from course_lib.paths import ROOT

RMS_NORM = """
def layer_norm(x, weight, bias, eps=1e-5):  # RMSNorm of x - mean(x) is LayerNorm's normalisation
    return cl.RMSNorm(x.shape[-1], eps=eps).to(x.dtype)._forward(x - x.mean(-1, keepdim=True)) * weight + bias
"""
EMBEDDING_BAG = """
def masked_mean(h, valid):  # one bag of rows per sequence, averaged by embedding_bag
    B, L, D = h.shape
    rows = torch.nonzero(valid.reshape(-1)).reshape(-1)
    starts = torch.cat([torch.zeros(1, dtype=torch.long), valid.sum(1).cumsum(0)[:-1]])
    return F.embedding_bag(rows, h.reshape(B * L, D), starts, mode="mean")
"""
SEGMENT_REDUCE = """
def masked_mean(h, valid):  # the real rows, averaged segment by segment
    return torch.segment_reduce(h[valid], "mean", lengths=valid.sum(1))
"""
HONEST = """
def masked_mean(h, valid):
    weights = valid.to(h.dtype).unsqueeze(-1)  # (B, L, 1)
    return (h * weights).sum(1) / weights.sum(1)
"""


def _cell(marker: str) -> str:
    cells = json.loads((ROOT / "notebooks" / "11_capstone_transformer_encoder.ipynb").read_text())["cells"]
    found = ["".join(c["source"]) for c in cells if c["cell_type"] == "code" and marker in "".join(c["source"])]
    return found[0]


def _run(answer: str, check_marker: str) -> None:
    namespace = {"cl": cl, "torch": torch, "math": math, "F": F, "nn": nn}
    for i, source in enumerate([answer, _cell(check_marker)]):  # each cell a file of its own, as in a kernel
        exec(compile(source, f"<cell {i}>", "exec"), namespace)


def test_the_reference_answers_and_an_honest_mean_pass():
    _run(_cell("def layer_norm(x, weight, bias, eps=1e-5):"), "LAYER_NORM_FUNCTIONS = cl.NORMALIZATIONS")
    _run(_cell("def masked_mean(h, valid):"), "MASKED_MEANS = cl.ROW_MEANS")
    _run(HONEST, "MASKED_MEANS = cl.ROW_MEANS")


@pytest.mark.parametrize(
    "answer, check, refused",
    [(RMS_NORM, "LAYER_NORM_FUNCTIONS = cl.NORMALIZATIONS", "RMSNorm"),
     (EMBEDDING_BAG, "MASKED_MEANS = cl.ROW_MEANS", "embedding_bag"),
     (SEGMENT_REDUCE, "MASKED_MEANS = cl.ROW_MEANS", "segment_reduce")],
    ids=["RMSNorm of centred x", "embedding_bag", "segment_reduce"],
)  # fmt: skip
def test_a_library_route_that_does_the_work_is_refused(answer, check, refused):
    with pytest.raises(AssertionError, match=f"raised ShortcutError: .*{refused}"):
        _run(answer, check)
