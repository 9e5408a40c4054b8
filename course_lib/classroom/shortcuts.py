"""Families of library functions that would do an exercise's work in one call, for ``check_function(without=...)``.

Several notebooks ask for the same kind of function (a normalisation in 11 and 15, a mean over the real rows in 05
and 11), and a check that blocks one spelling of it leaves the others open: a twenty-third lecturer's trial scored
full marks with ``torch.rms_norm`` in 15 (11 blocked it), with ``F.layer_norm`` of ``[x, -x]`` (whose mean is zero:
a LayerNorm of it is an RMSNorm of ``x``), and in 05 with ``torch.segment_reduce``, ``F.embedding_bag`` and
``Tensor.index_reduce_(..., "mean")`` (11 blocked the first two). Each family is named once, here, and every check
of that kind blocks all of it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["NORMALIZATIONS", "ROW_MEANS"]

# every function of PyTorch (and the course) that normalises vectors in one call; torch.rms_norm: torch 2.4+
NORMALIZATIONS = (
    tuple(
        f"{name}.{fn}"
        for name, owner in (("torch", torch), ("torch.nn.functional", F))
        for fn in (
            "layer_norm",
            "native_layer_norm",
            "group_norm",
            "native_group_norm",
            "instance_norm",
            "batch_norm",
            "native_batch_norm",
            "rms_norm",
            "local_response_norm",
        )  # fmt: skip
        if hasattr(owner, fn)
    )
    + tuple(
        f"torch.nn.{layer}.forward"
        for layer in ("LayerNorm", "GroupNorm", "RMSNorm", "InstanceNorm1d", "BatchNorm1d", "LocalResponseNorm")
        if hasattr(torch.nn, layer)
    )
    + ("course_lib.modern.RMSNorm.forward", "course_lib.modern.RMSNorm._forward")
)

# every function that averages rows, or gathers and reduces them, by itself
ROW_MEANS = (
    "torch.nanmean", "torch.Tensor.nanmean", "torch.masked.mean", "torch.nn.functional.embedding_bag",
    "torch.embedding_bag", "torch._embedding_bag", "torch.segment_reduce", "torch.index_reduce",
    "torch.Tensor.index_reduce", "torch.Tensor.index_reduce_", "torch.scatter_reduce", "torch.Tensor.scatter_reduce",
    "torch.Tensor.scatter_reduce_",
)  # fmt: skip
