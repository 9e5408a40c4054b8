"""What each technique buys: the kernel timed with one technique changed at a time (issue 33). Needs a CUDA GPU.

    python -m course_lib.kernels.ablation                        # D = 64 and 128, causal and not, N = 2k and 8k
    python -m course_lib.kernels.ablation --csv docs/results/h100_DATE_ablation.csv

The **baseline** is the teaching kernel as the course launches it (pointer loads, the software pipeline of
``num_stages``, causal tiles longest first), each variant changes one thing:

========================  =========================================================================================
variant                   what changes
========================  =========================================================================================
``TMA loads``             tiles move through Hopper's Tensor Memory Accelerator (``use_tma=True``)
``warp specialization``   the unmasked loop asks for producer and consumer warps (``WARP_SPECIALIZE=True``)
``TMA + warp spec.``      both (warp specialization is meant to pair with asynchronous TMA copies)
``no pipelining``         ``num_stages=1``: no K/V tile is fetched ahead (what the pipeline buys, read backwards)
``shortest first``        causal only: ``LONGEST_FIRST=False`` (what launching the long tiles first buys)
``autotuned``             the default call, ``flash_attention(q, k, v, causal)``: the autotuner's pick from its list
========================  =========================================================================================

Every variant but ``autotuned`` is timed with each tile configuration of ``CANDIDATES[D]`` (tile shapes per head
dimension, from the H100 sweep of 2026-11-27) and keeps its best, so no technique is judged on tiles chosen for
another. Each output is checked against SDPA (relative error ≤ 1e-2) before it is timed; a variant that fails to
compile or is wrong is reported and left out. Columns: ``vs_baseline`` = baseline time / variant time (above 1 the
change helps), ``speed_vs_sdpa`` = SDPA time / variant time.
"""

from __future__ import annotations

import argparse
import sys

import torch

__all__ = ["CANDIDATES", "VARIANTS", "main", "variants_for"]

# (BLOCK_M, BLOCK_N, num_warps, num_stages): the best three of each head dimension in the H100 sweep of 2026-11-27
# (docs/results/h100_2026-11-27_*.csv); BLOCK_M = 128 with 4 warps spills registers at D = 128.
CANDIDATES = {
    64: [(128, 64, 4, 3), (128, 128, 8, 3), (64, 64, 4, 3)],
    128: [(64, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 2)],
}
# name: (use_tma, extra config keys, num_stages override, causal only)
VARIANTS = {
    "baseline": (False, {}, None, False),
    "TMA loads": (True, {}, None, False),
    "warp specialization": (False, {"WARP_SPECIALIZE": True}, None, False),
    "TMA + warp spec.": (True, {"WARP_SPECIALIZE": True}, None, False),
    "no pipelining": (False, {}, 1, False),
    "shortest first": (False, {"LONGEST_FIRST": False}, None, True),
}


def variants_for(causal: bool) -> list[str]:
    """The variants that mean something for this mask (the tile order matters only under a causal mask)."""
    return [name for name, (*_, causal_only) in VARIANTS.items() if causal or not causal_only]


