"""Core path and deep dives (tools/sections.py): the tool on small notebooks, then every notebook of the course.

`make test` also runs each shaped notebook's core path alone under strict nbval (the Makefile's test-core-paths), and
`make e2e` measures each deck in Chromium (slide count, no slide taller than the screen).
"""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course_lib.paths import NOTEBOOKS_DIR
from tools import sections

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))


def toy(*cells):
    return new_notebook(cells=list(cells))


def heading(text, kind=None, minutes=0, lecture=None, body="Some words here."):
    badge = f"\n{sections.badge(kind, minutes, lecture)}" if kind else ""
    return new_markdown_cell(f"{text}{badge}\n\n{body}")


def test_badges_set_each_cells_path_and_a_deep_dive_inside_a_core_section():
    nb = toy(
        new_markdown_cell("# Title"),
        heading("## 1. A", "core", 10),
        new_code_cell("a = 1"),
        heading("### 1.1 Aside", "deep-dive", 5),
        new_code_cell("b = a"),
        heading("### 1.2 Back", body="more"),
        new_code_cell("c = a"),
        heading("## 2. B", "deep-dive", 20),
        heading("## Further reading"),
    )
    found, paths = sections.sections(nb)
    assert paths == ["core", "core", "core", "deep-dive", "deep-dive", "core", "core", "deep-dive", "core"]
    assert [s.minutes for s in found] == [0, 10, 5, 0, 20, 0]
    assert sections.how_long_line(found) == (
        "**How long:** the core path about 10 min (one lecture and its lab); with every deep dive about 35 min."
    )


def test_apply_tags_every_cell_and_writes_the_how_long_line_once():
    nb = toy(new_markdown_cell("# Title"), heading("## 1. A", "core", 70), heading("## 2. B", "deep-dive", 50))
    once = sections.apply(nb)
    assert [c.metadata.tags for c in once.cells] == [["core"], ["core"], ["deep-dive"]]
    assert "with every deep dive about 2 h 00 min." in once.cells[0].source
    twice = sections.apply(once)
    assert twice.cells[0].source == once.cells[0].source and sections.check(twice) == []
    assert "tags" not in nb.cells[0].metadata, "apply must not modify its input"
    core_only = sections.apply(toy(new_markdown_cell("# Title"), heading("## 1. A", "core", 70)))
    assert core_only.cells[0].source.endswith("(one lecture and its lab); it has no deep dives.")


def test_check_names_what_is_missing_or_stale():
    nb = toy(new_markdown_cell("# Title"), heading("## 1. A"), heading("## 2. B", "core", 120, body="w " * 2600))
    problems = " | ".join(sections.check(nb))
    assert "section without a badge: '1. A'" in problems
    assert "lack their core/deep-dive tag" in problems and "the title cell should say" in problems
    assert "core path of 120 min > 100" in problems and "words of core prose > 2500" in problems
    glued = toy(new_markdown_cell("# T"), heading("## 1. A", "core", 5, body="text\n\n## Further reading\n\n- x"))
    assert "Further reading (in the middle of a cell: split it)" in " | ".join(sections.check(glued))


def test_lectures_are_counted_apart_and_the_lab_is_not_prose():
    nb = toy(
        new_markdown_cell("# Title"),
        heading("## 1. A", "core", 60, lecture=1, body="w " * 2000),
        heading("## 2. B", "core", 60, lecture=2, body="w " * 2000),
        heading("## 3. Exercises", "core", 30, body="w " * 2000),
    )
    per_lecture = sections.lectures(sections.sections(nb)[0])
    assert per_lecture[1]["minutes"] == 60 and per_lecture[2]["minutes"] == 90
    assert per_lecture[1]["words"] < 2100 and per_lecture[2]["words"] < 2100, "exercises are the lab, not prose"
    assert "in 2 lectures (1 h 00 min, 1 h 30 min)" in sections.how_long_line(sections.sections(nb)[0])


def test_slides_keep_the_authors_marks_and_turn_other_core_prose_into_notes():
    marked = heading("## 1. A", "core", 10)
    marked.metadata["slideshow"] = {"slide_type": "slide"}
    unmarked_deep = heading("## 2. B", "deep-dive", 10)
    nb = toy(new_markdown_cell("# Title"), marked, new_markdown_cell("prose"), new_code_cell("x"), unmarked_deep)
    deck = sections.slides(nb)
    kinds = [c.metadata.slideshow["slide_type"] for c in deck.cells]
    assert kinds == ["slide", "slide", "notes", "skip", "slide", "skip"], "a deep dive off the deck leaves a signpost"
    assert deck.cells[4]["source"].startswith("## 2. B\n\n◆ A deep dive (10 min), not part of this lecture")


