"""fit_many with a hand-batched forward (notebook 02: three vanilla-RNN readers of the recall task trained side by side)
against fit, which trains them one by one with nn.RNN.

What "equal" can mean here. Both runs give each model the same initial weights (drawn after set_seed(seed)), the same
batches in the same order (a generator seeded with seed) and the same Adam. The arithmetic differs only in how it is
organised: nn.RNN on a CPU computes each pre-activation as (h W_hh^T + b_hh) + (x W_ih^T + b_ih), with one matrix
product per model, while the batched forward adds (b_ih + b_hh) + x W_ih^T first and then h W_hh^T with one batched
product (baddbmm) for all models, and looks the embeddings up in one stacked table. So every pre-activation is a sum
of the same D + H + 2 terms in another order: in floating point the two sums differ by at most about
(D + H + 2) u times the sum of the terms' sizes, u = 2^-24 ~ 6e-8 in float32 (2^-53 ~ 1.1e-16 in float64), here
66 u ~ 4e-6 at worst and about sqrt(66) u ~ 5e-7 typically, and tanh (slope at most 1) does not enlarge a difference.
Over 4 Adam steps, each moving a parameter by at most about lr, such differences stay below torch's default float32
tolerance (rtol 1.3e-6, atol 1e-5), which the float32 test uses; the float64 test holds the same runs to 1e-9. No
parameter here has a gradient that is exactly zero in exact arithmetic and rounding noise in practice (the case that
test_train_many.py sets apart for a ViT's key bias): an embedding row that no batch reads gets an exact zero in both.

Over the notebook's 96 steps, a vanilla RNN that barely learns can grow such differences, as another CPU's rounding
would (seed 2's final loss moved by 3e-4 when this was written): the notebook asserts claims with margins that hold
under every rounding profile, and this test keeps the run short enough that it measures rounding alone.
"""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import course_lib as cl
from course_lib.data import recall_task
from course_lib.train import fit
from course_lib.train_many import fit_many

SEEDS, LR, EPOCHS, BATCH = [0, 1, 2], 3e-3, 2, 64  # 2 epochs of 128 sequences: 4 steps


class RecurrentReader(nn.Module):  # notebook 02's reader: embeddings, nn.RNN, a class from the last state h_L
    def __init__(self, vocab_size=25, dim=32, hidden=32, num_classes=8):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.rnn = nn.RNN(dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden, num_classes)

    def forward(self, tokens):  # (B, L) -> (B, C)
        states, _ = self.rnn(self.embed(tokens))  # (B, L, H)
        return self.out(states[:, -1])


def rnn_readers(p, tokens):  # notebook 02's: K readers at once, p[name] (K, ...), tokens (K, B, L) -> (K, B, C)
    K, B, L = tokens.shape
    table = p["embed.weight"]  # (K, V, D)
    x = F.embedding(tokens + table.shape[1] * torch.arange(K, device=tokens.device)[:, None, None], table.flatten(0, 1))
    bias = p["rnn.bias_ih_l0"] + p["rnn.bias_hh_l0"]  # (K, H)
    inputs = torch.baddbmm(bias[:, None], x.flatten(1, 2), p["rnn.weight_ih_l0"].mT).unflatten(1, (B, L))  # (K,B,L,H)
    h = x.new_zeros(K, B, bias.shape[1])
    for x_t in inputs.unbind(2):
        h = torch.tanh(torch.baddbmm(x_t, h, p["rnn.weight_hh_l0"].mT))  # (K, B, H)
    return torch.baddbmm(p["out.bias"][:, None], h, p["out.weight"].mT)  # (K, B, C)


def readers(dtype, device):
    models = []
    for seed in SEEDS:
        cl.set_seed(seed)
        models.append(RecurrentReader().to(device=device, dtype=dtype))
    return models


def one_by_one_and_side_by_side(dtype, device):
    tokens, targets = recall_task(128, (1, 31), length=32, seed=0)
    data = (tokens.to(device), targets.to(device))
    alone = readers(dtype, device)
    histories = [
        fit(m, data, epochs=EPOCHS, batch_size=BATCH, lr=LR, seed=s, progress=False)
        for m, s in zip(alone, SEEDS, strict=True)
    ]
    together = readers(dtype, device)
    many = fit_many(
        together, [data] * 3, epochs=EPOCHS, batch_size=BATCH, lr=LR, seed=SEEDS, forward=rnn_readers, progress=False
    )
    return alone, together, histories, many, tokens.to(device)


@pytest.mark.parametrize(("dtype", "tol"), [(torch.float32, 1e-5), (torch.float64, 1e-9)])
def test_three_rnn_readers_side_by_side_equal_three_fits_to_rounding(dtype, tol, device):
    if dtype == torch.float64 and device.type == "mps":
        pytest.skip("MPS has no float64")
    alone, together, histories, many, tokens = one_by_one_and_side_by_side(dtype, device)
    rtol = 1.3e-6 if dtype == torch.float32 else tol
    for a, b, h, m in zip(alone, together, histories, many, strict=True):
        assert len(m.loss) == len(h.loss) == EPOCHS
        torch.testing.assert_close(torch.tensor(m.loss), torch.tensor(h.loss), rtol=rtol, atol=tol)
        for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
            torch.testing.assert_close(q, p, rtol=rtol, atol=tol, msg=lambda text, name=name: f"{name}: {text}")
        with torch.no_grad():
            torch.testing.assert_close(b(tokens), a(tokens), rtol=rtol, atol=tol)  # nn.RNN's forward, trained


def test_the_batched_forward_equals_each_model_alone():
    models = readers(torch.float64, torch.device("cpu"))
    tokens, _ = recall_task(16, (1, 31), length=32, seed=1)
    stacked = {name: torch.stack([m.get_parameter(name) for m in models]) for name, _ in models[0].named_parameters()}
    with torch.no_grad():
        alone = torch.stack([m(tokens) for m in models])  # (3, B, C)
        torch.testing.assert_close(rnn_readers(stacked, tokens.expand(3, -1, -1)), alone, rtol=1e-12, atol=1e-12)


def test_fit_many_checks_forward():
    x, y = torch.zeros(8, 4), torch.zeros(8, dtype=torch.long)
    with pytest.raises(TypeError, match=r"forward must be a function \(params, \*inputs\) -> outputs"):
        fit_many([nn.Linear(4, 2), nn.Linear(4, 2)], [(x, y)] * 2, epochs=1, forward="rnn", progress=False)
