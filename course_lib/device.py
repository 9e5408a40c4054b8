"""Choosing a device and seeding random number generators.

Every notebook calls :func:`get_device` once and moves its tensors there, so the same notebook runs on
a laptop CPU, an Apple GPU (MPS) or a CUDA GPU in Colab. The environment variable ``COURSE_DEVICE``
overrides the automatic choice; ``make test`` sets ``COURSE_DEVICE=cpu`` so that the outputs stored in
the notebooks (computed on a CPU) are reproduced exactly.
"""

from __future__ import annotations

import os
import random

import numpy as np
import torch

from .validate import integer

__all__ = ["get_device", "set_seed"]

_KNOWN = ("cpu", "cuda", "mps")


def _available(kind: str) -> bool:
    if kind == "cpu":
        return True
    if kind == "cuda":
        return torch.cuda.is_available()
    if kind == "mps":
        return hasattr(torch.backends, "mps") and torch.backends.mps.is_available()
    return False


def get_device(prefer: str | None = None) -> torch.device:
    """Return the device the course should compute on.

    Order of precedence:

    1. ``prefer`` if given (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``);
    2. the environment variable ``COURSE_DEVICE`` if set;
    3. the first available of CUDA, MPS, CPU.

    An explicitly requested device that is not available raises ``RuntimeError`` rather than silently
    falling back, so that a run you believe is on the GPU really is.
    """
    if prefer is not None and not isinstance(prefer, str):
        raise TypeError(f"prefer must be a str such as 'cpu' or 'cuda:0', got {type(prefer).__name__} {prefer!r}")
    choice = prefer if prefer is not None else os.environ.get("COURSE_DEVICE", "").strip() or None
    if choice is None:
        for kind in ("cuda", "mps"):
            if _available(kind):
                return torch.device(kind)
        return torch.device("cpu")

    source = "prefer" if prefer is not None else "COURSE_DEVICE"
    try:
        device = torch.device(choice)
    except RuntimeError as err:
        raise ValueError(
            f"{source}={choice!r} is an unknown device; expected one of {', '.join(_KNOWN)} (e.g. 'cuda:0')"
        ) from err
    if device.type not in _KNOWN:
        raise ValueError(f"{source}={choice!r} is an unknown device; expected one of {', '.join(_KNOWN)}")
    if not _available(device.type):
        raise RuntimeError(f"{source}={choice!r} was requested but no {device.type} device is available here")
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise RuntimeError(
            f"{source}={choice!r} was requested but only {torch.cuda.device_count()} CUDA device(s) exist here"
        )
    return device


def set_seed(seed: int) -> torch.Generator:
    """Seed Python's ``random``, NumPy and PyTorch (all devices) with ``seed``.

    Returns a fresh CPU ``torch.Generator`` seeded with the same value, for code that prefers an explicit
    generator over the global one. This is the only place in ``course_lib`` that touches global seeds.
    """
    integer("seed", seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds CUDA and MPS generators
    return torch.Generator().manual_seed(seed)