def test_a_deep_dive_whose_heading_is_marked_is_on_the_deck_with_its_marks():
    """The sixth lecturer's trial: the guide teaches deep dives (08 §5.1 and §9, 12 §2.1) that had no slides, and 08's
    deck went from section 8 to 10."""
    deep = heading("### 1.1 B", "deep-dive", 5)
    deep.metadata["slideshow"] = {"slide_type": "slide"}
    shown = new_code_cell("y")
    shown.metadata["slideshow"] = {"slide_type": "subslide"}
    nb = toy(new_markdown_cell("# Title"), heading("## 1. A", "core", 10), deep, new_markdown_cell("why"), shown,
             new_code_cell("z"), heading("### 1.2 C", "deep-dive", 5), new_markdown_cell("more"))  # fmt: skip
    deck = sections.slides(nb)
    kinds = [c.metadata.slideshow["slide_type"] for c in deck.cells]
    assert kinds == ["slide", "notes", "slide", "notes", "subslide", "skip", "skip", "skip"], "### off it: no signpost"
    assert deck.cells[2].source.startswith("### 1.1 B (◆ deep dive · 5 min)\n"), "it says so (slides drop badges)"
    found, _ = sections.sections(nb)
    assert [s.on_deck for s in found] == [True, True, True, False]
    assert sections.lectures(found)[1]["slides"] == 2, "the slides of a deep dive on the deck count for its lecture"


def test_core_path_removes_the_deep_dives():
    nb = sections.apply(
        toy(new_markdown_cell("# T"), heading("## 1. A", "core", 5), heading("## 2. B", "deep-dive", 5))
    )
    assert [c.source.splitlines()[0] for c in sections.core_path(nb).cells] == ["# T", "## 1. A"]


def test_the_core_paths_command_writes_each_core_path_and_refuses_a_notebook_without_badges(tmp_path, capsys):
    shaped = sections.apply(
        toy(new_markdown_cell("# T"), heading("## 1. A", "core", 5), heading("## 2. B", "deep-dive", 5))
    )
    nbformat.write(shaped, tmp_path / "01_shaped.ipynb")
    nbformat.write(toy(new_markdown_cell("# T"), heading("## 1. A")), tmp_path / "02_plain.ipynb")
    out = tmp_path / "core"
    assert sections.main(["--core-paths", str(out), str(tmp_path / "01_shaped.ipynb")]) == 0
    assert len(nbformat.read(out / "01_shaped.ipynb", as_version=4).cells) == 2
    assert sections.main(["--core-paths", str(out), str(tmp_path / "02_plain.ipynb")]) == 1
    assert "02_plain.ipynb: no section badges" in capsys.readouterr().err and not (out / "02_plain.ipynb").exists()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_shaped_notebook_has_badges_tags_times_and_a_deck(path):
    nb = nbformat.read(path, as_version=4)
    assert sections.is_sectioned(nb), f"{path.name} has no section badges (python -m tools.sections)"
    problems = sections.check(nb) + sections.slide_problems(nb)
    assert problems == [], f"{path.name}: " + "; ".join(problems)


def test_a_deck_of_two_lectures_says_where_the_second_begins():
    """A lecturer's trial: the two-lecture decks (08, 10, 12, 15) did not mark where lecture 2 starts; the seventh:
    the divider was a bare word. It lists the lecture's numbered sections (not the lab's exercises) and its minutes."""
    import json

    agenda = ("- 6.2 One machine's digits (◆ deep dive)\n- 6.3 Time per step (◆ deep dive)\n"
              "- 6.4 Why not the library's initial weights? (◆ deep dive)\n"
              "- 7\\. Inside the trained ViT\n- 8\\. Who wins where, and why: an honest reading")  # fmt: skip
    # ("7\\." : Markdown would read "- 7. A" as a list inside a list, drawn with a bullet, a gap and the number)
    expected = {"10_vision_transformer": f"# Lecture 2\n\n{agenda}\n\nAbout 47 minutes of the core path.",
                "zh/10_vision_transformer": "# 第 2 讲\n\n- 6.2 "}  # fmt: skip
    for name, divider in expected.items():
        nb = json.loads((NOTEBOOKS_DIR / f"{name}.ipynb").read_text(encoding="utf-8"))
        deck = sections.slides(nb)
        dividers = [i for i, c in enumerate(deck["cells"]) if c.get("id") == "lecture-2"]
        assert len(dividers) == 1 and deck["cells"][dividers[0]]["source"].startswith(divider)
        assert "练习" not in deck["cells"][dividers[0]]["source"] and "<a" not in deck["cells"][dividers[0]]["source"]
        # the deep dives on the deck just before lecture 2's first section open its part (the guide teaches them there)
        first = next(s for s in sections.sections(nb)[0] if s.kind == sections.DEEP and s.on_deck)
        assert deck["cells"][dividers[0] + 1]["id"] == nb["cells"][first.first_cell]["id"]
    nb08 = json.loads((NOTEBOOKS_DIR / "08_efficient_attention.ipynb").read_text(encoding="utf-8"))
    divider = next(c["source"] for c in sections.slides(nb08)["cells"] if c.get("id") == "lecture-2")
    assert "\n- 5.1 Fine print: the memory target and a NaN trap (◆ deep dive)\n- 6\\. " in divider, divider  # week 9
    one = json.loads((NOTEBOOKS_DIR / "05_masks_and_attention_maps.ipynb").read_text(encoding="utf-8"))
    assert not any(c.get("id", "").startswith("lecture-") for c in sections.slides(one)["cells"])


