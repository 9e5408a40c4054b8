r"""FlashAttention-style fused attention on the GPU: the Python entry point and the plain reference.

:func:`flash_attention` checks its inputs and launches the Triton kernel of :mod:`course_lib.kernels.flash` (read
that module for how the kernel works: its docstring and comments number the tricks). :func:`attention_reference`
is what the kernel is defined to compute. Shapes: ``q, k, v`` and the output ``(B, H, N, D)``, contiguous, float16
or bfloat16, ``D`` 64 or 128.

Requires ``triton`` >= 3.6 (see :mod:`course_lib.kernels.flash`). Without a GPU the kernel runs on the CPU under
Triton's interpreter when the environment variable ``TRITON_INTERPRET=1`` is set *before* ``triton`` is imported:
slow, but exact enough to test against.
"""

from __future__ import annotations

import contextlib
import math
import os

import torch
import triton
import triton.language as tl
from torch import Tensor

from ..validate import flag, tensor
from .flash import (
    BUILT_FOR_INTERPRETER,
    INTERPRETER_CONFIG,
    flash_attention_fwd,
    flash_attention_fwd_tuned,
)

__all__ = [
    "SUPPORTED_HEAD_DIMS",
    "attention_reference",
    "best_config",
    "built_for_interpreter",
    "flash_attention",
    "interpreter_active",
    "tma_supported",
]

SUPPORTED_HEAD_DIMS = (64, 128)
_SUPPORTED_DTYPES = (torch.float16, torch.bfloat16)
_LOG2_E = 1.4426950408889634  # log2(e): exp(x) == exp2(x * log2(e))


# ----------------------------------------------------------------------------------------------------------------
# The reference: what the kernel is *defined* to compute.
# ----------------------------------------------------------------------------------------------------------------


def attention_reference(q: Tensor, k: Tensor, v: Tensor, causal: bool = False) -> Tensor:
    """softmax(Q Kᵀ / √D) V in float32, the plain way (builds the whole (N, N) score matrix).

    ``flash_attention(q, k, v, causal)`` equals ``attention_reference(q, k, v, causal).to(q.dtype)`` up to
    float16 / bfloat16 rounding. Inputs (..., N, D); returns float32 (..., N, D). With ``causal=True``
    query ``i`` attends to keys ``0..i`` only.
    """
    q, k, v = q.float(), k.float(), v.float()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., N, N)
    if causal:
        n_q, n_k = scores.shape[-2], scores.shape[-1]
        future = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device).triu(1)  # True above the diagonal
        scores = scores.masked_fill(future, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


# ----------------------------------------------------------------------------------------------------------------
# The Python entry point.
# ----------------------------------------------------------------------------------------------------------------


def interpreter_active() -> bool:
    """True when Triton runs kernels on the CPU through its interpreter (``TRITON_INTERPRET=1``)."""
    return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")


def built_for_interpreter() -> bool:
    """True if this module's kernels were created under ``TRITON_INTERPRET=1`` (they then run on the CPU)."""
    return BUILT_FOR_INTERPRETER


def _check_inputs(q: object, k: object, v: object, causal: object) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        tensor(name, t)
    flag("causal", causal)
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dtype not in _SUPPORTED_DTYPES:
            raise TypeError(
                f"flash_attention supports float16 and bfloat16 only; {name} has dtype {t.dtype} "
                "(cast with .to(torch.bfloat16), or use attention_reference for float32)"
            )
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"q, k and v must have the same dtype, got {q.dtype}, {k.dtype} and {v.dtype}")
    for name, t in (("q", q), ("k", k), ("v", v)):
        tensor(name, t, shape=(None, None, None, None), layout="(B, H, N, D)")
    if not (q.shape == k.shape == v.shape):
        raise ValueError(
            "q, k and v must have the same shape (B, H, N, D) (self-attention), got "
            f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
        )
    B, H, N, D = q.shape
    if D not in SUPPORTED_HEAD_DIMS:
        raise ValueError(
            f"head dimension D = {D} is not supported; the kernel is compiled for D in {SUPPORTED_HEAD_DIMS}"
        )
    if B == 0 or H == 0 or N == 0:
        raise ValueError(f"q, k and v must be non-empty, got shape {tuple(q.shape)}")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous (B, H, N, D); call .contiguous() on it first")
    if not (q.device == k.device == v.device):
        raise ValueError(f"q, k and v must be on the same device, got {q.device}, {k.device} and {v.device}")
    if q.device.type != "cuda" and not interpreter_active():
        raise ValueError(
            f"flash_attention runs on a CUDA GPU; the inputs are on {q.device}. "
            "(To run it on the CPU for testing, set TRITON_INTERPRET=1 before importing triton.)"
        )
    if q.device.type == "cuda":
        _check_capability(q.device)


MIN_CAPABILITY = (8, 0)  # Triton supports NVIDIA GPUs from Ampere (sm_80) on; bf16 tensor cores start there too


def _check_capability(device: torch.device | str) -> None:
    """Raise a clear ValueError on a CUDA GPU older than :data:`MIN_CAPABILITY` (e.g. a T4, 7.5), where the kernel
    would otherwise fail inside Triton's compiler with an obscure message."""
    capability = tuple(torch.cuda.get_device_capability(device))
    if capability < MIN_CAPABILITY:
        raise ValueError(
            f"flash_attention needs a CUDA GPU of compute capability {MIN_CAPABILITY[0]}.{MIN_CAPABILITY[1]} or newer "
            f"(Ampere, Ada, Hopper, ...); {device} has {capability[0]}.{capability[1]}. "
            "Use torch.nn.functional.scaled_dot_product_attention there."
        )


