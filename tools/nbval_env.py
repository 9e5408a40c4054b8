"""The environment of every strict nbval run, defined once: ``make test``'s notebooks and core paths (the Makefile's
``NBVAL_ENV``), each profile of ``tools.portability`` and the graders' runs (``tools.exercise_check``,
tests/test_grading.py).

    python3 -m tools.nbval_env   # the `env` prefix the Makefile puts before its nbval commands

- ``COURSE_DEVICE=cpu``: strict nbval compares the stored CPU outputs, so the strict run always computes on the CPU;
- ``PYTHONHASHSEED=0``: set iteration orders are the same in every run;
- one BLAS/OpenMP thread: the course's models are tiny, and spinning threads only contend for the cores;
- ``MPLBACKEND`` unset: a non-interactive backend such as Agg (set by some CI images) makes inline figures vanish.

Standard library only: the Makefile runs it with the system Python, before .venv exists.
"""

from __future__ import annotations

from collections.abc import Mapping

SET = {"COURSE_DEVICE": "cpu", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
UNSET = ("MPLBACKEND",)


def nbval_environ(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` (e.g. ``os.environ``) as an nbval run sees it: the names of UNSET removed, SET set."""
    env = {name: value for name, value in base.items() if name not in UNSET}
    env.update(SET)
    return env


def env_prefix() -> str:
    """The same as an `env` command line: 'env -u MPLBACKEND COURSE_DEVICE=cpu ...'."""
    return " ".join(["env", *(f"-u {name}" for name in UNSET), *(f"{name}={value}" for name, value in SET.items())])


if __name__ == "__main__":
    print(env_prefix())
