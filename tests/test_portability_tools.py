"""The tools behind issue 16's checks: tools.portability (strict nbval under CPU profiles), tools.oldest_requirements
(the oldest versions pyproject.toml allows), and tools.nbval_env, the one environment of every strict nbval run."""

import json
import os
import re
import shutil
import subprocess

import pytest
from conftest import run_after_importing_torch

from course_lib.paths import ROOT
from tools import exercise_check, nbval_env, portability
from tools import oldest_requirements as oldest

# A shell that would compute otherwise: on a GPU, many threads, matplotlib's Agg backend (inline figures vanish).
OTHER_SHELL = {**os.environ, "COURSE_DEVICE": "cuda", "OMP_NUM_THREADS": "8", "MPLBACKEND": "Agg"}
STRICT = {"COURSE_DEVICE": "cpu", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def test_the_nbval_environment_is_the_strict_runs():
    env = nbval_env.nbval_environ(OTHER_SHELL)
    assert {name: env[name] for name in STRICT} == STRICT and "MPLBACKEND" not in env
    assert env["PATH"] == os.environ["PATH"], "everything else stays as it was"
    assert nbval_env.env_prefix() == (
        "env -u MPLBACKEND COURSE_DEVICE=cpu PYTHONHASHSEED=0 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1"
    )


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_make_test_runs_nbval_in_that_environment():
    """The Makefile's NBVAL_ENV, as its nbval commands see it (read by the system Python from tools/nbval_env.py)."""
    recipe = "nbval-env-probe:\n\t@$(NBVAL_ENV) env -0"
    cmd = ["make", "-s", "--no-print-directory", "--eval", recipe, "nbval-env-probe"]
    done = subprocess.run(cmd, cwd=ROOT, env=OTHER_SHELL, capture_output=True, text=True, check=True)
    seen = dict(item.split("=", 1) for item in done.stdout.split("\0") if "=" in item)
    names = [*STRICT, *nbval_env.UNSET]
    assert {n: seen.get(n) for n in names} == {n: nbval_env.nbval_environ(OTHER_SHELL).get(n) for n in names}


def test_portability_and_the_graders_run_nbval_in_that_environment(tmp_path, monkeypatch):
    """Every portability profile starts from it (native adds nothing), and the grader's kernels get it."""
    seen = {}

    def fake_run(cmd, env, **kwargs):
        seen["portability"] = env

    class FakeClient:
        def __init__(self, nb, **kwargs):
            pass

        def execute(self, **kwargs):
            seen["exercise_check"] = kwargs["env"]

    for name in ("COURSE_DEVICE", "OMP_NUM_THREADS", "MPLBACKEND"):
        monkeypatch.setenv(name, OTHER_SHELL[name])
    monkeypatch.setattr(portability.subprocess, "run", fake_run)
    monkeypatch.setattr("nbclient.NotebookClient", FakeClient)
    native = next(p for p in portability.PROFILES if p.name == "native")
    portability.run_profile(native, ["notebooks/00_start_here.ipynb"], 1, tmp_path)
    exercise_check.execute(None, str(tmp_path))
    expected = nbval_env.nbval_environ(os.environ)
    assert {name: expected[name] for name in STRICT} == STRICT and "MPLBACKEND" not in expected
    assert seen == {"portability": expected, "exercise_check": expected}
    scalar = next(p for p in portability.PROFILES if p.name == "scalar")
    portability.run_profile(scalar, ["notebooks/00_start_here.ipynb"], 1, tmp_path)
    assert seen["portability"] == {**expected, **scalar.env}


def test_profiles_cover_what_the_issue_asks_for():
    envs = {p.name: p.env for p in portability.PROFILES}
    assert envs["native"] == {}
    assert envs["avx2"]["ATEN_CPU_CAPABILITY"] == "avx2"
    assert envs["scalar"]["ATEN_CPU_CAPABILITY"] == "default" and envs["scalar"]["MKL_CBWR"] == "COMPATIBLE"
    assert envs["threads2"]["OMP_NUM_THREADS"] == "2"
    rounding = [p for p in portability.PROFILES if p.startup == "rounding_startup.py"]
    assert len({p.env["COURSE_ROUNDING_SALT"] for p in rounding}) >= 2  # at least two machines' rounding
    assert any(p.busy for p in portability.PROFILES)
    assert all(p.name in portability.DEFAULT_PROFILES for p in portability.PROFILES)


@pytest.mark.parametrize(
    "name, capability, expected",
    [
        ("avx512", "AVX2", False),  # a CPU without AVX-512 cannot run its kernels: it would compute like native
        ("avx512", "AVX512", False),  # that is native
        ("avx2", "AVX512", True),
        ("avx2", "AVX2", False),
        ("scalar", "AVX2", True),
        ("threads2", "DEFAULT", True),
    ],
)
def test_a_profile_runs_only_where_it_differs_from_native(name, capability, expected):
    profile = next(p for p in portability.PROFILES if p.name == name)
    assert portability.differs_here(profile, capability) is expected


def test_failing_cells_are_read_from_the_junit_report(tmp_path):
    report = tmp_path / "r.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="notebooks.02_limits_of_rnns.ipynb" name="Cell 16"><failure message="x"/></testcase>'
        '<testcase classname="notebooks.02_limits_of_rnns.ipynb" name="Cell 17"/>'
        '<testcase classname="notebooks.08_efficient_attention.ipynb" name="Cell 6"><error message="y"/></testcase>'
        "</testsuite></testsuites>"
    )
    ran, failed = portability.failing_cells(report)
    assert ran == 3
    assert failed == ["02_limits_of_rnns.ipynb::Cell 16", "08_efficient_attention.ipynb::Cell 6"]
    assert portability.failing_cells(tmp_path / "missing.xml")[1]  # no report is a failure, not a pass


