"""``python -m course_lib.bench``: measure, print the table and the targets, save a CSV file and a figure."""

from __future__ import annotations

import argparse
import importlib.util
import time

import torch

from . import __doc__ as PACKAGE_DOC
from .methods import ALL_METHODS, DEFAULT_LENGTHS, DEFAULT_METHODS, DTYPES, GPU_METHODS, BenchRow, clock
from .report import check_targets, describe_machine, format_table, plot_results, save_csv
from .runner import run_benchmark


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.bench",
        description="Time and peak memory of attention implementations against sequence length.",
        epilog=PACKAGE_DOC,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--device", choices=("cpu", "cuda", "all"), default="all",
                        help="all (default) = the CPU, and CUDA when present")  # fmt: skip
    parser.add_argument("--lengths", type=int, nargs="+", help="sequence lengths (default: 512 ... 16384 on CPU)")
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=(*ALL_METHODS, *GPU_METHODS),
        help="default: every default method, and on CUDA also the Triton kernel when triton is installed",
    )
    parser.add_argument("--dtype", choices=tuple(DTYPES), help="default float32 on CPU, bfloat16 on CUDA")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--heads", type=int, default=1)
    parser.add_argument("--dim", type=int, default=64, help="head width D (default 64)")
    parser.add_argument("--window", type=int, default=128, help="W of masked and sliding (default 128)")
    parser.add_argument("--chunk-size", type=int, default=128, help="C of chunked (default 128)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--time-budget",
        type=float,
        default=3.0,
        help="seconds of timed calls per configuration (default 3); slower calls are not repeated",
    )
    parser.add_argument("--max-quadratic-n", type=int, default=16384)
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory measurements")
    parser.add_argument("--threads", type=int, help="torch.set_num_threads (default: torch's choice)")
    parser.add_argument("--csv", help="write the rows to this CSV file")
    parser.add_argument("--plot", help="save a PNG figure of time and memory against N")
    parser.add_argument("--no-progress", action="store_true")
    return parser


def _default_methods(device: str, args: argparse.Namespace) -> list[str]:
    """DEFAULT_METHODS, and on CUDA the Triton kernel too (its time target there) where it runs: triton installed,
    bfloat16 or float16 (the default on CUDA), D = 64 or 128."""
    methods = list(DEFAULT_METHODS)
    half = args.dtype in (None, "bfloat16", "float16")
    if device == "cuda" and half and args.dim in (64, 128) and importlib.util.find_spec("triton") is not None:
        methods.append("kernel")
    return methods


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)

    if args.threads:
        torch.set_num_threads(args.threads)
    devices = ["cpu", "cuda"] if args.device == "all" else [args.device]
    if "cuda" in devices and not torch.cuda.is_available():
        if args.device == "cuda":
            parser.error("--device cuda: CUDA is not available here")
        devices.remove("cuda")

    rows: list[BenchRow] = []
    start = time.perf_counter()
    for device in devices:
        print(f"{device}: {describe_machine(device)}", flush=True)
        rows += run_benchmark(
            args.lengths or DEFAULT_LENGTHS[device],
            args.methods or _default_methods(device, args),
            device=device,
            dtype=DTYPES[args.dtype] if args.dtype else None,
            batch=args.batch,
            heads=args.heads,
            dim=args.dim,
            window=args.window,
            chunk_size=args.chunk_size,
            repeats=args.repeats,
            time_budget_s=args.time_budget,
            max_quadratic_n=args.max_quadratic_n,
            measure_memory=not args.no_memory,
            progress=not args.no_progress,
        )
    print(
        f"\nB={args.batch} H={args.heads} D={args.dim} window={args.window} chunk={args.chunk_size}; "
        f"time = median of up to {args.repeats} interleaved calls (on a CPU: {_clock_words()}); "
        "peak = extra memory of one call"
    )
    print(format_table(rows))
    for device in devices:
        for t in check_targets(rows, device):
            verdict = "PASS" if t["passed"] else "FAIL"
            print(
                f"target [{device}] {t['target']} at N={t['n']}: {t['measured']:.3f} (limit {t['limit']:.3f}) {verdict}"
            )
    print(f"total {time.perf_counter() - start:.0f} s")
    if args.csv:
        save_csv(rows, args.csv)
        print(f"wrote {args.csv}")
    if args.plot:
        fig = plot_results(rows, title=f"attention, B={args.batch} H={args.heads} D={args.dim}")
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")
    return 0


def _clock_words() -> str:
    """What the times count (:func:`course_lib.bench.methods.clock`): the one thread's CPU time, or the wall clock."""
    return "the thread's CPU time" if clock(torch.device("cpu")) is time.thread_time else "wall clock"
