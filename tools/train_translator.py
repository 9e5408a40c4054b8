"""Train notebook 14's translator (English dates into Chinese) for all its steps and write data/translator.npz.

The model is a ``course_lib.Translator`` (D = 32, 4 heads, two encoder and two decoder blocks, pre-LN, F = 64) built
right after ``course_lib.set_seed(SEED)``. The data are ``course_lib.date_splits(SIZES, seed=DATA_SEED)``; the source
is cut with ``course_lib.date_tokens``, the target into characters, each vocabulary the three special tokens and then
the sorted tokens of the training pairs, exactly as notebook 14 builds them. Each step draws ``BATCH`` training pairs
from a ``torch.Generator`` seeded with 0 and takes one AdamW step (weight decay ``WEIGHT_DECAY``, then
``course_lib.train.adam_step``) on the teacher-forced cross-entropy; the learning rate rises to ``LR`` over the first
10 % of the steps, stays, and falls linearly almost to zero over the last 40 %. This is notebook 14's training cell,
operation for operation: the notebook runs its first ``FIRST`` steps itself and checks their losses against ``loss``
below, then loads the weights after ``EARLY`` steps (its section 6 compares that model with the trained one) and
after all ``STEPS``.

The file holds the trained weights in float32 (``w.<name>``: the weights as trained, so the notebook's model is the
one this script trained) and those after the first ``EARLY`` steps (``early.<name>``), the loss of every step
(``loss``), the teacher-forced cross-entropy of both on the validation pairs (``val_loss``, ``early_val_loss``) and the
settings (``config``). tests/test_train_translator.py checks the script's first steps against ``loss`` and the shipped
weights against the two validation losses.

Usage (about 5 s of one CPU core here):
    python -m tools.train_translator data/translator.npz
then compare the printed SHA-256 with data/SOURCES.md (the bytes depend on the CPU's arithmetic; the first losses and
the validation loss the checks compare do not, to the precision they check).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import course_lib as cl
from course_lib.train import adam_step

SEED, DATA_SEED, SIZES = 0, 14, (4000, 250, 500)
STEPS, EARLY, BATCH, LR, WEIGHT_DECAY = 160, 40, 64, 1e-2, 0.01
FIRST = 10  # the steps notebook 14 runs itself, checked against the logged losses
SPECIALS, PAD, BOS, EOS = ("<pad>", "<bos>", "<eos>"), 0, 1, 2
MODEL = dict(d_model=32, num_heads=4, num_encoder_layers=2, num_decoder_layers=2, d_ff=64)


def data() -> tuple[tuple[list[str], list[str]], tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """((source vocabulary, target vocabulary), training ids, validation ids), each ids a pair (sources, targets):
    sources ``(N, S)``, targets ``(N, L + 1)`` with ``<bos>`` first and ``<eos>`` last, padded with ``PAD``."""
    train_pairs, val_pairs, _ = cl.date_splits(SIZES, seed=DATA_SEED)
    src_names = [*SPECIALS, *sorted({t for en, _ in train_pairs for t in cl.date_tokens(en)})]
    tgt_names = [*SPECIALS, *sorted({ch for _, zh in train_pairs for ch in zh})]
    src_index = {t: i for i, t in enumerate(src_names)}
    tgt_index = {t: i for i, t in enumerate(tgt_names)}

    def encode(pairs):
        sources = [torch.tensor([src_index[t] for t in cl.date_tokens(en)]) for en, _ in pairs]
        targets = [torch.tensor([BOS] + [tgt_index[ch] for ch in zh] + [EOS]) for _, zh in pairs]
        return cl.pad_sequences(sources, PAD)[0], cl.pad_sequences(targets, PAD)[0]

    return (src_names, tgt_names), encode(train_pairs), encode(val_pairs)


def new_model(src_vocab_size: int, tgt_vocab_size: int) -> cl.Translator:
    cl.set_seed(SEED)
    return cl.Translator(src_vocab_size, tgt_vocab_size, **MODEL, pad_index=PAD)


def learning_rate(step: int) -> float:
    return LR * min((step + 1) / (0.1 * STEPS), 1.0, (STEPS - step) / (0.4 * STEPS))


def train(model: cl.Translator, train_src: torch.Tensor, train_tgt: torch.Tensor, steps: int,
          early: dict[str, torch.Tensor] | None = None) -> list[float]:  # fmt: skip
    """Train ``model`` in place for the first ``steps`` of the ``STEPS``; returns the loss of every step. ``early``, if
    given, receives a copy of the weights after the first ``EARLY`` steps."""
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in model.parameters()]
    g, losses = torch.Generator().manual_seed(0), []
    for step in range(steps):
        batch = torch.randint(0, len(train_src), (BATCH,), generator=g)
        src_ids, tgt_ids = train_src[batch], train_tgt[batch]
        logits = model(src_ids, tgt_ids[:, :-1])  # teacher forcing: (B, L, V)
        loss = F.cross_entropy(logits.flatten(0, 1), tgt_ids[:, 1:].flatten(), ignore_index=PAD)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p, m in zip(model.parameters(), moments, strict=True):
                adam_step(p.mul_(1 - learning_rate(step) * WEIGHT_DECAY), p.grad, m, step + 1, lr=learning_rate(step))
        losses.append(loss.item())
        if early is not None and step + 1 == EARLY:
            early.update({name: w.detach().clone() for name, w in model.state_dict().items()})
    return losses


@torch.no_grad()
def evaluate(model: cl.Translator, src: torch.Tensor, tgt: torch.Tensor) -> float:
    """The teacher-forced cross-entropy of ``model`` on every target token of the pairs (padding skipped)."""
    logits = model.eval()(src, tgt[:, :-1])
    return F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=PAD).item()


def main() -> None:
    from tools.make_hf_reference import write_run

    torch.set_num_threads(1)
    out = sys.argv[1]
    start = time.process_time()
    (src_names, tgt_names), (train_src, train_tgt), (val_src, val_tgt) = data()
    model, early = new_model(len(src_names), len(tgt_names)), {}
    losses = train(model, train_src, train_tgt, STEPS, early)
    val_loss = evaluate(model, val_src, val_tgt)
    early_model = new_model(len(src_names), len(tgt_names))
    early_model.load_state_dict(early)
    extra = {f"early.{name}": w.numpy() for name, w in early.items()}
    extra["early_val_loss"] = np.array([evaluate(early_model, val_src, val_tgt)], dtype=np.float32)
    config = [SEED, DATA_SEED, *SIZES, STEPS, EARLY, BATCH, *MODEL.values()]
    write_run(out, model, losses, ("val_loss", val_loss), config, start, extra)


if __name__ == "__main__":
    main()