def test_a_failing_cells_diff_is_shown_and_threads_never_outnumber_cores(tmp_path, monkeypatch):
    log = tmp_path / "threads2.log"
    log.write_text(
        ".F\n=== FAILURES ===\n"
        "_____ notebooks/02_limits_of_rnns.ipynb::Cell 1 _____\nother cell\n"
        "_____ notebooks/02_limits_of_rnns.ipynb::Cell 16 _____\n\x1b[94mCell 16: Cell outputs differ\x1b[0m\n"
        "  - 3\n  + 2\n"
    )
    shown = portability.failure_excerpts(log, ["02_limits_of_rnns.ipynb::Cell 16"], lines=3)
    assert [line.strip("| ") for line in shown][1:] == ["Cell 16: Cell outputs differ", "- 3"]
    assert portability.failure_excerpts(tmp_path / "missing.log", ["x::Cell 1"]) == []
    log.write_text(  # a kernel that did not start: the reason is the report's last error line, past the first lines
        "_____ ERROR at setup of notebooks/08_efficient_attention.ipynb::Cell 0 _____\n"
        + "".join(f"traceback line {i}\n" for i in range(60))
        + "E   RuntimeError: a kernel did not start in 2 tries: ...\n"
        + "_____ ERROR at setup of notebooks/08_efficient_attention.ipynb::Cell 1 _____\nE   another\n"
    )
    shown = portability.failure_excerpts(log, ["08_efficient_attention.ipynb::Cell 0"], lines=5)
    assert len(shown) == 6 and shown[-1].endswith("E   RuntimeError: a kernel did not start in 2 tries: ...")

    by_name = {p.name: p for p in portability.PROFILES}
    monkeypatch.setattr(portability.os, "cpu_count", lambda: 2)
    assert portability.workers_for(by_name["native"], 2) == 2
    assert portability.workers_for(by_name["threads2"], 2) == 1  # 2 x 2 threads on 2 cores spin for an hour
    assert portability.workers_for(by_name["threads3"], 4) == 1
    monkeypatch.setattr(portability.os, "cpu_count", lambda: 8)
    assert portability.workers_for(by_name["threads2"], 2) == 2


JITTER_CHECK = """
import sys
import torch
plain = torch.randn(20000, generator=torch.Generator().manual_seed(3))
exec(open(sys.argv[1]).read())
torch.manual_seed(3); a = torch.randn(20000)
torch.manual_seed(3); b = torch.randn(20000)
assert torch.equal(a, b), "same seed, same numbers"
torch.manual_seed(3); c = torch.randn(20000, dtype=torch.float64)
assert torch.equal(c, torch.randn(20000, dtype=torch.float64, generator=torch.Generator().manual_seed(3)))
step = (a - plain).abs() / 2**-23
assert float(step.max()) <= 4, "at most 4 * 2**-23"
assert 0.6 < float((step > 0).float().mean()) < 0.8, "about three quarters of the entries move"
print("ok")
"""


