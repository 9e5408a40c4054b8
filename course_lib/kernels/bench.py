"""Benchmark ``course_lib.kernels.flash_attention`` against ``torch.nn.functional.scaled_dot_product_attention``.

    python -m course_lib.kernels.bench                     # the course table: N = 1k … 16k, causal and not
    python -m course_lib.kernels.bench --csv results.csv   # also write the rows as CSV
    python -m course_lib.kernels.bench --explore           # time many tile configs one by one (tuning aid)

Every row keeps the total number of tokens B·H·N fixed (2^20 by default, H = 16), so each row moves the same
amount of Q/K/V data and only the sequence length changes. Before anything is timed, the kernel's output is checked
against SDPA and against the float32 reference (on as many heads as fit in memory): relative error ≤ 1e-2.
FLOPs are counted as 4·B·H·N²·D (two N×N×D matmuls, 2 FLOPs per multiply-add) and half of that when causal.
Times are medians of ``triton.testing.do_bench``. Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import csv
import sys

import torch
import torch.nn.functional as F

from .measure import TOLERANCE, attention_flops, check_correctness, inputs, tflops

__all__ = ["TOLERANCE", "bench_row", "describe_device", "format_table", "main", "write_csv"]

_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def bench_row(N, tokens, heads, D, dtype, causal, use_tma, warmup, rep) -> dict:
    import triton

    from .launch import best_config, flash_attention

    B = max(1, tokens // (N * heads))
    q, k, v = inputs(B, heads, N, D, dtype, seed=N)
    out = flash_attention(q, k, v, causal, use_tma=use_tma)  # first call: autotunes for this (N, D, causal)
    sdpa_out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    err_ref, err_sdpa = check_correctness(q, k, v, causal, out, sdpa_out)
    del out, sdpa_out

    ours_ms = triton.testing.do_bench(
        lambda: flash_attention(q, k, v, causal, use_tma=use_tma), warmup=warmup, rep=rep, return_mode="median"
    )
    sdpa_ms = triton.testing.do_bench(
        lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), warmup=warmup, rep=rep, return_mode="median"
    )
    flops = attention_flops(B, heads, N, D, causal)
    cfg = best_config(q, causal, use_tma) or {}
    return {
        "N": N,
        "B": B,
        "H": heads,
        "D": D,
        "causal": causal,
        "tma": use_tma,
        "ours_ms": ours_ms,
        "ours_tflops": tflops(flops, ours_ms),
        "sdpa_ms": sdpa_ms,
        "sdpa_tflops": tflops(flops, sdpa_ms),
        "speed_vs_sdpa": sdpa_ms / ours_ms,
        "err_ref": err_ref,
        "err_sdpa": err_sdpa,
        "config": "BM{BLOCK_M} BN{BLOCK_N} w{num_warps} s{num_stages}".format(**cfg) if cfg else "",
    }


def format_table(rows: list[dict]) -> str:
    """Markdown table of bench_row results. "speed vs SDPA" is SDPA's time divided by ours: above 1, ours is faster."""
    lines = [
        "| N | B×H | causal | ours ms | ours TFLOP/s | SDPA ms | SDPA TFLOP/s | speed vs SDPA | config |",
        "|---:|---:|:---:|---:|---:|---:|---:|---:|:---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['N']} | {r['B']}×{r['H']} | {'yes' if r['causal'] else 'no'} | {r['ours_ms']:.3f} | "
            f"{r['ours_tflops']:.0f} | {r['sdpa_ms']:.3f} | {r['sdpa_tflops']:.0f} | {r['speed_vs_sdpa']:.2f}× | "
            f"{r['config']}{' TMA' if r['tma'] else ''} |"
        )
    return "\n".join(lines)


