"""A twenty-third lecturer's trial: library shortcuts that did an exercise's work (tests/heldout/attacks_twentythird.py)
are right, yet refused by the names the notebooks' own checks block, read from the notebooks."""

import ast
import math
import warnings

import nbformat
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import course_lib as cl
from course_lib.classroom.checks import explain_difference
from course_lib.classroom.exercises import blocked
from course_lib.paths import NOTEBOOKS_DIR

from .attacks_twentythird import TWENTYTHIRD_ATTACKS


def _names(number: str, constant: str) -> tuple[str, ...]:
    """What ``constant`` is bound to in notebook ``number``'s check cells, evaluated with ``cl`` only."""
    notebook = nbformat.read(next(NOTEBOOKS_DIR.glob(f"{number}_*.ipynb")), as_version=4)
    for cell in notebook.cells:
        for node in ast.parse(cell.source).body if cell.cell_type == "code" and constant in cell.source else ():
            if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [constant]:
                return eval(compile(ast.Expression(node.value), constant, "eval"), {"cl": cl})  # noqa: S307
    raise LookupError(f"notebook {number} binds no {constant}")


def _rms_reference(x, weight, eps):
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def _rms_inputs(g):
    x = torch.randn(3, 4, 7, generator=g, dtype=torch.float64)
    return x, 1 + 0.3 * torch.randn(7, generator=g, dtype=torch.float64), 1e-5


def _mean_inputs(g):
    return torch.randn(4, 6, 3, generator=g, dtype=torch.float64), torch.tensor([1, 6, 3, 4])


def _mean_reference(x, lengths):
    return torch.stack([x[b, : int(n)].mean(0) for b, n in enumerate(lengths)])


def _lora_inputs(g):
    draw = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64)  # noqa: E731
    return draw(5, 4), draw(2, 4), draw(5, 2), 8.0


def _merged_reference(weight, lora_A, lora_B, alpha):
    return weight + alpha / lora_A.shape[0] * lora_B @ lora_A


EXERCISES = {  # prefix -> reference, inputs, (notebook, the constant its check blocks)
    "rms_norm": (_rms_reference, _rms_inputs, ("15", "RMS_NORMS")),
    "masked_mean": (_mean_reference, _mean_inputs, ("05", "ROW_MEANS")),
    "merged_weight": (_merged_reference, _lora_inputs, ("15", "MERGING")),
}


def _answer(name):
    namespace = {"torch": torch, "F": F, "nn": nn, "cl": cl, "math": math, "__name__": "__main__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(TWENTYTHIRD_ATTACKS[name], namespace)
    reference, inputs, where = EXERCISES[name.split(":")[0]]
    return namespace, reference, inputs(torch.Generator().manual_seed(0)), where


def test_05_and_11_block_every_row_mean_and_11_and_15_every_normalisation():
    """05's check read its blocked names from a tuple of its own (torch.masked.mean alone): one family now."""
    notebook = nbformat.read(NOTEBOOKS_DIR / "05_masks_and_attention_maps.ipynb", as_version=4)
    check = next(c.source for c in notebook.cells if "cl.check_function(masked_mean" in c.source)
    assert check.count("without=cl.ROW_MEANS") == 2
    assert _names("11", "MASKED_MEANS") == cl.ROW_MEANS and _names("11", "LAYER_NORM_FUNCTIONS") == cl.NORMALIZATIONS
    assert _names("15", "RMS_NORMS") == cl.NORMALIZATIONS


@pytest.mark.parametrize("name", sorted(TWENTYTHIRD_ATTACKS))
def test_the_trials_shortcut_is_right_yet_refused_by_its_notebooks_check(name):
    namespace, reference, args, (number, constant) = _answer(name)
    answer = namespace["answer"]
    assert explain_difference(answer(*args), reference(*args)) is None  # a real shortcut
    names = cl.ROW_MEANS if constant == "ROW_MEANS" else _names(number, constant)
    with pytest.raises(RuntimeError, match="is not available in this check"):
        with blocked(names, namespace=namespace, functions=(answer,)):
            answer(*args)
