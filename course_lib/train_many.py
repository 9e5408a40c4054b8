"""Several models of one architecture trained side by side, in one vectorised loop (notebook 10).

:func:`fit_many` is :func:`course_lib.train.fit` for ``K`` models at once. Model ``k`` gets its own training data,
number of epochs, learning rate and seed, and is trained as ``fit(models[k], train_data[k], epochs=epochs[k],
lr=lr[k], seed=seed[k], batch_size=batch_size)`` would train it: the same order of examples, the same loss, Adam
with the same settings. What changes is how the arithmetic is organised. The parameters of the ``K`` models are
stacked into one buffer ``(K, P)``, seen as one tensor ``(K, ...)`` per parameter, and ``torch.func.vmap`` over
``torch.func.functional_call`` runs the forward and backward passes of all ``K`` models as one set of batched
operations, followed by one Adam update of the buffer. Each batched operation pays its fixed cost once for all
``K`` models, so one step of ``K`` small models costs less than ``K`` steps (notebook 10 prints how much, per
model and step, for its 8 CNNs). Where vmap cannot batch a layer (``nn.RNN``, ``nn.LSTM``) or costs more than it
saves, ``forward=`` takes the ``K`` models' forward written batched by hand: notebook 02's RNNs, and notebook 10's
ViTs, whose vmapped step cost about a fifth more CPU than one with a batched product per layer (9 ViTs, one
thread of an AMD EPYC Zen 5, 2026-12-02).

Equal up to rounding: a batched matrix product adds the same terms as ``K`` separate ones, but not always in the
same order, so results can differ in the last bits, and a long training run can grow such differences (as another
CPU's kernels would). ``tests/test_train_many.py`` compares :func:`fit_many` with :func:`fit`.

The models train in lockstep, so every model must make the same steps with the same batch sizes (for example,
``N_k * epochs_k`` equal and every ``N_k`` a multiple of ``batch_size``). Their forward pass must be deterministic
(no dropout in training mode) and must not update buffers (no batch norm).

Shape legend: ``K`` models, ``N_k`` examples of model ``k``, ``B`` batch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import torch
from torch import Tensor, nn
from torch.func import functional_call, vmap

from .progress import progress_bar
from .train import History, _check_data, adam_step, cross_entropy
from .validate import instance, integer, number

__all__ = ["fit_many"]


def _per_model(name: str, value: object, k: int, check: Callable[[str, object], object]) -> list:
    """``value`` for each of the ``k`` models: one value for all, or a list or tuple of ``k`` values."""
    values = list(value) if isinstance(value, (list, tuple)) else [value] * k
    if len(values) != k:
        raise ValueError(f"{name} must be one value or one per model ({k}), got {len(values)} values")
    return [check(f"{name}[{i}]", v) for i, v in enumerate(values)]


def _check_models(models: object) -> list[nn.Module]:
    if not isinstance(models, (list, tuple)) or not models:
        raise TypeError(f"models must be a non-empty list of torch.nn.Module, got {type(models).__name__}")
    models = [instance(f"models[{i}]", m, nn.Module, "a torch.nn.Module") for i, m in enumerate(models)]
    first = {name: (p.shape, p.dtype, p.device, p.requires_grad) for name, p in models[0].named_parameters()}
    if not first:
        raise ValueError("models[0] has no parameters to train")
    for i, m in enumerate(models[1:], start=1):
        if {name: (p.shape, p.dtype, p.device, p.requires_grad) for name, p in m.named_parameters()} != first:
            raise ValueError(
                f"models[{i}] is not of the architecture of models[0]: its parameters differ in names, shapes, "
                "dtypes, devices or requires_grad (fit_many stacks the parameters of one architecture)"
            )
    return models


def _batch_sizes(n: int, epochs: int, batch_size: int) -> list[int]:
    """The batch sizes of the steps :func:`fit` makes: ``epochs`` passes over ``n`` examples."""
    return [min(batch_size, n - start) for start in range(0, n, batch_size)] * epochs


def _batches(n: int, epochs: int, batch_size: int, seed: int) -> Iterator[tuple[Tensor, bool]]:
    """The example indices of each step, as :func:`fit` draws them, and whether the step ends an epoch."""
    generator = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, batch_size):
            yield order[start : start + batch_size], start + batch_size >= n


def _stack_parameters(models: list[nn.Module]) -> tuple[Tensor, dict[str, Tensor], dict[str, Tensor]]:
    """The trainable parameters of the ``K`` models in one buffer ``(K, P)`` and, per name, a view ``(K, ...)`` of it
    that autograd treats as a leaf; the frozen parameters and the buffers stacked apart (``(K, ...)``, no gradient)."""
    per_model = [dict(m.named_parameters()) for m in models]
    k, named = len(models), per_model[0]
    stacked = {name: torch.stack([params[name].detach() for params in per_model]) for name in named}
    trainable = [name for name, p in named.items() if p.requires_grad]  # fit's Adam skips a frozen parameter
    flat = torch.cat([stacked[name].reshape(k, -1) for name in trainable], dim=1)  # (K, P)
    views, start = {}, 0
    for name in trainable:
        views[name] = flat[:, start : start + named[name].numel()].view(stacked[name].shape).requires_grad_()
        start += named[name].numel()
    fixed = {name: t for name, t in stacked.items() if name not in views}
    buffers = [dict(m.named_buffers()) for m in models]
    fixed |= {name: torch.stack([b[name] for b in buffers]) for name in buffers[0]}
    return flat, views, fixed


def _stack_batch(data: list[tuple[Tensor, ...]], indices: list[Tensor], device: torch.device) -> list[Tensor]:
    """Model ``k``'s batch ``data[k][j][indices[k]]`` of each tensor ``j``, stacked over the models: ``(K, B, ...)``."""
    return [
        torch.stack([d[j][i.to(d[j].device)] for d, i in zip(data, indices, strict=True)]).to(device)
        for j in range(len(data[0]))
    ]


