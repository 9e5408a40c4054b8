"""The lecturer's guide plans a 14-week semester from the notebooks as they are: every time in its table is recomputed
from the notebooks' badges and exercises, every lecture of every notebook is placed, and the plan adds up."""

import re

import nbformat
import pytest

from course_lib.paths import NOTEBOOKS_DIR
from tools import sections

GUIDE = NOTEBOOKS_DIR.parent / "docs" / "lecturers_guide.md"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
WEEKS = 14
SLOT_MINUTES = 90  # a lecture and a lab each have a 90-minute slot of their own
MINUTES_PER_EXERCISE = 9  # the labs' review of 2026-11-26: four to five exercises took 35 to 45 minutes
ROW = re.compile(
    r"^\| (?P<week>\d+(?: \((?P<branch>[a-z]+)\))?|extra) "
    r"\| \[[^\]]+\]\(\.\./notebooks/(?P<stem>\w+)\.ipynb\)(?:, lecture (?P<lecture>\d))? "
    r"\| (?P<minutes>\d+) min \| exercises? (?P<exercises>[\d, ]+) \| (?P<lab>\d+) min \| (?P<due>[^|]*) \|$",
    re.M,
)
EXERCISE = re.compile(r"(?:^#{2,4}\s*(?:[\d.]+\s*)?|\*\*)Exercise (\d+)\b", re.M)


def schedule(text: str) -> list[dict]:
    return [m.groupdict() for m in ROW.finditer(text)]


def exercises(nb) -> set[int]:
    """The numbers of the notebook's exercises, from their headings or bold labels."""
    found = set()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found |= {int(n) for n in EXERCISE.findall(cell.source)}
    return found


@pytest.fixture(scope="module")
def rows():
    found = schedule(GUIDE.read_text(encoding="utf-8"))
    assert found, "no semester table found in docs/lecturers_guide.md"
    return found


def test_every_time_in_the_table_is_recomputed_from_the_notebook(rows):
    for row in rows:
        nb = nbformat.read(NOTEBOOKS_DIR / f"{row['stem']}.ipynb", as_version=4)
        lecture = int(row["lecture"] or 1)
        per_lecture = sections.lecture_minutes(sections.sections(nb)[0])
        assert lecture in per_lecture, f"{row['stem']} has no lecture {lecture}"
        if len(per_lecture) > 1:
            assert row["lecture"], f"{row['stem']} has {len(per_lecture)} lectures: say which one week {row['week']} is"
        assert int(row["minutes"]) == per_lecture[lecture], f"week {row['week']}, {row['stem']}: stale lecture time"
        numbers = [int(n) for n in row["exercises"].replace(" ", "").split(",")]
        missing = set(numbers) - exercises(nb)
        assert not missing, f"week {row['week']}: {row['stem']} has no exercise {sorted(missing)}"
        assert int(row["lab"]) == MINUTES_PER_EXERCISE * len(numbers), f"week {row['week']}: lab time"
        assert int(row["minutes"]) <= SLOT_MINUTES and int(row["lab"]) <= SLOT_MINUTES, f"week {row['week']}"


def test_the_semester_has_fourteen_weeks_each_once_or_once_per_branch(rows):
    weeks: dict[int, set] = {}
    for row in rows:
        if row["week"] != "extra":
            weeks.setdefault(int(row["week"].split()[0]), set()).add(row["branch"])
    assert sorted(weeks) == list(range(1, WEEKS + 1))
    branched = {week: names for week, names in weeks.items() if names != {None}}
    branches = set().union(*branched.values()) if branched else set()
    assert all(names == branches for names in branched.values()), f"every branch needs every branched week: {branched}"
    assert all(None not in names for names in branched.values()), "a week is either common or branched"


def test_every_lecture_of_every_notebook_is_placed_and_none_twice_on_one_path(rows):
    placed = {(row["stem"], int(row["lecture"] or 1)) for row in rows}
    for path in NOTEBOOKS[1:]:
        nb = nbformat.read(path, as_version=4)
        for lecture in sections.lectures(sections.sections(nb)[0]):
            assert (path.stem, lecture) in placed, f"the guide does not place {path.stem} lecture {lecture}"
    for branch in {row["branch"] for row in rows} - {None}:
        path = [(r["stem"], r["lecture"]) for r in rows if r["week"] != "extra" and r["branch"] in (None, branch)]
        assert len(path) == len(set(path)) == WEEKS, f"the {branch} branch"
    text = GUIDE.read_text(encoding="utf-8")
    assert "../notebooks/00_start_here.ipynb" in text, "the guide places notebook 00"


def test_the_assessment_plan_adds_up_and_names_its_parts():
    text = GUIDE.read_text(encoding="utf-8")
    plan = text.split("## Assessment", 1)[1].split("\n## ", 1)[0]
    weights = [int(w) for w in re.findall(r"^\| [^|]+ \| (\d+) % \|", plan, re.M)]
    assert weights and sum(weights) == 100, weights
    for part in ("homework", "project", "midterm", "final"):
        assert re.search(rf"^\| [^|]*{part}", plan, re.M | re.I), f"the assessment plan has no {part} row"
    assert "docs/exam_bank.md" in text and "## Notes for teaching assistants" in text
