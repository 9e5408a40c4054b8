"""The lecturer's guide plans a 14-week semester from the notebooks as they are (issue 44, item 3).

The semester table is read as data. A lecture column is a list of parts joined by `` + ``: a notebook's link alone (its
lecture 1), ``, lecture K``, ``without §7, Summary`` (that lecture less those sections), ``§1, §2`` (those sections
only) or ``deep dive(s) §5.1`` (deep dives of the notebook of the part before, or of its own link). Every time is
recomputed from the notebooks' badges (tools/sections.py): the timing rule is that every lecture takes 60 to 75
minutes of its 90-minute slot, and a lab 9 minutes an exercise plus what the table moves into it, at most 75. On each
branch's path through the weeks every core section and core exercise is placed once, after what it builds on, and
every week's exercises are graded as that week's homework. Beyond the table: the project talks of a class of 120 fit
the rooms and minutes the guide gives them, the midterm is one sitting (a lab slot holds its review only), and the
guide's example of how a notebook's "How long" line differs from the table is recomputed from that notebook."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache

import nbformat
import pytest

from course_lib.paths import NOTEBOOKS_DIR
from tools import sections

GUIDE = NOTEBOOKS_DIR.parent / "docs" / "lecturers_guide.md"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
WEEKS = 14
SLOT_MINUTES = 90  # a lecture and a lab each have a 90-minute slot of their own
LECTURE_MINUTES = (60, 75)  # the timing rule: 15 to 30 minutes of each slot left for questions, a recap, a break
LAB_MAX_MINUTES = 75
LAB_MIN_MINUTES = 27  # a term's lab holds at least three exercises' work; a week with fewer gives a project clinic time
MINUTES_PER_EXERCISE = 9  # the labs' review of 2026-11-26: four to five exercises took 35 to 45 minutes
CLASS_SIZE = 120  # the class the plan is sized for (issue 44's reviewer): the project talks must fit it
PROJECT_SESSION_MINUTES = 120
PROJECT_SLACK_MINUTES = 20  # a room's minutes left over: a late start, a laptop that will not project, a break
ROW = re.compile(
    r"^\| (?P<week>\d+(?: \((?P<branch>[a-z]+)\))?|extra) \| (?P<lecture>[^|]+) \| (?P<minutes>\d+) min "
    r"\| (?P<lab>[^|]+) \| (?P<lab_minutes>\d+) min \| (?P<due>[^|]*) \|$",
    re.M,
)
REFS = r"(?:§[\d.]+|Summary)(?:, (?:§[\d.]+|Summary))*"
PART = re.compile(
    r"^(?:\[[^\]]+\]\(\.\./notebooks/(?P<stem>\w+)\.ipynb\))?(?:, lecture (?P<lecture>\d))?"
    rf"(?: ?(?P<how>without|deep dives?))?(?: ?(?P<refs>{REFS}))?$"
)
LAB = re.compile(
    r"^(?:midterm review \((?P<exam>\d+) min, [^)]*\); )?(?:project clinic \((?P<clinic>\d+) min, [^)]*\); )?"
    r"(?P<nb>\d\d): (?:(?P<refs>" + REFS + r"), then )?"
    r"exercises? (?P<exercises>\d+(?:, \d+)*)(?P<home> at home)?$"
)
EXERCISE = re.compile(r"(?:^#{2,4}\s*(?:[\d.]+\s*)?|\*\*)Exercise (\d+)\b", re.M)
NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s")


@dataclass(frozen=True)
class Unit:
    """A badged section: what the guide places."""

    stem: str
    ref: str  # "§6.1", "Summary", or the title of an unnumbered section
    kind: str  # core or deep-dive
    minutes: int
    lecture: int
    order: int  # its place in the notebook
    lab: bool  # inside the exercises


@cache
def notebook(stem: str):
    return nbformat.read(NOTEBOOKS_DIR / f"{stem}.ipynb", as_version=4)


@cache
def units(stem: str) -> tuple[Unit, ...]:
    found, _ = sections.sections(notebook(stem))
    out, top = [], found[0]
    for s in found:
        if s.level <= 2:
            top = s
        lab = re.sub(r"^[\d.\s]+", "", top.title).strip().lower() in sections.NOT_PROSE
        if s.minutes:  # a badge; unbadged sub-sections belong to the section above them
            number = NUMBERED.match(s.title)
            ref = f"§{number[1]}" if number else s.title.strip()
            out.append(Unit(stem, ref, s.kind, s.minutes, s.lecture, len(out), lab))
    return tuple(out)


def teaching(stem: str) -> list[Unit]:
    """The core sections of a notebook that a lecture presents (not its exercises)."""
    return [u for u in units(stem) if u.kind == sections.CORE and not u.lab]


@cache
def core_exercises(stem: str) -> frozenset[int]:
    """The numbers of the notebook's core exercises, from their headings or bold labels inside the exercises."""
    nb = notebook(stem)
    found, paths = sections.sections(nb)
    first = {}
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            for n in EXERCISE.findall(cell.source):
                first.setdefault(int(n), paths[i])
    return frozenset(n for n, path in first.items() if path == sections.CORE)


