"""Core path and deep dives: read, write and check the section badges, cell tags and slides of the notebooks.

Every ``##`` section of a notebook (except the front and back matter: learning objectives, prerequisites, further
reading) carries a badge on the line under its heading::

    ## 3. All queries at once
    <span class="section-badge core">● core · 15 min</span>

    ### 5.5 A common claim, checked
    <span class="section-badge deep-dive">◆ deep dive · 10 min</span>

A badge covers its heading's cells up to the next badge, so a ``###`` badge can turn part of a core section into a
deep dive. A core badge may name its lecture (``● core · lecture 2 · 15 min``) when a notebook's core path takes
two lectures; the label holds for the core badges after it. Cells before the first badge (title, objectives,
prerequisites, set-up) are core.

From the badges this tool derives, and with ``--write`` stores:

- a ``core`` or ``deep-dive`` tag on every cell (``nbconvert --TagRemovePreprocessor.remove_cell_tags=deep-dive``
  gives the core path alone, which is how the tests run it);
- the "How long" line of the title cell (core path and everything, summed from the badges);
- the slides: cells the author marked with ``slideshow`` metadata are the deck; core Markdown cells left unmarked
  become speaker notes, every other unmarked cell is skipped. A deep dive is on the deck when its heading cell is
  marked (the deep dives the lecturer's guide teaches in a lecture, and only those: tests/test_lecturers_guide.py);
  a ``##`` deep dive off the deck leaves a one-slide signpost, so that the deck's section numbers do not jump; a
  ``###`` one is named on the slide of the subsection after it ("◆ Left out here: 4.1 ...").

``python -m tools.sections notebooks/03_*.ipynb`` prints the sections with their time and words; ``--check``
exits 1 on a problem (a section without a badge, stale tags or "How long" line, a lecture over its limits);
``--core-paths DIR`` writes each notebook's core path, which ``make test`` runs under strict nbval: it must run on
its own *and* print what the whole notebook prints.
"""

from __future__ import annotations

import argparse
import bisect
import copy
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

CORE, DEEP = "core", "deep-dive"
PART_TAG = "deck-part"  # a core section where the lecturer's guide starts a week inside a lecture: a slide says so
# The English badge, or its translation in a Chinese twin (notebooks/zh/: "● 核心 · 第 2 讲 · 9 分钟").
BADGE = re.compile(
    r'<span class="section-badge (?P<kind>core|deep-dive)">[●◆] (?:core|deep dive|核心|深入)'
    r"(?: · lecture (?P<lecture>\d)| · 第 (?P<lecture_zh>\d) 讲)? · (?P<minutes>\d+) (?:min|分钟)</span>"
)
HEADING = re.compile(r"^(#{2,3})\s+(.+?)\s*$", re.M)
UNBADGED = ("learning objectives", "prerequisites", "further reading")
READING = ("further reading", "延伸阅读")  # the reading list's heading, in a twin too
NOT_PROSE = ("exercises", "练习", *READING)  # the lab and the reading list: not counted as the lecture's prose
HOW_LONG = re.compile(r"^\*\*How long:\*\*.*$", re.M)
MAX_LECTURE_MINUTES = 100  # "one lecture plus lab, about 90 minutes"
MAX_LECTURE_WORDS = 2500  # core prose per lecture (issue 17's guide), exercises and reading list aside
MIN_SLIDES, MAX_SLIDES = 15, 35  # per lecture
SLIDE_KINDS = ("slide", "subslide")


def badge(kind: str, minutes: int, lecture: int | None = None) -> str:
    """The badge's HTML: ``badge("core", 15)`` -> '<span class="section-badge core">● core · 15 min</span>'."""
    label = "● core" if kind == CORE else "◆ deep dive"
    part = f" · lecture {lecture}" if lecture else ""
    return f'<span class="section-badge {kind}">{label}{part} · {minutes} min</span>'


@dataclass
class Section:
    title: str
    level: int  # 2 or 3
    first_cell: int
    kind: str  # core or deep-dive
    minutes: int
    lecture: int  # core sections: 1, 2, ...; deep dives: the lecture they follow
    words: int = 0  # Markdown words in the section's cells
    slides: int = 0  # cells opening a slide or sub-slide, on the deck
    on_deck: bool = True  # core sections; a deep dive when its heading cell opens a slide


