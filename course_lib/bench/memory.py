"""Peak memory of one CPU call, measured in a fresh child process (see the package docstring: why a fresh process,
why not tracemalloc, and where the child comes from: a fork of the caller on Linux with glibc for one thread, else a
fork of a small server that imports torch once, as forking after OpenMP threads ran, or on macOS, is not safe).
"""

from __future__ import annotations

import atexit
import base64
import ctypes
import json
import os
import resource
import select
import signal
import subprocess
import sys
import warnings

import torch
from torch.utils._python_dispatch import _disable_current_modes

from .methods import DTYPES, check_method, clock, inputs, make_method


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


def _glibc():
    """glibc (Linux) with ``malloc_trim``, ``mallopt``, ``mallinfo2`` (2.33+; ``_allocate_afresh``), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    if not all(hasattr(libc, name) for name in ("malloc_trim", "mallopt", "mallinfo2")):
        return None
    libc.mallinfo2.restype = _MallocInfo
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    return libc


class _MallocInfo(ctypes.Structure):  # glibc's struct mallinfo2; fordblks: the free bytes of the heap
    _NAMES = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
    _fields_ = [(name, ctypes.c_size_t) for name in _NAMES.split()]


_GLIBC = _glibc()
_M_MMAP_THRESHOLD, _GLIBC_MMAP_THRESHOLD = -3, 128 * 1024  # mallopt's parameter, glibc's initial value (bytes)
_PR_SET_THP_DISABLE = 41  # prctl's option (linux/prctl.h)


def _allocate_afresh() -> None:
    """Make the memory a call touches count as in a new interpreter, in a child forked from a long-lived process.

    That process has freed memory, which stays in its heap, and glibc serves a large block from free heap space
    before it maps new pages for it (and maps only blocks above a threshold that rises, up to 32 MiB, as blocks are
    freed). In the heap, freed memory stays resident and a later block may land elsewhere: the peak resident memory
    would depend on where blocks land, and on pages the parent paid for. So: ``malloc_trim(0)`` hands every whole
    free page back to the operating system; the threshold goes back to glibc's initial 128 KiB; and the free heap
    space is taken by blocks that are never touched, largest first, until none of 128 KiB is left. Every large block
    of the call then gets pages of its own, returned when it is freed, as in a new interpreter. And pages are 4 KiB:
    where transparent huge pages are on ("always"), one byte touched in a fresh 2 MiB of heap would make 2 MiB
    resident (seen: +2 MiB at random on a 9 MiB peak); so they are off for this process (PR_SET_THP_DISABLE)."""
    if _GLIBC is None:
        return
    _GLIBC.prctl(_PR_SET_THP_DISABLE, 1, 0, 0, 0)  # Linux >= 3.15; a refusal (-1) leaves the pages as they are
    _GLIBC.malloc_trim(0)
    _GLIBC.mallopt(_M_MMAP_THRESHOLD, _GLIBC_MMAP_THRESHOLD)
    size = _GLIBC.mallinfo2().fordblks
    for _ in range(1000):  # a few steps per free block of the heap
        if size < _GLIBC_MMAP_THRESHOLD:
            break
        free_before = _GLIBC.mallinfo2().fordblks
        block = _GLIBC.malloc(size)
        if block and _GLIBC.mallinfo2().fordblks < free_before:  # taken from free heap space: keep it, untouched
            size = min(size, _GLIBC.mallinfo2().fordblks)
        else:  # no free space that large: it got pages of its own (or nothing), give them back
            _GLIBC.free(block)
            size //= 2


def _maxrss_bytes() -> int:
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, kB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def measure_here(spec: dict) -> dict:
    """One call of one method in *this* process (a fresh child): its peak extra memory and its time."""
    torch.set_num_threads(spec["threads"])
    dtype = DTYPES[spec["dtype"]]
    shape = dict(batch=spec["batch"], heads=spec["heads"], dim=spec["dim"], dtype=dtype, device="cpu")
    opts = dict(window=spec["window"], chunk_size=spec["chunk_size"], device="cpu")
    exact = _reset_peak()  # else the all-time peak is read (ru_maxrss): a warm-up at full size would raise it
    warm = spec["n"] if exact else min(spec["n"], 64)  # warm-up: the code a first call pages in, its buffers
    make_method(spec["method"], warm, **opts)(*inputs(warm, seed=1, **shape))
    fn = make_method(spec["method"], spec["n"], **opts)
    args = inputs(spec["n"], seed=spec["seed"], **shape)
    _allocate_afresh()
    _reset_peak()
    before = _proc_status()["VmRSS"] if exact else _maxrss_bytes()
    now = clock(torch.device("cpu"))
    start = now()
    out = fn(*args)
    seconds = now() - start
    after = _proc_status()["VmHWM"] if exact else _maxrss_bytes()
    answer = {"peak_bytes": max(after - before, 0), "seconds": seconds, "exact": exact}
    if spec.get("output_after_s") is not None and seconds > spec["output_after_s"]:  # for the runner's check
        answer["output"] = (list(out.shape), base64.b64encode(out.float().numpy().tobytes()).decode())
    return answer


def serve() -> None:
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
                answer = measure_here(spec)
            except BaseException as err:  # report, never hang the parent
                answer = {"error": f"{type(err).__name__}: {err}"}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        if status != 0:  # died without answering, e.g. killed by the kernel for lack of memory
            sys.stdout.write(json.dumps(_died(status)) + "\n")
            sys.stdout.flush()


def _died(status: int) -> dict:
    code = os.waitstatus_to_exitcode(status)
    reason = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
    return {"error": f"child process {reason} (out of memory?)"}


def _measure_in_fork(spec: dict, timeout_s: float) -> dict:
    """``measure_here(spec)`` in a child forked from this process, which waits for it (and so counts its CPU)."""
    torch.broadcast_shapes((1,), (1,))  # a lazy import (~0.5 s), paid once here instead of in every child
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():  # Python >= 3.12 warns about forking a process with threads (a Jupyter kernel):
        warnings.simplefilter("ignore", DeprecationWarning)  # one OpenMP thread and no I/O of theirs in the child
        pid = os.fork()
    if pid == 0:  # the child: measure, answer through the pipe, vanish (no atexit, no Jupyter stream of the parent)
        try:
            os.close(read_end)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C (or a Jupyter interrupt) is for the parent
            try:
                with _disable_current_modes():  # a new interpreter has none (a debugging tool's, a test profile's)
                    answer = measure_here(spec)
            except BaseException as err:  # report, never hang the parent
                answer = {"error": f"{type(err).__name__}: {err}"}
            os.write(write_end, (json.dumps(answer) + "\n").encode())
        finally:
            os._exit(0)
    os.close(write_end)
    ready = []
    try:
        ready, _, _ = select.select([read_end], [], [], timeout_s)
        answer = b"".join(iter(lambda: os.read(read_end, 1 << 16), b"")) if ready else b""
    finally:  # on a timeout or an interrupt the child goes too; it is reaped here in every case
        os.close(read_end)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if not ready:
        return {"error": f"no answer within {timeout_s:.0f} s"}
    return json.loads(answer) if answer else _died(status)


_SERVER: subprocess.Popen | None = None


def start_server() -> subprocess.Popen:
    """The measuring server (started on first use, again if it stopped): a process that imports torch once."""
    global _SERVER
    if _SERVER is None or _SERVER.poll() is not None:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds course_lib/
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        _SERVER = subprocess.Popen(
            [sys.executable, "-c", "from course_lib.bench.memory import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,  # its own session: signals for the caller's process group do not reach it
        )
        atexit.register(stop_server)
    return _SERVER


def stop_server(timeout_s: float = 10.0) -> None:
    """Stop the measuring server, if one runs, and wait for it: it then ends with its caller (at exit, or a Jupyter
    kernel's shutdown), and its CPU, and that of the children it forked, is counted as the caller's."""
    global _SERVER
    server, _SERVER = _SERVER, None
    if server is None:
        return
    server.stdin.close()  # its signal to stop
    try:
        server.wait(timeout_s)
    except subprocess.TimeoutExpired:  # a child still measuring: the server and it go together
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def forks_here(threads: int) -> bool:
    """Whether a measurement with ``threads`` threads forks this process itself (Linux with glibc, one thread) rather
    than asking the server."""
    return threads == 1 and _GLIBC is not None and hasattr(os, "fork")


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
    output_after_s: float | None = None,
) -> dict:
    """Peak extra resident memory (bytes) and time (s) of one CPU call of ``method`` at length ``n``.

    Runs in a fresh child process (see the module docstring): a fork of this process where :func:`forks_here`,
    else one forked by the measuring server. Returns ``{"peak_bytes", "seconds", "exact"}``, or ``{"error":
    message}`` if the child failed (for instance killed for lack of memory). Without ``os.fork`` (Windows) each
    measurement starts a new interpreter instead: slower, same result. With ``output_after_s``, a call that took
    longer than that many seconds also returns ``"output"``, its output as a float32 tensor.
    """
    check_method(method)
    dtype_name = next(name for name, d in DTYPES.items() if d == dtype)
    spec = dict(
        method=method, n=n, batch=batch, heads=heads, dim=dim, dtype=dtype_name, window=window,
        chunk_size=chunk_size, seed=seed, threads=threads or torch.get_num_threads(),
        output_after_s=output_after_s,
    )  # fmt: skip
    return _with_output(_measure(spec, timeout_s))


def _with_output(result: dict) -> dict:
    if "output" in result:  # (shape, base64 of float32 bytes) -> a tensor
        shape, data = result["output"]
        result["output"] = torch.frombuffer(bytearray(base64.b64decode(data)), dtype=torch.float32).reshape(shape)
    return result


def _measure(spec: dict, timeout_s: float) -> dict:
    """``measure_here(spec)`` in a fresh child process, by whichever route this platform has."""
    global _SERVER
    if not hasattr(os, "fork"):
        code = f"import json; from course_lib.bench.memory import measure_here as m; print(json.dumps(m({spec!r})))"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout_s)
        if done.returncode != 0:
            return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "child failed"}
        return json.loads(done.stdout.strip().splitlines()[-1])
    if forks_here(spec["threads"]):
        return _measure_in_fork(spec, timeout_s)
    server = start_server()
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
