"""What the kernel's benchmark and its tuning aids measure with: inputs, the correctness check, FLOPs, TFLOP/s.

The low module of :mod:`course_lib.kernels`' measurements: :mod:`~course_lib.kernels.bench` and
:mod:`~course_lib.kernels.tuning` both import it, and neither imports the other's internals.
"""

from __future__ import annotations

import torch

__all__ = ["TOLERANCE", "attention_flops", "check_correctness", "inputs", "rel_error", "tflops"]

TOLERANCE = 1e-2


def attention_flops(B: int, H: int, N: int, D: int, causal: bool) -> float:
    """FLOPs of one attention forward: Q Kᵀ and P V are each 2·N·N·D per head; causal does half the pairs."""
    flops = 4 * B * H * N * N * D
    return flops // 2 if causal else flops


def tflops(flops: float, ms: float) -> float:
    """Throughput in TFLOP/s of `flops` done in `ms` milliseconds."""
    return flops / (ms * 1e-3) / 1e12


def rel_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """‖out − ref‖ / ‖ref‖ over all entries, in float32."""
    return ((out.float() - ref.float()).norm() / ref.float().norm()).item()


def inputs(B: int, H: int, N: int, D: int, dtype: torch.dtype, seed: int = 0) -> list[torch.Tensor]:
    """q, k, v of shape (B, H, N, D) on the GPU, standard normal, drawn from ``seed``."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    return [torch.randn(B, H, N, D, device="cuda", dtype=dtype, generator=g) for _ in range(3)]


def check_correctness(q, k, v, causal, out, sdpa_out) -> tuple[float, float]:
    """(error vs the float32 reference on the first heads, error vs SDPA); raises if either exceeds 1e-2."""
    from .launch import attention_reference  # imports triton

    B, H, N, D = q.shape
    heads = max(1, min(B * H, (1 << 27) // (N * N)))  # keep the N×N float32 score matrices ≤ 512 MiB
    flat = [t.reshape(B * H, N, D)[:heads] for t in (q, k, v)]
    err_ref = rel_error(out.reshape(B * H, N, D)[:heads], attention_reference(*flat, causal=causal))
    err_sdpa = rel_error(out, sdpa_out)
    if not (err_ref <= TOLERANCE and err_sdpa <= TOLERANCE):
        raise AssertionError(
            f"flash_attention is wrong at B={B} H={H} N={N} D={D} causal={causal}: relative error "
            f"{err_ref:.2e} vs the float32 reference, {err_sdpa:.2e} vs SDPA (allowed {TOLERANCE:.0e})"
        )
    return err_ref, err_sdpa
