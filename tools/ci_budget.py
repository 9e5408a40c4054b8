"""CI's time budget, kept visible: 45 minutes on CI's kind of machine (a 2-core AMD EPYC with AVX2), shared among
the stages of .ci/run. CI's hard limit is 90 minutes, after which nothing lands and nothing says why; this budget
makes a stage that grows fail loudly, long before that.

.ci/run calls it after each stage:

    python3 -m tools.ci_budget STAGE SECONDS_OF_THE_STAGE SECONDS_SINCE_THE_START

and it prints one line: the stage's time against its share and the run's time against the 45 minutes. A stage over
its share prints a loud warning (the log says which stage grew); a run over the 45 minutes exits 1, which stops CI
at once, red, with the table of stages in the log. Standard library only: .ci/run runs it with the system Python.

The shares come from CI's own log (its run of 2026-12-03, red at 2,983 s: setup 98 s, make lint + make test 350 s,
make test-grading 1,181 s, make test-portable 536 s, make e2e 817 s), less what the changes made after it save: make
e2e on two workers (744 -> 448 s on the work machine, -40 %), every nbgrader and nbformat process about 3 s of
start-up lighter (rfc3987 in the dev extra: about 120 nbgrader processes in make test-grading), and rounding2 run in
one pass with scalar+busy (a pass of the course saved, about 170 s of CI's 536). Replace them with CI's next times and
a margin; keep their sum at the total.
"""

from __future__ import annotations

import sys

TOTAL_SECONDS = 45 * 60
SHARES = {  # seconds on CI's kind of machine: its log of 2026-12-03 with this session's savings (see above)
    "setup": 120,  # the venv, torch's CPU wheel, the course's dependencies (98 s)
    "make lint + make test": 420,  # unit tests on two workers, strict nbval, each core path alone (350 s)
    "make test-grading": 1130,  # nbgrader: each notebook three times in cold kernels, and the held-out cheats (1,181 s)
    "make test-portable": 450,  # strict nbval under rounding1, then rounding2+scalar+busy (536 s for three passes)
    "make e2e": 580,  # the book in two languages, the slides, JupyterLab and the book in Chromium (817 s on one worker)
}
assert sum(SHARES.values()) == TOTAL_SECONDS, "the shares add up to the budget"


def verdict(stage: str, seconds: int, elapsed: int) -> tuple[str, bool]:
    """The line to print and whether CI may go on."""
    if stage not in SHARES:
        raise ValueError(f"unknown stage {stage!r}: one of {sorted(SHARES)}")
    share = SHARES[stage]
    line = f"ci: {stage} took {seconds} s of its {share} s share; {elapsed} s of the {TOTAL_SECONDS} s budget so far"
    if seconds > share:
        line += f"\nci: WARNING: {stage} is over its share by {seconds - share} s (tools/ci_budget.py)"
    if elapsed > TOTAL_SECONDS:
        line += f"\nci: FAILED: CI took {elapsed} s, over its budget of {TOTAL_SECONDS} s (tools/ci_budget.py)"
        return line, False
    return line, True


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 3 or not argv[1].isdigit() or not argv[2].isdigit():
        print("usage: python3 -m tools.ci_budget STAGE STAGE_SECONDS ELAPSED_SECONDS", file=sys.stderr)
        return 2
    line, ok = verdict(argv[0], int(argv[1]), int(argv[2]))
    print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
