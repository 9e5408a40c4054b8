"""Warm kernels for strict nbval: every notebook still runs in a fresh kernel process of its own, but that process is
forked from a server that has already imported torch, so a test run pays torch's import once, not once per notebook.

Why: a kernel that imports torch, NumPy and matplotlib costs 2.4 s of CPU on this course's faster machine (Zen 5) and
about twice that on CI's before the notebook's first line runs (2026-12): fifteen notebooks paid over a minute of CPU,
a third of the course's budget of three minutes (issue 42), for the same imports fifteen times.

What stays as it was, so that strict nbval compares what a fresh kernel computes:
- each notebook has its own process, started when nbval asks for a kernel, in which no cell of any notebook has run;
- its environment, working directory, ``sys.argv`` and ``sys.path`` are those of a cold ``python -m
  ipykernel_launcher``; IPython's shell, the kernel, the inline backend and IPython's start-up files are set up after
  the fork (the server imports IPython's modules and the libraries under ipykernel, not ipykernel: see PRELOAD);
- nothing that reads the environment at import is shared with a kernel whose environment differs: the server compares
  the kernel's environment with its own (all but PER_KERNEL, the variables set per kernel) and on any difference the
  kernel starts cold, the ordinary way, with a line on stderr. Each profile of tools.portability (ATEN_CPU_CAPABILITY,
  MKL_CBWR, start-up files...) runs its own pytest, hence its own server with that environment;
- PRELOAD holds only modules that read none of PER_KERNEL at import (the server watches os.environ while it imports
  them and refuses to start if one does), start no thread at import (a thread does not survive a fork; also refused)
  and do not ask whether IPython runs them; course_lib is not among them (a notebook that checks what ``import
  course_lib`` loads sees a fresh import);
- Python's and NumPy's global random states are seeded afresh in each kernel, as a new interpreter's are.

The CPU is still counted, and per notebook: the server reaps each kernel with ``os.wait4`` and is itself reaped by the
pytest process that started it, so ``/usr/bin/time pytest ...`` includes every kernel; with ``--kernel-cpu-report
FILE`` each kernel's CPU seconds (its notebook named), each server's own (the shared imports) and each pytest
process's own are appended to FILE as JSON lines, which ``python -m tools.notebook_times`` reads.

How it is used: ``pytest -p tools.warm_kernel --nbval ...`` (the Makefile's NBVAL_FLAGS, tools.portability). The
plugin starts one server per run: in pytest-xdist's controller before its workers start (they inherit its socket), or
without xdist when the first kernel is asked for. It points nbval's current-environment kernel at this file's
launcher, which hands the server its standard streams, working directory, environment and connection file, forwards
the signals that jupyter_client sends (interrupts, shutdown) to the kernel and exits with its exit status.
``COURSE_WARM_KERNEL=0`` starts every kernel cold (the launcher becomes it; pytest counts its CPU, the report cannot).
Standard library only below the plugin: the launcher starts in milliseconds.
"""

from __future__ import annotations

import array
import json
import os
import resource
import select
import signal
import socket
import sys
import time