def stem_of(number: str) -> str:
    (path,) = [p for p in NOTEBOOKS if p.name.startswith(f"{number}_")]
    return path.stem


def find(stem: str, ref: str) -> Unit:
    matches = [u for u in units(stem) if u.ref == ref]
    assert len(matches) == 1, f"{stem} has {len(matches)} sections {ref!r} with a badge"
    return matches[0]


def lecture_parts(cell: str, where: str) -> list[Unit]:
    """The sections a lecture cell presents, in order."""
    taught, stem = [], None
    for text in cell.strip().split(" + "):
        part = PART.match(text)
        assert part, f"{where}: cannot read {text!r}"
        stem = part["stem"] or stem
        assert stem, f"{where}: {text!r} names no notebook"
        refs = part["refs"].split(", ") if part["refs"] else []
        if part["how"] and part["how"].startswith("deep dive"):
            assert refs and not part["lecture"], f"{where}: {text!r}"
            chosen = [find(stem, r) for r in refs]
            assert all(u.kind == sections.DEEP for u in chosen), f"{where}: {text!r} names a core section"
        elif refs and part["how"] != "without":
            assert not part["lecture"], f"{where}: {text!r}"
            chosen = [find(stem, r) for r in refs]
        else:
            numbers = sorted({u.lecture for u in teaching(stem)})
            lecture = int(part["lecture"] or 1)
            if len(numbers) > 1:
                assert part["lecture"], f"{where}: {stem} has {len(numbers)} lectures: say which one"
            assert lecture in numbers, f"{where}: {stem} has no lecture {lecture}"
            whole = [u for u in teaching(stem) if u.lecture == lecture]
            assert (
                sum(u.minutes for u in whole) == sections.lecture_minutes(sections.sections(notebook(stem))[0])[lecture]
            ), f"{where}: this test and tools.sections time {stem}'s lecture {lecture} differently"
            left_out = [find(stem, r) for r in refs]
            assert all(u in whole for u in left_out), f"{where}: {text!r}: not sections of that lecture"
            chosen = [u for u in whole if u not in left_out]
        taught += chosen
    return taught


@dataclass
class Week:
    week: int  # 15 for the extra rows
    branch: str | None
    lecture: list[Unit]
    minutes: int
    lab: list[Unit]
    lab_stem: str
    exercises: list[int]
    at_home: bool
    exam: int
    lab_minutes: int
    due: str
    clinic: int = 0  # minutes of a project clinic in the lab slot (pairs with a TA)


def read_rows(text: str) -> list[Week]:
    rows = []
    for m in ROW.finditer(text):
        where = f"week {m['week']}"
        lab = LAB.match(m["lab"].strip())
        assert lab, f"{where}: cannot read the lab {m['lab']!r}"
        lab_stem = stem_of(lab["nb"])
        rows.append(
            Week(
                week=WEEKS + 1 if m["week"] == "extra" else int(m["week"].split()[0]),
                branch=m["branch"],
                lecture=lecture_parts(m["lecture"], where),
                minutes=int(m["minutes"]),
                lab=[find(lab_stem, r) for r in (lab["refs"].split(", ") if lab["refs"] else [])],
                lab_stem=lab_stem,
                exercises=[int(n) for n in lab["exercises"].split(", ")],
                at_home=bool(lab["home"]),
                exam=int(lab["exam"] or 0),
                clinic=int(lab["clinic"] or 0),
                lab_minutes=int(m["lab_minutes"]),
                due=m["due"],
            )
        )
    return rows


