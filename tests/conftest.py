"""Shared fixtures: every device-aware test runs on the CPU and on each accelerator present; `load_tool` loads a
script of tools/ (they are scripts, not a package) by its path."""

import importlib.util
import sys
from types import ModuleType

import pytest
import torch

from course_lib.paths import ROOT


def load_tool(name: str) -> ModuleType:
    """tools/<name>.py as a module (registered in sys.modules: dataclasses look their module up)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


@pytest.fixture(params=DEVICES)
def device(request) -> torch.device:
    return torch.device(request.param)


def float_dtypes(device: torch.device) -> list[torch.dtype]:
    """Full-precision dtypes that `device` supports (MPS has no float64)."""
    return [torch.float32] if device.type == "mps" else [torch.float32, torch.float64]
