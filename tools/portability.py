"""Strict nbval under several CPU profiles: do the stored outputs hold on machines other than the one that ran them?

A notebook's stored outputs were computed on one CPU. A student's laptop, a lecturer's CI runner or Binder computes
with other vector kernels (AVX-512, AVX2, plain C++ loops), another BLAS code path and another number of threads, and
every one of those changes the order of floating-point additions, hence the last bits of a result, and after a few
hundred training steps sometimes the second decimal. One machine can imitate others through switches that PyTorch,
MKL and oneDNN read at start-up (see shared/NBVAL_NOTES.md in the course's design notes):

    ATEN_CPU_CAPABILITY=default|avx2|avx512   PyTorch's vectorised CPU kernels (only down to what the CPU has)
    MKL_CBWR=COMPATIBLE|AVX|AVX2|AUTO          MKL's code path (BLAS: matmul, linear layers)
    ONEDNN_MAX_CPU_ISA=SSE41|AVX2|...          oneDNN's instruction set cap (convolutions, some matmuls)
    OMP_NUM_THREADS=N                          how a reduction is split across threads

No switch makes a CPU use vector kernels it lacks, so the `jitter` profile imitates their effect on random numbers
instead: an IPython start-up file (tools/jitter_startup.py) moves float32 normal draws by a few units of 2**-23.

This tool runs strict nbval (the same command as `make test`) once per profile and prints which cells fail under
which profile. The stored outputs are portable only if every profile passes.

    python -m tools.portability                      # every notebook, the default profiles
    python -m tools.portability notebooks/02_*.ipynb # some notebooks
    python -m tools.portability --profiles native,scalar
    python -m tools.portability --list               # the profiles and what they set

A profile that asks for vector kernels the CPU lacks (avx512 on an AVX2 machine) computes like a lower one, so it is
run only where it differs from native (`--all` runs it anyway). Exit status 0 when every profile passes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from tools.nbval_env import SET, nbval_environ

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS_DIR = ROOT / "notebooks"


@dataclass(frozen=True)
class Profile:
    name: str
    env: dict[str, str] = field(default_factory=dict)
    what: str = ""
    needs: str | None = None  # the ATen capability this profile asks for; skipped where the CPU lacks it
    startup: str | None = None  # a file in tools/ that the notebooks' kernels run first (IPython start-up file)
    busy: bool = False  # other processes load every core while the notebooks run


PROFILES = [
    Profile("native", {}, "this CPU's best kernels, one thread (what `make test` runs)"),
    Profile("avx512", {"ATEN_CPU_CAPABILITY": "avx512"}, "PyTorch's AVX-512 kernels", needs="AVX512"),
    Profile(
        "avx2", {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2"}, "PyTorch's and MKL's AVX2 kernels", needs="AVX2"
    ),
    Profile(
        "scalar",
        {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "SSE41"},
        "no vector kernels in PyTorch, MKL's and oneDNN's most compatible code paths",
    ),
    Profile(
        "threads2", {"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}, "two threads: reductions and matmuls split in two"
    ),
    Profile("threads3", {"OMP_NUM_THREADS": "3", "MKL_NUM_THREADS": "3"}, "three threads: an odd split"),
    Profile(
        "jitter",
        {},
        "float32 normal draws moved by a few 2**-23, as other vector kernels draw them",
        startup="jitter_startup.py",
    ),
    *(
        Profile(
            f"rounding{salt}",
            {"COURSE_ROUNDING_SALT": str(salt)},
            f"every floating-point compute result moved by a few ulp, as another machine rounds (salt {salt})",
            startup="rounding_startup.py",
        )
        for salt in (1, 2)
    ),
    Profile(
        "busy",
        {},
        "a busy laptop: one process per core computes and churns memory beside notebooks that time or measure memory",
        busy=True,
    ),
]
DEFAULT_PROFILES = [p.name for p in PROFILES]


def combine(name: str, by_name: dict[str, Profile]) -> Profile:
    """The profile ``name``, or for ``a+b`` one run under both: their settings merged (CI runs ``scalar+busy``, which
    saves a whole pass over the course; the two change independent things, the kernels and the machine's load).
    Two profiles that set one variable differently, or that each bring a start-up file, cannot be combined."""
    parts = [by_name[part] for part in name.split("+")]
    if len(parts) == 1:
        return parts[0]
    env: dict[str, str] = {}
    for part in parts:
        clash = {k for k, v in part.env.items() if env.get(k, v) != v}
        if clash:
            raise ValueError(f"profiles in {name!r} set {sorted(clash)} differently")
        env.update(part.env)
    startups, needs = [p.startup for p in parts if p.startup], [p.needs for p in parts if p.needs]
    if len(startups) > 1 or len(needs) > 1:
        raise ValueError(f"profiles in {name!r} each bring a start-up file or an instruction set: {startups + needs}")
    what = "; ".join(part.what for part in parts)
    return Profile(name, env, what, next(iter(needs), None), next(iter(startups), None), any(p.busy for p in parts))


def cpu_capability() -> str:
    """The best ATen capability of this CPU: 'AVX512', 'AVX2', 'DEFAULT' ... (asked in a clean subprocess)."""
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    code = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def differs_here(profile: Profile, capability: str) -> bool:
    """False for a profile that asks for this CPU's own vector kernels or for ones it lacks: it would compute like
    native (checked on an AVX2 machine: MKL_CBWR=AVX2 or AVX left every result bit-identical there)."""
    if profile.needs is None:
        return True
    order = ["DEFAULT", "AVX2", "AVX512"]
    have = order.index(capability) if capability in order else len(order)
    return order.index(profile.needs) < have


def nbval_command(notebooks: list[str], junit: Path, workers: int) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "--nbval",
        "--nbval-current-env",
        "--nbval-sanitize-with",
        str(ROOT / "tests" / "nbval_sanitize.cfg"),
        "-p",
        "no:randomly",
        "-p",
        "tools.warm_kernel",  # each kernel forked from one that imported torch (as `make test`; tools/warm_kernel.py)
        "-q",
        "-rf",
        "--tb=short",
        f"--junitxml={junit}",
        *notebooks,
    ]
    if workers > 1:
        cmd += ["-n", str(workers), "--dist", "loadscope"]  # one notebook per worker (cells share a kernel)
    return cmd


def failing_cells(junit: Path) -> tuple[int, list[str]]:
    """(number of cells run, ids of the cells that failed) from a JUnit XML report."""
    if not junit.is_file():
        return 0, ["(no report: pytest did not run)"]
    root = ET.parse(junit).getroot()
    cases = list(root.iter("testcase"))
    # nbval's classname is the notebook's path with dots for slashes: notebooks.02_limits_of_rnns.ipynb
    failed = [
        f"{c.get('classname', '').split('.', 1)[-1]}::{c.get('name')}"
        for c in cases
        if c.find("failure") is not None or c.find("error") is not None
    ]
    return len(cases), failed


def workers_for(profile: Profile, workers: int) -> int:
    """Notebooks run at once under `profile`: never more threads than cores.

    Two notebooks of two OpenMP threads each on a two-core machine do not merely share the cores: OpenMP's threads
    spin while they wait for each other, and a 3-minute run took an hour in CI. A profile that sets a thread count
    runs as many notebooks at once as the cores hold.
    """
    threads = int(profile.env.get("OMP_NUM_THREADS", SET["OMP_NUM_THREADS"]))
    return max(1, min(workers, (os.cpu_count() or 1) // threads))


def failure_excerpts(log: Path, cells: list[str], lines: int = 40) -> list[str]:
    """The first `lines` lines of pytest's report for each failing cell (its diff), for a log that CI shows, and the
    error lines ("E   ...") of the report further down (a kernel that did not start: the reason comes last)."""
    if not log.is_file():
        return []
    text = re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(errors="replace")).splitlines()  # without colour codes
    excerpts = []
    for cell in cells:  # pytest heads each failure "____ notebooks/02_limits_of_rnns.ipynb::Cell 16 ____"
        starts = [i for i, line in enumerate(text) if line.startswith("_") and f"{cell} _" in line]
        if starts:
            start = starts[0]
            end = next((i for i in range(start + 1, len(text)) if text[i].startswith(("___", "==="))), len(text))
            errors = [line for line in text[start + lines : end] if line.startswith("E ")][-10:]
            excerpts += [f"      | {line}" for line in text[start : min(end, start + lines)] + errors]
    return excerpts


# What a busy machine runs beside the notebooks, once per core: arithmetic in a loop, and a 64 MiB buffer rewritten
# again and again (memory bandwidth and caches are shared as well as the cores).
BURNER = """
source, buffer = bytes(64 * 2**20), bytearray(64 * 2**20)
while True:
    total = sum(i * i for i in range(100_000))
    buffer[:] = source
"""


def start_burners(count: int) -> list[subprocess.Popen]:
    """`count` processes that load one core each until they are stopped (the busy profile)."""
    return [
        subprocess.Popen([sys.executable, "-c", BURNER], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(count)
    ]


def stop_burners(burners: list[subprocess.Popen]) -> None:
    for burner in burners:
        burner.kill()
    for burner in burners:
        burner.wait()


# A code cell that reads a clock or a memory meter: Python's clocks, IPython's timing magics, tracemalloc, the peak
# resident size, a GPU's allocator, the course's benchmark (course_lib.bench: times and peak memory).
MEASURES = re.compile(
    r"\btime\.(perf_counter|process_time|monotonic|time)\b|\btimeit\b|^\s*%%?time\b|\btracemalloc\b|\bru_maxrss\b"
    r"|\bmax_memory_allocated\b|\bcourse_lib(\.| import )bench\b",
    re.MULTILINE,
)


def times_or_measures(notebook: str | Path) -> bool:
    """Whether a code cell of `notebook` reads a clock or a memory meter: what it prints or claims may then depend on
    the machine's load."""
    path = Path(notebook) if Path(notebook).is_file() else ROOT / notebook
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return any(MEASURES.search("".join(c["source"])) for c in cells if c["cell_type"] == "code")


def loaded_notebooks(profile: Profile, notebooks: list[str]) -> list[str]:
    """The notebooks that run while the burners load the cores: with one thread a busy machine changes no computed
    result, only the time things take and the memory they find, so a busy profile loads the cores for the notebooks
    that time or measure memory (02's, 08's, 10's and 12's claims about time, 08's about memory) and runs the others
    as its other parts ask, unloaded. With
    more threads than one (threads2+busy), every notebook runs loaded: spinning threads wait on each other."""
    if not profile.busy:
        return []
    threads = int(profile.env.get("OMP_NUM_THREADS", SET["OMP_NUM_THREADS"]))
    return [nb for nb in notebooks if threads > 1 or times_or_measures(nb)]


def busy_note(profile: Profile, notebooks: list[str]) -> str:
    """What the report says of a busy profile's load: how many burners, beside which notebooks."""
    if not profile.busy:
        return ""
    loaded = loaded_notebooks(profile, notebooks)
    which = "every notebook" if len(loaded) == len(notebooks) else f"{len(loaded)} that time or measure memory"
    return f"{os.cpu_count()} busy processes beside {which}"


def run_profile(profile: Profile, notebooks: list[str], workers: int, out_dir: Path) -> tuple[int, list[str], float]:
    env = {**nbval_environ(os.environ), **profile.env}  # `make test`'s strict run, then the profile's changes
    if profile.startup:  # IPython runs every file in $IPYTHONDIR/profile_default/startup before the notebook
        startup_dir = out_dir / f"ipython-{profile.name}" / "profile_default" / "startup"
        startup_dir.mkdir(parents=True, exist_ok=True)
        (startup_dir / f"00-{profile.startup}").write_text((ROOT / "tools" / profile.startup).read_text())
        env["IPYTHONDIR"] = str(startup_dir.parent.parent)
    loaded = loaded_notebooks(profile, notebooks)
    runs = [([nb for nb in notebooks if nb not in loaded], ""), (loaded, "-busy")]  # unloaded first, then loaded
    log = out_dir / f"{profile.name}.log"
    start, ran, failed = time.perf_counter(), 0, []
    with log.open("w") as handle:
        for part, suffix in [(part, suffix) for part, suffix in runs if part]:
            junit = out_dir / f"{profile.name}{suffix}.xml"
            junit.unlink(missing_ok=True)
            burners = start_burners(os.cpu_count() or 1) if suffix else []
            try:
                handle.flush()
                subprocess.run(
                    nbval_command(part, junit, workers_for(profile, workers)),
                    cwd=ROOT,
                    env=env,
                    stdout=handle,
                    stderr=subprocess.STDOUT,
                    check=False,
                )
            finally:
                stop_burners(burners)
            part_ran, part_failed = failing_cells(junit)
            ran, failed = ran + part_ran, failed + part_failed
    return ran, failed, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.portability", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="notebooks to check (default: every notebooks/NN_*.ipynb)")
    parser.add_argument("--profiles", default=",".join(DEFAULT_PROFILES), help="comma-separated profile names")
    parser.add_argument("--workers", type=int, default=2, help="notebooks run at once (pytest-xdist; 1 = serial)")
    parser.add_argument("--all", action="store_true", help="also run profiles that compute like native on this CPU")
    parser.add_argument("--out", default=str(ROOT / "build" / "portability"), help="folder for logs and reports")
    parser.add_argument("--list", action="store_true", help="list the profiles and exit")
    args = parser.parse_args(argv)

    by_name = {p.name: p for p in PROFILES}
    names = [n.strip() for n in args.profiles.split(",") if n.strip()]
    unknown = [n for n in names if any(part not in by_name for part in n.split("+"))]
    if unknown:
        parser.error(f"unknown profile(s) {unknown}; choose from {list(by_name)}, or join two with +")
    try:
        chosen = {name: combine(name, by_name) for name in names}
    except ValueError as error:
        parser.error(str(error))
    if args.list:
        for p in PROFILES:
            settings = (
                " ".join(
                    [
                        *(f"{k}={v}" for k, v in p.env.items()),
                        *([f"start-up file tools/{p.startup}"] if p.startup else []),
                    ]
                )
                or "(no change)"
            )
            print(f"{p.name:<13} {settings:<75} {p.what}")
        return 0

    notebooks = args.notebooks or sorted(str(p.relative_to(ROOT)) for p in NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
    missing = [nb for nb in notebooks if not (ROOT / nb).is_file() and not Path(nb).is_file()]
    if missing:
        parser.error(f"no such notebook(s): {missing}")
    out_dir = Path(args.out).resolve()  # absolute: the kernels run in notebooks/, and IPYTHONDIR lies in here
    out_dir.mkdir(parents=True, exist_ok=True)
    capability = cpu_capability()
    print(
        f"portability: {len(notebooks)} notebook(s); this CPU's best PyTorch kernels: {capability}; logs in {out_dir}",
        flush=True,
    )

    results = {}
    for name in names:
        profile = chosen[name]
        if not args.all and not differs_here(profile, capability):
            print(f"  {name:<13} skipped: computes like native on this {capability} CPU", flush=True)
            continue
        ran, failed, seconds = run_profile(profile, notebooks, args.workers, out_dir)
        results[name] = failed
        settings = " ".join(
            [*(f"{k}={v}" for k, v in profile.env.items()), *([f"tools/{profile.startup}"] if profile.startup else [])]
        )
        verdict = "ok" if not failed and ran else f"{len(failed)} FAILED"
        print(
            f"  {name:<13} {ran:>4} cells  {verdict:<10} {seconds:6.0f} s   "
            + "; ".join(part for part in (settings, busy_note(profile, notebooks)) if part),
            flush=True,
        )
        for cell in failed:
            print(f"      {cell}", flush=True)
        for line in failure_excerpts(out_dir / f"{name}.log", failed):
            print(line, flush=True)

    bad = {name: failed for name, failed in results.items() if failed}
    if bad:
        print(f"portability: FAILED under {sorted(bad)}; the diffs are in {out_dir}/<profile>.log")
        return 1
    print(f"portability: every stored output holds under {sorted(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