SOCKET_ENV = "COURSE_WARM_KERNEL_SOCKET"
SWITCH_ENV = "COURSE_WARM_KERNEL"  # "0": every kernel starts cold
REPORT_ENV = "COURSE_KERNEL_CPU_REPORT"  # a JSON-lines file: each kernel's CPU seconds, and each process's own
NOTEBOOK_ENV = "COURSE_KERNEL_NOTEBOOK"  # the notebook a kernel runs, for the report
# Set per kernel or per worker (by jupyter_client; this plugin; pytest: the test running now; nbval: the terminal's
# size; pytest-xdist: the worker's name, count and run id). No PRELOAD module reads them at import.
PER_KERNEL = frozenset(
    {SOCKET_ENV, NOTEBOOK_ENV, "JPY_PARENT_PID", "JPY_SESSION_NAME", "PYTEST_CURRENT_TEST", "COLUMNS", "LINES"}
    | {"PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"}
)
# What the server imports once (about 4 s of CPU on CI's machine). First what every kernel imports before the notebook's
# first line, as a cold kernel does (0.06 s of CPU a kernel here): IPython (its modules; the shell is made in the
# kernel) and the libraries under ipykernel: pyzmq (no context is made at import), tornado, traitlets, jupyter_client
# and jupyter_core, pygments. Not ipykernel itself (its defaults come from variables set per kernel: parent_handle from
# JPY_PARENT_PID), nor debugpy, which ipykernel imports for its debugger (pydevd patches and warns at import). Then
# torch; torch.distributed.tensor, which torch.testing.assert_close imports on its first call (with sympy: 0.8 s here,
# in every notebook); torch._dynamo, which a torch.optim optimizer imports when it is made (0.8 s, in every notebook
# that trains); matplotlib's pyplot (its backend is chosen at the first figure, in the kernel). Not those that ask at
# import whether IPython runs them: tqdm.auto, matplotlib_inline, ipywidgets. tests/test_warm_kernel.py checks that
# none of those is loaded before the first cell.
KERNEL_STACK = ("IPython", "zmq", "tornado", "traitlets", "jupyter_core", "jupyter_client", "pygments")
PRELOAD = (*KERNEL_STACK, "numpy", "torch", "torch.nn", "torch.distributed.tensor", "torch._dynamo")
PRELOAD += ("matplotlib.pyplot",)
NOT_PRELOADED = ("ipykernel", "debugpy", "ipywidgets", "comm", "tqdm.auto", "matplotlib_inline", "course_lib")
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"  # what ipykernel puts in MPLBACKEND where it is unset
MAX_MESSAGE = 1 << 20


# --------------------------------------------------------------------------------------------------- the launcher
def launch(kernel_args: list[str]) -> int:
    """Run one kernel, forked by the server where it can be, else a cold ``python -m ipykernel_launcher`` in this
    process; forward the signals that jupyter_client sends (interrupts, shutdown) and exit as the kernel does."""
    pid, reader = _ask_server(kernel_args)
    if pid is None:
        os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *kernel_args])
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, lambda signum, _frame: _forward(pid, signum))
    ended = json.loads(reader.readline() or b'{"status": 1}')  # written when the server reaps the kernel
    return int(ended["status"])