ROUNDING_CHECK = """
import sys
import torch
exec(open(sys.argv[1]).read())
g = torch.Generator().manual_seed(0)
a, b = torch.rand(64, 64, generator=g), torch.rand(64, 64, generator=g)
with torch.utils._python_dispatch._disable_current_modes():  # the plain arithmetic, for comparison
    plain, plain_exp = a @ b, a.exp()
moved = a @ b
ulp = (moved.view(torch.int32) - plain.view(torch.int32)).abs()
print("max ulp", int(ulp.max()))
print("moved share", round(float((ulp > 0).float().mean()), 1))
print("same inputs same bits", torch.equal(a @ b, moved))
print("sum of two exact", torch.equal(a + b, (a.double() + b.double()).float()))
print("integers stay", torch.equal(torch.ones(8, 8).sum(-1), torch.full((8,), 8.0)))
x = a.clone().requires_grad_()
(x @ b).sum().backward()  # backward: the gradient of sum(x @ b) is ones @ b^T, a product that moves too
with torch.utils._python_dispatch._disable_current_modes():
    exact_grad = torch.ones(64, 64) @ b.t()
print("backward moved", not torch.equal(x.grad, exact_grad))
c = torch.complex(a[:2, :2].double() / 3, b[:2, :2].double() / 7)  # complex (not moved), all 52 bits in use
before = c.clone()
r = torch.view_as_real(c)  # a view of c (aliases it): moving it would move c
print("views leave their input alone", torch.equal(c, before) and torch.equal(r[..., 0], a[:2, :2].double() / 3))
same = torch.equal(a.clone().exp_(), a.exp()) and torch.equal(torch.exp(a, out=torch.empty_like(a)), a.exp())
print("in place and out= move as a new result does", same and not torch.equal(a.exp(), plain_exp))
print("an entry equal to an input stays", torch.equal(torch.addcmul(a, torch.zeros_like(a), b), a))
import course_lib as cl
from course_lib.classroom.integrity import foreign_modes
print("the profile's mode is marked as the machine's own", foreign_modes() == [])
def by_hand(s):  # a softmax exercise checked under the profile, whose mode hands every result to NumPy
    e = (s - s.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)
cl.check_function(by_hand, lambda s: torch.softmax(s, -1), lambda g: (torch.randn(3, 5, generator=g),),
                  name="by_hand", without=cl.SOFTMAX_FUNCTIONS)
print(torch.softmax(torch.randn(4, 5, generator=g), -1).sum(-1))
print(torch.eye(2))
print(f"{torch.tensor([0.12500001]).tolist()[0]:.2f} {torch.tensor(0.125).item():.2f} {torch.tensor(0.3).item():.2f}")
print("checksum", int(moved.double().sum() * 2**30))
"""


def with_startup(check: str, startup: str, **environ: str) -> str:
    """``check`` as ``python -c check tools/<startup>`` runs it, with ``environ`` set: the start-up files patch torch
    for the whole interpreter, so each check runs in a new one (a child of the fork server, conftest)."""
    path = str(ROOT / "tools" / startup)
    return f"import os, sys; sys.argv[1:] = [{path!r}]; os.environ.update({environ!r})\n" + check


@pytest.fixture(scope="module")
def startup_checks():
    """{name: (returncode, stdout, stderr)} of the checks of the jitter and rounding start-up files. The rounding
    profile's dispatch mode imports torch._dynamo on entry (about 2 s of CPU), so the fork server imports it first,
    once: no check here depends on whether it was imported before."""
    snippets = {
        "jitter": with_startup(JITTER_CHECK, "jitter_startup.py"),
        "rounding1": with_startup(ROUNDING_CHECK, "rounding_startup.py", COURSE_ROUNDING_SALT="1"),
        "rounding2": with_startup(ROUNDING_CHECK, "rounding_startup.py", COURSE_ROUNDING_SALT="2"),
    }
    return run_after_importing_torch(snippets, preamble="import torch._dynamo")


def test_jitter_moves_float32_draws_a_little_and_keeps_seeds_reproducible(startup_checks):
    returncode, stdout, stderr = startup_checks["jitter"]
    assert returncode == 0 and stdout.strip() == "ok", stderr


def run_rounding_check(startup_checks, salt):
    returncode, stdout, stderr = startup_checks[f"rounding{salt}"]
    assert returncode == 0, stderr
    return stdout, stderr