@pytest.fixture(scope="module")
def text():
    return GUIDE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def rows(text):
    found = read_rows(text)
    assert found, "no semester table found in docs/lecturers_guide.md"
    return found


def paths(rows: list[Week]) -> dict[str, list[Week]]:
    """Each branch's weeks 1-14 in order, then the extra rows that continue notebooks of that path."""
    out = {}
    for branch in {r.branch for r in rows} - {None} or {None}:
        weeks = sorted((r for r in rows if r.week <= WEEKS and r.branch in (None, branch)), key=lambda r: r.week)
        started = {u.stem for r in weeks for u in r.lecture}
        extra = [r for r in rows if r.week > WEEKS and {u.stem for u in r.lecture} <= started]
        out[str(branch)] = weeks + extra
    return out


def test_the_guide_states_the_timing_rule(text):
    low, high = LECTURE_MINUTES
    flat = " ".join(text.split())  # the rule may be wrapped anywhere
    assert f"**Every lecture takes {low} to {high} minutes of its {SLOT_MINUTES}-minute slot**" in flat
    assert f"**{MINUTES_PER_EXERCISE} minutes per exercise**" in flat and f"within {LAB_MAX_MINUTES} minutes" in flat


def test_every_lecture_fits_its_slot_by_the_badges(rows):
    low, high = LECTURE_MINUTES
    for row in rows:
        computed = sum(u.minutes for u in row.lecture)
        assert row.minutes == computed, f"week {row.week} ({row.branch}): table {row.minutes}, badges {computed}"
        assert low <= computed <= high, f"week {row.week} ({row.branch}): a lecture of {computed} min"


def test_the_deep_dives_a_lecture_teaches_are_on_its_deck_and_no_others(rows):
    """The sixth lecturer's trial: the table taught 08 §5.1 and §9, 12 §2.1 and §6.1, 13 §7.1 in lectures whose
    decks had no slide of them (tools.sections puts a deep dive on the deck when its heading opens a slide)."""
    taught = {(u.stem, u.ref) for row in rows for u in row.lecture if u.kind == sections.DEEP}
    on_deck = set()
    for path in NOTEBOOKS:
        for s in sections.sections(notebook(path.stem))[0]:
            if s.kind == sections.DEEP and s.minutes and s.on_deck:
                number = NUMBERED.match(s.title)
                on_deck.add((path.stem, f"§{number[1]}" if number else s.title.strip()))
    assert taught - on_deck == set(), "deep dives taught in a lecture with no slides: mark their heading as a slide"
    assert on_deck - taught == set(), "deep dives with slides that no lecture teaches: unmark their heading"


def test_every_lab_is_timed_by_its_exercises_and_fits(rows):
    for row in rows:
        missing = set(row.exercises) - core_exercises(row.lab_stem)
        assert not missing, f"week {row.week}: {row.lab_stem} has no core exercise {sorted(missing)}"
        computed = row.exam + row.clinic + sum(u.minutes for u in row.lab)
        computed += 0 if row.at_home else MINUTES_PER_EXERCISE * len(row.exercises)
        assert row.lab_minutes == computed, f"week {row.week} ({row.branch}): lab time {row.lab_minutes} != {computed}"
        assert computed <= LAB_MAX_MINUTES, f"week {row.week} ({row.branch})"
        if row.week <= WEEKS:  # an eighteenth lecturer's trial: week 11's lab held one 9-minute exercise
            assert computed >= LAB_MIN_MINUTES, f"week {row.week} ({row.branch}): a lab of {computed} min of 90"
        assert all(u.kind == sections.CORE for u in row.lab), f"week {row.week}: the lab presents core sections only"