def test_a_deep_dive_on_the_deck_just_before_lecture_2_opens_it():
    """08's §5.1 ends section 5 and the guide teaches it in week 9, with lecture 2: the divider goes before it."""
    deep = heading("### 1.1 B", "deep-dive", 5)
    deep.metadata["slideshow"] = {"slide_type": "slide"}
    nb = toy(new_markdown_cell("# Title"), heading("## 1. A", "core", 10, lecture=1), deep,
             heading("## 2. C", "core", 10, lecture=2))  # fmt: skip
    titles = [c.source.splitlines()[0] for c in sections.slides(nb).cells]
    assert titles == ["# Title", "## 1. A", "# Lecture 2", "### 1.1 B (◆ deep dive · 5 min)", "## 2. C"]


def test_the_labs_slide_lists_its_exercises():
    """The seventh lecturer's trial: decks 03-11 showed "N. Exercises" alone. The lab's slide now lists the headings of
    its exercises, in the twin too, badges and anchors left out."""
    import json

    for name, first in (("05_masks_and_attention_maps", "- Exercise 1 (by hand): a masked softmax"),
                        ("zh/10_vision_transformer", "- 练习 1（手算）：数一数词元")):  # fmt: skip
        nb = json.loads((NOTEBOOKS_DIR / f"{name}.ipynb").read_text(encoding="utf-8"))
        deck = sections.slides(nb)
        texts = ["".join(c["source"]) for c in deck["cells"]]
        lab = [t for t in texts if first in t]
        assert len(lab) == 1 and lab[0].count("\n- ") == 5 and "<a id" not in lab[0].split("\n\n", 2)[-1], lab
        reading = [t for t in texts if t.startswith(("## Further reading", "## 延伸阅读"))]
        assert all("\n- Exercise" not in r and "\n- 练习" not in r for r in reading)


def test_a_subsection_after_deep_dives_off_the_deck_says_where_their_numbers_went():
    """The seventh lecturer's trial: a deck went from "4." to "4.2" (a ``###`` deep dive off the deck leaves no
    signpost: one more slide each would push 01's and 02's lectures over their slides). The next subsection's slide
    names the numbers left out; one that follows no gap, or has no number, is left as it is."""
    slide = {"slideshow": {"slide_type": "slide"}}
    nxt, last, plain = heading("### 1.3 D", "core", 5), heading("### 1.5 F", "core", 5), heading("### G", "core", 5)
    for cell in (nxt, last, plain):
        cell.metadata.update(slide)
    nb = toy(new_markdown_cell("# Title"), heading("## 1. A", "core", 10), heading("### 1.1 B", "deep-dive", 5),
             heading("### 1.2 C", "deep-dive", 5), nxt, heading("### 1.4 E", "deep-dive", 5), last,
             heading("### Notes", "deep-dive", 5), plain)  # fmt: skip
    deck = sections.slides(nb)
    assert deck.cells[4].source.endswith("\n\n◆ Left out here: 1.1, 1.2 (deep dives: in the book).")
    assert deck.cells[6].source.endswith("\n\n◆ Left out here: 1.4 (a deep dive: in the book).")
    assert "Left out" not in deck.cells[8].source and "Left out" not in deck.cells[1].source
    assert sections.left_out_line(["4.1"], chinese=True) == "◆ 本讲略去：4.1（深入小节，见本书）。"
