"""tools.warm_kernel: a kernel forked from a server that imported torch runs a notebook as a cold kernel would, gets
nbval's interrupts, and its CPU seconds are reported per notebook."""

import json
import os
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET

import nbformat

from course_lib.paths import ROOT
from tools import warm_kernel
from tools.nbval_env import nbval_environ

# What a kernel sees of itself; a cold and a warm kernel must agree on all of it but the process ids and random draws.
FACTS = """
NOT_YET = ("course_lib", "tqdm.auto", "tqdm.notebook", "matplotlib_inline", "seaborn", "ipywidgets")
import json, os, random, sys, time
import matplotlib
start = time.process_time()
while time.process_time() - start < 0.5:  # half a second of CPU, for the report
    pass
facts = {
    "cwd": os.getcwd(), "argv0": os.path.basename(sys.argv[0]), "path": sys.path,
    "env": {k: v for k, v in os.environ.items() if k not in PER_KERNEL},
    "torch before the first cell": TORCH,
    "not yet imported": sorted(m for m in NOT_YET if m in sys.modules),
    "backend": matplotlib.get_backend(), "in IPython": type(get_ipython()).__name__,
    "random": random.random(), "session": os.getsid(0) == os.getpid(),
}
with open(OUT, "w") as handle:
    json.dump(facts, handle)
"""


def run_nbval(notebook, out_dir, *, warm: bool, extra=()):
    env = {**nbval_environ(os.environ), warm_kernel.SWITCH_ENV: "1" if warm else "0"}
    junit, report = out_dir / "junit.xml", out_dir / "kernels.jsonl"
    command = [sys.executable, "-m", "pytest", "-p", "tools.warm_kernel", "--nbval-lax", "--nbval-current-env",
               "-p", "no:cacheprovider", "-q", f"--junitxml={junit}", f"--kernel-cpu-report={report}", *extra,
               str(notebook)]  # fmt: skip
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    cells = {case.get("name"): not list(case) for case in ET.parse(junit).getroot().iter("testcase")}
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    return result, cells, lines


def facts_notebook(folder, out):
    nb = nbformat.v4.new_notebook()
    first = f"import sys\nTORCH = 'torch' in sys.modules\nPER_KERNEL = {sorted(warm_kernel.PER_KERNEL)!r}\n"
    source = first + f"OUT = {str(out)!r}\n" + FACTS
    nb.cells = [nbformat.v4.new_code_cell(source)]
    path = folder / "facts.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_warm_kernel_sees_what_a_cold_one_sees_and_its_cpu_is_reported(tmp_path):
    seen = {}
    for warm in (True, False):
        out_dir = tmp_path / ("warm" if warm else "cold")
        out_dir.mkdir()
        notebook = facts_notebook(out_dir, out_dir / "facts.json")
        result, cells, lines = run_nbval(notebook, out_dir, warm=warm, extra=["--trace-config"])
        assert result.returncode == 0 and all(cells.values()), result.stdout + result.stderr
        assert "cold start" not in result.stderr, result.stderr
        registered = [line for line in result.stdout.splitlines() if line.startswith("PLUGIN registered")]
        assert any("nbval.plugin" in line for line in registered), result.stdout[:3000]
        unused = [line for line in registered for name in ("_hypothesis_pytestplugin", "anyio.pytest_plugin")
                  if name in line]  # fmt: skip
        assert unused == [], "warm_kernel.UNUSED_PLUGINS are loaded"
        seen[warm] = json.loads((out_dir / "facts.json").read_text())
        kernels = [line for line in lines if "notebook" in line]
        if warm:  # the forked kernel's own CPU: the burnt half second, not the server's imports (about 2 s)
            assert len(kernels) == 1 and kernels[0]["notebook"].endswith("facts.ipynb"), lines
            assert 0.5 <= kernels[0]["cpu"] < 2.0, kernels
            assert any(line.get("process", "").startswith("warm-kernel server") for line in lines), lines
        else:  # a cold kernel is the launcher itself: pytest counts it, the report cannot
            assert kernels == [] and not any("server" in line.get("process", "") for line in lines), lines
    warm, cold = seen[True], json.loads(json.dumps(seen[False]).replace(f"{tmp_path}/cold", f"{tmp_path}/warm"))
    key = "torch before the first cell"
    assert warm.pop(key) and not cold.pop(key), "what the server shares"
    cold["env"][warm_kernel.SWITCH_ENV] = "1"
    del warm["random"], cold["random"]
    assert warm == cold, "cwd, argv, sys.path, the whole environment, modules, backend, shell, session"
    assert warm["not yet imported"] == [] and warm["backend"].endswith("backend_inline") and warm["session"]