def _config(tile: tuple[int, int, int, int], variant: str) -> tuple[bool, dict]:
    use_tma, switches, stages, _ = VARIANTS[variant]
    bm, bn, w, s = tile
    return use_tma, {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": w, "num_stages": stages or s, **switches}


def _time(fn, warmup: int, rep: int) -> float:
    import triton

    return triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median")


def _best(q, k, v, causal, variant, sdpa_out, warmup, rep) -> tuple[float, str] | None:
    """(best median ms, its tile) of ``variant`` over CANDIDATES; None when no tile compiles and is right."""
    from .launch import flash_attention
    from .measure import TOLERANCE, rel_error

    best = None
    for tile in CANDIDATES[q.shape[-1]]:
        use_tma, config = _config(tile, variant)
        name = "BM{} BN{} w{} s{}".format(*tile[:3], config["num_stages"])
        try:
            out = flash_attention(q, k, v, causal, use_tma=use_tma, config=config)
            err = rel_error(out, sdpa_out)
            if not err <= TOLERANCE:  # `not <=` also catches NaN
                print(f"    {variant} {name}: WRONG, error {err:.1e} vs SDPA", flush=True)
                continue
            ms = _time(lambda c=config, t=use_tma: flash_attention(q, k, v, causal, use_tma=t, config=c), warmup, rep)
        except Exception as exc:  # noqa: BLE001 - a technique this Triton or GPU cannot compile is a result too
            print(f"    {variant} {name}: failed: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}", flush=True)
            continue
        if best is None or ms < best[0]:
            best = (ms, name)
    return best


def ablate(N: int, D: int, causal: bool, tokens: int, heads: int, warmup: int, rep: int) -> list[dict]:
    """One row per variant at one shape (bf16, B = tokens / (N · heads))."""
    import torch.nn.functional as F

    from .launch import best_config, flash_attention
    from .measure import attention_flops, check_correctness, inputs, tflops

    B = max(1, tokens // (N * heads))
    q, k, v = inputs(B, heads, N, D, torch.bfloat16, seed=N)
    sdpa_out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    sdpa_ms = _time(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), warmup, rep)
    check_correctness(q, k, v, causal, flash_attention(q, k, v, causal), sdpa_out)  # also autotunes the default
    auto = best_config(q, causal) or {}
    auto_tile = "BM{BLOCK_M} BN{BLOCK_N} w{num_warps} s{num_stages}".format(**auto) if auto else ""
    timed = {"autotuned": (_time(lambda: flash_attention(q, k, v, causal), warmup, rep), auto_tile)}
    for variant in variants_for(causal):
        found = _best(q, k, v, causal, variant, sdpa_out, warmup, rep)
        if found is not None:
            timed[variant] = found
    flops = attention_flops(B, heads, N, D, causal)
    base_ms = timed["baseline"][0] if "baseline" in timed else float("nan")
    rows = []
    for variant, (ms, tile) in timed.items():
        row = {"D": D, "causal": causal, "N": N, "B": B, "H": heads, "variant": variant, "config": tile, "ms": ms,
               "tflops": tflops(flops, ms), "vs_baseline": base_ms / ms, "speed_vs_sdpa": sdpa_ms / ms,
               "sdpa_ms": sdpa_ms}  # fmt: skip
        print(
            f"  D={D} causal={causal!s:5} N={N:6d} {variant:20s} {ms:8.3f} ms {row['tflops']:6.1f} TFLOP/s "
            f"{row['vs_baseline']:5.2f}x baseline {row['speed_vs_sdpa']:5.2f}x SDPA  {tile}",
            flush=True,
        )
        rows.append(row)
    return rows


def format_table(rows: list[dict]) -> str:
    """Markdown: one line per shape and variant, what it bought against the baseline and where it stands to SDPA."""
    lines = [
        "| D | causal | N | variant | TFLOP/s | vs baseline | vs SDPA | tiles |",
        "|---:|:---:|---:|:---|---:|---:|---:|:---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['D']} | {'yes' if r['causal'] else 'no'} | {r['N']} | {r['variant']} | {r['tflops']:.0f} | "
            f"{r['vs_baseline']:.2f}× | {r['speed_vs_sdpa']:.2f}× | {r['config']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.kernels.ablation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ns", type=lambda s: [int(x) for x in s.split(",")], default=[2048, 8192])
    parser.add_argument("--head-dims", type=lambda s: [int(x) for x in s.split(",")], default=[64, 128])
    parser.add_argument("--tokens", type=int, default=1 << 20, help="B·H·N kept fixed (default 2^20)")
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--warmup", type=int, default=10, help="do_bench warm-up, ms")
    parser.add_argument("--rep", type=int, default=50, help="do_bench measuring time, ms")
    parser.add_argument("--csv", metavar="PATH", help="also write the rows as CSV")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("python -m course_lib.kernels.ablation needs a CUDA GPU (timing under the interpreter means nothing)",
              file=sys.stderr)  # fmt: skip
        return 2
    from .bench import describe_device, write_csv

    print(describe_device(), flush=True)
    rows = [row for D in args.head_dims for causal in (False, True) for N in args.ns
            for row in ablate(N, D, causal, args.tokens, args.heads, args.warmup, args.rep)]  # fmt: skip
    print()
    print(format_table(rows))
    if args.csv:
        write_csv(args.csv, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
