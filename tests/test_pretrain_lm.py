"""tools/pretrain_lm.py and the checkpoint it wrote (data/pretrained_lm.npz, notebook 15): the script's first steps
give the losses it logged, and the shipped weights give the held-out loss it logged."""

from __future__ import annotations

import torch

from course_lib.corpus import load_arrays
from tools import pretrain_lm

# The logged losses are float32 from one CPU; another CPU or thread count sums in another order. Three steps of
# AdamW move such differences (about 1e-6 relative per step) far less than 1e-3.
FIRST_STEPS, LOSS_TOL = 3, 1e-3


def test_the_first_steps_give_the_logged_losses():
    saved = load_arrays("pretrained_lm.npz")
    vocab, train_ids, _ = pretrain_lm.splits()
    assert [ord(ch) for ch in vocab] == saved["vocab"].tolist()
    losses, _ = pretrain_lm.train(pretrain_lm.new_model(len(vocab)), train_ids, FIRST_STEPS)
    torch.testing.assert_close(torch.tensor(losses), saved["loss"][:FIRST_STEPS], rtol=0, atol=LOSS_TOL)
    assert len(saved["loss"]) == pretrain_lm.STEPS and saved["loss"][-50:].mean() < saved["loss"][:50].mean() - 2


def test_the_shipped_weights_give_the_logged_held_out_loss():
    saved = load_arrays("pretrained_lm.npz")
    vocab, _, val_ids = pretrain_lm.splits()
    model = pretrain_lm.new_model(len(vocab))
    model.load_state_dict({k.removeprefix("w."): v.float() for k, v in saved.items() if k.startswith("w.")})
    # float16 weights (relative rounding 2**-11) move the loss by far less than 0.02 nats
    assert abs(pretrain_lm.evaluate(model, val_ids) - saved["val_loss"][-1].item()) < 0.02
