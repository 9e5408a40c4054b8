"""Pretrain notebook 15's small language model on the course's English prose and write data/pretrained_lm.npz.

The model is a ``course_lib.modern.ModernLM`` (RMSNorm, SwiGLU, RoPE, grouped-query attention) that reads characters:
the vocabulary is every character that occurs at least ``MIN_COUNT`` times in the training part of
``data/course_prose.txt`` plus one token (``UNKNOWN``) for all others. The first 90 % of the text trains, the last 10 %
is held out. Each step draws ``BATCH`` windows of ``LENGTH + 1`` characters at random starts from a
``torch.Generator`` seeded with ``SEED``, and takes one AdamW step on the mean next-character cross-entropy; the
learning rate rises linearly for ``WARMUP`` steps, then follows a cosine down to a tenth. The model's initial weights
come from ``torch.manual_seed(SEED)`` right before it is built.

The file holds the trained weights in float16 (``w.<name>``: half the bytes; the notebook reads them back as float32),
the vocabulary (``vocab``: Unicode code points, ``UNKNOWN`` last), the loss of every step (``loss``), the held-out loss
every ``EVAL_EVERY`` steps (``val_step``, ``val_loss``, on ``EVAL_BATCHES`` fixed batches) and the settings
(``config``). Notebook 15 repeats the first steps with the same code and compares its losses with ``loss``;
tests/test_pretrain_lm.py does the same for this script's functions.

Usage (137 s of one CPU core here):
    python -m tools.pretrain_lm data/pretrained_lm.npz
then compare the printed SHA-256 with data/SOURCES.md (the bytes depend on the CPU's arithmetic; the losses the
notebook checks do not, to the precision it checks).
"""

from __future__ import annotations

import hashlib
import math
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from course_lib.corpus import load_course_prose
from course_lib.modern import ModernLM

SEED, STEPS, BATCH, LENGTH = 0, 2000, 32, 64
LR, WARMUP, WEIGHT_DECAY = 3e-3, 100, 0.01
MIN_COUNT, UNKNOWN = 50, "\ufffd"
EVAL_EVERY, EVAL_BATCHES = 100, 8
MODEL = dict(d_model=64, num_heads=4, num_layers=3, num_kv_heads=2, max_len=LENGTH)


def vocabulary(text: str) -> list[str]:
    """The characters of ``text`` that occur at least ``MIN_COUNT`` times, sorted, then ``UNKNOWN``."""
    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    return sorted(ch for ch, n in counts.items() if n >= MIN_COUNT) + [UNKNOWN]


def encode(text: str, vocab: list[str]) -> torch.Tensor:
    index = {ch: i for i, ch in enumerate(vocab)}
    return torch.tensor([index.get(ch, len(vocab) - 1) for ch in text])


def splits() -> tuple[list[str], torch.Tensor, torch.Tensor]:
    """(vocabulary, training ids, held-out ids): the first 90 % of the prose and the rest."""
    text = load_course_prose()
    cut = int(0.9 * len(text))
    vocab = vocabulary(text[:cut])
    return vocab, encode(text[:cut], vocab), encode(text[cut:], vocab)


def windows(ids: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """``BATCH`` windows of ``LENGTH + 1`` ids at random starts: ``(BATCH, LENGTH + 1)``."""
    starts = torch.randint(0, len(ids) - LENGTH - 1, (BATCH,), generator=g)
    return ids[starts[:, None] + torch.arange(LENGTH + 1)]


def learning_rate(step: int) -> float:
    if step < WARMUP:
        return LR * (step + 1) / WARMUP
    progress = (step - WARMUP) / max(1, STEPS - WARMUP)
    return LR * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def new_model(vocab_size: int) -> ModernLM:
    torch.manual_seed(SEED)
    return ModernLM(vocab_size, **MODEL)


def train(model: ModernLM, train_ids: torch.Tensor, steps: int, val_ids: torch.Tensor | None = None):
    """Train ``model`` for ``steps`` steps; returns the loss of every step and [(step, held-out loss)]."""
    g = torch.Generator().manual_seed(SEED)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    losses, held_out = [], []
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step)
        batch = windows(train_ids, g)
        logits = model(batch[:, :-1])  # (B, L, V)
        loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if val_ids is not None and (step + 1) % EVAL_EVERY == 0:
            held_out.append((step + 1, evaluate(model, val_ids)))
    return losses, held_out


@torch.no_grad()
def evaluate(model: ModernLM, ids: torch.Tensor) -> float:
    """Mean next-character cross-entropy on ``EVAL_BATCHES`` fixed batches of ``ids``."""
    g = torch.Generator().manual_seed(SEED + 1)
    batches = [windows(ids, g) for _ in range(EVAL_BATCHES)]
    losses = [F.cross_entropy(model(b[:, :-1]).flatten(0, 1), b[:, 1:].flatten()).item() for b in batches]
    return sum(losses) / len(losses)


def main() -> None:
    from tools.make_hf_reference import write_npz

    torch.set_num_threads(1)
    out = sys.argv[1]
    start = time.process_time()
    vocab, train_ids, val_ids = splits()
    model = new_model(len(vocab))
    losses, held_out = train(model, train_ids, STEPS, val_ids)
    arrays = {f"w.{k}": v.detach().to(torch.float16).numpy() for k, v in model.state_dict().items()}
    config = [SEED, STEPS, BATCH, LENGTH, MIN_COUNT, EVAL_EVERY, EVAL_BATCHES, *MODEL.values()]
    arrays |= {
        "vocab": np.array([ord(ch) for ch in vocab], dtype=np.int32),
        "loss": np.array(losses, dtype=np.float32),
        "val_step": np.array([s for s, _ in held_out], dtype=np.int32),
        "val_loss": np.array([v for _, v in held_out], dtype=np.float32),
        "config": np.array(config, dtype=np.int64),
    }
    write_npz(out, arrays)
    data = open(out, "rb").read()
    print(f"{len(vocab)} characters, {sum(p.numel() for p in model.parameters()):,} parameters")
    print(f"loss {losses[0]:.3f} -> {sum(losses[-50:]) / 50:.3f} (last 50); held-out {held_out[-1][1]:.3f}")
    print(f"{time.process_time() - start:.0f} s of CPU; wrote {out}: {len(data):,} bytes, sha256 "
          f"{hashlib.sha256(data).hexdigest()}")  # fmt: skip


if __name__ == "__main__":
    main()