def fit_many(
    models: Sequence[nn.Module],
    train_data: Sequence[Sequence[Tensor]],
    *,
    epochs: int | Sequence[int],
    batch_size: int = 64,
    lr: float | Sequence[float] = 1e-3,
    seed: int | Sequence[int] = 0,
    loss_fn: Callable[[Tensor, Tensor], Tensor] | None = None,
    forward: Callable[..., Tensor] | None = None,
    progress: bool = True,
    desc: str = "training",
) -> list[History]:
    """Train ``K`` models of one architecture in place, side by side, as :func:`course_lib.train.fit` trains each.
    Taught in notebook 10.

    Args:
        models: ``K`` modules with the same parameter names, shapes, dtypes and device; ``models[0]``'s forward is
            the one that runs (with each model's parameters).
        train_data: ``K`` tuples ``(inputs..., targets)``, one per model, as ``fit`` takes them; model ``k``'s tensors
            share their first dimension ``N_k``, and the models' tensors agree in number, dtype and other dimensions.
        epochs, lr, seed: one value for every model, or a list of ``K`` values.
        batch_size: examples per step, as in ``fit``.
        loss_fn: ``loss_fn(outputs, targets) -> scalar`` of one model; default :func:`course_lib.train.cross_entropy`.
        forward: optional ``forward(params, *inputs) -> outputs``, the ``K`` models' forward written batched by hand:
            ``params[name]`` ``(K, ...)`` stacks the models' parameters (and buffers), named as in ``models[0]``, the
            inputs are ``(K, B, ...)`` and the outputs ``(K, B, ...)``. Default: ``models[0]``'s forward under
            ``torch.func.vmap``, which cannot batch ``nn.RNN`` or ``nn.LSTM`` and pays a cost per operation that a
            forward with one batched product per layer does not (notebook 02 trains three RNNs so).
        progress: a text progress bar over the steps (tqdm, on stderr).
        desc: the bar's label.

    Returns:
        One :class:`~course_lib.train.History` per model, with its mean training loss per epoch.

    Raises:
        ValueError: if the models would not make the same steps with the same batch sizes.
        RuntimeError: if a loss becomes NaN or infinite (with the model and the step).
    """
    models = _check_models(models)
    k = len(models)
    if not isinstance(train_data, (list, tuple)) or len(train_data) != k:
        raise ValueError(f"train_data must be a list of one (inputs..., targets) tuple per model ({k})")
    data = [_check_data(f"train_data[{i}]", d) for i, d in enumerate(train_data)]
    epochs = _per_model("epochs", epochs, k, lambda name, v: integer(name, v, minimum=1))
    lrs = _per_model("lr", lr, k, lambda name, v: number(name, v, minimum=0.0))
    seeds = _per_model("seed", seed, k, integer)
    integer("batch_size", batch_size, minimum=1)
    kinds = [[(t.shape[1:], t.dtype) for t in d] for d in data]
    if any(kind != kinds[0] for kind in kinds):
        raise ValueError("the tensors of train_data[k] must agree between the models in number, dtype and shape[1:]")
    sizes = [len(d[0]) for d in data]
    steps = [_batch_sizes(n, e, batch_size) for n, e in zip(sizes, epochs, strict=True)]
    if any(s != steps[0] for s in steps):
        made = ", ".join(
            f"model {i}: N={n}, {e} epochs, {len(s)} steps"
            for i, (n, e, s) in enumerate(zip(sizes, epochs, steps, strict=True))
        )
        raise ValueError(
            f"fit_many trains in lockstep: every model must make the same steps of the same batch sizes; {made}"
        )
    loss_fn = cross_entropy if loss_fn is None else loss_fn
    instance("forward", forward, Callable, "a function (params, *inputs) -> outputs", optional=True)
    return _train(
        models, data, epochs, lrs, seeds, batch_size, _all_losses(models[0], loss_fn, forward), progress, desc
    )