def test_an_interrupt_reaches_the_forked_kernel(tmp_path):
    """nbval interrupts a cell past its time-out; the launcher forwards SIGINT, so the next cell runs."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import time\ntime.sleep(120)"), nbformat.v4.new_code_cell("print('on')")]
    nbformat.write(nb, tmp_path / "sleep.ipynb")
    result, cells, lines = run_nbval(tmp_path / "sleep.ipynb", tmp_path, warm=True, extra=["--nbval-cell-timeout=5"])
    assert cells == {"Cell 0": False, "Cell 1": True}, result.stdout[-2000:]
    assert [line["notebook"] for line in lines if "notebook" in line] == [os.path.relpath(tmp_path / "sleep.ipynb")]


def test_a_kernel_whose_environment_differs_starts_cold(tmp_path, monkeypatch):
    """The server shares imports only with kernels of its own environment: another ATEN_CPU_CAPABILITY (a profile of
    tools.portability) gets a cold start, said in words."""
    monkeypatch.setattr(warm_kernel, "_server", None)
    path = warm_kernel._start_server()
    try:
        for change, cold in ({}, False), ({"ATEN_CPU_CAPABILITY": "default"}, True), ({"JPY_PARENT_PID": "1"}, False):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.connect(path)
                env = {**os.environ, **change}
                message = json.dumps({"args": [], "cwd": str(tmp_path), "env": env}).encode() + b"\n"
                conn.sendall(message)  # no streams: refused either way, with the reason
                reply = json.loads(conn.makefile("rb").readline())
            assert ("ATEN_CPU_CAPABILITY" in reply["cold"]) == cold, (change, reply)
    finally:
        warm_kernel.pytest_sessionfinish(type("Session", (), {"config": object()})())


def test_the_server_refuses_a_preload_that_reads_what_is_set_per_kernel_or_starts_a_thread(tmp_path):
    """The server imports PRELOAD under a watch of os.environ: a module that reads a name of PER_KERNEL at import (the
    kernel would see the server's value), or starts a thread (lost in the fork), stops it with the reason. A scan of
    the whole environment (tqdm's envwrap, which torch imports, looks for TQDM_* names so) is allowed."""
    modules = {
        "reads_columns": "import os\nWIDTH = int(os.environ.get('COLUMNS', '80'))\n",
        "starts_a_thread": "import threading\nthreading.Thread(target=threading.Event().wait, daemon=True).start()\n",
        "scans": "import os\nTQDM = {k: v for k, v in os.environ.items() if k.startswith('TQDM_')}\n",
    }
    for name, source in modules.items():
        (tmp_path / f"{name}.py").write_text(source)
    outcomes = {}
    for name in modules:  # serve() drops sys.path[0] (its own folder): these paths go after it
        code = (f"import sys; sys.path[1:1] = [{str(ROOT)!r}, {str(tmp_path)!r}]\nfrom tools import warm_kernel\n"
                f"warm_kernel.PRELOAD = ({name!r},)\nwarm_kernel.serve({str(tmp_path / name)!r})\n")  # fmt: skip
        env = {**os.environ, "COLUMNS": "99"}
        result = subprocess.run(
            [sys.executable, "-c", code], input="", env=env, capture_output=True, text=True, timeout=60
        )
        outcomes[name] = (result.returncode, result.stdout.strip(), result.stderr)
    assert (
        outcomes["reads_columns"][:2] == (1, "") and "read ['COLUMNS'], set per kernel" in outcomes["reads_columns"][2]
    )
    assert outcomes["starts_a_thread"][:2] == (1, "") and "started a thread" in outcomes["starts_a_thread"][2]
    assert outcomes["scans"][:2] == (0, "ready"), outcomes  # started, then stopped by its closed standard input


def test_nbval_formats_a_kernel_message_only_for_a_debug_log(caplog, monkeypatch):
    """defer_formatting: the log line that nbval writes for each kernel message is formatted only when a debug log is
    written, and then reads as before."""
    import importlib.util
    import logging
    import pprint
    import types

    source = open(importlib.util.find_spec("nbval.kernel").origin, encoding="utf-8").read()
    assert "from pprint import pformat" in source and "pformat(msg))" in source, "nbval changed: is the patch needed?"
    formatted, real = [], pprint.pformat
    monkeypatch.setattr(pprint, "pformat", lambda obj: formatted.append(obj) or real(obj))
    nbval_kernel = types.SimpleNamespace(pformat=pprint.pformat)  # what nbval.kernel holds: pprint's function
    warm_kernel.defer_formatting(nbval_kernel)
    logger, message = logging.getLogger("nbval-stand-in"), {"content": {"data": {"image/png": "iVBOR" * 100}}}
    with caplog.at_level(logging.INFO, logger="nbval-stand-in"):
        logger.debug("Kernel message (%s):\n%s", "iopub", nbval_kernel.pformat(message))
    assert formatted == [] and caplog.records == []
    with caplog.at_level(logging.DEBUG, logger="nbval-stand-in"):
        logger.debug("Kernel message (%s):\n%s", "iopub", nbval_kernel.pformat(message))
    assert formatted and all(obj is message for obj in formatted)  # once per handler that writes the record
    assert caplog.records[0].getMessage() == f"Kernel message (iopub):\n{real(message)}"
    warm_kernel.defer_formatting(nbval_kernel)  # once only: a deferred pformat is not deferred again
    assert nbval_kernel.pformat is warm_kernel._Formatted


def test_a_kernel_that_does_not_start_is_tried_again_and_its_stderr_is_said(capsys):
    """steady_start: nbval's start, given a longer wait; a failed start prints its reason with the kernel's stderr and
    is tried once more; two failures raise with both reasons; nbval's own /dev/null for stderr is replaced."""
    import types

    calls = []

    def fake_start(startup_timeout=60, kernel_name="python", **kwargs):
        calls.append((startup_timeout, kwargs["stderr"]))
        kwargs["stderr"].write(f"zmq.error.ZMQError: Address already in use (try {len(calls)})\n")
        kwargs["stderr"].flush()
        if len(calls) < failures:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "km", "kc"

    for failures, tries in ((2, 2), (3, 2)):
        calls.clear()
        nbval_kernel = types.SimpleNamespace(start_new_kernel=fake_start)
        warm_kernel.steady_start(nbval_kernel)
        start = nbval_kernel.start_new_kernel
        warm_kernel.steady_start(nbval_kernel)  # once only
        assert nbval_kernel.start_new_kernel is start
        args = {"startup_timeout": 60, "kernel_name": ":nbval-parent-env", "stderr": open(os.devnull, "w")}
        if failures <= tries:
            assert start(**args) == ("km", "kc")
        else:
            try:
                start(**args)
            except RuntimeError as error:
                assert "try 1: Kernel died" in str(error) and "try 2: Kernel died" in str(error)
                assert "Address already in use (try 2)" in str(error)
            else:
                raise AssertionError("two failed starts must raise")
        assert len(calls) == min(failures, tries)
        assert all(timeout == warm_kernel.STARTUP_TIMEOUT and stderr.name != os.devnull for timeout, stderr in calls)
        printed = capsys.readouterr().err
        assert "a kernel did not start (try 1: Kernel died" in printed and "Address already in use (try 1)" in printed


def test_the_command_line_says_how_to_use_it():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "warm_kernel.py")], capture_output=True, text=True)
    assert result.returncode != 0 and "usage:" in result.stderr
