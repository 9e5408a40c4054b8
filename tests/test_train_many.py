"""fit_many (K models trained side by side in one vectorised loop) against fit, which trains them one by one.

What "equal" can mean here. Both train each model on the same batches in the same order with the same Adam, but
fit_many computes the K models' products and sums as batched operations, which may add the same terms in another
order; each result can then differ in its last bit or so (relative 2^-24 ≈ 6e-8 in float32, 2^-53 ≈ 1.1e-16 in
float64). After a few Adam steps, each of which moves a parameter by at most about lr, such differences stay far below
torch's default float32 tolerance (rtol 1.3e-6, atol 1e-5), which the float32 tests use, and the float64 test holds
the same runs to 1e-9.

One exception, in the ViT: the bias of the key projection. Adding one vector to every key adds the same number to all
of a query's scores, which the softmax ignores, so that bias's gradient is exactly zero in exact arithmetic and what
any computation gets is rounding noise. Adam divides a gradient by its own running size (plus eps = 1e-8), so the
noise moves that bias by up to about lr * noise / eps per step, differently in any two computations (two machines too).
The outputs do not depend on it, so for the ViT the test compares the outputs and every other parameter.
"""

import pytest
import torch
from torch import nn

import course_lib as cl
from course_lib.train import adam_step, evaluate, fit
from course_lib.train_many import fit_many

# (training images, epochs, learning rate, seed) of each of the K = 3 models: 4 steps of 50 images for every one
RUNS = [(50, 4, 3e-3, 0), (100, 2, 1e-2, 1), (200, 1, 1e-3, 2)]
KEY_BIASES = ("self_attn.w_k.bias",)

ARCHITECTURES = {
    "mlp": lambda: nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10)),
    "cnn": lambda: cl.TinyCNN(width=4),
    "vit": lambda: cl.TinyViT(d_model=16, depth=1, num_heads=2),
}


def digits(dtype, device):
    images, labels = cl.load_digits()  # (1797, 1, 8, 8), (1797,)
    return images[:200].to(device=device, dtype=dtype), labels[:200].to(device)


def build(kind, seed, dtype, device):
    cl.set_seed(seed)
    return ARCHITECTURES[kind]().to(device=device, dtype=dtype)


def one_by_one_and_side_by_side(kind, dtype, device):
    images, labels = digits(dtype, device)
    alone, together, histories = [], [], []
    for n, epochs, lr, seed in RUNS:
        model = build(kind, seed, dtype, device)
        histories.append(
            fit(model, (images[:n], labels[:n]), epochs=epochs, batch_size=50, lr=lr, seed=seed, progress=False)
        )
        alone.append(model)
    together = [build(kind, seed, dtype, device) for *_, seed in RUNS]
    many = fit_many(
        together,
        [(images[:n], labels[:n]) for n, *_ in RUNS],
        epochs=[epochs for _, epochs, _, _ in RUNS],
        batch_size=50,
        lr=[lr for *_, lr, _ in RUNS],
        seed=[seed for *_, seed in RUNS],
        progress=False,
    )
    return alone, together, histories, many, (images, labels)


def compare(alone, together, histories, many, data, **tol):
    for a, b, h, m in zip(alone, together, histories, many, strict=True):
        assert len(m.loss) == len(h.loss)
        torch.testing.assert_close(torch.tensor(m.loss), torch.tensor(h.loss), **tol)
        for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
            if not name.endswith(KEY_BIASES):
                torch.testing.assert_close(q, p, **tol, msg=lambda text, name=name: f"{name}: {text}")
        with torch.no_grad():
            torch.testing.assert_close(b(data[0]), a(data[0]), **tol)  # the outputs, key biases included


@pytest.mark.parametrize("kind", sorted(ARCHITECTURES))
def test_fit_many_equals_fit_one_by_one_to_float32_rounding(kind, device):
    compare(*one_by_one_and_side_by_side(kind, torch.float32, device), rtol=1.3e-6, atol=1e-5)


@pytest.mark.parametrize("kind", sorted(ARCHITECTURES))
def test_fit_many_equals_fit_one_by_one_in_float64(kind, device):
    if device.type == "mps":
        pytest.skip("MPS has no float64")
    alone, together, *rest = one_by_one_and_side_by_side(kind, torch.float64, device)
    compare(alone, together, *rest, rtol=1e-9, atol=1e-9)
    for a, b in zip(alone, together, strict=True):  # the key biases: rounding noise times lr / eps, ~1e-11 here
        for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
            if name.endswith(KEY_BIASES):
                torch.testing.assert_close(q, p, rtol=0, atol=1e-9)


def test_the_models_learn_and_keep_their_own_data_and_rates():
    images, labels = digits(torch.float32, "cpu")
    models = [build("mlp", 0, torch.float32, "cpu") for _ in range(2)]
    histories = fit_many(
        models, [(images, labels), (images, labels)], epochs=6, batch_size=50, lr=[1e-2, 0.0], progress=False
    )
    untrained = build("mlp", 0, torch.float32, "cpu")
    assert histories[0].loss[-1] < 0.5 * histories[0].loss[0]  # lr 1e-2 learns: 2.25 -> 0.58 when written
    for p, q in zip(models[1].parameters(), untrained.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0)  # lr 0 leaves model 1 as it was
    assert evaluate(models[0], (images, labels), cl.train.accuracy) > 0.8
    assert all(m.training for m in models)


