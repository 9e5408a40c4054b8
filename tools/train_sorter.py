"""Train notebook 12's sorter (six digits from 0 to 7, then ">" and the same digits sorted) for all its steps and write
data/sorter.npz.

The data are notebook 12's: ``N_TRAIN`` rows of six digits drawn by a ``torch.Generator`` seeded with ``DATA_SEED``,
and the test prompts, the first 1,000 of ``N_CANDIDATES`` rows drawn from ``TEST_SEED`` whose digits no training row
has. The model is a ``course_lib.DecoderLM`` (9 tokens: the digits and ">"; D = 48, 4 heads, two pre-LN blocks,
learned positions up to 13) built right after ``course_lib.set_seed(0)``. Each step draws ``BATCH`` training rows
from a ``torch.Generator`` seeded with 0, scores only the targets that are answer digits (the others set to -100, the
``ignore_index`` of ``F.cross_entropy``) and takes one ``torch.optim.AdamW`` step (weight decay 0.01) under a
``torch.optim.lr_scheduler.OneCycleLR`` schedule (peak ``LR``, rising over the first 10 % of the ``STEPS`` steps).
This is notebook 12's ``train_lm`` with ``sort_batch``, operation for operation: the notebook runs its first ``EARLY``
steps itself and checks its first losses against ``loss`` below, then loads the weights of the whole run.

The file holds the trained weights in float32 (``w.<name>``: the weights as trained, so the notebook's sorter is the
one this script trained), the loss of every step (``loss``), the cross-entropy of the trained weights on the answer
digits of the test rows, teacher-forced (``test_loss``), and the settings (``config``). tests/test_train_sorter.py
checks the script's first steps and its whole run against ``loss`` and the shipped weights against ``test_loss``.

Usage (about 2 s of one CPU core here):
    python -m tools.train_sorter data/sorter.npz
then compare the printed SHA-256 with data/SOURCES.md. On the machine that wrote it the script gives the same bytes
every time (one thread, seeded draws, a zip with fixed timestamps); another CPU's arithmetic rounds otherwise and can
give other bytes, while the losses and the test loss the checks compare agree to the precision they check.
"""

from __future__ import annotations

import sys
import time

import torch
import torch.nn.functional as F

import course_lib as cl

SEED, DATA_SEED, TEST_SEED, N_TRAIN, N_CANDIDATES, N_TEST = 0, 1, 2, 20_000, 1_200, 1_000
STEPS, EARLY, BATCH, LR, WEIGHT_DECAY = 150, 40, 64, 1e-2, 0.01
N_DIGITS, N_VALUES = 6, 8  # six digits, each from 0 to 7: tokens 0-7
SEP, PROMPT = N_VALUES, N_DIGITS + 1  # token 8 is ">"; the prompt is the digits and ">"
MODEL = dict(d_model=48, num_heads=4, num_layers=2)


def examples(n: int, seed: int) -> torch.Tensor:
    """``n`` rows of six digits, ">" and the same digits sorted: ``(n, 13)`` token ids."""
    g = torch.Generator().manual_seed(seed)
    digits = torch.randint(0, N_VALUES, (n, N_DIGITS), generator=g)
    return torch.cat([digits, torch.full((n, 1), SEP), digits.sort(dim=1).values], dim=1)


def data() -> tuple[torch.Tensor, torch.Tensor]:
    """(training rows ``(N_TRAIN, 13)``, test rows ``(N_TEST, 13)``): no test row's digits occur in training."""
    train = examples(N_TRAIN, DATA_SEED)
    seen = set(map(tuple, train[:, :N_DIGITS].tolist()))
    candidates = examples(N_CANDIDATES, TEST_SEED)
    unseen = torch.tensor([tuple(row) not in seen for row in candidates[:, :N_DIGITS].tolist()])
    return train, candidates[unseen][:N_TEST]


def shifted(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """rows ``(B, 13)`` -> inputs and targets ``(B, 12)``, the targets that are prompt tokens set to -100."""
    inputs, targets = rows[:, :-1], rows[:, 1:].clone()
    targets[:, : PROMPT - 1] = -100
    return inputs, targets


def new_model() -> cl.DecoderLM:
    cl.set_seed(SEED)
    return cl.DecoderLM(N_VALUES + 1, **MODEL, max_len=2 * N_DIGITS + 1)


def train(model: cl.DecoderLM, train_rows: torch.Tensor, steps: int) -> list[float]:
    """Train ``model`` in place for the first ``steps`` of the ``STEPS``; returns the loss of every step."""
    g = torch.Generator().manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=LR, total_steps=STEPS, pct_start=0.1)
    losses = []
    for _ in range(steps):
        model.train()
        inputs, targets = shifted(train_rows[torch.randint(0, len(train_rows), (BATCH,), generator=g)])
        logits = model(inputs)  # (B, L, V)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
    model.eval()
    return losses


@torch.no_grad()
def evaluate(model: cl.DecoderLM, rows: torch.Tensor) -> float:
    """The teacher-forced cross-entropy of ``model`` on the six answer digits of every row."""
    inputs, targets = shifted(rows)
    return F.cross_entropy(model.eval()(inputs).flatten(0, 1), targets.flatten(), ignore_index=-100).item()


def main() -> None:
    from tools.make_hf_reference import write_run

    torch.set_num_threads(1)
    out = sys.argv[1]
    start = time.process_time()
    train_rows, test_rows = data()
    model = new_model()
    losses = train(model, train_rows, STEPS)
    test_loss = evaluate(model, test_rows)
    config = [SEED, DATA_SEED, TEST_SEED, N_TRAIN, N_CANDIDATES, N_TEST, STEPS, EARLY, BATCH, *MODEL.values()]
    write_run(out, model, losses, ("test_loss", test_loss), config, start)


if __name__ == "__main__":
    main()
