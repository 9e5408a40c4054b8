"""tools.ci_budget: CI's 45 minutes shared among the stages of .ci/run, a stage over its share named in the log and a
run over the budget stopped red."""

import re

import pytest

from course_lib.paths import ROOT
from tools import ci_budget


def test_every_stage_of_ci_has_a_share_and_the_shares_make_45_minutes():
    script = (ROOT / ".ci" / "run").read_text()
    stages = [name.strip('"') for name in re.findall(r'^stage ("[^"]+"|\S+) ', script, re.M)]
    assert stages == list(ci_budget.SHARES), "each stage of .ci/run, in order, has a share"
    assert sum(ci_budget.SHARES.values()) == ci_budget.TOTAL_SECONDS == 2700


def test_a_stage_over_its_share_warns_and_a_run_over_the_budget_fails(capsys):
    share = ci_budget.SHARES["make test-grading"]
    line, ok = ci_budget.verdict("make test-grading", share - 60, 1500)
    assert ok and "WARNING" not in line and f"{share - 60} s of its {share} s share" in line
    line, ok = ci_budget.verdict("make test-grading", share + 120, 1500)
    assert ok and "WARNING: make test-grading is over its share by 120 s" in line
    line, ok = ci_budget.verdict("make e2e", 100, 2701)
    assert not ok and "FAILED" in line
    assert ci_budget.main(["make e2e", "100", "2701"]) == 1 and ci_budget.main(["setup", "10", "10"]) == 0
    assert ci_budget.main(["setup", "ten", "10"]) == 2
    with pytest.raises(ValueError, match="unknown stage"):
        ci_budget.verdict("make coffee", 1, 1)
