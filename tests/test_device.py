import random

import numpy as np
import pytest
import torch

from course_lib import get_device, set_seed


def test_env_variable_overrides(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    assert get_device() == torch.device("cpu")


def test_prefer_overrides_env(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "not-a-device")
    assert get_device("cpu") == torch.device("cpu")


def test_automatic_choice_is_an_available_device(monkeypatch):
    monkeypatch.delenv("COURSE_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    assert get_device().type == expected


def test_unknown_device_is_a_value_error(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "tpu")
    with pytest.raises(ValueError, match="'tpu' is an unknown device"):
        get_device()


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_unavailable_device_is_an_error_not_a_silent_fallback():
    with pytest.raises(RuntimeError, match="no cuda device is available"):
        get_device("cuda")


def test_set_seed_makes_every_generator_repeat():
    def draw():
        return random.random(), float(np.random.rand()), torch.rand(3).tolist()

    gen = set_seed(123)
    first, first_gen = draw(), torch.rand(2, generator=gen).tolist()
    gen = set_seed(123)
    assert draw() == first
    assert torch.rand(2, generator=gen).tolist() == first_gen
    set_seed(124)
    assert draw() != first


def test_set_seed_rejects_non_integers():
    with pytest.raises(TypeError):
        set_seed(1.5)


def test_errors_name_their_source(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "cuda:99")
    with pytest.raises(RuntimeError, match=r"COURSE_DEVICE='cuda:99' was requested"):
        get_device()
    with pytest.raises(RuntimeError, match=r"prefer='cuda:99' was requested"):
        get_device("cuda:99")
