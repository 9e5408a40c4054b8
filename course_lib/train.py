"""A compact training loop shared by every notebook of the course.

Data sets are plain tuples of tensors ``(inputs..., targets)`` that share their first dimension ``N``
(the number of examples); the model is called as ``model(*inputs)``. Nothing else is assumed: no
``Dataset`` classes, no ``DataLoader``, so a notebook can build its data in one line and read this file
in five minutes.

Shape legend: ``N`` examples, ``B`` batch, ``C`` classes; ``...`` any further dimensions, e.g. the
sequence length ``L`` for a label per element (outputs ``(B, L, C)``, targets ``(B, L)``).

Reproducibility: the order of the examples is drawn from a ``torch.Generator`` seeded with ``seed``, so two
calls with the same model initialisation and the same ``seed`` train identically on the CPU. The model's
initial weights (and any dropout) come from the global generator: call :func:`course_lib.set_seed` before
building the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .progress import progress_bar
from .validate import compute_dtype, flag, instance, integer, number, tensor

__all__ = ["History", "accuracy", "adam_step", "cross_entropy", "evaluate", "fit"]
# progress_bar lives in course_lib.progress; `from course_lib.train import progress_bar` still works (imported above).

IGNORE_INDEX = -100  #: targets equal to this are skipped by the default loss and by :func:`accuracy`


@dataclass
class History:
    """Per-epoch record of a call to :func:`fit`; entry ``i`` belongs to epoch ``i + 1``.

    Attributes:
        loss: mean training loss of the epoch (average over its batches, weighted by batch size).
        train_metric: the metric on the training batches *as they were seen during the epoch* (average over
            batches weighted by batch size, as Keras reports it); empty when no metric was given.
        eval_metric: the metric on ``eval_data`` after the epoch; empty when no metric or no eval data.
    """

    loss: list[float] = field(default_factory=list)
    train_metric: list[float] = field(default_factory=list)
    eval_metric: list[float] = field(default_factory=list)


def cross_entropy(outputs: Tensor, targets: Tensor) -> Tensor:
    """Cross-entropy over the **last** dimension: outputs ``(..., C)`` logits, targets ``(...)`` class indices.

    Works for one label per sequence (``(B, C)`` / ``(B,)``) and one label per element (``(B, L, C)`` /
    ``(B, L)``) alike. Targets equal to ``-100`` are ignored (PyTorch's ``ignore_index``), e.g. padding.
    float16 / bfloat16 logits are computed in float32 and the loss is float32 (as under ``torch.autocast``): in half
    precision logits near 1e4 give an infinite loss, and a mean over many positions can overflow.
    """
    tensor("outputs", outputs, min_dim=1, floating=True)
    tensor("targets", targets, integral=True)
    if outputs.shape[:-1] != targets.shape:
        raise ValueError(
            f"outputs must have shape (..., C) with ... = targets' shape: got outputs {tuple(outputs.shape)} "
            f"and targets {tuple(targets.shape)}"
        )
    logits = outputs.to(compute_dtype(outputs.dtype)).reshape(-1, outputs.shape[-1])  # (N, C)
    return F.cross_entropy(logits, targets.reshape(-1).long(), ignore_index=IGNORE_INDEX)


def accuracy(logits: Tensor, targets: Tensor) -> float:
    """Fraction of positions where ``logits.argmax(-1) == targets``; logits ``(..., C)``, targets ``(...)``.

    Targets equal to ``-100`` are not counted (as in :func:`cross_entropy`). Returns a Python float in [0, 1].
    """
    tensor("logits", logits, min_dim=1)
    tensor("targets", targets)
    if logits.shape[:-1] != targets.shape:
        raise ValueError(
            f"logits must have shape (..., C) with ... = targets' shape: got logits {tuple(logits.shape)} "
            f"and targets {tuple(targets.shape)}"
        )
    counted = targets != IGNORE_INDEX
    total = int(counted.sum())
    if total == 0:
        raise ValueError("accuracy of an empty set: every target is -100 (ignored) or there are no targets")
    correct = (logits.argmax(-1) == targets) & counted
    return int(correct.sum()) / total


def _check_data(name: str, data: object) -> tuple[Tensor, ...]:
    if not isinstance(data, (tuple, list)) or len(data) < 2:
        raise TypeError(f"{name} must be a tuple (inputs..., targets) of at least 2 tensors, got {type(data).__name__}")
    for i, t in enumerate(data):
        if tensor(f"{name}[{i}]", t).dim() == 0:
            raise ValueError(f"{name}[{i}] must have a first dimension (the examples), got a 0-d tensor")
    sizes = [t.shape[0] for t in data]
    if len(set(sizes)) != 1:
        raise ValueError(f"the tensors of {name} must share their first dimension N, got sizes {sizes}")
    if sizes[0] == 0:
        raise ValueError(f"{name} holds no examples (N = 0)")
    return tuple(data)


def _model_device(model: nn.Module) -> torch.device:
    for p in model.parameters():
        return p.device
    raise ValueError("model has no parameters to train")


@torch.no_grad()
def adam_step(param: Tensor, grad: Tensor, moments: tuple[Tensor, Tensor], step: int, lr, weight_decay=0.0) -> None:
    """One step of ``torch.optim.Adam`` (default betas and eps) on ``param`` in place, operation by operation as its
    single-tensor update; ``moments`` ``(m, v)`` change in place, ``step`` counts from 1; ``lr``: a float, or a float64
    tensor that broadcasts against ``param`` (a rate per model in ``fit_many``). Why not ``torch.optim.Adam``: its
    first step imports PyTorch's compiler (``torch._dynamo``), about 1.5 s of CPU in each new process, longer than
    many of the course's models train. ``tests/test_train.py`` holds it to ``torch.optim.Adam`` bit for bit."""
    (beta1, beta2, eps), (m, v) = (0.9, 0.999, 1e-8), moments  # torch.optim.Adam's defaults
    if weight_decay:
        grad = grad.add(param, alpha=weight_decay)
    m.lerp_(grad, 1 - beta1)
    v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    denom = (v.sqrt() / (1 - beta2**step) ** 0.5).add_(eps)
    step_size = -lr / (1 - beta1**step)
    if isinstance(step_size, Tensor):  # Adam's param + (step_size * m) / denom, with step_size rounded to param's dtype
        param.add_(m * step_size.to(param.dtype) / denom)
    else:
        param.addcdiv_(m, denom, value=step_size)


def _adam_update(params: list[Tensor], state: list[list], lr: float, weight_decay: float) -> None:
    """``torch.optim.Adam(params, lr, weight_decay=weight_decay).step()``; ``state`` holds [step count, m, v] per
    parameter. A parameter the loss does not reach (no gradient) keeps its value and its step count, as in torch."""
    for p, st in zip(params, state, strict=True):
        if p.grad is not None:
            st[0] += 1
            adam_step(p, p.grad, (st[1], st[2]), st[0], lr, weight_decay)


def _batches(data: Sequence[Tensor], order: Tensor, batch_size: int, device: torch.device):
    for start in range(0, len(order), batch_size):
        index = order[start : start + batch_size]
        yield [t[index.to(t.device)].to(device) for t in data]


def evaluate(
    model: nn.Module,
    data: Sequence[Tensor],
    metric: Callable[[Tensor, Tensor], float],
    *,
    batch_size: int = 256,
) -> float:
    """``metric(outputs, targets)`` of ``model`` on ``data = (inputs..., targets)``, without gradients.

    The model runs in eval mode on batches of ``batch_size`` (moved to the device of its parameters); the
    outputs of all batches are concatenated and the metric is computed once on the whole set, so any metric
    (not only averages) is exact. The model's previous train/eval mode is restored afterwards.
    """
    instance("model", model, nn.Module, "a torch.nn.Module")
    data = _check_data("data", data)
    instance("metric", metric, Callable, "a function (outputs, targets) -> float")
    integer("batch_size", batch_size, minimum=1)
    device = _model_device(model)
    was_training = model.training
    model.eval()
    outputs = []
    try:
        with torch.no_grad():
            for *inputs, _ in _batches(data, torch.arange(len(data[0])), batch_size, device):
                outputs.append(model(*inputs))
    finally:
        model.train(was_training)
    return float(metric(torch.cat(outputs), data[-1].to(device)))


def _check_fit(model, train_data, loss_fn, epochs, batch_size, eval_data, metric, seed, progress) -> None:
    """The edge of :func:`fit` (``lr`` and ``weight_decay`` aside)."""
    instance("model", model, nn.Module, "a torch.nn.Module")
    _check_data("train_data", train_data)
    instance("loss_fn", loss_fn, Callable, "a function (outputs, targets) -> loss", optional=True)
    integer("epochs", epochs, minimum=1)
    integer("batch_size", batch_size, minimum=1)
    if eval_data is not None:
        _check_data("eval_data", eval_data)
        if metric is None:
            raise ValueError("eval_data is scored with metric, but metric is None: pass e.g. metric=accuracy")
    instance("metric", metric, Callable, "a function (outputs, targets) -> float", optional=True)
    integer("seed", seed)
    flag("progress", progress)


def fit(
    model: nn.Module,
    train_data: Sequence[Tensor],
    *,
    loss_fn: Callable[[Tensor, Tensor], Tensor] | None = None,
    epochs: int = 10,
    batch_size: int = 64,
    lr: float = 1e-3,
    weight_decay: float = 0.0,
    eval_data: Sequence[Tensor] | None = None,
    metric: Callable[[Tensor, Tensor], float] | None = None,
    seed: int = 0,
    progress: bool = True,
    desc: str = "training",
) -> History:
    """Train ``model`` in place with Adam and return the per-epoch :class:`History`.

    Args:
        model: called as ``model(*inputs)``; it is trained on the device of its parameters (batches are
            moved there), so ``model.to(device)`` is all a notebook needs to do.
        train_data: ``(inputs..., targets)``, tensors sharing their first dimension ``N`` (on any device).
        loss_fn: ``loss_fn(outputs, targets) -> scalar``; default :func:`cross_entropy` over the last dim.
        epochs: passes over the training data.
        batch_size: examples per step; the last batch of an epoch may be smaller.
        lr, weight_decay: Adam's (:func:`adam_step`, the update of ``torch.optim.Adam``).
        eval_data: optional ``(inputs..., targets)`` scored with ``metric`` after each epoch (needs ``metric``).
        metric: ``metric(outputs, targets) -> float``, e.g. :func:`accuracy`.
        seed: seeds the ``torch.Generator`` that shuffles the examples each epoch.
        progress: show a text progress bar over epochs (``tqdm``, on stderr) with the latest loss and eval metric;
            its last line stays, e.g. ``training: 100%|██████████| 10/10 [00:02<00:00, loss=0.1234]``.
        desc: the bar's label.

    Raises:
        RuntimeError: if the loss becomes NaN or infinite (with the epoch and step where it happened).
    """
    _check_fit(model, train_data, loss_fn, epochs, batch_size, eval_data, metric, seed, progress)
    lr, weight_decay = number("lr", lr, minimum=0.0), number("weight_decay", weight_decay, minimum=0.0)
    loss_fn = cross_entropy if loss_fn is None else loss_fn
    device = _model_device(model)
    params = [p for p in model.parameters() if p.requires_grad]
    state = [[0, torch.zeros_like(p), torch.zeros_like(p)] for p in params]  # Adam's step count, m and v
    generator = torch.Generator().manual_seed(seed)
    history, n = History(), len(train_data[0])

    bar = progress_bar(range(epochs), desc=desc, disable=not progress)
    for epoch in bar:
        model.train()
        order = torch.randperm(n, generator=generator)
        total_loss, total_metric = 0.0, 0.0
        for step, (*inputs, targets) in enumerate(_batches(train_data, order, batch_size, device)):
            outputs = model(*inputs)
            loss = loss_fn(outputs, targets)
            if not torch.isfinite(loss):
                raise RuntimeError(
                    f"the loss became {loss.item()} at epoch {epoch + 1}, step {step + 1}; "
                    f"try a smaller learning rate (lr={lr})"
                )
            model.zero_grad(set_to_none=True)
            loss.backward()
            _adam_update(params, state, lr, weight_decay)
            total_loss += loss.item() * len(targets)
            if metric is not None:
                total_metric += float(metric(outputs.detach(), targets)) * len(targets)
        history.loss.append(total_loss / n)
        if metric is not None:
            history.train_metric.append(total_metric / n)
            if eval_data is not None:
                history.eval_metric.append(evaluate(model, eval_data, metric, batch_size=max(batch_size, 256)))
        postfix = {"loss": f"{history.loss[-1]:.4f}"}
        if history.eval_metric:
            postfix["eval"] = f"{history.eval_metric[-1]:.3f}"
        bar.set_postfix(postfix, refresh=False)  # drawn with the next update: one line per epoch
    bar.close()
    return history
