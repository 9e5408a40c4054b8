r"""Time and peak memory of attention implementations against sequence length (five modules: ``methods`` what is
measured, ``memory`` the CPU peak-memory server, ``runner`` the measurement, ``report`` tables, targets and figures,
``cli`` the command line, :func:`course_lib.bench.cli.main`). A sixth, :mod:`course_lib.bench.kv_cache`, is a
command line of its own: how much faster a decoder generates with its KV cache (``python -m
course_lib.bench.kv_cache``; not imported here).

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
``kernel``     :func:`course_lib.kernels.flash_attention`, the course's fused Triton kernel (CUDA only, bfloat16 or
               float16, ``D`` = 64 or 128; the command line adds it on CUDA when triton is installed)
=============  ==========================================================================================

**Time.** Seconds of one forward call: wall-clock (``torch.cuda.synchronize()`` around it on a GPU), except on a
CPU where torch computes in one thread (``--threads 1``), where they are that thread's CPU time, which another
program's load does not stretch (on an idle machine the two agree; :func:`~course_lib.bench.methods.clock`). The median
of up to ``--repeats`` calls after a warm-up (``time_ms``) and the fastest of them (``best_ms``, the call least
disturbed by other programs, best for fitting growth exponents). The calls of all fast methods at one ``N``
are *interleaved* (method 1, method 2, ..., then again), so a change in the machine's load hits every method
alike and the *ratios* between methods measured in one run are trustworthy even on a busy machine; the
absolute times are not. Each method gets as many calls as fit in ``--time-budget`` seconds (1 to
``--repeats``); a call slower than the whole budget is not repeated, and its time is that of the memory
measurement's single call, and the CPU's child sends that call's output back for the correctness check.

**Peak memory on CUDA.** ``torch.cuda.reset_peak_memory_stats()`` before the call, then
``torch.cuda.max_memory_allocated()`` minus the memory allocated before it: the most extra memory the call
held at any moment, beyond its inputs.

**Peak memory on the CPU.** There is no allocator statistic, and ``tracemalloc`` is useless: it sees Python
objects, while torch allocates tensor buffers in C++. So each ``(method, N)`` runs in a *fresh child process*.
With one thread on Linux (glibc) it is a fork of the calling process, which waits for it: no helper process, no
second import of torch, and its CPU counts as the caller's. Otherwise (more threads: a fork of a process whose
OpenMP threads have run can hang at its first parallel region; macOS, whose system libraries are not safe after a
fork) a small server process imports torch once and forks a clean child per measurement (the idea of
``multiprocessing``'s "forkserver", without its re-import of the caller's main script); the server stops, and is
waited for, when its caller exits. The child builds the inputs and calls the method on them once as a warm-up
(so the pages of library code a first call loads, and the buffers it sets up for its size, are not counted); then
it calls ``malloc_trim(0)`` where glibc has it (pages of the heap that the process it was forked from had freed go
back to the operating system, so the call pays for every page it touches, as in a new interpreter), resets the
kernel's peak-resident-memory mark (writes ``5`` to ``/proc/self/clear_refs``), reads its resident memory
``VmRSS``, runs the method once more and reports ``VmHWM - VmRSS``: the largest amount of extra resident memory
during the call, counted in 4 KiB pages (the child switches transparent huge pages off for itself: with them
"always" on, a byte touched in a fresh 2 MiB of heap would count as 2 MiB). A fresh process per measurement
matters because the C allocator keeps freed memory for reuse: in a long-lived process a call can reuse pages an
earlier call paid for and look free. Resolution is about half a MiB (pages of small buffers touched for the first
time; with a warm-up on a short input only, about 1 MiB more of library code was paged in during the call, and how
much varied with what the page cache held). Where
``clear_refs`` is unavailable (macOS, old kernels) the child uses the growth of ``ru_maxrss`` instead, which is
right whenever the call raises the process's all-time peak (large ``N``) and an underestimate otherwise.

**Correctness.** Before timing, each method's output is compared with a reference computed in the same run
(``naive``, ``chunked``, ``sdpa_math`` with ``sdpa``; ``sliding`` and ``masked`` with each other); the largest
absolute difference is the ``err`` column. Linear attention is a different model and has no reference here.
"""

from __future__ import annotations

from .memory import measure_cpu_peak
from .methods import ALL_METHODS, DEFAULT_METHODS, GPU_METHODS, BenchRow, make_method
from .report import check_targets, describe_machine, format_table, growth_exponent, plot_results, save_csv
from .runner import run_benchmark

__all__ = [
    "ALL_METHODS",
    "DEFAULT_METHODS",
    "GPU_METHODS",
    "BenchRow",
    "check_targets",
    "describe_machine",
    "format_table",
    "growth_exponent",
    "make_method",
    "measure_cpu_peak",
    "plot_results",
    "run_benchmark",
    "save_csv",
]