_allocator_installed = False


def _install_tma_allocator() -> None:
    """Device-side TMA descriptors need a little global scratch memory; Triton asks PyTorch for it."""
    global _allocator_installed
    if not _allocator_installed:
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
        _allocator_installed = True


def tma_supported(device: torch.device | str = "cuda") -> bool:
    """True on a CUDA GPU with TMA (compute capability 9.0+, i.e. Hopper or newer), outside the interpreter."""
    if interpreter_active() or not torch.cuda.is_available():
        return False
    return torch.cuda.get_device_capability(device)[0] >= 9 and hasattr(tl, "make_tensor_descriptor")


def flash_attention(
    q: Tensor, k: Tensor, v: Tensor, causal: bool = False, *, use_tma: bool | None = None, config: dict | None = None
) -> Tensor:
    """Fused attention forward: ``softmax(q kᵀ / √D) v``, optionally causal, without materialising the scores.

    Args:
        q, k, v: ``(B, H, N, D)`` contiguous CUDA tensors, all float16 or all bfloat16, ``D`` in {64, 128}.
        causal: if True, query ``i`` attends to keys ``0..i`` only.
        use_tma: load tiles through Hopper's TMA unit (default: False; see ``python -m course_lib.kernels.bench``).
            Under the interpreter the same descriptor code runs on the CPU, so it can be tested without a GPU.
        config: fix ``{"BLOCK_M", "BLOCK_N", "num_warps", "num_stages"}`` instead of autotuning
            (``BLOCK_M`` must be a multiple of ``BLOCK_N``), optionally with the kernel's switches
            ``WARP_SPECIALIZE`` and ``LONGEST_FIRST`` (booleans; see :mod:`course_lib.kernels.flash`, trick 7).

    Returns:
        ``(B, H, N, D)`` tensor of the input dtype, equal to ``attention_reference(q, k, v, causal)`` up to
        fp16/bf16 rounding.
    """
    _check_inputs(q, k, v, causal)
    B, H, N, D = q.shape
    interpreting = interpreter_active()
    if interpreting != BUILT_FOR_INTERPRETER:
        raise RuntimeError(
            f"TRITON_INTERPRET is {'set' if interpreting else 'unset'} now but was "
            f"{'set' if BUILT_FOR_INTERPRETER else 'unset'} when course_lib.kernels was imported; set it before "
            "the first import (or reload course_lib.kernels.flash, then course_lib.kernels.launch)"
        )
    use_tma = bool(use_tma)
    if use_tma and not interpreting:
        # (The interpreter emulates tensor descriptors on the CPU, so there the TMA path can be tested anywhere.)
        if not tma_supported(q.device):
            raise ValueError("use_tma=True needs a CUDA GPU of compute capability 9.0 or newer (Hopper)")
        _install_tma_allocator()
    if config is not None and config.get("WARP_SPECIALIZE") and q.device.type == "cuda":
        if torch.cuda.get_device_capability(q.device)[0] < 9:  # Triton splits warps with Hopper's async barriers
            raise ValueError("WARP_SPECIALIZE=True needs a CUDA GPU of compute capability 9.0 or newer (Hopper)")
    if interpreting and config is None:
        config = INTERPRETER_CONFIG
    if config is not None:
        _check_config(config)

    out = torch.empty_like(q)
    qk_scale = _LOG2_E / math.sqrt(D)  # trick 2: softmax in base 2, 1/√D and log2(e) in one factor
    args = (q, k, v, out, qk_scale, N)
    upcast = interpreting and q.dtype == torch.bfloat16
    meta = {"HEAD_DIM": D, "CAUSAL": bool(causal), "USE_TMA": use_tma, "UPCAST_DOTS": upcast}

    def grid(meta):
        return (triton.cdiv(N, meta["BLOCK_M"]), B * H)

    with torch.cuda.device(q.device) if q.device.type == "cuda" else contextlib.nullcontext():
        if config is None:
            flash_attention_fwd_tuned[grid](*args, **meta)
        else:
            launch = {**meta, **config}
            flash_attention_fwd[grid](*args, **launch)
    return out


CONFIG_KEYS = ("BLOCK_M", "BLOCK_N", "num_warps", "num_stages")
SWITCHES = ("WARP_SPECIALIZE", "LONGEST_FIRST")  # the kernel's switches for measuring (flash.py, trick 7)


def _check_config(config: dict) -> None:
    missing = [key for key in CONFIG_KEYS if key not in config]
    unknown = [key for key in config if key not in CONFIG_KEYS + SWITCHES]
    if missing or unknown:
        raise ValueError(
            f"config needs exactly the keys {CONFIG_KEYS} and optionally the switches {SWITCHES}; "
            f"missing {missing}, unknown {unknown}"
        )
    if config["BLOCK_M"] % config["BLOCK_N"] != 0:
        raise ValueError(f"BLOCK_M must be a multiple of BLOCK_N, got {config}")
    for switch in SWITCHES:
        if switch in config:
            flag(switch, config[switch])


def best_config(q: Tensor, causal: bool = False, use_tma: bool = False) -> dict | None:
    """The configuration the autotuner picked for inputs shaped like ``q`` (after a first call), or None."""
    B, H, N, D = q.shape
    cache = getattr(flash_attention_fwd_tuned, "cache", {})
    for key, cfg in cache.items():
        if key[:4] == (N, D, bool(causal), bool(use_tma)):
            return {**cfg.kwargs, "num_warps": cfg.num_warps, "num_stages": cfg.num_stages}
    return None
