"""tools/handouts.py without a browser: which decks `make handouts` prints and where (the Chinese ones under zh/), the
size it prints the slides' code at, and the glossary appendix that the notes' links point to. The printed handouts
themselves are checked in Chromium by tests/e2e (test_book_in_browser, test_chinese_book: `-k handout`)."""

import re
from pathlib import Path

from tools import handout_glossary, handout_page, handouts

ROOT = Path(__file__).resolve().parents[1]


def test_the_slides_code_is_printed_at_eight_points_or_more():
    """22 px of a 1280 px slide drawn IMAGE_MM wide: the size the module's docstring derives (164 mm for 8 pt)."""
    points = handout_page.CODE_PX / handout_page.SLIDE_PX * handout_page.IMAGE_MM / 25.4 * 72
    assert points >= 8, points
    assert handout_page.IMAGE_MM <= 186, "wider than A4's 210 mm less its two 12 mm margins"
    assert f"{handout_page.IMAGE_MM} mm" in handouts.__doc__ and "164 mm" in handouts.__doc__


def test_make_handouts_prints_the_english_and_the_chinese_decks(tmp_path):
    html = tmp_path / "html"
    for deck in ("slides/03_qkv.slides.html", "slides/04_scaling.slides.html", "zh/slides/04_scaling.slides.html"):
        (html / deck).parent.mkdir(parents=True, exist_ok=True)
        (html / deck).write_text("<html></html>")
    decks = handouts.decks_of(html, [])
    assert [d.relative_to(html).as_posix() for d in decks] == [
        "slides/03_qkv.slides.html",
        "slides/04_scaling.slides.html",
        "zh/slides/04_scaling.slides.html",
    ]
    assert [handouts.pdf_of(d, html, tmp_path / "out").relative_to(tmp_path).as_posix() for d in decks] == [
        "out/03_qkv.pdf",
        "out/04_scaling.pdf",
        "out/zh/04_scaling.pdf",
    ]
    assert len(handouts.decks_of(html, ["04_"])) == 2 and handouts.decks_of(html, ["05_"]) == []
    english = handouts.decks_of(html, [], ("en",))  # make handouts LANGUAGE=en
    assert english == decks[:2]
    assert handouts.decks_of(html, ["04_"], ("zh",)) == decks[-1:]
    assert "--language $(LANGUAGE)" in (ROOT / "Makefile").read_text()
    assert "python -m tools.handouts" in (ROOT / "Makefile").read_text()


def test_glossary_links_point_to_the_appendix_or_are_written_out():
    notes = (
        'a <a class="glossary-link" href="#glossary-key">key</a> and a '
        '<a class="glossary-link" href="#glossary-no-such-term">ghost</a>'
    )
    defined = {"key": "<strong>key</strong> · 键 — the vector a position advertises."}
    linked = handout_glossary.link_terms(notes, defined)
    assert 'href="#glossary-key"' in linked and "no-such-term" not in linked and linked.endswith("and a ghost")
    for lang in ("en", "zh"):
        appendix = handout_glossary.appendix({**defined, "attention": "<strong>attention</strong>"}, lang)
        ids = re.findall(r'<li id="([^"]+)"', appendix)
        assert ids == ["glossary-attention", "glossary-key"], ids  # the English terms' A to Z
        assert handout_glossary.HEADING[lang] in appendix
    assert handout_glossary.appendix({}, "en") == ""
