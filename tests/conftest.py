"""Shared fixtures: every device-aware test runs on the CPU and on each accelerator present. (The tests import the
course's tools as the package they are, `from tools import sections`: pytest puts the repository root on sys.path,
pyproject.toml's `pythonpath`.)"""

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import torch


def available_devices() -> list[str]:
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    if hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
        devices.append("mps")
    return devices


DEVICES = available_devices()

# On NVIDIA GPUs cuDNN may compute float32 convolutions and recurrent layers in TF32 (a 10-bit mantissa) by default.
# The tests compare nn.Conv2d / nn.RNN / nn.LSTM with course_lib's own float32 code at float32 tolerances, so they
# ask for full float32. (The notebooks that make such comparisons do the same in their setup cell.)
torch.backends.cudnn.allow_tf32 = False


@contextmanager
def transformer_fast_path(enabled: bool) -> Iterator[None]:
    """Turn the inference fast path of nn.TransformerEncoderLayer, nn.TransformerEncoder and nn.MultiheadAttention on
    or off for the duration, with PyTorch's documented switch (torch.backends.mha, in torch >= 2.3).

    In eval mode without autograd these modules call fused C++ kernels (torch._transformer_encoder_layer_fwd) whose
    arithmetic is not the modules' Python code: on CUDA the feed-forward network's Linear + GELU is one cuBLASLt call
    whose GELU is the tanh approximation (see test_models.fast_path_gelu). With the fast path off the modules run
    their Python code, the same operations as course_lib, on every device."""
    before = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(enabled)
    try:
        yield
    finally:
        torch.backends.mha.set_fastpath_enabled(before)


@pytest.fixture(params=DEVICES)
def device(request) -> torch.device:
    return torch.device(request.param)


def float_dtypes(device: torch.device) -> list[torch.dtype]:
    """Full-precision dtypes that `device` supports (MPS has no float64)."""
    return [torch.float32] if device.type == "mps" else [torch.float32, torch.float64]
