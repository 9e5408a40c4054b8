"""Reading the rows: growth exponents, the course's targets, a table, a CSV file, a figure, the machine's name."""

from __future__ import annotations

import csv
import math
import os
import platform
import statistics
from collections.abc import Sequence
from dataclasses import asdict, fields

import torch

from .methods import BenchRow


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
    """The course's targets on ``device``, for those whose rows were measured (each a dict with ``passed``).

    - exact attention in linear memory at N = 8192: peak memory <= 1/10 of naive's, time <= 3 x SDPA's (same run);
    - sliding at N = 16384: peak memory <= 1/20 of the masked N x N version's.

    Exact attention in linear memory is ``chunked`` on the CPU, where its Python loop over chunks costs little next
    to the arithmetic. On CUDA the same loop launches a few small kernels per chunk, each waiting for the last (at
    N = 8192 on an H100, chunked took 94 x SDPA's time and naive 6 x), so there its time target is the fused Triton
    kernel's (``kernel``); chunked keeps its memory target.
    """
    targets = []

    def ratio(what, a, b, n, limit, key):
        ra, rb = _find(rows, device, a, n), _find(rows, device, b, n)
        if ra is None or rb is None or getattr(ra, key) is None or not getattr(rb, key):
            return
        value = getattr(ra, key) / getattr(rb, key)
        targets.append(dict(target=what, n=n, measured=value, limit=limit, passed=value <= limit))

    fused = "kernel" if device == "cuda" else "chunked"
    ratio("chunked / naive peak memory", "chunked", "naive", 8192, 1 / 10, "peak_mib")
    ratio(f"{fused} / sdpa time", fused, "sdpa", 8192, 3.0, "time_ms")
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
    lengths = sorted({r.n for r in rows})
    for ax, ylabel in zip(axes, ("time per forward call (ms)", "peak extra memory (MiB)"), strict=True):
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths, [f"{n:,}" for n in lengths])  # the measured N, written out (not 2^9, 2^10, ...)
        ax.set_yscale("log")
        ax.minorticks_off()  # after both scales: a log axis lays out a label for every minor tick (a third or more
        # of the figure's drawing time), and set_yscale would bring the y axis's back
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