def test_adam_step_is_torch_adam_with_a_learning_rate_per_model():
    g = torch.Generator().manual_seed(0)
    shapes, lrs = [(3, 5), (7,), (2, 2, 2)], [1e-3, 3e-3, 1e-2, 0.1]
    start = [torch.randn(len(lrs), *s, generator=g) for s in shapes]
    refs = [[t[k].clone().requires_grad_() for t in start] for k in range(len(lrs))]
    optimizers = [torch.optim.Adam(params, lr=lr) for params, lr in zip(refs, lrs, strict=True)]
    flat = torch.cat([t.reshape(len(lrs), -1) for t in start], dim=1)  # (K, P)
    moments = (torch.zeros_like(flat), torch.zeros_like(flat))
    for step in range(1, 21):
        grads = [torch.randn(len(lrs), *s, generator=g) * 10.0 ** (-step % 7) for s in shapes]  # 1 to 1e-6
        for k, optimizer in enumerate(optimizers):
            for p, grad in zip(refs[k], grads, strict=True):
                p.grad = grad[k].clone()
            optimizer.step()
        grad = torch.cat([t.reshape(len(lrs), -1) for t in grads], dim=1)
        adam_step(flat, grad, moments, step, torch.tensor(lrs, dtype=torch.float64)[:, None])
    expected = torch.stack([torch.cat([p.detach().reshape(-1) for p in params]) for params in refs])
    torch.testing.assert_close(flat, expected, rtol=1.3e-6, atol=1e-7)  # the same elementwise steps


def test_fit_many_leaves_a_frozen_parameter_alone_and_draws_one_bar(capsys):
    images, labels = digits(torch.float32, "cpu")
    models = [build("mlp", seed, torch.float32, "cpu") for seed in (0, 1)]
    for m in models:
        m[1].bias.requires_grad_(False)
    before = [m[1].bias.detach().clone() for m in models]
    fit_many(models, [(images, labels)] * 2, epochs=2, batch_size=40, desc="two MLPs")
    for m, b in zip(models, before, strict=True):
        assert torch.equal(m[1].bias, b) and not m[1].bias.requires_grad
    err = capsys.readouterr().err
    assert "two MLPs: 100%" in err and "10/10" in err


@pytest.mark.parametrize(
    ("kwargs", "exc", "words"),
    [
        ({"epochs": [2, 2, 2]}, ValueError, r"epochs must be one value or one per model \(2\), got 3"),
        ({"epochs": [2, 1]}, ValueError, "lockstep: every model must make the same steps"),
        ({"lr": "0.1"}, TypeError, r"lr\[0\] must be a number"),
        ({"seed": 1.5}, TypeError, r"seed\[0\] must be an int"),
        ({"batch_size": 0}, ValueError, "batch_size must be >= 1"),
        ({"models": [nn.Linear(64, 10)]}, ValueError, "one .* tuple per model"),
        ({"models": nn.Linear(64, 10)}, TypeError, "models must be a non-empty list"),
    ],
)
def test_fit_many_rejects_bad_arguments(kwargs, exc, words):
    x, y = torch.zeros(8, 64), torch.zeros(8, dtype=torch.long)
    args = {"models": [nn.Linear(64, 10), nn.Linear(64, 10)], "train_data": [(x, y), (x, y)], "epochs": 2, **kwargs}
    with pytest.raises(exc, match=words):
        fit_many(args.pop("models"), args.pop("train_data"), progress=False, **args)


def test_fit_many_refuses_other_architectures_data_that_differ_randomness_and_a_diverging_loss():
    x, y = torch.zeros(8, 64), torch.zeros(8, dtype=torch.long)
    with pytest.raises(ValueError, match=r"models\[1\] is not of the architecture of models\[0\]"):
        fit_many([nn.Linear(64, 10), nn.Linear(64, 5)], [(x, y), (x, y)], epochs=1, progress=False)
    with pytest.raises(ValueError, match="must agree between the models"):
        fit_many([nn.Linear(64, 10)] * 2, [(x, y), (x.double(), y)], epochs=1, progress=False)
    dropout = [nn.Sequential(nn.Linear(64, 10), nn.Dropout(0.5)) for _ in range(2)]
    with pytest.raises(RuntimeError, match="random"):
        fit_many(dropout, [(x, y), (x, y)], epochs=1, progress=False)
    with pytest.raises(RuntimeError, match=r"the loss of model 0 became inf at step 1"):
        fit_many(
            [nn.Linear(64, 10)] * 2,
            [(x, y), (x, y)],
            epochs=1,
            progress=False,
            loss_fn=lambda out, t: out.abs().sum() / 0.0 + 1.0,
        )


def test_the_learning_rates_are_float64_except_on_apples_mps():
    """fit_many keeps one learning rate per model in a tensor on the models' device: float64 as Adam's Python floats,
    but MPS has no float64 (found by a reader of notebook 10, which promises an Apple GPU; no MPS machine here)."""
    from course_lib.train_many import _rate_dtype

    assert _rate_dtype(torch.device("cpu")) == _rate_dtype(torch.device("cuda", 0)) == torch.float64
    assert _rate_dtype(torch.device("mps")) == torch.float32