def _rate_dtype(device: torch.device) -> torch.dtype:
    """The dtype of the per-model learning rates: float64, as torch.optim.Adam's Python floats, except on Apple's MPS,
    which has no float64 (a tensor of it raises there): float32, whose step sizes may differ from Adam's by one unit in
    float32's last place, within the float32 tolerance that fit_many's tests hold it to."""
    return torch.float32 if device.type == "mps" else torch.float64


def _all_losses(base: nn.Module, loss_fn: Callable, forward: Callable | None) -> Callable[..., Tensor]:
    """``all_losses(params, fixed, *inputs, targets) -> (K,)``: every model's loss on its own batch, stacked."""
    if forward is not None:  # the K models' outputs at once, then each model's loss on its slice
        per_model = vmap(loss_fn, randomness="error")
        return lambda p, b, *batch: per_model(forward({**p, **b}, *batch[:-1]), batch[-1])
    # functional_call looks for tied (shared) parameters at every call unless told there are none: a cost per step
    tied = len(list(base.named_parameters(remove_duplicate=False))) > len(list(base.named_parameters()))

    def one_loss(p, b, *batch):  # one model: (B, ...) inputs and targets -> its scalar loss
        return loss_fn(functional_call(base, {**p, **b}, tuple(batch[:-1]), tie_weights=tied), batch[-1])

    return vmap(one_loss, randomness="error")


def _train(models, data, epochs, lrs, seeds, batch_size, all_losses, progress, desc) -> list[History]:
    base = models[0]
    flat, params, fixed = _stack_parameters(models)  # (K, P); views (K, ...) of it; stacked apart (K, ...)
    device, moments = flat.device, (torch.zeros_like(flat), torch.zeros_like(flat))  # Adam's m and v
    lr = torch.tensor(lrs, dtype=_rate_dtype(device), device=device)
    batches = [_batches(len(d[0]), e, batch_size, s) for d, e, s in zip(data, epochs, seeds, strict=True)]
    histories, totals = [History() for _ in models], [0.0] * len(models)
    base.train()
    total = len(_batch_sizes(len(data[0][0]), epochs[0], batch_size))
    every = max(1, total // 20)  # the bar is drawn about 20 times, not at every step
    bar = progress_bar(total=total, desc=desc, disable=not progress)
    for step in range(1, total + 1):
        indices, ends = zip(*(next(b) for b in batches), strict=True)
        *inputs, targets = _stack_batch(data, list(indices), device)
        losses = all_losses(params, fixed, *inputs, targets)  # (K,)
        values = losses.tolist()
        for i, loss in enumerate(values):
            if not math.isfinite(loss):
                raise RuntimeError(f"the loss of model {i} became {loss} at step {step}; try a smaller lr ({lrs[i]})")
        for p in params.values():
            p.grad = None
        losses.sum().backward()  # model k's parameters get the gradient of its own loss only
        grad = torch.cat([p.grad.reshape(len(models), -1) for p in params.values()], dim=1)  # (K, P)
        adam_step(flat, grad, moments, step, lr[:, None])  # (K, P) parameters, a rate per model (K, 1)
        for i, (loss, end) in enumerate(zip(values, ends, strict=True)):
            totals[i] += loss * len(indices[i])
            if end:
                histories[i].loss.append(totals[i] / len(data[i][0]))
                totals[i] = 0.0
        if step % every == 0 or step == total:
            bar.update(step - bar.n)
    bar.close()
    with torch.no_grad():
        for i, m in enumerate(models):
            for name, p in m.named_parameters():
                p.copy_(params[name][i] if name in params else fixed[name][i])
            m.train()
    return histories
