"""Shared fixtures: every device-aware test runs on the CPU and on each accelerator present. (The tests import the
course's tools as the package they are, `from tools import sections`: pytest puts the repository root on sys.path,
pyproject.toml's `pythonpath`.)"""

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import torch

# nbformat's validator imports jsonschema, which imports the optional rfc3987_syntax where it is installed (jupyterlab
# brings it): it compiles a Lark grammar at import, 1 to 1.7 s of CPU in each pytest process, for URI formats that
# nbformat never checks. Declared absent before a test module imports nbformat (jsonschema then skips those formats),
# as tools/warm_kernel.py does for the notebook runs; `make test-unit` leaves out nbval's plugin (-p no:nbval), which
# would import nbformat before this file. The kernels and subprocesses that the tests start never see this line.
sys.modules.setdefault("rfc3987_syntax", None)


def available_devices() -> list[str]:
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    if hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
        devices.append("mps")
    return devices


DEVICES = available_devices()

# On NVIDIA GPUs cuDNN may compute float32 convolutions and recurrent layers in TF32 (a 10-bit mantissa) by default.
# The tests compare nn.Conv2d / nn.RNN / nn.LSTM with course_lib's own float32 code at float32 tolerances, so they
# ask for full float32. (The notebooks that make such comparisons do the same in their setup cell.)
torch.backends.cudnn.allow_tf32 = False


@contextmanager
def transformer_fast_path(enabled: bool) -> Iterator[None]:
    """Turn the inference fast path of nn.TransformerEncoderLayer, nn.TransformerEncoder and nn.MultiheadAttention on
    or off for the duration, with PyTorch's documented switch (torch.backends.mha, in torch >= 2.3).

    In eval mode without autograd these modules call fused C++ kernels (torch._transformer_encoder_layer_fwd) whose
    arithmetic is not the modules' Python code: on CUDA the feed-forward network's Linear + GELU is one cuBLASLt call
    whose GELU is the tanh approximation (see test_models.fast_path_gelu). With the fast path off the modules run
    their Python code, the same operations as course_lib, on every device."""
    before = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(enabled)
    try:
        yield
    finally:
        torch.backends.mha.set_fastpath_enabled(before)


@pytest.fixture(params=DEVICES)
def device(request) -> torch.device:
    return torch.device(request.param)


def float_dtypes(device: torch.device) -> list[torch.dtype]:
    """Full-precision dtypes that `device` supports (MPS has no float64)."""
    return [torch.float32] if device.type == "mps" else [torch.float32, torch.float64]


# A fresh interpreter that has imported torch, once, for many checks that need a new interpreter (what a first import
# or a first call loads, tests/test_structure.py and tests/test_startup.py; start-up files that patch torch,
# tests/test_portability_tools.py): each snippet runs in a child forked from it, whose sys.modules is the fresh
# interpreter's after `import torch` (and the preamble) and nothing else, as in a new `python -c "import torch; ..."`,
# without paying torch's import (about 2 s of CPU) again for each. Where fork is not the platform's way (macOS,
# Windows) each snippet runs in a new interpreter of its own: slower, the same answer.
_FORK_SERVER = r"""
import json, os, sys, tempfile, traceback
import torch
preamble, snippets = json.loads(sys.stdin.read())
exec(compile(preamble, "<preamble>", "exec"), {"__name__": "__main__"})
results = {}
for name, code in snippets.items():
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush(); sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: its output goes to the two files, its exit status says whether the snippet raised
            os.dup2(out.fileno(), 1); os.dup2(err.fileno(), 2)
            status = 0
            try:
                exec(compile(code, f"<{name}>", "exec"), {"__name__": "__main__"})
            except SystemExit as stop:
                status = stop.code if isinstance(stop.code, int) else (stop.code is not None)
            except BaseException:
                traceback.print_exc(); status = 1
            sys.stdout.flush(); sys.stderr.flush()
            os._exit(status)
        _, wait = os.waitpid(pid, 0)
        out.seek(0); err.seek(0)
        results[name] = [os.waitstatus_to_exitcode(wait), out.read().decode(), err.read().decode()]
print(json.dumps(results))
"""


def run_after_importing_torch(
    snippets: dict[str, str], cwd=None, timeout: float = 300, preamble: str = ""
) -> dict[str, tuple]:
    """{name: (returncode, stdout, stderr)} of each snippet of Python run as the first thing after `import torch` (and
    ``preamble``, if given) in a fresh interpreter (one interpreter forked for all of them on Linux, one interpreter
    each elsewhere)."""
    import json
    import subprocess
    import sys

    if sys.platform != "linux":
        results = {}
        for name, code in snippets.items():
            command = [sys.executable, "-c", "\n".join(["import torch", preamble, code])]
            done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=timeout)
            results[name] = (done.returncode, done.stdout, done.stderr)
        return results
    command, given = [sys.executable, "-c", _FORK_SERVER], json.dumps([preamble, snippets])
    done = subprocess.run(command, input=given, capture_output=True, text=True, cwd=cwd, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return {name: tuple(result) for name, result in json.loads(done.stdout).items()}


@pytest.fixture
def restored():
    """(The grading tests) put back what an attack changed in what the checks rely on: attributes, functions' code,
    course tables."""
    import types

    from course_lib.classroom import snapshot

    kept = {label: (obj, dict(vars(obj))) for label, obj in snapshot._watched().items()}
    values = [value for _, entries in kept.values() for value in entries.values()]
    codes = [(f, f.__code__, f.__defaults__, dict(vars(f))) for f in values if isinstance(f, types.FunctionType)]
    tables = [(t, dict(t)) for t in values if type(t) is dict]
    yield
    for obj, entries in kept.values():
        for key, value in entries.items():
            if vars(obj).get(key, restored) is not value:
                setattr(obj, key, value)
    for f, code, defaults, attributes in codes:
        f.__code__, f.__defaults__ = code, defaults
        vars(f).clear()
        vars(f).update(attributes)
    for table, items in tables:
        table.clear()
        table.update(items)
