"""The measurement: every method at every length on one device. At each length, memory first (one call per method:
on the CPU in a fresh child process, on CUDA from the allocator's statistics), then time (calls interleaved across
methods, as many as fit in the time budget), then each output against its reference from the same run."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from ..validate import integer, number
from .memory import forks_here, measure_cpu_peak, start_server
from .methods import DEFAULT_METHODS, MIB, QUADRATIC, REFERENCE, BenchRow, check_method, inputs, make_method, time_once


@dataclass(frozen=True)
class _Setup:
    """What every measurement of one run shares: the device, the inputs' shape and dtype, the methods' options."""

    device: torch.device
    dtype: torch.dtype
    batch: int
    heads: int
    dim: int
    window: int
    chunk_size: int
    seed: int

    def inputs(self, n: int, seed: int | None = None) -> list[Tensor]:  # q, k, v, each (B, H, N, D)
        seed = self.seed if seed is None else seed
        shape = dict(batch=self.batch, heads=self.heads, dim=self.dim, dtype=self.dtype, device=self.device)
        return inputs(n, seed=seed, **shape)

    def method(self, name: str, n: int):
        fn = make_method(name, n, window=self.window, chunk_size=self.chunk_size, device=self.device)
        if name == "kernel":  # its first call at a new N autotunes (times several tile sizes): not part of a call
            fn(*self.inputs(n, seed=1))
        return fn


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
            (1 to ``repeats``); one slower than the budget is not called again: its time is that of the
            memory measurement's call, and the output of that call (which the CPU's child sends back) is the one
            checked against the reference.
        max_quadratic_n: ``naive``, ``masked`` and ``sdpa_math`` are skipped above this length.
        measure_memory: also measure peak memory (CPU: one child process per configuration).
        seed: seeds the inputs.
        progress: show a progress bar (:func:`course_lib.progress.progress_bar`, tqdm's text bar).
    """
    from ..progress import progress_bar

    device = torch.device(device)
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be cpu or cuda, got {device}")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device=cuda was requested but CUDA is not available")
    for name in methods:
        check_method(name)
    if "kernel" in methods and device.type != "cuda":
        raise ValueError(f"method 'kernel' (the Triton kernel) runs on CUDA only, not on {device}")
    integer("repeats", repeats, minimum=1)
    number("time_budget_s", time_budget_s, minimum=0)  # 0: no timed calls, only the memory call
    dtype = dtype or (torch.bfloat16 if device.type == "cuda" else torch.float32)
    setup = _Setup(device, dtype, batch, heads, dim, window, chunk_size, seed)

    if measure_memory and device.type == "cpu" and not forks_here(torch.get_num_threads()):
        start_server()  # the measuring server imports torch while this process warms up
    for name in methods:  # warm-up: first calls load kernels and thread pools
        setup.method(name, 64)(*setup.inputs(64, seed=1))

    rows: list[BenchRow] = []
    bar = progress_bar(total=len(lengths) * len(methods), desc=f"bench {device.type}", disable=not progress)
    for n in lengths:
        row = {m: BenchRow(device.type, str(dtype).replace("torch.", ""), m, n) for m in methods}
        for m in methods:
            if m in QUADRATIC and n > max_quadratic_n:
                row[m].status = f"skipped (N > {max_quadratic_n})"
        _measure_length(setup, n, row, repeats, time_budget_s, measure_memory, bar)
        rows.extend(row[m] for m in methods)
        bar.update(len(methods))
    bar.set_postfix_str("done")
    bar.close()
    return rows