def _ask_server(kernel_args: list[str]):
    """(the forked kernel's pid, the connection its end will be read from), or (None, None) for a cold start."""
    path = os.environ.get(SOCKET_ENV)
    if not path:
        return None, None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        request = {"args": kernel_args, "cwd": os.getcwd(), "env": dict(os.environ)}
        fds = array.array("i", [0, 1, 2])
        conn.sendmsg([json.dumps(request).encode() + b"\n"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        reader = conn.makefile("rb")
        reply = json.loads(reader.readline() or b'{"cold": "no reply"}')
    except OSError as error:
        reply = {"cold": f"no server ({error})"}
    if "cold" in reply:
        print(f"warm_kernel: a cold start: {reply['cold']}", file=sys.stderr, flush=True)
        conn.close()
        return None, None
    return reply["pid"], reader


def _forward(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code  # killed by signal N: 128 + N, as a shell says


def report(entry: dict) -> None:
    """Append one JSON line to the CPU report, if one was asked for (``--kernel-cpu-report``)."""
    path = os.environ.get(REPORT_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


# ----------------------------------------------------------------------------------------------------- the server
def serve(path: str) -> None:
    """Import PRELOAD, listen on ``path`` and fork one kernel per request until standard input closes (the plugin's
    way to stop it, which also happens when pytest dies) or SIGTERM comes."""
    import threading

    del sys.path[0]  # this file's folder: a kernel's sys.path starts with the standard library, as ipykernel leaves it
    base_env = dict(os.environ)
    if "MPLBACKEND" not in os.environ:  # matplotlib reads it at import: as the kernel will set it
        os.environ["MPLBACKEND"] = INLINE_BACKEND
    threads, (read, environ) = threading.active_count(), _watch_environ(PER_KERNEL)
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:  # a torch built without torch.distributed (some macOS and Windows builds)
            pass
    os.environ = environ  # noqa: B003 - the real one back: the watching view shared its storage
    early = [name for name in NOT_PRELOADED if name in sys.modules]
    if early:  # a new release of a PRELOAD module imports one of them: say so, and let pytest stop
        sys.exit(f"warm_kernel: PRELOAD imported {early}, which must be imported in the kernel (tools/warm_kernel.py)")
    if read or threading.active_count() != threads:  # or one that reads what differs per kernel, or starts a thread
        what = f"read {sorted(read)}, set per kernel," if read else "started a thread"
        sys.exit(f"warm_kernel: PRELOAD {what} at import: it must be imported in the kernel (tools/warm_kernel.py)")
    os.environ.clear()
    os.environ.update(base_env)

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    kernels: dict[int, tuple[socket.socket, str, float]] = {}  # pid -> its launcher's connection, notebook, start

    def ended(pid: int, status: int, usage) -> None:
        if pid in kernels:
            conn, notebook, start = kernels.pop(pid)
            _send(conn, {"status": _exit_code(status)})
            conn.close()
            wall = round(time.perf_counter() - start, 3)
            report({"notebook": notebook, "cpu": usage.ru_utime + usage.ru_stime, "wall": wall})

    def reap(_signum=None, _frame=None) -> None:
        while True:  # the kernels, and any orphan of theirs adopted here (_become_subreaper)
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            ended(pid, status, usage)

    def stop(_signum=None, _frame=None) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        for pid in [*kernels, *_own_children()]:  # the kernels, then orphans they left (a bench's measuring server)
            _forward(pid, signal.SIGKILL)
        while True:
            try:
                ended(*os.wait4(-1, 0))
            except ChildProcessError:
                break
        listener.close()
        own = resource.getrusage(resource.RUSAGE_SELF)
        report({"process": "warm-kernel server (the shared imports)", "cpu": own.ru_utime + own.ru_stime})
        os._exit(0)

    _become_subreaper()
    signal.signal(signal.SIGCHLD, reap)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for pytest, which then stops this server
    print("ready", flush=True)
    while True:  # until the plugin closes this process's standard input (or pytest ends without closing it)
        readable, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 1):
            stop()
        if listener not in readable:
            continue
        conn, _ = listener.accept()
        try:
            request, fds = _receive(conn)
        except (OSError, ValueError) as error:  # not a launcher's request
            print(f"warm_kernel: a request refused: {error}", file=sys.stderr, flush=True)
            conn.close()
            continue
        env = request["env"]
        differs = sorted(k for k in {*env, *base_env} - PER_KERNEL if env.get(k) != base_env.get(k))
        if differs or len(fds) != 3:
            reason = f"the kernel's environment differs in {differs}" if differs else "no streams"
            print(f"warm_kernel: a cold start: {reason}", file=sys.stderr, flush=True)
            _send(conn, {"cold": reason})
            conn.close()
            for fd in fds:
                os.close(fd)
            continue
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})  # the kernel is registered before it is reaped
        pid = os.fork()
        if pid == 0:
            listener.close()
            for other, _notebook, _start in kernels.values():
                other.close()
            _become_kernel(request, fds, conn)
        for fd in fds:
            os.close(fd)
        kernels[pid] = (conn, env.get(NOTEBOOK_ENV) or "", time.perf_counter())
        _send(conn, {"pid": pid})
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})


def _watch_environ(names) -> tuple[set[str], os._Environ]:
    """Put in os.environ's place a view of the same environment that notes which of ``names`` are read by name through
    it (``os.getenv``, ``os.environ.get``, ``[]``, ``in``); (the names read, the real os.environ to put back). A scan
    of the whole environment is no read of a name (``items()``: tqdm's envwrap looks for TQDM_* names that way, in
    every process that imports torch), and reads from C code (getenv) are not seen: the names set per kernel are
    Jupyter's, pytest's and the terminal's."""
    read: set[str] = set()
    environ = os.environ

    class Watched(type(environ)):
        listed = None  # the key a scan (items(), values(), dict()) has just listed, and reads next

        def __iter__(self):
            for key in super().__iter__():
                self.listed = key
                yield key
            self.listed = None

        def __getitem__(self, key):
            if key in names and key != self.listed:
                read.add(key)
            return super().__getitem__(key)

        def __contains__(self, key):
            if key in names:
                read.add(key)
            return super().__contains__(key)

    view = Watched(environ._data, environ.encodekey, environ.decodekey, environ.encodevalue, environ.decodevalue)
    os.environ = view  # noqa: B003 - not a new environment: a view of the same storage (putenv and unsetenv as before)
    return read, environ