def test_the_rounding_profile_moves_compute_results_by_a_few_ulp_deterministically(startup_checks):
    out, err = run_rounding_check(startup_checks, 1)
    lines = dict(line.rsplit(" ", 1) for line in out.splitlines()[:6])
    assert 1 <= int(lines["max ulp"]) <= 3  # a few units in the last place, no more
    assert float(lines["moved share"]) >= 0.8  # seven in eight of the rounded entries move
    assert lines["same inputs same bits"] == "True"  # a fixed function of the result: recomputing gives equality
    assert lines["sum of two exact"] == "True"  # one IEEE addition is correctly rounded on every machine
    assert lines["integers stay"] == "True"  # exact arithmetic on counts stays exact
    assert lines["backward moved"] == "True"  # the dispatch mode sees the products of backward too
    assert "tensor([[1., 0.]," in out  # an exact tensor prints as it is, with no warning about it ...
    assert "tensor([1.0000, 1.0000" in err  # ... unlike the row sums, whose form depends on their last bits
    assert "0.13 0.12 0.30" in out  # a number at a rounding boundary prints, and is flagged; exact 0.125 is not
    assert "0.1250000149011612 prints as '0.13'" in err and err.count("rounding profile:") == 2
    assert (
        run_rounding_check(startup_checks, 2)[0].splitlines()[-1] != out.splitlines()[-1]
    )  # another salt, another machine


def test_the_rounding_profile_keeps_views_moves_in_place_results_and_marks_its_mode(startup_checks):
    out, _ = run_rounding_check(startup_checks, 1)
    for claim in (
        "views leave their input alone",  # a view's result is its input: moving it would move the input
        "in place and out= move as a new result does",  # what an operation writes is moved, wherever it writes
        "an entry equal to an input stays",  # w + 0 * g is w on every machine
        "the profile's mode is marked as the machine's own",  # the checks trust it (course_profile)
    ):
        assert f"{claim} True" in out, claim
    assert "✓ by_hand agrees with the reference" in out  # a check runs under the profile, its NumPy calls trusted


@pytest.mark.parametrize("name, threads", [("threads2", "2"), ("threads3", "3")])
def test_a_threads_profile_runs_its_threads(name, threads, tmp_path, monkeypatch):
    """The profile's thread counts reach the process that runs the notebooks, over the strict run's one thread, and
    no kernel is forked from a warm server whose torch was imported with other thread counts (tools/warm_kernel.py
    forks only kernels whose environment equals the server's, but for the variables it sets per kernel)."""
    from tools import warm_kernel

    seen = {}
    monkeypatch.setattr(portability.subprocess, "run", lambda cmd, env, **kwargs: seen.update(cmd=cmd, env=env))
    monkeypatch.setattr(portability.os, "cpu_count", lambda: 2)
    profile = next(p for p in portability.PROFILES if p.name == name)
    portability.run_profile(profile, ["notebooks/00_start_here.ipynb"], 2, tmp_path)
    assert (seen["env"]["OMP_NUM_THREADS"], seen["env"]["MKL_NUM_THREADS"]) == (threads, threads)
    assert "-n" not in seen["cmd"], "two cores: one notebook at a time"
    assert "tools.warm_kernel" in seen["cmd"]
    assert {"OMP_NUM_THREADS", "MKL_NUM_THREADS"}.isdisjoint(warm_kernel.PER_KERNEL)


def test_the_busy_profile_loads_every_core_beside_the_notebooks_that_time_or_measure_memory(tmp_path, monkeypatch):
    seen = []

    def fake_run(cmd, env, **kwargs):
        seen.append(([arg for arg in cmd if arg.endswith(".ipynb")], len(burners_alive())))

    started = []
    real_start = portability.start_burners

    def start(count):
        started.extend(real_start(count))
        return started

    def burners_alive():
        return [b for b in started if b.poll() is None]

    monkeypatch.setattr(portability.subprocess, "run", fake_run)
    monkeypatch.setattr(portability, "start_burners", start)
    busy = next(p for p in portability.PROFILES if p.name == "busy")
    clockless, timed = "notebooks/00_start_here.ipynb", "notebooks/02_limits_of_rnns.ipynb"
    portability.run_profile(busy, [clockless, timed], 1, tmp_path)
    assert seen == [([clockless], 0), ([timed], os.cpu_count() or 1)]  # one burner per core beside 02's timings
    assert burners_alive() == []  # and none left afterwards
    by_name = {p.name: p for p in portability.PROFILES}
    assert portability.loaded_notebooks(portability.combine("threads2+busy", by_name), [clockless]) == [clockless]
    assert portability.loaded_notebooks(by_name["scalar"], [timed]) == []
    assert "2 that time or measure memory" in portability.busy_note(busy, [clockless, timed, timed])


