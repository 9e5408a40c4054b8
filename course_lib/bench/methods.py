"""What the benchmark measures: the methods by name, their inputs, one timed call, and the row of results."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from ..attention import scaled_dot_product_attention
from ..efficient import chunked_attention, sliding_window_attention
from ..linear import linear_attention
from ..masks import window_mask

DEFAULT_METHODS = ("naive", "masked", "sliding", "chunked", "linear", "sdpa")
ALL_METHODS = (*DEFAULT_METHODS, "sdpa_math")
# The course's Triton kernel (course_lib.kernels.flash_attention): CUDA only, bfloat16/float16, D = 64 or 128. The
# command line adds it on CUDA when Triton is installed.
GPU_METHODS = ("kernel",)
QUADRATIC = ("naive", "masked", "sdpa_math")  # methods that hold an N x N matrix: skipped above max_quadratic_n
DEFAULT_LENGTHS = {"cpu": (512, 1024, 2048, 4096, 8192, 16384), "cuda": (1024, 2048, 4096, 8192, 16384)}
DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}
REFERENCE = {"naive": "sdpa", "chunked": "sdpa", "kernel": "sdpa", "sdpa_math": "sdpa"}
REFERENCE |= {"sliding": "masked", "masked": "sliding"}
MIB = 2**20


@dataclass
class BenchRow:
    """One measured configuration: the median and the fastest (``best_ms``, least disturbed by other programs) of
    the timed calls, and the peak extra memory. Fields are None when not measured (see ``status``)."""

    device: str
    dtype: str
    method: str
    n: int
    time_ms: float | None = None
    best_ms: float | None = None
    peak_mib: float | None = None
    repeats: int = 0
    err: float | None = None
    status: str = "ok"


def check_method(name: str) -> None:
    if name not in (*ALL_METHODS, *GPU_METHODS):
        raise ValueError(f"unknown method {name!r}; expected one of {', '.join((*ALL_METHODS, *GPU_METHODS))}")


def _sdpa_math(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(q, k, v)


def make_method(
    name: str, n: int, *, window: int, chunk_size: int, device
) -> Callable[[Tensor, Tensor, Tensor], Tensor]:
    """The callable ``fn(q, k, v)`` that the benchmark measures as ``name`` at length ``n``.

    ``masked`` builds its ``(N, N)`` band mask ``window_mask(N, W)`` here, once: it is an input of the measured
    call, like a mask cached by a model, so the call's memory is that of attending through a full masked score
    matrix.
    """
    check_method(name)
    if name == "naive":
        return lambda q, k, v: scaled_dot_product_attention(q, k, v)
    if name == "masked":
        mask = window_mask(n, window, device=device)  # (N, N): |i - j| <= W
        return lambda q, k, v: scaled_dot_product_attention(q, k, v, mask)
    if name == "sliding":
        return lambda q, k, v: sliding_window_attention(q, k, v, window)
    if name == "chunked":
        return lambda q, k, v: chunked_attention(q, k, v, chunk_size)
    if name == "linear":
        return lambda q, k, v: linear_attention(q, k, v)
    if name == "sdpa":
        return F.scaled_dot_product_attention
    if name == "kernel":
        from ..kernels import flash_attention  # needs triton: imported only when asked for

        return flash_attention
    return _sdpa_math  # the one name left


def inputs(n: int, *, batch: int, heads: int, dim: int, dtype: torch.dtype, device, seed: int) -> list[Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(batch, heads, n, dim, generator=g).to(device=device, dtype=dtype) for _ in range(3)]


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def clock(device: torch.device) -> Callable[[], float]:
    """The clock a call is timed by, in seconds: on a CPU where torch computes in one thread, that thread's CPU time
    (which another program's load does not stretch; on an idle machine it is the wall time); else the wall clock."""
    return time.thread_time if device.type == "cpu" and torch.get_num_threads() == 1 else time.perf_counter


def time_once(fn, args, device: torch.device) -> tuple[float, Tensor]:
    sync(device)
    now = clock(device)
    start = now()
    out = fn(*args)
    sync(device)
    return now() - start, out