def _become_subreaper() -> None:
    """Make this process adopt its descendants' orphans. A kernel that nbval kills can leave a child running for a
    moment (course_lib.bench's measuring server, which ends when its input closes): adopted here, it is reaped here,
    so its CPU is counted with the run's, not lost to init. Linux only (prctl PR_SET_CHILD_SUBREAPER); elsewhere the
    orphans go to init as before."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)


def _own_children() -> list[int]:
    """The ids of this process's children, from /proc (Linux; elsewhere none)."""
    me, children = str(os.getpid()), []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:  # not a process, or one that has just ended
            continue
        if stat[stat.rfind(")") + 2 :].split()[1] == me:
            children.append(int(entry))
    return children


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds = b"", []
    while not data.endswith(b"\n") and len(data) < MAX_MESSAGE:
        chunk, ancillary, _flags, _addr = conn.recvmsg(65536, socket.CMSG_LEN(3 * array.array("i").itemsize))
        if not chunk:
            break
        data += chunk
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += array.array("i", payload[: len(payload) - len(payload) % 4]).tolist()
    return json.loads(data), fds


def _send(conn: socket.socket, message: dict) -> None:
    try:
        conn.sendall(json.dumps(message).encode() + b"\n")
    except OSError:
        pass  # the launcher is gone: nobody waits for the answer


def _become_kernel(request: dict, fds: list[int], conn: socket.socket) -> None:
    """In the forked child: take the launcher's streams, directory, environment and arguments, then run ipykernel as
    ``python -m ipykernel_launcher`` does. Never returns."""
    import importlib.util
    import random
    import threading

    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        os.setsid()  # a session of its own, as jupyter_client starts a kernel (Ctrl-C in a terminal never reaches it)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [importlib.util.find_spec("ipykernel_launcher").origin, *request["args"]]
        random.seed()
        if "numpy.random" in sys.modules:
            sys.modules["numpy.random"].seed()

        def lifeline() -> None:  # the launcher holds the other end: if it dies (SIGKILL), so does this kernel
            try:
                conn.recv(1)
            except OSError:
                pass
            os._exit(1)

        threading.Thread(target=lifeline, name="warm-kernel-lifeline", daemon=True).start()
        from ipykernel import kernelapp

        try:
            kernelapp.launch_new_instance()
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        import atexit

        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream: nothing left to flush
                pass
        os._exit(code)


# ----------------------------------------------------------------------------------------------------- the plugin
# ----------------------------------------------------------------------------------------------------- the plugin
if __name__ != "__main__":
    # nbval reads notebooks with nbformat, which imports jsonschema, which imports the optional rfc3987_syntax if it is
    # installed (jupyterlab brings it): it compiles a Lark grammar at import, 1.3 s of CPU in each pytest process of a
    # notebook run (three with two workers), for URI formats that nbformat never checks. Plugins named with -p are
    # imported before installed ones such as nbval, so here the module can be declared absent (jsonschema then skips
    # those two formats). Only in pytest's processes: the server and its kernels never see this line.
    sys.modules.setdefault("rfc3987_syntax", None)

# pytest plugins installed with the dev tools that a notebook run never uses, kept out of its pytest processes:
# hypothesis's imports the whole of hypothesis for its terminal summary (0.2 s of CPU in each pytest process, 0.8 s
# where pytest cannot cache its rewritten modules, e.g. under PYTHONDONTWRITEBYTECODE: 126 of them rewritten each
# time), anyio's asks at start-up which async back-ends are installed. A -p plugin is registered before the installed
# ones are loaded, so blocking them in pytest_addoption (called at its registration) keeps them from loading at all.
UNUSED_PLUGINS = ("hypothesispytest", "anyio")

