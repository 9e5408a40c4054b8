"""Shared fixtures: every device-aware test runs on the CPU and on each accelerator present."""

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


@pytest.fixture(params=DEVICES)
def device(request) -> torch.device:
    return torch.device(request.param)


def float_dtypes(device: torch.device) -> list[torch.dtype]:
    """Full-precision dtypes that `device` supports (MPS has no float64)."""
    return [torch.float32] if device.type == "mps" else [torch.float32, torch.float64]