def _source(cell) -> str:
    return "".join(cell.get("source", ""))


def sections(nb) -> tuple[list[Section], list[str]]:
    """The badged sections of ``nb`` in order (the front matter as section 0, "front matter"), and each cell's path."""
    found = [Section("front matter", 1, 0, CORE, 0, 1)]
    paths, lecture = [], 1
    for i, cell in enumerate(nb["cells"]):
        source = _source(cell)
        heading = HEADING.match(source.lstrip()) if cell["cell_type"] == "markdown" else None
        mark = BADGE.search(source) if heading else None
        opens = cell.get("metadata", {}).get("slideshow", {}).get("slide_type") in SLIDE_KINDS
        if mark:
            kind = mark["kind"]
            if kind == CORE and (mark["lecture"] or mark["lecture_zh"]):
                lecture = int(mark["lecture"] or mark["lecture_zh"])
            found.append(Section(heading[2], len(heading[1]), i, kind, int(mark["minutes"]), lecture))
            found[-1].on_deck = kind == CORE or opens
        elif heading and heading[2].strip().lower().rstrip(":") in UNBADGED:
            found.append(Section(heading[2], len(heading[1]), i, CORE, 0, lecture))
        elif heading and len(heading[1]) == 3 and found[-1].level == 3:
            # an unbadged ### after a badged ###: back to its ## section's kind
            parent = next(s for s in reversed(found) if s.level <= 2)
            found.append(Section(heading[2], 3, i, parent.kind, 0, parent.lecture, on_deck=parent.on_deck))
        section = found[-1]
        paths.append(section.kind)
        if cell["cell_type"] == "markdown" and not _is_lab(found, section):
            section.words += len(re.sub(r"<[^>]+>|\$[^$]*\$", " ", source).split())
        if opens and section.on_deck:
            section.slides += 1
    return found, paths


def _is_lab(found: list[Section], section: Section) -> bool:
    """True inside the exercises or the reading list (a ``###`` inherits it from its ``##``)."""
    top = section if section.level <= 2 else next(s for s in reversed(found) if s.level <= 2)
    return re.sub(r"^[\d.\s]+|<[^>]+>", "", top.title).strip().lower() in NOT_PROSE


def unbadged_sections(nb) -> list[str]:
    """The ``##`` headings that need a badge and have none, and ``##`` headings in the middle of a cell (a section
    starts a cell, so that its badge and tags cover exactly its cells)."""
    missing = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        source = _source(cell).lstrip()
        for match in HEADING.finditer(source):
            level, title = match[1], match[2]
            if len(level) == 2 and match.start() > 0:
                missing.append(f"{title} (in the middle of a cell: split it)")
            elif len(level) == 2 and title.strip().lower().rstrip(":") not in UNBADGED and not BADGE.search(source):
                missing.append(title)
    return missing


def _minutes(total: int) -> str:
    return f"{total} min" if total < 60 else f"{total // 60} h {total % 60:02d} min"


def lectures(found: list[Section]) -> dict[int, dict[str, int]]:
    """Per lecture of the core path: its minutes and Markdown words; its slides, those of the deep dives on its deck
    and their signposts (``slides``) among them."""
    out: dict[int, dict[str, int]] = {}
    for s in found:
        if s.kind == CORE:
            row = out.setdefault(s.lecture, {"minutes": 0, "words": 0, "slides": 0})
            row["minutes"] += s.minutes
            row["words"] += s.words
    for s in found:
        if s.lecture in out:
            out[s.lecture]["slides"] += s.slides + signposted(s)
    return out


def signposted(section: Section) -> bool:
    """A ``##`` deep dive off the deck leaves a signpost slide there, so that the deck's numbers do not jump."""
    return section.kind == DEEP and section.level == 2 and not section.on_deck


def signpost(section: Section, chinese: bool) -> str:
    """A signpost slide's Markdown: the deep dive's heading and where to read it."""
    if chinese:
        where = f"◆ 深入小节 · {section.minutes} 分钟：不在本讲之内，见本书和笔记本的这一节。"
    else:
        where = f"◆ A deep dive ({section.minutes} min), not part of this lecture: read it in the book or the notebook."
    return f"## {section.title}\n\n{where}"


