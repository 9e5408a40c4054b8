"""The GPU kernel of notebook 08: FlashAttention-style fused attention in Triton, and how it is measured.

Read in this order:

- :mod:`~course_lib.kernels.flash` — the Triton kernel itself; its docstring and comments number the tricks.
- :mod:`~course_lib.kernels.launch` — :func:`flash_attention` (checks the inputs, picks a configuration, launches the
  kernel) and :func:`attention_reference`, what the kernel is defined to compute.
- :mod:`~course_lib.kernels.measure` — inputs, the correctness check, FLOPs and TFLOP/s.
- :mod:`~course_lib.kernels.bench` — ``python -m course_lib.kernels.bench``: the kernel against PyTorch's fused SDPA
  (needs a CUDA GPU); :mod:`~course_lib.kernels.tuning` — its tuning aids (``--explore``, ``--sdpa-backends``).

``course_lib.kernels.flash_attention`` and the other names of ``launch`` are loaded on first use, so
``import course_lib.kernels.bench`` works where ``triton`` is missing (the benchmark says so when it runs).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAUNCH_NAMES = (
    "SUPPORTED_HEAD_DIMS",
    "attention_reference",
    "best_config",
    "built_for_interpreter",
    "flash_attention",
    "interpreter_active",
    "tma_supported",
)

__all__ = list(_LAUNCH_NAMES)


def __getattr__(name: str) -> Any:
    """Import ``launch`` (and with it triton) the first time one of its names is asked for."""
    if name in _LAUNCH_NAMES:
        value = getattr(importlib.import_module(".launch", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
