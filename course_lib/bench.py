r"""Time and peak memory of attention implementations against sequence length.

    python -m course_lib.bench                                   # CPU (and CUDA when present): table + targets
    python -m course_lib.bench --csv bench.csv --plot bench.png  # also save the rows and a figure
    python -m course_lib.bench --device cuda --lengths 1024 2048 4096 8192 16384   # bfloat16 on the GPU
    python -m course_lib.bench --methods naive chunked sdpa --lengths 4096 8192 --chunk-size 256

Every method computes self-attention on ``q, k, v`` of shape ``(B, H, N, D)`` (default ``B = H = 1``,
``D = 64``; float32 on the CPU, bfloat16 on CUDA):

=============  ==========================================================================================
``naive``      :func:`course_lib.scaled_dot_product_attention`: the full ``N x N`` scores, softmax, ``@ V``
``masked``     the same with the band mask ``window_mask(N, W)``: :func:`~course_lib.efficient.\
sliding_window_attention_reference` (the mask is an input, built before the measured call)
``sliding``    :func:`~course_lib.efficient.sliding_window_attention` with window ``W``: ``O(N W)`` memory
``chunked``    :func:`~course_lib.efficient.chunked_attention` with chunk ``C``: exact, online softmax
``linear``     :func:`~course_lib.linear.linear_attention` (non-causal, ``elu + 1`` features)
``sdpa``       ``torch.nn.functional.scaled_dot_product_attention``: PyTorch picks a fused kernel
``sdpa_math``  the same forced onto PyTorch's unfused "math" backend (not in the default set)
=============  ==========================================================================================

**Time.** Wall-clock seconds of one forward call (``torch.cuda.synchronize()`` around it on a GPU): the median
of up to ``--repeats`` calls after a warm-up (``time_ms``) and the fastest of them (``best_ms``, the call least
disturbed by other programs, best for fitting growth exponents). The calls of all fast methods at one ``N``
are *interleaved* (method 1, method 2, ..., then again), so a change in the machine's load hits every method
alike and the *ratios* between methods measured in one run are trustworthy even on a busy machine; the
absolute times are not. Each method gets as many calls as fit in ``--time-budget`` seconds (1 to
``--repeats``); a call slower than the whole budget is not repeated, and its time is that of the memory
measurement's single call.

**Peak memory on CUDA.** ``torch.cuda.reset_peak_memory_stats()`` before the call, then
``torch.cuda.max_memory_allocated()`` minus the memory allocated before it: the most extra memory the call
held at any moment, beyond its inputs.

**Peak memory on the CPU.** There is no allocator statistic, and ``tracemalloc`` is useless: it sees Python
objects, while torch allocates tensor buffers in C++. So each ``(method, N)`` runs in a *fresh child process*:
a small server process imports torch once and forks a clean child per measurement (milliseconds, instead of
the seconds a new interpreter needs to import torch; it is the idea of ``multiprocessing``'s "forkserver",
without its re-import of the caller's main script). The child builds the inputs, warms the method up on
a short input, resets the kernel's peak-resident-memory mark (writes ``5`` to ``/proc/self/clear_refs``), reads
its resident memory ``VmRSS``, runs the method once and reports ``VmHWM - VmRSS``: the largest amount of extra
resident memory during the call. A fresh process per measurement matters because the C allocator keeps freed
memory for reuse: in a long-lived process a call can reuse pages an earlier call paid for and look free.
Resolution is a few MiB (pages of code and small buffers touched for the first time). Where
``clear_refs`` is unavailable (macOS, old kernels) the child uses the growth of ``ru_maxrss`` instead, which is
right whenever the call raises the process's all-time peak (large ``N``) and an underestimate otherwise.

**Correctness.** Before timing, each method's output is compared with a reference computed in the same run
(``naive``, ``chunked``, ``sdpa_math`` with ``sdpa``; ``sliding`` and ``masked`` with each other); the largest
absolute difference is the ``err`` column. Linear attention is a different model and has no reference here.
"""

from __future__ import annotations

import argparse
import atexit
import csv
import json
import math
import os
import platform
import resource
import select
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields

import torch
import torch.nn.functional as F
from torch import Tensor

from .attention import scaled_dot_product_attention
from .efficient import chunked_attention, sliding_window_attention
from .linear import linear_attention
from .masks import window_mask

__all__ = [
    "ALL_METHODS",
    "DEFAULT_METHODS",
    "BenchRow",
    "check_targets",
    "describe_machine",
    "format_table",
    "growth_exponent",
    "main",
    "measure_cpu_peak",
    "plot_results",
    "run_benchmark",
    "save_csv",
]

DEFAULT_METHODS = ("naive", "masked", "sliding", "chunked", "linear", "sdpa")
ALL_METHODS = (*DEFAULT_METHODS, "sdpa_math")
QUADRATIC = ("naive", "masked", "sdpa_math")  # methods that hold an N x N matrix: skipped above max_quadratic_n
DEFAULT_LENGTHS = {"cpu": (512, 1024, 2048, 4096, 8192, 16384), "cuda": (1024, 2048, 4096, 8192, 16384)}
_DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}
_REFERENCE = {"naive": "sdpa", "chunked": "sdpa", "sdpa_math": "sdpa", "sliding": "masked", "masked": "sliding"}
_MIB = 2**20


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


# ---------------------------------------------------------------------------------------------- the methods


def _sdpa_math(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(q, k, v)


def make_method(
    name: str, n: int, *, window: int, chunk_size: int, device
) -> Callable[[Tensor, Tensor, Tensor], Tensor]:
    """The callable ``fn(q, k, v)`` that the benchmark measures as ``name`` at length ``n``.

    ``masked`` builds its ``(N, N)`` band mask here, once: it is an input of the measured call, like a mask
    cached by a model, so the call's memory is that of attending through a full masked score matrix.
    """
    if name == "naive":
        return lambda q, k, v: scaled_dot_product_attention(q, k, v)
    if name == "masked":
        mask = window_mask(n, window, device=device)  # (N, N) bool
        return lambda q, k, v: scaled_dot_product_attention(q, k, v, mask)
    if name == "sliding":
        return lambda q, k, v: sliding_window_attention(q, k, v, window)
    if name == "chunked":
        return lambda q, k, v: chunked_attention(q, k, v, chunk_size)
    if name == "linear":
        return lambda q, k, v: linear_attention(q, k, v)
    if name == "sdpa":
        return F.scaled_dot_product_attention
    if name == "sdpa_math":
        return _sdpa_math
    raise ValueError(f"unknown method {name!r}; expected one of {', '.join(ALL_METHODS)}")


def _inputs(n: int, *, batch: int, heads: int, dim: int, dtype: torch.dtype, device, seed: int) -> list[Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(batch, heads, n, dim, generator=g).to(device=device, dtype=dtype) for _ in range(3)]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def _time_once(fn, args, device: torch.device) -> tuple[float, Tensor]:
    _sync(device)
    start = time.perf_counter()
    out = fn(*args)
    _sync(device)
    return time.perf_counter() - start, out


# ---------------------------------------------------------------------------------------------- CPU peak memory


def _proc_status() -> dict[str, int]:
    values = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":")
                values[key] = int(value.split()[0]) * 1024  # kB -> bytes
    return values


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark of this process (Linux >= 4.0); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _maxrss_bytes() -> int:
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, kB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def _measure_here(spec: dict) -> dict:
    """One call of one method in *this* process (a fresh child): its peak extra memory and its time."""
    torch.set_num_threads(spec["threads"])
    dtype = _DTYPES[spec["dtype"]]
    shape = dict(batch=spec["batch"], heads=spec["heads"], dim=spec["dim"], dtype=dtype, device="cpu")
    opts = dict(window=spec["window"], chunk_size=spec["chunk_size"], device="cpu")
    small = min(spec["n"], 64)
    make_method(spec["method"], small, **opts)(*_inputs(small, seed=1, **shape))  # warm-up: lazy set-up
    fn = make_method(spec["method"], spec["n"], **opts)
    args = _inputs(spec["n"], seed=spec["seed"], **shape)
    exact = _reset_peak()
    before = _proc_status()["VmRSS"] if exact else _maxrss_bytes()
    start = time.perf_counter()
    out = fn(*args)
    seconds = time.perf_counter() - start
    after = _proc_status()["VmHWM"] if exact else _maxrss_bytes()
    del out
    return {"peak_bytes": max(after - before, 0), "seconds": seconds, "exact": exact}