def lecture_minutes(found: list[Section]) -> dict[int, int]:
    """Per lecture of the core path, the minutes of its core sections without the exercises and the reading list:
    what a lecture slot presents (the lecturer's guide schedules the exercises in a separate lab)."""
    out: dict[int, int] = {}
    for i, s in enumerate(found):
        if s.kind == CORE:  # a ### section's ## is the last one before it, not the notebook's last
            out[s.lecture] = out.get(s.lecture, 0) + (0 if _is_lab(found[: i + 1], s) else s.minutes)
    return out


def how_long_line(found: list[Section]) -> str:
    per_lecture = lectures(found)
    core = sum(row["minutes"] for row in per_lecture.values())
    total = sum(s.minutes for s in found)
    if len(per_lecture) == 1:
        path = f"the core path about {_minutes(core)} (one lecture and its lab)"
    else:
        parts = ", ".join(_minutes(row["minutes"]) for row in per_lecture.values())
        path = f"the core path about {_minutes(core)} in {len(per_lecture)} lectures ({parts})"
    if total == core:
        return f"**How long:** {path}; it has no deep dives."
    return f"**How long:** {path}; with every deep dive about {_minutes(total)}."


def apply(nb):
    """A copy of ``nb`` with every cell tagged by its path, the title's "How long" line and the slides set."""
    nb = copy.deepcopy(nb)
    found, paths = sections(nb)
    for cell, path in zip(nb["cells"], paths, strict=True):
        tags = [t for t in cell.get("metadata", {}).get("tags", []) if t not in (CORE, DEEP)]
        cell.setdefault("metadata", {})["tags"] = [*tags, path]
    title = nb["cells"][0]
    line = how_long_line(found)
    source = _source(title)
    title["source"] = HOW_LONG.sub(line, source) if HOW_LONG.search(source) else f"{source.rstrip()}\n\n{line}"
    return nb


def check(nb) -> list[str]:
    """What is wrong with ``nb``'s badges, tags, "How long" line and per-lecture limits (empty: nothing)."""
    problems = [f"section without a badge: {title!r}" for title in unbadged_sections(nb)]
    found, paths = sections(nb)
    stale = [
        i
        for i, (c, p) in enumerate(zip(nb["cells"], paths, strict=True))
        if p not in c.get("metadata", {}).get("tags", [])
    ]
    if stale:
        problems.append(f"cells {stale[:8]} lack their {CORE}/{DEEP} tag: run python -m tools.sections --write")
    line = how_long_line(found)
    if line not in _source(nb["cells"][0]):
        problems.append(f"the title cell should say: {line}")
    for number, row in lectures(found).items():
        if row["minutes"] > MAX_LECTURE_MINUTES:
            problems.append(f"lecture {number}: core path of {row['minutes']} min > {MAX_LECTURE_MINUTES}")
        if row["words"] > MAX_LECTURE_WORDS:
            problems.append(f"lecture {number}: {row['words']} words of core prose > {MAX_LECTURE_WORDS}")
    return problems


def slide_problems(nb) -> list[str]:
    """Each lecture's deck must have MIN_SLIDES to MAX_SLIDES slides (cells opening a slide or sub-slide)."""
    return [
        f"lecture {number}: {row['slides']} slides, expected {MIN_SLIDES} to {MAX_SLIDES}"
        for number, row in lectures(sections(nb)[0]).items()
        if not MIN_SLIDES <= row["slides"] <= MAX_SLIDES
    ]


def is_sectioned(nb) -> bool:
    """True when a notebook carries badges (every notebook of the course does: tests/test_sections.py)."""
    return any(BADGE.search(_source(c)) for c in nb["cells"] if c["cell_type"] == "markdown")


