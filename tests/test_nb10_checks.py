"""Notebook 10's exercise 2 ("reshape and permute only") refuses the inverse got another way.

A twenty-first lecturer's trial scored full marks, unflagged, with two answers that never rearranged anything: the
index map of ``cl.patchify`` run on ``torch.arange``, written back by indexing (x5perm), and the adjoint of
``cl.patchify`` by a vector-Jacobian product (x6adjoint). The check now blocks ``cl.patchify`` and autograd, and
blocking ``cl.unpatchify`` blocks the operators that rearrange by an index map (classroom.reach's ``_INDEXING``). The
cells are taken from the notebook itself, after the reference answer or the answer under test."""

import json

import pytest
import torch

import course_lib as cl
from course_lib.paths import ROOT

PERMUTED = """
def my_unpatchify(patches, P, H, W):  # honest, another way: view, transpose, contiguous
    B, N, CPP = patches.shape
    C, gh, gw = CPP // (P * P), H // P, W // P
    x = patches.view(B, gh, gw, C, P, P).transpose(1, 3).transpose(2, 3)  # (B, C, gh, gw, P, P)
    return x.transpose(3, 4).contiguous().view(B, C, H, W)
"""
INDEX_MAP = """
def my_unpatchify(patches, P, H, W):  # x5perm: cl.patchify's index map, written back by indexing
    B, N, CPP = patches.shape
    C = CPP // (P * P)
    where = cl.patchify(torch.arange(C * H * W, dtype=torch.float64).reshape(1, C, H, W), P).reshape(-1).long()
    out = patches.new_empty(B, C * H * W)
    out[:, where] = patches.reshape(B, -1)
    return out.reshape(B, C, H, W)
"""
ADJOINT = """
def my_unpatchify(patches, P, H, W):  # x6adjoint: the vector-Jacobian product of cl.patchify
    B, N, CPP = patches.shape
    C = CPP // (P * P)
    _, pull_back = torch.func.vjp(lambda img: cl.patchify(img, P), torch.zeros(B, C, H, W, dtype=patches.dtype))
    return pull_back(patches)[0]
"""
OWN_MAP_GATHERED = """
def my_unpatchify(patches, P, H, W):  # its own forward map (reshape/permute of arange), then read back by a gather
    B, N, CPP = patches.shape
    C = CPP // (P * P)
    grid = torch.arange(C * H * W).reshape(1, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5).reshape(-1)
    return patches.reshape(B, -1)[:, torch.argsort(grid)].reshape(B, C, H, W)
"""
OWN_GRAD = """
def my_unpatchify(patches, P, H, W):  # its own patchify, inverted by autograd's backward pass
    B, N, CPP = patches.shape
    C = CPP // (P * P)
    img = torch.zeros(B, C, H, W, dtype=patches.dtype, requires_grad=True)
    out = img.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5).reshape(B, N, CPP)
    return torch.autograd.grad(out, img, patches)[0]
"""


def _cell(marker: str) -> str:
    cells = json.loads((ROOT / "notebooks" / "10_vision_transformer.ipynb").read_text())["cells"]
    (source,) = ["".join(c["source"]) for c in cells if c["cell_type"] == "code" and marker in "".join(c["source"])]
    return source


def _run(answer: str | None = None) -> None:
    namespace = {"cl": cl, "torch": torch, "test_images": torch.rand(5, 1, 8, 8)}
    cells = [answer or _cell("def my_unpatchify(patches, P, H, W):"), _cell("UNPATCHIFY_FUNCTIONS = (")]
    for i, source in enumerate(cells):  # each cell a file of its own, as in a kernel
        exec(compile(source, f"<cell {i}>", "exec"), namespace)


def test_the_reference_and_another_honest_rearrangement_pass():
    _run()
    _run(PERMUTED)


@pytest.mark.parametrize(
    "answer, refused",
    [(INDEX_MAP, "course_lib.patchify"), (ADJOINT, "torch.func.vjp|course_lib.patchify"),
     (OWN_MAP_GATHERED, r"aten::index \(the work of course_lib.unpatchify\)"), (OWN_GRAD, "autograd")],
    ids=["x5 index map", "x6 adjoint", "own map gathered", "own patchify's gradient"],
)  # fmt: skip
def test_an_inverse_got_without_rearranging_is_refused(answer, refused):
    with pytest.raises(AssertionError, match=f"raised ShortcutError: .*({refused})"):
        _run(answer)
