"""Tuning aids of ``python -m course_lib.kernels.bench``: every autotune configuration timed alone (``--explore``),
and each of PyTorch's SDPA backends timed alone (``--sdpa-backends``). Needs a CUDA GPU."""

from __future__ import annotations

import torch.nn.functional as F

from .measure import TOLERANCE, attention_flops, inputs, rel_error, tflops

__all__ = ["EXPLORE_CONFIGS", "explore", "sdpa_backends"]

# A wider net than the autotuner's list (course_lib.kernels.flash.CONFIGS), for --explore:
# (BLOCK_M, BLOCK_N, warps, stages).
EXPLORE_CONFIGS = [(bm, bn, w, s) for bm, bn in [(128, 64), (128, 128)] for w in (4, 8) for s in (2, 3, 4)] + [
    (64, 64, 4, 3),
    (64, 32, 4, 3),
]


def explore(N, tokens, heads, D, dtype, causal, warmup, rep, tma_options) -> list[dict]:
    """Time each config of EXPLORE_CONFIGS (and TMA on/off) separately at one shape."""
    import triton

    from .launch import flash_attention

    B = max(1, tokens // (N * heads))
    q, k, v = inputs(B, heads, N, D, dtype, seed=N)
    sdpa_out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    sdpa_ms = triton.testing.do_bench(
        lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), warmup=warmup, rep=rep, return_mode="median"
    )
    flops = attention_flops(B, heads, N, D, causal)
    rows = []
    for use_tma in tma_options:
        for bm, bn, w, s in EXPLORE_CONFIGS:
            config = {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": w, "num_stages": s}
            name = "BM{BLOCK_M} BN{BLOCK_N} w{num_warps} s{num_stages}".format(**config)
            try:
                out = flash_attention(q, k, v, causal, use_tma=use_tma, config=config)
                err = rel_error(out, sdpa_out)
                if not err <= TOLERANCE:  # a fast wrong answer is no candidate (and `not <=` also catches NaN)
                    print(f"  N={N} causal={causal} tma={use_tma} {name}: WRONG, error {err:.1e} vs SDPA")
                    continue
                ms = triton.testing.do_bench(
                    lambda config=config, use_tma=use_tma: flash_attention(
                        q, k, v, causal, use_tma=use_tma, config=config
                    ),
                    warmup=warmup,
                    rep=rep,
                    return_mode="median",
                )
            except Exception as exc:  # noqa: BLE001 - report a config that fails to compile (e.g. out of SRAM)
                print(f"  N={N} causal={causal} tma={use_tma} {name}: failed: {type(exc).__name__}: {exc}"[:300])
                continue
            row = {
                "N": N,
                "causal": causal,
                "tma": use_tma,
                "config": name,
                "ms": ms,
                "tflops": tflops(flops, ms),
                "speed_vs_sdpa": sdpa_ms / ms,
                "err_sdpa": err,
            }
            print(
                f"  N={N:6d} causal={causal!s:5} tma={use_tma!s:5} {name:22s} {ms:8.3f} ms "
                f"{row['tflops']:6.1f} TFLOP/s  {row['speed_vs_sdpa']:.3f}x SDPA ({sdpa_ms:.3f} ms)  err {err:.1e}",
                flush=True,
            )
            rows.append(row)
    return rows


def sdpa_backends(N, tokens, heads, D, dtype, causal, warmup, rep) -> None:
    """Which of PyTorch's SDPA backends is the default one fast as? (Prints one line per available backend.)"""
    import triton
    from torch.nn.attention import SDPBackend, sdpa_kernel

    B = max(1, tokens // (N * heads))
    q, k, v = inputs(B, heads, N, D, dtype, seed=N)
    flops = attention_flops(B, heads, N, D, causal)
    for name in ("FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION"):
        backend = getattr(SDPBackend, name, None)
        if backend is None:
            continue
        try:
            with sdpa_kernel([backend]):
                ms = triton.testing.do_bench(
                    lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                    warmup=warmup,
                    rep=rep,
                    return_mode="median",
                )
            print(f"  SDPA {name:20s} N={N} causal={causal}: {ms:.3f} ms  {tflops(flops, ms):6.1f} TFLOP/s")
        except RuntimeError as exc:
            print(f"  SDPA {name:20s} unavailable: {str(exc).splitlines()[0][:120]}")
