"""Peak memory of one CPU call, measured in a fresh child process forked by a small server (see the package
docstring: why a fresh process, and why not tracemalloc)."""

from __future__ import annotations

import atexit
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time

import torch

from .methods import DTYPES, check_method, inputs, make_method


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


def measure_here(spec: dict) -> dict:
    """One call of one method in *this* process (a fresh child): its peak extra memory and its time."""
    torch.set_num_threads(spec["threads"])
    dtype = DTYPES[spec["dtype"]]
    shape = dict(batch=spec["batch"], heads=spec["heads"], dim=spec["dim"], dtype=dtype, device="cpu")
    opts = dict(window=spec["window"], chunk_size=spec["chunk_size"], device="cpu")
    small = min(spec["n"], 64)
    make_method(spec["method"], small, **opts)(*inputs(small, seed=1, **shape))  # warm-up: lazy set-up
    fn = make_method(spec["method"], spec["n"], **opts)
    args = inputs(spec["n"], seed=spec["seed"], **shape)
    exact = _reset_peak()
    before = _proc_status()["VmRSS"] if exact else _maxrss_bytes()
    start = time.perf_counter()
    out = fn(*args)
    seconds = time.perf_counter() - start
    after = _proc_status()["VmHWM"] if exact else _maxrss_bytes()
    del out
    return {"peak_bytes": max(after - before, 0), "seconds": seconds, "exact": exact}


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
            code = os.waitstatus_to_exitcode(status)
            reason = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
            sys.stdout.write(json.dumps({"error": f"child process {reason} (out of memory?)"}) + "\n")
            sys.stdout.flush()


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
    check_method(method)
    dtype_name = next(name for name, d in DTYPES.items() if d == dtype)
    spec = dict(
        method=method, n=n, batch=batch, heads=heads, dim=dim, dtype=dtype_name, window=window,
        chunk_size=chunk_size, seed=seed, threads=threads or torch.get_num_threads(),
    )  # fmt: skip
    if not hasattr(os, "fork"):
        code = f"import json; from course_lib.bench.memory import measure_here as m; print(json.dumps(m({spec!r})))"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout_s)
        if done.returncode != 0:
            return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "child failed"}
        return json.loads(done.stdout.strip().splitlines()[-1])
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
