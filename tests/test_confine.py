"""Where a graded kernel may write and look (course_lib.classroom.confine), tried in a child process of its own: a
red team's cells wrote into the grading account's home (IPython's startup folder, Jupyter's nbgrader config: code
that every later kernel or nbgrader process runs), appended to course_lib's checks, and reached the course folder
through the grader's /proc/<pid>/cwd."""

import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.classroom.confine import landlock_version

CHILD = """
import os, sqlite3, sys, tempfile
import numpy as np
import torch
from course_lib.classroom.confine import confine, landlock_version
library, home = sys.argv[1], os.path.expanduser("~")
startup = os.path.join(home, ".ipython", "profile_default", "startup")
os.makedirs(startup, exist_ok=True)  # (IPython makes it)
refused = []
temp = confine(refused)
def no(action):
    try:
        action()
    except PermissionError as err:
        return "Not graded" in str(err)
    return False
def dir_fd_write():
    fd = os.open(home, os.O_RDONLY)
    os.open("sneaked.py", os.O_WRONLY | os.O_CREAT, dir_fd=fd)
def by_c(action):  # (C code writes where no audit event is raised: Landlock refuses it, where Linux has it)
    try:
        action()
    except PermissionError as err:
        return err.errno in (1, 13) or "Not graded" in str(err)
    except RuntimeError as err:
        return "ermission denied" in str(err)
    return False
def from_file():
    t = torch.from_file(os.path.join(startup, "01.py"), shared=True, size=4, dtype=torch.uint8)
    t[:] = torch.tensor(list(b"1+1;"), dtype=torch.uint8)
def tcp():  # (another kernel's port, its key read from its connection file)
    import socket
    socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=5)
def signal():
    os.kill(os.getppid(), 0)
print(landlock_version() > 0 and [by_c(from_file), by_c(lambda: torch.save("x", os.path.join(home, "x.pth"))),
                                  by_c(lambda: os.mkdir(os.path.join(home, "made")))] == [True] * 3
      and (landlock_version() < 4 or by_c(tcp)) and (landlock_version() < 6 or by_c(signal)))
print(no(lambda: open(os.path.join(startup, "00-setup.py"), "w")),
      no(lambda: np.savetxt(os.path.join(home, "nbgrader_config.py"), [], header="import os", comments="")),
      no(lambda: open(os.path.join(library, "checks.py"), "a")),
      no(lambda: os.remove(os.path.join(library, "checks.py"))),
      no(lambda: os.rename(os.path.join(library, "checks.py"), "moved.py")),
      no(lambda: os.open(os.path.join(library, "new.py"), os.O_WRONLY | os.O_CREAT)),
      no(lambda: os.symlink(os.path.join(library, "checks.py"), "link.py")),
      no(dir_fd_write),
      no(lambda: sqlite3.connect(":memory:")),
      no(lambda: open(f"/proc/{os.getppid()}/cwd/nbgrader_config.py", "a")),
      no(lambda: open(f"/proc/{os.getppid()}/status")))
print(no(lambda: open(os.path.join(library, "checks.py")).read()),
      no(lambda: open("mine.txt", "w").write("x")),
      no(lambda: open("/proc/self/status").read()),
      no(lambda: open(os.devnull, "w").write("x")),
      no(lambda: tempfile.mkstemp()),
      no(lambda: np.save("array.npy", np.zeros(2))))
print(len(refused), sys.dont_write_bytecode, tempfile.gettempdir() == temp == os.environ["TMPDIR"])
"""


def test_a_graded_kernel_writes_only_in_its_own_folder_and_looks_into_no_other_process(tmp_path):
    """From the grader's first cell on: nothing written in the home folder (IPython's startup files, an nbgrader
    config, by the student's code or through NumPy), nor in a library's folder, nor through a link, a folder's
    descriptor or an SQLite database; nothing under another process's /proc, its working folder leading to the course
    folder included. Reading a library's file, writing in its own folder, its temporary folder and /dev/null, and its
    own /proc stay open; every refusal is recorded, and no bytecode is written."""
    library, own, home = tmp_path / "lib", tmp_path / "own", tmp_path / "home"
    for folder in (library, own, home):
        folder.mkdir()
    (library / "checks.py").write_text("checks = 1\n")
    listening = socket.create_server(("127.0.0.1", 0))
    port = str(listening.getsockname()[1])
    child = shlex.join([sys.executable, "-c", CHILD, str(library), port]) + "; true"  # (a shell its parent)
    env = {**os.environ, "HOME": str(home)}
    done = subprocess.run(["sh", "-c", child], capture_output=True, text=True, cwd=own, env=env)
    assert done.returncode == 0, done.stderr
    from course_lib.classroom.confine import landlock_version

    lines = done.stdout.split("\n")
    assert lines[0] == str(landlock_version() > 0), f"C code's writes (torch.from_file, torch.save, mkdir): {done}"
    assert lines[1:4] == [" ".join(["True"] * 11), " ".join(["False"] * 6), "11 True True"], done.stdout
    assert (library / "checks.py").read_text() == "checks = 1\n" and not (library / "new.py").exists()
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
    assert [p for p in written if not p.startswith(".cache/matplotlib/")] == [], written  # (its cache: before)
    assert sorted(p.name for p in own.iterdir()) == ["array.npy", "mine.txt"]


