"""CI's time budget, kept visible: 45 minutes on CI's kind of machine (a 2-core AMD EPYC with AVX2), shared among
the stages of .ci/run. CI's hard limit is 90 minutes, after which nothing lands and nothing says why; this budget
makes a stage that grows fail loudly, long before that.

.ci/run calls it after each stage:

    python3 -m tools.ci_budget STAGE SECONDS_OF_THE_STAGE SECONDS_SINCE_THE_START

and it prints one line: the stage's time against its share and the run's time against the 45 minutes. A stage over
its share prints a loud warning (the log says which stage grew); a run over the 45 minutes exits 1, which stops CI
at once, red, with the table of stages in the log. Standard library only: .ci/run runs it with the system Python.

The shares come from CI's own log of its run of 2026-12-03 on the eleventh session's submission, red at 3,057 s on a
machine slower than the run before's (the course 149.8 s of CPU in its make test table, against 116.3 s): setup 149 s,
make lint + make test 462 s, make test-grading 1,203 s, make test-portable 655 s, make e2e 588 s. The twelfth session
then cut what was measured here in pairs (docs/results/2026-12-03_ci_budget.md): make test-grading in warm kernels
(wall time x 0.66), the busy profile's burners only beside the notebooks that time or measure memory (the joined
pass x 0.64), make e2e on four workers (x 0.81): about 2,470 s on that slow machine, 1,950 on the one before. Each
share is that estimate with a margin. CI's next run, on that submission, passed in 1,606 s (a passing run's log, and
so its stages' times, is not kept): replace the shares with the times of a log that has them, plus a margin, and keep
their sum at the total.
"""

from __future__ import annotations

import sys

TOTAL_SECONDS = 45 * 60
SHARES = {  # seconds on CI's kind of machine: its log of 2026-12-03 (red, 3,057 s) less the measured savings (above)
    "setup": 170,  # the venv, torch's CPU wheel, the course's dependencies (149 s)
    "make lint + make test": 500,  # unit tests on two workers, strict nbval, each core path alone (462 s)
    "make test-grading": 950,  # nbgrader: each notebook three times, the held-out cheats (1,203 s; about 870 expected)
    "make test-portable": 540,  # strict nbval under rounding1, then rounding2+scalar+busy (655 s; about 500 expected)
    "make e2e": 540,  # the book in two languages, the slides, JupyterLab and the book in Chromium (588 s; about 500)
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