@pytest.mark.parametrize(
    "code, reads",
    [
        ("start = time.perf_counter()", True),
        ("t = time.process_time()", True),
        ("%timeit f(x)", True),
        ("%%time\nf(x)", True),
        ("from course_lib import bench", True),
        ("rows = course_lib.bench.run_benchmark([64])", True),
        ("tracemalloc.start()", True),
        ("peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss", True),
        ("seconds = 2.5  # a recording's length", False),
        ("print('time steps:', T)", False),
    ],
)
def test_a_notebook_times_or_measures_where_a_code_cell_reads_a_clock_or_a_memory_meter(code, reads, tmp_path):
    notebook = tmp_path / "nb.ipynb"
    cells = [{"cell_type": "markdown", "source": ["time.perf_counter() in prose"]},
             {"cell_type": "code", "source": [code]}]  # fmt: skip
    notebook.write_text(json.dumps({"cells": cells}))
    assert portability.times_or_measures(notebook) is reads


def test_every_notebook_that_imports_time_or_the_benchmark_is_run_under_load():
    """The busy profile loads the cores only beside notebooks that time or measure memory: one that imports Python's
    time module, a memory meter or the course's benchmark but escapes the pattern would lose its test under load."""
    for notebook in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        code = "\n".join("".join(c["source"]) for c in json.loads(notebook.read_text())["cells"]
                         if c["cell_type"] == "code")  # fmt: skip
        imports = re.search(
            r"^\s*(import (time|timeit|tracemalloc|resource)\b|from (time|resource) import"
            r"|from course_lib import bench)",
            code,
            re.M,
        )
        assert portability.times_or_measures(notebook) == bool(imports), notebook.name


def test_a_profile_with_a_startup_file_gets_its_own_ipythondir(tmp_path, monkeypatch):
    seen = {}

    def fake_run(cmd, env, **kwargs):
        seen.update(env)

    monkeypatch.setattr(portability.subprocess, "run", fake_run)
    jitter = next(p for p in portability.PROFILES if p.name == "jitter")
    portability.run_profile(jitter, ["notebooks/00_start_here.ipynb"], 1, tmp_path)
    startup = tmp_path / "ipython-jitter" / "profile_default" / "startup" / "00-jitter_startup.py"
    assert seen["IPYTHONDIR"] == str(tmp_path / "ipython-jitter")
    assert startup.read_text() == (ROOT / "tools" / "jitter_startup.py").read_text()


def test_two_profiles_joined_with_a_plus_run_as_one():
    by_name = {p.name: p for p in portability.PROFILES}
    both = portability.combine("scalar+busy", by_name)
    assert both.env == by_name["scalar"].env and both.busy and both.startup is None
    assert portability.combine("busy+rounding1", by_name).startup == "rounding_startup.py"
    for clash in ("rounding1+rounding2", "threads2+threads3", "avx2+avx512"):  # one variable, two values
        with pytest.raises(ValueError, match="differently|each bring"):
            portability.combine(clash, by_name)
    makefile = (ROOT / "Makefile").read_text()
    assert "rounding2+scalar+busy" in makefile, "CI's portability run joins rounding2, scalar and busy in one pass"
    joined = portability.combine("rounding2+scalar+busy", by_name)
    assert joined.startup == "rounding_startup.py" and joined.busy and joined.env["COURSE_ROUNDING_SALT"] == "2"


def test_unknown_profile_is_an_error(capsys):
    with pytest.raises(SystemExit):
        portability.main(["--profiles", "native,avx9000"])
    assert "avx9000" in capsys.readouterr().err


@pytest.mark.parametrize(
    "requirement, pin",
    [
        ("torch>=2.3", "torch==2.3"),
        ("sphinx-revealjs>=3.0,<4", "sphinx-revealjs==3.0"),
        ("nbval >= 0.11", "nbval==0.11"),
    ],
)
def test_floors_become_pins(requirement, pin):
    assert oldest.pin_floor(requirement) == pin


def test_a_dependency_without_a_floor_is_refused():
    with pytest.raises(SystemExit, match="no lower bound"):
        oldest.pin_floor("torch")


def test_every_declared_dependency_has_a_floor_and_is_pinned():
    pins = oldest.requirements(["dev"])
    assert any(r.startswith("torch>=") for r in pins)
    assert all("==" in oldest.pin_floor(r) for r in pins)