_server = None  # (the server's process, its socket) in this pytest process, once started
_notebook = None  # the notebook whose kernel nbval starts next


def pytest_addoption(parser, pluginmanager) -> None:
    for name in UNUSED_PLUGINS:
        pluginmanager.set_blocked(name)
    parser.addoption(
        "--kernel-cpu-report",
        metavar="FILE",
        help="append each notebook kernel's CPU seconds, and each process's own, to FILE (JSON lines)",
    )


def pytest_configure(config) -> None:
    path = config.getoption("--kernel-cpu-report")
    if path:
        os.environ[REPORT_ENV] = os.path.abspath(path)
        if not hasattr(config, "workerinput"):  # the controller (or a run without xdist) starts the file afresh
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            open(path, "w").close()
    try:
        from nbval import kernel as nbval_kernel
        from nbval.kernel import NbvalKernelspecManager
        from nbval.plugin import IPyNbFile
    except ImportError:
        return
    defer_formatting(nbval_kernel)
    steady_start(nbval_kernel)
    if getattr(config.option, "numprocesses", None) and os.environ.get(SWITCH_ENV) != "0":
        # pytest-xdist's controller, before it starts its workers: one server for all of them (each worker's kernels
        # are forked from it: its imports are paid once per run, not once per worker); the workers inherit its socket
        os.environ[SOCKET_ENV] = _start_server()
    get_spec, setup = NbvalKernelspecManager.get_kernel_spec, IPyNbFile.setup

    def get_kernel_spec(self, kernel_name):
        spec = get_spec(self, kernel_name)
        if spec.argv[1:3] == ["-m", "ipykernel_launcher"] and spec.argv[0] == sys.executable:
            spec.argv = [sys.executable, os.path.abspath(__file__), "launch", *spec.argv[3:]]
            spec.env = {**(spec.env or {}), NOTEBOOK_ENV: _notebook or ""}
            if os.environ.get(SWITCH_ENV) != "0":
                spec.env[SOCKET_ENV] = os.environ.get(SOCKET_ENV) or _start_server()
        return spec

    def setup_notebook(self):
        global _notebook
        _notebook = os.path.relpath(str(self.fspath))
        return setup(self)

    NbvalKernelspecManager.get_kernel_spec = get_kernel_spec
    IPyNbFile.setup = setup_notebook


# A kernel's start: the seconds nbval waits for it (its default, 60, is what a loaded machine can take: CI's busy
# profile once failed there, issue 44) and the tries before a notebook's cells are all reported as errors.
STARTUP_TIMEOUT = 300
START_TRIES = 2


def steady_start(module) -> None:
    """nbval's kernel start (``module`` is nbval.kernel), made to say why it failed and to try again: a kernel's TCP
    ports are chosen by the pytest process, closed, then bound by the kernel, and another process may take one in
    between (the likelier the busier the machine); a loaded machine may also take long. A start that fails is said,
    with what the kernel wrote to stderr (nbval sends it to /dev/null), and tried once more with new ports; a second
    failure raises with both reasons. (IPC sockets would avoid the ports, but jupyter_client names them relative to
    the working directory, which differs between the kernel and pytest.)"""
    start_new_kernel = module.start_new_kernel
    if getattr(start_new_kernel, "steady", False):
        return
    import tempfile

    def start(startup_timeout=60, kernel_name="python", **kwargs):
        reasons = []
        for attempt in range(1, START_TRIES + 1):
            with tempfile.TemporaryFile("w+") as stderr:
                try:
                    wait = max(startup_timeout, STARTUP_TIMEOUT)
                    return start_new_kernel(wait, kernel_name, **{**kwargs, "stderr": stderr})
                except RuntimeError as error:
                    stderr.seek(0)
                    said = " | ".join(stderr.read().strip().splitlines()[-8:]) or "nothing"
                    reasons.append(f"try {attempt}: {error}; the kernel's stderr: {said}")
                    print(f"warm_kernel: a kernel did not start ({reasons[-1]})", file=sys.stderr, flush=True)
        raise RuntimeError("a kernel did not start in " + str(START_TRIES) + " tries: " + "; ".join(reasons))

    start.steady = True
    module.start_new_kernel = start