def describe_device() -> str:
    import triton

    props = torch.cuda.get_device_properties(0)
    return (
        f"device: {torch.cuda.get_device_name(0)} ({props.multi_processor_count} SMs, compute capability "
        f"{props.major}.{props.minor}) | torch {torch.__version__} | triton {triton.__version__}"
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.kernels.bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--ns",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[1024, 2048, 4096, 8192, 16384],
        help="comma-separated sequence lengths (default 1024,2048,4096,8192,16384)",
    )
    parser.add_argument("--tokens", type=int, default=1 << 20, help="B·H·N kept fixed across rows (default 2^20)")
    parser.add_argument("--heads", type=int, default=16, help="H; B = tokens / (N·H) (default 16)")
    parser.add_argument("--head-dim", type=int, default=64, choices=[64, 128])
    parser.add_argument("--dtype", choices=sorted(_DTYPES), default="bf16")
    parser.add_argument("--causal", choices=["both", "yes", "no"], default="both")
    parser.add_argument("--tma", action="store_true", help="load tiles through Hopper TMA descriptors")
    parser.add_argument("--warmup", type=int, default=25, help="do_bench warm-up time, ms")
    parser.add_argument("--rep", type=int, default=100, help="do_bench measuring time, ms")
    parser.add_argument("--csv", metavar="PATH", help="also write the table as CSV to PATH")
    parser.add_argument(
        "--explore",
        action="store_true",
        help="instead of the table, time every autotune config alone (with and without TMA)",
    )
    parser.add_argument("--sdpa-backends", action="store_true", help="also time each SDPA backend separately")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)

    if not torch.cuda.is_available():
        print(
            "python -m course_lib.kernels.bench needs a CUDA GPU (the Triton interpreter is far too slow to time).",
            file=sys.stderr,
        )
        return 2
    import triton  # noqa: F401  (fail here, clearly, if it is missing)

    dtype = _DTYPES[args.dtype]
    causals = {"both": [False, True], "yes": [True], "no": [False]}[args.causal]
    print(describe_device(), flush=True)
    print(
        f"dtype {args.dtype}, D = {args.head_dim}, B·H·N = {args.tokens}, H = {args.heads}; "
        f"FLOPs = 4·B·H·N²·D (÷2 causal); do_bench median",
        flush=True,
    )

    from .tuning import explore, sdpa_backends  # tuning aids, in a module of their own

    if args.sdpa_backends:
        for N in args.ns:
            for causal in causals:
                sdpa_backends(N, args.tokens, args.heads, args.head_dim, dtype, causal, args.warmup, args.rep)

    if args.explore:
        from .launch import tma_supported

        tma_options = [False, True] if tma_supported() else [False]
        rows = []
        for N in args.ns:
            for causal in causals:
                rows += explore(
                    N, args.tokens, args.heads, args.head_dim, dtype, causal, args.warmup, args.rep, tma_options
                )
        if args.csv:
            write_csv(args.csv, rows)
        return 0

    rows = [_table_row(args, N, dtype, causal) for N in args.ns for causal in causals]
    print()
    print(format_table(rows))
    if args.csv:
        write_csv(args.csv, rows)
    return 0


def _table_row(args: argparse.Namespace, N: int, dtype: torch.dtype, causal: bool) -> dict:
    row = bench_row(N, args.tokens, args.heads, args.head_dim, dtype, causal, args.tma, args.warmup, args.rep)
    print(
        f"  N={N:6d} causal={causal!s:5} ours {row['ours_ms']:.3f} ms {row['ours_tflops']:.0f} TFLOP/s | "
        f"SDPA {row['sdpa_ms']:.3f} ms {row['sdpa_tflops']:.0f} TFLOP/s | {row['speed_vs_sdpa']:.2f}x | "
        f"err {row['err_ref']:.1e} (ref) {row['err_sdpa']:.1e} (SDPA) | {row['config']}",
        flush=True,
    )
    return row


def write_csv(path: str, rows: list[dict]) -> None:
    """Write ``rows`` (dicts with the same keys) to ``path`` as CSV, a header first; nothing when there are none."""
    if not rows:
        return
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