UNCONFINED = (
    "before Landlock's version 8 (Linux 7.0: TSYNC), it confines the thread that asks and those it starts, and "
    "confine() reaches the kernel's threads with an event loop, not a thread without one: issue 44's eighteenth trial"
)
C_WRITE = """
def c_write():  # C++ writes a file in the home (no audit event): Landlock's to refuse
    try:
        torch.from_file(os.path.join(os.path.expanduser("~"), "01.py"), shared=True, size=4, dtype=torch.uint8)
        found.append("written")
    except RuntimeError as err:
        found.append("refused" if "ermission denied" in str(err) else str(err))
    done.set()
"""
BEFORE = (
    """
import os, sys, threading
import torch
from course_lib.classroom.confine import confine
go, done, found = threading.Event(), threading.Event(), []
"""
    + C_WRITE
    + """
def later():  # (as a cell could have the kernel's Control thread run it: kernel.control_thread.io_loop.add_callback)
    go.wait()
    c_write()
threading.Thread(target=later, daemon=True).start()  # (ipykernel's threads start before the grader's first cell)
confine([])
go.set()
done.wait()
print(found[0])
"""
)


@pytest.mark.skipif(landlock_version() < 1, reason="Linux's Landlock refuses C code's writes; without it, only hooks")
@pytest.mark.xfail(landlock_version() < 8, strict=True, reason=UNCONFINED)
def test_c_code_in_a_thread_started_before_the_confinement_writes_nowhere_else_either(tmp_path):
    """A graded kernel's threads that ipykernel started before the grader's first cell: in one of them (a cell can
    hand the Control thread's event loop a callback), C code's write outside the submission's folder."""
    _refused_in_a_child(BEFORE, tmp_path)


IN_LOOP = (
    """
import os, threading
import torch
from tornado.ioloop import IOLoop
from course_lib.classroom.confine import confine
started, done, found = threading.Event(), threading.Event(), []
class Control(threading.Thread):  # (ipykernel's Control and Shell channel threads: an io_loop, started before)
    def run(self):
        self.io_loop = IOLoop()
        started.set()
        self.io_loop.start()
control = Control(daemon=True)
control.start()
started.wait()
confine([])
"""
    + C_WRITE
    + """
control.io_loop.add_callback(c_write)  # (a cell hands the Control thread's event loop a callback)
done.wait(10)
print(found[0] if found else "nothing ran")
"""
)


@pytest.mark.skipif(landlock_version() < 1, reason="Linux's Landlock refuses C code's writes; without it, only hooks")
def test_c_code_run_by_a_kernel_threads_event_loop_writes_nowhere_else_either(tmp_path):
    """The eighteenth trial's helper: a cell handed the kernel's Control thread (started before the grader's first
    cell, so outside Landlock's domain) a callback, and torch.from_file wrote outside. confine() now has every
    thread's event loop restrict its own thread (or, from Landlock's version 8, the system call does it for all)."""
    _refused_in_a_child(IN_LOOP, tmp_path)


def _refused_in_a_child(script: str, tmp_path) -> None:
    """Run ``script`` in a child process in a folder of its own, with a home of its own: it prints "refused" and
    writes no file in the home."""
    own, home = tmp_path / "own", tmp_path / "home"
    own.mkdir()
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=own, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "refused" and not (home / "01.py").exists(), done.stdout


READS = """
import os, sys
import torch
import course_lib as cl
from course_lib.classroom.confine import confine, landlock_version
clone = os.path.dirname(os.path.dirname(os.path.realpath(cl.__file__)))
notebook = os.path.join(clone, "notebooks", sorted(os.listdir(os.path.join(clone, "notebooks")))[-1])
refused = []
confine(refused)
def read(action):
    try:
        action()
    except PermissionError as err:
        return "refused" if "Not graded" in str(err) else "denied"
    except RuntimeError as err:  # (C code, refused by Landlock)
        return "denied" if "ermission denied" in str(err) else str(err)
    return "read"
print(read(lambda: open(notebook, encoding="utf-8").read()),
      read(lambda: open(os.path.join(clone, ".git", "HEAD")).read()),
      read(lambda: open(os.path.join(clone, "tests", "test_confine.py")).read()),
      read(lambda: torch.from_file(notebook, size=8, dtype=torch.uint8)),
      read(lambda: os.listdir(clone)))
print(read(lambda: open(cl.__file__).read()),
      read(lambda: open(os.path.join(clone, "data", "SOURCES.md")).read()),
      read(lambda: open(torch.__file__).read()),
      read(lambda: open("mine.txt", "w").write("x") and open("mine.txt").read()),
      read(lambda: open("/etc/hostname").read()))
print(len(refused), landlock_version() > 0)
"""


@pytest.mark.skipif(not (NOTEBOOKS := Path(__file__).resolve().parents[1] / "notebooks").is_dir(), reason="a clone")
def test_a_graded_kernel_reads_nothing_of_the_clone_but_course_lib_and_its_data(tmp_path):
    """A nineteenth trial's answer read notebook 14 from the clone course_lib runs from (cl.__file__) and compiled its
    solutions: full marks, unflagged. A graded kernel reads no notebook, history or test of the clone: refused and
    recorded where Python opens the file, denied by Landlock where C code reads it (torch.from_file) or a folder is
    listed; course_lib, the data, the Python environment, its own folder and the rest of the system stay readable."""
    done = subprocess.run([sys.executable, "-c", READS], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    landlock = lines[2].endswith("True")
    by_c = "denied" if landlock else "read"  # (without Landlock, only Python's opening of a file is seen)
    assert lines[0] == " ".join(["refused"] * 3 + [by_c, by_c]), done.stdout
    assert lines[1] == " ".join(["read"] * 5), done.stdout
    assert lines[2] == f"3 {landlock}", done.stdout