class _Formatted:
    """``pprint.pformat(obj)``, computed when a log record is written, not before: see defer_formatting."""

    __slots__ = ("obj",)

    def __init__(self, obj) -> None:
        self.obj = obj

    def __str__(self) -> str:
        import pprint

        return pprint.pformat(self.obj)


def defer_formatting(module) -> None:
    """nbval's ``get_message`` logs every kernel message as ``logger.debug("...%s", stream, pformat(msg))``, which
    pretty-prints the message (a figure's PNG in base64 among them) whether or not debug logging is on: a fifth of a
    pytest process's CPU in a notebook run, about 0.1 s a notebook here. With ``module.pformat`` (the name nbval.kernel
    calls) deferred, a debug log shows the same text, and without one nothing is formatted."""
    import pprint

    if getattr(module, "pformat", None) is pprint.pformat:
        module.pformat = _Formatted


def _start_server() -> str:
    """The socket of this process's server, started on first use (it prints "ready" once PRELOAD is imported)."""
    global _server
    if _server is None:
        _server = start_server()
    return _server[1]


def start_server(env: dict | None = None):
    """A server (its process, its socket) whose environment is ``env`` (default: this process's): it forks only kernels
    whose environment equals it, but for PER_KERNEL. Stop it with :func:`stop_server`."""
    import subprocess
    import tempfile

    path = os.path.join(tempfile.mkdtemp(prefix="warm-kernel-"), "socket")
    command = [sys.executable, os.path.abspath(__file__), "serve", path]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    if process.stdout.readline().strip() != b"ready":
        process.wait()
        raise RuntimeError(f"the warm-kernel server did not start (exit status {process.returncode})")
    return process, path


def stop_server(process, path: str) -> None:
    """Stop a server of :func:`start_server`: it kills and reaps what is left, reports, and exits; its kernels' CPU time
    reaches this process's RUSAGE_CHILDREN here."""
    import subprocess

    process.stdin.close()  # the server's signal to stop
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        print("warm_kernel: the server did not stop within 60 s: killed", file=sys.stderr)
        process.kill()
        process.wait()
    process.stdout.close()
    os.unlink(path)
    os.rmdir(os.path.dirname(path))


def kernelspec(folder: str, socket_path: str) -> str:
    """A Jupyter data folder whose ``python3`` kernel is this file's launcher, asking the server at ``socket_path``:
    put it first on JUPYTER_PATH, for a program that starts kernels by name (nbgrader). Returns ``folder``."""
    spec = os.path.join(folder, "kernels", "python3")
    os.makedirs(spec, exist_ok=True)
    argv = [sys.executable, os.path.abspath(__file__), "launch", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "Python 3 (forked warm)", "language": "python",
              "env": {SOCKET_ENV: socket_path}, "metadata": {"debugger": False}}  # fmt: skip
    with open(os.path.join(spec, "kernel.json"), "w", encoding="utf-8") as handle:
        json.dump(kernel, handle)
    return folder


def pytest_sessionfinish(session) -> None:
    """Stop the server and report this process's CPU (here, not at unconfigure: an xdist worker may be stopped by
    then)."""
    global _server
    if _server is not None:
        stop_server(*_server)
        _server = None
    if os.environ.get(REPORT_ENV):
        own = resource.getrusage(resource.RUSAGE_SELF)
        worker = getattr(session.config, "workerinput", {}).get("workerid")
        report({"process": f"pytest {worker or 'main'}", "cpu": own.ru_utime + own.ru_stime})


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2])
    elif sys.argv[1:2] == ["launch"]:
        sys.exit(launch(sys.argv[2:]))
    else:
        sys.exit("usage: warm_kernel.py serve SOCKET | launch -f CONNECTION_FILE")
