"""tools/train_translator.py and the model it wrote (data/translator.npz, notebook 14): the script's first steps give
the losses it logged, and the shipped weights (after all the steps, and after the first 40) give the validation losses
it logged."""

from __future__ import annotations

import hashlib

import pytest
import torch

from course_lib.corpus import ARRAYS_SHA256, load_arrays
from course_lib.paths import DATA_DIR, ROOT
from tools import train_translator

# The logged losses are float32 from one CPU; another CPU, thread count or rounding sums in another order. Measured
# under the portability profiles (avx2, scalar, rounding1, rounding2): the first 10 steps stay within 2e-5 of the log
# (the differences grow later, by step 40 to about 1e-3), so three steps within 1e-3 leave a wide margin.
FIRST_STEPS, LOSS_TOL = 3, 1e-3
# The shipped float32 weights are the trained ones; only the order of the sums of one forward pass can differ (a few
# float32 roundings of a loss near 0.006): 1e-5 is far above that and far below what another model would give.
VAL_TOL = 1e-5


@pytest.fixture(scope="module")
def data():
    return train_translator.data()


def test_the_file_is_the_one_listed():
    digest = hashlib.sha256((DATA_DIR / "translator.npz").read_bytes()).hexdigest()
    assert digest == ARRAYS_SHA256["translator.npz"]
    assert digest in (ROOT / "data" / "SOURCES.md").read_text(encoding="utf-8")


def test_the_first_steps_give_the_logged_losses(data):
    saved = load_arrays("translator.npz")
    (src_names, tgt_names), (train_src, train_tgt), _ = data
    model = train_translator.new_model(len(src_names), len(tgt_names))
    losses = train_translator.train(model, train_src, train_tgt, FIRST_STEPS)
    torch.testing.assert_close(torch.tensor(losses), saved["loss"][:FIRST_STEPS], rtol=0, atol=LOSS_TOL)
    assert len(saved["loss"]) == train_translator.STEPS and saved["loss"][-10:].mean() < saved["loss"][0] / 200


@pytest.mark.parametrize(("prefix", "logged"), [("w.", "val_loss"), ("early.", "early_val_loss")])
def test_the_shipped_weights_give_the_logged_validation_loss(data, prefix, logged):
    # both sets of weights: after all the steps (w.), and after the first EARLY (early., notebook 14's section 6)
    saved = load_arrays("translator.npz")
    (src_names, tgt_names), _, (val_src, val_tgt) = data
    model = train_translator.new_model(len(src_names), len(tgt_names))
    model.load_state_dict({k.removeprefix(prefix): v for k, v in saved.items() if k.startswith(prefix)})
    assert abs(train_translator.evaluate(model, val_src, val_tgt) - saved[logged].item()) < VAL_TOL
    assert saved[logged].item() > 0.1 if prefix == "early." else saved[logged].item() < 0.01  # two different models