def slides(nb):
    """The deck: the author's ``slideshow`` marks on the cells of core sections and of the deep dives on the deck;
    other such Markdown -> notes; the rest skipped; a signpost slide for each ``##`` deep dive off the deck; and in a
    notebook of two lectures, a slide "Lecture 2" ("第 2 讲") where the second begins, with its sections (divider)."""
    nb = copy.deepcopy(nb)
    found, _ = sections(nb)
    owner = _owners(found, len(nb["cells"]))
    for i, (cell, section) in enumerate(zip(nb["cells"], owner, strict=True)):
        meta = cell.setdefault("metadata", {})
        marked = meta.get("slideshow", {}).get("slide_type")
        if not section.on_deck:
            kind = "skip"
        elif section.kind == DEEP and i == section.first_cell:  # slides drop badges: its heading names it
            cell["source"] = _badge_in_heading(_source(cell))
            kind = marked
        elif marked:
            kind = marked
        elif cell["cell_type"] == "code" and (printed := _printed(cell)) and not _is_lab(*_up_to(found, section)):
            nb["cells"][i] = cell = _printed_notes(cell, printed)  # its result in the notes (a lecturer's trial)
            meta, kind = cell["metadata"], "notes"
        else:
            kind = "notes" if cell["cell_type"] == "markdown" else "skip"
        meta["slideshow"] = {"slide_type": kind}
    for s in found:  # the lab's slide lists its exercises (a lecturer's trial: the slide showed "9. Exercises" alone)
        if s.level == 2 and s.on_deck and _is_lab(found, s) and not _is_reading(s):
            cell = nb["cells"][s.first_cell]
            if cell["metadata"]["slideshow"]["slide_type"] in SLIDE_KINDS:
                cell["source"] = _source(cell).rstrip() + "\n\n" + _exercise_list(nb, found, s)
    if nb["cells"]:
        nb["cells"][0]["metadata"]["slideshow"] = {"slide_type": "slide"}  # a deck opens with a slide
    chinese = any((m := BADGE.search(_source(c))) and m[0].count("min") == 0 for c in nb["cells"])  # a twin's badge
    for s, numbers in left_out(found):  # "4." then "4.2": the slide says where 4.1 went (a lecturer's trial)
        cell = nb["cells"][s.first_cell]
        if cell["metadata"]["slideshow"]["slide_type"] in SLIDE_KINDS:
            cell["source"] = _source(cell).rstrip() + "\n\n" + left_out_line(numbers, chinese)
    inserts = []  # (before cell i, the cell): signposts, and the slide where a deck's second lecture begins
    for s in found:
        if signposted(s):
            inserts.append((s.first_cell, _slide(f"deep-dive-{s.first_cell}", signpost(s, chinese))))
        if s.kind == CORE and s.lecture > 1 and not any(c["id"] == f"lecture-{s.lecture}" for _, c in inserts):
            inserts.append((_opening(found, s), _slide(f"lecture-{s.lecture}", divider(found, s.lecture, chinese))))
        if PART_TAG in nb["cells"][s.first_cell]["metadata"].get("tags", []):
            inserts.append((s.first_cell, _slide(f"part-{s.first_cell}", part_divider(found, s, chinese))))
    for i, cell in sorted(inserts, key=lambda pair: pair[0], reverse=True):
        nb["cells"].insert(i, cell)
    return nb


# The number a subsection's heading starts with: "4.1", "Exercise 2", "Mistake 5" (练习 2, 错误 5 in a twin)
NUMBERED = re.compile(r"^(\d+(?:\.\d+)+|(?:Exercise|Mistake) \d+|(?:练习|错误) ?\d+)(?![\d.])")


def left_out(found: list[Section]) -> list[tuple[Section, list[str]]]:
    """Each ``###`` section on the deck right after ``###`` deep dives that are not, with those deep dives' numbers:
    without a word the deck's numbers jump there ("4." then "4.2")."""
    out = []
    for i, s in enumerate(found):
        if s.level != 3 or not s.on_deck:
            continue
        j = i
        while j > 0 and found[j - 1].level == 3 and found[j - 1].kind == DEEP and not found[j - 1].on_deck:
            j -= 1
        numbers = [m[1] for x in found[j:i] if (m := NUMBERED.match(re.sub(r"<[^>]+>", "", x.title).strip()))]
        if numbers and NUMBERED.match(re.sub(r"<[^>]+>", "", s.title).strip()):
            out.append((s, numbers))
    return out


def left_out_line(numbers: list[str], chinese: bool) -> str:
    """The line a slide gets for the deep dives left out before it: "◆ Left out here: 4.1 (a deep dive: in the
    book)."."""
    if chinese:
        return f"◆ 本讲略去：{'、'.join(numbers)}（深入小节，见本书）。"
    what = "a deep dive" if len(numbers) == 1 else "deep dives"
    return f"◆ Left out here: {', '.join(numbers)} ({what}: in the book)."