def test_the_semester_has_fourteen_weeks_each_once_or_once_per_branch(rows):
    weeks: dict[int, set] = {}
    for row in rows:
        if row.week <= WEEKS:
            weeks.setdefault(row.week, set()).add(row.branch)
    assert sorted(weeks) == list(range(1, WEEKS + 1))
    branched = {week: names for week, names in weeks.items() if names != {None}}
    branches = set().union(*branched.values()) if branched else set()
    assert all(names == branches for names in branched.values()), f"every branch needs every branched week: {branched}"
    assert all(None not in names for names in branched.values()), "a week is either common or branched"


def test_each_path_teaches_every_core_section_once_after_what_it_builds_on(rows):
    for branch, path in paths(rows).items():
        position: dict[Unit, tuple] = {}
        for row in path:
            slots = [(0, row.lecture), (1, row.lab)]
            for slot, taught in slots:
                for i, unit in enumerate(taught):
                    assert unit not in position, f"{branch} path: {unit.stem} {unit.ref} placed twice"
                    position[unit] = (row.week, slot, i)
        on_path = {u.stem for u in position}
        for stem in on_path:
            missing = [u.ref for u in teaching(stem) if u not in position]
            assert not missing, f"{branch} path: {stem} sections {missing} are taught nowhere"
        for unit, at in position.items():
            before = [u for u in teaching(unit.stem) if u.order < unit.order and position[u] > at]
            assert not before, f"{branch} path: {unit.stem} {unit.ref} comes before {[u.ref for u in before]}"


def test_each_path_sets_every_core_exercise_once_and_grades_every_week(rows):
    for branch, path in paths(rows).items():
        set_: dict[tuple[str, int], int] = {}
        started: set[str] = set()
        for row in path:
            started |= {u.stem for u in row.lecture}
            assert row.lab_stem in started, f"week {row.week}: the lab's notebook {row.lab_stem} is not started yet"
            assert row.exercises, f"{branch} path, week {row.week}: no exercises to grade"
            for n in row.exercises:
                assert (row.lab_stem, n) not in set_, f"{branch} path: {row.lab_stem} exercise {n} set twice"
                set_[row.lab_stem, n] = row.week
        for stem in started:
            missing = sorted(core_exercises(stem) - {n for s, n in set_ if s == stem})
            assert not missing, f"{branch} path: {stem}'s core exercises {missing} are set in no lab"


def test_every_week_is_graded_as_a_homework_due_the_week_after(rows, text):
    for branch, path in paths(rows).items():
        by_week = {r.week: r for r in path if r.week <= WEEKS}
        for week, row in by_week.items():
            named = [int(n) for n in re.findall(r"homework (\d+)", row.due)]
            expected = [week - 1]  # week 1: homework 0, notebook 00's exercises (the eighth trial: ungraded before)
            assert named == expected, f"{branch} path, week {week}: due {named}, expected homework {expected}"
    after = text.split("| extra |", 1)[1].split("\n## ", 1)[0]
    assert f"homework {WEEKS}," in after and f"week {WEEKS}'s exercises" in after, "when is the last week graded?"
    plan = text.split("## Assessment", 1)[1].split("\n## ", 1)[0]
    assert "fifteen homeworks, homework 0 (notebook 00, before the first lab) and one a week" in plan and WEEKS == 14
    assert "**homework 0**, graded like every other" in text


def test_every_lecture_of_every_notebook_is_placed(rows, text):
    placed = {u for row in rows for u in [*row.lecture, *row.lab]}
    for path in NOTEBOOKS[1:]:
        missing = [u.ref for u in teaching(path.stem) if u not in placed]
        assert not missing, f"the guide does not place {path.stem}'s sections {missing}"
    assert "../notebooks/00_start_here.ipynb" in text, "the guide places notebook 00"


def test_the_assessment_plan_adds_up_and_names_its_parts(text):
    plan = text.split("## Assessment", 1)[1].split("\n## ", 1)[0]
    weights = [int(w) for w in re.findall(r"^\| [^|]+ \| (\d+) % \|", plan, re.M)]
    assert weights and sum(weights) == 100, weights
    for part in ("homework", "project", "midterm", "final"):
        assert re.search(rf"^\| [^|]*{part}", plan, re.M | re.I), f"the assessment plan has no {part} row"
    assert "docs/exam_bank.md" in text and "## Notes for teaching assistants" in text