def _serve() -> None:
    """The measuring server: reads one JSON spec per line, forks a fresh child for each, relays its answer.

    It imports torch once and never computes anything itself, so each forked child starts clean (no thread
    pools, no cached allocations) in milliseconds instead of the seconds a new interpreter needs.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C (or a Jupyter interrupt) is for the parent
    torch.broadcast_shapes((1,), (1,))  # pays a lazy import (~0.5 s) once here instead of in every child
    for line in sys.stdin:
        spec = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the child: measure, answer, vanish
            try:
                answer = _measure_here(spec)
            except BaseException as err:  # report, never hang the parent
                answer = {"error": f"{type(err).__name__}: {err}"}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        if status != 0:  # died without answering, e.g. killed by the kernel for lack of memory
            code = os.waitstatus_to_exitcode(status)
            reason = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
            sys.stdout.write(json.dumps({"error": f"child process {reason} (out of memory?)"}) + "\n")
            sys.stdout.flush()


_SERVER: subprocess.Popen | None = None


def _server() -> subprocess.Popen:
    global _SERVER
    if _SERVER is None or _SERVER.poll() is not None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder holding course_lib/
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        _SERVER = subprocess.Popen(
            [sys.executable, "-c", "from course_lib.bench import _serve; _serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,  # its own session: signals for the caller's process group do not reach it
        )
        atexit.register(_SERVER.stdin.close)
    return _SERVER


def measure_cpu_peak(
    method: str,
    n: int,
    *,
    batch: int = 1,
    heads: int = 1,
    dim: int = 64,
    dtype: torch.dtype = torch.float32,
    window: int = 128,
    chunk_size: int = 128,
    seed: int = 0,
    threads: int | None = None,
    timeout_s: float = 600.0,
) -> dict:
    """Peak extra resident memory (bytes) and time (s) of one CPU call of ``method`` at length ``n``.

    Runs in a fresh child process (see the module docstring). Returns ``{"peak_bytes", "seconds", "exact"}``,
    or ``{"error": message}`` if the child failed (for instance killed for lack of memory). Without ``os.fork``
    (Windows) each measurement starts a new interpreter instead: slower, same result.
    """
    global _SERVER
    if method not in ALL_METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(ALL_METHODS)}")
    dtype_name = next(name for name, d in _DTYPES.items() if d == dtype)
    spec = dict(
        method=method, n=n, batch=batch, heads=heads, dim=dim, dtype=dtype_name, window=window,
        chunk_size=chunk_size, seed=seed, threads=threads or torch.get_num_threads(),
    )  # fmt: skip
    if not hasattr(os, "fork"):
        code = f"import json; from course_lib.bench import _measure_here; print(json.dumps(_measure_here({spec!r})))"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout_s)
        if done.returncode != 0:
            return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "child failed"}
        return json.loads(done.stdout.strip().splitlines()[-1])
    server = _server()
    server.stdin.write(json.dumps(spec) + "\n")
    server.stdin.flush()
    ready, _, _ = select.select([server.stdout], [], [], timeout_s)
    if not ready:
        os.killpg(server.pid, signal.SIGKILL)  # the server and the child it is waiting for
        server.wait()
        _SERVER = None  # the next measurement starts a new server
        return {"error": f"no answer within {timeout_s:.0f} s"}
    line = server.stdout.readline()
    return json.loads(line) if line else {"error": "the measuring server stopped"}


# ---------------------------------------------------------------------------------------------- the benchmark


def _max_abs_err(out: Tensor, ref: Tensor) -> float:
    return (out.float() - ref.float()).abs().max().item()


def run_benchmark(
    lengths: Sequence[int],
    methods: Sequence[str] = DEFAULT_METHODS,
    *,
    device: str | torch.device = "cpu",
    dtype: torch.dtype | None = None,
    batch: int = 1,
    heads: int = 1,
    dim: int = 64,
    window: int = 128,
    chunk_size: int = 128,
    repeats: int = 3,
    time_budget_s: float = 3.0,
    max_quadratic_n: int = 16384,
    measure_memory: bool = True,
    seed: int = 0,
    progress: bool = True,
) -> list[BenchRow]:
    """Measure every method at every length on one device and return one :class:`BenchRow` per pair.

    Args:
        lengths: sequence lengths ``N``.
        methods: names from :data:`ALL_METHODS`.
        device: ``"cpu"`` or a CUDA device.
        dtype: default float32 on the CPU, bfloat16 on CUDA.
        batch, heads, dim: the shape ``(B, H, N, D)`` of ``q``, ``k`` and ``v``.
        window: ``W`` of ``masked`` and ``sliding``.  chunk_size: ``C`` of ``chunked``.
        repeats: at most this many timed calls per configuration (the median is reported), interleaved
            across methods.
        time_budget_s: seconds of timed calls per configuration: a method gets ``budget // (one call)`` calls
            (1 to ``repeats``); one slower than the budget is not called again and its time is that of the
            memory measurement's call.
        max_quadratic_n: ``naive``, ``masked`` and ``sdpa_math`` are skipped above this length.
        measure_memory: also measure peak memory (CPU: one child process per configuration).
        seed: seeds the inputs.
        progress: show a progress bar (:func:`course_lib.train.progress_bar`, tqdm's text bar).
    """
    from .train import progress_bar

    device = torch.device(device)
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be cpu or cuda, got {device}")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device=cuda was requested but CUDA is not available")
    dtype = dtype or (torch.bfloat16 if device.type == "cuda" else torch.float32)
    for name in methods:
        if name not in ALL_METHODS:
            raise ValueError(f"unknown method {name!r}; expected one of {', '.join(ALL_METHODS)}")
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    dtype_name = str(dtype).replace("torch.", "")
    shape = dict(batch=batch, heads=heads, dim=dim, dtype=dtype, device=device)
    opts = dict(window=window, chunk_size=chunk_size, device=device)

    if measure_memory and device.type == "cpu":
        _server()  # start the measuring server now: it imports torch while this process warms up
    for name in methods:  # warm-up: first calls load kernels and thread pools
        small = 64
        make_method(name, small, **opts)(*_inputs(small, seed=1, **shape))

    rows: list[BenchRow] = []
    bar = progress_bar(total=len(lengths) * len(methods), desc=f"bench {device.type}", disable=not progress)
    for n in lengths:
        row = {m: BenchRow(device.type, dtype_name, m, n) for m in methods}
        active = []
        for m in methods:
            if m in QUADRATIC and n > max_quadratic_n:
                row[m].status = f"skipped (N > {max_quadratic_n})"
            else:
                active.append(m)
        args = _inputs(n, seed=seed, **shape)
        single_call: dict[str, float] = {}
        # 1. memory: one call per configuration (CPU: in a child; CUDA: allocator statistics)
        if measure_memory:
            for m in active:
                bar.set_postfix_str(f"N={n} {m}: memory")
                if device.type == "cpu":
                    res = measure_cpu_peak(m, n, batch=batch, heads=heads, dim=dim, dtype=dtype, window=window,
                                           chunk_size=chunk_size, seed=seed)  # fmt: skip
                    if "error" in res:
                        row[m].status = f"failed: {res['error']}"
                        continue
                    row[m].peak_mib = res["peak_bytes"] / _MIB
                    single_call[m] = res["seconds"]
                else:
                    try:
                        fn = make_method(m, n, **opts)
                        torch.cuda.synchronize(device)
                        torch.cuda.reset_peak_memory_stats(device)
                        before = torch.cuda.memory_allocated(device)
                        seconds, out = _time_once(fn, args, device)
                        row[m].peak_mib = (torch.cuda.max_memory_allocated(device) - before) / _MIB
                        single_call[m] = seconds
                        del out, fn
                    except torch.cuda.OutOfMemoryError:
                        row[m].status = "out of memory"
                        torch.cuda.empty_cache()
        active = [m for m in active if row[m].status == "ok"]
        # 2. time, in this process: each method gets as many calls as fit in the budget (1 to `repeats`),
        #    interleaved round by round so that the machine's load drifts over all methods alike
        calls = {}
        for m in active:
            once = single_call.get(m)
            if once is None:  # memory not measured: probe once here
                once, _ = _time_once(make_method(m, n, **opts), args, device)
            calls[m] = 0 if once > time_budget_s else max(1, min(repeats, int(time_budget_s // max(once, 1e-9))))
        samples: dict[str, list[float]] = {m: [] for m in active}
        outputs: dict[str, Tensor] = {}
        fns = {m: make_method(m, n, **opts) for m in active if calls[m] > 0}
        bar.set_postfix_str(f"N={n}: timing")
        for round_ in range(repeats):
            for m in list(fns):
                if round_ >= calls[m]:
                    continue
                try:
                    seconds, outputs[m] = _time_once(fns[m], args, device)
                except torch.cuda.OutOfMemoryError:
                    row[m].status = "out of memory"
                    del fns[m]
                    continue
                samples[m].append(seconds)
        for m in active:
            if samples[m]:
                row[m].time_ms, row[m].best_ms = 1000 * statistics.median(samples[m]), 1000 * min(samples[m])
                row[m].repeats = len(samples[m])
            elif m in single_call:  # too slow to repeat: the one call of the memory measurement
                row[m].time_ms = row[m].best_ms = 1000 * single_call[m]
                row[m].repeats = 1
        # 3. correctness against a reference computed in the same run
        for m, out in outputs.items():
            ref = _REFERENCE.get(m)
            if ref in outputs:
                row[m].err = _max_abs_err(out, outputs[ref])
        del outputs, fns, args
        rows.extend(row[m] for m in methods)
        bar.update(len(methods))
    bar.set_postfix_str("done")
    bar.close()
    return rows


# ---------------------------------------------------------------------------------------------- reporting


def growth_exponent(ns: Sequence[float], values: Sequence[float]) -> float:
    """Least-squares slope of ``log(value)`` against ``log(n)``: 2 for a cost proportional to ``n^2``."""
    if len(ns) != len(values) or len(ns) < 2:
        raise ValueError(f"need at least two (n, value) pairs of equal count, got {len(ns)} and {len(values)}")
    x = [math.log(n) for n in ns]
    y = [math.log(v) for v in values]
    mx, my = statistics.fmean(x), statistics.fmean(y)
    return sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / sum((a - mx) ** 2 for a in x)


def _find(rows: Sequence[BenchRow], device: str, method: str, n: int) -> BenchRow | None:
    for r in rows:
        if r.device == device and r.method == method and r.n == n:
            return r
    return None


def check_targets(rows: Sequence[BenchRow], device: str = "cpu") -> list[dict]:
    """The course's three CPU targets, for those whose rows were measured (each a dict with ``passed``).

    - chunked at N = 8192: peak memory <= 1/10 of naive's, time <= 3 x SDPA's (same run);
    - sliding at N = 16384: peak memory <= 1/20 of the masked N x N version's.
    """
    targets = []

    def ratio(what, a, b, n, limit, key):
        ra, rb = _find(rows, device, a, n), _find(rows, device, b, n)
        if ra is None or rb is None or getattr(ra, key) is None or not getattr(rb, key):
            return
        value = getattr(ra, key) / getattr(rb, key)
        targets.append(dict(target=what, n=n, measured=value, limit=limit, passed=value <= limit))

    ratio("chunked / naive peak memory", "chunked", "naive", 8192, 1 / 10, "peak_mib")
    ratio("chunked / sdpa time", "chunked", "sdpa", 8192, 3.0, "time_ms")
    ratio("sliding / masked peak memory", "sliding", "masked", 16384, 1 / 20, "peak_mib")
    return targets


def format_table(rows: Sequence[BenchRow]) -> str:
    """A plain-text table of the rows: one line per (device, N, method)."""
    head = f"{'device':<6} {'dtype':<9} {'N':>6} {'method':<10} {'time ms':>10} {'peak MiB':>10} {'reps':>4} {'err':>9}"
    lines = [head, "-" * len(head)]
    for r in rows:
        t = f"{r.time_ms:10.2f}" if r.time_ms is not None else f"{'-':>10}"
        p = f"{r.peak_mib:10.1f}" if r.peak_mib is not None else f"{'-':>10}"
        e = f"{r.err:9.1e}" if r.err is not None else f"{'-':>9}"
        note = "" if r.status == "ok" else f"  {r.status}"
        lines.append(f"{r.device:<6} {r.dtype:<9} {r.n:>6} {r.method:<10} {t} {p} {r.repeats:>4} {e}{note}")
    return "\n".join(lines)


def save_csv(rows: Sequence[BenchRow], path: str | os.PathLike) -> None:
    """Write the rows as CSV with a header (the fields of :class:`BenchRow`)."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[field.name for field in fields(BenchRow)])
        writer.writeheader()
        for r in rows:
            writer.writerow(asdict(r))


_STYLE = {
    "naive": ("tab:red", "o"),
    "masked": ("tab:orange", "s"),
    "sliding": ("tab:green", "^"),
    "chunked": ("tab:blue", "D"),
    "linear": ("tab:purple", "v"),
    "sdpa": ("black", "x"),
    "sdpa_math": ("tab:brown", "P"),
}


def plot_results(rows: Sequence[BenchRow], axes=None, *, title: str | None = None):
    """Time and peak memory against ``N`` on log-log axes, one line per (device, method); returns the figure.

    ``axes``: two matplotlib axes to draw into; by default a new ``matplotlib.figure.Figure`` (no pyplot state).
    """
    if axes is None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(11, 4.2), layout="constrained")
        axes = fig.subplots(1, 2)
    fig = axes[0].figure
    devices = sorted({r.device for r in rows})
    for device in devices:
        for method in dict.fromkeys(r.method for r in rows):
            colour, marker = _STYLE.get(method, ("grey", "."))
            label = method if len(devices) == 1 else f"{method} ({device})"
            ls = "-" if device == "cpu" else "--"
            for ax, key in zip(axes, ("time_ms", "peak_mib"), strict=True):
                pts = [(r.n, getattr(r, key)) for r in rows if r.device == device and r.method == method]
                pts = [(n, y) for n, y in pts if y is not None and y > 0]
                if pts:
                    ax.plot(*zip(*pts, strict=True), ls=ls, marker=marker, color=colour, label=label)
    for ax, ylabel in zip(axes, ("time per forward call (ms)", "peak extra memory (MiB)"), strict=True):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length N")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="major", alpha=0.3)
    axes[0].set_title("time (median of the repeats)")
    axes[1].set_title("peak memory of one call")
    axes[1].legend(fontsize=8)
    if title:
        fig.suptitle(title)
    return fig


def describe_machine(device: str | torch.device = "cpu") -> str:
    """One line naming the processor (or GPU), the core and thread counts and the torch version."""
    device = torch.device(device)
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)}, torch {torch.__version__}, CUDA {torch.version.cuda}"
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (
        f"{model}, {os.cpu_count()} logical cores, torch {torch.__version__} using {torch.get_num_threads()} "
        f"thread(s), {platform.system()} {platform.machine()}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.bench",
        description="Time and peak memory of attention implementations against sequence length.",
        epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--device", choices=("cpu", "cuda", "all"), default="all",
                        help="all (default) = the CPU, and CUDA when present")  # fmt: skip
    parser.add_argument("--lengths", type=int, nargs="+", help="sequence lengths (default: 512 ... 16384 on CPU)")
    parser.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS), choices=ALL_METHODS)
    parser.add_argument("--dtype", choices=tuple(_DTYPES), help="default float32 on CPU, bfloat16 on CUDA")
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
            args.methods,
            device=device,
            dtype=_DTYPES[args.dtype] if args.dtype else None,
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
        f"time = median of up to {args.repeats} interleaved calls; peak = extra memory of one call"
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


if __name__ == "__main__":
    sys.exit(main())