def _is_reading(section: Section) -> bool:
    return re.sub(r"<[^>]+>", "", section.title).strip().lower() in READING


def _exercise_list(nb, found: list[Section], lab: Section) -> str:
    """The headings of the exercises in section ``lab`` as a Markdown list, badges and anchors left out."""
    after = [x.first_cell for x in found if x.level <= 2 and x.first_cell > lab.first_cell]
    end = after[0] if after else len(nb["cells"])
    titles = [
        HEADING.match(_source(c).lstrip())
        for c in nb["cells"][lab.first_cell + 1 : end]
        if c["cell_type"] == "markdown"
    ]
    titles = [re.sub(r"\s*<[^>]+>", "", t[2]) for t in titles if t and len(t[1]) == 3]
    return "\n".join(f"- {t}" for t in titles if re.match(r"(Exercise|练习)", t))


def divider(found: list[Section], lecture: int, chinese: bool) -> str:
    """The slide where lecture ``lecture`` begins: its number, its numbered sections (the exercises aside: the lab) and
    its core path's minutes, so that a lecturer opening the deck there sees what the hour holds."""
    ours = [s for s in found if s.kind == CORE and s.level == 2 and s.lecture == lecture]
    first = next(s for s in found if s.kind == CORE and s.lecture == lecture)
    opening = next(i for i, s in enumerate(found) if s.first_cell == _opening(found, first))
    deep = [s.title + ("（◆ 深入）" if chinese else " (◆ deep dive)") for s in found[opening : found.index(first)]]
    numbered = deep + [s.title for s in ours if re.match(r"\d", s.title) and not _is_lab(found, s)]
    numbered = [re.sub(r"\s*<[^>]+>", "", t) for t in numbered]
    minutes = lecture_minutes(found).get(lecture, 0)
    title, how_long = (f"第 {lecture} 讲", f"核心路径约 {minutes} 分钟。") if chinese else (
        f"Lecture {lecture}", f"About {minutes} minutes of the core path.")  # fmt: skip
    listed = "\n".join(f"- {_unordered(t)}" for t in numbered)
    return "\n\n".join([f"# {title}", listed, how_long] if numbered else [f"# {title}"])


def part_divider(found: list[Section], start: Section, chinese: bool) -> str:
    """The slide before a core section tagged ``deck-part``, where the lecturer's guide starts a week in the middle
    of a lecture (13: week 12 ends with its §1 and §2, week 13 starts at §3): the sections from there to the lecture's
    end (the exercises aside: the lab) and their minutes of the core path."""
    rest = [s for s in found[found.index(start) :] if s.kind == CORE and s.lecture == start.lecture]
    rest = [s for s in rest if not _is_lab(found[: found.index(s) + 1], s)]
    minutes = sum(s.minutes for s in rest)
    numbered = [re.sub(r"\s*<[^>]+>", "", s.title) for s in rest if s.level == 2 and re.match(r"\d", s.title)]
    if chinese:
        title, how_long = "# 本讲第 2 部分", f"核心路径约 {minutes} 分钟；按讲师指南，新的一周从这里开始。"
    else:
        title = "# Part 2 of the lecture"
        how_long = f"About {minutes} minutes of the core path; the guide starts a week here."
    return "\n\n".join([title, how_long, "\n".join(f"- {_unordered(t)}" for t in numbered)])


def _unordered(title: str) -> str:
    """A numbered section's title as a bullet's text: "3\\. Byte-pair ..." (Markdown reads "- 3. A" as a list inside
    a list, drawn with a bullet, a gap and the number: a lecturer's trial)."""
    return re.sub(r"^(\d+)\.(?=\s)", r"\1\\.", title)


def _badge_in_heading(source: str) -> str:
    """A deep dive's heading cell, its badge's words at the end of its heading: "### 6.1 A (◆ deep dive · 5 min)"."""
    label = re.search(r'<span class="section-badge deep-dive">(.*?)</span>', source)
    if not label:
        return source
    heading, _, rest = source.lstrip().partition("\n")
    wrapped = f"（{label[1]}）" if "深入" in label[1] else f" ({label[1]})"
    return f"{heading.rstrip()}{wrapped}\n{rest}"