def test_the_table_reader_refuses_what_it_cannot_read():
    with pytest.raises(AssertionError):
        lecture_parts("[06](../notebooks/06_multi_head_attention.ipynb) without §99", "a row")
    with pytest.raises(AssertionError):  # a core section named as a deep dive
        lecture_parts("[06](../notebooks/06_multi_head_attention.ipynb) deep dive §2", "a row")
    with pytest.raises(AssertionError):  # 08 has two lectures: say which
        lecture_parts("[08](../notebooks/08_efficient_attention.ipynb)", "a row")
    six = lecture_parts("[06](../notebooks/06_multi_head_attention.ipynb) without Summary + deep dive §3", "a row")
    assert [u.ref for u in six][-1] == "§3" and "Summary" not in [u.ref for u in six]


def test_the_project_talks_of_a_class_of_120_fit_their_session(text):
    flat = " ".join(text.split())
    assert f"a class of {CLASS_SIZE}" in flat and f"{CLASS_SIZE} students in pairs" in flat
    m = re.search(
        r"\*\*(\d+) talks of (\d+) minutes, (\d+) minutes a pair with questions and the change-over, in (\d+) rooms at "
        r"once: (\d+) talks, (\d+) minutes a room\*\*",
        flat,
    )
    assert m, "the guide does not give the project session's arithmetic"
    talks, talk, pair, rooms, per_room, room_minutes = map(int, m.groups())
    assert talks == CLASS_SIZE // 2 and talk < pair
    assert per_room == math.ceil(talks / rooms) and room_minutes == per_room * pair
    assert room_minutes + PROJECT_SLACK_MINUTES <= PROJECT_SESSION_MINUTES, "a room's talks leave no time in hand"
    rule = re.search(r"pairs times (\d+) minutes divided by (\d+), rounded up", flat)
    assert rule and int(rule[1]) == pair and int(rule[2]) == PROJECT_SESSION_MINUTES - PROJECT_SLACK_MINUTES
    assert math.ceil(talks * pair / int(rule[2])) == rooms, "the rule for another class gives other rooms than 120's"
    markers = re.search(r"(\d+) hours each for the (\d+) markers", flat)
    assert markers and int(markers[1]) * int(markers[2]) == 20 and int(markers[2]) == rooms
    assert f"session** of {PROJECT_SESSION_MINUTES} minutes" in flat
    plan = flat.split("## Assessment", 1)[1].split("## ", 1)[0]
    assert f"a {talk}-minute talk at the project session" in plan
    assert not re.search(r"talk[^|.]*\bin (?:the |week \d+'s )?lab slot", flat), "the talks are placed in a lab slot"


def test_the_midterm_is_one_sitting_and_a_lab_holds_its_review_only(rows, text):
    flat = " ".join(text.split())
    midterm_weeks = [r for r in rows if "midterm" in r.due]
    assert midterm_weeks and all(r.exam and not r.at_home for r in midterm_weeks), "a lab reviews, then sets exercises"
    assert all("one sitting" in r.due for r in midterm_weeks)
    plan = flat.split("## Assessment", 1)[1].split("## ", 1)[0]
    assert re.search(r"\| midterm exam \| \d+ % \| 60 minutes in week 8, one sitting for the whole class", plan)
    assert "**The midterm with several lab sections.**" in flat


