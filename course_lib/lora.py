r"""Low-rank adaptation (LoRA; Hu et al., "LoRA: Low-Rank Adaptation of Large Language Models", ICLR 2022): fine-tune a
frozen linear layer by learning only a low-rank change of its weight.

A pretrained layer computes :math:`y = x W^\top + b` with :math:`W \in \mathbb{R}^{d_\text{out} \times d_\text{in}}`.
Full fine-tuning learns a change :math:`\Delta W` of the same size. LoRA writes the change as a product of rank ``r``,

.. math::  \Delta W = \frac{\alpha}{r} B A, \qquad A \in \mathbb{R}^{r \times d_\text{in}},\;
           B \in \mathbb{R}^{d_\text{out} \times r},

so that :math:`y = x W^\top + b + \frac{\alpha}{r}\,(x A^\top) B^\top`: ``r (d_in + d_out)`` trainable numbers instead
of ``d_in d_out``. ``A`` starts random (as ``nn.Linear`` initialises a weight) and ``B`` at zero, so the adapted layer
starts as the pretrained one; dividing by ``r`` keeps the update's size comparable when ``r`` changes. After training,
:func:`merge_lora` adds :math:`\frac{\alpha}{r} B A` to ``W`` once: the merged model is as fast as the original and
computes the same outputs (up to rounding). The parameters are named as Hugging Face PEFT's ``lora_A.weight`` and
``lora_B.weight`` are shaped, and the layer equals PEFT's LoRA with the same numbers (tests/test_lora.py; PEFT is a
test dependency, never imported here).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .validate import instance, integer, number

__all__ = ["LoRALinear", "add_lora", "count_parameters", "merge_lora"]


class LoRALinear(nn.Module):
    """A frozen ``nn.Linear`` plus a trainable low-rank update ``(alpha / rank) * B A``.

    Args:
        base: the pretrained layer; its weight and bias are frozen (``requires_grad = False``), never copied.
        rank: ``r``, the rank of the update.
        alpha: the update is scaled by ``alpha / rank``; default ``rank`` (scale 1).

    ``lora_A`` ``(r, d_in)`` starts as ``nn.Linear`` draws a weight (Kaiming-uniform), ``lora_B`` ``(d_out, r)`` at
    zero. Forward: ``x (..., d_in)`` → ``(..., d_out)``.
    """

    def __init__(self, base: nn.Linear, rank: int, alpha: float | None = None):
        super().__init__()
        instance("base", base, nn.Linear, "a torch.nn.Linear")
        self.rank = integer("rank", rank, minimum=1)
        self.alpha = float(rank) if alpha is None else number("alpha", alpha, minimum=0.0, strict_minimum=True)
        self.scaling = self.alpha / self.rank
        self.base = base.requires_grad_(False)
        weight = base.weight
        self.lora_A = nn.Parameter(torch.empty(rank, base.in_features, dtype=weight.dtype, device=weight.device))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank, dtype=weight.dtype, device=weight.device))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))  # nn.Linear's own initialisation of a weight

    def forward(self, x: Tensor) -> Tensor:
        return self.base(x) + (x @ self.lora_A.T @ self.lora_B.T) * self.scaling  # (..., r) on the way

    def delta_weight(self) -> Tensor:
        """``(alpha / r) B A``, the change of the weight, ``(d_out, d_in)``."""
        return (self.lora_B @ self.lora_A) * self.scaling

    def merged(self) -> nn.Linear:
        """A plain ``nn.Linear`` with weight ``W + (alpha / r) B A`` and the base's bias: the same outputs."""
        base = self.base
        merged = nn.Linear(base.in_features, base.out_features, bias=base.bias is not None)
        merged = merged.to(device=base.weight.device, dtype=base.weight.dtype)
        with torch.no_grad():
            merged.weight.copy_(base.weight + self.delta_weight())
            if base.bias is not None:
                merged.bias.copy_(base.bias)
        return merged

    def extra_repr(self) -> str:
        return f"rank={self.rank}, alpha={self.alpha:g}"


def _replace(model: nn.Module, name: str, new: nn.Module) -> None:
    parent, _, child = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, child, new)


def add_lora(
    model: nn.Module, rank: int, alpha: float | None = None, targets: tuple[str, ...] = ("w_q", "w_v")
) -> list[str]:
    """Freeze every parameter of ``model`` and wrap each ``nn.Linear`` whose name ends with one of ``targets`` (by
    default the query and value projections, as the LoRA paper does) in a :class:`LoRALinear`, in place. Returns
    the names wrapped; ``ValueError`` when none matches."""
    instance("model", model, nn.Module, "a torch.nn.Module")
    integer("rank", rank, minimum=1)
    instance("targets", targets, (tuple, list), "a tuple of names")
    model.requires_grad_(False)
    names = [n for n, m in model.named_modules() if isinstance(m, nn.Linear) and n.split(".")[-1] in targets]
    if not names:
        raise ValueError(f"no nn.Linear of model is named one of {tuple(targets)}")
    for name in names:
        _replace(model, name, LoRALinear(model.get_submodule(name), rank, alpha))
    return names


def merge_lora(model: nn.Module) -> nn.Module:
    """Replace every :class:`LoRALinear` of ``model`` by its merged ``nn.Linear``, in place; returns ``model``."""
    instance("model", model, nn.Module, "a torch.nn.Module")
    for name in [n for n, m in model.named_modules() if isinstance(m, LoRALinear)]:
        _replace(model, name, model.get_submodule(name).merged())
    return model


def count_parameters(model: nn.Module, trainable: bool = False) -> int:
    """The number of parameters of ``model`` (each shared tensor once); with ``trainable``, only those that
    ``requires_grad``."""
    instance("model", model, nn.Module, "a torch.nn.Module")
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable)