def _measure_length(setup: _Setup, n: int, row: dict[str, BenchRow], repeats: int, budget: float, memory: bool, bar):
    """Fill the rows of one length: memory, then time, then errors against the references."""
    args = setup.inputs(n)
    single_call: dict[str, float] = {}  # seconds of the memory measurement's one call
    kept: dict[str, Tensor] = {}  # its output, where it is slower than the budget: not called again
    checked = {m for m in row if REFERENCE.get(m) in row or m in {REFERENCE.get(other) for other in row}}
    if memory:
        for m in [m for m, r in row.items() if r.status == "ok"]:
            bar.set_postfix_str(f"N={n} {m}: memory")
            measured = _peak_memory(setup, m, n, args, row[m], budget if m in checked else None)
            if measured is not None:
                single_call[m] = measured[0]
                if measured[1] is not None:
                    kept[m] = measured[1]
    active = [m for m, r in row.items() if r.status == "ok"]
    calls = {}
    for m in active:
        once = single_call.get(m)
        if once is None:  # memory not measured: probe once here
            once, _ = time_once(setup.method(m, n), args, setup.device)
        calls[m] = 0 if once > budget else max(1, min(repeats, int(budget // max(once, 1e-9))))
    bar.set_postfix_str(f"N={n}: timing")
    samples, outputs = _time_interleaved(setup, n, calls, repeats, args, row)
    outputs = {**kept, **outputs}  # the memory call's output where it was the only call
    for m in active:
        if samples[m]:
            row[m].time_ms, row[m].best_ms = 1000 * statistics.median(samples[m]), 1000 * min(samples[m])
            row[m].repeats = len(samples[m])
        elif m in single_call:  # too slow to repeat: the one call of the memory measurement
            row[m].time_ms = row[m].best_ms = 1000 * single_call[m]
            row[m].repeats = 1
    for m, out in outputs.items():  # correctness against a reference computed in the same run
        reference = REFERENCE.get(m)
        if reference in outputs:
            row[m].err = (out.float() - outputs[reference].float()).abs().max().item()


def _peak_memory(setup: _Setup, method: str, n: int, args: list[Tensor], row: BenchRow, output_after: float | None):
    """Set ``row.peak_mib`` (or its failure status) from one call; return that call's seconds and its output if it
    took longer than ``output_after`` seconds (else None), or None if it failed."""
    if setup.device.type == "cpu":
        options = dict(window=setup.window, chunk_size=setup.chunk_size, seed=setup.seed)
        shape = dict(batch=setup.batch, heads=setup.heads, dim=setup.dim, dtype=setup.dtype)
        result = measure_cpu_peak(method, n, **shape, **options, output_after_s=output_after)
        if "error" in result:
            row.status = f"failed: {result['error']}"
            return None
        row.peak_mib = result["peak_bytes"] / MIB
        return result["seconds"], result.get("output")
    try:
        fn = setup.method(method, n)
        torch.cuda.synchronize(setup.device)
        torch.cuda.reset_peak_memory_stats(setup.device)
        before = torch.cuda.memory_allocated(setup.device)
        seconds, out = time_once(fn, args, setup.device)
        row.peak_mib = (torch.cuda.max_memory_allocated(setup.device) - before) / MIB
        return seconds, (out if output_after is not None and seconds > output_after else None)
    except torch.cuda.OutOfMemoryError:
        row.status = "out of memory"
        torch.cuda.empty_cache()
        return None


def _time_interleaved(setup: _Setup, n: int, calls: dict[str, int], repeats: int, args: list[Tensor], row):
    """Time each method ``calls[m]`` times, round by round (method 1, method 2, ..., then again), so that a change
    in the machine's load hits every method alike. Returns the samples (seconds) and each method's last output.

    Not ``torch.utils.benchmark.Timer`` on purpose: it times one statement to the end before the next begins, so a
    load change between two methods goes straight into their ratio, and it keeps neither the outputs (checked
    against the reference) nor a method that ran out of memory apart from the others."""
    samples: dict[str, list[float]] = {m: [] for m in calls}
    outputs: dict[str, Tensor] = {}
    fns = {m: setup.method(m, n) for m in calls if calls[m] > 0}
    for round_ in range(repeats):
        for m in list(fns):
            if round_ >= calls[m]:
                continue
            try:
                seconds, outputs[m] = time_once(fns[m], args, setup.device)
            except torch.cuda.OutOfMemoryError:
                row[m].status = "out of memory"
                del fns[m]
                continue
            samples[m].append(seconds)
    return samples, outputs