def test_the_guides_how_long_example_is_notebook_05s(rows, text):
    flat = " ".join(text.split())
    m = re.search(
        r"Notebook (\d\d): its line says a core path of ([^,]+), that is (\d+) minutes of sections, "
        r"the Summary's (\d+) "
        r"and the Exercises badge's (\d+); here it is a (\d+)-minute lecture and a (\d+)-minute lab "
        r"\(the Summary's \d+ and (\d+) exercises at (\d+) minutes\), (\d+) minutes",
        flat,
    )
    assert m, "the guide's example of a 'How long' line against the table"
    number, line, sections_, summary, badge, lecture, lab, exercises, per, total = m.groups()
    stem = stem_of(number)
    found, _ = sections.sections(notebook(stem))
    assert f"the core path about {line} " in sections.how_long_line(found)
    core = [u for u in units(stem) if u.kind == sections.CORE]
    assert int(summary) == find(stem, "Summary").minutes
    assert int(badge) == sum(u.minutes for u in core if u.lab)
    assert int(sections_) == sum(u.minutes for u in core if not u.lab) - int(summary)
    assert int(exercises) == len(core_exercises(stem)) and int(per) == MINUTES_PER_EXERCISE
    (row,) = [r for r in rows if r.lab_stem == stem and r.week <= WEEKS]
    assert (row.minutes, row.lab_minutes) == (int(lecture), int(lab)) and int(total) == row.minutes + row.lab_minutes


def test_a_deep_dive_sits_in_the_part_of_the_deck_of_the_lecture_that_teaches_it(rows):
    """The seventh lecturer's trial: the guide taught 10's deep dives on the experiment with lecture 2, and its deck
    showed them inside lecture 1's part, before the slide where lecture 2 begins (tools.sections.divider)."""
    checked = 0
    for row in rows:
        for unit in (u for u in row.lecture if u.kind == sections.DEEP):
            lectures = {u.lecture for u in row.lecture if u.stem == unit.stem and u.kind == sections.CORE}
            if not lectures:
                continue
            nb = notebook(unit.stem)
            section = next(s for s in sections.sections(nb)[0]
                           if s.minutes and (m := NUMBERED.match(s.title)) and f"§{m[1]}" == unit.ref)  # fmt: skip
            deck = sections.slides(nb)["cells"]
            at = next(i for i, c in enumerate(deck) if c.get("id") == nb.cells[section.first_cell].get("id"))
            part = 1 + sum(1 for c in deck[:at] if c.get("id", "").startswith("lecture-"))
            assert part in lectures, f"week {row.week}: {unit.stem} {unit.ref} is in lecture {part}'s part of the deck"
            checked += 1
    assert checked >= 5, "08 §5.1, §9; 10 §6.2-§6.4; 12 §2.1, §6.1; 13 §7.1"


def test_a_week_that_starts_inside_a_lecture_finds_its_slide_in_the_deck(rows):
    """The eighth lecturer's trial: the guide teaches 13's §1 and §2 in week 12 and the rest in week 13, and deck 13
    did not mark where week 13 begins. Where a week starts a notebook's lecture after its first section, that
    section's heading cell carries the ``deck-part`` tag and the deck has a slide there (tools.sections.part_divider)
    listing what follows; no other section carries the tag."""
    wanted = set()
    for row in rows:
        for stem in {u.stem for u in row.lecture}:
            mine = [u for u in row.lecture if u.stem == stem and u.kind == sections.CORE]
            for lecture in {u.lecture for u in mine}:
                whole = [u for u in teaching(stem) if u.lecture == lecture]
                taught = [u for u in mine if u.lecture == lecture]
                if taught and taught[0] != whole[0]:
                    wanted.add((stem, taught[0].ref))
    assert ("13_text_to_tokens", "§3") in wanted
    tagged = set()
    for path in NOTEBOOKS:
        nb = notebook(path.stem)
        for s in sections.sections(nb)[0]:
            if sections.PART_TAG in nb.cells[s.first_cell].metadata.get("tags", []):
                tagged.add((path.stem, f"§{NUMBERED.match(s.title)[1]}"))
                deck = sections.slides(nb)["cells"]
                at = next(i for i, c in enumerate(deck) if c.get("id") == nb.cells[s.first_cell].get("id"))
                assert deck[at - 1].get("id") == f"part-{s.first_cell}", f"{path.stem}: no part slide before {s.title}"
                listed = sections._unordered(s.title.split("<")[0].strip())  # "3\. Byte-pair ...": a bullet's text
                assert "Part 2" in deck[at - 1]["source"] and listed in deck[at - 1]["source"]
                assert re.search(r"About \d+ minutes", deck[at - 1]["source"])  # a lecturer's trial missed them
    assert tagged == wanted