def _opening(found: list[Section], first: Section) -> int:
    """The cell where a lecture's part of the deck opens: its first core section ``first``, or the deep dives on the
    deck just before it (08's §5.1 ends section 5 and is taught with lecture 2: the guide's week 9)."""
    i = found.index(first)
    while i > 0 and found[i - 1].kind == DEEP and found[i - 1].on_deck:
        i -= 1
    return found[i].first_cell


def _owners(found: list[Section], n_cells: int) -> list[Section]:
    """The section each of ``n_cells`` cells belongs to."""
    starts = [s.first_cell for s in found]
    return [found[bisect.bisect_right(starts, i) - 1] for i in range(n_cells)]


def _up_to(found: list[Section], section: Section) -> tuple[list[Section], Section]:
    """The arguments of ``_is_lab`` for ``section``: the sections up to it, and it."""
    return found[: found.index(section) + 1], section


def _printed(cell) -> str:
    """What a code cell printed (its standard output and its text results; not progress bars, not figures)."""
    texts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            texts.append("".join(out.get("text", "")))
        elif out.get("output_type") == "execute_result":
            texts.append("".join(out.get("data", {}).get("text/plain", "")) + "\n")
    return "".join(texts).strip("\n")


def _printed_notes(cell, printed: str):
    """The speaker notes of a core code cell that is not on a slide: what it printed, so that the deck's notes (and
    the handouts) hold every result of the core path (the ninth lecturer's trial found 14's test score in neither)."""
    fence = "````" if "```" in printed else "```"
    source = f"{fence}\n{printed}\n{fence}"
    meta = {"slideshow": {"slide_type": "notes"}, "course_printed": True}
    return nbformat.from_dict({"cell_type": "markdown", "id": f"{cell.get('id', 'cell')}-printed", "source": source,
                               "metadata": meta})  # fmt: skip


def _slide(cell_id: str, source: str):
    meta = {"slideshow": {"slide_type": "slide"}}
    return nbformat.from_dict({"cell_type": "markdown", "id": cell_id, "source": source, "metadata": meta})


def core_path(nb):
    """``nb`` without its deep-dive cells (nbconvert's TagRemovePreprocessor on the ``deep-dive`` tag)."""
    from nbconvert.preprocessors import TagRemovePreprocessor

    node = nbformat.from_dict(copy.deepcopy(nb))
    TagRemovePreprocessor(remove_cell_tags={DEEP}).preprocess(node, {})
    return node


def report(nb) -> str:
    found, _ = sections(nb)
    lines = [f"{'section':48} {'path':9} {'lect':>4} {'min':>4} {'words':>6} {'slides':>6}"]
    for s in found:
        indent = "  " if s.level == 3 else ""
        lines.append(f"{indent + s.title[:46]:48} {s.kind:9} {s.lecture:4} {s.minutes:4} {s.words:6} {s.slides:6}")
    for number, row in lectures(found).items():
        lines.append(f"lecture {number}: core {row['minutes']} min, {row['words']} words, {row['slides']} slides")
    lines.append(how_long_line(found))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.sections", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--write", action="store_true", help="store the tags and the 'How long' line")
    parser.add_argument("--check", action="store_true", help="exit 1 if anything is missing or stale")
    parser.add_argument("--core-paths", type=Path, metavar="DIR", help="write each notebook's core path here")
    args = parser.parse_args(argv)
    failed = False
    for path in args.notebooks:
        nb = nbformat.read(path, as_version=4)
        if args.core_paths:
            if not is_sectioned(nb):
                print(f"{path}: no section badges, so no core path: shape it first (--write)", file=sys.stderr)
                return 1
            args.core_paths.mkdir(parents=True, exist_ok=True)
            nbformat.write(core_path(nb), args.core_paths / path.name)
            continue
        if args.write:
            nb = apply(nb)
            nbformat.write(nb, path)
        problems = check(nb) + slide_problems(nb)
        print(f"== {path.name}\n{report(nb)}")
        for problem in problems:
            print(f"  PROBLEM: {problem}")
        failed |= bool(problems)
    return 1 if (failed and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
