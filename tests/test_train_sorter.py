"""tools/train_sorter.py and the model it wrote (data/sorter.npz, notebook 12): the script's first steps and its whole
run give the losses it logged, and the shipped weights give the test loss it logged."""

from __future__ import annotations

import hashlib

import pytest
import torch

from course_lib.corpus import ARRAYS_SHA256, load_arrays
from course_lib.paths import DATA_DIR, ROOT
from tools import train_sorter

# The logged losses are float32 from one CPU; another CPU, thread count or rounding sums in another order. Measured
# here with the scalar kernels (ATEN_CPU_CAPABILITY=default, MKL_CBWR=COMPATIBLE): every one of the 150 losses within
# 2e-5 of the log and the rerun's test loss within 2e-6, so 1e-3 leaves a wide margin and still tells another run apart
# (the loss falls by about 0.06 a step over the first ten).
LOSS_TOL = 1e-3
# The shipped float32 weights are the trained ones; only the order of the sums of one forward pass can differ (a few
# float32 roundings of a loss near 0.011): 1e-5 is far above that and far below what another model would give.
TEST_TOL = 1e-5


@pytest.fixture(scope="module")
def data():
    return train_sorter.data()


@pytest.fixture(scope="module")
def saved():
    return load_arrays("sorter.npz")


def test_the_file_is_the_one_listed():
    digest = hashlib.sha256((DATA_DIR / "sorter.npz").read_bytes()).hexdigest()
    assert digest == ARRAYS_SHA256["sorter.npz"]
    assert digest in (ROOT / "data" / "SOURCES.md").read_text(encoding="utf-8")


def test_the_whole_run_gives_the_logged_losses_and_test_loss(data, saved):
    # about 2 s of CPU: the script's training from scratch, every step compared with its log
    train_rows, test_rows = data
    model = train_sorter.new_model()
    losses = train_sorter.train(model, train_rows, train_sorter.STEPS)
    torch.testing.assert_close(torch.tensor(losses), saved["loss"], rtol=0, atol=LOSS_TOL)
    assert abs(train_sorter.evaluate(model, test_rows) - saved["test_loss"].item()) < LOSS_TOL
    assert saved["loss"][-10:].mean() < saved["loss"][0] / 100


def test_the_shipped_weights_give_the_logged_test_loss(data, saved):
    _, test_rows = data
    model = train_sorter.new_model()
    model.load_state_dict({k.removeprefix("w."): v for k, v in saved.items() if k.startswith("w.")})
    assert abs(train_sorter.evaluate(model, test_rows) - saved["test_loss"].item()) < TEST_TOL


def test_the_settings_are_the_logged_ones(saved):
    s = train_sorter
    expected = [s.SEED, s.DATA_SEED, s.TEST_SEED, s.N_TRAIN, s.N_CANDIDATES, s.N_TEST, s.STEPS, s.EARLY, s.BATCH,
                *s.MODEL.values()]  # fmt: skip
    assert saved["config"].tolist() == expected and len(saved["loss"]) == s.STEPS
